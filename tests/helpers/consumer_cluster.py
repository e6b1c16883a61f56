"""Real consumers (``impl/``) against the real broker side (``impl/server``), in one process.

:class:`ClusterTransport` is a tiny Selectable: a connect succeeds at the next poll if the broker is
alive; a sent request is handed to ``Broker.handle`` during the poll that transmits it, and
whatever the broker answers (now or later, from its purgatory) is queued and delivered at the next
poll. An idle poll with a positive timeout advances the shared MockTime (to the next broker timer
deadline at most), so blocking calls make progress without a wall clock. :class:`World` is a
cluster with one 6-partition topic and consumers on that clock.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Dict, List, Optional, Tuple

from impl.consumer import Consumer
from impl.coordinator import ConsumerRebalanceListener, MemberState
from impl.network.selectable import ChannelState
from impl.protocol import MetadataResponseData, TopicPartition
from impl.server import BrokerConfig, Cluster
from impl.time import INT_MAX, MockTime
from tests.helpers.fakes import PolledSelectable


GROUP = "dummy-group"        # __consumer_offsets partition 10 of 50 -> led by broker 1
COORDINATOR_BROKER = 1
COORDINATOR_ID = INT_MAX - COORDINATOR_BROKER
TOPIC = "topic"
ALL_TPS = [TopicPartition(TOPIC, p) for p in range(6)]


class _Conn:
    __slots__ = ("broker_id", "epoch", "open", "queue", "busy")

    def __init__(self, broker_id: Optional[int], epoch: int) -> None:
        self.broker_id = broker_id
        self.epoch = epoch
        self.open = False
        self.queue: List[Tuple[int, Any]] = []   # received by the broker, not yet handled
        self.busy = False                        # a request is being handled (channel muted)


class ClusterTransport(PolledSelectable):
    """A Selectable connecting one client to the brokers of an ``impl.server.Cluster``.

    Like a Kafka broker, each connection has one request in process at a time (the channel is
    muted until its response is sent), so responses come back in request order even when the
    broker parks a request (JoinGroup, SyncGroup) in its purgatory.

    * ``log`` records ``(time, node_id, request)`` for every request handed to a broker;
    * ``request_filter(node, request)`` returning False swallows a request: it is never answered,
      and the connection stays muted (a hung broker connection);
    * ``response_filter(node, request, response)`` may replace a response (returning None loses
      it, which again leaves the connection hung);
    * ``disconnect(node_id)`` reports a remote disconnect at the next poll.

    Requests are sent with the highest version the broker supports; responses are delivered at
    the poll after they were produced.  Responses to a closed connection (or to an older
    connection with the same id) are dropped.
    """

    def __init__(self, cluster: Cluster, client_id: str = "consumer", auto_advance: bool = True) -> None:
        self.cluster = cluster
        self.time = cluster.time
        self.client_id = client_id
        self.auto_advance = auto_advance
        self.request_filter: Optional[Callable[[int, Any], bool]] = None
        self.response_filter: Optional[Callable[[int, Any, Any], Any]] = None
        self.log: List[Tuple[int, int, Any]] = []
        self._conns: Dict[int, _Conn] = {}
        self._epoch = 0
        self._pending_connects: List[int] = []
        self._pending_sends: List[Tuple[int, int, Any]] = []
        self._ready: List[Tuple[int, int, int, Any]] = []
        self._pending_disconnects: Dict[int, ChannelState] = {}
        self.start_poll()

    # -- Selectable --
    def connect(self, node_id: int, host: str, port: int) -> None:
        broker_id = None
        for broker in self.cluster.brokers:
            if broker.host == host and broker.port == port:
                broker_id = broker.broker_id
        self._epoch += 1
        self._conns[node_id] = _Conn(broker_id, self._epoch)
        self._pending_connects.append(node_id)

    def send(self, destination: int, payload) -> None:
        correlation_id, request = payload
        self._pending_sends.append((destination, correlation_id, request))

    def poll(self, timeout_ms: int) -> None:
        self.start_poll()
        now = self.time.milliseconds()
        self.cluster.advance_clock(now)  # fire broker timers that are already due
        ready, self._ready = self._ready, []
        for node, epoch, correlation_id, response in ready:
            conn = self._conns.get(node)
            if conn is not None and conn.open and conn.epoch == epoch:
                self.completed_receives.append((node, correlation_id, response))
        connects, self._pending_connects = self._pending_connects, []
        for node in connects:
            conn = self._conns.get(node)
            if conn is None:
                continue
            if conn.broker_id is not None and self.cluster.is_alive(conn.broker_id):
                conn.open = True
                self.connected.append(node)
            else:
                del self._conns[node]
                self.disconnected[node] = ChannelState.NOT_CONNECTED_STATE
        sends, self._pending_sends = self._pending_sends, []
        for node, correlation_id, request in sends:
            conn = self._conns.get(node)
            if conn is None or not conn.open:
                continue
            self.completed_sends.append((node, correlation_id))
            conn.queue.append((correlation_id, request))
        self._pump()
        disconnects, self._pending_disconnects = self._pending_disconnects, {}
        for node, state in disconnects.items():
            if node in self._conns:
                del self._conns[node]
                self.disconnected[node] = state
        idle = not (self.completed_sends or self.completed_receives or self.connected or self.disconnected)
        if idle and self.auto_advance and timeout_ms > 0:
            target = now + timeout_ms
            deadline = self.cluster.next_deadline()
            if deadline is not None and now < deadline < target:
                target = deadline
            self.cluster.advance_clock(target)

    def _pump(self) -> None:
        """Hand each idle connection's next request to its broker."""
        for node, conn in list(self._conns.items()):
            while conn.open and not conn.busy and conn.queue and self._conns.get(node) is conn:
                correlation_id, request = conn.queue.pop(0)
                self._handle(node, conn, correlation_id, request)

    def _handle(self, node: int, conn: _Conn, correlation_id: int, request: Any) -> None:
        broker = self.cluster.broker(conn.broker_id)
        if not broker.alive:
            self._pending_disconnects[node] = ChannelState.NOT_CONNECTED_STATE
            conn.busy = True
            return
        self.log.append((self.time.milliseconds(), node, request))
        conn.busy = True
        if self.request_filter is not None and self.request_filter(node, request) is False:
            return
        epoch = conn.epoch

        def callback(response: Any) -> None:
            if self.response_filter is not None:
                response = self.response_filter(node, request, response)
                if response is None:
                    return
            if self._conns.get(node) is conn:
                conn.busy = False
            self._ready.append((node, epoch, correlation_id, response))

        version = broker.config.api_versions[request.api_key][1]
        broker.handle(request, version, self.client_id, callback)

    def close(self, node_id: int) -> None:
        self._conns.pop(node_id, None)
        self._pending_sends = [s for s in self._pending_sends if s[0] != node_id]
        self._pending_connects = [n for n in self._pending_connects if n != node_id]

    def is_channel_ready(self, node_id: int) -> bool:
        conn = self._conns.get(node_id)
        return conn is not None and conn.open

    def close_all(self) -> None:
        self._conns.clear()
        self._pending_sends = []
        self._pending_connects = []

    # -- scripting / inspection --
    def disconnect(self, node_id: int) -> None:
        self._pending_disconnects[node_id] = ChannelState.NOT_CONNECTED_STATE

    def requests(self, api_key: Optional[str] = None) -> List[Any]:
        return [r for (_, _, r) in self.log if api_key is None or r.api_key == api_key]

    def entries(self, api_key: str) -> List[Tuple[int, int, Any]]:
        return [e for e in self.log if e[2].api_key == api_key]


class Recorder(ConsumerRebalanceListener):
    """Records rebalance callbacks as (kind, partitions)."""

    def __init__(self) -> None:
        self.events: List[Tuple[str, List[TopicPartition]]] = []

    def on_partitions_revoked(self, partitions):
        self.events.append(("revoked", partitions))

    def on_partitions_assigned(self, partitions):
        self.events.append(("assigned", partitions))

    def on_partitions_lost(self, partitions):
        self.events.append(("lost", partitions))


BASE_CONFIG = {
    "group.id": GROUP,
    "bootstrap.servers": [0, 1, 2],
    "session.timeout.ms": 10000,
    "heartbeat.interval.ms": 3000,
    "max.poll.interval.ms": 30000,
    "request.timeout.ms": 30000,
    "retry.backoff.ms": 100,
}


class World:
    """A 3-broker cluster with one 6-partition topic, and consumers on a shared MockTime.

    The clock starts at 10 s so that the bootstrap metadata refresh is due at once (Metadata's
    refresh backoff counts from time 0), i.e. the consumers know the topic before they join.
    """

    def __init__(self, start_ms: int = 10_000, partitions: int = 6, **broker_config: Any) -> None:
        broker_config.setdefault("group_initial_rebalance_delay_ms", 0)
        self.time = MockTime(current_time_ms=start_ms)
        self.cluster = Cluster(3, topics={TOPIC: partitions}, time=self.time, rng=random.Random(7),
                               config=BrokerConfig(**broker_config))

    def consumer(self, client_id: str, listener: Optional[ConsumerRebalanceListener] = None,
                 subscribe: bool = True, seed: int = 1, **config: Any) -> Tuple[Consumer, ClusterTransport]:
        transport = ClusterTransport(self.cluster, client_id)
        cfg = dict(BASE_CONFIG)
        cfg["client.id"] = client_id
        cfg.update({k.replace("_", "."): v for k, v in config.items()})
        consumer = Consumer(cfg, self.time, transport, random.Random(seed))
        if subscribe:
            consumer.subscribe([TOPIC], listener)
        return consumer, transport

    def now(self) -> int:
        return self.time.milliseconds()

    def advance(self, ms: int) -> None:
        self.cluster.advance_clock(self.now() + ms)

    def group(self):
        return self.cluster.broker(COORDINATOR_BROKER).group_coordinator.group_manager.get_group(GROUP)

    def seed_metadata(self, consumer: Consumer) -> None:
        """Give the consumer fresh metadata (real brokers and the topic) without a round trip."""
        md = consumer.metadata
        md.update(md.request_version(), MetadataResponseData(
            brokers=self.cluster.alive_broker_metadata(), topics=self.cluster.topic_metadata([TOPIC]),
            cluster_id=self.cluster.cluster_id, controller_id=0), False, self.now())


def stable(consumer: Consumer) -> bool:
    return consumer.coordinator.state is MemberState.STABLE


def run_until(consumers: List[Consumer], predicate: Callable[[], bool], poll_ms: int = 100,
              max_rounds: int = 1000) -> int:
    """Round-robin: each consumer polls, then each heartbeat thread runs once."""
    for rounds in range(max_rounds):
        if predicate():
            return rounds
        for c in consumers:
            c.poll(poll_ms)
        for c in consumers:
            c.heartbeat_thread.run_once()
    raise AssertionError("condition not reached after %d rounds" % max_rounds)


def all_stable_same_generation(consumers: List[Consumer]) -> bool:
    gens = {c.coordinator.generation.generation_id for c in consumers}
    return all(stable(c) for c in consumers) and len(gens) == 1


def join_one(world: World, client_id: str = "a", **kw) -> Tuple[Consumer, ClusterTransport]:
    consumer, transport = world.consumer(client_id, **kw)
    run_until([consumer], lambda: stable(consumer))
    return consumer, transport
