"""MockTimer, DelayedOperation and DelayedOperationPurgatory (impl/server/timer.py)."""

from __future__ import annotations

import pytest

from impl.errors import IllegalArgumentException
from impl.server.timer import DelayedOperation, DelayedOperationPurgatory, MockTimer, TimerTask
from impl.time import MockTime


class Recorder(TimerTask):
    __slots__ = ("name", "log", "time", "on_run")

    def __init__(self, name, delay_ms, log, time, on_run=None):
        super().__init__(delay_ms)
        self.name = name
        self.log = log
        self.time = time
        self.on_run = on_run

    def run(self):
        self.log.append((self.name, self.time.milliseconds()))
        if self.on_run is not None:
            self.on_run()


class Op(DelayedOperation):
    __slots__ = ("ready", "completions", "expirations", "tries")

    def __init__(self, delay_ms, ready=False):
        super().__init__(delay_ms)
        self.ready = ready
        self.completions = 0
        self.expirations = 0
        self.tries = 0

    def try_complete(self):
        self.tries += 1
        if self.ready:
            return self.force_complete()
        return False

    def on_complete(self):
        self.completions += 1

    def on_expiration(self):
        self.expirations += 1


@pytest.fixture
def clock():
    time = MockTime()
    return time, MockTimer(time)


def test_fires_in_deadline_then_insertion_order_each_at_its_deadline(clock):
    time, timer = clock
    log = []
    timer.add(Recorder("c", 30, log, time))
    timer.add(Recorder("a", 10, log, time))
    timer.add(Recorder("b1", 20, log, time))
    timer.add(Recorder("b2", 20, log, time))
    timer.add(Recorder("late", 41, log, time))
    assert timer.next_deadline() == 10
    assert timer.advance_clock(40) is True
    assert log == [("a", 10), ("b1", 20), ("b2", 20), ("c", 30)]
    assert time.milliseconds() == 40
    assert timer.next_deadline() == 41
    assert timer.size() == 1


def test_deadline_equal_to_until_fires_and_one_less_does_not(clock):
    time, timer = clock
    log = []
    timer.add(Recorder("x", 100, log, time))
    assert timer.advance_clock(99) is False
    assert log == []
    assert time.milliseconds() == 99
    timer.advance_clock(100)
    assert log == [("x", 100)]


def test_task_scheduled_while_firing_is_measured_from_the_deadline(clock):
    time, timer = clock
    log = []

    def schedule_follow_up():
        timer.add(Recorder("follow-up", 5, log, time))

    timer.add(Recorder("first", 10, log, time, on_run=schedule_follow_up))
    timer.advance_clock(100)
    assert log == [("first", 10), ("follow-up", 15)]
    assert time.milliseconds() == 100


def test_cancelled_task_never_runs_and_next_deadline_skips_it(clock):
    time, timer = clock
    log = []
    a = Recorder("a", 10, log, time)
    b = Recorder("b", 20, log, time)
    timer.add(a)
    timer.add(b)
    a.cancel()
    assert timer.next_deadline() == 20
    assert timer.size() == 1
    timer.advance_clock(50)
    assert log == [("b", 20)]
    assert timer.next_deadline() is None


def test_adding_a_scheduled_task_twice_is_rejected(clock):
    time, timer = clock
    t = Recorder("t", 1, [], time)
    timer.add(t)
    with pytest.raises(IllegalArgumentException):
        timer.add(t)


def test_explicit_deadline(clock):
    time, timer = clock
    log = []
    timer.add(Recorder("t", 999, log, time), deadline_ms=7)
    timer.advance_clock(7)
    assert log == [("t", 7)]


def test_heap_compaction_keeps_live_tasks(clock):
    time, timer = clock
    log = []
    tasks = [Recorder("t%d" % i, 1000 + i, log, time) for i in range(2000)]
    for t in tasks:
        timer.add(t)
    for t in tasks[:1990]:
        t.cancel()
    assert timer.size() == 10
    timer.advance_clock(10000)
    assert [name for name, _ in log] == ["t%d" % i for i in range(1990, 2000)]


def test_clock_never_moves_back_for_overdue_tasks(clock):
    time, timer = clock
    log = []
    timer.add(Recorder("t", 10, log, time))
    time.set_current_time_ms(50)  # somebody else moved a shared clock
    timer.advance_clock(60)
    assert log == [("t", 50)]
    assert time.milliseconds() == 60


# -- DelayedOperation -------------------------------------------------------------------------

def test_force_complete_is_exactly_once_and_cancels_the_timer(clock):
    time, timer = clock
    op = Op(100)
    timer.add(op)
    assert op.force_complete() is True
    assert op.force_complete() is False
    assert op.completions == 1
    assert op.is_completed()
    assert timer.size() == 0
    timer.advance_clock(1000)
    assert op.expirations == 0


def test_expiry_completes_then_runs_on_expiration(clock):
    time, timer = clock
    op = Op(100)
    timer.add(op)
    timer.advance_clock(100)
    assert (op.completions, op.expirations) == (1, 1)
    assert op.force_complete() is False


# -- DelayedOperationPurgatory ---------------------------------------------------------------

def test_try_complete_else_watch_completes_immediately_without_timer(clock):
    time, timer = clock
    purgatory = DelayedOperationPurgatory("p", timer)
    op = Op(100, ready=True)
    assert purgatory.try_complete_else_watch(op, ["k"]) is True
    assert op.completions == 1
    assert timer.size() == 0
    assert purgatory.watched("k") == []


def test_watched_operation_completes_on_check_and_complete(clock):
    time, timer = clock
    purgatory = DelayedOperationPurgatory("p", timer)
    op = Op(100)
    other = Op(100)
    assert purgatory.try_complete_else_watch(op, ["k"]) is False
    assert purgatory.try_complete_else_watch(other, ["other"]) is False
    assert op.tries == 2  # before and after watching
    assert timer.size() == 2
    assert purgatory.check_and_complete("k") == 0
    op.ready = True
    assert purgatory.check_and_complete("k") == 1
    assert op.completions == 1 and op.expirations == 0
    assert purgatory.watched("k") == []
    assert other.tries == 2  # a different key is not checked
    assert timer.size() == 1


def test_watched_operation_expires(clock):
    time, timer = clock
    purgatory = DelayedOperationPurgatory("p", timer)
    op = Op(100)
    purgatory.try_complete_else_watch(op, ["k"])
    timer.advance_clock(99)
    assert op.completions == 0
    timer.advance_clock(100)
    assert (op.completions, op.expirations) == (1, 1)
    assert purgatory.check_and_complete("k") == 0
    assert purgatory.num_watched_keys() == 0


def test_operation_added_under_the_key_during_check_is_kept(clock):
    time, timer = clock
    purgatory = DelayedOperationPurgatory("p", timer)
    added = []

    class Chaining(Op):
        __slots__ = ()

        def on_complete(self):
            super().on_complete()
            follow = Op(50)
            added.append(follow)
            purgatory.try_complete_else_watch(follow, ["k"])

    first = Chaining(100)
    purgatory.try_complete_else_watch(first, ["k"])
    first.ready = True
    assert purgatory.check_and_complete("k") == 1
    assert purgatory.watched("k") == added
    assert added[0].tries == 2  # tried at watch time, not by the ongoing check


def test_empty_watch_keys_rejected(clock):
    time, timer = clock
    purgatory = DelayedOperationPurgatory("p", timer)
    with pytest.raises(IllegalArgumentException):
        purgatory.try_complete_else_watch(Op(1), [])


def test_purge_drops_expired_operations_from_watch_lists(clock):
    time, timer = clock
    purgatory = DelayedOperationPurgatory("p", timer, purge_interval=10)
    for i in range(5):
        purgatory.try_complete_else_watch(Op(10), ["k%d" % i])
    timer.advance_clock(10)
    assert purgatory.watched_operations() == 5  # expired but still listed
    purgatory.purge_completed()
    assert purgatory.watched_operations() == 0
