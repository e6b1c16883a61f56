"""Coordinator failover on a three-node Apache Kafka 4.1 (issue 35): the node that coordinates a
schedule's group is killed mid-schedule and the checker judges every later answer against the
group the model loads from the last record it wrote (properties/live/kafka_cluster.py,
Judge.failover). One cluster for the module; the heal between schedules is part of what is tested."""

import uuid

import pytest

from properties import targets
from properties.conform.run import run_schedule
from properties.conform.schedule import generate
from properties.conform.target import PARTITIONS, TOPIC
from properties.live import kafka, kafka_cluster


@pytest.fixture(scope="module")
def cluster():
    started = kafka_cluster.start_cluster(kafka.parse("kafka:4.1"), 3, {TOPIC: PARTITIONS},
                                          kafka.settings_for(timers=False))
    yield started
    started.stop()


@pytest.fixture
def healed(cluster):
    """The cluster, healed after the test whatever its outcome: a test that fails with a node down
    must not leave the next one a cluster of two (a second kill would cost the KRaft quorum; seen:
    one schedule's divergence made the next one fail with "failure: failover")."""
    yield cluster
    cluster.heal()


#: The answer window of these schedules. The profile's 250 ms is the broker's answer window on a
#: settled cluster; here a schedule runs right after a takeover, beside the rest of the suite on two
#: cores, and one SyncGroup after a failover was once answered later than 250 ms (judged "no answer
#: where the model allows NONE"; alone, the schedule conforms). A request unanswered for a second
#: still counts as parked, so the judge asks for the same answers.
ANSWER_WINDOW_MS = 1000


def _address(cluster):
    host, port = cluster.bootstrap.rsplit(":", 1)
    return host, int(port)


@pytest.mark.parametrize("seed", [2, 5])
def test_a_schedule_judged_through_a_coordinator_failover_conforms(healed, seed):
    cluster = healed
    profile = targets.get(targets.BROKER, "kafka:4.1", "--launch").profile
    schedule = generate(seed, steps=14, failover=True)
    group = f"failover-{seed}-{uuid.uuid4().hex[:8]}"
    result = run_schedule(_address(cluster), schedule, group, profile, park_ms=ANSWER_WINDOW_MS,
                          failover=cluster.kill_coordinator)
    notes = [x["note"] for x in result.trace if "note" in x and x["note"].startswith("failover")]
    assert result.verdict == "conforms", (result.signature(), result.divergence and result.divergence.summary)
    assert len(notes) == 1 and "killed" in notes[0], notes
    killed = int(notes[0].split()[2].rstrip(";"))
    assert [n.node_id for n in cluster.nodes if n.killed] == [killed]
    assert cluster.coordinator_of(group).node_id != killed
    # requests after the failover went to the node that took over, and were answered
    after = result.trace[[i for i, x in enumerate(result.trace) if x.get("note", "").startswith("failover")][0]:]
    assert any(x.get("direction") == "response" for x in after)
    cluster.heal()
    assert not any(n.killed for n in cluster.nodes) and cluster.in_sync_replicas("__consumer_offsets") == [1, 2, 3]
