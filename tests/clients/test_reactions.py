"""The client judge's error reactions come from the model's own client (model/member.py): the table
matches Kafka's response handlers, and a model that changes its mind changes the judge's verdict."""

from model.errors import Errors
from properties.clients.judge import judge
from properties.clients.reactions import MODEL, Reactions, reaction
from tests.helpers.client_traces import Wire, joined


def test_the_model_rejoins_resets_and_rediscovers_as_kafkas_handlers_do():
    # HeartbeatResponseHandler: UNKNOWN_MEMBER_ID resets the member id and the generation;
    # ILLEGAL_GENERATION the generation only (KAFKA-13419); REBALANCE_IN_PROGRESS asks to rejoin
    unknown = reaction("Heartbeat", Errors.UNKNOWN_MEMBER_ID)
    assert unknown.rejoin and unknown.resets_generation and unknown.resets_member_id and not unknown.rediscover
    illegal = reaction("Heartbeat", Errors.ILLEGAL_GENERATION)
    assert illegal.resets_generation and not illegal.resets_member_id
    rebalance = reaction("Heartbeat", Errors.REBALANCE_IN_PROGRESS)
    assert rebalance.rejoin and not rebalance.resets_generation
    # markCoordinatorUnknown on NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE, for every group request
    for api in ("Heartbeat", "OffsetCommit", "SyncGroup", "JoinGroup"):
        assert set(MODEL.errors(api, "rediscover")) == {Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE}, api
    # a SyncGroup's failure fails the join future: joinGroupIfNeeded rejoins (after the lookup)
    assert reaction("SyncGroup", Errors.NOT_COORDINATOR).rejoin
    # JoinGroupResponseHandler has no ILLEGAL_GENERATION branch: "Unexpected error in join group response"
    assert reaction("JoinGroup", Errors.ILLEGAL_GENERATION).fatal


def test_an_answer_to_an_older_generation_resets_only_a_commit_outside_a_rebalance():
    # generationUnchanged(): a Heartbeat's or SyncGroup's error for an older generation is ignored
    for api in ("Heartbeat", "SyncGroup"):
        stale = reaction(api, Errors.UNKNOWN_MEMBER_ID, current=False)
        assert not stale.resets_member_id and not stale.resets_generation, api
    # OffsetCommitResponseHandler resets unless the generation changed *and* the member is rebalancing
    assert reaction("OffsetCommit", Errors.UNKNOWN_MEMBER_ID, current=False).resets_member_id


def test_a_broken_model_variant_changes_the_table():
    broken = Reactions({"rebalance_resets_member_id"})
    assert Errors.REBALANCE_IN_PROGRESS in broken.errors("Heartbeat", "resets_member_id")
    assert Errors.REBALANCE_IN_PROGRESS not in MODEL.errors("Heartbeat", "resets_member_id")
    stale = Reactions({"stale_response_resets"})
    assert Errors.UNKNOWN_MEMBER_ID in stale.errors("Heartbeat", "resets_member_id", current=False)
    assert Errors.UNKNOWN_MEMBER_ID not in MODEL.errors("Heartbeat", "resets_member_id", current=False)


def test_the_judge_holds_a_client_to_the_model_it_is_given():
    """A member answered REBALANCE_IN_PROGRESS rejoins without its member id: a finding against the
    model, none against a model whose heartbeat handler resets the member id on it."""
    w = joined().call(500, "c0", "Heartbeat", {"generation_id": 1, "member_id": "m1"}, {"error_code": 27})
    w.call(700, "c0", "JoinGroup", {"member_id": ""}, {"error_code": 79, "member_id": "m2", "generation_id": -1})
    assert [f.rule for f in judge(w.outcome())] == ["member-id-kept-until-told"]
    assert judge(w.outcome(), Reactions({"rebalance_resets_member_id"})) == []


def test_a_member_id_dropped_on_an_older_generations_answer_is_a_finding():
    """The Heartbeat of generation 1 is answered UNKNOWN_MEMBER_ID after the JoinGroup answer gave the
    member generation 2 (on another connection): generationUnchanged() is false, the answer is
    ignored, and the member id stays (the stale_heartbeat_resets mutant's bug)."""
    w = joined().call(900, "c0", "Heartbeat", {"generation_id": 1, "member_id": "m1"}, connection="heartbeats")
    heartbeat = w.lines[-1]  # answered below, after the JoinGroup's answer
    w.join(1000, "c0", "m1", 2, sent_member="m1")
    w.lines.append({"time_ms": w.lines[0]["time_ms"] + 1500, "direction": "response", "connection": "heartbeats",
                    "api": "Heartbeat", "correlation_id": heartbeat["correlation_id"], "client_id": "c0",
                    "body": {"error_code": 25}})
    w.call(1800, "c0", "JoinGroup", {"member_id": ""}, {"error_code": 79, "member_id": "m3", "generation_id": -1})
    assert "member-id-kept-until-told" in [f.rule for f in judge(w.outcome())]
    assert "member-id-kept-until-told" not in [f.rule for f in judge(w.outcome(), Reactions({"stale_response_resets"}))]
