"""The judge's pieces without a broker: aliasing, canonical answers, choice enumeration,
signatures, and whole steps judged against hand-written broker answers."""

import pytest

from impl import protocol as P
from model.broker import BrokerState, handle_group_request, version_error
from model.config import Config
from model.errors import Errors
from model.messages import SyncGroupRequest
from properties.conform.judge import (UNBOUND, Bag, Id, Judge, all_choices, canonical_observed, match, signature)
from properties.conform.members import TOPIC, VirtualMember
from properties.conform.schedule import Schedule, Step, generate
from tests.helpers.judges import judge as _judge


def test_ids_bind_one_to_one_and_stay_bound():
    state = match((Id("b1"), Id("b2")), (Id("m1"), Id("m2")), {}, {})
    assert state == ({"b1": "m1", "b2": "m2"}, {"m1": "b1", "m2": "b2"})
    assert match(Id("b1"), Id("m2"), *state) is None  # b1 is m1 already
    assert match(Id("b3"), Id("m1"), *state) is None  # m1 is b1 already
    assert match(Id("zzz"), Id(UNBOUND + "zzz"), *state) == state  # a made-up id echoes itself
    assert match(Id(""), Id("m9"), *state) is None


def test_bags_match_in_any_order_consistently_with_the_aliasing():
    to_model = {"b1": "m1"}
    to_broker = {"m1": "b1"}
    observed = Bag(((Id("b2"), "x"), (Id("b1"), "y")))
    assert match(observed, Bag(((Id("m1"), "y"), (Id("m2"), "x"))), to_model, to_broker)[0] == {"b1": "m1", "b2": "m2"}
    assert match(observed, Bag(((Id("m1"), "x"), (Id("m2"), "y"))), to_model, to_broker) is None


def test_all_choices_visits_every_resolution_once():
    def run(choose):
        return (choose("leader", ("a", "b", "c")), choose("protocol", ("x", "y")))
    assert sorted(all_choices(run)) == sorted((a, p) for a in "abc" for p in "xy")


def test_syncgroup_v5_without_protocol_name_is_refused_before_the_coordinator():
    # KafkaApis.handleSyncGroupRequest: areMandatoryProtocolTypeAndNamePresent (KIP-559)
    request = SyncGroupRequest("g", 1, "m", "consumer", None)
    assert version_error(request, 5) == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert version_error(request, 4) == Errors.NONE
    assert version_error(request, None) == Errors.NONE  # the simulated world: no version
    out = handle_group_request(BrokerState(), True, request, "r", 0, Config(), None, 0, 5)
    assert out.replies[0][1].error == Errors.INCONSISTENT_GROUP_PROTOCOL


def test_a_commit_at_a_generation_to_no_group_is_group_id_not_found_from_v9_on_the_java_coordinator():
    """Found against Kafka 4.1.2 (2026-11-29, a commit at generation 1 before any member joined):
    OffsetMetadataManager.validateOffsetCommit answers GROUP_ID_NOT_FOUND from OffsetCommit v9 on
    (KIP-848), ILLEGAL_GENERATION before; the Scala GroupCoordinator.handleCommitOffsets always
    ILLEGAL_GENERATION (and a generation of -1 creates a simple group on both)."""
    from model.messages import OffsetCommitRequest

    def answer(new, version, generation=1):
        request = OffsetCommitRequest("g", generation, "", ((0, 5),))
        out = handle_group_request(BrokerState(), True, request, "r", 0, Config(new_group_coordinator=new), None, 0,
                                   version)
        return out.replies[0][1].errors[0][1]

    assert answer(True, 9) == Errors.GROUP_ID_NOT_FOUND
    assert answer(True, 8) == Errors.ILLEGAL_GENERATION
    assert answer(False, 9) == Errors.ILLEGAL_GENERATION
    assert answer(True, 9, generation=-1) == Errors.NONE


def _join_answer(error, member_id, generation=-1, leader="", members=()):
    return canonical_observed("JoinGroup", 9, P.JoinGroupResponseData(
        error_code=error, generation_id=generation, protocol_type="consumer", protocol_name="range" if not error else None,
        leader=leader, member_id=member_id,
        members=[P.JoinGroupResponseMember(member_id=m, group_instance_id=None, metadata=meta) for m, meta in members]))


def test_a_lone_member_that_joins_twice_is_judged_and_a_wrong_generation_is_a_divergence():
    member = VirtualMember(0, "g", ("range",), 6)
    judge = _judge()
    first = member.request("join", "same")
    assert judge.step(0, "JoinGroup", 9, first, (0, 1), 0, member.client_id,
                      [((0, 1), _join_answer(79, "broker-id-1"))]) is None
    member.member_id = "broker-id-1"
    second = member.request("join", "same")
    meta = member.subscription()
    good = _join_answer(0, "broker-id-1", generation=1, leader="broker-id-1", members=[("broker-id-1", meta)])
    bad = _join_answer(0, "broker-id-1", generation=0, leader="broker-id-1", members=[("broker-id-1", meta)])
    before = list(judge.hypotheses)
    divergence = judge.step(1, "JoinGroup", 9, second, (0, 1), 10, member.client_id, [((0, 1), bad)])
    assert divergence is not None
    assert divergence.signature == "JoinGroup: answered NONE with generation_id 0 where the model allows 1"
    judge.hypotheses = before
    assert judge.step(1, "JoinGroup", 9, second, (0, 1), 10, member.client_id, [((0, 1), good)]) is None
    # an answer the model does not give at all (the broker parked the request) is a divergence too
    judge.hypotheses = before
    parked = judge.step(1, "JoinGroup", 9, second, (0, 1), 10, member.client_id, [])
    assert parked.signature == "JoinGroup: no answer where the model allows NONE"


def test_an_answer_to_a_closed_connection_is_not_expected():
    member = VirtualMember(0, "g", ("range",), 6)
    judge = _judge()
    judge.close(0, 1)
    # MEMBER_ID_REQUIRED goes to connection 1, which the member closed: nobody sees it
    assert judge.step(0, "JoinGroup", 9, member.request("join", "same"), (0, 1), 0, member.client_id, []) is None


def test_signature_names_the_errors_when_they_differ():
    got = ("Heartbeat", "REBALANCE_IN_PROGRESS")
    assert signature("Heartbeat", (got,), [(("Heartbeat", "UNKNOWN_MEMBER_ID"),)]) == \
        "Heartbeat: answered REBALANCE_IN_PROGRESS where the model allows UNKNOWN_MEMBER_ID"
    assert signature("Heartbeat", (got,), [()]) == \
        "Heartbeat: answered REBALANCE_IN_PROGRESS where the model allows no answer (parked)"


def test_schedules_are_deterministic_and_round_trip_through_json():
    a, b = generate(7), generate(7)
    assert a == b and a != generate(8)
    assert Schedule.from_json(a.to_json()) == a
    # seed 7 % 4 == 3: a DescribeGroups before the group exists, then every member joins
    assert [s.action for s in a.steps[:4]] == ["describe"] + ["join"] * 3
    assert [s.action for s in generate(8).steps[:3]] == ["join"] * 3
    with pytest.raises(ValueError, match="member 5"):
        Schedule.from_json(dict(a.to_json(), steps=[[5, "join", "same"]]))
    with pytest.raises(ValueError, match="unknown action"):
        Step(0, "dance")


def test_a_generation_offset_translates_the_brokers_numbers_both_ways():
    member = VirtualMember(0, "g", ("range",), 6)
    judge = Judge(Config(brokers=1, clients=1, partitions=6, topic=TOPIC, initial_rebalance_delay_ms=0,
                         join_group_version=3), generation_offset=-1)  # a broker that starts at 0, like Tansu
    meta = member.subscription()
    answer = canonical_observed("JoinGroup", 3, P.JoinGroupResponseData(
        error_code=0, generation_id=0, protocol_name="range", leader="b1", member_id="b1",
        members=[P.JoinGroupResponseMember(member_id="b1", group_instance_id=None, metadata=meta)]), -1)
    assert answer[2] == 1
    assert judge.step(0, "JoinGroup", 3, member.request("join", "same"), (0, 1), 0, member.client_id,
                      [((0, 1), answer)]) is None
    member.member_id, member.generation = "b1", 0  # what the member learnt: the broker's 0
    heartbeat = member.request("heartbeat", "current")
    assert judge.model_request("Heartbeat", heartbeat, {"b1": "conform-m0-00000000"}, "c").generation_id == 1
    sync_done = canonical_observed("SyncGroup", 3, P.SyncGroupResponseData(error_code=0, assignment=None))
    leader_sync = member.request("sync", "current")
    assert judge.step(1, "SyncGroup", 3, leader_sync, (0, 1), 5, member.client_id, [((0, 1), sync_done)]) is None


def test_failure_signatures_do_not_depend_on_members_or_correlation_ids():
    from properties.conform.run import Result
    schedule = generate(0)

    def sig(text):
        return Result(schedule, "g", None, text, 0, (), ()).signature()

    assert sig("undecodable SyncGroup v3 answer (to m2): wire error [malformed], correlation id 7") == \
        sig("undecodable SyncGroup v3 answer (to m0): wire error [malformed], correlation id 1") == \
        "failure: undecodable SyncGroup v3 answer"
    assert sig("the broker closed the connection (m1's connection)") == "failure: the broker closed the connection"


def test_with_a_tolerance_a_timer_near_the_window_may_or_may_not_have_fired():
    """A pending member (MEMBER_ID_REQUIRED) expires after its session timeout: near the deadline
    the broker may have removed it or not, both are allowed; well past it, it must be gone."""
    member = VirtualMember(0, "g", ("range",), 6, session_timeout_ms=2000, rebalance_timeout_ms=2000)
    config = Config(brokers=1, clients=1, partitions=6, topic=TOPIC, initial_rebalance_delay_ms=0,
                    join_group_version=9, min_session_timeout_ms=1000)
    joined = _join_answer(0, "b1", generation=1, leader="b1", members=[("b1", member.subscription())])
    unknown = _join_answer(25, "b1")

    def second_join_at(now):
        judge = Judge(config, tolerance_ms=250)
        m = VirtualMember(0, "g", ("range",), 6, session_timeout_ms=2000, rebalance_timeout_ms=2000)
        assert judge.step(0, "JoinGroup", 9, m.request("join", "same"), (0, 1), 0, m.client_id,
                          [((0, 1), _join_answer(79, "b1"))], end=5) is None
        m.member_id = "b1"
        request = m.request("join", "same")
        before = list(judge.hypotheses)
        verdicts = []
        for answer in (joined, unknown):
            judge.hypotheses = list(before)
            verdicts.append(judge.step(1, "JoinGroup", 9, request, (0, 1), now, m.client_id, [((0, 1), answer)],
                                       end=now + 5) is None)
        return verdicts  # [joined allowed, unknown allowed]

    assert second_join_at(1000) == [True, False]  # long before the deadline (2000): still pending
    assert second_join_at(2000) == [True, True]  # at the deadline, within the tolerance: either
    assert second_join_at(2600) == [False, True]  # past the deadline and the tolerance: expired


def test_describe_groups_is_judged_against_the_models_group_summary():
    """GroupMetadata.summary: an unknown group is Dead; a pending member is not a member; a
    broker that names another state diverges."""
    from properties.conform.judge import GroupSummary
    from impl.wire.apis import kio_class
    from impl.wire.build import build

    def describe(state, members=()):
        body = build(kio_class("DescribeGroups", 5, "response"), {"throttle_time": 0, "groups": [
            {"error_code": 0, "group_id": "g", "group_state": state, "protocol_type": "", "protocol_data": "",
             "members": [{"member_id": m, "group_instance_id": None, "client_id": "c", "client_host": "h",
                          "member_metadata": b"", "member_assignment": b""} for m in members],
             "authorized_operations": -2147483648}]})
        return canonical_observed("DescribeGroups", 5, body)

    assert GroupSummary.of(None) == GroupSummary("Dead", "", "", ())
    judge = _judge()
    assert judge.step(0, "DescribeGroups", 5, object(), (0, 1), 0, "c", [((0, 1), describe("Dead"))]) is None
    member = VirtualMember(0, "g", ("range",), 6)
    assert judge.step(1, "JoinGroup", 9, member.request("join", "same"), (0, 1), 1, member.client_id,
                      [((0, 1), _join_answer(79, "b1"))]) is None
    before = list(judge.hypotheses)
    assert judge.step(2, "DescribeGroups", 5, object(), (0, 1), 2, "c", [((0, 1), describe("Empty"))]) is None
    judge.hypotheses = before
    diverged = judge.step(2, "DescribeGroups", 5, object(), (0, 1), 2, "c", [((0, 1), describe("Assigning", ["b1"]))])
    assert diverged.signature == ("DescribeGroups: answered NONE with group_state 'Assigning', "
                                  "not a state of Kafka's classic groups")


def test_offset_fetch_must_return_what_was_committed():
    member = VirtualMember(0, "g", ("range",), 2)
    judge = _judge()
    commit = member.request("commit", "simple")  # generation -1, no member id: a group of its own
    committed = canonical_observed("OffsetCommit", 8, P.OffsetCommitResponseData(topics=[
        P.OffsetCommitResponseTopic(name=TOPIC, partitions=[P.OffsetCommitResponsePartition(0, 0)])]))
    assert judge.step(0, "OffsetCommit", 8, commit, (0, 1), 0, member.client_id, [((0, 1), committed)]) is None
    fetch = member.request("fetch", None)

    def fetched(offset0):
        return canonical_observed("OffsetFetch", 7, P.OffsetFetchResponseData(topics=[P.OffsetFetchResponseTopic(
            name=TOPIC, partitions=[P.OffsetFetchResponsePartition(0, offset0), P.OffsetFetchResponsePartition(1, -1)])]))

    before = list(judge.hypotheses)
    lost = judge.step(1, "OffsetFetch", 7, fetch, (0, 1), 1, member.client_id, [((0, 1), fetched(-1))])
    assert lost is not None and lost.signature == "OffsetFetch: answered NONE with a committed offset missing"
    judge.hypotheses = before
    assert judge.step(1, "OffsetFetch", 7, fetch, (0, 1), 1, member.client_id, [((0, 1), fetched(1))]) is None


def test_a_commit_whose_metadata_is_too_long_is_judged_partition_by_partition():
    """The judge measures each partition's metadata against Kafka's offset.metadata.max.bytes: a
    broker must refuse the long one OFFSET_METADATA_TOO_LARGE and commit the other."""
    member = VirtualMember(0, "g", ("range",), 2)
    judge = _judge()
    commit = member.request("commit", "simple")
    commit.topics[0].partitions = [P.OffsetCommitRequestPartition(0, 1, "m" * 4097),
                                   P.OffsetCommitRequestPartition(1, 1, "m" * 4096)]
    assert judge.model_request("OffsetCommit", commit, {}, member.client_id).oversized == (0,)

    def answered(error0, error1):
        return canonical_observed("OffsetCommit", 8, P.OffsetCommitResponseData(topics=[
            P.OffsetCommitResponseTopic(name=TOPIC, partitions=[P.OffsetCommitResponsePartition(0, error0),
                                                                P.OffsetCommitResponsePartition(1, error1)])]))

    before = list(judge.hypotheses)
    accepted = judge.step(0, "OffsetCommit", 8, commit, (0, 1), 0, member.client_id, [((0, 1), answered(0, 0))])
    assert accepted is not None  # a broker without the limit
    judge.hypotheses = before
    assert judge.step(0, "OffsetCommit", 8, commit, (0, 1), 0, member.client_id, [((0, 1), answered(12, 0))]) is None


def _heartbeat_answer(error):
    return canonical_observed("Heartbeat", 4, P.HeartbeatResponseData(error_code=error))


@pytest.mark.parametrize("synced", [False, True])
def test_after_a_failover_the_group_is_what_its_last_record_rebuilds(synced):
    """A lone member joins (generation 1) and, if *synced*, syncs: the record the leader's SyncGroup
    writes (GroupCoordinator.doSyncGroup's storeGroup) is what a new coordinator loads. Without it
    the new coordinator has no group, and the member's Heartbeat is UNKNOWN_MEMBER_ID; with it the
    group is Stable and the Heartbeat is answered NONE. Either other answer diverges."""
    member = VirtualMember(0, "g", ("range",), 6)
    judge = _judge()
    join = member.request("join", "same")
    assert judge.step(0, "JoinGroup", 9, join, (0, 1), 0, member.client_id, [((0, 1), _join_answer(79, "b1"))]) is None
    member.learn("JoinGroup", P.JoinGroupResponseData(error_code=79, member_id="b1"), "same")
    join = member.request("join", "same")
    meta = member.subscription()
    joined = P.JoinGroupResponseData(error_code=0, generation_id=1, protocol_type="consumer", protocol_name="range",
                                     leader="b1", member_id="b1",
                                     members=[P.JoinGroupResponseMember(member_id="b1", group_instance_id=None,
                                                                        metadata=meta)])
    assert judge.step(1, "JoinGroup", 9, join, (0, 1), 1, member.client_id,
                      [((0, 1), canonical_observed("JoinGroup", 9, joined))]) is None
    member.learn("JoinGroup", joined, "same")
    if synced:
        sync = member.request("sync", "current")
        answer = canonical_observed("SyncGroup", 5, P.SyncGroupResponseData(
            error_code=0, protocol_type="consumer", protocol_name="range",
            assignment=P.Assignment([P.TopicPartition(TOPIC, p) for p in range(6)])))
        assert judge.step(2, "SyncGroup", 5, sync, (0, 1), 2, member.client_id, [((0, 1), answer)]) is None
    judge.close(0, 1)
    judge.failover(3, "g")
    heartbeat = member.request("heartbeat", "current")
    before = list(judge.hypotheses)
    expected, other = (Errors.NONE, Errors.UNKNOWN_MEMBER_ID) if synced else (Errors.UNKNOWN_MEMBER_ID, Errors.NONE)
    assert judge.step(3, "Heartbeat", 4, heartbeat, (0, 2), 4, member.client_id,
                      [((0, 2), _heartbeat_answer(expected))]) is None
    judge.hypotheses = before
    assert judge.step(3, "Heartbeat", 4, heartbeat, (0, 2), 4, member.client_id,
                      [((0, 2), _heartbeat_answer(other))]) is not None


def test_a_failover_step_is_drawn_once_and_leaves_the_other_draws_alone():
    plain, with_failover = generate(12), generate(12, failover=True)
    failovers = [s for s in with_failover.steps if s.action == "failover"]
    assert len(failovers) == 1 and failovers[0].describe() == "failover (the coordinator's node killed)"
    assert tuple(s for s in with_failover.steps if s.action != "failover") == plain.steps
    assert Schedule.from_json(with_failover.to_json()) == with_failover
    assert [s.action for s in with_failover.steps[:3]] == ["join"] * 3  # never before the joins


def test_from_describe_groups_v6_an_unknown_group_is_group_id_not_found():
    """KIP-1043, 4.1.2 GroupMetadataManager.describeGroups: ``requestVersion() >= 6`` answers an
    unknown group GROUP_ID_NOT_FOUND (state Dead), v5 and older NONE with state Dead."""
    from impl.wire.apis import kio_class
    from impl.wire.build import build

    def described(version, error, state="Dead"):
        body = build(kio_class("DescribeGroups", version, "response"), {"throttle_time": 0, "groups": [
            {"error_code": error, "group_id": "g", "group_state": state, "protocol_type": "", "protocol_data": "",
             "members": [], "authorized_operations": -2147483648, **({"error_message": None} if version >= 6 else {})}]})
        return canonical_observed("DescribeGroups", version, body)

    for version, right, wrong in ((6, described(6, 69), described(6, 0)), (5, described(5, 0), described(5, 69))):
        judge = _judge()
        before = list(judge.hypotheses)
        assert judge.step(0, "DescribeGroups", version, object(), (0, 1), 0, "c", [((0, 1), right)]) is None
        judge.hypotheses = before
        assert judge.step(0, "DescribeGroups", version, object(), (0, 1), 0, "c", [((0, 1), wrong)]) is not None


def _heartbeat(member, generation):
    return P.HeartbeatRequestData(group_id="g", generation_id=generation, member_id=member.member_id,
                                  group_instance_id=None)


def _joined_with_generation(judge, member, generation):
    """The member joins; the broker completes the join with *generation* (Kafka's first is 1)."""
    first = member.request("join", "same")
    judge.step(0, "JoinGroup", 9, first, (0, 1), 0, member.client_id, [((0, 1), _join_answer(79, "broker-id-1"))])
    member.member_id = "broker-id-1"
    second = member.request("join", "same")
    answer = _join_answer(0, "broker-id-1", generation=generation, leader="broker-id-1",
                          members=[("broker-id-1", member.subscription())])
    return judge.step(1, "JoinGroup", 9, second, (0, 1), 10, member.client_id, [((0, 1), answer)])


def test_after_a_divergence_the_judge_adopts_the_brokers_generation_and_goes_on_judging():
    member = VirtualMember(0, "g", ("range",), 6)
    judge = _judge()
    first = _joined_with_generation(judge, member, 0)  # numbered from 0: a divergence
    assert first is not None and judge.divergences == [first]
    assert judge.hypotheses and all(h.group.generation == 0 for h in judge.hypotheses)
    assert all(dict(h.aliases).get("broker-id-1") for h in judge.hypotheses)  # the broker's id is bound
    # the member's heartbeat with the broker's generation is judged from the adopted state: fine ...
    assert judge.step(2, "Heartbeat", 4, _heartbeat(member, 0), (0, 1), 20, member.client_id,
                      [((0, 1), _heartbeat_answer(0))]) is None
    # ... and a later misbehaviour is still caught: a stale generation accepted
    later = judge.step(3, "Heartbeat", 4, _heartbeat(member, 7), (0, 1), 30, member.client_id,
                       [((0, 1), _heartbeat_answer(0))])
    assert later is not None and later.signature == "Heartbeat: answered NONE where the model allows ILLEGAL_GENERATION"
    assert judge.divergences == [first, later]


def test_without_adoption_every_later_step_would_diverge_too():
    """The mutant of adopt(): keeping the model's own generation makes the member's next, correct
    heartbeat a divergence as well -- the noise judging past a divergence must not produce."""
    from properties.conform import judge as judge_module

    member = VirtualMember(0, "g", ("range",), 6)
    judge = _judge()
    original = judge_module._adopt_generation
    judge_module._adopt_generation = lambda group, observed, expected: group
    try:
        assert _joined_with_generation(judge, member, 0) is not None
        assert judge.step(2, "Heartbeat", 4, _heartbeat(member, 0), (0, 1), 20, member.client_id,
                          [((0, 1), _heartbeat_answer(0))]) is not None
    finally:
        judge_module._adopt_generation = original


def test_a_refused_request_is_adopted_as_skipped():
    """The broker answers an error the model does not give: the model goes on from every state
    as close to that as any other -- the request handled, and the request skipped (changing
    nothing: no group at all)."""
    member = VirtualMember(0, "g", ("range",), 6)
    judge = _judge()
    request = member.request("join", "same")
    divergence = judge.step(0, "JoinGroup", 9, request, (0, 1), 0, member.client_id,
                            [((0, 1), _join_answer(int(Errors.COORDINATOR_NOT_AVAILABLE), ""))])
    assert divergence is not None
    assert None in [h.group for h in judge.hypotheses]  # the join may not have happened
    # the member's next join is then judged as a first join again: MEMBER_ID_REQUIRED is right
    assert judge.step(1, "JoinGroup", 9, request, (0, 1), 10, member.client_id,
                      [((0, 1), _join_answer(79, "broker-id-1"))]) is None


def test_a_cut_request_may_have_been_read_or_not():
    """A JoinGroup whose connection was cut right after it was written: the broker may have read
    it (the member is pending, its id was handed out on a dead connection) or not (no group): both
    are kept, and neither is a divergence; without the cut, silence would be one."""
    member = VirtualMember(0, "g", ("range",), 6)
    judge = _judge()
    join = member.request("join", "same")
    judge.close(0, 1)
    assert judge.step(0, "JoinGroup", 9, join, (0, 1), 0, member.client_id, [], maybe_unread=True) is None
    groups = [h.group for h in judge.hypotheses]
    assert None in groups and any(g is not None and g.pending_members for g in groups)
    assert judge.decisions == set()  # read or not: no decision counted
    # the same silence on an open connection is a divergence (the model answers MEMBER_ID_REQUIRED)
    judge = _judge()
    assert judge.step(0, "JoinGroup", 9, join, (0, 1), 0, member.client_id, []) is not None


def test_a_group_state_kafka_never_reports_is_one_signature_whatever_the_model_expected():
    answer = ("DescribeGroups", "NONE", "Unknown", "consumer", "", Bag(()))
    for expected_state in ("PreparingRebalance", "Empty"):
        allowed = [(("DescribeGroups", "NONE", expected_state, "consumer", "", Bag(())),)]
        assert signature("DescribeGroups", (answer,), allowed) == (
            "DescribeGroups: answered NONE with group_state 'Unknown', not a state of Kafka's classic groups")
    stable = ("DescribeGroups", "NONE", "Stable", "consumer", "range", Bag(()))
    allowed = [(("DescribeGroups", "NONE", "Empty", "consumer", "", Bag(())),)]
    assert "where the model allows 'Empty'" in signature("DescribeGroups", (stable,), allowed)


def test_a_step_both_sides_park_diverges_on_the_other_members_answers():
    other = ("JoinGroup", "NONE")
    assert signature("JoinGroup", (), [(), ()]) == (
        "JoinGroup: no answer (parked, as the model allows), but the answers to the other members differ")
    assert signature("JoinGroup", (), [(other,)]) == "JoinGroup: no answer where the model allows NONE"


def test_members_metadata_of_a_group_of_another_protocol_type_is_read_as_the_model_keeps_it():
    """Kafka 4.1 answered a lone member's JoinGroup with protocol type "connect" (a corner of the
    schedules) with its metadata as bytes, which the codec does not read as a subscription; the
    judge compared the raw bytes with the subscription the model kept and called it a divergence
    (seed 51 of conform broker --launch kafka:4.1). Read as the model keeps them, they agree."""
    raw = bytes.fromhex("000300000001001267726f7570636865636b2d636f6e666f726d00000002020000000000ffffffffffff")
    member = VirtualMember(2, "g", ("range",), 6)
    kept = canonical_observed("JoinGroup", 9, P.JoinGroupResponseData(
        error_code=0, generation_id=1, protocol_type="consumer", protocol_name="range", leader="b", member_id="b",
        members=[P.JoinGroupResponseMember(member_id="b", group_instance_id=None, metadata=member.subscription())]))
    as_bytes = canonical_observed("JoinGroup", 9, P.JoinGroupResponseData(
        error_code=0, generation_id=1, protocol_type="connect", protocol_name="range", leader="b", member_id="b",
        members=[P.JoinGroupResponseMember(member_id="b", group_instance_id=None, metadata=raw)]))
    assert as_bytes == kept


@pytest.mark.parametrize("listed", [("m0", "m2", "m1"), ("m0", "m1", "m2")])
def test_new_members_first_named_by_describe_groups_are_told_apart_by_their_client_ids(listed):
    """Found against Kafka 2.0.1 (JoinGroup v3, no KIP-394): m2 and m1 join a CompletingRebalance
    group without ids and are parked; a DescribeGroups names their new ids before any answer to
    them does. Its members' metadata is empty outside Stable, so only the client ids
    (MemberSummary.clientId) say which id is whose; the judge used to bind them in whatever order
    matched first, and the completed join's answers then "differed" for one order of the two."""
    from impl.wire.apis import kio_class
    from impl.wire.build import build

    judge = Judge(Config(brokers=1, clients=3, partitions=6, topic=TOPIC, initial_rebalance_delay_ms=0,
                         join_group_version=3))
    members = [VirtualMember(i, "g", ("range",), 6) for i in range(3)]
    ids = {m.client_id: f"{m.client_id}-from-the-broker" for m in members}

    def join_answer(member, leader_members=()):
        return canonical_observed("JoinGroup", 3, P.JoinGroupResponseData(
            error_code=0, generation_id=2 if leader_members or member is not members[0] else 1, protocol_type=None,
            protocol_name="range", leader=ids["conform-m0"], member_id=ids[member.client_id],
            members=[P.JoinGroupResponseMember(member_id=ids[m.client_id], group_instance_id=None,
                                               metadata=m.subscription()) for m in leader_members]))

    m0, m1, m2 = members
    first = canonical_observed("JoinGroup", 3, P.JoinGroupResponseData(
        error_code=0, generation_id=1, protocol_type=None, protocol_name="range", leader=ids["conform-m0"],
        member_id=ids["conform-m0"], members=[P.JoinGroupResponseMember(member_id=ids["conform-m0"],
                                                                        group_instance_id=None,
                                                                        metadata=m0.subscription())]))
    assert judge.step(0, "JoinGroup", 3, m0.request("join", "same"), (0, 1), 0, m0.client_id, [((0, 1), first)]) is None
    m0.member_id = ids["conform-m0"]
    assert judge.step(1, "JoinGroup", 3, m2.request("join", "same"), (2, 1), 10, m2.client_id, []) is None  # parked
    assert judge.step(2, "JoinGroup", 3, m1.request("join", "same"), (1, 1), 20, m1.client_id, []) is None  # parked
    described = build(kio_class("DescribeGroups", 2, "response"), {"throttle_time": 0, "groups": [
        {"error_code": 0, "group_id": "g", "group_state": "PreparingRebalance", "protocol_type": "consumer",
         "protocol_data": "", "members": [{"member_id": ids[f"conform-{name}"], "client_id": f"conform-{name}",
                                           "client_host": "/127.0.0.1", "member_metadata": b"",
                                           "member_assignment": b""} for name in listed]}]})
    assert judge.step(3, "DescribeGroups", 2, object(), (0, 1), 30, m0.client_id,
                      [((0, 1), canonical_observed("DescribeGroups", 2, described))]) is None
    # the rejoin completes the join: the followers' answers arrive first, as 2.0.1's did
    rejoin = m0.request("join", "same")
    answers = [((1, 1), join_answer(m1)), ((0, 1), join_answer(m0, (m0, m2, m1))), ((2, 1), join_answer(m2))]
    assert judge.step(4, "JoinGroup", 3, rejoin, (0, 1), 40, m0.client_id, answers) is None


def test_a_leaders_member_list_binds_new_ids_only_as_the_members_own_answers_allow():
    """Found against Kafka 2.0.1 with timers (JoinGroup v3): three new members of one client, two
    of them gone without an answer, complete a join; the leader's answer, read first, lists the
    three ids with the same subscription, and the live member's own answer says which one is its.
    The judge bound the list's ids in the first order that matched and never tried another."""
    from properties.conform.judge import Hypothesis

    sub = ("range", "6")
    leader = ("JoinGroup", "NONE", Bag(((Id("b-live"), sub), (Id("b-late"), sub), (Id("b-early"), sub))))
    expected_leader = ("JoinGroup", "NONE", Bag(((Id("m-early"), sub), (Id("m-late"), sub), (Id("m-live"), sub))))
    observed_by = {(0, 1): [leader], (2, 3): [("JoinGroup", "NONE", Id("b-live"))]}
    expected_by = {(0, 1): [expected_leader], (2, 3): [("JoinGroup", "NONE", Id("m-live"))]}
    state = Judge._match_all(observed_by, expected_by, Hypothesis(None))
    assert state is not None and state[0]["b-live"] == "m-live"
    # and a member list no answer can agree with is still refused
    wrong = {(0, 1): [leader], (2, 3): [("JoinGroup", "NONE", Id("b-nobody"))]}
    assert Judge._match_all(wrong, expected_by, Hypothesis(None)) is None
