"""Translation at the channel boundary: :mod:`impl.protocol` objects <-> kio's per-version classes.

One pair of functions per API and direction, each covering every version in
:data:`impl.wire.apis.CODEC_VERSIONS`.  The rules are those of Kafka's generated
``*Data.write`` / ``*Data.read`` plus the request builders' version adaptations:

* Reading a version that lacks a field gives the field the schema's default (e.g. a JoinGroup v0
  request reads ``rebalance_timeout_ms = -1``, an ApiVersions v2 request reads
  ``client_software_name = ""``).
* Writing a version that lacks a field drops it when the schema marks it ``ignorable`` (or it
  holds its default); otherwise :class:`~impl.wire.errors.EncodeError` (an
  ``UnsupportedVersionException``, as Kafka throws): ``group_instance_id`` in JoinGroup < 5,
  SyncGroup / Heartbeat < 3, OffsetCommit < 7; ``skip_assignment`` in JoinGroup < 9;
  ``require_stable`` in OffsetFetch < 7; ``topics=None`` in OffsetFetch v1;
  ``allow_auto_topic_creation=False`` in Metadata < 4; ``include_topic_authorized_operations`` in
  Metadata < 8; ``key_type != 0`` in FindCoordinator v0; ``members`` in LeaveGroup responses < 3.
* Version adaptations Kafka makes outside the generated code, reproduced so that the same
  :mod:`impl.protocol` value can be sent in any version:

  - Metadata v0: "all topics" is an empty list (``MetadataRequest.isAllTopics``); ``topics=None``
    writes ``[]`` and ``[]`` reads as ``None``; an explicit empty list cannot be sent in v0.
  - FindCoordinator v4+: a single ``key`` is sent as a batch of one
    (``FindCoordinatorRequest.Builder``) and a batch of one reads back as ``key``; a response
    with exactly one coordinator also fills the flat fields (``FindCoordinatorResponse``'s
    accessors).  A v4+ response must list its ``coordinators`` (the broker builds them per key).
  - LeaveGroup v0-2: the request's single member is ``members[0]`` (``LeaveGroupRequest.Builder``
    refuses more than one, or a ``group_instance_id``); reading gives a one-member list.
  - JoinGroup v0-6 responses: a null ``protocol_name`` is written as ``""``
    (``JoinGroupResponse``'s constructor) and ``""`` reads as ``None``.
  - SyncGroup responses: a ``None`` assignment is the empty byte string.

* Embedded ConsumerProtocol payloads: JoinGroup metadata of protocol type ``"consumer"`` reads as a
  :class:`~impl.protocol.Subscription` (responses before v7 do not say the type: tried, and kept
  as ``bytes`` if the bytes are not one); SyncGroup assignments read as
  :class:`~impl.protocol.Assignment` when they parse, else stay ``bytes``.  Either type is
  accepted for writing.  Kafka's broker never parses these bytes; keeping unparsable ones as
  bytes lets a non-consumer group (or a broken client) through, as Kafka does.

Timeouts travel as kio ``timedelta`` values and as int milliseconds here; error codes as kio's
``ErrorCode`` enum and as ints here (an unknown code cannot be written: kio refuses it).
"""

from __future__ import annotations

import base64
import datetime
import uuid
from typing import Callable, Dict, Optional, Tuple

from kio.schema.errors import ErrorCode

from impl import protocol as P
from impl.wire.apis import REQUEST, RESPONSE, api_key, api_name, kio_module
from impl.wire.consumer_protocol import (decode_assignment, decode_subscription, encode_assignment,
                                         encode_subscription)


class FieldNotInVersion(Exception):
    """A non-ignorable field the version lacks holds a non-default value (or a value cannot be
    written); the codec turns it into an :class:`~impl.wire.errors.EncodeError`."""


# -- primitive conversions ----------------------------------------------------------------------

_ERROR_CODES: Dict[int, ErrorCode] = {e.value: e for e in ErrorCode}
_MS = datetime.timedelta(milliseconds=1)
_TD_CACHE: Dict[int, datetime.timedelta] = {}
_ZERO_UUID = uuid.UUID(int=0)


def _ec(code: int) -> ErrorCode:
    e = _ERROR_CODES.get(code)
    if e is None:
        raise FieldNotInVersion("error code %r is not one kio knows" % (code,))
    return e


def _td(ms: int) -> datetime.timedelta:
    td = _TD_CACHE.get(ms)
    if td is None:
        td = datetime.timedelta(milliseconds=ms)
        if len(_TD_CACHE) < 4096:
            _TD_CACHE[ms] = td
    return td


def _ms(td: datetime.timedelta) -> int:
    return td // _MS


def _uuid(topic_id: Optional[str]) -> uuid.UUID:
    """Kafka's ``Uuid.toString`` (URL-safe base64, no padding) -> UUID; ``None`` -> zero."""
    if topic_id is None:
        return _ZERO_UUID
    try:
        raw = base64.urlsafe_b64decode(topic_id + "==")
    except ValueError:
        raw = b""
    if len(raw) != 16:
        raise FieldNotInVersion("topic_id %r is not a Kafka Uuid" % (topic_id,))
    return uuid.UUID(bytes=raw)


def _uuid_str(u: Optional[uuid.UUID]) -> Optional[str]:
    if u is None or u.int == 0:
        return None
    return base64.urlsafe_b64encode(u.bytes).rstrip(b"=").decode("ascii")


def _absent(cond: bool, field: str, name: str, version: int) -> None:
    if cond:
        raise FieldNotInVersion("%s is not in %s v%d and cannot be dropped (not ignorable)" % (field, name, version))


def _sub_bytes(metadata) -> bytes:
    return metadata if isinstance(metadata, (bytes, bytearray)) else encode_subscription(metadata)


def _asg_bytes(assignment) -> bytes:
    return assignment if isinstance(assignment, (bytes, bytearray)) else encode_assignment(assignment)


def _sub_or_bytes(data: bytes):
    try:
        return decode_subscription(data)
    except Exception:
        return bytes(data)


def _asg_or_bytes(data: bytes):
    try:
        return decode_assignment(data)
    except Exception:
        return bytes(data)


# -- ApiVersions --------------------------------------------------------------------------------

def api_versions_request_to_kio(o: P.ApiVersionsRequestData, v: int):
    M = kio_module("ApiVersions", v, REQUEST)
    if v >= 3:
        return M.ApiVersionsRequest(client_software_name=o.client_software_name,
                                    client_software_version=o.client_software_version)
    return M.ApiVersionsRequest()


def api_versions_request_from_kio(k, v: int) -> P.ApiVersionsRequestData:
    if v >= 3:
        return P.ApiVersionsRequestData(k.client_software_name, k.client_software_version)
    return P.ApiVersionsRequestData("", "")


def api_versions_response_to_kio(o: P.ApiVersionsResponseData, v: int):
    M = kio_module("ApiVersions", v, RESPONSE)
    try:
        keys = tuple(M.ApiVersion(api_key=api_key(a.api_key), min_version=a.min_version, max_version=a.max_version)
                     for a in o.api_keys)
    except KeyError as e:
        raise FieldNotInVersion("api_keys names an unknown API %s" % e) from None
    kw = dict(error_code=_ec(o.error_code), api_keys=keys)
    if v >= 1:
        kw["throttle_time"] = _td(o.throttle_time_ms)
    return M.ApiVersionsResponse(**kw)


def api_versions_response_from_kio(k, v: int) -> P.ApiVersionsResponseData:
    return P.ApiVersionsResponseData(
        error_code=k.error_code.value,
        api_keys=[P.ApiVersion(api_name(a.api_key), a.min_version, a.max_version) for a in k.api_keys],
        throttle_time_ms=_ms(k.throttle_time) if v >= 1 else 0)


# -- Metadata -----------------------------------------------------------------------------------

def metadata_request_to_kio(o: P.MetadataRequestData, v: int):
    M = kio_module("Metadata", v, REQUEST)
    if o.topics is None:
        topics = () if v == 0 else None
    else:
        _absent(v == 0 and not o.topics, "an empty topic list (v0 reads it as all topics)", "Metadata", v)
        if v >= 10:
            topics = tuple(M.MetadataRequestTopic(topic_id=_uuid(t.topic_id), name=t.name) for t in o.topics)
        else:
            topics = tuple(M.MetadataRequestTopic(name=t.name) for t in o.topics)
    kw = dict(topics=topics)
    if v >= 4:
        kw["allow_auto_topic_creation"] = o.allow_auto_topic_creation
    else:
        _absent(not o.allow_auto_topic_creation, "allow_auto_topic_creation=False", "Metadata", v)
    if v >= 8:
        kw["include_topic_authorized_operations"] = o.include_topic_authorized_operations
        if v <= 10:
            kw["include_cluster_authorized_operations"] = False
    else:
        _absent(o.include_topic_authorized_operations, "include_topic_authorized_operations", "Metadata", v)
    return M.MetadataRequest(**kw)


def metadata_request_from_kio(k, v: int) -> P.MetadataRequestData:
    if k.topics is None or (v == 0 and not k.topics):
        topics = None
    elif v >= 10:
        topics = [P.MetadataRequestTopic(t.name, _uuid_str(t.topic_id)) for t in k.topics]
    else:
        topics = [P.MetadataRequestTopic(t.name) for t in k.topics]
    return P.MetadataRequestData(
        topics=topics,
        allow_auto_topic_creation=k.allow_auto_topic_creation if v >= 4 else True,
        include_topic_authorized_operations=k.include_topic_authorized_operations if v >= 8 else False)


def metadata_response_to_kio(o: P.MetadataResponseData, v: int):
    M = kio_module("Metadata", v, RESPONSE)
    Broker, Topic, Partition = M.MetadataResponseBroker, M.MetadataResponseTopic, M.MetadataResponsePartition
    if v >= 1:
        brokers = tuple(Broker(node_id=b.node_id, host=b.host, port=b.port, rack=b.rack) for b in o.brokers)
    else:
        brokers = tuple(Broker(node_id=b.node_id, host=b.host, port=b.port) for b in o.brokers)
    topics = []
    for t in o.topics:
        parts = []
        for p in t.partitions:
            pkw = dict(error_code=_ec(p.error_code), partition_index=p.partition_index, leader_id=p.leader_id,
                       replica_nodes=tuple(p.replica_nodes), isr_nodes=tuple(p.isr_nodes))
            if v >= 7:
                pkw["leader_epoch"] = p.leader_epoch
            if v >= 5:
                pkw["offline_replicas"] = tuple(p.offline_replicas)
            parts.append(Partition(**pkw))
        tkw = dict(error_code=_ec(t.error_code), name=t.name, partitions=tuple(parts))
        if v >= 10:
            tkw["topic_id"] = _uuid(t.topic_id)
        if v >= 1:
            tkw["is_internal"] = t.is_internal
        topics.append(Topic(**tkw))
    kw = dict(brokers=brokers, topics=tuple(topics))
    if v >= 1:
        kw["controller_id"] = o.controller_id
    if v >= 2:
        kw["cluster_id"] = o.cluster_id
    if v >= 3:
        kw["throttle_time"] = _td(o.throttle_time_ms)
    return M.MetadataResponse(**kw)


def metadata_response_from_kio(k, v: int) -> P.MetadataResponseData:
    brokers = [P.MetadataResponseBroker(b.node_id, b.host, b.port, b.rack if v >= 1 else None) for b in k.brokers]
    topics = []
    for t in k.topics:
        parts = [P.MetadataResponsePartition(
            partition_index=p.partition_index, leader_id=p.leader_id, error_code=p.error_code.value,
            leader_epoch=p.leader_epoch if v >= 7 else P.NO_LEADER_EPOCH,
            replica_nodes=list(p.replica_nodes), isr_nodes=list(p.isr_nodes),
            offline_replicas=list(p.offline_replicas) if v >= 5 else []) for p in t.partitions]
        topics.append(P.MetadataResponseTopic(
            name=t.name, error_code=t.error_code.value, topic_id=_uuid_str(t.topic_id) if v >= 10 else None,
            is_internal=t.is_internal if v >= 1 else False, partitions=parts))
    return P.MetadataResponseData(
        brokers=brokers, topics=topics, cluster_id=k.cluster_id if v >= 2 else None,
        controller_id=k.controller_id if v >= 1 else -1, throttle_time_ms=_ms(k.throttle_time) if v >= 3 else 0)


# -- FindCoordinator ----------------------------------------------------------------------------

def find_coordinator_request_to_kio(o: P.FindCoordinatorRequestData, v: int):
    M = kio_module("FindCoordinator", v, REQUEST)
    keys = o.coordinator_keys
    if keys and o.key:
        raise FieldNotInVersion("both key %r and coordinator_keys %r are set" % (o.key, keys))
    if v >= 4:
        return M.FindCoordinatorRequest(key_type=o.key_type, coordinator_keys=tuple(keys) if keys else (o.key,))
    if keys:
        _absent(len(keys) > 1, "a batch of %d coordinator_keys" % len(keys), "FindCoordinator", v)
        key = keys[0]
    else:
        key = o.key
    if v == 0:
        _absent(o.key_type != P.CoordinatorType.GROUP, "key_type=%d" % o.key_type, "FindCoordinator", v)
        return M.FindCoordinatorRequest(key=key)
    return M.FindCoordinatorRequest(key=key, key_type=o.key_type)


def find_coordinator_request_from_kio(k, v: int) -> P.FindCoordinatorRequestData:
    if v >= 4:
        keys = k.coordinator_keys
        if len(keys) == 1:
            return P.FindCoordinatorRequestData(key=keys[0], key_type=k.key_type)
        return P.FindCoordinatorRequestData(key="", key_type=k.key_type, coordinator_keys=list(keys))
    return P.FindCoordinatorRequestData(key=k.key, key_type=k.key_type if v >= 1 else 0)


def _mirrors(o: P.FindCoordinatorResponseData, c: P.Coordinator) -> bool:
    return (o.error_code == c.error_code and o.node_id == c.node_id and o.host == c.host
            and o.port == c.port and o.error_message == c.error_message)


def find_coordinator_response_to_kio(o: P.FindCoordinatorResponseData, v: int):
    M = kio_module("FindCoordinator", v, RESPONSE)
    if v >= 4:
        _absent(not o.coordinators and (o.error_code != 0 or o.node_id != -1 or o.host != "" or o.port != -1),
                "a flat (v0-3) answer without coordinators", "FindCoordinator", v)
        return M.FindCoordinatorResponse(
            throttle_time=_td(o.throttle_time_ms),
            coordinators=tuple(M.Coordinator(key=c.key, node_id=c.node_id, host=c.host, port=c.port,
                                             error_code=_ec(c.error_code), error_message=c.error_message)
                               for c in o.coordinators))
    _absent(bool(o.coordinators) and not (len(o.coordinators) == 1 and _mirrors(o, o.coordinators[0])),
            "coordinators", "FindCoordinator", v)
    if v == 0:
        return M.FindCoordinatorResponse(error_code=_ec(o.error_code), node_id=o.node_id, host=o.host, port=o.port)
    return M.FindCoordinatorResponse(throttle_time=_td(o.throttle_time_ms), error_code=_ec(o.error_code),
                                     error_message=o.error_message, node_id=o.node_id, host=o.host, port=o.port)


def find_coordinator_response_from_kio(k, v: int) -> P.FindCoordinatorResponseData:
    if v >= 4:
        cs = [P.Coordinator(c.key, c.node_id, c.host, c.port, c.error_code.value, c.error_message)
              for c in k.coordinators]
        throttle = _ms(k.throttle_time)
        if len(cs) == 1:
            c = cs[0]
            return P.FindCoordinatorResponseData(c.error_code, c.node_id, c.host, c.port, c.error_message,
                                                 throttle, cs)
        return P.FindCoordinatorResponseData(throttle_time_ms=throttle, coordinators=cs)
    if v == 0:
        return P.FindCoordinatorResponseData(k.error_code.value, k.node_id, k.host, k.port)
    return P.FindCoordinatorResponseData(k.error_code.value, k.node_id, k.host, k.port, k.error_message,
                                         _ms(k.throttle_time))


# -- JoinGroup ----------------------------------------------------------------------------------

def join_group_request_to_kio(o: P.JoinGroupRequestData, v: int):
    M = kio_module("JoinGroup", v, REQUEST)
    Proto = M.JoinGroupRequestProtocol
    kw = dict(group_id=o.group_id, session_timeout=_td(o.session_timeout_ms), member_id=o.member_id,
              protocol_type=o.protocol_type,
              protocols=tuple(Proto(name=p.name, metadata=_sub_bytes(p.metadata)) for p in o.protocols))
    if v >= 1:
        kw["rebalance_timeout"] = _td(o.rebalance_timeout_ms)
    if v >= 5:
        kw["group_instance_id"] = o.group_instance_id
    else:
        _absent(o.group_instance_id is not None, "group_instance_id", "JoinGroup", v)
    if v >= 8:
        kw["reason"] = o.reason
    return M.JoinGroupRequest(**kw)


def join_group_request_from_kio(k, v: int) -> P.JoinGroupRequestData:
    consumer = k.protocol_type == P.CONSUMER_PROTOCOL_TYPE
    return P.JoinGroupRequestData(
        group_id=k.group_id, session_timeout_ms=_ms(k.session_timeout),
        rebalance_timeout_ms=_ms(k.rebalance_timeout) if v >= 1 else -1, member_id=k.member_id,
        group_instance_id=k.group_instance_id if v >= 5 else None, protocol_type=k.protocol_type,
        protocols=[P.JoinGroupRequestProtocol(p.name, _sub_or_bytes(p.metadata) if consumer else bytes(p.metadata))
                   for p in k.protocols],
        reason=k.reason if v >= 8 else None)


def join_group_response_to_kio(o: P.JoinGroupResponseData, v: int):
    M = kio_module("JoinGroup", v, RESPONSE)
    Member = M.JoinGroupResponseMember
    if v >= 5:
        members = tuple(Member(member_id=m.member_id, group_instance_id=m.group_instance_id,
                               metadata=_sub_bytes(m.metadata)) for m in o.members)
    else:
        members = tuple(Member(member_id=m.member_id, metadata=_sub_bytes(m.metadata)) for m in o.members)
    kw = dict(error_code=_ec(o.error_code), generation_id=o.generation_id, leader=o.leader, member_id=o.member_id,
              members=members)
    if v >= 7:
        kw["protocol_type"] = o.protocol_type
        kw["protocol_name"] = o.protocol_name
    else:
        kw["protocol_name"] = "" if o.protocol_name is None else o.protocol_name
    if v >= 2:
        kw["throttle_time"] = _td(o.throttle_time_ms)
    if v >= 9:
        kw["skip_assignment"] = o.skip_assignment
    else:
        _absent(o.skip_assignment, "skip_assignment", "JoinGroup", v)
    return M.JoinGroupResponse(**kw)


def join_group_response_from_kio(k, v: int) -> P.JoinGroupResponseData:
    if v >= 7:
        protocol_type, protocol_name = k.protocol_type, k.protocol_name
        consumer = protocol_type == P.CONSUMER_PROTOCOL_TYPE
    else:
        protocol_type, protocol_name = None, (k.protocol_name or None)
        consumer = True  # not said before v7: try
    members = [P.JoinGroupResponseMember(m.member_id, m.group_instance_id if v >= 5 else None,
                                         _sub_or_bytes(m.metadata) if consumer else bytes(m.metadata))
               for m in k.members]
    return P.JoinGroupResponseData(
        error_code=k.error_code.value, generation_id=k.generation_id, protocol_type=protocol_type,
        protocol_name=protocol_name, leader=k.leader, member_id=k.member_id, members=members,
        skip_assignment=k.skip_assignment if v >= 9 else False,
        throttle_time_ms=_ms(k.throttle_time) if v >= 2 else 0)


# -- SyncGroup ----------------------------------------------------------------------------------

def sync_group_request_to_kio(o: P.SyncGroupRequestData, v: int):
    M = kio_module("SyncGroup", v, REQUEST)
    Asg = M.SyncGroupRequestAssignment
    kw = dict(group_id=o.group_id, generation_id=o.generation_id, member_id=o.member_id,
              assignments=tuple(Asg(member_id=a.member_id, assignment=_asg_bytes(a.assignment))
                                for a in o.assignments))
    if v >= 3:
        kw["group_instance_id"] = o.group_instance_id
    else:
        _absent(o.group_instance_id is not None, "group_instance_id", "SyncGroup", v)
    if v >= 5:
        kw["protocol_type"] = o.protocol_type
        kw["protocol_name"] = o.protocol_name
    return M.SyncGroupRequest(**kw)


def sync_group_request_from_kio(k, v: int) -> P.SyncGroupRequestData:
    return P.SyncGroupRequestData(
        group_id=k.group_id, generation_id=k.generation_id, member_id=k.member_id,
        group_instance_id=k.group_instance_id if v >= 3 else None,
        protocol_type=k.protocol_type if v >= 5 else None, protocol_name=k.protocol_name if v >= 5 else None,
        assignments=[P.SyncGroupRequestAssignment(a.member_id, _asg_or_bytes(a.assignment)) for a in k.assignments])


def sync_group_response_to_kio(o: P.SyncGroupResponseData, v: int):
    M = kio_module("SyncGroup", v, RESPONSE)
    kw = dict(error_code=_ec(o.error_code), assignment=b"" if o.assignment is None else _asg_bytes(o.assignment))
    if v >= 1:
        kw["throttle_time"] = _td(o.throttle_time_ms)
    if v >= 5:
        kw["protocol_type"] = o.protocol_type
        kw["protocol_name"] = o.protocol_name
    return M.SyncGroupResponse(**kw)


def sync_group_response_from_kio(k, v: int) -> P.SyncGroupResponseData:
    return P.SyncGroupResponseData(
        error_code=k.error_code.value, protocol_type=k.protocol_type if v >= 5 else None,
        protocol_name=k.protocol_name if v >= 5 else None,
        assignment=_asg_or_bytes(k.assignment) if k.assignment else None,
        throttle_time_ms=_ms(k.throttle_time) if v >= 1 else 0)


# -- Heartbeat ----------------------------------------------------------------------------------

def heartbeat_request_to_kio(o: P.HeartbeatRequestData, v: int):
    M = kio_module("Heartbeat", v, REQUEST)
    if v >= 3:
        return M.HeartbeatRequest(group_id=o.group_id, generation_id=o.generation_id, member_id=o.member_id,
                                  group_instance_id=o.group_instance_id)
    _absent(o.group_instance_id is not None, "group_instance_id", "Heartbeat", v)
    return M.HeartbeatRequest(group_id=o.group_id, generation_id=o.generation_id, member_id=o.member_id)


def heartbeat_request_from_kio(k, v: int) -> P.HeartbeatRequestData:
    return P.HeartbeatRequestData(k.group_id, k.generation_id, k.member_id, k.group_instance_id if v >= 3 else None)


def heartbeat_response_to_kio(o: P.HeartbeatResponseData, v: int):
    M = kio_module("Heartbeat", v, RESPONSE)
    if v >= 1:
        return M.HeartbeatResponse(throttle_time=_td(o.throttle_time_ms), error_code=_ec(o.error_code))
    return M.HeartbeatResponse(error_code=_ec(o.error_code))


def heartbeat_response_from_kio(k, v: int) -> P.HeartbeatResponseData:
    return P.HeartbeatResponseData(k.error_code.value, _ms(k.throttle_time) if v >= 1 else 0)


# -- LeaveGroup ---------------------------------------------------------------------------------

def leave_group_request_to_kio(o: P.LeaveGroupRequestData, v: int):
    M = kio_module("LeaveGroup", v, REQUEST)
    if v >= 3:
        if v >= 5:
            members = tuple(M.MemberIdentity(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                             reason=m.reason) for m in o.members)
        else:
            members = tuple(M.MemberIdentity(member_id=m.member_id, group_instance_id=m.group_instance_id)
                            for m in o.members)
        return M.LeaveGroupRequest(group_id=o.group_id, members=members)
    _absent(len(o.members) != 1, "a batch of %d members" % len(o.members), "LeaveGroup", v)
    m = o.members[0]
    _absent(m.group_instance_id is not None, "group_instance_id", "LeaveGroup", v)
    return M.LeaveGroupRequest(group_id=o.group_id, member_id=m.member_id)


def leave_group_request_from_kio(k, v: int) -> P.LeaveGroupRequestData:
    if v >= 3:
        return P.LeaveGroupRequestData(k.group_id, [
            P.MemberIdentity(m.member_id, m.group_instance_id, m.reason if v >= 5 else None) for m in k.members])
    return P.LeaveGroupRequestData(k.group_id, [P.MemberIdentity(k.member_id)])


def leave_group_response_to_kio(o: P.LeaveGroupResponseData, v: int):
    M = kio_module("LeaveGroup", v, RESPONSE)
    kw = dict(error_code=_ec(o.error_code))
    if v >= 1:
        kw["throttle_time"] = _td(o.throttle_time_ms)
    if v >= 3:
        kw["members"] = tuple(M.MemberResponse(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                               error_code=_ec(m.error_code)) for m in o.members)
    else:
        _absent(bool(o.members), "members", "LeaveGroup", v)
    return M.LeaveGroupResponse(**kw)


def leave_group_response_from_kio(k, v: int) -> P.LeaveGroupResponseData:
    members = ([P.MemberResponse(m.member_id, m.group_instance_id, m.error_code.value) for m in k.members]
               if v >= 3 else [])
    return P.LeaveGroupResponseData(k.error_code.value, members, _ms(k.throttle_time) if v >= 1 else 0)


# -- OffsetCommit -------------------------------------------------------------------------------

def offset_commit_request_to_kio(o: P.OffsetCommitRequestData, v: int):
    M = kio_module("OffsetCommit", v, REQUEST)
    Topic, Part = M.OffsetCommitRequestTopic, M.OffsetCommitRequestPartition
    if v >= 6:
        topics = tuple(Topic(name=t.name, partitions=tuple(
            Part(partition_index=p.partition_index, committed_offset=p.committed_offset,
                 committed_leader_epoch=p.committed_leader_epoch, committed_metadata=p.committed_metadata)
            for p in t.partitions)) for t in o.topics)
    else:
        topics = tuple(Topic(name=t.name, partitions=tuple(
            Part(partition_index=p.partition_index, committed_offset=p.committed_offset,
                 committed_metadata=p.committed_metadata) for p in t.partitions)) for t in o.topics)
    kw = dict(group_id=o.group_id, generation_id_or_member_epoch=o.generation_id, member_id=o.member_id,
              topics=topics)
    if v <= 4:
        kw["retention_time"] = _td(o.retention_time_ms)
    if v >= 7:
        kw["group_instance_id"] = o.group_instance_id
    else:
        _absent(o.group_instance_id is not None, "group_instance_id", "OffsetCommit", v)
    return M.OffsetCommitRequest(**kw)


def offset_commit_request_from_kio(k, v: int) -> P.OffsetCommitRequestData:
    topics = [P.OffsetCommitRequestTopic(t.name, [
        P.OffsetCommitRequestPartition(p.partition_index, p.committed_offset, p.committed_metadata,
                                       p.committed_leader_epoch if v >= 6 else P.NO_LEADER_EPOCH)
        for p in t.partitions]) for t in k.topics]
    return P.OffsetCommitRequestData(
        group_id=k.group_id, generation_id=k.generation_id_or_member_epoch, member_id=k.member_id,
        group_instance_id=k.group_instance_id if v >= 7 else None,
        retention_time_ms=_ms(k.retention_time) if v <= 4 else P.DEFAULT_RETENTION_TIME, topics=topics)


def offset_commit_response_to_kio(o: P.OffsetCommitResponseData, v: int):
    M = kio_module("OffsetCommit", v, RESPONSE)
    Topic, Part = M.OffsetCommitResponseTopic, M.OffsetCommitResponsePartition
    topics = tuple(Topic(name=t.name, partitions=tuple(
        Part(partition_index=p.partition_index, error_code=_ec(p.error_code)) for p in t.partitions))
        for t in o.topics)
    if v >= 3:
        return M.OffsetCommitResponse(throttle_time=_td(o.throttle_time_ms), topics=topics)
    return M.OffsetCommitResponse(topics=topics)


def offset_commit_response_from_kio(k, v: int) -> P.OffsetCommitResponseData:
    return P.OffsetCommitResponseData(
        [P.OffsetCommitResponseTopic(t.name, [P.OffsetCommitResponsePartition(p.partition_index, p.error_code.value)
                                              for p in t.partitions]) for t in k.topics],
        _ms(k.throttle_time) if v >= 3 else 0)


# -- OffsetFetch --------------------------------------------------------------------------------

def offset_fetch_request_to_kio(o: P.OffsetFetchRequestData, v: int):
    M = kio_module("OffsetFetch", v, REQUEST)
    if o.topics is None:
        _absent(v < 2, "topics=None (all topics)", "OffsetFetch", v)
        topics = None
    else:
        topics = tuple(M.OffsetFetchRequestTopic(name=t.name, partition_indexes=tuple(t.partition_indexes))
                       for t in o.topics)
    if v >= 7:
        return M.OffsetFetchRequest(group_id=o.group_id, topics=topics, require_stable=o.require_stable)
    _absent(o.require_stable, "require_stable", "OffsetFetch", v)
    return M.OffsetFetchRequest(group_id=o.group_id, topics=topics)


def offset_fetch_request_from_kio(k, v: int) -> P.OffsetFetchRequestData:
    topics = None if k.topics is None else [P.OffsetFetchRequestTopic(t.name, list(t.partition_indexes))
                                            for t in k.topics]
    return P.OffsetFetchRequestData(k.group_id, topics, k.require_stable if v >= 7 else False)


def offset_fetch_response_to_kio(o: P.OffsetFetchResponseData, v: int):
    M = kio_module("OffsetFetch", v, RESPONSE)
    Topic, Part = M.OffsetFetchResponseTopic, M.OffsetFetchResponsePartition
    if v >= 5:
        topics = tuple(Topic(name=t.name, partitions=tuple(
            Part(partition_index=p.partition_index, committed_offset=p.committed_offset,
                 committed_leader_epoch=p.committed_leader_epoch, metadata=p.metadata, error_code=_ec(p.error_code))
            for p in t.partitions)) for t in o.topics)
    else:
        topics = tuple(Topic(name=t.name, partitions=tuple(
            Part(partition_index=p.partition_index, committed_offset=p.committed_offset, metadata=p.metadata,
                 error_code=_ec(p.error_code)) for p in t.partitions)) for t in o.topics)
    kw = dict(topics=topics)
    if v >= 2:
        kw["error_code"] = _ec(o.error_code)
    if v >= 3:
        kw["throttle_time"] = _td(o.throttle_time_ms)
    return M.OffsetFetchResponse(**kw)


def offset_fetch_response_from_kio(k, v: int) -> P.OffsetFetchResponseData:
    topics = [P.OffsetFetchResponseTopic(t.name, [
        P.OffsetFetchResponsePartition(p.partition_index, p.committed_offset,
                                       p.committed_leader_epoch if v >= 5 else P.NO_LEADER_EPOCH,
                                       p.metadata, p.error_code.value) for p in t.partitions]) for t in k.topics]
    return P.OffsetFetchResponseData(topics, k.error_code.value if v >= 2 else 0,
                                     _ms(k.throttle_time) if v >= 3 else 0)


# -- ConsumerGroupHeartbeat (KIP-848) ------------------------------------------------------------

def consumer_group_heartbeat_request_to_kio(o: P.ConsumerGroupHeartbeatRequestData, v: int):
    M = kio_module("ConsumerGroupHeartbeat", v, REQUEST)
    owned = None if o.topic_partitions is None else tuple(
        M.TopicPartitions(topic_id=_uuid(tp.topic_id), partitions=tuple(tp.partitions)) for tp in o.topic_partitions)
    kw = dict(group_id=o.group_id, member_id=o.member_id, member_epoch=o.member_epoch, instance_id=o.instance_id,
              rack_id=o.rack_id, rebalance_timeout=_td(o.rebalance_timeout_ms),
              subscribed_topic_names=None if o.subscribed_topic_names is None else tuple(o.subscribed_topic_names),
              server_assignor=o.server_assignor, topic_partitions=owned)
    if v >= 1:
        kw["subscribed_topic_regex"] = o.subscribed_topic_regex
    else:
        _absent(o.subscribed_topic_regex is not None, "subscribed_topic_regex", "ConsumerGroupHeartbeat", v)
    return M.ConsumerGroupHeartbeatRequest(**kw)


def consumer_group_heartbeat_request_from_kio(k, v: int) -> P.ConsumerGroupHeartbeatRequestData:
    owned = None if k.topic_partitions is None else [
        P.ConsumerGroupHeartbeatTopicPartitions(_uuid_str(tp.topic_id), [int(p) for p in tp.partitions])
        for tp in k.topic_partitions]
    return P.ConsumerGroupHeartbeatRequestData(
        group_id=k.group_id, member_id=k.member_id, member_epoch=int(k.member_epoch), instance_id=k.instance_id,
        rack_id=k.rack_id, rebalance_timeout_ms=_ms(k.rebalance_timeout),
        subscribed_topic_names=None if k.subscribed_topic_names is None else list(k.subscribed_topic_names),
        subscribed_topic_regex=k.subscribed_topic_regex if v >= 1 else None,
        server_assignor=k.server_assignor, topic_partitions=owned)


def consumer_group_heartbeat_response_to_kio(o: P.ConsumerGroupHeartbeatResponseData, v: int):
    M = kio_module("ConsumerGroupHeartbeat", v, RESPONSE)
    assignment = None if o.assignment is None else M.Assignment(topic_partitions=tuple(
        M.TopicPartitions(topic_id=_uuid(tp.topic_id), partitions=tuple(tp.partitions))
        for tp in o.assignment.topic_partitions))
    return M.ConsumerGroupHeartbeatResponse(
        throttle_time=_td(o.throttle_time_ms), error_code=_ec(o.error_code), error_message=o.error_message,
        member_id=o.member_id, member_epoch=o.member_epoch, heartbeat_interval=_td(o.heartbeat_interval_ms),
        assignment=assignment)


def consumer_group_heartbeat_response_from_kio(k, v: int) -> P.ConsumerGroupHeartbeatResponseData:
    assignment = None if k.assignment is None else P.ConsumerGroupHeartbeatAssignment([
        P.ConsumerGroupHeartbeatTopicPartitions(_uuid_str(tp.topic_id), [int(p) for p in tp.partitions])
        for tp in k.assignment.topic_partitions])
    return P.ConsumerGroupHeartbeatResponseData(
        error_code=k.error_code.value, error_message=k.error_message, member_id=k.member_id,
        member_epoch=int(k.member_epoch), heartbeat_interval_ms=_ms(k.heartbeat_interval), assignment=assignment,
        throttle_time_ms=_ms(k.throttle_time))


#: API name -> (request to kio, request from kio, response to kio, response from kio).
TRANSLATORS: Dict[str, Tuple[Callable, Callable, Callable, Callable]] = {
    "ApiVersions": (api_versions_request_to_kio, api_versions_request_from_kio,
                    api_versions_response_to_kio, api_versions_response_from_kio),
    "Metadata": (metadata_request_to_kio, metadata_request_from_kio,
                 metadata_response_to_kio, metadata_response_from_kio),
    "FindCoordinator": (find_coordinator_request_to_kio, find_coordinator_request_from_kio,
                        find_coordinator_response_to_kio, find_coordinator_response_from_kio),
    "JoinGroup": (join_group_request_to_kio, join_group_request_from_kio,
                  join_group_response_to_kio, join_group_response_from_kio),
    "SyncGroup": (sync_group_request_to_kio, sync_group_request_from_kio,
                  sync_group_response_to_kio, sync_group_response_from_kio),
    "Heartbeat": (heartbeat_request_to_kio, heartbeat_request_from_kio,
                  heartbeat_response_to_kio, heartbeat_response_from_kio),
    "LeaveGroup": (leave_group_request_to_kio, leave_group_request_from_kio,
                   leave_group_response_to_kio, leave_group_response_from_kio),
    "OffsetCommit": (offset_commit_request_to_kio, offset_commit_request_from_kio,
                     offset_commit_response_to_kio, offset_commit_response_from_kio),
    "OffsetFetch": (offset_fetch_request_to_kio, offset_fetch_request_from_kio,
                    offset_fetch_response_to_kio, offset_fetch_response_from_kio),
    "ConsumerGroupHeartbeat": (consumer_group_heartbeat_request_to_kio, consumer_group_heartbeat_request_from_kio,
                               consumer_group_heartbeat_response_to_kio, consumer_group_heartbeat_response_from_kio),
}
