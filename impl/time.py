"""Time abstraction, ``Timer`` and ``ExponentialBackoff`` (``org.apache.kafka.common.utils``).

Nothing in ``impl`` reads the wall clock: every component receives a :class:`Time`.  The
simulation uses :class:`MockTime`; over real sockets (the Selector, ``groupcheck broker``,
``groupcheck consume``) :class:`SystemTime` is injected, the one place the wall clock is read.
"""

from __future__ import annotations

import math
import random
import time as _wall_time
from typing import Callable, List, Optional

from impl.errors import IllegalArgumentException

#: Java's Long.MAX_VALUE, used as "infinite" for timeouts and deadlines.
LONG_MAX = (1 << 63) - 1
#: Java's Integer.MAX_VALUE.
INT_MAX = (1 << 31) - 1


class Time:
    """``org.apache.kafka.common.utils.Time``: the injected clock interface."""

    __slots__ = ()

    def milliseconds(self) -> int:
        raise NotImplementedError

    def sleep(self, ms: int) -> None:
        raise NotImplementedError

    def timer(self, timeout_ms: int) -> "Timer":
        """``Time.timer(timeoutMs)``: a new :class:`Timer` started now."""
        return Timer(self, timeout_ms)


class SystemTime(Time):
    """``Time.SYSTEM``: the wall clock (milliseconds since the epoch; sleeping really sleeps).
    Only the TCP world uses it; the model and the simulated world never do."""

    __slots__ = ()

    def milliseconds(self) -> int:
        return _wall_time.time_ns() // 1_000_000

    def sleep(self, ms: int) -> None:
        if ms > 0:
            _wall_time.sleep(ms / 1000.0)


class MockTime(Time):
    """``org.apache.kafka.common.utils.MockTime``: a settable clock that only moves when told.

    ``auto_tick_ms`` (default 0) advances the clock by that much on every ``milliseconds()``
    read, like Kafka's MockTime.  Listeners (``fn(new_time_ms)``) run after every change.
    """

    __slots__ = ("_now_ms", "auto_tick_ms", "_listeners")

    def __init__(self, auto_tick_ms: int = 0, current_time_ms: int = 0) -> None:
        self._now_ms = current_time_ms
        self.auto_tick_ms = auto_tick_ms
        self._listeners: List[Callable[[int], None]] = []

    def add_listener(self, listener: Callable[[int], None]) -> None:
        self._listeners.append(listener)

    def milliseconds(self) -> int:
        if self.auto_tick_ms:
            self.sleep(self.auto_tick_ms)
        return self._now_ms

    def sleep(self, ms: int) -> None:
        if ms < 0:
            raise IllegalArgumentException("Negative sleep " + str(ms))
        self._now_ms += ms
        if self._listeners:
            self._tick()

    def set_current_time_ms(self, new_ms: int) -> None:
        """Move the clock to ``new_ms``; the clock never goes backwards."""
        if new_ms < self._now_ms:
            raise IllegalArgumentException(
                "Setting the time to %d while current time %d is newer; this is not allowed"
                % (new_ms, self._now_ms))
        self._now_ms = new_ms
        if self._listeners:
            self._tick()

    def _tick(self) -> None:
        now = self._now_ms
        for listener in self._listeners:
            listener(now)

    def __repr__(self) -> str:
        return "MockTime(%d)" % self._now_ms


class Timer:
    """``org.apache.kafka.common.utils.Timer``: a deadline with a cached notion of "now".

    The timer only observes time when ``update()`` is called; ``is_expired`` ⇔ ``now >= deadline``;
    ``remaining_ms = max(0, deadline − now)``; ``reset`` saturates the deadline at Long.MAX_VALUE.
    """

    __slots__ = ("_time", "_start_ms", "_current_time_ms", "_deadline_ms", "_timeout_ms")

    def __init__(self, time: Time, timeout_ms: int) -> None:
        self._time = time
        self._current_time_ms = 0
        self._start_ms = 0
        self._deadline_ms = 0
        self._timeout_ms = 0
        self.update()
        self.reset(timeout_ms)

    def is_expired(self) -> bool:
        return self._current_time_ms >= self._deadline_ms

    def not_expired(self) -> bool:
        return self._current_time_ms < self._deadline_ms

    def update_and_reset(self, timeout_ms: int) -> None:
        self.update()
        self.reset(timeout_ms)

    def reset(self, timeout_ms: int) -> None:
        """Restart the timer with a new timeout measured from the cached current time."""
        if timeout_ms < 0:
            raise IllegalArgumentException("Invalid negative timeout " + str(timeout_ms))
        self._timeout_ms = timeout_ms
        self._start_ms = self._current_time_ms
        if self._current_time_ms > LONG_MAX - timeout_ms:
            self._deadline_ms = LONG_MAX
        else:
            self._deadline_ms = self._current_time_ms + timeout_ms

    def reset_deadline(self, deadline_ms: int) -> None:
        if deadline_ms < 0:
            raise IllegalArgumentException("Invalid negative deadline " + str(deadline_ms))
        self._timeout_ms = max(0, deadline_ms - self._current_time_ms)
        self._start_ms = self._current_time_ms
        self._deadline_ms = deadline_ms

    def update(self, current_time_ms: Optional[int] = None) -> None:
        """``update()`` reads the clock; ``update(now)`` uses the given time. Never moves back."""
        if current_time_ms is None:
            current_time_ms = self._time.milliseconds()
        if current_time_ms > self._current_time_ms:
            self._current_time_ms = current_time_ms

    def remaining_ms(self) -> int:
        r = self._deadline_ms - self._current_time_ms
        return r if r > 0 else 0

    def current_time_ms(self) -> int:
        return self._current_time_ms

    def elapsed_ms(self) -> int:
        return self._current_time_ms - self._start_ms

    def timeout_ms(self) -> int:
        return self._timeout_ms

    def deadline_ms(self) -> int:
        return self._deadline_ms

    def sleep(self, duration_ms: int) -> None:
        """Sleep for ``min(duration_ms, remaining_ms())`` and update."""
        self._time.sleep(min(duration_ms, self.remaining_ms()))
        self.update()

    def __repr__(self) -> str:
        return "Timer(now=%d, deadline=%d)" % (self._current_time_ms, self._deadline_ms)


class ExponentialBackoff:
    """``org.apache.kafka.common.utils.ExponentialBackoff``.

    ``backoff(k) = min(max, floor(initial · multiplier^min(k, expMax) · U[1−jitter, 1+jitter)))``
    with ``expMax = log_multiplier(max / initial)``; when ``max <= initial`` it is always
    ``initial`` (flat) and no random number is drawn.  The jitter draws from the injected
    ``random.Random`` (never the global one); jitter 0 draws nothing.
    """

    __slots__ = ("initial_interval", "multiplier", "max_interval", "jitter", "exp_max", "_random")

    def __init__(self, initial_interval: int, multiplier: int, max_interval: int, jitter: float,
                 rng: Optional[random.Random] = None) -> None:
        self.initial_interval = min(max_interval, initial_interval)
        self.multiplier = multiplier
        self.max_interval = max_interval
        self.jitter = jitter
        if max_interval > self.initial_interval:
            self.exp_max = math.log(max_interval / max(self.initial_interval, 1)) / math.log(multiplier)
        else:
            self.exp_max = 0.0
        if jitter > 0.0 and rng is None:
            raise IllegalArgumentException("ExponentialBackoff with jitter needs an injected random.Random")
        self._random = rng

    def backoff(self, attempts: int) -> int:
        if self.exp_max == 0:
            return self.initial_interval
        exp = min(attempts, self.exp_max)
        term = self.initial_interval * math.pow(self.multiplier, exp)
        if self.jitter < 2.2250738585072014e-308:  # Double.MIN_NORMAL
            random_factor = 1.0
        else:
            random_factor = self._random.uniform(1 - self.jitter, 1 + self.jitter)
        backoff_value = int(random_factor * term)
        return backoff_value if backoff_value < self.max_interval else self.max_interval
