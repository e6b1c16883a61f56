"""Hypothesis strategies: :mod:`impl.protocol` messages representable exactly in one version.

``message(api, direction, version)`` draws values whose fields absent from *version* hold what
reading that version gives them (the schema default, or the version adaptation documented in
:mod:`impl.wire.translate`), so ``decode(encode(x, v), v) == x`` must hold exactly.
"""

from __future__ import annotations

import base64

from hypothesis import strategies as st
from kio.schema.errors import ErrorCode

from impl import protocol as P
from impl.wire.apis import API_NAMES

I16 = st.integers(-2 ** 15, 2 ** 15 - 1)
I32 = st.integers(-2 ** 31, 2 ** 31 - 1)
I64 = st.integers(-2 ** 63, 2 ** 63 - 1)
MS = st.integers(-1, 2 ** 31 - 1)
TEXT = st.text(max_size=6)
NONEMPTY = st.text(min_size=1, max_size=6)
OPT_TEXT = st.none() | TEXT
BYTES = st.binary(max_size=8)
ERROR = st.sampled_from(sorted(e.value for e in ErrorCode))
TOPIC_ID = st.none() | st.binary(min_size=16, max_size=16).filter(any).map(
    lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode())


def small_list(s, min_size=0, max_size=3):
    return st.lists(s, min_size=min_size, max_size=max_size)


TOPIC_PARTITION = st.builds(P.TopicPartition, TEXT, I32)
SUBSCRIPTION = st.builds(P.Subscription, topics=small_list(TEXT), user_data=st.none() | BYTES,
                         owned_partitions=small_list(TOPIC_PARTITION), generation_id=I32,
                         rack_id=st.none() | NONEMPTY)
ASSIGNMENT = st.builds(P.Assignment, partitions=small_list(TOPIC_PARTITION), user_data=st.none() | BYTES)


def _when(cond, s, default):
    return s if cond else st.just(default)


def api_versions_request(v):
    return st.builds(P.ApiVersionsRequestData, _when(v >= 3, TEXT, ""), _when(v >= 3, TEXT, ""))


def api_versions_response(v):
    name = st.sampled_from(sorted(API_NAMES.values()) + ["ApiKey999"])
    return st.builds(P.ApiVersionsResponseData, ERROR,
                     small_list(st.builds(P.ApiVersion, name, I16, I16)), _when(v >= 1, I32, 0))


def metadata_request(v):
    topic = st.builds(P.MetadataRequestTopic, TEXT, _when(v >= 10, TOPIC_ID, None))
    topics = st.none() | small_list(topic, min_size=1 if v == 0 else 0)
    return st.builds(P.MetadataRequestData, topics, _when(v >= 4, st.booleans(), True),
                     _when(v >= 8, st.booleans(), False))


def metadata_response(v):
    broker = st.builds(P.MetadataResponseBroker, I32, TEXT, I32, _when(v >= 1, OPT_TEXT, None))
    part = st.builds(P.MetadataResponsePartition, I32, I32, ERROR, _when(v >= 7, I32, -1), small_list(I32),
                     small_list(I32), _when(v >= 5, small_list(I32), []))
    topic = st.builds(P.MetadataResponseTopic, TEXT, ERROR, _when(v >= 10, TOPIC_ID, None),
                      _when(v >= 1, st.booleans(), False), small_list(part))
    return st.builds(P.MetadataResponseData, small_list(broker), small_list(topic),
                     _when(v >= 2, OPT_TEXT, None), _when(v >= 1, I32, -1), _when(v >= 3, I32, 0))


def find_coordinator_request(v):
    if v >= 4:
        single = st.builds(P.FindCoordinatorRequestData, TEXT, st.integers(0, 1))
        batch = st.builds(P.FindCoordinatorRequestData, st.just(""), st.integers(0, 1),
                          small_list(TEXT, min_size=2, max_size=4))
        none = st.builds(P.FindCoordinatorRequestData, st.just(""), st.integers(0, 1), st.just([]))
        return single | batch | none.map(lambda r: P.FindCoordinatorRequestData("", r.key_type, []))
    return st.builds(P.FindCoordinatorRequestData, TEXT, _when(v >= 1, st.integers(0, 1), 0))


def _find_coordinator_response_v4(cs, throttle):
    if len(cs) == 1:
        c = cs[0]
        return P.FindCoordinatorResponseData(c.error_code, c.node_id, c.host, c.port, c.error_message, throttle, cs)
    return P.FindCoordinatorResponseData(throttle_time_ms=throttle, coordinators=cs)


def find_coordinator_response(v):
    if v >= 4:
        c = st.builds(P.Coordinator, TEXT, I32, TEXT, I32, ERROR, OPT_TEXT)
        return st.builds(_find_coordinator_response_v4, small_list(c), I32)
    return st.builds(P.FindCoordinatorResponseData, ERROR, I32, TEXT, I32, _when(v >= 1, OPT_TEXT, None),
                     _when(v >= 1, I32, 0))


def join_group_request(v):
    def build(group, session, rebalance, member, gid, consumer, protocols, reason):
        return P.JoinGroupRequestData(group, session, rebalance, member, gid,
                                      "consumer" if consumer else "connect",
                                      [P.JoinGroupRequestProtocol(n, s if consumer else b) for n, s, b in protocols],
                                      reason)
    return st.builds(build, TEXT, MS, _when(v >= 1, MS, -1), TEXT, _when(v >= 5, OPT_TEXT, None), st.booleans(),
                     small_list(st.tuples(TEXT, SUBSCRIPTION, BYTES)), _when(v >= 8, OPT_TEXT, None))


def join_group_response(v):
    def build(error, gen, ptype, pname, leader, member, members, skip, throttle):
        consumer = v < 7 or ptype == "consumer"
        return P.JoinGroupResponseData(error, gen, ptype, pname, leader, member,
                                       [P.JoinGroupResponseMember(m, g, s if consumer else b)
                                        for m, g, s, b in members], skip, throttle)
    ptype = st.sampled_from([None, "consumer", "connect"]) if v >= 7 else st.just(None)
    pname = OPT_TEXT if v >= 7 else st.none() | NONEMPTY
    return st.builds(build, ERROR, I32, ptype, pname, TEXT, TEXT,
                     small_list(st.tuples(TEXT, _when(v >= 5, OPT_TEXT, None), SUBSCRIPTION, BYTES)),
                     _when(v >= 9, st.booleans(), False), _when(v >= 2, I32, 0))


def sync_group_request(v):
    return st.builds(P.SyncGroupRequestData, TEXT, I32, TEXT, _when(v >= 3, OPT_TEXT, None),
                     _when(v >= 5, OPT_TEXT, None), _when(v >= 5, OPT_TEXT, None),
                     small_list(st.builds(P.SyncGroupRequestAssignment, TEXT, ASSIGNMENT)))


def sync_group_response(v):
    return st.builds(P.SyncGroupResponseData, ERROR, _when(v >= 5, OPT_TEXT, None), _when(v >= 5, OPT_TEXT, None),
                     st.none() | ASSIGNMENT, _when(v >= 1, I32, 0))


def heartbeat_request(v):
    return st.builds(P.HeartbeatRequestData, TEXT, I32, TEXT, _when(v >= 3, OPT_TEXT, None))


def heartbeat_response(v):
    return st.builds(P.HeartbeatResponseData, ERROR, _when(v >= 1, I32, 0))


def leave_group_request(v):
    if v >= 3:
        member = st.builds(P.MemberIdentity, TEXT, OPT_TEXT, _when(v >= 5, OPT_TEXT, None))
        return st.builds(P.LeaveGroupRequestData, TEXT, small_list(member))
    return st.builds(P.LeaveGroupRequestData, TEXT, small_list(st.builds(P.MemberIdentity, TEXT), 1, 1))


def leave_group_response(v):
    members = small_list(st.builds(P.MemberResponse, TEXT, OPT_TEXT, ERROR)) if v >= 3 else st.just([])
    return st.builds(P.LeaveGroupResponseData, ERROR, members, _when(v >= 1, I32, 0))


def offset_commit_request(v):
    part = st.builds(P.OffsetCommitRequestPartition, I32, I64, OPT_TEXT, _when(v >= 6, I32, -1))
    topic = st.builds(P.OffsetCommitRequestTopic, TEXT, small_list(part))
    return st.builds(P.OffsetCommitRequestData, TEXT, I32, TEXT, _when(v >= 7, OPT_TEXT, None),
                     _when(v <= 4, st.integers(-1, 2 ** 40), -1), small_list(topic))


def offset_commit_response(v):
    part = st.builds(P.OffsetCommitResponsePartition, I32, ERROR)
    return st.builds(P.OffsetCommitResponseData, small_list(st.builds(P.OffsetCommitResponseTopic, TEXT,
                                                                      small_list(part))), _when(v >= 3, I32, 0))


def offset_fetch_request(v):
    topics = small_list(st.builds(P.OffsetFetchRequestTopic, TEXT, small_list(I32)))
    return st.builds(P.OffsetFetchRequestData, TEXT, (st.none() | topics) if v >= 2 else topics,
                     _when(v >= 7, st.booleans(), False))


def offset_fetch_response(v):
    part = st.builds(P.OffsetFetchResponsePartition, I32, I64, _when(v >= 5, I32, -1), OPT_TEXT, ERROR)
    topic = st.builds(P.OffsetFetchResponseTopic, TEXT, small_list(part))
    return st.builds(P.OffsetFetchResponseData, small_list(topic), _when(v >= 2, ERROR, 0), _when(v >= 3, I32, 0))


def consumer_group_heartbeat_request(v):
    owned = st.none() | small_list(st.builds(P.ConsumerGroupHeartbeatTopicPartitions, TOPIC_ID, small_list(I32)))
    return st.builds(P.ConsumerGroupHeartbeatRequestData, TEXT, TEXT, I32, OPT_TEXT, OPT_TEXT, MS,
                     st.none() | small_list(TEXT), _when(v >= 1, OPT_TEXT, None), OPT_TEXT, owned)


def consumer_group_heartbeat_response(v):
    assignment = st.none() | st.builds(P.ConsumerGroupHeartbeatAssignment, small_list(
        st.builds(P.ConsumerGroupHeartbeatTopicPartitions, TOPIC_ID, small_list(I32))))
    return st.builds(P.ConsumerGroupHeartbeatResponseData, ERROR, OPT_TEXT, OPT_TEXT, I32, MS, assignment, MS)


STRATEGIES = {
    "ApiVersions": (api_versions_request, api_versions_response),
    "Metadata": (metadata_request, metadata_response),
    "FindCoordinator": (find_coordinator_request, find_coordinator_response),
    "JoinGroup": (join_group_request, join_group_response),
    "SyncGroup": (sync_group_request, sync_group_response),
    "Heartbeat": (heartbeat_request, heartbeat_response),
    "LeaveGroup": (leave_group_request, leave_group_response),
    "OffsetCommit": (offset_commit_request, offset_commit_response),
    "OffsetFetch": (offset_fetch_request, offset_fetch_response),
    "ConsumerGroupHeartbeat": (consumer_group_heartbeat_request, consumer_group_heartbeat_response),
}


def message(api: str, direction: str, version: int):
    req, resp = STRATEGIES[api]
    return (req if direction == "request" else resp)(version)
