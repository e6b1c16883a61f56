"""Broker configuration relevant to group coordination (``GroupConfig`` / ``OffsetConfig`` /
the ``KafkaConfig`` keys the coordinator reads), with Kafka's defaults (protocol reference §1.13)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Tuple

from impl.time import INT_MAX

#: ``GroupCoordinator.NewMemberJoinTimeoutMs``: heartbeat deadline of a member added by JoinGroup
#: until its first join phase completes.
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000

#: API name → (min version, max version) this broker supports (what ApiVersions advertises).
#: FindCoordinator stops at v3 and OffsetFetch at v7: :mod:`impl.protocol` carries only their
#: single-key / single-group forms.
DEFAULT_API_VERSIONS: Dict[str, Tuple[int, int]] = {
    "ApiVersions": (0, 3),
    "Metadata": (0, 12),
    "FindCoordinator": (0, 3),
    "JoinGroup": (0, 9),
    "SyncGroup": (0, 5),
    "Heartbeat": (0, 4),
    "LeaveGroup": (0, 5),
    "OffsetCommit": (0, 8),
    "OffsetFetch": (0, 7),
    "ConsumerGroupHeartbeat": (0, 1),
}


@dataclass(slots=True)
class BrokerConfig:
    """The broker settings the group coordinator and request handling use."""

    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = INT_MAX
    offsets_topic_num_partitions: int = 50
    offsets_commit_timeout_ms: int = 5000
    offset_metadata_max_bytes: int = 4096
    new_member_join_timeout_ms: int = NEW_MEMBER_JOIN_TIMEOUT_MS
    #: KIP-848's group.consumer.session.timeout.ms and group.consumer.heartbeat.interval.ms
    consumer_session_timeout_ms: int = 45000
    consumer_heartbeat_interval_ms: int = 5000
    #: Before and after handling a request, fire the timer tasks whose deadline the clock has
    #: already reached (Kafka's SystemTimer runs an expired task at once, and its reaper would
    #: have run the others by then).
    expire_overdue_before_request: bool = True
    api_versions: Dict[str, Tuple[int, int]] = field(default_factory=lambda: dict(DEFAULT_API_VERSIONS))
    host_format: str = "broker-%d"
    port: int = 9092
