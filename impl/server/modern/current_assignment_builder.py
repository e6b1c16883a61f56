"""``CurrentAssignmentBuilder`` (``org.apache.kafka.coordinator.group.modern.consumer``): one
member's next state towards its target assignment.

A partition in the target that another member still owns (its partition epoch is not -1) is held
back until it is released; partitions leaving the member are first revoked (the member waits in
UNREVOKED_PARTITIONS, at its epoch, until its heartbeat no longer reports them), and only then
does it move to the next epoch. That order is what gives every partition one owner.
"""

from __future__ import annotations

from typing import Callable, Optional

from impl.errors import FencedMemberEpochException
from impl.server.modern.consumer_group_member import ConsumerGroupMember, MemberState


class CurrentAssignmentBuilder:
    def __init__(self, member: ConsumerGroupMember):
        self.member = member
        self.target_assignment_epoch = 0
        self.target_assignment: dict = {}
        self.current_partition_epoch: Callable[[str, int], int] = lambda topic_id, partition: -1
        self.owned_topic_partitions: Optional[list] = None

    def with_target_assignment(self, epoch: int, assignment: dict) -> "CurrentAssignmentBuilder":
        self.target_assignment_epoch, self.target_assignment = epoch, assignment
        return self

    def with_current_partition_epoch(self, current_partition_epoch) -> "CurrentAssignmentBuilder":
        self.current_partition_epoch = current_partition_epoch
        return self

    def with_owned_topic_partitions(self, owned) -> "CurrentAssignmentBuilder":
        """The request's TopicPartitions (ConsumerGroupHeartbeatTopicPartitions), or None."""
        self.owned_topic_partitions = owned
        return self

    def build(self) -> ConsumerGroupMember:
        member = self.member
        if member.state is MemberState.STABLE:
            # "we verify if a newer epoch (or target assignment) is available"
            if member.member_epoch != self.target_assignment_epoch:
                return self._compute_next_assignment(member.member_epoch, member.assigned_partitions)
            return member
        if member.state is MemberState.UNREVOKED_PARTITIONS:
            # "If it does [still own any of the revoked partitions], we cannot progress."
            if self._owns_revoked_partitions(member.partitions_pending_revocation):
                return member
            # "it can transition to the next epoch (current + 1)"
            return self._compute_next_assignment(member.member_epoch + 1, member.assigned_partitions)
        if member.state is MemberState.UNRELEASED_PARTITIONS:
            # "This will assign any of the unreleased partitions when they become available."
            return self._compute_next_assignment(member.member_epoch, member.assigned_partitions)
        # UNKNOWN: "fence the member to force it to rejoin the group without any partitions"
        if self.owned_topic_partitions is None or self.owned_topic_partitions:
            raise FencedMemberEpochException("The consumer group member is in a unknown state. "
                                             "The member must abandon all its partitions and rejoin.")
        return self._compute_next_assignment(self.target_assignment_epoch, member.assigned_partitions)

    def _owns_revoked_partitions(self, assignment: dict) -> bool:
        """ownsRevokedPartitions: owned partitions not sent (null) count as still owned."""
        if self.owned_topic_partitions is None:
            return True
        for tp in self.owned_topic_partitions:
            pending = assignment.get(tp.topic_id, frozenset())
            if any(p in pending for p in tp.partitions):
                return True
        return False

    def _compute_next_assignment(self, member_epoch: int, member_assigned_partitions: dict) -> ConsumerGroupMember:
        member = self.member
        has_unreleased = False
        new_assigned, new_revocation, new_pending_assignment = {}, {}, {}
        for topic_id in sorted(set(self.target_assignment) | set(member_assigned_partitions)):
            target = self.target_assignment.get(topic_id, frozenset())
            current = member_assigned_partitions.get(topic_id, frozenset())
            assigned = current & target  # New Assigned Partitions = Previous Assigned Partitions ∩ Target
            revocation = current - assigned  # Partitions Pending Revocation = Previous Assigned - New Assigned
            pending = set(target - assigned)  # Partitions Pending Assignment = Target - New Assigned - Unreleased
            mine = member.partitions_pending_revocation.get(topic_id, frozenset())
            unreleased = {p for p in pending
                          if self.current_partition_epoch(topic_id, p) != -1 and p not in mine}
            pending -= unreleased
            has_unreleased = bool(unreleased) or has_unreleased
            if assigned:
                new_assigned[topic_id] = assigned
            if revocation:
                new_revocation[topic_id] = revocation
            if pending:
                new_pending_assignment[topic_id] = frozenset(pending)
        if new_revocation and self._owns_revoked_partitions(new_revocation):
            # "the member remains in its current epoch and requests the revocation of those partitions"
            return member.update_member_epoch(member_epoch, state=MemberState.UNREVOKED_PARTITIONS,
                                              assigned_partitions=new_assigned,
                                              partitions_pending_revocation=new_revocation)
        if new_pending_assignment:
            # "the partitions are directly added to the assigned partitions set"
            for topic_id, partitions in new_pending_assignment.items():
                new_assigned[topic_id] = new_assigned.get(topic_id, frozenset()) | partitions
            state = MemberState.UNRELEASED_PARTITIONS if has_unreleased else MemberState.STABLE
        elif has_unreleased:
            state = MemberState.UNRELEASED_PARTITIONS
        else:
            state = MemberState.STABLE
        return member.update_member_epoch(self.target_assignment_epoch, state=state, assigned_partitions=new_assigned,
                                          partitions_pending_revocation={})
