"""The simulated world that runs the *implementation* (``impl/``) under the model world's events.

:class:`SimWorld` holds one :class:`impl.server.Cluster` and ``config.clients``
:class:`impl.consumer.Consumer` instances, each over its own :class:`SimSelector` (an
:class:`impl.network.selectable.Selectable`) whose connections are per-connection FIFO links with
the semantics of :class:`model.world.Link`. :meth:`SimWorld.step` takes exactly the events of
:mod:`model.events` (kind first, ``pick`` last; read by field name) and returns False when the event is not
enabled (nothing changed), as the model does; :meth:`SimWorld.observe` returns the same shape as
:func:`properties.explore.walker.observe` of a model world, so the two can be compared step by step.

Simulation choices (where the model leaves the transport open or does not model something):

* **Metadata** is not modelled by the model. Each consumer starts with fresh metadata (every
  broker and the subscribed topic) and ``metadata.max.age.ms`` so large that it never expires;
  its NetworkClient's metadata updater is replaced by :class:`LocalMetadataUpdater`, which serves
  a requested update (``awaitMetadataUpdate`` after a failed coordinator lookup) at once from the
  cluster, with no request and no connection. (Should a Metadata request still reach the
  selector, it is answered out of band at the same poll and never enters a link.)
* **A send enters its link when the selector completes it** (at the NetworkClient's next
  ``selector.poll``), which is when Kafka's Selector writes the bytes. The model puts a
  transmitted request on the link at the end of the client's step.
  With ``send_timing="send"`` the request is on the link as soon as NetworkClient hands it to the
  selector (the model's timing; the send is still reported complete only at the next poll, so the
  channel takes no new request before that).
* **Transport notices** (received, disconnected, connected) reach the client at its next selector
  poll, reported in slot order (``notice_order="slot"``, the default and the model's order) or in
  arrival order (``notice_order="arrival"``).
* **Connection-setup timeout** is not modelled (README): ``socket.connection.setup.timeout.ms``
  is set out of reach, so a pending connect waits for its ``connect`` event as in the model.
* **Choices**: member ids come from the brokers' seeded generators; leastLoadedNode's offset from
  a per-client seeded generator; the event's ``pick`` decides (with :func:`model.world.chooser`)
  the new leader after a broker crash and whether the broker processed the requests in transit
  when the *client* closes a connection.
* **close** is non-blocking: the ``close`` event runs Kafka's ``ConsumerCoordinator.close`` up
  to its first wait, and every later ``poll`` event runs one more iteration of that wait (one
  network poll), until nothing is pending for the coordinator or the close timer
  (``min(close_timeout_ms, request.timeout.ms)``, as ``KafkaConsumer.close``) expires.
"""

from __future__ import annotations

import random
from typing import Any, Dict, List, Optional, Tuple

from impl.consumer import Consumer
from impl.coordinator.abstract_coordinator import MemberState
from impl.errors import IllegalArgumentException, IllegalStateException, KafkaException, WakeupException
from impl.network.network_client import DefaultMetadataUpdater
from impl.network.selectable import ChannelState, Selectable
from impl.protocol import MetadataResponseBroker, MetadataResponseData
from impl.server.cluster import Cluster, preferred_live_broker
from impl.server.config import BrokerConfig
from impl.server.group_metadata_manager import OffsetKey
from impl.time import INT_MAX, MockTime
from model.config import REDEPLOYS, Config, redeployed
from model.events import HANDLED, OVERSIZED, Close, as_event
from model.topics import partition_id
from model.world import chooser
from properties.systems.wire_links import WireLinks

__all__ = ["SimWorld", "SimSelector", "SimLink"]

_DISCONNECTED = ChannelState.NOT_CONNECTED_STATE


#: the events that run a consumer's own code (its leastLoadedNode scans can be steered)
_CLIENT_CALLS = frozenset({"poll", "heartbeat", "commit", "commit_oversized", "commit_sync", "close", "shutdown"})


class SimLink:
    """One open connection: two FIFO directions of ``(deliver_at, correlation_id, message)``, as
    :class:`model.world.Link` (``stalled`` after a drop, ``processing`` = the correlation id the
    broker is working on: the channel is muted until its response is sent)."""

    __slots__ = ("epoch", "to_broker", "to_client", "stalled", "processing")

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch
        self.to_broker: List[Tuple[int, int, Any]] = []
        self.to_client: List[Tuple[int, int, Any]] = []
        self.stalled = False
        self.processing: Optional[int] = None

    def __repr__(self) -> str:
        return "SimLink(epoch=%d, to_broker=%d, to_client=%d, stalled=%s, processing=%r)" % (
            self.epoch, len(self.to_broker), len(self.to_client), self.stalled, self.processing)


class SimSelector(Selectable):
    """The transport of one consumer: slots ``0..B-1`` are the broker nodes, ``B..2B-1`` the
    coordinator connections (node id ``Integer.MAX_VALUE - broker id``)."""

    def __init__(self, world: "SimWorld", client: int) -> None:
        self.world = world
        self.client = client
        slots = 2 * world.config.brokers
        self.links: List[Optional[SimLink]] = [None] * slots
        self.epochs = [0] * slots  # the epoch of the slot's current (or pending) connection
        self.connecting: List[bool] = [False] * slots
        self.notices: List[Tuple[str, int, int, Any]] = []  # (kind, slot, epoch, payload)
        self._pending_sends: List[Tuple[int, int, Any]] = []  # (slot, correlation id, request)
        self._oob: List[Tuple[int, int, int, Any]] = []  # out-of-band responses (slot, epoch, cid, resp)
        self.completed_sends = []
        self.completed_receives = []
        self.disconnected = {}
        self.connected = []

    # -- ids ------------------------------------------------------------------------------
    def slot_of(self, node_id: int) -> int:
        brokers = self.world.config.brokers
        if 0 <= node_id < brokers:
            return node_id
        b = INT_MAX - node_id
        if 0 <= b < brokers:
            return brokers + b
        raise ValueError("unknown node id %r" % (node_id,))

    def node_of(self, slot: int) -> int:
        brokers = self.world.config.brokers
        return slot if slot < brokers else INT_MAX - (slot - brokers)

    # -- Selectable -----------------------------------------------------------------------
    def connect(self, node_id: int, host: str, port: int) -> None:
        slot = self.slot_of(node_id)
        self._forget(slot)
        self.epochs[slot] += 1
        self.connecting[slot] = True

    def send(self, destination: int, payload) -> None:
        correlation_id, request = payload
        slot = self.slot_of(destination)
        if self.world.send_timing == "send":
            self._put_on_link(slot, correlation_id, request)
        self._pending_sends.append((slot, correlation_id, request))

    def _put_on_link(self, slot: int, correlation_id: int, request) -> bool:
        link = self.links[slot]
        if link is None:
            return False  # the connection broke meanwhile: the disconnect fails the request
        world = self.world
        out_of_band = request.api_key in ("Metadata", "ApiVersions")
        if world.wire is not None:  # --wire: the link carries the frame Kafka's client would write
            request = world.wire.request_frame(self.client, correlation_id, request, world.config.client_id(self.client))
        if out_of_band:
            world.answer_out_of_band(self, slot, link, correlation_id, request)
        else:
            link.to_broker.append((world.now + world.config.latency_ms, correlation_id, request))
        return True

    def poll(self, timeout_ms: int) -> None:
        world = self.world
        if world.wakeup_in_polls[self.client]:  # another thread's wakeup() lands while this poll waits
            world.wakeup_in_polls[self.client] -= 1
            if not world.wakeup_in_polls[self.client]:
                world.consumers[self.client].wakeup()
        self.completed_sends = []
        self.completed_receives = []
        self.disconnected = {}
        self.connected = []
        if not (self._pending_sends or self.notices or self._oob):
            return  # most polls: nothing sent, arrived, connected or broken since the last
        sends, self._pending_sends = self._pending_sends, []
        for slot, correlation_id, request in sends:
            if world.send_timing == "send":
                if self.links[slot] is not None:
                    self.completed_sends.append((self.node_of(slot), correlation_id))
            elif self._put_on_link(slot, correlation_id, request):
                self.completed_sends.append((self.node_of(slot), correlation_id))
        notices, self.notices = self.notices, []
        oob, self._oob = self._oob, []
        received, disconnected, connected = [], [], []
        for kind, slot, epoch, payload in notices:
            if epoch != self.epochs[slot]:
                continue
            if kind == "received":
                received.append((slot, payload))
            elif kind == "disconnected":
                disconnected.append(slot)
            else:
                connected.append(slot)
        for slot, epoch, correlation_id, response in oob:
            if epoch == self.epochs[slot] and self.links[slot] is not None:
                received.append((slot, (correlation_id, response)))
        if world.notice_order == "slot":
            received.sort(key=lambda r: r[0])  # stable: FIFO within a slot
            disconnected.sort()
            connected.sort()
        for slot, (correlation_id, response) in received:
            self.completed_receives.append((self.node_of(slot), correlation_id, response))
        for slot in disconnected:
            self.disconnected[self.node_of(slot)] = _DISCONNECTED
        for slot in connected:
            if slot not in disconnected:  # Selector.close: `connected` never holds a closed channel
                self.connected.append(self.node_of(slot))

    def close(self, node_id: int) -> None:
        """The client closes the connection: the broker may or may not have read the requests in
        transit (the event's pick decides, as in the model); nothing more is reported for it."""
        slot = self.slot_of(node_id)
        link = self.links[slot]
        if link is not None:
            self.world.cut_link(self.client, slot, self.world.choose("processed", (False, True)))
        self._forget(slot)

    def is_channel_ready(self, node_id: int) -> bool:
        """Kafka's Selector learns that the peer closed a channel only at its next poll: until
        then a cut connection's channel still looks ready (a send on it fails at that poll)."""
        slot = self.slot_of(node_id)
        if self.links[slot] is not None:
            return True
        epoch = self.epochs[slot]
        return any(kind == "disconnected" and s == slot and e == epoch for kind, s, e, _ in self.notices)

    def close_all(self) -> None:
        """The consumer closed: forget what it had not yet seen. The links stay as they are, as
        in the model (what is in transit may still reach the broker; no one reads the answers)."""
        for slot in range(len(self.links)):
            self._forget(slot)

    def _forget(self, slot: int) -> None:
        self.connecting[slot] = False
        self.notices = [n for n in self.notices if n[1] != slot]
        self._pending_sends = [s for s in self._pending_sends if s[0] != slot]
        self._oob = [r for r in self._oob if r[0] != slot]

    def has_notice(self, slot: int) -> bool:
        return any(n[1] == slot for n in self.notices)


class SteerableRandom(random.Random):
    """A seeded generator whose next ``randrange(n)`` calls (leastLoadedNode's scan offset) can be
    steered so that the scan picks a given slot: the offset starts the scan at the target (a ready
    idle node or the oldest connectable node is the first found), or just after it when the target
    is connecting (the last connecting node found wins)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self._targets: List[int] = []
        self._network_client = None

    def steer(self, targets: List[int], network_client) -> None:
        self._targets = list(targets)
        self._network_client = network_client

    def randrange(self, *args, **kwargs):  # noqa: D401 - same contract as random.Random
        if self._targets and len(args) == 1 and not kwargs:
            n = args[0]
            target = self._targets.pop(0)
            nodes = [node.id for node in self._network_client.metadata_updater.fetch_nodes()]
            if target in nodes and len(nodes) == n:
                index = nodes.index(target)
                if self._network_client.connection_states.is_preparing_connection(target):
                    index = (index + 1) % n
                super().randrange(n)  # keep the generator's own sequence in step
                return index
        return super().randrange(*args, **kwargs)


class LocalMetadataUpdater(DefaultMetadataUpdater):
    """Metadata refresh is not modelled: a due update is served at once from the cluster (every
    broker, dead or alive, and the subscribed topic), without a request or a connection, so it
    never holds back a send (``NetworkClient.isReady``) nor opens a connection of its own."""

    __slots__ = ("_world",)

    def __init__(self, metadata, world: "SimWorld") -> None:
        super().__init__(metadata)
        self._world = world

    def _refresh_if_due(self, now: int) -> None:
        md = self.metadata
        if md.time_to_next_update(now) == 0:
            md.update(md.request_version(), self._world.metadata_response(), False, now)

    def is_update_due(self, now: int) -> bool:
        self._refresh_if_due(now)
        return False

    def maybe_update(self, now: int) -> int:
        self._refresh_if_due(now)
        return max(1, self.metadata.time_to_next_update(now))


_STATE_NAMES = {
    MemberState.UNJOINED: "UNJOINED",
    MemberState.PREPARING_REBALANCE: "PREPARING_REBALANCE",
    MemberState.COMPLETING_REBALANCE: "COMPLETING_REBALANCE",
    MemberState.STABLE: "STABLE",
}


class SimWorld:
    """The implementation world: brokers, consumers and the simulated network, one event at a time."""

    def __init__(self, config: Config, seed: int, notice_order: str = "slot", send_timing: str = "poll") -> None:
        if notice_order not in ("slot", "arrival"):
            raise ValueError("notice_order must be 'slot' or 'arrival', got %r" % (notice_order,))
        if send_timing not in ("poll", "send"):
            raise ValueError("send_timing must be 'poll' or 'send', got %r" % (send_timing,))
        self.send_timing = send_timing
        self.config = config
        self.seed = seed
        self.notice_order = notice_order
        self.now = 0
        self.steps = 0
        self._choose = chooser(0, [])
        self._restarting: Optional[int] = None
        # requests brokers read from connections that broke since, handled at ``late`` events:
        # [broker, client, slot, [(correlation_id, request), ...]] oldest first (model.world.World.orphans)
        self.orphans: List[list] = []
        self.cluster_time = MockTime()
        self.group_partition: int = -1
        broker_config = BrokerConfig(
            group_min_session_timeout_ms=config.min_session_timeout_ms,
            group_max_session_timeout_ms=config.max_session_timeout_ms,
            group_initial_rebalance_delay_ms=config.initial_rebalance_delay_ms,
            group_max_size=config.group_max_size,
            new_member_join_timeout_ms=config.new_member_join_timeout_ms,
        )
        self.cluster = Cluster(config.brokers, offsets_partitions=config.offsets_partitions,
                               topics=self._topics(config), time=self.cluster_time,
                               rng=random.Random(seed), config=broker_config,
                               chooser=self._leader_chooser)
        self.group_partition = self.cluster.partition_for(config.group_id)
        # --wire: every message crosses the links encoded (properties.systems.wire_links)
        self.wire = WireLinks(broker_config.api_versions, config.join_group_version) if config.wire else None
        self.partitioned: set = set()
        self.clock_offsets = [0] * config.clients
        self.alive = [True] * config.clients
        self.failed: List[Optional[str]] = [None] * config.clients
        self.closing: List[Optional[Any]] = [None] * config.clients  # close state while closing
        self.closed = [False] * config.clients
        self.commits = [0] * config.clients
        # world time until which each application is busy between polls (the model's pause event)
        self.paused_until: List[Optional[int]] = [None] * config.clients
        self.stalled_until: List[Optional[int]] = [None] * config.clients
        self.wakeup_in_polls: List[int] = [0] * config.clients  # a wakeup() landing in the n-th selector poll
        # a leader's slow assignor (config.assignor_delay_ms): the SyncGroup it sends when it returns
        # and the future its JoinGroup handler chained the join onto
        self.pending_sync: List[Optional[tuple]] = [None] * config.clients
        # the commitSync each application is blocked in (impl's CommitOffsetsSync), or None
        self.commit_syncs: List[Optional[Any]] = [None] * config.clients
        # the coordinator whose appends the injected log failures wait for (append_error events)
        self.append_errors_leader: Optional[int] = None
        self.settings = [0] * config.clients  # the REDEPLOYS entry client c's process runs with
        self.times: List[MockTime] = []
        self.selectors: List[SimSelector] = []
        self.consumers: List[Consumer] = []
        self._rngs: List[SteerableRandom] = []
        for c in range(config.clients):
            clock = MockTime()
            selector = SimSelector(self, c)
            rng, consumer = self._start_consumer(c, clock, selector)
            self._rngs.append(rng)
            self.times.append(clock)
            self.selectors.append(selector)
            self.consumers.append(consumer)
        self.restarts = [0] * config.clients  # processes started after client c's first
        # The clients whose observation or links may have changed since the differential last
        # looked (it empties the set): the event's own client, and every client whose link a broker
        # answered on or a crash cut. What the hooks miss, the differential's periodic full
        # comparison sees (properties.systems.differential.FULL_EVERY).
        self.touched: set = set(range(config.clients))
        self._committed: tuple = (-1, ())  # (the offsets partition's end offset, committed()) read last

    # -- construction ---------------------------------------------------------------------
    def _start_consumer(self, c: int, clock: MockTime, selector: "SimSelector", restarts: int = 0):
        """A new consumer process for client *c*: subscribed, its metadata fresh (at the clock's
        time), the slow assignor in place if the world has one. Its random generator (the least
        loaded node's draws, steered to the model's choices) is seeded by client and process."""
        rng = SteerableRandom(self.seed * 1000 + c + 1 + 100_000 * restarts)
        consumer = Consumer(self._consumer_config(c), clock, selector, rng)
        consumer.subscribe([self.config.topic])
        self._seed_metadata(consumer, clock.milliseconds())
        if self.config.assignor_delay_ms:
            self._slow_assignor(c, consumer.coordinator)
        return rng, consumer

    def _consumer_config(self, c: int) -> Dict[str, Any]:
        cfg = redeployed(self.config, self.settings[c])  # the settings its process was deployed with
        return {
            "bootstrap.servers": list(range(cfg.brokers)),
            "group.id": cfg.group_id,
            "client.id": cfg.client_id(c),
            "group.instance.id": cfg.instance_id(c),
            "session.timeout.ms": cfg.session_timeout_ms,
            "heartbeat.interval.ms": cfg.heartbeat_interval_ms,
            "max.poll.interval.ms": cfg.max_poll_interval_ms,
            "request.timeout.ms": cfg.request_timeout_ms,
            "retry.backoff.ms": cfg.retry_backoff_ms,
            "reconnect.backoff.ms": cfg.reconnect_backoff_ms,
            "partition.assignment.strategy": list(cfg.protocols(c)),
            # refreshed locally (LocalMetadataUpdater) when this age runs out: how a consumer
            # learns of partitions added to its topic (model.netclient.maybe_refresh_metadata)
            "metadata.max.age.ms": cfg.metadata_max_age_ms,
            # the connection-setup timeout is not modelled either (a connect hangs until the
            # connect event): make it unreachable
            "socket.connection.setup.timeout.ms": 2**62,
        }

    @staticmethod
    def _topics(config: Config) -> Dict[str, int]:
        """The cluster's topics: the subscribed one and, in a world with one, the second topic
        consumers may change their subscriptions to (model/topics.py)."""
        topics = {config.topic: config.partitions}
        if config.second_partitions:
            topics[config.second_topic] = config.second_partitions
        return topics

    def metadata_response(self) -> MetadataResponseData:
        """What a consumer's metadata holds: every broker (the model's clients always know all B
        nodes) and every topic a consumer may subscribe to (the model's metadata knows their
        partition counts, whatever the consumer asked for)."""
        cluster = self.cluster
        brokers = [MetadataResponseBroker(b.broker_id, b.host, b.port) for b in cluster.brokers]
        topics = [self.config.topic] + ([self.config.second_topic] if self.config.second_partitions else [])
        return MetadataResponseData(brokers=brokers,
                                    topics=cluster.topic_metadata(topics),
                                    cluster_id=cluster.cluster_id, controller_id=cluster.controller_id())

    def _seed_metadata(self, consumer: Consumer, now: int = 0) -> None:
        md = consumer.metadata
        md.update(md.request_version(), self.metadata_response(), False, now)
        consumer.network_client.metadata_updater = LocalMetadataUpdater(md, self)

    def _slow_assignor(self, c: int, coordinator) -> None:
        """The group leader's assignor runs config.assignor_delay_ms (model.member.finish_assignment):
        in the JoinGroup answer's handler the assignment is computed, and the SyncGroup carrying it
        waits for the assignor to return, the whole process standing still meanwhile (Kafka holds
        the coordinator's lock there, so the heartbeat thread waits too). The world sends it at the
        client's first event after the stall (:meth:`_finish_assignment`)."""
        from impl.future import RequestFuture

        elected_and_sync = coordinator._on_leader_elected_and_sync

        def held(data):
            future = RequestFuture()
            self.pending_sync[c] = (data, future)
            until = self.now + self.config.assignor_delay_ms
            self.stalled_until[c] = until
            paused = self.paused_until[c]
            self.paused_until[c] = until if paused is None else max(paused, until)
            return future

        def slow(join_response):
            coordinator._send_sync_group_request = held
            try:
                return elected_and_sync(join_response)
            finally:
                del coordinator._send_sync_group_request  # the class's own again

        coordinator._on_leader_elected_and_sync = slow

    def _finish_assignment(self, c: int) -> None:
        """The leader's assignor has returned: sendSyncGroupRequest (it fails at once if the coordinator
        is unknown by now), its outcome passed on to the join. Nothing when no assignment waits."""
        if self.pending_sync[c] is None:
            return
        data, future = self.pending_sync[c]
        self.pending_sync[c] = None
        self._guard(c, lambda: self.consumers[c].coordinator._send_sync_group_request(data).chain(future))

    # -- choices --------------------------------------------------------------------------
    def choose(self, kind: str, candidates: tuple):
        return self._choose(kind, candidates)

    def _leader_chooser(self, partition: int, live: List[int], num_brokers: int) -> Optional[int]:
        if partition != self.group_partition:
            return preferred_live_broker(partition, live, num_brokers)
        if not live:
            return None
        forced = self._restarting
        if forced is not None:
            return forced  # the model moves a leaderless group to the restarted broker
        return self.choose("new_leader", tuple(live))

    # -- queries --------------------------------------------------------------------------
    @property
    def leader(self) -> Optional[int]:
        return self.cluster.offsets_partition_leader(self.group_partition)

    def broker_of(self, slot: int) -> int:
        return slot % self.config.brokers

    def client_live(self, c: int) -> bool:
        return self.alive[c] and not self.closed[c] and self.closing[c] is None and self.failed[c] is None

    def _coordinator_of(self, c: int) -> Optional[int]:
        coordinator = self.consumers[c].coordinator.coordinator
        return None if coordinator is None else INT_MAX - coordinator.id

    def _group(self):
        b = self.leader
        if b is None or not self.cluster.is_alive(b):
            return None
        manager = self.cluster.broker(b).group_coordinator.group_manager
        if manager.is_group_loading(self.config.group_id):
            return None
        return manager.get_group(self.config.group_id)

    def committed(self) -> tuple:
        """The group's committed offsets of the topic, ((partition, offset), ...) by partition; read
        again only when the offsets partition has grown (an append is its only change)."""
        log = self.cluster.offsets_log
        end = log.end_offset(self.group_partition)
        if self._committed[0] == end:
            return self._committed[1]
        offsets = {}
        topics = (self.config.topic, self.config.second_topic) if self.config.second_partitions else (self.config.topic,)
        for key, value in log.read(self.group_partition):
            if isinstance(key, OffsetKey) and key.group == self.config.group_id and \
                    key.topic_partition.topic in topics:
                tp = key.topic_partition
                offsets[partition_id(self.config, tp.topic, tp.partition)] = value.offset
        committed = tuple(sorted(offsets.items()))
        self._committed = (end, committed)
        return committed

    def observe(self) -> tuple:
        """The shape of :func:`properties.explore.walker.observe`: (now, leader, group, clients, committed)."""
        return self.observation()[0]

    def observation(self) -> tuple:
        """(:meth:`observe`, the coordinator's pending member ids — handed out with
        MEMBER_ID_REQUIRED — in order), from one look at the coordinator's group."""
        group, pending = self.group_view(self._group())
        clients = tuple(self.observe_client(c) for c in range(self.config.clients))
        return (self.now, self.leader, group, clients, self.committed()), pending

    @staticmethod
    def group_view(g) -> tuple:
        """The group's part of :meth:`observe` — (state, generation, leader, members, protocol), or
        None while no live coordinator has it loaded — and its pending member ids, of *g* (a look
        at the coordinator's group: :meth:`_group`)."""
        if g is None:
            return None, ()
        return (g.state._value_, g.generation_id, g.leader_id, tuple(g.members), g.protocol_name), tuple(g.pending_members)

    def observe_client(self, c: int) -> tuple:
        """Consumer *c*'s part of :meth:`observe`: (member state, generation, member id,
        assignment, coordinator, live)."""
        consumer = self.consumers[c]
        coord = consumer.coordinator
        gen = coord.generation
        config = self.config
        if config.second_partitions:  # the model's ints (model/topics.py)
            assignment = tuple(sorted([partition_id(config, tp.topic, tp.partition)
                                       for tp in consumer.subscriptions.assigned_partitions()]))
        else:
            topic = config.topic
            assignment = tuple(sorted([tp.partition for tp in consumer.subscriptions.assigned_partitions()
                                       if tp.topic == topic]))
        return (_STATE_NAMES[coord.state], gen.generation_id, gen.member_id, assignment,
                self._coordinator_of(c), self.client_live(c))

    # -- the network ----------------------------------------------------------------------
    def answer_out_of_band(self, selector: SimSelector, slot: int, link: SimLink, correlation_id: int, request) -> None:
        b = self.broker_of(slot)
        broker = self.cluster.broker(b)
        if not broker.alive:
            return  # the broker-crash event breaks the connection
        out: list = []
        wire = self.wire
        if wire is not None:
            decoded = wire.read_request(request)
            broker.handle(decoded.body, decoded.header.version, decoded.header.client_id, out.append)
            out = [wire.read_response(selector.client, correlation_id, wire.response_frame(decoded, r)) for r in out]
        else:
            version = broker.config.api_versions[request.api_key][1]
            broker.handle(request, version, self.config.client_id(selector.client), out.append)
        for response in out:
            selector._oob.append((slot, link.epoch, correlation_id, response))

    def _handle(self, c: int, slot: int, link: SimLink, correlation_id: int, request) -> None:
        """The broker reads the request: the channel is muted until the response is sent."""
        link.processing = correlation_id
        selector = self.selectors[c]
        b = self.broker_of(slot)
        broker = self.cluster.broker(b)
        wire = self.wire
        if wire is not None:  # the broker reads the frame as groupcheck broker does
            decoded = wire.read_request(request)
            request, version, client_id = decoded.body, decoded.header.version, decoded.header.client_id
        else:
            version = (self.config.join_group_version if request.api_key == "JoinGroup"
                       else broker.config.api_versions[request.api_key][1])
            client_id = self.config.client_id(c)

        def callback(response) -> None:
            if selector.links[slot] is link:
                if wire is not None:
                    response = wire.response_frame(decoded, response)
                link.to_client.append((self.now + self.config.latency_ms, correlation_id, response))
                self.touched.add(c)
            if link.processing == correlation_id:
                link.processing = None  # the channel is unmuted

        broker.handle(request, version, client_id, callback)

    def cut_link(self, c: int, slot: int, processed: int) -> None:
        """A connection breaks: if *processed*, the broker handles the requests still in transit,
        one at a time as its muted channel allows; their responses are lost with the connection.
        ``processed == 2``: it read them and handles them at later ``late`` events."""
        selector = self.selectors[c]
        link = selector.links[slot]
        if link is None:
            return
        b = self.broker_of(slot)
        if processed == 2:
            if self.cluster.is_alive(b) and not link.stalled and link.to_broker and link.processing is None:
                self.orphans.append([b, c, slot, [(cid, request) for _, cid, request in link.to_broker]])
        elif processed and self.cluster.is_alive(b) and not link.stalled:
            while link.to_broker and link.processing is None:
                _, correlation_id, request = link.to_broker.pop(0)
                self._handle(c, slot, link, correlation_id, request)
        selector.links[slot] = None
        self.touched.add(c)

    # -- events ---------------------------------------------------------------------------
    def step(self, event, follow: Optional[List[Tuple[str, Any]]] = None) -> bool:
        """Apply one event of :mod:`model.world`; False if it was not enabled (nothing changed).

        *follow* (optional) is a list of ``(kind, chosen)`` choices to make instead of deriving
        them from the event's pick (a differential check passes the model's choices of the same
        event, from its log): ``least_loaded`` steers the client's leastLoadedNode scan to the
        chosen slot; ``processed`` and ``new_leader`` are taken as given. *event* is a
        :mod:`model.events` event or its plain tuple (ValueError for an unknown kind or a wrong
        length, as :func:`model.world.step`)."""
        event = as_event(event)
        kind = event.kind
        handler = getattr(self, "_ev_" + kind, None)
        if handler is None:
            raise ValueError("the implementation's world has no event %r" % (kind,))
        c = getattr(event, "c", None)
        if c is not None:
            self.touched.add(c)  # its application, heartbeat thread, process or links
        if self.append_errors_leader is not None and self.append_errors_leader != self.leader:
            # the failures were the old coordinator's (the model keeps them in its group)
            self.cluster.offsets_log.clear_injected_errors(self.group_partition)
            self.append_errors_leader = None
        fallback = chooser(event.pick, [])
        if follow:
            queue = list(follow)

            def choose(kind_, candidates):
                for i, (k, chosen) in enumerate(queue):
                    if k == kind_:
                        del queue[i]
                        if chosen in candidates:
                            return chosen
                        break
                return fallback(kind_, candidates)

            self._choose = choose
            if kind in _CLIENT_CALLS:
                targets = [chosen for k, chosen in follow if k == "least_loaded"]
                self._rngs[event.c].steer(targets, self.consumers[event.c].network_client)
        else:
            self._choose = fallback
        try:
            applied = handler(event)
        finally:
            if follow and kind in _CLIENT_CALLS:
                self._rngs[event.c].steer([], None)
        if applied:
            self.steps += 1
        return applied

    def _set_clock(self, c: int) -> None:
        # a MockTime never goes backwards; a clock jump may, so the value is set directly
        self.times[c]._now_ms = self.now + self.clock_offsets[c]

    def _client_runnable(self, c: int) -> bool:
        return self.alive[c] and not self.closed[c] and self.failed[c] is None

    def _guard(self, c: int, action) -> None:
        """Run an application call; an exception Kafka's consumer throws to the application (a
        KafkaException, or Java's IllegalStateException / IllegalArgumentException, as
        ``ConsumerCoordinator.onJoinComplete`` throws for an unknown assignor) ends the consumer.
        Any other exception (a KeyError, a TypeError, ...) is a bug of the implementation: it
        propagates, and the differential reports it as ``impl-no-crash``."""
        try:
            action()
        except (KafkaException, IllegalStateException, IllegalArgumentException) as e:
            self.failed[c] = type(e).__name__

    def _app_paused(self, c: int) -> bool:
        until = self.paused_until[c]
        return until is not None and self.now < until

    def _app_busy(self, c: int) -> bool:
        """Inside a pause, or blocked in commitSync (only its polls go on with it)."""
        return self.commit_syncs[c] is not None or self._app_paused(c)

    def _ev_pause(self, ev) -> bool:
        """The application works *ms* between two polls: no poll, commit or close meanwhile (the
        heartbeat thread runs on); only a live consumer's, and not inside a pause."""
        c, ms = ev.c, ev.ms
        if not self._client_runnable(c) or self.closing[c] is not None or ms <= 0 or self._app_busy(c):
            return False
        self.paused_until[c] = self.now + ms
        return True

    def _ev_stall(self, ev) -> bool:
        """The consumer's whole process stands still *ms*: no poll, commit, close, nor an iteration
        of its heartbeat thread meanwhile (model.world's ``stall``)."""
        c, ms = ev.c, ev.ms
        if not self._client_runnable(c) or self.closing[c] is not None or ms <= 0 or self._app_busy(c):
            return False
        self.paused_until[c] = self.stalled_until[c] = self.now + ms
        return True

    def _stalled(self, c: int) -> bool:
        until = self.stalled_until[c]
        return until is not None and self.now < until

    def _ev_poll(self, ev) -> bool:
        c = ev.c
        if not self._client_runnable(c) or self._app_paused(c):
            return False
        self._finish_assignment(c)
        if self.closing[c] is not None:
            self._guard(c, lambda: self._continue_close(c))
            return True
        if self.commit_syncs[c] is not None:
            self._guard(c, lambda: self._continue_commit_sync(c))
            return True
        self._guard(c, self._woken(lambda: self.consumers[c].poll(0)))
        return True

    def _ev_heartbeat(self, ev) -> bool:
        c = ev.c
        if not self._client_runnable(c) or self._stalled(c):
            return False
        self._finish_assignment(c)
        if self.closing[c] is None:
            self.consumers[c].heartbeat_thread.run_once()
        return True

    def _ev_commit(self, ev) -> bool:
        return self._commit(ev.c, None)

    def _ev_commit_oversized(self, ev) -> bool:
        """commitAsync with metadata over the broker's offset.metadata.max.bytes on the partitions
        ``ev.which`` names (model.events.OVERSIZED), in the order the consumer owns them."""
        return ev.which in OVERSIZED and self._commit(ev.c, ev.which)

    def _commit(self, c: int, oversize: Optional[str]) -> bool:
        """commitAsync() of what was consumed: with nothing owned the offsets are empty, and
        commitOffsetsAsync still completes them locally and ends with pollNoWakeup. *oversize*: the
        partitions (model.member.oversized_partitions) given metadata one character too long."""
        from impl.consumer import OffsetAndMetadata
        from model.member import oversized_partitions

        if not self._client_runnable(c) or self._app_busy(c):
            return False
        self._finish_assignment(c)
        if self.closing[c] is None:
            self.commits[c] += 1
            consumer = self.consumers[c]
            owned = tuple(consumer.subscriptions.assigned_partitions())
            offsets = {tp: self.commits[c] for tp in owned}
            if oversize is not None:
                too_long = "m" * (self.cluster.config.offset_metadata_max_bytes + 1)
                oversized = oversized_partitions(owned, oversize)
                offsets = {tp: OffsetAndMetadata(n, metadata=too_long if tp in oversized else "")
                           for tp, n in offsets.items()}
            self._guard(c, self._woken(lambda: consumer.commit_async(offsets)))
        return True

    def _ev_subscribe(self, ev) -> bool:
        """KafkaConsumer.subscribe with another set of topics (model.world's ``subscribe``, a world
        with a second topic): the subscription changes; nothing is sent."""
        from model.topics import SUBSCRIPTIONS, mask_of, topic_names

        c = ev.c
        if not self._client_runnable(c) or self._app_busy(c) or self.closing[c] is not None \
                or not self.config.second_partitions or ev.topics not in SUBSCRIPTIONS:
            return False
        consumer = self.consumers[c]
        if mask_of(self.config, consumer.subscriptions.subscription) == ev.topics:
            return False
        self._finish_assignment(c)
        self._guard(c, lambda: consumer.subscribe(list(topic_names(self.config, ev.topics))))
        return True

    def _ev_commit_sync(self, ev) -> bool:
        """commitSync(Duration.ofMillis(ev.timeout_ms)) of every owned partition (model.world's
        ``commit_sync``): impl's CommitOffsetsSync, one pass now and one per later poll."""
        from impl.coordinator.consumer_coordinator import CommitOffsetsSync
        from model.events import COMMIT_SYNC_TIMEOUTS

        c = ev.c
        if not self._client_runnable(c) or self._app_busy(c) or self.closing[c] is not None \
                or ev.timeout_ms not in COMMIT_SYNC_TIMEOUTS:
            return False
        consumer = self.consumers[c]
        owned = tuple(consumer.subscriptions.assigned_partitions())
        if not owned:
            return False
        self._finish_assignment(c)
        self.commits[c] += 1
        offsets = {tp: self.commits[c] for tp in owned}

        def begin():
            self.commit_syncs[c] = CommitOffsetsSync(consumer.coordinator, offsets, consumer.time.timer(ev.timeout_ms))
            self._continue_commit_sync(c)

        self._guard(c, begin)
        return True

    def _continue_commit_sync(self, c: int) -> None:
        """One pass of the commitSync client *c*'s application is blocked in. The application
        catches what model.member.COMMIT_SYNC_CAUGHT names and TimeoutException (the timer ran out)
        and goes on; any other exception ends the consumer (:meth:`_guard`)."""
        import impl.errors
        from model.member import COMMIT_SYNC_CAUGHT

        caught = tuple(getattr(impl.errors, name) for name in sorted(COMMIT_SYNC_CAUGHT))
        try:
            done = self.commit_syncs[c].step()
        except caught:
            self.commit_syncs[c] = None
            return
        except BaseException:
            self.commit_syncs[c] = None
            raise
        if done is not None:
            self.commit_syncs[c] = None

    @staticmethod
    def _woken(call):
        """The application's *call*, catching the WakeupException a pending wakeup throws out of it
        (the application's loop catches it and calls again; model.world's ``_woken``)."""
        def action():
            try:
                call()
            except WakeupException:
                pass

        return action

    def _ev_wakeup(self, ev) -> bool:
        """Another thread calls ``wakeup()``: now, or while the consumer waits in its ``ev.n``-th
        selector poll from now (:meth:`SimSelector.poll` calls it then); the next poll that allows
        wakeups afterwards throws (once)."""
        from model.world import WAKEUP_LANDINGS

        c, landing = ev.c, ev.n
        if not self._client_runnable(c) or self.closing[c] is not None or self._stalled(c):
            return False
        if self.consumers[c].client._wakeup or self.wakeup_in_polls[c] or landing not in WAKEUP_LANDINGS:
            return False
        if landing:
            self.wakeup_in_polls[c] = landing
        else:
            self.consumers[c].wakeup()
        return True

    def _ev_close(self, ev) -> bool:
        c = ev.c
        if not self._client_runnable(c) or self._app_busy(c):
            return False
        self._finish_assignment(c)
        if self.closing[c] is None:
            self._guard(c, lambda: self._begin_close(c))
        return True

    def _ev_shutdown(self, ev) -> bool:
        """The consumer loop's last commitAsync(), then close() (model.world's ``shutdown``)."""
        c = ev.c
        if not self._commit(c, None):
            return False
        if self.pending_sync[c] is not None:
            # the commit ran a slow assignor (the JoinGroup answer of a leader): close() only after
            # it returned and sent the SyncGroup, its time taken as spent (model.world's shutdown)
            self._finish_assignment(c)
            self.paused_until[c] = self.stalled_until[c] = None
        self._ev_close(Close(c))
        return True

    # close, non-blocking: ConsumerCoordinator.close then AbstractCoordinator.close
    def _begin_close(self, c: int) -> None:
        consumer = self.consumers[c]
        timer = consumer.time.timer(min(self.config.close_timeout_ms, consumer.request_timeout_ms))
        self.closing[c] = {"timer": timer, "phase": "commits", "node": None}
        consumer.coordinator.client.disable_wakeups()
        self._continue_close(c)

    def _continue_close(self, c: int) -> None:
        consumer = self.consumers[c]
        coord = consumer.coordinator
        state = self.closing[c]
        timer = state["timer"]
        timer.update()
        if state["phase"] == "commits":
            if coord.pending_async_commits > 0 and timer.not_expired():
                zero = consumer.time.timer(0)
                coord.ensure_coordinator_ready(zero)
                coord.client.poll(zero)
                coord.invoke_completed_offset_commit_callbacks()
                timer.update()
                if coord.pending_async_commits > 0 and timer.not_expired():
                    return
            # super.close(timer)
            coord.close_heartbeat_thread()
            if coord.rebalance_config.leave_group_on_close:
                coord.on_leave_prepare()
                coord.maybe_leave_group("the consumer is being closed")
            state["node"] = coord.check_and_get_coordinator()
            state["phase"] = "await"
            self._await_step(c, poll=False)
            return
        self._await_step(c, poll=True)

    def _await_step(self, c: int, poll: bool) -> None:
        """One iteration of awaitPendingRequests(coordinator, timer); then the consumer closes."""
        consumer = self.consumers[c]
        state = self.closing[c]
        timer, node = state["timer"], state["node"]
        client = consumer.coordinator.client
        if node is not None and poll and client.has_pending_requests(node) and timer.not_expired():
            client.poll(consumer.time.timer(0))
            timer.update()
        if node is None or not client.has_pending_requests(node) or not timer.not_expired():
            try:
                consumer.client.close()
            finally:
                consumer.closed = True
                self.closed[c] = True

    def _ev_crash(self, ev) -> bool:
        c = ev.c
        if not self.alive[c]:
            return False
        self.alive[c] = False
        selector = self.selectors[c]
        for link in selector.links:
            if link is not None:
                link.to_client.clear()  # nothing will ever read the responses
        selector.notices = []
        return True

    def _ev_restart(self, ev) -> bool:
        """As the model's ``restart``: a new consumer process for client c after its old one died
        (crashed, closed, or stopped by a fatal error); the old one's connections close first
        (``processed`` as a disconnect's). The clock and the connection epochs carry on."""
        return self._start_process(ev.c, int(ev.processed), self.settings[ev.c])

    def _ev_redeploy(self, ev) -> bool:
        """As the model's ``redeploy``: a restart whose new process runs with the settings of
        ``REDEPLOYS[ev.settings]``; the old one's connections close with their requests read."""
        if not 0 <= ev.settings < len(REDEPLOYS):
            return False
        return self._start_process(ev.c, HANDLED, ev.settings)

    def _start_process(self, c: int, processed: int, settings: int) -> bool:
        if self.client_live(c) or (self.alive[c] and not self.closed[c] and self.closing[c] is not None):
            return False
        old = self.selectors[c]
        for slot, link in enumerate(old.links):
            if link is not None:
                self.cut_link(c, slot, processed)
        selector = SimSelector(self, c)
        selector.epochs = list(old.epochs)
        self.restarts[c] += 1
        self.settings[c] = settings
        self._set_clock(c)
        rng, consumer = self._start_consumer(c, self.times[c], selector, self.restarts[c])
        self._rngs[c], self.selectors[c], self.consumers[c] = rng, selector, consumer
        self.alive[c], self.closed[c], self.closing[c], self.failed[c] = True, False, None, None
        self.paused_until[c] = self.stalled_until[c] = None
        self.wakeup_in_polls[c] = 0
        self.pending_sync[c] = None
        self.commit_syncs[c] = None
        return True

    def _ev_connect(self, ev) -> bool:
        c, slot = ev.c, ev.slot
        selector = self.selectors[c]
        if not self.alive[c] or not selector.connecting[slot] or selector.has_notice(slot):
            return False
        b = self.broker_of(slot)
        if (c, b) in self.partitioned:
            return False  # the SYN goes nowhere: the attempt hangs
        selector.connecting[slot] = False
        epoch = selector.epochs[slot]
        if self.cluster.is_alive(b):
            selector.links[slot] = SimLink(epoch)
            selector.notices.append(("connected", slot, epoch, None))
        else:
            selector.notices.append(("disconnected", slot, epoch, None))  # connection refused
        return True

    def _ev_deliver(self, ev) -> bool:
        c, slot, to_broker = ev.c, ev.slot, ev.to_broker
        selector = self.selectors[c]
        link = selector.links[slot]
        b = self.broker_of(slot)
        if link is None or (c, b) in self.partitioned or link.stalled:
            return False
        if to_broker:
            if (not link.to_broker or link.to_broker[0][0] > self.now or not self.cluster.is_alive(b)
                    or link.processing is not None):
                return False
            _, correlation_id, request = link.to_broker.pop(0)
            self._handle(c, slot, link, correlation_id, request)
            return True
        if not link.to_client or link.to_client[0][0] > self.now:
            return False
        _, correlation_id, response = link.to_client.pop(0)
        if self.wire is not None:
            response = self.wire.read_response(c, correlation_id, response)
        if self.alive[c]:
            selector.notices.append(("received", slot, link.epoch, (correlation_id, response)))
        return True

    def _ev_drop(self, ev) -> bool:
        c, slot, to_broker = ev.c, ev.slot, ev.to_broker
        link = self.selectors[c].links[slot]
        if link is None:
            return False
        queue = link.to_broker if to_broker else link.to_client
        if not queue:
            return False
        queue.pop(0)
        link.stalled = True
        return True

    def _ev_disconnect(self, ev) -> bool:
        c, slot, processed = ev.c, ev.slot, ev.processed
        selector = self.selectors[c]
        link = selector.links[slot]
        if not self.alive[c] or link is None:
            return False
        self.cut_link(c, slot, int(processed))
        selector.notices.append(("disconnected", slot, link.epoch, None))
        return True

    def _ev_tick(self, ev) -> bool:
        """As the model's tick: the clock stops at every deadline on the way, so what a timer
        sends leaves when it fires."""
        ms = ev.ms
        if ms <= 0:
            return False
        end = self.now + ms
        retried = False
        while True:
            due = self.cluster.next_deadline()
            if due is None or due > end:
                break
            if due <= self.now:  # overdue: fire it now, once (a timer that will not fire is left to the end)
                if retried:
                    break
                retried = True
                self.cluster.advance_clock(self.now)
                continue
            retried = False
            self._advance_to(due)
        self._advance_to(end)
        return True

    def _advance_to(self, ms: int) -> None:
        self.now = ms
        for c in range(self.config.clients):
            self._set_clock(c)
        self.cluster.advance_clock(ms)

    def _ev_late(self, ev) -> bool:
        """As the model's ``late``: broker b handles the oldest request it read from a connection
        that has broken since; a parked one holds back the rest of its connection's for good."""
        b = ev.b
        if not self.cluster.is_alive(b):
            return False
        for i, orphan in enumerate(self.orphans):
            if orphan[0] == b:
                break
        else:
            return False
        _, c, slot, requests = orphan
        correlation_id, request = requests.pop(0)
        closed = SimLink(-1)  # the broken connection: the response goes nowhere
        self._handle(c, slot, closed, correlation_id, request)
        if not requests or closed.processing is not None:
            del self.orphans[i]
        return True

    def _ev_broker_crash(self, ev) -> bool:
        b = ev.b
        if not self.cluster.is_alive(b):
            return False
        self.orphans = [o for o in self.orphans if o[0] != b]  # its request queue dies with it
        brokers = self.config.brokers
        for c, selector in enumerate(self.selectors):
            for slot in (b, brokers + b):
                link = selector.links[slot]
                if link is not None:
                    selector.links[slot] = None
                    self.touched.add(c)
                    if self.alive[c]:
                        selector.notices.append(("disconnected", slot, link.epoch, None))
        self.cluster.crash(b)
        return True

    def _ev_broker_restart(self, ev) -> bool:
        b = ev.b
        if self.cluster.is_alive(b):
            return False
        self._restarting = b
        try:
            self.cluster.restart(b)
        finally:
            self._restarting = None
        return True

    def _ev_failover(self, ev) -> bool:
        b = ev.b
        if not self.cluster.is_alive(b) or self.leader == b:
            return False
        self.cluster.move_leadership(self.group_partition, b)
        return True

    def _ev_load(self, ev) -> bool:
        b = ev.b
        if self.leader != b or not self.cluster.is_alive(b):
            return False
        manager = self.cluster.broker(b).group_coordinator.group_manager
        if not manager.is_partition_loading(self.group_partition):
            return False
        self.cluster.finish_loading(b, self.group_partition)
        return True

    def _ev_append_error(self, ev) -> bool:
        """The coordinator's next append to the group's offsets partition fails with a log error
        (model.world's ``append_error``): only a live coordinator with the group loaded, at most
        MAX_APPEND_ERRORS waiting."""
        from impl.errors import Errors
        from model.events import APPEND_ERRORS, MAX_APPEND_ERRORS

        log = self.cluster.offsets_log
        if ev.code not in APPEND_ERRORS or self._group() is None \
                or len(log.injected_errors(self.group_partition)) >= MAX_APPEND_ERRORS:
            return False
        log.inject_append_error(self.group_partition, Errors.for_code(int(ev.code)))
        self.append_errors_leader = self.leader
        return True

    def _ev_delete_group(self, ev) -> bool:
        """The Empty group is deleted (model.world's ``delete_group``): DeleteGroups handled by the
        coordinator (GroupCoordinator.handle_delete_groups), taken only when it has the group
        loaded and Empty, with no append failure waiting (as the model)."""
        from impl.errors import Errors
        from impl.server.group_metadata import EMPTY

        group = self._group()
        if group is None or group.state is not EMPTY or self.cluster.offsets_log.injected_errors(self.group_partition):
            return False
        coordinator = self.cluster.broker(self.leader).group_coordinator
        return coordinator.handle_delete_groups([self.config.group_id])[self.config.group_id] is Errors.NONE

    def _ev_add_partitions(self, ev) -> bool:
        """The subscribed topic gets *n* more partitions (model.world's ``add_partitions``)."""
        from model.events import MAX_ADDED_PARTITIONS

        n = ev.n
        cluster = self.cluster
        count = cluster.topics[self.config.topic]
        if n <= 0 or count + n > self.config.partitions + MAX_ADDED_PARTITIONS:
            return False
        cluster.add_partitions(self.config.topic, n)
        return True

    @property
    def topic_partitions(self) -> int:
        return self.cluster.topics[self.config.topic]

    def _ev_clock_jump(self, ev) -> bool:
        c, ms = ev.c, ev.ms
        offset = max(self.clock_offsets[c] + ms, -self.now)
        if not self.alive[c] or ms == 0 or offset == self.clock_offsets[c]:
            return False
        self.clock_offsets[c] = offset
        self._set_clock(c)
        return True

    def _ev_partition(self, ev) -> bool:
        pair = (ev.c, ev.b)
        if pair in self.partitioned:
            return False
        self.partitioned.add(pair)
        return True

    def _ev_heal(self, ev) -> bool:
        pair = (ev.c, ev.b)
        if pair not in self.partitioned:
            return False
        self.partitioned.discard(pair)
        return True
