"""The client judge on hand-written traces: each rule fires on the behaviour it forbids, and stays
quiet on the Kafka behaviour next to it (the answer came too late to be seen, an older generation's
answer, a reset the coordinator asked for)."""

import pytest

from properties.clients.judge import judge
from properties.clients.trace import PIPELINE_MS, WINDOW_MS
from tests.helpers.client_traces import Wire, ZERO, joined, rules


def test_a_clean_member_breaks_no_rule():
    w = joined().call(500, "c0", "Heartbeat", {"generation_id": 1, "member_id": "m1"}, {"error_code": 0})
    w.call(700, "c0", "OffsetCommit", {"generation_id": 1, "member_id": "m1"}, error=0)
    events = {"c0": ({"event": "assigned", "partitions": [0, 1], "wall_ms": ZERO + 12},)}
    assert rules(w.outcome(events)) == []


def test_two_joins_in_flight_on_two_connections_are_one_too_many():
    w = Wire().call(0, "c0", "JoinGroup", {"member_id": "m1"}, connection="a")
    w.call(100, "c0", "JoinGroup", {"member_id": "m1"}, connection="b")
    assert rules(w.outcome()) == ["one-rebalance-request-in-flight"]
    # the first connection closed (the client gave up on it) just before: allowed
    w = Wire().call(0, "c0", "JoinGroup", {"member_id": "m1"}, connection="a").close(90, "c0", "a")
    w.call(100, "c0", "JoinGroup", {"member_id": "m1"}, connection="b")
    assert rules(w.outcome()) == []


def test_a_heartbeat_without_a_generation_is_a_heartbeat_while_unjoined():
    w = joined().call(500, "c0", "Heartbeat", {"generation_id": -1, "member_id": ""}, {"error_code": 25})
    assert rules(w.outcome()) == ["heartbeat-carries-current-generation"]


def test_a_commit_with_the_previous_generation_after_the_new_one_was_seen_is_stale():
    w = joined().join(1000, "c0", "m1", 2, sent_member="m1").sync(1010, "c0", "m1", 2, [0, 1])
    stale = {"generation_id": 1, "member_id": "m1"}
    w.call(1011 + PIPELINE_MS + 10, "c0", "OffsetCommit", stale, error=22)  # its connection idle meanwhile
    assert rules(w.outcome()) == ["commit-carries-current-generation"]
    # sent right after the answer was written: the client may not have read it yet
    w = joined().join(1000, "c0", "m1", 2, sent_member="m1").call(1001 + WINDOW_MS // 2, "c0", "OffsetCommit", stale,
                                                                   error=22)
    assert "commit-carries-current-generation" not in rules(w.outcome())


def test_a_commit_after_the_coordinator_said_the_member_is_unknown_is_stale():
    current = {"generation_id": 1, "member_id": "m1"}
    w = joined().call(500, "c0", "OffsetCommit", current, error=25)
    w.call(500 + 2 * WINDOW_MS, "c0", "OffsetCommit", current, error=25)
    assert "commit-carries-current-generation" in rules(w.outcome())


def test_no_rejoin_after_rebalance_in_progress_is_a_finding_unless_the_member_stopped():
    w = joined().call(500, "c0", "Heartbeat", {"generation_id": 1, "member_id": "m1"}, {"error_code": 27})
    w.call(600, "c0", "Heartbeat", {"generation_id": 1, "member_id": "m1"}, {"error_code": 27})
    assert rules(w.outcome(stop=100_000)) == ["rejoin-after-error"]
    assert rules(w.outcome(stop=5_000)) == []  # stopped before max.poll.interval.ms was over
    w.join(3000, "c0", "m1", 2, sent_member="m1")
    assert rules(w.outcome()) == []
    assert rules(w.outcome(stop=100_000)) == ["heartbeats-continue"]  # then silent in generation 2


def test_an_answer_for_an_older_generation_asks_for_no_rejoin():
    # sent in generation 1, answered after generation 2's JoinGroup answer (another connection)
    w = joined().call(900, "c0", "Heartbeat", {"generation_id": 1, "member_id": "m1"}, {"error_code": 22}, at=1500,
                      connection="heartbeats")
    w.join(1000, "c0", "m1", 2, sent_member="m1")
    assert rules(w.outcome()) == []


def test_a_member_id_dropped_after_a_disconnect_is_a_finding_and_after_unknown_member_id_is_not():
    w = joined().call(500, "c0", "JoinGroup", {"member_id": "m1"}).close(600, "c0")
    w.call(700, "c0", "JoinGroup", {"member_id": ""}, connection="again")
    assert rules(w.outcome()) == ["member-id-kept-until-told"]
    w = joined().call(500, "c0", "Heartbeat", {"generation_id": 1, "member_id": "m1"}, {"error_code": 25})
    w.call(700, "c0", "JoinGroup", {"member_id": ""}, {"error_code": 79, "member_id": "m2", "generation_id": -1})
    assert rules(w.outcome()) == []


def test_a_group_request_after_not_coordinator_needs_a_find_coordinator_first():
    hb = {"generation_id": 1, "member_id": "m1"}
    w = joined().call(500, "c0", "Heartbeat", hb, {"error_code": 16})
    w.call(1000, "c0", "Heartbeat", hb, {"error_code": 0})
    assert rules(w.outcome()) == ["rediscover-after-coordinator-error"]
    w = joined().call(500, "c0", "Heartbeat", hb, {"error_code": 16})
    w.call(900, "c0", "FindCoordinator", {"key": "g"}, {"error_code": 0}).call(1000, "c0", "Heartbeat", hb,
                                                                                 {"error_code": 0})
    assert rules(w.outcome()) == []
    # a JoinGroup the broker read before it answered the FindCoordinator (in the same millisecond,
    # on another connection) was sent before the client knew where the coordinator is
    w = joined().call(500, "c0", "SyncGroup", hb, {"error_code": 15})
    w.call(950, "c0", "JoinGroup", {"member_id": "m1"}, connection="old")
    w.call(950, "c0", "FindCoordinator", {"key": "g"}, {"error_code": 0}, connection="lookup")
    assert rules(w.outcome()) == ["rediscover-after-coordinator-error"]


def test_callbacks_must_hand_over_the_sync_answers_partitions_and_revoke_first():
    w = joined()
    wrong = {"c0": ({"event": "assigned", "partitions": [0], "wall_ms": ZERO + 12},)}
    assert rules(w.outcome(wrong)) == ["assignment-matches-sync"]
    w.join(1000, "c0", "m1", 2, sent_member="m1").sync(1010, "c0", "m1", 2, [1])
    unrevoked = {"c0": ({"event": "assigned", "partitions": [0, 1], "wall_ms": ZERO + 12},
                        {"event": "assigned", "partitions": [1], "wall_ms": ZERO + 1012})}
    assert rules(w.outcome(unrevoked)) == ["revoke-before-rejoin", "assignment-matches-sync"]
    revoked = {"c0": (unrevoked["c0"][0], {"event": "revoked", "partitions": [0, 1], "wall_ms": ZERO + 990},
                      unrevoked["c0"][1])}
    assert rules(w.outcome(revoked)) == []


def test_a_group_that_does_not_settle_is_a_finding():
    assert rules(joined().outcome(settled=False)) == ["group-settles"]


def test_a_member_silent_for_a_session_while_holding_a_generation_stopped_heartbeating():
    hb = {"generation_id": 1, "member_id": "m1"}
    w = joined().call(500, "c0", "Heartbeat", hb, {"error_code": 0}).call(7000, "c0", "Heartbeat", hb, {"error_code": 0})
    (finding,) = judge(w.outcome())
    assert finding.rule == "heartbeats-continue" and "sent nothing for 6499 ms" in finding.summary
    # a heartbeat every second: fine
    w = joined()
    for t in range(1000, 8000, 1000):
        w.call(t, "c0", "Heartbeat", hb, {"error_code": 0})
    assert rules(w.outcome()) == []
    # the broker held it (a silence fault) or its SyncGroup was parked: not the client's doing
    w = joined().call(500, "c0", "Heartbeat", hb, {"error_code": 0})
    w.lines.append({"time_ms": ZERO + 600, "direction": "fault", "fault": {"kind": "silence", "client": "c0", "ms": 6300}})
    w.call(7000, "c0", "Heartbeat", hb, {"error_code": 0})
    assert rules(w.outcome()) == []
    w = joined().call(500, "c0", "SyncGroup", hb, {"error_code": 0, "assignment": {"partitions": [["t", 0], ["t", 1]]}},
                      at=6900).call(7000, "c0", "Heartbeat", hb, {"error_code": 0})
    assert rules(w.outcome()) == []
    # after leaving (or being told its generation is gone) a member owes no heartbeat
    w = joined().call(500, "c0", "LeaveGroup", {"members": [{"member_id": "m1"}]}, {"error_code": 0})
    assert rules(w.outcome(stop=60_000)) == []


def test_a_members_commit_with_no_generation_is_outside_any_generation():
    w = joined().call(500, "c0", "OffsetCommit", {"generation_id": -1, "member_id": "m1"}, error=22)
    (finding,) = judge(w.outcome())
    assert finding.rule == "commit-carries-current-generation" and "outside a stable generation" in finding.summary
    # a commit of a consumer outside the group (no member id) is Kafka's manual-assignment commit
    w = joined().call(500, "c0", "OffsetCommit", {"generation_id": -1, "member_id": ""}, error=0)
    assert rules(w.outcome()) == []


def test_a_rejoin_without_giving_up_the_partitions_first_is_a_finding():
    w = joined().join(1000, "c0", "m1", 2, sent_member="m1")
    kept = {"c0": ({"event": "assigned", "partitions": [0, 1], "wall_ms": ZERO + 12},)}
    assert "revoke-before-rejoin" in rules(w.outcome(kept))
    revoked = {"c0": (kept["c0"][0], {"event": "revoked", "partitions": [0, 1], "wall_ms": ZERO + 999})}
    assert "revoke-before-rejoin" not in rules(w.outcome(revoked))
    lost = {"c0": (kept["c0"][0], {"event": "lost", "partitions": [0, 1], "wall_ms": ZERO + 1000})}
    assert "revoke-before-rejoin" not in rules(w.outcome(lost))
    late = {"c0": (kept["c0"][0], {"event": "revoked", "partitions": [0, 1], "wall_ms": ZERO + 1001})}
    assert "revoke-before-rejoin" in rules(w.outcome(late))


def test_an_assignment_in_the_same_millisecond_as_a_join_came_after_it():
    """librdkafka rejoined, synced and called on_assign within one millisecond (9,691 ms): the
    assignment answers the SyncGroup that followed the JoinGroup, not the other way round."""
    w = joined().join(1000, "c0", "m1", 2, sent_member="m1", at=1000).sync(1000, "c0", "m1", 2, [0, 1], at=1000)
    events = {"c0": ({"event": "assigned", "partitions": [0, 1], "wall_ms": ZERO + 12},
                     {"event": "revoked", "partitions": [0, 1], "wall_ms": ZERO + 999},
                     {"event": "assigned", "partitions": [0, 1], "wall_ms": ZERO + 1000})}
    assert rules(w.outcome(events)) == []


def test_a_generation_given_again_in_the_same_millisecond_as_it_was_refused_is_current():
    """librdkafka: SyncGroup of generation 3 answered ILLEGAL_GENERATION, JoinGroup answered
    generation 3 again within the same millisecond; its later commit with 3 is current."""
    w = joined().join(1000, "c0", "m1", 3, sent_member="m1", at=1000)
    w.call(1000, "c0", "SyncGroup", {"generation_id": 3, "member_id": "m1"}, {"error_code": 22}, at=1000)
    w.join(1000, "c0", "m1", 3, sent_member="m1", at=1000).sync(1000, "c0", "m1", 3, [0, 1], at=1000)
    w.call(1300, "c0", "OffsetCommit", {"generation_id": 3, "member_id": "m1"}, error=0)
    assert rules(w.outcome()) == []


def test_a_request_queued_behind_a_busy_connection_may_have_been_sent_before_the_answer():
    """groupcheck's own consumer, seed 51: a Heartbeat sent while its connection was held (a
    silence, then a delayed answer) was read 300 ms after the UNKNOWN_MEMBER_ID answer, right after
    the answers to the requests queued before it; it was sent seconds before it was told."""
    hb = {"generation_id": 1, "member_id": "m1"}
    w = joined().call(3000, "c0", "Heartbeat", hb, {"error_code": 25}, at=5000)
    w.call(5001, "c0", "OffsetCommit", hb, error=25).call(5300, "c0", "Heartbeat", hb, {"error_code": 25})
    w.call(5400, "c0", "JoinGroup", {"member_id": ""}, {"error_code": 79, "member_id": "m2", "generation_id": -1})
    assert rules(w.outcome()) == []
    # the same Heartbeat on a connection that had been idle: sent after the answer, the client's fault
    w = joined().call(3000, "c0", "Heartbeat", hb, {"error_code": 25}, at=5000)
    w.call(5300, "c0", "Heartbeat", hb, {"error_code": 25}, connection="idle")
    assert rules(w.outcome()) == ["heartbeat-carries-current-generation"]


def test_an_answer_on_a_connection_the_client_closed_at_once_may_never_have_been_read():
    """librdkafka, after a partition: UNKNOWN_MEMBER_ID written 2 ms before it closed the
    connection; its later commit (a retry) with the same generation is not held against it."""
    hb = {"generation_id": 1, "member_id": "m1"}
    w = joined().call(3000, "c0", "Heartbeat", hb, {"error_code": 25}, at=3000).close(3002, "c0")
    w.call(4000, "c0", "OffsetCommit", hb, error=25, connection="later")
    assert "commit-carries-current-generation" not in rules(w.outcome())
    w = joined().call(3000, "c0", "Heartbeat", hb, {"error_code": 25}, at=3000).close(3000 + WINDOW_MS + 50, "c0")
    w.call(4000, "c0", "OffsetCommit", hb, error=25, connection="later")
    assert "commit-carries-current-generation" in rules(w.outcome())


def static_member(join_version=5, instance="instance-0"):
    """c0, a static member, joins generation 1 as m1 (JoinGroup *join_version*) and syncs."""
    w = Wire().call(0, "c0", "JoinGroup", {"member_id": "", "group_instance_id": instance},
                    {"error_code": 0, "generation_id": 1, "member_id": "m1"}, version=join_version)
    return w.call(10, "c0", "SyncGroup", {"generation_id": 1, "member_id": "m1", "group_instance_id": instance},
                  {"error_code": 0, "assignment": {"partitions": [["t", 0], ["t", 1]]}}, version=3)


ASSIGNED = {"c0": ({"event": "assigned", "partitions": [0, 1], "wall_ms": ZERO + 12},)}


def test_a_static_member_carrying_its_instance_id_and_not_leaving_breaks_no_rule():
    w = static_member().call(500, "c0", "Heartbeat", {"generation_id": 1, "member_id": "m1",
                                                      "group_instance_id": "instance-0"}, {"error_code": 0}, version=4)
    w.call(700, "c0", "OffsetCommit", {"generation_id": 1, "member_id": "m1", "group_instance_id": "instance-0"},
           error=0, version=8)
    assert rules(w.outcome(ASSIGNED, static=1)) == []


@pytest.mark.parametrize("api, version", [("Heartbeat", 2), ("OffsetCommit", 6)])
def test_a_static_member_sends_no_request_older_than_its_instance_id_field(api, version):
    """Kafka's request builders throw UnsupportedVersionException rather than drop the instance id."""
    w = static_member().call(500, "c0", api, {"generation_id": 1, "member_id": "m1"}, error=0, version=version)
    findings = judge(w.outcome(ASSIGNED, static=1))
    assert [f.rule for f in findings] == ["static-member-carries-instance-id"]
    assert f"{api} v{version}" in findings[0].summary


def test_a_static_member_below_join_group_v5_joined_as_a_dynamic_one():
    w = Wire().call(0, "c0", "JoinGroup", {"member_id": ""}, {"error_code": 0, "generation_id": 1, "member_id": "m1"},
                    version=4)
    w.sync(10, "c0", "m1", 1, [0, 1])
    assert rules(w.outcome(ASSIGNED, static=1)) == ["static-member-carries-instance-id"]
    assert rules(w.outcome(ASSIGNED, static=0)) == []  # the same member, dynamic: fine


@pytest.mark.parametrize("carried", [None, "instance-1"])
def test_a_static_members_heartbeat_must_carry_its_own_instance_id(carried):
    w = static_member().call(500, "c0", "Heartbeat", {"generation_id": 1, "member_id": "m1",
                                                      "group_instance_id": carried}, {"error_code": 0}, version=3)
    findings = judge(w.outcome(ASSIGNED, static=1))
    assert [f.rule for f in findings] == ["static-member-carries-instance-id"]
    assert "Heartbeat v3" in findings[0].summary


def test_a_static_member_sends_no_leave_group_and_a_dynamic_one_may():
    w = static_member().call(500, "c0", "LeaveGroup", {"members": [{"member_id": "m1", "group_instance_id": "instance-0"}]},
                             {"error_code": 0}, version=4)
    assert rules(w.outcome(ASSIGNED, static=1)) == ["static-member-does-not-leave"]
    w = joined().call(500, "c0", "LeaveGroup", {"member_id": "m1"}, {"error_code": 0})
    assert rules(w.outcome(ASSIGNED, static=0)) == []
