"""One run engine for every checker: seed ranges → tasks → an executor → an order-independent
merge → one interrupt policy.

A checker hands :func:`run` three things:

* the *tasks*: an iterable of seed ranges ``(start, stop)`` (:func:`task_ranges`), drawn only as
  an executor slot frees up, so a campaign of a trillion seeds holds a bounded number of them;
* the *work*: ``work(start, stop) -> list of parts``, everything the task found, as plain data
  (on Spark it is pickled to the executors);
* a *tally*: ``tally.add(part)`` merges one part. It must not depend on the order parts arrive in
  (the first counterexample of a signature is the one of the smallest seed, counts are sums), so a
  run gives the same report in one process, on a pool, or on Spark, even when Spark re-runs a task
  whose worker died. ``tally.done`` and ``tally.failed`` feed the progress line; a tally may set
  ``stop_requested`` (a string saying why) to end the run early (a broker that stopped accepting
  connections: every later schedule would fail the same way).

and an :class:`Executor`: :class:`InProcess` (one task after the other in this thread: tests,
``--local``, and a conformance run against one long-lived broker), :class:`Threads` (*N* tasks at
once in a pool: schedules that wait on wall-clock time more than they compute) or :class:`Spark`
(each task a Spark job of its own on any master, a few more in flight than there are cores).

The interrupt policy is the same for all (:class:`properties.engine.interrupts.Interrupts`):
SIGINT or SIGTERM stops drawing tasks; every task that has finished — also one that finishes
while the run stops — is merged, never half of one; a task still running is abandoned (in this
thread at once; on Spark its job is cancelled; on a pool, whose threads cannot be interrupted,
after a grace period or a second signal, its child processes ended so that it returns); a task
that fails after Spark's retries, or raises on a pool, ends the run the same way with its first
error line in :attr:`Outcome.failure`. A :class:`~properties.errors.UsageError` or
:class:`~properties.errors.Inconclusive` raised by a task (a broker that cannot be reached at all)
propagates: nothing about the system was learnt. The
checker then writes its report of what finished, marked partial when :attr:`Outcome.partial`, and
exits with :meth:`Outcome.exit_status`: 128 + the signal's number (130 SIGINT, 143 SIGTERM).
:func:`session` wraps a whole command: the signal handlers, and at its end every child process the
run started is stopped (:mod:`properties.engine.children`).
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Callable, Iterable, Iterator, Optional, Tuple

import attrs

from properties.engine import children
from properties.engine.interrupts import Interrupts, NoInterrupts, exit_status, name as signal_name
from properties.errors import Inconclusive, UsageError

Task = Tuple[int, int]


def task_ranges(seed_start: int, count: int, task_size: int) -> Iterator[Task]:
    """The tasks' seed ranges ``(start, stop)`` over ``[seed_start, seed_start + count)``,
    generated as they are asked for."""
    stop = seed_start + count
    for s in range(seed_start, stop, task_size):
        yield (s, min(s + task_size, stop))


def task_count(count: int, task_size: int) -> int:
    return -(-count // task_size)


@attrs.define
class Outcome:
    """How a run ended. *signum*: the signal that stopped it (None: none did, or it arrived after
    the last task); *failure*: the first error line of a task that failed for good; *stopped*: why
    the tally asked the run to end early."""

    tally: object
    signum: Optional[int] = None
    failure: Optional[str] = None
    stopped: Optional[str] = None
    interrupted: bool = False  # tasks were left unrun because of a signal or a failure

    @property
    def partial(self) -> bool:
        """Not every task was run (a signal, a failed task)."""
        return self.interrupted

    @property
    def signal_name(self) -> Optional[str]:
        """The stopping signal's name; a plain KeyboardInterrupt counts as SIGINT."""
        if self.signum is not None:
            return signal_name(self.signum)
        return signal_name(None) if self.interrupted and self.failure is None else None

    @property
    def stopped_by(self) -> Optional[str]:
        """The signal that stopped the run before its end, for a report (None: it was not, or a
        failed task stopped it)."""
        return self.signal_name if self.partial and self.failure is None else None

    def exit_status(self, verdict_status: int) -> int:
        """128 + the signal's number when a signal arrived; 2 when a task failed for good; else
        *verdict_status* (the checker's 0 or 1)."""
        if self.signum is not None:
            return exit_status(self.signum)
        if self.failure is not None:
            return 2
        return exit_status(None) if self.interrupted else verdict_status

    def report_end(self, where, what: str = "schedules") -> None:
        """The line on stderr that says why a report is partial (nothing when it is not)."""
        done = getattr(self.tally, "done", 0)
        if self.failure is not None and self.signum is None:
            print(f"groupcheck: error: a task failed: {self.failure} (the report of the {done:,} {what} that "
                  f"finished is marked partial: {where})", file=sys.stderr)
        elif self.partial:
            print(f"groupcheck: interrupted ({self.signal_name}); the report of the {done:,} {what} that "
                  f"finished is marked partial: {where}", file=sys.stderr)
        elif self.signum is not None:
            print(f"groupcheck: {self.signal_name} arrived after the last task; the report is complete: {where}",
                  file=sys.stderr)


def first_error_line(e: BaseException) -> str:
    text = str(e).strip()
    first = next((line for line in text.splitlines() if "Error" in line or "Exception" in line),
                 text.splitlines()[0] if text else type(e).__name__)
    return first.strip()[:300]


# --------------------------------------------------------------------------------------------------
# executors
# --------------------------------------------------------------------------------------------------

class Executor:
    """Where tasks run. ``name``: what reports show (``in-process``, ``threads[4]``, the Spark
    master); ``cores``: how many tasks run at once."""

    name = "?"
    cores = 1

    def run(self, tasks: Iterable[Task], work: Callable, tally, progress, interrupts: Interrupts) -> Outcome:
        raise NotImplementedError


class InProcess(Executor):
    """One task after the other in this thread: a signal interrupts the task under way at once."""

    name = "in-process"

    def run(self, tasks, work, tally, progress, interrupts):
        outcome = Outcome(tally)
        try:
            for start, stop in tasks:
                parts = work(start, stop)
                with interrupts.held():
                    for part in parts:
                        tally.add(part)
                if progress is not None:
                    progress(tally.done, tally.failed)
                if getattr(tally, "stop_requested", None):
                    outcome.stopped = tally.stop_requested
                    break
        except KeyboardInterrupt:
            outcome.interrupted = True
        return outcome


class Threads(Executor):
    """*n* tasks at once on a pool of threads (their own wall-clock waits overlap). On a signal the
    tasks under way are given *grace_s* seconds to finish and be merged (a second signal abandons
    them at once) — short, because whoever sent SIGTERM may send SIGKILL soon after (docker stop:
    10 s); then their child processes are ended, so that the threads return."""

    def __init__(self, n: int, grace_s: float = 5.0) -> None:
        self.n, self.cores, self.grace_s = n, n, grace_s
        self.name = f"threads[{n}]"

    def run(self, tasks, work, tally, progress, interrupts):
        return drive(lambda task: work(*task), tasks, self.n, tally, progress, interrupts, grace_s=self.grace_s)


class Spark(Executor):
    """Each task a Spark job of its own on *spark*'s context, at most *in_flight* at once (default:
    two more than there are cores, so no core waits for the driver). On a signal the jobs under way
    are cancelled; whatever finished while the run stopped is merged."""

    def __init__(self, spark, in_flight: Optional[int] = None, description: str = "groupcheck seeds") -> None:
        self.spark = spark
        sc = spark.sparkContext
        self.name = sc.master
        self.cores = sc.defaultParallelism
        self.in_flight = in_flight or self.cores + 2
        self.description = description

    def run(self, tasks, work, tally, progress, interrupts):
        sc = self.spark.sparkContext

        def job(task):
            sc.setJobDescription(f"{self.description} {task[0]}..{task[1] - 1}")
            return sc.parallelize([task], 1).flatMap(lambda t: work(t[0], t[1])).collect()

        def cancel():
            try:
                sc.cancelAllJobs()
            except Exception:  # the JVM may already be gone (SIGTERM to the whole process group)
                pass

        return drive(job, tasks, self.in_flight, tally, progress, interrupts, cancel=cancel)


class _Pool:
    """*n* daemon threads running submitted calls, each with a :class:`~concurrent.futures.Future`.
    Not ``ThreadPoolExecutor``: its threads are joined at interpreter exit, so a task abandoned
    after a signal (a client schedule still waiting out a timeout) would hold up the exit for as
    long as it runs; an abandoned daemon thread ends with the process."""

    def __init__(self, n: int, name: str) -> None:
        self.calls: "queue.SimpleQueue" = queue.SimpleQueue()
        self.threads = [threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True) for i in range(n)]
        for t in self.threads:
            t.start()

    def _work(self) -> None:
        while True:
            item = self.calls.get()
            if item is None:
                return
            future, fn, args = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as e:  # noqa: BLE001 - handed to the driver through the future
                future.set_exception(e)

    def submit(self, fn, *args) -> Future:
        future: Future = Future()
        self.calls.put((future, fn, args))
        return future

    def shutdown(self) -> None:
        """No new call starts; calls under way go on (in daemon threads) until they return."""
        for _ in self.threads:
            self.calls.put(None)


def drive(job, tasks, in_flight: int, tally, progress=None, interrupts: Optional[Interrupts] = None,
          cancel=None, grace_s: float = 0.0) -> Outcome:
    """Run ``job(task)`` (a list of parts) for every task on a pool of *in_flight* threads, never
    more than *in_flight* tasks drawn and not yet merged; see the module doc for what a signal or
    a failed task does. *grace_s*: how long tasks under way may take to finish after a signal
    (0: abandoned at once, *cancel* called)."""
    interrupts = interrupts or NoInterrupts()
    outcome = Outcome(tally)
    tasks = iter(tasks)
    running: dict = {}  # future -> task: drawn, not yet merged
    pool = _Pool(in_flight, "groupcheck-task")
    failure: Optional[BaseException] = None

    def merge(f) -> None:
        with interrupts.held():
            for part in f.result():
                tally.add(part)
            del running[f]

    def settle(f) -> None:
        """Merge *f* if it finished well (while stopping)."""
        if f.done() and not f.cancelled() and f.exception() is None:
            with interrupts.held(release=False):
                for part in f.result():
                    tally.add(part)
        running.pop(f, None)

    try:
        exhausted = False
        while True:
            while not exhausted and len(running) < in_flight and not outcome.stopped:
                task = next(tasks, None)
                if task is None:
                    exhausted = True
                else:
                    running[pool.submit(job, task)] = task
            if not running:
                break
            finished, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
            for f in finished:
                error = f.exception()
                if error is not None:
                    if isinstance(error, (UsageError, Inconclusive)):
                        raise error
                    failure = error
                    break
                merge(f)
            if failure is not None:
                break
            if progress is not None:
                progress(tally.done, tally.failed)
            if getattr(tally, "stop_requested", None) and not outcome.stopped:
                outcome.stopped = tally.stop_requested
    except KeyboardInterrupt:
        outcome.interrupted = True
        if grace_s > 0 and running:
            _wait_for_tasks_under_way(running, grace_s, interrupts, settle)
    finally:
        with interrupts.held(release=False):
            if outcome.interrupted or failure is not None:
                for f in list(running):  # keep what finished, also while we were stopping; drop the rest
                    settle(f)
                for f in running:
                    f.cancel()
                if cancel is not None:
                    cancel()
                children.stop_all()  # an abandoned task's brokers and consumers: its thread returns
            pool.shutdown()
    if failure is not None:
        outcome.interrupted = True
        outcome.failure = first_error_line(failure)
    return outcome


def _wait_for_tasks_under_way(running: dict, grace_s: float, interrupts: Interrupts, settle) -> None:
    print(f"groupcheck: {signal_name(interrupts.signum)}: stopping; waiting up to {grace_s:g} s for the "
          f"{len(running)} tasks under way (again to abandon them)", file=sys.stderr, flush=True)
    deadline = time.monotonic() + grace_s
    try:
        while running and time.monotonic() < deadline:
            finished, _ = wait(list(running), timeout=min(0.5, max(0.01, deadline - time.monotonic())),
                               return_when=FIRST_COMPLETED)
            for f in finished:
                settle(f)
    except KeyboardInterrupt:
        pass


# --------------------------------------------------------------------------------------------------
# a whole command
# --------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def session():
    """The interrupt policy around a whole command: SIGINT and SIGTERM raise
    :class:`~properties.engine.interrupts.Interrupted` in the main thread while it runs (inside
    ``interrupts.held()`` they wait for the section's end), and every child process the run started
    is stopped when it ends, however it ends (those started before it are not its own: a broker a
    test session shares, kept running)."""
    before = children.running()
    with Interrupts() as interrupts:
        try:
            yield interrupts
        finally:
            with interrupts.held(release=False):
                children.stop_all(keep=before)


def run(tasks: Iterable[Task], work: Callable, tally, executor: Executor, progress=None,
        interrupts: Optional[Interrupts] = None) -> Outcome:
    """Run every task of *tasks* with *work* on *executor*, merging into *tally*; see the module
    doc. *interrupts*: those of the enclosing :func:`session` (None: signals are not handled)."""
    interrupts = interrupts or NoInterrupts()
    try:
        outcome = executor.run(tasks, work, tally, progress, interrupts)
    except KeyboardInterrupt:  # arrived between tasks, outside an executor's own handling
        outcome = Outcome(tally, interrupted=True)
    if interrupts.signum is not None:
        outcome.signum = interrupts.signum
    return outcome
