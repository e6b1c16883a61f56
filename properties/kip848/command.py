"""``groupcheck kip848``: seeded walks of KIP-848 worlds, their counterexamples, and the broken
variants' kill table.

    groupcheck kip848 --seeds 2000                 walk seeds 0..1999, then the directed schedules; verdicts, coverage
    groupcheck kip848 --seeds 500 --broken NAME    the same with a broken variant of the model
    groupcheck kip848 --seeds 2000 --out ce.json   also write the first counterexample
    groupcheck kip848 --replay ce.json             replay a counterexample file step by step
    groupcheck kip848 --variants                   the first seed that catches each broken variant
    groupcheck kip848 --mutants                    the first campaign seed that kills each impl/ mutant
    groupcheck kip848 --seeds 500 --mutant NAME    walks with one mutant of impl/'s coordinator

A walk runs impl/'s KIP-848 coordinator and consumers beside the model's (``--system impl``, the default) unless
a broken variant of the model is asked for, which is judged by the properties alone (``--system
model``, the default with ``--broken``).
"""

from __future__ import annotations

import argparse
import json
import time

import attrs

from model.config import ConfigError
from model.kip848.config import Config
from model.kip848.variants import VARIANTS
from properties.errors import UsageError, check_output_file, int_at_least
from properties.kip848.counterexample import counterexample, load, write

def add_parser(subparsers) -> argparse.ArgumentParser:
    from properties.kip848.walker import DEFAULT_STEPS

    p = subparsers.add_parser("kip848", help="walk KIP-848 (consumer group protocol) worlds of the model")
    p.add_argument("--seeds", type=int_at_least("--seeds", 1), default=1000, help="interleavings (default 1000)")
    p.add_argument("--seed-start", type=int_at_least("--seed-start", 0), default=0)
    p.add_argument("--steps", type=int_at_least("--steps", 1), default=DEFAULT_STEPS,
                   help=f"random events per interleaving before the quiet phase (default {DEFAULT_STEPS})")
    p.add_argument("--clients", type=int_at_least("--clients", 1), default=3, help="consumers (default 3)")
    p.add_argument("--broken", action="append", default=[], metavar="VARIANT",
                   help="a broken variant of the KIP-848 model (model/kip848/variants.py); repeatable")
    p.add_argument("--system", choices=("impl", "model"), default=None,
                   help="impl: impl/'s coordinator and consumers beside the model's, which must agree (the default); "
                        "model: the model alone (the default with --broken)")
    p.add_argument("--mutant", metavar="NAME", default=None,
                   help="walk with a mutant of impl/'s KIP-848 coordinator or consumer (see --mutants); needs --system impl")
    p.add_argument("--mutants", action="store_true",
                   help="for each mutant of impl/'s KIP-848 coordinator and consumer, the first of the default campaign's "
                        "KIP-848 seeds (every 4th of 2,000) that kills it")
    p.add_argument("--no-directed", dest="directed", action="store_false",
                   help="skip the directed KIP-848 schedules replayed after the walks (properties/kip848/directed.json; "
                        "never with --broken)")
    p.add_argument("--out", metavar="FILE", help="write the first counterexample to FILE (JSON)")
    p.add_argument("--force", action="store_true", help="with --out: replace an existing FILE")
    p.add_argument("--replay", metavar="FILE", help="replay a counterexample file instead of walking")
    p.add_argument("--variants", action="store_true",
                   help="for each broken variant, the first seed (up to --seeds) whose walk catches it")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    return p


def run(args) -> int:
    """Bad arguments and input files raise UsageError (one line on stderr, exit status 2)."""
    if args.replay:
        return _replay(args)
    if args.variants:
        return _variants(args)
    if args.mutants:
        return _mutants(args)
    return _walk(args)


def _system(args) -> str:
    """--system, defaulted (impl, or model with --broken), checked against --mutant."""
    system = args.system or ("model" if args.broken else "impl")
    if args.mutant is not None:
        from properties.kip848.mutants import MUTANTS

        if args.mutant not in MUTANTS:
            raise UsageError(f"--mutant must be one of {', '.join(MUTANTS)}, got {args.mutant!r}")
        if system != "impl":
            raise UsageError("--mutant mutates impl/'s coordinator: it needs --system impl")
    return system


def _mutated(name):
    """The context a walk runs in: the mutant *name* applied, or nothing."""
    import contextlib

    if name is None:
        return contextlib.nullcontext()
    from properties.kip848.mutants import MUTANTS
    from properties.mutation.mutants import applied

    return applied(MUTANTS[name])


def _config(args, broken=None) -> Config:
    try:
        return Config(clients=args.clients, broken=frozenset(args.broken if broken is None else broken))
    except ConfigError as e:
        raise UsageError(str(e)) from None


def _walk(args) -> int:
    from properties.kip848.walker import walk

    config = _config(args)
    system = _system(args)
    if args.out:
        check_output_file(args.out, "--out", args.force)
    from properties.progress import Progress

    start = time.perf_counter()
    failures: dict = {}
    hazards: dict = {}  # known hazards of Kafka's own (catalogue.HAZARDS): reported, not failures
    coverage: dict = {}
    events, first = 0, None
    progress = Progress(args.seeds)  # on stderr: stdout stays clean for --json
    for i, seed in enumerate(range(args.seed_start, args.seed_start + args.seeds), 1):
        with _mutated(args.mutant):
            result = walk(seed, config, steps=args.steps, impl=system == "impl", hash_trace=False)
        events += len(result.schedule)
        for corner, hits in result.coverage.items():
            coverage[corner] = coverage.get(corner, 0) + hits
        if result.verdict == "hazard":
            hazards.setdefault(result.violation.property, []).append(seed)
        elif result.violation is not None:
            failures.setdefault(result.violation.property, []).append(seed)
            first = first or result
        progress(i, sum(map(len, failures.values())), final=i == args.seeds)
    directed = None
    if args.directed and not config.broken:  # the corners the walks rarely reach (the campaign replays them too)
        from properties.kip848 import directed as directed_schedules
        from properties.kip848.mutants import MUTANTS

        directed = directed_schedules.run(impl=system == "impl", mutant=None if args.mutant is None else MUTANTS[args.mutant])
        for corner, hits in directed["coverage"].items():
            coverage[corner] = coverage.get(corner, 0) + hits
    directed_failed = [] if directed is None else [o for o in directed["outcomes"] if o["verdict"] == "counterexample"]
    seconds = time.perf_counter() - start
    if first is not None and args.out:  # the file carries the trace hash: the seed walked again with it
        with _mutated(args.mutant):
            first = walk(first.seed, config, steps=args.steps, impl=system == "impl")
        write(args.out, counterexample(first, config, args.steps, system, args.mutant))
    elif directed_failed and args.out:
        write(args.out, directed["failures"][directed_failed[0]["property"]])
    summary = {"interleavings": args.seeds, "seed_start": args.seed_start, "events": events,
               "seconds": round(seconds, 2), "rate": round(args.seeds / seconds, 1), "system": system,
               "broken": sorted(config.broken), "mutant": args.mutant,
               "violations": {k: {"count": len(v), "example_seeds": v[:5]} for k, v in sorted(failures.items())},
               "hazards": {k: {"count": len(v), "example_seeds": v[:5]} for k, v in sorted(hazards.items())},
               "directed": None if directed is None else [{k: o[k] for k in ("corner", "events", "verdict", "property")}
                                                          for o in directed["outcomes"]],
               "coverage": coverage, "never_reached": [c for c, n in coverage.items() if n == 0]}
    if args.json:
        print(json.dumps(summary))
    else:
        beside = {"impl": " (impl/'s coordinator and consumers beside the model's" + (f", mutant {args.mutant})" if args.mutant else ")"),
                  "model": " (the model alone)"}[system]
        print(f"{args.seeds} KIP-848 interleavings ({events} events) in {seconds:.1f} s{beside}")
        if not failures and not directed_failed:
            print("no property failed")
        for name, seeds in sorted(failures.items()):
            print(f"FAILED {name}: {len(seeds)} interleavings, first seed {seeds[0]}")
        for o in directed_failed:
            print(f"FAILED {o['property']}: the directed schedule for {o['corner']}")
        for name, seeds in sorted(hazards.items()):
            print(f"known hazard {name} (Kafka's own behaviour; docs/kip848.md): {len(seeds)} interleavings, "
                  f"seeds {', '.join(map(str, seeds[:5]))}")
        if directed is not None:
            print(f"{directed['schedules']} directed schedules after the walks: " + "; ".join(
                f"{o['corner']}: " + ("clean" if o["verdict"] == "ok" else f"{o['verdict']} ({o['property']})")
                for o in directed["outcomes"]))
        print(("reached (walks and directed schedules): " if directed is not None else "reached: ")
              + ", ".join(f"{c} {n}" for c, n in coverage.items() if n))
        print("never reached: " + (", ".join(summary["never_reached"]) or "none"))
        if (first is not None or directed_failed) and args.out:
            print(f"first counterexample written to {args.out}: groupcheck kip848 --replay {args.out}")
    return 1 if failures or directed_failed else 0


def _replay(args) -> int:
    from properties.kip848.walker import replay

    config, schedule, data = load(args.replay)
    if data.get("mutant") is not None:
        from properties.kip848.mutants import MUTANTS

        if data["mutant"] not in MUTANTS or data.get("system") != "impl":
            raise UsageError(f"--replay: {args.replay} names an unknown mutant of impl/'s KIP-848 code: {data['mutant']!r}")
    try:
        with _mutated(data.get("mutant")):
            result = replay(schedule, config, eventually=data["violation"]["property"] == "kip848-converges",
                            impl=data.get("system", "model") == "impl")
    except (ValueError, IndexError, TypeError) as e:
        raise UsageError(f"--replay: {args.replay} has an event the world cannot take: {e}") from None
    reproduced = result.violation is not None and result.violation.property == data["violation"]["property"]
    if args.json:
        print(json.dumps({"reproduced": reproduced, "step": result.step, "trace_hash": result.trace_hash,
                          "violation": None if result.violation is None else attrs.asdict(result.violation)}))
    else:
        last = result.step if result.step is not None else len(schedule) - 1
        for i in range(max(0, last - 15), last + 1):
            print(f"{i:5d}  {list(schedule[i])}")
        if result.violation is None:
            print("NOT REPRODUCED: every property held")
        else:
            print(f"VIOLATED {result.violation.property} at step {result.step}: {result.violation.message}")
    return 1 if reproduced else 0


def _variants(args) -> int:
    from properties.kip848.walker import walk

    rows = []
    for name, (what, prop) in VARIANTS.items():
        config = _config(args, broken=[name])
        found = None
        for seed in range(args.seed_start, args.seed_start + args.seeds):
            result = walk(seed, config, steps=args.steps)
            if result.violation is not None:
                found = (seed, result.violation.property)
                break
        rows.append({"variant": name, "expected": prop, "killed_at": None if found is None else found[0],
                     "property": None if found is None else found[1]})
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            verdict = "SURVIVED" if r["killed_at"] is None else f"killed at seed {r['killed_at']} by {r['property']}"
            print(f"{r['variant']:30s} {verdict}")
    return 0 if all(r["killed_at"] is not None for r in rows) else 1


def _mutants(args) -> int:
    """The kill table of impl/'s KIP-848 mutants over the default campaign's KIP-848 seeds."""
    from properties.kip848.campaign import DEFAULT_EVERY
    from properties.kip848.mutants import MUTANTS, hunt
    from properties.progress import Progress

    config = _config(args)
    rows = []
    progress = Progress(len(MUTANTS))
    for i, name in enumerate(MUTANTS, 1):
        rows.append(hunt(name, config, interleavings=2000, every=DEFAULT_EVERY, steps=args.steps))
        progress(i, sum(not r["killed"] for r in rows), final=i == len(MUTANTS))
    if args.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            verdict = ("SURVIVED" if not r["killed"] else
                       f"killed by seed {r['seed']} ({r['walks']} walks) by {r['property']}" if r["seed"] is not None else
                       f"killed by the directed schedule for {r['directed']} (after {r['walks']} walks) by {r['property']}")
            print(f"{r['name']:34s} {verdict}")
        print(f"{sum(r['killed'] for r in rows)} of {len(rows)} killed within the default campaign's "
              f"{len(range(0, 2000, DEFAULT_EVERY))} KIP-848 walks and its directed KIP-848 schedules")
    return 0 if all(r["killed"] for r in rows) else 1
