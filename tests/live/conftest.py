"""What the live tests share: one Apache Kafka 4.1 node per test session (per xdist worker), for
tests/live/test_kafka.py's conformance checks and tests/live/test_client_groups.py's client
libraries alike. Each test that uses it names its own groups (and topics), so they do not meet."""

import pytest

from properties.conform.target import PARTITIONS, TOPIC
from properties.live import kafka


@pytest.fixture(scope="session")
def kafka41():
    broker = kafka.start(kafka.parse("kafka:4.1"), {TOPIC: PARTITIONS}, kafka.settings_for(timers=True))
    yield broker
    broker.stop()
