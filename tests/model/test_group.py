"""Scenario tests of the server group coordinator model (model/group.py, protocol reference §1).

Each test drives the pure transitions the way a broker would and checks one thing Kafka does.
Times are in ms; unless a test says otherwise members ask for a 10 s session timeout and an 8 s
rebalance timeout, the broker's initial rebalance delay is 3 s, and clients speak JoinGroup v5
(two-phase join).
"""

from __future__ import annotations

import attrs
import pytest

from model.errors import Errors
from model.group import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    PREPARING_REBALANCE,
    STABLE,
    Deadline,
    Group,
    _Draft,
    fire_timers,
    load,
    new_member_id,
    next_deadline,
    unload,
)
from tests.helpers.group import (
    CFG,
    Chooser,
    RANGE,
    RANGE_RR,
    REBALANCE,
    ROUNDROBIN,
    RR_RANGE,
    SESSION,
    V3,
    admit,
    cfg,
    commit,
    first,
    form,
    heartbeat,
    ids_of,
    join,
    leave,
    member,
    never,
    only_reply,
    settle,
    stable,
    sync,
    transitions,
)


# -- request helpers ------------------------------------------------------------------------------


# -- group builders -------------------------------------------------------------------------------


# =================================================================================================
# §1.14 matrix: JoinGroup with member id ""
# =================================================================================================


def test_join_unknown_empty_two_phase_then_preparing_with_initial_delay():
    out = join(Group("g"), client="a", now=100)
    response = only_reply(out)
    assert response.error == Errors.MEMBER_ID_REQUIRED
    assert response.member_id == new_member_id("a", 0)
    assert response.generation_id == -1
    assert out.group.state == EMPTY and out.group.members == ()
    assert out.group.pending_members == ((response.member_id, Deadline(100 + SESSION, 0)),)

    out = join(out.group, response.member_id, client="a", now=200)
    g = out.group
    assert out.replies == ()  # parked
    assert g.state == PREPARING_REBALANCE and transitions(out) == [(EMPTY, PREPARING_REBALANCE)]
    assert g.pending_members == ()
    assert g.leader_id == response.member_id
    assert g.join_deadline.at == 200 + 3000
    assert g.initial_delay_remaining == REBALANCE - 3000
    assert member(g, response.member_id).awaiting_join == ("join", "a")


def test_join_unknown_absent_group_creates_empty_group():
    out = join(None, client="a")
    assert only_reply(out).error == Errors.MEMBER_ID_REQUIRED
    assert out.group.group_id == "g" and out.group.state == EMPTY and out.group.generation == 0


def test_join_unknown_preparing_gets_member_id_required_and_stays_preparing():
    out, a = admit(None, "a")
    out = join(out.group, client="b")
    assert only_reply(out).error == Errors.MEMBER_ID_REQUIRED
    assert out.group.state == PREPARING_REBALANCE
    assert [p[0] for p in out.group.pending_members] == [only_reply(out).member_id]


def test_join_unknown_preparing_pre_v4_parks_and_extends_initial_delay():
    out, a = admit(None, "a", config=V3)
    assert not out.group.new_member_added
    out = join(out.group, client="b", config=V3)
    assert out.replies == ()
    assert out.group.new_member_added
    assert all(m.awaiting_join is not None for m in out.group.members)


def test_join_unknown_completing_v5_member_id_required_state_unchanged():
    g, ids, now = form()
    out = join(g, client="c", now=now)
    assert only_reply(out).error == Errors.MEMBER_ID_REQUIRED
    assert out.group.state == COMPLETING_REBALANCE
    assert out.group.generation == g.generation


def test_join_unknown_completing_pre_v4_adds_and_fails_parked_syncs():
    g, (a, b), now = form(config=V3)
    g = sync(g, b, 1, now, config=V3).group  # b's SyncGroup is parked
    out = join(g, client="c", now=now + 1, config=V3)
    assert out.group.state == PREPARING_REBALANCE
    assert out.replies[0][0] == ("sync", b)
    assert out.replies[0][1].error == Errors.REBALANCE_IN_PROGRESS
    assert len(out.group.members) == 3
    assert out.group.pending_sync == frozenset() and out.group.sync_deadline is None


def test_join_unknown_stable_member_id_required_then_rebalance():
    g, (a, b), now = stable()
    out = join(g, client="c", now=now)
    c = only_reply(out).member_id
    assert only_reply(out).error == Errors.MEMBER_ID_REQUIRED
    assert out.group.state == STABLE
    out = join(out.group, c, client="c", now=now + 5, rebalance=12_000)
    assert out.group.state == PREPARING_REBALANCE
    assert out.group.join_deadline.at == now + 5 + 12_000  # DelayedJoin: max rebalance timeout
    assert out.group.initial_delay_remaining is None
    assert member(out.group, c).heartbeat.at == now + 5 + 300_000


def test_join_unknown_dead_is_coordinator_not_available():
    g, _, _ = stable()
    out = join(attrs.evolve(g, state=DEAD), client="c")
    assert only_reply(out).error == Errors.COORDINATOR_NOT_AVAILABLE
    assert only_reply(out).member_id == ""


# =================================================================================================
# §1.14 matrix: JoinGroup from a known member
# =================================================================================================


def test_join_known_empty_is_unknown_member():
    g, (a, b), now = stable()
    g = leave(g, a, b, now=now).group
    assert g.state == EMPTY
    out = join(g, a, client="a", now=now)
    assert only_reply(out).error == Errors.UNKNOWN_MEMBER_ID
    assert only_reply(out).member_id == a
    assert out.group.state == EMPTY


def test_join_known_absent_group_is_unknown_member():
    out = join(None, "a-1", client="a")
    assert only_reply(out).error == Errors.UNKNOWN_MEMBER_ID and out.group is None


def test_join_known_preparing_updates_and_parks():
    g, (a, b), now = stable()
    g = join(g, a, client="a", now=now).group  # the leader's rejoin starts a rebalance
    out = join(g, b, client="b", now=now + 1, protocols=RANGE_RR, rebalance=9000)
    # b was the last one missing: the phase completes at once and answers both.
    assert [r[0] for r in out.replies] == [("join", "a"), ("join", "b")]
    assert member(out.group, b).protocols == RANGE_RR
    assert member(out.group, b).rebalance_timeout_ms == 9000


def test_join_known_preparing_second_join_drops_first_parked_join():
    g, (a, b), now = stable()
    g = join(g, a, client="a", now=now, reply_to="first").group
    out = join(g, a, client="a", now=now + 1, reply_to="second")
    assert out.replies == ()
    assert member(out.group, a).awaiting_join == "second"
    out = join(out.group, b, client="b", now=now + 2)
    assert [r[0] for r in out.replies] == ["second", ("join", "b")]


def test_join_known_completing_same_metadata_answers_immediately():
    g, (a, b), now = form()
    out = join(g, a, client="a", now=now)
    response = only_reply(out)
    assert response.error == Errors.NONE and response.generation_id == 1
    assert response.leader_id == a and response.protocol_name == "range"
    assert response.members == ((a, ("t",)), (b, ("t",)))
    assert out.group == g  # nothing changes
    follower = only_reply(join(g, b, client="b", now=now))
    assert follower.error == Errors.NONE and follower.members == ()


def test_join_known_completing_changed_metadata_rebalances():
    g, (a, b), now = form()
    g = sync(g, b, 1, now).group  # b parked in SyncGroup
    out = join(g, a, client="a", now=now + 1, protocols=RANGE_RR)
    assert out.group.state == PREPARING_REBALANCE
    assert out.replies == ((("sync", b), out.replies[0][1]),)
    assert out.replies[0][1].error == Errors.REBALANCE_IN_PROGRESS


def test_join_known_stable_leader_always_rebalances():
    g, (a, b), now = stable()
    out = join(g, a, client="a", now=now)
    assert out.replies == () and out.group.state == PREPARING_REBALANCE
    assert transitions(out) == [(STABLE, PREPARING_REBALANCE)]


def test_join_known_stable_follower_same_metadata_answers_immediately():
    g, (a, b), now = stable()
    out = join(g, b, client="b", now=now)
    response = only_reply(out)
    assert response.error == Errors.NONE and response.generation_id == 1
    assert response.members == () and response.leader_id == a
    assert out.group.state == STABLE


def test_join_known_stable_follower_changed_metadata_rebalances():
    g, (a, b), now = stable()
    out = join(g, b, client="b", now=now, protocols=RANGE_RR)
    assert out.replies == () and out.group.state == PREPARING_REBALANCE


def test_join_known_dead_is_coordinator_not_available():
    g, (a, b), _ = stable()
    out = join(attrs.evolve(g, state=DEAD), a, client="a")
    assert only_reply(out).error == Errors.COORDINATOR_NOT_AVAILABLE
    assert only_reply(out).member_id == a


def test_join_known_but_not_member_is_unknown_member():
    g, _, now = stable()
    out = join(g, "ghost", client="x", now=now)
    assert only_reply(out).error == Errors.UNKNOWN_MEMBER_ID


# =================================================================================================
# JoinGroup: validation, two-phase join, max size
# =================================================================================================


@pytest.mark.parametrize("session", [5999, 1_800_001])
def test_join_invalid_session_timeout(session):
    out = join(None, client="a", session=session)
    assert only_reply(out).error == Errors.INVALID_SESSION_TIMEOUT
    assert out.group is None


def test_join_session_timeout_bounds_are_inclusive():
    assert only_reply(join(None, client="a", session=6000)).error == Errors.MEMBER_ID_REQUIRED
    assert only_reply(join(None, client="a", session=1_800_000)).error == Errors.MEMBER_ID_REQUIRED


def test_join_inconsistent_group_protocol():
    g, _, now = stable()
    out = join(g, client="c", now=now, protocols=ROUNDROBIN)
    assert only_reply(out).error == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert only_reply(out).member_id == ""
    out = join(g, client="c", now=now, protocols=RANGE, protocol_type="connect")
    assert only_reply(out).error == Errors.INCONSISTENT_GROUP_PROTOCOL
    out = join(Group("g"), client="c", protocols=())
    assert only_reply(out).error == Errors.INCONSISTENT_GROUP_PROTOCOL


def test_join_protocol_supported_by_all_members_is_accepted():
    g, _, now = stable()
    out = join(g, client="c", now=now, protocols=RR_RANGE)
    assert only_reply(out).error == Errors.MEMBER_ID_REQUIRED


def test_pre_v4_direct_join():
    out = join(None, client="a", now=50, config=V3)
    g = out.group
    assert out.replies == ()
    (m,) = g.members
    assert m.member_id == new_member_id("a", 0) and m.is_new and m.awaiting_join == ("join", "a")
    assert g.state == PREPARING_REBALANCE and g.pending_members == ()
    assert m.heartbeat.at == 50 + 300_000  # NewMemberJoinTimeoutMs


def test_pending_member_blocks_completion_until_it_joins():
    g, (a,), now = stable(("a",))
    out = join(g, client="c", now=now)
    c = only_reply(out).member_id
    out = join(out.group, a, client="a", now=now + 1)  # leader rejoins: everyone joined but c
    assert out.group.state == PREPARING_REBALANCE and out.replies == ()
    out = join(out.group, c, client="c", now=now + 2)
    assert out.group.state == COMPLETING_REBALANCE and out.group.generation == 2
    assert ids_of(out.group) == (a, c)
    assert [n for n in out.notes if n[0] == "join_complete"] == [
        ("join_complete", 1, 2, (a, c), a, True, ())
    ]


def test_pending_member_blocks_completion_until_it_expires():
    g, (a,), now = stable(("a",))
    out = join(g, client="c", now=now)
    pending_deadline = out.group.pending_members[0][1].at
    assert pending_deadline == now + SESSION
    # a rejoins with a rebalance timeout longer than c's session: the DelayedJoin outlasts c
    g = join(out.group, a, client="a", now=now + 1, rebalance=20_000).group
    assert fire_timers(g, pending_deadline - 1, CFG, never).group.state == PREPARING_REBALANCE
    out = fire_timers(g, pending_deadline, CFG, never)
    assert out.group.pending_members == ()
    assert out.group.state == COMPLETING_REBALANCE and ids_of(out.group) == (a,)


def test_group_max_size_reached_for_new_member():
    config = cfg(join_group_version=3, group_max_size=2)
    g, _, now = stable(config=config)
    out = join(g, client="c", now=now, config=config)
    assert only_reply(out).error == Errors.GROUP_MAX_SIZE_REACHED
    assert only_reply(out).member_id == ""
    assert out.group.state == STABLE and len(out.group.members) == 2


def test_group_max_size_in_preparing_counts_awaiting_members_and_kicks_out_joiner():
    config = cfg(group_max_size=1)
    g, (a, b), now = stable(config=cfg())
    g = join(g, a, client="a", now=now, config=config).group  # a awaits; 1 awaiting = max
    out = join(g, b, client="b", now=now + 1, config=config)
    assert out.replies[0] == (("join", "b"), out.replies[0][1])
    assert out.replies[0][1].error == Errors.GROUP_MAX_SIZE_REACHED
    assert ("member_removed", b, "max_size", None) in out.notes
    # b was the member everyone waited for: the phase completes right away.
    assert out.group.state == COMPLETING_REBALANCE and ids_of(out.group) == (a,)
    assert out.replies[1][0] == ("join", "a")


# =================================================================================================
# Initial rebalance delay and join completion
# =================================================================================================


def test_initial_delay_never_completes_early():
    out, a = admit(None, "a")
    g = out.group
    assert g.join_deadline.at == 3000 and g.initial_delay_remaining == REBALANCE - 3000
    assert fire_timers(g, 2999, CFG, never).group.state == PREPARING_REBALANCE
    out = fire_timers(g, 3000, CFG, never)
    assert out.group.state == COMPLETING_REBALANCE and out.group.generation == 1
    assert ("join_complete", 0, 1, (a,), a, False, ()) in out.notes


def test_initial_delay_arithmetic_extends_and_is_bounded_by_rebalance_timeout():
    rt = 10_000
    out, _ = admit(None, "a", 0, V3, rebalance=rt)
    g = out.group
    assert (g.join_deadline.at, g.initial_delay_remaining) == (3000, 7000)
    g = admit(g, "b", 1000, V3, rebalance=rt)[0].group
    g = fire_timers(g, 3000, V3, never).group
    assert (g.join_deadline.at, g.initial_delay_remaining, g.new_member_added) == (6000, 4000, False)
    g = admit(g, "c", 5000, V3, rebalance=rt)[0].group
    g = fire_timers(g, 6000, V3, never).group
    assert (g.join_deadline.at, g.initial_delay_remaining) == (9000, 1000)
    g = admit(g, "d", 8000, V3, rebalance=rt)[0].group
    g = fire_timers(g, 9000, V3, never).group
    # delay = min(3000, 1000); remaining = max(1000 - old delay 3000, 0)
    assert (g.join_deadline.at, g.initial_delay_remaining) == (10_000, 0)
    g = admit(g, "e", 9500, V3, rebalance=rt)[0].group
    out = fire_timers(g, 10_000, V3, first)
    assert out.group.state == COMPLETING_REBALANCE  # remaining 0: no further extension
    assert len(out.group.members) == 5


def test_initial_delay_without_new_members_completes_at_first_deadline():
    out, a = admit(None, "a", 0, V3)
    out = fire_timers(out.group, 3000, V3, never)
    assert out.group.state == COMPLETING_REBALANCE


def test_initial_delay_chain_runs_within_one_fire_timers_call():
    g = admit(None, "a", 0, V3)[0].group
    g = admit(g, "b", 10, V3)[0].group
    out = fire_timers(g, 100_000, V3, first)
    # 3000: extended to 6000 (new member arrived); 6000: completes; heartbeats then at 16000...
    assert ("join_complete", 0, 1, ids_of(g), ids_of(g)[0], False, ()) in out.notes


def test_join_completion_answers_every_parked_join_in_member_order():
    g = admit(None, "a", 0, V3)[0].group
    g = admit(g, "b", 0, V3)[0].group
    out = fire_timers(g, 6000, V3, never)
    a, b = ids_of(g)
    assert [r[0] for r in out.replies] == [("join", "a"), ("join", "b")]
    leader, follower = out.replies[0][1], out.replies[1][1]
    assert leader.members == ((a, ("t",)), (b, ("t",))) and follower.members == ()
    assert leader.generation_id == follower.generation_id == 1
    assert leader.leader_id == follower.leader_id == a
    assert leader.protocol_type == "consumer" and leader.protocol_name == "range"
    cg = out.group
    assert cg.pending_sync == frozenset({a, b})
    assert all(not m.is_new and m.awaiting_join is None for m in cg.members)
    assert all(m.heartbeat.at == 6000 + SESSION for m in cg.members)
    assert cg.sync_deadline.at == 6000 + REBALANCE and cg.sync_generation == 1


def test_join_completion_by_timeout_removes_members_that_did_not_rejoin():
    g, (a, b, c), now = stable(("a", "b", "c"))
    g = join(g, a, client="a", now=now).group
    g = join(g, c, client="c", now=now).group
    assert g.join_deadline.at == now + REBALANCE
    out = fire_timers(g, now + REBALANCE, CFG, never)
    assert ("member_removed", b, "not_rejoined", None) in out.notes
    assert ids_of(out.group) == (a, c) and out.group.generation == 2
    assert ("join_complete", 1, 2, (a, c), a, False, ()) in out.notes


def test_leader_repicked_via_choose_when_leader_did_not_rejoin():
    g, (a, b, c), now = stable(("a", "b", "c"))
    g = join(g, b, client="b", now=now, protocols=RANGE_RR).group  # b's new metadata: rebalance
    g = join(g, c, client="c", now=now).group
    chooser = Chooser(pick=1)
    out = fire_timers(g, now + REBALANCE, CFG, chooser)
    assert chooser.calls == [("leader", (b, c))]
    assert out.group.leader_id == c
    assert [r[1].members != () for r in out.replies] == [False, True]  # only c gets the list


def test_leader_repick_with_single_candidate_does_not_call_choose():
    g, (a, b), now = stable()
    g = join(g, b, client="b", now=now, protocols=RANGE_RR).group
    out = fire_timers(g, now + REBALANCE, CFG, never)
    assert out.group.leader_id == b


def test_leaving_leader_is_replaced_via_choose_among_remaining():
    g, (a, b, c), now = stable(("a", "b", "c"))
    chooser = Chooser(pick=1)
    out = leave(g, a, now=now, choose=chooser)
    assert chooser.calls == [("leader", (b, c))]
    assert out.group.leader_id == c


def test_protocol_vote_most_votes_wins():
    g, ids, now = form(("a", "b", "c"), protocols=(RR_RANGE, RANGE_RR, RANGE_RR), choose=never)
    assert g.protocol_name == "range"


def test_protocol_vote_tie_uses_choose_in_first_appearance_order():
    chooser = Chooser(pick=1)
    g, ids, now = form(("a", "b"), protocols=(RR_RANGE, RANGE_RR), choose=chooser)
    assert chooser.calls == [("protocol", ("roundrobin", "range"))]
    assert g.protocol_name == "range"


def test_protocol_vote_only_among_protocols_every_member_supports():
    g, ids, now = form(("a", "b"), protocols=(RR_RANGE, RANGE), choose=never)
    assert g.protocol_name == "range"


def test_join_completion_into_empty_bumps_generation_and_persists():
    g, (a, b), now = stable()
    g = join(g, a, client="a", now=now).group
    out = leave(g, a, b, now=now + 1)
    assert out.group.state == EMPTY and out.group.generation == 2
    assert out.group.protocol_name is None and out.group.leader_id is None
    assert out.persist == out.group
    assert ("join_complete", 1, 2, (), None, True, ()) in out.notes


# =================================================================================================
# §1.14 matrix: SyncGroup
# =================================================================================================


def test_sync_empty_and_absent_group_are_unknown_member():
    assert only_reply(sync(None, "a", 1)).error == Errors.UNKNOWN_MEMBER_ID
    assert only_reply(sync(Group("g"), "a", 0)).error == Errors.UNKNOWN_MEMBER_ID


def test_sync_preparing_is_rebalance_in_progress():
    g, (a, b), now = stable()
    g = join(g, a, client="a", now=now).group
    out = sync(g, b, 1, now)
    assert only_reply(out).error == Errors.REBALANCE_IN_PROGRESS
    assert out.group == g


def test_sync_completing_follower_parks_and_leader_completes_everyone():
    g, (a, b, c), now = form(("a", "b", "c"))
    out = sync(g, c, 1, now)
    assert out.replies == () and member(out.group, c).awaiting_sync == ("sync", c)
    assert c not in out.group.pending_sync
    out = sync(out.group, a, 1, now + 1, ((a, (0, 1)), (c, (2,)), ("stranger", (9,))))
    assert out.group.state == STABLE and transitions(out) == [(COMPLETING_REBALANCE, STABLE)]
    # the leader and the already-parked c are answered, in member order; b has not synced yet
    assert [r[0] for r in out.replies] == [("sync", a), ("sync", c)]
    assert [r[1].assignment for r in out.replies] == [(0, 1), (2,)]
    assert all(r[1].error == Errors.NONE and r[1].protocol_name == "range" for r in out.replies)
    assert member(out.group, b).assignment == ()  # missing from the leader's map: empty
    assert ("assignment_stored", 1, ((a, (0, 1)), (b, ()), (c, (2,)))) in out.notes
    assert out.persist == out.group
    assert member(out.group, a).heartbeat.at == now + 1 + SESSION
    assert out.group.pending_sync == frozenset({b}) and out.group.sync_deadline is not None


def test_sync_stable_follower_gets_stored_assignment_immediately():
    g, (a, b), now = form()
    g = sync(g, a, 1, now, ((a, (0,)), (b, (1, 2)))).group
    out = sync(g, b, 1, now + 5)
    assert only_reply(out).assignment == (1, 2) and only_reply(out).error == Errors.NONE
    assert out.group.pending_sync == frozenset()
    assert out.group.sync_deadline is None  # everyone synced: DelayedSync completes
    assert member(out.group, b).heartbeat.at == now + 5 + SESSION


@pytest.mark.parametrize("new_group_coordinator", [False, True])
def test_a_sync_to_a_stable_group_keeps_the_session_alive_only_under_the_scala_coordinator(
        new_group_coordinator):
    """Scala GroupCoordinator.doSyncGroup, case Stable, reschedules the member's heartbeat; Kafka
    4.x's GroupMetadataManager.classicGroupSyncToClassicGroup, STABLE branch, does not, so the
    deadline stays where the assignment's propagation put it. Found by conform broker --launch
    kafka:4.1 with timers (docs/results/kafka-2026-11-28/k41-on/01, k41-on/05, k41-on-2/01)."""
    config = cfg(new_group_coordinator=new_group_coordinator)
    g, (a, b), now = form(config=config)
    g = sync(g, a, 1, now, ((a, (0,)), (b, (1, 2))), config=config).group  # b not parked: not propagated
    before = member(g, b).heartbeat.at
    out = sync(g, b, 1, now + 5, config=config)
    assert only_reply(out).assignment == (1, 2) and only_reply(out).error == Errors.NONE
    expected = before if new_group_coordinator else now + 5 + SESSION
    assert member(out.group, b).heartbeat.at == expected


def test_sync_dead_is_coordinator_not_available():
    g, (a, b), _ = stable()
    assert only_reply(sync(attrs.evolve(g, state=DEAD), a, 1)).error == Errors.COORDINATOR_NOT_AVAILABLE


def test_sync_validation_order():
    g, (a, b), now = form()
    assert only_reply(sync(g, "ghost", 0, now)).error == Errors.UNKNOWN_MEMBER_ID
    assert only_reply(sync(g, b, 0, now)).error == Errors.ILLEGAL_GENERATION
    assert only_reply(sync(g, b, 1, now, protocol_type="connect")).error == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert only_reply(sync(g, b, 1, now, protocol_name="sticky")).error == Errors.INCONSISTENT_GROUP_PROTOCOL
    assert sync(g, b, 1, now, protocol_type="consumer", protocol_name="range").replies == ()


def test_delayed_sync_expiry_in_completing_removes_leader_that_never_synced():
    g, (a, b, c), now = form(("a", "b", "c"))
    g = sync(g, b, 1, now).group
    g = sync(g, c, 1, now).group
    chooser = Chooser(pick=1)
    out = fire_timers(g, now + REBALANCE, CFG, chooser)
    assert ("member_removed", a, "not_synced", None) in out.notes
    assert chooser.calls == [("leader", (b, c))] and out.group.leader_id == c
    assert out.group.state == PREPARING_REBALANCE
    assert [(r[0], r[1].error) for r in out.replies] == [
        (("sync", b), Errors.REBALANCE_IN_PROGRESS),
        (("sync", c), Errors.REBALANCE_IN_PROGRESS),
    ]


def test_delayed_sync_expiry_in_stable_removes_followers_that_never_synced():
    g, (a, b), now = form()
    g = sync(g, a, 1, now, ((a, (0,)), (b, (1,)))).group
    assert g.state == STABLE
    assert fire_timers(g, now + REBALANCE - 1, CFG, never).group == g
    out = fire_timers(g, now + REBALANCE, CFG, never)
    assert [n for n in out.notes if n[0] == "member_removed"] == [
        ("member_removed", b, "not_synced", None)
    ]
    assert out.group.state == PREPARING_REBALANCE and out.group.leader_id == a


def test_delayed_sync_for_an_older_generation_does_nothing():
    g, (a, b), now = form()
    g = attrs.evolve(g, sync_generation=0)
    out = fire_timers(g, now + REBALANCE, CFG, never)
    assert out.group.members == g.members and out.group.sync_deadline is None


# =================================================================================================
# §1.14 matrix: Heartbeat
# =================================================================================================


def test_heartbeat_empty_and_absent_are_unknown_member():
    assert only_reply(heartbeat(None, "a", 0)).error == Errors.UNKNOWN_MEMBER_ID
    assert only_reply(heartbeat(Group("g"), "a", 0)).error == Errors.UNKNOWN_MEMBER_ID


def test_heartbeat_preparing_is_rebalance_in_progress_and_resets_deadline():
    g, (a, b), now = stable()
    g = join(g, a, client="a", now=now).group
    out = heartbeat(g, b, 1, now + 7)
    assert only_reply(out).error == Errors.REBALANCE_IN_PROGRESS
    assert member(out.group, b).heartbeat.at == now + 7 + SESSION
    # a is parked in JoinGroup and not new: satisfied, its deadline is cancelled, not re-armed
    assert member(heartbeat(g, a, 1, now + 7).group, a).heartbeat is None


def test_heartbeat_completing_is_none_and_resets_deadline():
    g, (a, b), now = form()
    out = heartbeat(g, b, 1, now + 7)
    assert only_reply(out).error == Errors.NONE
    assert member(out.group, b).heartbeat.at == now + 7 + SESSION


def test_heartbeat_stable_is_none_and_resets_deadline():
    g, (a, b), now = stable()
    out = heartbeat(g, a, 1, now + 9)
    assert only_reply(out).error == Errors.NONE
    assert member(out.group, a).heartbeat.at == now + 9 + SESSION


def test_heartbeat_dead_is_coordinator_not_available():
    g, (a, b), _ = stable()
    assert only_reply(heartbeat(attrs.evolve(g, state=DEAD), a, 1)).error == Errors.COORDINATOR_NOT_AVAILABLE


def test_heartbeat_error_precedence():
    g, (a, b), now = stable()
    assert only_reply(heartbeat(g, "ghost", 0, now)).error == Errors.UNKNOWN_MEMBER_ID
    assert only_reply(heartbeat(g, b, 0, now)).error == Errors.ILLEGAL_GENERATION
    prep = join(g, a, client="a", now=now).group
    # generation is checked before the state: an old generation never sees REBALANCE_IN_PROGRESS
    assert only_reply(heartbeat(prep, b, 0, now)).error == Errors.ILLEGAL_GENERATION
    assert heartbeat(prep, b, 0, now).group == prep
    completing = settle(join(prep, b, client="b", now=now).group)[0]
    # CompletingRebalance: the generation was bumped, a member still on 1 is fenced
    assert only_reply(heartbeat(completing, b, 1, now)).error == Errors.ILLEGAL_GENERATION
    assert only_reply(heartbeat(completing, b, 2, now)).error == Errors.NONE


# =================================================================================================
# §1.14 matrix: LeaveGroup
# =================================================================================================


def test_leave_empty_group_member_is_unknown():
    out = leave(Group("g"), "a")
    assert only_reply(out).error == Errors.NONE
    assert only_reply(out).member_errors == (("a", Errors.UNKNOWN_MEMBER_ID),)


def test_leave_absent_group_every_member_unknown():
    out = leave(None, "a", "b")
    assert out.group is None and only_reply(out).error == Errors.NONE
    assert only_reply(out).member_errors == (("a", Errors.UNKNOWN_MEMBER_ID), ("b", Errors.UNKNOWN_MEMBER_ID))


def test_leave_preparing_removes_and_completes_join():
    g, (a, b), now = stable()
    g = join(g, a, client="a", now=now).group
    out = leave(g, b, now=now + 1)
    assert [r[0] for r in out.replies] == [("join", "a"), "leave"]  # completion answers first
    assert out.replies[1][1].member_errors == ((b, Errors.NONE),)
    assert out.group.state == COMPLETING_REBALANCE and ids_of(out.group) == (a,)
    assert ("member_removed", b, "leave", None) in out.notes


def test_leave_completing_removes_and_rebalances():
    g, (a, b, c), now = form(("a", "b", "c"))
    g = sync(g, b, 1, now).group
    out = leave(g, c, now=now)
    assert out.group.state == PREPARING_REBALANCE and ids_of(out.group) == (a, b)
    assert [(r[0], r[1].error) for r in out.replies] == [
        (("sync", b), Errors.REBALANCE_IN_PROGRESS),
        ("leave", Errors.NONE),
    ]


def test_leave_stable_removes_and_rebalances():
    g, (a, b), now = stable()
    out = leave(g, b, now=now)
    assert out.group.state == PREPARING_REBALANCE and ids_of(out.group) == (a,)
    assert out.group.join_deadline.at == now + REBALANCE


def test_leave_dead_is_top_level_coordinator_not_available():
    g, (a, b), _ = stable()
    response = only_reply(leave(attrs.evolve(g, state=DEAD), a))
    assert response.error == Errors.COORDINATOR_NOT_AVAILABLE and response.member_errors == ()


def test_leave_pending_member_unblocks_join_completion():
    g, (a,), now = stable(("a",))
    out = join(g, client="c", now=now)
    c = only_reply(out).member_id
    g = join(out.group, a, client="a", now=now).group
    out = leave(g, c, "", "ghost", now=now + 1)
    assert out.replies[-1][1].member_errors == (
        (c, Errors.NONE), ("", Errors.UNKNOWN_MEMBER_ID), ("ghost", Errors.UNKNOWN_MEMBER_ID)
    )
    assert out.group.pending_members == () and out.group.state == COMPLETING_REBALANCE


@pytest.mark.parametrize("new_group_coordinator", [False, True])
def test_a_pending_member_leaving_a_stable_group_rebalances_it_only_under_the_java_coordinator(
        new_group_coordinator):
    """Scala GroupCoordinator.handleLeaveGroup drops a pending member and nothing else
    (removePendingMemberAndUpdateGroup); Kafka 4.x's GroupMetadataManager.classicGroupLeaveToClassicGroup
    counts it among the members that left and rebalances a Stable or CompletingRebalance group
    (maybePrepareRebalanceOrCompleteJoin). Found by conform broker --launch kafka:4.1."""
    config = cfg(new_group_coordinator=new_group_coordinator)
    g, (a, b), now = stable(config=config)
    out = join(g, client="c", now=now, config=config)
    c = only_reply(out).member_id  # MEMBER_ID_REQUIRED: c is pending
    out = leave(out.group, c, now=now + 1, config=config)
    assert out.replies[-1][1].member_errors == ((c, Errors.NONE),)
    assert out.group.pending_members == () and ids_of(out.group) == (a, b)
    assert out.group.state == (PREPARING_REBALANCE if new_group_coordinator else STABLE)


@pytest.mark.parametrize("new_group_coordinator", [False, True])
def test_a_pending_member_leaving_a_preparing_group_completes_its_join_under_both_coordinators(
        new_group_coordinator):
    """Every member rejoined, the join waits for a pending member; its LeaveGroup completes the join
    (Scala removePendingMemberAndUpdateGroup; Java classicGroupLeaveToClassicGroup: the group was
    PreparingRebalance, so maybeCompleteJoinPhase) and nothing rebalances again. Kafka 4.1.2,
    docs/results/kafka-2026-11-28/k41-off/01: the model had rebalanced the just-completed group."""
    config = cfg(new_group_coordinator=new_group_coordinator)
    g, (a, b), now = stable(config=config)
    g = join(g, b, client="b", now=now, config=config, protocols=RANGE_RR).group  # b's new metadata: a rebalance
    out = join(g, client="c", now=now, config=config)
    c = only_reply(out).member_id  # c is pending
    g = join(out.group, a, client="a", now=now, config=config).group  # every member in, c still pending
    assert g.state == PREPARING_REBALANCE
    out = leave(g, c, now=now + 1, config=config)
    assert out.group.state == COMPLETING_REBALANCE and out.group.generation == 2, out.group.state


def test_leave_of_member_parked_in_join_answers_it_unknown_member():
    g = admit(None, "a", 0, V3)[0].group
    g = admit(g, "b", 0, V3)[0].group
    a, b = ids_of(g)
    out = leave(g, b, now=10, config=V3)
    assert out.replies[0][0] == ("join", "b")
    assert out.replies[0][1].error == Errors.UNKNOWN_MEMBER_ID and out.replies[0][1].member_id == ""
    assert out.group.state == PREPARING_REBALANCE  # initial delay does not complete early


def test_leave_never_checks_generation_and_rest_of_batch_sees_new_state():
    g, (a, b), now = stable()
    out = leave(g, a, b, now=now)
    assert only_reply(out).member_errors == ((a, Errors.NONE), (b, Errors.NONE))
    assert out.group.state == EMPTY


# =================================================================================================
# §1.14 matrix: OffsetCommit
# =================================================================================================


def test_commit_empty_group_without_generation_is_stored():
    out = commit(Group("g"), "", -1)
    assert only_reply(out).errors == ((0, Errors.NONE), (1, Errors.NONE))
    assert out.committed == ((0, 5), (1, 7))
    assert out.notes == (("commit", -1, "", 0, EMPTY, Errors.NONE),)


def test_commit_empty_group_without_generation_ignores_member_id():
    out = commit(Group("g"), "someone", -1)
    assert only_reply(out).error == Errors.NONE and out.committed == ((0, 5), (1, 7))


def test_commit_empty_group_with_generation_is_unknown_member():
    out = commit(Group("g"), "a", 0)
    assert only_reply(out).error == Errors.UNKNOWN_MEMBER_ID and out.committed == ()


def test_commit_preparing_stores_previous_generation_and_resets_deadline():
    g, (a, b), now = stable()
    g = join(g, a, client="a", now=now).group
    out = commit(g, b, 1, now + 3)
    assert only_reply(out).error == Errors.NONE and out.committed == ((0, 5), (1, 7))
    assert member(out.group, b).heartbeat.at == now + 3 + SESSION
    assert out.notes == (("commit", 1, b, 1, PREPARING_REBALANCE, Errors.NONE),)


def test_commit_completing_is_rebalance_in_progress():
    g, (a, b), now = form()
    out = commit(g, b, 1, now)
    assert only_reply(out).errors == ((0, Errors.REBALANCE_IN_PROGRESS), (1, Errors.REBALANCE_IN_PROGRESS))
    assert out.committed == () and out.group == g


def test_commit_stable_is_stored():
    g, (a, b), now = stable()
    out = commit(g, a, 1, now + 2)
    assert only_reply(out).error == Errors.NONE and out.committed == ((0, 5), (1, 7))
    assert member(out.group, a).heartbeat.at == now + 2 + SESSION


def test_commit_dead_is_coordinator_not_available():
    g, (a, b), _ = stable()
    out = commit(attrs.evolve(g, state=DEAD), a, 1)
    assert only_reply(out).error == Errors.COORDINATOR_NOT_AVAILABLE and out.committed == ()


def test_commit_precedence_unknown_member_before_illegal_generation():
    g, (a, b), now = stable()
    assert only_reply(commit(g, "ghost", 0, now)).error == Errors.UNKNOWN_MEMBER_ID
    assert only_reply(commit(g, b, 0, now)).error == Errors.ILLEGAL_GENERATION
    assert only_reply(commit(g, b, -1, now)).error == Errors.ILLEGAL_GENERATION
    assert only_reply(commit(g, "", -1, now)).error == Errors.UNKNOWN_MEMBER_ID


def test_commit_absent_group():
    out = commit(None, "", -1)
    assert out.group == Group("g") and out.committed == ((0, 5), (1, 7))
    out = commit(None, "a", 3)
    assert out.group is None and only_reply(out).error == Errors.ILLEGAL_GENERATION
    assert out.notes == (("commit", 3, "a", None, None, Errors.ILLEGAL_GENERATION),)


# =================================================================================================
# Sessions (§1.12)
# =================================================================================================


def test_session_expiry_fires_exactly_at_the_deadline():
    g, (a,), now = stable(("a",))
    g = heartbeat(g, a, 1, now + 500).group
    deadline = now + 500 + SESSION
    assert next_deadline(g) == deadline
    assert fire_timers(g, deadline - 1, CFG, never).group == g
    out = fire_timers(g, deadline, CFG, never)
    assert ("member_removed", a, "session", deadline) in out.notes
    # the last member gone: rebalance with nobody to wait for, straight into Empty
    assert out.group.state == EMPTY and out.group.generation == 2
    assert transitions(out) == [(STABLE, PREPARING_REBALANCE), (PREPARING_REBALANCE, EMPTY)]
    assert out.persist == out.group


def test_member_parked_in_sync_is_not_expired():
    g, (a, b), now = form(rebalance=20_000)  # the DelayedSync comes after the sessions
    g = sync(g, b, 1, now).group
    out = fire_timers(g, now + SESSION, CFG, never)
    removed = [n for n in out.notes if n[0] == "member_removed"]
    assert removed == [("member_removed", a, "session", now + SESSION)]
    assert ids_of(out.group) == (b,) and out.group.leader_id == b
    # a's removal rebalances: b's parked SyncGroup fails and its session deadline is re-armed
    assert out.replies == ((("sync", b), out.replies[0][1]),)
    assert member(out.group, b).heartbeat.at == now + 2 * SESSION


def test_member_parked_in_join_is_not_expired():
    g, (a, b), now = stable(rebalance=20_000)
    g = join(g, a, client="a", now=now, rebalance=20_000).group
    out = fire_timers(g, now + SESSION, CFG, never)
    assert [n[1] for n in out.notes if n[0] == "member_removed"] == [b]
    assert out.group.state == COMPLETING_REBALANCE and ids_of(out.group) == (a,)


def test_new_member_join_timeout_is_300000():
    g, (a,), now = stable(("a",), config=V3)
    out = join(g, client="b", now=now, config=V3)
    b = out.group.members[-1].member_id
    assert member(out.group, b).heartbeat.at == now + 300_000


def test_new_member_parked_in_join_expires_and_is_answered_unknown_member():
    config = cfg(join_group_version=3, new_member_join_timeout_ms=5000)
    g, (a,), now = stable(("a",), config=config)
    g = join(g, client="b", now=now, config=config).group
    b = g.members[-1].member_id
    out = fire_timers(g, now + 5000, config, never)
    assert out.replies == ((("join", "b"), out.replies[0][1]),)
    assert out.replies[0][1].error == Errors.UNKNOWN_MEMBER_ID and out.replies[0][1].member_id == ""
    assert ("member_removed", b, "session", now + 5000) in out.notes
    assert out.group.state == PREPARING_REBALANCE  # a has not rejoined yet


def test_timers_fire_in_deadline_then_arming_order():
    g, (a, b), now = stable()
    # both sessions end at the same ms: a's deadline was armed first, so a goes first
    assert member(g, a).heartbeat.at == member(g, b).heartbeat.at
    out = fire_timers(g, now + SESSION, CFG, first)
    assert [n[1] for n in out.notes if n[0] == "member_removed"] == [a, b]


def test_next_deadline():
    assert next_deadline(None) is None
    assert next_deadline(Group("g")) is None
    g, (a, b), now = form()
    assert next_deadline(g) == now + REBALANCE  # DelayedSync before the sessions


# =================================================================================================
# Unload / load (§1.13)
# =================================================================================================


def test_unload_preparing_answers_parked_joins_not_coordinator():
    g = admit(None, "a", 0, V3)[0].group
    g = admit(g, "b", 0, V3)[0].group
    a, b = ids_of(g)
    out = unload(g)
    assert out.group is None
    assert [(r[0], r[1].error, r[1].member_id) for r in out.replies] == [
        (("join", "a"), Errors.NOT_COORDINATOR, a),
        (("join", "b"), Errors.NOT_COORDINATOR, b),
    ]
    assert out.notes == (("transition", PREPARING_REBALANCE, DEAD),)


def test_unload_completing_answers_parked_syncs_not_coordinator():
    g, (a, b), now = form()
    g = sync(g, b, 1, now).group
    out = unload(g)
    assert [(r[0], r[1].error) for r in out.replies] == [(("sync", b), Errors.NOT_COORDINATOR)]
    assert unload(None).group is None


def test_load_rebuilds_stable_group_with_fresh_sessions():
    g, (a, b), now = form()
    persisted = sync(g, a, 1, now, ((a, (0,)), (b, (1,)))).persist
    out = load(persisted, 90_000, CFG, never)
    lg = out.group
    assert lg.state == STABLE and lg.generation == 1 and lg.leader_id == a
    assert [m.assignment for m in lg.members] == [(0,), (1,)]
    assert all(not m.is_new and m.awaiting_sync is None and m.awaiting_join is None for m in lg.members)
    assert all(m.heartbeat.at == 90_000 + SESSION for m in lg.members)
    assert lg.pending_sync == frozenset() and lg.sync_deadline is None and lg.join_deadline is None
    assert out.notes == ()
    assert load(None, 0, CFG, never).group is None


def test_load_keeps_only_the_selected_protocols_metadata():
    # GroupMetadataManager.groupMetadataValue writes one subscription per member (the metadata of
    # the group's protocol); readGroupMessageValue rebuilds supportedProtocols from it alone.
    g, (a, b), now = form(protocols=(RANGE_RR, RANGE_RR))
    persisted = sync(g, a, 1, now, ((a, (0,)), (b, (1,)))).persist
    assert [m.protocols for m in persisted.members] == [RANGE_RR, RANGE_RR]
    lg = load(persisted, 90_000, CFG, never).group
    assert lg.protocol_name == "range"
    assert [m.protocols for m in lg.members] == [RANGE, RANGE]


def _loaded_stable_pair():
    g, (a, b), now = form(protocols=(RANGE_RR, RANGE_RR))
    g = sync(g, a, 1, now, ((a, (0,)), (b, (1,)))).group
    persisted = sync(g, b, 1, now).persist or g
    return load(persisted, 90_000, CFG, never).group, a, b


def test_follower_rejoining_a_loaded_stable_group_with_its_full_protocol_list_rebalances():
    # Regression (seed 19511 of the 20,000-interleaving campaign): MemberMetadata.matches compares
    # the JoinGroup's two protocols with the one the record kept, so handleJoinGroup's Stable case
    # calls updateMemberAndRebalance. The model used to keep the full list across a load and
    # answered the follower with the current generation instead.
    lg, a, b = _loaded_stable_pair()
    out = join(lg, b, client="b", now=90_001, protocols=RANGE_RR)
    assert out.group.state == PREPARING_REBALANCE
    assert transitions(out) == [(STABLE, PREPARING_REBALANCE)]
    assert member(out.group, b).protocols == RANGE_RR and member(out.group, b).awaiting_join is not None


def test_follower_rejoining_a_loaded_stable_group_with_the_kept_protocol_gets_the_generation():
    lg, a, b = _loaded_stable_pair()
    out = join(lg, b, client="b", now=90_001, protocols=RANGE)
    assert out.group.state == STABLE
    response = only_reply(out)
    assert (response.error, response.generation_id, response.leader_id) == (Errors.NONE, 1, a)


def test_load_over_capacity_group_rebalances():
    g, (a, b), now = stable()
    out = load(g, 90_000, cfg(group_max_size=1), never)
    assert out.group.state == PREPARING_REBALANCE
    assert out.group.join_deadline.at == 90_000 + REBALANCE
    assert transitions(out) == [(STABLE, PREPARING_REBALANCE)]


def test_load_empty_group():
    out = load(Group("g", generation=4), 0, CFG, never)
    assert out.group.state == EMPTY and out.group.generation == 4 and next_deadline(out.group) is None


def test_a_group_with_committed_offsets_and_no_record_loads_empty():
    """Scala GroupMetadataManager.doLoadGroupsAndOffsets (emptyGroupOffsets) and 4.x
    OffsetMetadataManager.replay both bring a group that only committed offsets back Empty; with
    nothing in the log there is no group. Found by conform --launch kafka:4.1 --brokers 3."""
    out = load(None, 5, CFG, never, 7, "g", has_offsets=True)
    assert out.group.state == EMPTY and out.group.group_id == "g" and out.group.member_seq == 7
    assert load(None, 5, CFG, never, 7, "g").group is None


@pytest.mark.parametrize("new_group_coordinator", [False, True])
def test_a_join_that_creates_the_group_writes_an_empty_record_only_under_the_java_coordinator(
        new_group_coordinator):
    """4.x GroupMetadataManager.classicGroupJoin appends newEmptyGroupMetadataRecord for a group the
    join created when the join itself writes nothing ("to commit the group to the timeline data
    structure"); the Scala coordinator writes nothing before the first SyncGroup. A failover then
    loads an Empty group from 4.x's log and none from 3.9's (conform --launch kafka:4.1 --brokers 3)."""
    out = join(None, config=cfg(new_group_coordinator=new_group_coordinator))
    assert only_reply(out).error == Errors.MEMBER_ID_REQUIRED
    if new_group_coordinator:
        assert out.persist is not None and out.persist.state == EMPTY and out.persist.members == ()
        assert load(out.persist, 9, CFG, never).group.state == EMPTY
    else:
        assert out.persist is None


def test_draft_round_trip_is_identity():
    for g in (Group("g"), form()[0], stable(("a", "b", "c"))[0]):
        assert _Draft(g, CFG, never).freeze() == g


def test_illegal_transition_is_refused():
    with pytest.raises(AssertionError):
        _Draft(Group("g"), CFG, never).transition(STABLE)


# =================================================================================================
# Broken variants: each switch changes the outcome
# =================================================================================================


def test_broken_generation_not_bumped():
    g, _, _ = form(config=cfg(broken={"generation_not_bumped"}))
    assert g.generation == 0


def test_broken_generation_bumped_twice():
    g, _, _ = form(config=cfg(broken={"generation_bumped_twice"}))
    assert g.generation == 2


def test_broken_leader_not_repicked():
    g, (a, b), now = stable()
    out = leave(g, a, now=now, config=cfg(broken={"leader_not_repicked"}), choose=never)
    assert out.group.leader_id == a and ids_of(out.group) == (b,)


def test_broken_followers_get_leader_assignment():
    config = cfg()
    # The name is registered in model.variants separately; set it past the validator.
    object.__setattr__(config, "broken", frozenset({"followers_get_leader_assignment"}))
    g, (a, b), now = form(config=config)
    g = sync(g, b, 1, now, config=config).group
    out = sync(g, a, 1, now, ((a, (0,)), (b, (1,))), config=config)
    assert [r[1].assignment for r in out.replies] == [(0,), (0,)]


def test_broken_sync_accepts_stale_generation():
    g, (a, b), now = form()
    assert only_reply(sync(g, b, 0, now)).error == Errors.ILLEGAL_GENERATION
    out = sync(g, b, 0, now, config=cfg(broken={"sync_accepts_stale_generation"}))
    assert out.replies == () and member(out.group, b).awaiting_sync is not None


def test_broken_commit_accepts_stale_generation():
    g, (a, b), now = stable()
    out = commit(g, b, 0, now, config=cfg(broken={"commit_accepts_stale_generation"}))
    assert only_reply(out).error == Errors.NONE and out.committed


def test_broken_commit_checks_generation_first():
    g, (a, b), now = stable()
    out = commit(g, "ghost", 0, now, config=cfg(broken={"commit_checks_generation_first"}))
    assert only_reply(out).error == Errors.ILLEGAL_GENERATION


def test_broken_heartbeat_none_while_preparing():
    g, (a, b), now = stable()
    g = join(g, a, client="a", now=now).group
    out = heartbeat(g, b, 1, now, config=cfg(broken={"heartbeat_none_while_preparing"}))
    assert only_reply(out).error == Errors.NONE


def test_broken_join_completes_with_pending():
    config = cfg(broken={"join_completes_with_pending"})
    g, (a,), now = stable(("a",))
    g = join(g, client="c", now=now, config=config).group
    out = join(g, a, client="a", now=now, config=config)
    assert out.group.state == COMPLETING_REBALANCE and out.group.pending_members != ()


def test_broken_non_rejoined_kept():
    config = cfg(broken={"non_rejoined_kept"})
    g, (a, b), now = stable()
    g = join(g, a, client="a", now=now).group
    out = fire_timers(g, now + REBALANCE, config, never)
    assert ids_of(out.group) == (a, b) and out.group.generation == 2


def test_broken_expiry_ignores_deadline():
    config = cfg(broken={"expiry_ignores_deadline"})
    g, (a,), now = stable(("a",))
    deadline = member(g, a).heartbeat.at
    assert fire_timers(g, deadline - 3001, config, never).group == g
    out = fire_timers(g, deadline - 3000, config, never)
    assert ("member_removed", a, "session", deadline) in out.notes
    assert fire_timers(g, deadline - 3000, CFG, never).group == g


def test_broken_stable_skips_completing():
    config = cfg(broken={"stable_skips_completing"})
    g = admit(None, "a", 0, config)[0].group
    out = fire_timers(g, 3000, config, never)
    assert out.group.state == STABLE
    assert transitions(out) == [(PREPARING_REBALANCE, STABLE)]
