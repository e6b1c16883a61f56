"""Scenario tests of the client member state machine (model/member.py, protocol reference §3).

AbstractCoordinator / ConsumerCoordinator: coordinator discovery (§3.2), the join loop (§3.3), the
response error tables (§3.4) and the heartbeat thread (§3.5). Each test builds a client on a
:class:`model.client.Step`, drives it with the entry points (``consumer_poll``,
``heartbeat_thread``, ``commit_async``, ``close``) and with responses handed to
``netclient.receive``, and checks one row of the reference.

Unless a test says otherwise: 2 brokers, the coordinator is broker 0 (coordinator connection slot
2, READY), session.timeout.ms 6000, heartbeat.interval.ms 2000, max.poll.interval.ms (= rebalance
timeout) 10000, request.timeout.ms 8000, retry.backoff.ms 100, reconnect.backoff.ms 50, 6
partitions.
"""

from __future__ import annotations

import pytest

from model import member
from model import netclient as net
from model.client import (
    COMPLETING_REBALANCE,
    CONNECTING,
    DISCONNECTED,
    PREPARING_REBALANCE,
    READY,
    STABLE,
    UNJOINED,
    Conn,
    Step,
)
from model.config import MAX_INT, join_group_request_timeout
from model.errors import DISCONNECT, NO_AVAILABLE_BROKERS, REQUEST_TIMEOUT, UNJOINED_GROUP, Errors, name_of
from model.messages import (FindCoordinatorResponse, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
                            LeaveGroupRequest, LeaveGroupResponse, OffsetCommitRequest, OffsetCommitResponse,
                            SyncGroupRequest, SyncGroupResponse)
from tests.helpers.member import (
    B,
    COORD,
    CSLOT,
    HB_INTERVAL,
    MAX_POLL,
    RECONNECT_BACKOFF,
    REQUEST_TIMEOUT_MS,
    RETRY_BACKOFF,
    SESSION,
    T0,
    cfg,
    completing,
    fire,
    first_index,
    fresh,
    in_flight,
    join_ok,
    joining,
    respond,
    sent,
    stable,
    tags,
    unsent,
    with_coordinator,
)


# == coordinator discovery (§2, §3.2) ==============================================================


def test_discovery_sends_find_coordinator_to_a_least_loaded_node():
    s = fresh()
    s.set_slot("conns", 1, Conn(READY, 0, 1))  # broker 1 ready and idle: the only candidate
    member.consumer_poll(s)
    assert [r.api for r in s.in_flight[1]] == ["FindCoordinator"]
    assert s.unsent[0] == () and s.in_flight[0] == ()
    assert s.coordinator is None


def test_discovery_lookup_is_memoised_across_polls():
    s = fresh()
    member.consumer_poll(s)  # no connection yet: FindCoordinator queued, connection initiated
    member.consumer_poll(s)
    finds = [e for e in tags(s, "send") if e[4] == "FindCoordinator"]
    assert len(finds) == 1
    slot = finds[0][3]
    assert slot in (0, 1)
    assert s.conns[slot].state == CONNECTING


def test_discovery_success_connects_to_the_coordinator_and_resets_the_session_timer():
    s = fresh()
    s.set_slot("conns", 0, Conn(READY, 0, 1))
    member.consumer_poll(s)
    s.now += 10
    respond(s, "FindCoordinator", FindCoordinatorResponse(Errors.NONE, node_id=1), slot=0)
    member.consumer_poll(s)
    assert s.coordinator == 1
    assert s.coordinator_slot() == B + 1
    assert s.conns[B + 1].state == CONNECTING  # tryConnect on the separate coordinator connection
    assert s.session_deadline_ms == s.now + SESSION
    assert s.find_coordinator_request is None  # the memo is cleared once done


def test_discovery_with_no_available_broker_sends_nothing_and_is_retriable():
    s = fresh()
    s.set_slot("conns", 0, Conn(DISCONNECTED, T0 - 1, 1))
    s.set_slot("conns", 1, Conn(DISCONNECTED, T0 - 1, 1))
    assert member.lookup_coordinator(s) == ("failed", NO_AVAILABLE_BROKERS)
    member.consumer_poll(s)
    assert tags(s, "send") == []
    assert s.fatal is None


def test_discovery_retriable_error_is_not_fatal():
    s = fresh()
    s.set_slot("conns", 0, Conn(READY, 0, 1))
    member.consumer_poll(s)
    respond(s, "FindCoordinator", FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE), slot=0)
    member.consumer_poll(s)
    assert s.fatal is None
    assert s.coordinator is None
    assert s.find_coordinator_request is None


def test_discovery_group_authorization_failure_is_fatal():
    s = fresh()
    s.set_slot("conns", 0, Conn(READY, 0, 1))
    member.consumer_poll(s)
    respond(s, "FindCoordinator", FindCoordinatorResponse(Errors.GROUP_AUTHORIZATION_FAILED), slot=0)
    member.consumer_poll(s)
    assert s.fatal == "GROUP_AUTHORIZATION_FAILED"


def test_mark_coordinator_unknown_disconnects_the_coordinator_connection_asynchronously():
    s = stable()
    member._do_commit_async(s, ((0, 1),))  # an OffsetCommit queued (not yet transmitted) on the coordinator connection
    member.mark_coordinator_unknown(s, False, "test")
    assert s.coordinator is None
    assert s.pending_disconnects == (CSLOT,)
    assert s.conns[CSLOT].state == READY  # not yet: handled by the next poll
    assert len(unsent(s, "OffsetCommit")) == 1
    fire(s)
    assert s.conns[CSLOT].state == DISCONNECTED
    assert s.closed_slots == [CSLOT]
    assert [e[4] for e in tags(s, "fail_unsent")] == [DISCONNECT]
    assert s.unsent[CSLOT] == ()


def test_mark_coordinator_unknown_when_disconnected_does_not_disconnect_again():
    s = stable()
    member.mark_coordinator_unknown(s, True, DISCONNECT)
    assert s.coordinator is None
    assert s.pending_disconnects == ()


def test_mark_coordinator_unknown_when_already_unknown_does_nothing():
    s = fresh()
    member.mark_coordinator_unknown(s, False, "test")
    assert s.pending_disconnects == ()
    assert tags(s, "coordinator_unknown") == []


def test_coordinator_in_reconnect_backoff_is_unknown():
    s = stable()
    s.set_slot("conns", CSLOT, Conn(DISCONNECTED, T0 - RECONNECT_BACKOFF + 1, 1))
    assert member.coordinator_unknown(s) is True
    assert s.coordinator is None
    assert s.pending_disconnects == ()  # marked unknown "as disconnected"


def test_coordinator_disconnected_past_the_backoff_stays_known():
    s = stable()
    s.set_slot("conns", CSLOT, Conn(DISCONNECTED, T0 - RECONNECT_BACKOFF, 1))
    assert member.coordinator_unknown(s) is False
    assert s.coordinator == COORD


# == JoinGroup (§3.3, §3.4) =========================================================================


def test_join_group_request_carries_member_id_and_rebalance_timeout():
    s = joining(member_id="m-7", generation=-1)
    (req,) = in_flight(s, "JoinGroup")
    assert isinstance(req.body, JoinGroupRequest)
    assert req.body.member_id == "m-7"
    assert req.body.rebalance_timeout_ms == MAX_POLL
    assert req.body.session_timeout_ms == SESSION
    assert req.body.protocol_type == "consumer"
    assert s.heartbeat_thread is True  # started by ensureActiveGroup


def test_join_group_request_timeout_is_rebalance_timeout_plus_5000():
    s = joining()
    (req,) = in_flight(s, "JoinGroup")
    assert req.timeout_ms == max(REQUEST_TIMEOUT_MS, MAX_POLL + 5000) == 15_000


def test_join_group_request_timeout_is_request_timeout_when_larger():
    s = with_coordinator(fresh(config=cfg(request_timeout_ms=40_000)))
    member.consumer_poll(s)
    (req,) = in_flight(s, "JoinGroup")
    assert req.timeout_ms == 40_000


def test_join_group_request_timeout_overflow_guard():
    assert join_group_request_timeout(30_000, MAX_INT) == MAX_INT
    assert join_group_request_timeout(30_000, MAX_INT - 5000) == MAX_INT
    assert join_group_request_timeout(30_000, 300_000) == 305_000


def test_sync_group_uses_the_default_request_timeout():
    s = completing()
    (req,) = in_flight(s, "SyncGroup")
    assert req.timeout_ms == REQUEST_TIMEOUT_MS


def test_join_none_follower_completes_rebalance_and_syncs_without_assignments():
    s = joining()
    respond(s, "JoinGroup", join_ok(generation=4, member_id="m-0", leader="m-1"))
    fire(s)
    assert s.state == COMPLETING_REBALANCE
    assert s.generation_tuple == (4, "m-0", "range")
    (sync,) = sent(s, "SyncGroup")
    assert isinstance(sync.body, SyncGroupRequest)
    assert (sync.body.generation_id, sync.body.member_id, sync.body.protocol_name) == (4, "m-0", "range")
    assert sync.body.assignments == ()
    assert sync.sent_generation == (4, "m-0", "range")
    assert s.join_future == ("pending", sync.id)  # the SyncGroup future is chained into the join


def test_join_none_leader_runs_the_assignor_and_syncs_with_all_assignments():
    s = joining()
    members = (("m-0", ("t",)), ("m-1", ("t",)))
    respond(s, "JoinGroup", join_ok(generation=4, member_id="m-0", leader="m-0", members=members))
    fire(s)
    assert s.state == COMPLETING_REBALANCE
    (sync,) = sent(s, "SyncGroup")
    assignments = dict(sync.body.assignments)
    assert set(assignments) == {"m-0", "m-1"}
    assert assignments == {"m-0": (0, 1, 2), "m-1": (3, 4, 5)}  # range over 6 partitions


def test_join_none_enables_the_heartbeat_thread_and_resets_its_timers():
    s = joining()
    s.heartbeat_due_ms = s.session_deadline_ms = s.poll_deadline_ms = 0
    s.now = T0 + 500
    respond(s, "JoinGroup", join_ok())
    fire(s)
    assert s.heartbeat_enabled is True
    assert s.heartbeat_due_ms == T0 + 500 + HB_INTERVAL
    assert s.session_deadline_ms == T0 + 500 + SESSION
    assert s.poll_deadline_ms == T0 + 500 + MAX_POLL


def test_join_none_with_a_foreign_protocol_type_is_inconsistent_and_fatal():
    s = joining()
    respond(s, "JoinGroup", join_ok(protocol_type="connect"))
    member.consumer_poll(s)
    assert s.state != COMPLETING_REBALANCE
    assert sent(s, "SyncGroup") == []
    assert s.fatal == "INCONSISTENT_GROUP_PROTOCOL"


def test_join_none_with_null_protocol_type_is_accepted():
    s = joining()
    respond(s, "JoinGroup", join_ok(protocol_type=None))
    fire(s)
    assert s.state == COMPLETING_REBALANCE


def test_join_none_when_no_longer_preparing_is_an_unjoined_group_failure():
    s = joining()
    s.state = UNJOINED  # as if the member had been reset meanwhile
    respond(s, "JoinGroup", join_ok())
    fire(s)
    assert s.join_future == ("failed", UNJOINED_GROUP)
    assert s.generation == -1
    assert sent(s, "SyncGroup") == []
    member.consumer_poll(s)
    assert s.fatal is None  # UnjoinedGroupException is retriable


def test_join_member_id_required_keeps_the_returned_member_id_and_rejoins_at_once():
    s = joining(assignment=(1,))
    assert tags(s, "lost") == [("lost", 0, (1,))]  # onJoinPrepare ran once, before the first JoinGroup
    s.assignment = (5,)  # would be dropped if onJoinPrepare ran again
    respond(s, "JoinGroup", JoinGroupResponse(Errors.MEMBER_ID_REQUIRED, member_id="m-new"))
    fire(s)
    assert s.generation_tuple == (-1, "m-new", None)
    assert s.rejoin_needed is True
    assert s.join_future == ("failed", Errors.MEMBER_ID_REQUIRED)
    member.consumer_poll(s)
    (second,) = in_flight(s, "JoinGroup")
    assert second.body.member_id == "m-new"  # the next JoinGroup carries the id
    assert s.state == PREPARING_REBALANCE
    assert s.fatal is None
    assert s.assignment == (5,)  # needsJoinPrepare stays false: no second onJoinPrepare


def test_join_unknown_member_id_resets_member_id_when_generation_unchanged():
    s = joining(member_id="m-0", generation=3, protocol="range")
    respond(s, "JoinGroup", JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID))
    fire(s)
    assert s.generation_tuple == (-1, "", None)
    assert s.state == UNJOINED
    assert s.rejoin_needed and s.needs_join_prepare
    assert [e[2:4] for e in tags(s, "reset")] == [("JoinGroup", Errors.UNKNOWN_MEMBER_ID)]
    member.consumer_poll(s)  # the loop continues immediately: a new JoinGroup without the id
    (second,) = in_flight(s, "JoinGroup")
    assert second.body.member_id == ""


def test_join_unknown_member_id_does_not_reset_when_generation_changed():
    s = joining(member_id="m-0", generation=3, protocol="range")
    s.generation, s.protocol = -1, None  # reset meanwhile, member id kept (ILLEGAL_GENERATION)
    respond(s, "JoinGroup", JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID))
    fire(s)
    assert s.member_id == "m-0"
    assert tags(s, "reset") == []
    assert s.join_future == ("failed", Errors.UNKNOWN_MEMBER_ID)


@pytest.mark.parametrize("error", [Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR])
def test_join_coordinator_errors_mark_the_coordinator_unknown(error):
    s = joining(member_id="m-0", generation=3, protocol="range")
    respond(s, "JoinGroup", JoinGroupResponse(error))
    fire(s)
    assert s.coordinator is None
    # disconnectAsync; the same poll handles it at step 2, right after firing the completion
    assert s.closed_slots == [CSLOT] and s.conns[CSLOT].state == DISCONNECTED
    assert s.generation_tuple == (3, "m-0", "range")  # no reset
    assert s.join_future == ("failed", error)


def test_join_coordinator_not_available_is_retriable_not_fatal():
    s = joining()
    respond(s, "JoinGroup", JoinGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE))
    member.consumer_poll(s)
    assert s.fatal is None
    assert s.join_future is None
    assert s.rejoin_needed is True


def test_join_rebalance_in_progress_does_not_reset_and_rejoins_at_once():
    s = joining(member_id="m-0", generation=3, protocol="range")
    respond(s, "JoinGroup", JoinGroupResponse(Errors.REBALANCE_IN_PROGRESS))
    fire(s)
    assert s.generation_tuple == (3, "m-0", "range")
    assert tags(s, "reset") == []
    member.consumer_poll(s)
    (second,) = in_flight(s, "JoinGroup")
    assert second.body.member_id == "m-0"
    assert s.fatal is None


def test_join_coordinator_load_in_progress_backs_off_without_rejoining_in_the_same_poll():
    s = joining(member_id="m-0", generation=3, protocol="range")
    respond(s, "JoinGroup", JoinGroupResponse(Errors.COORDINATOR_LOAD_IN_PROGRESS))
    member.consumer_poll(s)
    assert s.fatal is None
    assert sent(s, "JoinGroup") == []  # retriable: zero timer, back off, return
    assert s.generation_tuple == (3, "m-0", "range")
    assert s.coordinator == COORD
    member.consumer_poll(s)  # the next poll retries
    assert len(sent(s, "JoinGroup")) == 1


@pytest.mark.parametrize(
    "error",
    [
        Errors.INCONSISTENT_GROUP_PROTOCOL,
        Errors.INVALID_SESSION_TIMEOUT,
        Errors.INVALID_GROUP_ID,
        Errors.GROUP_AUTHORIZATION_FAILED,
        Errors.GROUP_MAX_SIZE_REACHED,
        Errors.FENCED_INSTANCE_ID,
        Errors.UNSUPPORTED_VERSION,
    ],
)
def test_join_fatal_errors_make_poll_fail_the_consumer(error):
    s = joining()
    respond(s, "JoinGroup", JoinGroupResponse(error))
    member.consumer_poll(s)
    assert s.fatal == name_of(error)
    assert sent(s, "JoinGroup") == []
    assert s.live_now() is False


@pytest.mark.parametrize(
    "error",
    [Errors.NON_EMPTY_GROUP, Errors.ILLEGAL_GENERATION, Errors.REQUEST_TIMED_OUT, Errors.UNKNOWN_TOPIC_OR_PARTITION],
)
def test_join_unexpected_error_is_a_fatal_kafka_exception(error):
    """The "other" row: KafkaException("Unexpected error in join group response"), which is not
    retriable even when the wire error's own exception would be (REQUEST_TIMED_OUT, ...), and is
    not one of the immediate-rejoin exceptions (ILLEGAL_GENERATION)."""
    s = joining()
    respond(s, "JoinGroup", JoinGroupResponse(error))
    member.consumer_poll(s)
    assert s.fatal is not None
    assert sent(s, "JoinGroup") == []


def test_join_transport_disconnect_marks_coordinator_unknown_without_disconnecting_again():
    s = joining()
    net.connection_lost(s, CSLOT)
    fire(s)
    assert s.coordinator is None
    assert s.pending_disconnects == ()
    assert s.join_future == ("failed", DISCONNECT)


def test_join_future_is_memoised_no_second_join_or_prepare_while_pending():
    s = joining(assignment=())
    member.consumer_poll(s)
    member.consumer_poll(s)
    assert len([e for e in tags(s, "send") if e[4] == "JoinGroup"]) == 1
    assert s.needs_join_prepare is False


# == onJoinPrepare ==================================================================================


def test_on_join_prepare_revokes_owned_partitions_before_the_join_group():
    s = stable(assignment=(0, 1, 2))
    s.rejoin_needed = True  # e.g. a heartbeat saw REBALANCE_IN_PROGRESS
    member.consumer_poll(s)
    assert tags(s, "revoke") == [("revoke", 0, (0, 1, 2))]
    assert s.assignment == ()
    revoke_at = first_index(s, lambda e: e[0] == "revoke")
    join_at = first_index(s, lambda e: e[0] == "send" and e[4] == "JoinGroup")
    assert revoke_at < join_at
    assert s.state == PREPARING_REBALANCE
    (join,) = sent(s, "JoinGroup")
    assert join.body.member_id == "m-0"
    assert join.sent_generation == (3, "m-0", "range")  # the generation is kept while rejoining


def test_on_join_prepare_after_a_generation_reset_loses_the_partitions():
    s = stable(assignment=(0, 1, 2))
    member.reset_state_and_rejoin(s, reset_member_id=False)  # generation -1, member id kept
    member.consumer_poll(s)
    assert tags(s, "lost") == [("lost", 0, (0, 1, 2))]
    assert tags(s, "revoke") == []
    assert s.assignment == ()


def test_on_join_prepare_runs_once_per_rebalance():
    s = stable(assignment=(0, 1))
    s.rejoin_needed = True
    member.consumer_poll(s)
    s.assignment = (5,)  # would be revoked if onJoinPrepare ran again
    member.consumer_poll(s)
    assert len(tags(s, "revoke")) == 1
    assert s.assignment == (5,)


# == SyncGroup (§3.4) ===============================================================================


def test_sync_none_makes_the_member_stable_and_the_poll_applies_the_assignment():
    s = completing(generation=4)
    respond(s, "SyncGroup", SyncGroupResponse(Errors.NONE, "consumer", "range", (3, 4)))
    member.consumer_poll(s)
    assert s.state == STABLE
    assert s.rejoin_needed is False
    assert s.assignment == (3, 4)
    assert tags(s, "assign") == [("assign", 0, 4, "m-0", (3, 4))]
    assert s.join_future is None
    assert s.needs_join_prepare is True


def test_sync_none_fired_by_the_heartbeat_thread_is_applied_by_the_next_poll():
    s = completing(generation=4)
    respond(s, "SyncGroup", SyncGroupResponse(Errors.NONE, "consumer", "range", (3, 4)))
    member.heartbeat_thread(s)  # its pollNoWakeup fires the SyncGroup completion
    assert s.state == STABLE
    assert s.join_future == ("succeeded", (3, 4))
    assert s.assignment == ()  # not yet: onJoinComplete runs in the application's poll
    assert tags(s, "assign") == []
    member.consumer_poll(s)
    assert s.assignment == (3, 4)
    assert s.join_future is None


def test_sync_none_with_a_different_protocol_name_is_inconsistent():
    s = completing()
    respond(s, "SyncGroup", SyncGroupResponse(Errors.NONE, "consumer", "roundrobin", (3,)))
    fire(s)
    assert s.join_future == ("failed", Errors.INCONSISTENT_GROUP_PROTOCOL)
    assert s.state == COMPLETING_REBALANCE


def test_sync_none_after_a_reset_meanwhile_fails_with_illegal_generation():
    s = completing()
    member.reset_state_and_rejoin(s, reset_member_id=False)  # e.g. by the heartbeat thread
    respond(s, "SyncGroup", SyncGroupResponse(Errors.NONE, "consumer", "range", (3,)))
    fire(s)
    assert s.join_future == ("failed", Errors.ILLEGAL_GENERATION)
    assert s.state == UNJOINED


def test_a_join_answered_with_generation_minus_one_and_a_protocol_is_not_a_reset():
    # AbstractCoordinator.hasGenerationReset requires generation -1 *and* a null protocol name;
    # SyncGroupResponseHandler and joinGroupIfNeeded test it. The model used to treat any
    # generation -1 as a reset, failing the SyncGroup with ILLEGAL_GENERATION.
    s = completing(generation=-1)
    assert s.generation_tuple == (-1, "m-0", "range")
    respond(s, "SyncGroup", SyncGroupResponse(Errors.NONE, "consumer", "range", (3, 4)))
    member.consumer_poll(s)
    assert s.state == STABLE and s.rejoin_needed is False
    assert s.assignment == (3, 4)
    assert tags(s, "assign") == [("assign", 0, -1, "m-0", (3, 4))]


def test_generation_reset_needs_generation_minus_one_and_no_protocol():
    s = fresh()
    for generation, protocol, reset in ((-1, None, True), (-1, "range", False), (4, None, False), (4, "range", False)):
        s.generation, s.member_id, s.protocol = generation, "m-0", protocol
        assert member.has_generation_reset(s) is reset, (generation, protocol)


def test_sync_rebalance_in_progress_keeps_the_generation_and_rejoins_at_once():
    s = completing(generation=4)
    respond(s, "SyncGroup", SyncGroupResponse(Errors.REBALANCE_IN_PROGRESS))
    fire(s)
    assert s.generation_tuple == (4, "m-0", "range")  # KAFKA-13891 revert: no reset
    assert tags(s, "reset") == []
    assert s.join_future == ("failed", Errors.REBALANCE_IN_PROGRESS)
    member.consumer_poll(s)
    (join,) = in_flight(s, "JoinGroup")
    assert join.sent_generation == (4, "m-0", "range")
    assert s.fatal is None


def test_sync_illegal_generation_resets_but_keeps_the_member_id():
    s = completing(generation=4)
    respond(s, "SyncGroup", SyncGroupResponse(Errors.ILLEGAL_GENERATION))
    fire(s)
    assert s.generation_tuple == (-1, "m-0", None)
    assert s.state == UNJOINED
    assert s.rejoin_needed and s.needs_join_prepare


def test_sync_unknown_member_id_resets_the_member_id():
    s = completing(generation=4)
    respond(s, "SyncGroup", SyncGroupResponse(Errors.UNKNOWN_MEMBER_ID))
    fire(s)
    assert s.generation_tuple == (-1, "", None)
    assert s.state == UNJOINED


@pytest.mark.parametrize("error", [Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID])
def test_sync_generation_errors_do_not_reset_when_generation_changed(error):
    s = completing(generation=4)
    s.generation = 5  # the generation moved on meanwhile
    respond(s, "SyncGroup", SyncGroupResponse(error))
    fire(s)
    assert s.generation_tuple == (5, "m-0", "range")
    assert tags(s, "reset") == []
    assert s.join_future == ("failed", error)


@pytest.mark.parametrize("error", [Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR])
def test_sync_coordinator_errors_mark_the_coordinator_unknown(error):
    s = completing(generation=4)
    respond(s, "SyncGroup", SyncGroupResponse(error))
    fire(s)
    assert s.coordinator is None
    # disconnectAsync; the same poll handles it at step 2, right after firing the completion
    assert s.closed_slots == [CSLOT] and s.conns[CSLOT].state == DISCONNECTED
    assert s.generation_tuple == (4, "m-0", "range")


@pytest.mark.parametrize("error", [Errors.GROUP_AUTHORIZATION_FAILED, Errors.FENCED_INSTANCE_ID])
def test_sync_fatal_errors_fail_the_consumer(error):
    s = completing()
    respond(s, "SyncGroup", SyncGroupResponse(error))
    member.consumer_poll(s)
    assert s.fatal == name_of(error)


@pytest.mark.parametrize("error", [Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.REQUEST_TIMED_OUT, Errors.NON_EMPTY_GROUP])
def test_sync_unexpected_error_is_a_fatal_kafka_exception(error):
    s = completing()
    respond(s, "SyncGroup", SyncGroupResponse(error))
    member.consumer_poll(s)
    assert s.fatal is not None
    assert sent(s, "JoinGroup") == []


def test_sync_success_followed_by_a_reset_before_the_poll_rejoins_instead_of_completing():
    """§3.3 step 5: the join future succeeded, but by the time the application's poll looks at it
    the heartbeat thread has reset the generation → resetStateAndRejoin, no onJoinComplete."""
    s = completing(generation=4)
    s.session_deadline_ms = s.now + 100_000
    s.now = s.poll_deadline_ms  # the poll timer expires in the same heartbeat iteration
    respond(s, "SyncGroup", SyncGroupResponse(Errors.NONE, "consumer", "range", (3, 4)))
    member.heartbeat_thread(s)  # fires the SyncGroup (→ STABLE), then leaves the group (→ reset)
    assert s.join_future == ("succeeded", (3, 4))
    assert s.state == UNJOINED and s.generation == -1
    member.consumer_poll(s)
    assert tags(s, "assign") == []
    assert s.assignment == ()
    (join,) = sent(s, "JoinGroup")
    assert join.body.member_id == ""
    assert s.state == PREPARING_REBALANCE


# == Heartbeat thread (§3.5) ========================================================================


def test_heartbeat_is_sent_only_when_due():
    s = stable()
    s.now = T0 + HB_INTERVAL - 1
    member.heartbeat_thread(s)
    assert sent(s, "Heartbeat") == []
    assert tags(s, "heartbeat_sent") == []
    s.now = T0 + HB_INTERVAL
    member.heartbeat_thread(s)
    (hb,) = sent(s, "Heartbeat")
    assert (hb.body.generation_id, hb.body.member_id) == (3, "m-0")
    assert s.heartbeat_due_ms == T0 + 2 * HB_INTERVAL  # sentHeartbeat resets the heartbeat timer


def test_heartbeat_timers_never_go_back_with_the_clock():
    # Kafka's Timer.update keeps max(now, current): after a backward clock jump the heartbeat is
    # due when the clock has caught up, not earlier (and the session timer does not restart).
    s = stable()
    s.now = T0 + HB_INTERVAL - 10
    member.heartbeat_thread(s)
    s.now = T0 - 5000  # the clock jumps back
    member.heartbeat_thread(s)
    assert sent(s, "Heartbeat") == [] and s.heartbeat_clock_ms == T0 + HB_INTERVAL - 10
    s.now = T0 + HB_INTERVAL - 1
    member.heartbeat_thread(s)
    assert sent(s, "Heartbeat") == []
    s.now = T0 + HB_INTERVAL
    member.heartbeat_thread(s)
    assert len(sent(s, "Heartbeat")) == 1


def test_join_group_metadata_carries_owned_partitions_and_generation():
    # ConsumerProtocol Subscription v2: the coordinator compares these bytes (member.matches), so
    # a follower that rejoins with another generation makes a Stable group rebalance.
    s = stable()
    s.coordinator = COORD
    request = member.send_join_group(s)
    (join,) = [r for r in s.unsent[CSLOT] + s.in_flight[CSLOT] if r.api == "JoinGroup"]
    assert request[0] == "pending"
    topics, owned, generation = join.body.protocols[0][1]
    assert topics == (s.config.topic,) and owned == (0, 1, 2) and generation == 3


def test_ensure_coordinator_ready_counts_a_coordinator_found_by_an_older_lookup():
    s = fresh()
    s.set_slot("conns", 0, Conn(READY, 0, 1))
    s.find_coordinator_request = ("pending", 99)  # this lookup's answer has not come
    s.coordinator = COORD  # but an older lookup's answer found the coordinator meanwhile
    s.set_slot("conns", B + COORD, Conn(READY, 0, 1))
    assert member.ensure_coordinator_ready(s) is True


def test_an_older_lookups_answer_does_not_complete_the_memoised_one():
    s = fresh()
    s.set_slot("conns", 0, Conn(READY, 0, 1))
    member.lookup_coordinator(s)  # request A
    (a,) = s.unsent[0]
    s.find_coordinator_request = None  # the heartbeat thread cleared the memo
    member.lookup_coordinator(s)  # request B
    memo = s.find_coordinator_request
    assert memo[0] == "pending" and memo[1] != a.id
    member.dispatch(s, a, REQUEST_TIMEOUT)  # A times out
    assert s.find_coordinator_request == memo


def test_heartbeat_is_sent_in_completing_rebalance():
    s = completing(generation=4)
    s.now = s.heartbeat_due_ms
    member.heartbeat_thread(s)
    assert len(sent(s, "Heartbeat")) == 1


@pytest.mark.parametrize("state", [UNJOINED, PREPARING_REBALANCE])
def test_heartbeat_thread_disables_itself_when_not_joined(state):
    s = stable()
    s.state = state
    s.now = T0 + HB_INTERVAL
    member.heartbeat_thread(s)
    assert s.heartbeat_enabled is False
    assert sent(s, "Heartbeat") == []
    assert tags(s, "polled") == []  # disable(); continue — no pollNoWakeup
    s.state = STABLE
    member.heartbeat_thread(s)  # stays disabled until a JoinGroup succeeds
    assert sent(s, "Heartbeat") == []


def test_heartbeat_thread_checks_the_state_before_its_poll_not_after():
    """§3.5 loop order: the not-joined check comes before pollNoWakeup; a completion fired by that
    poll that resets the member (here an OffsetCommit UNKNOWN_MEMBER_ID) does not stop the
    heartbeat of the same iteration, which then carries the reset generation."""
    s = stable()
    member.commit_async(s)
    fire(s)
    respond(s, "OffsetCommit", OffsetCommitResponse(((0, Errors.UNKNOWN_MEMBER_ID),)))
    s.now = s.heartbeat_due_ms
    member.heartbeat_thread(s)
    assert s.state == UNJOINED
    (hb,) = sent(s, "Heartbeat")
    assert (hb.body.generation_id, hb.body.member_id) == (-1, "")
    member.heartbeat_thread(s)  # the next iteration disables the thread
    assert s.heartbeat_enabled is False


def test_heartbeat_session_timer_expiry_marks_the_coordinator_unknown():
    s = stable()
    s.now = T0 + SESSION  # expired: now >= deadline
    member.heartbeat_thread(s)
    assert s.coordinator is None
    assert s.pending_disconnects == (CSLOT,)
    assert sent(s, "Heartbeat") == []
    assert s.state == STABLE  # no reset


def test_heartbeat_session_timer_not_expired_one_ms_before():
    s = stable()
    s.heartbeat_due_ms = T0 + SESSION  # keep the heartbeat from being due
    s.now = T0 + SESSION - 1
    member.heartbeat_thread(s)
    assert s.coordinator == COORD


def test_heartbeat_poll_timer_expiry_sends_leave_group_and_resets_the_generation():
    s = stable(config=cfg(max_poll_interval_ms=4000))
    s.poll_deadline_ms = T0 + 4000
    s.session_deadline_ms = T0 + 100_000  # heartbeats were answered
    s.now = T0 + 4000
    member.heartbeat_thread(s)
    (leave,) = sent(s, "LeaveGroup")
    assert isinstance(leave.body, LeaveGroupRequest)
    assert leave.body.member_ids == ("m-0",)
    assert s.generation_tuple == (-1, "", None)
    assert s.state == UNJOINED
    assert s.rejoin_needed is True
    assert sent(s, "Heartbeat") == []
    assert tags(s, "poll_timeout") == [("poll_timeout", 0)]


def test_heartbeat_session_expiry_takes_precedence_over_poll_expiry():
    s = stable()
    s.now = T0 + MAX_POLL + 1  # both timers expired
    member.heartbeat_thread(s)
    assert s.coordinator is None
    assert sent(s, "LeaveGroup") == []
    assert s.generation == 3


def test_heartbeat_thread_with_unknown_coordinator_starts_or_clears_the_lookup():
    s = stable()
    member.mark_coordinator_unknown(s, True, "test")
    s.now = T0 + HB_INTERVAL
    member.heartbeat_thread(s)
    assert s.find_coordinator_request is not None
    assert len([e for e in tags(s, "send") if e[4] == "FindCoordinator"]) == 1
    assert sent(s, "Heartbeat", slot=CSLOT) == []
    member.heartbeat_thread(s)  # memoised lookup present: cleared, not re-sent
    assert s.find_coordinator_request is None
    assert len([e for e in tags(s, "send") if e[4] == "FindCoordinator"]) == 1


def test_user_poll_resets_the_poll_timer():
    s = stable()
    s.now = T0 + 3000
    member.consumer_poll(s)
    assert s.poll_deadline_ms == T0 + 3000 + MAX_POLL


def _heartbeat_in_flight(s: Step):
    s.now = s.heartbeat_due_ms
    member.heartbeat_thread(s)
    fire(s)  # transmit it
    (hb,) = in_flight(s, "Heartbeat")
    return hb


def test_heartbeat_response_none_resets_the_session_timer():
    s = stable()
    _heartbeat_in_flight(s)
    s.now += 30
    s.heartbeat_attempts = 2
    respond(s, "Heartbeat", HeartbeatResponse(Errors.NONE))
    fire(s)
    assert s.session_deadline_ms == s.now + SESSION
    assert s.heartbeat_attempts == 0
    assert s.state == STABLE and s.rejoin_needed is False


def test_heartbeat_rebalance_in_progress_in_stable_requests_rejoin():
    s = stable()
    _heartbeat_in_flight(s)
    s.now += 30
    respond(s, "Heartbeat", HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    fire(s)
    assert s.rejoin_needed is True
    assert s.state == STABLE
    assert s.generation_tuple == (3, "m-0", "range")
    assert s.session_deadline_ms == s.now + SESSION  # counts as liveness


def test_heartbeat_rebalance_in_progress_outside_stable_is_ignored():
    s = stable()
    s.state = COMPLETING_REBALANCE  # (no SyncGroup ahead of the heartbeat on the connection)
    hb = _heartbeat_in_flight(s)
    assert hb.sent_generation == (3, "m-0", "range")
    assert s.rejoin_needed is False  # so that a requestRejoin would show
    s.now += 30
    respond(s, "Heartbeat", HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    fire(s)
    assert s.rejoin_needed is False
    assert s.state == COMPLETING_REBALANCE
    assert s.session_deadline_ms == s.now + SESSION


def test_heartbeat_illegal_generation_resets_keeping_the_member_id():
    s = stable()
    _heartbeat_in_flight(s)
    respond(s, "Heartbeat", HeartbeatResponse(Errors.ILLEGAL_GENERATION))
    fire(s)
    assert s.generation_tuple == (-1, "m-0", None)
    assert s.state == UNJOINED
    assert s.rejoin_needed and s.needs_join_prepare
    assert s.heartbeat_attempts == 1  # failHeartbeat
    assert s.heartbeat_due_ms == s.now + RETRY_BACKOFF


def test_heartbeat_unknown_member_id_resets_the_member_id():
    s = stable()
    _heartbeat_in_flight(s)
    respond(s, "Heartbeat", HeartbeatResponse(Errors.UNKNOWN_MEMBER_ID))
    fire(s)
    assert s.generation_tuple == (-1, "", None)
    assert s.state == UNJOINED


@pytest.mark.parametrize("error", [Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID])
def test_heartbeat_stale_generation_error_is_ignored(error):
    s = stable()
    _heartbeat_in_flight(s)  # sent under generation 3
    s.generation = 4  # a newer generation was joined meanwhile
    s.now += 30
    respond(s, "Heartbeat", HeartbeatResponse(error))
    fire(s)
    assert s.generation_tuple == (4, "m-0", "range")
    assert s.state == STABLE
    assert tags(s, "reset") == []
    assert s.session_deadline_ms == s.now + SESSION  # ignored means completed successfully


@pytest.mark.parametrize("error", [Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR])
def test_heartbeat_coordinator_errors_mark_the_coordinator_unknown(error):
    s = stable()
    _heartbeat_in_flight(s)
    respond(s, "Heartbeat", HeartbeatResponse(error))
    fire(s)
    assert s.coordinator is None
    # disconnectAsync; the same poll handles it at step 2, right after firing the completion
    assert s.closed_slots == [CSLOT] and s.conns[CSLOT].state == DISCONNECTED
    assert s.generation_tuple == (3, "m-0", "range")
    assert s.heartbeat_attempts == 1


def test_heartbeat_request_timeout_fails_the_heartbeat_without_reset():
    s = stable()
    s.set_slot("conns", CSLOT, Conn(CONNECTING, T0, 2))
    s.now = s.heartbeat_due_ms
    member.heartbeat_thread(s)
    s.now += REQUEST_TIMEOUT_MS + 1
    fire(s)
    assert [e for e in tags(s, "complete") if e[3] == "Heartbeat"][0][4] == REQUEST_TIMEOUT
    assert s.heartbeat_attempts == 1
    assert s.coordinator == COORD
    assert s.generation == 3


# == LeaveGroup / maybeLeaveGroup ===================================================================


def test_maybe_leave_group_sends_for_a_joined_member_and_resets():
    s = stable()
    member.maybe_leave_group(s)
    (leave,) = sent(s, "LeaveGroup")
    assert leave.body.member_ids == ("m-0",)
    assert leave in s.in_flight[CSLOT]  # pollNoWakeup transmitted it
    assert s.generation_tuple == (-1, "", None)
    assert s.state == UNJOINED
    assert s.rejoin_needed and s.needs_join_prepare


def test_maybe_leave_group_unjoined_member_sends_nothing_but_still_resets():
    s = stable()
    s.state = UNJOINED
    s.generation = -1
    member.maybe_leave_group(s)
    assert sent(s, "LeaveGroup") == []
    assert s.member_id == ""


def test_maybe_leave_group_without_member_id_sends_nothing():
    s = stable(member_id="")
    s.state = COMPLETING_REBALANCE
    member.maybe_leave_group(s)
    assert sent(s, "LeaveGroup") == []
    assert s.state == UNJOINED


def test_maybe_leave_group_with_unknown_coordinator_sends_nothing():
    s = stable()
    member.mark_coordinator_unknown(s, True, "test")
    member.maybe_leave_group(s)
    assert all(r.api != "LeaveGroup" for q in s.unsent for r in q)
    assert all(r.api != "LeaveGroup" for q in s.in_flight for r in q)
    assert s.generation_tuple == (-1, "", None)


def test_maybe_leave_group_in_preparing_rebalance_sends():
    s = stable()
    s.state = PREPARING_REBALANCE
    member.maybe_leave_group(s)
    assert len(sent(s, "LeaveGroup")) == 1


# == close ==========================================================================================


def test_close_revokes_then_leaves_then_awaits_the_leave_group():
    s = stable(assignment=(0, 1, 2))
    member.close(s)
    revoke_at = first_index(s, lambda e: e[0] == "revoke")
    leave_at = first_index(s, lambda e: e[0] == "send" and e[4] == "LeaveGroup")
    closing_at = first_index(s, lambda e: e[0] == "closing")
    assert closing_at < revoke_at < leave_at
    assert s.assignment == ()
    assert s.heartbeat_thread is False
    assert s.closed is False  # awaiting the LeaveGroup response
    # close(timeout) gives the coordinator min(timeout = 30 s, request.timeout.ms = 8 s)
    assert s.closing_deadline_ms == T0 + min(30_000, s.config.request_timeout_ms) == T0 + 8_000
    s.now += 5
    respond(s, "LeaveGroup", LeaveGroupResponse(Errors.NONE))
    member.consumer_poll(s)
    assert s.closed is True


def test_close_first_waits_for_commits_held_on_a_coordinator_lookup():
    # ConsumerCoordinator.close polls while pendingAsyncCommits > 0 (commitAsync calls held on a
    # lookup) before AbstractCoordinator.close revokes and leaves.
    s = stable()
    member.mark_coordinator_unknown(s, True, "test")
    member.commit_async(s)
    ((rid, _, _),) = s.held_commits
    member.close(s)
    assert s.closing_commits and s.assignment == (0, 1, 2) and not tags(s, "revoke")
    assert all(e[4] != "LeaveGroup" for e in tags(s, "send"))
    member.consumer_poll(s)  # still no answer to the lookup: still waiting
    assert s.closing_commits and not s.closed
    (lookup_slot,) = [slot for slot, q in enumerate(s.in_flight) if any(r.id == rid for r in q)]
    respond(s, "FindCoordinator", FindCoordinatorResponse(Errors.NONE, COORD), slot=lookup_slot)
    member.consumer_poll(s)
    commit_at = first_index(s, lambda e: e[0] == "send" and e[4] == "OffsetCommit")
    leave_at = first_index(s, lambda e: e[0] == "send" and e[4] == "LeaveGroup")
    assert commit_at < leave_at and not s.closing_commits and s.assignment == ()


def test_close_gives_up_on_held_commits_when_its_timer_expires():
    s = stable()
    member.mark_coordinator_unknown(s, True, "test")
    member.commit_async(s)
    member.close(s)
    s.now = s.closing_deadline_ms
    member.consumer_poll(s)
    assert not s.closing_commits and tags(s, "revoke")


def test_close_awaits_pending_commits_too():
    s = stable()
    member.commit_async(s)
    member.close(s)
    assert [r.api for r in s.in_flight[CSLOT]] == ["OffsetCommit", "LeaveGroup"]
    respond(s, "OffsetCommit", OffsetCommitResponse(((0, Errors.NONE), (1, Errors.NONE), (2, Errors.NONE))))
    member.consumer_poll(s)
    assert s.closed is False  # LeaveGroup still pending
    respond(s, "LeaveGroup", LeaveGroupResponse(Errors.NONE))
    member.consumer_poll(s)
    assert s.closed is True


def test_close_gives_up_when_the_close_timer_expires():
    s = stable()
    member.close(s)
    assert s.closed is False
    s.now = s.closing_deadline_ms
    member.consumer_poll(s)
    assert s.closed is True


def test_close_with_unknown_coordinator_closes_at_once():
    s = stable()
    member.mark_coordinator_unknown(s, True, "test")
    member.close(s)
    assert s.closed is True
    assert tags(s, "revoke") == [("revoke", 0, (0, 1, 2))]


# == OffsetCommit (§3.4) ============================================================================


def _commit_in_flight(s: Step):
    member.commit_async(s)
    fire(s)
    (req,) = in_flight(s, "OffsetCommit")
    return req


def _commit_response(error, partitions=(0, 1, 2)):
    return OffsetCommitResponse(tuple((p, error) for p in partitions))


def test_commit_in_stable_sends_the_generation_and_member_id():
    s = stable()
    req = _commit_in_flight(s)
    assert isinstance(req.body, OffsetCommitRequest)
    assert (req.body.generation_id, req.body.member_id) == (3, "m-0")
    assert [p for p, _ in req.body.offsets] == [0, 1, 2]


@pytest.mark.parametrize(
    "state, failure",
    [
        (PREPARING_REBALANCE, "RebalanceInProgressException"),
        (COMPLETING_REBALANCE, "RebalanceInProgressException"),
        (UNJOINED, "CommitFailedException"),
    ],
)
def test_commit_outside_stable_fails_without_sending(state, failure):
    s = stable()
    s.state = state
    member.commit_async(s)
    assert sent(s, "OffsetCommit") == []
    assert tags(s, "commit_failed") == [("commit_failed", 0, failure)]


def test_commit_unknown_member_id_resets_the_member_id():
    s = stable()
    _commit_in_flight(s)
    respond(s, "OffsetCommit", _commit_response(Errors.UNKNOWN_MEMBER_ID))
    fire(s)
    assert s.generation_tuple == (-1, "", None)
    assert s.state == UNJOINED
    assert s.rejoin_needed is True


def test_commit_illegal_generation_resets_keeping_the_member_id():
    s = stable()
    _commit_in_flight(s)
    respond(s, "OffsetCommit", _commit_response(Errors.ILLEGAL_GENERATION))
    fire(s)
    assert s.generation_tuple == (-1, "m-0", None)
    assert s.state == UNJOINED


@pytest.mark.parametrize("error", [Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION])
def test_commit_generation_error_while_preparing_a_new_generation_does_not_reset(error):
    s = stable()
    _commit_in_flight(s)  # sent under generation 3
    s.generation = 4
    s.state = PREPARING_REBALANCE  # generation changed and rebalancing: RebalanceInProgress only
    respond(s, "OffsetCommit", _commit_response(error))
    fire(s)
    assert s.generation_tuple == (4, "m-0", "range")
    assert s.state == PREPARING_REBALANCE
    assert tags(s, "reset") == []


@pytest.mark.parametrize("error", [Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION])
def test_commit_generation_error_with_changed_generation_outside_preparing_resets(error):
    s = stable()
    _commit_in_flight(s)
    s.generation = 4  # changed, but the member is STABLE again: the exception does not apply
    respond(s, "OffsetCommit", _commit_response(error))
    fire(s)
    assert s.generation == -1
    assert s.state == UNJOINED
    assert s.member_id == ("" if error == Errors.UNKNOWN_MEMBER_ID else "m-0")


def test_commit_generation_error_while_preparing_with_unchanged_generation_resets():
    s = stable()
    _commit_in_flight(s)
    s.state = PREPARING_REBALANCE  # rejoining, generation still 3
    respond(s, "OffsetCommit", _commit_response(Errors.UNKNOWN_MEMBER_ID))
    fire(s)
    assert s.generation_tuple == (-1, "", None)
    assert s.state == UNJOINED


def test_commit_rebalance_in_progress_requests_rejoin_without_reset():
    s = stable()
    _commit_in_flight(s)
    respond(s, "OffsetCommit", _commit_response(Errors.REBALANCE_IN_PROGRESS))
    fire(s)
    assert s.rejoin_needed is True
    assert s.generation_tuple == (3, "m-0", "range")
    assert s.state == STABLE


@pytest.mark.parametrize("error", [Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR, Errors.REQUEST_TIMED_OUT])
def test_commit_coordinator_errors_mark_the_coordinator_unknown(error):
    s = stable()
    _commit_in_flight(s)
    respond(s, "OffsetCommit", _commit_response(error))
    fire(s)
    assert s.coordinator is None
    # disconnectAsync; the same poll handles it at step 2, right after firing the completion
    assert s.closed_slots == [CSLOT] and s.conns[CSLOT].state == DISCONNECTED
    assert s.generation == 3


def test_commit_none_changes_nothing():
    s = stable()
    _commit_in_flight(s)
    respond(s, "OffsetCommit", _commit_response(Errors.NONE))
    fire(s)
    assert s.coordinator == COORD
    assert s.generation_tuple == (3, "m-0", "range")
    assert s.rejoin_needed is False


# == the whole join, end to end =====================================================================


def test_full_join_from_scratch_two_phase():
    s = fresh()
    s.set_slot("conns", 1, Conn(READY, 0, 1))
    member.consumer_poll(s)
    respond(s, "FindCoordinator", FindCoordinatorResponse(Errors.NONE, node_id=0), slot=1)
    member.consumer_poll(s)
    assert s.coordinator == 0
    assert s.conns[CSLOT].state == CONNECTING
    s.set_slot("conns", CSLOT, Conn(READY, s.now, s.conns[CSLOT].epoch))
    member.consumer_poll(s)
    respond(s, "JoinGroup", JoinGroupResponse(Errors.MEMBER_ID_REQUIRED, member_id="m-9"))
    member.consumer_poll(s)
    members = (("m-9", ("t",)),)
    respond(s, "JoinGroup", join_ok(generation=1, member_id="m-9", leader="m-9", members=members))
    member.consumer_poll(s)
    (sync,) = in_flight(s, "SyncGroup")
    assert sync.body.assignments == (("m-9", (0, 1, 2, 3, 4, 5)),)
    respond(s, "SyncGroup", SyncGroupResponse(Errors.NONE, "consumer", "range", (0, 1, 2, 3, 4, 5)))
    member.consumer_poll(s)
    assert s.state == STABLE
    assert s.generation_tuple == (1, "m-9", "range")
    assert s.assignment == (0, 1, 2, 3, 4, 5)
    assert s.fatal is None
    states = [e[3] for e in tags(s, "member_state")]
    assert states == [PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE]


# -- commitAsync (ConsumerCoordinator.commitOffsetsAsync) ---------------------------------------------


def test_commit_async_transmits_at_once_with_pollnowakeup():
    s = stable()
    member.commit_async(s)
    sent = [e for e in tags(s, "transmit") if e[4] == "OffsetCommit"]
    assert len(sent) == 1  # commitAsync ends with client.pollNoWakeup()
    (req,) = [r for r in s.in_flight[CSLOT] if r.api == "OffsetCommit"]
    assert req.body.generation_id == s.generation and req.body.member_id == s.member_id
    assert req.body.offsets == tuple((p, 1) for p in s.assignment)


def test_commit_async_with_unknown_coordinator_waits_for_the_lookup_then_commits():
    s = stable()
    member.mark_coordinator_unknown(s, True, "test")
    member.commit_async(s)
    assert [e for e in tags(s, "send") if e[4] == "OffsetCommit"] == []
    assert len(s.held_commits) == 1
    (rid, offsets, _) = s.held_commits[0]
    (lookup_slot,) = [slot for slot, q in enumerate(s.in_flight) if any(r.id == rid and r.api == "FindCoordinator" for r in q)]
    respond(s, "FindCoordinator", FindCoordinatorResponse(Errors.NONE, 0), slot=lookup_slot)
    fire(s)
    assert s.held_commits == ()
    commits = [e for e in tags(s, "send") if e[4] == "OffsetCommit"]
    assert len(commits) == 1


def test_commit_async_with_nothing_owned_sends_nothing_but_still_polls():
    s = stable()
    s.assignment = ()
    member.commit_async(s)
    assert [e for e in tags(s, "send") if e[4] == "OffsetCommit"] == []
    assert tags(s, "polled")
