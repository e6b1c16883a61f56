"""``ConsumerGroup`` (``org.apache.kafka.coordinator.group.modern.consumer``): a KIP-848 group's
epochs, members, target assignment and partition epochs, and its state.

The partition epochs (``currentPartitionEpoch``) say which epoch of which member holds a
partition now; ``updateMember`` moves them (removed at the old member's epoch, added at the new
one's), and adding one still held at a later or equal epoch is Kafka's own ``IllegalStateException``.
"""

from __future__ import annotations

import enum
from typing import Optional

from impl.errors import (GroupIdNotFoundException, IllegalStateException, StaleMemberEpochException,
                         UnknownMemberIdException, UnsupportedVersionException)
from impl.protocol import CONSUMER_PROTOCOL_TYPE
from impl.java_collections import grown_capacity, hash_map_key_order, timeline_key_order
from impl.server.modern.consumer_group_member import ConsumerGroupMember, MemberState


class ConsumerGroupState(enum.Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class ConsumerGroup:
    def __init__(self, group_id: str):
        self.group_id = group_id
        self.group_epoch = 0
        self.target_assignment_epoch = 0
        self.members: dict = {}  # member id -> ConsumerGroupMember, in the order they were put
        # the capacity of Kafka's members map (a TimelineHashMap): with the order above, the order it
        # iterates the members in (members_in_iteration_order)
        self.members_capacity = 2
        # the members map as the handler now running read it (read_by_handler): Kafka replays a
        # handler's records after it returns, so its TargetAssignmentBuilder iterates the map as it
        # was before the handler's own changes (a static member's replacement)
        self.members_as_read: tuple = ((), 2)
        self.static_members: dict = {}  # instance id -> member id (staticMembers)
        self.target_assignments: dict = {}  # member id -> {topic id: frozenset}
        self.current_partition_epochs: dict = {}  # topic id -> {partition: epoch}
        self.state = ConsumerGroupState.EMPTY

    # -- members ----------------------------------------------------------------------------

    def get_or_maybe_create_member(self, member_id: str, create_if_not_exists: bool) -> ConsumerGroupMember:
        member = self.members.get(member_id)
        if member is not None:
            return member
        if not create_if_not_exists:
            raise UnknownMemberIdException(f"Member {member_id} is not a member of group {self.group_id}.")
        return ConsumerGroupMember(member_id)

    def read_by_handler(self) -> None:
        """A handler that may compute the target assignment starts: what it reads of the members map."""
        self.members_as_read = (tuple(self.members), self.members_capacity)

    def compute_preferred_server_assignor(self, old_member, new_member) -> Optional[str]:
        """computePreferredServerAssignor: the server assignor most members name, *old_member*
        replaced by *new_member* (None: none names one). Stream.max keeps the first of equal counts,
        in the order of the HashMap the counts are copied into."""
        counts: dict = {}
        others = [m for mid, m in self.members.items() if mid not in (new_member.member_id, old_member.member_id)]
        for m in others + [new_member]:  # maybeUpdateServerAssignors: the old member's name out, the new one's in
            if m.server_assignor_name is not None:
                counts[m.server_assignor_name] = counts.get(m.server_assignor_name, 0) + 1
        best = None
        for name in hash_map_key_order(counts):
            if best is None or counts[name] > counts[best]:
                best = name
        return best

    def members_in_iteration_order(self) -> list:
        """The member ids as Kafka's ``members.forEach`` walks them (impl.java_collections)."""
        return timeline_key_order(self.members, self.members_capacity)

    def _put(self) -> None:
        """``members.put``: the table grows before it takes the key."""
        self.members_capacity = grown_capacity(self.members_capacity, len(self.members))

    def update_member(self, new_member: ConsumerGroupMember) -> None:
        old_member = self.members.get(new_member.member_id)
        if old_member != new_member:  # a record of the member is written and replayed
            self._put()
        self.members[new_member.member_id] = new_member
        if old_member is None:  # a new member: its current-assignment record puts it again
            self._put()
        self._maybe_update_partition_epoch(old_member, new_member)
        if new_member.instance_id is not None:  # updateStaticMember
            self.static_members[new_member.instance_id] = new_member.member_id
        self.maybe_update_group_state()

    def remove_member(self, member_id: str) -> None:
        if member_id in self.members:  # its current-assignment tombstone puts it at epoch -1 first
            self._put()
        old_member = self.members.pop(member_id, None)
        self._maybe_remove_partition_epoch(old_member)
        if old_member is not None and old_member.instance_id is not None:  # removeStaticMember
            self.static_members.pop(old_member.instance_id, None)
        self.maybe_update_group_state()

    def static_member_id(self, instance_id: Optional[str]) -> Optional[str]:
        return None if instance_id is None else self.static_members.get(instance_id)

    def static_member(self, instance_id: Optional[str]) -> Optional[ConsumerGroupMember]:
        """staticMember: the member holding *instance_id*, or None."""
        member_id = self.static_member_id(instance_id)
        return None if member_id is None else self.get_or_maybe_create_member(member_id, False)

    # -- classic members (Kafka 4.x's online migration) ---------------------------------------

    def num_classic_protocol_members(self) -> int:
        return sum(1 for m in self.members.values() if m.use_classic_protocol)

    def supports_classic_protocols(self, member_protocol_type: Optional[str], member_protocols) -> bool:
        """supportsClassicProtocols: the ``consumer`` protocol type, and a protocol every classic
        member supports (any, when there is none; a non-empty list, when the group is empty)."""
        if member_protocol_type != CONSUMER_PROTOCOL_TYPE:
            return False
        if not self.members:
            return bool(member_protocols)
        classic = [m.classic_member_metadata.supported_protocols for m in self.members.values()
                   if m.use_classic_protocol]
        return any(all(name in supported for supported in classic) for name in member_protocols)

    def waiting_on_unreleased_partition(self, member: ConsumerGroupMember) -> bool:
        """waitingOnUnreleasedPartition: a partition of its target it is not assigned yet is still
        owned by another member."""
        if member.state is not MemberState.UNRELEASED_PARTITIONS:
            return False
        for topic_id, partitions in self.target_assignment(member.member_id).items():
            assigned = member.assigned_partitions.get(topic_id, frozenset())
            if any(p not in assigned and self.current_partition_epoch(topic_id, p) != -1 for p in partitions):
                return True
        return False

    # -- epochs and the target assignment -----------------------------------------------------

    def set_group_epoch(self, epoch: int) -> None:
        self.group_epoch = epoch
        self.maybe_update_group_state()

    def set_target_assignment_epoch(self, epoch: int) -> None:
        self.target_assignment_epoch = epoch
        self.maybe_update_group_state()

    def target_assignment(self, member_id: str) -> dict:
        return self.target_assignments.get(member_id, {})

    def update_target_assignment(self, member_id: str, assignment: Optional[dict]) -> None:
        """A member's target (None: its tombstone)."""
        if assignment is None:
            self.target_assignments.pop(member_id, None)
        else:
            self.target_assignments[member_id] = assignment

    def current_partition_epoch(self, topic_id: str, partition: int) -> int:
        return self.current_partition_epochs.get(topic_id, {}).get(partition, -1)

    def _maybe_update_partition_epoch(self, old_member, new_member) -> None:
        self._maybe_remove_partition_epoch(old_member)
        self.add_partition_epochs(new_member.assigned_partitions, new_member.member_epoch)
        self.add_partition_epochs(new_member.partitions_pending_revocation, new_member.member_epoch)

    def _maybe_remove_partition_epoch(self, old_member) -> None:
        if old_member is not None:
            self.remove_partition_epochs(old_member.assigned_partitions, old_member.member_epoch)
            self.remove_partition_epochs(old_member.partitions_pending_revocation, old_member.member_epoch)

    def remove_partition_epochs(self, assignment: dict, expected_epoch: int) -> None:
        for topic_id, partitions in assignment.items():
            epochs = self.current_partition_epochs.get(topic_id)
            if epochs is None:
                continue
            for p in partitions:
                if epochs.get(p) == expected_epoch:  # else "still owned at a different epoch"
                    del epochs[p]
            if not epochs:
                del self.current_partition_epochs[topic_id]

    def add_partition_epochs(self, assignment: dict, epoch: int) -> None:
        for topic_id, partitions in assignment.items():
            epochs = self.current_partition_epochs.setdefault(topic_id, {})
            for p in sorted(partitions):
                previous = epochs.get(p)
                if previous is None or previous < epoch:
                    epochs[p] = epoch
                else:
                    raise IllegalStateException(f"Cannot set the epoch of {topic_id}-{p} to {epoch} because the "
                                                f"partition is still owned at epoch {previous}")

    # -- state --------------------------------------------------------------------------------

    def maybe_update_group_state(self) -> None:
        if not self.members:
            self.state = ConsumerGroupState.EMPTY
        elif self.group_epoch > self.target_assignment_epoch:
            self.state = ConsumerGroupState.ASSIGNING
        elif any(not m.is_reconciled_to(self.target_assignment_epoch) for m in self.members.values()):
            self.state = ConsumerGroupState.RECONCILING
        else:
            self.state = ConsumerGroupState.STABLE

    # -- offsets ------------------------------------------------------------------------------

    def validate_offset_commit(self, member_id: str, group_instance_id: Optional[str], member_epoch: int,
                               is_transactional: bool, api_version: int) -> None:
        """ConsumerGroup.validateOffsetCommit: raises UnknownMemberIdException,
        UnsupportedVersionException or StaleMemberEpochException."""
        if member_epoch < 0 and not self.members:
            return  # the admin client or a consumer without group management, to an empty group
        if is_transactional and member_epoch == -1 and member_id == "" and group_instance_id is None:
            return
        member = self.get_or_maybe_create_member(member_id, False)
        if not is_transactional and api_version < 9:
            raise UnsupportedVersionException("OffsetCommit version 9 or above must be used by members using "
                                              "the modern group protocol")
        if member_epoch != member.member_epoch:  # validateMemberEpoch
            raise StaleMemberEpochException(f"The received member epoch {member_epoch} does not match the "
                                            f"expected member epoch {member.member_epoch}.")


def group_not_found(group_id: str) -> GroupIdNotFoundException:
    return GroupIdNotFoundException(f"Consumer group {group_id} not found.")
