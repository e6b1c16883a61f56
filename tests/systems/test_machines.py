"""Hypothesis drives the implementation beside the model (the impl system's companion) and checks
that their observations agree and the always properties hold on both.

Run with ``pytest -m properties``; the profile (ci, dev, nightly) bounds the search.
"""

import pytest
from hypothesis.stateful import run_state_machine_as_test

from model.config import Config
from properties.systems import machine_for

pytestmark = pytest.mark.properties


def test_impl_agrees_with_the_model_three_clients_three_brokers():
    run_state_machine_as_test(machine_for(Config(clients=3, brokers=3, partitions=6), system="impl"))


def test_impl_agrees_with_the_model_two_clients_one_broker_pre_v4_join():
    run_state_machine_as_test(machine_for(Config(clients=2, brokers=1, partitions=3, join_group_version=3), system="impl"))


def test_impl_agrees_with_the_model_as_consumers_change_their_subscriptions():
    config = Config(clients=3, brokers=2, partitions=4, second_partitions=3)
    run_state_machine_as_test(machine_for(config, system="impl"))
