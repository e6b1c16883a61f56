"""Mutants of impl/'s KIP-848 coordinator (:mod:`impl.server.modern`) and consumer
(:mod:`impl.membership`): one realistic bug each, the
same kind of run-time source change as :mod:`properties.mutation.mutants` (:class:`Mutant`,
:func:`applied`), searched by KIP-848 walks with impl/ beside the model.

A mutant is *killed* by a walk when the mutated code makes the walk fail (it disagrees with
the model, raises, or a property of the model breaks) and the unmutated one passes the same walk.
:func:`hunt` walks the seeds the default campaign gives KIP-848 worlds (every
``DEFAULT_EVERY``-th seed of its 2,000: 500 walks), then replays the directed KIP-848 schedules
the campaign replays after them (:mod:`properties.kip848.directed`), so "killed" means "the default
campaign kills it". ``groupcheck kip848 --mutants`` prints the table; ``--mutant NAME`` walks
under one.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from properties.mutation.kip848_table import CLASSIC_DEFS, DEFS
from properties.mutation.mutants import KIP848, Mutant

#: name -> Mutant (its ``kind`` is the part of the coordinator the bug is in)
MUTANTS: "OrderedDict[str, Mutant]" = OrderedDict((row[0], KIP848[row[0]]) for row in DEFS)
#: name -> Mutant of the classic members' path and the online upgrade, killed by the broker judge
#: (the walks have no classic members; tests/live/test_kip848_brokers.py)
CLASSIC_MUTANTS: "OrderedDict[str, Mutant]" = OrderedDict((row[0], KIP848[row[0]]) for row in CLASSIC_DEFS)


def seeds(interleavings: int, every: int) -> range:
    """The seeds the default campaign of *interleavings* walks KIP-848 worlds for."""
    return range(0, interleavings, every)


def _fails(seed: int, config, steps: int) -> tuple:
    from properties.kip848.walker import walk

    result = walk(seed, config, steps=steps, impl=True, hash_trace=False)
    if result.verdict == "counterexample":
        return result.violation.property, result.violation.message
    return None, None


def hunt(name: str, config, interleavings: int = 2000, every: int = 4, steps: int | None = None,
         directed: bool = True) -> dict:
    """Walk the default campaign's KIP-848 seeds under mutant *name* until one kills it; if none
    does, replay the campaign's directed KIP-848 schedules under it (*directed*). ``seed`` names
    the killing walk, or ``directed`` the corner of the killing directed schedule."""
    from properties.kip848 import directed as directed_schedules
    from properties.kip848.walker import DEFAULT_STEPS
    from properties.mutation.mutants import applied

    steps = DEFAULT_STEPS if steps is None else steps
    start = time.perf_counter()
    walked = 0

    def outcome(killed: bool, seed=None, corner=None, prop=None, message=None) -> dict:
        return {"name": name, "killed": killed, "walks": walked, "seed": seed, "directed": corner, "property": prop,
                "message": None if message is None else message[:300], "seconds": round(time.perf_counter() - start, 2)}

    for seed in seeds(interleavings, every):
        walked += 1
        with applied(MUTANTS[name]):
            prop, message = _fails(seed, config, steps)
        if prop is not None and _fails(seed, config, steps)[0] is None:
            return outcome(True, seed=seed, prop=prop, message=message)
    if directed:
        mutated = directed_schedules.run(mutant=MUTANTS[name])["outcomes"]
        clean = directed_schedules.run()["outcomes"]
        for hit, unmutated, d in zip(mutated, clean, directed_schedules.load()):
            if hit["verdict"] == "counterexample" and unmutated["verdict"] != "counterexample":
                return outcome(True, corner=d.corner, prop=hit["property"], message=hit.get("message"))
    return outcome(False)
