"""The implementation world (properties/systems/simworld.py) under the model walker's schedules."""

from __future__ import annotations

import pytest

from model.config import Config
from properties.systems.simworld import SimWorld
from properties.explore.walker import walk

CONFIG = Config()


def _schedule(seed: int, steps: int = 50) -> tuple:
    return walk(seed, CONFIG, steps=steps, faults="none").schedule


def _quiet(sim: SimWorld, rounds: int = 400) -> None:
    """Quiet time for the implementation world: connect, deliver, poll and heartbeat every client,
    with small ticks in between, like the walker's settle phase (driven by the sim's own state)."""
    cfg = sim.config
    for _ in range(rounds):
        for _ in range(8):
            for c, selector in enumerate(sim.selectors):
                for slot in range(2 * cfg.brokers):
                    if selector.connecting[slot]:
                        sim.step(("connect", c, slot, 0))
                    for to_broker in (True, False):
                        while sim.step(("deliver", c, slot, to_broker, 0)):
                            pass
            for c in range(cfg.clients):
                sim.step(("heartbeat", c, 0))
                sim.step(("poll", c, 0))
            sim.step(("tick", max(1, cfg.latency_ms), 0))
        sim.step(("tick", 250, 0))
        if _settled(sim):
            return


def _settled(sim: SimWorld) -> bool:
    obs = sim.observe()
    group, clients = obs[2], obs[3]
    if group is None or group[0] != "Stable":
        return False
    live = [c for c in clients if c[5]]
    return bool(live) and all(c[0] == "STABLE" and c[1] == group[1] for c in live)


@pytest.mark.parametrize("seed", range(8))
def test_walker_schedules_run_without_exceptions(seed):
    sim = SimWorld(CONFIG, seed)
    applied = sum(sim.step(tuple(ev)) for ev in _schedule(seed))
    assert applied > 0
    obs = sim.observe()
    assert len(obs[3]) == CONFIG.clients
    # no consumer was ended by an exception out of poll under fault-free schedules
    assert sim.failed == [None] * CONFIG.clients


@pytest.mark.parametrize("send_timing", ["poll", "send"])
@pytest.mark.parametrize("seed", [0, 3, 7])
def test_fault_free_then_quiet_ends_stable_with_full_coverage(seed, send_timing):
    sim = SimWorld(CONFIG, seed, send_timing=send_timing)
    for ev in _schedule(seed, steps=40):
        sim.step(tuple(ev))
    _quiet(sim)
    now, leader, group, clients, committed = sim.observe()
    assert group is not None and group[0] == "Stable", group
    generation, members = group[1], group[3]
    assert len(members) == CONFIG.clients
    assert all(c[0] == "STABLE" and c[1] == generation and c[5] for c in clients), clients
    assert sorted(c[2] for c in clients) == sorted(members)
    owned = [p for c in clients for p in c[3]]
    assert sorted(owned) == list(range(CONFIG.partitions))  # every partition exactly once
    assert all(c[4] == leader for c in clients)


@pytest.mark.parametrize("seed", [1, 5])
def test_same_seed_and_schedule_give_the_same_observations(seed):
    schedule = _schedule(seed)

    def run():
        sim = SimWorld(CONFIG, seed)
        out = []
        for ev in schedule:
            applied = sim.step(tuple(ev))
            out.append((applied, sim.observe()))
        _quiet(sim, rounds=50)
        out.append(sim.observe())
        return out

    assert run() == run()


def test_events_not_enabled_change_nothing():
    sim = SimWorld(CONFIG, 0)
    before = sim.observe()
    assert not sim.step(("deliver", 0, 0, True, 0))  # empty link
    assert not sim.step(("connect", 0, 0, 0))  # no connection attempt pending
    assert not sim.step(("tick", 0, 0))
    assert not sim.step(("load", 0, 0))  # not loading
    assert not sim.step(("heal", 0, 0, 0))
    assert not sim.step(("broker_restart", 0, 0))  # alive
    assert sim.observe() == before


def test_faulty_schedules_run():
    for seed in range(4):
        sim = SimWorld(CONFIG, seed)
        for ev in walk(seed, CONFIG, steps=50, faults="all").schedule:
            sim.step(tuple(ev))
        sim.observe()
