"""The judge of KIP-848 consumers (properties/clients/judge_kip848.py) on hand-written traces: each
rule fires on the behaviour it forbids and stays quiet on the Kafka behaviour next to it."""

from tests.helpers.client_traces import Wire, ZERO, rules


def member(w=None):
    """c0 joins at epoch 0, is given partitions 0 and 1 at epoch 1, and acknowledges them."""
    w = (w or Wire()).heartbeat(0, "c0", 0, owned=[], answer_epoch=1, assignment=[0, 1])
    return w.heartbeat(50, "c0", 1, owned=[0, 1], answer_epoch=1)


def outcome(w, events=None, **kw):
    return w.outcome(events or {"c0": ({"event": "assigned", "partitions": [0, 1], "incremental": True,
                                        "wall_ms": ZERO + 40},)}, protocol="consumer", **kw)


def closed(w, t):
    return w.heartbeat(t, "c0", -1, owned=[], answer_epoch=-1)


def test_a_clean_member_breaks_no_rule():
    w = member().heartbeat(550, "c0", 1, answer_epoch=1)
    assert rules(outcome(closed(w, 900), stop=880)) == []


def test_a_second_heartbeat_in_flight_is_one_too_many():
    w = member().heartbeat(500, "c0", 1, connection="a").heartbeat(600, "c0", 1, answer_epoch=1, connection="b")
    assert "kip848-one-heartbeat-in-flight" in rules(outcome(w))


def test_a_leave_and_the_rejoin_after_it_may_go_while_a_heartbeat_is_in_flight():
    # Kafka 4.1's AbstractHeartbeatRequestManager.poll: the poll timer ran out, so the leave is sent
    # whatever is in flight and heartbeatRequestState.reset() clears requestInFlight after it
    w = member().heartbeat(500, "c0", 1, connection="a")  # never answered before what follows
    w = w.heartbeat(600, "c0", -1, owned=[], answer_epoch=-1).heartbeat(650, "c0", 0, owned=[], answer_epoch=3,
                                                                          assignment=[0, 1])
    assert "kip848-one-heartbeat-in-flight" not in rules(outcome(w))
    w = member().heartbeat(500, "c0", 1, connection="a").heartbeat(600, "c0", 1, answer_epoch=1, connection="b")
    w = w.heartbeat(700, "c0", -1, owned=[], answer_epoch=-1)
    assert "kip848-one-heartbeat-in-flight" in rules(outcome(w))  # the leave excuses only itself and the next


def test_a_heartbeat_must_carry_the_epoch_of_the_latest_answer():
    w = member().heartbeat(500, "c0", 1, answer_epoch=2, assignment=[0]).heartbeat(1000, "c0", 1)
    assert "kip848-heartbeat-carries-member-epoch" in rules(outcome(w))
    w = member().heartbeat(500, "c0", 1, answer_epoch=2, assignment=[0]).heartbeat(600, "c0", 2, owned=[0],
                                                                                    answer_epoch=2)
    assert "kip848-heartbeat-carries-member-epoch" not in rules(outcome(w, events={"c0": (
        {"event": "assigned", "partitions": [0, 1], "incremental": True, "wall_ms": ZERO + 40},
        {"event": "revoked", "partitions": [1], "wall_ms": ZERO + 550})}))


def test_a_rejoin_at_epoch_0_needs_a_fencing_answer_or_a_leave_first():
    w = member().heartbeat(500, "c0", 0, owned=[], answer_epoch=2)
    assert "kip848-heartbeat-carries-member-epoch" in rules(outcome(w))
    w = member().heartbeat(500, "c0", 1, error=110).heartbeat(510, "c0", 0, owned=[], error=110)
    w.heartbeat(520, "c0", 0, owned=[], answer_epoch=3)  # Kafka 4.1 fences the rejoin until the session ends
    assert "kip848-heartbeat-carries-member-epoch" not in rules(outcome(w))
    w = member().heartbeat(500, "c0", 1, error=25).heartbeat(510, "c0", 1, full=True, owned=[0, 1])
    assert "kip848-heartbeat-carries-member-epoch" in rules(outcome(w))  # kept its fenced epoch


def test_the_member_id_is_kept_through_a_rejoin():
    w = member().heartbeat(500, "c0", 1, error=25).heartbeat(510, "c0", 0, owned=[], answer_epoch=3, member="m2")
    assert "kip848-member-id-kept" in rules(outcome(w))


def test_a_join_and_the_heartbeat_after_a_failure_send_every_field():
    w = member().heartbeat(500, "c0", 1, error=15).heartbeat(600, "c0", 1, answer_epoch=1)  # not full
    assert "kip848-full-heartbeat-after-join-or-failure" in rules(outcome(w))
    w = member().heartbeat(500, "c0", 1, error=15).heartbeat(600, "c0", 1, full=True, owned=[0, 1], answer_epoch=1)
    assert "kip848-full-heartbeat-after-join-or-failure" not in rules(outcome(w))
    w = Wire().heartbeat(0, "c0", 0, owned=[0], answer_epoch=1)  # a join reporting owned partitions
    assert "kip848-full-heartbeat-after-join-or-failure" in rules(outcome(w))


def test_owned_partitions_must_have_been_assigned_since_the_join():
    w = member().heartbeat(500, "c0", 1, owned=[0, 1, 2], answer_epoch=1)
    assert "kip848-owned-were-assigned" in rules(outcome(w))


def test_a_partition_stops_being_reported_only_after_its_revocation_callback():
    w = member().heartbeat(500, "c0", 1, answer_epoch=2, assignment=[0]).heartbeat(600, "c0", 2, owned=[0],
                                                                                    answer_epoch=2)
    assert "kip848-revoked-before-acknowledged" in rules(outcome(w))  # no onPartitionsRevoked([1])
    late = {"c0": ({"event": "assigned", "partitions": [0, 1], "incremental": True, "wall_ms": ZERO + 40},
                   {"event": "revoked", "partitions": [1], "wall_ms": ZERO + 700})}
    assert "kip848-revoked-before-acknowledged" in rules(outcome(w, events=late))


def test_a_member_in_the_group_leaves_when_closed():
    w = member().heartbeat(550, "c0", 1, answer_epoch=1)
    assert "kip848-leaves-on-close" in rules(outcome(w, stop=800))
    assert "kip848-leaves-on-close" not in rules(outcome(closed(w, 900), stop=880))


def test_a_member_in_the_group_never_goes_a_session_without_a_heartbeat():
    w = member().heartbeat(7000, "c0", 1, answer_epoch=1)
    assert "kip848-heartbeats-continue" in rules(outcome(closed(w, 7100), stop=7050))
    w = member().heartbeat(5000, "c0", 1, answer_epoch=1)
    assert "kip848-heartbeats-continue" not in rules(outcome(closed(w, 5100), stop=5050))


# -- static members (--static N: c0 is static, instance id instance-0) --------------------------------

def static_member(w=None):
    w = (w or Wire()).heartbeat(0, "c0", 0, owned=[], answer_epoch=1, assignment=[0, 1], instance="instance-0")
    return w.heartbeat(50, "c0", 1, owned=[0, 1], answer_epoch=1, instance="instance-0")


def test_a_static_member_joins_and_leaves_at_minus_2_with_its_instance_id():
    def beating():
        return static_member().heartbeat(550, "c0", 1, answer_epoch=1, instance="instance-0")

    left = beating().heartbeat(900, "c0", -2, owned=[], answer_epoch=-2, instance="instance-0")
    assert rules(outcome(left, stop=880, static=1)) == []
    partial = static_member().heartbeat(550, "c0", 1, answer_epoch=1)  # null: unchanged (librdkafka does so)
    assert "kip848-static-member-carries-instance-id" not in rules(outcome(partial, static=1))
    other = static_member().heartbeat(550, "c0", 1, answer_epoch=1, instance="instance-9")
    assert "kip848-static-member-carries-instance-id" in rules(outcome(other, static=1))
    bare_leave = beating().heartbeat(900, "c0", -2, owned=[], answer_epoch=-2)  # INVALID_REQUEST from Kafka
    assert "kip848-static-member-carries-instance-id" in rules(outcome(bare_leave, stop=880, static=1))
    bare_join = Wire().heartbeat(0, "c0", 0, owned=[], answer_epoch=1, assignment=[0, 1])
    assert "kip848-static-member-carries-instance-id" in rules(outcome(bare_join, static=1))
    # a leave at -1 is a dynamic member's: a static consumer closed in the group sends -2
    dynamic_leave = beating().heartbeat(900, "c0", -1, owned=[], answer_epoch=-1, instance="instance-0")
    assert "kip848-leaves-on-close" in rules(outcome(dynamic_leave, stop=880, static=1))
    # and a dynamic consumer carries none
    assert "kip848-static-member-carries-instance-id" in rules(outcome(static_member()))


def test_a_fatal_answer_ends_the_membership_and_nothing_may_follow_it():
    w = static_member().heartbeat(500, "c0", 1, error=25, instance="instance-0")  # fenced: it rejoins
    w = w.heartbeat(510, "c0", 0, owned=[], error=111, instance="instance-0")  # refused its own instance id
    refused = rules(outcome(w, stop=9000, static=1))  # no leave on close, no heartbeat for 8 s: both right
    assert refused == [], refused
    w.heartbeat(700, "c0", 0, owned=[], answer_epoch=3, instance="instance-0")
    assert "kip848-heartbeat-carries-member-epoch" in rules(outcome(w, static=1))  # a FATAL member sent again
