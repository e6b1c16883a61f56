"""Mutants of impl/'s KIP-848 coordinator (:mod:`impl.server.modern`) and consumer
(:mod:`impl.membership`): one realistic bug each, the
same kind of run-time source change as :mod:`properties.mutation.mutants` (:class:`Mutant`,
:func:`applied`), searched by KIP-848 walks with impl/ beside the model.

A mutant is *killed* by a walk when the mutated code makes the walk fail (it disagrees with
the model, raises, or a property of the model breaks) and the unmutated one passes the same walk.
:func:`hunt` walks the seeds the default campaign gives KIP-848 worlds (every
``DEFAULT_EVERY``-th seed of its 2,000: 500 walks), so "killed" means "the default campaign
kills it". ``groupcheck kip848 --mutants`` prints the table; ``--mutant NAME`` walks under one.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from properties.mutation.kip848_table import CLASSIC_DEFS, DEEP_DEFS, DEFS
from properties.mutation.mutants import KIP848, Mutant

#: name -> Mutant (its ``kind`` is the part of the coordinator the bug is in)
MUTANTS: "OrderedDict[str, Mutant]" = OrderedDict((row[0], KIP848[row[0]]) for row in DEFS)
#: name -> (Mutant, the first seed that kills it) of impl/'s consumer in corners the default
#: campaign's walks do not reach (a longer search does)
_DEEP_SEEDS = {"same_partitions_not_acknowledged": 11732, "rejoin_keeps_reconciliation": 5988}
DEEP_MUTANTS: "OrderedDict[str, tuple]" = OrderedDict((row[0], (KIP848[row[0]], _DEEP_SEEDS[row[0]])) for row in DEEP_DEFS)
#: name -> Mutant of the classic members' path and the online upgrade, killed by the broker judge
#: (the walks have no classic members; tests/live/test_kip848_brokers.py)
CLASSIC_MUTANTS: "OrderedDict[str, Mutant]" = OrderedDict((row[0], KIP848[row[0]]) for row in CLASSIC_DEFS)


def seeds(interleavings: int, every: int) -> range:
    """The seeds the default campaign of *interleavings* walks KIP-848 worlds for."""
    return range(0, interleavings, every)


def _fails(seed: int, config, steps: int) -> tuple:
    from properties.kip848.walker import walk

    result = walk(seed, config, steps=steps, impl=True)
    if result.verdict == "counterexample":
        return result.violation.property, result.violation.message
    return None, None


def killed_at(name: str, seed: int, config) -> str | None:
    """The property by which the walk of *seed* kills mutant *name* (the unmutated walk passing),
    or None."""
    from properties.kip848.walker import DEFAULT_STEPS
    from properties.mutation.mutants import applied

    with applied(KIP848[name]):
        prop, _ = _fails(seed, config, DEFAULT_STEPS)
    return prop if prop is not None and _fails(seed, config, DEFAULT_STEPS)[0] is None else None


def hunt(name: str, config, interleavings: int = 2000, every: int = 4, steps: int | None = None) -> dict:
    """Walk the default campaign's KIP-848 seeds under mutant *name* until one kills it."""
    from properties.kip848.walker import DEFAULT_STEPS
    from properties.mutation.mutants import applied

    steps = DEFAULT_STEPS if steps is None else steps
    start = time.perf_counter()
    walked = 0
    for seed in seeds(interleavings, every):
        walked += 1
        with applied(MUTANTS[name]):
            prop, message = _fails(seed, config, steps)
        if prop is not None and _fails(seed, config, steps)[0] is None:
            return {"name": name, "killed": True, "walks": walked, "seed": seed, "property": prop,
                    "message": message[:300], "seconds": round(time.perf_counter() - start, 2)}
    return {"name": name, "killed": False, "walks": walked, "seed": None, "property": None, "message": None,
            "seconds": round(time.perf_counter() - start, 2)}
