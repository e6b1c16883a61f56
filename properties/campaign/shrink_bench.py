"""``groupcheck bench --shrink [FILE]``: how shrinking copes with a long failing schedule.

A campaign shrinks a few hundred events; a long walk (``groupcheck run --steps 100000000``) can
fail after hundreds of thousands. This benchmark shrinks one such schedule within a budget
(``--shrink-seconds``, default 600) and prints the figures: events before and after, replays,
events replayed, seconds, whether the result is locally minimal, and what each phase of
:func:`properties.explore.shrink.shrink` achieved.

* ``FILE`` — a counterexample file (``groupcheck run --out FILE``, or a campaign's
  ``counterexamples/<signature>.json``): its schedule is shrunk on its system, with its mutant
  applied if it has one.
* no FILE — the self-contained default input: a long walk of the implementation with the mutant
  :data:`DEFAULT` names (a bug the walk meets only late; see the README), generated first (its
  time is reported apart). It fails because of the mutant, so it keeps failing whatever is fixed
  in the real implementation.

This is a benchmark, not a test: it prints figures and asserts nothing about time.
"""

from __future__ import annotations

import contextlib
import time

from properties.campaign import counterexample
from properties.catalogue import Violation
from properties.explore.shrink import shrink, signature
from properties import systems

#: the default input: seed 0 of the implementation with this mutant fails only after this many events
DEFAULT = {"system": "impl", "mutant": "unsent_expiry_ge", "seed": 0, "steps": 1_000_000, "faults": "all"}


def _mutant(name):
    if not name:
        return contextlib.nullcontext()
    from properties.mutation.mutants import applied

    return applied(name)


def default_input() -> dict:
    """The default input as a counterexample document (the walk is run now)."""
    config = systems.world_config(DEFAULT["system"], DEFAULT["faults"], 3, 3, 6)
    with _mutant(DEFAULT["mutant"]):
        result = systems.run(DEFAULT["system"], DEFAULT["seed"], config, steps=DEFAULT["steps"], faults=DEFAULT["faults"],
                             eventually=False)
    if result.violation is None:
        raise RuntimeError(f"the default input did not fail: mutant {DEFAULT['mutant']}, seed {DEFAULT['seed']}, "
                           f"{result.steps:,} events")
    document = counterexample.build(result, system=DEFAULT["system"], seed=DEFAULT["seed"], config=config,
                                    steps=DEFAULT["steps"], faults=DEFAULT["faults"])
    document["mutant"] = DEFAULT["mutant"]
    return document


def bench_shrink(path: str | None = None, budget_seconds: float = 600.0, log=None) -> dict:
    """Shrink the schedule of the counterexample file at *path* (None: the default input) within
    *budget_seconds*; the figures as a dict. *log(phase, events, replays, seconds)* hears of each
    phase. Raises CounterexampleError for a file that cannot be used."""
    began = time.perf_counter()
    if path is None:
        document = default_input()
        config = counterexample.config_from_dict(document["config"])
        source = (f"default input: {DEFAULT['system']} with mutant {DEFAULT['mutant']}, seed {DEFAULT['seed']}, "
                  f"--steps {DEFAULT['steps']:,}")
    else:
        document, config = counterexample.load(path)
        source = path
    prepared = time.perf_counter() - began
    violation = Violation(document["property"], document["message"])
    with _mutant(document.get("mutant")):
        shrunk = shrink(systems.replayer(document["system"], config, document["seed"]), document["schedule"], violation,
                        budget_seconds=budget_seconds, log=log)
    return {
        "input": source,
        "system": document["system"],
        "mutant": document.get("mutant"),
        "seed": document["seed"],
        "property": document["property"],
        "signature": signature(violation),
        "kept_signature": shrunk.result.violation is not None and signature(shrunk.result.violation) == signature(violation),
        "input_seconds": round(prepared, 3),
        "events_before": shrunk.original_events,
        "events_after": len(shrunk.schedule),
        "replays": shrunk.replays,
        "replayed_events": shrunk.replayed_events,
        "seconds": shrunk.seconds,
        "budget_seconds": budget_seconds,
        "reproduced": shrunk.reproduced,
        "locally_minimal": shrunk.complete,
        "phases": [{"phase": p, "events": e, "replays": r, "seconds": s} for p, e, r, s in shrunk.phases],
        "message": shrunk.result.violation.message if shrunk.result.violation is not None else None,
    }


def report_lines(result: dict) -> list:
    """The figures in words (``groupcheck bench --shrink`` without ``--json``)."""
    lines = [f"shrinking {result['input']}",
             f"  {result['system']} system" + (f", mutant {result['mutant']}" if result["mutant"] else "")
             + f", seed {result['seed']}, property {result['property']} ({result['signature']})"]
    if result["input_seconds"] >= 0.5:
        lines.append(f"  input ready in {result['input_seconds']:,.1f} s")
    lines.append(f"  {result['events_before']:,} -> {result['events_after']:,} events in {result['seconds']:,.1f} s "
                 f"(budget {result['budget_seconds']:,.0f} s), {result['replays']:,} replays, "
                 f"{result['replayed_events']:,} events replayed; "
                 + ("locally minimal" if result["locally_minimal"] else "NOT locally minimal: the budget ran out")
                 + ("" if result["reproduced"] else "; the input did NOT reproduce when replayed"))
    for p in result["phases"]:
        lines.append(f"    {p['seconds']:>8.1f} s  {p['replays']:>6,} replays  {p['events']:>9,} events  after {p['phase']}")
    if result["message"]:
        lines.append(f"  shrunk failure: {result['message']}")
    return lines
