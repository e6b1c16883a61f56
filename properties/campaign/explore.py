"""``groupcheck explore``: exhaust a tiny world, then drive the implementation along it.

Prints the states, transitions and depth of the breadth-first search
(:mod:`properties.explore.exhaustive`; with ``--master``, on Spark:
:mod:`properties.campaign.exhaustive_spark`), the first counterexample if an ``always`` property
fails (written with ``--out`` as a file ``groupcheck replay`` reads), and then the transition tour:
schedules covering every explored transition replayed on the implementation beside the model.
Exit 0 when nothing failed, 1 when something did, 2 on a usage error.
"""

from __future__ import annotations

import json
import sys

from properties.errors import UsageError, int_at_least

#: The explored world's fixed parts: messages arrive within the quantum they are sent in (a 1 ms
#: latency would cost a whole quantum per hop), and an empty group's first rebalance does not wait
#: (group.initial.rebalance.delay.ms=0 unless --set says otherwise), so small horizons reach a group.
LATENCY_MS = 0
INITIAL_REBALANCE_DELAY_MS = 0


def add_parser(sub) -> None:
    from properties.errors import add_settings_argument
    from properties.explore.exhaustive import DEFAULT_FAULT_KINDS, FAULT_KINDS

    p = sub.add_parser("explore", help="breadth-first search of every state of a tiny world, then a transition tour "
                                       "of the implementation")
    p.add_argument("--clients", type=int_at_least("--clients", 1), default=2, help="consumers (default 2)")
    p.add_argument("--brokers", type=int_at_least("--brokers", 1), default=1, help="brokers (default 1)")
    p.add_argument("--partitions", type=int_at_least("--partitions", 1), default=2, help="partitions (default 2)")
    p.add_argument("--quantum-ms", type=int_at_least("--quantum-ms", 1), default=1000,
                   help="time advances in steps of this many ms (default 1000)")
    p.add_argument("--horizon-ms", type=int_at_least("--horizon-ms", 0), default=0,
                   help="time never passes this (default 0: no time passes)")
    p.add_argument("--faults", type=int_at_least("--faults", 0), default=0, help="disruptions on one path (default 0)")
    p.add_argument("--fault-kinds", default=",".join(DEFAULT_FAULT_KINDS),
                   help=f"comma-separated, among {', '.join(FAULT_KINDS)} (default {','.join(DEFAULT_FAULT_KINDS)})")
    p.add_argument("--commits", type=int_at_least("--commits", 0), default=1,
                   help="commitAsync calls per client on one path (default 1)")
    p.add_argument("--max-depth", type=int_at_least("--max-depth", 1), default=None,
                   help="stop after this many levels (the world is then not exhausted)")
    p.add_argument("--master", default=None,
                   help="run the search on Spark (local[N], spark://host:port); default: in this process")
    p.add_argument("--no-tour", action="store_true", help="skip the transition tour of the implementation")
    p.add_argument("--broken", action="append", default=[], metavar="VARIANT",
                   help="explore a deliberately broken model variant (model/variants.py); repeatable")
    p.add_argument("--mutant", default=None, metavar="NAME",
                   help="tour a mutated implementation (groupcheck mutants --list)")
    add_settings_argument(p)
    p.add_argument("--out", default=None, metavar="FILE", help="write a counterexample here (groupcheck replay FILE)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.set_defaults(func=cmd_explore)


def explore_config(clients: int = 2, brokers: int = 1, partitions: int = 2, broken=(), settings=()):
    """The explored world's Config: the command-line world with :data:`LATENCY_MS` and, unless
    *settings* (``--set`` items) give it, :data:`INITIAL_REBALANCE_DELAY_MS`. Raises ConfigError."""
    import attrs

    from model.config import parse_settings, with_settings
    from properties.systems import world_config

    settings = list(settings)
    if not any(s.split("=", 1)[0].strip() == "group.initial.rebalance.delay.ms" for s in settings):
        settings.append(f"group.initial.rebalance.delay.ms={INITIAL_REBALANCE_DELAY_MS}")
    config = world_config("model", "all", clients, brokers, partitions, broken, ())
    return attrs.evolve(with_settings(config, parse_settings(settings)), latency_ms=LATENCY_MS)


def _config(args):
    from model.config import ConfigError

    try:
        return explore_config(args.clients, args.brokers, args.partitions, args.broken, args.settings)
    except ConfigError as e:
        raise UsageError(str(e)) from None


def _bounds(args):
    from properties.explore.exhaustive import Bounds, FAULT_KINDS

    kinds = tuple(k.strip() for k in args.fault_kinds.split(",") if k.strip())
    unknown = [k for k in kinds if k not in FAULT_KINDS]
    if unknown:
        raise UsageError(f"--fault-kinds must be among {', '.join(FAULT_KINDS)}, got {unknown[0]!r}")
    return Bounds(quantum_ms=args.quantum_ms, horizon_ms=args.horizon_ms, faults=args.faults, fault_kinds=kinds,
                  commits=args.commits, max_depth=args.max_depth)


def _progress(enabled: bool):
    if not enabled:
        return None

    def show(depth, states, transitions):
        print(f"\rexplore: level {depth}: {states:,} states, {transitions:,} transitions", end="", file=sys.stderr,
              flush=True)

    return show


def cmd_explore(args) -> int:
    """The run engine's interrupt policy (:func:`properties.engine.run.session`): SIGINT or SIGTERM
    stops the search (on Spark too: its JVM is stopped), one line says so — a search stopped part-way
    proves nothing, so nothing else is printed — and the exit status is 128 + the signal's number."""
    from properties.engine import run as engine
    from properties.engine.interrupts import exit_status, name

    with engine.session() as interrupts:
        try:
            return _explore(args, interrupts)
        except KeyboardInterrupt:
            print(f"groupcheck: interrupted ({name(interrupts.signum)}); the search stopped part-way and proves "
                  "nothing", file=sys.stderr)
            return exit_status(interrupts.signum)


def _explore(args, interrupts) -> int:
    from properties.errors import check_output_file

    config = _config(args)
    bounds = _bounds(args)
    if args.mutant is not None:
        from properties.mutation.mutants import ALL

        if args.mutant not in ALL:
            raise UsageError(f"--mutant must be one of {', '.join(sorted(ALL))}, got {args.mutant!r}")
        if args.no_tour:
            raise UsageError("--mutant mutates the implementation the tour drives: it needs the tour (drop --no-tour)")
    if args.out:
        check_output_file(args.out, "--out", args.force)
    interactive = not args.json and sys.stderr.isatty()
    tour_wanted = not args.no_tour
    if args.master is not None:
        exploration = _on_spark(args, config, bounds, interactive, interrupts)
        if tour_wanted and exploration.counterexample is None:
            # the tour needs the graph: the driver explores it again (tiny worlds), and the counts must agree
            from properties.explore.exhaustive import explore

            local = explore(config, bounds, keep_graph=True)
            if (local.states, local.transitions) != (exploration.states, exploration.transitions):
                print(f"groupcheck: error: Spark counted {exploration.states} states and {exploration.transitions} "
                      f"transitions, this process {local.states} and {local.transitions}", file=sys.stderr)
                return 1
            graph = local
    else:
        from properties.explore.exhaustive import explore

        exploration = explore(config, bounds, keep_graph=tour_wanted, progress=_progress(interactive))
        graph = exploration
    if interactive:
        print(file=sys.stderr)
    out = _summary(args, config, bounds, exploration)
    failed = exploration.counterexample is not None
    if failed:
        out["counterexample"] = _counterexample(args, config, exploration.counterexample.schedule, "model")
    elif tour_wanted:
        from properties.explore.exhaustive import tour

        from properties import systems

        def replay(schedule, seed, on_step):
            return systems.replay("impl", config, schedule, seed=seed, on_step=on_step)

        with _mutated(args.mutant):
            t = tour(config, bounds, graph, replay)
        out["tour"] = {"schedules": t.schedules, "events": t.events, "transitions": t.transitions,
                       "covered": t.covered, "departures": t.departures, "seconds": round(t.seconds, 2),
                       "failure": None}
        if t.failure is not None:
            failed = True
            schedule, violation = t.failure
            out["tour"]["failure"] = _counterexample(args, config, schedule, "impl")
    if args.json:
        print(json.dumps(out))
    else:
        _print(out)
    return 1 if failed else 0


def _mutated(mutant):
    import contextlib

    if mutant is None:
        return contextlib.nullcontext()
    from properties.mutation.mutants import applied

    return applied(mutant)


def _on_spark(args, config, bounds, interactive, interrupts):
    import os

    from properties.campaign.exhaustive_spark import explore_spark
    from properties.engine.spark import started

    # a RunError (no Java, an unreachable master) is a UsageError: one line, exit 2
    with started(args.master, os.devnull, interrupts, app="groupcheck-explore") as spark:
        return explore_spark(spark, config, bounds, progress=_progress(interactive))


def _counterexample(args, config, schedule, system: str) -> dict:
    """Replay the failing schedule (on *system*), describe it, and write it to --out if asked."""
    from properties import systems
    from properties.campaign import counterexample

    with _mutated(args.mutant if system == "impl" else None):
        result = systems.replay(system, config, schedule)
    v = result.violation
    described = {"property": v.property if v else None, "message": v.message if v else None,
                 "events": len(result.schedule), "schedule": [list(e) for e in result.schedule],
                 "trace_hash": result.trace_hash, "system": system, "out": None}
    if v is not None and args.out:
        document = counterexample.build(result, system=system, seed=0, config=config, steps=len(schedule),
                                        faults="explore")
        document["mutant"] = args.mutant if system == "impl" else None
        counterexample.write(args.out, document)
        described["out"] = args.out
    return described


def _summary(args, config, bounds, exploration) -> dict:
    from model.config import settings_of
    from properties.provenance import provenance

    return {
        "world": {"clients": config.clients, "brokers": config.brokers, "partitions": config.partitions,
                  "settings": settings_of(config), "latency_ms": config.latency_ms,
                  "broken": sorted(config.broken)},
        "bounds": {"quantum_ms": bounds.quantum_ms, "horizon_ms": bounds.horizon_ms, "faults": bounds.faults,
                   "fault_kinds": list(bounds.fault_kinds), "commits": bounds.commits, "max_depth": bounds.max_depth},
        "engine": "spark " + args.master if args.master else "in process",
        "states": exploration.states,
        "transitions": exploration.transitions,
        "depth": exploration.depth,
        "exhausted": exploration.exhausted,
        "levels": list(exploration.levels),
        "seconds": round(exploration.seconds, 2),
        "counterexample": None,
        "tour": None,
        "tool": provenance(),
    }


def _print(out: dict) -> None:
    w, b = out["world"], out["bounds"]
    faults = f"{b['faults']} fault{'s' if b['faults'] != 1 else ''} ({', '.join(b['fault_kinds'])})" if b["faults"] else "no faults"
    print(f"explore: {w['clients']} clients, {w['brokers']} broker{'s' if w['brokers'] != 1 else ''}, "
          f"{w['partitions']} partitions; time in {b['quantum_ms']} ms steps up to {b['horizon_ms']} ms; {faults}; "
          f"{b['commits']} commit{'s' if b['commits'] != 1 else ''} per client; {out['engine']}")
    state = "exhausted" if out["exhausted"] else ("stopped at a counterexample" if out["counterexample"]
                                                  else f"NOT exhausted: stopped at --max-depth {b['max_depth']}")
    print(f"states {out['states']:,}, transitions {out['transitions']:,}, depth {out['depth']}: {state} "
          f"({out['seconds']} s)")
    c = out["counterexample"]
    if c is not None:
        print(f"property {c['property']} failed after {c['events']} events: {c['message']}")
        for i, event in enumerate(c["schedule"]):
            print(f"  {i:4d}  {tuple(event)}")
        if c["out"]:
            print(f"counterexample written to {c['out']}; replay it with: groupcheck replay {c['out']}")
        return
    print(f"every always property held in all {out['transitions']:,} transitions")
    t = out["tour"]
    if t is None:
        return
    left = ""
    if t["departures"]:
        left = ("; " + ", ".join(f"{n} schedules left the explored path where the implementation's coordinator chose "
                                 f"the other way ({kind})" for kind, n in t["departures"].items()))
    print(f"tour: {t['schedules']:,} schedules, {t['events']:,} events on the implementation beside the model: "
          f"covered {t['covered']:,} of {t['transitions']:,} transitions{left} ({t['seconds']} s)")
    f = t["failure"]
    if f is None:
        print("tour: no divergence, no property failed")
    else:
        print(f"tour: property {f['property']} failed after {f['events']} events: {f['message']}")
        if f["out"]:
            print(f"counterexample written to {f['out']}; replay it with: groupcheck replay {f['out']}")
