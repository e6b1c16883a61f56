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
from properties.explore.walker import walk


# The benchmarked world: both benches (and their reports) name it from here.
WORLD = {"clients": 3, "brokers": 3, "partitions": 6}
#: The random events of each benchmarked walk (the walker adds its quiet bursts and settle phase).
STEPS = 60


def bench_model(seconds: float, steps: int = STEPS) -> dict:
    config = Config(**WORLD)
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
    return dict(_figures("model", len(schedules), checked_steps, checked_s),
                unchecked_steps_per_second=round(unchecked_steps / unchecked_s, 1))


def _figures(system: str, interleavings: int, steps: int, seconds: float) -> dict:
    """What both benches report first: the system, the world, the steps per second, the machine."""
    return {"system": system, **WORLD, "interleavings": interleavings, "steps": steps,
            "steps_per_second": round(steps / seconds, 1),
            "python": platform.python_version(), "machine": platform.machine()}


def bench_impl(seconds: float, steps: int = STEPS) -> dict:
    """Differential steps per second (3 clients, 3 brokers, all faults): the model and the
    implementation stepping the same schedules, observations compared and both sides' always
    properties checked after every event. The parts are timed on the same schedules too, so the
    report says where the time goes: the implementation stepping alone (with the model's choices
    precomputed), the model stepping alone, and the comparison and implementation-side checks
    (the remainder)."""
    from properties.systems.simworld import SimWorld

    config = Config(**WORLD)
    runs = []  # (seed, schedule, follow lists)
    seed = 0
    deadline = time.perf_counter() + seconds / 3
    while time.perf_counter() < deadline:
        schedule = walk(seed, config, steps=steps).schedule
        world = initial_world(config)
        follows = []
        for event in schedule:
            world, log = step(world, event)
            follows.append([(e[1], e[3]) for e in log if e[0] == "choice"])
        runs.append((seed, schedule, follows))
        seed += 1

    start = time.perf_counter()
    n, diverged, _ = _differential_pass(config, runs)
    full_s = time.perf_counter() - start

    start = time.perf_counter()
    m = 0
    for seed, schedule, follows in runs:
        sim = SimWorld(config, seed)
        for event, follow in zip(schedule, follows):
            sim.step(event, follow=follow)
            m += 1
    impl_s = time.perf_counter() - start

    start = time.perf_counter()
    k = 0
    for _, schedule, _ in runs:
        world = initial_world(config)
        for event in schedule:
            world, _ = step(world, event)
            k += 1
    model_s = time.perf_counter() - start
    # --wire: the same differential check with every message encoded and decoded on the links
    start = time.perf_counter()
    w, _, frames = _differential_pass(Config(**WORLD, wire=True), runs)
    wire_s = time.perf_counter() - start
    per_step = full_s / n
    impl_share = (impl_s / m) / per_step
    model_share = (model_s / k) / per_step
    return {
        **_figures("impl", len(runs), n, full_s),
        # per walk as well as per step: the walker's schedules change what a step is on average (the
        # settle phase's idle calls, the cheapest steps, are no longer made since issue 37)
        "interleavings_per_second": round(len(runs) / full_s, 2),
        "impl_alone_steps_per_second": round(m / impl_s, 1),
        "model_alone_steps_per_second": round(k / model_s, 1),
        "share_impl": round(impl_share, 3),
        "share_model": round(model_share, 3),
        "share_compare_and_checks": round(max(0.0, 1 - impl_share - model_share), 3),
        "diverged": diverged,
        "wire_steps_per_second": round(w / wire_s, 1),
        "wire_cost": round((wire_s / w) / per_step, 3),  # time per step with --wire / without
        "wire_frames": frames,
        "wire_us_per_frame": round(1e6 * max(0.0, wire_s - full_s * w / n) / max(frames, 1), 2),
    }


def _differential_pass(config: Config, runs: list) -> tuple:
    """The differential check over *runs* ((seed, schedule, follows) each): (steps, runs that
    diverged, wire frames carried — 0 without ``config.wire``)."""
    from properties.systems.differential import Differential

    steps = diverged = frames = 0
    for seed, schedule, _ in runs:
        world = initial_world(config)
        diff = Differential(config, seed)
        checker = Checker(config)
        for event in schedule:
            new, log = step(world, event)
            new, log, problem = diff.after(world, event, new, log)
            checker.check(world, new, event, log)
            world = new
            steps += 1
            if problem is not None:
                diverged += 1
                break
        if diff.sim.wire is not None:
            frames += diff.sim.wire.messages
    return steps, diverged, frames
