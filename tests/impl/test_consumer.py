"""The ``Consumer`` facade (impl/consumer.py) driven against the real broker side.

Uses the in-test :class:`ClusterTransport` and :class:`World` of ``test_coordinator``.
"""

from __future__ import annotations

import random

import pytest

from impl.consumer import Consumer
from impl.coordinator import MemberState, OffsetAndMetadata, RoundRobinAssignor
from impl.errors import (
    CommitFailedException,
    IllegalArgumentException,
    IllegalStateException,
    InvalidGroupIdException,
    RetriableCommitFailedException,
    TimeoutException,
    WakeupException,
)
from impl.server.group_metadata import EMPTY
from tests.helpers.consumer_cluster import (
    ALL_TPS,
    COORDINATOR_ID,
    GROUP,
    TOPIC,
    ClusterTransport,
    Recorder,
    World,
    all_stable_same_generation,
    run_until,
    stable,
)


def poll_until(world, consumers, predicate, poll_ms=100, max_rounds=1000):
    return run_until(consumers, predicate, poll_ms=poll_ms, max_rounds=max_rounds)


# ---- configuration --------------------------------------------------------------------------

def test_config_validation_names_the_bad_key():
    world = World()
    transport = ClusterTransport(world.cluster)
    rng = random.Random(0)
    with pytest.raises(IllegalArgumentException, match="session.timout.ms"):
        Consumer({"group.id": GROUP, "session.timout.ms": 1}, world.time, transport, rng)
    with pytest.raises(IllegalArgumentException, match="heartbeat.interval.ms"):
        Consumer({"group.id": GROUP, "heartbeat.interval.ms": -1}, world.time, transport, rng)
    with pytest.raises(IllegalArgumentException, match="Heartbeat must be set lower"):
        Consumer({"group.id": GROUP, "heartbeat.interval.ms": 10000, "session.timeout.ms": 10000},
                 world.time, transport, rng)
    with pytest.raises(IllegalArgumentException, match="partition.assignment.strategy"):
        Consumer({"group.id": GROUP, "partition.assignment.strategy": ["sticky"]}, world.time, transport, rng)
    with pytest.raises(IllegalArgumentException, match="enable.auto.commit"):
        Consumer({"group.id": GROUP, "enable.auto.commit": True}, world.time, transport, rng)
    with pytest.raises(IllegalArgumentException, match="rng"):
        Consumer({"group.id": GROUP}, world.time, transport, None)


def test_config_maps_to_the_coordinator():
    world = World()
    consumer, _ = world.consumer("a", partition_assignment_strategy=["roundrobin", "range"],
                                 max_poll_interval_ms=45000)
    c = consumer.coordinator
    assert [a.name() for a in c.assignors] == ["roundrobin", "range"]
    assert isinstance(c.assignors[0], RoundRobinAssignor)
    assert c.rebalance_config.rebalance_timeout_ms == 45000
    assert c.heartbeat.session_timeout_ms == 10000 and c.heartbeat.heartbeat_interval_ms == 3000
    assert [n.host for n in consumer.metadata.fetch().nodes()] == ["broker-0", "broker-1", "broker-2"]
    # the protocols sent in JoinGroup follow the preference order
    assert [p.name for p in c.metadata()] == ["roundrobin", "range"]
    assert c.metadata()[0].metadata.topics == [TOPIC]


def test_without_group_id_group_apis_fail():
    world = World()
    consumer = Consumer({"bootstrap.servers": [0]}, world.time, ClusterTransport(world.cluster), random.Random(0))
    assert consumer.coordinator is None
    with pytest.raises(InvalidGroupIdException):
        consumer.subscribe([TOPIC])


def test_poll_requires_a_subscription():
    world = World()
    consumer, _ = world.consumer("a", subscribe=False)
    with pytest.raises(IllegalStateException, match="not subscribed"):
        consumer.poll(0)


# ---- poll -----------------------------------------------------------------------------------

def test_poll_zero_never_blocks():
    world = World()
    consumer, transport = world.consumer("a")
    start = world.now()
    for _ in range(50):
        consumer.poll(0)
    assert world.now() == start
    # ... and still makes progress: the member joined without time passing
    assert stable(consumer) and consumer.assignment() == ALL_TPS


def test_poll_returns_the_assignment_and_starts_the_heartbeat_thread():
    world = World()
    recorder = Recorder()
    consumer, transport = world.consumer("a", recorder)
    assert consumer.heartbeat_thread.run_once() == "not-started"
    assert consumer.poll(0) == []
    # the thread is started by ensureActiveGroup once the coordinator is known
    assert consumer.coordinator.coordinator is None and not consumer.heartbeat_thread.is_started()
    while consumer.coordinator.coordinator is None:
        consumer.poll(0)
    consumer.poll(0)
    assert consumer.heartbeat_thread.is_started()
    result = None
    for _ in range(100):
        result = consumer.poll(100)
        if result:
            break
    assert result == ALL_TPS == consumer.assignment()
    assert recorder.events == [("assigned", ALL_TPS)]
    assert consumer.coordinator.coordinator.id == COORDINATOR_ID


def test_poll_blocks_at_most_until_the_next_heartbeat_is_due():
    world = World()
    consumer, _ = world.consumer("a")
    poll_until(world, [consumer], lambda: stable(consumer))
    start = world.now()
    due = consumer.coordinator.heartbeat.time_to_next_heartbeat(start)
    consumer.poll(60000)
    assert 0 < world.now() - start <= due


def test_poll_updates_the_poll_timer():
    world = World()
    consumer, _ = world.consumer("a", max_poll_interval_ms=12000)
    poll_until(world, [consumer], lambda: stable(consumer))
    tags = []
    for _ in range(30):            # polling every second keeps the member in the group
        world.advance(1000)
        consumer.poll(0)
        tags.append(consumer.heartbeat_thread.run_once())
    assert "poll-expired" not in tags and stable(consumer)


def test_wakeup_interrupts_poll_once():
    world = World()
    consumer, _ = world.consumer("a")
    consumer.wakeup()
    with pytest.raises(WakeupException):
        consumer.poll(100)
    consumer.poll(0)                  # consumed


def test_two_consumers_share_the_partitions():
    world = World()
    a, _ = world.consumer("a")
    b, _ = world.consumer("b", seed=2)
    poll_until(world, [a, b], lambda: all_stable_same_generation([a, b])
               and bool(a.assignment()) and bool(b.assignment()))
    assert sorted(a.assignment() + b.assignment()) == ALL_TPS
    assert not set(a.assignment()) & set(b.assignment())


# ---- commits --------------------------------------------------------------------------------

def test_commit_async_commits_the_positions_of_owned_partitions():
    world = World()
    consumer, transport = world.consumer("a")
    poll_until(world, [consumer], lambda: stable(consumer))
    consumer.seek(ALL_TPS[2], 17)
    results = []
    consumer.commit_async(callback=lambda offsets, exc: results.append((offsets, exc)))
    for _ in range(5):
        consumer.poll(100)
    ((offsets, exc),) = results
    assert exc is None
    assert {tp: o.offset for tp, o in offsets.items()} == {tp: (17 if tp == ALL_TPS[2] else 0) for tp in ALL_TPS}
    (commit,) = transport.requests("OffsetCommit")
    assert commit.generation_id == consumer.coordinator.generation.generation_id
    assert consumer.committed([ALL_TPS[2]])[ALL_TPS[2]] == OffsetAndMetadata(17)


def test_commit_sync_and_fencing_after_leaving():
    world = World()
    consumer, transport = world.consumer("a")
    poll_until(world, [consumer], lambda: stable(consumer))
    consumer.commit_sync({ALL_TPS[0]: 3})
    assert consumer.committed([ALL_TPS[0]])[ALL_TPS[0]].offset == 3
    consumer.coordinator.maybe_leave_group("test")       # e.g. the poll timer expired
    with pytest.raises(CommitFailedException):
        consumer.commit_sync({ALL_TPS[0]: 4})
    assert len(transport.requests("OffsetCommit")) == 1  # failed locally, nothing sent


def test_commit_async_without_coordinator_reports_retriable_failure():
    world = World()
    consumer, transport = world.consumer("a")
    poll_until(world, [consumer], lambda: stable(consumer))
    consumer.coordinator.mark_coordinator_unknown(False, "test")
    transport.request_filter = lambda n, req: req.api_key != "FindCoordinator"
    results = []
    consumer.commit_async({ALL_TPS[0]: 1}, lambda offsets, exc: results.append(exc))
    assert consumer.coordinator.pending_async_commits == 1
    # the lookup never completes; fail it as a disconnect would
    consumer.coordinator.find_coordinator_future.raise_(TimeoutException("lookup timed out"))
    consumer.poll(0)
    assert len(results) == 1 and isinstance(results[0], RetriableCommitFailedException)
    assert consumer.coordinator.pending_async_commits == 0


def test_commit_sync_times_out():
    world = World()
    consumer, transport = world.consumer("a")
    poll_until(world, [consumer], lambda: stable(consumer))
    transport.request_filter = lambda n, req: req.api_key != "OffsetCommit"   # never answered
    start = world.now()
    with pytest.raises(TimeoutException):
        consumer.commit_sync({ALL_TPS[0]: 1}, timeout_ms=500)
    assert world.now() - start == 500


# ---- close / unsubscribe --------------------------------------------------------------------

def test_close_leaves_the_group_and_the_other_member_takes_over():
    world = World()
    recorder = Recorder()
    a, ta = world.consumer("a", recorder)
    b, tb = world.consumer("b", seed=2)
    poll_until(world, [a, b], lambda: all_stable_same_generation([a, b]) and bool(a.assignment()))
    member_id = a.coordinator.generation.member_id
    owned = a.assignment()
    a.close()
    assert a.closed and a.heartbeat_thread.run_once() == "not-started"
    (leave,) = ta.requests("LeaveGroup")
    assert [m.member_id for m in leave.members] == [member_id]
    assert recorder.events[-1] == ("revoked", owned)
    with pytest.raises(IllegalStateException, match="closed"):
        a.poll(0)
    poll_until(world, [b], lambda: stable(b) and b.assignment() == ALL_TPS)
    assert member_id not in world.group().members
    a.close()                                            # idempotent


def test_close_with_zero_timeout_still_sends_leave_group():
    world = World()
    consumer, transport = world.consumer("a")
    poll_until(world, [consumer], lambda: stable(consumer))
    start = world.now()
    consumer.close(0)
    assert world.now() == start
    assert len(transport.requests("LeaveGroup")) == 1    # pollNoWakeup transmitted it
    assert world.group().state is EMPTY


def test_unsubscribe_leaves_and_revokes():
    world = World()
    recorder = Recorder()
    consumer, transport = world.consumer("a", recorder)
    poll_until(world, [consumer], lambda: stable(consumer))
    consumer.unsubscribe()
    assert consumer.assignment() == [] and recorder.events[-1] == ("revoked", ALL_TPS)
    assert len(transport.requests("LeaveGroup")) == 1
    assert consumer.coordinator.state is MemberState.UNJOINED
    with pytest.raises(IllegalStateException):
        consumer.poll(0)


def test_same_seed_same_trace():
    def trace(seed):
        world = World()
        a, ta = world.consumer("a", seed=seed)
        b, tb = world.consumer("b", seed=seed + 1)
        poll_until(world, [a, b], lambda: all_stable_same_generation([a, b]))
        a.close()
        return ([(t, n, type(r).__name__) for t, n, r in ta.log + tb.log],
                a.coordinator.generation, b.coordinator.generation, b.assignment())

    assert trace(3) == trace(3)
