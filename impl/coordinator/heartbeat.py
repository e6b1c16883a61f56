"""``Heartbeat`` (``org.apache.kafka.clients.consumer.internals.Heartbeat``), protocol §3.5.

Three :class:`~impl.time.Timer` objects track the member's liveness obligations:

* ``heartbeat_timer`` (``heartbeat.interval.ms``): when the next Heartbeat is due;
* ``session_timer`` (``session.timeout.ms``): how long since the last successful heartbeat response;
  expiry makes the heartbeat thread suspect the coordinator;
* ``poll_timer`` (``max.poll.interval.ms``): how long since the application last called ``poll``;
  expiry makes the heartbeat thread leave the group.

Timers only observe time when updated: every query takes ``now`` (or reads the injected clock) and
updates all three first, as Kafka does.  ``fail_heartbeat`` backs off a flat ``retry.backoff.ms``
(Kafka ≤ 3.6; trunk's exponential heartbeat retry backoff, KIP-580, is not used).
"""

from __future__ import annotations

from impl.errors import IllegalArgumentException
from impl.time import Time

__all__ = ["Heartbeat"]


class Heartbeat:
    """A helper class for managing the heartbeat to the coordinator."""

    __slots__ = ("session_timeout_ms", "heartbeat_interval_ms", "max_poll_interval_ms",
                 "retry_backoff_ms", "time", "heartbeat_timer", "session_timer", "poll_timer",
                 "last_heartbeat_send", "heartbeat_in_flight", "heartbeat_attempts")

    def __init__(self, time: Time, session_timeout_ms: int, heartbeat_interval_ms: int,
                 max_poll_interval_ms: int, retry_backoff_ms: int) -> None:
        if heartbeat_interval_ms >= session_timeout_ms:
            raise IllegalArgumentException("Heartbeat must be set lower than the session timeout")
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        # max.poll.interval.ms is the consumer's rebalance timeout
        self.max_poll_interval_ms = max_poll_interval_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.time = time
        self.heartbeat_timer = time.timer(heartbeat_interval_ms)
        self.session_timer = time.timer(session_timeout_ms)
        self.poll_timer = time.timer(max_poll_interval_ms)
        self.last_heartbeat_send = 0
        self.heartbeat_in_flight = False
        self.heartbeat_attempts = 0

    def _update(self, now: int) -> None:
        self.heartbeat_timer.update(now)
        self.session_timer.update(now)
        self.poll_timer.update(now)

    def poll(self, now: int) -> None:
        """The application polled: restart the poll timer."""
        self._update(now)
        self.poll_timer.reset(self.max_poll_interval_ms)

    def has_inflight(self) -> bool:
        return self.heartbeat_in_flight

    def sent_heartbeat(self, now: int) -> None:
        self.last_heartbeat_send = now
        self.heartbeat_in_flight = True
        self._update(now)
        self.heartbeat_timer.reset(self.heartbeat_interval_ms)

    def fail_heartbeat(self) -> None:
        """A heartbeat failed: retry after a flat ``retry.backoff.ms``."""
        self._update(self.time.milliseconds())
        self.heartbeat_in_flight = False
        self.heartbeat_attempts += 1
        self.heartbeat_timer.reset(self.retry_backoff_ms)

    def receive_heartbeat(self) -> None:
        """A heartbeat succeeded (or was answered REBALANCE_IN_PROGRESS): restart the session."""
        self._update(self.time.milliseconds())
        self.heartbeat_in_flight = False
        self.heartbeat_attempts = 0
        self.session_timer.reset(self.session_timeout_ms)

    def should_heartbeat(self, now: int) -> bool:
        self._update(now)
        return self.heartbeat_timer.is_expired()

    def last_heartbeat_send_ms(self) -> int:
        return self.last_heartbeat_send

    def time_to_next_heartbeat(self, now: int) -> int:
        self._update(now)
        return self.heartbeat_timer.remaining_ms()

    def session_timeout_expired(self, now: int) -> bool:
        self._update(now)
        return self.session_timer.is_expired()

    def reset_timeouts(self) -> None:
        """All three timers restart (the heartbeat thread is enabled after a JoinGroup success)."""
        self._update(self.time.milliseconds())
        self.session_timer.reset(self.session_timeout_ms)
        self.poll_timer.reset(self.max_poll_interval_ms)
        self.heartbeat_timer.reset(self.heartbeat_interval_ms)

    def reset_session_timeout(self) -> None:
        """The session timer restarts (on coordinator discovery)."""
        self._update(self.time.milliseconds())
        self.session_timer.reset(self.session_timeout_ms)

    def poll_timeout_expired(self, now: int) -> bool:
        self._update(now)
        return self.poll_timer.is_expired()

    def last_poll_time(self) -> int:
        return self.poll_timer.current_time_ms()

    def __repr__(self) -> str:
        return ("Heartbeat(heartbeat=%r, session=%r, poll=%r, in_flight=%s)"
                % (self.heartbeat_timer, self.session_timer, self.poll_timer, self.heartbeat_in_flight))
