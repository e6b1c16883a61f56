"""The exhaustive search of tiny worlds (``groupcheck explore``): pinned state counts as a canary,
the same counts on Spark and under any PYTHONHASHSEED, counterexamples found and replayable, and
the transition tour of the implementation."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from properties.cli import main
from properties.campaign import explore as command
from properties import systems
from properties.explore.exhaustive import Bounds, _follows, explore, pick_for, tour
from properties.explore.exhaustive import outcomes, initial_state

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The two pinned worlds (docs/explore.md). A change to the model that changes what is
# reachable changes these numbers: look at why before updating them.
TINY = []  # groupcheck explore (2 clients, 1 broker, 2 partitions, no time, no faults, 1 commit each)
TIMED = ["--clients", "1", "--horizon-ms", "3000", "--faults", "1", "--fault-kinds", "drop,crash"]
TINY_COUNTS = (2565, 12538, 48)
TIMED_COUNTS = (19631, 46437, 30)
# A static member whose process dies and is redeployed with other settings (issue 37): 44 states
# with the crash alone (the process stays dead), 1,352 with the redeploy's six settings after it
REDEPLOYED = ["--clients", "1", "--horizon-ms", "0", "--faults", "2", "--fault-kinds", "crash,redeploy",
              "--set", "groupcheck.static.clients=1"]
REDEPLOYED_COUNTS = (1352, 3234, 34)
# A consumer that closes (its LeaveGroup empties the group), the Empty group deleted, a new process
# redeployed that creates the group again (issue 37): 4,004 states without the deletion
DELETED = ["--clients", "1", "--horizon-ms", "0", "--faults", "3", "--fault-kinds", "close,delete_group,redeploy",
           "--commits", "0"]
DELETED_COUNTS = (6355, 13603, 45)
# A consumer's application calls commitSync once, with any of its timeouts, in a second of time
# (issue 37): 129 states without it
COMMIT_SYNC = ["--clients", "1", "--horizon-ms", "1000", "--faults", "1", "--fault-kinds", "commit_sync", "--commits", "0"]
COMMIT_SYNC_COUNTS = (299, 784, 23)
# A consumer's application changes its subscription once (to the second topic, of one partition,
# or to both) in a second of time (issue 37): 129 states without it, as the commitSync world's
SUBSCRIBE = ["--clients", "1", "--horizon-ms", "1000", "--faults", "1", "--fault-kinds", "subscribe", "--commits", "0",
             "--set", "groupcheck.second.topic.partitions=1"]
SUBSCRIBE_COUNTS = (2484, 6763, 27)


def _explore_json(args, capsys) -> tuple[int, dict]:
    code = main(["explore", "--no-tour", "--json"] + args)
    return code, json.loads(capsys.readouterr().out)


def _counts(out: dict) -> tuple:
    return out["states"], out["transitions"], out["depth"]


def test_the_tiny_world_is_exhausted_with_its_pinned_counts(capsys):
    code, out = _explore_json(TINY, capsys)
    assert code == 0 and out["exhausted"] and out["counterexample"] is None
    assert _counts(out) == TINY_COUNTS
    assert sum(out["levels"]) == out["states"] and len(out["levels"]) == out["depth"] + 1


def test_the_timed_world_with_faults_is_exhausted_with_its_pinned_counts(capsys):
    code, out = _explore_json(TIMED, capsys)
    assert code == 0 and out["exhausted"]
    assert _counts(out) == TIMED_COUNTS


def test_the_redeployed_static_member_world_is_exhausted_with_its_pinned_counts(capsys):
    code, out = _explore_json(REDEPLOYED, capsys)
    assert code == 0 and out["exhausted"] and out["counterexample"] is None
    assert _counts(out) == REDEPLOYED_COUNTS
    without = REDEPLOYED[:REDEPLOYED.index("crash,redeploy")] + ["crash"] + REDEPLOYED[REDEPLOYED.index("crash,redeploy") + 1:]
    code, out = _explore_json(without, capsys)
    assert code == 0 and out["states"] == 44  # what the redeploys add is all the rest


def test_the_deleted_group_world_is_exhausted_with_its_pinned_counts(capsys):
    code, out = _explore_json(DELETED, capsys)
    assert code == 0 and out["exhausted"] and out["counterexample"] is None
    assert _counts(out) == DELETED_COUNTS
    code, out = _explore_json([a if a != "close,delete_group,redeploy" else "close,redeploy" for a in DELETED], capsys)
    assert code == 0 and out["states"] == 4004  # what the deletion adds: the group's second incarnation


def _exhausted_with_and_without_its_fault(args, counts, without_states, capsys) -> None:
    """The world of *args* (one fault of one kind) is exhausted with its pinned *counts*, and has
    *without_states* states with no fault: what the fault kind adds is all the rest."""
    code, out = _explore_json(args, capsys)
    assert code == 0 and out["exhausted"] and out["counterexample"] is None
    assert _counts(out) == counts
    faults = args.index("--faults") + 1
    assert args[faults] == "1"
    code, out = _explore_json(args[:faults] + ["0"] + args[faults + 1:], capsys)
    assert code == 0 and out["states"] == without_states


def test_the_commit_sync_world_is_exhausted_with_its_pinned_counts(capsys):
    _exhausted_with_and_without_its_fault(COMMIT_SYNC, COMMIT_SYNC_COUNTS, 129, capsys)


def _space_reaches(config, bounds, sometimes: str) -> bool:
    """Whether the space explored from *config* within *bounds* holds a transition that reaches the
    catalogue's sometimes property *sometimes* (depth first, stopping at the first; no transition
    violates anything on the way)."""
    from properties.explore.exhaustive import initial_state, state_key, successors

    frontier, seen = [initial_state(config, bounds)], set()
    while frontier:
        state = frontier.pop()
        for event, new, violation in successors(state, bounds):
            assert violation is None
            if new.checker.coverage[sometimes]:
                return True
            key = state_key(new)
            if key not in seen:
                seen.add(key)
                frontier.append(new)
    return False


def test_the_commit_sync_world_reaches_a_timeout_with_the_commit_in_flight():
    """The explored space holds the corner the event is for: a commitSync whose timer ran out with
    its OffsetCommit unanswered (the catalogue's commit-sync-timed-out)."""
    from properties.explore.exhaustive import Bounds

    bounds = Bounds(horizon_ms=1000, faults=1, fault_kinds=("commit_sync",), commits=0)
    assert _space_reaches(command.explore_config(clients=1), bounds, "commit-sync-timed-out")


def test_the_subscription_world_is_exhausted_with_its_pinned_counts(capsys):
    _exhausted_with_and_without_its_fault(SUBSCRIBE, SUBSCRIBE_COUNTS, 129, capsys)


def test_the_subscription_world_reaches_an_assignment_of_the_old_subscription():
    """The explored space holds the corner the event is for: the subscription changed while the
    JoinGroup was in flight, and the member refused the assignment of the topic it dropped (the
    catalogue's assignment-of-old-subscription)."""
    from properties.explore.exhaustive import Bounds

    config = command.explore_config(clients=1, settings=["groupcheck.second.topic.partitions=1"])
    bounds = Bounds(horizon_ms=1000, faults=1, fault_kinds=("subscribe",), commits=0)
    assert _space_reaches(config, bounds, "assignment-of-old-subscription")


def test_the_counts_do_not_depend_on_pythonhashseed():
    """State keys sort the world's sets (member ids are strings, whose set order follows the seed)."""
    runs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=ROOT)
        proc = subprocess.run([sys.executable, "-m", "properties.cli", "explore", "--no-tour", "--json"] + TIMED,
                              capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        runs.append((_counts(out), tuple(out["levels"])))
    assert runs[0] == runs[1] and runs[0][0] == TIMED_COUNTS


def test_spark_counts_the_same_states_level_by_level(capsys):
    local = _explore_json(TINY, capsys)[1]
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-m", "properties.cli", "explore", "--no-tour", "--json", "--master", "local[2]"],
                          capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    spark = json.loads(proc.stdout.strip().splitlines()[-1])
    assert spark["engine"] == "spark local[2]"
    assert (_counts(spark), spark["levels"], spark["exhausted"]) == (_counts(local), local["levels"], True)


def test_a_broken_model_is_caught_with_the_shortest_schedule_and_replays(tmp_path, capsys):
    out_file = tmp_path / "cx.json"
    code, out = _explore_json(["--broken", "generation_not_bumped", "--out", str(out_file)], capsys)
    assert code == 1 and not out["exhausted"]
    cx = out["counterexample"]
    assert cx["property"] == "generation-advances-by-one"
    assert cx["events"] == out["depth"] == 12  # BFS: no shorter schedule breaks it
    assert main(["replay", str(out_file), "--json"]) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["reproduced"] is True


def test_the_same_search_without_the_bug_finds_nothing(capsys):
    """The counterexample above is the variant's, not the search's."""
    code, out = _explore_json(["--max-depth", "12"], capsys)
    assert code == 0 and out["counterexample"] is None and not out["exhausted"]
    assert out["depth"] == 12


def test_max_depth_says_the_world_was_not_exhausted(capsys):
    assert main(["explore", "--no-tour", "--max-depth", "5"]) == 0
    assert "NOT exhausted: stopped at --max-depth 5" in capsys.readouterr().out


def test_the_tour_covers_the_graph_on_the_implementation():
    config = command.explore_config()
    bounds = Bounds(horizon_ms=0, faults=0, commits=1)
    graph = explore(config, bounds, keep_graph=True)
    t = tour(config, bounds, graph, lambda schedule, seed, on_step: systems.replay("impl", config, schedule, seed=seed, on_step=on_step))
    assert t.failure is None
    assert t.transitions == TINY_COUNTS[1]
    # every transition is taken, except those beyond a protocol-vote tie the implementation always
    # breaks the same way (GroupMetadata.select_protocol: the first candidate)
    assert set(t.departures) == {"protocol"}
    assert 0.5 * t.transitions < t.covered < t.transitions


@pytest.mark.parametrize("mutant, prop", [
    ("generation_not_bumped", "impl-matches-model"),
    ("commit_without_generation", "impl-matches-model"),
])
def test_the_tour_catches_a_mutated_implementation(mutant, prop, tmp_path, capsys):
    out_file = tmp_path / "tour.json"
    code = main(["explore", "--json", "--mutant", mutant, "--out", str(out_file)])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    failure = out["tour"]["failure"]
    assert failure["property"] == prop and failure["system"] == "impl"
    assert main(["replay", str(out_file), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["reproduced"] is True


@pytest.mark.parametrize("args, needle", [
    (["--fault-kinds", "drop,meteor"], "--fault-kinds must be among"),
    (["--mutant", "nope"], "--mutant must be one of"),
    (["--mutant", "generation_not_bumped", "--no-tour"], "needs the tour"),
    (["--clients", "0"], "--clients"),
    (["--set", "session.timeout.ms=abc"], "session.timeout.ms"),
])
def test_bad_arguments_get_one_line_and_exit_2(args, needle, capsys):
    assert main(["explore"] + args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 5).flatmap(lambda n: st.tuples(st.integers(0, n - 1), st.just(n))), max_size=6))
def test_a_pick_replays_any_sequence_of_choices(choices):
    choices = tuple(choices)
    assert _follows(pick_for(choices), choices)


def test_outcomes_enumerate_every_choice_of_a_step():
    """With two brokers the first poll's leastLoadedNode can pick either: both outcomes, each once,
    and the pick each outcome's event carries replays it exactly."""
    from model.world import step

    world = initial_state(command.explore_config(clients=1, brokers=2), Bounds()).world
    results = list(outcomes(world, ("poll", 0, 0)))
    made = [choices for choices, _, _ in results]
    assert len(made) == len(set(made)) == 2
    assert len({repr(new) for _, new, _ in results}) == 2
    for choices, new, _ in results:
        replayed, _ = step(world, ("poll", 0, pick_for(choices)))
        assert repr(replayed) == repr(new)


def test_the_heartbeat_thread_waits_retry_backoff_after_clearing_a_lookup():
    """Found by exploring a world whose coordinator connection can break: at one instant, heartbeat
    iteration after iteration cleared the FindCoordinator future and sent a new one (149,378 states
    by depth 60 where there are 1,704). Kafka's HeartbeatThread.run waits retry.backoff.ms after
    clearing it (AbstractCoordinator.this.wait(rebalanceConfig.retryBackoffMs))."""
    from model.world import step
    from properties.explore.exhaustive import expand_level, state_key

    config = command.explore_config(clients=1)
    bounds = Bounds(faults=1, fault_kinds=("disconnect",), commits=0)
    root = initial_state(config, bounds)
    frontier, seen, waiting = [(state_key(root), (), root)], set(), None
    for _ in range(40):
        found, _, bad, _ = expand_level(frontier, bounds, seen)
        assert bad is None
        waiting = next((s for _, s in found.values() if s.world.clients[0].heartbeat_wait_until_ms is not None), None)
        if waiting is not None:
            break
        seen.update(found)
        frontier = [(k, v[0], v[1]) for k, v in sorted(found.items())]
    assert waiting is not None, "no heartbeat iteration cleared a lookup within 40 levels"
    world = waiting.world
    client = world.clients[0]
    again, log = step(world, ("heartbeat", 0, 0))
    assert not [e for e in log if e[0] == "send"]
    assert again.clients[0].next_request_id == client.next_request_id
    later, _ = step(world, ("tick", config.retry_backoff_ms, 0))
    resumed, log = step(later, ("heartbeat", 0, 0))
    assert resumed.clients[0].heartbeat_wait_until_ms is None
