"""Hypothesis searches that do not depend on what ran before them in the process.

Hypothesis (6.131 on) sometimes draws an integer from the *local constants*: the literals of every
module in ``sys.modules`` outside the standard library and site-packages, gathered when first
needed (``hypothesis.internal.conjecture.providers._get_local_constants``) and cached per kind of
draw (``CONSTANTS_CACHE``). A derandomized search therefore depends on which test modules and
project modules were imported before it ran: in the quality tier the same case found its variant
in the whole suite and not alone, or shrank in 5 s alone and for over half an hour in the suite
(2026-11-28). :func:`without_local_constants` empties that pool for the duration of one search,
so its outcome depends on its own settings only.
"""

from __future__ import annotations

import contextlib

from hypothesis.internal.conjecture import providers
from hypothesis.internal.cache import LRUCache


@contextlib.contextmanager
def without_local_constants():
    """Hypothesis draws no local constant (and forgets the pools it cached) inside the block."""
    if not hasattr(providers, "_get_local_constants") or not hasattr(providers, "CONSTANTS_CACHE"):
        raise RuntimeError("this Hypothesis has no local-constants pool where tests/helpers/hypothesis_state.py "
                           "expects it: check how its derandomized searches depend on the loaded modules")
    empty = providers.Constants(integers=providers.SortedSet(), floats=providers.SortedSet(key=providers.float_to_int),
                                bytes=providers.SortedSet(), strings=providers.SortedSet())
    saved = providers._get_local_constants, providers.CONSTANTS_CACHE
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE = LRUCache(1024)
    try:
        yield
    finally:
        providers._get_local_constants, providers.CONSTANTS_CACHE = saved
