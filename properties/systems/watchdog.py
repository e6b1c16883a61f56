"""Crashes and hangs of the implementation, as counterexamples of their own (issue 14, issue 34).

An exception escaping ``impl/`` used to kill the walk, and a campaign job with it, with a
traceback and no counterexample; a loop that never exits hung them. :func:`guarded` runs one
event's worth of implementation code and turns either into a value: :class:`Crash` (the
exception and where it was raised) or :class:`Hang` (where the code was when the watchdog fired).
The differential reports them as the ``impl-no-crash`` and ``impl-no-hang`` properties, so they
are shrunk, clustered and replayed like any other counterexample.

The watchdog works wherever the implementation runs — the main thread of ``groupcheck run``, a
thread of a campaign's driver pool, a Spark worker, a pool process — because it does not use a
signal (only the main thread receives those, and only where nobody else owns ``SIGALRM``; issue 34
measured a campaign spinning for good on a hanging mutant because its tasks ran where the old
``SIGALRM`` watchdog was not armed). Instead :func:`guarded` records a per-thread deadline, and
one daemon *monitor* thread per process raises :class:`_Stop` asynchronously in a thread that runs
past it (CPython's ``PyThreadState_SetAsyncExc``: delivered at the stuck thread's next bytecode
boundary, which a Python loop that never returns reaches at every iteration). The limit is wall
time, :data:`HANG_SECONDS` per event — five orders of magnitude above what an event costs (tens
of microseconds), so load does not make a verdict. Code blocked inside a C call (a socket read) is
not interrupted until it returns to Python; the simulated world's implementation makes none.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
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
    frames = [f for f in frames if os.path.abspath(f.filename) != os.path.abspath(__file__)]  # not the watchdog's
    if not frames:
        return "?"
    inside = [f for f in frames if f"{os.sep}impl{os.sep}" in f.filename] or frames
    f = inside[-1]
    path = os.path.relpath(f.filename, _ROOT) if f.filename.startswith(_ROOT) else f.filename
    return f"{path}:{f.lineno} in {f.name}"


# --------------------------------------------------------------------------------------------------
# the monitor
# --------------------------------------------------------------------------------------------------

_set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
_set_async_exc.argtypes = (ctypes.c_ulong, ctypes.py_object)
_set_async_exc.restype = ctypes.c_int
# the same function taking NULL (None) for its exception: clears a pending one
_clear_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi))


class _Monitor:
    """The process's deadlines (thread ident -> [deadline, fired]) and the thread that enforces
    them. ``lock`` orders a step's disarming against the monitor's firing, so that a stop fired
    just as the step returned is either caught by :func:`guarded` or cancelled by it, never
    delivered to the code after it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.deadlines: dict = {}
        self.thread: threading.Thread | None = None
        self.wake = threading.Event()

    def ensure_running(self) -> None:
        if self.thread is None:
            with self.lock:
                if self.thread is None:
                    self.thread = threading.Thread(target=self._run, name="groupcheck-watchdog", daemon=True)
                    self.thread.start()

    def _run(self) -> None:
        while True:
            now = time.monotonic()
            soonest = None
            with self.lock:
                for ident, slot in self.deadlines.items():
                    deadline, fired = slot
                    if now > deadline and not fired:
                        slot[1] = True
                        _set_async_exc(ident, _Stop)
                    elif not fired:
                        soonest = deadline if soonest is None else min(soonest, deadline)
            # sleep until the soonest deadline (at most a second: a new step may arm a nearer one,
            # at most 20 ms late for a limit of 10 s)
            wait = 1.0 if soonest is None else min(1.0, max(0.01, soonest - now + 0.005))
            self.wake.wait(wait)
            self.wake.clear()

    def arm(self, ident: int, deadline: float) -> None:
        self.deadlines[ident] = [deadline, False]  # one store: atomic under the GIL

    def disarm(self, ident: int) -> bool:
        """End the step of thread *ident*; True when the monitor fired for it (a stop not yet
        delivered is cancelled: the step has ended, the code after it must not see it)."""
        with self.lock:
            slot = self.deadlines.pop(ident, None)
            fired = slot is not None and slot[1]
            if fired:
                _clear_async_exc(ident, None)  # NULL: clear the thread's pending asynchronous exception
        return fired

    def after_fork(self) -> None:
        """In a forked child (Spark's worker daemon forks its workers) no thread but the forking
        one survives, and the lock may have been held: start afresh."""
        self.lock = threading.Lock()
        self.deadlines = {}
        self.thread = None
        self.wake = threading.Event()


_MONITOR = _Monitor()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_MONITOR.after_fork)


@contextlib.contextmanager
def watching(seconds: float | None = None):
    """Kept for the callers of the signal-based watchdog: :func:`guarded` now enforces its
    deadline wherever it runs, so there is nothing to arm. Starts the monitor early."""
    _MONITOR.ensure_running()
    yield


def guarded(function, *args, seconds: float | None = None):
    """``(function(*args), None)``, or ``(None, Crash | Hang)`` if it raised or ran over *seconds*
    (default :data:`HANG_SECONDS`; 0 or less: no limit)."""
    seconds = HANG_SECONDS if seconds is None else seconds
    if seconds <= 0:
        try:
            return function(*args), None
        except Exception as e:  # the implementation's bug, not ours: a counterexample
            return None, Crash(f"{type(e).__name__}: {e}", _where(traceback.extract_tb(e.__traceback__)))
    monitor = _MONITOR
    if monitor.thread is None:
        monitor.ensure_running()
    ident = threading.get_ident()
    monitor.arm(ident, time.monotonic() + seconds)
    try:
        result = function(*args)
        if monitor.disarm(ident):  # it returned just as the monitor fired: it did run over
            return None, Hang(seconds, "the end of the step")
        return result, None
    except _Stop as stop:
        monitor.disarm(ident)
        return None, Hang(seconds, _where(traceback.extract_tb(stop.__traceback__)))
    except Exception as e:  # the implementation's bug, not ours: a counterexample
        if monitor.disarm(ident):
            return None, Hang(seconds, _where(traceback.extract_tb(e.__traceback__)))
        return None, Crash(f"{type(e).__name__}: {e}", _where(traceback.extract_tb(e.__traceback__)))
