"""Timer and MockTime semantics (org.apache.kafka.common.utils.Timer)."""

import pytest

from impl.errors import IllegalArgumentException
from impl.time import LONG_MAX, MockTime


def test_timer_expiry_edges():
    time = MockTime(current_time_ms=100)
    t = time.timer(50)
    assert t.remaining_ms() == 50 and t.not_expired()
    time.sleep(49)
    t.update()
    assert not t.is_expired() and t.remaining_ms() == 1
    time.sleep(1)
    assert not t.is_expired()          # the timer only sees time on update()
    t.update()
    assert t.is_expired() and t.remaining_ms() == 0   # now >= deadline
    time.sleep(10)
    t.update()
    assert t.remaining_ms() == 0 and t.elapsed_ms() == 60


def test_timer_reset_saturates_and_update_never_goes_back():
    time = MockTime(current_time_ms=10)
    t = time.timer(LONG_MAX)
    assert t.deadline_ms() == LONG_MAX and not t.is_expired()
    t.update(5)
    assert t.current_time_ms() == 10
    t.update(20)
    assert t.current_time_ms() == 20
    t.reset(0)
    assert t.is_expired()
    with pytest.raises(IllegalArgumentException):
        t.reset(-1)


def test_timer_sleep_is_bounded_by_remaining():
    time = MockTime()
    t = time.timer(30)
    t.sleep(100)
    assert time.milliseconds() == 30 and t.is_expired()


def test_mock_time_auto_tick_and_no_going_back():
    time = MockTime(auto_tick_ms=5)
    assert time.milliseconds() == 5
    assert time.milliseconds() == 10
    with pytest.raises(IllegalArgumentException):
        time.set_current_time_ms(3)
