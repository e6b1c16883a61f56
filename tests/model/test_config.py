"""Config validation: impossible values are refused with a message naming the field and the value."""

import pytest

from model.config import Config, ConfigError, join_group_request_timeout


@pytest.mark.parametrize(
    "field, value",
    [
        ("session_timeout_ms", 0),
        ("session_timeout_ms", -5),
        ("request_timeout_ms", 0),
        ("heartbeat_interval_ms", -1),
        ("max_poll_interval_ms", 0),
        ("partitions", 0),
        ("brokers", 0),
        ("clients", 0),
        ("offsets_partitions", 0),
        ("retry_backoff_ms", 0),
    ],
)
def test_impossible_values_name_field_and_value(field, value):
    with pytest.raises(ConfigError) as e:
        Config(**{field: value})
    assert field in str(e.value)
    assert repr(value) in str(e.value)


def test_heartbeat_must_be_below_session_timeout():
    with pytest.raises(ConfigError, match=r"heartbeat_interval_ms \(6000\) must be below session_timeout_ms \(6000\)"):
        Config(heartbeat_interval_ms=6000, session_timeout_ms=6000)


def test_unknown_broken_variant_is_named():
    with pytest.raises(ConfigError, match="no_such_bug"):
        Config(broken={"no_such_bug"})


def test_out_of_range_session_timeout_is_a_scenario_not_an_error():
    # The coordinator answers INVALID_SESSION_TIMEOUT at run time; the config itself is possible.
    assert Config(session_timeout_ms=5000, heartbeat_interval_ms=1000).session_timeout_ms == 5000


def test_join_group_request_timeout():
    assert join_group_request_timeout(30000, 300000) == 305000
    assert join_group_request_timeout(30000, 1000) == 30000
    # Overflow guard: rebalance timeout + 5000 would overflow a Java int.
    assert join_group_request_timeout(30000, 2**31 - 1) == 2**31 - 1
    assert join_group_request_timeout(30000, 2**31 - 5000) == 2**31 - 5000
    assert join_group_request_timeout(30000, 2**31 - 5001) == 2**31 - 1


def test_pre_v4_join_switch():
    assert Config(join_group_version=3).require_known_member_id is False
    assert Config(join_group_version=4).require_known_member_id is True
    with pytest.raises(ConfigError, match="join_group_version"):
        Config(join_group_version=10)
