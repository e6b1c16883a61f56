"""The client-side group coordinator (``org.apache.kafka.clients.consumer.internals``), protocol §3.

* :mod:`impl.coordinator.abstract_coordinator` — ``AbstractCoordinator``, ``MemberState``,
  ``Generation``, the JoinGroup/SyncGroup/Heartbeat/LeaveGroup response handlers and the
  ``HeartbeatThread`` (one loop iteration per ``run_once()``);
* :mod:`impl.coordinator.heartbeat` — ``Heartbeat`` (heartbeat / session / poll timers);
* :mod:`impl.coordinator.consumer_coordinator` — ``ConsumerCoordinator`` (assignment, offsets);
* :mod:`impl.coordinator.assignors` — ``RangeAssignor``, ``RoundRobinAssignor``.
"""

from impl.coordinator.abstract_coordinator import (
    NO_GENERATION,
    AbstractCoordinator,
    CoordinatorResponseHandler,
    FindCoordinatorResponseHandler,
    Generation,
    GroupRebalanceConfig,
    HeartbeatResponseHandler,
    HeartbeatThread,
    JoinGroupResponseHandler,
    LeaveGroupResponseHandler,
    MemberState,
    SyncGroupResponseHandler,
)
from impl.coordinator.assignors import RangeAssignor, RoundRobinAssignor, assignor_for_name
from impl.coordinator.consumer_coordinator import (
    ConsumerCoordinator,
    ConsumerRebalanceListener,
    OffsetAndMetadata,
    OffsetCommitResponseHandler,
    OffsetFetchResponseHandler,
    SubscriptionState,
)
from impl.coordinator.heartbeat import Heartbeat

__all__ = [
    "AbstractCoordinator", "ConsumerCoordinator", "ConsumerRebalanceListener",
    "CoordinatorResponseHandler", "FindCoordinatorResponseHandler", "Generation",
    "GroupRebalanceConfig", "Heartbeat", "HeartbeatResponseHandler", "HeartbeatThread",
    "JoinGroupResponseHandler", "LeaveGroupResponseHandler", "MemberState", "NO_GENERATION",
    "OffsetAndMetadata", "OffsetCommitResponseHandler", "OffsetFetchResponseHandler",
    "RangeAssignor", "RoundRobinAssignor", "SubscriptionState", "SyncGroupResponseHandler",
    "assignor_for_name",
]
