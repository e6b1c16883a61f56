"""Mutants shown equivalent in this client (properties/mutation/mutants.py, EQUIVALENT).

A survivor is *equivalent* when no run can tell it from the correct code: the one decision it
changes meets, wherever it is taken, a state in which both choices do the same. The argument is an
invariant of the implementation; these tests check that invariant after every event of swarm walks
(the implementation beside the model, as a campaign runs it), count how often the mutant's
decision point was reached (so the check is not vacuous), and show the checker catches a broken
invariant."""

from __future__ import annotations

import pytest

from impl.coordinator.abstract_coordinator import HeartbeatResponseHandler, MemberState
from impl.errors import Errors
from impl.future import RequestFuture, RequestFutureListener
from properties.explore import swarm
from properties.explore.walker import walk
from properties.systems.differential import Differential

# seeds of the default campaign, a few of every fault mix (the pausing and commit-loop mixes
# included): the first 3 of each mix among seeds 0..199
SEEDS_PER_MIX = 3


def _seeds() -> list:
    chosen: dict = {}
    for seed in range(200):
        seeds = chosen.setdefault(swarm.draw(seed).mix, [])
        if len(seeds) < SEEDS_PER_MIX:
            seeds.append(seed)
    return sorted(s for seeds in chosen.values() for s in seeds)


def _walk_impl(seed: int, on_step) -> None:
    world = swarm.draw(seed)
    companion = Differential(world.config, seed)

    def check(before, event, after, log):
        on_step(companion.sim, event)

    result = walk(seed, world.config, steps=world.steps, faults=world.faults, companion=companion, on_step=check,
                  hash_trace=False, **world.walk_options())
    assert result.verdict == "ok", (seed, result.violation)


# ---- heartbeat_rebalance_rejoins_while_completing ------------------------------------------------
# The mutant requests a rejoin (and fails the heartbeat future) when a Heartbeat is answered
# REBALANCE_IN_PROGRESS in any state; the correct handler (KAFKA-10134) does so only in STABLE and
# completes the future otherwise. Outside STABLE the rejoin flag is already set (invariant below:
# it is cleared only by a successful SyncGroup, which moves to STABLE, and every join starts with
# it set), and the heartbeat thread's listener treats a RebalanceInProgressException exactly as a
# success (receiveHeartbeat). What differs is the rejoin reason's text, which a JoinGroup carries
# only from v8 (KIP-800): the swarm's JoinGroup versions go to v5.

def rejoin_flag_violations(sim) -> list:
    """Consumers joining (PREPARING/COMPLETING_REBALANCE) without the rejoin flag set."""
    return [c for c, consumer in enumerate(sim.consumers)
            if consumer.coordinator.state in (MemberState.PREPARING_REBALANCE, MemberState.COMPLETING_REBALANCE)
            and not consumer.coordinator.rejoin_needed]


def test_a_joining_consumer_always_has_its_rejoin_flag_set(monkeypatch):
    reached = []
    original = HeartbeatResponseHandler.handle

    def handle(self, response, future):
        if Errors.for_code(response.error_code) is Errors.REBALANCE_IN_PROGRESS \
                and self.coordinator.state is not MemberState.STABLE:
            reached.append(self.coordinator.state)
        return original(self, response, future)

    monkeypatch.setattr(HeartbeatResponseHandler, "handle", handle)
    violations = []
    for seed in _seeds():
        _walk_impl(seed, lambda sim, event: violations.extend((event, c) for c in rejoin_flag_violations(sim)))
    assert not violations, violations[:5]
    assert reached, "no Heartbeat was answered REBALANCE_IN_PROGRESS outside STABLE: the check says nothing"


def test_the_rejoin_flag_check_catches_a_join_without_the_flag():
    from properties.systems.simworld import SimWorld
    from model.config import Config

    sim = SimWorld(Config(clients=2), 0)
    coordinator = sim.consumers[1].coordinator
    coordinator.state, coordinator.rejoin_needed = MemberState.COMPLETING_REBALANCE, False
    assert rejoin_flag_violations(sim) == [1]
    coordinator.rejoin_needed = True
    assert rejoin_flag_violations(sim) == []


# ---- future_listeners_refire ---------------------------------------------------------------------
# The mutant leaves a future's listeners registered after they fire, so a listener added to a
# future already complete re-fires the earlier ones. The client never adds a listener to a future
# that has fired one: every add_listener is on a future it has just made (send, compose, chain)
# or on the memoised FindCoordinator future, which commitAsync chains onto only after
# ensureCoordinatorReadyAsync left it incomplete (a completed one is cleared first).

class LateListeners:
    """Counts add_listener calls on a future that had a listener before and is already complete."""

    def __init__(self):
        self.count = 0
        self.first_on_completed = 0  # first listeners of futures already complete (the harmless form)
        self.added = {}  # id(future) -> (future, listeners added so far)

    def install(self, monkeypatch) -> None:
        original = RequestFuture.add_listener
        added = self.added

        def add_listener(future, listener):
            held, n = added.get(id(future), (future, 0))
            if future.is_done():
                if n:
                    self.count += 1
                else:
                    self.first_on_completed += 1
            added[id(future)] = (future, n + 1)
            return original(future, listener)

        monkeypatch.setattr(RequestFuture, "add_listener", add_listener)


class _Noop(RequestFutureListener):
    def on_success(self, value):
        pass

    def on_failure(self, e):
        pass


def test_no_listener_is_added_to_a_completed_future_that_had_listeners(monkeypatch):
    late = LateListeners()
    late.install(monkeypatch)
    for seed in _seeds():
        _walk_impl(seed, lambda sim, event: None)
        late.added.clear()
    assert late.count == 0
    # listeners were added to futures already complete (a failure made at once, as a send to an
    # unknown coordinator is): the mutant's decision point was met, in the harmless form only
    assert late.first_on_completed > 0


def test_the_late_listener_count_catches_a_second_listener_on_a_completed_future(monkeypatch):
    late = LateListeners()
    late.install(monkeypatch)
    future = RequestFuture()
    future.add_listener(_Noop())
    future.complete(None)
    assert late.count == 0
    future.add_listener(_Noop())
    assert late.count == 1


# ---- the report ------------------------------------------------------------------------------

def test_equivalent_mutants_are_unreached_ones_with_a_check_here():
    from pathlib import Path

    from properties.mutation.mutants import EQUIVALENT, UNREACHED, WHY_UNREACHED

    here = Path(__file__).read_text()
    for name in EQUIVALENT:
        assert name in UNREACHED and WHY_UNREACHED[name].startswith("equivalent in this client")
        assert f"# ---- {name} " in here, f"{name}: no invariant checked in this file"


def test_the_score_leaves_out_only_equivalent_survivors():
    from properties.mutation.mutants import Outcome, score_line, summary

    outcomes = [Outcome("a", True, 3, 1.0, "impl-matches-model"), Outcome("b", False, 10, 2.0, None),
                Outcome("future_listeners_refire", False, 10, 2.0, None)]
    s = summary(outcomes)
    assert (s["killed"], s["mutants"], s["equivalent"]) == (1, 3, ["future_listeners_refire"])
    assert score_line(s) == ("1/3 killed (33.3 %); 1/2 (50.0 %) of those a run can tell apart "
                             "(1 equivalent: future_listeners_refire)")
    # an equivalent mutant that is killed after all counts as killed, and no longer as equivalent
    s = summary([Outcome("future_listeners_refire", True, 4, 1.0, "impl-matches-model")])
    assert s["equivalent"] == [] and score_line(s) == "1/1 killed (100.0 %)"
