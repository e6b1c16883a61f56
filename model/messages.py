"""Requests and responses of the group APIs, as the model sees them.

Only the fields the classic protocol's behaviour depends on are kept. Protocol metadata is the
subscribed topic tuple (byte equality of Kafka's encoded subscription becomes tuple equality);
assignments are tuples of partition numbers of the one subscribed topic.

Every class is a frozen, slotted attrs class: values, cheap to build and to compare.
"""

from __future__ import annotations

import attrs

from model.errors import Errors

NO_GENERATION = -1
UNKNOWN_MEMBER_ID = ""

Protocols = tuple  # ((name, metadata), ...) most preferred first
Assignment = tuple  # partition numbers


@attrs.frozen(slots=True)
class FindCoordinatorRequest:
    key: str
    api = "FindCoordinator"


@attrs.frozen(slots=True)
class FindCoordinatorResponse:
    error: int
    node_id: int = -1  # the broker id of the coordinator, -1 on error
    api = "FindCoordinator"


@attrs.frozen(slots=True)
class JoinGroupRequest:
    group_id: str
    member_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    client_id: str = ""
    group_instance_id: str | None = None  # group.instance.id: a static member (KIP-345), v5+
    api = "JoinGroup"


@attrs.frozen(slots=True)
class JoinGroupResponse:
    error: int
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = ""
    member_id: str = ""
    members: tuple = ()  # ((member_id, metadata), ...): only the leader gets them
    # ((member_id, group.instance.id), ...) of the static ones among them (JoinGroupResponseMember's
    # groupInstanceId): the assignors order static members by it
    member_instances: tuple = ()
    api = "JoinGroup"


@attrs.frozen(slots=True)
class SyncGroupRequest:
    group_id: str
    generation_id: int
    member_id: str
    protocol_type: str | None
    protocol_name: str | None
    assignments: tuple = ()  # ((member_id, Assignment), ...): only the leader sends them
    group_instance_id: str | None = None
    api = "SyncGroup"


@attrs.frozen(slots=True)
class SyncGroupResponse:
    error: int
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: Assignment = ()
    api = "SyncGroup"


@attrs.frozen(slots=True)
class HeartbeatRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None
    api = "Heartbeat"


@attrs.frozen(slots=True)
class HeartbeatResponse:
    error: int
    api = "Heartbeat"


@attrs.frozen(slots=True)
class LeaveGroupRequest:
    group_id: str
    member_ids: tuple  # batch form (v3+)
    # the leaving members' group.instance.id, in member_ids' order (() = none static); a member id
    # "" with an instance id is the admin removal of that static member
    instance_ids: tuple = ()
    api = "LeaveGroup"


@attrs.frozen(slots=True)
class LeaveGroupResponse:
    error: int  # top-level
    member_errors: tuple = ()  # ((member_id, error), ...)
    api = "LeaveGroup"

    def overall_error(self) -> int:
        """LeaveGroupResponse.error(): top-level if set, else the first member error, else NONE."""
        if self.error != Errors.NONE:
            return self.error
        for _, err in self.member_errors:
            if err != Errors.NONE:
                return err
        return Errors.NONE


@attrs.frozen(slots=True)
class OffsetCommitRequest:
    group_id: str
    generation_id: int
    member_id: str
    offsets: tuple  # ((partition, offset), ...)
    # partitions whose metadata string is longer than the broker's offset.metadata.max.bytes (the
    # application chose it, OffsetAndMetadata.metadata): the broker refuses those one by one
    oversized: tuple = ()
    group_instance_id: str | None = None
    api = "OffsetCommit"


@attrs.frozen(slots=True)
class OffsetCommitResponse:
    errors: tuple  # ((partition, error), ...)
    api = "OffsetCommit"

    @property
    def error(self) -> int:
        """The first non-NONE partition error (the client acts on per-partition errors in order)."""
        for _, err in self.errors:
            if err != Errors.NONE:
                return err
        return Errors.NONE
