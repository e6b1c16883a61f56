"""In-test fakes for the network layer: a scriptable Selectable, and the base of the tests' Selectables."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from impl.network.metadata import Metadata, Node
from impl.network.selectable import ChannelState, Selectable
from impl.protocol import MetadataResponseBroker, MetadataResponseData

NODES = [Node(0, "b0", 9092), Node(1, "b1", 9092), Node(2, "b2", 9092)]


def metadata_response(nodes=NODES) -> MetadataResponseData:
    return MetadataResponseData(brokers=[MetadataResponseBroker(n.id, n.host, n.port) for n in nodes])


def fresh_metadata(now: int = 0, nodes=NODES, **kwargs) -> Metadata:
    """Metadata holding ``nodes``, updated at ``now`` (so no update is due for a while)."""
    md = Metadata(**kwargs)
    md.update(md.request_version(), metadata_response(nodes), False, now)
    return md


class PolledSelectable(Selectable):
    """A Selectable whose results (``completed_sends``, ``completed_receives``, ``disconnected``,
    ``connected``) hold what its last ``poll`` did: :meth:`start_poll` clears them."""

    def start_poll(self) -> None:
        self.completed_sends = []
        self.completed_receives = []
        self.disconnected = {}
        self.connected = []


class FakeSelectable(PolledSelectable):
    """A scriptable transport.

    * ``connect`` succeeds at the next ``poll`` unless the node is in ``refuse`` (raises OSError)
      or in ``hold`` (stays connecting until released).
    * every ``send`` completes at the next ``poll``; if ``responder(dest, request)`` returns a
      response it is delivered in that same poll.
    * ``respond``/``disconnect_remote`` script deliveries for the next poll.
    """

    def __init__(self, responder: Optional[Callable[[int, Any], Any]] = None) -> None:
        self.responder = responder
        self.refuse: set = set()
        self.hold: set = set()
        self.open: Dict[int, bool] = {}
        self.connect_calls: List[int] = []
        self.sent: List[Tuple[int, int, Any]] = []
        self.closed: List[int] = []
        self.poll_timeouts: List[int] = []
        self.wakeups = 0
        self._pending_connects: List[int] = []
        self._pending_sends: List[Tuple[int, int, Any]] = []
        self._pending_receives: List[Tuple[int, int, Any]] = []
        self._pending_disconnects: Dict[int, ChannelState] = {}
        self.start_poll()

    # -- Selectable --
    def connect(self, node_id: int, host: str, port: int) -> None:
        self.connect_calls.append(node_id)
        if node_id in self.refuse:
            raise OSError("connection refused")
        self._pending_connects.append(node_id)

    def send(self, destination: int, payload) -> None:
        correlation_id, request = payload
        self.sent.append((destination, correlation_id, request))
        self._pending_sends.append((destination, correlation_id, request))

    def poll(self, timeout_ms: int) -> None:
        self.poll_timeouts.append(timeout_ms)
        self.start_poll()
        still_held = []
        for node in self._pending_connects:
            if node in self.hold:
                still_held.append(node)
            else:
                self.open[node] = True
                self.connected.append(node)
        self._pending_connects = still_held
        for dest, cid, request in self._pending_sends:
            self.completed_sends.append((dest, cid))
            if self.responder is not None:
                response = self.responder(dest, request)
                if response is not None:
                    self._pending_receives.append((dest, cid, response))
        self._pending_sends = []
        self.completed_receives = self._pending_receives
        self._pending_receives = []
        for node, state in self._pending_disconnects.items():
            self.open.pop(node, None)
            self.disconnected[node] = state
        self._pending_disconnects = {}

    def close(self, node_id: int) -> None:
        self.closed.append(node_id)
        self.open.pop(node_id, None)
        self._pending_connects = [n for n in self._pending_connects if n != node_id]
        self._pending_sends = [s for s in self._pending_sends if s[0] != node_id]
        self._pending_receives = [r for r in self._pending_receives if r[0] != node_id]

    def wakeup(self) -> None:
        self.wakeups += 1

    # -- scripting --
    def respond(self, node_id: int, correlation_id: int, response: Any) -> None:
        self._pending_receives.append((node_id, correlation_id, response))

    def disconnect_remote(self, node_id: int, state: ChannelState = ChannelState.NOT_CONNECTED_STATE) -> None:
        self._pending_disconnects[node_id] = state
        self._pending_connects = [n for n in self._pending_connects if n != node_id]
