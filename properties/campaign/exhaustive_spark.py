"""The exhaustive search of :mod:`properties.explore.exhaustive`, distributed on Spark.

Each BFS level is one Spark job: the frontier (an RDD of ``(key, (schedule, state))``) is expanded
by the executors, the new states are deduplicated with a shuffle (``reduceByKey`` keeps the least
schedule of each key, as the single-process search does) and the states seen at earlier levels are
removed with another (``subtractByKey`` against the RDD of seen keys). Only counts, and the
failing transitions of a level (if any), come back to the driver. The counts are those of
:func:`properties.explore.exhaustive.explore`, state for state (a test compares them).
"""

from __future__ import annotations

import time as _time
from typing import Callable

from model.config import Config
from properties.explore.exhaustive import Bounds, Counterexample, Exploration, initial_state, state_key, successors


def _expander(bounds: Bounds):
    def expand(item):
        key, (schedule, state) = item
        for event, new, violation in successors(state, bounds):
            path = schedule + (event,)
            if violation is not None:
                yield ("!", (path, violation))
            else:
                yield (state_key(new), (path, new))

    return expand


def _least(a, b):
    return a if a[0] <= b[0] else b


def explore_spark(spark, config: Config, bounds: Bounds, progress: Callable | None = None,
                  clock=_time.monotonic) -> Exploration:
    """Breadth-first search of every state reachable within *bounds*, one Spark job per level."""
    sc = spark.sparkContext
    slices = max(2, 2 * sc.defaultParallelism)
    started = clock()
    root = initial_state(config, bounds)
    root_key = state_key(root)
    frontier = sc.parallelize([(root_key, ((), root))], 1)
    seen = sc.parallelize([(root_key, None)], 1).persist()
    states = 1
    transitions = depth = 0
    levels = [1]
    expand = _expander(bounds)
    while bounds.max_depth is None or depth < bounds.max_depth:
        expanded = frontier.flatMap(expand).persist()
        tried = expanded.count()
        transitions += tried
        bad = expanded.filter(lambda kv: kv[0] == "!").values().collect()
        if bad:
            path, violation = min(bad, key=lambda pv: pv[0])
            expanded.unpersist()
            return Exploration(states, transitions, depth + 1, False, Counterexample(path, violation),
                               clock() - started, tuple(levels))
        new = (expanded.reduceByKey(_least, slices)
               .subtractByKey(seen, slices)
               .persist())
        found = new.count()
        expanded.unpersist()
        if not found:
            new.unpersist()
            frontier = None
            break
        depth += 1
        levels.append(found)
        states += found
        previous = seen
        seen = seen.union(new.mapValues(lambda _: None)).coalesce(slices).persist()
        seen.localCheckpoint()  # the lineage would otherwise grow by a union per level
        seen.count()
        previous.unpersist()
        frontier = new
        if progress is not None:
            progress(depth, states, transitions)
    return Exploration(states, transitions, depth, frontier is None, None, clock() - started, tuple(levels))
