"""``groupcheck conform broker`` and the replay of its counterexamples.

``groupcheck conform broker (--bootstrap HOST:PORT | --launch NAME [--mutant NAME]) [--schedules N]
[--steps K] [--members M] [--seed S] [--timers off|on] [--out DIR] [--json] [--no-shrink]``

Runs N seeded schedules (seeds S..S+N-1, one fresh group id each) against the broker, judges
every answer, shrinks one counterexample per distinct divergence signature, and writes the report
(``--out``, default ``reports/conform-<system>``). ``--json`` prints ``{system, schedules,
divergences: [{signature, summary, count, file}], acknowledged, verdict}``. Exit 0 when no
divergence, 1 when one (or a broker failure), 2 on a usage error or an unreachable broker.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from typing import Optional, Tuple

from properties.conform import report as report_module
from properties.engine import run as engine
from properties.engine.run import task_ranges
from properties.conform import systems
from properties.conform.members import Unreachable
from properties.conform.run import NO_TIMERS, STATIC_UNSUPPORTED, Profile, Timing, run_schedule
from properties.conform.tally import Tally, print_summary
from properties.conform.target import Runner, Target, group_id
from properties.conform.schedule import Schedule, generate
from properties.errors import UsageError, int_at_least
from properties.progress import Progress


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("conform", help="judge a Kafka-compatible broker's group coordinator against the model")
    kinds = p.add_subparsers(dest="conform_kind", metavar="broker|client")
    b = kinds.add_parser("broker", help="drive a broker with virtual members and judge every answer",
                         description="Virtual members follow seeded schedules over TCP; every answer is judged "
                                     "against the model's coordinator. Exit 0: no divergence; 1: divergence or "
                                     "broker failure; 2: usage error or unreachable broker.")
    where = b.add_mutually_exclusive_group()
    where.add_argument("--bootstrap", metavar="HOST:PORT", help="a running broker")
    where.add_argument("--launch", metavar="NAME", help="start a broker on a free loopback port and stop it "
                                                         f"afterwards: {', '.join(systems.LAUNCHERS)}")
    b.add_argument("--mutant", metavar="NAME", help="with --launch groupcheck: apply one of groupcheck's "
                                                     "server-side mutants (a deliberately broken broker)")
    b.add_argument("--schedules", type=int_at_least("--schedules", 1), default=100, help="schedules to run (default 100)")
    b.add_argument("--steps", type=int_at_least("--steps", 1), default=24, help="steps after the joins (default 24)")
    b.add_argument("--members", type=int_at_least("--members", 1), default=3, help="virtual members (default 3)")
    b.add_argument("--seed", type=int_at_least("--seed", 0), default=0, help="first seed (default 0)")
    b.add_argument("--static", type=int_at_least("--static", 0), default=0, metavar="N",
                   help="the first N members are static (group.instance.id, KIP-345; JoinGroup v5-v8 and the "
                        "versions of the other group APIs that carry it): a fresh join of theirs is a restarted "
                        "process taking its instance's place (default 0)")
    b.add_argument("--timers", choices=("off", "on"), default="off",
                   help="off (default): 30 s timeouts, judged deterministically; on: 2 s timeouts, schedules "
                        "wait past them, timers judged within a 250 ms tolerance window")
    b.add_argument("--out", metavar="DIR", default=None, help="report directory (default reports/conform-SYSTEM)")
    b.add_argument("--json", action="store_true", help="print the summary as JSON")
    b.add_argument("--no-shrink", action="store_true", help="keep counterexamples as found")
    b.set_defaults(func=cmd_conform)
    from properties.clients.command import add_parser as add_client_parser

    add_client_parser(kinds)
    return p


def parse_bootstrap(text: str) -> Tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise UsageError(f"--bootstrap expects HOST:PORT, got {text!r}")
    try:
        number = int(port)
    except ValueError:
        raise UsageError(f"--bootstrap {text}: the port {port!r} is not a number") from None
    if not 0 < number < 65536:
        raise UsageError(f"--bootstrap {text}: the port {number} is out of range")
    return host, number


def cmd_conform(args) -> int:
    if getattr(args, "conform_kind", None) == "client":
        return args.func(args)
    if getattr(args, "conform_kind", None) != "broker":
        raise UsageError("conform: say what to judge: groupcheck conform broker --bootstrap HOST:PORT | --launch NAME, "
                         "or groupcheck conform client --client NAME")
    if not args.bootstrap and not args.launch:
        raise UsageError("conform broker: give --bootstrap HOST:PORT or --launch NAME")
    if args.mutant and not args.launch:
        raise UsageError("--mutant needs --launch groupcheck")
    if args.static > args.members:
        raise UsageError(f"--static {args.static}: more than the {args.members} members (--members)")
    if args.bootstrap:
        target = Target(args.bootstrap, None, None, parse_bootstrap(args.bootstrap))
        profile = systems.PROFILES["bootstrap"]
    else:
        target = Target(None, args.launch, args.mutant, timers=args.timers == "on")
        profile = systems.PROFILES[args.launch]
    try:
        return _campaign(args, target, profile)
    finally:
        target.stop()


def _campaign(args, target: Target, profile: Profile) -> int:
    """The schedules one after the other against *target* (the engine in this process: a signal
    stops the schedule under way at once; the report of those that finished is written, marked
    partial, and the exit status is 128 + the signal's number)."""
    timing = Timing.with_timers() if args.timers == "on" else NO_TIMERS
    run = Runner(target, profile, timing)
    started = time.monotonic()
    progress = Progress(args.schedules, unit="schedules", failures="divergences")
    tally = Tally()

    def work(start: int, stop: int) -> list:
        results = []
        for seed in range(start, stop):
            result = run(generate(seed, members=args.members, steps=args.steps, timers=timing.timers,
                                  static=args.static))
            if result.failure and result.steps_run == 0 and not result.trace and seed == args.seed and (
                    target.broker is None or result.failure.startswith(STATIC_UNSUPPORTED)):
                raise UsageError(f"{target.text}: {result.failure}")
            if target.broker is None and result.failure and result.failure.startswith("the broker stopped accepting"):
                tally.stop_requested = "the broker stopped accepting connections"
                tally.stopped_after = seed - args.seed + 1  # every later schedule would fail the same way
            results.append(result)
        return results

    with engine.session() as interrupts:
        outcome = engine.run(task_ranges(args.seed, args.schedules, 1), work, tally, engine.InProcess(), progress,
                             interrupts)
        with interrupts.held(release=False):
            progress(tally.done, tally.failed, final=True)
            settings = {"schedules": tally.done, "seed": args.seed, "members": args.members, "steps": args.steps,
                        "static": args.static, "interrupted": outcome.signal_name if outcome.partial else None}
            out = args.out or f"reports/conform-{report_module.slug(args.launch or 'bootstrap')}"
            summary = tally.finish(run, target, profile, timing, args.mutant, settings, out,
                                   time.monotonic() - started, shrinking=not args.no_shrink and not outcome.partial)
            print_summary(summary, args.json, out)
    outcome.report_end(out)
    return outcome.exit_status(0 if summary["verdict"] == "conforms" else 1)


def replay(path: str, bootstrap: Optional[str], launch: Optional[str], mutant: Optional[str], as_json: bool) -> int:
    """``groupcheck replay FILE --bootstrap HOST:PORT | --launch NAME``: run a conformance
    counterexample's schedule again and say whether it still diverges the same way."""
    try:
        with open(path) as f:
            example = json.load(f)
        schedule = Schedule.from_json(example["schedule"])
        signature = example["signature"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UsageError(f"{path}: not a readable conformance counterexample ({e})") from None
    if not bootstrap and not launch:
        raise UsageError(f"{path} is a broker counterexample: give --bootstrap HOST:PORT or --launch NAME")
    profile_name = launch or "bootstrap"
    profile = systems.PROFILES.get(profile_name, systems.PROFILES["bootstrap"])
    timing = Timing.with_timers() if example.get("timers") else NO_TIMERS
    broker = None
    try:
        if launch:
            broker = systems.launch(launch, mutant, timing.timers)
            host, port = broker.bootstrap.rsplit(":", 1)
            address = (host, int(port))
        else:
            address = parse_bootstrap(bootstrap)
        try:
            result = run_schedule(address, schedule, group_id(schedule.seed, "replay-" + uuid.uuid4().hex[:8]), profile,
                                  timing=timing)
        except Unreachable as e:
            raise UsageError(str(e)) from None
    finally:
        if broker is not None:
            broker.stop()
    same = result.signature() == signature
    if as_json:
        print(json.dumps({"file": path, "signature": signature, "reproduced": same, "now": result.signature(),
                          "verdict": result.verdict, "trace": list(result.trace)}, indent=1))
    else:
        for x in result.trace:
            if "note" in x:
                print(f"{x['t_ms']:>6} ms  m{x['member']}  {x['note']}")
            else:
                print(f"{x['t_ms']:>6} ms  m{x['member']}#{x['connection']} {x['direction'][:3]} {x['api']} "
                      f"v{x['version']} {json.dumps(x['body'])[:200]}")
        if result.divergence or result.failure:
            print(result.failure or result.divergence.summary)
        print(f"{'reproduced' if same else 'NOT reproduced'}: {signature}" + ("" if same else f" (now: {result.signature()})"))
    return 1 if same else 0
