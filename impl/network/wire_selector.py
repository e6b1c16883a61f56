"""The client's transport over TCP: :class:`~impl.network.selectable.Selectable` implemented with
Kafka's :class:`~impl.network.selector.Selector` (frames on sockets) and :mod:`impl.wire` (bytes).

``NetworkClient`` hands over ``(correlation_id, request)`` objects as it does to the simulated
transport; :class:`WireSelector` writes each as the frame Kafka's client would — at the highest
version both this client's codec and the broker support, under an optional per-API cap
(``NodeApiVersions.latestUsableVersion``, which Kafka's ``NetworkClient.doSend`` consults) — and
reads every response back at the version of its request, matched by correlation id. So
``NetworkClient``, ``ConsumerNetworkClient`` and the coordinators run unchanged over real sockets
with a wall-clock :class:`~impl.time.Time`.

Broker versions come from the ApiVersions exchange ``NetworkClient`` starts on every new connection
(``discover_broker_versions``). ApiVersions itself goes out at the codec's highest version; when a
broker answers UNSUPPORTED_VERSION (in a v0 body listing its own ApiVersions range), the request is
sent again at the highest version that range allows before ``NetworkClient`` sees anything — what
Kafka's ``NetworkClient.handleApiVersionsResponse`` does, done here so that the simulated world,
which never negotiates, keeps its traces.

A response that does not decode is a :class:`~impl.wire.errors.WireError`: it is logged as one line
and the connection is closed and reported disconnected, so the requests on it fail as they do when
a broker drops a connection. A request no common version can carry (``UnsupportedVersionException``
in Kafka) is handled the same way.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from impl.network.selectable import ChannelState, Selectable
from impl.network.selector import NetworkSend, Selector
from impl.errors import UnsupportedVersionException
from impl.protocol import ApiVersionsResponseData
from impl.time import Time
from impl.wire import (CODEC_VERSIONS, NodeApiVersions, WireError, decode_response, encode_request,
                       peek_correlation_id)
from impl.wire.versions import UNSUPPORTED_VERSION_CODE

__all__ = ["WireSelector"]


class WireSelector(Selectable):
    """See the module docstring. *caps*: API name -> the highest version to use with every broker
    (e.g. ``{"JoinGroup": 5}``), on top of what the broker advertises."""

    def __init__(self, time: Time, client_id: str, caps: Optional[Mapping[str, int]] = None,
                 max_receive_size: Optional[int] = None, log: Callable[[str], None] = lambda line: None) -> None:
        self.selector = Selector(time, max_receive_size=max_receive_size)
        self.client_id = client_id
        self.caps = dict(caps or {})
        self.log = log
        self.versions: Dict[int, NodeApiVersions] = {}
        self._in_flight: Dict[int, Dict[int, Tuple[str, int, Any]]] = {}  # node -> cid -> (api, version, request)
        self._sending: Dict[int, int] = {}  # node -> correlation id of the send in flight
        self._failed: Dict[int, ChannelState] = {}  # closed by us for a bad frame: reported at the next poll
        self.completed_sends = []
        self.completed_receives = []
        self.disconnected = {}
        self.connected = []

    # -- versions --------------------------------------------------------------------------------

    def version_for(self, node_id: int, api: str) -> int:
        """The version *api* goes out at to *node_id*: ApiVersions at the codec's highest; others at
        the highest both sides support (capped), or the codec's highest before the broker said."""
        if api == "ApiVersions":
            return min(CODEC_VERSIONS[api][1], self.caps.get(api, CODEC_VERSIONS[api][1]))
        versions = self.versions.get(node_id)
        if versions is None:
            hi = CODEC_VERSIONS[api][1]
            return min(hi, self.caps.get(api, hi))
        return versions.latest_usable_version(api)

    # -- Selectable ------------------------------------------------------------------------------

    def connect(self, node_id: int, host: str, port: int) -> None:
        self._forget(node_id)
        self.selector.connect(node_id, host, port)

    def send(self, destination: int, payload) -> None:
        correlation_id, request = payload
        self._write(destination, correlation_id, request, None)

    def _write(self, destination: int, correlation_id: int, request, version: Optional[int]) -> None:
        api = request.api_key
        try:
            if version is None:
                version = self.version_for(destination, api)
            frame = encode_request(request, version, correlation_id, self.client_id)
        except UnsupportedVersionException as e:  # EncodeError too: nothing both sides can carry
            self._fail(destination, f"cannot send {api} to node {destination}: {e}")
            return
        self._in_flight.setdefault(destination, {})[correlation_id] = (api, version, request)
        self._sending[destination] = correlation_id
        self.selector.send(NetworkSend(destination, frame))

    def poll(self, timeout_ms: int) -> None:
        failed, self._failed = self._failed, {}
        self.selector.poll(0 if failed else timeout_ms)
        s = self.selector
        self.completed_sends = []
        for send in s.completed_sends:
            correlation_id = self._sending.pop(send.destination, None)
            if correlation_id is not None:
                self.completed_sends.append((send.destination, correlation_id))
        self.completed_receives = []
        for receive in s.completed_receives:
            self._receive(receive.source, receive.payload)
        self.disconnected = dict(failed)
        for node_id, state in s.disconnected.items():
            self._forget(node_id)
            self.disconnected[node_id] = state
        for node_id, state in self._failed.items():  # bad frames found in this poll
            self.disconnected[node_id] = state
        self._failed = {}
        self.connected = [n for n in s.connected if n not in self.disconnected]

    def _receive(self, node_id: int, payload: bytes) -> None:
        requests = self._in_flight.get(node_id, {})
        correlation_id = peek_correlation_id(payload)
        entry = requests.pop(correlation_id, None) if correlation_id is not None else None
        if entry is None:
            self._fail(node_id, f"node {node_id} answered correlation id {correlation_id}, which no request of "
                                f"this connection carries ({sorted(requests)} in flight)")
            return
        api, version, request = entry
        decoded = decode_response(api, version, memoryview(payload))
        if isinstance(decoded, WireError):
            self._fail(node_id, f"node {node_id} sent a response that does not decode: {decoded}")
            return
        body = decoded.body
        if api == "ApiVersions" and isinstance(body, ApiVersionsResponseData):
            if body.error_code == UNSUPPORTED_VERSION_CODE and version > 0:
                retry = self._api_versions_retry(body)
                if retry is not None and retry < version:
                    self._write(node_id, correlation_id, request, retry)  # the same request, a version it takes
                    return
            elif body.error_code == 0:
                self.versions[node_id] = NodeApiVersions.from_response(body, self.caps)
        self.completed_receives.append((node_id, correlation_id, body))

    @staticmethod
    def _api_versions_retry(body: ApiVersionsResponseData) -> Optional[int]:
        """``handleApiVersionsResponse``: the broker's highest ApiVersions version, 0 if unlisted."""
        for api in body.api_keys:
            if api.api_key == "ApiVersions":
                return api.max_version
        return 0

    def _fail(self, node_id: int, why: str) -> None:
        self.log(why)
        self.selector.close(node_id)
        self._forget(node_id)
        self._failed[node_id] = ChannelState(ChannelState.READY, RuntimeError(why))

    def _forget(self, node_id: int) -> None:
        self._in_flight.pop(node_id, None)
        self._sending.pop(node_id, None)
        self.versions.pop(node_id, None)

    def close(self, node_id: int) -> None:
        self.selector.close(node_id)
        self._forget(node_id)
        self._failed.pop(node_id, None)

    def wakeup(self) -> None:
        self.selector.wakeup()

    def is_channel_ready(self, node_id: int) -> bool:
        return self.selector.is_channel_ready(node_id)

    def close_all(self) -> None:
        self.selector.close_all()
        self._in_flight.clear()
        self._sending.clear()
        self.versions.clear()

