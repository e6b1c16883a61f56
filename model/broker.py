"""A broker's request handling in front of the group coordinator (protocol reference §1.3, §2).

Any live broker answers FindCoordinator from the cluster's view of who leads the group's
``__consumer_offsets`` partition. Group APIs first pass the common prelude (``validateGroupStatus``)
with its per-API remapping, and only then reach :mod:`model.group`.
"""

from __future__ import annotations

import attrs

from model import group as g
from model.errors import Errors
from model.messages import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)


@attrs.frozen(slots=True)
class BrokerState:
    """One broker: alive or crashed; whether it is loading the group's offsets partition; the group
    it coordinates (only the partition leader has one)."""

    alive: bool = True
    loading: bool = False
    group: g.Group | None = None


_HANDLERS = {
    JoinGroupRequest: g.handle_join_group,
    SyncGroupRequest: g.handle_sync_group,
    HeartbeatRequest: g.handle_heartbeat,
    LeaveGroupRequest: g.handle_leave_group,
    OffsetCommitRequest: g.handle_offset_commit,
}


def find_coordinator(request: FindCoordinatorRequest, leader: int | None, brokers: tuple) -> FindCoordinatorResponse:
    """KafkaApis.getCoordinator: the partition leader if it is alive, else COORDINATOR_NOT_AVAILABLE.
    FindCoordinator never answers NOT_COORDINATOR."""
    if leader is None or not brokers[leader].alive:
        return FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE)
    return FindCoordinatorResponse(Errors.NONE, leader)


def prelude_error(request, is_leader: bool, loading: bool) -> int:
    """``validateGroupStatus`` (§1.3) with the per-API remaps: SyncGroup turns a loading coordinator
    into REBALANCE_IN_PROGRESS and Heartbeat answers it NONE (blindly)."""
    if request.group_id == "" and not isinstance(request, OffsetCommitRequest):
        return Errors.INVALID_GROUP_ID
    if not is_leader:
        return Errors.NOT_COORDINATOR
    if loading:
        if isinstance(request, SyncGroupRequest):
            return Errors.REBALANCE_IN_PROGRESS
        if isinstance(request, HeartbeatRequest):
            return Errors.NONE
        return Errors.COORDINATOR_LOAD_IN_PROGRESS
    return Errors.NONE


def prelude_response(request, error: int):
    """The response a request gets when the prelude stops it with *error*."""
    if isinstance(request, JoinGroupRequest):
        return JoinGroupResponse(error, member_id=request.member_id)
    if isinstance(request, SyncGroupRequest):
        return SyncGroupResponse(error)
    if isinstance(request, HeartbeatRequest):
        return HeartbeatResponse(error)
    if isinstance(request, LeaveGroupRequest):
        return LeaveGroupResponse(error)
    return OffsetCommitResponse(tuple((p, error) for p, _ in request.offsets))


def version_error(request, version: int | None) -> int:
    """What ``KafkaApis`` refuses for the request's *version* before the coordinator sees it:
    ``handleSyncGroupRequest`` answers a SyncGroup v5+ without a protocol type or name
    INCONSISTENT_GROUP_PROTOCOL (``SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent``,
    KIP-559). ``None``: the version is not known (the simulated world), nothing to check."""
    if (version is not None and version >= 5 and isinstance(request, SyncGroupRequest)
            and (request.protocol_type is None or request.protocol_name is None)):
        return Errors.INCONSISTENT_GROUP_PROTOCOL
    return Errors.NONE


def as_coordinator_reads(request, version: int):
    """The request as the coordinator reads it: a JoinGroup v0 has no rebalance timeout, and its
    session timeout stands in for it (``JoinGroupRequest.maybeOverrideRebalanceTimeout``, run
    when the request is parsed). *version*: the request's API version."""
    if version == 0 and isinstance(request, JoinGroupRequest):
        return attrs.evolve(request, rebalance_timeout_ms=request.session_timeout_ms)
    return request


#: From this OffsetCommit version on, the Java coordinator answers a commit at a generation to a
#: group it does not have GROUP_ID_NOT_FOUND (KIP-848); below it, and the Scala coordinator at any
#: version, ILLEGAL_GENERATION
OFFSET_COMMIT_GROUP_NOT_FOUND_VERSION = 9


def handle_group_request(broker: BrokerState, is_leader: bool, request, reply_to, now, config, choose,
                         member_seq: int = 0, version: int | None = None) -> g.Outcome:
    """Run a group API request on *broker*: the version checks, the prelude, then the coordinator's
    handler. *member_seq* is the number of member ids issued so far by any coordinator: a group
    created here continues from it. *version*: the request's API version when it is known."""
    error = version_error(request, version)
    if error != Errors.NONE:
        return g.Outcome(broker.group, ((reply_to, prelude_response(request, error)),))
    request = as_coordinator_reads(request, config.join_group_version if version is None else version)
    error = prelude_error(request, is_leader, broker.loading)
    if error != Errors.NONE or (broker.loading and isinstance(request, HeartbeatRequest)):
        return g.Outcome(broker.group, ((reply_to, prelude_response(request, error)),))
    handler = _HANDLERS[type(request)]
    if (broker.group is None and isinstance(request, OffsetCommitRequest) and request.generation_id >= 0
            and config.new_group_coordinator and version is not None and version >= OFFSET_COMMIT_GROUP_NOT_FOUND_VERSION):
        # a commit at a generation to a group the coordinator does not have: from OffsetCommit v9
        # on the Java coordinator answers GROUP_ID_NOT_FOUND (KIP-848), before it ILLEGAL_GENERATION
        # as the Scala one always does (OffsetMetadataManager.validateOffsetCommit: "Starting from
        # version 9 of the OffsetCommit API, we return GROUP_ID_NOT_FOUND if the group does not exist")
        errors = tuple((p, Errors.GROUP_ID_NOT_FOUND) for p, _ in request.offsets)
        return g.Outcome(None, ((reply_to, OffsetCommitResponse(errors)),))
    if broker.group is None and handler in (g.handle_join_group, g.handle_offset_commit):
        return handler(None, request, reply_to, now, config, choose, member_seq)
    return handler(broker.group, request, reply_to, now, config, choose)
