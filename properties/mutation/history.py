"""Mutants from public bug histories (issue 14, item 6: groupcheck's own measure of power).

Each mutant here puts back, into ``impl/``, one decision that a Kafka client or coordinator really
shipped and later fixed (or that a fix's review rejected): the cited JIRA or issue says what went
wrong in production. Like :mod:`properties.mutation.mutants`' own, a mutant replaces one function or
method with a copy, or a thin wrapper, that differs from the original in exactly one decision
(marked ``# MUTANT:``); nothing on disk changes.

:data:`HISTORY_DEFS` rows are ``(name, description, target, kind, replacement factory, source)``;
:mod:`properties.mutation.mutants` adds them to its catalogue. A wrapper looks the original up when
the mutant is applied (the factory runs inside :func:`properties.mutation.mutants.applied`).
"""

from __future__ import annotations

_AC = "impl.coordinator.abstract_coordinator"
_CC = "impl.coordinator.consumer_coordinator"
_GC = "impl.server.group_coordinator.GroupCoordinator"
_GM = "impl.server.group_metadata"
_GMM = "impl.server.group_metadata_manager.GroupMetadataManager"


def _original(path: str):
    """The attribute *path* (``module.Class.attr``) as it is now (the unmutated one)."""
    import importlib

    module, cls, attr = path.rsplit(".", 2)
    return getattr(getattr(importlib.import_module(module), cls), attr)


def _errors():
    from impl.errors import Errors

    return Errors


# ---- client: response handlers ------------------------------------------------------------------

def _sync_illegal_generation_resets_member_id():
    """KAFKA-13419: ILLEGAL_GENERATION keeps the member id (it is still valid); resetting it makes
    the member rejoin as a stranger and the coordinator wait for the old id's session."""
    original = _original(f"{_AC}.SyncGroupResponseHandler.handle")
    Errors = _errors()

    def handle(self, sync_response, future):
        error = Errors.for_code(sync_response.error_code)
        if error is Errors.ILLEGAL_GENERATION and self.generation_unchanged():
            # MUTANT: ILLEGAL_GENERATION resets the member id too
            self.coordinator.reset_state_on_response_error("SyncGroup", error, True)
            future.raise_(error)
            return
        original(self, sync_response, future)
    return handle


def _heartbeat_illegal_generation_resets_member_id():
    """kafka-python #3017 ("Preserve member id on IllegalGeneration error"), KAFKA-13419."""
    original = _original(f"{_AC}.HeartbeatResponseHandler.handle")
    Errors = _errors()

    def handle(self, heartbeat_response, future):
        error = Errors.for_code(heartbeat_response.error_code)
        if error is Errors.ILLEGAL_GENERATION and self.generation_unchanged():
            # MUTANT: ILLEGAL_GENERATION resets the member id too
            self.coordinator.reset_state_on_response_error("Heartbeat", error, True)
            future.raise_(error)
            return
        original(self, heartbeat_response, future)
    return handle


def _sync_rebalance_in_progress_resets():
    """KAFKA-13891 (apache/kafka#12140): reset the generation when SyncGroup fails with
    REBALANCE_IN_PROGRESS (later reverted: the member then rejoins with generation -1)."""
    original = _original(f"{_AC}.SyncGroupResponseHandler.handle")
    Errors = _errors()

    def handle(self, sync_response, future):
        error = Errors.for_code(sync_response.error_code)
        if error is Errors.REBALANCE_IN_PROGRESS:
            # MUTANT: the generation is reset (the member id kept) before the rejoin
            self.coordinator.reset_state_on_response_error("SyncGroup", error, False)
        original(self, sync_response, future)
    return handle


def _join_unknown_member_ignores_sent_generation():
    """KAFKA-9823 (apache/kafka#8445, "Remember the sent generation for the coordinator request"):
    an UNKNOWN_MEMBER_ID answering a JoinGroup of an older generation resets the current one."""
    original = _original(f"{_AC}.JoinGroupResponseHandler.handle")
    Errors = _errors()

    def handle(self, join_response, future):
        error = Errors.for_code(join_response.error_code)
        if error is Errors.UNKNOWN_MEMBER_ID:
            # MUTANT: no generationUnchanged() check
            self.coordinator.reset_state_on_response_error("JoinGroup", error, True)
            future.raise_(error)
            return
        original(self, join_response, future)
    return handle


def _sync_error_ignores_sent_generation():
    """KAFKA-9823: a SyncGroup UNKNOWN_MEMBER_ID/ILLEGAL_GENERATION for an older generation resets
    the member's current one."""
    original = _original(f"{_AC}.SyncGroupResponseHandler.handle")
    Errors = _errors()

    def handle(self, sync_response, future):
        error = Errors.for_code(sync_response.error_code)
        if error is Errors.UNKNOWN_MEMBER_ID or error is Errors.ILLEGAL_GENERATION:
            # MUTANT: no generationUnchanged() check
            self.coordinator.reset_state_on_response_error("SyncGroup", error, error is not Errors.ILLEGAL_GENERATION)
            future.raise_(error)
            return
        original(self, sync_response, future)
    return handle


def _heartbeat_rebalance_rejoins_while_completing():
    """KAFKA-10134 (apache/kafka#8834): a REBALANCE_IN_PROGRESS heartbeat answer that arrives while
    the member is already completing a rebalance is ignored; before, it requested another rejoin."""
    original = _original(f"{_AC}.HeartbeatResponseHandler.handle")
    Errors = _errors()

    def handle(self, heartbeat_response, future):
        error = Errors.for_code(heartbeat_response.error_code)
        if error is Errors.REBALANCE_IN_PROGRESS:
            # MUTANT: requests a rejoin whatever the member's state
            self.coordinator.request_rejoin("group is already rebalancing")
            future.raise_(error)
            return
        original(self, heartbeat_response, future)
    return handle


def _member_id_required_not_adopted():
    """segmentio/kafka-go#1432: on MEMBER_ID_REQUIRED (KIP-394, KAFKA-7824) the consumer must rejoin
    with the member id the coordinator handed out; kafka-go discarded it and retried with an empty
    id, getting a new pending id every time, for ever (kafka_ex#539: retried blindly first)."""
    original = _original(f"{_AC}.JoinGroupResponseHandler.handle")
    Errors = _errors()

    def handle(self, join_response, future):
        error = Errors.for_code(join_response.error_code)
        if error is Errors.MEMBER_ID_REQUIRED:
            # MUTANT: the given member id is not adopted
            self.coordinator.request_rejoin("need to re-join with the given member-id")
            future.raise_(error)
            return
        original(self, join_response, future)
    return handle


# ---- client: the join loop and the heartbeat thread ----------------------------------------------

def _retriable_join_failure_resets_member():
    """KAFKA-13214 (apache/kafka#11231): the consumer reset its member id and generation after any
    retriable error in a rebalance (a disconnect, a coordinator move); it then waits for its old
    member id's session to expire before the rebalance can complete."""
    original = _original(f"{_AC}.AbstractCoordinator.reset_join_group_future")

    def reset_join_group_future(self):
        future = self.join_future
        original(self)
        if future is not None and future.is_done() and future.failed() and future.is_retriable() and \
                not isinstance(future.exception(), _rejoin_at_once()):
            # MUTANT: resetStateAndRejoin after a retriable rebalance failure
            self.reset_state_and_rejoin("rebalance failed with retriable error", True)
    return reset_join_group_future


def _rejoin_at_once():
    from impl.errors import (IllegalGenerationException, MemberIdRequiredException, RebalanceInProgressException,
                             UnknownMemberIdException)

    return (UnknownMemberIdException, IllegalGenerationException, RebalanceInProgressException,
            MemberIdRequiredException)


def _reset_without_join_prepare():
    """KAFKA-12983 (apache/kafka#10986): resetStateAndRejoin did not set needsJoinPrepare, so a
    member that lost its generation during a rebalance rejoined without onJoinPrepare (its
    partitions were neither revoked nor lost)."""

    def reset_state_and_rejoin(self, reason, should_reset_member_id):
        self.reset_state_and_generation(reason, should_reset_member_id)
        self.request_rejoin(reason)
        # MUTANT: needs_join_prepare is not set
    return reset_state_and_rejoin


def _heartbeat_disabled_until_stable():
    """KAFKA-10134 (apache/kafka#8834) and KAFKA-10122: the heartbeat thread stopped whenever the
    member was not STABLE, so a member waiting for its SyncGroup answer (a slow leader assignment)
    sent no heartbeats and was expired."""
    original = _original(f"{_AC}.HeartbeatThread.run_once")

    def run_once(self):
        from impl.coordinator.abstract_coordinator import MemberState

        if self.enabled and not self.closed and self.wait_until is None and \
                self.coordinator.state is MemberState.COMPLETING_REBALANCE:
            # MUTANT: "if (state != MemberState.STABLE)" disables the thread
            self.disable()
            return "disable"
        return original(self)
    return run_once


def _heartbeat_lookup_without_backoff():
    """KAFKA-4777 (apache/kafka#2564; kafka-python #1457): after clearing a failed coordinator lookup
    the heartbeat thread looked up the coordinator again at once, in a tight loop."""
    original = _original(f"{_AC}.HeartbeatThread.run_once")

    def run_once(self):
        tag = original(self)
        if tag == "clear-lookup":
            self.wait_until = None  # MUTANT: no wait(retry.backoff.ms) after clearing the lookup
        return tag
    return run_once


def _failed_lookup_not_cleared():
    """KAFKA-10793 (apache/kafka#9671): a failed FindCoordinator future was left in place (cleared
    only by a listener that a race skipped), so every later lookup returned the same failure and
    the consumer never found its coordinator again."""

    def clear_find_coordinator_future(self):
        future = self.find_coordinator_future
        if future is not None and future.is_done() and future.failed():
            return  # MUTANT: a failed lookup stays memoised
        self.find_coordinator_future = None
    return clear_find_coordinator_future


def _generation_reset_join_future_kept():
    """KAFKA-9140 (apache/kafka#7647): when the heartbeat thread had reset the generation before the
    rebalance callback ran, joinGroupIfNeeded did not reset the join future, so no new JoinGroup
    was ever sent and the consumer looped for ever."""
    original = _original(f"{_AC}.AbstractCoordinator.reset_join_group_future")

    def reset_join_group_future(self):
        from impl.coordinator.abstract_coordinator import MemberState

        future = self.join_future
        if future is not None and future.is_done() and future.succeeded() and self.state is MemberState.UNJOINED:
            return  # MUTANT: the "generation was reset by the heartbeat thread" branch keeps the future
        original(self)
    return reset_join_group_future


def _heartbeat_rebalance_no_rejoin():
    """KAFKA-10134's follow-up (apache/kafka#9354, "Set the re-join flag in heartbeat failure"): a
    STABLE member told REBALANCE_IN_PROGRESS by a heartbeat answer must request a rejoin; without
    the flag it keeps heartbeating and never joins the new generation, and is removed from it."""
    original = _original(f"{_AC}.HeartbeatResponseHandler.handle")
    Errors = _errors()

    def handle(self, heartbeat_response, future):
        from impl.coordinator.abstract_coordinator import MemberState

        error = Errors.for_code(heartbeat_response.error_code)
        if error is Errors.REBALANCE_IN_PROGRESS and self.coordinator.state is MemberState.STABLE:
            future.raise_(error)  # MUTANT: the rejoin flag is not set
            return
        original(self, heartbeat_response, future)
    return handle


def _join_complete_without_generation_check():
    """KAFKA-8104 (apache/kafka#7460; aiokafka#727): the heartbeat thread can reset the generation
    (a fencing answer, a poll timeout's leave) between the SyncGroup answer and the application
    thread's onJoinComplete; completing the rebalance with the reset generation applies an
    assignment no generation owns, and the member never rejoins."""

    def join_group_if_needed(self, timer):
        while self.rejoin_needed_or_pending():
            if not self.ensure_coordinator_ready(timer):
                return False
            if self.needs_join_prepare:
                self.needs_join_prepare = False
                if not self.on_join_prepare(timer, self.generation.generation_id, self.generation.member_id):
                    self.needs_join_prepare = True
                    return False
            future = self.initiate_join_group()
            self.client.poll_future(future, timer)
            if not future.is_done():
                return False
            if future.succeeded():
                generation_snapshot = self.generation
                # MUTANT: no check that the heartbeat thread left the generation and state alone
                self.on_join_complete(generation_snapshot.generation_id, generation_snapshot.member_id,
                                      generation_snapshot.protocol_name, future.value())
                self.reset_join_group_future()
                self.needs_join_prepare = True
            else:
                from impl.errors import (IllegalGenerationException, MemberIdRequiredException,
                                         RebalanceInProgressException, UnknownMemberIdException)

                exception = future.exception()
                self.reset_join_group_future()
                if not isinstance(exception, MemberIdRequiredException):
                    simple_name = type(exception).__name__
                    self.request_rejoin("rebalance failed due to " + simple_name,
                                        "rebalance failed due to '%s' (%s)" % (exception, simple_name))
                if isinstance(exception, (UnknownMemberIdException, IllegalGenerationException,
                                          RebalanceInProgressException, MemberIdRequiredException)):
                    continue
                if not future.is_retriable():
                    raise exception
                if timer.is_expired():
                    return False
                timer.sleep(self.rebalance_config.retry_backoff_ms)
        return True
    return join_group_if_needed


def _coordinator_disconnect_unseen():
    """KAFKA-2677 (apache/kafka#349, "ensure consumer sees coordinator disconnects"): a coordinator
    whose connection failed must count as unknown (checkAndGetCoordinator), or the consumer keeps
    sending to it through the reconnect backoff and never looks it up again."""

    def check_and_get_coordinator(self):
        return self.coordinator  # MUTANT: a failed coordinator connection is not noticed here
    return check_and_get_coordinator


def _join_without_rebalance_timeout():
    """kafka4beam/brod#465 (and zendesk/ruby-kafka#786): a client that leaves JoinGroup's rebalance
    timeout at the schema's default of -1 gets a coordinator that waits for nobody: every rebalance
    ends at once and drops the members that had not rejoined yet, for ever."""

    def send_join_group_request(self):
        from impl.coordinator.abstract_coordinator import JoinGroupResponseHandler, maybe_truncate_reason
        from impl.future import RequestFuture
        from impl.protocol import JoinGroupRequestData

        if self.coordinator_unknown():
            return RequestFuture.coordinator_not_available()
        config = self.rebalance_config
        data = JoinGroupRequestData(
            group_id=config.group_id,
            session_timeout_ms=config.session_timeout_ms,
            rebalance_timeout_ms=-1,  # MUTANT: the rebalance timeout is left at the schema's default
            member_id=self.generation.member_id,
            group_instance_id=config.group_instance_id,
            protocol_type=self.protocol_type(),
            protocols=self.metadata(),
            reason=maybe_truncate_reason(self.rejoin_reason))
        return self.client.send(self.coordinator, data, self.join_group_request_timeout_ms()) \
            .compose(JoinGroupResponseHandler(self, self.generation))
    return send_join_group_request


def _commit_fencing_ignored():
    """twmb/franz-go#1326 ("Fix commit-triggered group rejoin"): an OffsetCommit answered
    UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION was only reported; the member kept running in a group
    session the coordinator had ended, until a heartbeat noticed."""
    original = _original(f"{_CC}.OffsetCommitResponseHandler.handle")
    Errors = _errors()

    def handle(self, commit_response, future):
        from impl.errors import CommitFailedException

        for topic in commit_response.topics:
            for partition in topic.partitions:
                error = Errors.for_code(partition.error_code)
                if error is Errors.UNKNOWN_MEMBER_ID or error is Errors.ILLEGAL_GENERATION:
                    future.raise_(CommitFailedException())  # MUTANT: no reset, no rejoin
                    return
                if error is not Errors.NONE:
                    return original(self, commit_response, future)
        return original(self, commit_response, future)
    return handle


def _join_group_not_memoised():
    """confluentinc/librdkafka#3455 ("Allow only one simultaneous Join or Sync GroupRequest"): a
    rejoin requested while a JoinGroup was outstanding sent another one before the first was
    answered, which broke the consumer's state."""

    def initiate_join_group(self):
        if self.join_future is None or self.rejoin_needed:  # MUTANT: a pending join is not reused on a new rejoin request
            from impl.coordinator.abstract_coordinator import MemberState

            self.state = MemberState.PREPARING_REBALANCE
            if self.last_rebalance_start_ms == -1:
                self.last_rebalance_start_ms = self.time.milliseconds()
            self.join_future = self.send_join_group_request()
        return self.join_future
    return initiate_join_group


def _heartbeat_error_drops_coordinator():
    """dpkp/kafka-python#3082 ("do not mark coordinator dead on all HeartbeatResponse errors"): a
    heartbeat answered with any error (UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, ...) dropped the
    coordinator too, sending the member through a needless rediscovery before it could rejoin."""
    original = _original(f"{_AC}.HeartbeatResponseHandler.handle")
    Errors = _errors()

    def handle(self, heartbeat_response, future):
        error = Errors.for_code(heartbeat_response.error_code)
        if error not in (Errors.NONE, Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self.coordinator.mark_coordinator_unknown(False, "heartbeat failed: " + error.name)  # MUTANT
        original(self, heartbeat_response, future)
    return handle


# ---- coordinator (broker side) ------------------------------------------------------------------

def _ownership_checked_before_loading():
    """apache/kafka#4788 ("Fix partition loading checks in GroupCoordinator"): the coordinator
    checked that it owned the group's partition before checking whether it was still loading it;
    loading comes before ownership, so COORDINATOR_LOAD_IN_PROGRESS was never answered and clients
    were sent to rediscover a coordinator they had already found (NOT_COORDINATOR)."""

    def validate_group_status(self, group_id, api):
        from impl.errors import Errors

        if not self.is_valid_group_id(group_id, api):
            return Errors.INVALID_GROUP_ID
        if not self._is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if not self.is_coordinator_for_group(group_id):  # MUTANT: ownership before loading
            return Errors.NOT_COORDINATOR
        if self.is_coordinator_load_in_progress(group_id):
            return Errors.COORDINATOR_LOAD_IN_PROGRESS
        return None
    return validate_group_status


def _no_pending_sync_deadline():
    """KAFKA-12890 (apache/kafka#10863): nothing removed the members that never sent SyncGroup once
    heartbeats were allowed in CompletingRebalance, and the group stayed in CompletingRebalance."""

    def schedule_pending_sync(self, group):
        return  # MUTANT: no DelayedSync
    return schedule_pending_sync


def _pending_sync_expiry_keeps_members():
    """KAFKA-12890: the pending-sync expiry must remove the members that did not sync before it
    rebalances; rebalancing with them still in the group waits for them again."""

    def on_expire_pending_sync(self, group, generation_id):
        from impl.server.group_metadata import COMPLETING_REBALANCE, STABLE

        if generation_id != group.generation_id:
            return
        if group.state is COMPLETING_REBALANCE or group.state is STABLE:
            if not group.has_received_sync_from_all_members():
                # MUTANT: the members that did not sync are not removed
                self.prepare_rebalance(group, "pending sync request expiration")
    return on_expire_pending_sync


def _parked_members_expire():
    """KAFKA-9752 (apache/kafka#8354) is about MemberMetadata's keep-alive rule: a member parked in
    JoinGroup or SyncGroup satisfies its heartbeat expectation. Without it a member waiting for a
    slow rebalance is expired by its own session."""

    def has_satisfied_heartbeat(self):
        return self.heartbeat_satisfied  # MUTANT: awaiting join/sync no longer keeps a member alive
    return has_satisfied_heartbeat


def _new_members_kept_alive():
    """KAFKA-9752 (apache/kafka#8354): a new member parked in its first JoinGroup must still be
    expirable (the new-member timeout); keeping it alive like an old member lets a disconnected
    new member hold the rebalance until the rebalance timeout."""

    def has_satisfied_heartbeat(self):
        # MUTANT: the is_new check is gone
        if self.awaiting_join_callback is not None or self.awaiting_sync_callback is not None:
            return True
        return self.heartbeat_satisfied
    return has_satisfied_heartbeat


def _v0_rebalance_timeout_not_defaulted():
    """KAFKA-8653 (apache/kafka#7072): JoinGroup v0 has no rebalance timeout and must use the
    session timeout; the generated schema's default of -1 made rebalances end at once and kick
    every old member out, in an endless loop."""

    def handle_join_group_request(self, request, version, client_id, client_host, callback):
        group_instance_id = request.group_instance_id
        require_known_member_id = version >= 4 and group_instance_id is None
        rebalance_timeout_ms = request.rebalance_timeout_ms  # MUTANT: v0 does not default to the session timeout
        protocols = tuple((p.name, p.metadata) for p in request.protocols)
        self.group_coordinator.handle_join_group(
            request.group_id, request.member_id, group_instance_id, require_known_member_id, version >= 9,
            client_id, client_host, rebalance_timeout_ms, request.session_timeout_ms, request.protocol_type,
            protocols, callback, request.reason)
    return handle_join_group_request


def _pending_member_leave_rejected():
    """KAFKA-7909 (apache/kafka#6251): a pending member (one handed an id with MEMBER_ID_REQUIRED)
    must be able to leave; answered UNKNOWN_MEMBER_ID and kept, it holds back the rebalance until
    its pending timeout."""

    def handle_leave_group(self, group_id, leaving_members, response_callback):
        from impl.errors import Errors
        from impl.protocol import LeaveGroupResponseData
        from impl.server.group_coordinator import LEAVE_GROUP, UNKNOWN_MEMBER_ID, _member_leave_error
        from impl.server.group_metadata import DEAD

        error = self.validate_group_status(group_id, LEAVE_GROUP)
        if error is not None:
            response_callback(LeaveGroupResponseData(error_code=error.value))
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            response_callback(LeaveGroupResponseData(error_code=0, members=[
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
                current_member_id = (None if group_instance_id is None
                                     else group.current_static_member_id(group_instance_id))
                if current_member_id is not None:
                    self.remove_current_member_from_group(group, current_member_id)
                    member_errors.append(_member_leave_error(leaving_member, Errors.NONE))
                else:
                    member_errors.append(_member_leave_error(leaving_member, Errors.UNKNOWN_MEMBER_ID))
            else:  # MUTANT: no branch for a pending member: it is validated as a current one
                error = self.validate_current_member(group, member_id, group_instance_id)
                if error is None:
                    self.remove_current_member_from_group(group, member_id)
                    error = Errors.NONE
                member_errors.append(_member_leave_error(leaving_member, error))
        response_callback(LeaveGroupResponseData(error_code=0, members=member_errors))
    return handle_leave_group


def _pending_member_removal_no_join_check():
    """KAFKA-7909 (apache/kafka#6251): "a rebalance operation must successfully complete if a pending
    member either joins or times out": removing a pending member must try to complete the join."""

    def remove_pending_member_and_update_group(self, group, member_id):
        group.remove(member_id)  # MUTANT: the join phase is not re-checked
    return remove_pending_member_and_update_group


def _heartbeat_not_coordinator_unhandled():
    """zendesk/ruby-kafka#277 ("Rescue NotCoordinatorForGroup during heartbeats"): after the group
    moved to another coordinator, the heartbeat's NOT_COORDINATOR was not among the errors the
    client handled: it was raised as unexpected (ruby-kafka's consumer crashed) instead of sending
    the member to find the new coordinator."""
    original = _original(f"{_AC}.HeartbeatResponseHandler.handle")
    Errors = _errors()

    def handle(self, heartbeat_response, future):
        error = Errors.for_code(heartbeat_response.error_code)
        if error is Errors.NOT_COORDINATOR:  # MUTANT: not a case the handler knows
            from impl.errors import KafkaException

            future.raise_(KafkaException("Unexpected error in heartbeat response: " + error.message))
            return
        original(self, heartbeat_response, future)
    return handle


def _unsent_failed_every_poll():
    """KAFKA-3488 (apache/kafka#1183): ConsumerNetworkClient.poll ended by failing every request it
    could not send yet ("fail all requests that couldn't be sent"), so a request to a node still
    connecting (an SSL handshake, a slow link) failed at once instead of waiting for the connection
    until its request timeout, as failExpiredRequests lets it since."""
    original = _original("impl.consumer_network_client.ConsumerNetworkClient.fail_expired_requests")

    def fail_expired_requests(self, now):
        from impl.errors import RetriableException

        original(self, now)
        for node in list(self.unsent.nodes()):  # MUTANT: fail what is left unsent, expired or not
            # Kafka 0.9's SendFailedException: a RetriableException
            self._fail_unsent_requests(node, RetriableException("Failed to send request (not sent by the end of poll)"))
    return fail_expired_requests


def _follower_sync_answered_at_once():
    """nisshi-io/nisshi#679 (Tansu's SyncGroup handler, tansu-io/tansu administrator.rs): a
    follower's SyncGroup that arrives before the leader's was answered with whatever assignment the
    member had (empty) instead of waiting for the leader's; Kafka parks it until the leader's
    SyncGroup is stored (GroupCoordinator.doSyncGroup, CompletingRebalance)."""
    original = _original(f"{_GC}.do_sync_group")

    def do_sync_group(self, group, generation_id, member_id, protocol_type, protocol_name, group_instance_id,
                      group_assignment, response_callback):
        from impl.server.group_coordinator import COMPLETING_REBALANCE, SyncGroupResponseData

        if (group.state is COMPLETING_REBALANCE and not group.is_leader(member_id)
                and self.validate_sync_group(group, generation_id, member_id, protocol_type, protocol_name,
                                             group_instance_id) is None):
            self.remove_pending_sync_member(group, member_id)
            # MUTANT: answered now, with the assignment the member has (none yet), not parked
            response_callback(SyncGroupResponseData(error_code=0, protocol_type=group.protocol_type,
                                                    protocol_name=group.protocol_name,
                                                    assignment=group.members[member_id].assignment))
            return
        original(self, group, generation_id, member_id, protocol_type, protocol_name, group_instance_id,
                 group_assignment, response_callback)
    return do_sync_group


def _member_removal_no_join_check():
    """streamnative/kop#380 (Kafka-on-Pulsar's GroupCoordinator): removing a member while the group
    is PreparingRebalance did not re-check whether the join phase could complete (the
    joinPurgatory.checkAndComplete was commented out), so the group waited for the departed member
    until the rebalance timeout, and clients saw the coordinator as unavailable."""

    def remove_member_and_update_group(self, group, member, reason=None):
        from impl.server.group_coordinator import COMPLETING_REBALANCE, STABLE, UNKNOWN_MEMBER_ID, join_error
        from impl.errors import Errors

        group.maybe_invoke_join_callback(member, join_error(UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        state = group.state
        if state is STABLE or state is COMPLETING_REBALANCE:
            self.maybe_prepare_rebalance(group, reason)
        # MUTANT: PreparingRebalance: the join phase is not re-checked
    return remove_member_and_update_group


def _expired_member_not_checked():
    """KAFKA-8896 (apache/kafka#7377, "Check group state before completing delayed heartbeat"): a
    delayed heartbeat tried after its member had left the group looked the member up anyway, and
    the coordinator failed with NoSuchElementException (the fix: shouldCompleteNonPendingHeartbeat
    checks ``group.has(memberId)`` first)."""

    def should_complete_non_pending_heartbeat(self, group, member_id):
        member = group.members[member_id]  # MUTANT: no check that the member is still in the group
        return member.has_satisfied_heartbeat()
    return should_complete_non_pending_heartbeat


def _reconnect_backoff_from_attempt():
    """KAFKA-2459 (apache/kafka#290, "connection backoff, timeouts and retries"): the reconnect
    blackout was counted from when the connection attempt began, not from when the connection was
    lost, so a connection that failed after a long attempt (or lived a while) could be retried at
    once (ClusterConnectionStates.disconnected now stamps lastConnectAttemptMs with the disconnect)."""

    def disconnected(self, node_id, now):
        from impl.network.network_client import ConnectionState

        state = self._node_state_or_fail(node_id)
        # MUTANT: last_connect_attempt_ms keeps the attempt's start
        self._update_reconnect_backoff(state)
        if state.state == ConnectionState.CONNECTING:
            self._update_connection_setup_timeout(state)
            self._connecting_nodes.pop(node_id, None)
        else:
            self._reset_connection_setup_timeout(state)
        state.state = ConnectionState.DISCONNECTED
    return disconnected


def _disconnect_keeps_coordinator():
    """KAFKA-17293 (apache/kafka#16844, "HeartbeatRequestManager should rediscover disconnected
    coordinator"): a coordinator request that failed because the connection broke did not mark the
    coordinator unknown, so the member kept sending to a coordinator it could not reach instead of
    finding the current one (the classic consumer's CoordinatorResponseHandler.onFailure does)."""

    def on_failure(self, e, future):
        future.raise_(e)  # MUTANT: a DisconnectException does not mark the coordinator unknown
    return on_failure


def _eager_revoke_keeps_assignment():
    """KAFKA-5154 (apache/kafka#3181, "Consumer fetches from revoked partitions when SyncGroup fails
    with disconnection"): onJoinPrepare ran the revocation callback but left the assignment in
    place, so when the rebalance then failed the consumer went on fetching (and committing) the
    partitions it had revoked; the fix clears the assignment with the revocation."""
    original = _original(f"{_CC}.ConsumerCoordinator.on_join_prepare")

    def on_join_prepare(self, timer, generation, member_id):
        from impl.coordinator.abstract_coordinator import NO_GENERATION

        kept = self.subscriptions.assigned_partitions()
        done = original(self, timer, generation, member_id)
        # the eager branch of onJoinPrepare (a reset member's partitions are lost, not revoked)
        if kept and generation != NO_GENERATION.generation_id and member_id != NO_GENERATION.member_id:
            self.subscriptions.assign_from_subscribed(kept)  # MUTANT: revoked, but still assigned
        return done
    return on_join_prepare


def _heartbeat_rebalance_not_liveness():
    """confluentinc/librdkafka#3435 ("Keep session alive during long consumer group rebalances"): a
    heartbeat answered REBALANCE_IN_PROGRESS did not refresh the session timer, so members of a
    long rebalance timed their own sessions out; Kafka counts it as a heartbeat received
    (AbstractCoordinator.HeartbeatThread: "it is valid to continue heartbeating while the group is
    rebalancing")."""

    def on_failure(self, e):
        from impl.errors import FencedInstanceIdException

        if isinstance(e, FencedInstanceIdException):
            self.thread.failed = e
        else:  # MUTANT: REBALANCE_IN_PROGRESS is a failed heartbeat like any other
            self.thread.coordinator.heartbeat.fail_heartbeat()
    return on_failure


def _no_brokers_lookup_memoised():
    """KAFKA-4139 (apache/kafka#1831, "Reset findCoordinatorFuture when brokers are unavailable"):
    with no broker to ask, lookupCoordinator memoised the failed future, and every later lookup
    returned that failure without asking again."""

    def lookup_coordinator(self):
        from impl.future import RequestFuture

        if self.find_coordinator_future is None:
            node = self.client.least_loaded_node()
            if node is None:
                # MUTANT: the failed future is memoised
                self.find_coordinator_future = RequestFuture.no_brokers_available()
            else:
                self.find_coordinator_future = self.send_find_coordinator_request(node)
        return self.find_coordinator_future
    return lookup_coordinator


def _join_unknown_member_keeps_member_id():
    """kafka4beam/brod#177 ("UnknownMemberId after brod_sup restarts the client": "the member id is
    not reset, causing the group coordinator to rejoin again and again"): a JoinGroup answered
    UNKNOWN_MEMBER_ID must rejoin as a new member (AbstractCoordinator.JoinGroupResponseHandler
    resets the member id); keeping the id the coordinator does not know repeats the error."""
    original = _original(f"{_AC}.JoinGroupResponseHandler.handle")
    Errors = _errors()

    def handle(self, join_response, future):
        error = Errors.for_code(join_response.error_code)
        if error is Errors.UNKNOWN_MEMBER_ID:
            if self.generation_unchanged():
                # MUTANT: the member id is kept
                self.coordinator.reset_state_on_response_error("JoinGroup", error, False)
            future.raise_(error)
            return
        original(self, join_response, future)
    return handle


def _heartbeat_state_before_generation():
    """KAFKA-2557 (apache/kafka#222, separating REBALANCE_IN_PROGRESS from ILLEGAL_GENERATION): the
    first version of the change answered by the group's state before checking the generation ("I
    think I got the ordering wrong here. We probably should check for generation id mismatch before
    validating group stability"), so a heartbeat of an older generation during a rebalance was told
    REBALANCE_IN_PROGRESS instead of ILLEGAL_GENERATION."""

    def validate_heartbeat(self, group, generation_id, member_id, group_instance_id):
        from impl.errors import Errors
        from impl.server.group_coordinator import DEAD, PREPARING_REBALANCE

        if group.state is DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        error = self.validate_current_member(group, member_id, group_instance_id)
        if error is not None:
            return error
        if group.state is PREPARING_REBALANCE:
            return None  # MUTANT: the state answers before the generation is checked
        return self.validate_generation(group, generation_id)
    return validate_heartbeat


def _metadata_change_not_watched():
    """tulios/kafkajs#133 (fixed by #136), kafkaex/kafka_ex#226, IBM/sarama#1739: the consumer
    group never rebalances when partitions are added to its topic; the new partitions go unread
    until something else (a member joining or leaving) forces a rebalance."""

    def rejoin_needed_or_pending(self):
        if not self.subscriptions.has_auto_assigned_partitions():
            return False
        # MUTANT: the leader does not compare its assignment snapshot with the metadata snapshot
        if self.joined_subscription is not None and self.joined_subscription != self.subscriptions.subscription:
            self._request_rejoin_if_necessary("subscription has changed", "subscription has changed")
            return True
        from impl.coordinator.abstract_coordinator import AbstractCoordinator

        return AbstractCoordinator.rejoin_needed_or_pending(self)
    return rejoin_needed_or_pending


def _follower_watches_metadata():
    """aio-libs/aiokafka#108 ("Metadata change can trigger 2 rebalances"): the metadata snapshot
    of an earlier rebalance is not dropped, and not only the leader watches it ("only check if we
    need rebalance on Leader Consumer"): a member that led an earlier generation and follows now
    still compares that old snapshot with the metadata, and starts a rebalance nobody needs."""
    original = _original(f"{_CC}.ConsumerCoordinator.on_join_complete")

    def on_join_complete(self, generation, member_id, assignment_strategy, assignment):
        kept = self.assignment_snapshot
        original(self, generation, member_id, assignment_strategy, assignment)
        self.assignment_snapshot = kept  # MUTANT: a follower keeps the snapshot it took as leader
    return on_join_complete


#: (name, description, target, kind, replacement factory, source)
def _oversized_metadata_accepted():
    """redpanda-data/redpanda#7958 ("Support offset.metadata.max.bytes"): a broker that has no
    limit on an offset's metadata string stores whatever a commit carries, where Kafka refuses
    each partition whose metadata is longer than offset.metadata.max.bytes (4096 by default) with
    OFFSET_METADATA_TOO_LARGE and commits the others (GroupMetadataManager.storeOffsets)."""

    def validate_offset_metadata_length(self, metadata):
        return True  # MUTANT: no offset.metadata.max.bytes
    return validate_offset_metadata_length


def _oversized_fails_whole_commit():
    """KAFKA-12660 (apache/kafka#10560) added Kafka's first test of a commit where one partition
    is stored and another refused OFFSET_METADATA_TOO_LARGE, and KAFKA-16371 (apache/kafka#15536)
    fixed that mixed case's bookkeeping: the mixed answer is where storeOffsets goes wrong. Here a
    commit with any partition's metadata too long is refused whole: the valid partitions are
    answered OFFSET_METADATA_TOO_LARGE too and nothing is appended."""
    from impl.errors import Errors

    original = _original(f"{_GMM}.store_offsets")

    def store_offsets(self, group, member_id, offset_metadata, response_callback):
        # MUTANT: one partition's metadata too long fails the commit's every partition
        if not all(self.validate_offset_metadata_length(om.metadata) for om in offset_metadata.values()):
            response_callback({tp: Errors.OFFSET_METADATA_TOO_LARGE for tp in offset_metadata})
            return
        original(self, group, member_id, offset_metadata, response_callback)
    return store_offsets


def _poll_timeout_from_disabled_heartbeat():
    """KAFKA-10134 (apache/kafka#8834, "Depend On State For Poll Timeout"): timeToNextPoll counted
    the heartbeat timer while the member was unjoined or preparing a rebalance, when the heartbeat
    thread is disabled and the timer is not updated: once it expired, every poll returned at once
    and the consumer spun for as long as the rebalance lasted."""

    def time_to_next_heartbeat(self, now):
        # MUTANT: the state is not asked whether the member heartbeats at all
        thread = self.heartbeat_thread
        if thread is not None and thread.has_failed():
            raise thread.failure_cause()
        return self.heartbeat.time_to_next_heartbeat(now)
    return time_to_next_heartbeat


# ---- static membership (KIP-345) ----------------------------------------------------------------

def _static_replacement_not_persisted():
    """KAFKA-10284 (apache/kafka#9270, "Group membership update due to static member rejoin should
    be persisted"): a static member that rejoined a Stable group with a new member id was answered
    without writing the group; after a coordinator failover the new coordinator loaded the old
    member id and fenced the live process (FencedInstanceIdException; the system test of
    apache/kafka#9588 bounces the brokers to show it)."""
    original = _original(f"{_GC}.update_static_member_and_rebalance")
    NONE = _errors().NONE

    def update_static_member_and_rebalance(self, group, *args, **kwargs):
        manager = type(self.group_manager)
        store = manager.store_group
        # MUTANT: the Stable branch's storeGroup completes at once, writing nothing
        manager.store_group = lambda _self, group, assignment, callback: callback(NONE)
        try:
            return original(self, group, *args, **kwargs)
        finally:
            manager.store_group = store
    return update_static_member_and_rebalance


def _static_replaced_only_when_stable():
    """KAFKA-8500 (apache/kafka#6899, "static member rejoin should always update member.id"): the
    member id of a known static instance joining with an unknown member id was replaced only in
    Stable; in the other states the join was taken as a new member's, "allowing duplicate consumers
    reading from the same topic"."""
    from impl.server.group_metadata import STABLE

    def do_static_new_member_join_group(self, group, group_instance_id, new_member_id, client_id, client_host,
                                        support_skipping_assignment, rebalance_timeout_ms, session_timeout_ms,
                                        protocol_type, protocols, response_callback, reason):
        old_member_id = group.current_static_member_id(group_instance_id)
        if old_member_id is not None and group.state is STABLE:  # MUTANT: only in Stable
            self.update_static_member_and_rebalance(group, old_member_id, new_member_id, group_instance_id,
                                                    protocols, rebalance_timeout_ms, session_timeout_ms,
                                                    response_callback, reason, support_skipping_assignment)
        else:
            self.add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, new_member_id,
                                          group_instance_id, client_id, client_host, protocol_type,
                                          protocols, group, response_callback, reason)
    return do_static_new_member_join_group


def _heartbeat_fenced_rejoins():
    """KAFKA-9823 (apache/kafka#8445), hachikuji's review of the heartbeat handler: "If the consumer
    has been legitimately fenced, is it safe to rejoin the group after resetting the member id?
    Would that not lead to a ping-pong scenario?" A heartbeat answered FENCED_INSTANCE_ID taken as
    a failed heartbeat: the member, reset by the handler, joins again and fences the other process
    of its instance id, which does the same (brod#674 made stopping an option for that reason)."""

    def on_failure(self, e):
        from impl.errors import RebalanceInProgressException

        if isinstance(e, RebalanceInProgressException):
            self.thread.coordinator.heartbeat.receive_heartbeat()
        else:  # MUTANT: FENCED_INSTANCE_ID is a failed heartbeat like any other, not the thread's failure
            self.thread.coordinator.heartbeat.fail_heartbeat()
    return on_failure


HISTORY_DEFS = [
    ("sync_illegal_generation_resets_member_id",
     "a SyncGroup ILLEGAL_GENERATION resets the member id as well as the generation",
     f"{_AC}.SyncGroupResponseHandler.handle", "wrong reset", _sync_illegal_generation_resets_member_id,
     "KAFKA-13419 (apache/kafka#11451)"),
    ("heartbeat_illegal_generation_resets_member_id",
     "a Heartbeat ILLEGAL_GENERATION resets the member id as well as the generation",
     f"{_AC}.HeartbeatResponseHandler.handle", "wrong reset", _heartbeat_illegal_generation_resets_member_id,
     "dpkp/kafka-python#3017; KAFKA-13419"),
    ("sync_rebalance_in_progress_resets",
     "a SyncGroup REBALANCE_IN_PROGRESS resets the generation before the rejoin",
     f"{_AC}.SyncGroupResponseHandler.handle", "wrong reset", _sync_rebalance_in_progress_resets,
     "KAFKA-13891 (apache/kafka#12140)"),
    ("join_unknown_member_ignores_sent_generation",
     "a JoinGroup UNKNOWN_MEMBER_ID resets the member even when it answers an older generation",
     f"{_AC}.JoinGroupResponseHandler.handle", "missing check", _join_unknown_member_ignores_sent_generation,
     "KAFKA-9823 (apache/kafka#8445)"),
    ("sync_error_ignores_sent_generation",
     "a SyncGroup UNKNOWN_MEMBER_ID/ILLEGAL_GENERATION resets the member even when it answers an older generation",
     f"{_AC}.SyncGroupResponseHandler.handle", "missing check", _sync_error_ignores_sent_generation,
     "KAFKA-9823 (apache/kafka#8445)"),
    ("heartbeat_rebalance_rejoins_while_completing",
     "a Heartbeat REBALANCE_IN_PROGRESS requests a rejoin even while the member completes a rebalance",
     f"{_AC}.HeartbeatResponseHandler.handle", "missing check", _heartbeat_rebalance_rejoins_while_completing,
     "KAFKA-10134 (apache/kafka#8834)"),
    ("member_id_required_not_adopted",
     "on MEMBER_ID_REQUIRED the consumer rejoins without the member id it was given",
     f"{_AC}.JoinGroupResponseHandler.handle", "missing step", _member_id_required_not_adopted,
     "segmentio/kafka-go#1432; kafkaex/kafka_ex#539 (KIP-394, KAFKA-7824)"),
    ("retriable_join_failure_resets_member",
     "a retriable rebalance failure (disconnect, coordinator move) resets the member id and generation",
     f"{_AC}.AbstractCoordinator.reset_join_group_future", "wrong reset", _retriable_join_failure_resets_member,
     "KAFKA-13214 (apache/kafka#11231)"),
    ("reset_without_join_prepare",
     "resetStateAndRejoin does not set needsJoinPrepare, so the rejoin skips onJoinPrepare",
     f"{_AC}.AbstractCoordinator.reset_state_and_rejoin", "missing step", _reset_without_join_prepare,
     "KAFKA-12983 (apache/kafka#10986)"),
    ("heartbeat_disabled_until_stable",
     "the heartbeat thread disables itself while the member is COMPLETING_REBALANCE",
     f"{_AC}.HeartbeatThread.run_once", "wrong condition", _heartbeat_disabled_until_stable,
     "KAFKA-10134 (apache/kafka#8834), KAFKA-10122"),
    ("heartbeat_lookup_without_backoff",
     "the heartbeat thread looks the coordinator up again at once after clearing a lookup",
     f"{_AC}.HeartbeatThread.run_once", "missing backoff", _heartbeat_lookup_without_backoff,
     "KAFKA-4777 (apache/kafka#2564); dpkp/kafka-python#1457"),
    ("failed_lookup_not_cleared",
     "a failed FindCoordinator future stays memoised, so every later lookup returns the same failure",
     f"{_AC}.AbstractCoordinator.clear_find_coordinator_future", "stale future", _failed_lookup_not_cleared,
     "KAFKA-10793 (apache/kafka#9671)"),
    ("no_pending_sync_deadline",
     "no DelayedSync: members that never send SyncGroup are never removed",
     f"{_GC}.schedule_pending_sync", "missing step", _no_pending_sync_deadline,
     "KAFKA-12890 (apache/kafka#10863)"),
    ("pending_sync_expiry_keeps_members",
     "the pending-sync expiry rebalances without removing the members that did not sync",
     f"{_GC}.on_expire_pending_sync", "missing step", _pending_sync_expiry_keeps_members,
     "KAFKA-12890 (apache/kafka#10863)"),
    ("parked_members_expire",
     "a member parked in JoinGroup or SyncGroup no longer satisfies its heartbeat expectation",
     f"{_GM}.MemberMetadata.has_satisfied_heartbeat", "wrong condition", _parked_members_expire,
     "KAFKA-9752 (apache/kafka#8354)"),
    ("new_members_kept_alive",
     "a new member parked in its first JoinGroup is kept alive like an old one (no new-member timeout)",
     f"{_GM}.MemberMetadata.has_satisfied_heartbeat", "missing check", _new_members_kept_alive,
     "KAFKA-9752 (apache/kafka#8354)"),
    ("v0_rebalance_timeout_not_defaulted",
     "JoinGroup v0's rebalance timeout is not defaulted to its session timeout",
     "impl.server.broker.Broker.handle_join_group_request", "missing default", _v0_rebalance_timeout_not_defaulted,
     "KAFKA-8653 (apache/kafka#7072)"),
    ("pending_member_leave_rejected",
     "a pending (MEMBER_ID_REQUIRED) member's LeaveGroup is answered UNKNOWN_MEMBER_ID and the member kept",
     f"{_GC}.handle_leave_group", "missing case", _pending_member_leave_rejected,
     "KAFKA-7909 (apache/kafka#6251)"),
    ("generation_reset_join_future_kept",
     "when the heartbeat thread reset the generation before the rebalance callback, the join future is kept",
     f"{_AC}.AbstractCoordinator.reset_join_group_future", "stale future", _generation_reset_join_future_kept,
     "KAFKA-9140 (apache/kafka#7647)"),
    ("heartbeat_rebalance_no_rejoin",
     "a STABLE member's heartbeat answered REBALANCE_IN_PROGRESS does not set the rejoin flag",
     f"{_AC}.HeartbeatResponseHandler.handle", "missing step", _heartbeat_rebalance_no_rejoin,
     "KAFKA-10134 follow-up (apache/kafka#9354)"),
    ("join_complete_without_generation_check",
     "the rebalance completes even if the heartbeat thread reset the generation after the SyncGroup answer",
     f"{_AC}.AbstractCoordinator.join_group_if_needed", "missing check", _join_complete_without_generation_check,
     "KAFKA-8104 (apache/kafka#7460); aio-libs/aiokafka#727"),
    ("coordinator_disconnect_unseen",
     "a coordinator whose connection failed is still taken as known (no unavailability check)",
     f"{_AC}.AbstractCoordinator.check_and_get_coordinator", "missing check", _coordinator_disconnect_unseen,
     "KAFKA-2677 (apache/kafka#349)"),
    ("join_without_rebalance_timeout",
     "JoinGroup is sent with the rebalance timeout left at the schema's default (-1)",
     f"{_AC}.AbstractCoordinator.send_join_group_request", "missing field", _join_without_rebalance_timeout,
     "kafka4beam/brod#465; zendesk/ruby-kafka#786"),
    ("commit_fencing_ignored",
     "an OffsetCommit answered UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION neither resets the member nor rejoins",
     f"{_CC}.OffsetCommitResponseHandler.handle", "missing step", _commit_fencing_ignored,
     "twmb/franz-go#1326"),
    ("join_group_not_memoised",
     "a rejoin requested while a JoinGroup is outstanding sends a second JoinGroup",
     f"{_AC}.AbstractCoordinator.initiate_join_group", "missing check", _join_group_not_memoised,
     "confluentinc/librdkafka#3455"),
    ("heartbeat_error_drops_coordinator",
     "a heartbeat answered with any error also marks the coordinator unknown",
     f"{_AC}.HeartbeatResponseHandler.handle", "wrong reaction", _heartbeat_error_drops_coordinator,
     "dpkp/kafka-python#3082"),
    ("ownership_checked_before_loading",
     "the coordinator checks ownership before loading, so a loading group is answered NOT_COORDINATOR",
     f"{_GC}.validate_group_status", "wrong order", _ownership_checked_before_loading,
     "apache/kafka#4788"),
    ("pending_member_removal_no_join_check",
     "removing a pending member does not re-check whether the join phase can complete",
     f"{_GC}.remove_pending_member_and_update_group", "missing step", _pending_member_removal_no_join_check,
     "KAFKA-7909 (apache/kafka#6251)"),
    ("heartbeat_not_coordinator_unhandled",
     "a Heartbeat NOT_COORDINATOR is raised as an unexpected error; the coordinator is kept",
     f"{_AC}.HeartbeatResponseHandler.handle", "missing case", _heartbeat_not_coordinator_unhandled,
     "zendesk/ruby-kafka#277"),
    ("unsent_failed_every_poll",
     "every poll ends by failing the requests it could not send yet, expired or not",
     "impl.consumer_network_client.ConsumerNetworkClient.fail_expired_requests", "wrong condition",
     _unsent_failed_every_poll, "KAFKA-3488 (apache/kafka#1183)"),
    ("follower_sync_answered_at_once",
     "a follower's SyncGroup before the leader's is answered at once with the assignment it has (none)",
     f"{_GC}.do_sync_group", "missing wait", _follower_sync_answered_at_once,
     "nisshi-io/nisshi#679 (tansu-io/tansu)"),
    ("member_removal_no_join_check",
     "removing a member during PreparingRebalance does not re-check whether the join phase can complete",
     f"{_GC}.remove_member_and_update_group", "missing step", _member_removal_no_join_check,
     "streamnative/kop#380"),
    ("expired_member_not_checked",
     "a delayed heartbeat tried after its member left looks the member up without checking it is still there",
     f"{_GC}.should_complete_non_pending_heartbeat", "missing check", _expired_member_not_checked,
     "KAFKA-8896 (apache/kafka#7377)"),
    ("reconnect_backoff_from_attempt",
     "the reconnect backoff is counted from the connection attempt's start, not from the disconnect",
     "impl.network.network_client.ClusterConnectionStates.disconnected", "wrong timestamp",
     _reconnect_backoff_from_attempt, "KAFKA-2459 (apache/kafka#290)"),
    ("disconnect_keeps_coordinator",
     "a coordinator request failed by a broken connection does not mark the coordinator unknown",
     f"{_AC}.CoordinatorResponseHandler.on_failure", "missing step", _disconnect_keeps_coordinator,
     "KAFKA-17293 (apache/kafka#16844)"),
    ("eager_revoke_keeps_assignment",
     "onJoinPrepare revokes the partitions (callback) but leaves them assigned",
     f"{_CC}.ConsumerCoordinator.on_join_prepare", "missing step", _eager_revoke_keeps_assignment,
     "KAFKA-5154 (apache/kafka#3181)"),
    ("heartbeat_rebalance_not_liveness",
     "a heartbeat answered REBALANCE_IN_PROGRESS does not refresh the session timer (a failed heartbeat)",
     f"{_AC}._HeartbeatListener.on_failure", "wrong reaction", _heartbeat_rebalance_not_liveness,
     "confluentinc/librdkafka#3435"),
    ("no_brokers_lookup_memoised",
     "with no broker to ask, the failed FindCoordinator future is memoised",
     f"{_AC}.AbstractCoordinator.lookup_coordinator", "stale future", _no_brokers_lookup_memoised,
     "KAFKA-4139 (apache/kafka#1831)"),
    ("join_unknown_member_keeps_member_id",
     "a JoinGroup UNKNOWN_MEMBER_ID resets the generation but keeps the member id",
     f"{_AC}.JoinGroupResponseHandler.handle", "wrong reset", _join_unknown_member_keeps_member_id,
     "kafka4beam/brod#177"),
    ("heartbeat_state_before_generation",
     "a Heartbeat during PreparingRebalance is answered by the state before the generation is checked",
     f"{_GC}.validate_heartbeat", "wrong order", _heartbeat_state_before_generation,
     "KAFKA-2557 (apache/kafka#222)"),
    ("metadata_change_not_watched",
     "the leader never rejoins when partitions are added to the topic",
     f"{_CC}.ConsumerCoordinator.rejoin_needed_or_pending", "missing check", _metadata_change_not_watched,
     "tulios/kafkajs#133 (#136); kafkaex/kafka_ex#226; IBM/sarama#1739"),
    ("follower_watches_metadata",
     "a follower keeps the metadata snapshot it took as an earlier generation's leader",
     f"{_CC}.ConsumerCoordinator.on_join_complete", "stale state", _follower_watches_metadata,
     "aio-libs/aiokafka#108"),
    ("oversized_metadata_accepted",
     "the coordinator stores offsets whose metadata is longer than offset.metadata.max.bytes",
     f"{_GMM}.validate_offset_metadata_length", "missing check", _oversized_metadata_accepted,
     "redpanda-data/redpanda#7958"),
    ("oversized_fails_whole_commit",
     "a commit with one partition's metadata too long is refused for every partition",
     f"{_GMM}.store_offsets", "wrong scope", _oversized_fails_whole_commit,
     "KAFKA-12660 (apache/kafka#10560); KAFKA-16371 (apache/kafka#15536)"),
    ("poll_timeout_from_disabled_heartbeat",
     "an unjoined member's poll blocks only until its stopped heartbeat timer (a busy loop once it expired)",
     f"{_AC}.AbstractCoordinator.time_to_next_heartbeat", "missing check", _poll_timeout_from_disabled_heartbeat,
     "KAFKA-10134 (apache/kafka#8834)"),
    ("static_replacement_not_persisted",
     "a static member's new id in a Stable group is answered without writing the group record",
     f"{_GC}.update_static_member_and_rebalance", "missing step", _static_replacement_not_persisted,
     "KAFKA-10284 (apache/kafka#9270)"),
    ("static_replaced_only_when_stable",
     "a known static instance joining with an unknown member id outside Stable is added as a new member",
     f"{_GC}.do_static_new_member_join_group", "missing case", _static_replaced_only_when_stable,
     "KAFKA-8500 (apache/kafka#6899)"),
    ("heartbeat_fenced_rejoins",
     "a heartbeat answered FENCED_INSTANCE_ID is a failed heartbeat: the reset member rejoins instead of stopping",
     f"{_AC}._HeartbeatListener.on_failure", "wrong reaction", _heartbeat_fenced_rejoins,
     "KAFKA-9823 (apache/kafka#8445) review"),
]
