"""Broker side of the classic consumer-group protocol.

Modelled on Kafka's Scala group coordinator (``kafka.coordinator.group``) and request handling
(``kafka.server.KafkaApis``), running single-threaded on a deterministic timer:

* :mod:`impl.server.timer` — ``TimerTask``, ``MockTimer``, ``DelayedOperation``,
  ``DelayedOperationPurgatory``;
* :mod:`impl.server.group_metadata` — ``GroupMetadata``, ``MemberMetadata``, ``GroupState``;
* :mod:`impl.server.group_metadata_manager` — ``GroupMetadataManager``, the shared
  ``OffsetsTopicLog`` (``__consumer_offsets``), ``partition_for``;
* :mod:`impl.server.group_coordinator` — ``GroupCoordinator`` and ``DelayedJoin``,
  ``InitialDelayedJoin``, ``DelayedSync``, ``DelayedHeartbeat``;
* :mod:`impl.server.broker` — ``Broker.handle`` (KafkaApis dispatch);
* :mod:`impl.server.cluster` — ``Cluster`` (liveness, leadership, metadata, failover, clock).
"""

from impl.server.broker import Broker
from impl.server.cluster import Cluster, preferred_live_broker
from impl.server.config import NEW_MEMBER_JOIN_TIMEOUT_MS, BrokerConfig
from impl.server.group_coordinator import (DelayedHeartbeat, DelayedJoin, DelayedSync, GroupCoordinator,
                                           InitialDelayedJoin)
from impl.server.group_metadata import GroupMetadata, GroupState, MemberMetadata
from impl.server.group_metadata_manager import (GroupMetadataManager, OffsetAndMetadata, OffsetsTopicLog,
                                                java_string_hash_code, partition_for, utils_abs)
from impl.server.timer import DelayedOperation, DelayedOperationPurgatory, MockTimer, TimerTask

__all__ = [
    "Broker", "Cluster", "preferred_live_broker", "BrokerConfig", "NEW_MEMBER_JOIN_TIMEOUT_MS",
    "GroupCoordinator", "DelayedJoin", "InitialDelayedJoin", "DelayedSync", "DelayedHeartbeat",
    "GroupMetadata", "GroupState", "MemberMetadata", "GroupMetadataManager", "OffsetAndMetadata",
    "OffsetsTopicLog", "java_string_hash_code", "partition_for", "utils_abs",
    "DelayedOperation", "DelayedOperationPurgatory", "MockTimer", "TimerTask",
]
