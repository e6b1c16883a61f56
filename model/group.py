"""Server side: the classic group coordinator for one group, as pure transitions.

Protocol reference §1. A :class:`Group` is an immutable value; every handler takes the group (or
``None`` when the coordinator has no such group), the request, where the answer must go
(``reply_to``, an opaque hashable handle supplied by the caller), the current time, the config and a
``choose`` function, and returns an :class:`Outcome`: the new group, the responses to deliver, notes
for the property checker, and the group record to persist (if the coordinator writes one).

Timers (DelayedJoin, InitialDelayedJoin, DelayedSync, DelayedHeartbeat, pending-member expiry) are
deadlines stored in the group; :func:`fire_timers` runs every deadline ``<= until`` in
(deadline, arming sequence) order, each at its own deadline time.

Nondeterminism in Kafka (hash-map order for the leader re-pick and the protocol-vote tie-break) is
exposed through ``choose(kind, candidates) -> candidate``: the caller decides among the allowed
outcomes, and the model never picks silently.
"""

from __future__ import annotations

from typing import Callable, Hashable

import attrs

from model import entries as E
from model.errors import Errors
from model.messages import (
    UNKNOWN_MEMBER_ID,
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    SyncGroupResponse,
)

# Group states (§1.2).
EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
COMPLETING_REBALANCE = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"
GROUP_STATES = (EMPTY, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE, DEAD)

VALID_PREVIOUS_STATES = {
    PREPARING_REBALANCE: frozenset({STABLE, COMPLETING_REBALANCE, EMPTY}),
    COMPLETING_REBALANCE: frozenset({PREPARING_REBALANCE}),
    STABLE: frozenset({COMPLETING_REBALANCE}),
    EMPTY: frozenset({PREPARING_REBALANCE}),
    DEAD: frozenset({STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD}),
}

Choose = Callable[[str, tuple], object]
ReplyTo = Hashable


@attrs.frozen(slots=True)
class Deadline:
    """An armed timer: fires when time reaches ``at``; ``seq`` orders timers armed for the same ms."""

    at: int
    seq: int


@attrs.frozen(slots=True)
class Member:
    member_id: str
    client_id: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple  # ((name, metadata), ...) most preferred first
    assignment: tuple = ()  # partitions
    awaiting_join: ReplyTo | None = None  # parked JoinGroup (where to answer), or None
    awaiting_sync: ReplyTo | None = None  # parked SyncGroup, or None
    is_new: bool = True
    heartbeat: Deadline | None = None  # armed session (or new-member) expiry, None when not armed
    # group.instance.id of a static member (KIP-345), None for a dynamic one. GroupMetadata's
    # staticMembers map (instance id -> member id) is the members' own: see static_member_id
    group_instance_id: str | None = None


@attrs.frozen(slots=True)
class Group:
    group_id: str
    state: str = EMPTY
    generation: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: tuple = ()  # Member values, in insertion order
    pending_members: tuple = ()  # ((member_id, Deadline), ...) ids handed out with MEMBER_ID_REQUIRED
    pending_sync: frozenset = frozenset()  # member ids that got a JoinGroup response but have not synced
    new_member_added: bool = False
    join_deadline: Deadline | None = None  # DelayedJoin / InitialDelayedJoin
    initial_delay_remaining: int | None = None  # not None iff join_deadline is an InitialDelayedJoin
    sync_deadline: Deadline | None = None  # DelayedSync for sync_generation
    sync_generation: int = -1
    timer_seq: int = 0  # next Deadline.seq
    member_seq: int = 0  # source of member ids (see new_member_id)
    # Log errors the coordinator's next appends to the group's __consumer_offsets partition fail
    # with, in order (the ``append_error`` fault: too few in-sync replicas, a lost leadership, a
    # timed-out append ...). They belong to this coordinator: a group loaded elsewhere starts
    # without them.
    append_errors: tuple = ()


# What a failed append becomes in the answers: GroupMetadataManager.storeGroup's putCacheCallback
# (the group record; SyncGroup) and storeOffsets's through maybeConvertOffsetCommitError
# (OffsetCommit), kafka.coordinator.group (protocol reference §1.13 and §1.10 step 5). An error
# missing from a map passes through unchanged.
STORE_GROUP_ERRORS = {
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
    Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
    Errors.REQUEST_TIMED_OUT: Errors.REBALANCE_IN_PROGRESS,
    Errors.MESSAGE_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
    Errors.RECORD_LIST_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
    Errors.INVALID_FETCH_SIZE: Errors.UNKNOWN_SERVER_ERROR,
}
STORE_OFFSETS_ERRORS = {
    Errors.NETWORK_EXCEPTION: Errors.COORDINATOR_LOAD_IN_PROGRESS,
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
    Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
    Errors.MESSAGE_TOO_LARGE: Errors.INVALID_COMMIT_OFFSET_SIZE,
    Errors.RECORD_LIST_TOO_LARGE: Errors.INVALID_COMMIT_OFFSET_SIZE,
    Errors.INVALID_FETCH_SIZE: Errors.INVALID_COMMIT_OFFSET_SIZE,
}


@attrs.frozen(slots=True)
class Outcome:
    group: Group | None
    replies: tuple = ()  # ((reply_to, response), ...) in the order Kafka would answer
    notes: tuple = ()  # observations for the property checker, see NOTES below
    persist: Group | None = None  # group record written to __consumer_offsets, if any
    committed: tuple = ()  # ((partition, offset), ...) offsets written, if any


# Notes emitted into Outcome.notes (tag-first tuples, typed in model.entries: JoinComplete, ...):
#   ("join_complete", generation_before, generation_after, member_ids_after, leader_id, all_joined,
#    pending_ids)   pending_ids: the member ids still pending (MEMBER_ID_REQUIRED) when it completed
#        all_joined: True if the phase completed because everyone had joined, False on timeout
#   ("append_failed", log_error)   an append to __consumer_offsets failed (an append_error fault)
#   ("member_removed", member_id, reason, deadline_at)   reason in {"session", "leave", "not_rejoined",
#        "not_synced", "max_size"}; deadline_at = the expired Deadline.at for "session", else None
#   ("assignment_stored", generation, ((member_id, assignment), ...))
#   ("commit", request_generation, member_id, group_generation, group_state, error)
#   ("metadata_too_large", committed, refused)   storeOffsets refused *refused* partitions of a
#        commit for their metadata's length and committed *committed* others (0 if none, or the append failed)
#   ("transition", from_state, to_state)
#   ("static_replaced", generation, old_member_id, new_member_id)   a static member's id replaced in a
#        Stable group without a rebalance: it keeps the old id's assignment of that generation


def new_member_id(client_id: str, seq: int) -> str:
    """Kafka uses clientId + "-" + random UUID; the model uses a deterministic stand-in of the same
    shape. Values differ from the implementation's, so observations compare member ids by alias."""
    return f"{client_id}-{seq:08d}"


def member_id_in_slot(client_id: str, others, slot: int, seq: int) -> str:
    """A new member id for *client_id* that sorts at position *slot* (0 = first) among *others*, the
    ids of the same client still in the group.

    Why: Kafka's ids are ``clientId-UUID`` (``GroupMetadata.generateMemberId``), so two ids one
    client holds at once (a v0–v3 rejoin after its id was reset while the old one awaits its session
    expiry; a pending id beside a member's) sort in random order, and the assignors sort members by
    id (``RangeAssignor``, ``RoundRobinAssignor``): the order decides who gets which partitions.
    The model's ids sort by creation, so where an order is open the coordinator chooses it
    (``choose("member_order", ...)``) and the id is built to sort there: the suffix lies strictly
    between its neighbours' and ends in ``.{seq}``, unique like every model id."""
    prefix = f"{client_id}-"
    keys = sorted(m[len(prefix):] for m in others)
    lo = keys[slot - 1] if slot > 0 else None
    hi = keys[slot] if slot < len(keys) else None
    tag = f".{seq:08d}"
    if hi is None:
        return prefix + lo + tag  # an extension of lo sorts after it
    if lo is None:
        return prefix + _just_below(hi) + tag
    if not hi.startswith(lo):
        return prefix + lo + tag  # lo and hi first differ inside lo: lo's extensions stay below hi
    return prefix + lo + _just_below(hi[len(lo):]) + tag


def _just_below(key: str) -> str:
    """A string of *key*'s length below it whose every extension is below it too."""
    return key[:-1] + chr(ord(key[-1]) - 1)


# ---------------------------------------------------------------------------------------------
# The working copy
# ---------------------------------------------------------------------------------------------
#
# Kafka's coordinator mutates a GroupMetadata under the group lock, step by step. The handlers
# below follow that code closely on a private, mutable draft of the group (_Draft), which is
# frozen back into a Group value once per call: the public functions stay pure (values in,
# values out), the steps read like the reference, and only one Group is built per request.

_NONE = Errors.NONE


def _index_of(members, member_id: str) -> int:
    """Position of *member_id* in *members*, or -1. Groups are small: a scan beats a dict."""
    for i, m in enumerate(members):
        if m.member_id == member_id:
            return i
    return -1


def _instances(members) -> tuple:
    """((member_id, group.instance.id), ...) of the static members, for the leader's answer."""
    return tuple((m.member_id, m.group_instance_id) for m in members if m.group_instance_id is not None)


def static_member_id(members, instance_id: str) -> str | None:
    """``GroupMetadata.currentStaticMemberId``: the member id the group holds for *instance_id*."""
    for m in members:
        if m.group_instance_id == instance_id:
            return m.member_id
    return None


def validate_current_member(members, member_id: str, instance_id: str | None):
    """``GroupCoordinator.validateCurrentMember``: with an instance id, it must be mapped to
    *member_id* (FENCED_INSTANCE_ID when mapped to another, UNKNOWN_MEMBER_ID when not mapped);
    without, *member_id* must be a member. The error, or None."""
    if instance_id is not None:
        current = static_member_id(members, instance_id)
        if current is None:
            return Errors.UNKNOWN_MEMBER_ID
        return Errors.FENCED_INSTANCE_ID if current != member_id else None
    return None if _index_of(members, member_id) >= 0 else Errors.UNKNOWN_MEMBER_ID


def _metadata_for(member: Member, protocol_name):
    for name, metadata in member.protocols:
        if name == protocol_name:
            return metadata
    return None


_KEEP = object()  # "leave this field as it is" in _member()


def _member(m: Member, *, protocols=_KEEP, rebalance_timeout_ms=_KEEP, session_timeout_ms=_KEEP,
            assignment=_KEEP, awaiting_join=_KEEP, awaiting_sync=_KEEP, is_new=_KEEP,
            heartbeat=_KEEP, member_id=_KEEP) -> Member:
    """A copy of *m* with the given fields replaced: ``attrs.evolve`` without its introspection,
    which costs about three times a plain constructor call on this hot path."""
    return Member(
        m.member_id if member_id is _KEEP else member_id,
        m.client_id,
        m.rebalance_timeout_ms if rebalance_timeout_ms is _KEEP else rebalance_timeout_ms,
        m.session_timeout_ms if session_timeout_ms is _KEEP else session_timeout_ms,
        m.protocol_type,
        m.protocols if protocols is _KEEP else protocols,
        m.assignment if assignment is _KEEP else assignment,
        m.awaiting_join if awaiting_join is _KEEP else awaiting_join,
        m.awaiting_sync if awaiting_sync is _KEEP else awaiting_sync,
        m.is_new if is_new is _KEEP else is_new,
        m.heartbeat if heartbeat is _KEEP else heartbeat,
        m.group_instance_id,
    )


def _error_join(error, member_id: str = "") -> JoinGroupResponse:
    """JoinGroupResult(memberId, error): no generation, no protocol, no leader, no members."""
    return JoinGroupResponse(error=error, member_id=member_id)


class _Draft:
    """A mutable working copy of one :class:`Group` plus what the current call has produced.

    Field names are the Group's; ``members`` and ``pending_members`` are lists here.
    """

    __slots__ = (
        "group_id", "state", "generation", "protocol_type", "protocol_name", "leader_id",
        "members", "pending_members", "pending_sync", "new_member_added", "join_deadline",
        "initial_delay_remaining", "sync_deadline", "sync_generation", "timer_seq", "member_seq",
        "append_errors", "config", "broken", "choose", "replies", "notes", "persist",
    )

    def __init__(self, group: Group, config, choose):
        self.group_id = group.group_id
        self.state = group.state
        self.generation = group.generation
        self.protocol_type = group.protocol_type
        self.protocol_name = group.protocol_name
        self.leader_id = group.leader_id
        self.members = list(group.members)
        self.pending_members = list(group.pending_members)
        self.pending_sync = group.pending_sync
        self.new_member_added = group.new_member_added
        self.join_deadline = group.join_deadline
        self.initial_delay_remaining = group.initial_delay_remaining
        self.sync_deadline = group.sync_deadline
        self.sync_generation = group.sync_generation
        self.timer_seq = group.timer_seq
        self.member_seq = group.member_seq
        self.append_errors = group.append_errors
        self.config = config
        self.broken = config.broken
        self.choose = choose
        self.replies = []
        self.notes = []
        self.persist = None

    def freeze(self) -> Group:
        # Positional, in Group's field order: a third cheaper than keywords on the hot path.
        return Group(
            self.group_id,
            self.state,
            self.generation,
            self.protocol_type,
            self.protocol_name,
            self.leader_id,
            tuple(self.members),
            tuple(self.pending_members),
            self.pending_sync,
            self.new_member_added,
            self.join_deadline,
            self.initial_delay_remaining,
            self.sync_deadline,
            self.sync_generation,
            self.timer_seq,
            self.member_seq,
            self.append_errors,
        )

    def outcome(self, committed: tuple = ()) -> Outcome:
        return Outcome(self.freeze(), tuple(self.replies), tuple(self.notes), self.persist, committed)

    def reply(self, reply_to, response) -> None:
        self.replies.append((reply_to, response))

    def append_fails(self):
        """One append to the group's ``__consumer_offsets`` partition: the log error it fails with
        (the first injected one, now used up), or None when it is written."""
        if not self.append_errors:
            return None
        error, self.append_errors = self.append_errors[0], self.append_errors[1:]
        self.notes.append(E.AppendFailed(error))
        return error

    # -- small pieces of GroupMetadata ----------------------------------------------------------

    def transition(self, target: str, check: bool = True) -> None:
        """``transitionTo`` (§1.2): refuses a target whose valid previous states exclude ours."""
        if check and self.state not in VALID_PREVIOUS_STATES[target]:
            raise AssertionError(
                f"group {self.group_id}: illegal transition {self.state} -> {target}"
            )
        self.notes.append(E.Transition(self.state, target))
        self.state = target

    def arm(self, at: int) -> Deadline:
        deadline = Deadline(at, self.timer_seq)
        self.timer_seq += 1
        return deadline

    def is_pending(self, member_id: str) -> bool:
        for pending_id, _ in self.pending_members:
            if pending_id == member_id:
                return True
        return False

    def rebalance_timeout_ms(self) -> int:
        """``group.rebalanceTimeoutMs``: the largest member rebalance timeout, 0 when empty (§1.1)."""
        return max((m.rebalance_timeout_ms for m in self.members), default=0)

    def has_all_members_joined(self) -> bool:
        """§1.1: every member awaits join and no MEMBER_ID_REQUIRED member is outstanding."""
        if self.pending_members and "join_completes_with_pending" not in self.broken:
            return False
        for m in self.members:
            if m.awaiting_join is None:
                return False
        return True

    def supports_protocols(self, protocol_type: str, protocols: tuple) -> bool:
        """``supportsProtocols`` (§1.4 step 5): an Empty group takes any non-empty type and list;
        otherwise the type must match and one of the names must be listed by every member."""
        if self.state == EMPTY:
            return bool(protocol_type) and bool(protocols)
        if self.protocol_type != protocol_type:
            return False
        members = self.members
        for name, _ in protocols:
            if all(any(n == name for n, _ in m.protocols) for m in members):
                return True
        return False

    def pick_leader(self, candidates: tuple):
        """Kafka picks by hash-map order, i.e. any candidate: the caller's ``choose`` decides."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        return self.choose("leader", candidates)

    def remove(self, member_ids, reason: str, deadline_at=None, repick: bool = True) -> None:
        """``GroupMetadata.remove`` for a batch of ids (§1.6 leader bookkeeping): drops them from
        members (heartbeat deadlines go with them), pending and pending-sync; a removed leader is
        replaced by any remaining member (picked once per batch; with ``repick=False`` the caller
        elects, and leader_id is left None)."""
        kept = []
        for m in self.members:
            if m.member_id in member_ids:
                self.notes.append(E.MemberRemoved(m.member_id, reason, deadline_at))
            else:
                kept.append(m)
        self.members = kept
        if self.pending_members:
            self.pending_members = [p for p in self.pending_members if p[0] not in member_ids]
        if self.pending_sync:
            self.pending_sync = self.pending_sync.difference(member_ids)
        if self.leader_id is not None and self.leader_id in member_ids:
            if "leader_not_repicked" in self.broken:
                pass  # the removed id stays leader
            elif repick:
                self.leader_id = self.pick_leader(tuple(m.member_id for m in kept))
            else:
                self.leader_id = None

    def session_deadline(self, is_new: bool, parked: bool, session_timeout_ms: int, now: int):
        """"Complete and reschedule" (§1.12): the session deadline a member gets now. None when
        it counts as satisfied (not new and parked in JoinGroup or SyncGroup); otherwise one
        timeout ahead, the new-member join timeout while it is new."""
        if parked and not is_new:
            return None
        return self.arm(
            now + (self.config.new_member_join_timeout_ms if is_new else session_timeout_ms)
        )

    def reschedule_heartbeat(self, i: int, now: int) -> None:
        """Complete and reschedule the session deadline of member *i* as it stands."""
        m = self.members[i]
        parked = m.awaiting_join is not None or m.awaiting_sync is not None
        heartbeat = self.session_deadline(m.is_new, parked, m.session_timeout_ms, now)
        if heartbeat != m.heartbeat:
            self.members[i] = _member(m, heartbeat=heartbeat)

    # -- coordinator procedures ----------------------------------------------------------------

    def add_member_and_rebalance(self, member_id: str, request, reply_to, now: int) -> None:
        """``addMemberAndRebalance`` (§1.4): a new member, parked in JoinGroup, with the 5-minute
        new-member deadline; the first member fixes the protocol type and becomes leader if
        there is none; during the first rebalance (generation 0) it extends the initial delay."""
        if self.state == PREPARING_REBALANCE and self.generation == 0:
            self.new_member_added = True
        if not self.members:
            self.protocol_type = request.protocol_type
        if self.leader_id is None:
            self.leader_id = member_id
        self.members.append(
            Member(
                member_id=member_id,
                client_id=request.client_id,
                rebalance_timeout_ms=request.rebalance_timeout_ms,
                session_timeout_ms=request.session_timeout_ms,
                protocol_type=request.protocol_type,
                protocols=request.protocols,
                awaiting_join=reply_to,
                is_new=True,
                heartbeat=self.session_deadline(True, True, request.session_timeout_ms, now),
                group_instance_id=request.group_instance_id,
            )
        )
        if self.pending_members:
            self.pending_members = [p for p in self.pending_members if p[0] != member_id]
        self.maybe_prepare_rebalance(now)

    def update_member_and_rebalance(self, i: int, request, reply_to, now: int) -> None:
        """``updateMemberAndRebalance`` (§1.4): new protocols and timeouts, and the JoinGroup is
        parked; a JoinGroup already parked for this member is dropped, never answered."""
        self.members[i] = _member(
            self.members[i],
            protocols=request.protocols,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            session_timeout_ms=request.session_timeout_ms,
            awaiting_join=reply_to,
        )
        self.maybe_prepare_rebalance(now)

    def update_static_member_and_rebalance(self, old_id: str, new_id: str, request, reply_to, now: int) -> None:
        """``updateStaticMemberAndRebalance`` (§1.11): a known static member joined with an unknown
        member id. ``replaceStaticMember`` swaps the ids (a JoinGroup or SyncGroup parked under the
        old id is answered FENCED_INSTANCE_ID; the leader's id follows), the session deadline is
        re-armed for the new id, the new protocols and timeouts are taken and the JoinGroup parked.
        Stable: if the protocol the next generation would select is the current one, the group
        record is written with the new id and the member gets the current generation, named with
        the *old* leader id so that a rejoining leader does not assign a Stable group (before
        JoinGroup v9); a failed write reverts the swap and answers the error. Otherwise, and in
        CompletingRebalance, the group rebalances; in PreparingRebalance the JoinGroup waits."""
        leader_before = self.leader_id
        i = _index_of(self.members, old_id)
        old = self.members[i]
        self._fence(old)
        replaced = _member(old, member_id=new_id, awaiting_join=None, awaiting_sync=None)
        # members.remove(old); members.put(new): the member goes to the end of the map's order (a
        # HashMap's order in Kafka, which nothing may depend on; insertion order in impl's dict)
        del self.members[i]
        self.members.append(replaced)
        i = len(self.members) - 1
        if self.leader_id == old_id:
            self.leader_id = new_id
        # completeAndScheduleNextHeartbeatExpiration: one *session* timeout, also for a member still
        # new (only addMemberAndRebalance gives the new-member join timeout), and a new member is
        # satisfied only by a heartbeat (hasSatisfiedHeartbeat): a replaced new member parked in
        # JoinGroup is removed when it runs out
        # ... then updateMember: the new protocols and timeouts, the JoinGroup parked
        self.members[i] = _member(self.members[i], heartbeat=self.arm(now + old.session_timeout_ms),
                                  protocols=request.protocols, rebalance_timeout_ms=request.rebalance_timeout_ms,
                                  session_timeout_ms=request.session_timeout_ms, awaiting_join=reply_to)
        state = self.state
        if state == STABLE:
            # Kafka's selectProtocol is a function of the votes (its tie-break is a hash map's
            # order): with the member's protocol names unchanged, the votes and so the selection are
            # those of the last join, and only a change can call for a rebalance (the model's
            # choose() for a tie would otherwise invent one)
            same_votes = [n for n, _ in request.protocols] == [n for n, _ in old.protocols]
            if (not same_votes and self.select_protocol() != self.protocol_name) \
                    or "static_rejoin_rebalances" in self.broken:
                self.maybe_prepare_rebalance(now)
                return
            failure = self.append_fails()
            if failure is not None:
                # revert: the old protocols and timeouts, the old id (fencing the new one's join)
                self.members[i] = _member(self.members[i], protocols=old.protocols,
                                          rebalance_timeout_ms=old.rebalance_timeout_ms,
                                          session_timeout_ms=old.session_timeout_ms, awaiting_join=None,
                                          member_id=old_id)
                if self.leader_id == new_id:
                    self.leader_id = old_id
                self.members[i] = _member(self.members[i], heartbeat=self.arm(now + old.session_timeout_ms))
                self.reply(reply_to, JoinGroupResponse(error=STORE_GROUP_ERRORS.get(failure, failure),
                                                       generation_id=self.generation, protocol_type=self.protocol_type,
                                                       protocol_name=self.protocol_name, leader_id=leader_before or "",
                                                       member_id=UNKNOWN_MEMBER_ID))
                return
            self.persist = self.freeze()
            self.notes.append(E.StaticReplaced(self.generation, old_id, new_id))
            self.members[i] = _member(self.members[i], awaiting_join=None)
            self.reply(reply_to, JoinGroupResponse(error=_NONE, generation_id=self.generation,
                                                   protocol_type=self.protocol_type, protocol_name=self.protocol_name,
                                                   leader_id=leader_before or "", member_id=new_id))
        elif state == COMPLETING_REBALANCE:
            self.prepare_rebalance(now)

    def _fence(self, m: Member) -> None:
        """``replaceStaticMember``: what waits under a replaced member id is answered FENCED_INSTANCE_ID."""
        if m.awaiting_join is not None:
            self.reply(m.awaiting_join, _error_join(Errors.FENCED_INSTANCE_ID, m.member_id))
        if m.awaiting_sync is not None:
            self.reply(m.awaiting_sync, SyncGroupResponse(error=Errors.FENCED_INSTANCE_ID))

    def maybe_prepare_rebalance(self, now: int) -> None:
        """``maybePrepareRebalance``: only when ``canRebalance`` (Stable, CompletingRebalance, Empty)."""
        if self.state in (STABLE, COMPLETING_REBALANCE, EMPTY):
            self.prepare_rebalance(now)

    def prepare_rebalance(self, now: int) -> None:
        """``prepareRebalance`` (§1.5): fail parked syncs, cancel the pending-sync expiry, arm an
        InitialDelayedJoin (from Empty) or a DelayedJoin, enter PreparingRebalance and try to
        complete the join phase at once."""
        if self.state == COMPLETING_REBALANCE:
            self.reset_and_propagate_assignment_error(Errors.REBALANCE_IN_PROGRESS, now)
        self.pending_sync = frozenset()
        self.sync_deadline = None
        rebalance_timeout = self.rebalance_timeout_ms()
        if self.state == EMPTY:
            delay = self.config.initial_rebalance_delay_ms
            self.join_deadline = self.arm(now + delay)
            self.initial_delay_remaining = max(rebalance_timeout - delay, 0)
        else:
            self.join_deadline = self.arm(now + rebalance_timeout)
            self.initial_delay_remaining = None
        self.transition(PREPARING_REBALANCE)
        self.try_complete_join(now)

    def try_complete_join(self, now: int) -> None:
        """``DelayedJoin.tryComplete`` (§1.5): complete the join phase early once everyone has
        joined. An InitialDelayedJoin never completes early."""
        if (
            self.state == PREPARING_REBALANCE
            and self.join_deadline is not None
            and self.initial_delay_remaining is None
            and self.has_all_members_joined()
        ):
            self.join_deadline = None
            self.complete_join(now, all_joined=True)

    def complete_join(self, now: int, all_joined: bool) -> None:
        """``onCompleteJoin`` (§1.6). The caller has already disarmed the join deadline."""
        generation_before = self.generation
        self.initial_delay_remaining = None
        # 1. Dynamic members that did not rejoin are dropped; static ones stay (only their session
        # expiry removes them): notYetRejoinedMembers.filterNot(_._2.isStaticMember).
        if "non_rejoined_kept" not in self.broken:
            gone = frozenset(m.member_id for m in self.members
                             if m.awaiting_join is None and m.group_instance_id is None)
            if gone:
                # GroupMetadata.remove re-picks a removed leader at once among the members left
                # (leaderId = members.keys.headOption), rejoined or not: with static members kept
                # through the phase, that may be one that has not rejoined
                self.remove(gone, "not_rejoined")
        if self.state == DEAD:
            return
        # 3. maybeElectNewJoinedLeader: keep a leader that rejoined, else any member that did.
        if self.members and not self.elect_joined_leader():
            # Only non-rejoined members remain (static in Kafka): wait another rebalance timeout.
            self.join_deadline = self.arm(now + self.rebalance_timeout_ms())
            return
        # 4. initNextGeneration
        if "generation_not_bumped" in self.broken:
            pass
        elif "generation_bumped_twice" in self.broken:
            self.generation += 2
        else:
            self.generation += 1
        self.pending_sync = frozenset()
        members = self.members
        if not members:
            self.protocol_name = None
            self.transition(EMPTY)
            self.notes.append(
                E.JoinComplete(generation_before, self.generation, (), self.leader_id, all_joined,
                               tuple(p for p, _ in self.pending_members))
            )
            if self.append_fails() is None:
                self.persist = self.freeze()  # the empty group record is written
            # else GroupCoordinator.onCompleteJoin only warns ("Failed to write empty metadata"):
            # the previous generation's record stays the latest, and a failover revives it
            return
        self.protocol_name = self.select_protocol()
        if "stable_skips_completing" in self.broken:
            self.transition(STABLE, check=False)
        else:
            self.transition(COMPLETING_REBALANCE)
        member_ids = tuple(m.member_id for m in members)
        self.notes.append(
            E.JoinComplete(generation_before, self.generation, member_ids, self.leader_id, all_joined,
                           tuple(p for p, _ in self.pending_members))
        )
        # 5. Answer every parked JoinGroup, in member order; the leader gets the member list.
        protocol_name = self.protocol_name
        leader_members = tuple((m.member_id, _metadata_for(m, protocol_name)) for m in members)
        leader_instances = _instances(members)
        for i, m in enumerate(members):
            if m.awaiting_join is not None:
                self.reply(
                    m.awaiting_join,
                    JoinGroupResponse(
                        error=_NONE,
                        generation_id=self.generation,
                        protocol_type=self.protocol_type,
                        protocol_name=protocol_name,
                        leader_id=self.leader_id,
                        member_id=m.member_id,
                        members=leader_members if m.member_id == self.leader_id else (),
                        member_instances=leader_instances if m.member_id == self.leader_id else (),
                    ),
                )
            parked = m.awaiting_sync is not None
            members[i] = _member(
                m,
                awaiting_join=None,
                is_new=False,
                heartbeat=self.session_deadline(False, parked, m.session_timeout_ms, now),
            )
        self.pending_sync = frozenset(member_ids)
        # schedulePendingSync: DelayedSync for this generation.
        self.sync_deadline = self.arm(now + self.rebalance_timeout_ms())
        self.sync_generation = self.generation

    def elect_joined_leader(self) -> bool:
        """``maybeElectNewJoinedLeader`` (§1.6 step 3)."""
        leader = self.leader_id
        if leader is not None:
            i = _index_of(self.members, leader)
            if i >= 0 and self.members[i].awaiting_join is not None:
                return True
        joined = tuple(m.member_id for m in self.members if m.awaiting_join is not None)
        if not joined:
            return False
        self.leader_id = self.pick_leader(joined)
        return True

    def select_protocol(self) -> str:
        """``selectProtocol`` (§1.6): among the names every member lists, each member votes for its
        most preferred; most votes wins; a tie is Kafka's hash-map order, i.e. ``choose``."""
        members = self.members
        candidates = {name for name, _ in members[0].protocols}
        for m in members[1:]:
            candidates &= {name for name, _ in m.protocols}
        votes: dict = {}  # insertion order = first appearance in member order
        for m in members:
            for name, _ in m.protocols:
                if name in candidates:
                    votes[name] = votes.get(name, 0) + 1
                    break
        most = max(votes.values())
        tied = tuple(name for name, count in votes.items() if count == most)
        if len(tied) == 1:
            return tied[0]
        return self.choose("protocol", tied)

    def reset_and_propagate_assignment_error(self, error: int, now: int) -> None:
        """``resetAndPropagateAssignmentError`` (§1.5 step 1): clear every assignment and answer
        every parked SyncGroup with *error*, resetting those members' session deadlines."""
        members = self.members
        for i, m in enumerate(members):
            if m.awaiting_sync is not None:
                self.reply(m.awaiting_sync, SyncGroupResponse(error=error))
                parked = m.awaiting_join is not None
                members[i] = _member(
                    m,
                    assignment=(),
                    awaiting_sync=None,
                    heartbeat=self.session_deadline(m.is_new, parked, m.session_timeout_ms, now),
                )
            elif m.assignment:
                members[i] = _member(m, assignment=())

    def set_and_propagate_assignment(self, assignments: dict, now: int) -> None:
        """``setAndPropagateAssignment`` (§1.7 step 4): store each member's assignment and answer
        every parked SyncGroup, in member order, resetting those members' session deadlines."""
        members = self.members
        if "followers_get_leader_assignment" in self.broken:
            leader_assignment = assignments.get(self.leader_id, ())
            assignments = {m.member_id: leader_assignment for m in members}
        for i, m in enumerate(members):
            assignment = assignments.get(m.member_id, ())
            if m.awaiting_sync is not None:
                self.reply(
                    m.awaiting_sync,
                    SyncGroupResponse(
                        error=_NONE,
                        protocol_type=self.protocol_type,
                        protocol_name=self.protocol_name,
                        assignment=assignment,
                    ),
                )
                parked = m.awaiting_join is not None
                members[i] = _member(
                    m,
                    assignment=assignment,
                    awaiting_sync=None,
                    heartbeat=self.session_deadline(m.is_new, parked, m.session_timeout_ms, now),
                )
            elif assignment != m.assignment:
                members[i] = _member(m, assignment=assignment)
        self.notes.append(
            E.AssignmentStored(self.generation, tuple((m.member_id, m.assignment) for m in members))
        )

    def remove_member_and_update_group(self, i: int, reason: str, deadline_at, now: int) -> None:
        """``removeMemberAndUpdateGroup`` (§1.9): a parked JoinGroup is answered UNKNOWN_MEMBER_ID
        first (a parked SyncGroup is dropped unanswered, as in Kafka); then the group rebalances
        (Stable, CompletingRebalance) or re-checks join completion (PreparingRebalance)."""
        m = self.members[i]
        if m.awaiting_join is not None:
            self.reply(m.awaiting_join, _error_join(Errors.UNKNOWN_MEMBER_ID))
        self.remove((m.member_id,), reason, deadline_at)
        if self.state in (STABLE, COMPLETING_REBALANCE):
            self.maybe_prepare_rebalance(now)
        elif self.state == PREPARING_REBALANCE:
            self.try_complete_join(now)

    def remove_pending_member_and_update_group(self, member_id: str, now: int) -> None:
        """``removePendingMemberAndUpdateGroup`` (§1.9, §1.12)."""
        self.remove((member_id,), "pending")
        if self.state == PREPARING_REBALANCE:
            self.try_complete_join(now)

    def remove_pending_sync_member(self, member_id: str) -> None:
        """``removePendingSyncMember``: and the DelayedSync completes once everyone has synced."""
        if member_id in self.pending_sync:
            self.pending_sync = self.pending_sync - {member_id}
        if self.sync_deadline is not None and self.sync_is_complete():
            self.sync_deadline = None

    def sync_is_complete(self) -> bool:
        """``tryCompletePendingSync`` (§1.7 step 5): nothing left to expire for sync_generation."""
        return (
            self.sync_generation != self.generation
            or self.state in (DEAD, EMPTY, PREPARING_REBALANCE)
            or not self.pending_sync
        )

    # -- timers ---------------------------------------------------------------------------------

    def on_join_deadline(self, now: int) -> None:
        """DelayedJoin expiry completes the join phase anyway; an InitialDelayedJoin first extends
        itself while new members keep arriving (§1.5)."""
        self.join_deadline = None
        remaining = self.initial_delay_remaining
        if remaining is not None and self.new_member_added and remaining != 0:
            self.new_member_added = False
            configured = self.config.initial_rebalance_delay_ms
            delay = min(configured, remaining)
            # Kafka subtracts the *old* delay, this timer's delayMs, which the group does not
            # store: it equals the configured delay whenever this branch runs. The first timer's
            # delay is the configured one; a later timer's is min(configured, R) for the previous
            # remaining R, and this branch runs only if R - old delay > 0, i.e. R > configured.
            self.initial_delay_remaining = max(remaining - configured, 0)
            self.join_deadline = self.arm(now + delay)
            return
        self.complete_join(now, all_joined=False)

    def on_sync_deadline(self, now: int) -> None:
        """DelayedSync expiry (§1.7 step 5): members that have not synced are removed (leader
        included) and the group rebalances."""
        self.sync_deadline = None
        if self.sync_is_complete():  # also: the group left CompletingRebalance/Stable
            return
        pending_sync = self.pending_sync
        laggards = frozenset(m.member_id for m in self.members if m.member_id in pending_sync)
        self.remove(laggards, "not_synced")
        self.prepare_rebalance(now)

    def on_heartbeat_deadline(self, i: int, deadline_at: int, now: int) -> None:
        """DelayedHeartbeat expiry (§1.12): a satisfied member is left alone (and its deadline is
        not re-armed); any other member is removed."""
        m = self.members[i]
        self.members[i] = m = _member(m, heartbeat=None)
        if self.state == DEAD:
            return
        if not m.is_new and (m.awaiting_join is not None or m.awaiting_sync is not None):
            return
        self.remove_member_and_update_group(i, "session", deadline_at, now)

    def on_pending_deadline(self, member_id: str, now: int) -> None:
        """Pending-member expiry (§1.12): forget the id handed out with MEMBER_ID_REQUIRED."""
        if self.state == DEAD:
            self.pending_members = [p for p in self.pending_members if p[0] != member_id]
            return
        self.remove_pending_member_and_update_group(member_id, now)


# ---------------------------------------------------------------------------------------------
# Requests
# ---------------------------------------------------------------------------------------------


def handle_join_group(group, request, reply_to, now, config, choose, member_seq: int = 0) -> Outcome:
    """JoinGroup (§1.4 from step 2; the broker has run the prelude). *member_seq*: where a group
    this coordinator creates starts its member ids (ids must never repeat across coordinators)."""
    member_id = request.member_id
    if not (
        config.min_session_timeout_ms <= request.session_timeout_ms <= config.max_session_timeout_ms
    ):
        return Outcome(group, ((reply_to, _error_join(Errors.INVALID_SESSION_TIMEOUT, member_id)),))
    created = group is None
    if created:
        if member_id != UNKNOWN_MEMBER_ID:
            return Outcome(None, ((reply_to, _error_join(Errors.UNKNOWN_MEMBER_ID, member_id)),))
        group = Group(group_id=request.group_id, member_seq=member_seq)
    d = _Draft(group, config, choose)
    if not _accept_joining_member(d, member_id, config):
        d.remove((member_id,), "max_size")
        d.reply(reply_to, _error_join(Errors.GROUP_MAX_SIZE_REACHED))
    elif member_id == UNKNOWN_MEMBER_ID:
        _new_member_join(d, request, reply_to, now)
    else:
        _current_member_join(d, request, reply_to, now)
    if d.state == PREPARING_REBALANCE:
        d.try_complete_join(now)
    if created and config.new_group_coordinator and d.persist is None:
        # Kafka 4.x's GroupMetadataManager.classicGroupJoin: "If there are no records to append and
        # if a group was newly created, we need to append records to the log to commit the group
        # to the timeline data structure" -- newEmptyGroupMetadataRecord (generation 0, no members).
        # A failover then loads an Empty group where the Scala coordinator, which writes nothing
        # before the first SyncGroup, has none. Found by conform --launch kafka:4.1 --brokers 3.
        d.persist = Group(group_id=request.group_id, member_seq=member_seq)
    return d.outcome()


def _accept_joining_member(d: _Draft, member_id: str, config) -> bool:
    """``acceptJoiningMember`` (§1.4 step 4): the group.max.size gate."""
    state = d.state
    if state in (EMPTY, DEAD):
        return True
    i = _index_of(d.members, member_id)
    if state == PREPARING_REBALANCE:
        if i >= 0 and d.members[i].awaiting_join is not None:
            return True
        awaiting = sum(1 for m in d.members if m.awaiting_join is not None)
        return awaiting < config.group_max_size
    return i >= 0 or len(d.members) < config.group_max_size


def _new_member_join(d: _Draft, request, reply_to, now: int) -> None:
    """``doNewMemberJoinGroup`` (§1.4 step 5): a new id, ``groupInstanceId-UUID`` for a static member
    (``GroupMetadata.generateMemberId``), which replaces the id its instance holds, if any
    (``doStaticNewMemberJoinGroup``; §1.11), and is never asked to rejoin with it
    (``requireKnownMemberId`` is for dynamic members only)."""
    if d.state == DEAD:
        d.reply(reply_to, _error_join(Errors.COORDINATOR_NOT_AVAILABLE))
        return
    if not d.supports_protocols(request.protocol_type, request.protocols):
        d.reply(reply_to, _error_join(Errors.INCONSISTENT_GROUP_PROTOCOL))
        return
    instance_id = request.group_instance_id
    prefix_of = request.client_id if instance_id is None else instance_id
    new_id = new_member_id(prefix_of, d.member_seq)
    prefix = f"{prefix_of}-"
    others = [m.member_id for m in d.members if m.member_id.startswith(prefix)]
    others += [p for p, _ in d.pending_members if p.startswith(prefix)]
    if others:  # Kafka's UUIDs put the new id anywhere among them (member_id_in_slot)
        slot = d.choose("member_order", tuple(range(len(others) + 1)))
        new_id = member_id_in_slot(prefix_of, others, slot, d.member_seq)
    d.member_seq += 1
    if instance_id is not None:
        old_id = static_member_id(d.members, instance_id)
        if old_id is not None and "static_member_added_not_replaced" not in d.broken:
            d.update_static_member_and_rebalance(old_id, new_id, request, reply_to, now)
        else:
            d.add_member_and_rebalance(new_id, request, reply_to, now)
    elif d.config.require_known_member_id:
        d.pending_members.append((new_id, d.arm(now + request.session_timeout_ms)))
        d.reply(reply_to, _error_join(Errors.MEMBER_ID_REQUIRED, new_id))
    else:
        d.add_member_and_rebalance(new_id, request, reply_to, now)


def _current_member_join(d: _Draft, request, reply_to, now: int) -> None:
    """``doCurrentMemberJoinGroup`` (§1.4 step 6)."""
    member_id = request.member_id
    if d.state == DEAD:
        d.reply(reply_to, _error_join(Errors.COORDINATOR_NOT_AVAILABLE, member_id))
        return
    if not d.supports_protocols(request.protocol_type, request.protocols):
        d.reply(reply_to, _error_join(Errors.INCONSISTENT_GROUP_PROTOCOL, member_id))
        return
    if d.is_pending(member_id):  # (a pending member is never static: its JoinGroup had no instance id)
        d.add_member_and_rebalance(member_id, request, reply_to, now)
        return
    error = validate_current_member(d.members, member_id, request.group_instance_id)
    if error is not None:
        d.reply(reply_to, _error_join(error, member_id))
        return
    i = _index_of(d.members, member_id)
    state = d.state
    member = d.members[i]
    if state == PREPARING_REBALANCE:
        d.update_member_and_rebalance(i, request, reply_to, now)
    elif state == COMPLETING_REBALANCE:
        if member.protocols == request.protocols:
            # Same metadata (it probably lost the response): the current generation again.
            d.reply(reply_to, _current_generation(d, member_id, with_members=member_id == d.leader_id))
        else:
            d.update_member_and_rebalance(i, request, reply_to, now)
    elif state == STABLE:
        if member_id == d.leader_id or member.protocols != request.protocols:
            d.update_member_and_rebalance(i, request, reply_to, now)
        else:
            d.reply(reply_to, _current_generation(d, member_id, with_members=False))
    else:  # Empty: a member of an empty group is unexpected
        d.reply(reply_to, _error_join(Errors.UNKNOWN_MEMBER_ID, member_id))


def _current_generation(d: _Draft, member_id: str, with_members: bool) -> JoinGroupResponse:
    """An immediate JoinGroup answer with the current generation (§1.4 step 6)."""
    members = instances = ()
    if with_members:
        members = tuple((m.member_id, _metadata_for(m, d.protocol_name)) for m in d.members)
        instances = _instances(d.members)
    return JoinGroupResponse(
        error=_NONE,
        generation_id=d.generation,
        protocol_type=d.protocol_type,
        protocol_name=d.protocol_name,
        leader_id=d.leader_id or "",
        member_id=member_id,
        members=members,
        member_instances=instances,
    )


def handle_sync_group(group, request, reply_to, now, config, choose) -> Outcome:
    """SyncGroup (§1.7 from step 2)."""
    if group is None:
        return Outcome(None, ((reply_to, SyncGroupResponse(error=Errors.UNKNOWN_MEMBER_ID)),))
    error = _validate_sync_group(group, request, config)
    if error is not None:
        return Outcome(group, ((reply_to, SyncGroupResponse(error=error)),))
    state = group.state
    if state == EMPTY:
        return Outcome(group, ((reply_to, SyncGroupResponse(error=Errors.UNKNOWN_MEMBER_ID)),))
    if state == PREPARING_REBALANCE:
        return Outcome(group, ((reply_to, SyncGroupResponse(error=Errors.REBALANCE_IN_PROGRESS)),))
    d = _Draft(group, config, choose)
    member_id = request.member_id
    i = _index_of(d.members, member_id)
    if state == COMPLETING_REBALANCE:
        d.members[i] = _member(d.members[i], awaiting_sync=reply_to)
        d.remove_pending_sync_member(member_id)
        if member_id == d.leader_id:
            # Members missing from the leader's assignment get an empty one. The record is
            # appended (storeGroup) and its callback runs at once (the append is synchronous here)
            failure = d.append_fails()
            if failure is not None:
                # GroupCoordinator.doSyncGroup's storeGroup callback: every parked SyncGroup gets
                # the mapped error and the group rebalances (resetAndPropagateAssignmentError,
                # maybePrepareRebalance "Error when storing group assignment during SyncGroup")
                d.reset_and_propagate_assignment_error(STORE_GROUP_ERRORS.get(failure, failure), now)
                d.maybe_prepare_rebalance(now)
                return d.outcome()
            d.set_and_propagate_assignment(dict(request.assignments), now)
            d.transition(STABLE)
            if "assignment_not_persisted" not in d.broken:
                d.persist = d.freeze()
    else:  # Stable: hand out the stored assignment
        d.remove_pending_sync_member(member_id)
        member = d.members[i]
        d.reply(
            reply_to,
            SyncGroupResponse(
                error=_NONE,
                protocol_type=d.protocol_type,
                protocol_name=d.protocol_name,
                assignment=member.assignment,
            ),
        )
        # Scala GroupCoordinator.doSyncGroup (3.9.2), case Stable: completeAndScheduleNextHeartbeatExpiration
        # -- a SyncGroup to a Stable group keeps the member's session alive. The Java coordinator's
        # GroupMetadataManager.classicGroupSyncToClassicGroup (4.1.2), STABLE branch, only answers:
        # the session deadline stays where the join's completion (completeClassicGroupJoin) or the
        # assignment's propagation (propagateAssignment) last put it. Found by conform against Kafka
        # 4.1.2 with timers (docs/results/kafka-2026-11-28/k41-on*/): a member that synced late and
        # never heartbeat expired 2 s after the join completed, not after its SyncGroup.
        if not config.new_group_coordinator:
            d.reschedule_heartbeat(i, now)
    return d.outcome()


def _validate_sync_group(group: Group, request, config):
    """``validateSyncGroup`` (§1.7 step 3): the first error, or None."""
    if group.state == DEAD:
        return Errors.COORDINATOR_NOT_AVAILABLE
    error = validate_current_member(group.members, request.member_id, request.group_instance_id)
    if error is not None:
        return error
    if "sync_accepts_stale_generation" in config.broken:
        pass
    elif request.generation_id != group.generation:
        return Errors.ILLEGAL_GENERATION
    if request.protocol_type is not None and request.protocol_type != group.protocol_type:
        return Errors.INCONSISTENT_GROUP_PROTOCOL
    if request.protocol_name is not None and request.protocol_name != group.protocol_name:
        return Errors.INCONSISTENT_GROUP_PROTOCOL
    return None


def handle_heartbeat(group, request, reply_to, now, config, choose) -> Outcome:
    """Heartbeat (§1.8 from step 2): validation (member, then generation) before the state."""
    if group is None:
        return Outcome(None, ((reply_to, HeartbeatResponse(Errors.UNKNOWN_MEMBER_ID)),))
    state = group.state
    if "fenced_static_member_accepted" in config.broken and request.group_instance_id is not None:
        current = static_member_id(group.members, request.group_instance_id)
        if current is not None:
            request = attrs.evolve(request, member_id=current)
    i = _index_of(group.members, request.member_id)
    member_error = None if state == DEAD else validate_current_member(group.members, request.member_id,
                                                                        request.group_instance_id)
    if state == DEAD:
        error = Errors.COORDINATOR_NOT_AVAILABLE
    elif member_error is not None:
        error = member_error
    elif request.generation_id != group.generation:
        error = Errors.ILLEGAL_GENERATION
    elif state == EMPTY:
        error = Errors.UNKNOWN_MEMBER_ID
    else:
        d = _Draft(group, config, choose)
        d.reschedule_heartbeat(i, now)
        if state != PREPARING_REBALANCE:
            error = _NONE
        elif "heartbeat_none_while_preparing" in config.broken:
            error = _NONE
        else:
            error = Errors.REBALANCE_IN_PROGRESS
        d.reply(reply_to, HeartbeatResponse(error))
        return d.outcome()
    return Outcome(group, ((reply_to, HeartbeatResponse(error)),))


def handle_leave_group(group, request, reply_to, now, config, choose) -> Outcome:
    """LeaveGroup, batch form (§1.9 after the prelude). Never checks the generation."""
    if group is None:
        errors = tuple((member_id, Errors.UNKNOWN_MEMBER_ID) for member_id in request.member_ids)
        return Outcome(None, ((reply_to, LeaveGroupResponse(_NONE, errors)),))
    if group.state == DEAD:
        return Outcome(group, ((reply_to, LeaveGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE)),))
    d = _Draft(group, config, choose)
    member_errors = []
    instance_ids = request.instance_ids or (None,) * len(request.member_ids)
    for member_id, instance_id in zip(request.member_ids, instance_ids):
        if member_id == UNKNOWN_MEMBER_ID:
            # the administrative removal of a static member by its group.instance.id
            current = None if instance_id is None else static_member_id(d.members, instance_id)
            if current is None:
                error = Errors.UNKNOWN_MEMBER_ID
            else:
                d.remove_member_and_update_group(_index_of(d.members, current), "leave", None, now)
                error = _NONE
        elif d.is_pending(member_id):
            before = d.state
            d.remove_pending_member_and_update_group(member_id, now)
            error = _NONE
            if config.new_group_coordinator and before in (STABLE, COMPLETING_REBALANCE):
                # Kafka 4.x (GroupMetadataManager.classicGroupLeaveToClassicGroup): every member the
                # LeaveGroup removed without error, a pending one too, counts, and a group that was
                # Stable or CompletingRebalance rebalances (maybePrepareRebalanceOrCompleteJoin); one
                # that was PreparingRebalance only completes its join if it can (maybeCompleteJoinPhase,
                # as the Scala coordinator does), and does not rebalance again after. The Scala
                # GroupCoordinator.handleLeaveGroup only drops a pending member
                # (removePendingMemberAndUpdateGroup). Seen with conform broker --launch kafka:4.1
                # (seed 19; and the PreparingRebalance case: docs/results/kafka-2026-11-28/k41-off/01).
                d.maybe_prepare_rebalance(now)
        else:
            error = validate_current_member(d.members, member_id, instance_id)
            if error is None:
                d.remove_member_and_update_group(_index_of(d.members, member_id), "leave", None, now)
                error = _NONE
        member_errors.append((member_id, error))
    d.reply(reply_to, LeaveGroupResponse(_NONE, tuple(member_errors)))
    return d.outcome()


#: offset.metadata.max.bytes, Kafka's default (OffsetConfig.DefaultMaxMetadataSize): the longest
#: metadata string a commit may carry per partition (the world's commits mark the longer ones
#: ``oversized``; the wire judge measures them against this)
OFFSET_METADATA_MAX_BYTES = 4096


def handle_offset_commit(group, request, reply_to, now, config, choose, member_seq: int = 0) -> Outcome:
    """OffsetCommit with generation fencing (§1.10 from step 2)."""
    offsets = request.offsets
    generation_id = request.generation_id
    if group is None:
        if generation_id >= 0:
            error = Errors.ILLEGAL_GENERATION
            note = ("commit", generation_id, request.member_id, None, None, error)
            return Outcome(None, ((reply_to, _commit_response(offsets, error)),), (note,))
        group = Group(group_id=request.group_id, member_seq=member_seq)  # a "simple" consumer's group
    state = group.state
    error = _validate_offset_commit(group, request, config.broken)
    stored = False
    d = None
    oversized = () if error is not None else request.oversized
    if error is None:
        if state == EMPTY:
            error, stored = _NONE, True
        elif state in (STABLE, PREPARING_REBALANCE):
            # Commits of the previous generation are allowed while preparing.
            d = _Draft(group, config, choose)
            d.reschedule_heartbeat(_index_of(d.members, request.member_id), now)
            error, stored = _NONE, True
        else:  # CompletingRebalance
            error, oversized = Errors.REBALANCE_IN_PROGRESS, ()
    # storeOffsets: the partitions whose metadata is too long are filtered out first; with none
    # left it answers OFFSET_METADATA_TOO_LARGE for all and appends nothing (§1.10 step 5;
    # kafka.coordinator.group.GroupMetadataManager.storeOffsets, filteredOffsetMetadata)
    valid = tuple(o for o in offsets if o[0] not in oversized) if oversized else offsets
    if stored:
        if not valid and oversized:
            error, stored = Errors.OFFSET_METADATA_TOO_LARGE, False
        elif valid and group.append_errors:
            # storeOffsets appends (an empty commit appends nothing) and the append fails: every
            # partition gets the mapped error and nothing is committed (§1.10 step 5)
            if d is None:
                d = _Draft(group, config, choose)
            failure = d.append_fails()
            error, stored = STORE_OFFSETS_ERRORS.get(failure, failure), False
    committed = valid if stored else ()
    notes = (E.Commit(generation_id, request.member_id, group.generation, state, error),)
    if oversized:
        notes += (E.MetadataTooLarge(len(committed), len(oversized)),)
    replies = ((reply_to, _commit_response(offsets, error, oversized)),)
    if d is not None:
        return Outcome(d.freeze(), replies, (*d.notes, *notes), None, committed)
    return Outcome(group, replies, notes, None, committed)


def _validate_offset_commit(group: Group, request, broken):
    """``validateOffsetCommit`` (§1.10 step 3): the first error, or None."""
    if group.state == DEAD:
        return Errors.COORDINATOR_NOT_AVAILABLE
    generation_id = request.generation_id
    if generation_id < 0 and group.state == EMPTY:
        return None
    if generation_id >= 0 or request.member_id != UNKNOWN_MEMBER_ID or request.group_instance_id is not None:
        stale = generation_id != group.generation and "commit_accepts_stale_generation" not in broken
        if "commit_checks_generation_first" in broken and stale:
            return Errors.ILLEGAL_GENERATION
        member_error = validate_current_member(group.members, request.member_id, request.group_instance_id)
        if member_error is not None and "commit_skips_fencing" not in broken:
            return member_error
        if stale and "commit_skips_fencing" not in broken:
            return Errors.ILLEGAL_GENERATION
        return None
    return Errors.UNKNOWN_MEMBER_ID  # no member id, no generation, and the group is not Empty


def _commit_response(offsets: tuple, error: int, oversized: tuple = ()) -> OffsetCommitResponse:
    """One error per partition, in the request's order: OFFSET_METADATA_TOO_LARGE for the
    partitions whose metadata was too long, *error* for the others (GroupMetadataManager.storeOffsets
    builds the commit status partition by partition)."""
    return OffsetCommitResponse(tuple((partition, Errors.OFFSET_METADATA_TOO_LARGE if partition in oversized else error)
                                      for partition, _ in offsets))


# ---------------------------------------------------------------------------------------------
# Time
# ---------------------------------------------------------------------------------------------

_JOIN, _SYNC, _HEARTBEAT, _PENDING = 0, 1, 2, 3


def _earliest(group, heartbeat_early: int):
    """The armed timer with the smallest (due time, seq) as (due, kind, key, deadline.at), or
    None. A heartbeat deadline is due *heartbeat_early* ms before it (0 unless broken). Works on
    a Group or a _Draft."""
    best = None
    best_due = best_seq = 0
    d = group.join_deadline
    if d is not None:
        best, best_due, best_seq = (_JOIN, None, d.at), d.at, d.seq
    d = group.sync_deadline
    if d is not None and (best is None or d.at < best_due or (d.at == best_due and d.seq < best_seq)):
        best, best_due, best_seq = (_SYNC, None, d.at), d.at, d.seq
    for m in group.members:
        d = m.heartbeat
        if d is not None:
            due = d.at - heartbeat_early
            if best is None or due < best_due or (due == best_due and d.seq < best_seq):
                best, best_due, best_seq = (_HEARTBEAT, m.member_id, d.at), due, d.seq
    for member_id, d in group.pending_members:
        if best is None or d.at < best_due or (d.at == best_due and d.seq < best_seq):
            best, best_due, best_seq = (_PENDING, member_id, d.at), d.at, d.seq
    return None if best is None else (best_due,) + best


def next_deadline(group) -> int | None:
    """The earliest armed deadline of *group* (ms), or None when nothing is armed."""
    if group is None:
        return None
    best = _earliest(group, 0)
    return None if best is None else best[0]


def next_due(group, config) -> int | None:
    """When the first armed timer of *group* fires (ms), or None: :func:`next_deadline` as
    :func:`fire_timers` sees it (a broken variant may fire heartbeat deadlines early)."""
    if group is None:
        return None
    early = config.heartbeat_interval_ms if "expiry_ignores_deadline" in config.broken else 0
    best = _earliest(group, early)
    return None if best is None else best[0]


def fire_timers(group, until, config, choose) -> Outcome:
    """Run every deadline ``<= until``, earliest (at, seq) first, each at its own time, including
    deadlines armed by the ones that fire. ``persist`` is the last record written."""
    if group is None:
        return Outcome(None)
    early = config.heartbeat_interval_ms if "expiry_ignores_deadline" in config.broken else 0
    best = _earliest(group, early)
    if best is None or best[0] > until:
        return Outcome(group)
    d = _Draft(group, config, choose)
    while best is not None and best[0] <= until:
        now, kind, key, deadline_at = best
        if kind == _JOIN:
            d.on_join_deadline(now)
        elif kind == _SYNC:
            d.on_sync_deadline(now)
        elif kind == _HEARTBEAT:
            d.on_heartbeat_deadline(_index_of(d.members, key), deadline_at, now)
        else:
            d.on_pending_deadline(key, now)
        best = _earliest(d, early)
    return d.outcome()


# ---------------------------------------------------------------------------------------------
# Coordinator migration
# ---------------------------------------------------------------------------------------------


def unload(group) -> Outcome:
    """Partition emigration (§1.13 ``onGroupUnloaded``): the group goes Dead; members parked in
    JoinGroup (PreparingRebalance) or SyncGroup (CompletingRebalance) get NOT_COORDINATOR."""
    if group is None:
        return Outcome(None)
    previous = group.state
    replies = []
    if previous == PREPARING_REBALANCE:
        for m in group.members:
            if m.awaiting_join is not None:
                replies.append((m.awaiting_join, _error_join(Errors.NOT_COORDINATOR, m.member_id)))
    elif previous in (STABLE, COMPLETING_REBALANCE):
        for m in group.members:
            if m.awaiting_sync is not None:
                replies.append((m.awaiting_sync, SyncGroupResponse(error=Errors.NOT_COORDINATOR)))
    return Outcome(None, tuple(replies), (("transition", previous, DEAD),))


def delete(group) -> Outcome | None:
    """DeleteGroups of the group at its coordinator (``GroupCoordinator.handleDeleteGroups``): an
    Empty group moves to Dead and is gone — ``GroupMetadataManager.cleanupGroupMetadata`` removes it
    and writes tombstones for its record and its offsets, so nothing persisted remains (the
    caller clears those). Any other state is refused with NON_EMPTY_GROUP: None, nothing changes."""
    if group is None or group.state != EMPTY:
        return None
    return Outcome(None, (), (("transition", EMPTY, DEAD),))


def load(persisted, now, config, choose, member_seq: int = 0, group_id: str | None = None,
         has_offsets: bool = False) -> Outcome:
    """Partition immigration (§1.13 ``onGroupLoaded``): rebuild the group from its persisted
    record (Stable with members, else Empty); nothing parked, no pending or sync state, every
    member gets a fresh session deadline; an over-capacity group rebalances. A group with committed
    offsets (*has_offsets*) but no record loads Empty: Scala ``GroupMetadataManager
    .doLoadGroupsAndOffsets`` (``emptyGroupOffsets``: ``new GroupMetadata(groupId, Empty, time)``),
    4.x ``OffsetMetadataManager.replay`` (``getOrMaybeCreateClassicGroup(groupId, true)``, "a
    so-called simple consumer group").

    The record keeps one subscription per member, the metadata of the group's selected protocol
    (``GroupMetadataManager.groupMetadataValue``: ``setSubscription(protocolName.map(
    memberMetadata.metadata))``), and ``GroupMetadataManager.readGroupMessageValue`` rebuilds each
    member with ``supportedProtocols = List((value.protocol, memberMetadata.subscription))``. So a
    loaded member supports that one protocol only, and ``MemberMetadata.matches`` (same size, same
    names and bytes in order) fails for a JoinGroup listing more: a follower of the loaded Stable
    group that rejoins with its full protocol list starts a rebalance."""
    if persisted is None:
        if has_offsets and group_id is not None:
            return Outcome(Group(group_id=group_id, member_seq=member_seq))
        return Outcome(None)
    d = _Draft(persisted, config, choose)
    d.member_seq = max(d.member_seq, member_seq)  # ids handed out after the record was written stay taken
    d.state = STABLE if persisted.members else EMPTY
    protocol = persisted.protocol_name
    d.members = [
        _member(m, protocols=((protocol, _metadata_for(m, protocol)),), awaiting_join=None,
                awaiting_sync=None, is_new=False, heartbeat=None)
        for m in persisted.members
    ]
    d.pending_members = []
    d.pending_sync = frozenset()
    d.new_member_added = False
    d.join_deadline = None
    d.initial_delay_remaining = None
    d.sync_deadline = None
    d.sync_generation = -1
    d.append_errors = ()  # a fault of the coordinator that wrote the record, not of the record
    if len(d.members) > config.group_max_size:
        d.prepare_rebalance(now)
    for i in range(len(d.members)):
        d.reschedule_heartbeat(i, now)
    return d.outcome()
