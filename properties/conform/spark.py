"""``groupcheck campaign --system broker:NAME``: broker conformance schedules as a Spark job.

Each task launches its own broker (``NAME``, on a free loopback port of the executor's machine)
— or, with ``--bootstrap HOST:PORT``, uses that broker with one group id per schedule — runs its
seeds, stops the broker and sends back its :class:`~properties.conform.tally.Tally`. The driver
merges the tallies (the first result of every signature is the one of the smallest seed, whatever
the order tasks finish in), launches one broker of its own to shrink one counterexample per
signature, and writes the conformance report (``index.html``, ``report.md``, ``report.json``, the
counterexample files; ``--baseline`` an earlier ``report.json``: divergences marked new or known,
and the ones gone listed as fixed). Broker schedules wait on the network more than they compute,
so a task per core is a floor, not a ceiling: ``local[8]`` on two cores runs eight brokers.

Arguments of ``groupcheck campaign`` that apply: ``--interleavings`` (schedules), ``--seed-start``,
``--steps``, ``--clients`` (virtual members), ``--mutant`` (``broker:groupcheck`` only),
``--master``, ``--local``, ``--task-size`` (schedules per task, default 10), ``--out``,
``--baseline``, ``--json``, and the broker-only ``--bootstrap``, ``--timers``, ``--faults`` (each
task's broker paused, connections cut, a broker with storage restarted: one schedule at a time per
task, as ``conform broker --faults``) and ``--profile FILE.toml|NAME`` (read once on the driver,
the :class:`~properties.profiles.Profile` sent to the tasks: no file needed on the executors).
"""

from __future__ import annotations

import functools
import time

import attrs
from typing import Optional

from properties.campaign.spark import fixed
from properties.engine import run as engine
from properties.engine.errors import RunError
from properties.engine.spark import run_schedules
from properties import findings as shape
from properties import targets
from properties.conform.report import slug
from properties.conform.run import NO_TIMERS, Timing
from properties.conform.schedule import generate
from properties.conform.tally import Tally, print_summary
from properties.conform.target import Broker, Runner
from properties.errors import host_and_port

DEFAULT_TASK_SIZE = 10


def _target(plan: dict) -> targets.Target:
    """The plan's broker target, with the profile the driver read (``--profile``) if any."""
    target = targets.get(targets.BROKER, plan["name"], "--system")
    return attrs.evolve(target, profile=plan["profile"]) if plan.get("profile") is not None else target


def _timing(plan: dict, target: targets.Target) -> Timing:
    return Timing.with_timers(target.profile.timer_tolerance_ms) if plan["timers"] else NO_TIMERS


def broker_task(plan: dict, start: int, stop: int) -> Tally:
    """One task: seeds ``start..stop-1`` against a broker of its own (or ``plan["bootstrap"]``)."""
    target = _target(plan)
    broker = Broker(target, plan["mutant"], plan["bootstrap"], timers=plan["timers"])
    tally = Tally()
    try:
        run = Runner(broker, _timing(plan, target))
        for seed in range(start, stop):
            tally.add(run(generate(seed, members=plan["members"], steps=plan["steps"], timers=plan["timers"],
                                   faults=plan.get("faults", False))))
        tally.crashes = broker.crashes
    finally:
        broker.stop()
    return tally


def broker_parts(plan: dict, start: int, stop: int) -> list:
    """The engine's work for one task: its tally."""
    return [broker_task(plan, start, stop)]


class _Merged(Tally):
    """The driver's tally: the engine adds whole task tallies to it."""

    def add(self, part) -> None:  # noqa: D102 - a task's Tally, not a Result
        self.merge(part)


def make_plan(args) -> dict:
    target = targets.resolve(args.system)
    if getattr(args, "world", None) == "swarm":
        raise RunError(f"--world swarm draws simulated worlds; --system {args.system} runs broker conformance "
                       "schedules: leave --world out")
    target.check_mutant(args.mutant)
    if args.bootstrap:
        host_and_port(args.bootstrap)
        if args.mutant:
            raise RunError("--mutant needs groupcheck to launch the broker: drop --bootstrap")
    if getattr(args, "faults", None) not in (None, "none", "all"):
        raise RunError(f"--faults {args.faults} with --system {args.system}: broker schedules take none (the "
                       "default) or all (the broker paused, connections cut, a broker with storage restarted)")
    faults = getattr(args, "faults", None) == "all"
    if faults and args.bootstrap:
        raise RunError("--faults pauses and restarts the broker of each task: it needs one groupcheck launches "
                       "(drop --bootstrap)")
    profile = targets.profile_for(args.profile) if getattr(args, "profile", None) else None
    return {"name": target.name, "bootstrap": args.bootstrap, "mutant": args.mutant, "faults": faults,
            "profile": profile, "timers": args.timers == "on", "members": fixed(args, "clients"),
            "steps": fixed(args, "steps")}


def cmd_broker_campaign(args) -> int:
    plan = make_plan(args)
    _load_baseline(args.baseline)  # a bad --baseline is refused before any work
    target = _target(plan)
    timing = _timing(plan, target)
    out, tally, started = args.out or f"reports/broker-campaign-{slug(plan['name'])}", _Merged(), time.monotonic()
    with engine.session() as interrupts:
        outcome, master, task_size = run_schedules(
            args, functools.partial(broker_parts, plan), tally, interrupts, out, "groupcheck-broker-campaign",
            f"against broker:{plan['name']}", DEFAULT_TASK_SIZE, "divergences")
        with interrupts.held(release=False):
            seconds = time.monotonic() - started
            baseline = _load_baseline(args.baseline)
            # the driver shrinks against a broker of its own (when there is something to shrink, and the
            # run was not stopped)
            broker = Broker(target, plan["mutant"], plan["bootstrap"], timers=plan["timers"],
                            start=bool(tally.first) and not outcome.partial)
            try:
                run = Runner(broker, timing)
                settings = {"seed": args.seed_start, "members": plan["members"], "steps": plan["steps"],
                            "master": master, "task_size": task_size, "faults": plan["faults"]}
                summary = tally.finish(run, broker, timing, plan["mutant"], settings, out, seconds, baseline=baseline,
                                       shrinking=not outcome.partial, requested=args.interleavings,
                                       stopped_by=outcome.stopped_by,
                                       failure=outcome.failure)
            finally:
                broker.stop()
            print_summary(summary, args.json, out)
    outcome.report_end(out)
    return outcome.exit_status(shape.exit_status(summary))


def _load_baseline(path: Optional[str]) -> Optional[dict]:
    return shape.load_baseline(path)
