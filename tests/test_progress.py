"""Progress lines: the rate stays readable for slow items (a client schedule takes seconds)."""

from properties.progress import _rate


def test_fast_items_per_second_and_slow_ones_per_minute():
    assert _rate(15.4) == "15/s" and _rate(1.0) == "1/s" and _rate(0) == "0/s"
    assert _rate(0.07) == "4.2/min"
