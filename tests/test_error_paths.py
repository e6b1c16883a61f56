"""The error-path matrices (properties/error_paths.py, issue 37): how answers and requests are put
into cells, what a walk fills, and how a campaign's counts are laid over the space."""

from __future__ import annotations

import attrs

from model.client import PREPARING_REBALANCE, STABLE, UNJOINED
from model.config import Config
from model.errors import Errors
from model.messages import HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest
from properties import error_paths as ep
from properties.coverage import Coverage, summarise
from properties.systems import run


def _group(state="Stable", generation=3, members=("m1", "m2"), pending=("p1",)):
    class Member:
        def __init__(self, member_id):
            self.member_id = member_id

    class Group:
        pass

    g = Group()
    g.state, g.generation = state, generation
    g.members = tuple(Member(m) for m in members)
    g.pending_members = tuple((p, 0) for p in pending)
    return g


def test_an_answer_goes_to_its_api_error_state_and_generation_cell():
    assert ep.client_key("Heartbeat", Errors.ILLEGAL_GENERATION, STABLE, True) == \
        ("Heartbeat", "ILLEGAL_GENERATION", STABLE, ep.CURRENT)
    assert ep.client_key("SyncGroup", Errors.UNKNOWN_MEMBER_ID, UNJOINED, False)[3] == ep.OLDER
    assert ep.client_key("Heartbeat", Errors.NONE, STABLE, True) is None  # not one of the matrix's errors
    assert ep.client_key("LeaveGroup", Errors.UNKNOWN_MEMBER_ID, STABLE, True) is None  # nor of its APIs


def test_a_request_goes_to_its_api_group_state_and_relation_cell():
    g = _group()
    heartbeat = lambda generation, member: HeartbeatRequest("g", generation, member, None)  # noqa: E731
    assert ep.coordinator_key(heartbeat(3, "m1"), g, True, False) == ("Heartbeat", "Stable", ep.GEN_CURRENT)
    assert ep.coordinator_key(heartbeat(2, "m1"), g, True, False)[2] == ep.GEN_OLDER
    assert ep.coordinator_key(heartbeat(4, "m2"), g, True, False)[2] == ep.GEN_NEWER
    assert ep.coordinator_key(heartbeat(3, "p1"), g, True, False)[2] == ep.PENDING
    assert ep.coordinator_key(heartbeat(3, "zz"), g, True, False)[2] == ep.UNKNOWN
    join = JoinGroupRequest("g", "", 10000, 30000, "consumer", ())
    assert ep.coordinator_key(join, g, True, False) == ("JoinGroup", "Stable", ep.NEW)
    assert ep.coordinator_key(attrs.evolve(join, member_id="m2"), g, True, False)[2] == ep.MEMBER
    leave = LeaveGroupRequest("g", ("p1",))
    assert ep.coordinator_key(leave, g, True, False) == ("LeaveGroup", "Stable", ep.PENDING)
    # before it looks at members: not the coordinator, loading, no group
    assert ep.coordinator_key(heartbeat(3, "m1"), g, False, False) == ("Heartbeat", ep.NOT_COORDINATOR)
    assert ep.coordinator_key(heartbeat(3, "m1"), g, True, True) == ("Heartbeat", ep.LOADING)
    assert ep.coordinator_key(heartbeat(3, "m1"), None, True, False) == ("Heartbeat", ep.NO_GROUP)


def test_every_cell_of_the_space_is_named_once_and_the_unreachable_ones_say_why():
    for cells in (ep.client_cells(), ep.coordinator_cells()):
        keys = [k for k, _ in cells]
        assert len(keys) == len(set(keys))
        assert all(reason is None or len(reason) > 20 for _, reason in cells)
    client = dict(ep.client_cells())
    # Kafka's coordinator never answers a JoinGroup ILLEGAL_GENERATION (the decisions catalogue)
    assert "never answers a JoinGroup" in client["JoinGroup / ILLEGAL_GENERATION / STABLE / " + ep.CURRENT]
    assert client["Heartbeat / ILLEGAL_GENERATION / PREPARING_REBALANCE / " + ep.OLDER] is None
    # an answer comes before the answer to the member's next JoinGroup: a connection answers in order
    assert "in order" in client["Heartbeat / ILLEGAL_GENERATION / STABLE / " + ep.OLDER]
    assert "in order" in client["OffsetCommit / REBALANCE_IN_PROGRESS / COMPLETING_REBALANCE / " + ep.OLDER]
    # no OffsetCommit is answered REBALANCE_IN_PROGRESS: the coordinator cell that would is unreachable
    assert "CompletingRebalance" in client["OffsetCommit / REBALANCE_IN_PROGRESS / STABLE / " + ep.CURRENT]
    assert dict(ep.coordinator_cells())["OffsetCommit / CompletingRebalance / member, current generation"]
    assert client["OffsetCommit / UNKNOWN_MEMBER_ID / STABLE / " + ep.CURRENT] is None
    # a commit is sent only while STABLE: its answer comes before any later JoinGroup's
    assert "only while the member is STABLE" in client["OffsetCommit / UNKNOWN_MEMBER_ID / COMPLETING_REBALANCE / "
                                                       + ep.CURRENT]
    assert client["Heartbeat / UNKNOWN_MEMBER_ID / COMPLETING_REBALANCE / " + ep.CURRENT] is None
    # the heartbeat thread sends a Heartbeat of the generation a completion in its poll just reset
    # (the 100,000 at 99b79b7 reached one such cell the space had called unreachable; issue 37)
    for error in ("ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"):
        assert client[f"Heartbeat / {error} / UNJOINED / " + ep.CURRENT] is None
        assert "generationIfStable" in client[f"OffsetCommit / {error} / UNJOINED / " + ep.CURRENT]
        assert "carries the generation" in client[f"SyncGroup / {error} / UNJOINED / " + ep.CURRENT]
    assert "never -1" in client["Heartbeat / REBALANCE_IN_PROGRESS / UNJOINED / " + ep.CURRENT]
    # a commit's generation was written before the member became STABLE: never newer than the
    # group's; but a deleted group's member commits to a coordinator without the group (issue 37)
    coordinator = dict(ep.coordinator_cells())
    for state in ("PreparingRebalance", "CompletingRebalance", "Stable"):
        assert "stable-member-generation-reached" in coordinator[f"OffsetCommit / {state} / " + ep.GEN_NEWER]
        assert "knows none of the old group's member ids" in coordinator[f"OffsetCommit / {state} / " + ep.GEN_NEWER]
        assert coordinator[f"Heartbeat / {state} / " + ep.GEN_NEWER] is None
    assert coordinator["OffsetCommit / no group"] is None
    assert "cleanupGroupMetadata" in coordinator["Heartbeat / Dead / " + ep.GEN_CURRENT]
    assert coordinator["LeaveGroup / no group"] is None and coordinator["OffsetCommit / loading"] is None


def test_walks_fill_cells_of_both_matrices_and_none_listed_unreachable():
    """Thirty walks of the implementation beside the model: answers reach handlers with the
    request's generation current and sent before a rejoin; no cell the space calls unreachable
    (or leaves out) is reached."""
    cov = Coverage()
    for seed in range(30):
        cov.start_run(seed)
        cov.end_run(run("impl", seed, Config(), steps=60, on_step=cov.on_step, hash_trace=False))
    paths = summarise(cov.to_dict(), 0, 30)["error_paths"]
    client, coordinator = paths["client"], paths["coordinator"]
    assert client["reached"] >= 8 and coordinator["reached"] >= 20, ep.headline(paths)
    reached = [r["cell"] for r in client["rows"] if r["count"]]
    assert all(0 <= r["first_seed"] < 30 for r in client["rows"] + coordinator["rows"] if r["count"])
    assert all(r["first_seed"] is None for r in client["rows"] + coordinator["rows"] if not r["count"])
    assert any(c.endswith(ep.OLDER) for c in reached) and any(c.endswith(ep.CURRENT) for c in reached)
    for m in (client, coordinator):
        assert m["reached_unreachable"] == [] and m["unexpected"] == []
        assert m["reached"] + len(m["not_reached"]) == m["reachable"]
    # the first seed of a cell replays it: that interleaving alone reaches the cell
    for row in [r for r in client["rows"] if r["count"]][:3]:
        alone = Coverage()
        alone.start_run(row["first_seed"])
        alone.end_run(run("impl", row["first_seed"], Config(), steps=60, on_step=alone.on_step, hash_trace=False))
        assert row["cell"] in alone.to_dict()["client_paths"], row


def test_a_reached_cell_the_space_calls_unreachable_is_shown():
    counts = {"JoinGroup / ILLEGAL_GENERATION / STABLE / " + ep.CURRENT: 2, "Heartbeat / NONE / x / y": 1}
    m = ep.matrix(counts, ep.client_cells())
    assert m["reached_unreachable"] == ["JoinGroup / ILLEGAL_GENERATION / STABLE / " + ep.CURRENT]
    assert m["unexpected"] == ["Heartbeat / NONE / x / y"]
    assert m["reached"] == 0


def test_partial_coverages_merge_their_matrices_by_addition():
    from properties.coverage import merge

    a = {**Coverage().to_dict(), "client_paths": {"x": 1}, "coordinator_paths": {"k": 2}}
    b = {**Coverage().to_dict(), "client_paths": {"x": 2, "y": 1}, "coordinator_paths": {}}
    a["paths_first"], b["paths_first"] = {"x": 7, "k": 2}, {"x": 3, "y": 9}
    merged = merge(a, b)
    assert merged["client_paths"] == {"x": 3, "y": 1} and merged["coordinator_paths"] == {"k": 2}
    assert merged["paths_first"] == {"x": 3, "k": 2, "y": 9}  # the least seed of each
    assert PREPARING_REBALANCE in ep.MEMBER_STATES
