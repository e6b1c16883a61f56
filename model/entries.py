"""The step log's vocabulary: every kind of entry :func:`model.world.step` returns, defined once.

A step's log is what the properties read (:mod:`properties.catalogue`), what coverage counts and
what a report's timeline says: what the clients sent, transmitted, expired and completed, what
the brokers handled and answered, the choices made, the coordinator's notes. Each entry is a
tag-first named tuple (:func:`model.tagged.tagged`): ``Send(1, 7, 4, "JoinGroup", 0, 30000) ==
("send", 1, 7, 4, "JoinGroup", 0, 30000)``, read as ``entry.timeout_ms`` rather than
``entry[6]``; code reading positions keeps working. Entries built elsewhere as plain tuples (the
proofs' symbolic steps build logs for the catalogue that way) are typed by :func:`as_entry`.

The coordinator's notes (:class:`model.group.Outcome` ``notes``: a join phase completed, a member
removed, ...) are typed here too (``JoinComplete``, ...); the world logs each as a *server entry*,
``("server",) + note`` (``ServerJoinComplete``, ...: the note's fields after the tags ``tag`` =
``"server"`` and ``note``), built by :func:`server_entry`.

Adding an entry kind: declare its class below (first field ``tag``, ``@tagged("tag", "<tag>")``),
build it where it happens, read it by field name; :data:`ENTRIES` finds it by itself. A new note
kind: declare it among the notes (``@_note``); its server entry class is derived.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from model.tagged import tagged

# -- the world ------------------------------------------------------------------------------------


@tagged("tag", "choice")
class Choice(NamedTuple):
    """A choice Kafka leaves open, made (``kind``: least_loaded, new_leader, processed, protocol,
    member_order, ...) among *candidates* (:func:`model.world.chooser`)."""

    tag: str
    kind: str
    candidates: tuple
    chosen: Any


@tagged("tag", "wakeup")
class Wakeup(NamedTuple):
    """Another thread called wakeup() on client *c*; it lands at its *landing*-th network poll."""

    tag: str
    c: int
    landing: int


@tagged("tag", "pause")
class Pause(NamedTuple):
    """Client *c*'s application is busy *ms* between two polls."""

    tag: str
    c: int
    ms: int


@tagged("tag", "stall")
class Stall(NamedTuple):
    """Client *c*'s whole process stands still *ms*."""

    tag: str
    c: int
    ms: int


@tagged("tag", "crash")
class Crash(NamedTuple):
    """Client *c*'s process died."""

    tag: str
    c: int


@tagged("tag", "restart")
class Restart(NamedTuple):
    """A new process took client *c*'s place."""

    tag: str
    c: int


@tagged("tag", "group_deleted")
class GroupDeleted(NamedTuple):
    """Broker *b* deleted the Empty group, last in *generation*, with its offsets (DeleteGroups or
    the offsets' expiry)."""

    tag: str
    b: int
    generation: int


@tagged("tag", "redeploy")
class Redeploy(NamedTuple):
    """A new process took client *c*'s place, deployed with settings *settings* (an entry of
    model.config.REDEPLOYS)."""

    tag: str
    c: int
    settings: int


@tagged("tag", "link_open")
class LinkOpen(NamedTuple):
    """Client *c*'s connection attempt on *slot* succeeded."""

    tag: str
    c: int
    slot: int


@tagged("tag", "connect_refused")
class ConnectRefused(NamedTuple):
    """Client *c*'s connection attempt on *slot* was refused (the broker is down)."""

    tag: str
    c: int
    slot: int


@tagged("tag", "dropped")
class Dropped(NamedTuple):
    """The head message of a link was lost (*to_broker*: a request; *api* its API)."""

    tag: str
    c: int
    slot: int
    to_broker: bool
    api: str


@tagged("tag", "link_cut")
class LinkCut(NamedTuple):
    """Client *c*'s connection on *slot* broke, *in_transit* requests on their way, *processed*
    whether the broker had read them."""

    tag: str
    c: int
    slot: int
    processed: bool
    in_transit: int


@tagged("tag", "orphaned")
class Orphaned(NamedTuple):
    """Broker *b* read *requests* requests of a broken connection, to handle later (``late``)."""

    tag: str
    c: int
    slot: int
    b: int
    requests: int


@tagged("tag", "handled")
class Handled(NamedTuple):
    """Broker *b* handled *request*, request *request_id* of client *c*; *group* is the group it
    held then, *is_leader* whether it led the offsets partition, *loading* whether it was loading
    the group (a FindCoordinator: None, False, False)."""

    tag: str
    c: int
    request_id: int
    b: int
    request: Any
    group: Any
    is_leader: bool
    loading: bool


@tagged("tag", "reply")
class Reply(NamedTuple):
    """A broker answered request *request_id* of client *c* (*api*, *error*, the *response*)."""

    tag: str
    c: int
    request_id: int
    api: str
    error: Any
    response: Any


@tagged("tag", "leader")
class Leader(NamedTuple):
    """The group's offsets partition moved from broker *old* to *new* (either may be None)."""

    tag: str
    old: int | None
    new: int | None


@tagged("tag", "late")
class Late(NamedTuple):
    """Broker *b* handled request *request_id* (*api*) of client *c*'s broken connection."""

    tag: str
    b: int
    c: int
    request_id: int
    api: str


@tagged("tag", "broker_crash")
class BrokerCrash(NamedTuple):
    """Broker *b* died."""

    tag: str
    b: int


@tagged("tag", "broker_restart")
class BrokerRestart(NamedTuple):
    """Broker *b* came back."""

    tag: str
    b: int


@tagged("tag", "loaded")
class Loaded(NamedTuple):
    """Broker *b* finished loading the group."""

    tag: str
    b: int


@tagged("tag", "append_error")
class AppendError(NamedTuple):
    """Broker *b*'s next append to ``__consumer_offsets`` will fail with *error*."""

    tag: str
    b: int
    error: Any


@tagged("tag", "add_partitions")
class AddPartitions(NamedTuple):
    """The subscribed topic grew from *old* to *new* partitions."""

    tag: str
    old: int
    new: int


@tagged("tag", "clock_jump")
class ClockJump(NamedTuple):
    """Client *c*'s clock jumped by *ms*."""

    tag: str
    c: int
    ms: int


# -- the member (model.member) --------------------------------------------------------------------


@tagged("tag", "member_state")
class MemberState(NamedTuple):
    """Client *c*'s member state moved from *old* to *new*."""

    tag: str
    c: int
    old: str
    new: str


@tagged("tag", "answered")
class Answered(NamedTuple):
    """An answer to client *c*'s *api* request reached its response handler: *error*, the member
    *state* then, and whether the request's generation (generation, member id, protocol) is still
    the member's (*current*; False: the member rejoined or was reset since it sent it)."""
    tag: str
    c: int
    api: str
    error: Any
    state: str
    current: bool


@tagged("tag", "reset")
class Reset(NamedTuple):
    """Client *c* was reset by an *api* answer *error*: *sent* the generation the request was sent
    in, *current* the member's generation then (each ``(generation, member id, protocol)``)."""

    tag: str
    c: int
    api: str
    error: Any
    sent: tuple
    current: tuple


@tagged("tag", "fatal")
class Fatal(NamedTuple):
    """A poll of client *c* threw *error* to the application: the consumer is finished."""

    tag: str
    c: int
    error: str


@tagged("tag", "coordinator_unknown")
class CoordinatorUnknown(NamedTuple):
    """Client *c* marked its *coordinator* unknown (markCoordinatorUnknown), for *cause*."""

    tag: str
    c: int
    coordinator: int | None
    cause: str


@tagged("tag", "coordinator_unknown_done")
class CoordinatorUnknownDone(NamedTuple):
    """Client *c*'s markCoordinatorUnknown returned."""

    tag: str
    c: int


@tagged("tag", "commit_failed")
class CommitFailed(NamedTuple):
    """Client *c*'s commitAsync failed with *exception* (its callback's)."""

    tag: str
    c: int
    exception: str


@tagged("tag", "commit_sync")
class CommitSyncBegan(NamedTuple):
    """Client *c*'s application called commitSync with a *timeout_ms* timer."""

    tag: str
    c: int
    timeout_ms: int


@tagged("tag", "commit_sync_done")
class CommitSyncDone(NamedTuple):
    """Client *c*'s commitSync returned: *outcome* is "committed", "timeout" (TimeoutException: the
    timer ran out), or the exception it threw; *in_flight*: its OffsetCommit was still unanswered
    (a timeout with the request pending: its answer is handled when a later poll reads it)."""

    tag: str
    c: int
    outcome: str
    in_flight: bool


@tagged("tag", "coordinator_found")
class CoordinatorFound(NamedTuple):
    """Client *c* learned its coordinator: broker *node*."""

    tag: str
    c: int
    node: int


@tagged("tag", "lost")
class Lost(NamedTuple):
    """Client *c* lost its *partitions* (onPartitionsLost)."""

    tag: str
    c: int
    partitions: tuple


@tagged("tag", "revoke")
class Revoke(NamedTuple):
    """Client *c* revoked its *partitions* (onPartitionsRevoked)."""

    tag: str
    c: int
    partitions: tuple


@tagged("tag", "subscribed")
class Subscribed(NamedTuple):
    """Client *c*'s application subscribed to *topics* (KafkaConsumer.subscribe), another set than before."""

    tag: str
    c: int
    topics: tuple


@tagged("tag", "assignment_refused")
class AssignmentRefused(NamedTuple):
    """Client *c*'s SyncGroup answer of *generation* assigned *partitions* of a topic it no longer
    subscribes to: it took none of them and rejoins (ConsumerCoordinator.onJoinComplete)."""

    tag: str
    c: int
    generation: int
    partitions: tuple


@tagged("tag", "assign")
class Assign(NamedTuple):
    """Client *c* was assigned *partitions* in *generation* as *member_id*."""

    tag: str
    c: int
    generation: int
    member_id: str
    partitions: tuple


@tagged("tag", "joined")
class Joined(NamedTuple):
    """Client *c*'s JoinGroup answer: *generation*, *member_id*, and whether it leads."""

    tag: str
    c: int
    generation: int
    member_id: str
    is_leader: bool


@tagged("tag", "assigning")
class Assigning(NamedTuple):
    """Client *c*, the leader of *generation*, runs its assignor for *delay_ms*."""

    tag: str
    c: int
    generation: int
    delay_ms: int


@tagged("tag", "assigned")
class Assigned(NamedTuple):
    """Client *c*'s assignor returned; its SyncGroup for *generation* leaves."""

    tag: str
    c: int
    generation: int


@tagged("tag", "poll_timeout")
class PollTimeout(NamedTuple):
    """Client *c*'s heartbeat thread found max.poll.interval.ms run out: it leaves the group."""

    tag: str
    c: int


@tagged("tag", "heartbeat_sent")
class HeartbeatSent(NamedTuple):
    """Client *c*'s heartbeat thread sent a Heartbeat in an iteration that began *state_at_start*
    (the member is *state* in *generation* now)."""

    tag: str
    c: int
    state_at_start: str
    state: str
    generation: int


@tagged("tag", "heartbeat_failed")
class HeartbeatFailed(NamedTuple):
    """Client *c*'s heartbeat thread failed with *error* (thrown at the next poll)."""

    tag: str
    c: int
    error: str


@tagged("tag", "leave")
class Leave(NamedTuple):
    """Client *c* sent a LeaveGroup as *member_id*."""

    tag: str
    c: int
    member_id: str


@tagged("tag", "commit_fenced")
class CommitFenced(NamedTuple):
    """An OffsetCommit of client *c*'s current generation was answered FENCED_INSTANCE_ID."""

    tag: str
    c: int


@tagged("tag", "closing")
class Closing(NamedTuple):
    """Client *c*'s close() began."""

    tag: str
    c: int


@tagged("tag", "closed")
class Closed(NamedTuple):
    """Client *c*'s close() returned."""

    tag: str
    c: int


# -- the network client (model.netclient) ---------------------------------------------------------


@tagged("tag", "send")
class Send(NamedTuple):
    """Client *c* queued request *request_id* (*api*) for *slot* at *created_ms*, *timeout_ms*."""

    tag: str
    c: int
    request_id: int
    slot: int
    api: str
    created_ms: int
    timeout_ms: int


@tagged("tag", "connecting")
class Connecting(NamedTuple):
    """Client *c* began a connection attempt on *slot*."""

    tag: str
    c: int
    slot: int


@tagged("tag", "transmit")
class Transmit(NamedTuple):
    """Client *c* transmitted request *request_id* (*api*) on *slot* at *now* (created at
    *created_ms*, *timeout_ms*)."""

    tag: str
    c: int
    request_id: int
    slot: int
    api: str
    now: int
    created_ms: int
    timeout_ms: int


@tagged("tag", "expire")
class Expire(NamedTuple):
    """Client *c* expired unsent request *request_id* of *slot* after *elapsed_ms* (*timeout_ms*)."""

    tag: str
    c: int
    request_id: int
    slot: int
    elapsed_ms: int
    timeout_ms: int


@tagged("tag", "fail_unsent")
class FailUnsent(NamedTuple):
    """Client *c* failed unsent request *request_id* of *slot* with *failure*."""

    tag: str
    c: int
    request_id: int
    slot: int
    failure: str


@tagged("tag", "disconnected")
class Disconnected(NamedTuple):
    """Client *c* handled the disconnection of *slot*."""

    tag: str
    c: int
    slot: int


@tagged("tag", "inflight_timeout")
class InflightTimeout(NamedTuple):
    """Client *c*'s in-flight request *request_id* on *slot* timed out."""

    tag: str
    c: int
    request_id: int
    slot: int


@tagged("tag", "connected")
class Connected(NamedTuple):
    """Client *c* learned its connection on *slot* is established."""

    tag: str
    c: int
    slot: int


@tagged("tag", "received")
class Received(NamedTuple):
    """Client *c* read the answer to request *request_id*: *api*, *error*."""

    tag: str
    c: int
    request_id: int
    api: str
    error: Any


@tagged("tag", "queued")
class Queued(NamedTuple):
    """Client *c* queued the completion of request *request_id*."""

    tag: str
    c: int
    request_id: int


@tagged("tag", "complete")
class Complete(NamedTuple):
    """Client *c* fired the completion of request *request_id* (*api*): *result* is the answer's
    error, or the failure's name."""

    tag: str
    c: int
    request_id: int
    api: str
    result: Any


@tagged("tag", "wakeup_thrown")
class WakeupThrown(NamedTuple):
    """Client *c*'s network poll threw WakeupException."""

    tag: str
    c: int


@tagged("tag", "polled")
class Polled(NamedTuple):
    """Client *c*'s network client polled (ConsumerNetworkClient.poll)."""

    tag: str
    c: int


class _Built(dict):
    """Entries of one class kept by their fields: ``cache[fields]`` builds ``cls(*fields)`` once
    (a dict lookup, no call: for entries logged at almost every step)."""

    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def __missing__(self, fields):
        entry = self[fields] = self.cls(*fields) if type(fields) is tuple else self.cls(fields)
        return entry


#: ``POLLED[c] == Polled(c)``: a client's network poll is logged at almost every step
POLLED = _Built(Polled)


def polled(c: int) -> Polled:
    """``Polled(c)``, built once per client (:data:`POLLED`)."""
    return POLLED[c]


# -- the coordinator's notes (model.group.Outcome.notes) ------------------------------------------

NOTES: dict = {}  # note tag -> note class
SERVER: dict = {}  # note tag -> the server entry class logging it


def _note(cls):
    """Register a note class and derive its server entry class: ``("server", <tag>, fields...)``."""
    NOTES[cls.TAG] = cls
    fields = cls._fields[1:]
    server = NamedTuple(f"Server{cls.__name__}", [("tag", str), ("note", str)] + [(f, Any) for f in fields])
    server.__doc__ = f"The world's log of a ``{cls.TAG}`` note: ``(\"server\", {cls.TAG!r}, {', '.join(fields)})``."
    server.__module__ = __name__
    server = tagged("tag", "server")(server)
    server.NOTE = cls.TAG
    SERVER[cls.TAG] = server
    globals()[server.__name__] = server
    return cls


@_note
@tagged("tag", "join_complete")
class JoinComplete(NamedTuple):
    """A join phase completed: *generation_before* to *generation_after*, *members* (ids) and
    *leader_id*; *all_joined* True when everyone had joined (False: the rebalance timeout);
    *pending* the member ids still pending (MEMBER_ID_REQUIRED) then."""

    tag: str
    generation_before: int
    generation_after: int
    members: tuple
    leader_id: str | None
    all_joined: bool
    pending: tuple


@_note
@tagged("tag", "append_failed")
class AppendFailed(NamedTuple):
    """An append to ``__consumer_offsets`` failed with *error* (an append_error fault)."""

    tag: str
    error: Any


@_note
@tagged("tag", "member_removed")
class MemberRemoved(NamedTuple):
    """*member_id* was removed for *reason* (session, leave, not_rejoined, not_synced, max_size);
    *deadline_at* the expired deadline for ``session``, else None."""

    tag: str
    member_id: str
    reason: str
    deadline_at: int | None


@_note
@tagged("tag", "assignment_stored")
class AssignmentStored(NamedTuple):
    """The leader's assignment of *generation* was stored: ``((member id, partitions), ...)``."""

    tag: str
    generation: int
    assignments: tuple


@_note
@tagged("tag", "commit")
class Commit(NamedTuple):
    """An OffsetCommit of *member_id* sent in *request_generation* met the group in
    *group_generation* and *group_state*, answered *error*."""

    tag: str
    request_generation: int
    member_id: str
    group_generation: int
    group_state: str | None
    error: Any


@_note
@tagged("tag", "metadata_too_large")
class MetadataTooLarge(NamedTuple):
    """storeOffsets refused *refused* partitions for their metadata's length and committed
    *committed* others (0 if none, or if the append failed)."""

    tag: str
    committed: int
    refused: int


@_note
@tagged("tag", "transition")
class Transition(NamedTuple):
    """The group moved from *from_state* to *to_state*."""

    tag: str
    from_state: str
    to_state: str


@_note
@tagged("tag", "static_replaced")
class StaticReplaced(NamedTuple):
    """A static member's id *old_member_id* was replaced by *new_member_id* in a Stable group of
    *generation*, without a rebalance (it keeps the old id's assignment)."""

    tag: str
    generation: int
    old_member_id: str
    new_member_id: str


def server_entry(note: tuple) -> tuple:
    """The world's log entry for a coordinator *note*: ``("server",) + note``, typed."""
    return SERVER[note[0]]._make(("server",) + tuple(note))


# -- every entry kind, and typing plain tuples -----------------------------------------------------

#: tag -> entry class (the server entries are in :data:`SERVER`, by note tag)
ENTRIES: dict = {cls.TAG: cls for cls in list(globals().values())
                 if isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "TAG")
                 and cls.TAG != "server" and cls not in NOTES.values()}


def as_entry(entry: tuple) -> tuple:
    """*entry* as its typed class (itself if it is one already). A plain tuple of an unknown tag or
    of the wrong length is returned as it is: readers compare tags first, as they always did."""
    if type(entry) is not tuple:
        return entry
    tag = entry[0] if entry else None
    cls = SERVER.get(entry[1]) if tag == "server" and len(entry) > 1 else ENTRIES.get(tag)
    if cls is None or len(entry) != len(cls._fields):
        return entry
    return cls._make(entry)
