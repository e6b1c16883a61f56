"""The model world: clients, brokers and the network between them, advanced one event at a time.

A :class:`World` is an immutable value and :func:`step` is a pure function
``(world, event) -> (world', log)``. The events are those of :mod:`model.events`, where every kind
is defined once (its fields, its JSON form, when a world offers it): tag-first tuples, kind first,
a ``pick`` last, so a schedule is a list of JSON arrays. An event that is not enabled in the
current world (a delivery on an empty link, a poll of a crashed client, ...) changes nothing: that
makes every prefix and every sub-sequence of a schedule a valid schedule, which is what shrinking
needs. The log is a list of :mod:`model.entries` (what the properties read).

``pick`` resolves the choices Kafka leaves open (least loaded node, leader re-pick, protocol-vote
ties, whether a broken connection's requests were processed): see :func:`chooser`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import attrs

from model import broker as brk
from model import entries as E
from model import events
from model import group as grp
from model import member
from model import netclient as net
from model.client import CONNECTING, Conn, Step, new_client, with_field
from model.config import REDEPLOYS, Config, redeployed
from model.errors import Errors
from model.events import (  # noqa: F401 - the domains' old home: importers of model.world find them here too
    APPEND_ERRORS, LATE, MAX_ADDED_PARTITIONS, MAX_APPEND_ERRORS, WAKEUP_LANDINGS,
)
from model.messages import FindCoordinatorRequest
from model.placement import initial_leader, partition_for
from model.topics import SUBSCRIPTIONS


@attrs.frozen(slots=True)
class Link:
    """One connection's two FIFO directions: ((deliver_at, request_id, epoch, message), ...).
    A link is open from the moment the connection is established until it breaks; ``epoch`` is the
    client's connection epoch, so nothing crosses from one connection into the next."""

    to_broker: tuple = ()
    to_client: tuple = ()
    open: bool = False
    epoch: int = -1
    # A message was lost: TCP cannot skip it, so nothing more crosses this connection until it
    # breaks (the client's in-flight timeout does that). This is how a broker that never answers
    # looks from the client: a Kafka broker mutes a connection until it has answered its request.
    stalled: bool = False
    # The request the broker is working on: a Kafka broker mutes a connection from the moment it
    # reads a request until it has sent the response, so a request parked in the coordinator's
    # purgatory (JoinGroup, SyncGroup) holds back every later request on the same connection.
    processing: int | None = None


EMPTY_LINK = Link()


class World(NamedTuple):
    """The whole world between two events. A named tuple (like :class:`model.client.ClientState`)
    because one is built at every step."""

    config: Config
    now: int = 0
    clients: tuple = ()  # ClientState per client
    brokers: tuple = ()  # BrokerState per broker
    leader: int | None = None  # leader of the group's __consumer_offsets partition
    persisted: grp.Group | None = None  # the group record last written to __consumer_offsets
    committed: tuple = ()  # ((partition, offset), ...) sorted by partition
    links: tuple = ()  # links[c][slot]: Link
    partitioned: frozenset = frozenset()  # {(client, broker)} pairs that cannot talk
    steps: int = 0
    member_seq: int = 0  # member ids issued by any coordinator so far: Kafka's are UUIDs, never reused
    # The group as its current coordinator holds it (None while no broker has it loaded):
    # brokers[leader].group, derived by step() and stored because every property reads it.
    group: grp.Group | None = None
    # Requests brokers have read from connections that broke since, not yet handled, oldest first:
    # ((broker, client, slot, epoch, ((request_id, request), ...)), ...) (see ``late``)
    orphans: tuple = ()
    # The subscribed topic's partition count (config.partitions until add_partitions grows it)
    partitions: int = 0


@functools.lru_cache(maxsize=16)
def initial_world(config: Config) -> World:
    """The world before the first event (kept per config: a world is an immutable value, and a
    campaign starts a million walks from the same one)."""
    slots = 2 * config.brokers
    leader = initial_leader(partition_for(config.group_id, config.offsets_partitions), config.brokers)
    return World(
        config=config,
        partitions=config.partitions,
        clients=tuple(new_client(c, config.brokers, config.partitions) for c in range(config.clients)),
        brokers=tuple(brk.BrokerState() for _ in range(config.brokers)),
        leader=leader,
        links=tuple((EMPTY_LINK,) * slots for _ in range(config.clients)),
    )


def chooser(pick: int, log: list):
    """A ``choose(kind, candidates)`` that resolves successive choices from the digits of *pick*
    (in the base of each choice's candidate count) and logs every choice it makes."""
    state = [pick]

    def choose(kind, candidates):
        n = len(candidates)
        value = state[0]
        state[0] = value // n if value >= n else value * 7 + 3  # keep later choices varied
        chosen = candidates[value % n]
        log.append(E.Choice(kind, candidates, chosen))
        return chosen

    return choose


def _preferring(choose, prefer: dict, log: list):
    def chosen(kind, candidates):
        value = prefer.get(kind)
        if value is not None and value in candidates:
            log.append(E.Choice(kind, candidates, value))
            return value
        return choose(kind, candidates)

    return chosen


class _Mut:
    """Mutable working copy of the world-level fields for one step (never escapes :func:`step`).
    Link rows are copied only when a link of that client changes."""

    __slots__ = ("clients", "brokers", "links", "leader", "persisted", "committed", "partitioned", "now", "member_seq",
                 "orphans", "partitions", "_copied")

    def __init__(self, w: World):
        self.clients = list(w.clients)
        self.brokers = list(w.brokers)
        self.links = w.links  # the world's own rows until set_link copies what it changes
        self._copied = None  # clients whose link row set_link has copied
        self.leader = w.leader
        self.persisted = w.persisted
        self.committed = w.committed
        self.partitioned = w.partitioned
        self.now = w.now
        self.member_seq = w.member_seq
        self.orphans = w.orphans
        self.partitions = w.partitions

    def set_link(self, c: int, slot: int, link) -> None:
        if self._copied is None:
            self.links = list(self.links)
            self._copied = set()
        row = self.links[c]
        if c not in self._copied:
            row = list(row)
            self.links[c] = row
            self._copied.add(c)
        row[slot] = link

    def frozen_links(self) -> tuple | None:
        """The links after the step, or None if no link changed."""
        if self._copied is None:
            return None
        return tuple(tuple(row) if c in self._copied else row for c, row in enumerate(self.links))


def step(world: World, event: tuple, prefer: dict | None = None, choices=None) -> tuple[World, list]:
    """Apply one *event* (a :mod:`model.events` event, or its plain tuple or JSON list: ValueError
    for an unknown kind or a wrong length). Returns the new world and the step's log
    (:mod:`model.entries`, observations for the properties).

    *prefer* (kind -> value) overrides the event's pick for those kinds of choice when the value is
    among the allowed candidates: this is how the model follows a choice the implementation made.
    *choices* (``log -> choose``) replaces the pick altogether: how the exhaustive explorer
    (:mod:`properties.explore.exhaustive`) enumerates every way a step can go."""
    log: list = []
    handler = _HANDLERS.get(event.__class__)
    if handler is None:  # a plain tuple or a JSON list (a stored schedule): its typed event
        event = events.as_event(event)
        handler = _HANDLERS[event.__class__]
    m = _Mut(world)
    choose = chooser(event.pick, log) if choices is None else choices(log)
    if prefer:
        choose = _preferring(choose, prefer, log)
    changed = handler(world, m, event, choose, log)
    if not changed:
        return world, log
    links = m.frozen_links()
    new = World(
        world.config,
        m.now,
        tuple(m.clients),
        tuple(m.brokers),
        m.leader,
        m.persisted,
        m.committed,
        world.links if links is None else links,
        m.partitioned,
        world.steps + 1,
        m.member_seq,
        None if m.leader is None else m.brokers[m.leader].group,
        m.orphans,
        m.partitions,
    )
    return new, log


# -- client-side events -----------------------------------------------------------------------------


def _run_client(world, m, c, choose, log, action) -> bool:
    client = m.clients[c]
    if not client.alive or client.closed or client.fatal is not None:
        return False
    s = Step(client, m.now + client.clock_offset_ms, redeployed(world.config, client.settings), choose, log)
    s.topic_partitions = m.partitions  # what a metadata refresh would learn
    if s.pending_sync is not None:  # (its events are refused until the stall is over)
        member.finish_assignment(s)
    action(s)
    _commit_client(world, m, s, choose, log)
    return True


def _commit_client(world, m, s: Step, choose, log) -> None:
    """Freeze the client's step and hand its transmissions and closed connections to the network."""
    c = s.index
    latency = world.config.latency_ms
    for action, value in s.wire:  # in order: what the selector wrote before closing a channel was sent
        if action == "close":
            _cut_link(world, m, c, value, choose("processed", (False, True)), choose, log)
            continue
        req = value
        link = m.links[c][req.slot]
        if link.open:  # else the connection broke: the request fails when the client sees it
            m.set_link(c, req.slot, Link(link.to_broker + ((m.now + latency, req.id, link.epoch, req.body),), link.to_client, True, link.epoch, link.stalled, link.processing))
    m.clients[c] = s.freeze()


def _notify(m, c: int, kind: str, slot: int, epoch: int, payload=None) -> None:
    """The transport tells client *c* something; its NetworkClient sees it at its next poll."""
    client = m.clients[c]
    m.clients[c] = with_field(client, "notices", client.notices + ((kind, slot, epoch, payload),))


def _app_paused(m, c: int) -> bool:
    """The application of client *c* is inside a pause: it makes no call into the consumer."""
    until = m.clients[c].paused_until_ms
    return until is not None and m.now < until


def _app_busy(m, c: int) -> bool:
    """The application of client *c* is inside a pause, or blocked in commitSync (whose wait only
    its polls go on with): it makes no other call."""
    return m.clients[c].sync_commit is not None or _app_paused(m, c)


def _woken(call):
    """The application's *call* into the consumer, catching the WakeupException a pending wakeup
    throws out of it (the application's loop catches it, as a consumer loop stopped by wakeup()
    does, and calls again): what the consumer did before the throw stays done."""

    def action(s):
        try:
            call(s)
        except net.Wakeup:
            pass

    return action


def _ev_poll(world, m, ev, choose, log):
    """The application's poll(Duration.ZERO); blocked in commitSync, a pass of that wait instead."""
    if _app_paused(m, ev.c):
        return False
    return _run_client(world, m, ev.c, choose, log, _woken(member.consumer_poll))


def _ev_wakeup(world, m, ev, choose, log):
    """Another thread calls KafkaConsumer.wakeup() (a shutdown hook, a watchdog): it lands now or
    while the consumer waits in its ``ev.n``-th network poll from now (one of
    :data:`model.events.WAKEUP_LANDINGS`); the consumer's next poll that allows wakeups after that
    throws WakeupException, once (only a live consumer's, not one already woken or about to be)."""
    c, landing = ev.c, ev.n
    client = m.clients[c]
    if (not client.live or client.closing_deadline_ms is not None or client.wakeup_pending
            or client.wakeup_in_polls or _stalled(m, c) or landing not in WAKEUP_LANDINGS):
        return False
    if landing:
        m.clients[c] = with_field(client, "wakeup_in_polls", landing)
    else:
        m.clients[c] = with_field(client, "wakeup_pending", True)
    log.append(E.Wakeup(c, landing))
    return True


def _stalled(m, c: int) -> bool:
    """The process of client *c* stands still (a ``stall``): neither of its threads runs."""
    until = m.clients[c].stalled_until_ms
    return until is not None and m.now < until


def _ev_heartbeat(world, m, ev, choose, log):
    if _stalled(m, ev.c):
        return False
    return _run_client(world, m, ev.c, choose, log, member.heartbeat_thread)


def _ev_commit(world, m, ev, choose, log):
    if _app_busy(m, ev.c):
        return False
    return _run_client(world, m, ev.c, choose, log, _woken(member.commit_async))


def _ev_commit_oversized(world, m, ev, choose, log):
    """commitAsync of every owned partition where the application attached metadata longer than the
    broker's offset.metadata.max.bytes to some of them (``ev.which``, one of
    :data:`model.events.OVERSIZED`): the broker commits the others and answers those
    OFFSET_METADATA_TOO_LARGE, partition by partition."""
    which = ev.which
    if _app_busy(m, ev.c) or which not in events.OVERSIZED:
        return False
    return _run_client(world, m, ev.c, choose, log, _woken(lambda s: member.commit_async(s, which)))


def _ev_commit_sync(world, m, ev, choose, log):
    """commitSync(Duration.ofMillis(ev.timeout_ms)) of every owned partition (only a consumer that
    owns some; a timeout of :data:`model.events.COMMIT_SYNC_TIMEOUTS`): the application blocks in it
    until it commits, throws or its timer runs out (member.commit_sync)."""
    c, timeout_ms = ev.c, ev.timeout_ms
    client = m.clients[c]
    if _app_busy(m, c) or not client.live or not client.assignment or timeout_ms not in events.COMMIT_SYNC_TIMEOUTS:
        return False
    return _run_client(world, m, c, choose, log, _woken(lambda s: member.commit_sync(s, timeout_ms)))


def _ev_subscribe(world, m, ev, choose, log):
    """KafkaConsumer.subscribe(topics) with another set of topics (a world with a second topic):
    the subscription changes, nothing is sent (member.subscribe)."""
    c, topics = ev.c, ev.topics
    client = m.clients[c]
    if (_app_busy(m, c) or not client.live or not world.config.second_partitions or topics not in SUBSCRIPTIONS
            or topics == client.subscription):
        return False
    return _run_client(world, m, c, choose, log, lambda s: member.subscribe(s, topics))


def _ev_close(world, m, ev, choose, log):
    if _app_busy(m, ev.c):
        return False
    return _run_client(world, m, ev.c, choose, log, member.close)


def _ev_shutdown(world, m, ev, choose, log):
    """The application's consumer loop ends: ``while (running) { poll(); ...; commitAsync(); }`` and
    ``close()`` in its finally block (the loop of Kafka: The Definitive Guide, ch. 4), so the last
    commitAsync() comes right before close(), with no poll between. The commit's pollNoWakeup reads
    and handles what arrived since the last poll: a MEMBER_ID_REQUIRED answer hands the member its id
    with no second JoinGroup sent, and close() then leaves with that id while the coordinator holds
    it only as pending (KAFKA-7909)."""
    if _app_busy(m, ev.c):
        return False

    def action(s):
        _woken(member.commit_async)(s)
        if s.pending_sync is not None:
            # The commit's pollNoWakeup handled the JoinGroup answer of a leader with a slow
            # assignor: onJoinLeader runs it inside that call, so close() comes only after it has
            # returned and sent the SyncGroup (JoinGroupResponseHandler.handle -> onJoinLeader ->
            # sendSyncGroupRequest). The event takes the assignor's time as spent: the SyncGroup
            # is queued, the stall over, and close() follows.
            member.finish_assignment(s)
            s.stalled_until_ms = s.paused_until_ms = None
        member.close(s)

    return _run_client(world, m, ev.c, choose, log, action)


def _ev_pause(world, m, ev, choose, log):
    """The application works for *ms* between two polls (KafkaConsumer's caller processing records):
    the consumer's own calls stop, the heartbeat thread does not, so the group's protocol moves on
    without the application (a rebalance it hears of only at its next poll; past
    max.poll.interval.ms the heartbeat thread leaves the group). Only a live client's application
    pauses, and not inside a pause (a close() in progress is one blocking call: no pause inside)."""
    c, ms = ev.c, ev.ms
    client = m.clients[c]
    if not client.live or ms <= 0 or _app_busy(m, c):
        return False
    m.clients[c] = with_field(client, "paused_until_ms", m.now + ms)
    log.append(E.Pause(c, ms))
    return True


def _ev_stall(world, m, ev, choose, log):
    """The consumer's whole process stands still for *ms* (a stop-the-world garbage collection, a
    starved or suspended VM): the application and the heartbeat thread alike, while connections,
    brokers and the coordinator's timers go on. Past the session timeout the coordinator expires
    the member it no longer hears from; when the process resumes its heartbeat thread finds its
    timers run out (the session: coordinator unknown; max.poll.interval.ms: it leaves the group).
    Only a live client stalls, and not inside a pause or another stall."""
    c, ms = ev.c, ev.ms
    client = m.clients[c]
    if not client.live or ms <= 0 or _app_busy(m, c):
        return False
    client = with_field(client, "paused_until_ms", m.now + ms)
    m.clients[c] = with_field(client, "stalled_until_ms", m.now + ms)
    log.append(E.Stall(c, ms))
    return True


def _ev_crash(world, m, ev, choose, log):
    c = ev.c
    client = m.clients[c]
    if not client.alive:
        return False
    m.clients[c] = with_field(client, "alive", False)
    # Requests already on the wire may still arrive; nothing will ever read the responses.
    for slot, link in enumerate(m.links[c]):
        m.set_link(c, slot, Link(link.to_broker, (), link.open, link.epoch, link.stalled, link.processing))
    log.append(E.Crash(c))
    return True


def _ev_restart(world, m, ev, choose, log):
    """A new consumer process for client c (an operator or a supervisor restarting it), after its
    old one died: crashed, closed, or stopped by an exception its poll threw (FENCED_INSTANCE_ID
    is fatal: KafkaConsumer rethrows it to the application, which in practice exits). It starts
    as the first one did (no member id, no generation, fresh metadata) with the same client id
    and, for a static member, the same group.instance.id: KIP-345's restart without a rebalance.

    The old process's sockets are closed by its kernel: what they still carried to the brokers is
    read or lost as a disconnect's ``processed`` says. What the process remembered of its
    connections (their epochs) and its clock carry on, so no answer to the old process can reach
    the new one."""
    return _start_process(world, m, ev.c, int(ev.processed), m.clients[ev.c].settings, E.Restart(ev.c), choose, log)


def _ev_redeploy(world, m, ev, choose, log):
    """A new consumer process for client c after its old one died, deployed with other settings
    (``ev.settings``, an entry of :data:`model.config.REDEPLOYS`: a longer session timeout, another
    max.poll.interval.ms, heartbeat interval or assignor list; 0 the world's own): an operator's
    rolling change. It joins as a restarted one does, and every JoinGroup it sends carries the new
    timeouts and protocols, which the coordinator must take for the member it replaces or rejoins
    as (GroupCoordinator.updateMember). The old process's sockets close as a clean exit's do: the
    kernel sends what they held, and the broker reads it (``processed`` = HANDLED)."""
    if not 0 <= ev.settings < len(REDEPLOYS):
        return False
    return _start_process(world, m, ev.c, events.HANDLED, ev.settings, E.Redeploy(ev.c, ev.settings), choose, log)


def _start_process(world, m, c: int, processed: int, settings: int, entry, choose, log) -> bool:
    """Client *c*'s new process with *settings* (restart and redeploy: see :func:`_ev_restart`),
    logged as *entry*."""
    old = m.clients[c]
    if old.live or old.closing:
        return False
    for slot, link in enumerate(m.links[c]):
        if link.open:
            _cut_link(world, m, c, slot, processed, choose, log)
    fresh = new_client(c, world.config.brokers, m.partitions)
    m.clients[c] = fresh._replace(
        clock_offset_ms=old.clock_offset_ms,
        conns=tuple(Conn(epoch=conn.epoch) for conn in old.conns),
        next_request_id=old.next_request_id,
        commits=old.commits,  # the offsets it commits go on from where the old one's stopped
        md_refreshed_ms=m.now + old.clock_offset_ms,
        # the new process's Heartbeat is built now: Timer's constructor reads the clock (Timer(Time,
        # long): update()), so its timers start at the process's time, not at 0, and a backward
        # clock jump after the restart leaves them waiting for the clock to catch up (campaign seed
        # 47307 of 2026-11-29; the implementation's consumer, built at the restart, had it right)
        heartbeat_clock_ms=m.now + old.clock_offset_ms,
        settings=settings,
    )
    log.append(entry)
    return True


def _broker_of(world, slot: int) -> int:
    return slot % world.config.brokers


def _ev_connect(world, m, ev, choose, log):
    c, slot = ev.c, ev.slot
    client = m.clients[c]
    conn = client.conns[slot]
    if not client.alive or client.closed or conn.state != CONNECTING or any(n[1] == slot for n in client.notices):
        return False  # (a closed consumer closed its selector: a pending connection attempt is abandoned)
    b = _broker_of(world, slot)
    if (c, b) in m.partitioned:
        return False  # the SYN goes nowhere: the attempt hangs
    if m.brokers[b].alive:
        m.set_link(c, slot, Link((), (), True, conn.epoch))
        _notify(m, c, "connected", slot, conn.epoch)
        log.append(E.LinkOpen(c, slot))
    else:
        _notify(m, c, "disconnected", slot, conn.epoch)  # connection refused
        log.append(E.ConnectRefused(c, slot))
    return True


def _ev_deliver(world, m, ev, choose, log):
    c, slot, to_broker = ev.c, ev.slot, ev.to_broker
    link = m.links[c][slot]
    b = _broker_of(world, slot)
    if (c, b) in m.partitioned or link.stalled:
        return False
    if to_broker:
        if not link.to_broker or link.to_broker[0][0] > m.now or not m.brokers[b].alive or link.processing is not None:
            return False
        (_, request_id, epoch, request), rest = link.to_broker[0], link.to_broker[1:]
        m.set_link(c, slot, Link(rest, link.to_client, link.open, link.epoch, False, request_id))
        _broker_handle(world, m, b, (c, slot, epoch, request_id), request, choose, log)
        return True
    if not link.to_client or link.to_client[0][0] > m.now:
        return False
    (_, request_id, epoch, response), rest = link.to_client[0], link.to_client[1:]
    m.set_link(c, slot, Link(link.to_broker, rest, link.open, link.epoch, False, link.processing))
    if m.clients[c].alive:
        _notify(m, c, "received", slot, epoch, (request_id, response))
    return True


def _ev_drop(world, m, ev, choose, log):
    c, slot, to_broker = ev.c, ev.slot, ev.to_broker
    link = m.links[c][slot]
    queue = link.to_broker if to_broker else link.to_client
    if not queue:
        return False
    if to_broker:
        m.set_link(c, slot, Link(link.to_broker[1:], link.to_client, link.open, link.epoch, True, link.processing))
    else:
        m.set_link(c, slot, Link(link.to_broker, link.to_client[1:], link.open, link.epoch, True, link.processing))
    log.append(E.Dropped(c, slot, bool(to_broker), queue[0][3].api))
    return True


def _ev_disconnect(world, m, ev, choose, log):
    c, slot, processed = ev.c, ev.slot, ev.processed
    link = m.links[c][slot]
    if not m.clients[c].alive or not link.open:
        return False
    _cut_link(world, m, c, slot, int(processed), choose, log)
    _notify(m, c, "disconnected", slot, link.epoch)
    return True


def _cut_link(world, m, c, slot, processed: int, choose, log) -> None:
    """A connection breaks: if *processed*, the broker had read the requests still in transit and
    handled them, one at a time as its muted channel allows (their responses are lost with the
    connection); otherwise they are lost too. ``processed == LATE``: it read them, and handles them
    at later ``late`` events (Kafka's handler threads take requests from one queue shared by all
    connections, and handle a request whose connection has closed; only the response is dropped)."""
    link = m.links[c][slot]
    b = _broker_of(world, slot)
    log.append(E.LinkCut(c, slot, bool(processed), len(link.to_broker)))
    if processed == LATE:
        if m.brokers[b].alive and not link.stalled and link.to_broker and link.processing is None:
            requests = tuple((request_id, request) for _, request_id, _, request in link.to_broker)
            m.orphans = m.orphans + ((b, c, slot, link.epoch, requests),)
            log.append(E.Orphaned(c, slot, b, len(requests)))
    elif processed and m.brokers[b].alive and not link.stalled:
        while link.to_broker and link.processing is None:
            (_, request_id, epoch, request), rest = link.to_broker[0], link.to_broker[1:]
            m.set_link(c, slot, Link(rest, link.to_client, link.open, link.epoch, False, request_id))
            _broker_handle(world, m, b, (c, slot, epoch, request_id), request, choose, log)
            link = m.links[c][slot]
    m.set_link(c, slot, EMPTY_LINK)


# -- broker-side events -----------------------------------------------------------------------------


def _broker_handle(world, m, b, reply_to, request, choose, log) -> None:
    _expire_overdue(world, m, b, choose, log)
    broker = m.brokers[b]
    if isinstance(request, FindCoordinatorRequest):
        log.append(E.Handled(reply_to[0], reply_to[3], b, request, None, False, False))
        _route(world, m, reply_to, brk.find_coordinator(request, m.leader, m.brokers), log)
        return
    log.append(E.Handled(reply_to[0], reply_to[3], b, request, broker.group, m.leader == b, broker.loading))
    outcome = brk.handle_group_request(broker, m.leader == b, request, reply_to, m.now, world.config, choose, m.member_seq)
    _apply_outcome(world, m, b, outcome, log)
    _expire_overdue(world, m, b, choose, log)  # a timer the request armed for now has fired at once


def _apply_outcome(world, m, b, outcome: grp.Outcome, log) -> None:
    broker = m.brokers[b]
    if outcome.group is not broker.group:
        m.brokers[b] = brk.BrokerState(broker.alive, broker.loading, outcome.group)
        if outcome.group is not None and outcome.group.member_seq > m.member_seq:
            m.member_seq = outcome.group.member_seq
    if outcome.persist is not None:
        m.persisted = outcome.persist
    if outcome.committed:
        offsets = dict(m.committed)
        offsets.update(outcome.committed)
        m.committed = tuple(sorted(offsets.items()))
    for note in outcome.notes:
        log.append(E.server_entry(note))
    for reply_to, response in outcome.replies:
        _route(world, m, reply_to, response, log)


def _route(world, m, reply_to, response, log) -> None:
    """Send a response back on the connection the request came from, if it still exists."""
    c, slot, epoch, request_id = reply_to
    log.append(E.Reply(c, request_id, response.api, response.error, response))
    link = m.links[c][slot]
    if link.open and link.epoch == epoch:
        entry = (m.now + world.config.latency_ms, request_id, epoch, response)
        processing = None if link.processing == request_id else link.processing  # the channel is unmuted
        m.set_link(c, slot, Link(link.to_broker, link.to_client + (entry,), True, epoch, link.stalled, processing))


def _expire_overdue(world, m, b, choose, log) -> None:
    """Fire the coordinator's timers that are already due, before and after the broker handles a
    request.

    Only a timer armed for the current millisecond can be due here (a tick fires everything due):
    the InitialDelayedJoin of group.initial.rebalance.delay.ms=0. Kafka's ``SystemTimer.add``
    hands a task whose deadline has passed to the reaper's executor at once
    (``kafka.utils.timer.SystemTimer.addTimerTaskEntry``), so that join completes right after the
    request that armed it, not when time next moves (by then the new member's own session may
    have run out with it: a livelock that does not exist in Kafka). impl's broker does the same
    (``Broker.expire_overdue``)."""
    group = m.brokers[b].group
    if m.leader != b or group is None or not m.brokers[b].alive:
        return
    deadline = grp.next_deadline(group)
    if deadline is None or deadline > m.now:
        return
    outcome = grp.fire_timers(group, m.now, world.config, choose)
    if outcome.group is not group or outcome.replies or outcome.notes:
        _apply_outcome(world, m, b, outcome, log)


def _ev_tick(world, m, ev, choose, log):
    """Time advances by ms; the coordinator's timers fire, each at its own time: the clock stops
    at every due time on the way (a timer's responses leave when it fires, as Kafka's reaper
    thread sends them), so one tick is the same as ticks from one due time to the next."""
    ms = ev.ms
    if ms <= 0:
        return False
    end = m.now + ms
    b = m.leader
    if b is not None and m.brokers[b].alive:
        while True:
            group = m.brokers[b].group
            due = grp.next_due(group, world.config)
            if due is None or due > end:
                break
            m.now = max(m.now, due)
            outcome = grp.fire_timers(group, m.now, world.config, choose)
            if outcome.group is group and not outcome.replies and not outcome.notes:
                break
            _apply_outcome(world, m, b, outcome, log)
    m.now = end
    return True


def _move_leadership(world, m, to: int | None, log) -> None:
    old = m.leader
    if old is not None and m.brokers[old].alive and m.brokers[old].group is not None:
        _apply_outcome(world, m, old, grp.unload(m.brokers[old].group), log)
    if old is not None and m.brokers[old].alive:
        broker = m.brokers[old]
        m.brokers[old] = brk.BrokerState(broker.alive, False, None)
    m.leader = to
    if to is not None:
        m.brokers[to] = brk.BrokerState(True, True, None)
    log.append(E.Leader(old, to))


def _ev_late(world, m, ev, choose, log):
    """Broker b handles the oldest request it read from a connection that has broken since. Its
    response has nowhere to go. The requests read from one connection are handled in order and
    one at a time, as its muted channel allowed: if this one is parked (a JoinGroup or SyncGroup
    in purgatory), the ones behind it are never handled."""
    b = ev.b
    if not m.brokers[b].alive:
        return False
    for i, (ob, c, slot, epoch, requests) in enumerate(m.orphans):
        if ob == b:
            break
    else:
        return False
    (request_id, request), rest = requests[0], requests[1:]
    start = len(log)
    _broker_handle(world, m, b, (c, slot, epoch, request_id), request, choose, log)
    answered = any(e.tag == "reply" and e.c == c and e.request_id == request_id for e in log[start:])
    kept = ((b, c, slot, epoch, rest),) if rest and answered else ()
    m.orphans = m.orphans[:i] + kept + m.orphans[i + 1:]
    log.append(E.Late(b, c, request_id, request.api))
    return True


def _ev_broker_crash(world, m, ev, choose, log):
    b = ev.b
    if not m.brokers[b].alive:
        return False
    m.brokers[b] = brk.BrokerState(alive=False)
    if m.orphans:  # its request queue dies with it
        m.orphans = tuple(o for o in m.orphans if o[0] != b)
    log.append(E.BrokerCrash(b))
    brokers = world.config.brokers
    for c in range(world.config.clients):
        for slot in (b, brokers + b):
            link = m.links[c][slot]
            if link.open:
                m.set_link(c, slot, EMPTY_LINK)
                if m.clients[c].alive:
                    _notify(m, c, "disconnected", slot, link.epoch)
    if m.leader == b:
        alive = tuple(x for x in range(brokers) if m.brokers[x].alive)
        _move_leadership(world, m, choose("new_leader", alive) if alive else None, log)
    return True


def _ev_broker_restart(world, m, ev, choose, log):
    b = ev.b
    if m.brokers[b].alive:
        return False
    m.brokers[b] = brk.BrokerState()
    log.append(E.BrokerRestart(b))
    if m.leader is None:
        _move_leadership(world, m, b, log)
    return True


def _ev_failover(world, m, ev, choose, log):
    b = ev.b
    if not m.brokers[b].alive or m.leader == b:
        return False
    _move_leadership(world, m, b, log)
    return True


def _ev_load(world, m, ev, choose, log):
    b = ev.b
    broker = m.brokers[b]
    if m.leader != b or not broker.alive or not broker.loading:
        return False
    outcome = grp.load(m.persisted, m.now, world.config, choose, m.member_seq, world.config.group_id, bool(m.committed))
    m.brokers[b] = brk.BrokerState(True, False, broker.group)
    _apply_outcome(world, m, b, outcome, log)
    log.append(E.Loaded(b))
    return True


def _ev_append_error(world, m, ev, choose, log):
    """The group coordinator's next write to ``__consumer_offsets`` fails (GroupMetadataManager's
    appendForGroup answers the log error): only a live coordinator that has the group loaded, at
    most :data:`MAX_APPEND_ERRORS` waiting. The failures belong to that coordinator's group: a
    failover or a crash takes them away with it."""
    b = m.leader
    if ev.code not in APPEND_ERRORS or b is None:
        return False
    error = Errors(ev.code)  # events carry plain codes (a schedule is JSON)
    broker = m.brokers[b]
    group = broker.group
    if not broker.alive or broker.loading or group is None or len(group.append_errors) >= MAX_APPEND_ERRORS:
        return False
    m.brokers[b] = brk.BrokerState(broker.alive, broker.loading,
                                   attrs.evolve(group, append_errors=group.append_errors + (error,)))
    log.append(E.AppendError(b, error))
    return True


def _ev_delete_group(world, m, ev, choose, log):
    """The Empty group is deleted (an administrator's DeleteGroups, or its offsets expired): Kafka's
    GroupCoordinator.handleDeleteGroups moves an Empty group to Dead and
    GroupMetadataManager.cleanupGroupMetadata removes it with all its offsets, writing tombstones
    for them and for the group record, so no coordinator loads it again. A group in any other state
    is refused (NON_EMPTY_GROUP): nothing changes; so is a deletion while an append failure waits
    (the tombstones' write would fail, which Kafka logs and ignores — acks 0 — so that the next
    coordinator loads the group again: not modelled). Member ids go on from where they were (the model
    numbers them across the world; Kafka's are random UUIDs): a new group never hands out an id
    a member of the old one still holds."""
    b = m.leader
    if b is None:
        return False
    broker = m.brokers[b]
    group = broker.group
    if not broker.alive or broker.loading or group is None or group.append_errors:
        return False
    outcome = grp.delete(group)
    if outcome is None:
        return False
    m.brokers[b] = brk.BrokerState(True, False, outcome.group)
    m.persisted = None
    m.committed = ()
    for note in outcome.notes:
        log.append(E.server_entry(note))
    log.append(E.GroupDeleted(b, group.generation))
    return True


def _ev_add_partitions(world, m, ev, choose, log):
    """An administrator adds *n* partitions to the subscribed topic (CreatePartitions; a topic
    never shrinks). Clients learn it at their next metadata refresh; the group's leader then
    rejoins, its assignment snapshot no longer matching (ConsumerCoordinator.rejoinNeededOrPending)."""
    n = ev.n
    if n <= 0 or m.partitions + n > world.config.partitions + MAX_ADDED_PARTITIONS:
        return False
    log.append(E.AddPartitions(m.partitions, m.partitions + n))
    m.partitions += n
    return True


def _ev_clock_jump(world, m, ev, choose, log):
    """Client c's clock jumps by ms (backwards if negative; never before 0). Only the client sees
    it: brokers and the network keep the world's time."""
    c, ms = ev.c, ev.ms
    client = m.clients[c]
    offset = max(client.clock_offset_ms + ms, -m.now)
    if not client.alive or ms == 0 or offset == client.clock_offset_ms:
        return False
    m.clients[c] = with_field(client, "clock_offset_ms", offset)
    log.append(E.ClockJump(c, ms))
    return True


def _ev_partition(world, m, ev, choose, log):
    pair = (ev.c, ev.b)
    if pair in m.partitioned:
        return False
    m.partitioned = m.partitioned | {pair}
    return True


def _ev_heal(world, m, ev, choose, log):
    pair = (ev.c, ev.b)
    if pair not in m.partitioned:
        return False
    m.partitioned = m.partitioned - {pair}
    return True


#: event class -> its handler ``(world, m, event, choose, log) -> changed``: ``_ev_<kind>`` for every
#: kind of :mod:`model.events` (a kind without one is an error at import)
_HANDLERS = {cls: globals()[f"_ev_{kind}"] for kind, cls in events.EVENTS.items()}

EVENT_KINDS = events.KINDS
FAULT_KINDS = events.FAULTS
