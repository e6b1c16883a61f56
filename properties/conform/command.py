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
import sys
import time
import uuid
from typing import Dict, List, Optional, Tuple

import attrs

from properties.conform import report as report_module
from properties.conform import systems
from properties.conform.members import Unreachable
from properties.conform.run import NO_TIMERS, Profile, Result, Timing, run_schedule
from properties.conform.schedule import Schedule, generate
from properties.conform.shrink import shrink
from properties.errors import UsageError
from properties.progress import Progress


def _int(name: str, low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{name} must be at least {low}, got {value}")
        return value
    return parse


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("conform", help="judge a Kafka-compatible broker's group coordinator against the model")
    kinds = p.add_subparsers(dest="conform_kind", metavar="broker")
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
    b.add_argument("--schedules", type=_int("--schedules", 1), default=100, help="schedules to run (default 100)")
    b.add_argument("--steps", type=_int("--steps", 1), default=24, help="steps after the joins (default 24)")
    b.add_argument("--members", type=_int("--members", 1), default=3, help="virtual members (default 3)")
    b.add_argument("--seed", type=_int("--seed", 0), default=0, help="first seed (default 0)")
    b.add_argument("--timers", choices=("off", "on"), default="off",
                   help="off (default): 30 s timeouts, judged deterministically; on: 2 s timeouts, schedules "
                        "wait past them, timers judged within a 250 ms tolerance window")
    b.add_argument("--out", metavar="DIR", default=None, help="report directory (default reports/conform-SYSTEM)")
    b.add_argument("--json", action="store_true", help="print the summary as JSON")
    b.add_argument("--no-shrink", action="store_true", help="keep counterexamples as found")
    b.set_defaults(func=cmd_conform)
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
    if getattr(args, "conform_kind", None) != "broker":
        raise UsageError("conform: say what to judge: groupcheck conform broker --bootstrap HOST:PORT | --launch NAME")
    if not args.bootstrap and not args.launch:
        raise UsageError("conform broker: give --bootstrap HOST:PORT or --launch NAME")
    if args.mutant and not args.launch:
        raise UsageError("--mutant needs --launch groupcheck")
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


def _group_id(seed: int, nonce: str) -> str:
    return f"groupcheck-conform-{seed}-{nonce}"


class Target:
    """The broker under judgement: an address (``--bootstrap``), or a broker this run launched —
    and launches again when it crashes, so one crash does not end the search."""

    def __init__(self, bootstrap: Optional[str], launch: Optional[str], mutant: Optional[str],
                 address: Optional[Tuple[str, int]] = None, timers: bool = False) -> None:
        self.launch, self.mutant, self.timers = launch, mutant, timers
        self.system = bootstrap or (launch + (f" (mutant {mutant})" if mutant else ""))
        self.text = f"--bootstrap {bootstrap}" if bootstrap else f"--launch {launch}"
        self.broker = None
        self.address = address
        self.crashes = 0
        if launch:
            self._start()

    def _start(self) -> None:
        self.broker = systems.launch(self.launch, self.mutant, self.timers)
        host, port = self.broker.bootstrap.rsplit(":", 1)
        self.address = (host, int(port))

    def crashed(self, wait_s: float = 0.0) -> Optional[str]:
        """A failure line if the launched broker's process has exited, waiting up to *wait_s* for it
        (a process that is aborting closes its sockets before it is gone); it is then started again."""
        if self.broker is None:
            return None
        deadline = time.monotonic() + wait_s
        while self.broker.process.poll() is None:
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)
        tail = " | ".join(self.broker.log().strip().splitlines()[-3:])
        line = f"the broker process exited with status {self.broker.process.returncode}: {tail[-600:]}"
        self.crashes += 1
        self.broker.stop()
        self._start()
        return line

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()


def _campaign(args, target: Target, profile: Profile) -> int:
    nonce = uuid.uuid4().hex[:8]  # group ids differ between runs against one long-lived broker
    runs = [0]
    system = target.system
    timing = Timing.with_timers() if args.timers == "on" else NO_TIMERS

    def run(schedule: Schedule) -> Result:
        runs[0] += 1
        try:
            result = run_schedule(target.address, schedule, _group_id(schedule.seed, f"{nonce}-{runs[0]}"), profile,
                                  timing=timing)
        except Unreachable as e:
            crash = target.crashed(wait_s=2.0)
            if crash:
                return Result(schedule, "", None, crash, 0, (), ())
            if runs[0] == 1:
                raise UsageError(f"{target.text}: {e}") from None
            return Result(schedule, "", None, f"the broker stopped accepting connections ({e})", 0, (), ())
        lost = result.failure is not None and ("closed" in result.failure or "connection error" in result.failure)
        crash = target.crashed(wait_s=2.0 if lost else 0.0)
        if crash:
            return attrs.evolve(result, divergence=None, failure=crash)
        return result

    started = time.monotonic()
    progress = Progress(args.schedules, unit="schedules", failures="divergences")
    first: Dict[str, Result] = {}
    counts: Dict[str, int] = {}
    acknowledged = dict(profile.acknowledged)
    conforming = diverging = failures = 0
    versions: Dict[str, int] = {}
    for i in range(args.schedules):
        result = run(generate(args.seed + i, members=args.members, steps=args.steps, timers=timing.timers))
        if result.failure and result.steps_run == 0 and not result.trace and i == 0 and target.broker is None:
            raise UsageError(f"{target.text}: {result.failure}")
        versions.update(dict(result.versions))
        signature = result.signature()
        if signature is None:
            conforming += 1
        else:
            if result.failure:
                failures += 1
            else:
                diverging += 1
            counts[signature] = counts.get(signature, 0) + 1
            first.setdefault(signature, result)
        progress(i + 1, diverging + failures, final=i + 1 == args.schedules)
        if target.broker is None and result.failure and result.failure.startswith("the broker stopped accepting"):
            stopped_after = i + 1  # every later schedule would fail the same way
            break
    else:
        stopped_after = None
    examples: List[dict] = []
    for signature, result in first.items():
        # a crash is seen when the process is gone, which a timer inside the broker may decide
        # long after the schedule that caused it: crashes are reported as found, with the
        # broker's last words, not shrunk against schedules that may not be theirs
        crash = signature.startswith("failure: the broker process exited")
        shrunk = result if args.no_shrink or stopped_after or crash else shrink(result, run)
        example = report_module.counterexample(shrunk, system, target.text, args.mutant, profile,
                                               len(result.schedule.steps))
        example["timers"] = timing.timers
        examples.append(example)
    new = [s for s in first if s not in acknowledged]
    verdict = "conforms" if not new else "diverges"
    summary = {
        "system": system, "target": target.text, "mutant": args.mutant, "crashes": target.crashes, "schedules": args.schedules,
        "seed": args.seed, "members": args.members, "steps": args.steps, "timers": args.timers == "on",
        "conforming": conforming, "diverging": diverging, "failures": failures, "versions": versions,
        "divergences": [{"signature": s, "summary": (first[s].failure or first[s].divergence.summary),
                         "count": counts[s], "acknowledged": s in acknowledged} for s in first],
        "acknowledged": sorted(acknowledged.items()), "verdict": verdict,
        "caps": dict(profile.caps), "caps_why": profile.caps_why,
        "seconds": round(time.monotonic() - started, 1),
        "stopped_after": stopped_after,
    }
    out = args.out or f"reports/conform-{report_module.slug(args.launch or 'bootstrap')}"
    report_module.write(out, summary, examples)
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"{system}: {args.schedules} schedules in {summary['seconds']} s: {conforming} conform, "
              f"{diverging} diverge, {failures} broker failures; {len(first)} distinct")
        for entry in summary["divergences"]:
            print(f"  {entry['count']:>4} × {entry['signature']}\n         {entry['file']}")
        print(f"report: {out}/report.md — verdict: {verdict}")
    return 0 if verdict == "conforms" else 1


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
            result = run_schedule(address, schedule, _group_id(schedule.seed, "replay-" + uuid.uuid4().hex[:8]), profile,
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
