"""A simulated Kafka cluster: brokers, liveness, topics, and leadership of ``__consumer_offsets``.

The cluster plays the controller and the metadata cache: it decides which broker leads each
``__consumer_offsets`` partition (initially ``partition % num_brokers``), tells the old leader to
resign (its groups are unloaded) and the new one to take over (it loads the partition's groups
from the shared log, answering COORDINATOR_LOAD_IN_PROGRESS until :meth:`Cluster.finish_loading`),
and answers Metadata/FindCoordinator questions about who is alive and who leads what.

The ``__consumer_offsets`` log (:class:`~impl.server.group_metadata_manager.OffsetsTopicLog`) is
shared by all brokers: it outlives crashes and coordinator moves, and a new coordinator rebuilds
its groups from the persisted records only.

Time: all brokers share the cluster's :class:`~impl.time.MockTime`.  :meth:`Cluster.advance_clock`
fires the delayed operations of all live brokers in global ``(deadline, broker id, insertion)``
order, each at its own deadline.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from impl.errors import Errors, IllegalArgumentException
from impl.protocol import MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic
from impl.server.broker import Broker
from impl.server.config import BrokerConfig
from impl.server.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, OffsetsTopicLog, partition_for
from impl.server.topic_id import topic_id
from impl.time import MockTime

__all__ = ["Cluster", "preferred_live_broker", "LEADER_NOT_AVAILABLE_CODE"]

#: Errors.LEADER_NOT_AVAILABLE (not in impl.errors.Errors): a partition without a live leader.
LEADER_NOT_AVAILABLE_CODE = 5

#: chooser(partition, live broker ids in id order, num_brokers) -> new leader id or None
Chooser = Callable[[int, List[int], int], Optional[int]]


def preferred_live_broker(partition: int, live_brokers: List[int], num_brokers: int) -> Optional[int]:
    """The default leader choice: the first live broker at or after ``partition % num_brokers``
    (cyclically), or None when no broker is alive."""
    if not live_brokers:
        return None
    live = set(live_brokers)
    start = partition % num_brokers
    for i in range(num_brokers):
        candidate = (start + i) % num_brokers
        if candidate in live:
            return candidate
    return None


class Cluster:
    """Brokers ``0 .. num_brokers-1`` sharing one clock and one ``__consumer_offsets`` log."""

    __slots__ = ("num_brokers", "offsets_partitions", "topics", "time", "rng", "config", "chooser",
                 "cluster_id", "offsets_log", "brokers", "_leaders", "_version", "_metadata_cache")

    def __init__(self, num_brokers: int, offsets_partitions: int = 50, topic_partitions: int = 3,
                 topics: Optional[Mapping[str, int]] = None, time: Optional[MockTime] = None,
                 rng: Optional[random.Random] = None, config: Optional[BrokerConfig] = None,
                 chooser: Optional[Chooser] = None, cluster_id: str = "groupcheck-cluster",
                 initially_loaded: bool = True) -> None:
        if num_brokers <= 0:
            raise IllegalArgumentException("a cluster needs at least one broker")
        self.num_brokers = num_brokers
        self.offsets_partitions = offsets_partitions
        self.topics: Dict[str, int] = dict(topics) if topics is not None else {"topic": topic_partitions}
        self.time = time if time is not None else MockTime()
        self.rng = rng if rng is not None else random.Random(0)
        base = config if config is not None else BrokerConfig()
        self.config = dataclasses.replace(base, offsets_topic_num_partitions=offsets_partitions)
        self.chooser: Chooser = chooser if chooser is not None else preferred_live_broker
        self.cluster_id = cluster_id
        self._leaders: List[Optional[int]] = [p % num_brokers for p in range(offsets_partitions)]
        self.offsets_log = OffsetsTopicLog(offsets_partitions, self.offsets_partition_leader)
        self._version = 0
        self._metadata_cache: Optional[Tuple[int, list, Dict[str, MetadataResponseTopic]]] = None
        self.brokers: List[Broker] = [
            Broker(b, self, self.time, random.Random(self.rng.getrandbits(64)), self.config)
            for b in range(num_brokers)]
        for p, leader in enumerate(self._leaders):
            self.brokers[leader].on_election(p)
        if initially_loaded:
            for broker in self.brokers:
                broker.finish_loading()

    # -- queries ----------------------------------------------------------------------------

    def broker(self, broker_id: int) -> Broker:
        return self.brokers[broker_id]

    def is_alive(self, broker_id: int) -> bool:
        return 0 <= broker_id < self.num_brokers and self.brokers[broker_id].alive

    def alive_broker_ids(self) -> List[int]:
        return [b.broker_id for b in self.brokers if b.alive]

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.offsets_partitions)

    def offsets_partition_leader(self, partition: int) -> Optional[int]:
        return self._leaders[partition]

    def offsets_partition_leader_node(self, partition: int) -> Optional[Tuple[int, str, int]]:
        """``(id, host, port)`` of the partition's leader if it has one and it is alive."""
        leader = self._leaders[partition]
        if leader is None:
            return None
        broker = self.brokers[leader]
        if not broker.alive:
            return None
        return (leader, broker.host, broker.port)

    def coordinator_for(self, group_id: str) -> Optional[int]:
        """The broker that leads the group's ``__consumer_offsets`` partition (None if none)."""
        return self._leaders[self.partition_for(group_id)]

    def partitions_led_by(self, broker_id: int) -> List[int]:
        return [p for p, leader in enumerate(self._leaders) if leader == broker_id]

    def num_partitions(self, topic: str) -> Optional[int]:
        if topic == GROUP_METADATA_TOPIC_NAME:
            return self.offsets_partitions
        return self.topics.get(topic)

    def create_topic(self, name: str, partitions: int) -> None:
        """Add a topic (``groupcheck broker``'s auto-creation and ``--topic``); no-op if it exists."""
        if name not in self.topics:
            self.topics[name] = partitions
            self._version += 1

    def add_partitions(self, name: str, count: int) -> None:
        """CreatePartitions: the topic grows by ``count`` partitions (a topic never shrinks)."""
        if count <= 0 or name not in self.topics:
            raise ValueError(f"cannot add {count} partitions to topic {name!r}")
        self.topics[name] += count
        self._version += 1

    def set_listener(self, broker_id: int, host: str, port: int) -> None:
        """The address Metadata and FindCoordinator advertise for the broker (a real listener)."""
        broker = self.brokers[broker_id]
        broker.host, broker.port = host, port
        self._version += 1

    def topic_partition_leader(self, partition: int) -> Optional[int]:
        """The leader of partition *partition* of any ordinary topic (what Metadata says)."""
        return preferred_live_broker(partition, self.alive_broker_ids(), self.num_brokers)

    # -- leadership changes -----------------------------------------------------------------

    def move_leadership(self, partition: int, to_broker: int) -> None:
        """Make ``to_broker`` the leader of ``__consumer_offsets`` partition ``partition``: the
        old leader (if alive) unloads the partition's groups; the new one starts loading."""
        if not self.is_alive(to_broker):
            raise IllegalArgumentException("broker %d is not alive" % to_broker)
        old = self._leaders[partition]
        if old == to_broker:
            return
        if old is not None and self.brokers[old].alive:
            self.brokers[old].on_resignation(partition)
        self._leaders[partition] = to_broker
        self.brokers[to_broker].on_election(partition)
        self._version += 1

    def crash(self, broker_id: int) -> None:
        """The broker dies (state lost); each partition it led moves to ``chooser``'s pick among
        the live brokers (which starts loading it), or is left without a leader."""
        broker = self.brokers[broker_id]
        if not broker.alive:
            return
        broker.crash()
        self._version += 1
        live = self.alive_broker_ids()
        for p, leader in enumerate(self._leaders):
            if leader == broker_id:
                new_leader = self.chooser(p, live, self.num_brokers)
                self._leaders[p] = new_leader
                if new_leader is not None:
                    self.brokers[new_leader].on_election(p)

    def restart(self, broker_id: int) -> None:
        """The broker comes back with empty state; leaderless partitions get ``chooser``'s pick
        among the live brokers (the restarted one included)."""
        broker = self.brokers[broker_id]
        if broker.alive:
            return
        broker.startup()
        self._version += 1
        live = self.alive_broker_ids()
        for p, leader in enumerate(self._leaders):
            if leader is None:
                new_leader = self.chooser(p, live, self.num_brokers)
                if new_leader is not None:
                    self._leaders[p] = new_leader
                    self.brokers[new_leader].on_election(p)

    def finish_loading(self, broker_id: int, partition: Optional[int] = None) -> List[int]:
        """Complete the broker's pending loads (one partition, or all); returns the partitions."""
        broker = self.brokers[broker_id]
        if not broker.alive:
            return []
        return broker.finish_loading(partition)

    # -- time -------------------------------------------------------------------------------

    def next_deadline(self) -> Optional[int]:
        """The earliest deadline armed on any live broker's timer, or None."""
        best = None
        for broker in self.brokers:
            if broker.alive:
                d = broker.timer.next_deadline()
                if d is not None and (best is None or d < best):
                    best = d
        return best

    def advance_clock(self, until_ms: int) -> bool:
        """Advance every live broker's timer to ``until_ms`` in global deadline order."""
        executed = False
        brokers = self.brokers
        while True:
            best = None
            best_deadline = None
            for broker in brokers:
                if broker.alive:
                    timer = broker.timer
                    d = timer.next_deadline()
                    if d is not None and timer.is_due(d, until_ms) and (best_deadline is None or d < best_deadline):
                        best, best_deadline = broker, d
            if best is None or not best.timer.advance_clock(best_deadline):
                break
            executed = True
        for broker in brokers:
            if broker.alive:
                executed = broker.timer.advance_clock(until_ms) or executed
        if until_ms > self.time.milliseconds():
            self.time.set_current_time_ms(until_ms)
        return executed

    # -- metadata ---------------------------------------------------------------------------

    def controller_id(self) -> int:
        for broker in self.brokers:
            if broker.alive:
                return broker.broker_id
        return -1

    def _metadata(self) -> Tuple[list, Dict[str, MetadataResponseTopic]]:
        cache = self._metadata_cache
        if cache is not None and cache[0] == self._version:
            return cache[1], cache[2]
        brokers = [MetadataResponseBroker(b.broker_id, b.host, b.port) for b in self.brokers if b.alive]
        live = self.alive_broker_ids()
        n = self.num_brokers
        topics: Dict[str, MetadataResponseTopic] = {}
        for name, count in self.topics.items():
            partitions = []
            for p in range(count):
                replicas = [(p + i) % n for i in range(n)]
                leader = preferred_live_broker(p, live, n)
                partitions.append(self._partition_metadata(p, leader, replicas, live))
            topics[name] = MetadataResponseTopic(name, topic_id=topic_id(name), partitions=partitions)
        self._metadata_cache = (self._version, brokers, topics)
        return brokers, topics

    def _offsets_topic_metadata(self) -> MetadataResponseTopic:
        """``__consumer_offsets``'s metadata (its many partitions), built when a request names it
        or asks for every topic: a consumer's own Metadata requests name only its topics."""
        topics = self._metadata()[1]
        topic = topics.get(GROUP_METADATA_TOPIC_NAME)
        if topic is None:
            live = self.alive_broker_ids()
            n = self.num_brokers
            offsets_partitions = []
            for p, leader in enumerate(self._leaders):
                replicas = [(p + i) % n for i in range(n)]
                if leader is not None and not self.brokers[leader].alive:
                    leader = None
                offsets_partitions.append(self._partition_metadata(p, leader, replicas, live))
            topic = topics[GROUP_METADATA_TOPIC_NAME] = MetadataResponseTopic(
                GROUP_METADATA_TOPIC_NAME, is_internal=True, topic_id=topic_id(GROUP_METADATA_TOPIC_NAME),
                partitions=offsets_partitions)
        return topic

    @staticmethod
    def _partition_metadata(p: int, leader: Optional[int], replicas: List[int], live: List[int]) -> MetadataResponsePartition:
        isr = [r for r in replicas if r in live]
        offline = [r for r in replicas if r not in live]
        if leader is None:
            return MetadataResponsePartition(p, -1, LEADER_NOT_AVAILABLE_CODE, replica_nodes=replicas,
                                             isr_nodes=isr, offline_replicas=offline)
        return MetadataResponsePartition(p, leader, replica_nodes=replicas, isr_nodes=isr, offline_replicas=offline)

    def alive_broker_metadata(self) -> List[MetadataResponseBroker]:
        """The live brokers (a shared list: treat Metadata responses as read-only)."""
        return self._metadata()[0]

    def topic_metadata(self, names: Optional[Sequence[str]]) -> List[MetadataResponseTopic]:
        """Metadata of the named topics (all, including ``__consumer_offsets``, for None); an
        unknown name gets UNKNOWN_TOPIC_OR_PARTITION."""
        topics = self._metadata()[1]
        if names is None:
            self._offsets_topic_metadata()
            return list(topics.values())
        result = []
        for name in names:
            topic = self._offsets_topic_metadata() if name == GROUP_METADATA_TOPIC_NAME else topics.get(name)
            if topic is None:
                topic = MetadataResponseTopic(name, error_code=Errors.UNKNOWN_TOPIC_OR_PARTITION.value)
            result.append(topic)
        return result

    def __repr__(self) -> str:
        return "Cluster(brokers=%d, alive=%s, offsets_partitions=%d)" % (
            self.num_brokers, self.alive_broker_ids(), self.offsets_partitions)
