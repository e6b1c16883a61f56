"""The model world's event vocabulary: every kind of event, defined once, and the one function
that lists the events a world offers.

An event is a tag-first named tuple (:func:`model.tagged.tagged`): kind first, ``pick`` last
(the number that resolves the choices Kafka leaves open, :func:`model.world.chooser`), so a
schedule is a list of JSON arrays and ``Deliver(0, 4, True, 9) == ("deliver", 0, 4, True, 9)``.
Code reads fields by name (``event.slot``); positional code and plain tuples keep working, and
:func:`as_event` types a plain tuple or a JSON list (checking its kind and length). Each class
below says what the event is, its fields (``c`` a client, ``b`` a broker, ``slot`` a client's
connection, see :mod:`model.client`) and, as class attributes:

``PARAM``
    the one field an engine chooses (a free parameter: the ``ms`` of a tick, the ``processed``
    of a disconnect, the broker of a failover), or None; the other fields are fixed by what is
    enabled (which client, which link). :func:`offers` gives each enabled combination of fixed
    fields with the parameter's values (its *domain*).
``ACTOR``
    whom the event concerns: ``"c"`` (the client in field ``c``), ``"b"`` (the broker in field
    ``b``), ``"cluster"`` (the group's coordinator or topic) or None (time): the timeline's
    column.
``DOMAIN``
    the parameter's values when they do not depend on the world (a clock jump's lengths, a
    disconnect's ``processed``), else None (a tick's or a pause's length depends on the config,
    the broker of a failover on which brokers are alive): what an engine draws from blind.
``FAULT``
    a disruption (what a fault budget rations by default).
``describe()``
    the event in words, for timelines (the pick left out).

Its JSON form is ``list(event)``: ``[kind, fields..., pick]`` (:func:`to_json`, :func:`as_event`).

**What an enabled event is.** :func:`offers` lists, for one world, every event that can change it
(each kind's guard is written there once), in one fixed order: per client (in index order) the
restart and redeploy of its dead process, then its application's and heartbeat thread's calls (poll,
heartbeat, commit, commit_oversized, commit_sync, subscribe, shutdown, wakeup, pause, stall, close), crash,
clock_jump, then per connection slot connect, deliver, drop, disconnect, then partition/heal towards each
broker; then the world's: load, late, failover, broker_crash, broker_restart, append_error,
add_partitions, delete_group, tick. A few guards are coarser than :func:`model.world.step`'s, where the exact
rule costs more than the step's refusal (a listed event the step refuses changes nothing): a
connect is listed while its attempt is in progress (the step also refuses it while partitioned,
while the client has not yet seen an earlier notice of that slot, or for a closed client); a
delivery while its head message is due (also refused while partitioned, on a stalled link, to a
dead broker, or behind a request the broker is working on); a clock jump for any live process
(also refused when clamped at time 0). A dead client's links are frozen until a restart cuts
them: no event of its slots is listed (the model would deliver what it sent; no engine has).

Three engines use it (:mod:`properties.explore`): the walker weights the offers (repetition, and
a parameter drawn from the step's pick bits) and draws its faults from the same classes and
domains; the Hypothesis machines sample :func:`enabled_events`; the exhaustive explorer expands
every offer and every value. Where they differ it is an argument here (``kinds``: the alphabet
an engine uses; ``ticks``: the tick lengths; ``empty_commits``) or a filter of theirs on the
output (the walker's mixes and fault budget, the explorer's bounds).

**Adding an event kind** takes exactly this:

1. a class below: ``@event("name")`` on a NamedTuple whose fields are ``kind``, its own fields
   and ``pick: int = 0``, a docstring, ``PARAM``/``ACTOR``/``FAULT`` if not the defaults, and
   ``describe()`` if its kind's name is not description enough;
2. its guard in :func:`offers`, at its place in the order above (the parameter's domain with it);
3. its handler in :mod:`model.world` (``_ev_name``, registered in ``_HANDLERS`` by class) and, if
   the implementation can take it, in :class:`properties.systems.simworld.SimWorld` (``_ev_name``;
   else the differential reports the event applied by one side only).

The engines then offer it wherever their alphabet takes every kind (the explorer and the
Hypothesis machines name theirs: add it there to explore it; the walker draws the kinds its mixes
name). :data:`EVENTS` and :data:`KINDS` find the class by themselves; tests/model/test_events.py
checks that every kind has a handler on both sides and a guard that lists it.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from model.client import CONNECTING
from model.config import REDEPLOYS
from model.errors import Errors
from model.tagged import tagged
from model.topics import MAX_ADDED_PARTITIONS, SUBSCRIPTIONS  # noqa: F401 - importers find MAX_ADDED_PARTITIONS here too

# -- parameter domains ---------------------------------------------------------------------------

#: a disconnect's (and a restart's) ``processed``: whether the broker had read the requests still
#: in transit: no, yes (handled now), yes but handled later (``late`` events)
LOST, HANDLED, LATE = 0, 1, 2
PROCESSED = (LOST, HANDLED, LATE)
#: a redeploy's ``settings``: an entry of model.config.REDEPLOYS
REDEPLOY_SETTINGS = tuple(range(len(REDEPLOYS)))
#: a commit_oversized's ``which``: the owned partitions whose metadata is too long
OVERSIZED = ("first", "rest", "all")
#: a wakeup's ``n``: it lands now (0), or while the consumer waits in its first or second network
#: poll from now, which may be in the middle of the application's next poll
WAKEUP_LANDINGS = (0, 1, 2)
# commitSync's timeouts (ms): one that runs out while its OffsetCommit is still in flight (a round
# trip takes two link latencies), one that outlasts a round trip but not a coordinator lookup
# after a failover, one that usually commits
COMMIT_SYNC_TIMEOUTS = (1, 500, 5000)
#: a ``subscribe``'s topics, per current subscription: every other set (model.topics' masks)
_OTHER_SUBSCRIPTIONS = {mask: tuple(m for m in SUBSCRIPTIONS if m != mask) for mask in SUBSCRIPTIONS}
#: The log errors an ``append_error`` fault may inject, one of each of Kafka's mappings (§1.13,
#: §1.10 step 5): too few in-sync replicas (COORDINATOR_NOT_AVAILABLE), a leadership lost under the
#: coordinator's feet (NOT_COORDINATOR), an append that timed out waiting for replication
#: (REBALANCE_IN_PROGRESS to SyncGroup, itself to OffsetCommit), a record too large
#: (UNKNOWN_SERVER_ERROR to SyncGroup, INVALID_COMMIT_OFFSET_SIZE to OffsetCommit).
APPEND_ERRORS = (Errors.NOT_ENOUGH_REPLICAS, Errors.NOT_LEADER_OR_FOLLOWER, Errors.REQUEST_TIMED_OUT,
                 Errors.MESSAGE_TOO_LARGE)
APPEND_ERROR_CODES = tuple(int(e) for e in APPEND_ERRORS)  # events carry plain codes (a schedule is JSON)
MAX_APPEND_ERRORS = 2  # failures waiting at once
ADDED_PARTITIONS = (1, 2)  # an add_partitions event grows the topic by one of these
TICKS = (1, 5, 20, 100, 500, 1500, 4000)  # small time steps
CLOCK_JUMPS = (-9000, -3000, -500, 500, 3000, 9000)


@functools.lru_cache(maxsize=64)
def boundary_ticks(config) -> tuple:
    """Time steps equal to the configured timeouts: the edges where off-by-one bugs live.
    (Cached: the walker asks at every step, and a Config is immutable.)"""
    return tuple(sorted({
        config.heartbeat_interval_ms,
        config.session_timeout_ms,
        config.request_timeout_ms,
        config.request_timeout_ms + 1,
        config.join_request_timeout_ms,
        config.rebalance_timeout_ms,
        config.initial_rebalance_delay_ms or 1,
        config.reconnect_backoff_ms,
    }))


@functools.lru_cache(maxsize=64)
def tick_lengths(config) -> tuple:
    """The tick lengths :func:`offers` lists by default: the small steps, then the boundaries."""
    return TICKS + boundary_ticks(config)


@functools.lru_cache(maxsize=64)
def pauses_of(config) -> tuple:
    """How long an application pauses (or a process stalls) between two polls: a heartbeat
    interval (the heartbeat thread carries the member alone for a while), a session (a rebalance
    or a coordinator change runs its course meanwhile) and beyond max.poll.interval.ms (the
    heartbeat thread leaves the group, KIP-62; the next poll rejoins)."""
    return (config.heartbeat_interval_ms, config.session_timeout_ms,
            config.max_poll_interval_ms + config.heartbeat_interval_ms)


# -- the event kinds -----------------------------------------------------------------------------

EVENTS: dict = {}  # kind -> class, in declaration order


def event(kind: str):
    """Declare the event class of *kind* (see the module docstring): typed, registered, checked."""
    tag = tagged("kind", kind)

    def declare(cls):
        cls = tag(cls)
        fields = cls._fields
        if fields[-1] != "pick" or cls._field_defaults.get("pick") != 0:
            raise TypeError(f"{cls.__name__}: the last field must be 'pick: int = 0'")
        for attribute in ("PARAM", "ACTOR", "FAULT"):
            if attribute not in cls.__dict__:
                raise TypeError(f"{cls.__name__}: no {attribute}")
        param = cls.PARAM
        if param is not None and fields.index(param) != len(fields) - 2:
            raise TypeError(f"{cls.__name__}: the parameter {param!r} must be the field before pick")
        if "DOMAIN" not in cls.__dict__:
            cls.DOMAIN = None
        cls.FIXED = len(fields) - 2 - (param is not None)  # fields fixed by an offer, after the kind
        if kind in EVENTS:
            raise TypeError(f"event kind {kind!r} declared twice")
        EVENTS[kind] = cls
        return cls

    return declare


def _side(to_broker) -> str:
    return "request" if to_broker else "response"


@event("poll")
class Poll(NamedTuple):
    """The application calls ``poll(Duration.ZERO)`` (on a closing consumer: one more iteration of
    close()'s wait)."""

    kind: str
    c: int
    pick: int = 0
    PARAM = None
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return "poll"


@event("heartbeat")
class Heartbeat(NamedTuple):
    """One iteration of the heartbeat thread."""

    kind: str
    c: int
    pick: int = 0
    PARAM = None
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return "heartbeat"


@event("commit")
class Commit(NamedTuple):
    """The application calls ``commitAsync()`` of what it consumed (nothing when it owns nothing)."""

    kind: str
    c: int
    pick: int = 0
    PARAM = None
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return "commit"


@event("commit_oversized")
class CommitOversized(NamedTuple):
    """``commitAsync()`` with metadata longer than offset.metadata.max.bytes on some partitions
    (*which*: the first, the rest or all of the owned ones, :data:`OVERSIZED`)."""

    kind: str
    c: int
    which: str
    pick: int = 0
    PARAM = "which"
    DOMAIN = OVERSIZED
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return "commit_oversized"


@event("commit_sync")
class CommitSync(NamedTuple):
    """The application calls ``commitSync(Duration.ofMillis(timeout_ms))`` of what it consumed (only
    a consumer that owns partitions: with none, commitSync only waits for earlier commitAsync calls).
    A blocking call: its later polls are passes of its wait (:func:`model.member.continue_commit_sync`)
    until it commits, throws, or its timer runs out with the OffsetCommit still in flight."""

    kind: str
    c: int
    timeout_ms: int
    pick: int = 0
    PARAM = "timeout_ms"
    DOMAIN = COMMIT_SYNC_TIMEOUTS
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return f"commit_sync {self.timeout_ms} ms"


@event("subscribe")
class Subscribe(NamedTuple):
    """The application calls ``KafkaConsumer.subscribe`` with another set of topics (*topics*, a
    mask of :mod:`model.topics`: the first topic, the second or both; only in a world with a second
    topic). Nothing is sent: the member keeps what it owns, its next poll rejoins, and an assignment
    of a topic it dropped while its JoinGroup was in flight is refused (member.subscribe)."""

    kind: str
    c: int
    topics: int
    pick: int = 0
    PARAM = "topics"
    DOMAIN = SUBSCRIPTIONS
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return "subscribe to " + {1: "the first topic", 2: "the second topic", 3: "both topics"}.get(self.topics, "?")


@event("close")
class Close(NamedTuple):
    """The application calls ``close()``."""

    kind: str
    c: int
    pick: int = 0
    PARAM = None
    ACTOR = "c"
    FAULT = True

    def describe(self) -> str:
        return "close"


@event("shutdown")
class Shutdown(NamedTuple):
    """The application's consumer loop ends: its last ``commitAsync()``, then ``close()``, no poll
    between."""

    kind: str
    c: int
    pick: int = 0
    PARAM = None
    ACTOR = "c"
    FAULT = True

    def describe(self) -> str:
        return "shutdown"


@event("pause")
class Pause(NamedTuple):
    """The application spends *ms* between two polls (it neither polls, commits nor closes
    meanwhile; the heartbeat thread goes on)."""

    kind: str
    c: int
    ms: int
    pick: int = 0
    PARAM = "ms"
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return f"application busy {self.ms} ms (no poll)"


@event("stall")
class Stall(NamedTuple):
    """The whole client process stands still for *ms* (its heartbeat thread too; a long GC
    pause)."""

    kind: str
    c: int
    ms: int
    pick: int = 0
    PARAM = "ms"
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return "stall"


@event("wakeup")
class Wakeup(NamedTuple):
    """Another thread calls ``wakeup()``; it lands now (*n* = 0) or during the client's *n*-th
    network poll from now; the next poll that allows wakeups throws."""

    kind: str
    c: int
    n: int
    pick: int = 0
    PARAM = "n"
    DOMAIN = WAKEUP_LANDINGS
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return "wakeup"


@event("crash")
class Crash(NamedTuple):
    """The client process dies."""

    kind: str
    c: int
    pick: int = 0
    PARAM = None
    ACTOR = "c"
    FAULT = True

    def describe(self) -> str:
        return "crash"


@event("restart")
class Restart(NamedTuple):
    """A new process takes the place of client *c*, whose own has died (crashed, closed, or stopped
    by a fatal error): the same client id and group.instance.id, no member id; the old process's
    connections close first (*processed* as a disconnect's)."""

    kind: str
    c: int
    processed: int
    pick: int = 0
    PARAM = "processed"
    DOMAIN = PROCESSED
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return "restart"


@event("redeploy")
class Redeploy(NamedTuple):
    """A new process takes the place of client *c*, whose own has died, as a restart's does, but
    deployed with other settings: *settings* names an entry of :data:`model.config.REDEPLOYS`
    (another session timeout, max.poll.interval.ms, heartbeat interval or assignor list; 0 the
    world's own). The old process's connections close as a clean exit's: the broker reads what
    they carried."""

    kind: str
    c: int
    settings: int
    pick: int = 0
    PARAM = "settings"
    DOMAIN = REDEPLOY_SETTINGS
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return f"redeploy ({REDEPLOYS[self.settings][0]})" if 0 <= self.settings < len(REDEPLOYS) else "redeploy"


@event("connect")
class Connect(NamedTuple):
    """A connection attempt on *slot* completes (fails if the broker is down)."""

    kind: str
    c: int
    slot: int
    pick: int = 0
    PARAM = None
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return f"connect slot {self.slot}"


@event("deliver")
class Deliver(NamedTuple):
    """The head message of a link arrives (*to_broker*: a request, else a response)."""

    kind: str
    c: int
    slot: int
    to_broker: bool
    pick: int = 0
    PARAM = "to_broker"
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return f"deliver {_side(self.to_broker)} on slot {self.slot}"


@event("drop")
class Drop(NamedTuple):
    """The head message of a link is lost; the link stalls."""

    kind: str
    c: int
    slot: int
    to_broker: bool
    pick: int = 0
    PARAM = "to_broker"
    ACTOR = "c"
    FAULT = True

    def describe(self) -> str:
        return f"drop {_side(self.to_broker)} on slot {self.slot}"


@event("disconnect")
class Disconnect(NamedTuple):
    """The connection breaks; *processed* says whether the broker had read the requests still in
    transit: :data:`LOST` no, :data:`HANDLED` yes (handled now), :data:`LATE` yes but handled
    later (``late`` events)."""

    kind: str
    c: int
    slot: int
    processed: int
    pick: int = 0
    PARAM = "processed"
    DOMAIN = PROCESSED
    ACTOR = "c"
    FAULT = True

    def describe(self) -> str:
        processed = {LOST: "not processed", LATE: "read, handled later"}.get(self.processed, "processed")
        return f"disconnect slot {self.slot} ({processed})"


@event("late")
class Late(NamedTuple):
    """Broker *b* handles a request read from a connection that has broken since (Kafka's request
    queue is shared by every connection: it may be handled after requests the client sent on a
    newer one)."""

    kind: str
    b: int
    pick: int = 0
    PARAM = "b"
    ACTOR = "b"
    FAULT = False

    def describe(self) -> str:
        return f"b{self.b} handles a request of a broken connection"


@event("tick")
class Tick(NamedTuple):
    """Time advances *ms*; the coordinator's timers fire."""

    kind: str
    ms: int
    pick: int = 0
    PARAM = "ms"
    ACTOR = None
    FAULT = False

    def describe(self) -> str:
        return f"tick {self.ms} ms"


@event("broker_crash")
class BrokerCrash(NamedTuple):
    """A broker dies (leadership moves if it led the group)."""

    kind: str
    b: int
    pick: int = 0
    PARAM = "b"
    ACTOR = "b"
    FAULT = True

    def describe(self) -> str:
        return f"broker crash b{self.b}"


@event("broker_restart")
class BrokerRestart(NamedTuple):
    """A crashed broker comes back."""

    kind: str
    b: int
    pick: int = 0
    PARAM = "b"
    ACTOR = "b"
    FAULT = False

    def describe(self) -> str:
        return f"broker restart b{self.b}"


@event("failover")
class Failover(NamedTuple):
    """The group's offsets partition moves to broker *b*."""

    kind: str
    b: int
    pick: int = 0
    PARAM = "b"
    ACTOR = "b"
    FAULT = True

    def describe(self) -> str:
        return f"failover b{self.b}"


@event("load")
class Load(NamedTuple):
    """Broker *b* finishes loading the group."""

    kind: str
    b: int
    pick: int = 0
    PARAM = None
    ACTOR = "b"
    FAULT = False

    def describe(self) -> str:
        return f"load b{self.b}"


@event("add_partitions")
class AddPartitions(NamedTuple):
    """The subscribed topic gets *n* more partitions."""

    kind: str
    n: int
    pick: int = 0
    PARAM = "n"
    DOMAIN = ADDED_PARTITIONS
    ACTOR = "cluster"
    FAULT = True

    def describe(self) -> str:
        return "add_partitions"


@event("append_error")
class AppendError(NamedTuple):
    """The coordinator's next append to the group's ``__consumer_offsets`` partition fails with the
    log error of *code* (one of :data:`APPEND_ERRORS`)."""

    kind: str
    code: int
    pick: int = 0
    PARAM = "code"
    DOMAIN = APPEND_ERROR_CODES
    ACTOR = "cluster"
    FAULT = True

    def describe(self) -> str:
        from model.errors import name_of

        return f"the coordinator's next append to __consumer_offsets fails: {name_of(self.code)}"


@event("delete_group")
class DeleteGroup(NamedTuple):
    """The group's records are removed while it is Empty: an administrator's DeleteGroups
    (GroupCoordinator.handleDeleteGroups), or its offsets' expiry under offsets.retention.minutes
    (GroupMetadataManager.cleanupGroupMetadata). The coordinator drops the group and writes
    tombstones for it and its offsets; a consumer that still believes itself a member (its session
    expired unseen) then meets a coordinator that does not know the group."""

    kind: str
    pick: int = 0
    PARAM = None
    DOMAIN = None
    ACTOR = "cluster"
    FAULT = True

    def describe(self) -> str:
        return "the Empty group is deleted (DeleteGroups, or its offsets expired)"


@event("clock_jump")
class ClockJump(NamedTuple):
    """Client *c*'s clock jumps by *ms* (may be negative)."""

    kind: str
    c: int
    ms: int
    pick: int = 0
    PARAM = "ms"
    DOMAIN = CLOCK_JUMPS
    ACTOR = "c"
    FAULT = True

    def describe(self) -> str:
        return f"clock jumps {self.ms:+d} ms"


@event("partition")
class Partition(NamedTuple):
    """A network partition between client *c* and broker *b* begins."""

    kind: str
    c: int
    b: int
    pick: int = 0
    PARAM = None
    ACTOR = "c"
    FAULT = True

    def describe(self) -> str:
        return f"partition c{self.c}/b{self.b}"


@event("heal")
class Heal(NamedTuple):
    """The network partition between client *c* and broker *b* heals."""

    kind: str
    c: int
    b: int
    pick: int = 0
    PARAM = None
    ACTOR = "c"
    FAULT = False

    def describe(self) -> str:
        return f"heal c{self.c}/b{self.b}"


KINDS = tuple(EVENTS)  # every kind, in declaration order
FAULTS = frozenset(kind for kind, cls in EVENTS.items() if cls.FAULT)  # the disruptions


# -- typing and JSON -------------------------------------------------------------------------------


def as_event(value):
    """*value* (an event, a plain tuple or a JSON list) as its typed event; ValueError naming
    the problem when its kind is unknown or its length is not the kind's."""
    cls = EVENTS.get(value[0]) if value else None
    if type(value) is cls:
        return value
    if cls is None:
        raise ValueError(f"unknown event kind {value[0] if value else None!r} in {value!r}")
    if len(value) != len(cls._fields):
        raise ValueError(f"a {cls.TAG} event is ({', '.join(repr(f) if f == 'kind' else f for f in cls._fields)}), "
                         f"got {tuple(value)!r}")
    return cls._make(value)


def to_json(event) -> list:
    """The event's JSON form: ``[kind, fields..., pick]``."""
    return list(event)


def with_pick(event, pick: int):
    """*event* with another pick."""
    return type(event)._make(tuple(event[:-1]) + (pick,))


def make(cls, fixed: tuple, value=None, pick: int = 0):
    """The event of class *cls* with the *fixed* fields of an offer, its parameter *value* (for a
    kind with a parameter) and *pick*."""
    return cls(*fixed, pick) if cls.PARAM is None else cls(*fixed, value, pick)


# -- what a world offers ---------------------------------------------------------------------------

ALL = frozenset(KINDS)

#: the kinds in the order :func:`offers` unpacks :func:`_wanted` (every kind: checked at import)
_UNPACKED = ("poll", "heartbeat", "commit", "commit_oversized", "commit_sync", "subscribe", "shutdown", "pause", "stall", "close", "wakeup",
             "crash", "clock_jump", "restart", "redeploy", "connect", "deliver", "drop", "disconnect", "partition", "heal", "load",
             "late", "failover", "broker_crash", "broker_restart", "append_error", "add_partitions", "delete_group",
             "tick")
if sorted(_UNPACKED) != sorted(KINDS):
    raise TypeError(f"offers() does not list {sorted(set(KINDS) - set(_UNPACKED))}: add a guard")
_WANTS: dict = {}


def _wanted(kinds) -> tuple:
    """Per kind of :data:`_UNPACKED`, whether *kinds* names it (kept per *kinds*: offers runs
    before every step of a walk, and unpacks the answer into locals)."""
    wanted = _WANTS.get(kinds)
    if wanted is None:
        unknown = set(kinds) - ALL
        if unknown:
            raise ValueError(f"unknown event kinds: {', '.join(sorted(unknown))}")
        wanted = _WANTS[kinds] = tuple(kind in kinds for kind in _UNPACKED)
    return wanted


_SLOTS: dict = {}  # client index -> (conns, link row, active slots): the last answer of _active_slots


def _active_slots(c: int, conns: tuple, row: tuple) -> tuple:
    """The slots of client *c* worth a look, in slot order: ``(slot, connecting, link or None)``
    for each slot whose connection attempt is in progress or whose link carries messages or is
    open. Most slots are idle, and a step changes one client's slots at most, so the answer is
    kept per client and reused while its ``conns`` and link row are the same objects."""
    cached = _SLOTS.get(c)
    if cached is not None and cached[0] is conns and cached[1] is row:
        return cached[2]
    active = []
    for slot, conn in enumerate(conns):
        link = row[slot]
        busy = link.to_broker or link.to_client or link.open
        if busy or conn.state == CONNECTING:
            active.append((slot, conn.state == CONNECTING, link if busy else None))
    active = tuple(active)
    _SLOTS[c] = (conns, row, active)
    return active


_BOTH = (True, False)
_TO_BROKER = (True,)
_TO_CLIENT = (False,)
_WITHOUT_LATE = (LOST, HANDLED)


def idle(client, now: int) -> bool:
    """The application of *client* is not inside a pause (nor a stall): it may call the consumer."""
    until = client.paused_until_ms
    return until is None or now >= until


def offers(world, kinds=ALL, *, ticks=None, empty_commits: bool = False) -> list:
    """What *world* offers: ``(cls, fixed, values)`` per enabled combination of an event class's
    fixed fields, in the order of the module docstring. *values* is the domain of the class's
    parameter (``cls.PARAM``) there, None for a kind without one; the events are
    ``make(cls, fixed, value, pick)`` (:func:`expand`).

    *kinds*: the kinds to list (a frozenset of names, :data:`ALL` by default); *ticks*: the tick
    lengths (:func:`tick_lengths` by default; empty: no tick); *empty_commits*: a commit is
    offered to a consumer that owns nothing too (it still ends with pollNoWakeup), not only to
    one that owns partitions.

    Guards (what makes an event worth offering; the step refuses the others):

    * ``restart``, ``redeploy``: a process that is neither live nor closing (dead, closed, or
      stopped by a fatal error);
    * ``poll``: a live or closing consumer whose application is idle (not inside a pause);
    * ``heartbeat``: a live consumer whose heartbeat thread runs and whose process is not stalled;
    * ``commit`` (owning partitions, unless *empty_commits*), ``commit_oversized`` and
      ``commit_sync`` (owning partitions), ``subscribe`` (in a world with a second topic: every
      other set of topics), ``shutdown``, ``pause``, ``stall``, ``close``: a live
      consumer, application idle and not inside a commitSync (whose wait its polls go on with);
    * ``wakeup``: a live consumer not woken already (nor about to be), process not stalled;
    * ``crash``, ``clock_jump``: a live process;
    * per slot of a live process: ``connect`` while the attempt is in progress; ``deliver``
      towards each end whose head message is due; ``drop`` towards each end with a message, link
      not stalled; ``disconnect`` of an open link, ``processed`` among all three with requests in
      transit, else lost or handled (late handling needs something read: without it a late
      disconnect is a handled one, the same world and log);
    * ``partition``/``heal``: every client/broker pair, whichever of the two applies;
    * ``load``: the leader while it loads the group; ``late``: each live broker holding requests of
      broken connections; ``failover``: to a live broker that does not lead; ``broker_crash``: a
      live broker; ``broker_restart``: a dead one; ``append_error``: a loaded coordinator with
      fewer than :data:`MAX_APPEND_ERRORS` failures waiting; ``add_partitions``: what keeps the
      topic within :data:`MAX_ADDED_PARTITIONS` added; ``delete_group``: a loaded coordinator
      whose group is Empty, no append failure waiting; ``tick``: always (the *ticks* lengths).
    """
    (w_poll, w_heartbeat, w_commit, w_oversized, w_commit_sync, w_subscribe, w_shutdown, w_pause, w_stall, w_close, w_wakeup,  # _UNPACKED
     w_crash, w_clock_jump, w_restart, w_redeploy, w_connect, w_deliver, w_drop, w_disconnect, w_partition, w_heal, w_load,
     w_late, w_failover, w_broker_crash, w_broker_restart, w_append_error, w_add_partitions, w_delete_group,
     w_tick) = _wanted(kinds)
    cfg = world.config
    now = world.now
    out = []
    add = out.append
    links = world.links
    brokers = cfg.brokers
    app = w_commit or w_oversized or w_commit_sync or w_subscribe or w_shutdown or w_pause or w_stall or w_close
    w_subscribe = w_subscribe and cfg.second_partitions > 0
    pauses = pauses_of(cfg) if w_pause or w_stall else ()
    slots = w_connect or w_deliver or w_drop or w_disconnect
    for c, client in enumerate(world.clients):
        fixed = (c,)
        if not client.alive:
            if w_restart:
                add((Restart, fixed, PROCESSED))
            if w_redeploy:
                add((Redeploy, fixed, REDEPLOY_SETTINGS))
        else:
            # client.live and client.closing, spelled out (properties cost a call: this runs per step)
            running = not client.closed
            closing = running and client.closing_deadline_ms is not None
            live = running and not closing and client.fatal is None
            until = client.paused_until_ms
            app_idle = until is None or now >= until
            in_call = client.sync_commit is not None  # inside commitSync: its polls go on with it
            if w_restart and not live and not closing:  # closed, or stopped by a fatal error
                add((Restart, fixed, PROCESSED))
            if w_redeploy and not live and not closing:
                add((Redeploy, fixed, REDEPLOY_SETTINGS))
            if w_poll and app_idle and (live or closing):
                add((Poll, fixed, None))
            if live:
                stalled = client.stalled_until_ms is not None and now < client.stalled_until_ms
                if w_heartbeat and client.heartbeat_thread and not stalled:
                    add((Heartbeat, fixed, None))
                if app and app_idle and not in_call:
                    owns = bool(client.assignment)
                    if w_commit and (owns or empty_commits):
                        add((Commit, fixed, None))
                    if w_oversized and owns:
                        add((CommitOversized, fixed, OVERSIZED))
                    if w_commit_sync and owns:
                        add((CommitSync, fixed, COMMIT_SYNC_TIMEOUTS))
                    if w_subscribe:
                        add((Subscribe, fixed, _OTHER_SUBSCRIPTIONS[client.subscription]))
                    if w_shutdown:
                        add((Shutdown, fixed, None))
                if w_wakeup and not client.wakeup_pending and not client.wakeup_in_polls and not stalled:
                    add((Wakeup, fixed, WAKEUP_LANDINGS))
                if app and app_idle and not in_call:
                    if w_pause:
                        add((Pause, fixed, pauses))
                    if w_stall:
                        add((Stall, fixed, pauses))
                    if w_close:
                        add((Close, fixed, None))
            if w_crash:
                add((Crash, fixed, None))
            if w_clock_jump:
                add((ClockJump, fixed, CLOCK_JUMPS))
            if slots:
                for slot, connecting, link in _active_slots(c, client.conns, links[c]):
                    if connecting and w_connect:
                        add((Connect, (c, slot), None))
                    if link is None:
                        continue
                    to_broker, to_client = link.to_broker, link.to_client
                    if w_deliver:
                        up = to_broker and to_broker[0][0] <= now
                        down = to_client and to_client[0][0] <= now
                        if up or down:
                            add((Deliver, (c, slot), _BOTH if up and down else _TO_BROKER if up else _TO_CLIENT))
                    if w_drop and (to_broker or to_client) and not link.stalled:
                        add((Drop, (c, slot), _BOTH if to_broker and to_client else _TO_BROKER if to_broker else _TO_CLIENT))
                    if w_disconnect and link.open:
                        add((Disconnect, (c, slot), PROCESSED if to_broker else _WITHOUT_LATE))
        if w_partition or w_heal:
            partitioned = world.partitioned
            for b in range(brokers):
                if (c, b) in partitioned:
                    if w_heal:
                        add((Heal, (c, b), None))
                elif w_partition:
                    add((Partition, (c, b), None))
    leader = world.leader
    if w_load and leader is not None and world.brokers[leader].loading:
        add((Load, (leader,), None))
    if w_late and world.orphans:
        add((Late, (), tuple(sorted({o[0] for o in world.orphans}))))
    if w_failover or w_broker_crash or w_broker_restart:
        alive = tuple(b for b, broker in enumerate(world.brokers) if broker.alive)
        if w_failover:
            others = tuple(b for b in alive if b != leader)
            if others:
                add((Failover, (), others))
        if w_broker_crash and alive:
            add((BrokerCrash, (), alive))
        if w_broker_restart and len(alive) < brokers:
            add((BrokerRestart, (), tuple(b for b in range(brokers) if b not in alive)))
    if w_append_error:
        group = world.group
        if group is not None and len(group.append_errors) < MAX_APPEND_ERRORS:
            add((AppendError, (), APPEND_ERROR_CODES))
    if w_add_partitions:
        room = cfg.partitions + MAX_ADDED_PARTITIONS - world.partitions
        fits = tuple(n for n in ADDED_PARTITIONS if n <= room)
        if fits:
            add((AddPartitions, (), fits))
    if w_delete_group:
        group = world.group
        if group is not None and group.state == "Empty" and not group.append_errors \
                and not world.brokers[world.leader].loading:
            add((DeleteGroup, (), None))
    if w_tick:
        lengths = tick_lengths(cfg) if ticks is None else ticks
        if lengths:
            add((Tick, (), lengths))
    return out


def expand(listed, pick: int = 0) -> list:
    """Every event of *listed* offers (every value of each parameter), with *pick*."""
    out = []
    for cls, fixed, values in listed:
        if values is None:
            out.append(cls(*fixed, pick))
        else:
            out += [cls(*fixed, value, pick) for value in values]
    return out


def enabled_events(world, kinds=ALL, pick: int = 0, **options) -> list:
    """Every event *world* offers among *kinds*, every parameter value enumerated, with *pick*
    (:func:`offers`, whose *options* these are, then :func:`expand`)."""
    return expand(offers(world, kinds, **options), pick)

