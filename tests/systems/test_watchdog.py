"""Crashes and hangs of the implementation are counterexamples (properties/systems/watchdog.py),
shrunk and replayed like any other, not a traceback or a hung walk."""

import signal

import pytest

from model.config import Config
from properties.explore.shrink import shrink
from properties.systems import replayer, run
from properties.systems import watchdog
from properties.systems.watchdog import Crash, Hang, guarded, watching


def test_guarded_returns_the_value_or_what_went_wrong():
    assert guarded(lambda x: x + 1, 1) == (2, None)

    def boom():
        raise ValueError("no such member")

    value, failure = guarded(boom)
    assert value is None and isinstance(failure, Crash)
    assert failure.error == "ValueError: no such member" and "test_watchdog.py" in failure.where

    def spin():
        while True:
            pass

    with watching(0.2):
        value, failure = guarded(spin, seconds=0.2)
        assert value is None and isinstance(failure, Hang) and "in spin" in failure.where
        assert guarded(lambda: 7, seconds=0.2) == (7, None)  # the next step starts a new deadline
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL  # the watchdog leaves nothing behind


def _on_join_complete(monkeypatch, body):
    """Replace the consumer coordinator's onJoinComplete (run by the application's poll once a
    SyncGroup answer arrives) with *body*."""
    from impl.coordinator import consumer_coordinator as cc

    monkeypatch.setattr(cc.ConsumerCoordinator, "on_join_complete", lambda self, *a, **k: body())


def test_an_exception_in_the_implementation_is_a_shrunk_replayable_counterexample(monkeypatch):
    def crash():
        raise KeyError("assignment")

    _on_join_complete(monkeypatch, crash)
    config = Config()
    result = run("impl", 3, config, steps=40)
    v = result.violation
    assert v is not None and v.property == "impl-no-crash"
    # where: the innermost frame inside impl/ (the raising lambda here is the test's)
    assert v.message.startswith("KeyError: 'assignment' raised at impl/coordinator/abstract_coordinator.py:")
    assert "in join_group_if_needed, in ('poll'," in v.message
    shrunk = shrink(replayer("impl", config, 3), result.schedule, v, budget_seconds=20)
    assert shrunk.reproduced and len(shrunk.schedule) <= len(result.schedule)
    assert shrunk.result.violation.property == "impl-no-crash"


def test_an_event_the_implementation_never_finishes_is_a_hang(monkeypatch):
    def hang():
        while True:
            pass

    _on_join_complete(monkeypatch, hang)
    monkeypatch.setattr(watchdog, "HANG_SECONDS", 0.3)
    result = run("impl", 3, Config(), steps=40)
    assert result.violation is not None and result.violation.property == "impl-no-hang"
    assert "still running after 0.3 s" in result.violation.message


def _spin():
    while True:
        pass


def test_a_hang_is_caught_in_any_thread():
    """A campaign's tasks run in a driver's pool thread or a Spark worker, not in a main thread
    where a signal could reach them (issue 34: a hanging mutant spun a campaign for good)."""
    import threading

    out = []
    worker = threading.Thread(target=lambda: out.append(guarded(_spin, seconds=0.2)))
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "the watchdog did not stop the spinning thread"
    value, failure = out[0]
    assert value is None and isinstance(failure, Hang) and "in _spin" in failure.where
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL  # no signal is used


def test_a_hang_is_caught_in_a_forked_process():
    """Spark's Python worker daemon forks its workers: the child has no monitor thread until it
    starts its own."""
    import multiprocessing

    guarded(lambda: None, seconds=5)  # the parent's monitor is running when it forks
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        kind, where = pool.apply(_hang_in_child, ())
    assert kind == "Hang" and "in _spin" in where


def _hang_in_child():
    value, failure = guarded(_spin, seconds=0.2)
    return type(failure).__name__, failure.where


def test_a_stop_never_reaches_the_code_after_the_step():
    """Steps that end around their deadline give their value or a hang, and no stop is raised in
    the code after them (30 steps racing the monitor)."""
    import time as _time

    for _ in range(30):
        value, failure = guarded(lambda: _time.sleep(0.02) or 1, seconds=0.02)
        assert (value, failure) == (1, None) or isinstance(failure, Hang)
        total = 0
        for i in range(200_000):  # bytecode boundaries, where a leaked stop would be raised
            total += i
        assert total == 19_999_900_000
