"""RequestFuture (protocol reference §4.2)."""

import pytest

from impl.errors import (
    CoordinatorNotAvailableException,
    DisconnectException,
    Errors,
    IllegalArgumentException,
    IllegalGenerationException,
    IllegalStateException,
    NoAvailableBrokersException,
    NotCoordinatorException,
)
from impl.future import FunctionListener, RequestFuture, RequestFutureAdapter


def recorder(log, tag):
    return FunctionListener(lambda v: log.append((tag, "ok", v)), lambda e: log.append((tag, "err", e)))


# ---- complete exactly once ---------------------------------------------------------------

def test_complete_once_then_second_complete_raises():
    f = RequestFuture()
    assert not f.is_done()
    f.complete(5)
    assert f.is_done() and f.succeeded() and not f.failed()
    assert f.value() == 5
    with pytest.raises(IllegalStateException, match="already complete"):
        f.complete(6)
    with pytest.raises(IllegalStateException, match="already complete"):
        f.raise_(DisconnectException())
    assert f.value() == 5  # unchanged


def test_raise_once_then_complete_raises():
    f = RequestFuture()
    e = NotCoordinatorException("x")
    f.raise_(e)
    assert f.failed() and not f.succeeded()
    assert f.exception() is e
    with pytest.raises(IllegalStateException):
        f.complete(1)
    with pytest.raises(IllegalStateException):
        f.raise_(Errors.ILLEGAL_GENERATION)
    assert f.exception() is e


def test_none_is_a_valid_success_value():
    f = RequestFuture()
    f.complete(None)
    assert f.succeeded()
    assert f.value() is None


def test_value_and_exception_guards():
    f = RequestFuture()
    with pytest.raises(IllegalStateException):
        f.value()
    with pytest.raises(IllegalStateException):
        f.exception()
    f.complete("v")
    with pytest.raises(IllegalStateException):
        f.exception()
    g = RequestFuture()
    g.raise_(Errors.UNKNOWN_MEMBER_ID)
    with pytest.raises(IllegalStateException):
        g.value()


def test_complete_with_exception_and_raise_none_are_illegal_arguments():
    f = RequestFuture()
    with pytest.raises(IllegalArgumentException):
        f.complete(RuntimeError("not a value"))
    with pytest.raises(IllegalArgumentException):
        f.raise_(None)
    assert not f.is_done()


def test_raise_errors_and_is_retriable():
    f = RequestFuture()
    f.raise_(Errors.NOT_COORDINATOR)
    assert isinstance(f.exception(), NotCoordinatorException)
    assert f.is_retriable()
    g = RequestFuture()
    g.raise_(Errors.ILLEGAL_GENERATION)
    assert isinstance(g.exception(), IllegalGenerationException)
    assert not g.is_retriable()
    h = RequestFuture()
    h.complete(1)
    with pytest.raises(IllegalStateException):
        h.is_retriable()


# ---- listeners -------------------------------------------------------------------------------

def test_listeners_fire_once_in_registration_order():
    f = RequestFuture()
    log = []
    for tag in ("a", "b", "c"):
        f.add_listener(recorder(log, tag))
    assert log == []
    f.complete(7)
    assert log == [("a", "ok", 7), ("b", "ok", 7), ("c", "ok", 7)]
    # a later listener fires immediately, and the earlier ones do not fire again
    f.add_listener(recorder(log, "d"))
    assert log == [("a", "ok", 7), ("b", "ok", 7), ("c", "ok", 7), ("d", "ok", 7)]


def test_failure_listeners_in_order_and_late_listener_fires_immediately():
    f = RequestFuture()
    log = []
    f.add_listener(recorder(log, 1))
    f.add_listener(recorder(log, 2))
    e = DisconnectException.INSTANCE
    f.raise_(e)
    f.add_listener(recorder(log, 3))
    assert log == [(1, "err", e), (2, "err", e), (3, "err", e)]


def test_listener_added_during_firing_runs_exactly_once():
    f = RequestFuture()
    log = []

    def first(v):
        log.append("first")
        f.add_listener(recorder(log, "nested"))

    f.add_listener(FunctionListener(first, lambda e: None))
    f.add_listener(recorder(log, "second"))
    f.complete(1)
    assert log == ["first", ("second", "ok", 1), ("nested", "ok", 1)]


# ---- compose / chain -------------------------------------------------------------------------

class Doubler(RequestFutureAdapter):
    def on_success(self, value, future):
        future.complete(value * 2)


def test_compose_success_goes_through_adapter():
    f = RequestFuture()
    g = f.compose(Doubler())
    assert not g.is_done()
    f.complete(21)
    assert g.value() == 42


def test_compose_default_on_failure_raises_on_composed_future():
    f = RequestFuture()
    g = f.compose(Doubler())
    e = CoordinatorNotAvailableException()
    f.raise_(e)
    assert g.failed() and g.exception() is e


def test_compose_adapter_may_turn_success_into_failure():
    class Check(RequestFutureAdapter):
        def on_success(self, value, future):
            if value < 0:
                future.raise_(Errors.REBALANCE_IN_PROGRESS)
            else:
                future.complete(value)

    f = RequestFuture()
    g = f.compose(Check())
    f.complete(-1)
    assert g.failed() and g.exception().__class__.__name__ == "RebalanceInProgressException"


def test_compose_after_completion_fires_immediately():
    f = RequestFuture()
    f.complete(4)
    g = f.compose(Doubler())
    assert g.value() == 8


def test_chain_propagates_success_and_failure():
    f, g = RequestFuture(), RequestFuture()
    f.chain(g)
    f.complete("x")
    assert g.value() == "x"
    f2, g2 = RequestFuture(), RequestFuture()
    f2.chain(g2)
    e = NotCoordinatorException()
    f2.raise_(e)
    assert g2.exception() is e


def test_listener_order_between_compose_and_plain_listener():
    f = RequestFuture()
    log = []
    f.add_listener(recorder(log, "before"))
    g = f.compose(Doubler())
    g.add_listener(recorder(log, "composed"))
    f.add_listener(recorder(log, "after"))
    f.complete(1)
    assert log == [("before", "ok", 1), ("composed", "ok", 2), ("after", "ok", 1)]


# ---- factories and PollCondition ------------------------------------------------------------

def test_factories():
    assert RequestFuture.void_success().succeeded()
    assert RequestFuture.void_success().value() is None
    c = RequestFuture.coordinator_not_available()
    assert isinstance(c.exception(), CoordinatorNotAvailableException) and c.is_retriable()
    n = RequestFuture.no_brokers_available()
    assert isinstance(n.exception(), NoAvailableBrokersException) and n.is_retriable()
    e = IllegalGenerationException()
    assert RequestFuture.failure(e).exception() is e


def test_should_block_until_done():
    f = RequestFuture()
    assert f.should_block()
    f.complete(0)
    assert not f.should_block()
