"""``ConsumerNetworkClient`` (``org.apache.kafka.clients.consumer.internals``), protocol §4.1.

A higher-level client over :class:`~impl.network.network_client.NetworkClient`: requests are
buffered per node in :class:`UnsentRequests` and only transmitted by ``poll``; results come back as
:class:`~impl.future.RequestFuture` objects whose completion is deferred to a FIFO of pending
completions fired outside the (here purely notional) client lock.

Single-threaded: Java's ReentrantLock, atomics and concurrent queues become plain fields; the
places where Java takes/releases the lock are kept as comments so the step order stays readable.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Deque, Dict, Iterable, List, Optional

from impl.errors import (
    AuthenticationException,
    DisconnectException,
    TimeoutException,
    WakeupException,
)
from impl.future import PollCondition, RequestFuture
from impl.network.metadata import Metadata, Node
from impl.network.network_client import (
    ClientRequest,
    ClientResponse,
    NetworkClient,
    RequestCompletionHandler,
)
from impl.time import LONG_MAX, Time, Timer

#: ``ConsumerNetworkClient.MAX_POLL_TIMEOUT_MS``.
MAX_POLL_TIMEOUT_MS = 5000


class UnsentRequests:
    """``ConsumerNetworkClient.UnsentRequests``: per-node FIFO queues of not-yet-sent requests.

    Keyed by :class:`Node` (hash = node id) in a dict, so node iteration order is the order in
    which nodes first got a queue (Java's ConcurrentHashMap order is hash-based instead).
    """

    __slots__ = ("_unsent",)

    def __init__(self) -> None:
        self._unsent: Dict[Node, Deque[ClientRequest]] = {}

    def put(self, node: Node, request: ClientRequest) -> None:
        q = self._unsent.get(node)
        if q is None:
            q = self._unsent[node] = deque()
        q.append(request)

    def request_count(self, node: Optional[Node] = None) -> int:
        if node is not None:
            q = self._unsent.get(node)
            return 0 if q is None else len(q)
        total = 0
        for q in self._unsent.values():
            total += len(q)
        return total

    def has_requests(self, node: Optional[Node] = None) -> bool:
        if node is not None:
            q = self._unsent.get(node)
            return bool(q)
        for q in self._unsent.values():
            if q:
                return True
        return False

    def remove_expired_requests(self, now: int) -> List[ClientRequest]:
        """Remove requests with ``max(0, now − created) > timeout`` from the head of each node's
        queue, stopping at the first non-expired one (the queue is age-ordered)."""
        expired_requests: List[ClientRequest] = []
        for requests in self._unsent.values():
            while requests:
                request = requests[0]
                elapsed_ms = now - request.created_time_ms
                if elapsed_ms < 0:
                    elapsed_ms = 0
                if elapsed_ms > request.request_timeout_ms:
                    expired_requests.append(request)
                    requests.popleft()
                else:
                    break
        return expired_requests

    def clean(self) -> None:
        """Drop empty queues so the map does not grow indefinitely."""
        unsent = self._unsent
        for q in unsent.values():
            if not q:
                break
        else:
            return
        empty = [node for node, q in unsent.items() if not q]
        for node in empty:
            del unsent[node]

    def remove(self, node: Node) -> Iterable[ClientRequest]:
        q = self._unsent.pop(node, None)
        return () if q is None else q

    def request_iterator(self, node: Node) -> Deque[ClientRequest]:
        """The node's queue itself (iterate via ``[0]``/``popleft``)."""
        q = self._unsent.get(node)
        return deque() if q is None else q

    def nodes(self) -> List[Node]:
        return list(self._unsent)

    def items(self):
        return self._unsent.items()

    def __repr__(self) -> str:
        return "UnsentRequests(%r)" % ({n.id: len(q) for n, q in self._unsent.items()},)


class RequestFutureCompletionHandler(RequestCompletionHandler):
    """``ConsumerNetworkClient.RequestFutureCompletionHandler``.

    ``on_complete``/``on_failure`` only record the outcome and enqueue the handler in the owner's
    ``pending_completion`` FIFO; ``fire_completion`` later completes the future.
    """

    __slots__ = ("future", "response", "e", "_pending_completion")

    def __init__(self, pending_completion: Deque["RequestFutureCompletionHandler"]) -> None:
        self.future: RequestFuture[ClientResponse] = RequestFuture()
        self.response: Optional[ClientResponse] = None
        self.e: Optional[Exception] = None
        self._pending_completion = pending_completion

    def fire_completion(self) -> None:
        if self.e is not None:
            self.future.raise_(self.e)
            return
        response = self.response
        if response.authentication_exception is not None:
            self.future.raise_(response.authentication_exception)
        elif response.disconnected:
            # Cancelled request due to the node being disconnected.
            self.future.raise_(DisconnectException.INSTANCE)
        elif response.version_mismatch is not None:
            self.future.raise_(response.version_mismatch)
        else:
            self.future.complete(response)

    def on_failure(self, e: Exception) -> None:
        self.e = e
        self._pending_completion.append(self)

    def on_complete(self, response: ClientResponse) -> None:
        self.response = response
        self._pending_completion.append(self)


class ConsumerNetworkClient:
    """Higher level consumer access to the network layer (``ConsumerNetworkClient``)."""

    __slots__ = ("client", "unsent", "metadata", "time", "retry_backoff_ms", "max_poll_timeout_ms",
                 "request_timeout_ms", "_wakeup_disabled", "pending_completion",
                 "pending_disconnects", "_wakeup")

    def __init__(self, client: NetworkClient, metadata: Metadata, time: Time,
                 retry_backoff_ms: int = 100, request_timeout_ms: int = 30000,
                 max_poll_timeout_ms: int = MAX_POLL_TIMEOUT_MS) -> None:
        self.client = client
        self.unsent = UnsentRequests()
        self.metadata = metadata
        self.time = time
        self.retry_backoff_ms = retry_backoff_ms
        self.max_poll_timeout_ms = min(max_poll_timeout_ms, MAX_POLL_TIMEOUT_MS)
        self.request_timeout_ms = request_timeout_ms
        self._wakeup_disabled = False
        # when requests complete, they are transferred to this queue prior to invocation. The
        # purpose is to avoid invoking them while holding this object's monitor.
        self.pending_completion: Deque[RequestFutureCompletionHandler] = deque()
        self.pending_disconnects: Deque[Node] = deque()
        # this flag allows the client to be safely woken up without waiting on the lock above.
        self._wakeup = False

    def default_request_timeout_ms(self) -> int:
        """``defaultRequestTimeoutMs()``."""
        return self.request_timeout_ms

    # ---- send ---------------------------------------------------------------------------

    def send(self, node: Node, request: Any,
             request_timeout_ms: Optional[int] = None) -> RequestFuture[ClientResponse]:
        """``send(Node, AbstractRequest.Builder[, int])``: buffer ``request`` for ``node``;
        nothing is transmitted until ``poll``.

        ``createdTimeMs`` is *now* (send time, not transmit time), so the request-timeout clock of
        an unsent request starts here.
        """
        if request_timeout_ms is None:
            request_timeout_ms = self.request_timeout_ms
        now = self.time.milliseconds()
        completion_handler = RequestFutureCompletionHandler(self.pending_completion)
        client_request = self.client.new_client_request(node.id, request, now, True,
                                                        request_timeout_ms, completion_handler)
        self.unsent.put(node, client_request)
        # wakeup the client in case it is blocking in poll so that we can send the queued request
        self.client.wakeup()
        return completion_handler.future

    def least_loaded_node(self) -> Optional[Node]:
        """``leastLoadedNode()``."""
        return self.client.least_loaded_node(self.time.milliseconds()).node

    def has_ready_nodes(self, now: int) -> bool:
        """``hasReadyNodes(long)``."""
        return self.client.has_ready_nodes(now)

    # ---- metadata -----------------------------------------------------------------------

    def await_metadata_update(self, timer: Timer) -> bool:
        """``awaitMetadataUpdate(Timer)``: block until the metadata has been refreshed (or the
        timer expires); True if it was."""
        version = self.metadata.request_update(False)
        while True:
            self.poll(timer)
            if not (self.metadata.update_version() == version and timer.not_expired()):
                break
        return self.metadata.update_version() > version

    def ensure_fresh_metadata(self, timer: Timer) -> bool:
        """``ensureFreshMetadata(Timer)``: await a metadata update only if one is requested or
        due."""
        if (self.metadata.update_requested()
                or self.metadata.time_to_next_update(timer.current_time_ms()) == 0):
            return self.await_metadata_update(timer)
        # the metadata is already fresh
        return True

    # ---- wakeup -------------------------------------------------------------------------

    def wakeup(self) -> None:
        """``wakeup()``: make the current/next blocking ``poll`` raise WakeupException (once)."""
        self._wakeup = True
        self.client.wakeup()

    def maybe_trigger_wakeup(self) -> None:
        """``maybeTriggerWakeup()``."""
        if not self._wakeup_disabled and self._wakeup:
            self._wakeup = False
            raise WakeupException()

    def disable_wakeups(self) -> None:
        """``disableWakeups()``."""
        self._wakeup_disabled = True

    # ---- poll ---------------------------------------------------------------------------

    def poll_future(self, future: RequestFuture, timer: Optional[Timer] = None,
                    disable_wakeup: bool = False) -> bool:
        """``poll(RequestFuture, Timer[, boolean])``: poll until ``future`` is done or the
        timer expires; returns ``future.is_done()``.  Without a timer (``poll(RequestFuture)``)
        polls until done."""
        if timer is None:
            while not future.is_done():
                self.poll(self.time.timer(LONG_MAX), future)
            return True
        while True:
            self.poll(timer, future, disable_wakeup)
            if future.is_done() or not timer.not_expired():
                break
        return future.is_done()

    def poll(self, timer: Timer, poll_condition: Optional[PollCondition] = None,
             disable_wakeup: bool = False) -> None:
        """``poll(Timer, PollCondition, boolean)``: poll for any network IO.

        Step order (the reference's): fire pending completions; [lock] handle pending
        disconnects; trySend; client.poll (blocking only if nothing is pending and the condition
        wants to block); timer.update; checkDisconnects; maybeTriggerWakeup; (interrupt check);
        trySend; failExpiredRequests; unsent.clean; [unlock] fire pending completions;
        metadata.maybeThrowAnyException.
        """
        # there may be handlers which need to be invoked if we woke up the previous call to poll
        # (both queues are looked at first here and below: most polls have nothing in them)
        if self.pending_completion:
            self._fire_pending_completed_requests()

        # lock.lock()
        # Handle async disconnects prior to attempting any sends
        if self.pending_disconnects:
            self._handle_pending_disconnects()

        # send all the requests we can send now
        poll_delay_ms = self.try_send(timer.current_time_ms())

        # check whether the poll is still needed by the caller. Note that if the expected
        # completion condition becomes satisfied after the call to shouldBlock() (because of a
        # fired completion handler), the client will be woken up.
        client = self.client
        if not self.pending_completion and (poll_condition is None or poll_condition.should_block()):
            # if there are no requests in flight, do not block longer than the retry backoff
            poll_timeout = timer.remaining_ms()
            if poll_delay_ms < poll_timeout:
                poll_timeout = poll_delay_ms
            if client.in_flight_request_count() == 0 and self.retry_backoff_ms < poll_timeout:
                poll_timeout = self.retry_backoff_ms
            client.poll(poll_timeout, timer.current_time_ms())
        else:
            client.poll(0, timer.current_time_ms())
        timer.update()

        # handle any disconnects by failing the active requests. note that disconnects must be
        # checked immediately following poll since any subsequent call to client.ready() will
        # reset the disconnect status
        self.check_disconnects(timer.current_time_ms())

        if not disable_wakeup:
            # trigger wakeups after checking for disconnects so that the callbacks will be ready
            # to be fired on the next call to poll()
            self.maybe_trigger_wakeup()

        # (maybeThrowInterruptException: there are no thread interrupts in the simulation)

        # try again to send requests since buffer space may have been cleared or a connect
        # finished in the poll
        self.try_send(timer.current_time_ms())

        # fail requests that couldn't be sent if they have expired
        self.fail_expired_requests(timer.current_time_ms())

        # clean unsent requests collection to keep the map from growing indefinitely
        self.unsent.clean()
        # lock.unlock()

        # called without the lock to avoid deadlock potential if handlers need to acquire locks
        if self.pending_completion:
            self._fire_pending_completed_requests()

        self.metadata.maybe_throw_any_exception()

    def poll_no_wakeup(self) -> None:
        """``pollNoWakeup()``: poll for network IO in best-effort fashion, without blocking or
        raising wakeups."""
        self.poll(self.time.timer(0), None, True)

    def transmit_sends(self) -> None:
        """``transmitSends()``: send queued requests and do a non-blocking client poll; nothing
        else (no disconnect checks, expiry or completion firing)."""
        timer = self.time.timer(0)
        # do not allow blocking poll to send the request
        self.try_send(timer.current_time_ms())
        self.client.poll(0, timer.current_time_ms())

    def await_pending_requests(self, node: Node, timer: Timer) -> bool:
        """``awaitPendingRequests(Node, Timer)``: block until all pending requests for ``node``
        are complete (or the timer expires)."""
        while self.has_pending_requests(node) and timer.not_expired():
            self.poll(timer)
        return not self.has_pending_requests(node)

    # ---- pending counts -----------------------------------------------------------------

    def pending_request_count(self, node: Optional[Node] = None) -> int:
        """``pendingRequestCount([Node])``: unsent plus in-flight requests (for ``node``, or in
        total)."""
        if node is None:
            return self.unsent.request_count() + self.client.in_flight_request_count()
        return self.unsent.request_count(node) + self.client.in_flight_request_count(node.id)

    def has_pending_requests(self, node: Optional[Node] = None) -> bool:
        """``hasPendingRequests([Node])``."""
        if node is None:
            if self.unsent.has_requests():
                return True
            return self.client.has_in_flight_requests()
        if self.unsent.has_requests(node):
            return True
        return self.client.has_in_flight_requests(node.id)

    # ---- internals ----------------------------------------------------------------------

    def _fire_pending_completed_requests(self) -> None:
        """``firePendingCompletedRequests()``."""
        pending = self.pending_completion
        completed_requests_fired = False
        while pending:
            completion_handler = pending.popleft()
            completion_handler.fire_completion()
            completed_requests_fired = True
        # wakeup the client in case it is blocking in poll for this future's completion
        if completed_requests_fired:
            self.client.wakeup()

    def check_disconnects(self, now: int) -> None:
        """``checkDisconnects(long)``: fail the unsent requests of every node whose connection
        failed.

        Any disconnects affecting requests that were already transmitted are handled by
        NetworkClient; here only the unsent ones matter.  The node's whole queue is removed
        *before* the callbacks run, so that callbacks handling coordinator failures do not
        traverse it again.
        """
        client = self.client
        for node in self.unsent.nodes():
            if client.connection_failed(node):
                requests = self.unsent.remove(node)
                for request in requests:
                    handler = request.callback
                    authentication_exception = client.authentication_exception(node)
                    handler.on_complete(ClientResponse(
                        request.make_header(), handler, request.destination,
                        request.created_time_ms, now, True, None, authentication_exception, None))

    def _handle_pending_disconnects(self) -> None:
        """``handlePendingDisconnects()``."""
        pending = self.pending_disconnects
        while pending:
            node = pending.popleft()
            self._fail_unsent_requests(node, DisconnectException.INSTANCE)
            self.client.disconnect(node.id)

    def disconnect_async(self, node: Node) -> None:
        """``disconnectAsync(Node)``: disconnect ``node`` at the start of the next poll (its
        unsent requests fail with DisconnectException; in-flight ones complete as disconnected)."""
        self.pending_disconnects.append(node)
        self.client.wakeup()

    def fail_expired_requests(self, now: int) -> None:
        """``failExpiredRequests(long)``."""
        # clear all expired unsent requests and fail their corresponding futures
        for request in self.unsent.remove_expired_requests(now):
            request.callback.on_failure(TimeoutException(
                "Failed to send request after %d ms." % request.request_timeout_ms))

    def _fail_unsent_requests(self, node: Node, e: Exception) -> None:
        """``failUnsentRequests(Node, RuntimeException)``."""
        # clear unsent requests to node and fail their corresponding futures
        for unsent_request in self.unsent.remove(node):
            unsent_request.callback.on_failure(e)

    def try_send(self, now: int) -> int:
        """``trySend(long)``: send what can be sent now; returns the poll delay.

        For each node with unsent requests: fold ``client.poll_delay_ms(node)`` into the delay,
        then send requests in order while ``client.ready(node)``; at the first not-ready request
        stop processing that node (so ``ready`` is called once for a not-ready node).
        """
        poll_delay_ms = self.max_poll_timeout_ms
        client = self.client
        # send any requests that can be sent now
        for node, requests in self.unsent.items():
            if requests:
                d = client.poll_delay_ms(node, now)
                if d < poll_delay_ms:
                    poll_delay_ms = d
            while requests:
                request = requests[0]
                if client.ready(node, now):
                    client.send(request, now)
                    requests.popleft()
                else:
                    # try next node when current node is not ready
                    break
        return poll_delay_ms

    def close(self) -> None:
        """``close()``."""
        self.client.close()

    def is_unavailable(self, node: Node) -> bool:
        """``isUnavailable(Node)``: connection failed and still within the reconnect backoff."""
        return (self.client.connection_failed(node)
                and self.client.connection_delay(node, self.time.milliseconds()) > 0)

    def maybe_throw_auth_failure(self, node: Node) -> None:
        """``maybeThrowAuthFailure(Node)``."""
        exception: Optional[AuthenticationException] = self.client.authentication_exception(node)
        if exception is not None:
            raise exception

    def try_connect(self, node: Node) -> None:
        """``tryConnect(Node)``: initiate a connection if currently possible (``client.ready``
        for its side effect)."""
        self.client.ready(node, self.time.milliseconds())
