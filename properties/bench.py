"""Benchmarks: how fast the model world steps on one core.

``bench_model`` replays the walker's own schedules (3 clients, 3 brokers, 6 partitions, all
faults) twice: once checking every ``always`` property after every step — the rate a campaign
sees — and once stepping the world alone, so the cost of the checks is visible.
"""

from __future__ import annotations

import platform
import time

from model.config import Config
from model.world import initial_world, step
from properties.catalogue import Checker
from properties.walker import walk


def bench_model(seconds: float, steps: int = 60) -> dict:
    config = Config(clients=3, brokers=3, partitions=6)
    schedules = []
    seed = 0
    deadline = time.perf_counter() + seconds / 2
    while time.perf_counter() < deadline:  # generate schedules (walk = generate + step + check)
        schedules.append(walk(seed, config, steps=steps).schedule)
        seed += 1

    def run(check: bool) -> tuple[int, float]:
        n = 0
        start = time.perf_counter()
        for schedule in schedules:
            world = initial_world(config)
            checker = Checker(config) if check else None
            for event in schedule:
                new, log = step(world, event)
                if checker is not None:
                    checker.check(world, new, event, log)
                world = new
                n += 1
        return n, time.perf_counter() - start

    checked_steps, checked_s = run(True)
    unchecked_steps, unchecked_s = run(False)
    return {
        "system": "model",
        "clients": 3,
        "brokers": 3,
        "partitions": 6,
        "interleavings": len(schedules),
        "steps": checked_steps,
        "steps_per_second": round(checked_steps / checked_s, 1),
        "unchecked_steps_per_second": round(unchecked_steps / unchecked_s, 1),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
