"""Golden bytes from an independent encoder: kafka-python 3.0.12's ``kafka.protocol`` (its own
implementation of Kafka's JSON schemas; a test-only dependency).

* Hand-built messages of each API, in the versions the clients groupcheck meets send (see
  ``shared/docs/wire.md``) and a few more: our frame must equal kafka-python's byte for byte.
* ConsumerProtocol subscription/assignment bytes against kafka-python's
  ``ConsumerProtocolSubscription`` / ``ConsumerProtocolAssignment``.
* Every API and version, random values: kafka-python reads our frame and writes it back
  identically (so every field has kafka-python's layout and length, and nothing is left over).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

kp_group = pytest.importorskip("kafka.protocol.consumer.group", reason="kafka-python (the test extra) is not installed")
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription  # noqa: E402
from kafka.protocol.metadata.api_versions import ApiVersionsRequest, ApiVersionsResponse  # noqa: E402
from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse  # noqa: E402
from kafka.protocol.metadata.metadata import MetadataRequest, MetadataResponse  # noqa: E402

from impl import protocol as P  # noqa: E402
from impl.wire import CODEC_VERSIONS, TRANSLATED, encode_request  # noqa: E402
from impl.wire.codec import encode_response_as  # noqa: E402
from impl.wire.consumer_protocol import encode_assignment, encode_subscription  # noqa: E402
from tests.wire.strategies import message  # noqa: E402

G = kp_group
CORR, CLIENT = 1234, "golden-client"
SUB = P.Subscription(["orders", "audit"], b"\x01\x02", [P.TopicPartition("orders", 0), P.TopicPartition("orders", 3),
                                                         P.TopicPartition("audit", 1)], 7, "rack-a")
ASG = P.Assignment([P.TopicPartition("orders", 0), P.TopicPartition("orders", 1)], b"ud")


def kp_request(obj, **kw):
    obj.with_header(correlation_id=CORR, client_id=CLIENT)
    return bytes(obj.encode(header=True, framed=True))


def kp_response(obj):
    obj.with_header(correlation_id=CORR)
    return bytes(obj.encode(header=True, framed=True))


def test_subscription_and_assignment_bytes_match_kafka_python():
    kp = ConsumerProtocolSubscription(
        version=3, topics=["orders", "audit"], user_data=b"\x01\x02",
        owned_partitions=[ConsumerProtocolSubscription.TopicPartition(topic="orders", partitions=[0, 3]),
                          ConsumerProtocolSubscription.TopicPartition(topic="audit", partitions=[1])],
        generation_id=7, rack_id="rack-a")
    assert encode_subscription(SUB) == bytes(kp.encode(version=3))  # kafka-python writes the version prefix too
    kpa = ConsumerProtocolAssignment(version=3, assigned_partitions=[
        ConsumerProtocolAssignment.TopicPartition(topic="orders", partitions=[0, 1])], user_data=b"ud")
    assert encode_assignment(ASG) == bytes(kpa.encode(version=3))


def join_request(v):
    ours = P.JoinGroupRequestData("grp", 10000, 30000, "member-1", "inst-1" if v >= 5 else None, "consumer",
                                  [P.JoinGroupRequestProtocol("range", SUB), P.JoinGroupRequestProtocol("roundrobin", SUB)],
                                  "rejoin" if v >= 8 else None)
    J = G.JoinGroupRequest
    theirs = J(version=v, group_id="grp", session_timeout_ms=10000, rebalance_timeout_ms=30000, member_id="member-1",
               group_instance_id=ours.group_instance_id, protocol_type="consumer",
               protocols=[J.JoinGroupRequestProtocol(name="range", metadata=encode_subscription(SUB)),
                          J.JoinGroupRequestProtocol(name="roundrobin", metadata=encode_subscription(SUB))],
               reason=ours.reason)
    return ours, theirs


def join_response(v):
    members = [P.JoinGroupResponseMember("member-1", "inst-1" if v >= 5 else None, SUB),
               P.JoinGroupResponseMember("member-2", None, SUB)]
    ours = P.JoinGroupResponseData(0, 5, "consumer" if v >= 7 else None, "range", "member-1", "member-1", members,
                                   v >= 9, 17 if v >= 2 else 0)
    R = G.JoinGroupResponse
    theirs = R(version=v, throttle_time_ms=ours.throttle_time_ms, error_code=0, generation_id=5,
               protocol_type=ours.protocol_type, protocol_name="range", leader="member-1",
               skip_assignment=ours.skip_assignment, member_id="member-1",
               members=[R.JoinGroupResponseMember(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                                  metadata=encode_subscription(SUB)) for m in members])
    return ours, theirs


def sync_request(v):
    ours = P.SyncGroupRequestData("grp", 5, "member-1", "inst-1" if v >= 3 else None,
                                  "consumer" if v >= 5 else None, "range" if v >= 5 else None,
                                  [P.SyncGroupRequestAssignment("member-1", ASG)])
    S = G.SyncGroupRequest
    theirs = S(version=v, group_id="grp", generation_id=5, member_id="member-1",
               group_instance_id=ours.group_instance_id, protocol_type=ours.protocol_type,
               protocol_name=ours.protocol_name,
               assignments=[S.SyncGroupRequestAssignment(member_id="member-1", assignment=encode_assignment(ASG))])
    return ours, theirs


def sync_response(v):
    ours = P.SyncGroupResponseData(0, "consumer" if v >= 5 else None, "range" if v >= 5 else None, ASG,
                                   3 if v >= 1 else 0)
    theirs = G.SyncGroupResponse(version=v, throttle_time_ms=ours.throttle_time_ms, error_code=0,
                                 protocol_type=ours.protocol_type, protocol_name=ours.protocol_name,
                                 assignment=encode_assignment(ASG))
    return ours, theirs


def heartbeat_request(v):
    ours = P.HeartbeatRequestData("grp", 5, "member-1", "inst-1" if v >= 3 else None)
    return ours, G.HeartbeatRequest(version=v, group_id="grp", generation_id=5, member_id="member-1",
                                    group_instance_id=ours.group_instance_id)


def heartbeat_response(v):
    return (P.HeartbeatResponseData(27, 9 if v >= 1 else 0),
            G.HeartbeatResponse(version=v, throttle_time_ms=9 if v >= 1 else 0, error_code=27))


def leave_request(v):
    L = G.LeaveGroupRequest
    if v < 3:
        return (P.LeaveGroupRequestData("grp", [P.MemberIdentity("member-1")]),
                L(version=v, group_id="grp", member_id="member-1"))
    ours = P.LeaveGroupRequestData("grp", [P.MemberIdentity("member-1", "inst-1", "bye" if v >= 5 else None),
                                           P.MemberIdentity("member-2")])
    return ours, L(version=v, group_id="grp", members=[
        L.MemberIdentity(member_id=m.member_id, group_instance_id=m.group_instance_id, reason=m.reason)
        for m in ours.members])


def leave_response(v):
    R = G.LeaveGroupResponse
    members = [P.MemberResponse("member-1", "inst-1", 0), P.MemberResponse("member-2", None, 25)] if v >= 3 else []
    return (P.LeaveGroupResponseData(0, members, 4 if v >= 1 else 0),
            R(version=v, throttle_time_ms=4 if v >= 1 else 0, error_code=0, members=[
                R.MemberResponse(member_id=m.member_id, group_instance_id=m.group_instance_id, error_code=m.error_code)
                for m in members]))


def find_request(v):
    if v >= 4:
        return (P.FindCoordinatorRequestData("grp", 0),
                FindCoordinatorRequest(version=v, key_type=0, coordinator_keys=["grp"]))
    return P.FindCoordinatorRequestData("grp", 0), FindCoordinatorRequest(version=v, key="grp", key_type=0)


def find_response(v):
    R = FindCoordinatorResponse
    if v >= 4:
        c = P.Coordinator("grp", 2, "broker-2", 9092, 0, None)
        return (P.FindCoordinatorResponseData(0, 2, "broker-2", 9092, None, 8, [c]),
                R(version=v, throttle_time_ms=8, coordinators=[R.Coordinator(
                    key="grp", node_id=2, host="broker-2", port=9092, error_code=0, error_message=None)]))
    return (P.FindCoordinatorResponseData(15, -1, "", -1, "not available" if v >= 1 else None, 8 if v >= 1 else 0),
            R(version=v, throttle_time_ms=8 if v >= 1 else 0, error_code=15,
              error_message="not available" if v >= 1 else None, node_id=-1, host="", port=-1))


def api_versions_request(v):
    ours = P.ApiVersionsRequestData("groupcheck", "0.1.0") if v >= 3 else P.ApiVersionsRequestData("", "")
    return ours, ApiVersionsRequest(version=v, client_software_name=ours.client_software_name,
                                    client_software_version=ours.client_software_version)


def api_versions_response(v):
    R = ApiVersionsResponse
    ours = P.ApiVersionsResponseData(0, [P.ApiVersion("JoinGroup", 0, 9), P.ApiVersion("ApiVersions", 0, 4)],
                                     11 if v >= 1 else 0)
    return ours, R(version=v, error_code=0, throttle_time_ms=ours.throttle_time_ms, api_keys=[
        R.ApiVersion(api_key=11, min_version=0, max_version=9), R.ApiVersion(api_key=18, min_version=0, max_version=4)])


def metadata_request(v):
    ours = P.MetadataRequestData([P.MetadataRequestTopic("orders")], True, v >= 8)
    kw = dict(allow_auto_topic_creation=True) if v >= 4 else {}
    if v >= 8:
        kw.update(include_topic_authorized_operations=True, include_cluster_authorized_operations=False)
    return ours, MetadataRequest(version=v, topics=[MetadataRequest.MetadataRequestTopic(name="orders")], **kw)


def metadata_response(v):
    R = MetadataResponse
    ours = P.MetadataResponseData(
        [P.MetadataResponseBroker(0, "broker-0", 9092, "r1" if v >= 1 else None)],
        [P.MetadataResponseTopic("orders", 0, None, False, [P.MetadataResponsePartition(
            0, 0, 0, 3 if v >= 7 else -1, [0, 1], [0], [1] if v >= 5 else [])])],
        "cluster" if v >= 2 else None, 0 if v >= 1 else -1, 2 if v >= 3 else 0)
    theirs = R(version=v, throttle_time_ms=ours.throttle_time_ms, brokers=[
        R.MetadataResponseBroker(node_id=0, host="broker-0", port=9092, rack=ours.brokers[0].rack)],
        cluster_id=ours.cluster_id, controller_id=ours.controller_id, topics=[R.MetadataResponseTopic(
            error_code=0, name="orders", is_internal=False, partitions=[R.MetadataResponseTopic.MetadataResponsePartition(
                error_code=0, partition_index=0, leader_id=0, leader_epoch=ours.topics[0].partitions[0].leader_epoch,
                replica_nodes=[0, 1], isr_nodes=[0], offline_replicas=ours.topics[0].partitions[0].offline_replicas)])])
    return ours, theirs


def offset_commit_request(v):
    C = G.OffsetCommitRequest
    ours = P.OffsetCommitRequestData("grp", 5, "member-1", "inst-1" if v >= 7 else None, 60000 if v <= 4 else -1,
                                     [P.OffsetCommitRequestTopic("orders", [P.OffsetCommitRequestPartition(
                                         0, 42, "meta", 3 if v >= 6 else -1)])])
    kw = dict(retention_time_ms=60000) if v <= 4 else {}
    return ours, C(version=v, group_id="grp", generation_id_or_member_epoch=5, member_id="member-1",
                   group_instance_id=ours.group_instance_id, topics=[C.OffsetCommitRequestTopic(
                       name="orders", partitions=[C.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                           partition_index=0, committed_offset=42, committed_leader_epoch=3 if v >= 6 else -1,
                           committed_metadata="meta")])], **kw)


def offset_fetch_request(v):
    F = G.OffsetFetchRequest
    ours = P.OffsetFetchRequestData("grp", [P.OffsetFetchRequestTopic("orders", [0, 1])], v >= 7)
    kw = dict(require_stable=True) if v >= 7 else {}
    return ours, F(version=v, group_id="grp", topics=[F.OffsetFetchRequestTopic(name="orders", partition_indexes=[0, 1])],
                   **kw)


def offset_fetch_response(v):
    R = G.OffsetFetchResponse
    ours = P.OffsetFetchResponseData([P.OffsetFetchResponseTopic("orders", [P.OffsetFetchResponsePartition(
        0, 42, 3 if v >= 5 else -1, None, 0)])], 0, 6 if v >= 3 else 0)
    kw = dict(error_code=0) if v >= 2 else {}
    return ours, R(version=v, throttle_time_ms=ours.throttle_time_ms, topics=[R.OffsetFetchResponseTopic(
        name="orders", partitions=[R.OffsetFetchResponseTopic.OffsetFetchResponsePartition(
            partition_index=0, committed_offset=42, committed_leader_epoch=3 if v >= 5 else -1, metadata=None,
            error_code=0)])], **kw)


REQUESTS = [(join_request, 5), (join_request, 7), (join_request, 9), (join_request, 0), (sync_request, 3),
            (sync_request, 5), (heartbeat_request, 1), (heartbeat_request, 3), (heartbeat_request, 4),
            (leave_request, 1), (leave_request, 5), (find_request, 1), (find_request, 2), (find_request, 6),
            (api_versions_request, 0), (api_versions_request, 3), (api_versions_request, 4),
            (metadata_request, 1), (metadata_request, 8), (metadata_request, 12),
            (offset_commit_request, 2), (offset_commit_request, 8), (offset_fetch_request, 1),
            (offset_fetch_request, 7)]
RESPONSES = [(join_response, 5), (join_response, 7), (join_response, 9), (sync_response, 3), (sync_response, 5),
             (heartbeat_response, 1), (heartbeat_response, 4), (leave_response, 1), (leave_response, 5),
             (find_response, 0), (find_response, 2), (find_response, 6), (api_versions_response, 0),
             (api_versions_response, 3), (metadata_response, 1), (metadata_response, 8),
             (metadata_response, 12), (offset_fetch_response, 1), (offset_fetch_response, 7)]


def _api(ours) -> str:
    return type(ours).api_key


@pytest.mark.parametrize("build,version", REQUESTS, ids=["%s-v%d" % (b.__name__, v) for b, v in REQUESTS])
def test_request_bytes_match_kafka_python(build, version):
    ours, theirs = build(version)
    assert encode_request(ours, version, CORR, CLIENT).hex() == kp_request(theirs).hex()


@pytest.mark.parametrize("build,version", RESPONSES, ids=["%s-v%d" % (b.__name__, v) for b, v in RESPONSES])
def test_response_bytes_match_kafka_python(build, version):
    ours, theirs = build(version)
    assert encode_response_as(_api(ours), version, CORR, ours).hex() == kp_response(theirs).hex()


_KP = {
    "ApiVersions": (ApiVersionsRequest, ApiVersionsResponse),
    "Metadata": (MetadataRequest, MetadataResponse),
    "FindCoordinator": (FindCoordinatorRequest, FindCoordinatorResponse),
    "JoinGroup": (G.JoinGroupRequest, G.JoinGroupResponse),
    "SyncGroup": (G.SyncGroupRequest, G.SyncGroupResponse),
    "Heartbeat": (G.HeartbeatRequest, G.HeartbeatResponse),
    "LeaveGroup": (G.LeaveGroupRequest, G.LeaveGroupResponse),
    "OffsetCommit": (G.OffsetCommitRequest, G.OffsetCommitResponse),
    "OffsetFetch": (G.OffsetFetchRequest, G.OffsetFetchResponse),
}
# kafka-python 2.x has no KIP-848 classes: ConsumerGroupHeartbeat is checked against kio alone
# (tests/wire's round trips) and against Kafka itself (tests/live/test_kip848_brokers.py)
CASES = [(api, v, d) for api in sorted(TRANSLATED & set(_KP))
         for v in range(CODEC_VERSIONS[api][0], CODEC_VERSIONS[api][1] + 1) for d in ("request", "response")]


@pytest.mark.parametrize("api,version,direction", CASES, ids=["%s-v%d-%s" % c for c in CASES])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_kafka_python_reads_and_rewrites_our_frames_identically(api, version, direction, data):
    value = data.draw(message(api, direction, version))
    if api == "ApiVersions" and direction == "response":
        # kafka-python reads any ApiVersions response carrying an error as the v0 fallback body
        value.error_code = 0
    req_cls, resp_cls = _KP[api]
    if direction == "request":
        ours = encode_request(value, version, CORR, CLIENT)
        theirs = req_cls.decode(ours, version=version, header=True, framed=True)
        assert kp_request(theirs) == ours
    else:
        ours = encode_response_as(api, version, CORR, value)
        theirs = resp_cls.decode(ours, version=version, header=True, framed=True)
        assert kp_response(theirs) == ours
