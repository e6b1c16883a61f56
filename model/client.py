"""A consumer client's state, and the working copy one step of it is computed on.

:class:`ClientState` is the immutable value the world stores: the member's view of the group
(AbstractCoordinator, protocol reference §3) and its network layer (ConsumerNetworkClient and
NetworkClient, §4). A step of the client thaws it into a :class:`Step`, runs Kafka's logic on that
private working copy in the order Kafka runs it, and freezes the result; outside this module and
:mod:`model.netclient` / :mod:`model.member`, nothing ever sees a mutable client.

Nodes are numbered by *slot*: slots ``0 .. B-1`` are the brokers as metadata nodes (used for
FindCoordinator), slots ``B .. 2B-1`` are the separate coordinator connections Kafka opens under the
synthetic node id ``Integer.MAX_VALUE - brokerId``.
"""

from __future__ import annotations

from typing import NamedTuple

import attrs

from model.messages import NO_GENERATION

# Member states (§3.1).
UNJOINED = "UNJOINED"
PREPARING_REBALANCE = "PREPARING_REBALANCE"
COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
STABLE = "STABLE"
MEMBER_STATES = (UNJOINED, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE)

# Connection states (ClusterConnectionStates); a slot never connected has state None.
CONNECTING = "CONNECTING"
READY = "READY"
DISCONNECTED = "DISCONNECTED"

# A join future is None (no join in progress), ("pending", request id) while the JoinGroup and then
# the SyncGroup are outstanding, ("succeeded", assignment) or ("failed", error). The memoised
# FindCoordinator future has the same shape.


@attrs.frozen(slots=True)
class Request:
    """A ClientRequest: created by ``send`` (created_ms = time of send, not of transmission)."""

    id: int
    slot: int
    body: object  # a model.messages request
    created_ms: int
    timeout_ms: int
    # Generation when sent (CoordinatorResponseHandler.sentGeneration): (id, member id, protocol).
    sent_generation: tuple
    sent_ms: int = -1  # when transmitted (in-flight), -1 while unsent

    @property
    def api(self) -> str:
        return self.body.api


@attrs.frozen(slots=True)
class Conn:
    """One connection's state: None (never tried), CONNECTING, READY or DISCONNECTED."""

    state: str | None = None
    last_attempt_ms: int = -(2**62)
    epoch: int = 0  # bumped on every new connection, so stale responses can be told apart


NO_CONN = Conn()


class SyncCommit(NamedTuple):
    """A commitSync in progress (ConsumerCoordinator.commitOffsetsSync's loop, one pass per poll of
    the blocked application): the offsets, the timer's deadline and time (client time; a Timer never
    goes back), the OffsetCommit's future — None before it is sent, ("pending", request id),
    ("succeeded",) or ("failed", exception, retriable) — the attempts so far (the retry backoff's
    exponent) and the end of a ``timer.sleep(backoff)`` in progress."""

    offsets: tuple
    deadline_ms: int
    clock_ms: int
    future: tuple | None = None
    attempts: int = 0
    sleep_until_ms: int | None = None


class ClientState(NamedTuple):
    """A client between steps. A named tuple rather than an attrs class: one is built at every
    client step, and ``tuple.__new__`` builds it in a third of the time of a frozen attrs
    ``__init__`` with thirty-odd fields (see :meth:`Step.freeze`)."""

    index: int
    clock_offset_ms: int = 0  # this client's clock minus the world's (clock jumps)
    # the settings its process was deployed with: an index of model.config.REDEPLOYS (0: the
    # world's own; a redeploy changes them, a restart keeps them)
    settings: int = 0
    alive: bool = True
    closed: bool = False
    closing_deadline_ms: int | None = None  # set by close(): awaiting pending coordinator requests until then
    closing_clock_ms: int = 0  # the close timer's time (a Kafka Timer never goes backwards)
    closing_commits: bool = False  # close() is still waiting for commitAsync calls held on a coordinator lookup
    closing_slot: int | None = None  # the coordinator connection close() awaits (fixed when the wait begins)
    fatal: str | None = None  # the exception a poll threw to the application, if any
    # HeartbeatThread.failed: a FENCED_INSTANCE_ID answer to a heartbeat, which the application
    # learns of at its next poll (AbstractCoordinator.pollHeartbeat throws it)
    heartbeat_failed: str | None = None
    # ConsumerCoordinator.asyncCommitFenced: an OffsetCommit of the current generation was answered
    # FENCED_INSTANCE_ID; the application's next poll or commitAsync throws it
    # (invokeCompletedOffsetCommitCallbacks)
    commit_fenced: bool = False
    # the application is blocked in commitSync (a SyncCommit): its polls are passes of that wait
    sync_commit: SyncCommit | None = None
    # the OffsetCommit request ids commitSync sent whose answers have not come: their futures carry
    # no commitAsync listener, so a FENCED_INSTANCE_ID answer to one (a commitSync that timed out
    # before it came) does not set asyncCommitFenced
    sync_commit_requests: tuple = ()
    # -- AbstractCoordinator --
    state: str = UNJOINED
    generation: int = NO_GENERATION
    member_id: str = ""
    protocol: str | None = None
    coordinator: int | None = None  # broker id
    rejoin_needed: bool = True
    needs_join_prepare: bool = True
    join_future: tuple | None = None
    find_coordinator_request: tuple | None = None  # memoised lookup future: ("pending", request id), ("succeeded",) or ("failed", error)
    heartbeat_thread: bool = False  # started
    heartbeat_enabled: bool = False
    heartbeat_due_ms: int = 0  # heartbeat timer deadline
    session_deadline_ms: int = 0
    poll_deadline_ms: int = 0
    # The Heartbeat's timers' time. Kafka's Timer.update keeps max(now, its current time), and
    # every Heartbeat method updates all three timers, so after a backward clock jump the
    # heartbeat, session and poll timers wait for the clock to catch up (see member.heartbeat_now).
    heartbeat_clock_ms: int = 0
    heartbeat_attempts: int = 0
    # The heartbeat thread is in AbstractCoordinator.this.wait(retry.backoff.ms) after clearing the
    # FindCoordinator future, until this client time (None: not waiting); notify() ends it early.
    heartbeat_wait_until_ms: int | None = None
    assignment: tuple = ()  # partitions owned (after onJoinComplete, until revoked)
    commits: int = 0  # commits issued, also the offset value committed (monotone, readable)
    held_commits: tuple = ()  # ((FindCoordinator request id, offsets, oversized), ...): commitAsync waiting for a lookup
    # -- ConsumerNetworkClient / NetworkClient --
    unsent: tuple = ()  # per slot: tuple of Request (FIFO)
    in_flight: tuple = ()  # per slot: tuple of Request (send order)
    # InFlightRequests.requests is a HashMap keyed by node id, and an in-flight timeout disconnects
    # its nodes in its order (model.java_order): where two slots' nodes share a bucket (node 2 and
    # broker 0's coordinator in a three-broker world), which was put first. The slots among those
    # with a key in the map, in the order they were put (at their first request since their last
    # disconnect: InFlightRequests.add, clearAll)
    in_flight_puts: tuple = ()
    conns: tuple = ()  # per slot: Conn
    pending_completions: tuple = ()  # ((Request, result), ...) FIFO; result = response or failure name
    pending_disconnects: tuple = ()  # slots (disconnectAsync)
    sending: tuple = ()  # requests handed to the selector whose bytes are not written yet (one per slot)
    # What the transport has done that the client has not yet seen: ((kind, slot, epoch, payload), ...)
    # with kind "received" (payload (request id, response)), "disconnected" or "connected". The
    # NetworkClient picks them up in its poll (selector.poll), as Kafka does.
    notices: tuple = ()
    next_request_id: int = 0
    # The application is busy between two polls (processing records, a slow rebalance listener)
    # until this world time: it neither polls, commits nor closes meanwhile, while the heartbeat
    # thread goes on (KIP-62). None: it polls whenever it likes.
    paused_until_ms: int | None = None
    # The whole process stands still until this world time (a long garbage-collection pause, a
    # starved or suspended VM): the heartbeat thread too, while the network and the brokers go on.
    # paused_until_ms is set to the same time (the application makes no call either).
    stalled_until_ms: int | None = None
    # KafkaConsumer.wakeup() was called (from another thread: a shutdown hook, a watchdog): the next
    # ConsumerNetworkClient.poll that allows wakeups throws WakeupException out of the consumer's
    # call, once. close() disables wakeups (ConsumerCoordinator.close: client.disableWakeups()).
    wakeup_pending: bool = False
    wakeups_disabled: bool = False
    # a wakeup() that lands while the consumer waits in its n-th network poll from now (selector
    # polls, of either thread): 0 when none is on its way
    wakeup_in_polls: int = 0
    # Metadata (org.apache.kafka.clients.Metadata, as the implementation's world serves it: a refresh
    # is local and never fails): the topic's partition count this client knows, the update version,
    # and when it was last refreshed (client time); a refresh is due metadata.max.age.ms later.
    md_partitions: int = 0
    md_version: int = 0
    md_refreshed_ms: int = 0
    md_update_requested: bool = False  # Metadata.requestUpdate (awaitMetadataUpdate after a failed lookup)
    # ConsumerCoordinator's metadataSnapshot (the partition counts of the topics the metadata
    # watches, and its version, at the last poll) and, for the leader of the last join,
    # assignmentSnapshot (the snapshot it assigned from): when they differ the leader rejoins
    # ("cached metadata has changed"). A snapshot is (first topic's count, second topic's count),
    # 0 for a topic not watched: MetadataSnapshot's partitionsPerTopic map as a pair.
    snapshot_partitions: tuple = (0, 0)
    snapshot_version: int = 0
    assignment_snapshot: tuple | None = None
    # SubscriptionState's subscription (a mask of model.topics: the topics KafkaConsumer.subscribe
    # named last) and groupSubscription (the leader's: every topic its group subscribes to, empty
    # after onJoinPrepare; the metadata watches both); ConsumerCoordinator's joinedSubscription (the
    # subscription its last JoinGroup carried: a member whose subscription differs rejoins)
    subscription: int = 1
    group_subscription: int = 0
    joined_subscription: int | None = None
    is_leader: bool = False
    # The group leader's assignor is still running (config.assignor_delay_ms, inside the JoinGroup
    # answer's handler, the whole process standing still meanwhile): the SyncGroup it will send
    # when it returns, at the client's first step after stalled_until_ms (member.finish_assignment)
    pending_sync: object | None = None

    @property
    def generation_tuple(self) -> tuple:
        return (self.generation, self.member_id, self.protocol)

    @property
    def closing(self) -> bool:
        """close() was called and is still awaiting the coordinator's pending requests."""
        return self.alive and not self.closed and self.closing_deadline_ms is not None

    @property
    def live(self) -> bool:
        """Running and not shutting down: the application still polls it as a group member."""
        return self.alive and not self.closed and self.closing_deadline_ms is None and self.fatal is None


def new_client(index: int, brokers: int, partitions: int = 0) -> ClientState:
    """A consumer before its first poll; *partitions*: the topic's partition count in the fresh
    metadata it starts with (the implementation's world seeds every consumer's metadata at 0)."""
    slots = 2 * brokers
    return ClientState(
        index=index,
        md_partitions=partitions,
        md_version=1 if partitions else 0,
        unsent=((),) * slots,
        in_flight=((),) * slots,
        conns=(NO_CONN,) * slots,
    )


_FIELDS = ClientState._fields
_NEW_TUPLE = tuple.__new__
_INDEX = {name: i for i, name in enumerate(_FIELDS)}


def with_field(client: ClientState, name: str, value) -> ClientState:
    """*client* with one field replaced: ``_replace`` without its keyword machinery (every
    connect and delivery notifies a client this way)."""
    i = _INDEX[name]
    return _NEW_TUPLE(ClientState, client[:i] + (value,) + client[i + 1:])


class Step:
    """Mutable working copy of a :class:`ClientState` for one world step.

    Besides the client's fields it carries the step's inputs (``now``, ``config``, ``choose``) and
    outputs: ``log`` (observations for the properties) and ``wire`` (requests the selector wrote
    and connections the client closed, in the order they happened; ``transmitted`` and
    ``closed_slots`` read one kind each).
    """

    # __init__(client, now, config, choose, log) thaws the client's fields and freeze() builds the
    # ClientState back; both are generated below from ClientState's fields, as straight-line
    # attribute stores and loads (they run at every client step: twice as fast as a loop).
    wire: list  # ("write", request) and ("close", slot) in the order they happened
    aborted: list  # NetworkClient.abortedSends: (request, result) failed by a requested disconnect
    # the subscribed topic's partition count in the world (what a metadata refresh learns); the
    # world sets it on every step, a Step built alone takes the configured count
    topic_partitions: int | None = None

    @property
    def transmitted(self) -> list:
        """The requests the selector wrote during the step, in order."""
        return [value for action, value in self.wire if action == "write"]

    @property
    def closed_slots(self) -> list:
        """The connections the client closed during the step, in order."""
        return [value for action, value in self.wire if action == "close"]

    # -- small helpers shared by netclient and member --
    def set_slot(self, field: str, slot: int, value) -> None:
        current = getattr(self, field)
        setattr(self, field, current[:slot] + (value,) + current[slot + 1 :])

    @property
    def generation_tuple(self) -> tuple:
        return (self.generation, self.member_id, self.protocol)

    def live_now(self) -> bool:
        return self.alive and not self.closed and self.closing_deadline_ms is None and self.fatal is None

    def coordinator_slot(self) -> int | None:
        return None if self.coordinator is None else self.config.brokers + self.coordinator


def _thaw_and_freeze() -> None:
    fields = ", ".join(f"self.{name}" for name in _FIELDS)
    source = (
        "def __init__(self, client, now, config, choose, log):\n"
        f"    ({fields},) = client\n"
        "    self.now = now\n"
        "    self.config = config\n"
        "    self.choose = choose\n"
        "    self.log = log\n"
        "    self.wire = []\n"
        "    self.aborted = []\n"
        "def freeze(self):\n"
        f"    return _NEW_TUPLE(ClientState, ({fields},))\n"
    )
    namespace = {"_NEW_TUPLE": _NEW_TUPLE, "ClientState": ClientState}
    exec(source, namespace)
    Step.__init__ = namespace["__init__"]
    Step.freeze = namespace["freeze"]
    Step.__init__.__doc__ = "Thaw *client* for one step at client time *now*."
    Step.freeze.__doc__ = "The ClientState this step leaves behind."


_thaw_and_freeze()
