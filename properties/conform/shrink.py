"""Shrink a broker divergence by re-running shorter schedules against the same broker.

The schedule is first cut after the step where the divergence showed; then chunks of steps
(halves, quarters, ... single steps) are removed while the shorter schedule still shows the same
signature (each re-run uses a fresh group id). A divergence that was some schedule's first is
shrunk to a schedule where it is still the first; one that was only ever seen after another
(:class:`properties.conform.tally.Tally`'s ``follows``) to a schedule that still shows it anywhere.
Real brokers run on wall-clock time, so a candidate counts only if it reproduces; the budget (runs
and seconds) bounds the work.
"""

from __future__ import annotations

import time
from typing import Callable, Optional

from properties.conform.run import Result
from properties.conform.schedule import Schedule


def shrink(result: Result, rerun: Callable[[Schedule], Result], max_runs: int = 150,
           max_seconds: float = 120.0, signature: Optional[str] = None, first: bool = True,
           stop: Callable[[], bool] = lambda: False) -> Result:
    """The shortest reproducing :class:`Result` found for *signature* (default: *result*'s first;
    *first*: it must stay the schedule's first, else only shown) — *result* itself if none. When
    *stop* says so (a signal arrived), the best found so far, at once."""
    target = signature or result.signature()
    if target is None:
        return result

    def shows(candidate: Result) -> bool:
        return candidate.signature() == target if first else target in candidate.signatures()

    deadline = time.monotonic() + max_seconds
    runs = 0
    best = result
    steps = list(result.schedule.steps[:result.step_of(target) + 1])
    if stop():
        return result
    if len(steps) < len(result.schedule.steps):
        candidate = rerun(result.schedule.with_steps(steps))
        runs += 1
        if shows(candidate):
            best = candidate
        else:
            steps = list(result.schedule.steps)
    chunk = max(1, len(steps) // 2)
    while chunk >= 1 and runs < max_runs and time.monotonic() < deadline and not stop():
        i = 0
        while i < len(steps) and runs < max_runs and time.monotonic() < deadline and not stop():
            trial = steps[:i] + steps[i + chunk:]
            if trial:
                candidate = rerun(result.schedule.with_steps(trial))
                runs += 1
                if shows(candidate):
                    steps = list(candidate.schedule.steps[:candidate.step_of(target) + 1])
                    best = candidate
                    continue
            i += chunk
        chunk //= 2
    return best
