"""The server ``UniformAssignor`` (``org.apache.kafka.coordinator.group.assignor``), Kafka 4.x's
default: sticky, balanced. Its homogeneous case (every member subscribed to the same topics) is
``UniformHomogeneousAssignmentBuilder``: each member, in the group spec's order, keeps up to its
quota of its current target (the partitions past it, and those of topics it no longer subscribes
to, become unassigned); the extra partitions (``partitions % members``) go to the first members,
unless a member with room to spare can leave its extra to the members after it; then the
unassigned partitions — those no member held, ascending per topic, then those given up, in the
order they were — are dealt to the members with room, in the same order.

``assign`` takes ``{member id: (instance id, subscribed topic ids)}`` *in the group spec's order*
(``TargetAssignmentBuilder`` gives it as Kafka's HashMap iterates), the topics' partition counts and
the members' current targets, and returns ``{member id: {topic id: frozenset}}``. The
heterogeneous builder is not implemented: a group whose members subscribe to different topics is
refused (PartitionAssignorException), which no world of this project makes.
"""

from __future__ import annotations

from impl.server.modern.range_assignor import PartitionAssignorException

NAME = "uniform"


class UniformAssignor:
    name = NAME

    def assign(self, members: dict, num_partitions: dict, current: dict | None = None) -> dict:
        if not members:
            return {}
        subscriptions = {frozenset(spec[1]) for spec in members.values()}
        if len(subscriptions) > 1:
            raise PartitionAssignorException("UniformHeterogeneousAssignmentBuilder is not implemented")
        return UniformHomogeneousAssignmentBuilder(members, num_partitions, current or {}).build()


class UniformHomogeneousAssignmentBuilder:
    def __init__(self, members: dict, num_partitions: dict, current: dict):
        self.member_ids = list(members)  # groupSpec.memberIds(), in order
        first = self.member_ids[0]
        self.subscribed_topic_ids = sorted(members[first][1])
        self.num_partitions = num_partitions
        self.current = current  # member id -> {topic id: frozenset}: groupSpec.memberAssignment
        self.unfilled_members: list = []  # (member id, remaining quota)
        self.unassigned_partitions: list = []  # (topic id, partition)
        self.target_assignment: dict = {}
        self.minimum_member_quota = 0
        self.remaining_members_to_get_an_extra_partition = 0

    def build(self) -> dict:
        if not self.subscribed_topic_ids:
            return {}
        assigned = {(t, p) for assignment in self.current.values() for t, parts in assignment.items() for p in parts}
        total = 0
        for topic_id in self.subscribed_topic_ids:
            count = self.num_partitions.get(topic_id, -1)
            if count == -1:
                raise PartitionAssignorException(f"Members are subscribed to topic {topic_id} which doesn't exist "
                                                 "in the topic metadata.")
            for i in range(count):
                if (topic_id, i) not in assigned:  # groupSpec.isPartitionAssigned
                    self.unassigned_partitions.append((topic_id, i))
            total += count
        self.minimum_member_quota, self.remaining_members_to_get_an_extra_partition = divmod(total, len(self.member_ids))
        self.maybe_revoke_partitions()
        self.assign_remaining_partitions()
        return {mid: {t: frozenset(parts) for t, parts in assignment.items() if parts}
                for mid, assignment in self.target_assignment.items()}

    def maybe_revoke_partitions(self) -> None:
        member_count = len(self.member_ids)
        for member_index, member_id in enumerate(self.member_ids):
            old_assignment = self.current.get(member_id, {})
            new_assignment = {t: set(parts) for t, parts in old_assignment.items()}
            quota = self.minimum_member_quota
            quota_has_extra_partition = False
            if self.remaining_members_to_get_an_extra_partition > 0:
                quota += 1
                quota_has_extra_partition = True
            for topic_id, partitions in old_assignment.items():
                if topic_id in self.subscribed_topic_ids:
                    if len(partitions) <= quota:
                        quota -= len(partitions)
                    else:
                        for partition in sorted(partitions):  # a HashSet of small ints: ascending
                            if quota > 0:
                                quota -= 1
                            else:
                                new_assignment[topic_id].discard(partition)
                                self.unassigned_partitions.append((topic_id, partition))
                else:
                    new_assignment.pop(topic_id, None)  # "Remove the entire topic."
            # "Give up the extra partition quota for another member to claim, unless this member is
            # one of the last remainingMembersToGetAnExtraPartition members in the list"
            if (quota > 0 and quota_has_extra_partition
                    and member_count - member_index > self.remaining_members_to_get_an_extra_partition):
                quota -= 1
                quota_has_extra_partition = False
            if quota > 0:
                self.unfilled_members.append((member_id, quota))
            if quota_has_extra_partition:
                self.remaining_members_to_get_an_extra_partition -= 1
            self.target_assignment[member_id] = new_assignment

    def assign_remaining_partitions(self) -> None:
        index = 0
        for member_id, remaining_quota in self.unfilled_members:
            assignment = self.target_assignment[member_id]
            for _ in range(remaining_quota):
                if index >= len(self.unassigned_partitions):
                    break
                topic_id, partition = self.unassigned_partitions[index]
                index += 1
                assignment.setdefault(topic_id, set()).add(partition)
        if index < len(self.unassigned_partitions):
            raise PartitionAssignorException("Partitions were left unassigned")
