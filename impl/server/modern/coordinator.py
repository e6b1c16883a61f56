"""``ConsumerGroupCoordinator``: what Kafka 4.1's group coordinator does with a
ConsumerGroupHeartbeat and with a consumer-protocol member's OffsetCommit.

* ``GroupCoordinatorService.consumerGroupHeartbeat`` — the request's validation
  (``throwIfConsumerGroupHeartbeatRequestIsInvalid``), then the shard's operation, an exception
  answered as its error code (``handleOperationException``);
* ``GroupMetadataManager.consumerGroupHeartbeat`` — a leave (epoch -1) fences the member;
  otherwise the group is got or created (epoch 0), the member got or created and its epoch checked
  (``throwIfConsumerGroupMemberEpochIsInvalid``), the group epoch bumped when the group is new or
  the member's subscription changed, the target assignment recomputed when the group epoch passed
  it (``updateTargetAssignment``), the member reconciled (``maybeReconcile``, which starts or
  cancels its rebalance timer), its session timer restarted, the answer built (the assignment on a
  full request, at epoch 0, or when the member's assignment changed);
* ``consumerGroupFenceMember`` — the member removed with its target, the group epoch bumped, its
  timers cancelled;
* the timers (``scheduleConsumerGroupSessionTimeout``, ``scheduleConsumerGroupRebalanceTimeout``)
  on a keyed timer: scheduling a key again replaces its task (``CoordinatorTimer.schedule``);
* ``OffsetMetadataManager.validateOffsetCommit`` — :meth:`ConsumerGroupCoordinator.validate_offset_commit`.

Static members (a request with an instance id): ``getOrMaybeSubscribeStaticConsumerGroupMember``
(a new member; UNRELEASED_INSTANCE_ID while another member holds the instance id at an epoch but
-2; else ``replaceMember``, the departed member's assignment and target carried over to the new
member id; UNKNOWN_MEMBER_ID and FENCED_INSTANCE_ID at other epochs), and
``consumerGroupStaticMemberGroupLeave`` (epoch -2: the member kept, with its assignment, until its
session runs out or another process replaces it). Kafka's handler reads the group as it was and
replays its records afterwards; this one changes the group as it goes, in the same order, so a
replacement is visible to the steps after it as the records' replay would make it.
"""

from __future__ import annotations

import base64
import collections
import random
from dataclasses import dataclass
from typing import Callable, Optional

from impl.errors import (ApiException, Errors, FencedInstanceIdException, FencedMemberEpochException,
                         GroupIdNotFoundException, GroupMaxSizeReachedException, IllegalGenerationException,
                         InconsistentGroupProtocolException, InvalidRequestException, RebalanceInProgressException,
                         UnknownMemberIdException, UnreleasedInstanceIdException, UnsupportedAssignorException,
                         UnsupportedVersionException)
from impl.protocol import (CONSUMER_PROTOCOL_TYPE, UNKNOWN_MEMBER_ID, Assignment, ConsumerGroupHeartbeatAssignment,
                           ConsumerGroupHeartbeatRequestData, ConsumerGroupHeartbeatResponseData,
                           ConsumerGroupHeartbeatTopicPartitions, HeartbeatRequestData, HeartbeatResponseData,
                           JoinGroupRequestData, JoinGroupResponseData, LeaveGroupRequestData, LeaveGroupResponseData,
                           MemberResponse, SyncGroupRequestData, SyncGroupResponseData, TopicPartition)
from impl.server.modern.consumer_group import ConsumerGroup
from impl.server.modern.consumer_group_member import ClassicMemberMetadata, ConsumerGroupMember, MemberState
from impl.server.modern.current_assignment_builder import CurrentAssignmentBuilder
from impl.server.modern.range_assignor import RangeAssignor
from impl.server.modern.uniform_assignor import UniformAssignor
from impl.server.modern.target_assignment_builder import TargetAssignmentBuilder
from impl.server.timer import MockTimer, TimerTask

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
#: ConsumerGroupHeartbeat v1 requires the consumer to generate its member id (KIP-1082)
CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION = 1


@dataclass(frozen=True)
class ModernGroupConfig:
    """The broker's ``group.consumer.*`` settings the coordinator reads."""

    session_timeout_ms: int = 45000  # group.consumer.session.timeout.ms
    heartbeat_interval_ms: int = 5000  # group.consumer.heartbeat.interval.ms
    max_size: int = 2 ** 31 - 1  # group.consumer.max.size
    assignors: tuple = ("uniform", "range")  # group.consumer.assignors (the first is the default), Kafka 4.x's


class _KeyedTask(TimerTask):
    __slots__ = ("operation",)

    def __init__(self, delay_ms: int, operation):
        super().__init__(delay_ms)
        self.operation = operation

    def run(self) -> None:
        self.operation()


class CoordinatorTimer:
    """``CoordinatorTimer``: tasks by key; scheduling a key again replaces its task."""

    def __init__(self, timer: MockTimer):
        self.timer = timer
        self.tasks: dict = {}

    def schedule(self, key: str, delay_ms: int, operation) -> None:
        self.cancel(key)

        def run():
            self.tasks.pop(key, None)
            operation()

        task = self.tasks[key] = _KeyedTask(delay_ms, run)
        self.timer.add(task)

    def cancel(self, key: str) -> None:
        task = self.tasks.pop(key, None)
        if task is not None:
            task.cancel()

    def deadline(self, key: str) -> Optional[int]:
        task = self.tasks.get(key)
        return None if task is None else task.deadline_ms


def session_timeout_key(group_id: str, member_id: str) -> str:
    return f"session-timeout-{group_id}-{member_id}"  # groupSessionTimeoutKey


def rebalance_timeout_key(group_id: str, member_id: str) -> str:
    return f"rebalance-timeout-{group_id}-{member_id}"  # groupRebalanceTimeoutKey


def join_key(group_id: str, member_id: str) -> str:
    return f"join-{group_id}-{member_id}"  # consumerGroupJoinKey: a classic member's rejoin deadline


def sync_key(group_id: str, member_id: str) -> str:
    return f"sync-{group_id}-{member_id}"  # consumerGroupSyncKey: a classic member's SyncGroup deadline



class ConsumerGroupCoordinator:
    """The consumer groups of one coordinator. *topics*: the metadata image, a topic name ->
    ``(topic id, partitions)``, or None for a topic that does not exist."""

    def __init__(self, config: ModernGroupConfig, timer: MockTimer, topics: Callable[[str], Optional[tuple]],
                 rng=None, classic_groups: Optional[Callable[[str], Optional[tuple]]] = None):
        self.config = config
        # the classic coordinator's GroupCoordinator.take_members_for_upgrade: a classic group's
        # generation and members, taken for convertToConsumerGroup (None: no classic group with members)
        self.classic_groups = classic_groups
        self.rng = rng if rng is not None else random.Random(0)  # Uuid.randomUuid for a classic member's id
        self.time = timer.time
        self.timer = CoordinatorTimer(timer)
        self.topics = topics
        self.groups: dict = {}
        known = {a.name: a for a in (UniformAssignor(), RangeAssignor())}
        self.assignors = {name: known[name] for name in config.assignors}  # ConsumerGroupPartitionAssignor by name
        self.fenced = collections.deque(maxlen=1024)  # the latest (group id, member id, why) fenced

    # -- ConsumerGroupHeartbeat ------------------------------------------------------------------

    def consumer_group_heartbeat(self, request: ConsumerGroupHeartbeatRequestData, api_version: int = 1,
                                 client_id: str = "") -> ConsumerGroupHeartbeatResponseData:
        """GroupCoordinatorService.consumerGroupHeartbeat: every exception answered as its error
        (*client_id*: the request header's, kept on the member as Kafka's ``setClientId`` does)."""
        try:
            throw_if_request_is_invalid(request, api_version, self.config.assignors)
            if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._consumer_group_leave(request)
            return self._consumer_group_heartbeat(request, client_id)
        except ApiException as e:
            error = Errors.for_exception(e)
            return ConsumerGroupHeartbeatResponseData(error_code=error.code, error_message=str(e) or error.message)

    def consumer_group(self, group_id: str) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if group is None:
            raise GroupIdNotFoundException(f"Consumer group {group_id} not found.")
        return group

    def _get_or_maybe_create_consumer_group(self, group_id: str, create_if_not_exists: bool) -> ConsumerGroup:
        """getOrMaybeCreateConsumerGroup: a classic group with members is converted when a member
        joins (convertToConsumerGroup); an empty one is only the holder of the group's offsets here."""
        group = self.groups.get(group_id)
        if group is None:
            if not create_if_not_exists:
                raise GroupIdNotFoundException(f"Consumer group {group_id} not found.")
            classic = None if self.classic_groups is None else self.classic_groups(group_id)
            group = ConsumerGroup(group_id) if classic is None else self._from_classic_group(group_id, *classic)
            self.groups[group_id] = group
        return group

    def _from_classic_group(self, group_id: str, generation: int, members) -> ConsumerGroup:
        """ConsumerGroup.fromClassicGroup: the group and target epochs are the classic generation;
        each member STABLE at that epoch with its last assignment (assigned and target), its
        subscription of the group's protocol and its classic metadata; its session timer started
        with its own session timeout. (Kafka refuses an assignment with user data, which an assignor
        of the consumer protocol would lose: not checked here.)"""
        group = ConsumerGroup(group_id)
        group.set_group_epoch(generation)
        group.set_target_assignment_epoch(generation)
        for m in members:
            names = tuple(m.protocols())
            subscription = m.metadata(names[0]) if names else None
            assigned: dict = {}
            for tp in ([] if m.assignment is None else m.assignment.partitions):
                meta = self.topics(tp.topic)
                if meta is not None:
                    assigned[meta[0]] = assigned.get(meta[0], frozenset()) | {tp.partition}
            member = ConsumerGroupMember(m.member_id, member_epoch=generation, previous_member_epoch=generation,
                                         instance_id=m.group_instance_id, rebalance_timeout_ms=m.rebalance_timeout_ms,
                                         client_id=m.client_id,
                                         subscribed_topic_names=frozenset(subscription.topics if subscription else ()),
                                         assigned_partitions=assigned,
                                         classic_member_metadata=ClassicMemberMetadata(m.session_timeout_ms, names))
            group.update_target_assignment(m.member_id, assigned)
            group.update_member(member)
            self._schedule_session_timeout(group_id, m.member_id, m.session_timeout_ms)
        return group

    def _consumer_group_heartbeat(self, request, client_id: str) -> ConsumerGroupHeartbeatResponseData:
        """GroupMetadataManager.consumerGroupHeartbeat."""
        group_id, member_id, member_epoch = request.group_id, request.member_id, request.member_epoch
        owned = request.topic_partitions
        group = self._get_or_maybe_create_consumer_group(group_id, member_epoch == 0)
        group.read_by_handler()
        if len(group.members) >= self.config.max_size and member_id not in group.members:  # throwIfConsumerGroupIsFull
            raise GroupMaxSizeReachedException(f"The consumer group has reached its maximum capacity of "
                                               f"{self.config.max_size} members.")
        if request.instance_id is None:  # getOrMaybeSubscribeDynamicConsumerGroupMember
            member = group.get_or_maybe_create_member(member_id, member_epoch == 0)
            throw_if_member_epoch_is_invalid(member, member_epoch, owned)
        else:
            member = self._get_or_maybe_subscribe_static_member(group, member_id, member_epoch, request.instance_id,
                                                                owned, member_epoch == 0)

        # 1. Create or update the member; bump the group epoch if the group is new or the
        #    member's subscription changed (hasMemberSubscriptionChanged).
        updated = member if member.client_id == client_id else member.but(client_id=client_id)
        if request.instance_id is not None and updated.instance_id != request.instance_id:
            updated = updated.but(instance_id=request.instance_id)  # maybeUpdateInstanceId
        if request.rebalance_timeout_ms != -1:
            updated = updated.but(rebalance_timeout_ms=request.rebalance_timeout_ms)
        if request.subscribed_topic_names is not None:
            updated = updated.but(subscribed_topic_names=frozenset(request.subscribed_topic_names))
        if request.server_assignor is not None:
            updated = updated.but(server_assignor_name=request.server_assignor)
        # 2. The target assignment, when the group epoch passed its epoch.
        target = self._bump_and_target(group, member, updated)
        target_epoch = group.target_assignment_epoch

        # 3. Reconcile the member if it is not reconciled yet.
        updated = self._maybe_reconcile(group, updated, target_epoch, target, owned)
        if updated != member or member_id not in group.members:
            group.update_member(updated)
        self._schedule_session_timeout(group_id, member_id)

        response = ConsumerGroupHeartbeatResponseData(member_id=updated.member_id, member_epoch=updated.member_epoch,
                                                      heartbeat_interval_ms=self.config.heartbeat_interval_ms)
        is_full_request = (request.rebalance_timeout_ms != -1 and (request.subscribed_topic_names is not None
                                                                     or request.subscribed_topic_regex is not None)
                           and owned is not None)
        if member_epoch == 0 or is_full_request or updated.assigned_partitions != member.assigned_partitions:
            response.assignment = ConsumerGroupHeartbeatAssignment(
                [ConsumerGroupHeartbeatTopicPartitions(tid, sorted(ps))
                 for tid, ps in sorted(updated.assigned_partitions.items())])
        return response

    def _get_or_maybe_subscribe_static_member(self, group: ConsumerGroup, member_id: str, member_epoch: int,
                                              instance_id: str, owned, create_if_not_exists: bool) -> ConsumerGroupMember:
        """getOrMaybeSubscribeStaticConsumerGroupMember (a consumer-protocol member)."""
        existing = group.static_member(instance_id)
        if not create_if_not_exists:
            throw_if_static_member_is_unknown(existing, instance_id)
            throw_if_instance_id_is_fenced(existing, group.group_id, member_id, instance_id)
            throw_if_member_epoch_is_invalid(existing, member_epoch, owned)
            return existing
        if existing is None:  # "New static member."
            return group.get_or_maybe_create_member(member_id, True)
        throw_if_instance_id_is_unreleased(existing, group.group_id, member_id, instance_id)
        # "Copy the member but with its new member id."
        new_member = existing.but(member_id=member_id, member_epoch=0, previous_member_epoch=0)
        self._replace_member(group, existing, new_member)
        return new_member

    def _replace_member(self, group: ConsumerGroup, old: ConsumerGroupMember, new: ConsumerGroupMember) -> None:
        """replaceMember: the old member removed (its timers left scheduled: they find nobody),
        the new one given its target and put in its place."""
        target = group.target_assignment(old.member_id)
        group.update_target_assignment(old.member_id, None)
        group.remove_member(old.member_id)
        group.update_target_assignment(new.member_id, target)
        group.update_member(new)

    def _bump_and_target(self, group: ConsumerGroup, member: ConsumerGroupMember, updated: ConsumerGroupMember) -> dict:
        """A join's or heartbeat's first steps (consumerGroupHeartbeat's and classicGroupJoinToConsumerGroup's
        alike): the group epoch bumped when the group is new or the member's subscription changed
        (hasMemberSubscriptionChanged), the target assignment recomputed when the group epoch passed
        its epoch (updateTargetAssignment). The member's target."""
        group_epoch = group.group_epoch
        if group_epoch == 0 or updated.subscribed_topic_names != member.subscribed_topic_names:
            group_epoch += 1
            group.set_group_epoch(group_epoch)
        if group_epoch > group.target_assignment_epoch:
            return self._update_target_assignment(group, group_epoch, member, updated)
        return group.target_assignment(updated.member_id)

    def _update_target_assignment(self, group: ConsumerGroup, group_epoch: int, member: ConsumerGroupMember,
                                  updated: ConsumerGroupMember) -> dict:
        """updateTargetAssignment: every member's target at *group_epoch*, by the server assignor
        most members name (computePreferredServerAssignor), else the first of group.consumer.assignors;
        the member's returned."""
        subscribed = sorted({t for m in list(group.members.values()) + [updated] for t in m.subscribed_topic_names})
        image = {t: self.topics(t) for t in subscribed}
        preferred = group.compute_preferred_server_assignor(member, updated) or self.config.assignors[0]
        targets = (TargetAssignmentBuilder(group.group_id, group_epoch, self.assignors[preferred])
                   .with_members(group)
                   .with_target_assignment(group.target_assignments)
                   .with_topics({t: meta for t, meta in image.items() if meta is not None})
                   .add_or_update_member(updated.member_id, updated)
                   .build())
        for mid, assignment in targets.items():
            if group.target_assignment(mid) != assignment or mid not in group.target_assignments:
                group.update_target_assignment(mid, assignment)
        group.set_target_assignment_epoch(group_epoch)
        return targets.get(updated.member_id, {})

    def _maybe_reconcile(self, group: ConsumerGroup, member: ConsumerGroupMember, target_epoch: int, target: dict,
                         owned) -> ConsumerGroupMember:
        """maybeReconcile: CurrentAssignmentBuilder, and a consumer-protocol member's rebalance timer
        started (the member is to revoke) or cancelled."""
        if member.is_reconciled_to(target_epoch):
            return member
        updated = (CurrentAssignmentBuilder(member)
                   .with_target_assignment(target_epoch, target)
                   .with_current_partition_epoch(group.current_partition_epoch)
                   .with_owned_topic_partitions(owned)
                   .build())
        if updated != member and not updated.use_classic_protocol:
            # "The members using classic protocol only have join timer and sync timer."
            if updated.state is MemberState.UNREVOKED_PARTITIONS:
                self._schedule_rebalance_timeout(group.group_id, updated.member_id, updated.member_epoch,
                                                 updated.rebalance_timeout_ms)
            else:
                self.timer.cancel(rebalance_timeout_key(group.group_id, updated.member_id))
        return updated

    def _consumer_group_leave(self, request) -> ConsumerGroupHeartbeatResponseData:
        """consumerGroupLeave: a dynamic member, or a static one at -1, fenced at once (the answer
        echoes id and epoch); a static member at -2 kept at epoch -2 with its assignment."""
        group = self.consumer_group(request.group_id)
        response = ConsumerGroupHeartbeatResponseData(member_id=request.member_id, member_epoch=request.member_epoch)
        if request.instance_id is None:
            member = group.get_or_maybe_create_member(request.member_id, False)
        else:
            member = group.static_member(request.instance_id)
            throw_if_static_member_is_unknown(member, request.instance_id)
            throw_if_instance_id_is_fenced(member, group.group_id, request.member_id, request.instance_id)
            if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                # consumerGroupStaticMemberGroupLeave: "a member epoch of -2 for this departing static member"
                group.update_member(member.but(member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                                               partitions_pending_revocation={}))
                return ConsumerGroupHeartbeatResponseData(member_id=member.member_id,
                                                          member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH)
        self._fence_member(group, member, "left")
        return response

    def _fence_member(self, group: ConsumerGroup, member: ConsumerGroupMember, why: str) -> None:
        """consumerGroupFenceMember."""
        self._fence_members(group, [member], why)

    def _fence_members(self, group: ConsumerGroup, members: list, why: str) -> None:
        """consumerGroupFenceMembers: removeMember for each (the member with its partition epochs, its
        target), the group epoch bumped once, the members' timers cancelled (cancelTimers). Where
        only classic members would be left, Kafka converts the group to a classic group instead
        (validateOnlineDowngradeWithFencedMembers, convertToClassicGroup); this coordinator keeps it
        a consumer group (the downgrade is not implemented)."""
        if not members:
            return  # "No members to fence. Don't bump the group epoch."
        for member in members:
            group.update_target_assignment(member.member_id, None)
            group.remove_member(member.member_id)
        group.set_group_epoch(group.group_epoch + 1)
        for member in members:
            for key in (session_timeout_key, rebalance_timeout_key, join_key, sync_key):
                self.timer.cancel(key(group.group_id, member.member_id))
            self.fenced.append((group.group_id, member.member_id, why))

    # -- classic members inside a consumer group (Kafka 4.x's online migration) -----------------

    def takes_classic_join(self, group_id: str) -> bool:
        """classicGroupJoin: a JoinGroup goes to classicGroupJoinToConsumerGroup when the group is a
        consumer group with members. A JoinGroup to an empty one goes to the classic coordinator,
        which makes the group a classic group (the consumer group is dropped here for it)."""
        group = self.groups.get(group_id)
        if group is not None and not group.members:
            del self.groups[group_id]  # "Converted the empty consumer group to a classic group."
            return False
        return group is not None

    def holds(self, group_id: str) -> bool:
        """The group is a consumer group: its classic SyncGroup, Heartbeat and LeaveGroup come here."""
        return group_id in self.groups

    def classic_group_join(self, request: JoinGroupRequestData, api_version: int, client_id: str = "") -> JoinGroupResponseData:
        """classicGroupJoinToConsumerGroup (a group :meth:`takes_classic_join`; the service's checks —
        coordinator, group id, session timeout bounds — done by the caller): an exception answered as
        its error."""
        try:
            return self._classic_group_join_to_consumer_group(request, api_version, client_id)
        except ApiException as e:
            return JoinGroupResponseData(error_code=Errors.for_exception(e).code, member_id=UNKNOWN_MEMBER_ID)

    def _classic_group_join_to_consumer_group(self, request, api_version: int, client_id: str) -> JoinGroupResponseData:
        group = self.groups[request.group_id]
        group.read_by_handler()
        member_id = request.member_id
        is_unknown_member = member_id == UNKNOWN_MEMBER_ID
        if is_unknown_member:
            member_id = self._random_uuid()
        if len(group.members) >= self.config.max_size and member_id not in group.members:  # throwIfConsumerGroupIsFull
            raise GroupMaxSizeReachedException(f"The consumer group has reached its maximum capacity of "
                                               f"{self.config.max_size} members.")
        names = tuple(p.name for p in request.protocols)
        if not group.supports_classic_protocols(request.protocol_type, names):  # throwIfClassicProtocolIsNotSupported
            raise InconsistentGroupProtocolException(f"Member {member_id}'s protocols are not supported.")
        if api_version >= 4 and is_unknown_member and request.group_instance_id is None:
            # JoinGroupRequest.requiresKnownMemberId: "call for another join group request with allocated member id"
            return JoinGroupResponseData(error_code=Errors.MEMBER_ID_REQUIRED.code, member_id=member_id)
        if request.group_instance_id is not None:
            raise UnsupportedVersionException("groupcheck's coordinator does not take a static classic member into a "
                                              "consumer group (getOrMaybeSubscribeStaticConsumerGroupMember with the "
                                              "classic protocol is not implemented)")
        member = group.get_or_maybe_create_member(member_id, True)
        subscription = request.protocols[0].metadata  # every protocol carries the same subscription
        updated = member.but(rebalance_timeout_ms=request.rebalance_timeout_ms, client_id=client_id,
                             subscribed_topic_names=frozenset(subscription.topics),
                             classic_member_metadata=ClassicMemberMetadata(request.session_timeout_ms, names))
        target = self._bump_and_target(group, member, updated)
        updated = self._maybe_reconcile(group, updated, group.target_assignment_epoch, target,
                                        self._owned_topic_partitions(subscription.owned_partitions))
        group.update_member(updated)
        # the answer's append completed: the join timer cancelled, the session and sync timers started
        self.timer.cancel(join_key(group.group_id, member_id))
        self._schedule_session_timeout(group.group_id, member_id, request.session_timeout_ms)
        self.timer.schedule(sync_key(group.group_id, member_id), request.rebalance_timeout_ms,
                            self._fence_operation(group.group_id, member_id, "the member failed to sync within timeout"))
        return JoinGroupResponseData(member_id=updated.member_id, generation_id=updated.member_epoch,
                                     protocol_type=CONSUMER_PROTOCOL_TYPE, protocol_name=names[0])

    def classic_group_sync(self, request: SyncGroupRequestData) -> SyncGroupResponseData:
        """classicGroupSync → classicGroupSyncToConsumerGroup: the member's assigned partitions (never
        those pending revocation), in the ConsumerProtocol assignment."""
        group = self.groups.get(request.group_id)
        if group is None or not group.members:  # "group.isEmpty()"
            return SyncGroupResponseData(error_code=Errors.UNKNOWN_MEMBER_ID.code)
        try:
            member = self._validate_consumer_group_member(group, request.member_id, request.group_instance_id)
            _throw_if_member_does_not_use_classic_protocol(member)
            _throw_if_generation_id_unmatched(member, request.generation_id)
            _throw_if_classic_protocol_unmatched(member, request.protocol_type, request.protocol_name)
            self._throw_if_rebalance_in_progress(group, member)
        except ApiException as e:
            return SyncGroupResponseData(error_code=Errors.for_exception(e).code)
        self.timer.cancel(sync_key(group.group_id, member.member_id))
        self._schedule_session_timeout(group.group_id, member.member_id, member.classic_member_metadata.session_timeout_ms)
        return SyncGroupResponseData(protocol_type=request.protocol_type, protocol_name=request.protocol_name,
                                     assignment=Assignment(self._topic_partitions(member)))

    def classic_group_heartbeat(self, request: HeartbeatRequestData) -> HeartbeatResponseData:
        """classicGroupHeartbeatToConsumerGroup: REBALANCE_IN_PROGRESS while the member must rejoin
        (its epoch is behind the group's, it has partitions to revoke, or the partitions it waits
        for are free), with its join timer started."""
        group = self.groups[request.group_id]
        try:
            member = self._validate_consumer_group_member(group, request.member_id, request.group_instance_id)
            _throw_if_member_does_not_use_classic_protocol(member)
            _throw_if_generation_id_unmatched(member, request.generation_id)
        except ApiException as e:
            return HeartbeatResponseData(error_code=Errors.for_exception(e).code)
        self._schedule_session_timeout(group.group_id, member.member_id, member.classic_member_metadata.session_timeout_ms)
        if (member.member_epoch < group.group_epoch or member.state is MemberState.UNREVOKED_PARTITIONS
                or (member.state is MemberState.UNRELEASED_PARTITIONS
                    and not group.waiting_on_unreleased_partition(member))):
            self._schedule_join_timeout_if_absent(group.group_id, member.member_id, member.rebalance_timeout_ms)
            return HeartbeatResponseData(error_code=Errors.REBALANCE_IN_PROGRESS.code)
        return HeartbeatResponseData()

    def classic_group_leave(self, request: LeaveGroupRequestData) -> LeaveGroupResponseData:
        """classicGroupLeaveToConsumerGroup: each member identity answered (UNKNOWN_MEMBER_ID,
        FENCED_INSTANCE_ID), the valid ones fenced together."""
        group = self.groups[request.group_id]
        responses, leaving = [], []
        for identity in request.members:
            try:
                if identity.group_instance_id is None:
                    member = group.get_or_maybe_create_member(identity.member_id, False)
                else:
                    member = group.static_member(identity.group_instance_id)
                    throw_if_static_member_is_unknown(member, identity.group_instance_id)
                    if identity.member_id != UNKNOWN_MEMBER_ID:  # an administrative removal names no member id
                        throw_if_instance_id_is_fenced(member, group.group_id, identity.member_id,
                                                       identity.group_instance_id)
                responses.append(MemberResponse(identity.member_id, identity.group_instance_id))
                if member not in leaving:
                    leaving.append(member)
            except ApiException as e:
                responses.append(MemberResponse(identity.member_id, identity.group_instance_id,
                                                Errors.for_exception(e).code))
        self._fence_members(group, leaving, "left (LeaveGroup)")
        return LeaveGroupResponseData(members=responses)

    def _validate_consumer_group_member(self, group: ConsumerGroup, member_id: str,
                                        instance_id: Optional[str]) -> ConsumerGroupMember:
        """validateConsumerGroupMember."""
        if instance_id is None:
            return group.get_or_maybe_create_member(member_id, False)
        member = group.static_member(instance_id)
        if member is None:
            raise UnknownMemberIdException(f"Member with instance id {instance_id} is not a member of group "
                                           f"{group.group_id}.")
        throw_if_instance_id_is_fenced(member, group.group_id, member_id, instance_id)
        return member

    def _throw_if_rebalance_in_progress(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        """throwIfRebalanceInProgress: the group epoch passed the member's, and it is not revoking."""
        if group.group_epoch > member.member_epoch and member.state is not MemberState.UNREVOKED_PARTITIONS:
            self._schedule_join_timeout_if_absent(group.group_id, member.member_id, member.rebalance_timeout_ms)
            raise RebalanceInProgressException(f"A new rebalance is triggered in group {group.group_id} and member "
                                               f"{member.member_id} should rejoin to catch up.")

    def _schedule_join_timeout_if_absent(self, group_id: str, member_id: str, rebalance_timeout_ms: int) -> None:
        key = join_key(group_id, member_id)
        if self.timer.deadline(key) is None:
            self.timer.schedule(key, rebalance_timeout_ms, self._fence_operation(
                group_id, member_id, "the classic member failed to join within the rebalance timeout"))

    def _owned_topic_partitions(self, owned: list) -> list:
        """A subscription's ownedPartitions (topic names) as TopicPartitions by topic id (toTopicPartitions:
        a topic the metadata image does not have is left out)."""
        by_topic: dict = {}
        for tp in owned:
            meta = self.topics(tp.topic)
            if meta is not None:
                by_topic.setdefault(meta[0], []).append(tp.partition)
        return [ConsumerGroupHeartbeatTopicPartitions(tid, sorted(ps)) for tid, ps in sorted(by_topic.items())]

    def _topic_partitions(self, member: ConsumerGroupMember) -> list:
        """The member's assigned partitions by topic name (toConsumerProtocolAssignment)."""
        names = {}
        for name in member.subscribed_topic_names:
            meta = self.topics(name)
            if meta is not None:
                names[meta[0]] = name
        return [TopicPartition(names[tid], p) for tid, ps in sorted(member.assigned_partitions.items()) if tid in names
                for p in sorted(ps)]

    def _random_uuid(self) -> str:
        """Uuid.randomUuid().toString(): 16 bytes in URL-safe base64 without padding (from the injected rng)."""
        return base64.urlsafe_b64encode(self.rng.getrandbits(128).to_bytes(16, "big")).decode().rstrip("=")

    # -- timers --------------------------------------------------------------------------------

    def _fence_operation(self, group_id: str, member_id: str, why: str):
        def expire():  # consumerGroupFenceMemberOperation
            group = self.groups.get(group_id)
            member = None if group is None else group.members.get(member_id)
            if member is not None:
                self._fence_member(group, member, why)

        return expire

    def _schedule_session_timeout(self, group_id: str, member_id: str, session_timeout_ms: Optional[int] = None) -> None:
        """scheduleConsumerGroupSessionTimeout (a classic member's own session timeout, else the group's)."""
        timeout = self.config.session_timeout_ms if session_timeout_ms is None else session_timeout_ms
        self.timer.schedule(session_timeout_key(group_id, member_id), timeout,
                            self._fence_operation(group_id, member_id, "session expired"))

    def _schedule_rebalance_timeout(self, group_id: str, member_id: str, member_epoch: int,
                                    rebalance_timeout_ms: int) -> None:
        def expire():
            group = self.groups.get(group_id)
            member = None if group is None else group.members.get(member_id)
            # "Ignoring rebalance timeout ... because the member left the epoch"
            if member is not None and member.member_epoch == member_epoch:
                self._fence_member(group, member, "rebalance timeout")

        self.timer.schedule(rebalance_timeout_key(group_id, member_id), rebalance_timeout_ms, expire)

    # -- OffsetCommit --------------------------------------------------------------------------

    def validate_offset_commit(self, group_id: str, member_id: str, instance_id: Optional[str],
                               generation_id_or_member_epoch: int, api_version: int) -> Errors:
        """OffsetMetadataManager.validateOffsetCommit for a group this coordinator holds as a
        consumer group (or none): the error every partition of the commit is answered with."""
        group = self.groups.get(group_id)
        try:
            if group is None:
                if generation_id_or_member_epoch < 0:
                    return Errors.NONE  # a simple group takes the offsets
                return Errors.GROUP_ID_NOT_FOUND if api_version >= 9 else Errors.ILLEGAL_GENERATION
            group.validate_offset_commit(member_id, instance_id, generation_id_or_member_epoch, False, api_version)
        except ApiException as e:
            return Errors.for_exception(e)
        return Errors.NONE


def throw_if_request_is_invalid(request, api_version: int, assignors: tuple = ("uniform", "range")) -> None:
    """GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid."""
    def throw_if_empty(value, message):
        if value is not None and not value.strip():
            raise InvalidRequestException(message)

    if (api_version >= CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION or request.member_epoch > 0
            or request.member_epoch == LEAVE_GROUP_MEMBER_EPOCH):
        throw_if_empty(request.member_id, "MemberId can't be empty.")
    throw_if_empty(request.group_id, "GroupId can't be empty.")
    throw_if_empty(request.instance_id, "InstanceId can't be empty.")
    throw_if_empty(request.rack_id, "RackId can't be empty.")
    if request.member_epoch == 0:
        if request.rebalance_timeout_ms == -1:
            raise InvalidRequestException("RebalanceTimeoutMs must be provided in first request.")
        if request.topic_partitions is None or request.topic_partitions:
            raise InvalidRequestException("TopicPartitions must be empty when (re-)joining.")
        if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
            raise InvalidRequestException("Either SubscribedTopicNames or SubscribedTopicRegex must be "
                                          "non-null when (re-)joining.")
    elif request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if request.instance_id is None:
            raise InvalidRequestException("InstanceId can't be null.")
    elif request.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise InvalidRequestException("MemberEpoch is invalid.")
    if request.server_assignor is not None and request.server_assignor not in assignors:
        raise UnsupportedAssignorException(f"ServerAssignor {request.server_assignor} is not supported. "
                                           f"Supported assignors: {', '.join(assignors)}.")


def _throw_if_member_does_not_use_classic_protocol(member: ConsumerGroupMember) -> None:
    if not member.use_classic_protocol:
        raise UnknownMemberIdException(f"Member {member.member_id} does not use the classic protocol.")


def _throw_if_generation_id_unmatched(member: ConsumerGroupMember, generation_id: int) -> None:
    """throwIfGenerationIdUnmatched: a classic member's generation is its member epoch."""
    if member.member_epoch != generation_id:
        raise IllegalGenerationException(f"The request generation id {generation_id} is not equal to the member "
                                         f"epoch {member.member_epoch} of member {member.member_id}.")


def _throw_if_classic_protocol_unmatched(member: ConsumerGroupMember, protocol_type: Optional[str],
                                         protocol_name: Optional[str]) -> None:
    """throwIfClassicProtocolUnmatched: the protocol type ``consumer``, the protocol name the join answered."""
    name = member.classic_member_metadata.supported_protocols[0]
    if protocol_type is not None and protocol_type != CONSUMER_PROTOCOL_TYPE:
        raise InconsistentGroupProtocolException(f"The protocol type {protocol_type} from member {member.member_id} "
                                                 f"request is not equal to the group protocol type consumer.")
    if protocol_name is not None and protocol_name != name:
        raise InconsistentGroupProtocolException(f"The protocol name {protocol_name} from member {member.member_id} "
                                                 f"request is not equal to the protocol name {name} returned in the "
                                                 "join response.")


def throw_if_static_member_is_unknown(static_member: Optional[ConsumerGroupMember], instance_id: str) -> None:
    """throwIfStaticMemberIsUnknown."""
    if static_member is None:
        raise UnknownMemberIdException(f"Instance id {instance_id} is unknown.")


def throw_if_instance_id_is_fenced(member: ConsumerGroupMember, group_id: str, member_id: str,
                                   instance_id: str) -> None:
    """throwIfInstanceIdIsFenced: the instance id belongs to another member id."""
    if member.member_id != member_id:
        raise FencedInstanceIdException(f"Static member {member_id} with instance id {instance_id} was fenced by "
                                        f"member {member.member_id}.")


def throw_if_instance_id_is_unreleased(member: ConsumerGroupMember, group_id: str, member_id: str,
                                       instance_id: str) -> None:
    """throwIfInstanceIdIsUnreleased: only a member that left with epoch -2 gives its instance id up."""
    if member.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise UnreleasedInstanceIdException(f"Static member {member_id} with instance id {instance_id} cannot join "
                                            f"the group because the instance id is owned by {member.member_id} member.")


def throw_if_member_epoch_is_invalid(member: ConsumerGroupMember, received: int, owned) -> None:
    """throwIfConsumerGroupMemberEpochIsInvalid."""
    if received > member.member_epoch:
        raise FencedMemberEpochException(
            f"The consumer group member has a greater member epoch ({received}) than the one known by the "
            f"group coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.")
    if received < member.member_epoch:
        # "the response with the bumped epoch may have been lost"
        if received != member.previous_member_epoch or not _is_subset(owned, member.assigned_partitions):
            raise FencedMemberEpochException(
                f"The consumer group member has a smaller member epoch ({received}) than the one known by the "
                f"group coordinator ({member.member_epoch}). The member must abandon all its partitions and "
                "rejoin.")


def _is_subset(owned, assigned: dict) -> bool:
    """isSubset(ownedTopicPartitions, assignedPartitions): owned not sent (null) is not a subset."""
    if owned is None:
        return False
    for tp in owned:
        partitions = assigned.get(tp.topic_id)
        if partitions is None or any(p not in partitions for p in tp.partitions):
            return False
    return True
