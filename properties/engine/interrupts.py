"""SIGINT and SIGTERM during a run: stop, keep every finished task, write a partial report.

Ctrl-C sends SIGINT; CI timeouts, ``docker stop`` and ``kill`` send SIGTERM. A campaign treats
both alike: while :class:`Interrupts` is entered, either signal raises :class:`Interrupted` (a
``KeyboardInterrupt``) in the main thread, so the driver's loop stops where it waits, keeps the
tasks that have finished and writes the report marked partial. Inside a :meth:`Interrupts.held`
section (merging a finished task into the totals, writing the report) a signal is only noted, and
raised when the section ends, so that no task is ever half-merged and no report half-written.

The exit status says which signal it was, as a shell does: 128 + the signal's number (130 for
SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import contextlib
import signal
import threading

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A campaign was asked to stop by signal *signum*."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def exit_status(signum: int | None) -> int:
    """128 + the signal's number; a plain KeyboardInterrupt counts as SIGINT."""
    return 128 + int(signum or signal.SIGINT)


def name(signum: int | None) -> str:
    return signal.Signals(signum or signal.SIGINT).name


class Interrupts:
    """SIGINT and SIGTERM as :class:`Interrupted` while entered (main thread only; elsewhere a
    no-op); the handlers that were there before come back on exit.

    ``signum`` is the first signal that arrived (None: none did)."""

    def __init__(self):
        self.signum: int | None = None
        self._held = 0
        self._pending: int | None = None
        self._saved: dict = {}
        self._active = False

    def __enter__(self) -> "Interrupts":
        if threading.current_thread() is threading.main_thread():
            self._active = True
            for s in SIGNALS:
                self._saved[s] = signal.getsignal(s)
            self.install()
        return self

    def __exit__(self, *exc) -> bool:
        if self._active:
            for s, handler in self._saved.items():
                signal.signal(s, handler if handler is not None else signal.SIG_DFL)
            self._active = False
        return False

    def install(self) -> None:
        """(Re)install the handlers: pyspark's SparkContext puts its own on SIGINT when it starts."""
        if self._active:
            for s in SIGNALS:
                signal.signal(s, self._handle)

    def _handle(self, signum, frame) -> None:
        if self.signum is None:
            self.signum = signum
        if self._held:
            if self._pending is None:
                self._pending = signum
            return
        raise Interrupted(signum)

    @contextlib.contextmanager
    def held(self, release: bool = True):
        """A section no signal interrupts; one that arrived meanwhile is raised at its end
        (with *release* False it stays noted in ``signum`` only)."""
        self._held += 1
        try:
            yield self
        finally:
            self._held -= 1
            if not self._held and self._pending is not None:
                signum, self._pending = self._pending, None
                if release:
                    raise Interrupted(signum)


class NoInterrupts(Interrupts):
    """For callers that handle KeyboardInterrupt themselves (tests, the benchmark): held() only
    counts, nothing is installed."""

    def __enter__(self) -> "NoInterrupts":
        return self
