"""The client-side group coordinator (impl/coordinator) against protocol reference §3.

Most tests drive real consumers against the real broker side (impl/server) in-process through
``ClusterTransport``, a tiny Selectable (:mod:`tests.helpers.consumer_cluster`).

The error tables of §3.4 are covered row by row by handing responses directly to the handlers.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, List, Optional

import pytest

from impl.coordinator import (
    NO_GENERATION,
    Generation,
    Heartbeat,
    HeartbeatResponseHandler,
    JoinGroupResponseHandler,
    LeaveGroupResponseHandler,
    MemberState,
    OffsetAndMetadata,
    OffsetCommitResponseHandler,
    RangeAssignor,
    RoundRobinAssignor,
    SyncGroupResponseHandler,
)
from impl.coordinator.abstract_coordinator import FindCoordinatorResponseHandler, join_group_request_timeout_ms
from impl.errors import (
    CommitFailedException,
    CoordinatorLoadInProgressException,
    CoordinatorNotAvailableException,
    DisconnectException,
    Errors,
    FencedInstanceIdException,
    GroupAuthorizationException,
    GroupMaxSizeReachedException,
    IllegalArgumentException,
    IllegalGenerationException,
    IllegalStateException,
    InconsistentGroupProtocolException,
    InvalidCommitOffsetSizeException,
    InvalidGroupIdException,
    InvalidSessionTimeoutException,
    KafkaException,
    MemberIdRequiredException,
    NoAvailableBrokersException,
    NotCoordinatorException,
    OffsetMetadataTooLargeException,
    RebalanceInProgressException,
    TimeoutException,
    TopicAuthorizationException,
    UnjoinedGroupException,
    UnknownMemberIdException,
    UnknownTopicOrPartitionException,
    UnsupportedVersionException,
    WakeupException,
)
from impl.future import RequestFuture
from impl.network.metadata import Node
from impl.protocol import (
    Assignment,
    FindCoordinatorResponseData,
    HeartbeatResponseData,
    JoinGroupResponseData,
    JoinGroupResponseMember,
    LeaveGroupResponseData,
    MemberResponse,
    OffsetCommitResponseData,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    Subscription,
    SyncGroupResponseData,
    TopicPartition,
)
from impl.server.group_metadata import EMPTY, PREPARING_REBALANCE
from impl.time import INT_MAX, MockTime
from tests.helpers.consumer_cluster import (
    ALL_TPS,
    COORDINATOR_ID,
    GROUP,
    Recorder,
    TOPIC,
    World,
    all_stable_same_generation,
    join_one,
    run_until,
    stable,
)


# ============================================================================================
# Heartbeat timers (§3.5) and small pure helpers
# ============================================================================================

def test_heartbeat_rejects_interval_not_below_session_timeout():
    with pytest.raises(IllegalArgumentException):
        Heartbeat(MockTime(), 3000, 3000, 10000, 100)
    Heartbeat(MockTime(), 3001, 3000, 10000, 100)  # strictly below is fine


def test_heartbeat_timers():
    time = MockTime(current_time_ms=1000)
    hb = Heartbeat(time, session_timeout_ms=10000, heartbeat_interval_ms=3000,
                   max_poll_interval_ms=20000, retry_backoff_ms=100)
    assert not hb.should_heartbeat(1000) and hb.time_to_next_heartbeat(1000) == 3000
    assert hb.should_heartbeat(4000)                      # expired <=> now >= deadline
    hb.sent_heartbeat(4000)
    assert hb.has_inflight() and hb.time_to_next_heartbeat(4000) == 3000
    time.set_current_time_ms(4500)
    hb.fail_heartbeat()                                   # flat retry.backoff.ms
    assert not hb.has_inflight() and hb.time_to_next_heartbeat(4500) == 100
    assert not hb.session_timeout_expired(10999)
    time.set_current_time_ms(10999)
    hb.receive_heartbeat()                                # session restarts from now
    assert not hb.session_timeout_expired(20998) and hb.session_timeout_expired(20999)
    assert hb.poll_timeout_expired(21000)                 # 1000 + 20000
    hb.poll(21000)
    assert not hb.poll_timeout_expired(40999) and hb.poll_timeout_expired(41000)
    time.set_current_time_ms(50000)
    hb.reset_timeouts()
    assert (hb.time_to_next_heartbeat(50000), hb.session_timeout_expired(54000),
            hb.poll_timeout_expired(54000)) == (3000, False, False)
    time.set_current_time_ms(55000)
    hb.reset_session_timeout()                            # the other timers are left alone
    assert not hb.session_timeout_expired(64999) and hb.session_timeout_expired(65000)
    assert not hb.poll_timeout_expired(65000) and hb.should_heartbeat(65000)
    # timers never move backwards: a query at an earlier time sees the later one
    assert hb.session_timeout_expired(60000)


def test_join_group_request_timeout_guards_int_overflow():
    assert join_group_request_timeout_ms(30000, 300000) == 305000
    assert join_group_request_timeout_ms(400000, 300000) == 400000
    # rebalance timeout near Integer.MAX_VALUE: +5000 would wrap negative in Java
    assert join_group_request_timeout_ms(30000, INT_MAX) == INT_MAX
    assert join_group_request_timeout_ms(30000, INT_MAX - 4999) == INT_MAX - 4999
    assert join_group_request_timeout_ms(30000, INT_MAX - 5000) == INT_MAX


def test_generation_equality_and_no_generation():
    assert NO_GENERATION == Generation(-1, "", None)
    assert Generation(1, "m", "range") != Generation(1, "m", "roundrobin")
    assert not NO_GENERATION.has_member_id() and Generation(-1, "m", None).has_member_id()
    assert MemberState.PREPARING_REBALANCE.has_not_joined_group()
    assert not MemberState.COMPLETING_REBALANCE.has_not_joined_group()


# ============================================================================================
# Assignors
# ============================================================================================

def _subs(**members):
    return {m: Subscription(list(topics)) for m, topics in members.items()}


def test_range_assignor_gives_contiguous_ranges_extra_to_first_members():
    counts = {"t": 7, "u": 2}.get
    result = RangeAssignor().assign(counts, _subs(c=["t"], a=["t", "u"], b=["t", "u"]))
    assert {m: a.partitions for m, a in result.items()} == {
        "a": [TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2), TopicPartition("u", 0)],
        "b": [TopicPartition("t", 3), TopicPartition("t", 4), TopicPartition("u", 1)],
        "c": [TopicPartition("t", 5), TopicPartition("t", 6)],
    }


def test_roundrobin_assignor_deals_sorted_partitions_skipping_unsubscribed_members():
    counts = {"t": 3, "u": 3}.get
    result = RoundRobinAssignor().assign(counts, _subs(b=["t", "u"], a=["t"], c=["u"]))
    assert {m: a.partitions for m, a in result.items()} == {
        "a": [TopicPartition("t", 0), TopicPartition("t", 2)],
        "b": [TopicPartition("t", 1), TopicPartition("u", 0), TopicPartition("u", 2)],
        "c": [TopicPartition("u", 1)],
    }


def test_assignors_skip_topics_without_metadata():
    result = RangeAssignor().assign(lambda t: None, _subs(a=["t"]))
    assert result["a"].partitions == []


def test_static_members_sort_by_instance_id_before_dynamic_members():
    result = RangeAssignor().assign({"t": 3}.get, _subs(a=["t"], z=["t"], m=["t"]),
                                    {"z": "instance-1", "a": None, "m": "instance-2"})
    assert [result[m].partitions[0].partition for m in ("z", "m", "a")] == [0, 1, 2]


# ============================================================================================
# Coordinator discovery (§3.2)
# ============================================================================================

def test_find_coordinator_goes_to_least_loaded_node_and_uses_synthetic_id():
    world = World()
    consumer, transport = world.consumer("a")
    c = consumer.coordinator
    # fresh metadata, then an established idle connection to broker 2 only: leastLoadedNode
    # returns it whatever its random starting offset
    assert consumer.client.await_metadata_update(world.time.timer(1000))
    node2 = consumer.metadata.fetch().node_by_id(2)
    consumer.client.try_connect(node2)
    consumer.client.poll(world.time.timer(0))
    assert consumer.network_client.connection_states.is_ready(2, world.now())
    session_deadline_before = c.heartbeat.session_timer.deadline_ms()
    world.time.sleep(5)
    assert c.ensure_coordinator_ready(world.time.timer(5000))
    (find,) = transport.entries("FindCoordinator")
    assert find[1] == 2 and find[2].key == GROUP
    assert c.coordinator.id == COORDINATOR_ID == INT_MAX - 1
    assert (c.coordinator.host, c.coordinator.port) == ("broker-1", 9092)
    # tryConnect started the coordinator connection; the session timer was reset on discovery
    assert consumer.network_client.connection_states.connection_state(COORDINATOR_ID) is not None
    assert c.heartbeat.session_timer.deadline_ms() > session_deadline_before
    assert c.find_coordinator_future is None  # cleared after the lookup


def test_lookup_coordinator_is_memoised():
    world = World()
    consumer, transport = world.consumer("a")
    c = consumer.coordinator
    f1 = c.lookup_coordinator()
    assert c.lookup_coordinator() is f1
    assert consumer.client.unsent.request_count() == 1


def test_no_available_brokers_fails_the_lookup_without_memoising():
    world = World()
    consumer, _ = world.consumer("a")
    c = consumer.coordinator
    world.seed_metadata(consumer)
    states = consumer.network_client.connection_states
    for broker_id in range(3):     # every node in reconnect backoff
        states.connecting(broker_id, world.now(), "broker-%d" % broker_id)
        states.disconnected(broker_id, world.now())
    future = c.lookup_coordinator()
    assert future.failed() and isinstance(future.exception(), NoAvailableBrokersException)
    assert c.find_coordinator_future is None


def test_coordinator_unknown_when_its_connection_failed_within_backoff():
    world = World()
    consumer, transport = world.consumer("a")
    c = consumer.coordinator
    assert c.ensure_coordinator_ready(world.time.timer(5000))
    consumer.client.poll(world.time.timer(0))          # coordinator connection established
    transport.disconnect(COORDINATOR_ID)
    consumer.client.poll(world.time.timer(0))          # the disconnect is noticed
    pending_before = list(consumer.client.pending_disconnects)
    assert c.coordinator_unknown()                    # isUnavailable -> marked unknown
    assert c.coordinator is None
    # marked as already disconnected: no extra disconnectAsync was queued
    assert list(consumer.client.pending_disconnects) == pending_before


def test_mark_coordinator_unknown_disconnects_unless_already_disconnected():
    world = World()
    consumer, _ = world.consumer("a")
    c = consumer.coordinator
    node = Node(COORDINATOR_ID, "broker-1", 9092)
    c.coordinator = node
    c.mark_coordinator_unknown(True, "already gone")
    assert c.coordinator is None and list(consumer.client.pending_disconnects) == []
    c.coordinator = node
    c.mark_coordinator_unknown(False, "error response")
    assert c.coordinator is None and list(consumer.client.pending_disconnects) == [node]
    c.mark_coordinator_unknown(False, "again")         # unknown already: nothing more
    assert list(consumer.client.pending_disconnects) == [node]


def test_fatal_find_coordinator_transport_failure_is_rethrown_by_next_ensure():
    world = World()
    consumer, _ = world.consumer("a")
    c = consumer.coordinator
    boom = KafkaException("fatal transport failure")
    underlying = RequestFuture()
    composed = underlying.compose(FindCoordinatorResponseHandler(c))
    underlying.raise_(boom)
    assert composed.exception() is boom and c.fatal_find_coordinator_exception is boom
    with pytest.raises(KafkaException, match="fatal transport failure"):
        c.ensure_coordinator_ready(world.time.timer(0))
    assert c.fatal_find_coordinator_exception is None
    # a retriable transport failure is not remembered
    underlying = RequestFuture()
    underlying.compose(FindCoordinatorResponseHandler(c))
    underlying.raise_(DisconnectException.INSTANCE)
    assert c.fatal_find_coordinator_exception is None


def _find_coordinator_error(error: Errors, count: int = 1):
    state = {"left": count}

    def f(node, request, response):
        if request.api_key == "FindCoordinator" and state["left"] > 0:
            state["left"] -= 1
            return FindCoordinatorResponseData(error_code=error.value, error_message=error.message)
        return response
    return f


def test_find_coordinator_retriable_error_backs_off_refreshes_metadata_and_retries():
    world = World()
    consumer, transport = world.consumer("a")
    transport.response_filter = _find_coordinator_error(Errors.COORDINATOR_NOT_AVAILABLE)
    assert consumer.coordinator.ensure_coordinator_ready(world.time.timer(10000))
    finds = transport.entries("FindCoordinator")
    assert len(finds) == 2 and finds[1][0] - finds[0][0] >= 100       # retry.backoff.ms
    metadata_times = [t for t, _, r in transport.log if r.api_key == "Metadata"]
    assert any(finds[0][0] < t <= finds[1][0] for t in metadata_times)  # awaitMetadataUpdate
    assert consumer.coordinator.coordinator.id == COORDINATOR_ID


def test_find_coordinator_group_authorization_failure_is_fatal():
    world = World()
    consumer, transport = world.consumer("a")
    transport.response_filter = _find_coordinator_error(Errors.GROUP_AUTHORIZATION_FAILED)
    with pytest.raises(GroupAuthorizationException, match=GROUP):
        consumer.coordinator.ensure_coordinator_ready(world.time.timer(10000))
    assert consumer.coordinator.coordinator is None
    assert consumer.coordinator.find_coordinator_future is None


# ============================================================================================
# Joining (§3.3)
# ============================================================================================

def test_single_consumer_two_phase_join_to_stable():
    world = World()
    recorder = Recorder()
    consumer, transport = world.consumer("a", recorder)
    run_until([consumer], lambda: stable(consumer))
    c = consumer.coordinator
    joins = transport.requests("JoinGroup")
    assert [j.member_id for j in joins[:1]] == [""]                  # first join: no member id
    assert joins[1].member_id == c.generation.member_id != ""       # MEMBER_ID_REQUIRED id
    assert c.generation.member_id.startswith("a-")
    assert (c.generation.generation_id, c.generation.protocol_name) == (1, "range")
    assert joins[1].protocols[0].name == "range" and joins[1].protocols[0].metadata.topics == [TOPIC]
    assert joins[1].rebalance_timeout_ms == 30000 and joins[1].session_timeout_ms == 10000
    syncs = transport.requests("SyncGroup")
    assert len(syncs) == 1 and syncs[0].generation_id == 1
    assert [a.member_id for a in syncs[0].assignments] == [c.generation.member_id]   # the leader
    assert consumer.assignment() == ALL_TPS
    # the first onJoinPrepare runs with NO_GENERATION and owns nothing: no revoke/lost callback
    assert recorder.events == [("assigned", ALL_TPS)]
    assert not c.rejoin_needed_or_pending() and c.join_future is None
    assert world.group().state.value == "Stable" and world.group().generation_id == 1


def test_join_request_uses_rebalance_timeout_plus_lapse():
    world = World()
    consumer, _ = world.consumer("a", max_poll_interval_ms=40000)
    c = consumer.coordinator
    assert c.ensure_coordinator_ready(world.time.timer(5000))
    c.initiate_join_group()
    (request,) = list(consumer.client.unsent.request_iterator(c.coordinator))
    assert request.api_key == "JoinGroup" and request.request_timeout_ms == 45000


@pytest.mark.parametrize("strategy, expected", [
    ("range", [ALL_TPS[:3], ALL_TPS[3:]]),
    ("roundrobin", [ALL_TPS[0::2], ALL_TPS[1::2]]),
])
def test_two_consumers_join_and_leader_assigns(strategy, expected):
    world = World()
    a, ta = world.consumer("a", partition_assignment_strategy=[strategy])
    run_until([a], lambda: stable(a))
    b, tb = world.consumer("b", partition_assignment_strategy=[strategy])
    errors_seen: List[Errors] = []

    def spy(node, request, response):
        if request.api_key == "Heartbeat":
            errors_seen.append(Errors.for_code(response.error_code))
        return response

    ta.response_filter = spy
    run_until([a, b], lambda: all_stable_same_generation([a, b]))
    # a learned about the rebalance from a heartbeat answered REBALANCE_IN_PROGRESS
    assert Errors.REBALANCE_IN_PROGRESS in errors_seen
    generation = a.coordinator.generation.generation_id
    assert generation >= 2 and world.group().generation_id == generation
    by_member = sorted([(a.coordinator.generation.member_id, a.assignment()),
                        (b.coordinator.generation.member_id, b.assignment())])
    assert [tps for _, tps in by_member] == expected          # members sorted by member id
    combined = a.assignment() + b.assignment()
    assert sorted(combined) == ALL_TPS and len(combined) == len(set(combined))
    # exactly one of them was the leader and sent the assignments
    leader_syncs = [s for s in ta.requests("SyncGroup") + tb.requests("SyncGroup")
                    if s.generation_id == generation and s.assignments]
    assert len(leader_syncs) == 1 and len(leader_syncs[0].assignments) == 2


def test_leader_that_assigned_without_topic_metadata_rejoins_when_metadata_arrives():
    # the first Metadata answer does not name the topic yet (it is being created), so the first
    # assignment is made without knowing it (no partitions assigned); the next refresh
    # (metadata.max.age.ms) shows its partitions, the snapshot no longer matches, and the leader
    # rejoins. (KafkaConsumer.subscribe lets the first refresh go at once: requestUpdateForNewTopics.)
    world = World(start_ms=0)
    consumer, transport = world.consumer("a", metadata_max_age_ms=1000)
    state = {"left": 1}

    def without_topic(node, request, response):
        if request.api_key == "Metadata" and state["left"]:
            state["left"] -= 1
            response.topics = []
        return response

    transport.response_filter = without_topic
    run_until([consumer], lambda: stable(consumer) and consumer.assignment() == ALL_TPS)
    syncs = transport.requests("SyncGroup")
    assert state["left"] == 0 and syncs[0].assignments[0].assignment.partitions == []
    assert syncs[-1].assignments[0].assignment.partitions == ALL_TPS
    assert consumer.coordinator.generation.generation_id == 2


def test_join_with_invalid_session_timeout_raises_fatal():
    world = World()
    consumer, transport = world.consumer("a", session_timeout_ms=5000, heartbeat_interval_ms=1000)
    with pytest.raises(InvalidSessionTimeoutException):
        consumer.coordinator.ensure_active_group(world.time.timer(10000))
    assert consumer.coordinator.join_future is None


def _replace_first(api_key: str, error: Errors, count: int = 1):
    """A response filter turning the first ``count`` responses of ``api_key`` into ``error``."""
    state = {"left": count}

    def f(node, request, response):
        if request.api_key == api_key and state["left"] > 0:
            state["left"] -= 1
            if api_key == "JoinGroup":
                return JoinGroupResponseData(error_code=error.value, member_id=request.member_id)
            if api_key == "SyncGroup":
                return SyncGroupResponseData(error_code=error.value)
        return response
    return f


def test_join_loop_backs_off_after_retriable_error():
    world = World()
    consumer, transport = world.consumer("a")
    c = consumer.coordinator
    assert c.ensure_coordinator_ready(world.time.timer(5000))
    transport.response_filter = _replace_first("JoinGroup", Errors.COORDINATOR_LOAD_IN_PROGRESS)
    assert c.ensure_active_group(world.time.timer(60000))
    joins = transport.entries("JoinGroup")
    assert joins[1][0] - joins[0][0] >= 100          # slept retry.backoff.ms before rejoining
    assert c.rejoin_reason == ""                      # cleared by the SyncGroup success


@pytest.mark.parametrize("error", [Errors.REBALANCE_IN_PROGRESS, Errors.UNKNOWN_MEMBER_ID,
                                   Errors.MEMBER_ID_REQUIRED])
def test_join_loop_retries_immediately_on_rebalance_errors(error):
    world = World()
    consumer, transport = world.consumer("a")
    c = consumer.coordinator
    assert c.ensure_coordinator_ready(world.time.timer(5000))
    transport.response_filter = _replace_first("JoinGroup", error)
    assert c.ensure_active_group(world.time.timer(60000))
    joins = transport.entries("JoinGroup")
    assert joins[1][0] == joins[0][0]                 # no backoff at all


def test_join_loop_sync_illegal_generation_retries_immediately_keeping_member_id():
    world = World()
    consumer, transport = world.consumer("a")
    c = consumer.coordinator
    assert c.ensure_coordinator_ready(world.time.timer(5000))
    transport.response_filter = _replace_first("SyncGroup", Errors.ILLEGAL_GENERATION)
    assert c.ensure_active_group(world.time.timer(60000))
    joins = transport.entries("JoinGroup")
    member_id = c.generation.member_id
    # join(""), join(id) -> sync fails ILLEGAL_GENERATION -> join(id) again at once
    assert [j[2].member_id for j in joins] == ["", member_id, member_id]
    assert joins[2][0] == joins[1][0]


def test_join_loop_returns_false_when_timer_expires_on_retriable_error():
    world = World()
    consumer, transport = world.consumer("a")
    c = consumer.coordinator
    assert c.ensure_coordinator_ready(world.time.timer(5000))
    c.needs_join_prepare = False
    c.join_future = RequestFuture.failure(CoordinatorLoadInProgressException())  # a failed join
    start = world.now()
    assert c.join_group_if_needed(world.time.timer(0)) is False
    assert c.join_future is None and c.rejoin_needed
    assert world.now() == start                       # expired timer: return before sleeping


def test_join_loop_gives_up_with_the_join_pending_when_the_timer_runs_out():
    world = World()
    consumer, transport = world.consumer("a")
    c = consumer.coordinator
    assert c.ensure_coordinator_ready(world.time.timer(5000))
    transport.response_filter = _replace_first("JoinGroup", Errors.COORDINATOR_LOAD_IN_PROGRESS, count=100)
    start = world.now()
    assert c.join_group_if_needed(world.time.timer(1000)) is False
    assert world.now() - start == 1000
    assert c.state is MemberState.PREPARING_REBALANCE and c.join_future is not None
    # one JoinGroup per retry backoff, never two in flight
    times = [t for t, _, _ in transport.entries("JoinGroup")]
    assert len(times) >= 5 and all(b - a >= 100 for a, b in zip(times, times[1:]))


def test_join_group_if_needed_raises_non_retriable_and_clears_the_join_future():
    world = World()
    consumer, transport = world.consumer("a")
    c = consumer.coordinator
    assert c.ensure_coordinator_ready(world.time.timer(5000))
    transport.response_filter = _replace_first("JoinGroup", Errors.GROUP_AUTHORIZATION_FAILED)
    with pytest.raises(GroupAuthorizationException):
        c.join_group_if_needed(world.time.timer(5000))
    assert c.join_future is None and c.rejoin_needed
    assert c.rejoin_reason == "rebalance failed due to GroupAuthorizationException"


def test_needs_join_prepare_is_cleared_before_on_join_prepare():
    class Failing(Recorder):
        def on_partitions_revoked(self, partitions):
            super().on_partitions_revoked(partitions)
            if len(self.events) == 2:
                raise ValueError("user callback failed")

    world = World()
    listener = Failing()
    consumer, transport = join_one(world, listener=listener)
    c = consumer.coordinator
    assert [e[0] for e in listener.events] == ["assigned"]
    c.request_rejoin("test")
    joins_before = len(transport.requests("JoinGroup"))
    with pytest.raises(KafkaException, match="User rebalance callback"):
        c.ensure_active_group(world.time.timer(5000))
    assert c.needs_join_prepare is False and len(transport.requests("JoinGroup")) == joins_before
    assert consumer.assignment() == []                # revoked even though the callback failed
    assert c.ensure_active_group(world.time.timer(5000))
    assert [e[0] for e in listener.events] == ["assigned", "revoked", "assigned"]   # revoked once


def test_wakeup_during_join_reuses_the_memoised_join_future():
    world = World()
    consumer, transport = world.consumer("a")
    c = consumer.coordinator
    assert c.ensure_coordinator_ready(world.time.timer(5000))
    consumer.wakeup()
    with pytest.raises(WakeupException):
        c.ensure_active_group(world.time.timer(5000))
    pending = c.join_future
    assert pending is not None and c.state is MemberState.PREPARING_REBALANCE
    assert c.ensure_active_group(world.time.timer(5000))
    joins = transport.requests("JoinGroup")
    assert [j.member_id for j in joins].count("") == 1                   # no second JoinGroup
    assert stable(consumer)


def test_join_response_after_leaving_is_unjoined_group_exception():
    world = World()
    consumer, _ = world.consumer("a")
    c = consumer.coordinator
    c.state = MemberState.UNJOINED      # e.g. reset by the heartbeat thread meanwhile
    future = _handle(JoinGroupResponseHandler(c, c.generation), _join_ok(c, "m1", "m1"))
    assert isinstance(future.exception(), UnjoinedGroupException) and future.is_retriable()
    assert c.state is MemberState.UNJOINED


# ============================================================================================
# Response handler error tables (§3.4), row by row
# ============================================================================================

def _handle(handler, body) -> RequestFuture:
    future = RequestFuture()
    handler.on_success(SimpleNamespace(response_body=body), future)
    return future


@pytest.fixture
def coord():
    """A ConsumerCoordinator with a known coordinator, fresh metadata and a subscription."""
    world = World()
    consumer, transport = world.consumer("a")
    world.seed_metadata(consumer)
    c = consumer.coordinator
    c.coordinator = Node(COORDINATOR_ID, "broker-1", 9092)
    c.generation = Generation(3, "m1", "range")
    c.state = MemberState.STABLE
    c.rejoin_needed = False
    c.start_heartbeat_thread_if_needed()
    c._world = world
    return c


def _join_ok(c, leader: str, member_id: str, protocol_type: Optional[str] = "consumer") -> JoinGroupResponseData:
    return JoinGroupResponseData(
        error_code=0, generation_id=5, protocol_type=protocol_type, protocol_name="range", leader=leader,
        member_id=member_id,
        members=[JoinGroupResponseMember("m1", None, Subscription([TOPIC])),
                 JoinGroupResponseMember("m2", None, Subscription([TOPIC]))] if leader == member_id else [])


def _unsent(c) -> List[Any]:
    return [r.request for r in c.client.unsent.request_iterator(c.coordinator)]


def test_join_none_as_leader_assigns_and_sends_sync(coord):
    c = coord
    c.state = MemberState.PREPARING_REBALANCE
    future = _handle(JoinGroupResponseHandler(c, c.generation), _join_ok(c, "m1", "m1"))
    assert not future.is_done()                                        # chained to the SyncGroup
    assert c.state is MemberState.COMPLETING_REBALANCE
    assert c.generation == Generation(5, "m1", "range")
    assert c.heartbeat_thread.enabled
    (sync,) = _unsent(c)
    assert sync.api_key == "SyncGroup" and (sync.generation_id, sync.member_id) == (5, "m1")
    assert sync.protocol_type == "consumer" and sync.protocol_name == "range"
    assert {a.member_id: a.assignment.partitions for a in sync.assignments} == {
        "m1": ALL_TPS[:3], "m2": ALL_TPS[3:]}
    assert c.is_leader


def test_join_none_as_follower_sends_empty_sync(coord):
    c = coord
    c.state = MemberState.PREPARING_REBALANCE
    _handle(JoinGroupResponseHandler(c, c.generation), _join_ok(c, "m1", "m2"))
    (sync,) = _unsent(c)
    assert sync.assignments == [] and sync.member_id == "m2" and not c.is_leader


def test_join_none_with_inconsistent_protocol_type(coord):
    c = coord
    c.state = MemberState.PREPARING_REBALANCE
    future = _handle(JoinGroupResponseHandler(c, c.generation), _join_ok(c, "m1", "m2", "connect"))
    assert isinstance(future.exception(), InconsistentGroupProtocolException)
    assert c.state is MemberState.PREPARING_REBALANCE


JOIN_FATAL = [
    (Errors.FENCED_INSTANCE_ID, FencedInstanceIdException),
    (Errors.INCONSISTENT_GROUP_PROTOCOL, InconsistentGroupProtocolException),
    (Errors.INVALID_SESSION_TIMEOUT, InvalidSessionTimeoutException),
    (Errors.INVALID_GROUP_ID, InvalidGroupIdException),
    (Errors.GROUP_AUTHORIZATION_FAILED, GroupAuthorizationException),
    (Errors.GROUP_MAX_SIZE_REACHED, GroupMaxSizeReachedException),
    (Errors.UNSUPPORTED_VERSION, UnsupportedVersionException),
]


@pytest.mark.parametrize("error, exc", JOIN_FATAL)
def test_join_fatal_errors(coord, error, exc):
    c = coord
    c.state = MemberState.PREPARING_REBALANCE
    before = c.generation
    future = _handle(JoinGroupResponseHandler(c, c.generation), JoinGroupResponseData(error_code=error.value))
    assert type(future.exception()) is exc and not future.is_retriable()
    assert c.generation == before and c.coordinator is not None


def test_join_coordinator_load_in_progress_is_retriable_without_reset(coord):
    c = coord
    before = c.generation
    future = _handle(JoinGroupResponseHandler(c, c.generation),
                     JoinGroupResponseData(error_code=Errors.COORDINATOR_LOAD_IN_PROGRESS.value))
    assert isinstance(future.exception(), CoordinatorLoadInProgressException) and future.is_retriable()
    assert c.generation == before and c.coordinator is not None


@pytest.mark.parametrize("error, exc", [(Errors.COORDINATOR_NOT_AVAILABLE, CoordinatorNotAvailableException),
                                        (Errors.NOT_COORDINATOR, NotCoordinatorException)])
def test_join_coordinator_errors_mark_the_coordinator_unknown(coord, error, exc):
    c = coord
    old = c.coordinator
    future = _handle(JoinGroupResponseHandler(c, c.generation), JoinGroupResponseData(error_code=error.value))
    assert isinstance(future.exception(), exc) and future.is_retriable()
    assert c.coordinator is None and list(c.client.pending_disconnects) == [old]


def test_join_unknown_member_id_resets_member_id_if_generation_unchanged(coord):
    c = coord
    c.state = MemberState.PREPARING_REBALANCE
    future = _handle(JoinGroupResponseHandler(c, c.generation),
                     JoinGroupResponseData(error_code=Errors.UNKNOWN_MEMBER_ID.value))
    assert isinstance(future.exception(), UnknownMemberIdException)
    assert c.generation == NO_GENERATION and c.state is MemberState.UNJOINED
    assert c.rejoin_needed and c.needs_join_prepare


def test_join_unknown_member_id_with_changed_generation_keeps_state(coord):
    c = coord
    handler = JoinGroupResponseHandler(c, Generation(2, "m1", "range"))   # sent with an older one
    future = _handle(handler, JoinGroupResponseData(error_code=Errors.UNKNOWN_MEMBER_ID.value))
    assert isinstance(future.exception(), UnknownMemberIdException)
    assert c.generation == Generation(3, "m1", "range") and c.state is MemberState.STABLE


def test_join_member_id_required_adopts_the_member_id(coord):
    c = coord
    c.generation = NO_GENERATION
    c.rejoin_needed = False
    future = _handle(JoinGroupResponseHandler(c, c.generation),
                     JoinGroupResponseData(error_code=Errors.MEMBER_ID_REQUIRED.value, member_id="a-new"))
    assert isinstance(future.exception(), MemberIdRequiredException)
    assert c.generation == Generation(-1, "a-new", None) and c.rejoin_needed


def test_join_rebalance_in_progress_raises_without_reset(coord):
    c = coord
    before = c.generation
    future = _handle(JoinGroupResponseHandler(c, c.generation),
                     JoinGroupResponseData(error_code=Errors.REBALANCE_IN_PROGRESS.value))
    assert isinstance(future.exception(), RebalanceInProgressException)
    assert c.generation == before and c.coordinator is not None


def test_join_unexpected_error(coord):
    c = coord
    future = _handle(JoinGroupResponseHandler(c, c.generation),
                     JoinGroupResponseData(error_code=Errors.NOT_LEADER_OR_FOLLOWER.value))
    e = future.exception()
    assert type(e) is KafkaException and "Unexpected error in join group response" in str(e)


# ---- SyncGroup ---------------------------------------------------------------------------

def _completing(c):
    c.state = MemberState.COMPLETING_REBALANCE
    c.rejoin_needed = True
    c.rejoin_reason = "x"


def test_sync_none_makes_the_member_stable(coord):
    c = coord
    _completing(c)
    assignment = Assignment(ALL_TPS[:2])
    future = _handle(SyncGroupResponseHandler(c, c.generation), SyncGroupResponseData(
        error_code=0, protocol_type="consumer", protocol_name="range", assignment=assignment))
    assert future.value() is assignment
    assert c.state is MemberState.STABLE and not c.rejoin_needed and c.rejoin_reason == ""


def test_sync_none_with_inconsistent_protocol_name(coord):
    c = coord
    _completing(c)
    future = _handle(SyncGroupResponseHandler(c, c.generation), SyncGroupResponseData(
        error_code=0, protocol_type="consumer", protocol_name="roundrobin", assignment=Assignment()))
    assert isinstance(future.exception(), InconsistentGroupProtocolException)
    assert c.state is MemberState.COMPLETING_REBALANCE


def test_sync_none_after_heartbeat_thread_reset_is_illegal_generation(coord):
    c = coord
    _completing(c)
    c.reset_state_and_generation("reset by the heartbeat thread", False)
    future = _handle(SyncGroupResponseHandler(c, Generation(3, "m1", "range")), SyncGroupResponseData(
        error_code=0, protocol_type="consumer", protocol_name="range", assignment=Assignment()))
    assert isinstance(future.exception(), IllegalGenerationException)
    assert c.state is MemberState.UNJOINED


@pytest.mark.parametrize("error, exc", [(Errors.GROUP_AUTHORIZATION_FAILED, GroupAuthorizationException),
                                        (Errors.FENCED_INSTANCE_ID, FencedInstanceIdException)])
def test_sync_fatal_errors(coord, error, exc):
    c = coord
    _completing(c)
    future = _handle(SyncGroupResponseHandler(c, c.generation), SyncGroupResponseData(error_code=error.value))
    assert type(future.exception()) is exc and c.generation == Generation(3, "m1", "range")


def test_sync_rebalance_in_progress_keeps_the_generation(coord):
    c = coord
    _completing(c)
    future = _handle(SyncGroupResponseHandler(c, c.generation),
                     SyncGroupResponseData(error_code=Errors.REBALANCE_IN_PROGRESS.value))
    assert isinstance(future.exception(), RebalanceInProgressException)
    assert c.generation == Generation(3, "m1", "range") and c.state is MemberState.COMPLETING_REBALANCE


@pytest.mark.parametrize("error, exc, expected_generation", [
    (Errors.UNKNOWN_MEMBER_ID, UnknownMemberIdException, NO_GENERATION),
    (Errors.ILLEGAL_GENERATION, IllegalGenerationException, Generation(-1, "m1", None)),
])
def test_sync_member_errors_reset_when_generation_unchanged(coord, error, exc, expected_generation):
    c = coord
    _completing(c)
    future = _handle(SyncGroupResponseHandler(c, c.generation), SyncGroupResponseData(error_code=error.value))
    assert isinstance(future.exception(), exc)
    assert c.generation == expected_generation and c.state is MemberState.UNJOINED and c.rejoin_needed


@pytest.mark.parametrize("error", [Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION])
def test_sync_member_errors_for_a_stale_generation_are_not_reset(coord, error):
    c = coord
    _completing(c)
    future = _handle(SyncGroupResponseHandler(c, Generation(2, "m1", "range")),
                     SyncGroupResponseData(error_code=error.value))
    assert future.failed()
    assert c.generation == Generation(3, "m1", "range") and c.state is MemberState.COMPLETING_REBALANCE


@pytest.mark.parametrize("error", [Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR])
def test_sync_coordinator_errors_mark_unknown(coord, error):
    c = coord
    future = _handle(SyncGroupResponseHandler(c, c.generation), SyncGroupResponseData(error_code=error.value))
    assert future.is_retriable() and c.coordinator is None


def test_sync_unexpected_error(coord):
    c = coord
    future = _handle(SyncGroupResponseHandler(c, c.generation),
                     SyncGroupResponseData(error_code=Errors.UNKNOWN_SERVER_ERROR.value))
    assert "Unexpected error from SyncGroup" in str(future.exception())


# ---- Heartbeat ---------------------------------------------------------------------------

def test_heartbeat_none_completes(coord):
    future = _handle(HeartbeatResponseHandler(coord, coord.generation), HeartbeatResponseData(error_code=0))
    assert future.succeeded()


@pytest.mark.parametrize("error", [Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR])
def test_heartbeat_coordinator_errors_mark_unknown(coord, error):
    future = _handle(HeartbeatResponseHandler(coord, coord.generation), HeartbeatResponseData(error_code=error.value))
    assert future.is_retriable() and coord.coordinator is None


def test_heartbeat_rebalance_in_progress_when_stable_requests_rejoin(coord):
    c = coord
    future = _handle(HeartbeatResponseHandler(c, c.generation),
                     HeartbeatResponseData(error_code=Errors.REBALANCE_IN_PROGRESS.value))
    assert isinstance(future.exception(), RebalanceInProgressException)
    assert c.rejoin_needed and c.rejoin_reason == "group is already rebalancing"
    assert c.generation == Generation(3, "m1", "range") and c.state is MemberState.STABLE


def test_heartbeat_rebalance_in_progress_while_rebalancing_is_ignored(coord):
    c = coord
    c.state = MemberState.COMPLETING_REBALANCE
    future = _handle(HeartbeatResponseHandler(c, c.generation),
                     HeartbeatResponseData(error_code=Errors.REBALANCE_IN_PROGRESS.value))
    assert future.succeeded() and not c.rejoin_needed


@pytest.mark.parametrize("error, exc, expected_generation", [
    (Errors.ILLEGAL_GENERATION, IllegalGenerationException, Generation(-1, "m1", None)),
    (Errors.UNKNOWN_MEMBER_ID, UnknownMemberIdException, NO_GENERATION),
    (Errors.FENCED_INSTANCE_ID, FencedInstanceIdException, NO_GENERATION),
])
def test_heartbeat_member_errors_reset_when_generation_unchanged(coord, error, exc, expected_generation):
    c = coord
    future = _handle(HeartbeatResponseHandler(c, c.generation), HeartbeatResponseData(error_code=error.value))
    assert isinstance(future.exception(), exc)
    assert c.generation == expected_generation and c.state is MemberState.UNJOINED
    assert c.rejoin_needed and c.needs_join_prepare


@pytest.mark.parametrize("error", [Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID])
def test_stale_heartbeat_errors_are_ignored(coord, error):
    c = coord
    stale = HeartbeatResponseHandler(c, Generation(2, "m1", "range"))   # sent in an older generation
    future = _handle(stale, HeartbeatResponseData(error_code=error.value))
    assert future.succeeded()
    assert c.generation == Generation(3, "m1", "range") and c.state is MemberState.STABLE
    assert not c.rejoin_needed


def test_heartbeat_group_authorization_and_unexpected(coord):
    f1 = _handle(HeartbeatResponseHandler(coord, coord.generation),
                 HeartbeatResponseData(error_code=Errors.GROUP_AUTHORIZATION_FAILED.value))
    assert isinstance(f1.exception(), GroupAuthorizationException)
    f2 = _handle(HeartbeatResponseHandler(coord, coord.generation),
                 HeartbeatResponseData(error_code=Errors.INVALID_REQUEST.value))
    assert "Unexpected error in heartbeat response" in str(f2.exception())


def test_disconnect_marks_coordinator_unknown_as_disconnected(coord):
    c = coord
    future = RequestFuture()
    HeartbeatResponseHandler(c, c.generation).on_failure(DisconnectException.INSTANCE, future)
    assert future.exception() is DisconnectException.INSTANCE
    assert c.coordinator is None and list(c.client.pending_disconnects) == []   # no disconnectAsync


def test_other_transport_failure_does_not_touch_the_coordinator(coord):
    c = coord
    future = RequestFuture()
    e = TimeoutException("Failed to send request after 30000 ms.")
    HeartbeatResponseHandler(c, c.generation).on_failure(e, future)
    assert future.exception() is e and c.coordinator is not None


# ---- LeaveGroup --------------------------------------------------------------------------

def test_leave_group_responses(coord):
    ok = _handle(LeaveGroupResponseHandler(coord, coord.generation),
                 LeaveGroupResponseData(error_code=0, members=[MemberResponse("m1")]))
    assert ok.succeeded()
    member_error = _handle(LeaveGroupResponseHandler(coord, coord.generation), LeaveGroupResponseData(
        error_code=0, members=[MemberResponse("m1", error_code=Errors.UNKNOWN_MEMBER_ID.value)]))
    assert isinstance(member_error.exception(), UnknownMemberIdException)
    two = _handle(LeaveGroupResponseHandler(coord, coord.generation),
                  LeaveGroupResponseData(error_code=0, members=[MemberResponse("m1"), MemberResponse("m2")]))
    assert isinstance(two.exception(), IllegalStateException)


# ---- OffsetCommit ------------------------------------------------------------------------

def _commit_response(error: Errors) -> OffsetCommitResponseData:
    return OffsetCommitResponseData(topics=[OffsetCommitResponseTopic(TOPIC, [
        OffsetCommitResponsePartition(0, 0), OffsetCommitResponsePartition(1, error.value)])])


def _commit(c, error: Errors, sent: Optional[Generation] = None) -> RequestFuture:
    offsets = {ALL_TPS[0]: OffsetAndMetadata(5), ALL_TPS[1]: OffsetAndMetadata(7)}
    return _handle(OffsetCommitResponseHandler(c, offsets, sent or c.generation), _commit_response(error))


@pytest.mark.parametrize("error, exc, retriable", [
    (Errors.GROUP_AUTHORIZATION_FAILED, GroupAuthorizationException, False),
    (Errors.TOPIC_AUTHORIZATION_FAILED, TopicAuthorizationException, False),
    (Errors.OFFSET_METADATA_TOO_LARGE, OffsetMetadataTooLargeException, False),
    (Errors.INVALID_COMMIT_OFFSET_SIZE, InvalidCommitOffsetSizeException, False),
    (Errors.COORDINATOR_LOAD_IN_PROGRESS, CoordinatorLoadInProgressException, True),
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, UnknownTopicOrPartitionException, True),
])
def test_commit_errors_without_state_change(coord, error, exc, retriable):
    c = coord
    future = _commit(c, error)
    assert isinstance(future.exception(), exc) and future.is_retriable() == retriable
    assert c.coordinator is not None and c.generation == Generation(3, "m1", "range")


@pytest.mark.parametrize("error", [Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR,
                                   Errors.REQUEST_TIMED_OUT])
def test_commit_coordinator_errors_mark_unknown(coord, error):
    future = _commit(coord, error)
    assert future.is_retriable() and coord.coordinator is None


def test_commit_fenced_instance_id(coord):
    c = coord
    assert isinstance(_commit(c, Errors.FENCED_INSTANCE_ID).exception(), FencedInstanceIdException)
    stale = Generation(2, "m1", "range")
    assert isinstance(_commit(c, Errors.FENCED_INSTANCE_ID, stale).exception(), CommitFailedException)
    c.state = MemberState.PREPARING_REBALANCE
    assert isinstance(_commit(c, Errors.FENCED_INSTANCE_ID, stale).exception(), RebalanceInProgressException)


def test_commit_rebalance_in_progress_requests_rejoin_without_reset(coord):
    c = coord
    future = _commit(c, Errors.REBALANCE_IN_PROGRESS)
    assert isinstance(future.exception(), RebalanceInProgressException)
    assert c.rejoin_needed and c.generation == Generation(3, "m1", "range") and c.state is MemberState.STABLE


@pytest.mark.parametrize("error, expected_generation", [
    (Errors.UNKNOWN_MEMBER_ID, NO_GENERATION),
    (Errors.ILLEGAL_GENERATION, Generation(-1, "m1", None)),
])
def test_commit_member_errors_reset_and_fail(coord, error, expected_generation):
    c = coord
    future = _commit(c, error)
    assert isinstance(future.exception(), CommitFailedException)
    assert c.generation == expected_generation and c.state is MemberState.UNJOINED and c.rejoin_needed


@pytest.mark.parametrize("error", [Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION])
def test_commit_member_errors_after_moving_on_while_preparing_rebalance(coord, error):
    # the generation changed since the commit was sent and a rebalance is in progress:
    # RebalanceInProgressException, and no reset
    c = coord
    c.state = MemberState.PREPARING_REBALANCE
    future = _commit(c, error, Generation(2, "m1", "range"))
    assert isinstance(future.exception(), RebalanceInProgressException)
    assert c.generation == Generation(3, "m1", "range") and c.state is MemberState.PREPARING_REBALANCE


@pytest.mark.parametrize("error", [Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION])
def test_commit_member_errors_stale_but_not_rebalancing_still_reset(coord, error):
    c = coord
    future = _commit(c, error, Generation(2, "m1", "range"))
    assert isinstance(future.exception(), CommitFailedException) and c.state is MemberState.UNJOINED


def test_commit_unexpected_error(coord):
    assert "Unexpected error in commit" in str(_commit(coord, Errors.INVALID_REQUEST).exception())


# ============================================================================================
# Heartbeat thread (§3.5)
# ============================================================================================

def test_heartbeat_thread_only_heartbeats_when_joined():
    world = World()
    consumer, transport = world.consumer("a")
    assert consumer.heartbeat_thread.run_once() == "not-started"
    c = consumer.coordinator
    assert c.ensure_coordinator_ready(world.time.timer(5000))
    c.start_heartbeat_thread_if_needed()
    world.advance(5000)
    assert consumer.heartbeat_thread.run_once() == "disabled"          # not enabled before joining
    run_until([consumer], lambda: stable(consumer))
    world.advance(3000)
    assert consumer.heartbeat_thread.run_once() == "heartbeat"
    consumer.heartbeat_thread.run_once()                                  # its poll transmits it
    (hb,) = transport.requests("Heartbeat")
    assert (hb.generation_id, hb.member_id) == (c.generation.generation_id, c.generation.member_id)
    # a rejoin is started (JoinGroup in flight): PREPARING_REBALANCE -> the thread disables itself
    transport.request_filter = lambda n, req: req.api_key != "JoinGroup"   # the join hangs
    c.request_rejoin("test")
    consumer.poll(0)
    assert c.state is MemberState.PREPARING_REBALANCE
    world.advance(5000)
    assert consumer.heartbeat_thread.run_once() == "disable"
    assert consumer.heartbeat_thread.run_once() == "disabled"
    assert len(transport.requests("Heartbeat")) == 1


def test_heartbeat_thread_does_not_recheck_state_after_its_poll():
    # The thread checks the member state before pollNoWakeup; a response fired by that poll that
    # resets the state does not stop this iteration (Kafka's behaviour): a due heartbeat is sent
    # with the reset generation.
    world = World()
    consumer, transport = join_one(world)
    c = consumer.coordinator
    member_id = c.generation.member_id
    transport.response_filter = lambda n, req, resp: (
        OffsetCommitResponseData(topics=[OffsetCommitResponseTopic(TOPIC, [OffsetCommitResponsePartition(
            0, Errors.ILLEGAL_GENERATION.value)])]) if req.api_key == "OffsetCommit" else resp)
    world.advance(3000)                                # a heartbeat is due
    c.commit_offsets_async({ALL_TPS[0]: 1})            # transmitted; answered ILLEGAL_GENERATION
    assert c.state is MemberState.STABLE               # ... not fired yet
    assert consumer.heartbeat_thread.run_once() == "heartbeat"   # its poll reset the member
    assert c.state is MemberState.UNJOINED and c.generation == Generation(-1, member_id, None)
    (hb,) = [r.request for r in consumer.client.unsent.request_iterator(c.coordinator)]
    assert hb.api_key == "Heartbeat" and (hb.generation_id, hb.member_id) == (-1, member_id)
    assert consumer.heartbeat_thread.run_once() == "disable"     # the next iteration stops


def test_time_to_next_heartbeat_is_unbounded_until_joined():
    world = World()
    consumer, _ = world.consumer("a")
    c = consumer.coordinator
    assert c.time_to_next_heartbeat(world.now()) == (1 << 63) - 1
    run_until([consumer], lambda: stable(consumer))
    assert 0 < c.time_to_next_heartbeat(world.now()) <= 3000


def test_heartbeat_failure_backs_off_and_success_restarts_session():
    world = World()
    consumer, transport = join_one(world)
    c = consumer.coordinator
    transport.response_filter = lambda n, req, resp: (
        HeartbeatResponseData(error_code=Errors.INVALID_REQUEST.value) if req.api_key == "Heartbeat" else resp)
    world.advance(3000)
    assert consumer.heartbeat_thread.run_once() == "heartbeat"
    consumer.heartbeat_thread.run_once()   # transmit
    consumer.heartbeat_thread.run_once()   # response fired: failHeartbeat
    assert c.heartbeat.time_to_next_heartbeat(world.now()) == 100
    transport.response_filter = None
    session_deadline = c.heartbeat.session_timer.deadline_ms()
    world.advance(100)
    assert consumer.heartbeat_thread.run_once() == "heartbeat"
    consumer.heartbeat_thread.run_once()
    consumer.heartbeat_thread.run_once()
    assert c.heartbeat.session_timer.deadline_ms() > session_deadline


def test_session_timer_expiry_marks_coordinator_unknown_then_thread_rediscovers():
    world = World()
    consumer, transport = join_one(world)
    c = consumer.coordinator
    world.advance(10000)                              # no heartbeat response for session.timeout.ms
    assert consumer.heartbeat_thread.run_once() == "session-expired"
    assert c.coordinator is None and len(consumer.client.pending_disconnects) == 1
    assert consumer.heartbeat_thread.run_once() == "lookup"
    tags = []
    for _ in range(3):
        world.advance(100)                            # the thread waits retry.backoff.ms
        tags.append(consumer.heartbeat_thread.run_once())
    assert c.coordinator is not None and c.coordinator.id == COORDINATOR_ID
    assert "session-expired" not in tags               # discovery restarted the session timer
    assert len(transport.requests("FindCoordinator")) >= 2


def test_heartbeat_thread_clears_a_memoised_lookup_when_coordinator_unknown():
    world = World()
    consumer, transport = join_one(world)
    c = consumer.coordinator
    c.mark_coordinator_unknown(False, "test")
    pending = c.lookup_coordinator()
    transport.request_filter = lambda n, req: req.api_key != "FindCoordinator"   # hangs
    assert consumer.heartbeat_thread.run_once() == "clear-lookup"
    assert c.find_coordinator_future is None and not pending.is_done()
    # then AbstractCoordinator.this.wait(retry.backoff.ms) (HeartbeatThread.run): an iteration at
    # the same instant sends nothing (without the wait, groupcheck explore found the thread sending
    # FindCoordinator after FindCoordinator at one instant)
    sent = len(transport.requests("FindCoordinator"))
    assert consumer.heartbeat_thread.run_once() == "waiting"
    world.advance(99)
    assert consumer.heartbeat_thread.run_once() == "waiting"
    assert c.find_coordinator_future is None and len(transport.requests("FindCoordinator")) == sent
    world.advance(1)
    assert consumer.heartbeat_thread.run_once() == "lookup"
    assert c.find_coordinator_future is not None


def test_the_heartbeat_threads_backoff_ends_early_when_notified():
    """enable() and pollHeartbeat with a heartbeat due notify() the thread out of its wait."""
    world = World()
    consumer, transport = join_one(world)
    c = consumer.coordinator
    c.mark_coordinator_unknown(False, "test")
    c.lookup_coordinator()
    transport.request_filter = lambda n, req: req.api_key != "FindCoordinator"   # hangs
    assert consumer.heartbeat_thread.run_once() == "clear-lookup"
    assert consumer.heartbeat_thread.run_once() == "waiting"
    c.heartbeat_thread.enable()
    assert consumer.heartbeat_thread.run_once() == "lookup"
    c.clear_find_coordinator_future()
    c.lookup_coordinator()
    assert consumer.heartbeat_thread.run_once() == "clear-lookup"
    c.poll_heartbeat(world.time.milliseconds())                # no heartbeat due yet: no notify
    assert consumer.heartbeat_thread.run_once() == "waiting"
    due = world.time.milliseconds() + c.heartbeat.time_to_next_heartbeat(world.time.milliseconds())
    world.advance(due - world.time.milliseconds())
    c.poll_heartbeat(world.time.milliseconds())
    assert c.heartbeat_thread.wait_until is None


def test_poll_timer_expiry_leaves_the_group():
    world = World()
    consumer, transport = join_one(world, max_poll_interval_ms=12000)
    c = consumer.coordinator
    member_id = c.generation.member_id
    tags = []
    for _ in range(20):
        world.advance(1000)
        tags.append(consumer.heartbeat_thread.run_once())
        if tags[-1] == "poll-expired":
            break
    assert tags[-1] == "poll-expired" and "heartbeat" in tags and "session-expired" not in tags
    (leave,) = transport.requests("LeaveGroup")
    assert [m.member_id for m in leave.members] == [member_id]
    assert c.generation == NO_GENERATION and c.state is MemberState.UNJOINED and c.rejoin_needed
    assert world.group().state is EMPTY and not world.group().members
    # the application polls again: it rejoins with a new member id
    run_until([consumer], lambda: stable(consumer))
    assert c.generation.member_id not in ("", member_id)


def test_heartbeat_thread_fenced_instance_id_fails_the_thread_and_surfaces_in_poll():
    world = World()
    consumer, transport = join_one(world)
    c = consumer.coordinator
    transport.response_filter = lambda n, req, resp: (
        HeartbeatResponseData(error_code=Errors.FENCED_INSTANCE_ID.value) if req.api_key == "Heartbeat" else resp)
    world.advance(3000)
    for _ in range(3):
        consumer.heartbeat_thread.run_once()
    thread = c.heartbeat_thread
    assert isinstance(thread.failure_cause(), FencedInstanceIdException)
    with pytest.raises(FencedInstanceIdException):
        consumer.poll(0)
    assert c.heartbeat_thread is None             # a new one is started by the next join


def test_heartbeat_thread_unexpected_exception_closes_it(monkeypatch):
    world = World()
    consumer, transport = join_one(world)
    c = consumer.coordinator

    def boom(self):
        raise IllegalStateException("boom")

    monkeypatch.setattr(type(c.client), "poll_no_wakeup", boom)
    assert consumer.heartbeat_thread.run_once() == "failed"
    assert c.heartbeat_thread.closed and isinstance(c.heartbeat_thread.failure_cause(), IllegalStateException)
    assert consumer.heartbeat_thread.run_once() == "closed"


# ============================================================================================
# Offsets: commit fencing, fetch
# ============================================================================================

def test_commit_carries_the_generation_and_is_stored():
    world = World()
    consumer, transport = join_one(world)
    c = consumer.coordinator
    assert c.commit_offsets_sync({ALL_TPS[0]: 42, ALL_TPS[3]: OffsetAndMetadata(7, metadata="m")},
                                 world.time.timer(5000))
    (commit,) = transport.requests("OffsetCommit")
    assert (commit.generation_id, commit.member_id) == (c.generation.generation_id, c.generation.member_id)
    assert [(t.name, [(p.partition_index, p.committed_offset) for p in t.partitions]) for t in commit.topics] == \
        [(TOPIC, [(0, 42), (3, 7)])]
    committed = c.fetch_committed_offsets([ALL_TPS[0], ALL_TPS[3], ALL_TPS[5]], world.time.timer(5000))
    assert committed[ALL_TPS[0]].offset == 42 and committed[ALL_TPS[3]].metadata == "m"
    assert committed[ALL_TPS[5]] is None


def test_commit_while_not_stable_fails_locally_without_sending():
    world = World()
    consumer, transport = join_one(world)
    c = consumer.coordinator
    c.state = MemberState.COMPLETING_REBALANCE
    future = c.send_offset_commit_request({ALL_TPS[0]: OffsetAndMetadata(1)})
    assert isinstance(future.exception(), RebalanceInProgressException)
    c.state = MemberState.UNJOINED
    future = c.send_offset_commit_request({ALL_TPS[0]: OffsetAndMetadata(1)})
    assert isinstance(future.exception(), CommitFailedException)
    assert consumer.client.unsent.request_count() == 0 and transport.requests("OffsetCommit") == []


def test_commit_during_preparing_rebalance_is_accepted_then_fenced_after_the_rebalance():
    world = World()
    a, ta = join_one(world)
    old_generation = a.coordinator.generation
    b, tb = world.consumer("b")
    run_until([b], lambda: world.group().state is PREPARING_REBALANCE, max_rounds=50)
    # the group is rebalancing but generation 1 is still current: the broker accepts the commit
    assert a.coordinator.commit_offsets_sync({ALL_TPS[0]: 1}, world.time.timer(5000))
    run_until([a, b], lambda: all_stable_same_generation([a, b]))
    assert a.coordinator.generation.generation_id > old_generation.generation_id
    # a commit still carrying the old generation is fenced: ILLEGAL_GENERATION
    a.coordinator.generation = Generation(old_generation.generation_id, a.coordinator.generation.member_id,
                                          old_generation.protocol_name)
    with pytest.raises(CommitFailedException):
        a.coordinator.commit_offsets_sync({ALL_TPS[0]: 2}, world.time.timer(5000))
    # reset keeping the member id, rejoin requested
    assert a.coordinator.state is MemberState.UNJOINED and a.coordinator.rejoin_needed
    assert a.coordinator.generation.member_id != "" and a.coordinator.generation.generation_id == -1
    assert [cm.generation_id for cm in ta.requests("OffsetCommit")] == [old_generation.generation_id] * 2
    committed = b.coordinator.fetch_committed_offsets([ALL_TPS[0]], world.time.timer(5000))
    assert committed[ALL_TPS[0]].offset == 1          # the fenced commit was not stored


def test_member_kicked_out_by_session_expiry_gets_commit_failed():
    world = World()
    a, ta = join_one(world)
    b, tb = world.consumer("b")
    run_until([a, b], lambda: all_stable_same_generation([a, b]))
    a_member = a.coordinator.generation.member_id
    # a stops heartbeating and polling; b carries on until the broker has dropped a
    for _ in range(100):
        world.advance(500)
        b.poll(0)
        b.heartbeat_thread.run_once()
        if a_member not in world.group().members and stable(b) and world.group().state.value == "Stable":
            break
    assert a_member not in world.group().members and b.assignment() == ALL_TPS
    assert stable(a)                                   # a has not noticed anything
    with pytest.raises(CommitFailedException):
        a.coordinator.commit_offsets_sync({ALL_TPS[0]: 5}, world.time.timer(5000))
    # UNKNOWN_MEMBER_ID: reset including the member id
    assert a.coordinator.generation == NO_GENERATION and a.coordinator.state is MemberState.UNJOINED


def test_commit_async_callback_runs_on_a_later_call():
    world = World()
    consumer, transport = join_one(world)
    c = consumer.coordinator
    results = []
    c.commit_offsets_async({ALL_TPS[1]: 9}, lambda offsets, exc: results.append((dict(offsets), exc)))
    assert results == []
    run_until([consumer], lambda: not c.completed_offset_commits and c.in_flight_async_commits == 0
              and bool(results), max_rounds=20)
    ((offsets, exc),) = results
    assert exc is None and offsets[ALL_TPS[1]].offset == 9


# ============================================================================================
# Leaving
# ============================================================================================

def test_close_sends_leave_group_and_revokes():
    world = World()
    recorder = Recorder()
    consumer, transport = world.consumer("a", recorder)
    run_until([consumer], lambda: stable(consumer))
    member_id = consumer.coordinator.generation.member_id
    consumer.close()
    (leave,) = transport.requests("LeaveGroup")
    assert [m.member_id for m in leave.members] == [member_id]
    assert leave.members[0].reason == "the consumer is being closed"
    assert recorder.events[-1] == ("revoked", ALL_TPS)
    assert world.group().state is EMPTY and not world.group().members
    assert consumer.coordinator.generation == NO_GENERATION


def test_maybe_leave_group_only_for_joined_dynamic_members_with_a_member_id():
    world = World()
    consumer, transport = world.consumer("a")
    c = consumer.coordinator
    c.coordinator = Node(COORDINATOR_ID, "broker-1", 9092)
    c.generation = Generation(-1, "a-1", None)
    c.state = MemberState.UNJOINED
    assert c.maybe_leave_group("x") is None                        # UNJOINED: nothing sent
    assert c.generation == NO_GENERATION and c.rejoin_needed       # ... but always reset
    c.state = MemberState.STABLE                                   # no member id: nothing sent
    assert c.maybe_leave_group("x") is None
    static, _ = world.consumer("s", group_instance_id="instance-1")
    s = static.coordinator
    s.coordinator = Node(COORDINATOR_ID, "broker-1", 9092)
    s.generation = Generation(2, "s-1", "range")
    s.state = MemberState.STABLE
    assert s.maybe_leave_group("x") is None                        # static members never leave
    assert s.generation == NO_GENERATION and s.state is MemberState.UNJOINED
    c.generation = Generation(2, "a-1", "range")
    c.state = MemberState.STABLE
    future = c.maybe_leave_group("x")
    assert future is not None and c.generation == NO_GENERATION


def test_ensure_active_group_returns_false_on_zero_timer_without_blocking():
    world = World()
    consumer, transport = world.consumer("a")
    start = world.now()
    assert consumer.coordinator.ensure_active_group(world.time.timer(0)) is False
    assert world.now() == start
