"""The settle phase's quiet time (issue 37's speed work): it makes no call that would only move a
consumer's timers, keeps every poll timer running, and ends a round at a turn where nothing can
happen, while a replay of what it made repeats the run exactly."""

from __future__ import annotations

import pytest

from model.config import Config
from model.events import Partition, Poll, Tick
from model.world import initial_world, step
from properties.catalogue import Checker
from properties.explore import walker
from properties.explore.walker import _idle, poll_timer_margin_ms, replay, settle, walk

CONFIG = Config(clients=3, brokers=3, partitions=6)


def _stable(config=CONFIG):
    world, violation = settle(initial_world(config), Checker(config), None, [], until_stable=True, max_rounds=40)
    assert violation is None and world.group.state == "Stable"
    return world


def test_a_poll_that_only_restarts_the_poll_timer_is_idle_and_one_that_sends_is_not():
    world = _stable()
    later, _ = step(world, Tick(5, 0))
    new, log = step(later, Poll(0, 0))
    assert new is not later and _idle(later, new, 0, log)  # the model applied it: steps, the poll timer moved
    fresh = initial_world(CONFIG)
    new, log = step(fresh, Poll(0, 0))  # the first poll looks the coordinator up: a FindCoordinator
    assert new.clients[0].unsent != fresh.clients[0].unsent and not _idle(fresh, new, 0, log)


@pytest.mark.parametrize("seed", range(6))
def test_the_settle_phase_makes_no_idle_call_and_its_schedule_replays_exactly(seed):
    result = walk(seed, CONFIG, steps=40)
    assert result.violation is None
    world = initial_world(CONFIG)
    margin = poll_timer_margin_ms(CONFIG)
    for i, event in enumerate(result.schedule):
        new, log = step(world, event)
        if i >= result.walked and event.kind == "heartbeat":
            assert not _idle(world, new, event.c, log), (i, event)
        if i >= result.walked and event.kind == "poll" and _idle(world, new, event.c, log):
            # only a round's first poll, made because its poll timer was running out
            assert world.clients[event.c].poll_deadline_ms - new.clients[event.c].heartbeat_clock_ms <= margin, (i, event)
        world = new
    again = replay(CONFIG, result.schedule)
    assert again.schedule == result.schedule and again.violation is None


def test_quiet_time_keeps_every_poll_timer_running(monkeypatch):
    """A Stable group left in quiet time for many poll intervals stays the same generation: the
    round's first polls restart the poll timers before they run out. Skipping those too (a margin
    below zero) lets max.poll.interval.ms expire and the group rebalance. (A poll interval shorter
    than the heartbeat's: otherwise the polls that read the heartbeats' answers restart the timer.)"""
    config = Config(clients=3, brokers=3, partitions=6, max_poll_interval_ms=3000, session_timeout_ms=10000,
                    heartbeat_interval_ms=4000)

    def generations_after_quiet_time():
        world = _stable(config)
        # no checker: no early end when the group is stable, so the rounds run their quiet time
        end, violation = settle(world, None, None, [], max_rounds=40, until_stable=True)
        return world.group.generation, end.group.generation, end.now - world.now

    start, end, elapsed = generations_after_quiet_time()
    assert elapsed >= 5 * config.max_poll_interval_ms and end == start
    monkeypatch.setattr(walker, "poll_timer_margin_ms", lambda config: -1)
    start, end, _ = generations_after_quiet_time()
    assert end > start


def test_a_stuck_round_takes_one_turn_and_charges_the_budget_for_the_rest():
    """A consumer partitioned from its coordinator with a request on the link: nothing can happen
    in a turn, so each round is one turn and a 250 ms jump (before, eight 1 ms ticks and the
    jump); a burst's budget is charged the turns it skipped, so it covers the same quiet time."""
    world = _stable()
    world, _ = step(world, Partition(0, world.leader, 0))
    world, _ = step(world, Tick(3000, 0))  # the heartbeat is due: the next heartbeat iteration sends one
    schedule: list = []
    end, _ = settle(world, None, None, schedule, max_rounds=6, until_stable=True, max_events=10_000)
    ticks = [e.ms for e in schedule if e.kind == "tick"]
    assert ticks.count(250) >= 5 and ticks.count(1) < 8, ticks  # at most the first round's turns
    # the budget: a stuck round costs its calls and tick times the turns skipped, as before
    short: list = []
    settle(world, None, None, short, max_rounds=600, until_stable=True, max_events=60)
    assert len([e for e in short if e.kind == "tick" and e.ms == 250]) <= 3, short
