"""The ``groupcheck`` command line.

Commands (stable interface; exit 0 = ok, 1 = a property failed, 2 = usage error):

* ``groupcheck properties [--json]`` — the property catalogue;
* ``groupcheck run --seed N [--system impl|model] [--steps K] [--clients C] [--brokers B] [--faults F]
  [--set NAME=VALUE ...] [--out FILE [--force]] [--json]`` — one seeded interleaving, checked after
  every step (``impl``, the default of every command: the implementation beside the model);
  ``--out`` writes a counterexample file;
* ``groupcheck replay FILE [--last N] [--json]`` — reproduce a counterexample file, as a per-step
  table (a window around the failing step, or the last N events);
* ``groupcheck walk [--seeds N] [--seed-start S] ...`` — many seeded interleavings in one process;
* ``groupcheck bench [--system model|impl --seconds S] [--json]`` — steps per second on one core,
  or (without ``--system``) the campaign benchmark;
* ``groupcheck bench --shrink [FILE] [--shrink-seconds S] [--json]`` — shrinking a long failing
  schedule (a counterexample file, or a long walk against a mutant): events before/after, replays,
  seconds;
* ``groupcheck explore [--clients C --brokers B ...] [--master M]`` — exhaust a tiny world breadth
  first, then tour the implementation along every explored transition;
* ``groupcheck campaign``, ``mutants``, ``prove`` — registered from their wings;
* ``groupcheck --version`` — the version and the git commit of the code.

Every command that builds a world takes the same world options with the same defaults
(:func:`_world_arguments`), including ``--set NAME=VALUE`` with Kafka's property names.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from model.config import Config, ConfigError, settings_of
from properties.catalogue import CATALOGUE
from properties.systems import SYSTEMS
from properties.errors import INCONCLUSIVE, Inconclusive, UsageError, add_settings_argument, check_output_file, int_at_least
from properties.explore.swarm import FIXED_WORLD
from properties.explore.walker import DEFAULT_STEPS, FAULT_PROFILES
from properties.mutation.mutants import StaleMutant
from properties.provenance import describe, provenance


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one clear line and exit 2, never a traceback
        raise UsageError(message)


def _non_negative_int(name):
    return int_at_least(name, 0)


def _positive_int(name):
    return int_at_least(name, 1)


def add_wire_argument(p: argparse.ArgumentParser) -> None:
    """``--wire``: the implementation's simulated links carry Kafka's wire format."""
    p.add_argument("--wire", action="store_true",
                   help="encode and decode every message on the implementation's simulated links with the wire "
                        "codec (impl/wire), so the run exercises it; --system impl only")


def _world_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--system", default="impl",
                   help="system under check: impl (the implementation beside the model; default) or model")
    p.add_argument("--world", default="fixed", choices=("fixed", "swarm"),
                   help="fixed: one world for every seed (the options below; default); swarm: each seed draws its "
                        "own world (clients, brokers, partitions, timeouts, JoinGroup version, assignors, faults, "
                        "length; properties/explore/swarm.py) and the options given explicitly pin theirs")
    p.add_argument("--steps", type=_positive_int("--steps"), default=None,
                   help=f"random events per interleaving (default {DEFAULT_STEPS})")
    p.add_argument("--clients", type=_positive_int("--clients"), default=None, help="consumers (default 3)")
    p.add_argument("--brokers", type=_positive_int("--brokers"), default=None, help="brokers (default 3)")
    p.add_argument("--partitions", type=_positive_int("--partitions"), default=None, help="partitions (default 6)")
    p.add_argument("--faults", default=None, help=f"fault profile: {', '.join(FAULT_PROFILES)} (default all)")
    p.add_argument("--broken", action="append", default=[], metavar="VARIANT",
                   help="run a deliberately broken model variant (see model/variants.py); repeatable")
    p.add_argument("--mutant", default=None, metavar="NAME",
                   help="run against a mutated implementation (see groupcheck mutants --list); --system impl only")
    add_settings_argument(p)
    add_wire_argument(p)
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="groupcheck", description="Check Kafka consumer-group protocol implementations against a reference model.")
    parser.add_argument("--version", action="version", version=describe())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("properties", help="list the property catalogue")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("run", help="run one seeded interleaving")
    p.add_argument("--seed", type=_non_negative_int("--seed"), required=True)
    p.add_argument("--out", metavar="FILE", help="write the counterexample (if any) to FILE as JSON")
    p.add_argument("--force", action="store_true", help="with --out: replace an existing FILE")
    _world_arguments(p)

    p = sub.add_parser("replay", help="reproduce a counterexample file, step by step")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--last", type=_positive_int("--last"), default=None, metavar="N",
                   help="show the last N events (default: the failing step and the 150 before it)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--bootstrap", metavar="HOST:PORT", help="broker counterexamples: the broker to replay against")
    p.add_argument("--launch", metavar="NAME", help="broker counterexamples: start this broker to replay against")
    p.add_argument("--launch-cmd", metavar="'COMMAND {port}'",
                   help="broker counterexamples: start any broker with this command to replay against")
    p.add_argument("--profile", metavar="FILE.toml|NAME",
                   help="broker counterexamples: judge the replay by this profile (default: the broker's own)")
    p.add_argument("--mutant", metavar="NAME", help="broker counterexamples: with --launch groupcheck, the mutant")
    p.add_argument("--brokers", type=_positive_int("--brokers"), default=1, metavar="N",
                   help="broker counterexamples: with --launch kafka:..., a cluster of N nodes (a schedule with a "
                        "failover needs one)")

    p = sub.add_parser("walk", help="run many seeded interleavings in this process")
    p.add_argument("--seeds", type=_positive_int("--seeds"), default=1000)
    p.add_argument("--seed-start", type=_non_negative_int("--seed-start"), default=0)
    _world_arguments(p)

    from properties.campaign.spark import add_parser as add_campaign_parser

    add_campaign_parser(sub)

    from properties.mutation.mutants import add_parser as add_mutants_parser

    add_mutants_parser(sub)

    p = sub.add_parser("bench", help="campaign throughput (one process vs Spark), or steps per second with --system")
    p.add_argument("--system", default=None,
                   help="model (checked model steps/s) or impl (differential steps/s) on one core; "
                        "without it: the campaign benchmark, one process versus Spark local[2]")
    p.add_argument("--seconds", type=float, default=None,
                   help="with --system: how long to measure (default 10); with --wire: the throughput run per broker "
                        "(default 10)")
    p.add_argument("--wire", action="store_true",
                   help="TCP benchmark: heartbeat round-trip latency (p50, p99) and heartbeats/s from 50 connections, "
                        "groupcheck broker beside Tansu on loopback, each broker pinned to one core, with the ratios")
    p.add_argument("--connections", type=_positive_int("--connections"), default=50,
                   help="with --wire: connections (members) of the throughput run (default 50)")
    p.add_argument("--round-trips", type=_positive_int("--round-trips"), default=5000,
                   help="with --wire: heartbeat round trips of the latency run (default 5000)")
    p.add_argument("--interleavings", type=_positive_int("--interleavings"), default=None,
                   help="campaign benchmark: interleavings run both ways (default 2000)")
    p.add_argument("--no-eventually", dest="eventually", action="store_false",
                   help="campaign benchmark: no settle phase (the fast configuration)")
    p.add_argument("--million", action="store_true", help="campaign benchmark: also time 1,000,000 interleavings on Spark (long)")
    p.add_argument("--shrink", nargs="?", const="", default=None, metavar="FILE",
                   help="shrink benchmark: shrink the counterexample FILE (without FILE: a long walk against a mutant "
                        "that fails late) and print the figures")
    p.add_argument("--shrink-seconds", type=float, default=600.0, help="shrink benchmark: the budget (default 600)")
    p.add_argument("--against", default=None, metavar="DIR",
                   help="with --system impl: this checkout's differential steps/s against the groupcheck checkout DIR's, "
                        "on the same schedules (drawn by DIR's walker), both at once on cores of their own")
    p.add_argument("--walks", type=_positive_int("--walks"), default=300,
                   help="with --against: schedules replayed (default 300)")
    p.add_argument("--rounds", type=_positive_int("--rounds"), default=2,
                   help="with --against: measurements, the cores swapped each time (default 2)")
    p.add_argument("--by-kind", action="store_true",
                   help="with --against: one more pass of each checkout, every event timed, the times "
                        "per event kind side by side (which kinds keep the ratio where it is)")
    p.add_argument("--json", action="store_true")

    from properties.proofs.prove import add_parser as add_prove_parser

    add_prove_parser(sub)

    from properties.live.broker import add_parser as add_broker_parser

    add_broker_parser(sub)

    from properties.campaign.explore import add_parser as add_explore_parser

    add_explore_parser(sub)

    from properties.live.consume import add_parser as add_consume_parser

    add_consume_parser(sub)

    from properties.conform.command import add_parser as add_conform_parser

    add_conform_parser(sub)

    from properties.kip848.command import add_parser as add_kip848_parser

    add_kip848_parser(sub)
    return parser


_FIXED = {k: v for k, v in FIXED_WORLD.items() if k != "max_faults"}  # run and walk take no --max-faults


def _given(args) -> dict:
    """The world options given on the command line (None for those left out)."""
    return {name: getattr(args, name) for name in _FIXED}


def _fixed(args, name):
    value = getattr(args, name)
    return _FIXED[name] if value is None else value


def _config(args) -> Config:
    """The fixed world's Config; for ``--world swarm`` the base each seed's draw starts from
    (broken variants, wire), with the pinned options checked."""
    from properties.explore.swarm import check_pins
    from properties.systems import world_config

    swarm = getattr(args, "world", "fixed") == "swarm"
    try:
        config = world_config(args.system, _fixed(args, "faults"), _fixed(args, "clients"), _fixed(args, "brokers"),
                              _fixed(args, "partitions"), args.broken, () if swarm else args.settings, wire=args.wire)
        if swarm:
            check_pins(dict(_given(args), settings=args.settings))
    except ConfigError as e:
        raise UsageError(str(e)) from None
    if args.mutant is not None:
        from properties.mutation.mutants import ALL

        if args.mutant not in ALL:
            raise UsageError(f"--mutant must be one of {', '.join(sorted(ALL))}, got {args.mutant!r}")
        if args.system != "impl":
            raise UsageError("--mutant mutates the implementation: use it with --system impl")
    return config


def _mutated(args):
    """The context the run happens in: the mutant applied to impl/, or nothing."""
    import contextlib

    if args.mutant is None:
        return contextlib.nullcontext()
    from properties.mutation.mutants import applied

    return applied(args.mutant)


def world_for(args, config: Config, seed: int):
    """(config, steps, faults, walk options) of interleaving *seed*: the fixed world, or with
    ``--world swarm`` the seed's own draw (:func:`properties.explore.swarm.draw`)."""
    if getattr(args, "world", "fixed") != "swarm":
        return config, _fixed(args, "steps"), _fixed(args, "faults"), {}
    from properties.explore.swarm import draw

    w = draw(seed, config, dict(_given(args), settings=args.settings))
    return w.config, w.steps, w.faults, w.walk_options()


def replay_command(args, seed: int) -> str:
    if getattr(args, "world", "fixed") == "swarm":
        cmd = f"groupcheck run --seed {seed} --world swarm --system {args.system}" + "".join(
            f" --{name} {value}" for name, value in _given(args).items() if value is not None)
    else:
        cmd = (f"groupcheck run --seed {seed} --system {args.system} --steps {_fixed(args, 'steps')} "
               f"--clients {_fixed(args, 'clients')} --brokers {_fixed(args, 'brokers')} "
               f"--partitions {_fixed(args, 'partitions')} --faults {_fixed(args, 'faults')}")
    return (cmd + "".join(f" --broken {b}" for b in args.broken) + (f" --mutant {args.mutant}" if args.mutant else "")
            + (" --wire" if args.wire else "")
            + "".join(f" --set {s}" for s in args.settings))


def cmd_properties(args) -> int:
    from properties.systems.differential import IMPL_PROPERTIES

    listed = [(p, ("impl",)) for p in IMPL_PROPERTIES] + [(p, SYSTEMS) for p in CATALOGUE]  # impl only: the first
    if args.json:
        print(json.dumps([p.as_dict() for p, _ in listed], indent=2))
        return 0
    for p, systems in listed:
        print(f"{p.name}  [{p.kind}]" + ("" if systems == SYSTEMS else f"  (system {', '.join(systems)} only)"))
        print(f"    {p.statement}")
        print(f"    source: {p.source}\n")
    return 0


def cmd_run(args) -> int:
    from properties.campaign import counterexample
    from properties import systems

    config, steps, faults, options = world_for(args, _config(args), args.seed)
    if args.out:
        check_output_file(args.out, "--out", args.force)
    with _mutated(args):
        result = systems.run(args.system, args.seed, config, steps=steps, faults=faults, **options)
    v = result.violation
    if v is not None and args.out:
        document = counterexample.build(result, system=args.system, seed=args.seed, config=config, steps=steps,
                                        faults=faults, **options)
        document["mutant"] = args.mutant
        counterexample.write(args.out, document)
    out = {
        "seed": args.seed,
        "system": args.system,
        "steps": result.steps,
        "verdict": result.verdict,
        "property": v.property if v else None,
        "step": result.step,
        "trace_hash": result.trace_hash,
        "replay": replay_command(args, args.seed),
        "out": args.out if v is not None and args.out else None,
        **_stamped(config),
    }
    print(json.dumps(out) if args.json else "\n".join(_run_in_words(result, out, args.out)))
    return 0 if v is None else 1


def _stamped(config) -> dict:
    """What every --json summary carries: the world's settings and the tool's provenance."""
    return {"settings": settings_of(config), "tool": provenance()}


def _run_in_words(result, out: dict, asked_out):
    """`groupcheck run` without --json: the verdict, and for a failure its last events and replay."""
    yield f"seed {out['seed']}: {result.verdict} after {result.steps} events (trace {result.trace_hash})"
    v = result.violation
    if v:
        yield f"property {v.property} failed at step {result.step}: {v.message}"
        yield "last events:"
        for i, ev in list(enumerate(result.schedule))[-12:]:
            yield f"  {i:5d}  {ev}"
        yield f"replay: {out['replay']}"
        if out["out"]:
            yield f"counterexample written to {out['out']}; replay it with: groupcheck replay {out['out']}"
    elif asked_out:
        yield f"no counterexample, so nothing was written to {asked_out}"


def cmd_replay(args) -> int:
    from properties.campaign.replay import replay_file
    from properties.conform import command as conform
    from properties.conform.report import KIND

    from properties.clients import command as clients

    data = None
    try:
        with open(args.file) as f:
            data = json.load(f)
        kind = data.get("kind")
    except (OSError, ValueError, AttributeError):
        kind = None  # replay_file reports what is wrong with the file
    if kind == clients.KIND:
        if args.bootstrap or args.launch or args.mutant or args.launch_cmd or args.profile:
            raise UsageError(f"{args.file}: a client counterexample starts its own broker: no --bootstrap, --launch, "
                             "--launch-cmd, --profile or --mutant")
        return clients.replay(args.file, data, args.json)
    if kind == KIND:
        return conform.replay(args.file, args.bootstrap, args.launch, args.mutant, args.json, args.brokers,
                              launch_cmd=args.launch_cmd, profile=args.profile)
    if args.bootstrap or args.launch or args.mutant or args.launch_cmd or args.profile:
        raise UsageError(f"{args.file}: --bootstrap, --launch, --launch-cmd, --profile and --mutant are for broker "
                         "conformance counterexamples")
    return replay_file(args.file, as_json=args.json, last=args.last)


def cmd_walk(args) -> int:
    from properties import systems
    from properties.progress import Progress

    config = _config(args)
    start = time.perf_counter()
    failures: dict = {}
    coverage: dict = {}
    events = 0
    progress = Progress(args.seeds)  # on stderr: stdout stays clean for --json
    for i, seed in enumerate(range(args.seed_start, args.seed_start + args.seeds), 1):
        world, steps, faults, options = world_for(args, config, seed)
        with _mutated(args):
            result = systems.run(args.system, seed, world, steps=steps, faults=faults, **options)
        events += result.steps
        for name, hits in result.coverage.items():
            coverage[name] = coverage.get(name, 0) + hits
        if result.violation:
            failures.setdefault(result.violation.property, []).append(seed)
        progress(i, sum(map(len, failures.values())), final=i == args.seeds)
    seconds = time.perf_counter() - start
    summary = {
        "seed_start": args.seed_start,
        "interleavings": args.seeds,
        "events": events,
        "seconds": round(seconds, 3),
        "rate": round(args.seeds / seconds, 1),
        "violations": {k: {"count": len(v), "example_seeds": v[:5]} for k, v in sorted(failures.items())},
        "coverage": dict(sorted(coverage.items())),
        "system": args.system,
        "world": args.world,
        "steps": args.steps if args.world == "swarm" else _fixed(args, "steps"),
        **_stamped(config),
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{args.seeds} interleavings ({events} events) in {seconds:.1f} s")
        if not failures:
            print("no property failed")
        for name, seeds in sorted(failures.items()):
            print(f"FAILED {name}: {len(seeds)} interleavings, e.g. " + replay_command(args, seeds[0]))
        never = [name for name, hits in sorted(coverage.items()) if hits == 0]
        print("sometimes properties reached: " + ", ".join(f"{n} {h}" for n, h in sorted(coverage.items()) if h))
        print("never reached (coverage gaps): " + (", ".join(never) if never else "none"))
    return 1 if failures else 0


def _bench_against(args) -> int:
    """``bench --system impl --against DIR`` (:mod:`properties.bench_versions`)."""
    from properties.bench_versions import bench_against

    if args.system != "impl":
        raise UsageError("--against times the differential check: use it with --system impl"
                         + ("" if args.system is None else f", not --system {args.system}"))
    for flag, given in (("--seconds", args.seconds is not None), ("--wire", args.wire), ("--shrink", args.shrink is not None),
                        ("--interleavings", args.interleavings is not None)):
        if given:
            raise UsageError(f"{flag} does not go with --against (sized by --walks and --rounds)")
    result = bench_against(args.against, walks=args.walks, rounds=args.rounds, by_kind=args.by_kind,
                           progress=None if args.json else (lambda line: print(line, flush=True)))
    if args.json:
        print(json.dumps(result))
    else:
        ratios = [row["ratio"] for row in result["rounds"]]
        print(f"this checkout against {result['against']}: {min(ratios):.2f}x to {max(ratios):.2f}x the differential "
              f"steps per second ({'at once on two cores' if result['at_once'] else 'one after the other on one core'}); "
              f"diverged: {result['rounds'][0]['diverged']} here, {result['rounds'][0]['against_diverged']} there")
        if "by_kind" in result:
            print("by event kind (one more pass each; an event timed from the model's step to the catalogue's check, "
                  "the timing included):")
            print(f"  {'kind':<16}{'events':>9}{'us here':>10}{'us there':>10}{'ratio':>8}{'share here':>12}")

            def us(v):
                return "-" if v is None else f"{v:.1f}"
            for row in result["by_kind"]:
                print(f"  {row['kind']:<16}{row['events']:>9,}{us(row['us_per_event']):>10}{us(row['against_us_per_event']):>10}"
                      f"{'-' if row['ratio'] is None else format(row['ratio'], '.2f') + 'x':>8}{100 * row['share']:>11.1f}%")
    return 0


def cmd_bench(args) -> int:
    if args.against is not None:
        return _bench_against(args)
    if args.by_kind:
        raise UsageError("--by-kind compares two checkouts: use it with --system impl --against DIR")
    if args.wire:
        return _bench_wire(args)
    if args.shrink is not None:
        return _bench_shrink(args)
    if args.system is None:
        if args.seconds is not None:
            raise UsageError("--seconds measures steps per second with --system model|impl; "
                             "the campaign benchmark (no --system) is sized by --interleavings")
        return _bench_campaign(args)
    if args.system not in SYSTEMS:
        raise UsageError(f"--system must be one of {', '.join(SYSTEMS)}, got {args.system!r}")
    given = [flag for flag, on in (("--interleavings", args.interleavings is not None),
                                   ("--no-eventually", not args.eventually), ("--million", args.million)) if on]
    if given:
        raise UsageError(f"{given[0]} belongs to the campaign benchmark (bench without --system)")
    seconds = 10.0 if args.seconds is None else args.seconds
    if not seconds > 0:
        raise UsageError(f"--seconds must be positive, got {args.seconds}")
    from properties.bench import bench_impl, bench_model

    result = (bench_model if args.system == "model" else bench_impl)(seconds)
    if args.json:
        print(json.dumps(result))
    elif args.system == "model":
        print(
            f"model: {result['steps_per_second']:.0f} steps/s with every always property checked "
            f"({result['unchecked_steps_per_second']:.0f} steps/s without checks), "
            f"{result['clients']} clients, {result['brokers']} brokers, {result['partitions']} partitions, one core"
        )
    else:
        print(
            f"impl: {result['steps_per_second']:.0f} differential steps/s (model and implementation stepped, "
            f"observations compared, both sides checked), {result['clients']} clients, {result['brokers']} brokers, one core; "
            f"{result['interleavings_per_second']:.1f} of the walker's interleavings/s ({result['interleavings']:,} walks, "
            f"{result['steps']:,} steps)\n"
            f"  where the time goes: implementation {result['share_impl']:.0%} "
            f"({result['impl_alone_steps_per_second']:.0f} steps/s alone), model {result['share_model']:.0%} "
            f"({result['model_alone_steps_per_second']:.0f} steps/s alone), comparison and property checks "
            f"{result['share_compare_and_checks']:.0%}\n"
            f"  --wire (every message encoded and decoded on the links): {result['wire_steps_per_second']:.0f} "
            f"steps/s, {result['wire_cost']:.2f}x the time per step, {result['wire_us_per_frame']:.0f} µs per frame "
            f"({result['wire_frames']:,} frames)"
        )
    return 0


def _bench_wire(args) -> int:
    """groupcheck broker beside Tansu over loopback TCP (properties.live.wire_bench)."""
    given = [flag for flag, on in (("--system", args.system is not None), ("--shrink", args.shrink is not None),
                                   ("--interleavings", args.interleavings is not None),
                                   ("--million", args.million)) if on]
    if given:
        raise UsageError(f"{given[0]} does not go with --wire (the TCP benchmark)")
    seconds = 10.0 if args.seconds is None else args.seconds
    if not seconds > 0:
        raise UsageError(f"--seconds must be positive, got {args.seconds}")
    from properties.live import tansu, wire_bench

    tansu.binary()  # one clear line when Tansu (the test extra) is not installed
    progress = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        result = wire_bench.run(args.round_trips, args.connections, seconds, progress)
    except (wire_bench.BenchError, RuntimeError, OSError) as e:
        print(f"groupcheck bench --wire: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result) if args.json else wire_bench.describe(result))
    return 0


def _bench_shrink(args) -> int:
    """Shrinking a long failing schedule (properties.campaign.shrink_bench)."""
    from properties.campaign.counterexample import CounterexampleError
    from properties.campaign.shrink_bench import bench_shrink, report_lines

    if args.shrink_seconds <= 0:
        raise UsageError(f"--shrink-seconds must be positive, got {args.shrink_seconds}")
    log = None if args.json else (lambda phase, events, replays, seconds: print(
        f"  {seconds:8.1f} s  {replays:6,} replays  {events:9,} events  after {phase}", file=sys.stderr, flush=True))
    try:
        result = bench_shrink(args.shrink or None, budget_seconds=args.shrink_seconds, log=log)
    except CounterexampleError as e:
        raise UsageError(f"--shrink {e}") from None
    print(json.dumps(result) if args.json else "\n".join(report_lines(result)))
    return 0


def _bench_campaign(args) -> int:
    """One process versus Spark local[2] over the same seeds (properties.campaign.bench)."""
    from properties.campaign.bench import bench_campaign

    result = bench_campaign(interleavings=args.interleavings or 2000, eventually=args.eventually, million=args.million)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{result['interleavings']} interleavings (3 clients, 3 brokers, all faults): one process "
          f"{result['single_process_rate']:.1f}/s, Spark {result['master']} {result['spark_rate']:.1f}/s, "
          f"ratio {result['ratio']:.2f}")
    million = result.get("million")
    if million:
        print(f"1,000,000 interleavings on Spark: {million['wall_seconds']:.0f} s wall ({million['rate']:.0f}/s), "
              f"{million['violations']} violations")
    return 0


def _cmd_campaign(args) -> int:
    """``groupcheck campaign``: the system (:mod:`properties.targets`) says which campaign runs —
    the simulated world's, or conformance schedules against a broker or a client library."""
    from properties import targets
    from properties.campaign.spark import cmd_campaign, search_of
    from properties.engine.errors import RunError

    target = targets.resolve(args.system)
    if target.kind == targets.SIMULATED:
        if args.bootstrap or args.timers != "off" or args.profile:
            raise UsageError("--bootstrap, --timers and --profile are for --system broker:NAME")
        return cmd_campaign(args)
    if target.kind == targets.CLIENT:
        if args.profile:
            raise UsageError("--profile is for --system broker:NAME")
        from properties.clients.spark import cmd_client_campaign as run
    else:
        from properties.conform.spark import cmd_broker_campaign as run
    try:
        search_of(args)  # client and broker campaigns run seeded schedules: --search guided is refused
        return run(args)
    except RunError as e:
        print(f"groupcheck: error: {e}", file=sys.stderr)
        return 2


def _cmd_mutants(args) -> int:
    from properties.mutation.mutants import cmd_mutants

    return cmd_mutants(args)


def _cmd_prove(args) -> int:
    from properties.proofs.prove import cmd_prove

    return cmd_prove(args)


COMMANDS = {"properties": cmd_properties, "run": cmd_run, "replay": cmd_replay, "walk": cmd_walk, "bench": cmd_bench,
            "campaign": _cmd_campaign, "mutants": _cmd_mutants, "prove": _cmd_prove,
            "broker": lambda args: args.func(args), "explore": lambda args: args.func(args), "consume": lambda args: args.func(args),
            "conform": lambda args: _cmd_conform(args), "kip848": lambda args: _cmd_kip848(args)}


def _cmd_kip848(args) -> int:
    from properties.kip848.command import run

    return run(args)


def _cmd_conform(args) -> int:
    from properties.conform.command import cmd_conform

    return cmd_conform(args)


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        return COMMANDS[args.command](args)
    except UsageError as e:
        print(f"groupcheck: error: {e}", file=sys.stderr)
        return 2
    except Inconclusive as e:
        print(f"groupcheck: inconclusive: {e}", file=sys.stderr)
        return INCONCLUSIVE
    except StaleMutant as e:  # impl/ changed under a mutant's text: the catalogue needs its update
        print(f"groupcheck: error: {e} (properties/mutation: update the mutant's text to today's impl/)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("groupcheck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
