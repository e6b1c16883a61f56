"""Coverage of the coordinator's decisions (properties/decisions.py): what the judge
records for a step answered as the model does, and how a run's decisions lay over the catalogue."""

from impl import protocol as P
from properties import decisions
from properties.conform.judge import canonical_observed
from properties.conform.members import VirtualMember
from tests.helpers.judges import judge as _judge


def _member_id_required():
    """A member's first JoinGroup, answered MEMBER_ID_REQUIRED as the model does: (the member, the
    judge that accepted it, the request)."""
    member = VirtualMember(0, "g", ("range",), 6)
    judge = _judge()
    join = member.request("join", "same")
    required = canonical_observed("JoinGroup", 9, P.JoinGroupResponseData(
        error_code=79, generation_id=-1, protocol_type="consumer", protocol_name=None, leader="", member_id="b-1",
        members=[]))
    assert judge.step(0, "JoinGroup", 9, join, (0, 1), 0, member.client_id, [((0, 1), required)]) is None
    return member, judge, join


def test_the_judge_records_the_decision_of_every_step_it_accepts_and_none_of_one_it_does_not():
    member, judge, join = _member_id_required()
    assert judge.decisions == {("JoinGroup", "no group", "MEMBER_ID_REQUIRED")}
    short = member.request("join", "short-session")  # INVALID_SESSION_TIMEOUT is what the model answers
    wrong = canonical_observed("JoinGroup", 9, P.JoinGroupResponseData(
        error_code=79, generation_id=-1, protocol_type="consumer", protocol_name=None, leader="", member_id="b-2",
        members=[]))
    assert judge.step(1, "JoinGroup", 9, short, (0, 1), 10, member.client_id, [((0, 1), wrong)]) is not None
    assert ("JoinGroup", "Empty", "INVALID_SESSION_TIMEOUT") not in judge.decisions


def test_a_timer_that_fires_while_the_broker_answers_as_the_model_does_is_a_decision_reached():
    """A member id handed out with MEMBER_ID_REQUIRED and never used: a wait past its session
    timeout lets the coordinator forget it (onExpireHeartbeat, isPending), which the judge
    records as the timer decision ``pending member expiry``; a wait short of it records nothing."""
    member, judge, join = _member_id_required()
    session = join.session_timeout_ms
    assert judge.step(1, None, 0, None, None, 10, "", [], end=session - 1) is None
    assert not any(api == "timers" for api, _, _ in judge.decisions)
    assert judge.step(2, None, 0, None, None, session - 1, "", [], end=session + 1) is None
    assert ("timers", "Empty", "pending member expiry") in judge.decisions


def test_the_first_join_completing_after_the_initial_delay_is_not_a_rebalance_timeout():
    """With group.initial.rebalance.delay.ms 0 the first join of an Empty group completes on the
    InitialDelayedJoin at once: the decision ``initial rebalance delay`` (timers off reach it too),
    never ``rebalance timeout``."""
    member, judge, join = _member_id_required()
    rejoin = member.request("join", "same")
    rejoin.member_id = "b-1"
    answer = canonical_observed("JoinGroup", 9, P.JoinGroupResponseData(
        error_code=0, generation_id=1, protocol_type="consumer", protocol_name="range", leader="b-1",
        member_id="b-1", members=[P.JoinGroupResponseMember(member_id="b-1", group_instance_id=None,
                                                            metadata=rejoin.protocols[0].metadata)]))
    assert judge.step(1, "JoinGroup", 9, rejoin, (0, 1), 5, member.client_id, [((0, 1), answer)]) is None
    fired = {kind for api, _, kind in judge.decisions if api == "timers"}
    assert fired == {"initial rebalance delay"}, judge.decisions


def test_coverage_lays_the_decisions_reached_over_the_catalogue():
    reached = {("Heartbeat", "Stable", "NONE"): 3, ("Heartbeat", "CompletingRebalance", "NONE"): 1,
               ("Heartbeat", "Stable", "SOMETHING_NEW"): 1}
    schedules = {("Heartbeat", "NONE"): 3, ("Heartbeat", "SOMETHING_NEW"): 1}
    rows = decisions.coverage(reached, schedules, versions={"SyncGroup": 3})
    by = {(r["api"], r["answer"]): r for r in rows}
    assert by[("Heartbeat", "NONE")]["schedules"] == 3
    assert by[("Heartbeat", "NONE")]["states"] == {"CompletingRebalance": 1, "Stable": 3}
    assert by[("Heartbeat", "REBALANCE_IN_PROGRESS")]["schedules"] == 0
    assert by[("Heartbeat", "REBALANCE_IN_PROGRESS")]["unreachable"] is None  # reachable, not reached
    assert by[("Heartbeat", "FENCED_INSTANCE_ID")]["unreachable"] == "needs --static N"
    assert by[("timers", "session expiry")]["unreachable"] == "needs --timers on"
    on = {(r["api"], r["answer"]): r for r in decisions.coverage(reached, schedules, timers=True)}
    assert on[("timers", "session expiry")]["unreachable"] is None
    assert "v3 in use" in by[("SyncGroup", "INCONSISTENT_GROUP_PROTOCOL")]["unreachable"]
    assert by[("Heartbeat", "SOMETHING_NEW")]["listed"] is False  # an answer the catalogue does not name
    headline = decisions.headline(rows)
    assert headline.startswith("1 of ") and "not reachable by these schedules" in headline


def test_every_corner_variant_of_a_schedule_is_drawn():
    from properties.conform.schedule import MIX, generate

    corners = {(a, v) for a, v, _ in MIX if v in ("short-session", "long-session", "other-type", "no-protocols",
                                                   "foreign", "unknown", "wrong-name", "big-metadata", "ahead")}
    drawn = {(s.action, s.variant) for seed in range(200) for s in generate(seed).steps}
    assert corners and corners <= drawn
    assert any(generate(seed).steps[0].action == "describe" for seed in range(8))  # before the group exists
    from properties.conform.schedule import BEFORE_GROUP
    firsts = {(generate(seed).steps[0].action, generate(seed).steps[0].variant) for seed in range(1, 200, 4)}
    assert firsts == set(BEFORE_GROUP)  # every request to a group nobody joined yet
