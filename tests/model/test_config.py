"""Config validation: impossible values are refused with a message naming the field and the value."""

import re

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


# -- settings by Kafka's property names (--set) ----------------------------------------------------

from model.config import SETTINGS, parse_settings, settings_of, with_settings  # noqa: E402


def test_settings_map_kafka_names_onto_the_config():
    config = with_settings(Config(), parse_settings([
        "session.timeout.ms=20_000", "max.poll.interval.ms=60000", "partition.assignment.strategy="
        "org.apache.kafka.clients.consumer.RoundRobinAssignor, range", "groupcheck.join.group.version=3"]))
    assert (config.session_timeout_ms, config.rebalance_timeout_ms, config.join_group_version) == (20000, 60000, 3)
    assert config.protocols(0) == config.protocols(1) == ("roundrobin", "range")
    assert not config.require_known_member_id
    recorded = settings_of(config)
    assert set(recorded) == set(SETTINGS) and recorded["partition.assignment.strategy"] == "roundrobin,range"
    assert with_settings(Config(), parse_settings(["session.timeout.ms=1", "session.timeout.ms=7000"])).session_timeout_ms == 7000


@pytest.mark.parametrize("items, message", [
    (["session.timeout.ms"], "--set takes name=value"),
    (["sesion.timeout.ms=1"], "unknown setting 'sesion.timeout.ms'"),
    (["group.max.size=big"], "group.max.size must be an integer, got 'big'"),
    (["partition.assignment.strategy=,"], "must list at least one assignor"),
    (["partition.assignment.strategy=range,range"], "lists an assignor twice"),
    (["group.min.session.timeout.ms=7000", "group.max.session.timeout.ms=6500"],
     "group.min.session.timeout.ms (7000) exceeds group.max.session.timeout.ms (6500)"),
    (["groupcheck.join.group.version=5", "groupcheck.static.clients=2", "groupcheck.static.twins=2"],
     "groupcheck.static.twins (2) must be below groupcheck.static.clients (2)"),
    (["groupcheck.join.group.version=4", "groupcheck.static.clients=2"],
     "static members (groupcheck.static.clients=2) need JoinGroup v5 or later"),
])
def test_bad_settings_name_the_setting(items, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        with_settings(Config(), parse_settings(items))


def test_twins_share_the_instance_ids_of_the_first_static_clients():
    config = with_settings(Config(clients=4), parse_settings(
        ["groupcheck.join.group.version=5", "groupcheck.static.clients=3", "groupcheck.static.twins=1"]))
    assert [config.instance_id(c) for c in range(4)] == ["instance-0", "instance-1", "instance-0", None]
    assert settings_of(config)["groupcheck.static.twins"] == 1


def test_one_assignor_reaches_the_model_and_the_implementation():
    from properties.systems import run

    # one client alone would elect range (its first choice by default): roundrobin can only come from the setting
    config = with_settings(Config(clients=1, brokers=1), parse_settings(["partition.assignment.strategy=roundrobin"]))
    result = run("impl", 1, config, steps=40, faults="none")
    assert result.violation is None
    assert result.world.group is not None and result.world.group.protocol_name == "roundrobin"
