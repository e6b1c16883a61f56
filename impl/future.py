"""``RequestFuture``, ``RequestFutureListener``, ``RequestFutureAdapter`` and ``PollCondition``.

Mirrors ``org.apache.kafka.clients.consumer.internals.RequestFuture`` (protocol reference §4.2).
The simulation is single-threaded, so the Java ``CountDownLatch`` and atomics are plain fields.

* The result slot starts as the :data:`INCOMPLETE` sentinel; a stored ``Exception`` means failure,
  anything else (including ``None``) is a success value.
* ``complete``/``raise_`` succeed exactly once; a second attempt raises
  :class:`~impl.errors.IllegalStateException`.
* Listeners sit in a FIFO; firing *polls* them, so each runs exactly once, in registration order;
  a listener added after completion fires immediately.

``raise`` is a Python keyword, so Java's ``raise(e)`` / ``raise(Errors)`` is ``raise_``.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Generic, TypeVar, Union

from impl.errors import (
    Errors,
    IllegalArgumentException,
    IllegalStateException,
    NoAvailableBrokersException,
    RetriableException,
)

T = TypeVar("T")
S = TypeVar("S")


class _Incomplete:
    __slots__ = ()

    def __repr__(self) -> str:
        return "INCOMPLETE"


#: ``RequestFuture.INCOMPLETE_SENTINEL``.
INCOMPLETE: Any = _Incomplete()

_ALREADY_COMPLETE = "Invalid attempt to complete a request future which is already complete"


class PollCondition:
    """``ConsumerNetworkClient.PollCondition``: ``poll`` blocks only while ``should_block()``."""

    __slots__ = ()

    def should_block(self) -> bool:
        raise NotImplementedError


class RequestFutureListener(Generic[T]):
    """``RequestFutureListener<T>``."""

    __slots__ = ()

    def on_success(self, value: T) -> None:
        raise NotImplementedError

    def on_failure(self, e: Exception) -> None:
        raise NotImplementedError


class RequestFutureAdapter(Generic[T, S]):
    """``RequestFutureAdapter<F, T>``: converts a future's result for ``compose``.

    ``on_failure`` defaults to propagating the exception to the composed future.
    """

    __slots__ = ()

    def on_success(self, value: T, future: "RequestFuture[S]") -> None:
        raise NotImplementedError

    def on_failure(self, e: Exception, future: "RequestFuture[S]") -> None:
        future.raise_(e)


class FunctionListener(RequestFutureListener[T]):
    """A listener built from two callables (Python convenience for anonymous Java classes)."""

    __slots__ = ("_on_success", "_on_failure")

    def __init__(self, on_success: Callable[[T], None], on_failure: Callable[[Exception], None]) -> None:
        self._on_success = on_success
        self._on_failure = on_failure

    def on_success(self, value: T) -> None:
        self._on_success(value)

    def on_failure(self, e: Exception) -> None:
        self._on_failure(e)


class _ComposeListener(RequestFutureListener):
    """The anonymous listener of ``RequestFuture.compose``."""

    __slots__ = ("_adapter", "_adapted")

    def __init__(self, adapter: RequestFutureAdapter, adapted: "RequestFuture") -> None:
        self._adapter = adapter
        self._adapted = adapted

    def on_success(self, value: Any) -> None:
        self._adapter.on_success(value, self._adapted)

    def on_failure(self, e: Exception) -> None:
        self._adapter.on_failure(e, self._adapted)


class _ChainListener(RequestFutureListener):
    """The anonymous listener of ``RequestFuture.chain``."""

    __slots__ = ("_future",)

    def __init__(self, future: "RequestFuture") -> None:
        self._future = future

    def on_success(self, value: Any) -> None:
        self._future.complete(value)

    def on_failure(self, e: Exception) -> None:
        self._future.raise_(e)


class RequestFuture(PollCondition, Generic[T]):
    """The result of an asynchronous request (``RequestFuture<T>``)."""

    __slots__ = ("_result", "_listeners")

    def __init__(self) -> None:
        self._result: Any = INCOMPLETE
        self._listeners: deque = deque()

    # ---- state --------------------------------------------------------------------------

    def is_done(self) -> bool:
        """Whether the future completed (successfully or not)."""
        return self._result is not INCOMPLETE

    def succeeded(self) -> bool:
        r = self._result
        return r is not INCOMPLETE and not isinstance(r, Exception)

    def failed(self) -> bool:
        return isinstance(self._result, Exception)

    def is_retriable(self) -> bool:
        """``isRetriable()``: whether the failure is a RetriableException (calls ``exception()``)."""
        return isinstance(self.exception(), RetriableException)

    def value(self) -> T:
        if not self.succeeded():
            raise IllegalStateException(
                "Attempt to retrieve value from future which hasn't successfully completed")
        return self._result

    def exception(self) -> Exception:
        if not self.failed():
            raise IllegalStateException("Attempt to retrieve exception from future which hasn't failed")
        return self._result

    # ---- completion ---------------------------------------------------------------------

    def complete(self, value: T) -> None:
        """Complete successfully with ``value`` (``None`` is a valid value) and fire listeners."""
        if isinstance(value, Exception):
            raise IllegalArgumentException(
                "The argument to complete can not be an instance of RuntimeException")
        if self._result is not INCOMPLETE:
            raise IllegalStateException(_ALREADY_COMPLETE)
        self._result = value
        self._fire_success()

    def raise_(self, e: Union[Exception, Errors]) -> None:
        """``raise(RuntimeException)`` / ``raise(Errors)``: fail the future and fire listeners."""
        if isinstance(e, Errors):
            e = e.exception()
        if e is None:
            raise IllegalArgumentException("The exception passed to raise must not be null")
        if self._result is not INCOMPLETE:
            raise IllegalStateException(_ALREADY_COMPLETE)
        self._result = e
        self._fire_failure()

    def _fire_success(self) -> None:
        value = self._result
        listeners = self._listeners
        while listeners:
            listeners.popleft().on_success(value)

    def _fire_failure(self) -> None:
        e = self._result
        listeners = self._listeners
        while listeners:
            listeners.popleft().on_failure(e)

    # ---- listeners / composition --------------------------------------------------------

    def add_listener(self, listener: RequestFutureListener[T]) -> None:
        """Register a listener; if already complete it fires immediately."""
        self._listeners.append(listener)
        r = self._result
        if r is INCOMPLETE:
            return
        if isinstance(r, Exception):
            self._fire_failure()
        else:
            self._fire_success()

    def compose(self, adapter: RequestFutureAdapter[T, S]) -> "RequestFuture[S]":
        """Convert this future's result through ``adapter`` into a new future."""
        adapted: RequestFuture[S] = RequestFuture()
        self.add_listener(_ComposeListener(adapter, adapted))
        return adapted

    def chain(self, future: "RequestFuture[T]") -> None:
        """Propagate this future's result (success or failure) to ``future``."""
        self.add_listener(_ChainListener(future))

    # ---- PollCondition ------------------------------------------------------------------

    def should_block(self) -> bool:
        return self._result is INCOMPLETE

    # ---- factories ----------------------------------------------------------------------

    @staticmethod
    def failure(e: Exception) -> "RequestFuture":
        future: RequestFuture = RequestFuture()
        future.raise_(e)
        return future

    @staticmethod
    def void_success() -> "RequestFuture[None]":
        future: RequestFuture[None] = RequestFuture()
        future.complete(None)
        return future

    @staticmethod
    def coordinator_not_available() -> "RequestFuture":
        return RequestFuture.failure(Errors.COORDINATOR_NOT_AVAILABLE.exception())

    @staticmethod
    def no_brokers_available() -> "RequestFuture":
        return RequestFuture.failure(NoAvailableBrokersException())

    def __repr__(self) -> str:
        return "RequestFuture(%r)" % (self._result,)
