"""The group coordinator's side of KIP-848 over one consumer group: an immutable :class:`Group`
and the functions Kafka 4.1's ``GroupMetadataManager`` runs on it.

``heartbeat``  ``consumerGroupHeartbeat`` (the request's validation in
               ``GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid`` first):
               a leave at epoch -1 (or a static member's at -2); otherwise the member is found
               or created (a static member by its instance id, which may replace a departed
               one) and its epoch checked, the group epoch bumped when a member or a
               subscription changed, the target assignment recomputed when the group epoch
               passed it, the member reconciled, its session timer restarted;
``expire``     the session and rebalance timers (``scheduleConsumerGroupSessionTimeout``,
               ``scheduleConsumerGroupRebalanceTimeout``): a member fenced;
``state``      ``ConsumerGroup.maybeUpdateGroupState``.

Static members (KIP-345 in KIP-848's form): a request with an instance id is a static member's.
At epoch 0 it joins: a new member if nobody holds the instance id, UNRELEASED_INSTANCE_ID if a
member holds it at any epoch but -2, else it replaces that departed member (its assignment and
target carried over to the new member id, ``getOrMaybeSubscribeStaticConsumerGroupMember`` and
``replaceMember``). At other epochs the instance id must name a member (UNKNOWN_MEMBER_ID) and that
member must be the request's member id (FENCED_INSTANCE_ID). A leave at epoch -2 keeps the member
and its assignment at epoch -2 (``consumerGroupStaticMemberGroupLeave``) until it is replaced or
its session runs out; a leave at -1 fences it as a dynamic member's does.

Each function returns the new group and a log: ``("bump", epoch)``, ``("target", epoch)``,
``("fenced", member id, why)``, ``("downgrade", why)`` where Kafka converts the group to a
classic one (only classic members left: :mod:`model.kip848.classic`), and ``("breach", what)``
where Kafka's own state check would throw (``ConsumerGroup.addPartitionEpochs``: "Cannot set the
epoch of ... because the partition is still owned"), which a correct coordinator never reaches.
"""

from __future__ import annotations

from typing import NamedTuple

from model.kip848.assignment import NO_EPOCH, UNREVOKED_PARTITIONS, Member, reconcile, target_assignment
from model.java_order import hash_map_order, timeline_capacity, timeline_order

# ConsumerGroupHeartbeatRequest's epochs
JOIN_EPOCH = 0
LEAVE_EPOCH = -1  # LEAVE_GROUP_MEMBER_EPOCH
STATIC_LEAVE_EPOCH = -2  # LEAVE_GROUP_STATIC_MEMBER_EPOCH

EMPTY, ASSIGNING, RECONCILING, STABLE = "EMPTY", "ASSIGNING", "RECONCILING", "STABLE"

NONE = "NONE"
FENCED_MEMBER_EPOCH = "FENCED_MEMBER_EPOCH"
UNKNOWN_MEMBER_ID = "UNKNOWN_MEMBER_ID"
INVALID_REQUEST = "INVALID_REQUEST"
GROUP_ID_NOT_FOUND = "GROUP_ID_NOT_FOUND"
UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"
STALE_MEMBER_EPOCH = "STALE_MEMBER_EPOCH"
UNRELEASED_INSTANCE_ID = "UNRELEASED_INSTANCE_ID"
FENCED_INSTANCE_ID = "FENCED_INSTANCE_ID"


class Request(NamedTuple):
    """ConsumerGroupHeartbeatRequest: None in an optional field means "unchanged"."""

    member_id: str
    epoch: int
    rebalance_timeout_ms: int = -1
    subscribed: tuple | None = None  # SubscribedTopicNames
    owned: frozenset | None = None  # TopicPartitions
    instance_id: str | None = None  # InstanceId: a static member's, sent in every request


class Commit(NamedTuple):
    """OffsetCommit v9+ from a consumer-protocol member: GenerationIdOrMemberEpoch is its epoch."""

    member_id: str
    epoch: int
    partitions: frozenset = frozenset()
    instance_id: str | None = None  # GroupInstanceId (ConsumerGroup.validateOffsetCommit does not read it)


class Response(NamedTuple):
    """ConsumerGroupHeartbeatResponse."""

    error: str
    member_id: str = ""
    epoch: int = 0
    interval_ms: int = 0
    assignment: frozenset | None = None  # sent on a full request or when the assignment changed


class Group(NamedTuple):
    """ConsumerGroup: its epochs, members, target assignment, partition epochs and timers."""

    epoch: int = 0  # groupEpoch (0: not created yet)
    assignment_epoch: int = 0  # the target assignment's epoch
    members: tuple = ()  # Member, by member id
    target: tuple = ()  # (member id, frozenset), by member id
    partition_epochs: tuple = ()  # per partition: the owner's epoch, NO_EPOCH when free
    sessions: tuple = ()  # (member id, deadline ms)
    rebalances: tuple = ()  # (member id, epoch, deadline ms)
    # the group's members map as Kafka keeps it (a TimelineHashMap), for the order the uniform
    # assignor meets them in (model.java_order): member ids in the order they were put, and
    # the table's capacity
    joined: tuple = ()
    capacity: int = 2

    def member(self, member_id: str) -> Member | None:
        for m in self.members:
            if m.member_id == member_id:
                return m
        return None

    def static_member(self, instance_id: str | None) -> Member | None:
        """ConsumerGroup.staticMember: the member holding *instance_id*, or None."""
        if instance_id is None:
            return None
        for m in self.members:
            if m.instance_id == instance_id:
                return m
        return None

    def target_of(self, member_id: str) -> frozenset:
        for mid, parts in self.target:
            if mid == member_id:
                return parts
        return frozenset()


def new_group(partitions: int) -> Group:
    return Group(partition_epochs=(NO_EPOCH,) * partitions)


def state(group: Group) -> str:
    """ConsumerGroup.maybeUpdateGroupState."""
    if not group.members:
        return EMPTY
    if group.epoch > group.assignment_epoch:
        return ASSIGNING
    if any(not m.reconciled_to(group.assignment_epoch) for m in group.members):
        return RECONCILING
    return STABLE


def heartbeat(group: Group, request: Request, now: int, config) -> tuple[Group, Response, list]:
    """GroupCoordinatorService.consumerGroupHeartbeat → GroupMetadataManager.consumerGroupHeartbeat."""
    invalid = _invalid(request)
    if invalid is not None:
        return group, Response(invalid, request.member_id, request.epoch), []
    if request.epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
        return _leave(group, request, config)
    return _regular(group, request, now, config)


def _invalid(request: Request) -> str | None:
    """throwIfConsumerGroupHeartbeatRequestIsInvalid (v1: MemberId is always required)."""
    if not request.member_id:
        return INVALID_REQUEST  # "MemberId can't be empty."
    if request.epoch == JOIN_EPOCH:
        if request.rebalance_timeout_ms == -1:
            return INVALID_REQUEST  # "RebalanceTimeoutMs must be provided in first request."
        if request.owned is None or request.owned:
            return INVALID_REQUEST  # "TopicPartitions must be empty when (re-)joining."
        if request.subscribed is None:
            return INVALID_REQUEST  # "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null"
    elif request.epoch == STATIC_LEAVE_EPOCH:
        if request.instance_id is None:
            return INVALID_REQUEST  # "InstanceId can't be null."
    elif request.epoch < STATIC_LEAVE_EPOCH:
        return INVALID_REQUEST  # "MemberEpoch is invalid."
    return None


def _leave(group: Group, request: Request, config) -> tuple[Group, Response, list]:
    """consumerGroupLeave: a dynamic member, or a static one at -1, is fenced at once (the response
    echoes the request's id and epoch); a static member at -2 stays, at epoch -2 with its
    assignment (consumerGroupStaticMemberGroupLeave: its pending revocations dropped, its timers
    left running)."""
    if group.epoch == 0:  # consumerGroup(groupId): "Group ... not found"
        return group, Response(GROUP_ID_NOT_FOUND, request.member_id, request.epoch), []
    if request.instance_id is None:
        member = group.member(request.member_id)
        if member is None:
            return group, Response(UNKNOWN_MEMBER_ID, request.member_id, request.epoch), []
    else:
        member = group.static_member(request.instance_id)
        error = _static_error(member, request)
        if error is not None:
            return group, Response(error, request.member_id, request.epoch), []
        if request.epoch == STATIC_LEAVE_EPOCH:
            left = member._replace(epoch=STATIC_LEAVE_EPOCH, revoking=frozenset())
            log: list = [("static_left", member.member_id)]
            group = _put_member(group, left, member, log)
            return group, Response(NONE, member.member_id, STATIC_LEAVE_EPOCH), log
    group, log = fence(group, member.member_id, "left", config)
    return group, Response(NONE, request.member_id, request.epoch), log


def _static_error(member: Member | None, request: Request) -> str | None:
    """throwIfStaticMemberIsUnknown, then throwIfInstanceIdIsFenced."""
    if member is None:
        return UNKNOWN_MEMBER_ID  # "Instance id ... is unknown."
    if member.member_id != request.member_id:
        return FENCED_INSTANCE_ID  # "... was fenced by member ..."
    return None


def _epoch_error(member: Member, received: int, owned: frozenset | None, config) -> str | None:
    """throwIfConsumerGroupMemberEpochIsInvalid."""
    if received > member.epoch:
        return FENCED_MEMBER_EPOCH  # "has a greater member epoch"
    if received < member.epoch:
        # "the response with the bumped epoch may have been lost"
        subset = owned is not None and owned <= member.assigned
        if received != member.previous_epoch or not subset:
            return FENCED_MEMBER_EPOCH
    return None


def _regular(group: Group, request: Request, now: int, config) -> tuple[Group, Response, list]:
    """consumerGroupHeartbeat(context, groupId, memberId, memberEpoch, ...)."""
    log: list = []
    before = group  # the group as the handler reads it (its records are replayed after it returns)
    if group.epoch == 0 and request.epoch != JOIN_EPOCH:
        # getOrMaybeCreateConsumerGroup(groupId, createIfNotExists=false): "Consumer group ... not found."
        return group, Response(GROUP_ID_NOT_FOUND, request.member_id, request.epoch), []
    replaced = None  # a departed static member this one replaces
    if request.instance_id is None:  # getOrMaybeSubscribeDynamicConsumerGroupMember
        known = member = group.member(request.member_id)
        if member is None:
            if request.epoch != JOIN_EPOCH:  # getOrMaybeCreateMember(memberId, false)
                return group, Response(UNKNOWN_MEMBER_ID, request.member_id, request.epoch), []
            member = Member(request.member_id)
        error = _epoch_error(member, request.epoch, request.owned, config)
    else:
        group, known, member, replaced, error = _static(group, request, config, log)
    if error is not None:
        return group, Response(error, request.member_id, request.epoch), []
    # 1. Create or update the member; bump the group epoch if it is new or its subscription changed
    updated = member
    if request.rebalance_timeout_ms != -1:
        updated = updated._replace(rebalance_timeout_ms=request.rebalance_timeout_ms)
    if request.subscribed is not None:
        updated = updated._replace(subscribed=tuple(sorted(request.subscribed)))
    bump = group.epoch == 0 or (updated.subscribed != member.subscribed)
    group_epoch = group.epoch + 1 if bump else group.epoch
    if bump:
        group = group._replace(epoch=group_epoch)
        log.append(("bump", group_epoch))
    # 2. The target assignment, recomputed at the group epoch when it passed the target's (a
    #    replaced static member is left out: updateTargetAssignment's removeMember(previousMemberId))
    if group_epoch > group.assignment_epoch:
        members = [m for m in group.members if m.member_id not in (updated.member_id, replaced)] + [updated]
        target = targets(group, members, before, config)
        group = group._replace(assignment_epoch=group_epoch, target=tuple(sorted(target.items())))
        log.append(("target", group_epoch))
    # 3. Reconcile (maybeReconcile) unless the member is reconciled to the target already
    if not updated.reconciled_to(group.assignment_epoch):
        before = updated
        updated = reconcile(updated, group.assignment_epoch, group.target_of(updated.member_id),
                            lambda p: group.partition_epochs[p], request.owned, config.broken)
        if updated != before:
            if updated.state == UNREVOKED_PARTITIONS:
                group = _set_rebalance(group, updated.member_id,
                                       (updated.epoch, now + updated.rebalance_timeout_ms))
            else:
                group = _set_rebalance(group, updated.member_id, None)
    group = _put_member(group, updated, known, log)
    group = _set_session(group, updated.member_id, now + config.session_timeout_ms)
    full = (request.rebalance_timeout_ms != -1 and request.subscribed is not None and request.owned is not None)
    changed = updated.assigned != member.assigned
    send = request.epoch == JOIN_EPOCH or full or changed
    if config.is_broken("assignment_only_when_changed"):
        send = changed
    return group, Response(NONE, updated.member_id, updated.epoch, config.heartbeat_interval_ms,
                           updated.assigned if send else None), log


def targets(group: Group, members: list, before: Group, config) -> dict:
    """updateTargetAssignment's ``TargetAssignmentBuilder.build``: the target of every one of
    *members* (the group's, with the heartbeat's member added or updated and a replaced static
    member left out) by the world's assignor, from the current targets of *group*; the uniform
    assignor meets the members in the order of the builder's HashMap, filled from the members map
    of *before* (the group as the handler read it) in its TimelineHashMap order, then with the
    members that were not in it."""
    if config.assignor != "uniform":  # range sorts the members itself: no order to compute
        return target_assignment(members, config.partitions, config.broken, config.assignor)
    ids = [m.member_id for m in members]
    known = set(before.joined)
    inserted = [mid for mid in timeline_order(before.joined, before.capacity) if mid in ids]
    added = [mid for mid in ids if mid not in known]
    order = hash_map_order(inserted + added, max_size=len(before.joined) + len(added))
    return target_assignment(members, config.partitions, config.broken, config.assignor, dict(group.target), order)


def _static(group: Group, request: Request, config, log: list):
    """getOrMaybeSubscribeStaticConsumerGroupMember: (group, the member as the group knew it or None,
    the member to update, the member id it replaced or None, the error or None). A replacement
    (replaceMember) happens at once in the returned group: the departed member removed with its
    partition epochs and its target, the new one put in its place at epoch 0 with its assignment and
    the departed one's target. Kafka leaves the departed member's timers scheduled, to find nobody
    when they run; the model drops them (the same, seen from outside)."""
    existing = group.static_member(request.instance_id)
    if request.epoch != JOIN_EPOCH:
        error = _static_error(existing, request)
        if error is None:
            error = _epoch_error(existing, request.epoch, request.owned, config)
        return group, existing, existing, None, error
    if existing is None:  # "New static member."
        return group, None, Member(request.member_id, request.instance_id), None, None
    if existing.epoch != STATIC_LEAVE_EPOCH and not config.is_broken("static_unreleased_unchecked"):
        # throwIfInstanceIdIsUnreleased: "... cannot join the group because the instance id is owned by ..."
        return group, existing, existing, None, UNRELEASED_INSTANCE_ID
    # "Copy the member but with its new member id": epoch and previous epoch 0
    new = existing._replace(member_id=request.member_id, epoch=JOIN_EPOCH, previous_epoch=JOIN_EPOCH)
    if config.is_broken("static_duplicate_member") and existing.member_id != new.member_id:
        # the departed member kept beside its replacement, which starts afresh
        return group, None, Member(request.member_id, request.instance_id), None, None
    log.append(("static_replaced", existing.member_id, new.member_id))
    target = group.target_of(existing.member_id)
    group = _remove_member(group, existing)
    group = group._replace(target=tuple(sorted(group.target + ((new.member_id, target),))))
    group = _put_member(group, new, None, log)
    return group, new, new, existing.member_id, None


def _remove_member(group: Group, member: Member) -> Group:
    """removeMember, with the tombstones of its target and its timers."""
    epochs = list(group.partition_epochs)
    for p in member.assigned | member.revoking:
        if epochs[p] == member.epoch:  # removePartitionEpochs: only at the expected epoch
            epochs[p] = NO_EPOCH
    mid = member.member_id
    # its current-assignment tombstone is replayed as a put at epoch -1 before the member is removed
    capacity = timeline_capacity(group.capacity, len(group.joined)) if mid in group.joined else group.capacity
    return group._replace(
        members=tuple(m for m in group.members if m.member_id != mid),
        joined=tuple(j for j in group.joined if j != mid), capacity=capacity,
        target=tuple(t for t in group.target if t[0] != mid),
        partition_epochs=tuple(epochs),
        sessions=tuple(s for s in group.sessions if s[0] != mid),
        rebalances=tuple(r for r in group.rebalances if r[0] != mid))


def commit(group: Group, request: Commit, config) -> tuple[str, list]:
    """OffsetMetadataManager.validateOffsetCommit → ConsumerGroup.validateOffsetCommit (v9+): the
    error every partition is answered with, and ``("committed", member id, epoch)`` when accepted.
    A group that does not exist: GROUP_ID_NOT_FOUND for an epoch >= 0 (v9+), else a simple group
    takes the offsets; an epoch < 0 to a group without members is accepted; an unknown member is
    UNKNOWN_MEMBER_ID; any epoch but the member's is STALE_MEMBER_EPOCH (validateMemberEpoch)."""
    if group.epoch == 0:
        if request.epoch >= 0:
            return GROUP_ID_NOT_FOUND, []
        return NONE, [("committed", request.member_id, request.epoch)]
    if request.epoch < 0 and not group.members:
        return NONE, [("committed", request.member_id, request.epoch)]
    member = group.member(request.member_id)
    if member is None:
        return UNKNOWN_MEMBER_ID, []
    if request.epoch != member.epoch and not config.is_broken("commit_epoch_unchecked"):
        return STALE_MEMBER_EPOCH, []
    return NONE, [("committed", request.member_id, request.epoch)]


def fence(group: Group, member_id: str, why: str, config) -> tuple[Group, list]:
    """consumerGroupFenceMember: the member removed (its partition epochs with it:
    ConsumerGroup.removeMember → maybeRemovePartitionEpoch; its target tombstoned), the group
    epoch bumped, its timers cancelled."""
    member = group.member(member_id)
    if config.is_broken("fenced_partitions_kept"):
        member = member._replace(assigned=frozenset(), revoking=frozenset())
    group = _remove_member(group, member)._replace(epoch=group.epoch + 1)
    log = [("fenced", member_id, why), ("bump", group.epoch)]
    if group.members and all(m.classic is not None for m in group.members):
        # validateOnlineDowngradeWithFencedMembers (group.consumer.migration.policy bidirectional):
        # Kafka converts the group to a classic group here instead (convertToClassicGroup)
        log.append(("downgrade", f"only classic members are left once {member_id} is fenced"))
    return group, log


def next_due(group: Group) -> int | None:
    """The earliest deadline of a session or rebalance timer, or None."""
    dues = [d for _, d in group.sessions] + [d for _, _, d in group.rebalances]
    return min(dues) if dues else None


def expire(group: Group, now: int, config) -> tuple[Group, list]:
    """Every timer due at *now*, in deadline order (then session before rebalance, then member id:
    Kafka's timer wheel fires same-instant timers in an order the model fixes this way)."""
    log: list = []
    while True:
        due = [(d, 0, mid, None) for mid, d in group.sessions if d <= now]
        due += [(d, 1, mid, epoch) for mid, epoch, d in group.rebalances if d <= now]
        if not due:
            return group, log
        _, kind, mid, epoch = min(due)
        if kind == 0:
            group, more = fence(group, mid, "session expired", config)
        else:
            group = _set_rebalance(group, mid, None)
            member = group.member(mid)
            more = []
            # "if (member.memberEpoch() == memberEpoch)": fences only a member still at that epoch
            if member is not None and member.epoch == epoch and not config.is_broken("rebalance_timeout_ignored"):
                group, more = fence(group, mid, "rebalance timeout", config)
        log += more


def _put_member(group: Group, new: Member, old: Member | None, log: list) -> Group:
    """ConsumerGroup.updateMember: the member replaced, its partition epochs moved
    (maybeUpdatePartitionEpoch: removed at the old epoch, added at the new one)."""
    epochs = list(group.partition_epochs)
    if old is not None:
        for p in old.assigned | old.revoking:
            if epochs[p] == old.epoch:
                epochs[p] = NO_EPOCH
    for p in sorted(new.assigned | new.revoking):
        if epochs[p] == NO_EPOCH or epochs[p] < new.epoch:
            epochs[p] = new.epoch
        else:  # addPartitionEpochs: "Cannot set the epoch ... because the partition is still owned"
            log.append(("breach", f"partition {p} given to {new.member_id} at epoch {new.epoch} while "
                                  f"still owned at epoch {epochs[p]}"))
    members = tuple(sorted([m for m in group.members if m.member_id != new.member_id] + [new]))
    joined, capacity = group.joined, group.capacity
    if new != old:  # a record of the member is written and replayed: members.put
        capacity = timeline_capacity(capacity, len(joined))
        if new.member_id not in joined:  # added; its current-assignment record puts it again
            joined += (new.member_id,)
            capacity = timeline_capacity(capacity, len(joined))
    return group._replace(members=members, partition_epochs=tuple(epochs), joined=joined, capacity=capacity)


def _set_session(group: Group, member_id: str, deadline: int) -> Group:
    return group._replace(sessions=tuple(sorted([s for s in group.sessions if s[0] != member_id]
                                                + [(member_id, deadline)])))


def _set_rebalance(group: Group, member_id: str, timer: tuple | None) -> Group:
    rest = [r for r in group.rebalances if r[0] != member_id]
    if timer is not None:
        rest.append((member_id,) + timer)
    return group._replace(rebalances=tuple(sorted(rest)))
