"""Directed KIP-848 schedules: made for corners of the consumer's reconciliation that random walks
rarely reach.

Two corners of ``AbstractMembershipManager.maybeReconcile`` need a slow application, a timer and a
second member's move to line up: a target with the partitions the member already holds under a
newer local epoch (acknowledged at once, KAFKA-16185), and a member that rejoins while the
callbacks of a reconciliation still wait for its application's poll (``transitionToJoining``:
``rejoinedWhileReconciliationInProgress``, and the reconciliation abandoned at the poll). Of 2,000
consecutive walks, 3 and 8 reached them; of the default campaign's 500 KIP-848 walks, none the first
and one (seed 1496) the second, without the new assignment arriving before the poll that the mutant
there needs: the two mutants of impl/'s consumer in them survived it. Each corner has a schedule
made for it (a killing walk of a 16,000-interleaving search, shrunk), kept in ``directed.json``
beside this module with the corner (a name of :data:`properties.kip848.walker.COVERAGE`), why the
schedule gets there in Kafka's code, the world and the events.

A campaign with KIP-848 worlds (after its walks and its classic directed schedules,
:mod:`properties.campaign.spark`), ``groupcheck kip848`` after its seeds and the mutant hunt
(:func:`properties.kip848.mutants.hunt`) replay each one,
with the quiet phase a walk ends with and ``kip848-converges`` after it (:func:`run`), impl/'s coordinator
and consumers beside the model's. A directed schedule that fails is a counterexample file like a
walk's. ``tests/kip848/test_directed.py`` checks that each still reaches its corner, clean, and that
each mutant it was made for dies on it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import attrs

from model.kip848.config import Config

#: the directed schedules, beside this module
SCHEDULES_FILE = Path(__file__).with_name("directed.json")


@attrs.frozen
class Directed:
    """One directed schedule: the *corner* it was made to reach, *why* it gets there, its world and
    its events."""

    corner: str
    why: str
    config: Config
    schedule: tuple


def load(path: Path = SCHEDULES_FILE) -> tuple:
    """Every directed schedule of *path*, in the file's order."""
    entries = json.loads(Path(path).read_text(encoding="utf-8"))
    return tuple(Directed(e["corner"], e["why"], Config(**e["config"]), tuple(tuple(event) for event in e["schedule"]))
                 for e in entries)


def replay(directed: Directed, impl: bool = True):
    """*directed*'s events, then the quiet phase and ``kip848-converges``: the walker's Result."""
    from properties.kip848.walker import replay as replay_schedule

    return replay_schedule(directed.schedule, directed.config, eventually=True, impl=impl, quiet=True)


def run(impl: bool = True, mutant=None) -> dict:
    """Replay every directed schedule (with *mutant*, a :class:`properties.mutation.mutants.Mutant` of
    impl/'s KIP-848 code, applied): their coverage, one outcome per schedule (its corner, events,
    verdict and the property it failed or None), and per property the first failure's
    counterexample document."""
    import contextlib

    from properties.kip848.counterexample import FORMAT
    from properties.mutation.mutants import applied

    began = time.perf_counter()
    coverage: dict = {}
    outcomes, failures = [], {}
    system = "impl" if impl else "model"
    for d in load():
        with contextlib.nullcontext() if mutant is None else applied(mutant):
            result = replay(d, impl)
        for corner, n in result.coverage.items():
            coverage[corner] = coverage.get(corner, 0) + n
        v = result.violation
        outcomes.append({"corner": d.corner, "events": len(result.schedule), "verdict": result.verdict,
                         "property": None if v is None else v.property, "message": None if v is None else v.message})
        if v is not None and v.property not in failures:
            failures[v.property] = {
                "format": FORMAT, "seed": None, "directed": {"corner": d.corner, "why": d.why},
                "steps": len(d.schedule), "system": system, "mutant": None if mutant is None else mutant.name,
                "config": {k: (sorted(x) if isinstance(x, frozenset) else x) for k, x in attrs.asdict(d.config).items()},
                "violation": {"property": v.property, "message": v.message}, "step": result.step,
                "trace_hash": result.trace_hash, "verdict": result.verdict,
                "schedule": [list(e) for e in result.schedule]}
    return {"schedules": len(outcomes), "coverage": coverage, "outcomes": outcomes, "failures": failures,
            "seconds": round(time.perf_counter() - began, 3)}
