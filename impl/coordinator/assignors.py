"""Partition assignors: ``RangeAssignor`` and ``RoundRobinAssignor``
(``org.apache.kafka.clients.consumer``), as ``AbstractPartitionAssignor`` subclasses.

Both are eager assignors.  Members are ordered by ``MemberInfo`` (group instance id when both
members have one, static members first, else member id), topics and partitions by name and index.
Rack-aware assignment (KIP-881) is not implemented: without rack ids Kafka's trunk RangeAssignor
reduces to the classic per-topic range algorithm below.

All maps are plain dicts iterated in insertion order; nothing iterates a set.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence

from impl.errors import IllegalArgumentException
from impl.protocol import Assignment, Subscription, TopicPartition

__all__ = ["AbstractPartitionAssignor", "MemberInfo", "RangeAssignor", "RoundRobinAssignor",
           "RebalanceProtocol", "assignor_for_name"]


class RebalanceProtocol:
    """``ConsumerPartitionAssignor.RebalanceProtocol``."""

    EAGER = "EAGER"
    COOPERATIVE = "COOPERATIVE"


class MemberInfo:
    """``AbstractPartitionAssignor.MemberInfo``: ordering of group members for assignment."""

    __slots__ = ("member_id", "group_instance_id")

    def __init__(self, member_id: str, group_instance_id: Optional[str] = None) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id

    def _key(self):
        # Static members (with an instance id) sort before dynamic ones, by instance id; dynamic
        # members by member id.  (Kafka's compareTo; Python's str order equals Java's
        # String.compareTo for BMP characters.)
        if self.group_instance_id is not None:
            return (0, self.group_instance_id)
        return (1, self.member_id)

    def __lt__(self, other: "MemberInfo") -> bool:
        return self._key() < other._key()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemberInfo) and self.member_id == other.member_id \
            and self.group_instance_id == other.group_instance_id

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "MemberInfo(%s, %s)" % (self.member_id, self.group_instance_id)


def partitions(topic: str, num_partitions: int) -> List[TopicPartition]:
    """``AbstractPartitionAssignor.partitions``."""
    return [TopicPartition(topic, i) for i in range(num_partitions)]


class AbstractPartitionAssignor:
    """``AbstractPartitionAssignor``: computes ``partitionsPerTopic`` from cluster metadata and
    delegates to :meth:`assign_partitions`."""

    name_: str = ""

    def name(self) -> str:
        return self.name_

    def supported_protocols(self) -> List[str]:
        return [RebalanceProtocol.EAGER]

    def subscription_user_data(self, topics: Sequence[str]) -> Optional[bytes]:
        return None

    def on_assignment(self, assignment: Assignment, generation_id: int) -> None:
        """``onAssignment``: no internal state to update."""

    def assign_partitions(self, partitions_per_topic: Mapping[str, int],
                          subscriptions: Mapping[str, Subscription],
                          group_instance_ids: Mapping[str, Optional[str]]) -> Dict[str, List[TopicPartition]]:
        raise NotImplementedError

    def assign(self, partition_count_for_topic, subscriptions: Mapping[str, Subscription],
               group_instance_ids: Optional[Mapping[str, Optional[str]]] = None) -> Dict[str, Assignment]:
        """``assign(Cluster, GroupSubscription)``: ``partition_count_for_topic(topic)`` returns
        the topic's partition count or None (topics without metadata are skipped)."""
        if group_instance_ids is None:
            group_instance_ids = {}
        all_subscribed_topics: List[str] = []
        for subscription in subscriptions.values():
            for topic in subscription.topics:
                if topic not in all_subscribed_topics:
                    all_subscribed_topics.append(topic)
        partitions_per_topic: Dict[str, int] = {}
        for topic in sorted(all_subscribed_topics):
            num_partitions = partition_count_for_topic(topic)
            if num_partitions is not None and num_partitions > 0:
                partitions_per_topic[topic] = num_partitions
            # else: skipping assignment for topic since no metadata is available
        raw_assignments = self.assign_partitions(partitions_per_topic, subscriptions, group_instance_ids)
        # this class maintains no user data, so just wrap the results
        return {member_id: Assignment(list(tps)) for member_id, tps in raw_assignments.items()}


class RangeAssignor(AbstractPartitionAssignor):
    """``RangeAssignor``: per topic, lay the members out in order and give each a contiguous
    range; the first ``numPartitions % numMembers`` members get one extra partition."""

    name_ = "range"

    def assign_partitions(self, partitions_per_topic, subscriptions, group_instance_ids):
        consumers_per_topic: Dict[str, List[MemberInfo]] = {}
        for member_id, subscription in subscriptions.items():
            member = MemberInfo(member_id, group_instance_ids.get(member_id))
            for topic in subscription.topics:
                consumers_per_topic.setdefault(topic, []).append(member)
        assignment: Dict[str, List[TopicPartition]] = {member_id: [] for member_id in subscriptions}
        for topic in sorted(consumers_per_topic):
            consumers_for_topic = consumers_per_topic[topic]
            num_partitions_for_topic = partitions_per_topic.get(topic)
            if num_partitions_for_topic is None:
                continue
            consumers_for_topic = sorted(consumers_for_topic)
            n = len(consumers_for_topic)
            num_partitions_per_consumer = num_partitions_for_topic // n
            consumers_with_extra_partition = num_partitions_for_topic % n
            tps = partitions(topic, num_partitions_for_topic)
            for i in range(n):
                start = num_partitions_per_consumer * i + min(i, consumers_with_extra_partition)
                length = num_partitions_per_consumer + (0 if i + 1 > consumers_with_extra_partition else 1)
                assignment[consumers_for_topic[i].member_id].extend(tps[start:start + length])
        return assignment


class RoundRobinAssignor(AbstractPartitionAssignor):
    """``RoundRobinAssignor``: all partitions of all subscribed topics (topics sorted) dealt out
    one by one over the sorted members in a circle, skipping members not subscribed to the
    partition's topic."""

    name_ = "roundrobin"

    def assign_partitions(self, partitions_per_topic, subscriptions, group_instance_ids):
        assignment: Dict[str, List[TopicPartition]] = {}
        member_info_list: List[MemberInfo] = []
        for member_id in subscriptions:
            assignment[member_id] = []
            member_info_list.append(MemberInfo(member_id, group_instance_ids.get(member_id)))
        members = sorted(member_info_list)
        if not members:
            return assignment
        position = 0  # CircularIterator over the sorted members
        for tp in self._all_partitions_sorted(partitions_per_topic, subscriptions):
            topic = tp.topic
            while topic not in subscriptions[members[position].member_id].topics:
                position = (position + 1) % len(members)
            assignment[members[position].member_id].append(tp)
            position = (position + 1) % len(members)
        return assignment

    @staticmethod
    def _all_partitions_sorted(partitions_per_topic, subscriptions) -> List[TopicPartition]:
        topics: List[str] = []
        for subscription in subscriptions.values():
            for topic in subscription.topics:
                if topic not in topics:
                    topics.append(topic)
        all_partitions: List[TopicPartition] = []
        for topic in sorted(topics):
            num_partitions_for_topic = partitions_per_topic.get(topic)
            if num_partitions_for_topic is not None:
                all_partitions.extend(partitions(topic, num_partitions_for_topic))
        return all_partitions


_ASSIGNORS = {"range": RangeAssignor, "roundrobin": RoundRobinAssignor}


def assignor_for_name(name: str) -> AbstractPartitionAssignor:
    """A new assignor for ``partition.assignment.strategy`` name ``"range"`` / ``"roundrobin"``
    (the Java class names are accepted too)."""
    key = name.strip()
    aliases = {"org.apache.kafka.clients.consumer.RangeAssignor": "range",
               "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
               "RangeAssignor": "range", "RoundRobinAssignor": "roundrobin"}
    key = aliases.get(key, key)
    cls = _ASSIGNORS.get(key)
    if cls is None:
        raise IllegalArgumentException("partition.assignment.strategy: unknown assignor %r (known: range, roundrobin)" % name)
    return cls()
