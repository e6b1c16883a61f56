"""Shrinking long schedules, and failure signatures that separate different bugs (issue 11, items 3
and 4).

Signatures: two unrelated model/implementation divergences — the one a 584,372-event walk of the
real implementation met (``groupcheck run --seed 1 --steps 100000000``) and one the mutant
``disconnect_fails_in_place`` causes — must not share a cluster name (a ``--baseline`` would call the
second "known"), while the seeds that hit one bug must.

Shrinking: a long failing schedule is shrunk in few replays. The budget is counted in replays (a
clock that advances one tick per look), so the test is deterministic and says nothing about
seconds; ``groupcheck bench --shrink`` reports the seconds.
"""

from __future__ import annotations

import itertools

import pytest

from model.config import Config
from properties.catalogue import Violation
from properties.explore.shrink import shape, shrink, signature
from properties.systems import replay, replayer, run, world_config

# the failure of `groupcheck run --seed 1 --steps 100000000` (step 584,371), and the same bug after
# shrinking (another member id, the same shape)
LONG_RUN = Violation("impl-matches-model", "after ('poll', 2, 0): client 2 member state: model 'PREPARING_REBALANCE', "
                                           "impl 'UNJOINED'; client 2 member id: model 'c2.2548', impl ''")
LONG_RUN_SHRUNK = Violation("impl-matches-model", "after ('poll', 2, 0): client 2 member state: model "
                                                  "'PREPARING_REBALANCE', impl 'UNJOINED'; client 2 member id: model 'c2.3', impl ''")


def _mutant_failures(name: str, seeds, want=lambda v: True, count: int = 1) -> list:
    """The first *count* failures under mutant *name* among *seeds* (40 events each) that *want* accepts."""
    from properties.mutation.mutants import applied

    found = []
    with applied(name):
        for seed in seeds:
            v = run("impl", seed, world_config("impl", "all", 3, 3, 6), steps=40).violation
            if v is not None and want(v):
                found.append(v)
                if len(found) == count:
                    return found
    raise AssertionError(f"fewer than {count} such failures under {name}")


def test_unrelated_divergences_get_different_signatures():
    # under disconnect_fails_in_place, seed 249 (today) ends with a heartbeat iteration after which
    # the model's client has a FindCoordinator on its way and the implementation's none (the mutant
    # failed it in place); an old signature ("differs in client N ...") named it and the long run's
    # divergence alike
    [mutant] = _mutant_failures("disconnect_fails_in_place", itertools.chain([249], range(600)),
                                lambda v: v.property == "impl-matches-model" and "to broker:" in v.message)
    assert signature(mutant) != signature(LONG_RUN)
    assert shape(LONG_RUN.message) == "after poll/heartbeat/commit: client N member state: model 'PREPARING_REBALANCE', impl 'UNJOINED'"


def test_seeds_of_one_bug_share_a_signature():
    assert signature(LONG_RUN) == signature(LONG_RUN_SHRUNK)
    # the same divergence of another client, after a heartbeat instead of a poll
    other = Violation("impl-matches-model", "after ('heartbeat', 0, 17): client 0 member state: model "
                                            "'PREPARING_REBALANCE', impl 'UNJOINED'")
    assert signature(other) == signature(LONG_RUN)
    # every failing seed of a mutant that breaks one thing: one cluster
    live = _mutant_failures("disconnect_fails_in_place", range(200), lambda v: " live:" in v.message, count=4)
    assert len({signature(v) for v in live}) == 1
    assert len({signature(v) for v in _mutant_failures("generation_not_bumped", range(50), count=4)}) == 1


def test_a_hang_is_named_by_its_event_not_by_where_the_watchdog_stopped_it():
    """A loop that never ends is interrupted wherever it happens to be when its time is up: two
    replays of one schedule stop at different lines (seen: impl/time.py in milliseconds, then
    abstract_coordinator.py in __repr__, for the same hanging poll). That line is not the bug."""
    def hang(where, event, limit="1", then="in"):
        return Violation("impl-no-hang", f"still running after {limit} s, at {where}, {then} {event}")

    a = hang("impl/time.py:70 in milliseconds", "('poll', 3, 0)")
    b = hang("impl/coordinator/abstract_coordinator.py:118 in __repr__", "('heartbeat', 1, 4)", limit="10")
    assert signature(a) == signature(b)
    assert shape(a.message) == "still running after N s, in poll/heartbeat/commit"
    assert signature(hang("the end of the step", "('tick', 100, 0)")) != signature(a)  # another kind of event
    assert signature(hang("?", "['poll', 0]", then="after")) == signature(a)  # KIP-848's form of the event
    # a crash is raised at one place, which stays in its name
    crash = "KeyError: 'assignment' raised at impl/{} in f, in ('poll', 3, 0)"
    assert signature(Violation("impl-no-crash", crash.format("x.py:12"))) != \
        signature(Violation("impl-no-crash", crash.format("y.py:12")))


def test_divergence_shape_keeps_states_and_drops_numbers():
    a = Violation("impl-matches-model", "after ('tick', 1000, 0): group generation: model 1, impl 0")
    b = Violation("impl-matches-model", "after ('tick', 8001, 7): group generation: model 3, impl 2; group protocol: model 'range', impl 'roundrobin'")
    c = Violation("impl-matches-model", "after ('tick', 1000, 0): group generation: model 1, impl 2")  # off the other way
    d = Violation("impl-matches-model", "after ('deliver', 0, 3, True, 0): group generation: model 1, impl 0")  # at the coordinator
    assert signature(a) == signature(b)
    assert len({signature(a), signature(c), signature(d)}) == 3
    one_sided = Violation("impl-matches-model", "('deliver', 2, 1, True, 0) was applied only by the model")
    assert shape(one_sided.message) == "deliver request applied only by the model"
    assert shape("('connect', 0, 3, 0) was applied only by the implementation") == "connect applied only by the implementation"


class _ReplayClock:
    """A clock that advances one unit per look: shrink looks once per candidate, so a budget of N
    "seconds" is about N replays, on any machine."""

    def __init__(self):
        self.ticks = itertools.count()

    def __call__(self) -> float:
        return float(next(self.ticks))


LONG_SEED = 33


@pytest.fixture(scope="module")
def long_failure():
    """A model walk with the expiry_ge variant (an unsent request expires when its wait equals the
    timeout) that fails only after 27,053 events (seed 33). The seed moves when a model change
    changes the walks: seed 1 until the heartbeat thread's retry.backoff.ms wait (its walk then
    needed 46 replays), seed 2 until disconnects could leave requests to be handled late (its walk
    then no longer shrank completely in 30), seed 6 until the settle phase skipped idle calls (its
    walk then failed after 8,179 events); seed 33's cuts to 3 events in 11 replays."""
    config = Config(clients=3, brokers=3, partitions=6, broken=frozenset({"expiry_ge"}))
    result = run("model", LONG_SEED, config, steps=1_000_000, eventually=False)
    assert result.violation is not None and result.steps > 10_000
    return config, result


def test_long_schedule_shrinks_in_few_replays(long_failure):
    config, result = long_failure
    shrunk = shrink(replayer("model", config, LONG_SEED), result.schedule, result.violation, budget_seconds=30,
                    clock=_ReplayClock())
    assert shrunk.reproduced and shrunk.complete  # within about 30 replays (plain halving needed 47)
    assert shrunk.original_events == result.steps > 10_000
    assert len(shrunk.schedule) < 10
    assert signature(shrunk.result.violation) == signature(result.violation)
    again = replay("model", config, shrunk.schedule, seed=LONG_SEED)
    assert again.violation is not None and signature(again.violation) == signature(result.violation)
    assert shrunk.replayed_events < 5 * result.steps  # the cost: a few replays of the whole length
    assert [p[0] for p in shrunk.phases][0] == "replay"


def test_shrunk_schedule_is_locally_minimal(long_failure):
    config, result = long_failure
    shrunk = shrink(replayer("model", config, LONG_SEED), result.schedule, result.violation, budget_seconds=5000,
                    clock=_ReplayClock())
    assert shrunk.complete
    sig = signature(result.violation)
    for i in range(len(shrunk.schedule)):  # removing any one event loses the failure or changes it
        r = replay("model", config, shrunk.schedule[:i] + shrunk.schedule[i + 1:], seed=LONG_SEED)
        assert r.violation is None or signature(r.violation) != sig or len(r.schedule) >= len(shrunk.schedule)


def test_budget_counts_and_result_says_it_ran_out(long_failure):
    config, result = long_failure
    shrunk = shrink(replayer("model", config, LONG_SEED), result.schedule, result.violation, budget_seconds=3,
                    clock=_ReplayClock())
    assert not shrunk.complete and shrunk.replays <= 4
    r = replay("model", config, shrunk.schedule, seed=LONG_SEED)  # whatever it kept still fails the same way
    assert r.violation is not None and signature(r.violation) == signature(result.violation)
