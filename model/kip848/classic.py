"""Classic members inside a consumer group: the coordinator's side of Kafka 4.x's online
migration (KIP-848's "Upgrade/Downgrade"), over the same :class:`~model.kip848.coordinator.Group`.

A consumer that still speaks the classic protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
can join a consumer group that has members: ``GroupMetadataManager.classicGroupJoin`` hands its
JoinGroup to ``classicGroupJoinToConsumerGroup`` when the group is a non-empty consumer group. It
becomes a member like any other — subscribed, counted in the target assignment, reconciled by
``CurrentAssignmentBuilder`` — whose "heartbeat" is its JoinGroup: the partitions it reports as
owned (the ``ownedPartitions`` of its ConsumerProtocol subscription) are what reconciliation
reads, and the JoinGroup's generation is its member epoch. Its SyncGroup answers its assigned
partitions (never those pending revocation); its Heartbeat answers REBALANCE_IN_PROGRESS while it
must rejoin (the group epoch passed its epoch, it has partitions to revoke, or partitions it
waited for are free); its LeaveGroup fences it like a consumer's leave.

``join``       ``classicGroupJoinToConsumerGroup`` (``GroupCoordinatorService.joinGroup``'s session
               timeout bounds first);
``sync``       ``classicGroupSyncToConsumerGroup``;
``beat``       ``classicGroupHeartbeatToConsumerGroup``;
``leave``      ``classicGroupLeaveToConsumerGroup`` (one member identity).

``upgrade``    ``convertToConsumerGroup`` → ``ConsumerGroup.fromClassicGroup``: a classic group whose
               members use the consumer protocol becomes a consumer group when a member of the
               consumer protocol joins it (the join then goes on as any join to the group).

Where the group would change type otherwise, the model stops saying what happens and says so instead:
a JoinGroup to a group with no members goes to ``classicGroupJoinToClassicGroup`` (the group, if
any, becomes a classic group), and a fence that leaves only classic members converts the group to
a classic one (``consumerGroupFenceMembers`` → ``validateOnlineDowngradeWithFencedMembers``, with
``group.consumer.migration.policy`` at its default, ``bidirectional``). The first returns None for
the answer; the second answers as without the conversion and logs ``("downgrade", why)``: what
comes after is the classic protocol's, judged elsewhere.

Not modelled yet: static classic members (``getOrMaybeSubscribeStaticConsumerGroupMember`` with a
classic member, and the downgrade by a static replacement), the join and sync timers
(``scheduleConsumerGroupJoinTimeoutIfAbsent``, ``scheduleConsumerGroupSyncTimeout``: a classic member
that does not rejoin or sync within its rebalance timeout is fenced), the group size limits.
"""

from __future__ import annotations

from typing import NamedTuple

from model.kip848 import coordinator as coord
from model.kip848.assignment import UNRELEASED_PARTITIONS, UNREVOKED_PARTITIONS, Member, reconcile

PROTOCOL_TYPE = "consumer"  # ConsumerProtocol.PROTOCOL_TYPE
# GroupCoordinatorConfig: group.min.session.timeout.ms, group.max.session.timeout.ms (defaults)
MIN_SESSION_TIMEOUT_MS = 6_000
MAX_SESSION_TIMEOUT_MS = 1_800_000

NONE = coord.NONE
UNKNOWN_MEMBER_ID = coord.UNKNOWN_MEMBER_ID
MEMBER_ID_REQUIRED = "MEMBER_ID_REQUIRED"
ILLEGAL_GENERATION = "ILLEGAL_GENERATION"
REBALANCE_IN_PROGRESS = "REBALANCE_IN_PROGRESS"
INCONSISTENT_GROUP_PROTOCOL = "INCONSISTENT_GROUP_PROTOCOL"
INVALID_SESSION_TIMEOUT = "INVALID_SESSION_TIMEOUT"


class Join(NamedTuple):
    """JoinGroupRequest (v4+) with its ConsumerProtocol subscription, as the coordinator reads it."""

    member_id: str  # "" (UNKNOWN_MEMBER_ID): a new member, asked for its member id first
    protocols: tuple  # the protocol names, in the request's order (each with the same subscription)
    subscribed: tuple  # the subscription's topics
    owned: frozenset = frozenset()  # the subscription's ownedPartitions
    session_timeout_ms: int = 45_000
    rebalance_timeout_ms: int = 30_000
    protocol_type: str = PROTOCOL_TYPE


class Sync(NamedTuple):
    """SyncGroupRequest (v5: protocol type and name sent)."""

    member_id: str
    generation: int
    protocol_name: str | None
    protocol_type: str | None = PROTOCOL_TYPE


class Beat(NamedTuple):
    """HeartbeatRequest."""

    member_id: str
    generation: int


class Leave(NamedTuple):
    """LeaveGroupRequest v3+ with one member identity (a dynamic member's)."""

    member_id: str


class Answer(NamedTuple):
    """What the protocol fixes of an answer: the error; a JoinGroup's member id (None: any, a
    MEMBER_ID_REQUIRED carries one the coordinator made up), generation and protocol name; a
    SyncGroup's assignment."""

    error: str
    member_id: str | None = None
    generation: int = -1
    protocol_name: str | None = None
    assignment: frozenset | None = None


class Classic(NamedTuple):
    """ConsumerGroupMemberMetadataValue.ClassicMemberMetadata: what a classic member's JoinGroup
    told the coordinator (a member with it ``useClassicProtocol``)."""

    session_timeout_ms: int
    protocols: tuple  # names, in the JoinGroup's order: the first is the one the answers name


def classic_members(group: coord.Group) -> list:
    return [m for m in group.members if m.classic is not None]


def _supports(group: coord.Group, request: Join) -> bool:
    """ConsumerGroup.supportsClassicProtocols: the protocol type is ``consumer`` and one of the
    member's protocols is supported by every classic member (any, when there is none)."""
    if request.protocol_type != PROTOCOL_TYPE:
        return False
    if not group.members:
        return bool(request.protocols)
    classics = classic_members(group)
    return any(all(name in m.classic.protocols for m in classics) for name in request.protocols)


def join(group: coord.Group, request: Join, now: int, config) -> tuple[coord.Group, Answer | None, list]:
    """classicGroupJoin for a JoinGroup v4+ from a dynamic member: None for the answer when the
    group has no members (classicGroupJoinToClassicGroup takes it: the group becomes classic)."""
    if not MIN_SESSION_TIMEOUT_MS <= request.session_timeout_ms <= MAX_SESSION_TIMEOUT_MS:
        return group, Answer(INVALID_SESSION_TIMEOUT), []  # GroupCoordinatorService.joinGroup
    if not group.members:
        return group, None, [("classic_group", "a JoinGroup to a consumer group without members")]
    if not _supports(group, request):  # throwIfClassicProtocolIsNotSupported
        return group, Answer(INCONSISTENT_GROUP_PROTOCOL), []
    if not request.member_id:  # JoinGroupRequest.requiresKnownMemberId: a member id made up, no member yet
        return group, Answer(MEMBER_ID_REQUIRED), []
    log: list = []
    before = group  # as the handler reads it
    # getOrMaybeSubscribeDynamicConsumerGroupMember(..., createIfNotExists=true, useClassicProtocol=true):
    # no epoch check for a classic member
    known = member = group.member(request.member_id)
    if member is None:
        member = Member(request.member_id)
    updated = member._replace(rebalance_timeout_ms=request.rebalance_timeout_ms,
                              subscribed=tuple(sorted(request.subscribed)),
                              classic=Classic(request.session_timeout_ms, tuple(request.protocols)))
    group_epoch = group.epoch
    if updated.subscribed != member.subscribed:  # hasMemberSubscriptionChanged: bumpGroupEpoch
        group_epoch += 1
        group = group._replace(epoch=group_epoch)
        log.append(("bump", group_epoch))
    if group_epoch > group.assignment_epoch:  # updateTargetAssignment
        members = [m for m in group.members if m.member_id != updated.member_id] + [updated]
        target = coord.targets(group, members, before, config)
        group = group._replace(assignment_epoch=group_epoch, target=tuple(sorted(target.items())))
        log.append(("target", group_epoch))
    if not updated.reconciled_to(group.assignment_epoch):  # maybeReconcile, with the subscription's owned partitions
        owned = frozenset() if config.is_broken("classic_owned_ignored") else frozenset(request.owned)
        updated = reconcile(updated, group.assignment_epoch, group.target_of(updated.member_id),
                            lambda p: group.partition_epochs[p], owned, config.broken)
    # maybeReconcile starts or cancels a rebalance timer only for the consumer protocol: a classic
    # member has its join and sync timers instead (not modelled)
    group = coord._put_member(group, updated, known, log)
    group = coord._set_session(group, updated.member_id, now + request.session_timeout_ms)
    return group, Answer(NONE, updated.member_id, updated.epoch, request.protocols[0]), log


def _member(group: coord.Group, member_id: str) -> tuple[Member | None, str | None]:
    """validateConsumerGroupMember (dynamic) and throwIfMemberDoesNotUseClassicProtocol."""
    member = group.member(member_id)
    if member is None or member.classic is None:
        return None, UNKNOWN_MEMBER_ID
    return member, None


def sync(group: coord.Group, request: Sync, now: int, config) -> tuple[coord.Group, Answer, list]:
    """classicGroupSync → classicGroupSyncToConsumerGroup: the member's assigned partitions."""
    if not group.members:  # classicGroupSync: "group.isEmpty()" (or no group)
        return group, Answer(UNKNOWN_MEMBER_ID), []
    member, error = _member(group, request.member_id)
    if error is not None:
        return group, Answer(error), []
    if member.epoch != request.generation and not config.is_broken("classic_generation_unchecked"):
        return group, Answer(ILLEGAL_GENERATION), []  # throwIfGenerationIdUnmatched
    if ((request.protocol_type is not None and request.protocol_type != PROTOCOL_TYPE)
            or (request.protocol_name is not None and request.protocol_name != member.classic.protocols[0])):
        return group, Answer(INCONSISTENT_GROUP_PROTOCOL), []  # throwIfClassicProtocolUnmatched
    if group.epoch > member.epoch and member.state != UNREVOKED_PARTITIONS:  # throwIfRebalanceInProgress
        return group, Answer(REBALANCE_IN_PROGRESS), []
    group = coord._set_session(group, member.member_id, now + member.classic.session_timeout_ms)
    assignment = member.assigned | (member.revoking if config.is_broken("classic_sync_gives_revoking") else frozenset())
    return group, Answer(NONE, protocol_name=request.protocol_name, assignment=assignment), []


def beat(group: coord.Group, request: Beat, now: int, config) -> tuple[coord.Group, Answer, list]:
    """classicGroupHeartbeat → classicGroupHeartbeatToConsumerGroup: REBALANCE_IN_PROGRESS while
    the member must rejoin."""
    member, error = _member(group, request.member_id)
    if error is not None:
        return group, Answer(error), []
    if member.epoch != request.generation and not config.is_broken("classic_generation_unchecked"):
        return group, Answer(ILLEGAL_GENERATION), []
    group = coord._set_session(group, member.member_id, now + member.classic.session_timeout_ms)
    if config.is_broken("classic_heartbeat_never_rebalances"):
        return group, Answer(NONE), []
    if (member.epoch < group.epoch or member.state == UNREVOKED_PARTITIONS
            or (member.state == UNRELEASED_PARTITIONS and not _waiting_on_unreleased(group, member))):
        return group, Answer(REBALANCE_IN_PROGRESS), []
    return group, Answer(NONE), []


def _waiting_on_unreleased(group: coord.Group, member: Member) -> bool:
    """ConsumerGroup.waitingOnUnreleasedPartition: a partition of its target it is not assigned yet
    is still owned by another member."""
    return any(p not in member.assigned and group.partition_epochs[p] != coord.NO_EPOCH
               for p in group.target_of(member.member_id))


def leave(group: coord.Group, request: Leave, now: int, config) -> tuple[coord.Group, Answer, list]:
    """classicGroupLeave → classicGroupLeaveToConsumerGroup for one dynamic member identity: the
    member's error (UNKNOWN_MEMBER_ID for a member the group does not have) or NONE, the member
    fenced (consumerGroupFenceMembers). A member of either protocol may be named."""
    if group.epoch == 0:
        return group, Answer(UNKNOWN_MEMBER_ID), []  # "Group ... not found."
    if group.member(request.member_id) is None:
        return group, Answer(UNKNOWN_MEMBER_ID), []
    group, log = coord.fence(group, request.member_id, "left (LeaveGroup)", config)
    return group, Answer(NONE), log


class ClassicGroupMember(NamedTuple):
    """What ``ConsumerGroup.fromClassicGroup`` reads of a classic group's member."""

    member_id: str
    protocols: tuple  # its protocols' names, in its JoinGroup's order
    subscribed: tuple  # the subscription's topics (of the group's protocol)
    assignment: frozenset  # its last SyncGroup assignment (empty if it never synced)
    session_timeout_ms: int
    rebalance_timeout_ms: int


def upgrade(generation: int, members, partitions: int, now: int, config=None) -> coord.Group:
    """convertToConsumerGroup (validateOnlineUpgrade passed: ``group.consumer.migration.policy``
    allows upgrades, every member uses the consumer protocol type) → ConsumerGroup.fromClassicGroup:
    the group epoch and the target's epoch are the classic generation; every member STABLE at that
    epoch (and previous epoch) with its last assignment as its assigned partitions and its target,
    its classic session timeout's timer started. Pending JoinGroup and SyncGroup answers
    (REBALANCE_IN_PROGRESS) are the caller's: a group converted while Stable has none."""
    group = coord.Group(epoch=generation, assignment_epoch=generation, partition_epochs=(coord.NO_EPOCH,) * partitions)
    log: list = []
    dropped = config is not None and config.is_broken("classic_upgrade_drops_assignment")
    for m in members:
        if dropped:
            m = m._replace(assignment=frozenset())
        member = Member(m.member_id, None, generation, generation, "STABLE", frozenset(m.assignment), frozenset(),
                        tuple(sorted(m.subscribed)), m.rebalance_timeout_ms, Classic(m.session_timeout_ms, tuple(m.protocols)))
        group = group._replace(target=tuple(sorted(group.target + ((m.member_id, frozenset(m.assignment)),))))
        group = coord._put_member(group, member, None, log)
        group = coord._set_session(group, m.member_id, now + m.session_timeout_ms)
    if log:  # two members' last assignments overlap: fromClassicGroup's updateMember would throw
        raise ValueError(f"the classic group's assignments overlap: {log}")
    return group
