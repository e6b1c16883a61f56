"""Crashes and hangs of the implementation, as counterexamples of their own (issue 14).

An exception escaping ``impl/`` used to kill the walk, and a campaign job with it, with a
traceback and no counterexample; a loop that never exits hung them. :func:`guarded` runs one
event's worth of implementation code and turns either into a value: :class:`Crash` (the
exception and where it was raised) or :class:`Hang` (where the code was when the watchdog fired).
The differential reports them as the ``impl-no-crash`` and ``impl-no-hang`` properties, so they
are shrunk, clustered and replayed like any other counterexample.

The watchdog is ``SIGALRM`` (``setitimer``), armed for each interleaving (:func:`watching`, by
:func:`properties.systems.run` and ``replay``): only a signal can interrupt a Python loop that never
returns. It is armed only in the main thread and only when nothing else owns ``SIGALRM``; elsewhere
the steps run unguarded against hangs (crashes are still caught). The limit is wall time,
:data:`HANG_SECONDS` per event — five orders of magnitude above what an event costs (tens of
microseconds), so load does not make a verdict.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import traceback

import attrs

#: Wall-clock seconds one event may keep the implementation busy.
HANG_SECONDS = float(os.environ.get("GROUPCHECK_HANG_SECONDS", "10"))

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _Stop(BaseException):
    """Raised by the watchdog inside the stuck code. A BaseException, so that the implementation's
    own ``except Exception`` handlers cannot swallow it."""


@attrs.frozen
class Crash:
    error: str  # "ValueError: text"
    where: str  # "impl/x.py:12 in f"

    def describe(self) -> str:
        return f"{self.error} raised at {self.where}"


@attrs.frozen
class Hang:
    seconds: float
    where: str

    def describe(self) -> str:
        return f"still running after {self.seconds:g} s, at {self.where}"


def _where(frames) -> str:
    """The innermost frame in impl/ (else the innermost), as ``path:line in function``."""
    frames = [f for f in frames if os.path.abspath(f.filename) != os.path.abspath(__file__)]  # not the alarm's
    if not frames:
        return "?"
    inside = [f for f in frames if f"{os.sep}impl{os.sep}" in f.filename] or frames
    f = inside[-1]
    path = os.path.relpath(f.filename, _ROOT) if f.filename.startswith(_ROOT) else f.filename
    return f"{path}:{f.lineno} in {f.name}"


class _Watch:
    """The per-interleaving watchdog's state: the wall-clock time (``time.monotonic``) by which the
    implementation step now running must end, or None between steps."""

    armed = False
    deadline = None


def _alarm(signum, frame):
    deadline = _Watch.deadline
    if deadline is not None and time.monotonic() > deadline:
        _Watch.deadline = None
        raise _Stop()


@contextlib.contextmanager
def watching(seconds: float | None = None):
    """Arm the watchdog for one interleaving: a ``SIGALRM`` every quarter of the limit (at most
    every second) checks whether the implementation step in progress has run over. Per event this
    costs one float assignment, where arming a timer per event cost ~2 µs (4% of a step). Armed
    only in the main thread and only when nothing else owns ``SIGALRM``; nested, it does nothing."""
    seconds = HANG_SECONDS if seconds is None else seconds
    if (_Watch.armed or seconds <= 0 or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None)):
        yield
        return
    tick = max(0.02, min(1.0, seconds / 4))
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, tick, tick)
    _Watch.armed = True
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _Watch.armed, _Watch.deadline = False, None


def guarded(function, *args, seconds: float | None = None):
    """``(function(*args), None)``, or ``(None, Crash | Hang)`` if it raised or (inside
    :func:`watching`) ran over *seconds* (default :data:`HANG_SECONDS`)."""
    seconds = HANG_SECONDS if seconds is None else seconds
    _Watch.deadline = time.monotonic() + seconds if _Watch.armed else None
    try:
        result = function(*args)
        _Watch.deadline = None
        return result, None
    except _Stop as stop:
        return None, Hang(seconds, _where(traceback.extract_tb(stop.__traceback__)))
    except Exception as e:  # the implementation's bug, not ours: a counterexample
        return None, Crash(f"{type(e).__name__}: {e}", _where(traceback.extract_tb(e.__traceback__)))
    finally:
        _Watch.deadline = None
