"""``ConsumerGroupMember`` (``org.apache.kafka.coordinator.group.modern.consumer``) and the
coordinator's ``MemberState`` (``org.apache.kafka.coordinator.group.modern.MemberState``).

A member is immutable, as in Kafka, where ``ConsumerGroupMember.Builder`` makes a changed copy:
:meth:`ConsumerGroupMember.but` is the builder's setters, :meth:`update_member_epoch` its
``updateMemberEpoch``. An assignment is ``{topic id: frozenset of partitions}`` with no empty sets.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Mapping, Optional


class MemberState(enum.Enum):
    """Where a member is in its reconciliation (MemberState of the group coordinator)."""

    STABLE = "stable"
    UNREVOKED_PARTITIONS = "unrevoked_partitions"
    UNRELEASED_PARTITIONS = "unreleased_partitions"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ClassicMemberMetadata:
    """ConsumerGroupMemberMetadataValue.ClassicMemberMetadata: what a classic member's JoinGroup told
    the coordinator (its session timeout, its protocols' names in the request's order)."""

    session_timeout_ms: int
    supported_protocols: tuple


@dataclass(frozen=True, slots=True)
class ConsumerGroupMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    instance_id: Optional[str] = None
    rack_id: Optional[str] = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    subscribed_topic_names: frozenset = frozenset()
    server_assignor_name: Optional[str] = None
    assigned_partitions: Mapping[str, frozenset] = field(default_factory=dict)
    partitions_pending_revocation: Mapping[str, frozenset] = field(default_factory=dict)
    classic_member_metadata: Optional[ClassicMemberMetadata] = None  # a member of the classic protocol's

    @property
    def use_classic_protocol(self) -> bool:
        """ConsumerGroupMember.useClassicProtocol."""
        return self.classic_member_metadata is not None

    def but(self, **changes) -> "ConsumerGroupMember":
        """A copy with *changes* (the Builder's setters)."""
        return dataclasses.replace(self, **changes)

    def update_member_epoch(self, member_epoch: int, **changes) -> "ConsumerGroupMember":
        """Builder.updateMemberEpoch: the current epoch becomes the previous one."""
        return dataclasses.replace(self, previous_member_epoch=self.member_epoch, member_epoch=member_epoch, **changes)

    def is_reconciled_to(self, target_assignment_epoch: int) -> bool:
        """ModernGroupMember.isReconciledTo."""
        return self.state is MemberState.STABLE and self.member_epoch == target_assignment_epoch
