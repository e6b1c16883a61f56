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
``--baseline``, ``--json``, and the broker-only ``--bootstrap`` and ``--timers``.
"""

from __future__ import annotations

import json
import os
import time
from typing import Optional

from properties.campaign.spark import CampaignError, fixed, run_schedule_tasks, task_ranges
from properties.conform import systems
from properties.conform.command import parse_bootstrap
from properties.conform.report import slug
from properties.conform.run import NO_TIMERS, Timing
from properties.conform.schedule import generate
from properties.conform.tally import Tally, print_summary
from properties.conform.target import Runner, Target
from properties.progress import Progress

DEFAULT_TASK_SIZE = 10


def broker_task(plan: dict, start: int, stop: int) -> Tally:
    """One task: seeds ``start..stop-1`` against a broker of its own (or ``plan["bootstrap"]``)."""
    timing = Timing.with_timers() if plan["timers"] else NO_TIMERS
    bootstrap = plan["bootstrap"]
    target = Target(bootstrap, None if bootstrap else plan["name"], plan["mutant"],
                    parse_bootstrap(bootstrap) if bootstrap else None, timers=plan["timers"])
    tally = Tally()
    try:
        run = Runner(target, systems.PROFILES[plan["profile"]], timing)
        for seed in range(start, stop):
            tally.add(run(generate(seed, members=plan["members"], steps=plan["steps"], timers=plan["timers"])))
        tally.crashes = target.crashes
    finally:
        target.stop()
    return tally


class _Merged(Tally):
    """The driver's tally: ``drive`` adds whole task tallies to it."""

    def add(self, part) -> None:  # noqa: D102 - a task's Tally, not a Result
        self.merge(part)


def make_plan(args) -> dict:
    name = args.system.split(":", 1)[1]
    if getattr(args, "world", None) == "swarm":
        raise CampaignError(f"--world swarm draws simulated worlds; --system {args.system} runs broker conformance "
                            "schedules: leave --world out")
    if name not in systems.LAUNCHERS:
        raise CampaignError(f"--system broker:{name}: not a broker groupcheck knows "
                            f"(known: {', '.join('broker:' + n for n in systems.LAUNCHERS)})")
    if args.mutant and name != "groupcheck":
        raise CampaignError(f"--mutant {args.mutant}: only --system broker:groupcheck takes a mutant")
    if args.mutant:
        from properties.mutation.mutants import UnknownMutant, get

        try:
            get(args.mutant)
        except UnknownMutant as e:
            raise CampaignError(f"--mutant: {e}") from None
    if args.bootstrap:
        parse_bootstrap(args.bootstrap)
        if args.mutant:
            raise CampaignError("--mutant needs groupcheck to launch the broker: drop --bootstrap")
    return {"name": name, "profile": name, "bootstrap": args.bootstrap, "mutant": args.mutant,
            "timers": args.timers == "on", "members": fixed(args, "clients"), "steps": fixed(args, "steps")}


def cmd_broker_campaign(args) -> int:
    plan = make_plan(args)
    _load_baseline(args.baseline)  # a bad --baseline is refused before any work
    timing = Timing.with_timers() if plan["timers"] else NO_TIMERS
    task_size = args.task_size or DEFAULT_TASK_SIZE
    ranges = task_ranges(args.seed_start, args.interleavings, task_size)
    progress = Progress(args.interleavings, unit="schedules", failures="divergences")
    tally = _Merged()
    out = args.out or f"reports/broker-campaign-{slug(plan['name'])}"
    os.makedirs(out, exist_ok=True)
    started = time.monotonic()
    tally, master, interrupted = run_schedule_tasks(
        args, out, "groupcheck-broker-campaign", f"against broker:{plan['name']} in tasks of {task_size}",
        lambda start, stop: [broker_task(plan, start, stop)], ranges, tally, progress)
    progress(tally.done, tally.failed, final=True)
    seconds = time.monotonic() - started
    baseline = _load_baseline(args.baseline)
    # the driver shrinks against a broker of its own (when there is something to shrink)
    target = Target(plan["bootstrap"], None if plan["bootstrap"] else plan["name"], plan["mutant"],
                    parse_bootstrap(plan["bootstrap"]) if plan["bootstrap"] else None, timers=plan["timers"],
                    start=bool(tally.first))
    try:
        run = Runner(target, systems.PROFILES[plan["profile"]], timing)
        settings = {"schedules": tally.done, "seed": args.seed_start, "members": plan["members"],
                    "steps": plan["steps"], "master": master, "task_size": task_size, "interrupted": interrupted}
        summary = tally.finish(run, target, systems.PROFILES[plan["profile"]], timing, plan["mutant"], settings,
                               out, seconds, baseline=baseline)
    finally:
        target.stop()
    print_summary(summary, args.json, out)
    if interrupted:
        return 130
    return 0 if summary["verdict"] == "conforms" else 1


def _load_baseline(path: Optional[str]) -> Optional[dict]:
    if not path:
        return None
    try:
        with open(path) as f:
            baseline = json.load(f)
        if not isinstance(baseline.get("divergences"), list):
            raise ValueError("no divergences list")
        return baseline
    except (OSError, ValueError, AttributeError) as e:
        raise CampaignError(f"--baseline {path}: not a conformance report.json ({e})") from None
