"""The classic group coordinator (``kafka.coordinator.group.GroupCoordinator`` with its delayed
operations ``DelayedJoin``, ``InitialDelayedJoin``, ``DelayedSync`` and ``DelayedHeartbeat``).

Behaviour follows the protocol reference §1 (JoinGroup / SyncGroup / Heartbeat / LeaveGroup /
OffsetCommit, rebalance, join completion, session and pending-sync expiry, load/unload).  The
structure follows the Scala class method by method; names are snake_case versions of Kafka's
(``handleJoinGroup`` → :meth:`GroupCoordinator.handle_join_group`, ``onCompleteJoin`` →
:meth:`GroupCoordinator.on_complete_join`, ...).

Responses are delivered through callbacks, as in Kafka: a JoinGroup or SyncGroup that has to wait
is *parked* (its callback is stored on the member) and answered when the join phase completes,
when the leader's assignment is stored, or when something fails.  Where Kafka's coordinator hands
a ``JoinGroupResult`` / ``SyncGroupResult`` to ``KafkaApis``, which turns it into the response,
this coordinator builds the response data (:mod:`impl.protocol`) directly: the callbacks receive
``JoinGroupResponseData``, ``SyncGroupResponseData``, ``HeartbeatResponseData`` and
``LeaveGroupResponseData``.  OffsetCommit keeps Kafka's per-partition error map (the broker builds
the response).

Everything runs on the caller's thread: there are no group locks.  Delayed operations live in two
purgatories on the injected :class:`~impl.server.timer.MockTimer`; member ids use the injected
``random.Random``.  Decisions that mutation tests may want to flip are small named methods
(``validate_generation``, ``accept_joining_member``, ``is_valid_session_timeout``, ...).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

from impl.errors import Errors, GroupIdNotFoundException, IllegalStateException
from impl.protocol import (CONSUMER_PROTOCOL_TYPE, UNKNOWN_GENERATION_ID, UNKNOWN_MEMBER_ID, HeartbeatResponseData,
                           JoinGroupResponseData, LeaveGroupResponseData, MemberIdentity,
                           MemberResponse, SyncGroupResponseData, TopicPartition)
from impl.server.config import BrokerConfig
from impl.server.group_metadata import (COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE,
                                        GroupMetadata, MemberMetadata, Protocols)
from impl.server.group_metadata_manager import GroupMetadataManager, OffsetAndMetadata
from impl.server.timer import DelayedOperation, DelayedOperationPurgatory, MockTimer
from impl.time import Time

__all__ = [
    "GroupCoordinator", "DelayedJoin", "InitialDelayedJoin", "DelayedSync", "DelayedHeartbeat",
    "JOIN_GROUP", "SYNC_GROUP", "HEARTBEAT", "LEAVE_GROUP", "OFFSET_COMMIT", "OFFSET_FETCH",
]

# ApiKeys used by validateGroupStatus (the request api_key names of impl.protocol).
JOIN_GROUP = "JoinGroup"
SYNC_GROUP = "SyncGroup"
HEARTBEAT = "Heartbeat"
LEAVE_GROUP = "LeaveGroup"
OFFSET_COMMIT = "OffsetCommit"
OFFSET_FETCH = "OffsetFetch"
DESCRIBE_GROUPS = "DescribeGroups"
DELETE_GROUPS = "DeleteGroups"

#: APIs that accept the empty group id (for backwards compatibility / admin use).
_EMPTY_GROUP_ID_APIS = frozenset((OFFSET_COMMIT, OFFSET_FETCH, DESCRIBE_GROUPS, DELETE_GROUPS))

_NONE = Errors.NONE
_NONE_CODE = Errors.NONE.value


# --------------------------------------------------------------------------------------------
# Response builders (JoinGroupResult / SyncGroupResult)
# --------------------------------------------------------------------------------------------

def join_error(member_id: str, error: Errors) -> JoinGroupResponseData:
    """``JoinGroupResult(memberId, error)``: no generation, protocol, leader or members."""
    return JoinGroupResponseData(error_code=error.value, generation_id=UNKNOWN_GENERATION_ID,
                                 protocol_type=None, protocol_name=None, leader=UNKNOWN_MEMBER_ID,
                                 member_id=member_id)


def sync_error(error: Errors) -> SyncGroupResponseData:
    """``SyncGroupResult(error)``: no protocol type/name, empty assignment."""
    return SyncGroupResponseData(error_code=error.value, protocol_type=None, protocol_name=None, assignment=None)


# Purgatory keys: MemberKey(groupId, memberId), GroupJoinKey(groupId), GroupSyncKey(groupId).

def member_key(group_id: str, member_id: str) -> tuple:
    return ("member", group_id, member_id)


def group_join_key(group_id: str) -> tuple:
    return ("join", group_id)


def group_sync_key(group_id: str) -> tuple:
    return ("sync", group_id)


# --------------------------------------------------------------------------------------------
# Delayed operations
# --------------------------------------------------------------------------------------------

class DelayedJoin(DelayedOperation):
    """Completes the join phase when every member has joined, or when the rebalance timeout
    expires (``DelayedJoin``)."""

    __slots__ = ("coordinator", "group")

    def __init__(self, coordinator: "GroupCoordinator", group: GroupMetadata, rebalance_timeout_ms: int) -> None:
        DelayedOperation.__init__(self, rebalance_timeout_ms)
        self.coordinator = coordinator
        self.group = group

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_join(self.group, self.force_complete)

    def on_expiration(self) -> None:
        self.coordinator.on_expire_join()

    def on_complete(self) -> None:
        self.coordinator.on_complete_join(self.group)

    def __repr__(self) -> str:
        return "DelayedJoin(group=%s, delay=%d, deadline=%d)" % (self.group.group_id, self.delay_ms, self.deadline_ms)


class InitialDelayedJoin(DelayedJoin):
    """The first join phase of an Empty group (``InitialDelayedJoin``): never completes early;
    on expiry it is extended by another delay if new members arrived during the last window and
    rebalance-timeout budget remains, else the join completes."""

    __slots__ = ("purgatory", "configured_rebalance_delay", "remaining_ms")

    def __init__(self, coordinator: "GroupCoordinator", purgatory: DelayedOperationPurgatory,
                 group: GroupMetadata, configured_rebalance_delay: int, delay_ms: int, remaining_ms: int) -> None:
        DelayedJoin.__init__(self, coordinator, group, delay_ms)
        self.purgatory = purgatory
        self.configured_rebalance_delay = configured_rebalance_delay
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        group = self.group
        if group.new_member_added and self.remaining_ms != 0:
            group.new_member_added = False
            delay = min(self.configured_rebalance_delay, self.remaining_ms)
            # [sic] uses the old delay, as in the source
            remaining = max(self.remaining_ms - self.delay_ms, 0)
            self.purgatory.try_complete_else_watch(
                InitialDelayedJoin(self.coordinator, self.purgatory, group, self.configured_rebalance_delay,
                                   delay, remaining),
                (group_join_key(group.group_id),))
        else:
            DelayedJoin.on_complete(self)

    def __repr__(self) -> str:
        return "InitialDelayedJoin(group=%s, delay=%d, remaining=%d, deadline=%d)" % (
            self.group.group_id, self.delay_ms, self.remaining_ms, self.deadline_ms)


class DelayedSync(DelayedOperation):
    """Removes the members of ``generation_id`` that did not send SyncGroup within the rebalance
    timeout (``DelayedSync``)."""

    __slots__ = ("coordinator", "group", "generation_id")

    def __init__(self, coordinator: "GroupCoordinator", group: GroupMetadata, generation_id: int,
                 rebalance_timeout_ms: int) -> None:
        DelayedOperation.__init__(self, rebalance_timeout_ms)
        self.coordinator = coordinator
        self.group = group
        self.generation_id = generation_id

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_pending_sync(self.group, self.generation_id, self.force_complete)

    def on_expiration(self) -> None:
        self.coordinator.on_expire_pending_sync(self.group, self.generation_id)

    def on_complete(self) -> None:
        pass

    def __repr__(self) -> str:
        return "DelayedSync(group=%s, generation=%d, deadline=%d)" % (
            self.group.group_id, self.generation_id, self.deadline_ms)


class DelayedHeartbeat(DelayedOperation):
    """A member's session deadline (or a pending member's join deadline) (``DelayedHeartbeat``)."""

    __slots__ = ("coordinator", "group", "member_id", "is_pending")

    def __init__(self, coordinator: "GroupCoordinator", group: GroupMetadata, member_id: str,
                 is_pending: bool, timeout_ms: int) -> None:
        DelayedOperation.__init__(self, timeout_ms)
        self.coordinator = coordinator
        self.group = group
        self.member_id = member_id
        self.is_pending = is_pending

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_heartbeat(self.group, self.member_id, self.is_pending,
                                                       self.force_complete)

    def on_expiration(self) -> None:
        self.coordinator.on_expire_heartbeat(self.group, self.member_id, self.is_pending)

    def on_complete(self) -> None:
        pass

    def __repr__(self) -> str:
        return "DelayedHeartbeat(group=%s, member=%s, pending=%s, deadline=%d)" % (
            self.group.group_id, self.member_id, self.is_pending, self.deadline_ms)


# --------------------------------------------------------------------------------------------
# GroupCoordinator
# --------------------------------------------------------------------------------------------

class GroupCoordinator:
    """One broker's classic group coordinator."""

    __slots__ = ("broker_id", "config", "group_manager", "time", "timer", "rng",
                 "heartbeat_purgatory", "rebalance_purgatory", "_is_active")

    def __init__(self, broker_id: int, config: BrokerConfig, group_manager: GroupMetadataManager,
                 time: Time, timer: MockTimer, rng) -> None:
        self.broker_id = broker_id
        self.config = config
        self.group_manager = group_manager
        self.time = time
        self.timer = timer
        self.rng = rng
        self.heartbeat_purgatory = DelayedOperationPurgatory("Heartbeat", timer)
        self.rebalance_purgatory = DelayedOperationPurgatory("Rebalance", timer)
        self._is_active = False

    # -- lifecycle --------------------------------------------------------------------------

    def startup(self) -> None:
        self._is_active = True

    def shutdown(self) -> None:
        """Stop: forget every group and delayed operation; parked callbacks are not answered."""
        self._is_active = False
        self.group_manager.shutdown()
        self.heartbeat_purgatory.shutdown()
        self.rebalance_purgatory.shutdown()

    def is_active(self) -> bool:
        return self._is_active

    def partition_for(self, group_id: str) -> int:
        return self.group_manager.partition_for(group_id)

    # -- prelude (validateGroupStatus, §1.3) ------------------------------------------------

    @staticmethod
    def is_valid_group_id(group_id: Optional[str], api: str) -> bool:
        if group_id is None:
            return False
        return api in _EMPTY_GROUP_ID_APIS or group_id != ""

    def is_coordinator_for_group(self, group_id: str) -> bool:
        return self.group_manager.is_group_local(group_id)

    def is_coordinator_load_in_progress(self, group_id: str) -> bool:
        return self.group_manager.is_group_loading(group_id)

    def validate_group_status(self, group_id: Optional[str], api: str) -> Optional[Errors]:
        if not self.is_valid_group_id(group_id, api):
            return Errors.INVALID_GROUP_ID
        if not self._is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if self.is_coordinator_load_in_progress(group_id):
            return Errors.COORDINATOR_LOAD_IN_PROGRESS
        if not self.is_coordinator_for_group(group_id):
            return Errors.NOT_COORDINATOR
        return None

    def validate_current_member(self, group: GroupMetadata, member_id: str,
                                group_instance_id: Optional[str]) -> Optional[Errors]:
        """``groupInstanceId`` (if given) must map to ``member_id``; ``member_id`` must exist."""
        if group_instance_id is not None:
            current_member_id = group.static_members.get(group_instance_id)
            if current_member_id is None:
                return Errors.UNKNOWN_MEMBER_ID
            if current_member_id != member_id:
                return Errors.FENCED_INSTANCE_ID
        if member_id not in group.members:
            return Errors.UNKNOWN_MEMBER_ID
        return None

    @staticmethod
    def validate_generation(group: GroupMetadata, generation_id: int) -> Optional[Errors]:
        """Generation fencing for SyncGroup / Heartbeat / OffsetCommit."""
        if generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        return None

    def is_valid_session_timeout(self, session_timeout_ms: int) -> bool:
        config = self.config
        return config.group_min_session_timeout_ms <= session_timeout_ms <= config.group_max_session_timeout_ms

    # -- JoinGroup (§1.4) -------------------------------------------------------------------

    def handle_join_group(self, group_id: str, member_id: str, group_instance_id: Optional[str],
                          require_known_member_id: bool, support_skipping_assignment: bool,
                          client_id: str, client_host: str, rebalance_timeout_ms: int,
                          session_timeout_ms: int, protocol_type: str, protocols: Protocols,
                          response_callback: Callable[[JoinGroupResponseData], None],
                          reason: Optional[str] = None) -> None:
        error = self.validate_group_status(group_id, JOIN_GROUP)
        if error is not None:
            response_callback(join_error(member_id, error))
            return
        if not self.is_valid_session_timeout(session_timeout_ms):
            response_callback(join_error(member_id, Errors.INVALID_SESSION_TIMEOUT))
            return
        is_unknown_member = member_id == UNKNOWN_MEMBER_ID
        # group is created if it does not exist and the member id is UNKNOWN. if member
        # is specified but group does not exist, request is rejected with UNKNOWN_MEMBER_ID
        group = self.group_manager.get_or_maybe_create_group(group_id, is_unknown_member)
        if group is None:
            response_callback(join_error(member_id, Errors.UNKNOWN_MEMBER_ID))
            return
        if not self.accept_joining_member(group, member_id):
            group.remove(member_id)
            response_callback(join_error(UNKNOWN_MEMBER_ID, Errors.GROUP_MAX_SIZE_REACHED))
        elif is_unknown_member:
            self.do_new_member_join_group(group, group_instance_id, require_known_member_id,
                                          support_skipping_assignment, client_id, client_host,
                                          rebalance_timeout_ms, session_timeout_ms, protocol_type,
                                          protocols, response_callback, reason)
        else:
            self.do_current_member_join_group(group, member_id, group_instance_id, client_id, client_host,
                                              rebalance_timeout_ms, session_timeout_ms, protocol_type,
                                              protocols, response_callback, reason)
        # attempt to complete JoinGroup
        if group.state is PREPARING_REBALANCE:
            self.rebalance_purgatory.check_and_complete(group_join_key(group.group_id))

    def accept_joining_member(self, group: GroupMetadata, member_id: str) -> bool:
        """``group.max.size`` admission (§1.4 step 4)."""
        state = group.state
        if state is EMPTY or state is DEAD:
            return True
        if state is PREPARING_REBALANCE:
            # An existing member is accepted if it is already awaiting. New members are accepted up
            # to the max group size (counting awaiting members kicks out the last rejoiners).
            member = group.members.get(member_id)
            return (member is not None and member.awaiting_join_callback is not None) or \
                group.num_members_awaiting_join < self.config.group_max_size
        # CompletingRebalance / Stable: existing members, and new ones up to the max size
        return member_id in group.members or len(group.members) < self.config.group_max_size

    def do_new_member_join_group(self, group: GroupMetadata, group_instance_id: Optional[str],
                                 require_known_member_id: bool, support_skipping_assignment: bool,
                                 client_id: str, client_host: str, rebalance_timeout_ms: int,
                                 session_timeout_ms: int, protocol_type: str, protocols: Protocols,
                                 response_callback: Callable, reason: Optional[str]) -> None:
        if group.state is DEAD:
            # the group was just unloaded (likely migrated to another coordinator): let the
            # member find the coordinator again and rejoin
            response_callback(join_error(UNKNOWN_MEMBER_ID, Errors.COORDINATOR_NOT_AVAILABLE))
        elif not group.supports_protocols(protocol_type, _plain_protocol_set(protocols)):
            response_callback(join_error(UNKNOWN_MEMBER_ID, Errors.INCONSISTENT_GROUP_PROTOCOL))
        else:
            new_member_id = group.generate_member_id(client_id, group_instance_id, self.rng)
            if group_instance_id is not None:
                self.do_static_new_member_join_group(group, group_instance_id, new_member_id, client_id,
                                                     client_host, support_skipping_assignment,
                                                     rebalance_timeout_ms, session_timeout_ms, protocol_type,
                                                     protocols, response_callback, reason)
            else:
                self.do_dynamic_new_member_join_group(group, require_known_member_id, new_member_id,
                                                      client_id, client_host, rebalance_timeout_ms,
                                                      session_timeout_ms, protocol_type, protocols,
                                                      response_callback, reason)

    def do_static_new_member_join_group(self, group: GroupMetadata, group_instance_id: str, new_member_id: str,
                                        client_id: str, client_host: str, support_skipping_assignment: bool,
                                        rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                                        protocols: Protocols, response_callback: Callable,
                                        reason: Optional[str]) -> None:
        old_member_id = group.current_static_member_id(group_instance_id)
        if old_member_id is not None:
            self.update_static_member_and_rebalance(group, old_member_id, new_member_id, group_instance_id,
                                                    protocols, rebalance_timeout_ms, session_timeout_ms,
                                                    response_callback, reason, support_skipping_assignment)
        else:
            self.add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, new_member_id,
                                          group_instance_id, client_id, client_host, protocol_type,
                                          protocols, group, response_callback, reason)

    def do_dynamic_new_member_join_group(self, group: GroupMetadata, require_known_member_id: bool,
                                         new_member_id: str, client_id: str, client_host: str,
                                         rebalance_timeout_ms: int, session_timeout_ms: int,
                                         protocol_type: str, protocols: Protocols,
                                         response_callback: Callable, reason: Optional[str]) -> None:
        if require_known_member_id:
            # register the member id as pending and ask the client to join again with it
            group.add_pending_member(new_member_id)
            self.add_pending_member_expiration(group, new_member_id, session_timeout_ms)
            response_callback(join_error(new_member_id, Errors.MEMBER_ID_REQUIRED))
        else:
            self.add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, new_member_id, None,
                                          client_id, client_host, protocol_type, protocols, group,
                                          response_callback, reason)

    def do_current_member_join_group(self, group: GroupMetadata, member_id: str, group_instance_id: Optional[str],
                                     client_id: str, client_host: str, rebalance_timeout_ms: int,
                                     session_timeout_ms: int, protocol_type: str, protocols: Protocols,
                                     response_callback: Callable, reason: Optional[str]) -> None:
        if group.state is DEAD:
            response_callback(join_error(member_id, Errors.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(protocol_type, _plain_protocol_set(protocols)):
            response_callback(join_error(member_id, Errors.INCONSISTENT_GROUP_PROTOCOL))
            return
        if group.is_pending_member(member_id):
            # A rejoining pending member will be accepted. A pending member cannot be static.
            if group_instance_id is not None:
                raise IllegalStateException(
                    "Received unexpected JoinGroup with groupInstanceId=%s for pending member with memberId=%s"
                    % (group_instance_id, member_id))
            self.add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, member_id, None,
                                          client_id, client_host, protocol_type, protocols, group,
                                          response_callback, reason)
            return
        error = self.validate_current_member(group, member_id, group_instance_id)
        if error is not None:
            response_callback(join_error(member_id, error))
            return
        state = group.state
        member = group.members[member_id]
        if state is PREPARING_REBALANCE:
            self.update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms,
                                             session_timeout_ms, response_callback, reason)
        elif state is COMPLETING_REBALANCE:
            if member.matches(protocols):
                # same metadata (the member may have missed the JoinGroup response): answer with
                # the current generation
                response_callback(self._join_result(group, member_id, group.is_leader(member_id)))
            else:
                # member has changed metadata, so force a rebalance
                self.update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms,
                                                 session_timeout_ms, response_callback, reason)
        elif state is STABLE:
            if group.is_leader(member_id):
                # force a rebalance if the leader sends JoinGroup: it lets the leader trigger
                # rebalances for changes that do not show in the member metadata
                self.update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms,
                                                 session_timeout_ms, response_callback, reason)
            elif not member.matches(protocols):
                self.update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms,
                                                 session_timeout_ms, response_callback, reason)
            else:
                # followers with no change to their metadata just get the current generation so
                # they can send SyncGroup
                response_callback(self._join_result(group, member_id, False))
        else:
            # Empty or Dead: unexpected; let the member reset its generation and rejoin
            response_callback(join_error(member_id, Errors.UNKNOWN_MEMBER_ID))

    def _join_result(self, group: GroupMetadata, member_id: str, with_members: bool,
                     leader_id: Optional[str] = None, skip_assignment: bool = False) -> JoinGroupResponseData:
        """A successful JoinGroup response for the group's current generation; only the leader
        (``with_members``) gets the member list."""
        return JoinGroupResponseData(
            error_code=_NONE_CODE,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_or_null() if leader_id is None else leader_id,
            member_id=member_id,
            members=group.current_member_metadata() if with_members else [],
            skip_assignment=skip_assignment)

    def add_member_and_rebalance(self, rebalance_timeout_ms: int, session_timeout_ms: int, member_id: str,
                                 group_instance_id: Optional[str], client_id: str, client_host: str,
                                 protocol_type: str, protocols: Protocols, group: GroupMetadata,
                                 callback: Callable, reason: Optional[str]) -> None:
        member = MemberMetadata(member_id, group_instance_id, client_id, client_host, rebalance_timeout_ms,
                                session_timeout_ms, protocol_type, protocols)
        member.is_new = True
        # update the newMemberAdded flag to indicate that the join group can be further delayed
        if group.state is PREPARING_REBALANCE and group.generation_id == 0:
            group.new_member_added = True
        group.add(member, callback)
        # A new member cannot heartbeat and its socket is muted while the JoinGroup is parked:
        # time its JoinGroup out after NewMemberJoinTimeoutMs instead of the session timeout, so
        # defunct new members (e.g. clients that retried after a request timeout) go away.
        self.complete_and_schedule_next_expiration(group, member, self.config.new_member_join_timeout_ms)
        self.maybe_prepare_rebalance(group, reason)

    def update_member_and_rebalance(self, group: GroupMetadata, member: MemberMetadata, protocols: Protocols,
                                    rebalance_timeout_ms: int, session_timeout_ms: int,
                                    callback: Callable, reason: Optional[str]) -> None:
        group.update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, callback)
        self.maybe_prepare_rebalance(group, reason)

    def update_static_member_and_rebalance(self, group: GroupMetadata, old_member_id: str, new_member_id: str,
                                           group_instance_id: str, protocols: Protocols,
                                           rebalance_timeout_ms: int, session_timeout_ms: int,
                                           response_callback: Callable, reason: Optional[str],
                                           support_skipping_assignment: bool) -> None:
        """A known static member rejoined with an unknown member id: replace its id (§1.11)."""
        current_leader = group.leader_or_null()
        member = group.replace_static_member(group_instance_id, old_member_id, new_member_id,
                                             join_error(old_member_id, Errors.FENCED_INSTANCE_ID),
                                             sync_error(Errors.FENCED_INSTANCE_ID))
        # The heartbeat of the old member id will expire without effect since the group no
        # longer contains that member id; a new one is scheduled for the new member id.
        self.complete_and_schedule_next_heartbeat_expiration(group, member)
        old_rebalance_timeout_ms = member.rebalance_timeout_ms
        old_session_timeout_ms = member.session_timeout_ms
        old_protocols = member.supported_protocols
        group.update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, response_callback)
        state = group.state
        if state is STABLE:
            # if the protocol selected for the next generation would not change, persist the new
            # member id without a rebalance; otherwise rebalance
            selected_protocol_of_next_generation = group.select_protocol()
            if group.protocol_name == selected_protocol_of_next_generation:
                group_assignment = {m.member_id: m.assignment for m in group.members.values()}

                def on_store(error: Errors) -> None:
                    if error is not _NONE:
                        # failed to persist the new member id: revert the replacement
                        group.update_member(member, old_protocols, old_rebalance_timeout_ms,
                                            old_session_timeout_ms, None)
                        old_member = group.replace_static_member(
                            group_instance_id, new_member_id, old_member_id,
                            join_error(new_member_id, Errors.FENCED_INSTANCE_ID),
                            sync_error(Errors.FENCED_INSTANCE_ID))
                        self.complete_and_schedule_next_heartbeat_expiration(group, old_member)
                        response_callback(JoinGroupResponseData(
                            error_code=error.value, generation_id=group.generation_id,
                            protocol_type=group.protocol_type, protocol_name=group.protocol_name,
                            leader=current_leader, member_id=UNKNOWN_MEMBER_ID))
                    elif support_skipping_assignment:
                        # v9+: the leader learns it is the leader but skips the assignment
                        is_leader = group.is_leader(new_member_id)
                        group.maybe_invoke_join_callback(
                            member, self._join_result(group, new_member_id, is_leader, skip_assignment=is_leader))
                    else:
                        # older versions: answer with the old leader id so the rejoiner never
                        # acts as leader of a Stable group
                        group.maybe_invoke_join_callback(
                            member, self._join_result(group, new_member_id, False, leader_id=current_leader))

                self.group_manager.store_group(group, group_assignment, on_store)
            else:
                self.maybe_prepare_rebalance(group, reason)
        elif state is COMPLETING_REBALANCE:
            # the old member id may already have been handed to the leader for assignment:
            # rebalance so the new member id gets an assignment
            self.prepare_rebalance(group, reason)
        elif state is EMPTY or state is DEAD:
            raise IllegalStateException(
                "Group %s was not supposed to be in the state %s when the unknown static member %s rejoins."
                % (group.group_id, state.value, group_instance_id))
        # PreparingRebalance: nothing more to do, the member is parked

    # -- rebalance (§1.5) -------------------------------------------------------------------

    def maybe_prepare_rebalance(self, group: GroupMetadata, reason: Optional[str] = None) -> None:
        if group.can_rebalance():
            self.prepare_rebalance(group, reason)

    def prepare_rebalance(self, group: GroupMetadata, reason: Optional[str] = None) -> None:
        # if any members are awaiting sync, cancel their request and have them rejoin
        if group.state is COMPLETING_REBALANCE:
            self.reset_and_propagate_assignment_error(group, Errors.REBALANCE_IN_PROGRESS)
        # if a sync expiration is pending, cancel it
        self.remove_sync_expiration(group)
        config = self.config
        if group.state is EMPTY:
            initial_delay = config.group_initial_rebalance_delay_ms
            delayed_rebalance = InitialDelayedJoin(self, self.rebalance_purgatory, group, initial_delay,
                                                   initial_delay,
                                                   max(group.rebalance_timeout_ms() - initial_delay, 0))
        else:
            delayed_rebalance = DelayedJoin(self, group, group.rebalance_timeout_ms())
        group.transition_to(PREPARING_REBALANCE)
        self.rebalance_purgatory.try_complete_else_watch(delayed_rebalance, (group_join_key(group.group_id),))

    def try_complete_join(self, group: GroupMetadata, force_complete: Callable[[], bool]) -> bool:
        if group.has_all_members_joined():
            return force_complete()
        return False

    def on_expire_join(self) -> None:
        # nothing to do: the completion (onCompleteJoin) ran already
        pass

    def on_complete_join(self, group: GroupMetadata) -> None:
        """End of the join phase (§1.6): drop dynamic members that did not rejoin, elect a
        leader among the rejoined ones, bump the generation and answer every parked JoinGroup."""
        not_yet_rejoined_dynamic = [m for m in group.members.values()
                                    if m.awaiting_join_callback is None and m.group_instance_id is None]
        for failed_member in not_yet_rejoined_dynamic:
            group.remove(failed_member.member_id)
            self.remove_heartbeat_for_leaving_member(group, failed_member.member_id)
        if group.state is DEAD:
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # Only static members that have not rejoined remain: postpone the completion with
            # another DelayedJoin until their session timeouts remove them.
            self.rebalance_purgatory.try_complete_else_watch(
                DelayedJoin(self, group, group.rebalance_timeout_ms()), (group_join_key(group.group_id),))
            return
        group.init_next_generation(self.time.milliseconds())
        if group.state is EMPTY:
            # An empty group record; a failed write is only logged in Kafka: after a failover the
            # previous generation becomes active again and times out.
            self.group_manager.store_group(group, {}, _ignore_store_error)
            return
        leader_id = group.leader_id
        for member in list(group.members.values()):
            member_id = member.member_id
            group.maybe_invoke_join_callback(member, self._join_result(group, member_id, member_id == leader_id))
            self.complete_and_schedule_next_heartbeat_expiration(group, member)
            member.is_new = False
            group.add_pending_sync_member(member_id)
        self.schedule_pending_sync(group)

    # -- SyncGroup (§1.7) -------------------------------------------------------------------

    def handle_sync_group(self, group_id: str, generation: int, member_id: str, protocol_type: Optional[str],
                          protocol_name: Optional[str], group_instance_id: Optional[str],
                          group_assignment: Dict[str, object],
                          response_callback: Callable[[SyncGroupResponseData], None]) -> None:
        error = self.validate_group_status(group_id, SYNC_GROUP)
        if error is not None:
            if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
                # The coordinator is loading: the state of the active rebalance is lost and the
                # group has to start over at JoinGroup. REBALANCE_IN_PROGRESS makes the consumer
                # rejoin without rediscovering the coordinator.
                error = Errors.REBALANCE_IN_PROGRESS
            response_callback(sync_error(error))
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            response_callback(sync_error(Errors.UNKNOWN_MEMBER_ID))
            return
        self.do_sync_group(group, generation, member_id, protocol_type, protocol_name, group_instance_id,
                           group_assignment, response_callback)

    def validate_sync_group(self, group: GroupMetadata, generation_id: int, member_id: str,
                            protocol_type: Optional[str], protocol_name: Optional[str],
                            group_instance_id: Optional[str]) -> Optional[Errors]:
        if group.state is DEAD:
            # the group was just unloaded: let the member find the coordinator again
            return Errors.COORDINATOR_NOT_AVAILABLE
        error = self.validate_current_member(group, member_id, group_instance_id)
        if error is not None:
            return error
        error = self.validate_generation(group, generation_id)
        if error is not None:
            return error
        if protocol_type is not None and group.protocol_type != protocol_type:
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        if protocol_name is not None and group.protocol_name != protocol_name:
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        return None

    def do_sync_group(self, group: GroupMetadata, generation_id: int, member_id: str,
                      protocol_type: Optional[str], protocol_name: Optional[str],
                      group_instance_id: Optional[str], group_assignment: Dict[str, object],
                      response_callback: Callable[[SyncGroupResponseData], None]) -> None:
        error = self.validate_sync_group(group, generation_id, member_id, protocol_type, protocol_name,
                                         group_instance_id)
        if error is not None:
            response_callback(sync_error(error))
            return
        state = group.state
        if state is EMPTY:
            response_callback(sync_error(Errors.UNKNOWN_MEMBER_ID))
        elif state is PREPARING_REBALANCE:
            response_callback(sync_error(Errors.REBALANCE_IN_PROGRESS))
        elif state is COMPLETING_REBALANCE:
            group.members[member_id].awaiting_sync_callback = response_callback
            self.remove_pending_sync_member(group, member_id)
            # if this is the leader, then we can attempt to persist state and transition to stable
            if group.is_leader(member_id):
                # fill any missing members with an empty assignment
                assignment = dict(group_assignment)
                for mid in group.members:
                    if mid not in assignment:
                        assignment[mid] = None

                def on_store(error: Errors) -> None:
                    # another member may have joined while we awaited this callback: only act if
                    # still CompletingRebalance in the same generation
                    if group.state is COMPLETING_REBALANCE and generation_id == group.generation_id:
                        if error is not _NONE:
                            self.reset_and_propagate_assignment_error(group, error)
                            self.maybe_prepare_rebalance(
                                group, "Error when storing group assignment during SyncGroup (member: %s)" % member_id)
                        else:
                            self.set_and_propagate_assignment(group, assignment)
                            group.transition_to(STABLE)

                self.group_manager.store_group(group, assignment, on_store)
        elif state is STABLE:
            self.remove_pending_sync_member(group, member_id)
            # if the group is stable, we just return the current assignment
            member = group.members[member_id]
            response_callback(SyncGroupResponseData(error_code=_NONE_CODE, protocol_type=group.protocol_type,
                                                    protocol_name=group.protocol_name,
                                                    assignment=member.assignment))
            self.complete_and_schedule_next_heartbeat_expiration(group, member)
        else:
            raise IllegalStateException("Reached unexpected condition for Dead group " + group.group_id)

    def reset_and_propagate_assignment_error(self, group: GroupMetadata, error: Errors) -> None:
        if group.state is not COMPLETING_REBALANCE:
            raise IllegalStateException("Group %s must be CompletingRebalance" % group.group_id)
        for member in group.members.values():
            member.assignment = None
        self.propagate_assignment(group, error)

    def set_and_propagate_assignment(self, group: GroupMetadata, assignment: Dict[str, object]) -> None:
        if group.state is not COMPLETING_REBALANCE:
            raise IllegalStateException("Group %s must be CompletingRebalance" % group.group_id)
        for member in group.members.values():
            member.assignment = assignment.get(member.member_id)
        self.propagate_assignment(group, _NONE)

    def propagate_assignment(self, group: GroupMetadata, error: Errors) -> None:
        if error is _NONE:
            protocol_type, protocol_name = group.protocol_type, group.protocol_name
        else:
            protocol_type = protocol_name = None
        code = error.value
        for member in list(group.members.values()):
            if group.maybe_invoke_sync_callback(member, SyncGroupResponseData(
                    error_code=code, protocol_type=protocol_type, protocol_name=protocol_name,
                    assignment=member.assignment)):
                # reset the session timeout after propagating the assignment: an expiry that hit
                # while the member was awaiting sync was ignored and armed no new deadline
                self.complete_and_schedule_next_heartbeat_expiration(group, member)

    # -- pending sync (DelayedSync) ---------------------------------------------------------

    def schedule_pending_sync(self, group: GroupMetadata) -> None:
        delayed_sync = DelayedSync(self, group, group.generation_id, group.rebalance_timeout_ms())
        self.rebalance_purgatory.try_complete_else_watch(delayed_sync, (group_sync_key(group.group_id),))

    def try_complete_pending_sync(self, group: GroupMetadata, generation_id: int,
                                  force_complete: Callable[[], bool]) -> bool:
        if generation_id != group.generation_id:
            return force_complete()
        state = group.state
        if state is DEAD or state is EMPTY or state is PREPARING_REBALANCE:
            return force_complete()
        # CompletingRebalance | Stable
        if group.has_received_sync_from_all_members():
            return force_complete()
        return False

    def on_expire_pending_sync(self, group: GroupMetadata, generation_id: int) -> None:
        if generation_id != group.generation_id:
            return
        state = group.state
        if state is COMPLETING_REBALANCE or state is STABLE:
            if not group.has_received_sync_from_all_members():
                pending_sync_members = group.all_pending_sync_members()
                for member_id in pending_sync_members:
                    group.remove(member_id)
                    self.remove_heartbeat_for_leaving_member(group, member_id)
                self.prepare_rebalance(group, "Removing %s on pending sync request expiration" % pending_sync_members)

    def remove_pending_sync_member(self, group: GroupMetadata, member_id: str) -> None:
        group.remove_pending_sync_member(member_id)
        self.maybe_complete_sync_expiration(group)

    def maybe_complete_sync_expiration(self, group: GroupMetadata) -> None:
        self.rebalance_purgatory.check_and_complete(group_sync_key(group.group_id))

    def remove_sync_expiration(self, group: GroupMetadata) -> None:
        group.clear_pending_sync_members()
        self.maybe_complete_sync_expiration(group)

    # -- Heartbeat (§1.8) -------------------------------------------------------------------

    def handle_heartbeat(self, group_id: str, member_id: str, group_instance_id: Optional[str],
                         generation_id: int, response_callback: Callable[[HeartbeatResponseData], None]) -> None:
        error = self.validate_group_status(group_id, HEARTBEAT)
        if error is not None:
            if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
                # the group is still loading, so respond just blindly
                error = _NONE
            response_callback(HeartbeatResponseData(error_code=error.value))
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            error = Errors.UNKNOWN_MEMBER_ID
        else:
            error = self.validate_heartbeat(group, generation_id, member_id, group_instance_id)
            if error is None:
                state = group.state
                if state is EMPTY:
                    error = Errors.UNKNOWN_MEMBER_ID
                elif state is COMPLETING_REBALANCE or state is STABLE:
                    # heartbeats may start right after the JoinGroup response (CompletingRebalance)
                    self.complete_and_schedule_next_heartbeat_expiration(group, group.members[member_id])
                    error = _NONE
                elif state is PREPARING_REBALANCE:
                    self.complete_and_schedule_next_heartbeat_expiration(group, group.members[member_id])
                    error = Errors.REBALANCE_IN_PROGRESS
                else:
                    raise IllegalStateException("Reached unexpected condition for Dead group " + group_id)
        response_callback(HeartbeatResponseData(error_code=error.value))

    def validate_heartbeat(self, group: GroupMetadata, generation_id: int, member_id: str,
                           group_instance_id: Optional[str]) -> Optional[Errors]:
        if group.state is DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        error = self.validate_current_member(group, member_id, group_instance_id)
        if error is not None:
            return error
        return self.validate_generation(group, generation_id)

    # -- session expiry (DelayedHeartbeat, §1.12) -------------------------------------------

    def complete_and_schedule_next_heartbeat_expiration(self, group: GroupMetadata, member: MemberMetadata) -> None:
        self.complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)

    def complete_and_schedule_next_expiration(self, group: GroupMetadata, member: MemberMetadata,
                                              timeout_ms: int) -> None:
        key = member_key(group.group_id, member.member_id)
        # complete current heartbeat expectation
        member.heartbeat_satisfied = True
        self.heartbeat_purgatory.check_and_complete(key)
        # reschedule the next heartbeat expiration deadline
        member.heartbeat_satisfied = False
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedHeartbeat(self, group, member.member_id, False, timeout_ms), (key,))

    def add_pending_member_expiration(self, group: GroupMetadata, pending_member_id: str, timeout_ms: int) -> None:
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedHeartbeat(self, group, pending_member_id, True, timeout_ms),
            (member_key(group.group_id, pending_member_id),))

    def remove_heartbeat_for_leaving_member(self, group: GroupMetadata, member_id: str) -> None:
        self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member_id))

    def try_complete_heartbeat(self, group: GroupMetadata, member_id: str, is_pending: bool,
                               force_complete: Callable[[], bool]) -> bool:
        if group.state is DEAD:
            # the group has been unloaded: the heartbeat is moot
            return force_complete()
        if is_pending:
            # complete the pending expiry once the member has actually joined
            if member_id in group.members:
                return force_complete()
            return False
        if self.should_complete_non_pending_heartbeat(group, member_id):
            return force_complete()
        return False

    def should_complete_non_pending_heartbeat(self, group: GroupMetadata, member_id: str) -> bool:
        member = group.members.get(member_id)
        if member is None:
            return True
        return member.has_satisfied_heartbeat()

    def on_expire_heartbeat(self, group: GroupMetadata, member_id: str, is_pending: bool) -> None:
        if group.state is DEAD:
            return
        if is_pending:
            # pending member removed after session timeout expiration
            self.remove_pending_member_and_update_group(group, member_id)
            return
        member = group.members.get(member_id)
        if member is None:
            return
        if not member.has_satisfied_heartbeat():
            self.remove_member_and_update_group(group, member, "removing member %s on heartbeat expiration" % member_id)

    def remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata,
                                       reason: Optional[str] = None) -> None:
        # New members may time out with a parked JoinGroup while the group is rebalancing: answer
        # it (UNKNOWN_MEMBER_ID) before removing the member, so the client retries the JoinGroup.
        group.maybe_invoke_join_callback(member, join_error(UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        state = group.state
        if state is STABLE or state is COMPLETING_REBALANCE:
            self.maybe_prepare_rebalance(group, reason)
        elif state is PREPARING_REBALANCE:
            self.rebalance_purgatory.check_and_complete(group_join_key(group.group_id))
        # Dead / Empty: nothing

    def remove_pending_member_and_update_group(self, group: GroupMetadata, member_id: str) -> None:
        group.remove(member_id)
        if group.state is PREPARING_REBALANCE:
            self.rebalance_purgatory.check_and_complete(group_join_key(group.group_id))

    # -- LeaveGroup (§1.9) ------------------------------------------------------------------

    def handle_leave_group(self, group_id: str, leaving_members: Sequence[MemberIdentity],
                           response_callback: Callable[[LeaveGroupResponseData], None]) -> None:
        error = self.validate_group_status(group_id, LEAVE_GROUP)
        if error is not None:
            response_callback(LeaveGroupResponseData(error_code=error.value))
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            response_callback(LeaveGroupResponseData(error_code=_NONE_CODE, members=[
                _member_leave_error(m, Errors.UNKNOWN_MEMBER_ID) for m in leaving_members]))
            return
        if group.state is DEAD:
            response_callback(LeaveGroupResponseData(error_code=Errors.COORDINATOR_NOT_AVAILABLE.value))
            return
        member_errors = []
        for leaving_member in leaving_members:
            member_id = leaving_member.member_id
            group_instance_id = leaving_member.group_instance_id
            if member_id == UNKNOWN_MEMBER_ID:
                # administrative removal by group instance id
                current_member_id = (None if group_instance_id is None
                                     else group.current_static_member_id(group_instance_id))
                if current_member_id is not None:
                    self.remove_current_member_from_group(group, current_member_id)
                    member_errors.append(_member_leave_error(leaving_member, _NONE))
                else:
                    member_errors.append(_member_leave_error(leaving_member, Errors.UNKNOWN_MEMBER_ID))
            elif group.is_pending_member(member_id):
                self.remove_pending_member_and_update_group(group, member_id)
                self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member_id))
                member_errors.append(_member_leave_error(leaving_member, _NONE))
            else:
                error = self.validate_current_member(group, member_id, group_instance_id)
                if error is None:
                    self.remove_current_member_from_group(group, member_id)
                    error = _NONE
                member_errors.append(_member_leave_error(leaving_member, error))
        response_callback(LeaveGroupResponseData(error_code=_NONE_CODE, members=member_errors))

    def remove_current_member_from_group(self, group: GroupMetadata, member_id: str) -> None:
        member = group.members[member_id]
        self.remove_member_and_update_group(group, member, "Removing member %s on LeaveGroup" % member_id)
        self.remove_heartbeat_for_leaving_member(group, member_id)

    # -- OffsetCommit / OffsetFetch (§1.10) -------------------------------------------------

    def handle_commit_offsets(self, group_id: str, member_id: str, group_instance_id: Optional[str],
                              generation_id: int, offset_metadata: Dict[TopicPartition, OffsetAndMetadata],
                              response_callback: Callable[[Dict[TopicPartition, Errors]], None]) -> None:
        error = self.validate_group_status(group_id, OFFSET_COMMIT)
        if error is not None:
            response_callback(dict.fromkeys(offset_metadata, error))
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            if generation_id < 0:
                # the group is not relying on Kafka for group management, so allow the commit
                group = self.group_manager.add_group(GroupMetadata(group_id, EMPTY))
            else:
                # or this is a request coming from an older generation. either way, reject the commit
                response_callback(dict.fromkeys(offset_metadata, Errors.ILLEGAL_GENERATION))
                return
        self.do_commit_offsets(group, member_id, group_instance_id, generation_id, offset_metadata,
                               response_callback)

    def validate_offset_commit(self, group: GroupMetadata, generation_id: int, member_id: str,
                               group_instance_id: Optional[str]) -> Optional[Errors]:
        if group.state is DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and group.state is EMPTY:
            # the admin client or a consumer without group management may commit to an empty group
            return None
        if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or group_instance_id is not None:
            error = self.validate_current_member(group, member_id, group_instance_id)
            if error is not None:
                return error
            return self.validate_generation(group, generation_id)
        # generation < 0, no member id, no instance id and the group is not empty
        return Errors.UNKNOWN_MEMBER_ID

    def do_commit_offsets(self, group: GroupMetadata, member_id: str, group_instance_id: Optional[str],
                          generation_id: int, offset_metadata: Dict[TopicPartition, OffsetAndMetadata],
                          response_callback: Callable[[Dict[TopicPartition, Errors]], None]) -> None:
        error = self.validate_offset_commit(group, generation_id, member_id, group_instance_id)
        if error is not None:
            response_callback(dict.fromkeys(offset_metadata, error))
            return
        state = group.state
        if state is EMPTY:
            self.group_manager.store_offsets(group, member_id, offset_metadata, response_callback)
        elif state is STABLE or state is PREPARING_REBALANCE:
            # during PreparingRebalance commits are still allowed: the heartbeat response tells
            # the consumer about the rebalance
            self.complete_and_schedule_next_heartbeat_expiration(group, group.members[member_id])
            self.group_manager.store_offsets(group, member_id, offset_metadata, response_callback)
        elif state is COMPLETING_REBALANCE:
            # the member already has the new generation from its JoinGroup response but the group
            # has not completed the rebalance yet
            response_callback(dict.fromkeys(offset_metadata, Errors.REBALANCE_IN_PROGRESS))
        else:
            raise IllegalStateException("Logic error: unexpected group state " + state.value)

    def handle_delete_groups(self, group_ids: Sequence[str]) -> Dict[str, Errors]:
        """``handleDeleteGroups``: an Empty group goes Dead and is removed with all its offsets
        (``cleanupGroupMetadata``, tombstones for both); a group with members is refused
        NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND (NOT_COORDINATOR if this broker does not
        own its partition after all)."""
        errors: Dict[str, Errors] = {}
        eligible: List[GroupMetadata] = []
        for group_id in group_ids:
            error = self.validate_group_status(group_id, DELETE_GROUPS)
            if error is not None:
                errors[group_id] = error
                continue
            group = self.group_manager.get_group(group_id)
            if group is None or group.state is DEAD:
                errors[group_id] = (Errors.GROUP_ID_NOT_FOUND if self.group_manager.group_not_exists(group_id)
                                    else Errors.NOT_COORDINATOR)
            elif group.state is EMPTY:
                group.transition_to(DEAD)
                eligible.append(group)
            else:
                errors[group_id] = Errors.NON_EMPTY_GROUP
        if eligible:
            self.group_manager.cleanup_group_metadata(eligible, GroupMetadata.remove_all_offsets)
            for group in eligible:
                errors[group.group_id] = _NONE
        return errors

    def handle_fetch_offsets(self, group_id: str, require_stable: bool = False,
                             partitions: Optional[List[TopicPartition]] = None) -> Tuple[Errors, Dict]:
        """``(error, {TopicPartition: OffsetFetchPartitionData})``; offsets are returned blindly
        regardless of the group state (the group may not use group management)."""
        error = self.validate_group_status(group_id, OFFSET_FETCH)
        if error is not None:
            return error, {}
        return _NONE, self.group_manager.get_offsets(group_id, require_stable, partitions)

    # -- partition emigration / immigration (§1.13) -----------------------------------------

    def on_election(self, offsets_partition: int) -> None:
        """Became leader of an offsets partition: start loading it (``onElection``)."""
        self.group_manager.schedule_load_group_and_offsets(offsets_partition, self.on_group_loaded)

    def on_resignation(self, offsets_partition: int) -> None:
        """Lost leadership of an offsets partition: unload its groups (``onResignation``)."""
        self.group_manager.remove_groups_for_partition(offsets_partition, self.on_group_unloaded)

    def finish_loading(self, offsets_partition: Optional[int] = None) -> List[int]:
        return self.group_manager.finish_loading(offsets_partition)

    def on_group_loaded(self, group: GroupMetadata) -> None:
        if group.state is not STABLE and group.state is not EMPTY:
            raise IllegalStateException("Loaded group %s in state %s" % (group.group_id, group.state.value))
        if self.group_is_over_capacity(group):
            self.prepare_rebalance(group, "Freshly-loaded group is over capacity (%d). Rebalancing in order to "
                                          "give a chance for consumers to commit offsets" % self.config.group_max_size)
        for member in list(group.members.values()):
            self.complete_and_schedule_next_heartbeat_expiration(group, member)

    def group_is_over_capacity(self, group: GroupMetadata) -> bool:
        return len(group.members) > self.config.group_max_size

    def take_members_for_upgrade(self, group_id: str) -> Optional[Tuple[int, List[MemberMetadata]]]:
        """The classic group's part of Kafka 4.x's online upgrade (``convertToConsumerGroup``, when a
        ConsumerGroupHeartbeat joins a classic group): None when the group has no members (an empty
        classic group is only the holder of the group's offsets here, which the consumer group keeps
        using); else the generation and the members as they were, after their parked JoinGroup and
        SyncGroup answers were sent REBALANCE_IN_PROGRESS (``completeAllJoinFutures``,
        ``completeAllSyncFutures``) and they were removed, the group left Empty with its offsets.
        GroupIdNotFoundException when the group's members do not use the consumer protocol
        (``validateOnlineUpgrade``)."""
        group = self.group_manager.get_group(group_id)
        if group is None or group.state is DEAD or not group.members:
            return None
        if group.protocol_type != CONSUMER_PROTOCOL_TYPE:
            raise GroupIdNotFoundException(f"Cannot upgrade classic group {group_id} to consumer group because the "
                                           "group does not use the consumer embedded protocol.")
        generation, members = group.generation_id, list(group.members.values())
        for member in members:
            group.maybe_invoke_join_callback(member, join_error(member.member_id, Errors.REBALANCE_IN_PROGRESS))
            group.maybe_invoke_sync_callback(member, sync_error(Errors.REBALANCE_IN_PROGRESS))
        for member_id in [m.member_id for m in members] + list(group.pending_members):
            group.remove(member_id)
            self.remove_heartbeat_for_leaving_member(group, member_id)
        # nobody left: the rebalance completes at once and the group is Empty (its offsets stay)
        if group.state is STABLE or group.state is COMPLETING_REBALANCE:
            self.prepare_rebalance(group, "upgraded to a consumer group")
        elif group.state is PREPARING_REBALANCE:
            self.rebalance_purgatory.check_and_complete(group_join_key(group.group_id))
        return generation, members

    def on_group_unloaded(self, group: GroupMetadata) -> None:
        previous_state = group.state
        group.transition_to(DEAD)
        if previous_state is PREPARING_REBALANCE:
            for member in list(group.members.values()):
                group.maybe_invoke_join_callback(member, join_error(member.member_id, Errors.NOT_COORDINATOR))
            self.rebalance_purgatory.check_and_complete(group_join_key(group.group_id))
        elif previous_state is STABLE or previous_state is COMPLETING_REBALANCE:
            for member in list(group.members.values()):
                group.maybe_invoke_sync_callback(member, sync_error(Errors.NOT_COORDINATOR))
                self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member.member_id))
        self.remove_sync_expiration(group)

    def __repr__(self) -> str:
        return "GroupCoordinator(broker=%d, active=%s)" % (self.broker_id, self._is_active)


def _plain_protocol_set(protocols: Protocols) -> List[str]:
    return [name for name, _ in protocols]


def _member_leave_error(member: MemberIdentity, error: Errors) -> MemberResponse:
    return MemberResponse(member_id=member.member_id, group_instance_id=member.group_instance_id,
                          error_code=error.value)


def _ignore_store_error(error: Errors) -> None:
    pass
