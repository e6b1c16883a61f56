"""Shrink a broker divergence by re-running shorter schedules against the same broker.

The schedule is first cut after the step that diverged; then chunks of steps (halves, quarters,
... single steps) are removed while the shorter schedule still diverges with the same signature
(each re-run uses a fresh group id). Real brokers run on wall-clock time, so a candidate counts
only if it reproduces; the budget (runs and seconds) bounds the work.
"""

from __future__ import annotations

import time
from typing import Callable

from properties.conform.run import Result
from properties.conform.schedule import Schedule


def shrink(result: Result, rerun: Callable[[Schedule], Result], max_runs: int = 150,
           max_seconds: float = 120.0) -> Result:
    """The shortest reproducing :class:`Result` found for *result*'s signature (itself if none)."""
    target = result.signature()
    if target is None:
        return result
    deadline = time.monotonic() + max_seconds
    runs = 0
    best = result
    steps = list(result.schedule.steps[:result.steps_run + 1])
    if len(steps) < len(result.schedule.steps):
        candidate = rerun(result.schedule.with_steps(steps))
        runs += 1
        if candidate.signature() == target:
            best = candidate
        else:
            steps = list(result.schedule.steps)
    chunk = max(1, len(steps) // 2)
    while chunk >= 1 and runs < max_runs and time.monotonic() < deadline:
        i = 0
        while i < len(steps) and runs < max_runs and time.monotonic() < deadline:
            trial = steps[:i] + steps[i + chunk:]
            if trial:
                candidate = rerun(result.schedule.with_steps(trial))
                runs += 1
                if candidate.signature() == target:
                    steps = list(candidate.schedule.steps[:candidate.steps_run + 1])
                    best = candidate
                    continue
            i += chunk
        chunk //= 2
    return best
