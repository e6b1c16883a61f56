"""Reading the broker's trace for the client judges (:mod:`.judge` for the classic protocol,
:mod:`.judge_kip848` for KIP-848's): every client's requests with their answers, closes and
injected faults (:func:`exchanges`), when a request may really have been sent (:func:`_queueing`),
the windows a fault held a client (:func:`_holds`), silences (:func:`_silent_from`), the
:class:`Finding` shape with every rule's source in Kafka's client (:data:`SOURCES`), and the
``group-settles`` finding both judges share."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import attrs

WINDOW_MS = 250
#: A request the broker read this soon after the previous answer on its connection was written
#: (or after a fault held the connection) may have waited in the socket all along: the broker reads
#: one request per connection at a time (its 300 ms poll wait, and some slack).
PIPELINE_MS = 350


SOURCES = {
    "one-rebalance-request-in-flight": "AbstractCoordinator.initiateJoinGroup / JoinGroupResponseHandler (SyncGroup sent from the JoinGroup answer's handler)",
    "heartbeat-carries-current-generation": "AbstractCoordinator.HeartbeatThread.run (hasNotJoinedGroup), sendHeartbeatRequest (generation), resetStateAndGeneration",
    "commit-carries-current-generation": "ConsumerCoordinator.sendOffsetCommitRequest (generationIfStable), OffsetCommitResponseHandler (resetGenerationOnResponseError)",
    "rejoin-after-error": "AbstractCoordinator.HeartbeatResponseHandler / SyncGroupResponseHandler (requestRejoin), ConsumerCoordinator.OffsetCommitResponseHandler (resetStateAndRejoin)",
    "member-id-kept-until-told": "AbstractCoordinator.resetStateOnResponseError, resetJoinGroupFuture (KAFKA-13214: retriable errors keep the member id)",
    "rediscover-after-coordinator-error": "AbstractCoordinator.markCoordinatorUnknown, ensureCoordinatorReady / lookupCoordinator",
    "heartbeats-continue": "AbstractCoordinator.HeartbeatThread.run (a Heartbeat every heartbeat.interval.ms while joined), Heartbeat.sessionTimeoutExpired",
    "assignment-matches-sync": "ConsumerCoordinator.onJoinComplete (the SyncGroup's assignment), onJoinPrepare (eager: revoke all first)",
    "revoke-before-rejoin": "ConsumerCoordinator.onJoinPrepare (eager: onPartitionsRevoked / onPartitionsLost for every owned partition before the JoinGroup)",
    "group-settles": "GroupCoordinator: a group whose members all rejoin completes its rebalance and is Stable",
    "static-member-carries-instance-id": "AbstractCoordinator.sendJoinGroupRequest / sendSyncGroupRequest / sendHeartbeatRequest, ConsumerCoordinator.sendOffsetCommitRequest (setGroupInstanceId); JoinGroupRequest / SyncGroupRequest / HeartbeatRequest / OffsetCommitRequest .Builder.build (UnsupportedVersionException for group.instance.id below v5 / v3 / v3 / v7)",
    "static-member-does-not-leave": "AbstractCoordinator.maybeLeaveGroup (only a dynamic member sends LeaveGroup; a static one leaves by session expiry)",
    # KIP-848's consumer protocol (properties/clients/judge_kip848.py)
    "kip848-one-heartbeat-in-flight": "AbstractHeartbeatRequestManager.poll (heartbeatRequestState.requestInFlight: no new heartbeat until the previous one completes; a leave is sent whatever is in flight, and heartbeatRequestState.reset() after it)",
    "kip848-heartbeat-carries-member-epoch": "ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData (memberEpoch), AbstractMembershipManager.onHeartbeatSuccess (updateMemberEpoch), transitionToFenced / transitionToJoining (epoch 0), leaveGroup (epoch -1)",
    "kip848-member-id-kept": "AbstractMembershipManager (memberId generated once at startup, KIP-1082; kept through fencing and rejoining)",
    "kip848-full-heartbeat-after-join-or-failure": "ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData (sendAllFields while JOINING), AbstractHeartbeatRequestManager.onFailure / onErrorResponse (resetHeartbeatState: every field sent again)",
    "kip848-owned-were-assigned": "AbstractMembershipManager.currentAssignment (only what a reconciliation of a received target assigned), ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData (TopicPartitions)",
    "kip848-revoked-before-acknowledged": "AbstractMembershipManager.revokeAndAssign (onPartitionsRevoked completes, then updateAssignment; the next heartbeat reports the new assignment)",
    "kip848-leaves-on-close": "ConsumerMembershipManager.leaveGroup / AsyncKafkaConsumer.close (MemberEpoch ConsumerMembershipManager.leaveGroupEpoch: -1 for a dynamic member, -2 for a static one)",
    "kip848-static-member-carries-instance-id": "ConsumerGroupHeartbeatRequest.json (InstanceId: \"null if not provided or if it didn't change since the last heartbeat\"); GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid (epoch -2: \"InstanceId can't be null.\"); GroupMetadataManager.consumerGroupHeartbeat (a join with an instance id is a static member's)",
    "kip848-heartbeats-continue": "AbstractHeartbeatRequestManager.poll (a heartbeat every heartbeat interval the coordinator gave while the member is in the group)",
}


@attrs.frozen
class Finding:
    rule: str
    client: str
    at_ms: int  # ms after the fault schedule's zero
    summary: str
    evidence: Tuple[str, ...] = ()

    @property
    def source(self) -> str:
        return SOURCES[self.rule]

    def signature(self) -> str:
        return f"{self.rule}"

    def to_json(self) -> dict:
        return {"rule": self.rule, "client": self.client, "at_ms": self.at_ms, "summary": self.summary,
                "source": self.source, "evidence": list(self.evidence)}

    @classmethod
    def from_json(cls, data: dict) -> "Finding":
        return cls(data["rule"], data["client"], int(data["at_ms"]), data["summary"], tuple(data.get("evidence", ())))


@attrs.define
class _Exchange:
    """One request of a client and what became of it."""

    request: dict
    position: int = 0  # the request's line number in the trace (the broker's processing order)
    response: Optional[dict] = None
    answered_position: Optional[int] = None  # its answer's line number
    closed_ms: Optional[int] = None  # its connection went away first
    injected: Optional[str] = None  # the fault applied to it (its kind), if any
    queued_from: Optional[int] = None  # the earliest the client may have sent it (see _queueing)
    connection_closed_ms: Optional[int] = None  # when its connection went away, if it did

    @property
    def maybe_unread(self) -> bool:
        """The client closed the connection so soon after this answer was written that it may
        have dropped it unread (a client giving up on a connection discards what it holds)."""
        return (self.response is not None and self.connection_closed_ms is not None
                and self.connection_closed_ms <= self.answered + WINDOW_MS)

    @property
    def sent_after(self) -> int:
        """The time the client sent this request at the earliest, as the trace can tell."""
        return self.request["time_ms"] if self.queued_from is None else self.queued_from

    @property
    def api(self) -> str:
        return self.request["api"]

    @property
    def sent(self) -> int:
        return self.request["time_ms"]

    @property
    def answered(self) -> Optional[int]:
        return None if self.response is None else self.response["time_ms"]

    @property
    def ended(self) -> Optional[int]:
        return self.answered if self.answered is not None else self.closed_ms

    @property
    def error(self) -> Optional[int]:
        if self.response is None:
            return None
        return _error_code(self.api, self.response["body"])


def _error_code(api: str, body: dict) -> int:
    if api == "OffsetCommit":
        codes = [p["error_code"] for t in body.get("topics") or () for p in t.get("partitions") or ()]
        return next((c for c in codes if c), 0)
    if api == "LeaveGroup" and not body.get("error_code"):
        codes = [m.get("error_code", 0) for m in body.get("members") or ()]
        return next((c for c in codes if c), 0)
    return body.get("error_code", 0) or 0


def exchanges(trace: Tuple[dict, ...]) -> Dict[str, List[_Exchange]]:
    """Every client's requests in the order the broker read them, each with its answer, the close
    of its connection before an answer, and the fault injected into it."""
    out: Dict[str, List[_Exchange]] = {}
    open_: Dict[Tuple[str, int], _Exchange] = {}
    by_connection: Dict[str, List[_Exchange]] = {}
    for position, line in enumerate(trace):
        direction = line["direction"]
        if direction == "request":
            ex = _Exchange(line, position)
            out.setdefault(line.get("client_id") or "", []).append(ex)
            by_connection.setdefault(line["connection"], []).append(ex)
            open_[(line["connection"], line["correlation_id"])] = ex
        elif direction == "response":
            ex = open_.pop((line["connection"], line["correlation_id"]), None)
            if ex is not None:
                ex.response, ex.answered_position = line, position
        elif direction == "fault" and "connection" in line:
            ex = open_.get((line["connection"], line["correlation_id"]))
            if ex is not None:
                kind = line["fault"]["kind"]
                ex.injected = kind if kind != "drop" else f"drop-{line['fault']['when']}"
        elif direction == "closed":
            for key in [k for k in open_ if k[0] == line["connection"]]:
                open_.pop(key).closed_ms = line["time_ms"]
            for ex in by_connection.get(line["connection"], ()):
                ex.connection_closed_ms = line["time_ms"]
    return out


def _queueing(exs: List[_Exchange], holds: List[Tuple[int, int]]) -> None:
    """Set every request's ``queued_from``. The broker reads one request of a connection at a time
    and nothing of a held one, so a request read right after the previous answer on its
    connection was written (or right after a hold ended) may have been sent long before: as early
    as the first request of that busy stretch was read, or the hold began. A judge that took the
    read time for the send time would blame a client for what it sent before it was told."""
    by_connection: Dict[str, List[_Exchange]] = {}
    for ex in exs:
        by_connection.setdefault(ex.request["connection"], []).append(ex)
    for chain in by_connection.values():
        start, previous_end = None, None
        for ex in chain:
            read = ex.sent
            earliest = read
            if previous_end is not None and read - previous_end <= PIPELINE_MS and start is not None:
                earliest = start
            for lo, hi in holds:
                if lo <= read and read - hi <= PIPELINE_MS:
                    earliest = min(earliest, lo)
            ex.queued_from = earliest
            start = earliest
            previous_end = ex.ended if ex.ended is not None else read


def settle_finding(outcome) -> Finding:
    """``group-settles``: what the group looked like when the session stopped waiting for it."""
    return Finding("group-settles", "group", outcome.schedule.faults_end_ms() + outcome.settle.waited_ms,
                   f"the group did not settle within {outcome.schedule.settle_ms} ms of the last fault: "
                   f"{outcome.settle.detail}",
                   tuple(f"partition {p}: {o}" for p, o in sorted(outcome.settle.owners.items())))


def _holds(trace, client: str) -> List[Tuple[int, int]]:
    """The windows in which the broker held *client*'s connections on purpose (its silences, and
    every pause: the schedules run one broker)."""
    out = []
    for line in trace:
        if line["direction"] != "fault" or "connection" in line:
            continue
        fault = line["fault"]
        if fault["kind"] == "pause" or (fault["kind"] == "silence" and fault.get("client") == client):
            out.append((line["time_ms"], line["time_ms"] + fault["ms"]))
    return out


def _silent_from(start: int, end: int, busy: List[Tuple[int, int]]) -> Optional[Tuple[int, int]]:
    """The longest sub-interval of [start, end) that no busy window covers, if any."""
    best, cursor = None, start
    for lo, hi in busy:
        if hi is None or hi <= cursor:
            continue
        if lo >= end:
            break
        if lo > cursor and (best is None or lo - cursor > best[1] - best[0]):
            best = (cursor, lo)
        cursor = max(cursor, hi)
    if cursor < end and (best is None or end - cursor > best[1] - best[0]):
        best = (cursor, end)
    return best
