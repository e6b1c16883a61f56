"""The coordinator's two assignment computations, over one topic of partitions 0..n-1.

``target_assignment``: what each member should own at the group epoch (``TargetAssignmentBuilder``
with the world's server assignor, :attr:`model.kip848.config.Config.assignor`, both in their
homogeneous case — every member subscribed to the one topic):

- ``range`` (``RangeAssignor.assignHomogeneousGroup``): members sorted by instance id, then member
  id; contiguous ranges, the first ``n % members`` one partition larger. A pure function of the
  members.
- ``uniform``, Kafka's default (``UniformHomogeneousAssignmentBuilder``): sticky. Each member, in
  the order the coordinator iterates them (:mod:`model.java_order`), keeps up to its quota of
  its current target (``n // members``, one more while extra partitions remain to be handed out,
  unless it has room to spare and enough members are left to take them), giving up the rest; the
  free partitions — those nobody held, ascending, then those given up — are then dealt to the
  members with room, in the same order.

Which assignor runs changes the targets, never a rule of reconciliation.

``reconcile``: one member's next state towards its target (``CurrentAssignmentBuilder.build`` and
``computeNextAssignment``, quoted rule by rule below). A partition still owned by another member
(its partition epoch is not -1) is not given until it is released: that is what keeps a
partition with one owner while members move at their own pace.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

STABLE = "STABLE"
UNREVOKED_PARTITIONS = "UNREVOKED_PARTITIONS"
UNRELEASED_PARTITIONS = "UNRELEASED_PARTITIONS"
NO_EPOCH = -1  # ConsumerGroup.currentPartitionEpoch of a partition nobody owns


class Member(NamedTuple):
    """A ConsumerGroupMember, as the coordinator keeps it."""

    member_id: str
    instance_id: str | None = None
    epoch: int = 0  # memberEpoch
    previous_epoch: int = 0  # previousMemberEpoch
    state: str = STABLE  # MemberState (group-coordinator's: STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS)
    assigned: frozenset = frozenset()  # assignedPartitions
    revoking: frozenset = frozenset()  # partitionsPendingRevocation
    subscribed: tuple = ()  # subscribedTopicNames
    rebalance_timeout_ms: int = -1
    classic: tuple | None = None  # a classic member's ClassicMemberMetadata (model.kip848.classic.Classic), else None

    def reconciled_to(self, target_epoch: int) -> bool:
        """ModernGroupMember.isReconciledTo."""
        return self.state == STABLE and self.epoch == target_epoch


def target_assignment(members, partitions: int, broken=frozenset(), assignor: str = "range",
                      current: dict | None = None, order: list | None = None) -> dict:
    """{member id: frozenset of partitions} for *members* (those subscribed to the topic share
    it; the others get nothing) by the server assignor *assignor*; ``uniform`` also needs each
    member's *current* target ({member id: frozenset}) and the *order* the coordinator iterates
    the member ids in."""
    if assignor == "uniform":
        return _uniform(members, partitions, current or {}, order)
    subscribed = sorted((m for m in members if m.subscribed),
                        key=lambda m: (m.instance_id is None, m.instance_id or "", m.member_id))
    target = {m.member_id: frozenset() for m in members}
    if not subscribed:
        return target
    quota, extra = divmod(partitions, len(subscribed))
    start = 0
    for i, m in enumerate(subscribed):
        size = quota + (1 if i < extra else 0)
        target[m.member_id] = frozenset(range(start, start + size))
        if "target_overlaps" not in broken:
            start += size
    return target


def _uniform(members, partitions: int, current: dict, order: list | None) -> dict:
    """UniformHomogeneousAssignmentBuilder.build: maybeRevokePartitions, then
    assignRemainingPartitions."""
    if any(not m.subscribed for m in members) and any(m.subscribed for m in members):
        raise ValueError("members with different subscriptions: the uniform assignor's heterogeneous "
                         "builder is not modelled")
    ids = [m.member_id for m in members]
    order = ids if order is None else list(order)
    if sorted(order) != sorted(ids):
        raise ValueError(f"the iteration order {order} does not name the members {ids}")
    if not ids or not members[0].subscribed:
        return {mid: frozenset() for mid in ids}
    held = set().union(*current.values()) if current else set()
    unassigned = [p for p in range(partitions) if p not in held]  # groupSpec.isPartitionAssigned
    minimum, extra = divmod(partitions, len(order))
    target, unfilled = {}, []
    for index, mid in enumerate(order):
        old = current.get(mid, frozenset())
        quota, has_extra = minimum, False
        if extra > 0:
            quota, has_extra = quota + 1, True
        kept = set(old)
        if len(old) <= quota:
            quota -= len(old)
        else:
            for p in sorted(old):  # a HashSet of small partition numbers iterates in ascending order
                if quota > 0:
                    quota -= 1
                else:
                    kept.discard(p)
                    unassigned.append(p)
        # "Give up the extra partition quota for another member to claim, unless this member is one
        # of the last remainingMembersToGetAnExtraPartition members in the list"
        if quota > 0 and has_extra and len(order) - index > extra:
            quota, has_extra = quota - 1, False
        if quota > 0:
            unfilled.append((mid, quota))
        if has_extra:
            extra -= 1
        target[mid] = kept
    dealt = 0
    for mid, quota in unfilled:  # assignRemainingPartitions
        for _ in range(quota):
            if dealt == len(unassigned):
                break
            target[mid].add(unassigned[dealt])
            dealt += 1
    if dealt < len(unassigned):
        raise ValueError("Partitions were left unassigned")  # PartitionAssignorException
    return {mid: frozenset(parts) for mid, parts in target.items()}


def reconcile(member: Member, target_epoch: int, target: frozenset, partition_epoch: Callable[[int], int],
              owned: frozenset | None, broken=frozenset()) -> Member:
    """CurrentAssignmentBuilder.build: *member* moved towards *target* at *target_epoch*.
    *owned* is the request's TopicPartitions (None: not sent, which counts as still owning what
    is being revoked — ``ownsRevokedPartitions``)."""
    if member.state == STABLE:
        # "we verify if a newer epoch (or target assignment) is available"
        if member.epoch != target_epoch:
            return _next_assignment(member, member.epoch, target_epoch, target, partition_epoch, owned, broken)
        return member
    if member.state == UNREVOKED_PARTITIONS:
        # "If it does [still own a revoked partition], we cannot progress."
        if _owns(owned, member.revoking) and "revocation_not_awaited" not in broken:
            return member
        # "it can transition to the next epoch (current + 1)"
        return _next_assignment(member, member.epoch + 1, target_epoch, target, partition_epoch, owned, broken)
    # UNRELEASED_PARTITIONS: "This will assign any of the unreleased partitions when they become available."
    return _next_assignment(member, member.epoch, target_epoch, target, partition_epoch, owned, broken)


def _owns(owned: frozenset | None, revoking: frozenset) -> bool:
    """CurrentAssignmentBuilder.ownsRevokedPartitions: null owned partitions count as owning."""
    return owned is None or bool(owned & revoking)


def _next_assignment(member: Member, epoch: int, target_epoch: int, target: frozenset, partition_epoch,
                     owned, broken) -> Member:
    """CurrentAssignmentBuilder.computeNextAssignment(memberEpoch, memberAssignedPartitions)."""
    assigned = member.assigned & target  # "New Assigned Partitions = Previous Assigned Partitions ∩ Target"
    revoking = member.assigned - assigned  # "Partitions Pending Revocation = Previous Assigned - New Assigned"
    pending = target - assigned  # "Partitions Pending Assignment = Target - New Assigned - Unreleased"
    unreleased = frozenset(p for p in pending
                           if partition_epoch(p) != NO_EPOCH and p not in member.revoking)
    if "unreleased_assigned" not in broken:
        pending -= unreleased
    if revoking and _owns(owned, revoking):
        # "the member remains in its current epoch and requests the revocation of those partitions"
        return _with_epoch(member, epoch, UNREVOKED_PARTITIONS, assigned, revoking)
    if "epoch_past_target" in broken:
        target_epoch += 1
    if pending:
        # "the partitions are directly added to the assigned partitions set"
        return _with_epoch(member, target_epoch, UNRELEASED_PARTITIONS if unreleased else STABLE,
                           assigned | pending, frozenset())
    return _with_epoch(member, target_epoch, UNRELEASED_PARTITIONS if unreleased else STABLE, assigned, frozenset())


def _with_epoch(member: Member, epoch: int, state: str, assigned: frozenset, revoking: frozenset) -> Member:
    """ConsumerGroupMember.Builder.updateMemberEpoch: the old epoch becomes the previous one."""
    return member._replace(previous_epoch=member.epoch, epoch=epoch, state=state, assigned=assigned, revoking=revoking)
