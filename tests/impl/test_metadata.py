"""Metadata refresh timing (protocol reference §4.4) and the cluster view."""

import random

import pytest

from impl.errors import Errors, TopicAuthorizationException
from impl.network.metadata import Cluster, Metadata, Node
from impl.protocol import (
    MetadataResponseBroker,
    MetadataResponseData,
    MetadataResponsePartition,
    MetadataResponseTopic,
    TopicPartition,
)
from impl.time import ExponentialBackoff
from tests.helpers.fakes import metadata_response


def test_initial_time_to_next_update_is_expiry():
    md = Metadata(refresh_backoff_ms=100, metadata_expire_ms=300000)
    assert not md.update_requested()
    assert md.time_to_next_update(0) == 300000
    assert md.time_to_next_update(1000) == 299000
    assert md.time_to_next_update(400000) == 0


def test_requested_update_waits_only_for_refresh_backoff():
    md = Metadata(refresh_backoff_ms=100, metadata_expire_ms=300000)
    v = md.request_update()
    assert v == 0 and md.update_requested()
    assert md.time_to_next_update(40) == 60     # lastRefreshMs (0) + 100 - 40
    assert md.time_to_next_update(100) == 0
    assert md.time_to_next_update(150) == 0


def test_update_bumps_version_resets_request_and_schedules_expiry():
    md = Metadata(refresh_backoff_ms=100, metadata_expire_ms=5000)
    v = md.request_update()
    md.update(md.request_version(), metadata_response(), False, 1000)
    assert md.update_version() == v + 1
    assert not md.update_requested()
    assert md.last_successful_update() == 1000
    assert md.time_to_next_update(1000) == 5000
    assert md.time_to_next_update(5999) == 1
    assert md.time_to_next_update(6000) == 0
    # a request right after the update still honours the refresh backoff
    assert md.request_update() == v + 1
    assert md.time_to_next_update(1050) == 50


def test_failed_update_backs_off_flat_and_success_resets_attempts():
    md = Metadata(refresh_backoff_ms=100, metadata_expire_ms=300000)
    md.request_update()
    md.failed_update(2000)
    md.failed_update(2000)
    assert md.attempts() == 2
    assert md.last_successful_update() == 0
    assert md.time_to_next_update(2000) == 100   # flat: attempts do not grow it (<= 3.6)
    assert md.time_to_next_update(2099) == 1
    assert md.time_to_next_update(2100) == 0
    md.update(md.request_version(), metadata_response(), False, 2100)
    assert md.attempts() == 0


def test_trunk_exponential_refresh_backoff():
    md = Metadata(refresh_backoff_ms=100, metadata_expire_ms=300000,
                  refresh_backoff=ExponentialBackoff(100, 2, 1000, 0.0))
    md.request_update()
    md.failed_update(0)
    assert md.time_to_next_update(0) == 100      # backoff(attempts - 1 = 0)
    md.failed_update(0)
    assert md.time_to_next_update(0) == 200      # backoff(1)
    md.failed_update(0)
    md.failed_update(0)
    md.failed_update(0)
    assert md.time_to_next_update(0) == 1000     # capped


def test_trunk_equivalent_responses_back_off():
    md = Metadata(refresh_backoff_ms=100, metadata_expire_ms=300000,
                  refresh_backoff=ExponentialBackoff(100, 2, 1000, 0.0))
    md.update(0, metadata_response(), False, 0)        # new content: count reset to 0
    md.request_update()
    assert md.time_to_next_update(0) == 100
    md.update(0, metadata_response(), False, 0)        # same content: count 1
    md.request_update()
    assert md.time_to_next_update(0) == 100
    md.update(0, metadata_response(), False, 0)        # count 2 -> backoff(1)
    md.request_update()
    assert md.time_to_next_update(0) == 200
    md.request_update(True)                            # reset equivalent-response backoff
    assert md.time_to_next_update(0) == 100


def test_bootstrap_makes_update_due_once_backoff_elapsed():
    md = Metadata(refresh_backoff_ms=100)
    md.bootstrap([("a", 1), ("b", 2)])
    assert [(n.id, n.host) for n in md.fetch().nodes()] == [(-1, "a"), (-2, "b")]
    assert md.fetch().is_bootstrap_configured()
    assert md.update_requested() and md.update_version() == 1
    assert md.time_to_next_update(100) == 0


def test_empty_cluster_and_random_jitter_needs_injected_rng():
    assert Cluster.empty().nodes() == ()
    with pytest.raises(Exception):
        ExponentialBackoff(100, 2, 1000, 0.2)
    b = ExponentialBackoff(100, 2, 1000, 0.2, random.Random(3))
    values = [b.backoff(0) for _ in range(50)]
    assert all(80 <= v < 120 for v in values) and len(set(values)) > 1
    b2 = ExponentialBackoff(100, 2, 1000, 0.2, random.Random(3))
    assert [b2.backoff(0) for _ in range(50)] == values


def test_cluster_view_from_response():
    md = Metadata()
    resp = MetadataResponseData(
        brokers=[MetadataResponseBroker(1, "h1", 9092), MetadataResponseBroker(2, "h2", 9092)],
        topics=[
            MetadataResponseTopic("t", partitions=[
                MetadataResponsePartition(0, leader_id=2, replica_nodes=[2, 1], isr_nodes=[2]),
                MetadataResponsePartition(1, leader_id=7)]),
            MetadataResponseTopic("secret", error_code=Errors.TOPIC_AUTHORIZATION_FAILED.value),
        ],
        cluster_id="c1", controller_id=1)
    md.update(0, resp, False, 10)
    c = md.fetch()
    assert [n.id for n in c.nodes()] == [1, 2]
    assert c.node_by_id(2) == Node(2, "h2", 9092)
    assert c.leader_for(TopicPartition("t", 0)).id == 2
    assert c.leader_for(TopicPartition("t", 1)) is None      # leader not among the brokers
    assert c.partition_count_for_topic("t") == 2
    assert c.controller().id == 1 and c.cluster_id == "c1"
    with pytest.raises(TopicAuthorizationException):
        md.maybe_throw_any_exception()
    md.maybe_throw_any_exception()                            # cleared after raising


def test_node_equality_and_deterministic_hash():
    assert Node(3, "h", 1) == Node(3, "h", 1)
    assert Node(3, "h", 1) != Node(3, "h", 2)
    assert hash(Node(3, "h", 1)) == 3
    assert Node(-1, "", -1).is_empty() and not Node(0, "h", 1).is_empty()


def test_expiry_overflow_when_the_clock_went_back_wraps_like_java():
    # lastSuccessfulRefresh + max.age - now is a Java long: with the clock one ms behind the last
    # refresh and max.age = Long.MAX it wraps negative, so expiry reads 0 and only the refresh
    # backoff (100 ms after the last refresh) remains (properties/proofs/timing.py proves the boundary).
    long_max = (1 << 63) - 1
    md = Metadata(refresh_backoff_ms=100, metadata_expire_ms=long_max)
    md.update(md.request_version(), metadata_response(), False, 1000)
    assert md.time_to_next_update(1000) == long_max  # no overflow: exact
    assert md.time_to_next_update(999) == 101
