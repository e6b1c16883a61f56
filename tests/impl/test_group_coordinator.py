"""Scenario tests of the broker side (impl/server): GroupCoordinator, GroupMetadata, the
metadata manager, Broker dispatch and Cluster failover, against protocol reference §1-§2."""

from __future__ import annotations

import random
import uuid

import pytest

from impl.errors import IllegalStateException
from impl.protocol import (ApiVersionsRequestData, Assignment, FindCoordinatorRequestData, HeartbeatRequestData,
                           JoinGroupRequestData, JoinGroupRequestProtocol, LeaveGroupRequestData, MemberIdentity,
                           MetadataRequestData, MetadataRequestTopic, OffsetCommitRequestData,
                           OffsetCommitRequestPartition, OffsetCommitRequestTopic, OffsetFetchRequestData,
                           OffsetFetchRequestTopic, Subscription, SyncGroupRequestAssignment, SyncGroupRequestData,
                           TopicPartition)
from impl.server import (Cluster, GroupMetadata, MemberMetadata, OffsetAndMetadata, java_string_hash_code,
                         partition_for)
from impl.server.group_metadata import COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE
from tests.helpers.coordinator_harness import E, GROUP, Harness, NONE, PROTOCOLS, RNG_SEED, SUB, TP0, code
from tests.helpers.placement import WORKED_VALUES

TP1 = TopicPartition("topic", 1)


@pytest.fixture
def h():
    return Harness()


def expected_member_id(client_id: str, draws: int = 1) -> str:
    rng = random.Random(RNG_SEED)
    value = None
    for _ in range(draws):
        value = uuid.UUID(int=rng.getrandbits(128), version=4)
    return client_id + "-" + str(value)


# =============================================================================================
# §1.14 matrix — JoinGroup with memberId ""
# =============================================================================================

def test_join_unknown_member_empty_v4_member_id_required_then_join(h):
    first = h.join("", version=4)
    assert first[0].error_code == code(E.MEMBER_ID_REQUIRED)
    assert first[0].member_id == expected_member_id("consumer")
    assert first[0].generation_id == -1
    group = h.group()
    assert group.state is EMPTY and group.members == {} and group.is_pending_member(first[0].member_id)
    second = h.join(first[0].member_id, version=4)
    assert second == [] and group.state is PREPARING_REBALANCE
    h.advance(0)
    resp = second[0]
    assert (resp.error_code, resp.generation_id, resp.leader) == (NONE, 1, first[0].member_id)
    assert [m.member_id for m in resp.members] == [first[0].member_id]
    assert resp.protocol_name == "range" and resp.protocol_type == "consumer"


def test_join_unknown_member_empty_old_version_joins_directly(h):
    out = h.join("", version=3)
    group = h.group()
    assert out == [] and group.state is PREPARING_REBALANCE
    (member_id,) = group.members
    assert member_id == expected_member_id("consumer") and group.leader_id == member_id
    assert not group.pending_members


def test_join_unknown_member_preparing_adds_and_parks_or_requires_id(h):
    ids, generation, parked_leader = h.preparing_group()
    v3 = h.join("", version=3, client_id="late")
    assert v3 == [] and len(h.group().members) == 3
    v4 = h.join("", version=4, client_id="later")
    assert v4[0].error_code == code(E.MEMBER_ID_REQUIRED)
    assert len(h.group().members) == 3 and h.group().state is PREPARING_REBALANCE


def test_join_unknown_member_completing_rebalance(h):
    h.completing_group(2)
    v4 = h.join("", version=4, client_id="new")
    assert v4[0].error_code == code(E.MEMBER_ID_REQUIRED)
    assert h.group().state is COMPLETING_REBALANCE
    v3 = h.join("", version=3, client_id="new")
    assert v3 == [] and h.group().state is PREPARING_REBALANCE


def test_join_unknown_member_stable(h):
    h.stable_group(2)
    v4 = h.join("", version=4, client_id="new")
    assert v4[0].error_code == code(E.MEMBER_ID_REQUIRED)
    assert h.group().state is STABLE and len(h.group().members) == 2
    v3 = h.join("", version=3, client_id="new")
    assert v3 == [] and h.group().state is PREPARING_REBALANCE and len(h.group().members) == 3


def test_join_unknown_member_dead_group(h):
    h.dead_group()
    out = h.join("", version=4)
    assert out[0].error_code == code(E.COORDINATOR_NOT_AVAILABLE) and out[0].member_id == ""


# =============================================================================================
# §1.14 matrix — JoinGroup with a known member id
# =============================================================================================

def test_join_known_member_empty_group_unknown_member(h):
    ids, _ = h.empty_group()
    out = h.join(ids[0])
    assert out[0].error_code == code(E.UNKNOWN_MEMBER_ID)


def test_join_known_member_preparing_updates_and_parks(h):
    ids, generation = h.stable_group(3)
    leader = h.join(ids[0])
    follower = h.join(ids[1], session=20000)
    assert leader == [] and follower == []
    assert h.group().members[ids[1]].session_timeout_ms == 20000
    assert h.group().num_members_awaiting_join == 2
    # the last member joins: every parked JoinGroup is answered at once
    last = h.join(ids[2])
    assert leader[0].generation_id == follower[0].generation_id == last[0].generation_id == generation + 1


def test_join_known_member_preparing_second_join_overwrites_parked_callback(h):
    ids, generation = h.stable_group(3)
    leader_first = h.join(ids[0])
    leader_second = h.join(ids[0])
    h.join(ids[1])
    h.join(ids[2])
    assert leader_first == []  # silently dropped, never answered
    assert leader_second[0].error_code == NONE


def test_join_known_member_completing_same_metadata_immediate(h):
    ids, generation, _ = h.completing_group(2)
    leader = h.join(ids[0])
    follower = h.join(ids[1])
    assert leader[0].error_code == NONE and leader[0].generation_id == generation
    assert sorted(m.member_id for m in leader[0].members) == sorted(ids)
    assert follower[0].generation_id == generation and follower[0].members == []
    assert h.group().state is COMPLETING_REBALANCE


def test_join_known_member_completing_changed_metadata_rebalances(h):
    ids, generation, _ = h.completing_group(2)
    parked_follower_sync = h.sync(ids[1], generation)
    out = h.join(ids[1], protocols=(("range", Subscription(["topic", "other"])),))
    assert out == [] and h.group().state is PREPARING_REBALANCE
    # entering PreparingRebalance from CompletingRebalance answers parked syncs
    assert parked_follower_sync[0].error_code == code(E.REBALANCE_IN_PROGRESS)


def test_join_known_member_stable_leader_always_rebalances(h):
    ids, generation = h.stable_group(2)
    assert h.join(ids[0]) == []
    assert h.group().state is PREPARING_REBALANCE


def test_join_known_member_stable_follower_same_metadata_immediate(h):
    ids, generation = h.stable_group(2)
    out = h.join(ids[1])
    assert out[0].error_code == NONE and out[0].generation_id == generation
    assert out[0].leader == ids[0] and out[0].members == []
    assert h.group().state is STABLE


def test_join_known_member_stable_follower_changed_metadata_rebalances(h):
    ids, generation = h.stable_group(2)
    out = h.join(ids[1], protocols=(("range", Subscription(["other"])),))
    assert out == [] and h.group().state is PREPARING_REBALANCE


def test_join_known_member_dead_group(h):
    ids, _ = h.dead_group()
    out = h.join(ids[0])
    assert out[0].error_code == code(E.COORDINATOR_NOT_AVAILABLE) and out[0].member_id == ids[0]


def test_join_known_member_absent_group_unknown_member(h):
    out = h.join("someone")
    assert out[0].error_code == code(E.UNKNOWN_MEMBER_ID)
    assert h.group() is None


def test_join_invalid_session_timeout(h):
    assert h.join("", session=5999)[0].error_code == code(E.INVALID_SESSION_TIMEOUT)
    assert h.join("", session=1800001)[0].error_code == code(E.INVALID_SESSION_TIMEOUT)
    assert h.join("", session=6000)[0].error_code == code(E.MEMBER_ID_REQUIRED)


def test_join_inconsistent_protocols(h):
    assert h.join("", protocol_type="")[0].error_code == code(E.INCONSISTENT_GROUP_PROTOCOL)
    assert h.join("", protocols=())[0].error_code == code(E.INCONSISTENT_GROUP_PROTOCOL)
    h.stable_group(1)
    assert h.join("", protocols=(("roundrobin", SUB),))[0].error_code == code(E.INCONSISTENT_GROUP_PROTOCOL)
    assert h.join("", protocol_type="connect")[0].error_code == code(E.INCONSISTENT_GROUP_PROTOCOL)


def test_join_group_max_size_reached():
    h = Harness(group_max_size=1)
    h.stable_group(1)
    out = h.join("", version=3, client_id="extra")
    assert out[0].error_code == code(E.GROUP_MAX_SIZE_REACHED) and out[0].member_id == ""
    assert len(h.group().members) == 1


# =============================================================================================
# §1.14 matrix — SyncGroup
# =============================================================================================

def test_sync_empty_unknown_member(h):
    ids, generation = h.empty_group()
    assert h.sync(ids[0], generation)[0].error_code == code(E.UNKNOWN_MEMBER_ID)


def test_sync_preparing_rebalance_in_progress(h):
    ids, generation, _ = h.preparing_group()
    assert h.sync(ids[1], generation)[0].error_code == code(E.REBALANCE_IN_PROGRESS)


def test_sync_completing_parks_until_leader_assignment_completes_all(h):
    ids, generation, _ = h.completing_group(3)
    f1 = h.sync(ids[1], generation)
    assert f1 == []
    leader = h.sync(ids[0], generation, {ids[0]: Assignment([TP0]), ids[1]: Assignment([TP1])})
    assert h.group().state is STABLE
    assert leader[0].assignment == Assignment([TP0]) and f1[0].assignment == Assignment([TP1])
    assert leader[0].protocol_name == "range" and f1[0].protocol_type == "consumer"
    # a member missing from the leader's assignment gets an empty one (None ≙ empty bytes)
    late = h.sync(ids[2], generation)
    assert late[0].error_code == NONE and late[0].assignment is None


def test_sync_stable_returns_stored_assignment(h):
    ids, generation = h.stable_group(2)
    out = h.sync(ids[1], generation)
    assert out[0].error_code == NONE and out[0].assignment == Assignment([TP1])


def test_sync_dead(h):
    ids, generation = h.dead_group()
    assert h.sync(ids[0], generation)[0].error_code == code(E.COORDINATOR_NOT_AVAILABLE)


def test_sync_validation_order(h):
    ids, generation = h.stable_group(2)
    assert h.sync("nobody", generation + 5)[0].error_code == code(E.UNKNOWN_MEMBER_ID)
    assert h.sync(ids[1], generation + 1)[0].error_code == code(E.ILLEGAL_GENERATION)
    assert h.sync(ids[1], generation, protocol_type="x")[0].error_code == code(E.INCONSISTENT_GROUP_PROTOCOL)
    assert h.sync(ids[1], generation, protocol_name="x")[0].error_code == code(E.INCONSISTENT_GROUP_PROTOCOL)
    assert h.sync(ids[1], generation, protocol_type=None, protocol_name=None)[0].error_code == NONE
    absent = h.sync("m", 1, group_id="nogroup")
    assert absent[0].error_code == code(E.UNKNOWN_MEMBER_ID)


def test_sync_store_failure_answers_mapped_error_and_rebalances(h):
    ids, generation, _ = h.completing_group(2)
    follower = h.sync(ids[1], generation)
    h.log.inject_append_error(0, E.REQUEST_TIMED_OUT)
    leader = h.sync(ids[0], generation, {ids[0]: Assignment([TP0])})
    assert leader[0].error_code == follower[0].error_code == code(E.REBALANCE_IN_PROGRESS)
    assert h.group().state is PREPARING_REBALANCE
    assert all(m.assignment is None for m in h.group().members.values())


# =============================================================================================
# §1.14 matrix — Heartbeat (and §1.8 precedence)
# =============================================================================================

def test_heartbeat_matrix(h):
    ids, generation = h.empty_group()
    assert h.heartbeat(ids[0], generation) == code(E.UNKNOWN_MEMBER_ID)

    h2 = Harness()
    ids, generation, _ = h2.preparing_group()
    assert h2.heartbeat(ids[1], generation) == code(E.REBALANCE_IN_PROGRESS)

    h3 = Harness()
    ids, generation, _ = h3.completing_group(2)
    assert h3.heartbeat(ids[1], generation) == NONE

    h4 = Harness()
    ids, generation = h4.stable_group(2)
    assert h4.heartbeat(ids[1], generation) == NONE

    h5 = Harness()
    ids, generation = h5.dead_group()
    assert h5.heartbeat(ids[1], generation) == code(E.COORDINATOR_NOT_AVAILABLE)


def test_heartbeat_illegal_generation_precedence(h):
    ids, generation, _ = h.preparing_group()
    # validation (member, then generation) precedes the state column
    assert h.heartbeat(ids[1], generation + 1) == code(E.ILLEGAL_GENERATION)
    assert h.heartbeat("nobody", generation + 1) == code(E.UNKNOWN_MEMBER_ID)
    assert h.heartbeat(ids[1], generation) == code(E.REBALANCE_IN_PROGRESS)
    # the follower rejoins: join completes, CompletingRebalance at generation + 1
    h.join(ids[1])
    assert h.group().state is COMPLETING_REBALANCE
    assert h.heartbeat(ids[1], generation) == code(E.ILLEGAL_GENERATION)
    assert h.heartbeat(ids[1], generation + 1) == NONE


def test_heartbeat_prelude_and_absent_group():
    h = Harness(partitions=2)
    assert h.heartbeat("m", 1, group_id="nogroup") == code(E.UNKNOWN_MEMBER_ID)
    assert h.heartbeat("m", 1, group_id="") == code(E.INVALID_GROUP_ID)
    # "otherGroup" lives in partition 1 of 2: resign it -> NOT_COORDINATOR, reload -> loading answers NONE
    assert partition_for("otherGroup", 2) == 1
    h.coord.on_resignation(1)
    assert h.heartbeat("m", 1, group_id="otherGroup") == code(E.NOT_COORDINATOR)
    h.coord.on_election(1)
    assert h.heartbeat("m", 1, group_id="otherGroup") == NONE
    assert h.join("", group_id="otherGroup")[0].error_code == code(E.COORDINATOR_LOAD_IN_PROGRESS)
    assert h.sync("m", 1, group_id="otherGroup")[0].error_code == code(E.REBALANCE_IN_PROGRESS)
    h.coord.shutdown()
    assert h.heartbeat("m", 1) == code(E.COORDINATOR_NOT_AVAILABLE)


def test_heartbeat_fenced_instance_id(h):
    out = h.join("", instance_id="instance-1", version=5)
    h.advance(0)
    member_id = out[0].member_id
    assert member_id.startswith("instance-1-")
    generation = out[0].generation_id
    assert h.heartbeat(member_id, generation, instance_id="instance-1") == NONE
    assert h.heartbeat("other-id", generation, instance_id="instance-1") == code(E.FENCED_INSTANCE_ID)
    assert h.heartbeat(member_id, generation, instance_id="instance-2") == code(E.UNKNOWN_MEMBER_ID)


# =============================================================================================
# §1.14 matrix — LeaveGroup
# =============================================================================================

def test_leave_empty_member_level_unknown(h):
    ids, _ = h.empty_group()
    resp = h.leave(ids[0])
    assert resp.error_code == NONE and [m.error_code for m in resp.members] == [code(E.UNKNOWN_MEMBER_ID)]


def test_leave_preparing_removes_and_completes_join(h):
    ids, generation, parked_leader = h.preparing_group()
    resp = h.leave(ids[1])
    assert [m.error_code for m in resp.members] == [NONE]
    # the only remaining member is awaiting join: the join phase completes
    assert parked_leader[0].generation_id == generation + 1
    assert list(h.group().members) == [ids[0]]
    assert h.group().state is COMPLETING_REBALANCE


def test_leave_completing_rebalances(h):
    ids, generation, _ = h.completing_group(2)
    parked = h.sync(ids[1], generation)
    h.leave(ids[0])
    assert h.group().state is PREPARING_REBALANCE
    assert parked[0].error_code == code(E.REBALANCE_IN_PROGRESS)
    assert h.group().leader_id == ids[1]


def test_leave_stable_rebalances(h):
    ids, generation = h.stable_group(2)
    resp = h.leave(ids[1])
    assert resp.members[0].error_code == NONE
    assert h.group().state is PREPARING_REBALANCE and not h.group().has(ids[1])


def test_leave_dead_top_level_error(h):
    ids, _ = h.dead_group()
    resp = h.leave(ids[0])
    assert resp.error_code == code(E.COORDINATOR_NOT_AVAILABLE) and resp.members == []


def test_leave_batch_mixed_and_absent_group(h):
    ids, generation = h.stable_group(3)
    pending = h.join("", version=4, client_id="p")[0].member_id
    resp = h.leave(ids[1], "ghost", pending, MemberIdentity("", group_instance_id="nope"))
    assert [m.error_code for m in resp.members] == [NONE, code(E.UNKNOWN_MEMBER_ID), NONE,
                                                     code(E.UNKNOWN_MEMBER_ID)]
    assert not h.group().is_pending_member(pending)
    absent = h.leave("a", "b", group_id="nogroup")
    assert absent.error_code == NONE and [m.error_code for m in absent.members] == [code(E.UNKNOWN_MEMBER_ID)] * 2


def test_leave_answers_parked_join_of_removed_member(h):
    ids, generation, parked_leader = h.preparing_group()
    h.leave(ids[0])
    assert parked_leader[0].error_code == code(E.UNKNOWN_MEMBER_ID) and parked_leader[0].member_id == ""


# =============================================================================================
# §1.14 matrix — OffsetCommit (and §1.10 precedence)
# =============================================================================================

def test_commit_absent_group(h):
    assert h.commit("", -1) == {TP0: E.NONE}
    assert h.group().state is EMPTY
    assert h.coord.handle_fetch_offsets(GROUP, False, [TP0, TP1])[1][TP0].offset == 10
    assert h.commit("", 1, group_id="g2") == {TP0: E.ILLEGAL_GENERATION}
    assert h.manager.get_group("g2") is None


def test_commit_empty_group(h):
    ids, generation = h.empty_group()
    assert h.commit("whoever", -1) == {TP0: E.NONE}
    assert h.commit(ids[0], generation) == {TP0: E.UNKNOWN_MEMBER_ID}


def test_commit_preparing_stores_with_current_generation(h):
    ids, generation, _ = h.preparing_group()
    assert h.commit(ids[1], generation) == {TP0: E.NONE}
    assert h.group().offsets[TP0].offset == 10


def test_commit_completing_rebalance_in_progress(h):
    ids, generation, _ = h.completing_group(2)
    assert h.commit(ids[1], generation) == {TP0: E.REBALANCE_IN_PROGRESS}
    assert h.commit(ids[1], generation - 1) == {TP0: E.ILLEGAL_GENERATION}
    assert TP0 not in h.group().offsets


def test_commit_stable_and_precedence(h):
    ids, generation = h.stable_group(2)
    assert h.commit("nobody", generation + 3) == {TP0: E.UNKNOWN_MEMBER_ID}
    assert h.commit(ids[1], generation + 1) == {TP0: E.ILLEGAL_GENERATION}
    assert h.commit("", -1) == {TP0: E.UNKNOWN_MEMBER_ID}
    assert h.commit(ids[1], -1) == {TP0: E.ILLEGAL_GENERATION}
    assert h.commit(ids[1], generation, instance_id="i") == {TP0: E.UNKNOWN_MEMBER_ID}
    assert TP0 not in h.group().offsets
    assert h.commit(ids[1], generation) == {TP0: E.NONE}


@pytest.mark.parametrize("log_error, answer", [
    (E.NOT_ENOUGH_REPLICAS, E.COORDINATOR_NOT_AVAILABLE),
    (E.NOT_ENOUGH_REPLICAS_AFTER_APPEND, E.COORDINATOR_NOT_AVAILABLE),
    (E.KAFKA_STORAGE_ERROR, E.NOT_COORDINATOR),
    (E.REQUEST_TIMED_OUT, E.REQUEST_TIMED_OUT),
    (E.RECORD_LIST_TOO_LARGE, E.INVALID_COMMIT_OFFSET_SIZE),
])
def test_commit_append_failure_is_mapped_for_every_partition_and_stores_nothing(log_error, answer):
    """GroupMetadataManager.storeOffsets → maybeConvertOffsetCommitError (Kafka 3.x)."""
    h = Harness()
    ids, generation = h.stable_group(2)
    h.log.inject_append_error(0, log_error)
    offsets = {TP0: OffsetAndMetadata(5), TP1: OffsetAndMetadata(6)}
    assert h.commit(ids[1], generation, offsets=offsets) == {TP0: answer, TP1: answer}
    assert TP0 not in h.group().offsets and TP1 not in h.group().offsets
    assert h.commit(ids[1], generation, offsets=offsets) == {TP0: E.NONE, TP1: E.NONE}  # used up


@pytest.mark.parametrize("log_error, answer", [
    (E.NOT_ENOUGH_REPLICAS, E.COORDINATOR_NOT_AVAILABLE),
    (E.KAFKA_STORAGE_ERROR, E.NOT_COORDINATOR),
    (E.MESSAGE_TOO_LARGE, E.UNKNOWN_SERVER_ERROR),
])
def test_sync_store_failure_maps_the_log_error(log_error, answer):
    """GroupMetadataManager.storeGroup's putCacheCallback (Kafka 3.x)."""
    h = Harness()
    ids, generation, _ = h.completing_group(2)
    h.log.inject_append_error(0, log_error)
    assert h.sync(ids[0], generation, {ids[0]: Assignment([TP0])})[0].error_code == code(answer)
    assert h.group().state is PREPARING_REBALANCE


def test_commit_dead(h):
    ids, generation = h.dead_group()
    assert h.commit(ids[0], generation) == {TP0: E.COORDINATOR_NOT_AVAILABLE}


def test_commit_metadata_too_large_is_per_partition():
    h = Harness(offset_metadata_max_bytes=3)
    result = h.commit("", -1, offsets={TP0: OffsetAndMetadata(1, metadata="abcd"), TP1: OffsetAndMetadata(2, metadata="ab")})
    assert result == {TP0: E.OFFSET_METADATA_TOO_LARGE, TP1: E.NONE}
    assert list(h.group().offsets) == [TP1]


def test_commit_prelude_error_every_partition():
    h = Harness()
    h.coord.on_resignation(0)
    offsets = {TP0: OffsetAndMetadata(1), TP1: OffsetAndMetadata(2)}
    assert h.commit("", -1, offsets=offsets) == {TP0: E.NOT_COORDINATOR, TP1: E.NOT_COORDINATOR}
    assert h.commit("", -1, offsets=offsets, group_id="") == {TP0: E.NOT_COORDINATOR, TP1: E.NOT_COORDINATOR}


def test_commit_resets_session_deadline(h):
    ids, generation = h.stable_group(2)
    h.advance(9000)
    h.heartbeat(ids[0], generation)
    assert h.commit(ids[1], generation) == {TP0: E.NONE}
    h.advance(9000)  # t = 18000: without the commit ids[1] would have expired at 10000
    assert h.group().has(ids[1])


# =============================================================================================
# Rebalance mechanics
# =============================================================================================

def test_two_phase_join_pending_member_blocks_completion_then_joins():
    h = Harness(group_initial_rebalance_delay_ms=0)
    ids, generation = h.stable_group(1)
    pending = h.join("", version=4, client_id="p")[0].member_id
    leader = h.join(ids[0])
    # everyone in members is awaiting, but the pending id is outstanding
    assert leader == [] and h.group().state is PREPARING_REBALANCE
    joined = h.join(pending, version=4, client_id="p")
    assert leader[0].generation_id == joined[0].generation_id == generation + 1
    assert sorted(m.member_id for m in leader[0].members) == sorted([ids[0], pending])


def test_pending_member_expires_after_session_timeout_unblocking_join(h):
    ids, generation = h.stable_group(1)
    t = h.now()
    pending = h.join("", version=4, client_id="p", session=10000)[0].member_id
    leader = h.join(ids[0])
    h.advance_to(t + 9999)
    assert leader == [] and h.group().is_pending_member(pending)
    h.advance_to(t + 10000)
    assert not h.group().is_pending_member(pending)
    assert leader[0].error_code == NONE and leader[0].generation_id == generation + 1
    assert [m.member_id for m in leader[0].members] == [ids[0]]


def test_initial_delay_extends_while_new_members_arrive():
    h = Harness(group_initial_rebalance_delay_ms=3000)
    a = h.join("", version=3, client_id="a", rebalance=10000)
    h.advance_to(2000)
    b = h.join("", version=3, client_id="b", rebalance=10000)
    h.advance_to(3000)
    # first window over, but a member arrived: extended by min(3000, 7000)
    assert a == [] and b == []
    h.advance_to(5999)
    assert a == [] and b == []  # cannot complete early although everybody joined
    h.advance_to(6000)
    assert a[0].generation_id == b[0].generation_id == 1


def test_initial_delay_is_bounded_by_rebalance_timeout():
    h = Harness(group_initial_rebalance_delay_ms=3000)
    outs = [h.join("", version=3, client_id="m0", rebalance=10000)]
    for i, t in enumerate((1000, 4000, 7000, 9500), start=1):
        h.advance_to(t)
        outs.append(h.join("", version=3, client_id="m%d" % i, rebalance=10000))
    h.advance_to(9999)
    assert all(o == [] for o in outs)
    h.advance_to(10000)
    assert all(o[0].generation_id == 1 for o in outs)
    assert len(outs[0][0].members) == 5


def test_join_completion_by_timeout_removes_members_that_did_not_rejoin(h):
    ids, generation = h.stable_group(2)
    t = h.now()
    leader = h.join(ids[0])
    for dt in range(5000, 30000, 5000):
        h.advance_to(t + dt)
        assert h.heartbeat(ids[1], generation) == code(E.REBALANCE_IN_PROGRESS)
    h.advance_to(t + 29999)
    assert leader == []
    h.advance_to(t + 30000)
    assert leader[0].generation_id == generation + 1
    assert [m.member_id for m in leader[0].members] == [ids[0]]
    assert not h.group().has(ids[1])
    assert h.heartbeat(ids[1], generation) == code(E.UNKNOWN_MEMBER_ID)


def test_leader_repick_is_first_remaining_member(h):
    ids, generation = h.stable_group(3)
    h.leave(ids[0])
    assert h.group().leader_id == ids[1]
    b, c = h.join(ids[1]), h.join(ids[2])
    assert b[0].leader == c[0].leader == ids[1]
    assert len(b[0].members) == 2 and c[0].members == []


def test_new_leader_elected_among_rejoined_when_static_leader_did_not_rejoin(h):
    leader = h.join("", instance_id="s-leader", session=60000)
    follower_id, follower = h.join_new_member(client_id="dyn", session=60000)
    h.advance(0)
    leader_id = leader[0].member_id
    generation = leader[0].generation_id
    assert leader[0].leader == leader_id
    h.sync(leader_id, generation, {})
    h.sync(follower_id, generation)
    # the dynamic follower changes metadata; the static leader does not rejoin
    rejoin = h.join(follower_id, protocols=(("range", Subscription(["x"])),), session=60000)
    h.advance(29999)
    assert rejoin == []
    h.advance(1)
    # the static leader is kept (only session expiry removes static members) but loses leadership
    assert rejoin[0].leader == follower_id and rejoin[0].generation_id == generation + 1
    assert h.group().has(leader_id) and h.group().leader_id == follower_id


def test_delayed_sync_expiry_in_completing_rebalance():
    h = Harness()
    ids, generation, _ = h.completing_group(3, rebalance=10000, session=30000)
    t = h.now()
    follower_sync = h.sync(ids[1], generation)
    h.advance_to(t + 9999)
    assert follower_sync == []
    h.advance_to(t + 10000)
    assert follower_sync[0].error_code == code(E.REBALANCE_IN_PROGRESS)
    group = h.group()
    assert list(group.members) == [ids[1]] and group.leader_id == ids[1]
    assert group.state is PREPARING_REBALANCE


def test_delayed_sync_expiry_in_stable():
    h = Harness()
    ids, generation, _ = h.completing_group(3, rebalance=10000, session=30000)
    t = h.now()
    h.sync(ids[0], generation, {ids[0]: Assignment([TP0])})
    assert h.group().state is STABLE
    h.sync(ids[1], generation)
    h.advance_to(t + 10000)
    group = h.group()
    assert group.state is PREPARING_REBALANCE and list(group.members) == ids[:2]
    assert group.generation_id == generation


def test_delayed_sync_completes_silently_when_everyone_synced():
    h = Harness()
    ids, generation = h.stable_group(2, rebalance=10000, session=30000)
    assert h.coord.rebalance_purgatory.watched(("sync", GROUP)) == []
    h.advance(20000)
    assert h.group().state is STABLE


def test_session_expiry_fires_exactly_at_deadline(h):
    ids, generation = h.stable_group(2, session=10000)
    h.advance_to(1000)
    assert h.heartbeat(ids[1], generation) == NONE
    h.advance_to(5000)
    assert h.heartbeat(ids[0], generation) == NONE
    h.advance_to(1000 + 9999)
    assert h.group().has(ids[1])
    h.advance_to(11000)
    assert not h.group().has(ids[1]) and h.group().state is PREPARING_REBALANCE


def test_new_member_parked_join_expires_after_new_member_join_timeout():
    h = Harness(new_member_join_timeout_ms=300000)
    ids, generation = h.stable_group(1, rebalance=600000, session=10000)
    # the stable member keeps heartbeating; a brand new member joins and its JoinGroup is parked
    new_id, new_join = h.join_new_member(client_id="new", rebalance=600000)
    for t in range(5000, 300000, 5000):
        h.advance_to(t)
        h.heartbeat(ids[0], generation)
    assert new_join == []
    h.advance_to(300000)
    assert new_join[0].error_code == code(E.UNKNOWN_MEMBER_ID)
    assert not h.group().has(new_id)


def test_parked_member_is_not_expired_by_session_timeout():
    h = Harness()
    ids, generation = h.stable_group(2, session=10000, rebalance=60000)
    leader = h.join(ids[0])  # parked; not new any more
    for t in range(5000, 40000, 5000):
        h.advance_to(t)
        h.heartbeat(ids[1], generation)
    assert leader == [] and h.group().has(ids[0])


def test_static_member_rejoin_replaces_member_id_without_rebalance(h):
    first = h.join("", instance_id="inst", version=5)
    h.advance(0)
    old_id, generation = first[0].member_id, first[0].generation_id
    h.sync(old_id, generation, {old_id: Assignment([TP0])})
    rejoin = h.join("", instance_id="inst", version=5)
    new_id = rejoin[0].member_id
    assert new_id != old_id and rejoin[0].generation_id == generation
    assert rejoin[0].leader == old_id  # pre-v9: the old leader id
    group = h.group()
    assert group.state is STABLE and list(group.members) == [new_id] and group.leader_id == new_id
    assert h.heartbeat(old_id, generation, instance_id="inst") == code(E.FENCED_INSTANCE_ID)
    v9 = h.join("", instance_id="inst", version=9)
    assert v9[0].skip_assignment is True and v9[0].leader == v9[0].member_id


# =============================================================================================
# GroupMetadata unit checks
# =============================================================================================

def test_illegal_transitions_raise():
    group = GroupMetadata("g")
    with pytest.raises(IllegalStateException):
        group.transition_to(STABLE)
    with pytest.raises(IllegalStateException):
        group.transition_to(COMPLETING_REBALANCE)
    group.transition_to(PREPARING_REBALANCE)
    with pytest.raises(IllegalStateException):
        group.transition_to(PREPARING_REBALANCE)
    group.transition_to(DEAD)
    group.transition_to(DEAD)
    assert group.state is DEAD


def _member(member_id, protocols=PROTOCOLS, rebalance=1000):
    return MemberMetadata(member_id, None, "c", "h", rebalance, 10000, "consumer", protocols)


def test_select_protocol_votes_and_tie_break():
    group = GroupMetadata("g")
    a = _member("a", (("range", SUB), ("roundrobin", SUB)))
    b = _member("b", (("roundrobin", SUB), ("range", SUB)))
    group.add(a)
    group.add(b)
    assert group.select_protocol() == "range"  # 1:1 tie -> first candidate in order
    c = _member("c", (("roundrobin", SUB), ("range", SUB), ("sticky", SUB)))
    group.add(c)
    assert group.select_protocol() == "roundrobin"
    assert group.candidate_protocols() == ["range", "roundrobin"]


def test_add_remove_leader_and_awaiting_counts():
    group = GroupMetadata("g")
    group.add(_member("a", rebalance=5), callback=lambda r: None)
    group.add(_member("b", rebalance=9))
    group.add(_member("c", rebalance=7), callback=lambda r: None)
    assert group.leader_id == "a" and group.num_members_awaiting_join == 2
    assert group.rebalance_timeout_ms() == 9
    assert not group.has_all_members_joined()
    group.remove("b")
    assert group.has_all_members_joined() and group.leader_id == "a"
    group.add_pending_member("p")
    assert not group.has_all_members_joined()
    group.remove("a")
    assert group.leader_id == "c" and group.num_members_awaiting_join == 1
    assert group.supported_protocols["range"] == 1


def test_a_member_cannot_be_added_as_a_pending_member():
    # GroupMetadata.addPendingMember: "Attempt to add pending member ... which is already a
    # stable member of the group" (IllegalStateException); otherwise true iff newly added.
    group = GroupMetadata("g")
    group.add(_member("a"))
    with pytest.raises(IllegalStateException, match="already a stable member"):
        group.add_pending_member("a")
    assert "a" not in group.pending_members
    assert group.add_pending_member("p") is True
    assert group.add_pending_member("p") is False


class _FailsOnce:
    """A response callback that raises the first time it is called (a broken network send)."""

    def __init__(self):
        self.results = []

    def __call__(self, result):
        self.results.append(result)
        if len(self.results) == 1:
            raise RuntimeError("send failed")


def test_a_failing_join_callback_is_answered_again_with_unknown_server_error():
    # GroupMetadata.maybeInvokeJoinCallback catches the callback's Throwable and calls it again
    # with JoinGroupResult(member.memberId, UNKNOWN_SERVER_ERROR); the member is no longer parked.
    group = GroupMetadata("g")
    callback = _FailsOnce()
    a = _member("a")
    group.add(a, callback=callback)
    assert group.num_members_awaiting_join == 1
    group.maybe_invoke_join_callback(a, "the join result")
    assert len(callback.results) == 2 and callback.results[0] == "the join result"
    retry = callback.results[1]
    assert (retry.error_code, retry.member_id, retry.generation_id, retry.protocol_name, retry.members) == (
        code(E.UNKNOWN_SERVER_ERROR), "a", -1, None, [])
    assert a.awaiting_join_callback is None and group.num_members_awaiting_join == 0


def test_a_failing_sync_callback_is_answered_again_with_unknown_server_error():
    # GroupMetadata.maybeInvokeSyncCallback: SyncGroupResult(UNKNOWN_SERVER_ERROR) on a failure.
    group = GroupMetadata("g")
    a = _member("a")
    group.add(a)
    callback = _FailsOnce()
    a.awaiting_sync_callback = callback
    assert group.maybe_invoke_sync_callback(a, "the sync result") is True
    assert len(callback.results) == 2
    retry = callback.results[1]
    assert (retry.error_code, retry.assignment, retry.protocol_name) == (code(E.UNKNOWN_SERVER_ERROR), None, None)
    assert a.awaiting_sync_callback is None
    assert group.maybe_invoke_sync_callback(a, "again") is False


def test_member_has_satisfied_heartbeat_rules():
    m = _member("m")
    m.is_new = True
    m.awaiting_join_callback = lambda r: None
    assert m.has_satisfied_heartbeat() is False
    m.is_new = False
    assert m.has_satisfied_heartbeat() is True
    m.awaiting_join_callback = None
    assert m.has_satisfied_heartbeat() is False
    m.heartbeat_satisfied = True
    assert m.has_satisfied_heartbeat() is True
    assert m.matches((("range", Subscription(["topic"])),))
    assert not m.matches((("range", Subscription(["other"])),))
    assert not m.matches((("range", SUB), ("rr", SUB)))


# =============================================================================================
# Persistence, unload/load, leadership moves (Cluster)
# =============================================================================================

def req_join(member_id="", session=10000, rebalance=30000, group_id=GROUP):
    return JoinGroupRequestData(group_id=group_id, session_timeout_ms=session, rebalance_timeout_ms=rebalance,
                                member_id=member_id, protocols=[JoinGroupRequestProtocol("range", SUB)])


class Client:
    """Sends requests to brokers of a cluster and records responses."""

    def __init__(self, cluster, client_id="consumer"):
        self.cluster = cluster
        self.client_id = client_id

    def send(self, broker_id, request, version):
        out = []
        self.cluster.broker(broker_id).handle(request, version, self.client_id, out.append)
        return out


def stable_group_on(cluster, broker_id, n=2):
    client = Client(cluster)
    ids, outs = [], []
    for i in range(n):
        first = client.send(broker_id, req_join(), 5)[0]
        assert first.error_code == code(E.MEMBER_ID_REQUIRED)
        ids.append(first.member_id)
        outs.append(client.send(broker_id, req_join(first.member_id), 5))
    delay = cluster.config.group_initial_rebalance_delay_ms
    while not outs[0]:  # the initial delay is extended while members arrive
        cluster.advance_clock(cluster.time.milliseconds() + delay)
    generation = outs[0][0].generation_id
    assignments = [SyncGroupRequestAssignment(m, Assignment([TopicPartition("topic", i)])) for i, m in enumerate(ids)]
    for i, m in enumerate(ids):
        out = client.send(broker_id, SyncGroupRequestData(GROUP, generation, m, protocol_type="consumer",
                                                          protocol_name="range",
                                                          assignments=assignments if i == 0 else []), 5)
        assert out[0].error_code == NONE
    return client, ids, generation


def test_leadership_move_unloads_and_new_leader_loads_persisted_record_only():
    cluster = Cluster(2, offsets_partitions=50)
    p = cluster.partition_for(GROUP)
    assert p == 18 and cluster.coordinator_for(GROUP) == 0
    client, ids, generation = stable_group_on(cluster, 0)
    old = cluster.broker(0).group_coordinator.group_manager.get_group(GROUP)
    # unpersisted in-memory progress: a rebalance to generation + 1, leader parked in SyncGroup
    leader_join = client.send(0, req_join(ids[0]), 5)
    follower_join = client.send(0, req_join(ids[1]), 5)
    assert old.state is COMPLETING_REBALANCE and old.generation_id == generation + 1
    parked_sync = client.send(0, SyncGroupRequestData(GROUP, generation + 1, ids[1], protocol_type="consumer",
                                                      protocol_name="range"), 5)
    assert parked_sync == []

    cluster.move_leadership(p, 1)
    assert parked_sync[0].error_code == code(E.NOT_COORDINATOR)
    assert old.state is DEAD
    assert client.send(0, HeartbeatRequestData(GROUP, generation + 1, ids[0]), 4)[0].error_code == code(E.NOT_COORDINATOR)
    # the new coordinator is loading
    assert client.send(1, HeartbeatRequestData(GROUP, generation, ids[0]), 4)[0].error_code == NONE
    assert client.send(1, req_join(ids[0]), 5)[0].error_code == code(E.COORDINATOR_LOAD_IN_PROGRESS)
    fc = client.send(0, FindCoordinatorRequestData(GROUP), 3)[0]
    assert (fc.error_code, fc.node_id, fc.host) == (NONE, 1, "broker-1")

    assert cluster.finish_loading(1) == [p]
    loaded = cluster.broker(1).group_coordinator.group_manager.get_group(GROUP)
    assert loaded is not old
    assert loaded.state is STABLE and loaded.generation_id == generation
    assert list(loaded.members) == ids and loaded.leader_id == ids[0]
    assert loaded.members[ids[1]].assignment == Assignment([TopicPartition("topic", 1)])
    assert client.send(1, HeartbeatRequestData(GROUP, generation + 1, ids[0]), 4)[0].error_code == code(E.ILLEGAL_GENERATION)
    assert client.send(1, HeartbeatRequestData(GROUP, generation, ids[0]), 4)[0].error_code == NONE


def test_unload_in_preparing_rebalance_answers_parked_join_not_coordinator():
    cluster = Cluster(2, offsets_partitions=50)
    client, ids, generation = stable_group_on(cluster, 0)
    parked = client.send(0, req_join(ids[0]), 5)
    assert parked == []
    cluster.move_leadership(18, 1)
    assert parked[0].error_code == code(E.NOT_COORDINATOR) and parked[0].member_id == ids[0]


def test_loaded_members_get_fresh_session_deadlines():
    cluster = Cluster(2, offsets_partitions=50)
    client, ids, generation = stable_group_on(cluster, 0)
    cluster.advance_clock(8000)
    cluster.move_leadership(18, 1)
    cluster.finish_loading(1)
    cluster.advance_clock(17999)  # 8000 + 10000 - 1
    group = cluster.broker(1).group_coordinator.group_manager.get_group(GROUP)
    assert group.state is STABLE and len(group.members) == 2
    cluster.advance_clock(18000)
    assert group.members == {} and group.state is EMPTY


def test_empty_group_record_and_offsets_survive_move():
    cluster = Cluster(2, offsets_partitions=50)
    client, ids, generation = stable_group_on(cluster, 0)
    commit = OffsetCommitRequestData(GROUP, generation, ids[0], topics=[OffsetCommitRequestTopic(
        "topic", [OffsetCommitRequestPartition(0, 42, "meta")])])
    assert client.send(0, commit, 8)[0].topics[0].partitions[0].error_code == NONE
    leave = client.send(0, LeaveGroupRequestData(GROUP, [MemberIdentity(ids[0]), MemberIdentity(ids[1])]), 5)[0]
    assert [m.error_code for m in leave.members] == [NONE, NONE]
    cluster.move_leadership(18, 1)
    cluster.finish_loading(1)
    group = cluster.broker(1).group_coordinator.group_manager.get_group(GROUP)
    assert group.state is EMPTY and group.generation_id == generation + 1
    fetch = client.send(1, OffsetFetchRequestData(GROUP, [OffsetFetchRequestTopic("topic", [0, 1])]), 7)[0]
    parts = fetch.topics[0].partitions
    assert (parts[0].committed_offset, parts[0].metadata) == (42, "meta")
    assert parts[1].committed_offset == -1


def test_crash_moves_leadership_to_chosen_live_broker_and_loads():
    cluster = Cluster(3, offsets_partitions=50)
    client, ids, generation = stable_group_on(cluster, 0)
    cluster.crash(0)
    new_leader = cluster.coordinator_for(GROUP)
    assert new_leader == 1  # default chooser: next live broker after 18 % 3 == 0
    assert client.send(1, req_join(ids[0]), 5)[0].error_code == code(E.COORDINATOR_LOAD_IN_PROGRESS)
    cluster.finish_loading(1)
    assert client.send(1, HeartbeatRequestData(GROUP, generation, ids[1]), 4)[0].error_code == NONE
    with pytest.raises(IllegalStateException):
        client.send(0, HeartbeatRequestData(GROUP, generation, ids[1]), 4)
    cluster.restart(0)
    assert client.send(0, HeartbeatRequestData(GROUP, generation, ids[1]), 4)[0].error_code == code(E.NOT_COORDINATOR)


def test_store_group_from_non_leader_fails_not_coordinator():
    cluster = Cluster(2, offsets_partitions=50)
    errors = []
    manager = cluster.broker(1).group_coordinator.group_manager
    group = GroupMetadata(GROUP)
    manager.store_group(group, {}, errors.append)
    assert errors == [E.NOT_COORDINATOR]


# =============================================================================================
# FindCoordinator / partitionFor (§2) and KafkaApis dispatch
# =============================================================================================

@pytest.mark.parametrize("group_id,hash_code,p50,p2", WORKED_VALUES)
def test_partition_for_worked_values(group_id, hash_code, p50, p2):
    assert java_string_hash_code(group_id) == hash_code
    assert partition_for(group_id, 50) == p50
    assert partition_for(group_id, 2) == p2


def test_string_hash_code_uses_utf16_code_units():
    assert java_string_hash_code("é") == 233
    # U+1F600 is the surrogate pair D83D DE00 in UTF-16
    assert java_string_hash_code("\U0001F600") == ((31 * 0xD83D + 0xDE00) & 0xFFFFFFFF)


def test_find_coordinator_worked_values():
    cluster = Cluster(2, offsets_partitions=50)
    client = Client(cluster)
    for key, node in (("groupId", 0), ("otherGroup", 1), ("", 0), ("polygenelubricants", 0)):
        resp = client.send(1, FindCoordinatorRequestData(key), 3)[0]
        assert (resp.error_code, resp.node_id, resp.port) == (NONE, node, 9092), key


def test_find_coordinator_not_available_without_live_leader():
    cluster = Cluster(2, offsets_partitions=50, chooser=lambda p, live, n: None)
    client = Client(cluster)
    cluster.crash(0)
    resp = client.send(1, FindCoordinatorRequestData(GROUP), 3)[0]
    assert resp.error_code == code(E.COORDINATOR_NOT_AVAILABLE) and resp.node_id == -1
    assert client.send(1, FindCoordinatorRequestData("otherGroup"), 3)[0].node_id == 1
    cluster.restart(0)
    assert cluster.coordinator_for(GROUP) is None  # the chooser still picks nobody


def test_broker_join_version_decides_member_id_required():
    cluster = Cluster(1, offsets_partitions=50)
    client = Client(cluster)
    assert client.send(0, req_join(), 4)[0].error_code == code(E.MEMBER_ID_REQUIRED)
    assert client.send(0, req_join(), 3) == []
    static = JoinGroupRequestData(GROUP, 10000, 30000, group_instance_id="inst",
                                  protocols=[JoinGroupRequestProtocol("range", SUB)])
    assert client.send(0, static, 5) == []  # static members never get MEMBER_ID_REQUIRED


def test_broker_sync_v5_requires_protocol_type_and_name():
    cluster = Cluster(1, offsets_partitions=50)
    client = Client(cluster)
    resp = client.send(0, SyncGroupRequestData(GROUP, 1, "m"), 5)[0]
    assert resp.error_code == code(E.INCONSISTENT_GROUP_PROTOCOL)
    assert client.send(0, SyncGroupRequestData(GROUP, 1, "m"), 4)[0].error_code == code(E.UNKNOWN_MEMBER_ID)


def test_broker_offset_commit_unknown_topic_and_version_check():
    cluster = Cluster(1, offsets_partitions=50, topic_partitions=2)
    client = Client(cluster)
    req = OffsetCommitRequestData(GROUP, topics=[
        OffsetCommitRequestTopic("topic", [OffsetCommitRequestPartition(1, 5), OffsetCommitRequestPartition(2, 5)]),
        OffsetCommitRequestTopic("nope", [OffsetCommitRequestPartition(0, 5)])])
    resp = client.send(0, req, 8)[0]
    assert [[p.error_code for p in t.partitions] for t in resp.topics] == [
        [NONE, code(E.UNKNOWN_TOPIC_OR_PARTITION)], [code(E.UNKNOWN_TOPIC_OR_PARTITION)]]
    assert client.send(0, req, 9)[0].topics[0].partitions[0].error_code == code(E.UNSUPPORTED_VERSION)


def test_broker_session_expiry_at_deadline_precedes_request():
    cluster = Cluster(1, offsets_partitions=50)
    client, ids, generation = stable_group_on(cluster, 0)
    t = cluster.time.milliseconds()
    cluster.time.set_current_time_ms(t + 9999)
    assert client.send(0, HeartbeatRequestData(GROUP, generation, ids[0]), 4)[0].error_code == NONE
    cluster.time.set_current_time_ms(t + 10000)
    # ids[1]'s deadline (t + 10000) is reached: its expiry runs before the request
    assert client.send(0, HeartbeatRequestData(GROUP, generation, ids[1]), 4)[0].error_code == code(E.UNKNOWN_MEMBER_ID)
    assert client.send(0, HeartbeatRequestData(GROUP, generation, ids[0]), 4)[0].error_code == code(E.REBALANCE_IN_PROGRESS)


def test_broker_metadata_and_api_versions():
    cluster = Cluster(3, offsets_partitions=4, topic_partitions=2)
    client = Client(cluster)
    versions = client.send(0, ApiVersionsRequestData(), 3)[0]
    assert {v.api_key: v.max_version for v in versions.api_keys}["JoinGroup"] == 9
    md = client.send(0, MetadataRequestData([MetadataRequestTopic("topic"), MetadataRequestTopic("x")]), 12)[0]
    assert [b.node_id for b in md.brokers] == [0, 1, 2]
    assert [p.leader_id for p in md.topics[0].partitions] == [0, 1]
    assert md.topics[1].error_code == code(E.UNKNOWN_TOPIC_OR_PARTITION)
    cluster.crash(1)
    md = client.send(0, MetadataRequestData(None), 12)[0]
    assert [b.node_id for b in md.brokers] == [0, 2]
    assert [p.leader_id for p in md.topics[0].partitions] == [0, 2]
    offsets_topic = md.topics[-1]
    assert offsets_topic.is_internal and [p.leader_id for p in offsets_topic.partitions] == [0, 2, 2, 0]


def test_leave_group_old_version_collapses_member_errors():
    cluster = Cluster(1, offsets_partitions=50)
    client, ids, generation = stable_group_on(cluster, 0)
    resp = client.send(0, LeaveGroupRequestData(GROUP, [MemberIdentity("ghost")]), 2)[0]
    assert resp.error_code == code(E.UNKNOWN_MEMBER_ID) and resp.members == []


def test_determinism_same_seed_same_member_ids():
    def run():
        cluster = Cluster(2, offsets_partitions=50, rng=random.Random(99))
        _, ids, _ = stable_group_on(cluster, 0, n=3)
        return ids

    assert run() == run()
