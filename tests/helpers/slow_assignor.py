"""Worlds whose group leader's assignor runs for a while (``groupcheck.assignor.delay.ms``): a Stable
world to start from, quiet rounds until a condition holds, and the moment the leader assigns."""

from __future__ import annotations

from model.client import STABLE
from model.config import Config
from properties.explore.walker import settle, walk


DELAY = 3000
CONFIG = Config(assignor_delay_ms=DELAY)


def stable(config=CONFIG):
    result = walk(0, config, steps=60, faults="none")
    world = result.world
    assert world.group.state == "Stable" and all(c.state == STABLE for c in world.clients)
    return world, list(result.schedule)


def until(world, schedule, done, rounds=400, logs=None, checker=None):
    """Quiet rounds until *done(world)*; every step checked and its log kept."""

    def on_step(w, event, new, log):
        if logs is not None:
            logs.extend(log)
        if checker is not None:
            assert checker.check(w, new, event, log) is None

    for _ in range(rounds):
        if done(world):
            return world
        world, violation = settle(world, None, None, schedule, max_rounds=1, until_stable=True, on_step=on_step)
        assert violation is None
    raise AssertionError("the condition was never met")


def assigning(world):
    return any(c.pending_sync is not None for c in world.clients)
