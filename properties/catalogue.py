"""The property catalogue: what must always hold, what must eventually happen, what must be reached.

Every property has a name, a kind, a one-paragraph statement and a source. The checks live in
:class:`Checker`, which sees every step as ``(previous world, event, new world, step log)``:

* ``always`` properties are checked after every step; the first violation ends the run;
* ``eventually`` properties are checked once, after the disruptions stop and the world has had
  quiet time to settle (:func:`properties.explore.walker.settle`);
* ``sometimes`` properties are counted as coverage: a campaign that never reaches one has a gap.

Most checks read the step log (what was sent, transmitted, expired, completed, which notes the
coordinator emitted); the rest compare the group or the clients before and after the step. A check
never re-runs the model: where it needs the expected answer (an error-precedence table), it derives
it from the reference independently.
"""

from __future__ import annotations

import attrs

from model import group as grp
from model.client import COMPLETING_REBALANCE, DISCONNECTED, PREPARING_REBALANCE, STABLE, UNJOINED
from model.broker import as_coordinator_reads
from model.config import Config, redeployed
from model.entries import as_entry
from model.events import as_event
from model.errors import Errors, name_of
from model.messages import HeartbeatRequest, OffsetCommitRequest
from model.topics import FIRST, SECOND, SECOND_BASE, mask_of, second_partitions, topic_of

ALWAYS, EVENTUALLY, SOMETIMES = "always", "eventually", "sometimes"
REF = "docs/protocol.md"  # the behavioural reference, vendored in the repository


@attrs.frozen
class Property:
    name: str
    kind: str
    statement: str
    source: str

    def as_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "statement": self.statement, "source": self.source}


CATALOGUE = (
    # ---------------------------------------------------------------- server, always
    Property(
        "generation-advances-by-one", ALWAYS,
        "While one coordinator owns the group, its generation never decreases and every completed join "
        "phase raises it by exactly one (also when the group becomes Empty). A coordinator that takes "
        "over starts from the last persisted generation, which itself never decreases. Members rely on "
        "the generation to fence stale requests; a skipped or repeated value lets two rebalances "
        "share a generation.",
        f"{REF} §1.6 initNextGeneration, §7",
    ),
    Property(
        "one-member-per-instance", ALWAYS,
        "A static member's group.instance.id names one member of the group at a time: a known "
        "instance joining with a new member id replaces the old id (which is then fenced), never "
        "adds a second member. Two live member ids for one instance would both be handed "
        "partitions and both be let commit.",
        f"{REF} §1.11 replaceStaticMember; GroupMetadata.staticMembers",
    ),
    Property(
        "fenced-member-id-never-accepted", ALWAYS,
        "Once the coordinator has replaced a static member's id (its group.instance.id joined again "
        "with a new one), it never answers a JoinGroup, SyncGroup, Heartbeat or OffsetCommit "
        "carrying the replaced id with success (an OffsetCommit outside group management, generation "
        "-1 on an Empty group, is exempt: Kafka validates no member id there); only a coordinator that loads an older group record "
        "(a failover) knows that id again. The replaced process may still run (a restart whose old "
        "instance lingers, two processes given one instance id): the coordinator's refusal "
        "(FENCED_INSTANCE_ID) is what stops it committing and holding partitions.",
        f"{REF} §1.11; GroupCoordinator.validateCurrentMember, GroupMetadata.replaceStaticMember",
    ),
    Property(
        "static-rejoin-keeps-generation", ALWAYS,
        "A known static instance that joins a Stable group again with an unknown member id and the "
        "protocols it had is answered at once with the group's current generation: the coordinator "
        "swaps in the new member id and writes the group, without a rebalance (unless the write "
        "fails, answered with its error). That a restarted static member costs the group no "
        "rebalance is the point of KIP-345.",
        f"{REF} §1.11; GroupCoordinator.updateStaticMemberAndRebalance (case Stable)",
    ),
    Property(
        "leader-is-member", ALWAYS,
        "A group with members has exactly one leader and it is one of its members; a group without "
        "members has none. When the leader leaves or expires, another member is picked. A leader "
        "outside the group would never send the assignment, stalling every follower's SyncGroup.",
        f"{REF} §1.6 leader bookkeeping",
    ),
    Property(
        "legal-group-transitions", ALWAYS,
        "Every group state change follows the coordinator's table of valid previous states: "
        "PreparingRebalance from Stable, CompletingRebalance or Empty; CompletingRebalance only from "
        "PreparingRebalance; Stable only from CompletingRebalance; Empty only from "
        "PreparingRebalance; Dead from anywhere.",
        f"{REF} §1.2",
    ),
    Property(
        "join-completes-when-all-joined", ALWAYS,
        "A join phase completes early only when every known member has rejoined and no member id "
        "handed out with MEMBER_ID_REQUIRED is still pending; otherwise it completes at the "
        "rebalance deadline. Completing early with pending members leaves a consumer that was told "
        "to rejoin out of the new generation.",
        f"{REF} §1.1 hasAllMembersJoined, §1.5 DelayedJoin",
    ),
    Property(
        "new-generation-members-rejoined", ALWAYS,
        "Every dynamic member of a new generation sent a JoinGroup during the join phase; dynamic "
        "members that did not rejoin are removed when the phase completes. A member that did not "
        "rejoin does not know the new generation and would hold partitions nobody revoked. Static "
        "members (group.instance.id) are exempt by design: onCompleteJoin keeps them "
        "(notYetRejoinedMembers.filterNot(_.isStaticMember)) until their session expires.",
        f"{REF} §1.6 step 1, §1.11",
    ),
    Property(
        "no-early-session-expiry", ALWAYS,
        "The coordinator removes a member for missing heartbeats only once its session deadline has "
        "been reached, never before; heartbeats, commits and join/sync activity push the deadline "
        "as the reference lists. Expiring early rebalances healthy groups.",
        f"{REF} §1.12",
    ),
    Property(
        "disjoint-assignments", ALWAYS,
        "Within one generation the assignments handed out by SyncGroup never give a partition to two "
        "members: neither in what the coordinator stores nor among consumers that are STABLE in the "
        "same generation. Two owners of a partition process its records twice. The one exception is "
        "Kafka's own: two processes started with one group.instance.id, where the second takes the "
        "first one's member, generation and assignment (updateStaticMemberAndRebalance, Stable) and "
        "the first believes itself STABLE until its next request is answered FENCED_INSTANCE_ID "
        "(fenced-member-id-never-accepted holds the coordinator to that). A group deleted and created "
        "again counts its generations from 0 anew: members are compared within the group's incarnation "
        "they became STABLE in (the old one's member ids are fenced by the new group, which knows none).",
        "design.md (properties); Vanlightly's NoDoubleClientAssignment, classic analogue",
    ),
    Property(
        "stable-group-covers-partitions", ALWAYS,
        "When the coordinator's group is Stable, the assignments it stored cover every partition of "
        "the subscribed topic exactly once (the topic as the leader knew it: after partitions are "
        "added, the leader learns of them at its next metadata refresh and rejoins; the eventually "
        "properties then demand them all).",
        f"{REF} §1.7 (leader assignment), assignors",
    ),
    Property(
        "stable-member-generation-reached", ALWAYS,
        "A consumer never believes it is STABLE in a generation the coordinator has not reached and "
        "written: a STABLE member's generation is at most the generation of the group's last "
        "persisted record (or of the last record of a group deleted since, whose members may still "
        "believe themselves in it).",
        f"{REF} §1.7, §3.4 SyncGroup NONE",
    ),
    Property(
        "assignment-matches-generation", ALWAYS,
        "The partitions a consumer is assigned in generation g under member id m are exactly the "
        "ones the coordinator stored for m in generation g: SyncGroup never hands a member an "
        "assignment from another generation.",
        f"{REF} §1.7 step 3 (generation check)",
    ),
    Property(
        "commit-fencing", ALWAYS,
        "An OffsetCommit the coordinator accepts carries the group's current generation (or, for a "
        "consumer outside any group, a negative generation on an Empty group). A zombie of an older "
        "generation must not overwrite the offsets of the partition's new owner.",
        f"{REF} §1.10",
    ),
    Property(
        "commit-error-precedence", ALWAYS,
        "A rejected OffsetCommit gets the first applicable error of the reference's order: "
        "COORDINATOR_NOT_AVAILABLE for a Dead group, then UNKNOWN_MEMBER_ID, then ILLEGAL_GENERATION, "
        "then REBALANCE_IN_PROGRESS while CompletingRebalance. Clients act on the error: the wrong "
        "one makes them reset (or keep) the wrong state.",
        f"{REF} §1.10 validateOffsetCommit",
    ),
    Property(
        "heartbeat-error-table", ALWAYS,
        "Each Heartbeat gets the answer of the reference's table: validation (unknown member, then "
        "generation) before the state; Empty → UNKNOWN_MEMBER_ID, PreparingRebalance → "
        "REBALANCE_IN_PROGRESS, CompletingRebalance and Stable → NONE. Members learn of a rebalance "
        "only through this answer.",
        f"{REF} §1.8",
    ),
    # ---------------------------------------------------------------- client, always
    Property(
        "legal-member-transitions", ALWAYS,
        "A consumer's member state moves only along the client's edges: UNJOINED → "
        "PREPARING_REBALANCE → COMPLETING_REBALANCE → STABLE, back to PREPARING_REBALANCE to rejoin, "
        "and to UNJOINED on a reset. In particular it reaches STABLE only from COMPLETING_REBALANCE, "
        "i.e. only through a successful SyncGroup.",
        f"{REF} §3.1, §3.4",
    ),
    Property(
        "heartbeat-only-when-joined", ALWAYS,
        "The heartbeat thread sends heartbeats only while the member is COMPLETING_REBALANCE or "
        "STABLE: an iteration that begins UNJOINED or PREPARING_REBALANCE disables the thread and "
        "sends nothing. (Kafka does not re-check the state after the iteration's own pollNoWakeup, "
        "so a completion fired there that resets the member lets one heartbeat with generation -1 "
        "out; the model keeps that behaviour and this property judges the state the iteration "
        "began in.)",
        f"{REF} §3.5",
    ),
    Property(
        "one-join-or-sync-in-flight", ALWAYS,
        "A consumer has at most one JoinGroup or SyncGroup outstanding (unsent or in flight): the join "
        "future is memoised, so a retry or a wakeup never sends a second one.",
        f"{REF} §3.3 initiateJoinGroup",
    ),
    Property(
        "no-reset-by-stale-response", ALWAYS,
        "A JoinGroup, SyncGroup or Heartbeat error answering a request sent under an older generation "
        "never resets the member (generationUnchanged); otherwise a late answer from a past "
        "rebalance would throw a freshly joined member out again.",
        f"{REF} §3.4 CoordinatorResponseHandler",
    ),
    Property(
        "member-id-kept-until-fenced", ALWAYS,
        "A consumer's member id changes only when the coordinator takes it away: it is dropped only "
        "after an UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or FENCED_INSTANCE_ID answer "
        "(resetGenerationOnResponseError; a rebalance the heartbeat thread's reset made fail counts), "
        "or when the member leaves the group itself (close, max.poll.interval.ms); a new id comes only "
        "from a JoinGroup answer (MEMBER_ID_REQUIRED, or a successful join). A member that drops its id "
        "on a transient error (a disconnect, COORDINATOR_NOT_AVAILABLE, REBALANCE_IN_PROGRESS) rejoins "
        "as a stranger: the coordinator keeps the old member until its session expires, and the group "
        "rebalances twice.",
        f"{REF} §3.4 (AbstractCoordinator.resetGenerationOnResponseError, maybeLeaveGroup)",
    ),
    Property(
        "coordinator-unknown-once", ALWAYS,
        "Marking the coordinator unknown is idempotent and does not nest: it acts only while a "
        "coordinator is known (marked again before the next FindCoordinator answer, it does nothing: "
        "no second disconnect), and it forgets the coordinator before the requests it fails are "
        "called back, which happens at the next poll (disconnectAsync), never inside it. The callbacks "
        "mark the coordinator unknown themselves: run inside the first mark, they would disconnect "
        "and re-discover again, or act on a coordinator already being dropped.",
        "AbstractCoordinator.markCoordinatorUnknown (\"Mark the coordinator dead before disconnecting "
        "requests since the callbacks for any pending requests may attempt to do likewise\"), "
        "ConsumerNetworkClient.disconnectAsync; " + f"{REF} §3.2",
    ),
    Property(
        "join-request-timeout", ALWAYS,
        "Every JoinGroup is sent with request timeout max(request.timeout.ms, rebalance timeout + 5000) "
        "(guarded against overflow), because the coordinator may hold it for a whole rebalance.",
        f"{REF} §3.3 sendJoinGroupRequest",
    ),
    # ---------------------------------------------------------------- request lifecycle, always
    Property(
        "unsent-expiry", ALWAYS,
        "An unsent request is failed with a timeout exactly when max(0, now - created) is strictly "
        "greater than its timeout, at the first poll where that holds; the scan of a node's queue "
        "stops at its first request that has not expired (an expired request behind a live one "
        "stays queued, which matters when clocks jump or timeouts differ), and a request failed "
        "that way is never transmitted afterwards.",
        f"{REF} §4.1 failExpiredRequests",
    ),
    Property(
        "disconnect-fails-unsent", ALWAYS,
        "After a poll, no request that was queued before the poll is still unsent for a node whose "
        "connection has failed: checkDisconnects failed it with a DisconnectException.",
        f"{REF} §4.1 checkDisconnects",
    ),
    Property(
        "future-completes-once", ALWAYS,
        "Every request future completes exactly once: a response, a disconnect or a timeout, never two "
        "of them.",
        f"{REF} §4.2 RequestFuture",
    ),
    Property(
        "completions-fifo", ALWAYS,
        "Completions fire in the order they were queued (pendingCompletion is a FIFO), so handlers see "
        "responses in the order the network delivered them.",
        f"{REF} §4.1 completion path",
    ),
    Property(
        "per-node-fifo", ALWAYS,
        "Requests to one node are transmitted in the order they were sent.",
        f"{REF} §4.1 trySend",
    ),
    # ---------------------------------------------------------------- eventually
    Property(
        "eventually-stable", EVENTUALLY,
        "After the disruptions stop, the group reaches Stable with every live consumer STABLE in the "
        "group's generation, and the consumers' assignments cover every partition exactly once.",
        "design.md (eventually); Vanlightly's EventuallyConverges",
    ),
    Property(
        "eventually-requests-complete", EVENTUALLY,
        "After the disruptions stop, no request of a live consumer stays outstanding longer than its "
        "timeout: every future completes.",
        f"{REF} §4",
    ),
    Property(
        "eventually-coordinator-found", EVENTUALLY,
        "After the disruptions stop, every live consumer knows the broker that currently coordinates "
        "the group.",
        f"{REF} §3.2",
    ),
    # ---------------------------------------------------------------- sometimes
    *(
        Property(f"group-state-{state}", SOMETIMES,
                 f"The group moves to {state} (a coordinator transition; a group loaded or created Empty is not "
                 f"counted here, the report's coverage counts it).", f"{REF} §1.2")
        for state in grp.GROUP_STATES
    ),
    *(
        Property(f"member-state-{state}", SOMETIMES,
                 f"A consumer moves to {state}" + (" (every consumer starts there: this counts the returns to it)."
                                                   if state == UNJOINED else "."), f"{REF} §3.1")
        for state in (UNJOINED, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE)
    ),
    Property("leader-change", SOMETIMES, "A new generation has a different leader than the one before.", f"{REF} §1.6"),
    Property("unsent-expired", SOMETIMES, "An unsent request expires in the unsent buffer.", f"{REF} §4.1"),
    Property("member-fenced", SOMETIMES, "A consumer is reset by ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID.", f"{REF} §3.4"),
    Property("coordinator-moved", SOMETIMES, "The group's coordinator moves to another broker.", f"{REF} §2"),
    Property("member-id-required", SOMETIMES, "A consumer is answered MEMBER_ID_REQUIRED.", f"{REF} §1.4"),
    Property("join-timeout", SOMETIMES, "A join phase completes at the rebalance deadline, not because all joined.", f"{REF} §1.5"),
    Property("session-expired", SOMETIMES, "The coordinator removes a member whose session expired.", f"{REF} §1.12"),
    Property("commit-accepted", SOMETIMES, "An OffsetCommit is accepted.", f"{REF} §1.10"),
    Property("commit-fenced", SOMETIMES, "An OffsetCommit is rejected by generation fencing.", f"{REF} §1.10"),
    Property("sync-deadline-missed", SOMETIMES,
             "The coordinator removes a member that was answered its JoinGroup but sent no SyncGroup within the "
             "rebalance timeout (its application did not poll to read the answer, or, as leader, its assignor "
             "ran longer, while its session outlasted the rebalance timeout), and the group rebalances without it.", "GroupCoordinator.onExpirePendingSync (DelayedSync)"),
    Property("commit-sync-timed-out", SOMETIMES,
             "An application's commitSync returned at its timeout (TimeoutException) with its OffsetCommit still "
             "in flight: the answer is handled by a later poll, whatever it says.",
             "ConsumerCoordinator.commitOffsetsSync, KafkaConsumer.commitSync(Duration) (KIP-266)"),
    Property("assignment-of-old-subscription", SOMETIMES,
             "A consumer's subscription changed while its JoinGroup was in flight: the leader assigned by the "
             "topics that JoinGroup named, and the consumer, no longer subscribed to one of them, took none of "
             "its assignment and rejoined with its current subscription.",
             "ConsumerCoordinator.onJoinComplete (checkAssignmentMatchedSubscription), rejoinNeededOrPending"),
    Property("poll-timeout-leave", SOMETIMES,
             "The heartbeat thread leaves the group because the application has not polled within "
             "max.poll.interval.ms (KIP-62: an application that pauses between polls).", f"{REF} §3.5"),
    Property("append-failed", SOMETIMES,
             "A write of the coordinator to __consumer_offsets fails (the group record of a SyncGroup or "
             "of an empty group, or an OffsetCommit's offsets).", f"{REF} §1.10, §1.13"),
    Property("stalled-member-expired", SOMETIMES,
             "The coordinator expires the session of a member whose whole process stands still (a long GC "
             "pause: its heartbeat thread stopped too) and still believes itself in the group.", f"{REF} §1.12"),
    Property("commit-partly-refused", SOMETIMES,
             "One OffsetCommit commits some partitions and refuses others OFFSET_METADATA_TOO_LARGE (their "
             "metadata is longer than offset.metadata.max.bytes).", f"{REF} §1.10 step 5"),
    Property("group-deleted", SOMETIMES,
             "An Empty group is deleted with its offsets (an administrator's DeleteGroups, or its offsets' "
             "expiry): consumers that still believe themselves members then meet a coordinator that does not "
             "know the group.", "GroupCoordinator.handleDeleteGroups, GroupMetadataManager.cleanupGroupMetadata"),
    Property("rejoin-with-other-settings", SOMETIMES,
             "The coordinator reads a JoinGroup of a member it holds (by its member id, or a static member's "
             "group.instance.id) whose session timeout, rebalance timeout or protocols differ from the member's "
             "record: a process redeployed with other settings, which the coordinator must take "
             "(GroupCoordinator.updateMember).", "GroupCoordinator.updateMemberAndRebalance, updateStaticMemberAndRebalance"),
    Property("protocol-inconsistent", SOMETIMES,
             "A JoinGroup is refused INCONSISTENT_GROUP_PROTOCOL: its protocols share none with the group's "
             "members' (GroupMetadata.supportsProtocols).", "GroupCoordinator.doClassicJoinGroup"),
    Property("new-partitions-assigned", SOMETIMES,
             "A group assigns partitions added to its topic after it started (the leader learned of them "
             "at a metadata refresh and rejoined).", "ConsumerCoordinator.rejoinNeededOrPending"),
)

BY_NAME = {p.name: p for p in CATALOGUE}
ALWAYS_NAMES = tuple(p.name for p in CATALOGUE if p.kind == ALWAYS)
EVENTUALLY_NAMES = tuple(p.name for p in CATALOGUE if p.kind == EVENTUALLY)
SOMETIMES_NAMES = tuple(p.name for p in CATALOGUE if p.kind == SOMETIMES)
#: the order :meth:`Checker.check_eventually` judges the eventually properties in: it stops at the
#: first that fails, so a report knows which ones an interleaving judged
EVENTUALLY_ORDER = ("eventually-coordinator-found", "eventually-requests-complete", "eventually-stable")


@attrs.frozen
class Violation:
    property: str
    message: str


_JOIN_OR_SYNC = frozenset({"JoinGroup", "SyncGroup"})
_NEW_PROCESS = frozenset({"restart", "redeploy"})  # events after which a client is a new process
# the requests validateCurrentMember fences (a LeaveGroup's verdict is per member, in its answer)
_FENCEABLE = frozenset({"JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit"})
# events after which the coordinator's group may come from a record it loads
_RELOADS = frozenset({"load", "failover", "broker_crash", "broker_restart"})


def _static_rejoin_in_stable(handled) -> bool:
    """A JoinGroup (logged as handled) of a known static instance with an unknown member id and the
    protocols it had, read by a loaded coordinator from a Stable group: what
    static-rejoin-keeps-generation judges."""
    request, group = handled.request, handled.group
    if request.api != "JoinGroup" or request.member_id or request.group_instance_id is None or not handled.is_leader \
            or handled.loading or group is None or group.state != grp.STABLE:
        return False
    for m in group.members:
        if m.group_instance_id == request.group_instance_id:
            return tuple(name for name, _ in m.protocols) == tuple(name for name, _ in request.protocols)
    return False


def _other_settings(handled, version: int) -> bool:
    """A JoinGroup (logged as handled) read by a loaded coordinator from a member it holds, by member
    id or a static member's instance id, with other timeouts or protocol names than its record's
    (the protocols' metadata, the subscription, carries the member's generation: it changes anyway).
    *version*: the JoinGroup version the clients speak (v0 carries no rebalance timeout)."""
    group = handled.group
    if group is None or not handled.is_leader or handled.loading:
        return False
    request = as_coordinator_reads(handled.request, version)
    for m in group.members:
        if (request.member_id and m.member_id == request.member_id) or \
                (request.group_instance_id is not None and m.group_instance_id == request.group_instance_id):
            return (m.session_timeout_ms, m.rebalance_timeout_ms, [name for name, _ in m.protocols]) != \
                (request.session_timeout_ms, request.rebalance_timeout_ms, [name for name, _ in request.protocols])
    return False


def _check_static_rejoin(handled, reply):
    """static-rejoin-keeps-generation, on the answer: success carries the current generation."""
    group, error, response = handled.group, reply.error, reply.response
    if error == Errors.NONE and response is not None and response.generation_id != group.generation:
        return Violation(
            "static-rejoin-keeps-generation",
            f"instance {handled.request.group_instance_id!r} rejoined the Stable group in generation {group.generation} "
            f"and was answered generation {response.generation_id}",
        )
    return None
#: the answers with which the coordinator takes a member's id (or generation) away
_FENCING = frozenset({Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION, Errors.FENCED_INSTANCE_ID})

_LEGAL_MEMBER_EDGES = frozenset(
    {
        (UNJOINED, PREPARING_REBALANCE),
        (PREPARING_REBALANCE, COMPLETING_REBALANCE),
        (PREPARING_REBALANCE, UNJOINED),
        (COMPLETING_REBALANCE, STABLE),
        (COMPLETING_REBALANCE, UNJOINED),
        (COMPLETING_REBALANCE, PREPARING_REBALANCE),
        (STABLE, PREPARING_REBALANCE),
        (STABLE, UNJOINED),
    }
)


def _expected_member_error(group, member_id: str, instance) -> int | None:
    """§1.11 validateCurrentMember, derived independently of model.group: with an instance id it
    must be mapped, and to *member_id* (else UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID); without, the
    member id must be a member."""
    if instance is not None:
        mapped = [m.member_id for m in group.members if m.group_instance_id == instance]
        if not mapped:
            return Errors.UNKNOWN_MEMBER_ID
        return Errors.FENCED_INSTANCE_ID if mapped[0] != member_id else None
    return None if any(m.member_id == member_id for m in group.members) else Errors.UNKNOWN_MEMBER_ID


def expected_heartbeat_error(group, request: HeartbeatRequest) -> int:
    """§1.8, derived from the reference independently of model.group."""
    if group is None:
        return Errors.UNKNOWN_MEMBER_ID
    if group.state == grp.DEAD:
        return Errors.COORDINATOR_NOT_AVAILABLE
    member_error = _expected_member_error(group, request.member_id, request.group_instance_id)
    if member_error is not None:
        return member_error
    if request.generation_id != group.generation:
        return Errors.ILLEGAL_GENERATION
    return {
        grp.EMPTY: Errors.UNKNOWN_MEMBER_ID,
        grp.PREPARING_REBALANCE: Errors.REBALANCE_IN_PROGRESS,
    }.get(group.state, Errors.NONE)


def expected_commit_error(group, request: OffsetCommitRequest) -> int:
    """§1.10 validateOffsetCommit and the state table, derived independently of model.group: the
    first partition error of the answer (the one the client acts on)."""
    gen, member_id = request.generation_id, request.member_id
    if group is None:
        return _stored(None, request) if gen < 0 else Errors.ILLEGAL_GENERATION
    if group.state == grp.DEAD:
        return Errors.COORDINATOR_NOT_AVAILABLE
    if gen < 0 and group.state == grp.EMPTY:
        return _stored(group, request)
    if gen >= 0 or member_id or request.group_instance_id is not None:
        member_error = _expected_member_error(group, member_id, request.group_instance_id)
        if member_error is not None:
            return member_error
        if gen != group.generation:
            return Errors.ILLEGAL_GENERATION
    else:
        return Errors.UNKNOWN_MEMBER_ID
    if group.state == grp.COMPLETING_REBALANCE:
        return Errors.REBALANCE_IN_PROGRESS
    return _stored(group, request)


def _stored(group, request: OffsetCommitRequest) -> int:
    """§1.10 steps 4 and 5: a partition whose metadata is too long is answered
    OFFSET_METADATA_TOO_LARGE; the others are appended to the log, and when the coordinator's
    append fails (an ``append_error`` fault waiting) they get the log error as storeOffsets maps
    it. Nothing left to append (an empty commit, or every partition too long) appends nothing."""
    oversized = request.oversized
    appended = any(p not in oversized for p, _ in request.offsets)
    stored = Errors.NONE
    if appended and group is not None and group.append_errors:
        failure = group.append_errors[0]
        stored = grp.STORE_OFFSETS_ERRORS.get(failure, failure)
    for p, _ in request.offsets:
        error = Errors.OFFSET_METADATA_TOO_LARGE if p in oversized else stored
        if error != Errors.NONE:
            return error
    return Errors.NONE


def covers(owned, initial: int, now: int) -> bool:
    """A Stable group's assignment covers the topic as its leader knew it: exactly partitions
    0..k-1 for the k the leader assigned from, which is the configured count while the topic has
    not grown, and between it and today's count after partitions were added (the leader learns of
    them at its next metadata refresh, then rejoins)."""
    k = len(owned)
    return initial <= k <= now and sorted(owned) == list(range(k))


def covers_topics(owned, config: Config, now: int, subscribed: int | None) -> bool:
    """:func:`covers` in a world with a second topic: each topic the members subscribe to
    (*subscribed*, the mask their JoinGroup subscriptions name together) is covered as
    :func:`covers` says (the second, which never grows, entirely) and no other topic is assigned.
    *subscribed* None (a static member is in the group: KIP-345's rejoin of a Stable group replaces
    its subscription without a new assignment, GroupCoordinator.updateStaticMemberAndRebalance):
    only that a topic assigned at all is covered."""
    first = [p for p in owned if p < SECOND_BASE]
    second = sorted(p for p in owned if p >= SECOND_BASE)
    if first and not covers(first, config.partitions, now):
        return False
    if second and tuple(second) != second_partitions(config):
        return False
    if subscribed is None:
        return True
    return bool(first) == bool(subscribed & FIRST) and bool(second) == bool(subscribed & SECOND)


def group_subscription(group, config: Config) -> int | None:
    """The topics (a mask) the members of a model group subscribe to in their JoinGroup metadata
    for the group's protocol; None when a static member is among them (see :func:`covers_topics`)."""
    mask = 0
    for m in group.members:
        if m.group_instance_id is not None:
            return None
        metadata = dict(m.protocols).get(group.protocol_name)
        if metadata is not None:
            mask |= mask_of(config, metadata[0])
    return mask


class Checker:
    """Checks one run. Holds the little history some properties need (stored assignments per
    generation, completed and expired request ids, queued completions, last transmitted id per node)."""

    def __init__(self, config: Config):
        self.config = config
        self.stored: dict = {}  # (generation, member_id) -> assignment
        self.completed: set = set()  # (client, request id)
        self.expired: set = set()
        self.queued: dict = {}  # client -> list of request ids queued, not yet fired
        self.last_transmitted: dict = {}  # (client, slot) -> request id
        self.coverage: dict = {name: 0 for name in SOMETIMES_NAMES}
        # clients the coordinator has fenced (or that left) since their last successful JoinGroup:
        # the only ones whose member id may be dropped
        self.fenced: set = set()
        # static member ids the current coordinator has replaced (fenced-member-id-never-accepted)
        self.fenced_ids: set = set()
        # The group's incarnations (a deleted group is created afresh, its generations from 0
        # again): how many deletions so far, the incarnation each client last became STABLE in, and
        # the highest generation any group record of any incarnation was written with
        self.incarnation = 0
        self.stable_in: dict = {}
        self.written = -1

    def fork(self) -> "Checker":
        """A copy with its own history: the exhaustive explorer checks every successor of a state
        from the history of the path that reached it. (Coverage starts again from zero.)"""
        other = Checker(self.config)
        other.stored = dict(self.stored)
        other.completed = set(self.completed)
        other.expired = set(self.expired)
        other.queued = {c: list(q) for c, q in self.queued.items()}
        other.last_transmitted = dict(self.last_transmitted)
        other.fenced = set(self.fenced)
        other.fenced_ids = set(self.fenced_ids)
        other.incarnation, other.stable_in, other.written = self.incarnation, dict(self.stable_in), self.written
        return other

    def history(self) -> tuple:
        """The history the always properties will read, as a canonical value: with the world, what
        decides every later verdict (the explorer's state key includes it)."""
        return (
            tuple(sorted(self.stored.items())),
            tuple(sorted(self.completed)),
            tuple(sorted(self.expired)),
            tuple(sorted((c, tuple(q)) for c, q in self.queued.items() if q)),
            tuple(sorted(self.last_transmitted.items())),
            tuple(sorted(self.fenced)),
            tuple(sorted(self.fenced_ids)),
            self.incarnation,
            tuple(sorted(self.stable_in.items())),
            self.written,
        )

    # -- always ------------------------------------------------------------------------------
    def check(self, prev, world, event, log) -> Violation | None:
        """The first always property the step (prev --event--> world, log) violates, or None.
        *log* holds the step's :mod:`model.entries` (a plain tuple among them is typed here)."""
        self._polled = set()  # clients whose network client polled during the step
        self._join_sync_sent = set()  # clients that sent a JoinGroup or SyncGroup during the step
        # clients whose JoinGroup answer's handler ran during the step (not when it was read: a
        # wakeup thrown between the two leaves the completion queued for a later poll)
        self._join_answered = set()
        persisted = world.persisted
        if persisted is not None and persisted.generation > self.written:
            self.written = persisted.generation
        violation = self._check_log(prev, world, event, log)
        if violation is None and (world.brokers is not prev.brokers or world.persisted is not prev.persisted):
            violation = self._check_group(prev, world, event, log)
        if violation is None and world.clients is not prev.clients:
            violation = self._check_clients(prev, world, event, log)
        if self.config.static_clients:
            self._track_fencing(prev, world, event)
        return violation

    def _check_log(self, prev, world, event, log):
        cfg = self.config
        handled = None
        rejoin = None  # the handled JoinGroup of a known static instance into a Stable group, unanswered yet
        marking = None  # the client inside markCoordinatorUnknown
        known = None  # client -> coordinator, as the step goes (from the world before it)
        if log and log[0].__class__ is tuple:  # a log built by hand (the proofs' symbolic steps)
            log = [as_entry(entry) for entry in log]
        for entry in log:
            tag = entry[0]
            if tag == "server":
                v = self._check_note(prev, world, event, entry, log)
                if v:
                    return v
            elif tag == "polled":
                self._polled.add(entry.c)
            elif tag == "send":
                if entry.api in _JOIN_OR_SYNC:
                    self._join_sync_sent.add(entry.c)
                if entry.api == "JoinGroup":
                    # the client's own settings (a redeployed process's: model.config.redeployed)
                    expected = redeployed(cfg, world.clients[entry.c].settings).join_request_timeout_ms
                    if entry.timeout_ms != expected:
                        return Violation(
                            "join-request-timeout",
                            f"client {entry.c} sent JoinGroup {entry.request_id} with timeout {entry.timeout_ms} ms, "
                            f"expected max(request.timeout.ms, rebalance timeout + 5000) = {expected}",
                        )
            elif tag == "transmit":
                c, rid, slot = entry.c, entry.request_id, entry.slot
                if (c, rid) in self.expired:
                    return Violation("unsent-expiry", f"client {c} transmitted request {rid} after it had expired")
                last = self.last_transmitted.get((c, slot), -1)
                if rid < last:
                    return Violation(
                        "per-node-fifo", f"client {c} transmitted request {rid} to slot {slot} after the later request {last}"
                    )
                self.last_transmitted[(c, slot)] = rid
            elif tag == "expire":
                c, rid, slot, elapsed, timeout = entry.c, entry.request_id, entry.slot, entry.elapsed_ms, entry.timeout_ms
                if elapsed <= timeout:
                    return Violation(
                        "unsent-expiry",
                        f"client {c} expired request {rid} after {elapsed} ms with a timeout of {timeout} ms (expiry is strict: elapsed > timeout)",
                    )
                ahead = _ahead_in_queue(prev.clients[c].unsent[slot], rid)
                still = {r.id for r in world.clients[c].unsent[slot]}
                blocking = [r for r in ahead if r in still]
                if blocking:
                    return Violation(
                        "unsent-expiry",
                        f"client {c} expired request {rid} on slot {slot} behind live request {blocking[0]}",
                    )
                self.expired.add((c, rid))
                self.coverage["unsent-expired"] += 1
            elif tag == "queued":
                self.queued.setdefault(entry.c, []).append(entry.request_id)
            elif tag == "complete":
                c, rid = entry.c, entry.request_id
                if (c, rid) in self.completed:
                    return Violation("future-completes-once", f"client {c}: request {rid} ({entry.api}) completed a second time")
                self.completed.add((c, rid))
                if entry.api == "JoinGroup":  # its handler runs now: where a member id is taken
                    self._join_answered.add(c)
                queue = self.queued.get(c)
                if queue:
                    if queue[0] != rid:
                        return Violation(
                            "completions-fifo", f"client {c} fired request {rid}'s completion before request {queue[0]}'s, queued earlier"
                        )
                    queue.pop(0)
            elif tag == "heartbeat_sent":
                if entry.state_at_start not in (COMPLETING_REBALANCE, STABLE):
                    return Violation(
                        "heartbeat-only-when-joined",
                        f"client {entry.c}'s heartbeat thread sent a heartbeat in an iteration that began "
                        f"{entry.state_at_start} (generation {entry.generation})",
                    )
            elif tag == "poll_timeout":
                self.coverage["poll-timeout-leave"] += 1
            elif tag == "member_state":
                c, old, new = entry.c, entry.old, entry.new
                if (old, new) not in _LEGAL_MEMBER_EDGES:
                    return Violation("legal-member-transitions", f"client {c} moved from {old} to {new}")
                self.coverage[f"member-state-{new}"] += 1
            elif tag == "reset":
                c, api, error, sent, current = entry.c, entry.api, entry.error, entry.sent, entry.current
                if error in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID):
                    self.coverage["member-fenced"] += 1
                if error in _FENCING:
                    self.fenced.add(c)
                if api in ("JoinGroup", "SyncGroup", "Heartbeat") and sent != current:
                    return Violation(
                        "no-reset-by-stale-response",
                        f"client {c} was reset by a {api} {name_of(error)} answering a request sent in generation "
                        f"{sent[0]} while it was in generation {current[0]}",
                    )
            elif tag == "assign":
                c, gen, member_id, parts = entry.c, entry.generation, entry.member_id, entry.partitions
                stored = self.stored.get((gen, member_id))
                if stored != parts:
                    return Violation(
                        "assignment-matches-generation",
                        f"client {c} was assigned {list(parts)} in generation {gen} as {member_id!r}, but the coordinator "
                        f"stored {list(stored) if stored is not None else 'nothing'} for it in that generation",
                    )
            elif tag == "handled":
                if rejoin is not None:
                    return self._rejoin_parked(rejoin)
                handled = entry
                if entry.request.api == "JoinGroup" and _other_settings(entry, self.config.join_group_version):
                    self.coverage["rejoin-with-other-settings"] += 1
                rejoin = entry if self.config.static_clients and _static_rejoin_in_stable(entry) else None
            elif tag == "reply" and handled is not None and entry.c == handled.c and entry.request_id == handled.request_id:
                if rejoin is not None:
                    rejoin = None
                    v = _check_static_rejoin(handled, entry)
                    if v:
                        return v
                v = self._check_fenced(handled, entry) if self.fenced_ids else None
                v = v or self._check_reply(handled, entry)
                handled = None
                if v:
                    return v
            elif tag == "leader":
                if entry.old != entry.new and entry.new is not None and entry.old is not None:
                    self.coverage["coordinator-moved"] += 1
            elif tag in ("coordinator_unknown", "coordinator_found", "coordinator_unknown_done"):
                c = entry.c
                if known is None:
                    known = {i: cl.coordinator for i, cl in enumerate(prev.clients)}
                if tag == "coordinator_found":
                    known[c] = entry.node
                elif tag == "coordinator_unknown_done":
                    marking = None
                else:
                    if marking == c:
                        return Violation(
                            "coordinator-unknown-once",
                            f"client {c} marked the coordinator unknown ({entry.cause}) inside its own markCoordinatorUnknown",
                        )
                    if known[c] is None:
                        return Violation(
                            "coordinator-unknown-once",
                            f"client {c} marked the coordinator unknown ({entry.cause}) when none was known",
                        )
                    marking, known[c] = c, None
            elif tag == "assignment_refused":
                self.coverage["assignment-of-old-subscription"] += 1
            elif tag == "commit_sync_done":
                if entry.outcome == "timeout" and entry.in_flight:
                    self.coverage["commit-sync-timed-out"] += 1
            elif tag == "group_deleted":
                self.incarnation += 1
                self.coverage["group-deleted"] += 1
            elif tag == "leave":
                self.fenced.add(entry.c)
            elif tag == "joined":
                self.fenced.discard(entry.c)
            elif tag == "received":
                if entry.error == Errors.MEMBER_ID_REQUIRED:
                    self.coverage["member-id-required"] += 1
                elif entry.error == Errors.INCONSISTENT_GROUP_PROTOCOL:
                    self.coverage["protocol-inconsistent"] += 1
        if rejoin is not None:
            return self._rejoin_parked(rejoin)
        return None

    @staticmethod
    def _rejoin_parked(handled):
        request = handled.request
        return Violation(
            "static-rejoin-keeps-generation",
            f"instance {request.group_instance_id!r} joined the Stable group (generation {handled.group.generation}) "
            f"again with its old protocols and was not answered: the group rebalanced",
        )

    def _check_fenced(self, handled, reply):
        """fenced-member-id-never-accepted: a success answer to a replaced static member id."""
        request, error = handled.request, reply.error
        if error != Errors.NONE or request.api not in _FENCEABLE or not handled.is_leader or handled.loading:
            return None
        if request.api == "OffsetCommit" and request.generation_id < 0 and (
                handled.group is None or handled.group.state == grp.EMPTY):
            # outside group management: GroupCoordinator.validateOffsetCommit accepts a commit with
            # generation -1 on an Empty group without looking at its member or instance id
            return None
        if getattr(request, "member_id", None) in self.fenced_ids:
            return Violation(
                "fenced-member-id-never-accepted",
                f"{request.api} of {request.member_id!r} (instance {request.group_instance_id!r}) was answered NONE, "
                f"although the coordinator had replaced that member id",
            )
        return None

    def _track_fencing(self, prev, world, event) -> None:
        """The static member ids the current coordinator has replaced (fenced-member-id-never-accepted):
        an instance whose member id changed from one step to the next, under one coordinator that
        did not load the group meanwhile; a coordinator change forgets them (the new one loads a
        record that may hold the old id)."""
        if prev.leader != world.leader or event[0] in _RELOADS:
            self.fenced_ids.clear()
            return
        pg, g = prev.group, world.group
        if g is pg or pg is None or g is None:
            return
        now = {m.group_instance_id: m.member_id for m in g.members if m.group_instance_id is not None}
        for m in pg.members:
            if m.group_instance_id is not None and now.get(m.group_instance_id, m.member_id) != m.member_id:
                self.fenced_ids.add(m.member_id)

    def _check_reply(self, handled, reply):
        request, group = handled.request, handled.group
        if not handled.is_leader or handled.loading:
            return None
        if isinstance(request, HeartbeatRequest):
            rule, api, expected = "heartbeat-error-table", "Heartbeat", expected_heartbeat_error(group, request)
        elif isinstance(request, OffsetCommitRequest):
            rule, api, expected = "commit-error-precedence", "OffsetCommit", expected_commit_error(group, request)
        else:
            return None
        if reply.error == expected:
            return None
        return Violation(rule, f"{api} of {request.member_id!r} (generation {request.generation_id}) to a group "
                               f"{_describe(group)} was answered {name_of(reply.error)}, expected {name_of(expected)}")

    def _check_note(self, prev, world, event, entry, log):
        """The always properties of one coordinator note, logged as the server *entry*
        (:mod:`model.entries`: ``ServerJoinComplete``, ...)."""
        note = entry.note
        if note == "join_complete":
            gen_before, gen_after, members_after = entry.generation_before, entry.generation_after, entry.members
            if gen_after != gen_before + 1:
                return Violation(
                    "generation-advances-by-one", f"a join phase completed moving generation {gen_before} to {gen_after}"
                )
            if not entry.all_joined:
                self.coverage["join-timeout"] += 1
            pg = prev.group
            leader = entry.leader_id
            if pg is not None and pg.leader_id is not None and leader is not None and leader != pg.leader_id:
                self.coverage["leader-change"] += 1
            if pg is not None:
                handled = [as_entry(e).request for e in log if e[0] == "handled"]
                rejoined_now = {r.member_id for r in handled if r.api == "JoinGroup"}
                for m in pg.members:
                    if m.member_id in members_after and m.awaiting_join is None and m.member_id not in rejoined_now \
                            and m.group_instance_id is None:
                        return Violation(
                            "new-generation-members-rejoined",
                            f"member {m.member_id!r} is in generation {gen_after} but never rejoined during the join phase",
                        )
            # the ids pending when it completed (a later request of the same event may add more)
            if entry.all_joined and entry.pending:
                return Violation(
                    "join-completes-when-all-joined",
                    f"join phase to generation {gen_after} completed early while member ids "
                    f"{list(entry.pending)} were still pending",
                )
        elif note == "member_removed":
            member_id, deadline_at = entry.member_id, entry.deadline_at
            if entry.reason == "not_synced":
                self.coverage["sync-deadline-missed"] += 1
            if entry.reason == "session":
                self.coverage["session-expired"] += 1
                if any(c.member_id == member_id and (c.stalled_until_ms or 0) > world.now for c in world.clients):
                    self.coverage["stalled-member-expired"] += 1
                if deadline_at is not None and deadline_at > world.now:
                    return Violation(
                        "no-early-session-expiry",
                        f"member {member_id!r} was expired at {world.now} ms, before its session deadline {deadline_at} ms",
                    )
        elif note == "assignment_stored":
            gen = entry.generation
            seen = {}
            for member_id, parts in entry.assignments:
                for p in parts:
                    if p in seen:
                        return Violation(
                            "disjoint-assignments",
                            f"generation {gen} stored partition {p} for both {seen[p]!r} and {member_id!r}",
                        )
                    seen[p] = member_id
                self.stored[(gen, member_id)] = tuple(parts)
            if any(self.config.partitions <= p < SECOND_BASE for p in seen):
                self.coverage["new-partitions-assigned"] += 1
        elif note == "static_replaced":
            gen, old_id = entry.generation, entry.old_member_id
            if (gen, old_id) in self.stored:  # the same member, renamed: its stored assignment goes with it
                self.stored[(gen, entry.new_member_id)] = self.stored[(gen, old_id)]
        elif note == "append_failed":
            self.coverage["append-failed"] += 1
        elif note == "metadata_too_large":
            if entry.committed:
                self.coverage["commit-partly-refused"] += 1
        elif note == "commit":
            req_gen, group_gen, error = entry.request_generation, entry.group_generation, entry.error
            if error == Errors.NONE:
                self.coverage["commit-accepted"] += 1
                if req_gen >= 0 and req_gen != group_gen:
                    return Violation(
                        "commit-fencing",
                        f"OffsetCommit from {entry.member_id!r} with generation {req_gen} was accepted while the group "
                        f"was in generation {group_gen}",
                    )
            elif error == Errors.ILLEGAL_GENERATION:
                self.coverage["commit-fenced"] += 1
        elif note == "transition":
            old, new = entry.from_state, entry.to_state
            if old not in grp.VALID_PREVIOUS_STATES[new]:
                return Violation("legal-group-transitions", f"the group moved from {old} to {new}")
            self.coverage[f"group-state-{new}"] += 1
        return None

    def _check_group(self, prev, world, event, log):
        g = world.group
        pg = prev.group
        if g is pg and world.persisted is prev.persisted:
            return None
        if prev.persisted is not None and world.persisted is not None:
            if world.persisted.generation < prev.persisted.generation:
                return Violation(
                    "generation-advances-by-one",
                    f"the persisted generation went back from {prev.persisted.generation} to {world.persisted.generation}",
                )
        if g is None:
            return None
        if pg is not None and prev.leader == world.leader and g.generation < pg.generation:
            return Violation(
                "generation-advances-by-one", f"the coordinator's generation went back from {pg.generation} to {g.generation}"
            )
        ids = [m.member_id for m in g.members]
        instances = [m.group_instance_id for m in g.members if m.group_instance_id is not None] \
            if self.config.static_clients else ()  # (every step: nothing to gather in a dynamic world)
        if len(instances) != len(set(instances)):
            twice = sorted({i for i in instances if instances.count(i) > 1})
            return Violation("one-member-per-instance",
                             f"instance {twice[0]!r} has members {[m.member_id for m in g.members if m.group_instance_id == twice[0]]}")
        if g.state != grp.DEAD:
            if ids and g.leader_id not in ids:
                return Violation(
                    "leader-is-member", f"the leader {g.leader_id!r} is not among the members {ids} ({g.state}, generation {g.generation})"
                )
            if not ids and g.leader_id is not None:
                return Violation("leader-is-member", f"the group has no members but leader {g.leader_id!r}")
        if g.state == grp.STABLE:
            owners: dict = {}
            for m in g.members:
                for p in m.assignment:
                    if p in owners:
                        return Violation(
                            "disjoint-assignments",
                            f"the Stable group (generation {g.generation}) gives partition {p} to {owners[p]!r} and {m.member_id!r}",
                        )
                    owners[p] = m.member_id
            if self.config.second_partitions:
                if not covers_topics(owners, self.config, world.partitions, group_subscription(g, self.config)):
                    return Violation(
                        "stable-group-covers-partitions",
                        f"the Stable group (generation {g.generation}) assigns {sorted(owners)}, not every partition "
                        f"of the topics its members subscribe to",
                    )
            elif not covers(owners, self.config.partitions, world.partitions):
                missing = sorted(set(range(world.partitions)) - set(owners))
                return Violation(
                    "stable-group-covers-partitions",
                    f"the Stable group (generation {g.generation}) leaves partitions {missing} unassigned",
                )
        return None

    def _check_clients(self, prev, world, event, log):
        polled = self._polled
        any_stable_change = False
        # (event[0]: the kind of any event, the proofs' ("step",) too; a plain tuple is typed)
        restarted = as_event(event).c if event[0] in _NEW_PROCESS else None
        for c, client in enumerate(world.clients):
            before = prev.clients[c]
            if client is before or not client.alive:
                continue
            if c == restarted:  # a new process: nothing of the old one's carries over
                self.fenced.discard(c)
                self.queued.pop(c, None)
                continue
            if client.member_id != before.member_id:
                v = self._check_member_id(c, before.member_id, client.member_id)
                if v:
                    return v
            if client.state == STABLE and (
                before.state != STABLE or before.generation != client.generation or before.assignment != client.assignment
            ):
                any_stable_change = True
                if before.state != STABLE or before.generation != client.generation:
                    self.stable_in[c] = self.incarnation
            if c in self._join_sync_sent:  # only a send can raise the count
                outstanding = 0
                for queue in client.unsent:
                    for r in queue:
                        outstanding += r.body.api in _JOIN_OR_SYNC
                for queue in client.in_flight:
                    for r in queue:
                        outstanding += r.body.api in _JOIN_OR_SYNC
                if outstanding > 1:
                    return Violation("one-join-or-sync-in-flight", f"client {c} has {outstanding} JoinGroup/SyncGroup requests outstanding")
            if c in polled:
                first_new = before.next_request_id
                for slot, queue in enumerate(client.unsent):
                    if not queue:
                        continue
                    if client.conns[slot].state == DISCONNECTED:
                        old = [r.id for r in queue if r.id < first_new]
                        if old:
                            return Violation(
                                "disconnect-fails-unsent",
                                f"client {c} still has requests {old} unsent for slot {slot} after a poll, although its connection failed",
                            )
                    now = world.now + client.clock_offset_ms  # the client's own clock
                    if max(0, now - queue[0].created_ms) > queue[0].timeout_ms:
                        return Violation(
                            "unsent-expiry",
                            f"client {c}'s request {queue[0].id} waited {now - queue[0].created_ms} ms unsent "
                            f"(timeout {queue[0].timeout_ms} ms) and was not failed by the poll",
                        )
        if any_stable_change:
            # the generations written: the group's, and those of the incarnations deleted before it
            # (a member of a deleted group may still believe itself STABLE in one of them)
            written = self.written
            stable_owner: dict = {}
            for c, client in enumerate(world.clients):
                if not client.alive or client.state != STABLE:
                    continue
                if client.generation > written:
                    return Violation(
                        "stable-member-generation-reached",
                        f"client {c} is STABLE in generation {client.generation}, but the coordinator has only "
                        f"written generation {written}",
                    )
                for p in client.assignment:
                    # generations count again in a group created after a deletion: two members are
                    # compared within the incarnation each became STABLE in
                    key = (self.stable_in.get(c, 0), client.generation, p)
                    if key in stable_owner:
                        twin = self.config.instance_id(c)
                        if twin is not None and self.config.instance_id(stable_owner[key]) == twin:
                            continue  # two processes of one instance id: the replaced one is a zombie until fenced
                        return Violation(
                            "disjoint-assignments",
                            f"clients {stable_owner[key]} and {c} are both STABLE in generation {client.generation} and both own partition {p}",
                        )
                    stable_owner[key] = c
        return None

    def _check_member_id(self, c: int, old: str, new: str):
        if old and c not in self.fenced:
            return Violation(
                "member-id-kept-until-fenced",
                f"client {c} dropped its member id {old!r}" + (f" for {new!r}" if new else "")
                + " without having been fenced (no UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or FENCED_INSTANCE_ID "
                "answer and no leave since its last successful join)",
            )
        if new and c not in self._join_answered:
            return Violation(
                "member-id-kept-until-fenced",
                f"client {c} took the member id {new!r} without a JoinGroup answer giving it",
            )
        if not new:
            self.fenced.discard(c)
        return None

    # -- eventually ---------------------------------------------------------------------------
    def check_eventually(self, world) -> Violation | None:
        """The first eventually property that does not hold of *world*, judged in the order of
        :data:`EVENTUALLY_ORDER` (the ones after a failing one are not judged)."""
        live = [c for c in world.clients if c.live]
        g = world.group
        for c in live:
            if c.coordinator != world.leader:
                return Violation(
                    "eventually-coordinator-found", f"client {c.index} believes the coordinator is {c.coordinator}, it is {world.leader}"
                )
        for c in live:
            now = world.now + c.clock_offset_ms
            for queue in c.unsent + c.in_flight:
                for r in queue:
                    if now - r.created_ms > r.timeout_ms + self.config.request_timeout_ms:
                        return Violation(
                            "eventually-requests-complete",
                            f"client {c.index}'s {r.api} request {r.id} is still outstanding {now - r.created_ms} ms after it was sent",
                        )
        if live:
            if g is None or g.state != grp.STABLE:
                return Violation("eventually-stable", f"the group did not settle: {_describe(g)}")
            owners = {}
            for c in live:
                if c.state != STABLE or c.generation != g.generation:
                    return Violation(
                        "eventually-stable",
                        f"client {c.index} is {c.state} in generation {c.generation} while the group is Stable in generation {g.generation}",
                    )
                for p in c.assignment:
                    owners[p] = owners.get(p, 0) + 1
            subscribed = FIRST
            if self.config.second_partitions:  # the topics the live consumers subscribe to, each its own
                subscribed = 0
                for c in live:
                    subscribed |= c.subscription
                    if any(not topic_of(p) & c.subscription for p in c.assignment):
                        return Violation("eventually-stable", f"client {c.index} owns {list(c.assignment)}, partitions of "
                                         f"a topic it does not subscribe to")
            expected = (list(range(world.partitions)) if subscribed & FIRST else []) + \
                (list(second_partitions(self.config)) if subscribed & SECOND else [])
            if sorted(owners) != expected or any(n != 1 for n in owners.values()):
                return Violation("eventually-stable", f"the live consumers' assignments do not cover every partition once: {owners}")
        return None


def _ahead_in_queue(queue, rid) -> list:
    ahead = []
    for r in queue:
        if r.id == rid:
            return ahead
        ahead.append(r.id)
    return []


def _describe(group) -> str:
    if group is None:
        return "(absent)"
    return f"{group.state} in generation {group.generation} with members {[m.member_id for m in group.members]}"
