"""Request/response data classes for the APIs the classic group protocol uses.

These mirror the generated ``*RequestData`` / ``*ResponseData`` classes of
``org.apache.kafka.common.message`` (Kafka's JSON message schemas), with field names in snake_case.
They are plain slotted dataclasses, independent of any byte encoding: the simulated transport
carries them as Python objects; :mod:`impl.wire` translates them to and from Kafka's binary
protocol (through kio) at the channel boundary.

Every request class has a class-level ``api_key`` (the API name, e.g. ``"JoinGroup"``); responses
carry the same ``api_key``.  The request header (correlation id, client id, version) is *not* part
of these classes: it lives on :class:`impl.network.network_client.ClientRequest`.

Embedded protocol metadata is kept as Python values too: JoinGroup protocol metadata is a
:class:`Subscription`, SyncGroup assignments are :class:`Assignment` objects
(``ConsumerProtocol`` in Kafka).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, List, NamedTuple, Optional

# --------------------------------------------------------------------------------------------
# Constants (JoinGroupRequest / OffsetCommitRequest / FindCoordinatorRequest)
# --------------------------------------------------------------------------------------------

UNKNOWN_MEMBER_ID = ""           # JoinGroupRequest.UNKNOWN_MEMBER_ID
UNKNOWN_GENERATION_ID = -1       # JoinGroupRequest.UNKNOWN_GENERATION_ID
UNKNOWN_PROTOCOL_NAME = ""       # JoinGroupRequest.UNKNOWN_PROTOCOL_NAME
DEFAULT_GENERATION_ID = -1       # OffsetCommitRequest.DEFAULT_GENERATION_ID
DEFAULT_MEMBER_ID = ""           # OffsetCommitRequest.DEFAULT_MEMBER_ID
DEFAULT_RETENTION_TIME = -1      # OffsetCommitRequest.DEFAULT_RETENTION_TIME
NO_LEADER_EPOCH = -1             # RecordBatch.NO_PARTITION_LEADER_EPOCH
INVALID_OFFSET = -1              # OffsetFetchResponse.INVALID_OFFSET
NO_METADATA = ""                 # OffsetFetchResponse.NO_METADATA
CONSUMER_PROTOCOL_TYPE = "consumer"  # ConsumerProtocol.PROTOCOL_TYPE


class CoordinatorType:
    """FindCoordinatorRequest.CoordinatorType (key_type values)."""

    GROUP = 0
    TRANSACTION = 1


# --------------------------------------------------------------------------------------------
# ConsumerProtocol payloads (Python values instead of bytes)
# --------------------------------------------------------------------------------------------

class TopicPartition(NamedTuple):
    """org.apache.kafka.common.TopicPartition; a plain ``(topic, partition)`` tuple."""

    topic: str
    partition: int


@dataclass(slots=True)
class Subscription:
    """ConsumerPartitionAssignor.Subscription (JoinGroup protocol metadata)."""

    topics: List[str]
    user_data: Optional[bytes] = None
    owned_partitions: List[TopicPartition] = field(default_factory=list)
    generation_id: int = UNKNOWN_GENERATION_ID
    rack_id: Optional[str] = None
    #: The bytes this value was decoded from (:mod:`impl.wire`), re-sent verbatim so that a broker
    #: echoes a member's metadata byte for byte; not part of the value (no compare, no repr).
    #: Build a new Subscription rather than modifying a decoded one.
    wire: Optional[bytes] = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class Assignment:
    """ConsumerPartitionAssignor.Assignment (SyncGroup assignment)."""

    partitions: List[TopicPartition] = field(default_factory=list)
    user_data: Optional[bytes] = None
    #: The bytes this value was decoded from (see :attr:`Subscription.wire`).
    wire: Optional[bytes] = field(default=None, compare=False, repr=False)


# --------------------------------------------------------------------------------------------
# ApiVersions
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class ApiVersionsRequestData:
    api_key: ClassVar[str] = "ApiVersions"
    client_software_name: str = "groupcheck"
    client_software_version: str = "0.1.0"


@dataclass(slots=True)
class ApiVersion:
    api_key: str
    min_version: int
    max_version: int


@dataclass(slots=True)
class ApiVersionsResponseData:
    api_key: ClassVar[str] = "ApiVersions"
    error_code: int = 0
    api_keys: List[ApiVersion] = field(default_factory=list)
    throttle_time_ms: int = 0


# --------------------------------------------------------------------------------------------
# Metadata
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class MetadataRequestTopic:
    name: str
    topic_id: Optional[str] = None


@dataclass(slots=True)
class MetadataRequestData:
    """``topics=None`` requests all topics (MetadataRequest.Builder.allTopics())."""

    api_key: ClassVar[str] = "Metadata"
    topics: Optional[List[MetadataRequestTopic]] = None
    allow_auto_topic_creation: bool = True
    include_topic_authorized_operations: bool = False


@dataclass(slots=True)
class MetadataResponseBroker:
    node_id: int
    host: str
    port: int
    rack: Optional[str] = None


@dataclass(slots=True)
class MetadataResponsePartition:
    partition_index: int
    leader_id: int
    error_code: int = 0
    leader_epoch: int = NO_LEADER_EPOCH
    replica_nodes: List[int] = field(default_factory=list)
    isr_nodes: List[int] = field(default_factory=list)
    offline_replicas: List[int] = field(default_factory=list)


@dataclass(slots=True)
class MetadataResponseTopic:
    name: str
    error_code: int = 0
    topic_id: Optional[str] = None
    is_internal: bool = False
    partitions: List[MetadataResponsePartition] = field(default_factory=list)


@dataclass(slots=True)
class MetadataResponseData:
    api_key: ClassVar[str] = "Metadata"
    brokers: List[MetadataResponseBroker] = field(default_factory=list)
    topics: List[MetadataResponseTopic] = field(default_factory=list)
    cluster_id: Optional[str] = None
    controller_id: int = -1
    throttle_time_ms: int = 0


# --------------------------------------------------------------------------------------------
# FindCoordinator (single-key form v0-3; v4+ batches keys)
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class FindCoordinatorRequestData:
    """``key`` is the single-key form (what the consumer builds); ``coordinator_keys`` carries a
    v4+ batch of several keys (a batch of one is decoded into ``key``, as
    ``FindCoordinatorRequest.Builder`` would have built it)."""

    api_key: ClassVar[str] = "FindCoordinator"
    key: str
    key_type: int = CoordinatorType.GROUP
    coordinator_keys: List[str] = field(default_factory=list)


@dataclass(slots=True)
class Coordinator:
    """``FindCoordinatorResponseData.Coordinator`` (v4+: one per requested key)."""

    key: str
    node_id: int
    host: str
    port: int
    error_code: int = 0
    error_message: Optional[str] = None


@dataclass(slots=True)
class FindCoordinatorResponseData:
    """v0-3 answer in the flat fields; v4+ in ``coordinators`` (one per requested key).  A v4+
    response with exactly one coordinator also shows it in the flat fields (what
    ``FindCoordinatorResponse.coordinators()`` / ``error()`` give Kafka's consumer)."""

    api_key: ClassVar[str] = "FindCoordinator"
    error_code: int = 0
    node_id: int = -1
    host: str = ""
    port: int = -1
    error_message: Optional[str] = None
    throttle_time_ms: int = 0
    coordinators: List[Coordinator] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# JoinGroup
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class JoinGroupRequestProtocol:
    name: str
    metadata: Subscription


@dataclass(slots=True)
class JoinGroupRequestData:
    api_key: ClassVar[str] = "JoinGroup"
    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: Optional[str] = None
    protocol_type: str = CONSUMER_PROTOCOL_TYPE
    protocols: List[JoinGroupRequestProtocol] = field(default_factory=list)
    reason: Optional[str] = None


@dataclass(slots=True)
class JoinGroupResponseMember:
    member_id: str
    group_instance_id: Optional[str]
    metadata: Subscription


@dataclass(slots=True)
class JoinGroupResponseData:
    api_key: ClassVar[str] = "JoinGroup"
    error_code: int = 0
    generation_id: int = UNKNOWN_GENERATION_ID
    protocol_type: Optional[str] = None
    protocol_name: Optional[str] = None
    leader: str = ""
    member_id: str = UNKNOWN_MEMBER_ID
    members: List[JoinGroupResponseMember] = field(default_factory=list)
    skip_assignment: bool = False
    throttle_time_ms: int = 0


# --------------------------------------------------------------------------------------------
# SyncGroup
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class SyncGroupRequestAssignment:
    member_id: str
    assignment: Assignment


@dataclass(slots=True)
class SyncGroupRequestData:
    api_key: ClassVar[str] = "SyncGroup"
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: Optional[str] = None
    protocol_type: Optional[str] = None
    protocol_name: Optional[str] = None
    assignments: List[SyncGroupRequestAssignment] = field(default_factory=list)


@dataclass(slots=True)
class SyncGroupResponseData:
    api_key: ClassVar[str] = "SyncGroup"
    error_code: int = 0
    protocol_type: Optional[str] = None
    protocol_name: Optional[str] = None
    assignment: Optional[Assignment] = None
    throttle_time_ms: int = 0


# --------------------------------------------------------------------------------------------
# Heartbeat
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class HeartbeatRequestData:
    api_key: ClassVar[str] = "Heartbeat"
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: Optional[str] = None


@dataclass(slots=True)
class HeartbeatResponseData:
    api_key: ClassVar[str] = "Heartbeat"
    error_code: int = 0
    throttle_time_ms: int = 0


# --------------------------------------------------------------------------------------------
# LeaveGroup (batch form, v3+)
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class MemberIdentity:
    member_id: str
    group_instance_id: Optional[str] = None
    reason: Optional[str] = None


@dataclass(slots=True)
class LeaveGroupRequestData:
    api_key: ClassVar[str] = "LeaveGroup"
    group_id: str
    members: List[MemberIdentity] = field(default_factory=list)


@dataclass(slots=True)
class MemberResponse:
    member_id: str
    group_instance_id: Optional[str] = None
    error_code: int = 0


@dataclass(slots=True)
class LeaveGroupResponseData:
    api_key: ClassVar[str] = "LeaveGroup"
    error_code: int = 0
    members: List[MemberResponse] = field(default_factory=list)
    throttle_time_ms: int = 0


# --------------------------------------------------------------------------------------------
# OffsetCommit
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class OffsetCommitRequestPartition:
    partition_index: int
    committed_offset: int
    committed_metadata: Optional[str] = ""
    committed_leader_epoch: int = NO_LEADER_EPOCH


@dataclass(slots=True)
class OffsetCommitRequestTopic:
    name: str
    partitions: List[OffsetCommitRequestPartition] = field(default_factory=list)


@dataclass(slots=True)
class OffsetCommitRequestData:
    api_key: ClassVar[str] = "OffsetCommit"
    group_id: str
    generation_id: int = DEFAULT_GENERATION_ID
    member_id: str = DEFAULT_MEMBER_ID
    group_instance_id: Optional[str] = None
    retention_time_ms: int = DEFAULT_RETENTION_TIME
    topics: List[OffsetCommitRequestTopic] = field(default_factory=list)


@dataclass(slots=True)
class OffsetCommitResponsePartition:
    partition_index: int
    error_code: int = 0


@dataclass(slots=True)
class OffsetCommitResponseTopic:
    name: str
    partitions: List[OffsetCommitResponsePartition] = field(default_factory=list)


@dataclass(slots=True)
class OffsetCommitResponseData:
    api_key: ClassVar[str] = "OffsetCommit"
    topics: List[OffsetCommitResponseTopic] = field(default_factory=list)
    throttle_time_ms: int = 0


# --------------------------------------------------------------------------------------------
# OffsetFetch (single-group form, v0-7)
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class OffsetFetchRequestTopic:
    name: str
    partition_indexes: List[int] = field(default_factory=list)


@dataclass(slots=True)
class OffsetFetchRequestData:
    """``topics=None`` fetches all committed offsets of the group."""

    api_key: ClassVar[str] = "OffsetFetch"
    group_id: str
    topics: Optional[List[OffsetFetchRequestTopic]] = None
    require_stable: bool = False


@dataclass(slots=True)
class OffsetFetchResponsePartition:
    partition_index: int
    committed_offset: int = INVALID_OFFSET
    committed_leader_epoch: int = NO_LEADER_EPOCH
    metadata: Optional[str] = NO_METADATA
    error_code: int = 0


@dataclass(slots=True)
class OffsetFetchResponseTopic:
    name: str
    partitions: List[OffsetFetchResponsePartition] = field(default_factory=list)


@dataclass(slots=True)
class OffsetFetchResponseData:
    api_key: ClassVar[str] = "OffsetFetch"
    topics: List[OffsetFetchResponseTopic] = field(default_factory=list)
    error_code: int = 0
    throttle_time_ms: int = 0


# --------------------------------------------------------------------------------------------
# ConsumerGroupHeartbeat (KIP-848, API key 68, v0-1)
# --------------------------------------------------------------------------------------------

@dataclass(slots=True)
class ConsumerGroupHeartbeatTopicPartitions:
    """One topic's partitions, by topic id: the request's TopicPartitions and the answer's
    Assignment.TopicPartitions have this shape."""

    topic_id: str
    partitions: List[int] = field(default_factory=list)


@dataclass(slots=True)
class ConsumerGroupHeartbeatRequestData:
    """A None in an optional field means "unchanged since the last heartbeat" (Kafka's null); a
    full request (joining, or after an error) sets rebalance_timeout_ms, the subscription and
    topic_partitions."""

    api_key: ClassVar[str] = "ConsumerGroupHeartbeat"
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: Optional[str] = None
    rack_id: Optional[str] = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: Optional[List[str]] = None
    subscribed_topic_regex: Optional[str] = None
    server_assignor: Optional[str] = None
    topic_partitions: Optional[List[ConsumerGroupHeartbeatTopicPartitions]] = None


@dataclass(slots=True)
class ConsumerGroupHeartbeatAssignment:
    topic_partitions: List[ConsumerGroupHeartbeatTopicPartitions] = field(default_factory=list)


@dataclass(slots=True)
class ConsumerGroupHeartbeatResponseData:
    api_key: ClassVar[str] = "ConsumerGroupHeartbeat"
    error_code: int = 0
    error_message: Optional[str] = None
    member_id: Optional[str] = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Optional[ConsumerGroupHeartbeatAssignment] = None
    throttle_time_ms: int = 0


#: API name → (request class, response class).
API_KEYS: dict = {
    cls_req.api_key: (cls_req, cls_resp)
    for cls_req, cls_resp in (
        (ApiVersionsRequestData, ApiVersionsResponseData),
        (MetadataRequestData, MetadataResponseData),
        (FindCoordinatorRequestData, FindCoordinatorResponseData),
        (JoinGroupRequestData, JoinGroupResponseData),
        (SyncGroupRequestData, SyncGroupResponseData),
        (HeartbeatRequestData, HeartbeatResponseData),
        (LeaveGroupRequestData, LeaveGroupResponseData),
        (OffsetCommitRequestData, OffsetCommitResponseData),
        (OffsetFetchRequestData, OffsetFetchResponseData),
        (ConsumerGroupHeartbeatRequestData, ConsumerGroupHeartbeatResponseData),
    )
}
