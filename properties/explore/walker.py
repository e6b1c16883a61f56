"""The lean seeded walker: seed → schedule → verdict, without Hypothesis.

A walk draws each event from the events enabled in the current world (so almost no step is
wasted), applies it, and checks every ``always`` property. After ``steps`` events, if nothing broke,
the disruptions stop and :func:`settle` gives the world quiet time; then the ``eventually``
properties are checked. The events actually applied form the schedule: replaying it reproduces the
run exactly, and the trace hash proves it.

Fault profiles (``--faults``):

* ``none``    — only the protocol's own traffic: polls, heartbeats, commits, connects, deliveries,
  time, coordinator loads;
* ``network`` — plus message drops, broken connections and client/broker partitions;
* ``all``     — plus client crashes and closes, broker crashes and restarts, coordinator failover,
  client clock jumps (forwards and backwards).

At most ``max_faults`` disruptions happen in one walk, so that the eventually properties are
meaningful.
"""

from __future__ import annotations

import hashlib
import random

import attrs

from model.client import CONNECTING, PREPARING_REBALANCE, ClientState
from model.config import Config, settling_settings
from model.events import (  # noqa: F401 - TICKS, CLOCK_JUMPS, ADDED_PARTITIONS, boundary_ticks, pauses_of: importers find them here too
    ADDED_PARTITIONS, CLOCK_JUMPS, COMMIT_SYNC_TIMEOUTS, EVENTS, OVERSIZED, TICKS, WAKEUP_LANDINGS, BrokerRestart, Commit,
    CommitOversized, CommitSync,
    Connect, DeleteGroup, Deliver, Disconnect, Drop, Failover, Heal, Heartbeat, Late, Load, Partition, Pause, Poll, Redeploy, Restart,
    Shutdown, Stall, Subscribe, Tick, Wakeup, as_event, boundary_ticks, idle, offers, pauses_of,
)
from model.entries import polled
from model.world import World, initial_world, step
from properties.catalogue import Checker, Violation

FAULT_PROFILES = ("none", "network", "all")
DEFAULT_STEPS = 60  # random events per interleaving, the same default for every command

_NETWORK_FAULTS = ("drop", "disconnect", "partition", "heal")
_ALL_FAULTS = _NETWORK_FAULTS + ("crash", "close", "broker_crash", "broker_restart", "failover", "clock_jump")


@attrs.frozen
class RunResult:
    seed: int
    schedule: tuple  # the events applied, in order
    verdict: str  # "ok" | "counterexample"
    violation: Violation | None
    step: int | None  # index of the failing event in schedule, or None
    trace_hash: str | None  # None for a walk(hash_trace=False): replay the schedule to get it
    world: World
    steps: int  # events applied
    coverage: dict = attrs.field(factory=dict)  # sometimes property -> times reached
    companion: object = None  # the implementation world checked beside the model (system impl), if any
    walked: int | None = None  # events of the schedule before the final settle phase (a walk's)


def observe(world: World) -> tuple:
    """The canonical observation hashed into the trace: time, group, members, committed offsets."""
    g = world.group
    group = None if g is None else (g.state, g.generation, g.leader_id, tuple(m.member_id for m in g.members), g.protocol_name)
    return (
        world.now,
        world.leader,
        group,
        tuple((c.state, c.generation, c.member_id, c.assignment, c.coordinator, c.live) for c in world.clients),
        world.committed,
    )


class Trace:
    """Accumulates the canonical trace (event and observation per step) into a sha256 digest."""

    def __init__(self):
        self._h = hashlib.sha256()

    def add(self, event: tuple, world: World) -> None:
        self._h.update(repr((event, observe(world))).encode())

    def mix(self, value) -> None:
        """Fold in something beyond the model's observation (the implementation's, where it differs)."""
        self._h.update(repr(value).encode())

    def hexdigest(self) -> str:
        return self._h.hexdigest()[:16]


def below(getrandbits, n: int) -> int:
    """A uniform integer in ``[0, n)`` drawn from *getrandbits* (``rng.getrandbits``): exactly the
    draws ``random.Random.randrange(n)`` and ``choice`` make in CPython 3.11, written out so that a
    walk neither pays for their argument checks at every step nor depends on how a later Python
    implements them."""
    k = n.bit_length()
    r = getrandbits(k)
    while r >= n:
        r = getrandbits(k)
    return r


_BOUNDARIES: list = [None, ()]  # [config, its boundary ticks]: the walk's config, without hashing it


def _boundaries_of(config: Config) -> tuple:
    _BOUNDARIES[:] = [config, boundary_ticks(config)]
    return _BOUNDARIES[1]


_DISRUPTIONS = ("crash", "close", "broker_crash", "broker_restart", "failover", "failover", "clock_jump")
# disruptions only a mix names (the default mix's draws stay those of walks before they existed)
_MIX_ONLY = ("append_error", "add_partitions", "shutdown")


@attrs.frozen
class Mix:
    """Which disruptions a walk offers and how often: the swarm's fault mix (issue 14: "fault mix
    and weights"). With every kind at a low rate the rarer situations need two unlikely draws in a
    row (a failover while the group completes a rebalance, then a request before the new
    coordinator has loaded the group); a world that favours one family of faults meets them."""

    chance: float = 0.15  # per step, of offering one disruption (fault profile all)
    kinds: tuple = _DISRUPTIONS  # drawn from uniformly (repetition is weight)
    load_chance: float | None = None  # per step, of offering the coordinator's load; None: always
    weight: int = 1  # copies of the disruption among the step's candidates
    # per step, of offering an application pause (a client's caller busy between two polls, see
    # pauses_of; *weight* copies); 0 draws nothing, so a mix without pauses walks as before they existed
    pause_chance: float = 0.0
    # some of the application's commits attach metadata longer than offset.metadata.max.bytes to some
    # partitions (``commit_oversized``): an eighth of the commits offered, chosen by the step's pick
    # bits, so the mix draws nothing more and its other walks stay as they were
    oversized_commits: bool = False
    # half the pauses offered stall the whole process instead (``stall``: the heartbeat thread
    # stands still too), chosen by the step's pick bits, so the mix draws nothing more
    stalls: bool = False
    # another thread calls the consumer's wakeup() now and then (``wakeup``: offered for a live
    # client in an eighth of the steps, by the step's pick bits: no draw more)
    wakeups: bool = False
    # while the coordinator holds a generation newer than the group record it has stored (a join
    # phase ended and its SyncGroup is not written yet: the leader assigning, an append failing),
    # a failover to another live broker is offered as well (four times *weight* copies, as the
    # window lasts a few steps; within the fault budget): the new coordinator loads the older
    # generation while the members hold the newer one. Without it that needs a failover to fall
    # into a window of a few round trips (or a slow assignor's time): no walk of the first 1,500
    # swarm seeds answered a live request ILLEGAL_GENERATION (2026-11-25).
    unstored_failovers: bool = False
    # half the walks (odd seeds: no draw) begin with quiet time until the group is Stable: faults
    # then meet a running group, its later rebalances (where the members' generation and the stored
    # record part) rather than only its first join
    warm_start: bool = False
    # the application's loop commits after every poll (``while (running) { poll(); ...;
    # commitAsync(); }``, whatever it owns: a consumer without an assignment is offered ``commit``
    # too) and closes when it ends (its ``close`` disruptions are ``shutdown``: the last
    # commitAsync(), then close()). An empty commit completes locally but still ends with
    # pollNoWakeup (ConsumerCoordinator.commitOffsetsAsync), so it can read a JoinGroup answer
    # outside joinGroupIfNeeded: a MEMBER_ID_REQUIRED answer then sets the member id with no second
    # JoinGroup sent, and a close() right after leaves as a member the coordinator holds only as
    # pending (KAFKA-7909). Before it no mix offered a commit without an assignment.
    commit_loop: bool = False
    # while a joining consumer (PREPARING_REBALANCE) has an answer delivered that it has not read
    # yet, its loop's end (``shutdown``) is offered as well (four times *weight* copies, past the
    # fault budget too: a consumer stopped while it joins, as a deploy that starts and stops it
    # again, is the application's decision, not a fault the budget rations): the last
    # commitAsync() reads that answer and close() acts on what it left, the race KAFKA-7909 lost
    # (a MEMBER_ID_REQUIRED answer read there leaves a member the coordinator holds only as
    # pending). Quiet bursts settle most joins and the budget is spent early, so an unread join
    # answer and a shutdown drawn for the same consumer are otherwise a rare pair
    joining_shutdowns: bool = False
    # a dead (crashed, closed or failed) consumer's process is offered a redeploy with other settings
    # as well (``redeploy``: another session timeout, max.poll.interval.ms, heartbeat interval or
    # assignor list, model.config.REDEPLOYS), in dynamic worlds too, where nothing else restarts
    # it: the coordinator then meets rejoins and replacements whose timeouts and protocols differ
    # from the member's first JoinGroup (GroupCoordinator.updateMember), and groups whose members
    # share no protocol (INCONSISTENT_GROUP_PROTOCOL)
    redeploys: bool = False
    # while the coordinator holds the group Empty (every member gone: left, expired, crashed), its
    # deletion is offered (``delete_group``: an administrator's DeleteGroups, or its offsets'
    # expiry; *weight* copies, within the fault budget): a consumer that still believes itself a
    # member — its session expired while it stood still — then meets a coordinator that does not
    # know the group (its OffsetCommit answered ILLEGAL_GENERATION, its Heartbeat UNKNOWN_MEMBER_ID),
    # and the group starts again from generation 0. The clients mix has it, where stalled consumers
    # leave such members behind Empty groups (in the coordinator mix the extra offers moved a
    # mutant's only killing walk away: ownership_checked_before_loading survived 2,000)
    deletes: bool = False
    # a quarter of the commits offered to a consumer that owns partitions are commitSync calls
    # (``commit_sync``, chosen by the step's pick bits, no draw more; its timeout from them too, one
    # of model.events.COMMIT_SYNC_TIMEOUTS): the application blocks in it, and a timer that runs out
    # while its OffsetCommit is in flight leaves the answer to a later poll (a late UNKNOWN_MEMBER_ID
    # or REBALANCE_IN_PROGRESS still acts), a retriable failure sleeps retry.backoff.ms and retries
    sync_commits: bool = False
    # in worlds with a second topic (the swarm gives the topics mix's one), a consumer's
    # application changes its subscription (``subscribe``: to the other topic, to both, and back)
    # in a quarter of the steps, offered twice per live consumer whose application is idle; the
    # set from the step's pick bits, no draw more. Its next poll rejoins; a change while its
    # JoinGroup is in flight makes the leader assign by the old set, and the member refuses it
    subscriptions: bool = False

    def __attrs_post_init__(self):
        if not 0 <= self.chance <= 1 or (self.load_chance is not None and not 0 < self.load_chance <= 1) \
                or not 0 <= self.pause_chance <= 1:
            raise ValueError(f"a mix's chances must be in [0, 1], got {self.chance}, {self.load_chance} "
                             f"and {self.pause_chance}")
        allowed = set(_DISRUPTIONS) | set(_MIX_ONLY)
        unknown = set(self.kinds) - allowed
        if unknown or not self.kinds:
            raise ValueError(f"a mix's kinds must be some of {', '.join(sorted(allowed))}, got {self.kinds}")


#: The swarm's fault mixes by name. ``coordinator``: failovers and broker crashes, a group that
#: loads slowly (a large __consumer_offsets partition), so requests meet a coordinator still loading
#: and members of a generation that was never stored, and appends to __consumer_offsets that fail
#: (``append_error``: a SyncGroup's group record or an OffsetCommit not written); half its walks
#: begin with a Stable group and it crashes some consumers, so a running group rebalances under
#: it, and while the coordinator holds a generation it has not stored it offers a failover (the
#: new coordinator loads the older generation: Heartbeats and SyncGroups of the newer one are
#: answered ILLEGAL_GENERATION on live connections); ``clients``: consumers crashing, closing,
#: their clocks jumping; ``topics``: partitions added to the subscribed topic (the swarm gives these
#: worlds a metadata.max.age.ms that runs out, so the leader learns of them and rejoins) and a
#: second topic consumers change their subscriptions to and back, with some
#: crashes, closes, failovers and clock jumps. Every mix but the default has applications that pause between polls: a
#: rebalance, a failover or a reset then runs its course on the heartbeat thread alone (the
#: situations of the issue's "an application that stops polling between rebalance steps"). In the
#: ``coordinator`` and ``clients`` mixes some commits carry metadata too long for some partitions, so
#: one OffsetCommit answer mixes OFFSET_METADATA_TOO_LARGE with the others' outcome (and, with an
#: append failure waiting, with its mapped error, in an order the client acts on).
MIXES = {
    "default": Mix(),
    "heavy": Mix(0.5, weight=3, pause_chance=0.1, redeploys=True),
    "coordinator": Mix(0.5, ("failover", "failover", "broker_crash", "broker_restart", "append_error", "crash"), 0.1,
                       weight=4, pause_chance=0.1, oversized_commits=True, stalls=True, unstored_failovers=True,
                       warm_start=True, redeploys=True),
    "clients": Mix(0.5, ("crash", "shutdown", "clock_jump"), weight=3, pause_chance=0.2, oversized_commits=True,
                   stalls=True, wakeups=True, commit_loop=True, joining_shutdowns=True, redeploys=True, deletes=True,
                   sync_commits=True),
    "topics": Mix(0.3, ("add_partitions", "add_partitions", "crash", "close", "failover", "clock_jump"), weight=2,
                  pause_chance=0.05, subscriptions=True),
}
DEFAULT_MIX = MIXES["default"]


_ALPHABETS: dict = {}


def _alphabet(faults: str, disrupt: bool, mix: Mix, static: bool = False) -> frozenset:
    """The kinds the walker takes from :func:`model.events.offers` (the rest it draws blind, see
    :func:`enabled_events`): the protocol's own events; under every fault, in worlds with static
    members (*static*, where a restart is KIP-345's business), a dead process's restart, and where
    the mix has them its redeploy; drops and
    disconnects while the fault budget lasts; the shutdown of a joining consumer and wakeups where
    the mix has them."""
    key = (faults == "all", disrupt, mix.joining_shutdowns, mix.wakeups, mix.redeploys, static, mix.subscriptions)
    kinds = _ALPHABETS.get(key)
    if kinds is None:
        kinds = {"poll", "heartbeat", "commit", "connect", "deliver", "load", "late"}
        if faults == "all":
            kinds |= ({"restart"} if static else set()) | ({"shutdown"} if mix.joining_shutdowns else set())
            kinds |= {"redeploy"} if mix.redeploys else set()
        if disrupt:
            kinds |= {"drop", "disconnect"}
        if mix.wakeups:
            kinds.add("wakeup")
        if mix.subscriptions:
            kinds.add("subscribe")
        kinds = _ALPHABETS[key] = frozenset(kinds)
    return kinds


_PAUSES = frozenset({"pause"})
_FAILOVERS = frozenset({"failover"})
_DELETES = frozenset({"delete_group"})


def enabled_events(world: World, rng: random.Random, faults: str, faults_left: int, mix: Mix = DEFAULT_MIX) -> list:
    """Candidate events for the next step, with repetition as weight (:func:`_candidates`, each
    built)."""
    return [cls(*fields) for cls, fields in _candidates(world, rng, faults, faults_left, mix)]


def _candidates(world: World, rng: random.Random, faults: str, faults_left: int, mix: Mix = DEFAULT_MIX) -> list:
    """Candidate events for the next step, with repetition as weight, each as ``(event class,
    fields after the kind)``: a walk builds only the one it draws (an event is a typed tuple, a
    tenth of a step's time to build; a step offers a dozen). *mix* says which disruptions and how
    often (the default mix makes the same draws as before mixes existed).

    What the world offers comes from :func:`model.events.offers` (the one list of enabled events
    the explorer and the Hypothesis machines use too), over the walker's :func:`_alphabet`; the
    walker weights each offer and fixes its parameter from the step's pick bits (16 random bits
    drawn first): per client, a dead static member's restart in half the steps (``processed`` from
    the pick; a recovery, not a fault: it spends none of the budget, a supervisor restarts the
    process while the faults go on, and the settle phase has none), and in mixes with redeploys
    its redeploy (``settings`` from the pick, among those its group still settles with:
    :func:`model.config.settling_settings`; dynamic members' too); a live consumer's poll three
    times, a closing one's once; the heartbeat thread twice; a commit (in the mixes with oversized
    commits an eighth of them carry metadata too long for some partitions, ``which`` from the
    pick); a joining consumer's shutdown while an answer waits unread (``4 * weight`` times, mixes
    with joining shutdowns); a wakeup in an eighth of the steps (mixes with wakeups; not while the
    application is busy); a subscription change, offered twice, in a quarter of the steps (mixes with
    subscriptions, worlds with a second topic; the set from the pick); per slot a connect twice, a due delivery four times per direction, one
    drop (its direction from the pick when both ends carry messages) and, for three open links in
    ten (a draw each), a disconnect (``processed`` from the pick: lost or handled a quarter each,
    late half). Then the walker's own draws: an application's pause or stall (a random client,
    taken if the world offers it one), the coordinator's load (twice, at the mix's load chance),
    the oldest broken connection's late request (one step in five), ticks (three of the small
    steps, one boundary), and while the fault budget lasts the mix's disruptions, drawn blind from
    the vocabulary's classes and domains (a random client and broker; the step refuses what the
    world does not allow, and that draw is spent).

    This runs before every step of every walk, so it is written for speed, and the random draws
    go through :func:`below`. The draws, their order, and so every seed's schedule are those of the
    walker before :func:`model.events.offers` existed (the list it built by hand), which were the
    plain ``rng.choice``/``rng.randrange`` spelling's."""
    cfg = world.config
    getrandbits = rng.getrandbits
    pick = getrandbits(16)
    events = []
    add = events.append
    now = world.now
    clients = world.clients
    disrupt = faults != "none" and faults_left > 0
    paused = False  # the pause draws come after every client's offers, before the load's
    alphabet = _alphabet(faults, disrupt, mix, bool(cfg.static_clients))
    for cls, fixed, values in offers(world, alphabet, empty_commits=mix.commit_loop):
        if cls is Poll:
            poll = (Poll, (fixed[0], pick))
            if clients[fixed[0]].closing_deadline_ms is None:  # live
                events += (poll, poll, poll)
            else:  # closing: close() goes on
                add(poll)
        elif cls is Deliver:
            for to_broker in values:
                deliver = (Deliver, (fixed[0], fixed[1], to_broker, pick))
                events += (deliver, deliver, deliver, deliver)
        elif cls is Heartbeat:
            heartbeat = (Heartbeat, (fixed[0], pick))
            events += (heartbeat, heartbeat)
        elif cls is Connect:
            connect = (Connect, (fixed[0], fixed[1], pick))
            events += (connect, connect)
        elif cls is Commit:
            c = fixed[0]
            if mix.oversized_commits and clients[c].assignment and not (pick >> 8) & 7:
                add((CommitOversized, (c, OVERSIZED[(pick >> 11) % len(OVERSIZED)], pick)))
            elif mix.sync_commits and clients[c].assignment and not (pick >> 5) & 3:
                add((CommitSync, (c, COMMIT_SYNC_TIMEOUTS[(pick >> 13) % len(COMMIT_SYNC_TIMEOUTS)], pick)))
            else:
                add((Commit, (c, pick)))
        elif cls is Drop:
            add((Drop, (fixed[0], fixed[1], values[pick & 1] if len(values) > 1 else values[0], pick)))
        elif cls is Disconnect:
            if rng.random() < 0.3:
                add((Disconnect, (fixed[0], fixed[1], 2 if pick & 2 else pick & 1, pick)))
        elif cls is Restart:
            if not (pick >> 12) & 1:
                add((Restart, (fixed[0], 2 if pick & 2 else pick & 1, pick)))
        elif cls is Redeploy:  # back to the world's settings, or to one its group still settles with
            settling = settling_settings(cfg)
            values = [v for v in values if v in settling]
            add((Redeploy, (fixed[0], values[(pick >> 4) % len(values)], pick)))
        elif cls is Shutdown:
            if _joining_with_answer(clients[fixed[0]]):
                events += ((Shutdown, (fixed[0], pick)),) * (4 * mix.weight)
        elif cls is Subscribe:
            if not (pick >> 6) & 3:
                subscribe = (Subscribe, (fixed[0], values[(pick >> 10) % len(values)], pick))
                events += (subscribe, subscribe)
        elif cls is Wakeup:
            if idle(clients[fixed[0]], now) and not (pick >> 5) & 7:
                add((Wakeup, (fixed[0], WAKEUP_LANDINGS[(pick >> 9) % len(WAKEUP_LANDINGS)], pick)))
        else:  # the world's: load, late
            if not paused:
                paused = True
                if mix.pause_chance:
                    _pause(world, rng, mix, pick, events)
            if cls is Load:
                if mix.load_chance is None or rng.random() < mix.load_chance:
                    load = (Load, (fixed[0], pick))
                    events += (load, load)
            elif rng.random() < 0.2:  # Late: a read request waits in the broker's queue a while
                add((Late, (world.orphans[0][0], pick)))  # the oldest broken connection's broker
    if not paused and mix.pause_chance:
        _pause(world, rng, mix, pick, events)
    tick = (Tick, (TICKS[below(getrandbits, len(TICKS))], pick))
    events += (tick, tick, tick)
    boundaries = _BOUNDARIES[1] if _BOUNDARIES[0] is cfg else _boundaries_of(cfg)
    add((Tick, (boundaries[below(getrandbits, len(boundaries))], pick)))
    leader = world.leader
    if disrupt and mix.unstored_failovers and faults == "all" and leader is not None and _unstored(world):
        for _, _, others in offers(world, _FAILOVERS):  # which live broker: the step's pick bits, no draw more
            events += ((Failover, (others[(pick >> 3) % len(others)], pick)),) * (4 * mix.weight)
    if disrupt and mix.deletes and faults == "all" and leader is not None:
        for _ in offers(world, _DELETES):  # the group is Empty: no draw more
            events += ((DeleteGroup, (pick,)),) * mix.weight
    if disrupt:
        c = below(getrandbits, cfg.clients)
        b = below(getrandbits, cfg.brokers)
        if (c, b) in world.partitioned:  # of the pair's partition and heal, the one that applies
            add((Heal, (c, b, pick)))
        elif rng.random() < 0.3:
            add((Partition, (c, b, pick)))
        if faults == "all" and rng.random() < mix.chance:
            kinds = mix.kinds
            cls = EVENTS[kinds[below(getrandbits, len(kinds))]]
            if cls.ACTOR == "b":  # broker_crash, broker_restart, failover: the drawn broker
                disruption = (cls, (b, pick))
            elif cls.PARAM is None:  # crash, close, shutdown: the drawn client
                disruption = (cls, (c, pick))
            else:  # clock_jump (of the drawn client), append_error, add_partitions: a value of the domain
                domain = cls.DOMAIN
                value = domain[below(getrandbits, len(domain))]
                disruption = (cls, (c, value, pick) if cls.ACTOR == "c" else (value, pick))
            events += (disruption,) * mix.weight
    return events


def _pause(world: World, rng: random.Random, mix: Mix, pick: int, events: list) -> None:
    """The mix's application pauses: at its pause chance, a random client's, if the world offers
    that client one (a stall instead, by the pick's bits, in mixes with stalls); *weight* copies."""
    if mix.pause_chance and rng.random() < mix.pause_chance:
        getrandbits = rng.getrandbits
        c = below(getrandbits, world.config.clients)
        for _, fixed, pauses in offers(world, _PAUSES):
            if fixed[0] == c:
                kind = Stall if mix.stalls and pick & 4 else Pause  # the step's pick: no draw more
                events += ((kind, (c, pauses[below(getrandbits, len(pauses))], pick)),) * mix.weight
                break


def _joining_with_answer(client) -> bool:
    """A consumer joining (PREPARING_REBALANCE) with an answer delivered it has not read yet: the
    moment the clients mix offers its shutdown (KAFKA-7909's race)."""
    return client.state == PREPARING_REBALANCE and any(notice[0] == "received" for notice in client.notices)


def _unstored(world: World) -> bool:
    """The coordinator holds a generation newer than the group record last written (a loaded
    coordinator would go back to the older one)."""
    group = world.group
    stored = world.persisted
    return group is not None and group.generation > (0 if stored is None else stored.generation)


FAULT_KINDS = frozenset(_ALL_FAULTS + _MIX_ONLY)
MAX_DRAWS_PER_STEP = 4  # a walk gives up on reaching its step count after 4 draws per step


def _busy(world: World) -> bool:
    """Something can move without time passing: messages on a link, requests not yet transmitted,
    completions not yet fired. (An in-flight request the coordinator has parked is not busy.)"""
    for c, client in enumerate(world.clients):
        if not client.alive:
            continue
        if client.pending_completions or client.pending_disconnects or client.notices:
            return True
        for slot in range(len(client.conns)):
            link = world.links[c][slot]
            if link.to_broker or link.to_client or client.unsent[slot]:
                return True
    return False


TURNS = 8  # a settle round's turns at most: deliveries, heartbeats and polls, then a latency tick
QUIET_TICK_MAX_MS = 1000  # the longest jump between settle rounds


def _arriving(world: World) -> bool:
    """A message is on its way that has not arrived yet (the head of its link arrives later)."""
    now = world.now
    for row in world.links:
        for link in row:
            if (link.to_broker and link.to_broker[0][0] > now) or (link.to_client and link.to_client[0][0] > now):
                return True
    return False


def _next_quiet_tick(world: World) -> int:
    """How far time may jump while nothing is in transit: to the next coordinator timer, client
    heartbeat or end of a client's stall, at most 1 s (so every timer is met by a poll before it
    matters), at least 1 ms."""
    targets = []
    group = world.group
    if group is not None:
        from model.group import next_deadline

        deadline = next_deadline(group)
        if deadline is not None:
            targets.append(deadline)
    for client in world.clients:
        if client.live and client.heartbeat_enabled:
            targets.append(client.heartbeat_due_ms - client.clock_offset_ms)
        if client.stalled_until_ms is not None:  # a process resumes (a slow assignor's SyncGroup leaves)
            targets.append(client.stalled_until_ms)
    targets = [t for t in targets if t > world.now]  # an overdue timer is the polls' business
    gap = min(targets) - world.now if targets else QUIET_TICK_MAX_MS
    return max(1, min(gap, QUIET_TICK_MAX_MS))


METADATA_AGE_BOUND = 3_600_000  # a longer metadata.max.age.ms is "never" (the default: 2**62)


def quiet_time_bound_ms(config) -> int:
    """How much quiet time the settle phase grants at least before it judges the eventually
    properties: twice a member's worst chain of timers after the last fault (its session expires,
    then a rebalance runs to its rebalance timeout, an in-flight request to its request timeout,
    an empty group's first rebalance waits group.initial.rebalance.delay.ms). Why: with long
    timeouts (session.timeout.ms=300000) the group cannot be stable before the session of a
    crashed member expires, however many rounds pass; Kafka promises convergence in time, not in
    rounds."""
    rebalance = config.max_poll_interval_ms
    if config.join_group_version == 0:  # v0 has no rebalance timeout: the coordinator uses the session's
        rebalance = max(rebalance, config.session_timeout_ms)
    chain = config.session_timeout_ms + rebalance + config.request_timeout_ms + config.initial_rebalance_delay_ms
    if config.metadata_max_age_ms <= METADATA_AGE_BOUND:  # partitions added: the leader learns at its refresh
        chain += config.metadata_max_age_ms
    return 2 * chain


class _Quiet(dict):
    """The settle phase's events of one class, built once (it tries them by the thousand):
    ``cache[fields]`` is ``cls(*fields, 0)`` (a dict lookup, no call)."""

    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def __missing__(self, fields):
        event = self[fields] = self.cls(*fields, 0) if type(fields) is tuple else self.cls(fields, 0)
        return event


_POLLS = _Quiet(Poll)  # c -> Poll(c, 0)
_HEARTBEATS = _Quiet(Heartbeat)  # c -> Heartbeat(c, 0)
_CONNECTS = _Quiet(Connect)  # (c, slot) -> Connect(c, slot, 0)
_DELIVERS = _Quiet(Deliver)  # (c, slot, to_broker) -> Deliver(c, slot, to_broker, 0)


def settle(world: World, checker: Checker | None, trace: Trace | None, schedule: list, max_rounds: int = 600,
           until_stable: bool = False, max_events: int | None = None, companion=None, on_step=None):
    """Quiet time: heal partitions, restart brokers, then rounds of deliveries, connects, polls and
    heartbeats, until the eventually properties hold or *max_rounds* have passed and (unless
    *until_stable*) at least :func:`quiet_time_bound_ms` of simulated time. Within a round, messages
    flow (1 ms ticks for their latency) until nothing is in transit; between rounds time jumps to the
    next timer (at most 1 s). Returns (world, violation or None): the first always violation met on
    the way, or (unless *until_stable*, which only wants the quiet time) the eventually violation.
    *max_events* bounds a burst of quiet time that cannot converge (a partition, a dead broker).
    *companion* and *on_step* (see :func:`walk`) see every event too.

    A turn in which nothing happened, with no message still on its way, ends the round: the world
    is stuck (a partition, a broker down, a reconnect or retry backoff) and the turns left would
    only repeat it a latency tick at a time; time jumps on as at the end of any busy round (250 ms).
    *max_events* is charged what those turns would have spent, so a burst covers the same time.

    Idle calls are not offered (issue 37: they were nearly half the events of a campaign and told
    nothing): a heartbeat-thread iteration, or a poll after a round's first turn, that would only
    move the consumer's timers (:func:`_idle`: nothing sent, read, fired or changed) is skipped, as
    Kafka's heartbeat thread sleeps while it has nothing to do and an application is free to poll
    less often while messages are in flight; a round's first poll of each consumer is skipped the
    same way only while its poll timer has more than :func:`poll_timer_margin_ms` left, so no
    max.poll.interval.ms expires for want of it. The model decides (a step of the model world,
    thrown away); the companion never sees a skipped event, nor does the schedule, so a replay
    repeats the run exactly."""
    budget_end = None if max_events is None else len(schedule) + max_events

    def stopped() -> bool:
        """At the first violation (the schedule ends with the failing event) or out of budget."""
        return violation is not None or (budget_end is not None and len(schedule) >= budget_end)

    def apply(w, ev, stepped=None):
        nonlocal violation
        if stopped():
            return w
        new, log = step(w, ev) if stepped is None else stepped
        if companion is not None:
            new, log, violation = _beside(companion, checker, w, ev, new, log, schedule, trace, on_step)
            if violation is not None:
                return new
        if new is not w:
            schedule.append(ev)
            if trace is not None:
                trace.add(ev, new)
            if checker is not None:
                violation = checker.check(w, new, ev, log)
            if on_step is not None:
                on_step(w, ev, new, log)
        return new

    def unless_idle(w, ev, margin=None):
        """*ev* (a heartbeat or a poll), unless the model says it would be idle (:func:`_idle`):
        then it is not offered at all (neither the model, the companion nor the schedule sees it),
        and it counts against *max_events* as an applied event would."""
        nonlocal budget_end
        if stopped():
            return w
        new, log = step(w, ev)
        if _idle(w, new, ev.c, log) and (margin is None or _poll_timer_left(w, new, ev.c) > margin):
            if budget_end is not None:
                budget_end -= 1
            return w
        return apply(w, ev, (new, log))

    violation = None
    if not until_stable:
        for c, b in sorted(world.partitioned):
            world = apply(world, Heal(c, b, 0))
        for b, broker in enumerate(world.brokers):
            if not broker.alive:
                world = apply(world, BrokerRestart(b, 0))
    latency = max(1, world.config.latency_ms)
    poll_margin = poll_timer_margin_ms(world.config)
    quiet_until = None if until_stable else world.now + quiet_time_bound_ms(world.config)
    rounds = 0
    while rounds < max_rounds or (quiet_until is not None and world.now < quiet_until):
        rounds += 1
        if stopped():
            return world, violation
        if world.leader is not None and world.brokers[world.leader].loading:
            world = apply(world, Load(world.leader, 0))
        for turn in range(TURNS):
            turn_start, calls = world, 0
            for c, client in enumerate(world.clients):
                if not client.alive:
                    continue
                for slot in range(len(client.conns)):
                    if world.clients[c].conns[slot].state == CONNECTING:
                        world = apply(world, _CONNECTS[c, slot])
                    for to_broker in (True, False):
                        while True:
                            link = world.links[c][slot]
                            queue = link.to_broker if to_broker else link.to_client
                            if not queue or queue[0][0] > world.now:
                                break
                            before, world = world, apply(world, _DELIVERS[c, slot, to_broker])
                            if world is before:
                                break  # partitioned or the broker is down
            for c, client in enumerate(world.clients):
                if client.live or client.closing:
                    if client.heartbeat_enabled:
                        world, calls = unless_idle(world, _HEARTBEATS[c]), calls + 1
                    world, calls = unless_idle(world, _POLLS[c], None if turn else poll_margin), calls + 1
            if not _busy(world):
                break
            if world is turn_start and not _arriving(world):
                # stuck (a partition, a broker down, a backoff): the turns left would be the same
                # again, a latency tick each; the round ends and time jumps on instead, and the
                # budget is charged what those turns would have spent
                if budget_end is not None:
                    budget_end -= (TURNS - 1 - turn) * (calls + 1)
                break
            world = apply(world, Tick(latency, 0))
        if checker is not None and violation is None and checker.check_eventually(world) is None:
            if not world.orphans:
                return world, None
            # the brokers handle what they read from broken connections, as late as can be: the
            # group has settled meanwhile (a stale request's best chance to meet a newer
            # generation); then it must settle again
            for b in sorted({o[0] for o in world.orphans}):
                while any(o[0] == b for o in world.orphans) and violation is None:
                    before, world = world, apply(world, Late(b, 0))
                    if world is before:
                        break
            continue
        world = apply(world, Tick(250 if _busy(world) else _next_quiet_tick(world), 0))
    if violation is None and checker is not None and not until_stable:
        violation = checker.check_eventually(world)
    return world, violation


#: the consumer state's fields an idle heartbeat-thread iteration or poll moves: the timers' clock
#: (Timer.update) and the poll timer's restart (``Heartbeat.poll``: max.poll.interval.ms)
_IDLE_CLOCKS = ("poll_deadline_ms", "heartbeat_clock_ms")
_CLOCK_AT = sorted(ClientState._fields.index(f) for f in _IDLE_CLOCKS)
assert _CLOCK_AT[1] == _CLOCK_AT[0] + 1, "the idle clocks are neighbours in ClientState (one slice each side)"
_CLOCKS_FROM, _CLOCKS_TO = _CLOCK_AT[0], _CLOCK_AT[1] + 1
_CLIENTS_AT, _STEPS_AT = World._fields.index("clients"), World._fields.index("steps")
assert _CLIENTS_AT < _STEPS_AT


def _idle(world: World, new: World, c: int, log: list) -> bool:
    """Whether consumer *c*'s heartbeat or poll that took *world* to *new* (with *log*) did
    nothing but move its timers' clock and restart its poll timer: nothing sent, read or fired,
    no state, link, group or other consumer changed."""
    if new is world:
        return False
    only = polled(c)
    for entry in log:
        if entry != only:
            return False
    if (new[:_CLIENTS_AT] != world[:_CLIENTS_AT] or new[_CLIENTS_AT + 1:_STEPS_AT] != world[_CLIENTS_AT + 1:_STEPS_AT]
            or new[_STEPS_AT + 1:] != world[_STEPS_AT + 1:]):
        return False
    before, after = world.clients, new.clients
    if before[:c] != after[:c] or before[c + 1:] != after[c + 1:]:
        return False
    a, b = before[c], after[c]
    return a[:_CLOCKS_FROM] == b[:_CLOCKS_FROM] and a[_CLOCKS_TO:] == b[_CLOCKS_TO:]


def _poll_timer_left(world: World, new: World, c: int) -> int:
    """How long consumer *c*'s poll timer had left when its poll (*world* → *new*) restarted it."""
    return world.clients[c].poll_deadline_ms - new.clients[c].heartbeat_clock_ms


def poll_timer_margin_ms(config) -> int:
    """The poll timer a settle round's first poll may leave unrestarted (when it would do nothing
    else): twice the longest a round can take (its turns of latency ticks, then a jump of at most
    :data:`QUIET_TICK_MAX_MS`), so the next round's first poll comes well before it expires."""
    return 2 * (QUIET_TICK_MAX_MS + TURNS * max(1, config.latency_ms))


def _beside(companion, checker, world, event, new, log, schedule, trace, on_step=None):
    """Run *event* on the companion too. On a problem the event ends the schedule (whether or not
    the model applied it) and the companion's view is folded into the trace; but if the model's
    own step broke a property, that is the violation reported (a broken model explains a
    disagreement, not the other way round). *on_step* sees the failing event too when the model
    applied it, as it does a failing event without a companion (so coverage counts the states the
    model reached at the failing step, as the catalogue's sometimes counters do)."""
    new, log, problem = companion.after(world, event, new, log)
    if problem is not None:
        schedule.append(event)
        if trace is not None:
            trace.add(event, new)
            trace.mix(companion.view())
        if checker is not None and new is not world:
            problem = checker.check(world, new, event, log) or problem
        if on_step is not None and new is not world:
            on_step(world, event, new, log)
    return new, log, problem


def _finish(companion, world, trace):
    """The companion's last look at the end of a run (a Differential's full comparison,
    :meth:`properties.systems.differential.Differential.finish`): a Violation or None; on a
    problem its view is folded into the trace, as :func:`_beside` does."""
    finish = getattr(companion, "finish", None)
    problem = None if finish is None else finish(world)
    if problem is not None and trace is not None:
        trace.mix(companion.view())
    return problem


def walk(
    seed: int,
    config: Config,
    steps: int = 50,
    faults: str = "all",
    max_faults: int = 6,
    eventually: bool = True,
    quiet_rate: float = 0.04,
    companion=None,
    on_step=None,
    hash_trace: bool = True,
    reseed: tuple = (),
    mix: str = "default",
) -> RunResult:
    """One seeded interleaving of the model world, checked after every step: *steps* random events
    applied (a drawn event that changes nothing is not one of them), with quiet bursts at
    *quiet_rate* and, if *eventually*, the settle phase after them.

    *companion* (optional) is a second world that takes every event the model is offered, such as
    the implementation beside the model (:class:`properties.systems.differential.Differential`): its
    ``after(world, event, new, log)`` returns the model world and log to continue from and a
    :class:`Violation` or None; its ``view()`` is what the trace records of it on a problem.
    *on_step* (optional) is called as ``on_step(world, event, new_world, log)`` after every applied
    event (coverage collection). *hash_trace* = False skips the trace hash (a tenth of a walk's
    time), for campaigns: they keep schedules, and a replay of one recomputes its hash.

    *reseed* (guided search, :mod:`properties.explore.guided`): ``((position, text), ...)`` in
    ascending position; once the schedule holds *position* events the walk draws from
    ``random.Random(text)`` instead. A walk reseeded at *position* repeats, event for event, the
    walk without that reseed up to there (the draws before it are the same), then goes elsewhere.
    *mix*: the name of the fault mix (:data:`MIXES`)."""
    if mix not in MIXES:
        raise ValueError(f"mix must be one of {', '.join(MIXES)}, got {mix!r}")
    fault_mix = MIXES[mix]
    rng = random.Random(seed)
    reseeds = list(reseed)
    world = initial_world(config)
    checker = Checker(config)
    trace = Trace() if hash_trace else None
    schedule: list = []
    faults_left = max_faults
    violation = None
    applied = draws = 0
    if fault_mix.warm_start and seed % 2:
        world, violation = settle(world, checker, trace, schedule, max_rounds=40, until_stable=True, max_events=600,
                                  companion=companion, on_step=on_step)
    # *steps* events applied: a drawn event that changes nothing (a delivery the broker cannot take
    # yet, a crash of a crashed client) does not count, but the draws are bounded all the same
    while applied < steps and draws < MAX_DRAWS_PER_STEP * steps and violation is None:
        while reseeds and len(schedule) >= reseeds[0][0]:
            rng = random.Random(reseeds.pop(0)[1])
        if rng.random() < quiet_rate:
            # a burst of quiet time: the group settles, so later disruptions hit a working group
            world, violation = settle(world, checker, trace, schedule, max_rounds=rng.choice((2, 8, 40)), until_stable=True,
                                      max_events=300, companion=companion, on_step=on_step)
            continue
        candidates = _candidates(world, rng, faults, faults_left, fault_mix)
        cls, fields = candidates[below(rng.getrandbits, len(candidates))]
        event = cls(*fields)
        draws += 1
        new, log = step(world, event)
        if companion is not None:
            new, log, violation = _beside(companion, checker, world, event, new, log, schedule, trace, on_step)
            if violation is not None:
                world = new
                break
        if new is world:
            continue
        applied += 1
        schedule.append(event)
        if trace is not None:
            trace.add(event, new)
        if event.kind in FAULT_KINDS:
            faults_left -= 1
        violation = checker.check(world, new, event, log)
        if on_step is not None:
            on_step(world, event, new, log)
        world = new
    walked = len(schedule)
    if violation is None and eventually:
        world, violation = settle(world, checker, trace, schedule, companion=companion, on_step=on_step)
    if violation is None and companion is not None:
        violation = _finish(companion, world, trace)
    return RunResult(
        seed=seed,
        schedule=tuple(schedule),
        verdict="ok" if violation is None else "counterexample",
        violation=violation,
        step=None if violation is None else len(schedule) - 1,
        trace_hash=None if trace is None else trace.hexdigest(),
        world=world,
        steps=len(schedule),
        coverage=dict(checker.coverage),
        companion=companion,
        walked=walked,
    )


def replay(config: Config, schedule, eventually_after: int | None = None, companion=None, on_step=None,
           settle_after: bool = False) -> RunResult:
    """Re-run a schedule exactly, checking every step (and on the *companion*, if given, as
    :func:`walk`). The eventually properties are checked after the whole schedule only if it was
    recorded with a settle phase (*eventually_after* = the number of events before the settle
    phase began). *settle_after*: run a settle phase after the schedule, as :func:`walk` does,
    and judge the eventually properties after it (its events join the result's schedule): how a
    shrinker tries a shortened schedule for an eventually failure, which judged at once would
    fail for want of quiet time, not for the bug."""
    world = initial_world(config)
    checker = Checker(config)
    trace = Trace()
    applied: list = []
    violation = None
    for event in schedule:
        event = as_event(event)  # a stored schedule's plain tuple or JSON list: its typed event
        new, log = step(world, event)
        if companion is not None:
            new, log, violation = _beside(companion, checker, world, event, new, log, applied, trace, on_step)
            if violation is not None:
                world = new
                break
        if new is world:
            continue
        applied.append(event)
        trace.add(event, new)
        violation = checker.check(world, new, event, log)
        if on_step is not None:
            on_step(world, event, new, log)
        world = new
        if violation is not None:
            break
    if violation is None and settle_after:
        world, violation = settle(world, checker, trace, applied, companion=companion, on_step=on_step)
    if violation is None and companion is not None:
        violation = _finish(companion, world, trace)
    if violation is None and eventually_after is not None and not settle_after:
        violation = checker.check_eventually(world)
    return RunResult(0, tuple(applied), "ok" if violation is None else "counterexample", violation,
                     None if violation is None else len(applied) - 1, trace.hexdigest(), world, len(applied),
                     dict(checker.coverage), companion)
