"""Mutants from public bug histories (issue 14, item 6: groupcheck's own measure of power).

Each mutant here puts back, into ``impl/``, one decision that a Kafka client or coordinator really
shipped and later fixed (or that a fix's review rejected): the cited JIRA or issue says what went
wrong in production, and the comment above each row how. Like :mod:`properties.mutation.mutants`'
own, a mutant is a small source change to today's ``impl/`` (``(old, new)`` texts, each new text
marked ``# MUTANT:``), made when the mutant is applied; nothing on disk changes.

:data:`HISTORY_DEFS` rows are ``(name, description, target, kind, edits, source)``;
:mod:`properties.mutation.mutants` adds them to its catalogue.
"""

from __future__ import annotations

_AC = "impl.coordinator.abstract_coordinator"
_CC = "impl.coordinator.consumer_coordinator"
_GC = "impl.server.group_coordinator.GroupCoordinator"
_GM = "impl.server.group_metadata"
_GMM = "impl.server.group_metadata_manager.GroupMetadataManager"

_RESETS_MEMBER_ID = [("error is not Errors.ILLEGAL_GENERATION)", "True)  # MUTANT: ILLEGAL_GENERATION resets the member id too")]
_NO_SENT_GENERATION_CHECK = [("if self.generation_unchanged():", "if True:  # MUTANT: no generationUnchanged() check")]
_JOIN_RECHECK = "self.rebalance_purgatory.check_and_complete(group_join_key(group.group_id))"
_FAIL_EXPIRED = ('for request in self.unsent.remove_expired_requests(now):\n'
                 '    request.callback.on_failure(TimeoutException(\n'
                 '        "Failed to send request after %d ms." % request.request_timeout_ms))')

HISTORY_DEFS = [
    # ---- client: response handlers
    # KAFKA-13419: ILLEGAL_GENERATION keeps the member id (still valid); resetting it makes the member
    # rejoin as a stranger, and the coordinator waits for the old id's session.
    ("sync_illegal_generation_resets_member_id", "a SyncGroup ILLEGAL_GENERATION resets the member id as well as the "
     "generation", f"{_AC}.SyncGroupResponseHandler.handle", "wrong reset", _RESETS_MEMBER_ID,
     "KAFKA-13419 (apache/kafka#11451)"),
    # kafka-python #3017 ("Preserve member id on IllegalGeneration error"): the same for Heartbeat.
    ("heartbeat_illegal_generation_resets_member_id", "a Heartbeat ILLEGAL_GENERATION resets the member id as well as "
     "the generation", f"{_AC}.HeartbeatResponseHandler.handle", "wrong reset", _RESETS_MEMBER_ID,
     "dpkp/kafka-python#3017; KAFKA-13419"),
    # KAFKA-13891: reset the generation when SyncGroup fails with REBALANCE_IN_PROGRESS (reverted: the
    # member then rejoins with generation -1).
    ("sync_rebalance_in_progress_resets", "a SyncGroup REBALANCE_IN_PROGRESS resets the generation before the rejoin",
     f"{_AC}.SyncGroupResponseHandler.handle", "wrong reset",
     [("# reset here was reverted)", "# reset here was reverted)\nc.reset_state_on_response_error(\"SyncGroup\", "
       "error, False)  # MUTANT: the generation is reset (the member id kept) before the rejoin")],
     "KAFKA-13891 (apache/kafka#12140)"),
    # KAFKA-9823 ("Remember the sent generation for the coordinator request"): an UNKNOWN_MEMBER_ID
    # answering a JoinGroup of an older generation resets the current one.
    ("join_unknown_member_ignores_sent_generation", "a JoinGroup UNKNOWN_MEMBER_ID resets the member even when it "
     "answers an older generation", f"{_AC}.JoinGroupResponseHandler.handle", "missing check", _NO_SENT_GENERATION_CHECK,
     "KAFKA-9823 (apache/kafka#8445)"),
    # KAFKA-9823: the same for a SyncGroup UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION.
    ("sync_error_ignores_sent_generation", "a SyncGroup UNKNOWN_MEMBER_ID/ILLEGAL_GENERATION resets the member even when "
     "it answers an older generation", f"{_AC}.SyncGroupResponseHandler.handle", "missing check",
     _NO_SENT_GENERATION_CHECK, "KAFKA-9823 (apache/kafka#8445)"),
    # KAFKA-10134: a REBALANCE_IN_PROGRESS heartbeat answer while the member already completes a
    # rebalance is ignored; before, it requested another rejoin.
    ("heartbeat_rebalance_rejoins_while_completing", "a Heartbeat REBALANCE_IN_PROGRESS requests a rejoin even while "
     "the member completes a rebalance", f"{_AC}.HeartbeatResponseHandler.handle", "missing check",
     [("if c.state is MemberState.STABLE:", "if True:  # MUTANT: requests a rejoin whatever the member's state")],
     "KAFKA-10134 (apache/kafka#8834)"),
    # kafka-go#1432: on MEMBER_ID_REQUIRED (KIP-394) the consumer must rejoin with the id it was handed;
    # kafka-go retried with an empty id, got a new pending id every time, for ever.
    ("member_id_required_not_adopted", "on MEMBER_ID_REQUIRED the consumer rejoins without the member id it was given",
     f"{_AC}.JoinGroupResponseHandler.handle", "missing step",
     [("c.generation = Generation(-1, member_id, None)  # OffsetCommitRequest.DEFAULT_GENERATION_ID",
       "# MUTANT: the given member id is not adopted")],
     "segmentio/kafka-go#1432; kafkaex/kafka_ex#539 (KIP-394, KAFKA-7824)"),
    # ---- client: the join loop and the heartbeat thread
    # KAFKA-13214: any retriable error in a rebalance (a disconnect, a coordinator move) reset the member
    # id and generation; the rebalance then waits for the old member id's session to expire.
    ("retriable_join_failure_resets_member", "a retriable rebalance failure (disconnect, coordinator move) resets the "
     "member id and generation", f"{_AC}.AbstractCoordinator.reset_join_group_future", "wrong reset",
     [("self.join_future = None",
       "future = self.join_future\nself.join_future = None\n"
       "if future is not None and future.is_done() and future.failed() and future.is_retriable() and not isinstance(\n"
       "        future.exception(), (UnknownMemberIdException, IllegalGenerationException,\n"
       "                             RebalanceInProgressException, MemberIdRequiredException)):\n"
       "    self.reset_state_and_rejoin(\"rebalance failed with retriable error\", True)  # MUTANT: resetStateAndRejoin")],
     "KAFKA-13214 (apache/kafka#11231)"),
    # KAFKA-12983: a member that lost its generation during a rebalance rejoined without onJoinPrepare
    # (its partitions neither revoked nor lost, its isLeader kept).
    ("reset_without_join_prepare", "resetStateAndRejoin does not set needsJoinPrepare, so the rejoin skips onJoinPrepare",
     f"{_AC}.AbstractCoordinator.reset_state_and_rejoin", "missing step",
     [("self.needs_join_prepare = True", "# MUTANT: needs_join_prepare is not set")], "KAFKA-12983 (apache/kafka#10986)"),
    # KAFKA-10134, KAFKA-10122: the heartbeat thread stopped whenever the member was not STABLE, so a
    # member waiting for its SyncGroup answer (a slow leader assignment) was expired.
    ("heartbeat_disabled_until_stable", "the heartbeat thread disables itself while the member is COMPLETING_REBALANCE",
     f"{_AC}.HeartbeatThread.run_once", "wrong condition",
     [("if c.state.has_not_joined_group() or self.has_failed():",
       "if c.state.has_not_joined_group() or c.state is MemberState.COMPLETING_REBALANCE or self.has_failed():"
       "  # MUTANT: \"if (state != MemberState.STABLE)\" disables the thread")],
     "KAFKA-10134 (apache/kafka#8834), KAFKA-10122"),
    # KAFKA-4777 (kafka-python #1457): after clearing a failed lookup the heartbeat thread looked the
    # coordinator up again at once, in a tight loop.
    ("heartbeat_lookup_without_backoff", "the heartbeat thread looks the coordinator up again at once after clearing a "
     "lookup", f"{_AC}.HeartbeatThread.run_once", "missing backoff",
     [("self.wait_until = now + c.rebalance_config.retry_backoff_ms",
       "# MUTANT: no wait(retry.backoff.ms) after clearing the lookup")],
     "KAFKA-4777 (apache/kafka#2564); dpkp/kafka-python#1457"),
    # KAFKA-10793: a failed FindCoordinator future was left in place (a race skipped the listener that
    # cleared it), so every later lookup returned the same failure.
    ("failed_lookup_not_cleared", "a failed FindCoordinator future stays memoised, so every later lookup returns the "
     "same failure", f"{_AC}.AbstractCoordinator.clear_find_coordinator_future", "stale future",
     [("self.find_coordinator_future = None",
       "future = self.find_coordinator_future\nif future is not None and future.is_done() and future.failed():\n"
       "    return  # MUTANT: a failed lookup stays memoised\nself.find_coordinator_future = None")],
     "KAFKA-10793 (apache/kafka#9671)"),
    # ---- coordinator: pending syncs, keep-alive, v0, pending members
    # KAFKA-12890: nothing removed the members that never sent SyncGroup once heartbeats were allowed in
    # CompletingRebalance, and the group stayed there.
    ("no_pending_sync_deadline", "no DelayedSync: members that never send SyncGroup are never removed",
     f"{_GC}.schedule_pending_sync", "missing step",
     [("delayed_sync = ", "return  # MUTANT: no DelayedSync\ndelayed_sync = ")], "KAFKA-12890 (apache/kafka#10863)"),
    # KAFKA-12890: the pending-sync expiry must remove the members that did not sync before it
    # rebalances; rebalancing with them in the group waits for them again.
    ("pending_sync_expiry_keeps_members", "the pending-sync expiry rebalances without removing the members that did "
     "not sync", f"{_GC}.on_expire_pending_sync", "missing step",
     [("for member_id in pending_sync_members:\n    group.remove(member_id)\n"
       "    self.remove_heartbeat_for_leaving_member(group, member_id)",
       "# MUTANT: the members that did not sync are not removed")],
     "KAFKA-12890 (apache/kafka#10863)"),
    # KAFKA-9752: a member parked in JoinGroup or SyncGroup satisfies its heartbeat expectation;
    # without the rule a member waiting for a slow rebalance is expired by its own session.
    ("parked_members_expire", "a member parked in JoinGroup or SyncGroup no longer satisfies its heartbeat expectation",
     f"{_GM}.MemberMetadata.has_satisfied_heartbeat", "wrong condition",
     [("if self.awaiting_join_callback is not None or self.awaiting_sync_callback is not None:\n    return True",
       "# MUTANT: awaiting join/sync no longer keeps a member alive")],
     "KAFKA-9752 (apache/kafka#8354)"),
    # KAFKA-9752: a new member parked in its first JoinGroup must stay expirable (the new-member
    # timeout); kept alive, a disconnected new member holds the rebalance until its timeout.
    ("new_members_kept_alive", "a new member parked in its first JoinGroup is kept alive like an old one (no "
     "new-member timeout)", f"{_GM}.MemberMetadata.has_satisfied_heartbeat", "missing check",
     [("if self.is_new:\n    return self.heartbeat_satisfied", "# MUTANT: the is_new check is gone")],
     "KAFKA-9752 (apache/kafka#8354)"),
    # KAFKA-8653: JoinGroup v0 has no rebalance timeout; the schema's -1 ended every rebalance at once
    # and kicked every old member out, in an endless loop.
    ("v0_rebalance_timeout_not_defaulted", "JoinGroup v0's rebalance timeout is not defaulted to its session timeout",
     "impl.server.broker.Broker.handle_join_group_request", "missing default",
     [("request.session_timeout_ms if version == 0 else request.rebalance_timeout_ms",
       "request.rebalance_timeout_ms  # MUTANT: v0 does not default to the session timeout")],
     "KAFKA-8653 (apache/kafka#7072)"),
    # KAFKA-7909: a pending member (handed an id with MEMBER_ID_REQUIRED) must be able to leave; kept, it
    # holds back the rebalance until its pending timeout.
    ("pending_member_leave_rejected", "a pending (MEMBER_ID_REQUIRED) member's LeaveGroup is answered "
     "UNKNOWN_MEMBER_ID and the member kept", f"{_GC}.handle_leave_group", "missing case",
     [("elif group.is_pending_member(member_id):\n    self.remove_pending_member_and_update_group(group, member_id)\n"
       "    self.heartbeat_purgatory.check_and_complete(member_key(group.group_id, member_id))\n"
       "    member_errors.append(_member_leave_error(leaving_member, _NONE))",
       "# MUTANT: no branch for a pending member: it is validated as a current one")],
     "KAFKA-7909 (apache/kafka#6251)"),
    # KAFKA-9140: when the heartbeat thread had reset the generation before the rebalance callback, the
    # join future was not reset, so no JoinGroup was ever sent again and the consumer looped for ever.
    ("generation_reset_join_future_kept", "when the heartbeat thread reset the generation before the rebalance "
     "callback, the join future is kept", f"{_AC}.AbstractCoordinator.reset_join_group_future", "stale future",
     [("self.join_future = None",
       "future = self.join_future\n"
       "if future is not None and future.is_done() and future.succeeded() and self.state is MemberState.UNJOINED:\n"
       "    return  # MUTANT: the \"generation was reset by the heartbeat thread\" branch keeps the future\n"
       "self.join_future = None")],
     "KAFKA-9140 (apache/kafka#7647)"),
    # KAFKA-10134's follow-up ("Set the re-join flag in heartbeat failure"): without the flag a STABLE
    # member keeps heartbeating, never joins the new generation and is removed from it.
    ("heartbeat_rebalance_no_rejoin", "a STABLE member's heartbeat answered REBALANCE_IN_PROGRESS does not set the "
     "rejoin flag", f"{_AC}.HeartbeatResponseHandler.handle", "missing step",
     [("c.request_rejoin(\"group is already rebalancing\")", "# MUTANT: the rejoin flag is not set")],
     "KAFKA-10134 follow-up (apache/kafka#9354)"),
    # KAFKA-8104 (aiokafka#727): completing a rebalance whose generation the heartbeat thread reset after
    # the SyncGroup answer applies an assignment no generation owns; the member never rejoins.
    ("join_complete_without_generation_check", "the rebalance completes even if the heartbeat thread reset the "
     "generation after the SyncGroup answer", f"{_AC}.AbstractCoordinator.join_group_if_needed", "missing check",
     [("if not has_generation_reset(generation_snapshot) and state_snapshot is MemberState.STABLE:",
       "if True:  # MUTANT: no check that the heartbeat thread left the generation and state alone")],
     "KAFKA-8104 (apache/kafka#7460); aio-libs/aiokafka#727"),
    # KAFKA-2677 ("ensure consumer sees coordinator disconnects"): otherwise the consumer keeps sending
    # to a failed coordinator through the reconnect backoff and never looks it up again.
    ("coordinator_disconnect_unseen", "a coordinator whose connection failed is still taken as known (no "
     "unavailability check)", f"{_AC}.AbstractCoordinator.check_and_get_coordinator", "missing check",
     [("if self.coordinator is not None and self.client.is_unavailable(self.coordinator):\n"
       "    self.mark_coordinator_unknown(True, \"coordinator unavailable\")\n    return None",
       "# MUTANT: a failed coordinator connection is not noticed here")],
     "KAFKA-2677 (apache/kafka#349)"),
    # brod#465, ruby-kafka#786: with a rebalance timeout of -1 the coordinator waits for nobody: every
    # rebalance ends at once and drops the members that had not rejoined yet, for ever.
    ("join_without_rebalance_timeout", "JoinGroup is sent with the rebalance timeout left at the schema's default (-1)",
     f"{_AC}.AbstractCoordinator.send_join_group_request", "missing field",
     [("rebalance_timeout_ms=config.rebalance_timeout_ms,",
       "rebalance_timeout_ms=-1,  # MUTANT: the rebalance timeout is left at the schema's default")],
     "kafka4beam/brod#465; zendesk/ruby-kafka#786"),
    # franz-go#1326 ("Fix commit-triggered group rejoin"): a fenced commit was only reported; the member
    # kept running in a group session the coordinator had ended, until a heartbeat noticed.
    ("commit_fencing_ignored", "an OffsetCommit answered UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION neither resets the "
     "member nor rejoins", f"{_CC}.OffsetCommitResponseHandler.handle", "missing step",
     [("c.reset_state_on_response_error(\"OffsetCommit\", error,\nerror is not Errors.ILLEGAL_GENERATION)",
       "# MUTANT: no reset, no rejoin")],
     "twmb/franz-go#1326"),
    # librdkafka#3455 ("Allow only one simultaneous Join or Sync GroupRequest"): a second JoinGroup
    # before the first was answered broke the consumer's state.
    ("join_group_not_memoised", "a rejoin requested while a JoinGroup is outstanding sends a second JoinGroup",
     f"{_AC}.AbstractCoordinator.initiate_join_group", "missing check",
     [("if self.join_future is None:",
       "if self.join_future is None or self.rejoin_needed:  # MUTANT: a pending join is not reused on a rejoin request")],
     "confluentinc/librdkafka#3455"),
    # kafka-python#3082 ("do not mark coordinator dead on all HeartbeatResponse errors"): a needless
    # rediscovery before the member could rejoin.
    ("heartbeat_error_drops_coordinator", "a heartbeat answered with any error also marks the coordinator unknown",
     f"{_AC}.HeartbeatResponseHandler.handle", "wrong reaction",
     [("error = Errors.for_code(heartbeat_response.error_code)",
       "error = Errors.for_code(heartbeat_response.error_code)\n"
       "if error not in (Errors.NONE, Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):\n"
       "    c.mark_coordinator_unknown(False, \"heartbeat failed: \" + error.name)  # MUTANT: any error drops it")],
     "dpkp/kafka-python#3082"),
    # apache/kafka#4788 ("Fix partition loading checks in GroupCoordinator"): COORDINATOR_LOAD_IN_PROGRESS
    # was never answered, and clients were sent to rediscover the coordinator they had found.
    ("ownership_checked_before_loading", "the coordinator checks ownership before loading, so a loading group is "
     "answered NOT_COORDINATOR", f"{_GC}.validate_group_status", "wrong order",
     [("if self.is_coordinator_load_in_progress(group_id):\n    return Errors.COORDINATOR_LOAD_IN_PROGRESS\n"
       "if not self.is_coordinator_for_group(group_id):\n    return Errors.NOT_COORDINATOR",
       "if not self.is_coordinator_for_group(group_id):  # MUTANT: ownership before loading\n"
       "    return Errors.NOT_COORDINATOR\nif self.is_coordinator_load_in_progress(group_id):\n"
       "    return Errors.COORDINATOR_LOAD_IN_PROGRESS")],
     "apache/kafka#4788"),
    # KAFKA-7909: "a rebalance operation must successfully complete if a pending member either joins or
    # times out".
    ("pending_member_removal_no_join_check", "removing a pending member does not re-check whether the join phase can "
     "complete", f"{_GC}.remove_pending_member_and_update_group", "missing step",
     [("if group.state is PREPARING_REBALANCE:\n    " + _JOIN_RECHECK, "# MUTANT: the join phase is not re-checked")],
     "KAFKA-7909 (apache/kafka#6251)"),
    # ruby-kafka#277 ("Rescue NotCoordinatorForGroup during heartbeats"): the consumer crashed instead of
    # finding the group's new coordinator.
    ("heartbeat_not_coordinator_unhandled", "a Heartbeat NOT_COORDINATOR is raised as an unexpected error; the "
     "coordinator is kept", f"{_AC}.HeartbeatResponseHandler.handle", "missing case",
     [("elif error is Errors.COORDINATOR_NOT_AVAILABLE or error is Errors.NOT_COORDINATOR:",
       "elif error is Errors.COORDINATOR_NOT_AVAILABLE:  # MUTANT: NOT_COORDINATOR is not a case the handler knows")],
     "zendesk/ruby-kafka#277"),
    # KAFKA-3488: a request to a node still connecting (an SSL handshake, a slow link) failed at the end
    # of the poll instead of waiting until its request timeout, as failExpiredRequests lets it since.
    ("unsent_failed_every_poll", "every poll ends by failing the requests it could not send yet, expired or not",
     "impl.consumer_network_client.ConsumerNetworkClient.fail_expired_requests", "wrong condition",
     [(_FAIL_EXPIRED, _FAIL_EXPIRED + "\nfrom impl.errors import RetriableException  # Kafka 0.9's SendFailedException\n\n"
       "for node in list(self.unsent.nodes()):  # MUTANT: fail what is left unsent, expired or not\n"
       "    self._fail_unsent_requests(node, RetriableException(\"Failed to send request (not sent by the end of poll)\"))")],
     "KAFKA-3488 (apache/kafka#1183)"),
    # nisshi#679 (Tansu's SyncGroup handler): Kafka parks a follower's SyncGroup until the leader's is
    # stored (doSyncGroup, CompletingRebalance); Tansu answered it with the member's assignment (none).
    ("follower_sync_answered_at_once", "a follower's SyncGroup before the leader's is answered at once with the "
     "assignment it has (none)", f"{_GC}.do_sync_group", "missing wait",
     [("group.members[member_id].awaiting_sync_callback = response_callback",
       "if not group.is_leader(member_id):  # MUTANT: answered now, with the assignment it has (none yet), not parked\n"
       "    self.remove_pending_sync_member(group, member_id)\n"
       "    response_callback(SyncGroupResponseData(error_code=0, protocol_type=group.protocol_type,\n"
       "        protocol_name=group.protocol_name, assignment=group.members[member_id].assignment))\n"
       "    return\ngroup.members[member_id].awaiting_sync_callback = response_callback")],
     "nisshi-io/nisshi#679 (tansu-io/tansu)"),
    # kop#380 (Kafka-on-Pulsar): the joinPurgatory.checkAndComplete was commented out, so the group
    # waited for a departed member until the rebalance timeout.
    ("member_removal_no_join_check", "removing a member during PreparingRebalance does not re-check whether the join "
     "phase can complete", f"{_GC}.remove_member_and_update_group", "missing step",
     [("elif state is PREPARING_REBALANCE:\n    " + _JOIN_RECHECK,
       "# MUTANT: PreparingRebalance: the join phase is not re-checked")],
     "streamnative/kop#380"),
    # KAFKA-8896 ("Check group state before completing delayed heartbeat"): the coordinator failed with
    # NoSuchElementException.
    ("expired_member_not_checked", "a delayed heartbeat tried after its member left looks the member up without "
     "checking it is still there", f"{_GC}.should_complete_non_pending_heartbeat", "missing check",
     [("member = group.members.get(member_id)\nif member is None:\n    return True",
       "member = group.members[member_id]  # MUTANT: no check that the member is still in the group")],
     "KAFKA-8896 (apache/kafka#7377)"),
    # ---- client: connections and callbacks
    # KAFKA-2459: a connection that failed after a long attempt (or lived a while) could be retried at
    # once (ClusterConnectionStates.disconnected now stamps the disconnect).
    ("reconnect_backoff_from_attempt", "the reconnect backoff is counted from the connection attempt's start, not "
     "from the disconnect", "impl.network.network_client.ClusterConnectionStates.disconnected", "wrong timestamp",
     [("state.last_connect_attempt_ms = now", "# MUTANT: last_connect_attempt_ms keeps the attempt's start")],
     "KAFKA-2459 (apache/kafka#290)"),
    # KAFKA-17293: the member kept sending to a coordinator it could not reach instead of finding the
    # current one (the classic consumer's CoordinatorResponseHandler.onFailure does).
    ("disconnect_keeps_coordinator", "a coordinator request failed by a broken connection does not mark the "
     "coordinator unknown", f"{_AC}.CoordinatorResponseHandler.on_failure", "missing step",
     [("if isinstance(e, DisconnectException):\n    self.coordinator.mark_coordinator_unknown(True, str(e))",
       "# MUTANT: a DisconnectException does not mark the coordinator unknown")],
     "KAFKA-17293 (apache/kafka#16844)"),
    # KAFKA-5154: when the rebalance then failed, the consumer went on fetching and committing the
    # partitions it had revoked.
    ("eager_revoke_keeps_assignment", "onJoinPrepare revokes the partitions (callback) but leaves them assigned",
     f"{_CC}.ConsumerCoordinator.on_join_prepare", "missing step",
     [("invoke_partitions_revoked(revoked_partitions)\nself.subscriptions.assign_from_subscribed([])",
       "invoke_partitions_revoked(revoked_partitions)\n# MUTANT: revoked, but still assigned")],
     "KAFKA-5154 (apache/kafka#3181)"),
    # librdkafka#3435 ("Keep session alive during long consumer group rebalances"): members of a long
    # rebalance timed their own sessions out.
    ("heartbeat_rebalance_not_liveness", "a heartbeat answered REBALANCE_IN_PROGRESS does not refresh the session "
     "timer (a failed heartbeat)", f"{_AC}._HeartbeatListener.on_failure", "wrong reaction",
     [("self.thread.coordinator.heartbeat.receive_heartbeat()",
       "self.thread.coordinator.heartbeat.fail_heartbeat()  # MUTANT: a failed heartbeat like any other")],
     "confluentinc/librdkafka#3435"),
    # KAFKA-4139 ("Reset findCoordinatorFuture when brokers are unavailable"): every later lookup
    # returned that failure without asking again.
    ("no_brokers_lookup_memoised", "with no broker to ask, the failed FindCoordinator future is memoised",
     f"{_AC}.AbstractCoordinator.lookup_coordinator", "stale future",
     [("return RequestFuture.no_brokers_available()",
       "self.find_coordinator_future = RequestFuture.no_brokers_available()  # MUTANT: the failed future is memoised\n"
       "return self.find_coordinator_future")],
     "KAFKA-4139 (apache/kafka#1831)"),
    # brod#177 ("the member id is not reset, causing the group coordinator to rejoin again and again").
    ("join_unknown_member_keeps_member_id", "a JoinGroup UNKNOWN_MEMBER_ID resets the generation but keeps the member "
     "id", f"{_AC}.JoinGroupResponseHandler.handle", "wrong reset",
     [("\"JoinGroup\", error, True)", "\"JoinGroup\", error, False)  # MUTANT: the member id is kept")],
     "kafka4beam/brod#177"),
    # KAFKA-2557: "I think I got the ordering wrong here": a heartbeat of an older generation during a
    # rebalance was told REBALANCE_IN_PROGRESS instead of ILLEGAL_GENERATION.
    ("heartbeat_state_before_generation", "a Heartbeat during PreparingRebalance is answered by the state before the "
     "generation is checked", f"{_GC}.validate_heartbeat", "wrong order",
     [("return self.validate_generation(group, generation_id)",
       "if group.state is PREPARING_REBALANCE:\n    return None  # MUTANT: the state answers before the generation\n"
       "return self.validate_generation(group, generation_id)")],
     "KAFKA-2557 (apache/kafka#222)"),
    # kafkajs#133, kafka_ex#226, sarama#1739: partitions added to the topic go unread until something
    # else (a member joining or leaving) forces a rebalance.
    ("metadata_change_not_watched", "the leader never rejoins when partitions are added to the topic",
     f"{_CC}.ConsumerCoordinator.rejoin_needed_or_pending", "missing check",
     [("if self.assignment_snapshot is not None and not self.assignment_snapshot.matches(self.metadata_snapshot):",
       "if False:  # MUTANT: the leader does not compare its assignment snapshot with the metadata snapshot")],
     "tulios/kafkajs#133 (#136); kafkaex/kafka_ex#226; IBM/sarama#1739"),
    # aiokafka#108 ("Metadata change can trigger 2 rebalances"): a member that led an earlier generation
    # and follows now compares its old snapshot with the metadata, and starts a needless rebalance.
    ("follower_watches_metadata", "a follower keeps the metadata snapshot it took as an earlier generation's leader",
     f"{_CC}.ConsumerCoordinator.on_join_complete", "stale state",
     [("if not self.is_leader:\n    self.assignment_snapshot = None",
       "# MUTANT: a follower keeps the snapshot it took as leader")],
     "aio-libs/aiokafka#108"),
    # redpanda#7958 ("Support offset.metadata.max.bytes"): Kafka refuses each partition whose metadata is
    # too long (OFFSET_METADATA_TOO_LARGE) and commits the others.
    ("oversized_metadata_accepted", "the coordinator stores offsets whose metadata is longer than "
     "offset.metadata.max.bytes", f"{_GMM}.validate_offset_metadata_length", "missing check",
     [("return metadata is None or", "return True  # MUTANT: no offset.metadata.max.bytes\nreturn metadata is None or")],
     "redpanda-data/redpanda#7958"),
    # KAFKA-12660 added Kafka's first test of a commit with one partition stored and another refused
    # for its metadata, KAFKA-16371 fixed that mixed case: here it is refused whole.
    ("oversized_fails_whole_commit", "a commit with one partition's metadata too long is refused for every partition",
     f"{_GMM}.store_offsets", "wrong scope",
     [("if not valid:", "if not valid or len(valid) < len(offset_metadata):  # MUTANT: one partition's metadata "
       "too long fails the commit's every partition")],
     "KAFKA-12660 (apache/kafka#10560); KAFKA-16371 (apache/kafka#15536)"),
    # KAFKA-10134 ("Depend On State For Poll Timeout"): once the stopped heartbeat timer expired, every
    # poll returned at once and the consumer spun for as long as the rebalance lasted.
    ("poll_timeout_from_disabled_heartbeat", "an unjoined member's poll blocks only until its stopped heartbeat timer "
     "(a busy loop once it expired)", f"{_AC}.AbstractCoordinator.time_to_next_heartbeat", "missing check",
     [("if self.state.has_not_joined_group():\n    return LONG_MAX",
       "# MUTANT: the state is not asked whether the member heartbeats at all")],
     "KAFKA-10134 (apache/kafka#8834)"),
    # ---- static membership (KIP-345)
    # KAFKA-10284: after a failover the new coordinator loaded the old member id and fenced the live
    # process (the system test of apache/kafka#9588 bounces the brokers to show it).
    ("static_replacement_not_persisted", "a static member's new id in a Stable group is answered without writing the "
     "group record", f"{_GC}.update_static_member_and_rebalance", "missing step",
     [("self.group_manager.store_group(group, group_assignment, on_store)",
       "on_store(_NONE)  # MUTANT: the Stable branch's storeGroup completes at once, writing nothing")],
     "KAFKA-10284 (apache/kafka#9270)"),
    # KAFKA-8500 ("static member rejoin should always update member.id"): outside Stable the join was a
    # new member's, "allowing duplicate consumers reading from the same topic".
    ("static_replaced_only_when_stable", "a known static instance joining with an unknown member id outside Stable "
     "is added as a new member", f"{_GC}.do_static_new_member_join_group", "missing case",
     [("if old_member_id is not None:", "if old_member_id is not None and group.state is STABLE:  # MUTANT: only in Stable")],
     "KAFKA-8500 (apache/kafka#6899)"),
    # KAFKA-9823, hachikuji's review: "If the consumer has been legitimately fenced, is it safe to rejoin
    # the group after resetting the member id? Would that not lead to a ping-pong scenario?"
    ("heartbeat_fenced_rejoins", "a heartbeat answered FENCED_INSTANCE_ID is a failed heartbeat: the reset member "
     "rejoins instead of stopping", f"{_AC}._HeartbeatListener.on_failure", "wrong reaction",
     [("self.thread.failed = e",
       "self.thread.coordinator.heartbeat.fail_heartbeat()  # MUTANT: a failed heartbeat, not the thread's failure")],
     "KAFKA-9823 (apache/kafka#8445) review"),
    # librdkafka#2635 ("Static consumer fencing and fatal consumer errors"): before it, a static member
    # fenced by a newer instance of its group.instance.id was told of a failed commit and went on
    # consuming beside the instance that replaced it; Kafka's OffsetCommitResponseHandler raises
    # FENCED_INSTANCE_ID, fatal, when the commit's generation is still the member's (KAFKA-8225).
    ("commit_fenced_not_fatal", "an OffsetCommit answered FENCED_INSTANCE_ID for the member's own generation fails "
     "like a stale commit instead of ending the consumer", f"{_CC}.OffsetCommitResponseHandler.handle", "wrong reaction",
     [("if self.generation_unchanged():",
       "if False:  # MUTANT: a fenced commit of the current generation is not fatal")],
     "confluentinc/librdkafka#2635; KAFKA-8225 (apache/kafka#6650)"),
]
