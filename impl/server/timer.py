"""Delayed operations and a deterministic timer (``kafka.server.DelayedOperation``,
``kafka.server.DelayedOperationPurgatory``, ``kafka.utils.timer.{TimerTask, MockTimer}``).

Kafka's broker parks JoinGroup/SyncGroup requests and member session deadlines as *delayed
operations* in a purgatory: an operation is watched under one or more keys, completes early when
``tryComplete`` succeeds on a ``checkAndComplete(key)``, and otherwise expires when its timer task
fires.  In the broker the timer is a hierarchical timing wheel driven by a reaper thread; here it
is :class:`MockTimer`, a priority queue driven explicitly by :meth:`MockTimer.advance_clock` (like
``kafka.utils.timer.MockTimer`` in Kafka's coordinator tests), so a simulation decides exactly when
time passes.  No threads, no wall clock.

Ordering: tasks fire in ``(deadline, insertion sequence)`` order, each *at its deadline*: before a
task runs, the timer moves its :class:`~impl.time.MockTime` to the task's deadline, so anything the
task schedules (a follow-up ``InitialDelayedJoin``, a rescheduled heartbeat) is measured from the
deadline, not from the end of the advance.  A task is due when ``deadline <= now``
(:meth:`MockTimer.is_due`).
"""

from __future__ import annotations

import heapq
from typing import Dict, Hashable, Iterable, List, Optional

from impl.errors import IllegalArgumentException
from impl.time import MockTime

__all__ = ["TimerTask", "MockTimer", "DelayedOperation", "DelayedOperationPurgatory"]


class TimerTask:
    """``kafka.utils.timer.TimerTask``: something to ``run()`` after ``delay_ms``.

    ``deadline_ms`` is set when the task is added to a timer.  A task is in at most one timer at a
    time; ``cancel()`` takes it out (lazily: the heap entry is skipped when reached).
    """

    __slots__ = ("delay_ms", "deadline_ms", "_timer", "_seq")

    def __init__(self, delay_ms: int) -> None:
        self.delay_ms = delay_ms
        self.deadline_ms = -1
        self._timer: Optional["MockTimer"] = None
        self._seq = -1

    def run(self) -> None:
        raise NotImplementedError

    def cancel(self) -> None:
        timer = self._timer
        if timer is not None:
            self._timer = None
            timer._on_cancel()

    def is_scheduled(self) -> bool:
        return self._timer is not None


class MockTimer:
    """A deterministic timer over a :class:`MockTime` (``kafka.utils.timer.MockTimer``).

    * ``add(task)`` schedules ``task`` at ``now + task.delay_ms`` (or at an explicit
      ``deadline_ms``);
    * ``advance_clock(until_ms)`` runs every scheduled task whose deadline is due at ``until_ms``,
      in ``(deadline, insertion sequence)`` order, moving the clock to each deadline first and to
      ``until_ms`` at the end; tasks scheduled while advancing fire in the same call if due;
    * ``next_deadline()`` is the earliest scheduled deadline (``None`` when idle).

    The clock never moves backwards: a task whose deadline is already behind the clock (because
    someone else moved a shared clock) runs at the current time.
    """

    __slots__ = ("_time", "_heap", "_seq", "_live", "_cancelled")

    #: rebuild the heap when more than this many cancelled entries are waiting in it ...
    COMPACT_MIN = 512

    def __init__(self, time: Optional[MockTime] = None) -> None:
        self._time = time if time is not None else MockTime()
        self._heap: List[tuple] = []
        self._seq = 0
        self._live = 0
        self._cancelled = 0

    @property
    def time(self) -> MockTime:
        return self._time

    # -- scheduling -------------------------------------------------------------------------

    def add(self, task: TimerTask, deadline_ms: Optional[int] = None) -> None:
        """Schedule ``task``; its deadline is ``now + task.delay_ms`` unless given."""
        if task._timer is not None:
            raise IllegalArgumentException("Timer task is already scheduled")
        if deadline_ms is None:
            deadline_ms = self._time.milliseconds() + task.delay_ms
        seq = self._seq
        self._seq = seq + 1
        task.deadline_ms = deadline_ms
        task._timer = self
        task._seq = seq
        self._live += 1
        heapq.heappush(self._heap, (deadline_ms, seq, task))

    def cancel(self, task: TimerTask) -> None:
        if task._timer is self:
            task.cancel()

    def _on_cancel(self) -> None:
        self._live -= 1
        self._cancelled += 1
        if self._cancelled > self.COMPACT_MIN and self._cancelled * 2 > len(self._heap):
            # ... and more than half of the heap is dead weight (heartbeats are rescheduled far
            # more often than they expire).
            self._heap = [e for e in self._heap if e[2]._timer is self and e[2]._seq == e[1]]
            heapq.heapify(self._heap)
            self._cancelled = 0

    # -- time -------------------------------------------------------------------------------

    @staticmethod
    def is_due(deadline_ms: int, now_ms: int) -> bool:
        """A task fires when the clock has reached its deadline (``deadline <= now``)."""
        return deadline_ms <= now_ms

    def _drop_cancelled_head(self) -> None:
        heap = self._heap
        while heap:
            _, seq, task = heap[0]
            if task._timer is self and task._seq == seq:
                return
            heapq.heappop(heap)
            if self._cancelled:
                self._cancelled -= 1

    def next_deadline(self) -> Optional[int]:
        self._drop_cancelled_head()
        heap = self._heap
        return heap[0][0] if heap else None

    def advance_clock(self, until_ms: int) -> bool:
        """Fire every task due at ``until_ms``; return whether any task ran."""
        heap = self._heap
        time = self._time
        executed = False
        while heap:
            deadline, seq, task = heap[0]
            if task._timer is not self or task._seq != seq:
                heapq.heappop(heap)
                if self._cancelled:
                    self._cancelled -= 1
                continue
            if not self.is_due(deadline, until_ms):
                break
            heapq.heappop(heap)
            task._timer = None
            self._live -= 1
            if deadline > time.milliseconds():
                time.set_current_time_ms(deadline)
            task.run()
            executed = True
        if until_ms > time.milliseconds():
            time.set_current_time_ms(until_ms)
        return executed

    def size(self) -> int:
        """Number of scheduled (not cancelled, not yet fired) tasks."""
        return self._live

    def clear(self) -> None:
        """Drop every scheduled task without running it (the broker process died)."""
        for _, seq, task in self._heap:
            if task._timer is self and task._seq == seq:
                task._timer = None
        self._heap = []
        self._live = 0
        self._cancelled = 0

    def __repr__(self) -> str:
        return "MockTimer(now=%d, scheduled=%d, next=%r)" % (
            self._time.milliseconds(), self._live, self.next_deadline())


class DelayedOperation(TimerTask):
    """``kafka.server.DelayedOperation``: an operation that completes early or on timeout.

    Subclasses implement ``try_complete`` (check the completion condition and, if met, call
    ``force_complete()`` and return its result), ``on_complete`` (the completion action, run
    exactly once) and ``on_expiration`` (extra action when completed by the timer).

    * ``force_complete()``: the first call wins: it cancels the timer task, runs ``on_complete``
      and returns ``True``; every later call returns ``False`` and does nothing.
    * ``run()`` (timer expiry) = ``if force_complete(): on_expiration()``.
    """

    __slots__ = ("_completed",)

    def __init__(self, delay_ms: int) -> None:
        TimerTask.__init__(self, delay_ms)
        self._completed = False

    def force_complete(self) -> bool:
        if self._completed:
            return False
        self._completed = True
        # cancel the timeout timer
        self.cancel()
        self.on_complete()
        return True

    def is_completed(self) -> bool:
        return self._completed

    def try_complete(self) -> bool:
        raise NotImplementedError

    def on_complete(self) -> None:
        raise NotImplementedError

    def on_expiration(self) -> None:
        raise NotImplementedError

    def safe_try_complete(self) -> bool:
        # The group lock of Kafka is not needed: everything runs on one thread.
        return self.try_complete()

    def safe_try_complete_or_else(self, f) -> bool:
        """Try to complete; if that fails run ``f`` (start watching), then try once more."""
        if self.try_complete():
            return True
        f()
        return self.try_complete()

    def run(self) -> None:
        if self.force_complete():
            self.on_expiration()


class DelayedOperationPurgatory:
    """``kafka.server.DelayedOperationPurgatory``: watch delayed operations by key.

    ``try_complete_else_watch(op, keys)`` tries ``op`` once; if it cannot complete it is watched
    under every key (and retried once more), then added to the timer.
    ``check_and_complete(key)`` retries every operation watched under ``key`` (completed ones
    are dropped from the watch list).  Watch lists keep insertion order, and an operation added
    to a list while that list is being checked is kept for the next check.
    """

    __slots__ = ("purgatory_name", "timer", "purge_interval", "_watchers", "_watch_count")

    def __init__(self, purgatory_name: str, timer: MockTimer, purge_interval: int = 1000) -> None:
        self.purgatory_name = purgatory_name
        self.timer = timer
        self.purge_interval = purge_interval
        self._watchers: Dict[Hashable, List[DelayedOperation]] = {}
        self._watch_count = 0

    def try_complete_else_watch(self, operation: DelayedOperation, watch_keys: Iterable[Hashable]) -> bool:
        watch_keys = tuple(watch_keys)
        if not watch_keys:
            raise IllegalArgumentException("The watch key list can't be empty")
        # operation.safe_try_complete_or_else(watch), inlined for the hot path.
        if operation.try_complete():
            return True
        watchers = self._watchers
        for key in watch_keys:
            ops = watchers.get(key)
            if ops is None:
                watchers[key] = [operation]
            else:
                ops.append(operation)
        self._watch_count += 1
        if self._watch_count >= self.purge_interval:
            self.purge_completed()
        # last completion check
        if operation.try_complete():
            return True
        # if it cannot be completed by now and hence is watched, add to the expire queue also
        if not operation._completed:
            self.timer.add(operation)
            if operation._completed:
                # cancel the timer task
                operation.cancel()
        return False

    def check_and_complete(self, key: Hashable) -> int:
        """Check the operations watched under ``key``; return how many completed now."""
        watchers = self._watchers
        ops = watchers.get(key)
        if ops is None:
            return 0
        completed = 0
        for op in tuple(ops):
            if op._completed:
                continue
            if op.try_complete():
                completed += 1
        # completion callbacks may have added operations under this key (or replaced the list)
        ops = watchers.get(key)
        if ops is not None:
            live = [op for op in ops if not op._completed]
            if live:
                watchers[key] = live
            else:
                del watchers[key]
        return completed

    def watched(self, key: Hashable) -> List[DelayedOperation]:
        """The not-yet-completed operations watched under ``key`` (for inspection/tests)."""
        return [op for op in self._watchers.get(key, ()) if not op._completed]

    def num_watched_keys(self) -> int:
        return len(self._watchers)

    def watched_operations(self) -> int:
        return sum(len(ops) for ops in self._watchers.values())

    def purge_completed(self) -> None:
        """Drop completed (e.g. expired) operations from every watch list."""
        watchers = self._watchers
        for key in list(watchers):
            live = [op for op in watchers[key] if not op._completed]
            if live:
                watchers[key] = live
            else:
                del watchers[key]
        self._watch_count = 0

    def shutdown(self) -> None:
        """Forget every watched operation and cancel their timer tasks without running them."""
        for ops in self._watchers.values():
            for op in ops:
                op.cancel()
        self._watchers = {}
        self._watch_count = 0

    def __repr__(self) -> str:
        return "DelayedOperationPurgatory(%s, keys=%d)" % (self.purgatory_name, len(self._watchers))
