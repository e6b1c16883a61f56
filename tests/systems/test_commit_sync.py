"""commitSync with a timeout (issue 37's "`commitSync` whose timer runs out while its request is still
pending"): the ``commit_sync`` event in both worlds — the application blocked in
ConsumerCoordinator.commitOffsetsSync, each later poll one pass of its wait — a timer that runs out
with the OffsetCommit in flight and the answer handled later, a retriable failure's backoff, and
the mutants of impl/ only this reaches."""

from __future__ import annotations

import pytest

from model.config import Config
from model.errors import Errors
from model.world import initial_world, step
from properties.mutation.mutants import applied
from tests.helpers.sides import Sides

ONE = Config(clients=1, brokers=1, partitions=2)
TWO = Config(clients=2, brokers=1, partitions=2, assignors=("range",))
COORDINATOR = 1  # the coordinator's slot with one broker (slots: brokers, then the coordinator's)


def _done(sides) -> list:
    return [(e.outcome, e.in_flight) for e in sides.log if e[0] == "commit_sync_done"]


def test_a_commit_sync_within_its_timeout_commits_and_blocks_the_application_meanwhile():
    sides = Sides(ONE).settle()
    sides.apply(("commit_sync", 0, 5000, 0))
    assert sides.world.clients[0].sync_commit is not None and sides.diff.sim.commit_syncs[0] is not None
    for call in (("commit", 0, 0), ("close", 0, 0), ("pause", 0, 100, 0), ("commit_sync", 0, 5000, 0)):
        assert step(sides.world, call)[0] is sides.world, call  # blocked in commitSync
    sides.quiet(50, until=lambda w: w.clients[0].sync_commit is None)
    assert sides.problem is None, sides.problem
    assert _done(sides) == [("committed", False)] and sides.world.committed == ((0, 1), (1, 1))
    assert sides.diff.sim.commit_syncs[0] is None and sides.diff.sim.committed() == sides.world.committed
    assert step(sides.world, ("commit", 0, 0))[0] is not sides.world  # the application is free again


def test_a_timer_that_runs_out_leaves_the_offset_commit_in_flight_and_its_answer_to_a_later_poll():
    """A 1 ms timer: the next poll, a millisecond later, finds it expired before the answer came
    (TimeoutException, which the application catches); the OffsetCommit goes on and commits, and a
    later poll reads its answer."""
    sides = Sides(ONE).settle()
    sides.apply(("commit_sync", 0, 1, 0), ("tick", 1, 0), ("poll", 0, 0))
    assert sides.problem is None, sides.problem
    assert _done(sides) == [("timeout", True)] and sides.world.clients[0].sync_commit is None
    assert sides.checker.coverage["commit-sync-timed-out"] == 1
    assert any(e[0] == "send" and e.api == "OffsetCommit" for e in sides.log)
    sides.quiet(50, until=lambda w: any(e[0] == "answered" and e.api == "OffsetCommit" for e in sides.log))
    assert sides.problem is None, sides.problem
    assert sides.world.committed == ((0, 1), (1, 1))
    answered = [e for e in sides.log if e[0] == "answered" and e.api == "OffsetCommit"]
    assert [e.error for e in answered] == [Errors.NONE]


def test_a_late_answer_to_a_timed_out_commit_sync_still_acts():
    """The OffsetCommit of a commitSync that timed out reaches its broker after the group's
    coordinator moved: NOT_COORDINATOR, and the answer, read by a later poll, marks the coordinator
    unknown (OffsetCommitResponseHandler) although nobody waits for it any more — on both sides."""
    sides = Sides(Config(clients=1, brokers=2, partitions=2)).settle()
    old = sides.world.leader
    slot = 2 + sides.world.clients[0].coordinator  # slots: the brokers, then the coordinator
    sides.apply(("commit_sync", 0, 1, 0), ("tick", 1, 0), ("poll", 0, 0))
    assert _done(sides) == [("timeout", True)]
    sides.apply(("failover", 1 - old, 0), ("deliver", 0, slot, True, 0), ("tick", 1, 0), ("deliver", 0, slot, False, 0),
                ("poll", 0, 0))
    assert sides.problem is None, sides.problem
    answered = [e for e in sides.log if e[0] == "answered" and e.api == "OffsetCommit"]
    assert [e.error for e in answered] == [Errors.NOT_COORDINATOR]
    assert any(e[0] == "coordinator_unknown" and e.c == 0 and e.cause == "NOT_COORDINATOR" for e in sides.log)
    sides.settle()
    assert sides.problem is None, sides.problem
    assert sides.world.clients[0].coordinator == 1 - old


def test_a_retriable_failure_sleeps_the_retry_backoff_then_sends_again():
    """The OffsetCommit's connection breaks (DisconnectException, retriable): commitSync sleeps
    retry.backoff.ms, looks the coordinator up again and commits within its 5 s."""
    sides = Sides(ONE).settle()
    sides.apply(("commit_sync", 0, 5000, 0), ("disconnect", 0, COORDINATOR, 0, 0), ("poll", 0, 0))
    sync = sides.world.clients[0].sync_commit
    assert sync is not None and sync.attempts == 1 and sync.sleep_until_ms == sides.world.now + ONE.retry_backoff_ms
    sides.apply(("tick", ONE.retry_backoff_ms - 1, 0), ("poll", 0, 0))
    assert sides.world.clients[0].sync_commit.future is None  # still asleep: nothing sent
    sides.quiet(100, until=lambda w: w.clients[0].sync_commit is None)
    assert sides.problem is None, sides.problem
    assert _done(sides) == [("committed", False)] and sides.world.committed == ((0, 1), (1, 1))


@pytest.mark.parametrize("mutant, run", [
    ("commit_sync_waits_past_its_timer", lambda sides: sides.apply(
        ("commit_sync", 0, 1, 0), ("tick", 1, 0), ("poll", 0, 0), ("commit", 0, 0))),
    ("commit_sync_retries_without_backoff", lambda sides: sides.apply(
        ("commit_sync", 0, 5000, 0), ("disconnect", 0, COORDINATOR, 0, 0), ("poll", 0, 0)).quiet(100)),
])
def test_the_commit_sync_mutants_are_caught(mutant, run):
    with applied(mutant):
        sides = Sides(ONE).settle()
        run(sides)
    assert sides.problem is not None and "impl-matches-model" in str(sides.problem), sides.problem
    sides = Sides(ONE).settle()
    run(sides)
    assert sides.problem is None, sides.problem


def test_a_commit_syncs_coordinator_lookup_follows_the_models_choice_of_node():
    """Regression (the clients mix's seed 210, shrunk from 248 to 63 events): a commitSync with the
    coordinator unknown looks it up at the least loaded node, which Kafka picks from a random offset
    (NetworkClient.leastLoadedNode); two brokers were ready. The implementation's world steers that
    scan to the model's choice only for the events that run the consumer's code, and commit_sync was
    not one of them: the FindCoordinator left on another connection."""
    import json
    from pathlib import Path

    from properties.campaign.counterexample import config_from_dict
    from properties.systems.differential import compare

    document = json.loads((Path(__file__).parent / "data" / "commit_sync_lookup_steered.json").read_text())
    config, schedule = config_from_dict(document["config"]), [tuple(e) for e in document["schedule"]]
    assert schedule[-1][0] == "commit_sync"
    world = initial_world(config)
    for event in schedule[:-1]:
        world = step(world, event)[0]
    log = step(world, schedule[-1])[1]
    assert [len(e.candidates) for e in log if e[0] == "choice" and e.kind == "least_loaded"] == [2]
    assert compare(config, schedule, document["seed"]).divergence is None


def test_a_late_fenced_answer_to_a_timed_out_commit_sync_does_not_fence_the_consumer():
    """Regression (the clean 100,000 of 99b79b7: seeds 93,449 and two more, shrunk to 40 events; the
    model was wrong): a static member's commitSync times out with its OffsetCommit in flight; the
    answer, FENCED_INSTANCE_ID (a twin holds the instance), is read later by the heartbeat thread.
    The model set asyncCommitFenced and the next poll threw it; but that flag is set by commitAsync's
    listener (ConsumerCoordinator.doCommitOffsetsAsync: ``if (e instanceof
    FencedInstanceIdException) asyncCommitFenced.set(true)``), which a commitSync's future does not
    have: the raised error is nobody's, and the consumer goes on (the implementation's behaviour)."""
    import json
    from pathlib import Path

    from properties.campaign.counterexample import config_from_dict
    from properties.systems.differential import compare

    document = json.loads((Path(__file__).parent / "data" / "commit_sync_late_fenced_answer.json").read_text())
    config, schedule = config_from_dict(document["config"]), [tuple(e) for e in document["schedule"]]
    world, log = initial_world(config), []
    for event in schedule:
        world, step_log = step(world, event)
        log += step_log
    assert [(e.api, e.error) for e in log if e[0] == "answered" and e.c == 4][-1] == ("OffsetCommit", Errors.FENCED_INSTANCE_ID)
    assert ("commit_sync_done", 4, "timeout", True) in log
    assert world.clients[4].live and not world.clients[4].commit_fenced
    assert compare(config, schedule, document["seed"]).divergence is None
