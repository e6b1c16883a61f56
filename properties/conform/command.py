"""``groupcheck conform broker`` and the replay of its counterexamples.

``groupcheck conform broker (--bootstrap HOST:PORT | --launch NAME [--mutant NAME] [--brokers N] | --launch-cmd
'COMMAND {port}' | --matrix kafka:A..B) [--profile FILE.toml|NAME] [--schedules N] [--steps K] [--members M] [--seed S]
[--timers off|on|both] [--timed-schedules N] [--resume] [--out DIR] [--json] [--no-shrink]``

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
from typing import Optional

import attrs

from properties import findings as shape
from properties import junit
from properties import targets
from properties.conform import report as report_module
from properties.live.exchange import Unreachable
from properties.conform.run import NO_TIMERS, STATIC_UNSUPPORTED, Timing, run_schedule
from properties.conform.tally import Tally, print_summary
from properties.conform.target import Broker, Runner, group_id
from properties.conform.schedule import Schedule, generate
from properties.engine import run as engine
from properties.engine.interrupts import exit_status
from properties.engine.run import task_ranges
from properties.errors import Inconclusive, UsageError, host_and_port, int_at_least
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
                                                         f"afterwards: {', '.join(targets.launchable())}")
    where.add_argument("--matrix", metavar="kafka:A..B",
                       help="Kafka's release lines side by side: the same schedules against the latest release of "
                            "every line from A to B (e.g. kafka:2.0..4.1; or kafka:X,kafka:Y), one after the other, "
                            "and OUT/matrix.md: per release its verdict, per divergence the releases that show it")
    where.add_argument("--launch-cmd", metavar="'COMMAND {port}'",
                       help="start any broker with this command ({port}: a free loopback port, {dir}: a fresh data "
                            "folder), wait until it answers (60 s at most), restart it when it dies, stop it "
                            "afterwards; judged by --profile (default: Kafka's defaults, the bootstrap profile)")
    b.add_argument("--protocol", choices=("classic", "consumer"), default="classic",
                   help="classic (default): JoinGroup/SyncGroup/Heartbeat/LeaveGroup/OffsetCommit; consumer: "
                        "KIP-848's ConsumerGroupHeartbeat v1, judged by the KIP-848 model (properties/kip848/conform.py)")
    b.add_argument("--profile", metavar="FILE.toml|NAME",
                   help="judge the broker by this profile: a TOML file (docs/conform-broker.md, Profiles) or a "
                        "broker groupcheck knows (e.g. kafka:4.1 for a Kafka 4.1 cluster, whose coordinator answers "
                        "some requests differently from 3.9's); with --launch it replaces the launched broker's "
                        "own; default: the broker's own, for --bootstrap and --launch-cmd Kafka 3.9's")
    b.add_argument("--brokers", type=int_at_least("--brokers", 1), default=1, metavar="N",
                   help="with --launch kafka:...: a cluster of N nodes, and every schedule kills the node that "
                        "coordinates its group once (a failover step) and is judged through the takeover "
                        "(default 1: one node, no failover)")
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
    b.add_argument("--classic", type=int_at_least("--classic", 0), default=0, metavar="N",
                   help="with --protocol consumer: the last N members speak the classic protocol inside the "
                        "consumer group (Kafka 4.x's online migration: JoinGroup, SyncGroup, Heartbeat, LeaveGroup "
                        "to a consumer group); at least one member speaks the consumer protocol (default 0)")
    b.add_argument("--upgrade", action="store_true",
                   help="with --classic N: the first classic member forms a classic group first, and the first "
                        "consumer-protocol join upgrades it to a consumer group (Kafka 4.x's online upgrade), "
                        "judged from there on")
    b.add_argument("--shape", choices=("java", "librdkafka"), default="java",
                   help="with --protocol consumer: shape the heartbeats as this client library does (java, the "
                        "default: no regex beside the topic names; librdkafka: an empty regex beside them, which "
                        "Kafka reads as none and librdkafka's mock requires)")
    b.add_argument("--assignor", choices=("range", "uniform"), default="range",
                   help="with --protocol consumer: the server assignor every join asks for (ServerAssignor), "
                        "which the model runs too: range (the default) or uniform, Kafka's default and sticky")
    b.add_argument("--describe", action="store_true",
                   help="with --protocol consumer: after every agreed answer, read the group back with "
                        "ConsumerGroupDescribe and judge it too (epochs, every member's assignment and target)")
    b.add_argument("--timers", choices=("off", "on", "both"), default="off",
                   help="off (default): 30 s timeouts, judged deterministically; on: 2 s session and 1.5 s "
                        "rebalance timeouts, schedules wait past them, timers judged within a 250 ms tolerance window; "
                        "both (--matrix only): per release, --schedules with timers off, then --timed-schedules with "
                        "timers on")
    b.add_argument("--resume", action="store_true",
                   help="with --matrix: keep the reports already in OUT that are whole runs of the same settings "
                        "(a stopped matrix goes on where it stopped; with nothing left, the matrix is written again)")
    b.add_argument("--timed-schedules", type=int_at_least("--timed-schedules", 1), default=None, metavar="N",
                   help="with --matrix --timers both: the schedules with timers on (default: --schedules)")
    b.add_argument("--out", metavar="DIR", default=None, help="report directory (default reports/conform-SYSTEM)")
    b.add_argument("--json", action="store_true", help="print the summary as JSON")
    b.add_argument("--junit", metavar="FILE", default=None,
                   help="also write the result as JUnit XML to FILE (a test case per finding, one for the run)")
    b.add_argument("--baseline", metavar="REPORT.json", default=None,
                   help="an earlier report.json of conform broker: every divergence marked new or known, and the "
                        "ones it had that this run did not show listed as fixed")
    b.add_argument("--faults", action="store_true",
                   help="also pause the broker's process (SIGSTOP, then SIGCONT; a broker groupcheck started), "
                        "cut connections right after a request was written (read or not, either is judged right) "
                        "and, with timers off, kill and restart a broker that keeps storage (Kafka; --launch-cmd "
                        "with {dir}): what it persisted must be what the group has afterwards")
    b.add_argument("--parallel", type=int_at_least("--parallel", 1), default=1, metavar="N",
                   help="run N schedules at once against the broker, each with its own group (default 1). Each "
                        "schedule waits on the network most of the time; on a loaded machine the answer window "
                        "(--timers on: the timer tolerance) may be too short for many at once")
    b.add_argument("--shrink-seconds", type=int_at_least("--shrink-seconds", 1), default=600, metavar="S",
                   help="the time all shrinking may take, shared by the divergences still to shrink (default 600)")
    b.add_argument("--no-shrink", action="store_true", help="keep counterexamples as found")
    b.set_defaults(func=cmd_conform)
    from properties.clients.command import add_parser as add_client_parser

    add_client_parser(kinds)
    return p


def cmd_conform(args) -> int:
    if getattr(args, "conform_kind", None) == "client":
        return args.func(args)
    if getattr(args, "conform_kind", None) != "broker":
        raise UsageError("conform: say what to judge: groupcheck conform broker --bootstrap HOST:PORT | --launch NAME, "
                         "or groupcheck conform client --client NAME")
    if args.static > args.members:
        raise UsageError(f"--static {args.static}: more than the {args.members} members (--members)")
    if args.classic and args.protocol != "consumer":
        raise UsageError(f"--classic {args.classic}: classic members inside a consumer group need --protocol consumer "
                         "(with --protocol classic every member is classic)")
    if args.shape != "java" and args.protocol != "consumer":
        raise UsageError(f"--shape {args.shape}: the shape of KIP-848 heartbeats, for --protocol consumer")
    if args.describe and args.protocol != "consumer":
        raise UsageError("--describe: ConsumerGroupDescribe reads KIP-848 groups (--protocol consumer)")
    if args.assignor != "range" and args.protocol != "consumer":
        raise UsageError(f"--assignor {args.assignor}: server assignors belong to the consumer protocol (--protocol consumer)")
    if args.upgrade and not args.classic:
        raise UsageError("--upgrade: the group starts classic, so it needs a classic member (--classic N, with "
                         "--protocol consumer)")
    if args.classic >= args.members:
        raise UsageError(f"--classic {args.classic}: at least one of the {args.members} members (--members) must speak "
                         "the consumer protocol (it creates the consumer group)")
    if args.static + args.classic > args.members:
        raise UsageError(f"--static {args.static} and --classic {args.classic}: more than the {args.members} members "
                         "(--members); static members speak the consumer protocol, classic ones are dynamic")
    if args.protocol == "consumer":
        from properties.kip848.conform import cmd_broker

        return cmd_broker(args)
    if not args.bootstrap and not args.launch and not args.launch_cmd and not args.matrix:
        raise UsageError("conform broker: give --bootstrap HOST:PORT or --launch NAME (or --launch-cmd 'COMMAND {port}', "
                         "or --matrix kafka:A..B)")
    if args.mutant and not args.launch:
        raise UsageError("--mutant needs --launch groupcheck")
    if args.junit:
        junit.check_path(args.junit)
    args.baseline_report = shape.load_baseline(args.baseline)  # before anything starts: a bad file is a usage error
    if args.parallel > 1 and args.faults:
        raise UsageError(f"--parallel {args.parallel} with --faults: a pause stops the broker every schedule under way "
                         "shares; faults are judged one schedule at a time")
    if args.timers == "both" and not args.matrix:
        raise UsageError("--timers both is for --matrix (each release judged with timers off, then on); "
                         "judge one broker with --timers off or --timers on")
    if args.resume and not args.matrix:
        raise UsageError("--resume is for --matrix (it keeps the releases' reports already in its OUT)")
    if args.timed_schedules is not None and args.timers != "both":
        raise UsageError(f"--timed-schedules {args.timed_schedules} needs --matrix ... --timers both "
                         f"(with --timers {args.timers}, --schedules says how many)")
    if args.matrix:
        for option, given in (("--profile", args.profile), ("--mutant", args.mutant), ("--baseline", args.baseline),
                              ("--junit", args.junit), ("--brokers", args.brokers != 1)):
            if given:
                raise UsageError(f"{option} with --matrix: each release is judged by its own profile, as one node, "
                                 "against no baseline")
        from properties.conform import matrix

        matrix.releases(args.matrix)  # a bad range is a usage error before anything starts
        return matrix.run(args, _campaign)
    if args.parallel > 1 and args.brokers != 1:
        raise UsageError(f"--parallel {args.parallel} with --brokers {args.brokers}: a failover kills the node every "
                         "group under way is coordinated by; failovers are judged one schedule at a time")
    if args.brokers != 1 and not args.launch:
        raise UsageError(f"--brokers {args.brokers} is for --launch (groupcheck cannot kill nodes of a cluster it "
                         "did not start)")
    if args.brokers != 1 and args.timers == "on":
        raise UsageError(f"--brokers {args.brokers} judges failovers with --timers off only: when the new coordinator "
                         "loaded the group, which restarts every session timer, is not known within the timers' "
                         "tolerance")
    if args.bootstrap:
        host_and_port(args.bootstrap)
        target = bootstrap_target(args.profile)
    elif args.launch_cmd:
        target = targets.command_target(args.launch_cmd, targets.profile_for(args.profile) if args.profile else None)
        args.out = args.out or f"reports/conform-{report_module.slug(target.name)}"
    else:
        target = targets.get(targets.BROKER, args.launch, "--launch")
        target.check_mutant(args.mutant)
        target.check_brokers(args.brokers)
        if args.profile:  # judged by another profile than its own (how it is started does not change)
            target = attrs.evolve(target, profile=targets.profile_for(args.profile))
    return _campaign(args, target)


def bootstrap_target(profile: Optional[str]) -> targets.Target:
    """The target a --bootstrap broker is judged as: with *profile* (a --profile value: a TOML file
    or a known broker's name), that profile."""
    target = targets.get(targets.BROKER, "bootstrap", "--bootstrap")
    if profile is None:
        return target
    return attrs.evolve(target, profile=targets.profile_for(profile))


def _campaign(args, target: targets.Target) -> int:
    """The schedules against *target*, one after the other in this process (a signal stops the
    schedule under way at once) or ``--parallel N`` at once on the engine's threads (a signal lets
    the ones under way finish, a second abandons them); the report of those that finished is
    written, marked partial, and the exit status is 128 + the signal's number."""
    timing = Timing.with_timers(target.profile.timer_tolerance_ms) if args.timers == "on" else NO_TIMERS
    started = time.monotonic()
    progress = Progress(args.schedules, unit="schedules", failures="divergences")
    tally = Tally()
    with engine.session() as interrupts:
        broker = Broker(target, args.mutant, args.bootstrap, timers=timing.timers, brokers=args.brokers)
        try:
            run = Runner(broker, timing)

            def work(start: int, stop: int) -> list:
                results = []
                for seed in range(start, stop):
                    result = run(generate(seed, members=args.members, steps=args.steps, timers=timing.timers,
                                          static=args.static, failover=args.brokers > 1, faults=args.faults))
                    if result.failure and result.steps_run == 0 and not result.trace and seed == args.seed and (
                            not broker.launched or result.failure.startswith(STATIC_UNSUPPORTED)):
                        if result.failure.startswith(STATIC_UNSUPPORTED):
                            raise UsageError(f"{broker.text}: {result.failure}")
                        raise Inconclusive(f"{broker.text}: {result.failure}")
                    if not broker.launched and result.failure and \
                            result.failure.startswith("the broker stopped accepting"):
                        tally.stop_requested = "the broker stopped accepting connections"
                        tally.stopped_after = seed - args.seed + 1  # every later schedule would fail the same way
                    results.append(result)
                return results

            executor = engine.InProcess() if args.parallel == 1 else engine.Threads(args.parallel)
            outcome = engine.run(task_ranges(args.seed, args.schedules, 1), work, tally, executor, progress, interrupts)
            with interrupts.held(release=False):
                progress(tally.done, tally.failed, final=True)
                settings = {"seed": args.seed, "members": args.members, "steps": args.steps, "static": args.static,
                            "brokers": args.brokers, "parallel": args.parallel, "faults": args.faults}
                out = args.out or f"reports/conform-{report_module.slug(args.launch or 'bootstrap')}"
                summary = tally.finish(run, broker, timing, args.mutant, settings, out, time.monotonic() - started,
                                       shrinking=not args.no_shrink and not outcome.partial, requested=args.schedules,
                                       stopped_by=outcome.stopped_by, baseline=args.baseline_report,
                                       shrink_seconds=args.shrink_seconds,
                                       stop=lambda: interrupts.signum is not None, say=progress.write)
                print_summary(summary, args.json, out)
                if args.junit:
                    junit.write(summary, args.junit)
        finally:
            with interrupts.held(release=False):
                broker.stop()
    outcome.report_end(out)
    if interrupts.signum is not None and outcome.stopped_by is None:
        # a signal while the counterexamples were shrunk: every schedule ran and the report is
        # whole, those not yet shrunk kept as found; the run was still stopped (a matrix stops too)
        return exit_status(interrupts.signum)
    return outcome.exit_status(shape.exit_status(summary))


def replay(path: str, bootstrap: Optional[str], launch: Optional[str], mutant: Optional[str], as_json: bool,
           brokers: int = 1, launch_cmd: Optional[str] = None, profile: Optional[str] = None) -> int:
    """``groupcheck replay FILE --bootstrap HOST:PORT | --launch NAME``: run a conformance
    counterexample's schedule again and say whether it still diverges the same way."""
    try:
        with open(path) as f:
            example = json.load(f)
        schedule = Schedule.from_json(example["schedule"])
        signature = example["signature"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UsageError(f"{path}: not a readable conformance counterexample ({e})") from None
    if not bootstrap and not launch and not launch_cmd:
        raise UsageError(f"{path} is a broker counterexample: give --bootstrap HOST:PORT or --launch NAME")
    if sum(map(bool, (bootstrap, launch, launch_cmd))) > 1:
        raise UsageError(f"{path}: give one of --bootstrap, --launch and --launch-cmd")
    if any(step.action == "failover" for step in schedule.steps) and brokers == 1:
        raise UsageError(f"{path}: its schedule kills the group's coordinator; replay it on a cluster: "
                         "--launch kafka:... --brokers 3")
    if launch:
        target = targets.get(targets.BROKER, launch, "--launch")
        target.check_mutant(mutant)
        target.check_brokers(brokers)
        if profile:
            target = attrs.evolve(target, profile=targets.profile_for(profile))
    elif brokers != 1:
        raise UsageError(f"--brokers {brokers} is for --launch")
    elif mutant:
        raise UsageError("--mutant needs --launch groupcheck")
    elif launch_cmd:
        target = targets.command_target(launch_cmd, targets.profile_for(profile) if profile else None)
    else:
        host_and_port(bootstrap)
        target = bootstrap_target(profile)
    timing = Timing.with_timers(target.profile.timer_tolerance_ms) if example.get("timers") else NO_TIMERS
    with engine.session():
        broker = Broker(target, mutant, bootstrap, timers=timing.timers, brokers=brokers)
        try:
            result = run_schedule(broker.address, schedule, group_id(schedule.seed, "replay-" + uuid.uuid4().hex[:8]),
                                  broker.profile, park_ms=broker.profile.answer_window_ms, timing=timing,
                                  failover=broker.failover, pause=broker.pause, restart=broker.restart)
        except Unreachable as e:
            raise Inconclusive(str(e)) from None
        finally:
            broker.stop()
    same = signature in result.signatures()
    if as_json:
        print(json.dumps({"file": path, "signature": signature, "reproduced": same, "now": result.signature(),
                          "signatures": list(result.signatures()), "verdict": result.verdict,
                          "trace": list(result.trace)}, indent=1))
    else:
        for x in result.trace:
            if "note" in x:
                print(f"{x['t_ms']:>6} ms  m{x['member']}  {x['note']}")
            else:
                print(f"{x['t_ms']:>6} ms  m{x['member']}#{x['connection']} {x['direction'][:3]} {x['api']} "
                      f"v{x['version']} {json.dumps(x['body'])[:200]}")
        for d in result.divergences:
            print(f"step {d.step}: {d.summary}")
        if result.failure:
            print(result.failure)
        print(f"{'reproduced' if same else 'NOT reproduced'}: {signature}" + (
            "" if same else f" (now: {'; '.join(result.signatures()) or 'conforms'})"))
    return 1 if same else 0
