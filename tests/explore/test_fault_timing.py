"""When the coordinator mix's faults happen (properties/explore/walker.py): it offers a failover
whenever the coordinator holds a generation it has not stored, and half its walks begin with a
Stable group, so its faults meet a running group's rebalances and not only its first join."""

from __future__ import annotations

from model.config import Config
from model.world import step
from properties.explore.walker import FAULT_KINDS, MIXES, _unstored, enabled_events, walk

from tests.helpers.slow_assignor import CONFIG as SLOW, assigning as _assigning, stable as _stable, until as _until


def test_the_coordinator_mix_offers_a_failover_while_a_generation_is_unstored():
    world, schedule = _stable(SLOW)
    assert not _unstored(world)
    world, _ = step(world, ("close", 2, 0))
    world = _until(world, schedule, _assigning)
    assert _unstored(world) and world.group.state == "CompletingRebalance"
    import random

    def failovers(mix):
        offered = enabled_events(world, random.Random(1), "all", 5, MIXES[mix])
        return [e for e in offered if e[0] == "failover" and e[1] != world.leader]

    offered = failovers("coordinator")
    assert len(offered) >= 4 * MIXES["coordinator"].weight
    assert not failovers("default") and not failovers("clients")
    assert not [e for e in enabled_events(world, random.Random(1), "all", 0, MIXES["coordinator"]) if e[0] == "failover"]
    loaded, _ = step(step(world, offered[0])[0], ("load", offered[0][1], 0))
    assert not _unstored(loaded)  # the new coordinator holds what was stored


def test_half_the_coordinator_walks_begin_with_a_stable_group():
    config = Config(clients=3, brokers=3, partitions=6)
    for seed in (1, 3, 5):
        first = []

        def hook(world, event, new, log):
            if not first and event[0] in FAULT_KINDS:
                first.append(world.group)

        walk(seed, config, steps=40, mix="coordinator", on_step=hook, eventually=False, hash_trace=False)
        assert first and first[0] is not None and first[0].state == "Stable" and first[0].generation >= 1, seed
    seen = []
    walk(2, config, steps=40, mix="coordinator", eventually=False, hash_trace=False,
         on_step=lambda world, event, new, log: seen.append(world.group))
    assert seen[0] is None  # an even seed's walk draws from its first step, before any group
    assert not any(MIXES[m].warm_start for m in MIXES if m != "coordinator")
