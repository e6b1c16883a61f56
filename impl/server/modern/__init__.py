"""Broker side of KIP-848's consumer group protocol (ConsumerGroupHeartbeat), in the shapes of
Kafka 4.1's ``org.apache.kafka.coordinator.group`` (the ``kafka-group-coordinator`` module):

* :mod:`.consumer_group_member` — ``ConsumerGroupMember`` and the coordinator's ``MemberState``;
* :mod:`.consumer_group` — ``ConsumerGroup``: members, epochs, the target assignment, the
  partition epochs, ``maybeUpdateGroupState``, ``validateOffsetCommit``;
* :mod:`.current_assignment_builder` — ``CurrentAssignmentBuilder``: a member's reconciliation;
* :mod:`.range_assignor` — the server ``RangeAssignor``;
* :mod:`.target_assignment_builder` — ``TargetAssignmentBuilder``;
* :mod:`.coordinator` — ``ConsumerGroupCoordinator``: ``GroupMetadataManager``'s consumer-group
  part (``consumerGroupHeartbeat``, leave, fencing, the session and rebalance timers on a keyed
  coordinator timer) and ``GroupCoordinatorService``'s request validation.

Written from Kafka's code, apart from ``model.kip848`` (which says the same rules as functions
over immutable values): the differential check (``properties.kip848.differential``) runs the two
side by side. Every member is dynamic (no instance ids yet), and the group has no records: state
changes are applied where Kafka's replay of the records would apply them.
"""

from impl.server.modern.consumer_group import ConsumerGroup, ConsumerGroupState
from impl.server.modern.consumer_group_member import ConsumerGroupMember, MemberState
from impl.server.modern.coordinator import ConsumerGroupCoordinator, ModernGroupConfig

__all__ = ["ConsumerGroup", "ConsumerGroupState", "ConsumerGroupMember", "MemberState",
           "ConsumerGroupCoordinator", "ModernGroupConfig"]
