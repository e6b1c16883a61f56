"""A progress line for long work, on stderr (stdout stays clean for ``--json``).

On a terminal the line is rewritten in place about once a second; anywhere else (a log, CI, a
pipe) a whole line is written every 10 seconds, never a carriage return.
"""

from __future__ import annotations

import sys
import time


class Progress:
    """``progress(done, failed)``: *done* of *total* items, the rate, failures so far, elapsed time.
    *unit* names the items ("interleavings"), *failures* what a failure is called."""

    def __init__(self, total: int, stream=None, unit: str = "interleavings", failures: str = "counterexamples",
                 prefix: str = ""):
        self.total = total
        self.stream = stream or sys.stderr
        self.unit = unit
        self.failures = failures
        self.prefix = prefix
        self.start = time.perf_counter()
        self.last = 0.0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def due(self) -> bool:
        """Whether a periodic update is due (and, if so, the clock for the next one restarts)."""
        now = time.perf_counter()
        if now - self.last < (1.0 if self.tty else 10.0):
            return False
        self.last = now
        return True

    def __call__(self, done: int, failed: int, final: bool = False) -> None:
        if not final and not self.due():
            return
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        share = f" ({100 * done / self.total:.0f}%)" if self.total else ""
        line = (f"{self.prefix}{done:,}/{self.total:,} {self.unit}{share}, {_rate(done / elapsed)}, "
                f"{failed:,} {self.failures}, {elapsed:,.0f} s")
        self.write(line, final)

    def write(self, line: str, final: bool = True) -> None:
        """Print *line* in the progress position: in place on a terminal (ended when *final*), a
        whole line otherwise."""
        if self.tty:
            print("\r" + line + "\033[K", end="\n" if final else "", file=self.stream, flush=True)
        else:
            print(line, file=self.stream, flush=True)


def _rate(per_second: float) -> str:
    """``15/s``, or ``4.2/min`` for slow items (real consumers' schedules take seconds each)."""
    if per_second >= 1 or per_second == 0:
        return f"{per_second:,.0f}/s"
    return f"{per_second * 60:,.1f}/min"
