"""Mutation analysis of the implementation (``properties/mutation/mutants.py``, ``groupcheck mutants``).

Unit tests: a mutant is applied at run time and restored exactly; every mutant changes the
behaviour of its target; unknown names are refused; the CLI prints the documented fields.
Quality tests: the mutants that die fast are killed, by the expected property.
"""

import json
from collections import deque

import attrs
import pytest

from properties.mutation import mutants
from properties.cli import main
from properties.mutation.mutants import ALL, MUTANTS, UNREACHED, Search, applied


def live_and_mutated(name, run):
    """*run()* on today's impl/ and with mutant *name* applied: ``(live, mutated)``."""
    with applied(name):
        mutated = run()
    return run(), mutated


def _originals(name):
    return [(owner, attr, vars(owner).get(attr)) for owner, attr in mutants.get(name).owners()]


# ---- applied() ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(MUTANTS) + list(UNREACHED))
def test_applied_replaces_and_restores_the_very_same_objects(name):
    before = _originals(name)
    with applied(name):
        for owner, attr, original in before:
            assert vars(owner)[attr] is not original
            assert "MUTANT" not in (original.__doc__ or "")
    for owner, attr, original in before:
        assert vars(owner).get(attr) is original


def test_applied_restores_when_the_body_raises():
    name = "generation_not_bumped"
    before = _originals(name)
    with pytest.raises(ZeroDivisionError):
        with applied(name):
            1 / 0
    for owner, attr, original in before:
        assert vars(owner).get(attr) is original


def test_applied_restores_an_attribute_that_was_inherited():
    # the replaced attribute lives on the named class; a mutant never leaves a copy behind
    for name in list(MUTANTS) + list(UNREACHED):
        with applied(name):
            pass
        for owner, attr, original in _originals(name):
            assert original is not None, f"{name}: {attr} is not defined on {owner.__name__} itself"


def test_unknown_mutant_is_a_clear_error():
    with pytest.raises(KeyError, match="unknown mutant 'nope'; known mutants: unsent_expiry_ge"):
        with applied("nope"):
            pass


def test_list_names_every_mutant_and_why_some_are_unreached(capsys):
    assert main(["mutants", "--list"]) == 0
    out = capsys.readouterr().out
    for name in list(MUTANTS) + list(UNREACHED):
        assert f"{name}: " in out
    from properties.mutation.mutants import EQUIVALENT

    assert out.count("not reached by the world") == len(UNREACHED) - len(EQUIVALENT)
    assert out.count("equivalent in this client") == len(EQUIVALENT)


def test_mutant_names_and_targets():
    assert len(MUTANTS) >= 15
    assert not set(MUTANTS) & set(UNREACHED)
    for m in list(MUTANTS.values()) + list(UNREACHED.values()):
        assert m.target.startswith("impl.") and m.description and m.kind


# ---- every mutant changes its target's behaviour ---------------------------------------------
# Cheap unit-level checks where the target can be driven directly; the remaining mutants are
# shown to change behaviour by being killed (QUALITY below).

class _Req:
    def __init__(self, created, timeout=100):
        self.created_time_ms = created
        self.request_timeout_ms = timeout


def _expired(name, queues, now):
    from impl.consumer_network_client import UnsentRequests

    def run():
        u = UnsentRequests()
        for node, reqs in queues.items():
            for r in reqs:
                u.put(node, r)
        return [r.created_time_ms for r in u.remove_expired_requests(now)]

    return live_and_mutated(name, run)


def _unit_unsent_expiry_ge():
    original, mutated = _expired("unsent_expiry_ge", {1: [_Req(0)]}, 100)
    return original == [] and mutated == [0]


def _unit_unsent_expiry_no_node_stop():
    original, mutated = _expired("unsent_expiry_no_node_stop", {1: [_Req(50), _Req(-10)]}, 100)
    return original == [] and mutated == [-10]


def _unit_unsent_expiry_global_stop():
    original, mutated = _expired("unsent_expiry_global_stop", {1: [_Req(50)], 2: [_Req(-10)]}, 100)
    return original == [-10] and mutated == []


def _unit_completions_lifo():
    from impl.consumer_network_client import ConsumerNetworkClient

    class _H:
        def __init__(self, log, i):
            self.log, self.i = log, i

        def fire_completion(self):
            self.log.append(self.i)

    class _Client:
        def wakeup(self):
            pass

    def run():
        cnc = ConsumerNetworkClient.__new__(ConsumerNetworkClient)
        log = []
        cnc.pending_completion = deque([_H(log, 1), _H(log, 2)])
        cnc.client = _Client()
        cnc._fire_pending_completed_requests()
        return log

    live, mutated = live_and_mutated("completions_lifo", run)
    return live == [1, 2] and mutated == [2, 1]


def _listener_calls(name, fail):
    from impl.future import FunctionListener, RequestFuture

    def run():
        calls = []
        f = RequestFuture()
        f.add_listener(FunctionListener(lambda v: calls.append("a"), lambda e: calls.append("a")))
        f.raise_(RuntimeError("x")) if fail else f.complete(1)
        f.add_listener(FunctionListener(lambda v: calls.append("b"), lambda e: calls.append("b")))
        return calls

    return live_and_mutated(name, run)


def _unit_future_listeners_refire():
    return all(_listener_calls("future_listeners_refire", fail) == (["a", "b"], ["a", "a", "b"]) for fail in (False, True))


def _unit_future_late_listener_dropped():
    return _listener_calls("future_late_listener_dropped", False) == (["a", "b"], ["a"])


def _unit_send_before_previous_completed():
    from impl.network.network_client import InFlightRequests

    class _R:
        destination, send_completed = 1, False

    def run():
        q = InFlightRequests(5)
        q.add(_R())
        return q.can_send_more(1)

    live, mutated = live_and_mutated("send_before_previous_completed", run)
    return live is False and mutated is True


def _unit_inflight_timeout_from_creation():
    from impl.network.network_client import InFlightRequests

    class _R:  # an InFlightRequest's times: created at 0, sent at 50
        destination, request_timeout_ms = 1, 100
        created_time_ms, send_time_ms = 0, 50

    def run():
        q = InFlightRequests(5)
        q.add(_R())
        return q.nodes_with_timed_out_requests(120)

    live, mutated = live_and_mutated("inflight_timeout_from_creation", run)
    return live == [] and mutated == [1]


def _unit_inflight_timeout_first_request_order():
    from impl.network.network_client import InFlightRequests

    class _R:  # a request sent at 0 with a 100 ms timeout
        created_time_ms = send_time_ms = 0
        request_timeout_ms = 100

        def __init__(self, destination):
            self.destination = destination

    def run():
        q = InFlightRequests(5)
        q.add(_R(2147483647))  # the coordinator's connection got its request first
        q.add(_R(1))
        return q.nodes_with_timed_out_requests(120)

    # Kafka's HashMap iterates "1" (bucket 1) before "2147483647" (bucket 2 of 16)
    live, mutated = live_and_mutated("inflight_timeout_first_request_order", run)
    return live == [1, 2147483647] and mutated == [2147483647, 1]


def _can_connect(name, now):
    import random

    from impl.network.network_client import ClusterConnectionStates

    def run():
        states = ClusterConnectionStates(50, 50, 10_000, 10_000, random.Random(0), 0.0, 0.0)
        states.connecting(7, 0, "h")
        states.disconnected(7, 0)
        return states.can_connect(7, now)

    return live_and_mutated(name, run)


def _unit_reconnect_ignores_backoff():
    return _can_connect("reconnect_ignores_backoff", 10) == (False, True)


def _unit_reconnect_backoff_gt():
    return _can_connect("reconnect_backoff_gt", 50) == (True, False)


def _group(members=("a", "b")):
    from impl.server.group_metadata import GroupMetadata, MemberMetadata

    g = GroupMetadata("g")
    for m in members:
        g.add(MemberMetadata(m, None, "c", "h", 1000, 1000, "consumer", [("range", b"")]), callback=lambda r: None)
    return g


def _unit_generation_not_bumped():
    from impl.server.group_metadata import PREPARING_REBALANCE

    def run():
        g = _group()
        g.transition_to(PREPARING_REBALANCE)
        g.init_next_generation(0)
        return g.generation_id

    live, mutated = live_and_mutated("generation_not_bumped", run)
    return live == 1 and mutated == 0


def _unit_leader_not_repicked():
    def run():
        g = _group()
        g.remove("a")
        return g.leader_id

    live, mutated = live_and_mutated("leader_not_repicked", run)
    return live == "b" and mutated == "a"


def _unit_join_ignores_pending_members():
    def run():
        g = _group(("a",))
        g.add_pending_member("p")
        return g.has_all_members_joined()

    live, mutated = live_and_mutated("join_ignores_pending_members", run)
    return live is False and mutated is True


def _unit_join_timeout_not_extended():
    from impl.coordinator.abstract_coordinator import AbstractCoordinator, GroupRebalanceConfig

    class _Client:
        def default_request_timeout_ms(self):
            return 8000

    def run():
        c = AbstractCoordinator.__new__(AbstractCoordinator)
        c.client = _Client()
        c.rebalance_config = GroupRebalanceConfig("g", rebalance_timeout_ms=10_000)
        return c.join_group_request_timeout_ms()

    live, mutated = live_and_mutated("join_timeout_not_extended", run)
    return live == 15_000 and mutated == 8000


def _harness():
    from tests.helpers.coordinator_harness import Harness

    return Harness()


def _both(name, run):
    return live_and_mutated(name, run)


def _unit_sync_accepts_stale_generation():
    from impl.errors import Errors

    def run():
        h = _harness()
        ids, generation, _ = h.completing_group(2)
        return [r.error_code for r in h.sync(ids[1], generation - 1)]

    # the stale SyncGroup is refused; the mutant parks it as if it were current
    return _both("sync_accepts_stale_generation", run) == ([Errors.ILLEGAL_GENERATION.value], [])


def _commit_error(name, who):
    def run():
        h = _harness()
        ids, generation = h.stable_group(2)
        member, gen = who(ids, generation)
        try:
            return next(iter(h.commit(member, gen).values())).name
        except KeyError:  # the mutant looks the unknown member up
            return "KeyError"

    return _both(name, run)


def _unit_commit_accepts_stale_generation():
    return _commit_error("commit_accepts_stale_generation", lambda ids, g: (ids[1], g + 1)) == ("ILLEGAL_GENERATION", "NONE")


def _unit_commit_accepts_unknown_member():
    return _commit_error("commit_accepts_unknown_member", lambda ids, g: ("nobody", g)) == ("UNKNOWN_MEMBER_ID", "KeyError")


def _unit_pending_members_never_expire():
    def run():
        h = _harness()
        h.stable_group(1)
        t = h.now()
        pending = h.join("", version=4, client_id="p", session=10000)[0].member_id
        h.advance_to(t + 10000)
        return h.group().is_pending_member(pending)

    return _both("pending_members_never_expire", run) == (False, True)


def _unit_session_expiry_early():
    def run():
        h = _harness()
        ids, generation = h.stable_group(1)
        t = h.now()
        h.heartbeat(ids[0], generation)
        h.advance_to(t + 10000 - 1)  # the session timeout is 10 s
        return h.group().has(ids[0])

    return _both("session_expiry_early", run) == (True, False)


def _unit_session_expiry_ignored():
    def run():
        h = _harness()
        ids, generation = h.stable_group(1)
        h.advance(10000 + 1)  # past the 10 s session timeout, no heartbeat
        return h.group().has(ids[0])

    return _both("session_expiry_ignored", run) == (False, True)


def _unit_follower_sync_rejected():
    from impl.errors import Errors

    def run():
        h = _harness()
        ids, generation, _ = h.completing_group(2)
        return [r.error_code for r in h.sync(ids[1], generation)]  # the follower, before the leader

    # the follower's SyncGroup waits for the leader's assignment; the mutant refuses it at once
    return _both("follower_sync_rejected", run) == ([], [Errors.REBALANCE_IN_PROGRESS.value])


def _unit_non_rejoined_kept():
    def run():
        h = _harness()
        ids, generation = h.stable_group(2, session=60000)
        h.join(ids[0], session=60000)  # the leader rejoins; the follower does not
        h.advance(30000)  # the rebalance timeout: the join phase completes
        return h.group().has(ids[1])

    return _both("non_rejoined_kept", run) == (False, True)


UNIT = {name[len("_unit_"):]: fn for name, fn in globals().items() if name.startswith("_unit_")}


@pytest.mark.parametrize("name", sorted(UNIT))
def test_mutant_changes_its_target_directly(name):
    assert name in MUTANTS or name in UNREACHED
    assert UNIT[name]()


# The mutants the quality tier kills, the interleavings it takes (measured with Search(): seed i,
# fault profile PROFILES[i % 3]) and the property that catches them.
QUALITY = {
    "disconnect_keeps_unsent": (27, "impl-matches-model"),
    "disconnect_fails_in_place": (27, "impl-matches-model"),
    "pending_disconnect_not_disconnected": (1, "impl-matches-model"),
    "inflight_timeout_ignored": (1, "impl-matches-model"),
    "inflight_timeout_from_creation": (1, "impl-matches-model"),
    "send_before_previous_completed": (3, "impl-matches-model"),
    "reconnect_ignores_backoff": (1, "impl-matches-model"),
    "stale_heartbeat_resets": (10, "impl-matches-model"),
    "heartbeat_while_unjoined": (1, "impl-matches-model"),
    "join_timeout_not_extended": (9, "impl-matches-model"),
    "commit_without_generation": (4, "impl-matches-model"),
    "generation_not_bumped": (1, "impl-matches-model"),
    "commit_accepts_unknown_member": (10, "impl-matches-model"),
    "leader_not_repicked": (1, "impl-matches-model"),
    "heartbeat_none_while_preparing": (2, "impl-matches-model"),
    "unsent_expiry_ge": (203, "impl-matches-model"),
    "join_ignores_pending_members": (73, "impl-matches-model"),
    "pending_members_never_expire": (31, "impl-matches-model"),
    "future_late_listener_dropped": (62, "impl-matches-model"),
    "non_rejoined_kept": (24, "impl-matches-model"),  # searched in the LONG_SESSION world
}


def test_a_mutant_in_another_regime_is_searched_in_a_world_that_reaches_it():
    search = Search()
    assert search.world("non_rejoined_kept").session_timeout_ms > search.world("non_rejoined_kept").rebalance_timeout_ms
    assert search.world("generation_not_bumped") == search.config


# The mutants the default campaign's search kills that the fixed-world QUALITY list does not hold
# (those from public bug histories, properties/mutation/history.py, and the two stale-generation
# mutants the late handling of a broken connection's requests reaches): the interleavings it takes
# (measured with Search(world="swarm"): seed i in its swarm world, as `groupcheck mutants` and the
# main job search) and the property that catches them.
SWARM_KILLS = {
    "sync_accepts_stale_generation": (547, "impl-matches-model"),
    "commit_accepts_stale_generation": (93, "impl-matches-model"),
    "heartbeat_rebalance_no_rejoin": (2, "impl-matches-model"),
    "heartbeat_rechecks_state_after_poll": (4, "impl-matches-model"),
    "subscription_change_not_rejoined": (24, "impl-matches-model"),
    "assignment_not_matched_to_subscription": (206, "impl-matches-model"),
    "leader_assigns_without_new_topic_metadata": (24, "impl-matches-model"),
    "join_complete_without_generation_check": (20, "impl-matches-model"),
    "coordinator_disconnect_unseen": (1, "impl-matches-model"),
    "join_without_rebalance_timeout": (1, "impl-matches-model"),
    "commit_fencing_ignored": (15, "impl-matches-model"),
    "join_group_not_memoised": (1, "one-join-or-sync-in-flight"),
    "heartbeat_error_drops_coordinator": (1, "impl-matches-model"),
    "sync_rebalance_in_progress_resets": (2, "impl-matches-model"),
    "member_id_required_not_adopted": (1, "impl-matches-model"),
    "retriable_join_failure_resets_member": (2, "impl-matches-model"),
    "heartbeat_disabled_until_stable": (1, "impl-matches-model"),
    "heartbeat_lookup_without_backoff": (2, "impl-matches-model"),
    "failed_lookup_not_cleared": (1, "impl-matches-model"),
    "no_pending_sync_deadline": (5, "impl-matches-model"),
    "pending_sync_expiry_keeps_members": (5, "impl-matches-model"),
    "parked_members_expire": (45, "impl-matches-model"),
    "v0_rebalance_timeout_not_defaulted": (20, "impl-matches-model"),
    "generation_reset_join_future_kept": (20, "impl-no-hang"),
    "pending_member_removal_no_join_check": (556, "impl-matches-model"),
    "ownership_checked_before_loading": (338, "impl-matches-model"),
    "heartbeat_not_coordinator_unhandled": (139, "impl-matches-model"),
    "unsent_failed_every_poll": (2, "impl-matches-model"),
    "follower_sync_answered_at_once": (1, "impl-matches-model"),
    "member_removal_no_join_check": (1, "impl-matches-model"),
    "expired_member_not_checked": (5, "impl-no-crash"),
    "reconnect_backoff_from_attempt": (1, "impl-matches-model"),
    "disconnect_keeps_coordinator": (2, "impl-matches-model"),
    "eager_revoke_keeps_assignment": (2, "impl-matches-model"),
    "heartbeat_rebalance_not_liveness": (29, "impl-matches-model"),
    "no_brokers_lookup_memoised": (90, "impl-matches-model"),
    "join_unknown_member_keeps_member_id": (14, "impl-matches-model"),
    "metadata_change_not_watched": (318, "impl-matches-model"),
    "follower_watches_metadata": (75, "impl-matches-model"),
    "oversized_metadata_accepted": (1, "impl-matches-model"),
    "oversized_fails_whole_commit": (1, "impl-matches-model"),
    "poll_timeout_from_disabled_heartbeat": (1, "impl-no-busy-loop"),
    "heartbeat_illegal_generation_resets_member_id": (128, "impl-matches-model"),
    "heartbeat_state_before_generation": (280, "impl-matches-model"),
    "new_members_kept_alive": (3, "impl-matches-model"),
    "static_replacement_not_persisted": (56, "impl-matches-model"),
    "static_replaced_only_when_stable": (3, "impl-no-crash"),
    "heartbeat_fenced_rejoins": (28, "impl-matches-model"),
    "pending_member_leave_rejected": (781, "impl-matches-model"),
    "reset_without_join_prepare": (5, "impl-matches-model"),
    # issue 37: only the swarm with more twins kills it (the swarm of 0af15c8 left it alive after 2,000)
    "commit_fenced_not_fatal": (260, "impl-matches-model"),
    # issue 37: only a process redeployed with other settings reaches them (the redeploy event)
    "rejoin_keeps_session_timeout": (776, "impl-matches-model"),
    "rejoin_keeps_rebalance_timeout": (1218, "impl-matches-model"),
    "static_replacement_ignores_protocols": (128, "impl-no-crash"),
    # issue 37: unreached until the settle phase skipped idle calls (2026-11-30); seed 1357's walk then reaches it
    "static_replacement_expiry_with_new_timeout": (1358, "impl-matches-model"),
    # issue 37: only a group deleted while a member still believes itself in it reaches them
    "commit_to_unknown_group_creates_it": (91, "impl-matches-model"),
    "deleted_group_record_kept": (91, "generation-advances-by-one"),
    # issue 37: only an application blocked in commitSync reaches them (the commit_sync event)
    "commit_sync_waits_past_its_timer": (89, "impl-matches-model"),
    "commit_sync_retries_without_backoff": (867, "impl-matches-model"),
}


def test_every_mutant_is_shown_to_change_behaviour():
    """By a direct unit check or by being killed in the quality tier (or both)."""
    missing = set(MUTANTS) - set(UNIT) - set(QUALITY) - set(SWARM_KILLS)
    assert not missing, f"no behaviour check for {sorted(missing)}"


def test_history_mutants_cite_their_bug_and_change_one_decision():
    from properties.mutation.history import HISTORY_DEFS

    assert len(HISTORY_DEFS) >= 40  # issue 14: at least 40 realistic mutants from bug histories
    for name, description, target, kind, edits, source in HISTORY_DEFS:
        assert ALL[name].source == source and any(tag in source for tag in ("KAFKA-", "#")), name
        assert name in SWARM_KILLS or name in UNREACHED, f"{name}: neither killed nor said why not"


@pytest.mark.quality
@pytest.mark.parametrize("name", sorted(SWARM_KILLS))
def test_mutant_is_killed_by_the_default_campaign(name):
    """The default campaign kills it: from interleaving 0 for the quick kills; a late kill (the
    measured first kill beyond LATE_KILL) is checked from a few interleavings before it, since
    interleaving i is seed i whatever ran before (the whole hunt took up to 4 min a mutant)."""
    interleavings, prop = SWARM_KILLS[name]
    if interleavings <= LATE_KILL:
        outcome = Search(world="swarm").hunt(name, budget=max(40, 2 * interleavings))
    else:
        outcome = Search(world="swarm").hunt(name, budget=40, first=interleavings - 10)
    assert outcome.killed, f"{name} survived {outcome.interleavings} interleavings"
    assert outcome.property == prop, outcome.message


#: a first kill later than this many interleavings is checked near where it was measured
LATE_KILL = 150


def test_a_late_kill_is_checked_where_it_was_measured():
    """hunt(first=...) runs interleaving *first* first: the kill of a mutant measured at interleaving
    15 (seed 14) is found on the third interleaving from 12."""
    search = Search(world="swarm")
    near = search.hunt("commit_fencing_ignored", budget=5, first=12)
    assert near.killed and near.interleavings == 3 and near.seed == 14


@pytest.fixture(scope="module")
def search():
    return Search()


@pytest.mark.quality
@pytest.mark.parametrize("name", sorted(QUALITY))
def test_quality_mutant_is_killed(search, name):
    interleavings, prop = QUALITY[name]
    # the budget leaves room for the model and the simulated world to change under the test
    outcome = search.hunt(name, budget=max(40, 2 * interleavings))
    assert outcome.killed, f"{name} survived {outcome.interleavings} interleavings"
    assert outcome.property == prop, outcome.message


@pytest.mark.quality
@pytest.mark.parametrize("name", sorted(QUALITY) + sorted(SWARM_KILLS))
def test_the_comparison_of_what_events_touched_kills_what_the_full_one_kills(name, monkeypatch):
    """Issue 37: the differential compares after each event only what the event touched (with a
    full comparison every FULL_EVERY events and at the end). On each mutant's measured killing
    interleaving it reports the same property as comparing everything after every event."""
    from properties.mutation.mutants import _verdict
    from properties.systems import differential

    interleavings, prop = QUALITY[name] if name in QUALITY else SWARM_KILLS[name]
    search = Search() if name in QUALITY else Search(world="swarm")
    incremental = differential.FULL_EVERY
    monkeypatch.setattr(differential, "FULL_EVERY", 1)  # find the kill comparing everything after every event
    first = 0 if interleavings <= LATE_KILL else interleavings - 10
    outcome = search.hunt(name, budget=max(40, 2 * interleavings) if first == 0 else 40, first=first)
    assert outcome.killed and outcome.property == prop, outcome
    case = search.case(name, first + outcome.interleavings - 1)
    monkeypatch.setattr(differential, "FULL_EVERY", incremental)
    with applied(name):
        assert _verdict(case)[0] == prop


# ---- CLI -----------------------------------------------------------------------------------

def test_cli_json_prints_the_documented_fields(capsys):
    status = main(["mutants", "--only", "generation_not_bumped", "--only", "leader_not_repicked", "--budget", "3", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert [o["name"] for o in out] == ["generation_not_bumped", "leader_not_repicked"]
    first = {"generation_not_bumped": 1, "leader_not_repicked": 1}  # measured: reports/mutants-latest.md
    for o in out:
        assert {"name", "killed", "interleavings", "seconds", "property"} <= set(o)
        assert o["killed"] is True and o["interleavings"] == first[o["name"]] and o["property"] == "impl-matches-model"
        assert isinstance(o["seconds"], float)


def test_cli_survivor_exits_1(capsys):
    # one fault-free interleaving is not enough to reach a pending member's expiry
    status = main(["mutants", "--world", "fixed", "--only", "pending_members_never_expire", "--budget", "1", "--faults", "none", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 1 and out[0]["killed"] is False and out[0]["property"] is None and out[0]["interleavings"] == 1


@pytest.mark.parametrize("argv, text", [
    (["--only", "nope"], "unknown mutant 'nope'"),
    (["--budget", "0"], "--budget must be >= 1"),
    (["--budget", "x"], "--budget must be an integer"),
    (["--faults", "some"], "--faults must be one of none, network, all"),
])
def test_cli_usage_errors(capsys, argv, text):
    assert main(["mutants", *argv]) == 2
    err = capsys.readouterr().err
    assert text in err and "Traceback" not in err


def test_the_report_says_which_search_ran():
    import argparse

    outcome = mutants.Outcome("generation_not_bumped", True, 1, 0.1, "impl-matches-model", 0, "all")
    plain = argparse.Namespace(world="swarm", search="plain", budget=5, faults=[])
    guided = argparse.Namespace(world="swarm", search="guided", budget=5, faults=[])
    assert "interleaving i = seed i" in mutants.markdown([outcome], plain, 1.0)
    text = mutants.markdown([outcome], guided, 1.0)
    assert "--search guided" in text and "interleaving i = seed i" not in text


def test_a_guided_hunt_breeds_children_after_the_first_round(monkeypatch):
    """A guided hunt runs the corpus's specs: with rounds of 6 and 2 children, the first round is
    fresh and interleavings 10 and 11 are children of the first round's (their cases carry reseed
    points); the others take fresh seeds in order."""
    from properties.explore import guided

    seen = []
    original = Search.case

    def case(self, name, i, spec=None):
        seen.append(spec)
        return original(self, name, i, spec)

    monkeypatch.setattr(Search, "case", case)
    monkeypatch.setattr(guided.Corpus, "__init__", _small_rounds)
    # a survivor of 2,000 interleavings, so all twelve run
    outcome = Search(world="swarm", search="guided").hunt("pending_member_leave_rejected", budget=12)
    assert not outcome.killed and len(seen) == 12
    assert [s.interleaving for s in seen if s.parent is not None] == [10, 11]
    assert [s.world_seed for s in seen if s.parent is None] == list(range(10))
    assert all(s.reseed and s.parent < 6 for s in seen if s.parent is not None)


def _small_rounds(self, start=0, round_size=6, children=2):
    self.start, self.round_size, self.children = start, 6, 2
    self.known, self.parents = set(), []


def test_a_mutant_that_no_longer_applies_is_one_clear_error(tmp_path, capsys, monkeypatch):
    """A mutant whose text impl/ no longer has stops a campaign with one message naming it, exit 2,
    no traceback (its edits are applied where the campaign starts)."""
    mutant = mutants.get("generation_not_bumped")
    stale = attrs.evolve(mutant, edits=[("self.generation_id += 2", "pass  # MUTANT: never there")])
    monkeypatch.setitem(mutants.MUTANTS, "generation_not_bumped", stale)
    monkeypatch.setitem(mutants.ALL, "generation_not_bumped", stale)
    code = main(["campaign", "--local", "--interleavings", "1", "--mutant", "generation_not_bumped",
                 "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2
    assert "generation_not_bumped" in err and "self.generation_id += 2" in err and "Traceback" not in err
