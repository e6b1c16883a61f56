"""Hypothesis drives the model world (clients, brokers, network, faults) and checks the catalogue.

Run with ``pytest -m properties``; the profile (ci, dev, nightly) bounds the search.
"""

import pytest
from hypothesis.stateful import run_state_machine_as_test

from model.config import Config
from properties.explore.machines import machine_for

pytestmark = pytest.mark.properties


def test_three_clients_three_brokers():
    run_state_machine_as_test(machine_for(Config(clients=3, brokers=3, partitions=6)))


def test_two_clients_one_broker_pre_v4_join():
    run_state_machine_as_test(machine_for(Config(clients=2, brokers=1, partitions=3, join_group_version=3)))


def test_session_longer_than_rebalance_timeout():
    # Members that stop rejoining survive until the join deadline: the not-rejoined removal path.
    config = Config(clients=3, brokers=2, session_timeout_ms=12000, heartbeat_interval_ms=3000, max_poll_interval_ms=8000)
    run_state_machine_as_test(machine_for(config))


def test_group_max_size_two():
    run_state_machine_as_test(machine_for(Config(clients=3, brokers=1, group_max_size=2)))


def test_consumers_changing_their_subscriptions_between_two_topics():
    # subscribe events: to the second topic, both, and back; a change while a JoinGroup is in flight
    run_state_machine_as_test(machine_for(Config(clients=3, brokers=2, partitions=4, second_partitions=3)))
