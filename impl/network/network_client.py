"""``NetworkClient`` and its helpers (``org.apache.kafka.clients``).

* :class:`ClusterConnectionStates` — per-node connection state machine with reconnect backoff and
  connection-setup timeout.
* :class:`InFlightRequests` — per-node queues of sent-but-unanswered requests.
* :class:`ClientRequest` / :class:`ClientResponse` / :class:`RequestHeader`.
* :class:`NetworkClient` — ``ready``/``send``/``poll``/``leastLoadedNode``/...; requests go to a
  :class:`~impl.network.selectable.Selectable` as objects.
* :class:`DefaultMetadataUpdater` — sends a MetadataRequest to the least loaded node when
  ``Metadata`` says an update is due (``NetworkClient.DefaultMetadataUpdater``);
  :class:`ManualMetadataUpdater` never does.

Connection ids are node ids (ints) rather than Java's ``idString()``.
"""

from __future__ import annotations

import random
from collections import deque
from typing import Any, Deque, Dict, Iterable, List, Optional

from impl.errors import (
    AuthenticationException,
    Errors,
    IllegalArgumentException,
    IllegalStateException,
    KafkaException,
    UnsupportedVersionException,
)
from impl.network.metadata import Metadata, Node
from impl.network.selectable import ChannelState, Selectable
from impl.java_collections import hash_map_key_order
from impl.protocol import ApiVersionsRequestData, ApiVersionsResponseData, MetadataResponseData
from impl.time import INT_MAX, LONG_MAX, ExponentialBackoff, Time

# CommonClientConfigs defaults.
DEFAULT_RECONNECT_BACKOFF_MS = 50
DEFAULT_RECONNECT_BACKOFF_MAX_MS = 1000
DEFAULT_SOCKET_CONNECTION_SETUP_TIMEOUT_MS = 10 * 1000
DEFAULT_SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS = 30 * 1000
DEFAULT_REQUEST_TIMEOUT_MS = 30000
DEFAULT_MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION = 5
RECONNECT_BACKOFF_EXP_BASE = 2
RECONNECT_BACKOFF_JITTER = 0.2
CONNECTION_SETUP_TIMEOUT_EXP_BASE = 2
CONNECTION_SETUP_TIMEOUT_JITTER = 0.2


# ============================================================================================
# ClusterConnectionStates
# ============================================================================================

class ConnectionState:
    """``org.apache.kafka.clients.ConnectionState``."""

    DISCONNECTED = "DISCONNECTED"
    CONNECTING = "CONNECTING"
    CHECKING_API_VERSIONS = "CHECKING_API_VERSIONS"
    READY = "READY"
    AUTHENTICATION_FAILED = "AUTHENTICATION_FAILED"

    @staticmethod
    def is_disconnected(state: str) -> bool:
        return state == "DISCONNECTED" or state == "AUTHENTICATION_FAILED"

    @staticmethod
    def is_connected(state: str) -> bool:
        return state == "READY" or state == "CHECKING_API_VERSIONS"


class NodeConnectionState:
    """``ClusterConnectionStates.NodeConnectionState``."""

    __slots__ = ("state", "last_connect_attempt_ms", "failed_attempts", "failed_connect_attempts",
                 "authentication_exception", "reconnect_backoff_ms", "connection_setup_timeout_ms",
                 "throttle_until_time_ms", "host")

    def __init__(self, state: str, last_connect_attempt_ms: int, reconnect_backoff_ms: int,
                 connection_setup_timeout_ms: int, host: str) -> None:
        self.state = state
        self.last_connect_attempt_ms = last_connect_attempt_ms
        self.failed_attempts = 0
        self.failed_connect_attempts = 0
        self.authentication_exception: Optional[AuthenticationException] = None
        self.reconnect_backoff_ms = reconnect_backoff_ms
        self.connection_setup_timeout_ms = connection_setup_timeout_ms
        self.throttle_until_time_ms = 0
        self.host = host

    def __repr__(self) -> str:
        return "NodeState(%s, %d, %d, %d)" % (self.state, self.last_connect_attempt_ms,
                                             self.failed_attempts, self.failed_connect_attempts)


class ClusterConnectionStates:
    """``org.apache.kafka.clients.ClusterConnectionStates``: the state of each node's connection.

    Reconnect backoff and connection-setup timeout are ``ExponentialBackoff``s; with
    ``reconnect_backoff_max_ms <= reconnect_backoff_ms`` the backoff is flat (pre-2.1 behaviour).
    """

    __slots__ = ("_node_state", "_connecting_nodes", "_reconnect_backoff", "_connection_setup_timeout")

    def __init__(self, reconnect_backoff_ms: int, reconnect_backoff_max_ms: int,
                 connection_setup_timeout_ms: int, connection_setup_timeout_max_ms: int,
                 rng: Optional[random.Random] = None,
                 reconnect_backoff_jitter: float = RECONNECT_BACKOFF_JITTER,
                 connection_setup_timeout_jitter: float = CONNECTION_SETUP_TIMEOUT_JITTER) -> None:
        self._node_state: Dict[int, NodeConnectionState] = {}
        # Insertion-ordered "set" (Java uses a HashSet; order only matters for timeout handling).
        self._connecting_nodes: Dict[int, None] = {}
        self._reconnect_backoff = ExponentialBackoff(
            reconnect_backoff_ms, RECONNECT_BACKOFF_EXP_BASE, reconnect_backoff_max_ms,
            reconnect_backoff_jitter if reconnect_backoff_max_ms > reconnect_backoff_ms else 0.0, rng)
        self._connection_setup_timeout = ExponentialBackoff(
            connection_setup_timeout_ms, CONNECTION_SETUP_TIMEOUT_EXP_BASE,
            connection_setup_timeout_max_ms,
            connection_setup_timeout_jitter
            if connection_setup_timeout_max_ms > connection_setup_timeout_ms else 0.0, rng)

    # ---- predicates ---------------------------------------------------------------------

    def can_connect(self, node_id: int, now: int) -> bool:
        """True if no state yet, or disconnected and the reconnect backoff has elapsed."""
        state = self._node_state.get(node_id)
        if state is None:
            return True
        return (ConnectionState.is_disconnected(state.state)
                and now - state.last_connect_attempt_ms >= state.reconnect_backoff_ms)

    def is_blacked_out(self, node_id: int, now: int) -> bool:
        """Disconnected and still within the reconnect backoff."""
        state = self._node_state.get(node_id)
        return (state is not None and ConnectionState.is_disconnected(state.state)
                and now - state.last_connect_attempt_ms < state.reconnect_backoff_ms)

    def connection_delay(self, node_id: int, now: int) -> int:
        """How long to wait before this node can be used (0 if no state; setup timeout if
        connecting; remaining backoff if disconnected; Long.MAX if connected)."""
        state = self._node_state.get(node_id)
        if state is None:
            return 0
        if state.state == ConnectionState.CONNECTING:
            return state.connection_setup_timeout_ms
        if ConnectionState.is_disconnected(state.state):
            time_waited = now - state.last_connect_attempt_ms
            d = state.reconnect_backoff_ms - time_waited
            return d if d > 0 else 0
        # When connected we should be able to delay indefinitely: a network event wakes us up.
        return LONG_MAX

    def is_connecting(self, node_id: int) -> bool:
        state = self._node_state.get(node_id)
        return state is not None and state.state == ConnectionState.CONNECTING

    def is_preparing_connection(self, node_id: int) -> bool:
        """CONNECTING or CHECKING_API_VERSIONS."""
        state = self._node_state.get(node_id)
        return state is not None and (state.state == ConnectionState.CONNECTING
                                      or state.state == ConnectionState.CHECKING_API_VERSIONS)

    def is_ready(self, node_id: int, now: int) -> bool:
        state = self._node_state.get(node_id)
        return (state is not None and state.state == ConnectionState.READY
                and state.throttle_until_time_ms <= now)

    def has_ready_nodes(self, now: int) -> bool:
        for state in self._node_state.values():
            if state.state == ConnectionState.READY and state.throttle_until_time_ms <= now:
                return True
        return False

    def is_connected(self, node_id: int) -> bool:
        state = self._node_state.get(node_id)
        return state is not None and ConnectionState.is_connected(state.state)

    def is_disconnected(self, node_id: int) -> bool:
        state = self._node_state.get(node_id)
        return state is not None and ConnectionState.is_disconnected(state.state)

    def authentication_exception(self, node_id: int) -> Optional[AuthenticationException]:
        state = self._node_state.get(node_id)
        return None if state is None else state.authentication_exception

    def connection_state(self, node_id: int) -> Optional[str]:
        state = self._node_state.get(node_id)
        return None if state is None else state.state

    def last_connect_attempt_ms(self, node_id: int) -> int:
        state = self._node_state.get(node_id)
        return 0 if state is None else state.last_connect_attempt_ms

    def throttle_delay_ms(self, node_id: int, now: int) -> int:
        state = self._node_state.get(node_id)
        if state is None or state.throttle_until_time_ms <= now:
            return 0
        return state.throttle_until_time_ms - now

    def poll_delay_ms(self, node_id: int, now: int) -> int:
        """Throttle delay if connected and throttled, else ``connection_delay``."""
        throttle_delay = self.throttle_delay_ms(node_id, now)
        if self.is_connected(node_id) and throttle_delay > 0:
            return throttle_delay
        return self.connection_delay(node_id, now)

    def is_connection_setup_timeout(self, node_id: int, now: int) -> bool:
        state = self._node_state_or_fail(node_id)
        if state.state != ConnectionState.CONNECTING:
            raise IllegalStateException("Node %d is not in connecting state" % node_id)
        return now - state.last_connect_attempt_ms > state.connection_setup_timeout_ms

    def nodes_with_connection_setup_timeout(self, now: int) -> List[int]:
        if not self._connecting_nodes:
            return []  # nearly always (every NetworkClient.poll asks): no connection being set up
        return [n for n in self._connecting_nodes if self.is_connection_setup_timeout(n, now)]

    # ---- transitions --------------------------------------------------------------------

    def connecting(self, node_id: int, now: int, host: str) -> None:
        """Enter CONNECTING (reusing the node's backoff state if the host is unchanged)."""
        state = self._node_state.get(node_id)
        if state is not None and state.host == host:
            state.last_connect_attempt_ms = now
            state.state = ConnectionState.CONNECTING
            self._connecting_nodes[node_id] = None
            return
        # Create a new NodeConnectionState if the node's host changed or none existed.
        self._node_state[node_id] = NodeConnectionState(
            ConnectionState.CONNECTING, now, self._reconnect_backoff.backoff(0),
            self._connection_setup_timeout.backoff(0), host)
        self._connecting_nodes[node_id] = None

    def disconnected(self, node_id: int, now: int) -> None:
        state = self._node_state_or_fail(node_id)
        state.last_connect_attempt_ms = now
        self._update_reconnect_backoff(state)
        if state.state == ConnectionState.CONNECTING:
            self._update_connection_setup_timeout(state)
            self._connecting_nodes.pop(node_id, None)
        else:
            self._reset_connection_setup_timeout(state)
        state.state = ConnectionState.DISCONNECTED

    def throttle(self, node_id: int, throttle_until_time_ms: int) -> None:
        state = self._node_state.get(node_id)
        if state is not None and state.throttle_until_time_ms < throttle_until_time_ms:
            state.throttle_until_time_ms = throttle_until_time_ms

    def checking_api_versions(self, node_id: int) -> None:
        state = self._node_state_or_fail(node_id)
        state.state = ConnectionState.CHECKING_API_VERSIONS
        self._reset_connection_setup_timeout(state)
        self._connecting_nodes.pop(node_id, None)

    def ready(self, node_id: int) -> None:
        state = self._node_state_or_fail(node_id)
        state.state = ConnectionState.READY
        state.authentication_exception = None
        self._reset_reconnect_backoff(state)
        self._reset_connection_setup_timeout(state)
        self._connecting_nodes.pop(node_id, None)

    def authentication_failed(self, node_id: int, now: int, exception: AuthenticationException) -> None:
        state = self._node_state_or_fail(node_id)
        state.authentication_exception = exception
        state.state = ConnectionState.AUTHENTICATION_FAILED
        state.last_connect_attempt_ms = now
        self._update_reconnect_backoff(state)

    def remove(self, node_id: int) -> None:
        self._node_state.pop(node_id, None)
        self._connecting_nodes.pop(node_id, None)

    def _reset_reconnect_backoff(self, state: NodeConnectionState) -> None:
        state.failed_attempts = 0
        state.reconnect_backoff_ms = self._reconnect_backoff.backoff(0)

    def _update_reconnect_backoff(self, state: NodeConnectionState) -> None:
        state.reconnect_backoff_ms = self._reconnect_backoff.backoff(state.failed_attempts)
        state.failed_attempts += 1

    def _reset_connection_setup_timeout(self, state: NodeConnectionState) -> None:
        state.failed_connect_attempts = 0
        state.connection_setup_timeout_ms = self._connection_setup_timeout.backoff(0)

    def _update_connection_setup_timeout(self, state: NodeConnectionState) -> None:
        state.failed_connect_attempts += 1
        state.connection_setup_timeout_ms = self._connection_setup_timeout.backoff(
            state.failed_connect_attempts)

    def _node_state_or_fail(self, node_id: int) -> NodeConnectionState:
        state = self._node_state.get(node_id)
        if state is None:
            raise IllegalStateException("No entry found for connection %d" % node_id)
        return state


# ============================================================================================
# Requests, responses, in-flight bookkeeping
# ============================================================================================

class RequestHeader:
    """``org.apache.kafka.common.requests.RequestHeader``."""

    __slots__ = ("api_key", "api_version", "client_id", "correlation_id")

    def __init__(self, api_key: str, api_version: int, client_id: str, correlation_id: int) -> None:
        self.api_key = api_key
        self.api_version = api_version
        self.client_id = client_id
        self.correlation_id = correlation_id

    def __repr__(self) -> str:
        return "RequestHeader(apiKey=%s, apiVersion=%d, clientId=%s, correlationId=%d)" % (
            self.api_key, self.api_version, self.client_id, self.correlation_id)


class RequestCompletionHandler:
    """``org.apache.kafka.clients.RequestCompletionHandler``."""

    __slots__ = ()

    def on_complete(self, response: "ClientResponse") -> None:
        raise NotImplementedError


class ClientRequest:
    """``org.apache.kafka.clients.ClientRequest``: a request plus its routing and callback.

    ``request`` is the request data object (what Java builds from ``requestBuilder``).
    """

    __slots__ = ("destination", "request", "correlation_id", "client_id", "created_time_ms",
                 "expect_response", "request_timeout_ms", "callback")

    def __init__(self, destination: int, request: Any, correlation_id: int, client_id: str,
                 created_time_ms: int, expect_response: bool, request_timeout_ms: int,
                 callback: Optional[RequestCompletionHandler]) -> None:
        self.destination = destination
        self.request = request
        self.correlation_id = correlation_id
        self.client_id = client_id
        self.created_time_ms = created_time_ms
        self.expect_response = expect_response
        self.request_timeout_ms = request_timeout_ms
        self.callback = callback

    @property
    def api_key(self) -> str:
        return self.request.api_key

    def make_header(self, version: int = 0) -> RequestHeader:
        return RequestHeader(self.request.api_key, version, self.client_id, self.correlation_id)

    def __repr__(self) -> str:
        return ("ClientRequest(expectResponse=%s, callback=%r, destination=%d, correlationId=%d, "
                "clientId=%s, createdTimeMs=%d, requestTimeoutMs=%d, request=%r)" % (
                    self.expect_response, self.callback, self.destination, self.correlation_id,
                    self.client_id, self.created_time_ms, self.request_timeout_ms, self.request))


class ClientResponse:
    """``org.apache.kafka.clients.ClientResponse``."""

    __slots__ = ("request_header", "callback", "destination", "request_latency_ms",
                 "received_time_ms", "disconnected", "version_mismatch",
                 "authentication_exception", "response_body", "created_time_ms")

    def __init__(self, request_header: RequestHeader, callback: Optional[RequestCompletionHandler],
                 destination: int, created_time_ms: int, received_time_ms: int, disconnected: bool,
                 version_mismatch: Optional[UnsupportedVersionException],
                 authentication_exception: Optional[AuthenticationException],
                 response_body: Any) -> None:
        self.request_header = request_header
        self.callback = callback
        self.destination = destination
        self.created_time_ms = created_time_ms
        self.received_time_ms = received_time_ms
        self.request_latency_ms = received_time_ms - created_time_ms
        self.disconnected = disconnected
        self.version_mismatch = version_mismatch
        self.authentication_exception = authentication_exception
        self.response_body = response_body

    def was_disconnected(self) -> bool:
        return self.disconnected

    def has_response(self) -> bool:
        return self.response_body is not None

    def on_complete(self) -> None:
        if self.callback is not None:
            self.callback.on_complete(self)

    def __repr__(self) -> str:
        return ("ClientResponse(receivedTimeMs=%d, latencyMs=%d, disconnected=%s, "
                "requestHeader=%r, responseBody=%r)" % (
                    self.received_time_ms, self.request_latency_ms, self.disconnected,
                    self.request_header, self.response_body))


class InFlightRequest:
    """``NetworkClient.InFlightRequest``: a request that has been handed to the Selectable."""

    __slots__ = ("header", "destination", "callback", "expect_response", "request",
                 "is_internal_request", "send_completed", "created_time_ms", "send_time_ms",
                 "request_timeout_ms")

    def __init__(self, client_request: ClientRequest, header: RequestHeader,
                 is_internal_request: bool, send_time_ms: int) -> None:
        self.header = header
        self.destination = client_request.destination
        self.callback = client_request.callback
        self.expect_response = client_request.expect_response
        self.request = client_request.request
        self.is_internal_request = is_internal_request
        self.send_completed = False  # Java: send.completed()
        self.created_time_ms = client_request.created_time_ms
        self.send_time_ms = send_time_ms
        self.request_timeout_ms = client_request.request_timeout_ms

    def time_elapsed_since_send_ms(self, now: int) -> int:
        d = now - self.send_time_ms
        return d if d > 0 else 0

    def time_elapsed_since_create_ms(self, now: int) -> int:
        d = now - self.created_time_ms
        return d if d > 0 else 0

    def completed(self, response: Any, time_ms: int) -> ClientResponse:
        return ClientResponse(self.header, self.callback, self.destination, self.created_time_ms,
                              time_ms, False, None, None, response)

    def disconnected(self, time_ms: int,
                     authentication_exception: Optional[AuthenticationException]) -> ClientResponse:
        return ClientResponse(self.header, self.callback, self.destination, self.created_time_ms,
                              time_ms, True, None, authentication_exception, None)

    def __repr__(self) -> str:
        return "InFlightRequest(header=%r, destination=%d, sendTimeMs=%d)" % (
            self.header, self.destination, self.send_time_ms)


class InFlightRequests:
    """``org.apache.kafka.clients.InFlightRequests``.

    Java keeps each node's deque newest-first (``addFirst``/``pollLast``); here each deque is
    oldest-first (``append``/``popleft``), so ``completeNext`` = popleft and ``lastSent`` = [-1].
    """

    __slots__ = ("max_in_flight_requests_per_connection", "_requests", "_count")

    def __init__(self, max_in_flight_requests_per_connection: int) -> None:
        self.max_in_flight_requests_per_connection = max_in_flight_requests_per_connection
        self._requests: Dict[int, Deque[InFlightRequest]] = {}
        self._count = 0

    def add(self, request: InFlightRequest) -> None:
        q = self._requests.get(request.destination)
        if q is None:
            q = self._requests[request.destination] = deque()
        q.append(request)
        self._count += 1

    def _request_queue(self, node: int) -> Deque[InFlightRequest]:
        q = self._requests.get(node)
        if not q:
            raise IllegalStateException("There are no in-flight requests for node %d" % node)
        return q

    def complete_next(self, node: int) -> InFlightRequest:
        """Remove and return the oldest request for ``node`` (the next one to be answered)."""
        r = self._request_queue(node).popleft()
        self._count -= 1
        return r

    def last_sent(self, node: int) -> InFlightRequest:
        return self._request_queue(node)[-1]

    def complete_last_sent(self, node: int) -> InFlightRequest:
        r = self._request_queue(node).pop()
        self._count -= 1
        return r

    def can_send_more(self, node: int) -> bool:
        """No queue, or the newest send completed and the queue is below the per-connection cap."""
        q = self._requests.get(node)
        return (not q) or (q[-1].send_completed
                           and len(q) < self.max_in_flight_requests_per_connection)

    def count(self, node: Optional[int] = None) -> int:
        if node is None:
            return self._count
        q = self._requests.get(node)
        return 0 if q is None else len(q)

    def is_empty(self, node: Optional[int] = None) -> bool:
        if node is None:
            return self._count == 0
        q = self._requests.get(node)
        return not q

    def clear_all(self, node: int) -> List[InFlightRequest]:
        """Remove all requests for ``node``; returned oldest first."""
        q = self._requests.pop(node, None)
        if q is None:
            return []
        self._count -= len(q)
        return list(q)

    def nodes_with_timed_out_requests(self, now: int) -> List[int]:
        """Nodes having a request with ``now − sendTimeMs > requestTimeoutMs``, in the order Kafka's
        ``InFlightRequests.requests`` (a ``HashMap<String, Deque>`` keyed by node id) iterates them:
        the caller disconnects them in that order, and each disconnect decides what the node's
        requests still in transit become (campaign seed 2,016,606: the coordinator's node,
        ``2147483647``, was disconnected before node ``1``, where Kafka's map holds ``1`` first)."""
        out = []
        for node, q in self._requests.items():
            for r in q:
                elapsed = now - r.send_time_ms  # time_elapsed_since_send_ms, inline: every poll asks of every request
                if (elapsed if elapsed > 0 else 0) > r.request_timeout_ms:
                    out.append(node)
                    break
        if len(out) > 1:  # (most polls time out no node, or one: no order to find)
            order = hash_map_key_order([str(node) for node in self._requests])
            out.sort(key=lambda node: order.index(str(node)))
        return out


class LeastLoadedNode:
    """``org.apache.kafka.clients.LeastLoadedNode`` (trunk's return type of leastLoadedNode)."""

    __slots__ = ("node", "at_least_one_connection_ready")

    def __init__(self, node: Optional[Node], at_least_one_connection_ready: bool) -> None:
        self.node = node
        self.at_least_one_connection_ready = at_least_one_connection_ready

    def has_node_available_or_connection_ready(self) -> bool:
        return self.node is not None or self.at_least_one_connection_ready

    def __repr__(self) -> str:
        return "LeastLoadedNode(%r, %s)" % (self.node, self.at_least_one_connection_ready)


# ============================================================================================
# Metadata updaters
# ============================================================================================

class MetadataUpdater:
    """``org.apache.kafka.clients.MetadataUpdater``."""

    __slots__ = ()

    def fetch_nodes(self) -> List[Node]:
        raise NotImplementedError

    def is_update_due(self, now: int) -> bool:
        raise NotImplementedError

    def maybe_update(self, now: int) -> int:
        raise NotImplementedError

    def handle_server_disconnect(self, now: int, node_id: int,
                                 maybe_auth_exception: Optional[AuthenticationException]) -> None:
        raise NotImplementedError

    def handle_failed_request(self, now: int, maybe_fatal_exception: Optional[KafkaException]) -> None:
        raise NotImplementedError

    def handle_successful_response(self, header: RequestHeader, now: int,
                                   response: MetadataResponseData) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class ManualMetadataUpdater(MetadataUpdater):
    """``ManualMetadataUpdater``: a fixed node list, never sends MetadataRequests."""

    __slots__ = ("_nodes",)

    def __init__(self, nodes: Iterable[Node] = ()) -> None:
        self._nodes = list(nodes)

    def set_nodes(self, nodes: Iterable[Node]) -> None:
        self._nodes = list(nodes)

    def fetch_nodes(self) -> List[Node]:
        return list(self._nodes)

    def is_update_due(self, now: int) -> bool:
        return False

    def maybe_update(self, now: int) -> int:
        return LONG_MAX

    def handle_server_disconnect(self, now, node_id, maybe_auth_exception) -> None:
        pass

    def handle_failed_request(self, now, maybe_fatal_exception) -> None:
        pass

    def handle_successful_response(self, header, now, response) -> None:
        pass


class DefaultMetadataUpdater(MetadataUpdater):
    """``NetworkClient.DefaultMetadataUpdater``: refreshes ``Metadata`` via the least loaded node."""

    __slots__ = ("metadata", "_client", "_in_progress_request_version", "_in_progress_partial")

    def __init__(self, metadata: Metadata) -> None:
        self.metadata = metadata
        self._client: Optional["NetworkClient"] = None  # set by NetworkClient (inner class in Java)
        self._in_progress_request_version: Optional[int] = None  # InProgressData
        self._in_progress_partial = False

    def fetch_nodes(self):
        return self.metadata.fetch().nodes()

    def has_fetch_in_progress(self) -> bool:
        return self._in_progress_request_version is not None

    def is_update_due(self, now: int) -> bool:
        return self._in_progress_request_version is None and self.metadata.time_to_next_update(now) == 0

    def maybe_update(self, now: int) -> int:
        """Send a MetadataRequest if one is due; return how long until we should check again."""
        client = self._client
        # should we update our metadata?
        time_to_next_metadata_update = self.metadata.time_to_next_update(now)
        wait_for_metadata_fetch = (client.default_request_timeout_ms
                                   if self._in_progress_request_version is not None else 0)
        metadata_timeout = max(time_to_next_metadata_update, wait_for_metadata_fetch)
        if metadata_timeout > 0:
            return metadata_timeout
        # Beware that the behavior of this method and the computation of timeouts for poll() are
        # highly dependent on the behavior of leastLoadedNode.
        node = client.least_loaded_node(now).node
        if node is None:
            # Give up sending metadata request since no node is available.
            return client.reconnect_backoff_ms
        return self._maybe_update(now, node)

    def _maybe_update(self, now: int, node: Node) -> int:
        client = self._client
        node_id = node.id
        if client._can_send_request(node_id, now):
            request_and_version = self.metadata.new_metadata_request_and_version(now)
            client._send_internal_metadata_request(request_and_version.request, node_id, now)
            self._in_progress_request_version = request_and_version.request_version
            self._in_progress_partial = request_and_version.is_partial_update
            return client.default_request_timeout_ms
        # If there's any connection establishment underway, wait until it completes. This prevents
        # the client from unnecessarily connecting to additional nodes while a previous connection
        # attempt has not been completed.
        if client._is_any_node_connecting():
            # Strictly the timeout should be the connect timeout; Kafka uses the reconnect backoff.
            return client.reconnect_backoff_ms
        if client.connection_states.can_connect(node_id, now):
            # We don't have a connection to this node right now, make one.
            client._initiate_connect(node, now)
            return client.reconnect_backoff_ms
        # Connected but can't send more, or connecting: wait for a network event.
        return LONG_MAX

    def handle_server_disconnect(self, now: int, node_id: int,
                                 maybe_auth_exception: Optional[AuthenticationException]) -> None:
        if maybe_auth_exception is not None:
            self.metadata.fatal_error(maybe_auth_exception)

    def handle_failed_request(self, now: int, maybe_fatal_exception: Optional[KafkaException]) -> None:
        if maybe_fatal_exception is not None:
            self.metadata.fatal_error(maybe_fatal_exception)
        self.metadata.failed_update(now)
        self._in_progress_request_version = None

    def handle_successful_response(self, header: RequestHeader, now: int,
                                   response: MetadataResponseData) -> None:
        # When talking to the startup phase of a broker, it is possible to receive an empty
        # metadata set, which we should retry later.
        if not response.brokers:
            self.metadata.failed_update(now)
        else:
            self.metadata.update(self._in_progress_request_version, response,
                                 self._in_progress_partial, now)
        self._in_progress_request_version = None


# ============================================================================================
# NetworkClient
# ============================================================================================

class NetworkClient:
    """``org.apache.kafka.clients.NetworkClient``: connection management + request/response
    correlation over a :class:`Selectable`.

    ``metadata_updater`` may be a :class:`Metadata` (wrapped in a DefaultMetadataUpdater) or any
    :class:`MetadataUpdater`.  ``rng`` supplies leastLoadedNode's random starting offset and the
    backoff jitter; it must be an injected ``random.Random`` (never the global generator).
    ``discover_broker_versions`` (Kafka's consumer default is true) inserts the
    CHECKING_API_VERSIONS step after connecting; it is off by default here so that a simulated
    broker need not answer ApiVersions.
    """

    __slots__ = ("selector", "metadata_updater", "in_flight_requests", "connection_states",
                 "client_id", "_correlation", "reconnect_backoff_ms", "default_request_timeout_ms",
                 "time", "discover_broker_versions", "_rand_offset", "_aborted_sends",
                 "_nodes_needing_api_versions_fetch", "api_versions", "_state")

    def __init__(self, selector: Selectable, metadata_updater, client_id: str, time: Time,
                 rng: random.Random,
                 max_in_flight_requests_per_connection: int = DEFAULT_MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
                 reconnect_backoff_ms: int = DEFAULT_RECONNECT_BACKOFF_MS,
                 reconnect_backoff_max_ms: int = DEFAULT_RECONNECT_BACKOFF_MAX_MS,
                 default_request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS,
                 connection_setup_timeout_ms: int = DEFAULT_SOCKET_CONNECTION_SETUP_TIMEOUT_MS,
                 connection_setup_timeout_max_ms: int = DEFAULT_SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS,
                 discover_broker_versions: bool = False,
                 reconnect_backoff_jitter: float = RECONNECT_BACKOFF_JITTER,
                 connection_setup_timeout_jitter: float = CONNECTION_SETUP_TIMEOUT_JITTER) -> None:
        if not isinstance(rng, random.Random):
            raise IllegalArgumentException("rng must be an injected random.Random instance")
        if isinstance(metadata_updater, Metadata):
            metadata_updater = DefaultMetadataUpdater(metadata_updater)
        if isinstance(metadata_updater, DefaultMetadataUpdater):
            metadata_updater._client = self
        self.selector = selector
        self.metadata_updater: MetadataUpdater = metadata_updater
        self.client_id = client_id
        self.in_flight_requests = InFlightRequests(max_in_flight_requests_per_connection)
        self.connection_states = ClusterConnectionStates(
            reconnect_backoff_ms, reconnect_backoff_max_ms, connection_setup_timeout_ms,
            connection_setup_timeout_max_ms, rng, reconnect_backoff_jitter,
            connection_setup_timeout_jitter)
        self._correlation = 0
        self.reconnect_backoff_ms = reconnect_backoff_ms
        self.default_request_timeout_ms = default_request_timeout_ms
        self.time = time
        self.discover_broker_versions = discover_broker_versions
        self._rand_offset = rng
        self._aborted_sends: List[ClientResponse] = []
        self._nodes_needing_api_versions_fetch: Dict[int, ApiVersionsRequestData] = {}
        self.api_versions: Dict[int, ApiVersionsResponseData] = {}
        self._state = "ACTIVE"

    # ---- readiness ----------------------------------------------------------------------

    def ready(self, node: Node, now: int) -> bool:
        """Begin connecting to ``node`` if needed; True if we can send to it right now."""
        if node.is_empty():
            raise IllegalArgumentException("Cannot connect to empty node %r" % (node,))
        if self.is_ready(node, now):
            return True
        if self.connection_states.can_connect(node.id, now):
            # if we are interested in sending to a node and we don't have a connection to it,
            # initiate one
            self._initiate_connect(node, now)
        return False

    def is_ready(self, node: Node, now: int) -> bool:
        """Connected, channel ready, can send more — and no metadata update is due (a due update
        takes priority so that the metadata request can go out first)."""
        return (not self.metadata_updater.is_update_due(now)
                and self._can_send_request(node.id, now))

    def _can_send_request(self, node_id: int, now: int) -> bool:
        return (self.connection_states.is_ready(node_id, now)
                and self.selector.is_channel_ready(node_id)
                and self.in_flight_requests.can_send_more(node_id))

    def connection_failed(self, node: Node) -> bool:
        return self.connection_states.is_disconnected(node.id)

    def authentication_exception(self, node: Node) -> Optional[AuthenticationException]:
        return self.connection_states.authentication_exception(node.id)

    def connection_delay(self, node: Node, now: int) -> int:
        return self.connection_states.connection_delay(node.id, now)

    def poll_delay_ms(self, node: Node, now: int) -> int:
        return self.connection_states.poll_delay_ms(node.id, now)

    def is_connection_setup_timeout(self, node_id: int, now: int) -> bool:
        return self.connection_states.is_connection_setup_timeout(node_id, now)

    def has_ready_nodes(self, now: int) -> bool:
        return self.connection_states.has_ready_nodes(now)

    def in_flight_request_count(self, node_id: Optional[int] = None) -> int:
        return self.in_flight_requests.count(node_id)

    def has_in_flight_requests(self, node_id: Optional[int] = None) -> bool:
        return not self.in_flight_requests.is_empty(node_id)

    def _is_any_node_connecting(self) -> bool:
        states = self.connection_states
        for node in self.metadata_updater.fetch_nodes():
            if states.is_connecting(node.id):
                return True
        return False

    # ---- requests -----------------------------------------------------------------------

    def _next_correlation_id(self) -> int:
        c = self._correlation
        self._correlation = c + 1 if c < INT_MAX else 0
        return c

    def new_client_request(self, node_id: int, request: Any, created_time_ms: int,
                           expect_response: bool, request_timeout_ms: Optional[int] = None,
                           callback: Optional[RequestCompletionHandler] = None) -> ClientRequest:
        if request_timeout_ms is None:
            request_timeout_ms = self.default_request_timeout_ms
        return ClientRequest(node_id, request, self._next_correlation_id(), self.client_id,
                             created_time_ms, expect_response, request_timeout_ms, callback)

    def send(self, request: ClientRequest, now: int) -> None:
        """Queue ``request`` for sending; the node must be ready (``ready`` returned True)."""
        self._do_send(request, False, now)

    def _do_send(self, client_request: ClientRequest, is_internal_request: bool, now: int) -> None:
        self._ensure_active()
        node_id = client_request.destination
        if not is_internal_request:
            # If this request came from outside the NetworkClient, validate that we can send data.
            if not self._can_send_request(node_id, now):
                raise IllegalStateException(
                    "Attempt to send a request to node %d which is not ready." % node_id)
        header = client_request.make_header()
        in_flight = InFlightRequest(client_request, header, is_internal_request, now)
        self.in_flight_requests.add(in_flight)
        self.selector.send(node_id, (client_request.correlation_id, client_request.request))

    def _send_internal_metadata_request(self, request: Any, node_id: int, now: int) -> None:
        client_request = self.new_client_request(node_id, request, now, True)
        self._do_send(client_request, True, now)

    # ---- poll ---------------------------------------------------------------------------

    def poll(self, timeout: int, now: int) -> List[ClientResponse]:
        """Do actual I/O: send queued requests, read responses, handle disconnections and
        connections, time out in-flight requests, and complete callbacks."""
        self._ensure_active()
        if self._aborted_sends:
            # If there are aborted sends because of unsupported version exceptions or disconnects,
            # handle them immediately without waiting for Selector#poll.
            responses = self._aborted_sends
            self._aborted_sends = []
            self._complete_responses(responses)
            return responses
        metadata_timeout = self.metadata_updater.maybe_update(now)
        t = timeout
        if metadata_timeout < t:
            t = metadata_timeout
        if self.default_request_timeout_ms < t:
            t = self.default_request_timeout_ms
        selector = self.selector
        selector.poll(t)
        # process completed actions (each list is looked at first: most polls complete nothing)
        updated_now = self.time.milliseconds()
        responses: List[ClientResponse] = []
        if selector.completed_sends:
            self._handle_completed_sends(responses, updated_now)
        if selector.completed_receives:
            self._handle_completed_receives(responses, updated_now)
        if selector.disconnected:
            self._handle_disconnections(responses, updated_now)
        if selector.connected:
            self._handle_connections()
        self._handle_initiate_api_version_requests(updated_now)  # looks at its own pending map first
        self._handle_timed_out_connections(responses, updated_now)
        self._handle_timed_out_requests(responses, updated_now)
        self._complete_responses(responses)
        return responses

    def _complete_responses(self, responses: List[ClientResponse]) -> None:
        # Callbacks only record results in the simulation; exceptions propagate (Java logs them).
        for response in responses:
            response.on_complete()

    def _handle_completed_sends(self, responses: List[ClientResponse], now: int) -> None:
        in_flight = self.in_flight_requests
        for destination, correlation_id in self.selector.completed_sends:
            request = in_flight.last_sent(destination)
            request.send_completed = True
            if not request.expect_response:
                in_flight.complete_last_sent(destination)
                responses.append(request.completed(None, now))

    def _handle_completed_receives(self, responses: List[ClientResponse], now: int) -> None:
        in_flight = self.in_flight_requests
        for source, correlation_id, response in self.selector.completed_receives:
            req = in_flight.complete_next(source)
            if req.header.correlation_id != correlation_id:
                raise IllegalStateException(
                    "Correlation id for response (%d) does not match request (%d), request header: %r"
                    % (correlation_id, req.header.correlation_id, req.header))
            throttle_time_ms = getattr(response, "throttle_time_ms", 0)
            if throttle_time_ms > 0:
                # KIP-219: the client backs off from the node for the throttle time.
                self.connection_states.throttle(source, now + throttle_time_ms)
            if req.is_internal_request and isinstance(response, MetadataResponseData):
                self.metadata_updater.handle_successful_response(req.header, now, response)
            elif req.is_internal_request and isinstance(response, ApiVersionsResponseData):
                self._handle_api_versions_response(responses, req, now, response)
            else:
                responses.append(req.completed(response, now))

    def _handle_api_versions_response(self, responses: List[ClientResponse], req: InFlightRequest,
                                      now: int, response: ApiVersionsResponseData) -> None:
        node = req.destination
        if response.error_code != Errors.NONE.value:
            # UNSUPPORTED_VERSION downgrade retries are not modelled: close the connection.
            self.selector.close(node)
            self._process_disconnection(responses, node, now, ChannelState.LOCAL_CLOSE_STATE)
            return
        self.api_versions[node] = response
        self.connection_states.ready(node)

    def _handle_disconnections(self, responses: List[ClientResponse], now: int) -> None:
        for node, channel_state in self.selector.disconnected.items():
            self._process_disconnection(responses, node, now, channel_state)

    def _handle_connections(self) -> None:
        for node in self.selector.connected:
            # We are now connected. Note that we might not still be able to send requests (e.g.
            # the channel may still be authenticating) - Selectable.is_channel_ready tells.
            if self.discover_broker_versions:
                self._nodes_needing_api_versions_fetch[node] = ApiVersionsRequestData()
                self.connection_states.checking_api_versions(node)
            else:
                self.connection_states.ready(node)

    def _handle_initiate_api_version_requests(self, now: int) -> None:
        pending = self._nodes_needing_api_versions_fetch
        if not pending:
            return
        for node in list(pending):
            if self.selector.is_channel_ready(node) and self.in_flight_requests.can_send_more(node):
                request = pending.pop(node)
                client_request = self.new_client_request(node, request, now, True)
                self._do_send(client_request, True, now)

    def _handle_timed_out_connections(self, responses: List[ClientResponse], now: int) -> None:
        for node in self.connection_states.nodes_with_connection_setup_timeout(now):
            self.selector.close(node)
            self._process_disconnection(responses, node, now, ChannelState.LOCAL_CLOSE_STATE, True)

    def _handle_timed_out_requests(self, responses: List[ClientResponse], now: int) -> None:
        """Disconnect nodes with an in-flight request older than its timeout (by send time)."""
        for node in self.in_flight_requests.nodes_with_timed_out_requests(now):
            # close connection to the node
            self.selector.close(node)
            self._process_disconnection(responses, node, now, ChannelState.LOCAL_CLOSE_STATE, True)

    def _process_disconnection(self, responses: Optional[List[ClientResponse]], node_id: int, now: int,
                               disconnect_state: ChannelState, timed_out: bool = False) -> None:
        self.connection_states.disconnected(node_id, now)
        self.api_versions.pop(node_id, None)
        self._nodes_needing_api_versions_fetch.pop(node_id, None)
        authentication_exception = None
        if disconnect_state.state == ChannelState.AUTHENTICATION_FAILED:
            authentication_exception = disconnect_state.exception
            self.connection_states.authentication_failed(node_id, now, authentication_exception)
        self._cancel_in_flight_requests(node_id, now, responses, timed_out)
        self.metadata_updater.handle_server_disconnect(now, node_id, authentication_exception)

    def _cancel_in_flight_requests(self, node_id: int, now: int,
                                   responses: Optional[List[ClientResponse]], timed_out: bool) -> None:
        for request in self.in_flight_requests.clear_all(node_id):
            if not request.is_internal_request:
                if responses is not None:
                    responses.append(request.disconnected(now, None))
            elif request.header.api_key == "Metadata":
                self.metadata_updater.handle_failed_request(now, None)
            # an internal ApiVersions request needs nothing: the node is disconnected anyway

    # ---- connections --------------------------------------------------------------------

    def _initiate_connect(self, node: Node, now: int) -> None:
        node_id = node.id
        try:
            self.connection_states.connecting(node_id, now, node.host)
            self.selector.connect(node_id, node.host, node.port)
        except OSError:
            # attempt failed, we'll try again after the backoff
            self.connection_states.disconnected(node_id, now)
            # notify metadata updater of the connection failure
            self.metadata_updater.handle_server_disconnect(now, node_id, None)

    def disconnect(self, node_id: int) -> None:
        """Close the connection; in-flight requests complete as disconnected at the next poll."""
        if self.connection_states.is_disconnected(node_id):
            return
        self.selector.close(node_id)
        now = self.time.milliseconds()
        self._cancel_in_flight_requests(node_id, now, self._aborted_sends, False)
        self.connection_states.disconnected(node_id, now)

    def close_node(self, node_id: int) -> None:
        """``NetworkClient.close(String nodeId)``: close and forget the connection's state."""
        self.selector.close(node_id)
        now = self.time.milliseconds()
        self._cancel_in_flight_requests(node_id, now, None, False)
        self.connection_states.remove(node_id)

    def least_loaded_node(self, now: int) -> LeastLoadedNode:
        """Choose the node with the fewest outstanding requests that is ready or can connect.

        Scan all nodes cyclically from a random offset: a ready node with nothing in flight is
        returned at once; otherwise prefer the ready node with the fewest in-flight requests, then
        a node that is connecting, then the connectable node with the oldest connect attempt.
        """
        nodes = self.metadata_updater.fetch_nodes()
        n = len(nodes)
        if n == 0:
            raise IllegalStateException("There are no nodes in the Kafka cluster")
        states = self.connection_states
        selector = self.selector
        in_flight_requests = self.in_flight_requests
        inflight = INT_MAX
        found_connecting = None
        found_can_connect = None
        found_ready = None
        at_least_one_connection_ready = False
        offset = self._rand_offset.randrange(n)
        for i in range(n):
            node = nodes[(offset + i) % n]
            node_id = node.id
            if (not at_least_one_connection_ready and states.is_ready(node_id, now)
                    and selector.is_channel_ready(node_id)):
                at_least_one_connection_ready = True
            if self._can_send_request(node_id, now):
                curr_inflight = in_flight_requests.count(node_id)
                if curr_inflight == 0:
                    # if we find an established connection with no in-flight requests we can stop right away
                    return LeastLoadedNode(node, True)
                if curr_inflight < inflight:
                    # otherwise if this is the best we have found so far, record that
                    inflight = curr_inflight
                    found_ready = node
            elif states.is_preparing_connection(node_id):
                found_connecting = node
            elif states.can_connect(node_id, now):
                if (found_can_connect is None
                        or states.last_connect_attempt_ms(found_can_connect.id)
                        > states.last_connect_attempt_ms(node_id)):
                    found_can_connect = node
            # else: removed from the candidates (in reconnect backoff)
        # We prefer established connections if possible. Otherwise, we will wait for connections
        # which are being established before connecting to new nodes.
        if found_ready is not None:
            return LeastLoadedNode(found_ready, at_least_one_connection_ready)
        if found_connecting is not None:
            return LeastLoadedNode(found_connecting, at_least_one_connection_ready)
        if found_can_connect is not None:
            return LeastLoadedNode(found_can_connect, at_least_one_connection_ready)
        return LeastLoadedNode(None, at_least_one_connection_ready)

    # ---- misc ---------------------------------------------------------------------------

    def wakeup(self) -> None:
        self.selector.wakeup()

    def active(self) -> bool:
        return self._state == "ACTIVE"

    def _ensure_active(self) -> None:
        if self._state != "ACTIVE":
            raise IllegalStateException("Cannot send or poll a closed NetworkClient")

    def initiate_close(self) -> None:
        if self._state == "ACTIVE":
            self._state = "CLOSING"
            self.selector.wakeup()

    def close(self) -> None:
        if self._state == "CLOSED":
            return
        self._state = "CLOSED"
        self.selector.close_all()
        self.metadata_updater.close()
