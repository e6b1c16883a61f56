"""Walks of the default world for scenario tests: a Stable world to start from, and walks of the
fault mixes replayed on the implementation beside the model (pauses, stalls, wakeups...)."""

from __future__ import annotations

from model.client import STABLE
from model.config import Config
from properties.explore.walker import walk
from properties.systems.differential import compare


CONFIG = Config()


def stable_world():
    result = walk(0, CONFIG, steps=60, faults="none")
    world = result.world
    assert world.group.state == "Stable" and all(c.state == STABLE for c in world.clients)
    return world, list(result.schedule)


def walks_agree(kind: str, mixes, seeds: int, steps: int, compare_at_most: int = 6) -> tuple:
    """Walk seeds ``0..seeds-1`` of each mix in *mixes* (3 clients, 2 brokers): how many *kind*
    events each mix offered, and how many walks with one were replayed on the implementation (the
    first *compare_at_most*), each asserted to stay in step with the model."""
    config = Config(clients=3, brokers=2)
    offered = {name: 0 for name in mixes}
    compared = 0
    for seed in range(seeds):
        for name in offered:
            schedule = walk(seed, config, steps=steps, mix=name, eventually=False, hash_trace=False).schedule
            n = sum(1 for e in schedule if e[0] == kind)
            offered[name] += n
            if n and compared < compare_at_most:
                compared += 1
                result = compare(config, schedule, seed)
                assert result.divergence is None, (seed, result.divergence)
    return offered, compared
