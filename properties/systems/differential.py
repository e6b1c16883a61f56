"""Model versus implementation, step by step (issue 3).

The model world and the implementation world (:mod:`properties.systems.simworld`) consume the same
schedule. After every event their canonical observations are compared, with member ids replaced by
stable aliases (``c<client>.<n>``: the n-th member id seen for that client), because Kafka's member
ids are random. Where Kafka leaves a choice open, the choices go one of two ways:

* the implementation follows the model for what the world decides (which node leastLoadedNode's
  random scan starts at, whether a broken connection's requests were processed, which broker
  becomes the new partition leader);
* the model follows the implementation for what the coordinator decides (leader re-pick, the
  protocol-vote tie-break, and where a new member id sorts among the ids its client already has in
  the group, which Kafka's random UUIDs decide and the assignors' sort makes matter): when the
  observations differ and the model made such a choice, the model's step is re-run with each other
  allowed outcome, and one that matches is accepted. So that the last is seen when it is made, the
  compared observation includes the order of the group's member ids, pending ones too.

The first event after which the two disagree (or one applies the event and the other does not) is
reported with both observations side by side.
"""

from __future__ import annotations

import itertools
import re

import attrs

from model import group as grp
from model.config import Config
from model.events import Tick, as_event
from properties.catalogue import ALWAYS, Property, Violation
from model.world import initial_world, step
from properties.systems.simworld import SimWorld
from properties.systems.watchdog import Crash, guarded
from properties.explore.walker import observe

_FOLLOWED_BY_MODEL = ("leader", "protocol", "member_order")

AGREEMENT = Property(
    "impl-matches-model", ALWAYS,
    "After every event the implementation's canonical observation (time, partition leader, group "
    "state, generation, leader, members and protocol, each consumer's member state, generation, "
    "member id, assignment, coordinator and liveness, committed offsets; member ids aliased) equals "
    "the model's, and both apply exactly the same events; within a tick, also after every timer that "
    "fires on either side on the way (so a state one timer makes and a later one undoes is seen). Where Kafka leaves a choice open, any "
    "outcome the model allows is accepted.",
    "issue 3 (differential check)",
)
CRASH = Property(
    "impl-no-crash", ALWAYS,
    "No event makes the implementation raise: an exception escaping impl/ (a coordinator, the "
    "network client, the broker) is reported with the exception and the innermost impl/ frame it "
    "came from, and shrunk like any other counterexample, instead of ending the walk with a traceback.",
    "issue 14 (sharper eyes)",
)
HANG = Property(
    "impl-no-hang", ALWAYS,
    "No event keeps the implementation busy for more than properties.systems.watchdog.HANG_SECONDS "
    "of wall time (a loop that never exits, a wait that is never satisfied): a watchdog interrupts it "
    "and reports where it was.",
    "issue 14 (sharper eyes)",
)
NO_BUSY_LOOP = Property(
    "impl-no-busy-loop", ALWAYS,
    "A consumer's poll never takes its blocking time from a timer nobody runs: after every poll, what "
    "a poll with a long timeout would block for (ConsumerCoordinator.timeToNextPoll) is zero only while "
    "the member heartbeats (COMPLETING_REBALANCE or STABLE, where the heartbeat thread sends the due "
    "heartbeat and resets the timer). Unjoined or preparing a rebalance, the heartbeat timer stands "
    "still and, once expired, would make every poll return at once for as long as the rebalance lasts "
    "(a busy loop: AbstractCoordinator.timeToNextHeartbeat answers Long.MAX_VALUE then).",
    "KAFKA-10134 (apache/kafka#8834); issue 14 (sharper eyes)",
)
#: The properties only the implementation beside the model has.
IMPL_PROPERTIES = (AGREEMENT, CRASH, HANG, NO_BUSY_LOOP)
_CLIENT = re.compile(r"^consumer-(\d+)-")


class Aliases:
    """Member id → ``c<client>.<n>``, in the order ids of each client first appear."""

    def __init__(self):
        self._by_id: dict = {}
        self._per_client: dict = {}

    def __call__(self, member_id):
        if not member_id:
            return member_id
        alias = self._by_id.get(member_id)
        if alias is None:
            match = _CLIENT.match(member_id)
            client = match.group(1) if match else "?"
            n = self._per_client.get(client, 0)
            self._per_client[client] = n + 1
            alias = self._by_id[member_id] = f"c{client}.{n}"
        return alias

    def copy(self) -> "Aliases":
        twin = Aliases()
        twin._by_id, twin._per_client = dict(self._by_id), dict(self._per_client)
        return twin

    def mark(self) -> int:
        """How many ids have aliases: :meth:`upto` of it is this map as it is now."""
        return len(self._by_id)

    def upto(self, mark: int) -> "Aliases":
        """A copy holding only the first *mark* ids' aliases (what the map was at :meth:`mark`):
        aliases are only ever added, in order, so the first ones are the map of then."""
        twin = Aliases()
        for member_id, alias in itertools.islice(self._by_id.items(), mark):
            twin._by_id[member_id] = alias
            client = alias[1:alias.index(".")]
            twin._per_client[client] = twin._per_client.get(client, 0) + 1
        return twin


def canonical(obs: tuple, alias: Aliases, pending=None) -> tuple:
    """*obs* (:func:`properties.explore.walker.observe`'s shape) with member ids aliased. With
    *pending* (the group's pending member ids) the group gains a sixth field, the id order: every
    member and pending id, aliased, in the order of the raw ids (what the assignors sort by)."""
    now, leader, group, clients, committed = obs
    clients = tuple(canonical_client(client, alias) for client in clients)
    return (now, leader, canonical_group(group, alias, pending), clients, committed)


def canonical_client(client: tuple, alias: Aliases) -> tuple:
    """One client of an observation (member state, generation, member id, assignment,
    coordinator, live) with its member id aliased."""
    s, g, m, a, coord, live = client
    return (s, g, alias(m), tuple(a), coord, live)


def canonical_group(group: tuple | None, alias: Aliases, pending=None) -> tuple | None:
    """The group of an observation with its member ids aliased (see :func:`canonical`)."""
    if group is None:
        return None
    state, generation, leader_id, members, protocol = group
    group = (state, generation, alias(leader_id), tuple(alias(m) for m in members), protocol)
    if pending is not None:
        ids = list(members) + [p for p in pending if p not in members]
        for m in ids:
            alias(m)  # in listed order, before sorting: aliases never depend on the raw ids
        group += (tuple(alias(m) for m in sorted(ids)),)
    return group


def _api(message) -> str:
    """The API a message on a link belongs to: its class name without the Request/Response(Data)
    suffix (the model's and the implementation's message classes are named after Kafka's). Named
    once per class (:data:`_API_OF`): it runs for every message in flight after every event."""
    kind = type(message)
    name = _API_OF.get(kind)
    if name is None:
        name = _API_OF[kind] = _api_of(kind)
    return name


def _api_of(kind: type) -> str:
    if issubclass(kind, (bytes, bytearray, memoryview)):
        return "frame"  # a wire world's encoded frame: counted, not named
    name = kind.__name__
    for suffix in ("RequestData", "ResponseData", "Request", "Response"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


_API_OF: dict = {}
_NO_NAMES: dict = {}  # a wire world's messages are all frames: none is named


def _frame(message) -> str:
    return "frame"


def model_in_flight(world, names: bool = True) -> tuple:
    """What is on the model's links: per client, per connection slot, the APIs of the requests on
    their way to the broker and of the answers on their way back, in order. Without *names* (a wire
    world, whose implementation side carries encoded frames) every message is a ``frame``."""
    return tuple(model_links_in_flight(links, names) for links in world.links)


def model_links_in_flight(links: tuple, names: bool = True) -> tuple:
    """One client's part of :func:`model_in_flight`."""
    # the API's name by class without a call per message (this runs after most events)
    known, name = (_API_OF.get, _api) if names else (_NO_NAMES.get, _frame)
    return tuple([(tuple([known(m[3].__class__) or name(m[3]) for m in link.to_broker]),
                   tuple([known(m[3].__class__) or name(m[3]) for m in link.to_client]))
                  if link.to_broker or link.to_client else _EMPTY for link in links])


_EMPTY = ((), ())


def impl_in_flight(sim) -> tuple:
    """:func:`model_in_flight` of the implementation's world."""
    return tuple(impl_links_in_flight(selector) for selector in sim.selectors)


def impl_links_in_flight(selector) -> tuple:
    """One client's part of :func:`impl_in_flight`."""
    known = _API_OF.get
    return tuple([(tuple([known(m[2].__class__) or _api(m[2]) for m in link.to_broker]),
                   tuple([known(m[2].__class__) or _api(m[2]) for m in link.to_client]))
                  if link is not None and (link.to_broker or link.to_client) else _EMPTY
                  for link in selector.links])


def model_roles(world) -> tuple:
    """Which consumers believe they lead the group (ConsumerCoordinator.isLeader: set when a
    JoinGroup answer names them leader, cleared only by onJoinPrepare). The role decides who watches
    the topic's metadata for a rebalance (rejoinNeededOrPending's assignment snapshot), so a client
    that keeps it too long or drops it too early rebalances when Kafka's would not, later."""
    return tuple(client.is_leader for client in world.clients)


def impl_roles(sim) -> tuple:
    """:func:`model_roles` of the implementation's world."""
    return tuple(consumer.coordinator.is_leader for consumer in sim.consumers)


def model_view(world, alias: Aliases, names: bool = True) -> tuple:
    """All the differential compares of the model's world: the canonical observation (member ids
    aliased by *alias*, pending ones included), what is in flight, the leader roles."""
    return canonical(observe(world), alias, model_pending(world)) + (model_in_flight(world, names), model_roles(world))


def model_pending(world) -> tuple:
    """The model group's pending member ids (those handed out with MEMBER_ID_REQUIRED)."""
    g = world.group
    return () if g is None else tuple(p for p, _ in g.pending_members)


@attrs.frozen
class Divergence:
    index: int  # of the event in the schedule
    event: tuple
    model: tuple  # canonical observation after the event
    impl: tuple
    model_applied: bool
    impl_applied: bool
    recent: tuple  # the events before it
    at_ms: int | None = None  # for a tick: the time within it (a timer's due time) where they differ

    def describe(self) -> str:
        """One line: the event and the first fields where the two sides differ."""
        if self.model_applied != self.impl_applied:
            side = "the model" if self.model_applied else "the implementation"
            return f"{self.event!r} was applied only by {side}"
        where = f"after {self.event!r}" if self.at_ms is None else \
            f"after {self.event!r}, at {self.at_ms} ms within it (a timer's due time)"
        return f"{where}: " + "; ".join(differences(self.model, self.impl)[:3])


@attrs.frozen
class DiffResult:
    seed: int
    steps: int  # events both sides applied
    divergence: Divergence | None


_FIELDS = ("now", "partition leader", "group", "clients", "committed", "in flight", "leader role")
_GROUP_FIELDS = ("state", "generation", "leader", "members", "protocol", "member id order")
_CLIENT_FIELDS = ("member state", "generation", "member id", "assignment", "coordinator", "live")


def differences(model: tuple, impl: tuple) -> list:
    """Human-readable differences between two canonical observations, most specific first."""
    out = []
    for name, a, b in zip(_FIELDS, model, impl):
        if a == b:
            continue
        if name == "group" and a is not None and b is not None:
            out += [f"group {f}: model {x!r}, impl {y!r}" for f, x, y in zip(_GROUP_FIELDS, a, b) if x != y]
        elif name == "clients":
            for c, (ma, ia) in enumerate(zip(a, b)):
                out += [f"client {c} {f}: model {x!r}, impl {y!r}" for f, x, y in zip(_CLIENT_FIELDS, ma, ia) if x != y]
        elif name == "in flight":
            for c, (ma, ia) in enumerate(zip(a, b)):
                for slot, (mx, ix) in enumerate(zip(ma, ia)):
                    out += [f"client {c} slot {slot} {way}: model {x!r}, impl {y!r}"
                            for way, x, y in zip(("to broker", "to client"), mx, ix) if x != y]
        elif name == "leader role":
            out += [f"client {c} believes it leads the group (isLeader): model {x!r}, impl {y!r}"
                    for c, (x, y) in enumerate(zip(a, b)) if x != y]
        else:
            out.append(f"{name}: model {a!r}, impl {b!r}")
    return out


def _alternatives(log: list):
    """Every combination of other outcomes for the coordinator's choices logged in one step."""
    points = [(e.kind, e.candidates) for e in log if e.tag == "choice" and e.kind in _FOLLOWED_BY_MODEL]
    if not points:
        return
    kinds = [k for k, _ in points]
    for values in itertools.product(*[c for _, c in points]):
        yield dict(zip(kinds, values))


#: The differential compares everything, whatever an event touched, after every FULL_EVERY-th
#: event both sides applied and at the end of every interleaving (:meth:`Differential.finish`):
#: the safety net under the comparison of what each event touched.
FULL_EVERY = 16


class Differential:
    """The implementation world beside a model world, one event at a time (a companion of
    :func:`properties.explore.walker.walk`).

    :meth:`after` is called with every event the model was offered (applied or not), the model's
    world before and after it, and the step log. It applies the event to the implementation,
    compares the canonical observations, lets the model follow the coordinator's choices, and
    checks the always properties that can be read off the implementation's own state
    (:class:`properties.impl_checks.ImplChecker`). It returns the model world to continue from
    (the followed one) and the first problem, or None.

    **What an event touched.** Most events change one client or one link, so after an event only
    the parts it may have changed are compared (time, partition leader, group, committed offsets,
    and the clients it touched): on the model's side the clients whose state or links are no longer
    the same objects (the model's world is immutable, so this is exact), on the implementation's
    the clients its own hooks name (:attr:`properties.systems.simworld.SimWorld.touched`: the
    event's client, every client a broker answered or a crash cut). Where the two agree on those,
    they agree on everything as far as the hooks see; where they do not, everything is compared as
    before, aliases and all, so a divergence is reported exactly as a full comparison reports it.
    A full comparison also runs after every *full_every*-th event and at :meth:`finish`, so a
    change the hooks do not name (an implementation bug that reaches into another client) is still
    caught, a few events later. ``full_every=1`` compares everything after every event."""

    def __init__(self, config: Config, seed: int, full_every: int | None = None):
        from properties.impl_checks import ImplChecker

        full_every = FULL_EVERY if full_every is None else full_every  # read now: a test may set it
        if full_every < 1:
            raise ValueError(f"full_every must be at least 1, got {full_every!r}")
        self.config = config
        self.full_every = full_every
        self.sim = SimWorld(config, seed)
        self.model_alias, self.impl_alias = Aliases(), Aliases()
        self.impl_checker = ImplChecker(config)
        self.snapshot = self.impl_checker.snapshot(self.sim, self.sim._group())
        self.sim.touched.clear()
        self.recent: list = []
        self.index = 0
        self.divergence: Divergence | None = None
        self.last_model_obs = self.last_impl_obs = None
        self.failure = None  # a Crash or Hang of the implementation (the walk stops there)
        self._since_full = 0  # events compared by what they touched since the last full comparison
        self._last = None  # (index, event) of the last event either side applied
        self._forget()

    def _forget(self) -> None:
        """Drop what the comparison of touched parts remembers of the last agreement: per client
        (model client, model links, implementation row) last seen equal; the model's group and its
        canonical form; the implementation's group view and its canonical form."""
        self._agreed: list = [None] * self.config.clients
        self._model_group: tuple = (self, None)  # (model group object, canonical); `self`: nothing yet
        self._impl_group: tuple = (self, None)  # ((group observation, pending ids), canonical)

    def after(self, world, event: tuple, new, log: list):
        event = as_event(event)
        index = self.index
        self.index += 1
        if event.kind == "tick" and event.ms > 0 and self._next_stop(world, world.now + event.ms) is not None:
            new, log, problem = self._after_tick(world, event, index)
        else:
            new, log, problem = self._after_one(world, event, new, log, index, None)
        if problem is None and self.failure is None:
            self.recent.append(event)
        return new, log, problem

    def finish(self, world):
        """The full comparison at the end of an interleaving (*world*: the model's last), unless
        the last event was compared in full: a Violation, or None."""
        if self._since_full == 0 or self._last is None or self.divergence is not None or self.failure is not None:
            return None
        index, event = self._last
        return self._compare_all(None, event, world, index, None, [])[2]

    def _next_stop(self, world, end: int) -> int | None:
        """The first time strictly between now and *end* at which either side has a timer due."""
        dues = []
        if world.leader is not None and world.brokers[world.leader].alive:
            dues.append(grp.next_due(world.group, self.config))
        dues.append(self.sim.cluster.next_deadline())
        inside = [d for d in dues if d is not None and world.now < d < end]
        return min(inside) if inside else None

    def _after_tick(self, world, event: tuple, index: int):
        """A tick that passes a timer is run as ticks from one due time to the next on both sides
        (the same thing: see :func:`model.world._ev_tick`), compared after each: a state a timer
        makes and a later timer of the same tick undoes is still seen. The model's world returned
        counts it as one step; the log is the parts' logs."""
        end, pick = world.now + event.ms, event.pick
        w, logs = world, []
        while True:
            stop = self._next_stop(w, end)
            part = Tick((end if stop is None else stop) - w.now, pick)
            new, log = step(w, part)
            new, log, problem = self._after_one(w, event, new, log, index, part)
            logs += log
            if problem is not None or stop is None:
                return (new._replace(steps=world.steps + 1) if new is not world else new), logs, problem
            w = new

    def _after_one(self, world, event: tuple, new, log: list, index: int, part):
        """*event* (or *part* of it, a tick up to a timer) on the implementation, compared."""
        applied_event = event if part is None else part
        follow = [(e.kind, e.chosen) for e in log if e.tag == "choice"]
        outcome, problem = self._guarded(self._impl_step, event, applied_event, follow)
        if problem is not None:
            return new, log, problem
        impl_applied, touched = outcome
        model_applied = new is not world
        if not model_applied and not impl_applied:
            return new, log, None
        self._last = (index, event)
        self._since_full += 1
        if self._since_full < self.full_every and model_applied and impl_applied:
            marks = self.model_alias.mark(), self.impl_alias.mark()
            agreed = self._agreed_rows(world, new, touched)
            if agreed is not None:
                rows, group = agreed
                snapshot = self.impl_checker.snapshot(self.sim, group, polled=event.c if event.kind == "poll" else None,
                                                      rows=rows, previous=self.snapshot)
                violation = self.impl_checker.check(self.snapshot, snapshot, event)
                self.snapshot = snapshot
                return new, log, violation
            # they differ: compared again in full, as if this look had not been taken
            self.model_alias, self.impl_alias = self.model_alias.upto(marks[0]), self.impl_alias.upto(marks[1])
            self._forget()
        return self._compare_all(world, event, new, index, part, log, model_applied, impl_applied)

    def _guarded(self, function, event, *args):
        """``(function(*args), None)``, or ``(None, Violation)`` when the implementation crashed
        or hung in it (remembered in :attr:`failure`: the walk stops there)."""
        outcome, failure = guarded(function, *args)
        if failure is None:
            return outcome, None
        self.failure = failure
        prop = CRASH if isinstance(failure, Crash) else HANG
        return None, Violation(prop.name, f"{failure.describe()}, in {event!r}")

    def _impl_step(self, event: tuple, follow: list) -> tuple:
        """The implementation's part of one event (guarded against crashes and hangs): whether it
        applied it, and the clients its hooks say it touched, each read: {c: (observation row,
        in flight, leader role)}."""
        sim = self.sim
        applied = sim.step(event, follow=follow)
        touched = {c: self._impl_row(c) for c in sorted(sim.touched)} if applied else {}
        if applied:
            sim.touched.clear()
        return applied, touched

    def _impl_row(self, c: int) -> tuple:
        sim = self.sim
        return (sim.observe_client(c), impl_links_in_flight(sim.selectors[c]), sim.consumers[c].coordinator.is_leader)

    def _agreed_rows(self, world, new, touched: dict) -> tuple | None:
        """Compare what the event may have changed (see the class docstring); None where the two
        sides differ, else (the implementation's observation rows of the clients compared, its
        coordinator's group object) for the implementation's checks. A client whose model state
        and links are the objects last seen equal to an implementation row equal to this one is
        not compared again; one whose observed fields (or links' messages) are on both sides the
        values last seen equal is not canonicalized (or read) again: an alias never changes once
        given."""
        sim, names = self.sim, not self.config.wire
        if new.now != sim.now or new.leader != sim.leader or new.committed != sim.committed():
            return None
        model_alias, impl_alias, agreed = self.model_alias, self.impl_alias, self._agreed
        rows = {}
        before, after, links_before, links_after = world.clients, new.clients, world.links, new.links
        for c in range(self.config.clients):
            row = touched.get(c)
            client, links = after[c], links_after[c]
            if row is None:
                if client is before[c] and links is links_before[c]:
                    continue  # neither side touched it: as it was when they last agreed
                row = self._impl_row(c)  # the model's changed, the implementation's hooks did not say
            last = agreed[c]
            if last is None or last[0] is not client or last[1] is not links or last[2] != row:
                raw, in_flight, role = row
                mine = (client.state, client.generation, client.member_id, client.assignment, client.coordinator, client.live)
                if client.is_leader != role:
                    return None
                # what was equal when they last agreed is equal again: aliases never change once given
                if last is None or last[2][0] != raw or last[3] != mine:
                    if canonical_client(mine, model_alias) != canonical_client(raw, impl_alias):
                        return None
                if (last is None or last[1] is not links or last[2][1] != in_flight) and \
                        model_links_in_flight(links, names) != in_flight:
                    return None
                agreed[c] = (client, links, row, mine)
            rows[c] = row[0]
        g = new.group
        model_group = self._model_group
        if model_group[0] is not g:
            mine = None if g is None else (g.state, g.generation, g.leader_id, tuple(m.member_id for m in g.members), g.protocol_name)
            model_group = self._model_group = (g, canonical_group(mine, model_alias, model_pending(new)))
        g = sim._group()
        view = sim.group_view(g)
        impl_group = self._impl_group
        if impl_group[0] != view:
            impl_group = self._impl_group = (view, canonical_group(view[0], impl_alias, view[1]))
        if model_group[1] != impl_group[1]:
            return None
        return rows, g

    def _compare_all(self, world, event: tuple, new, index: int, part, log: list,
                     model_applied: bool = True, impl_applied: bool = True):
        """Compare everything (the model following the coordinator's choices where the two
        differ), then the implementation's checks over a snapshot of everything."""
        self._since_full = 0
        outcome, problem = self._guarded(self.sim.observation, event)
        if problem is not None:
            return new, log, problem
        raw, pending = outcome
        self.sim.touched.clear()
        impl_obs = canonical(raw, self.impl_alias, pending) + (impl_in_flight(self.sim), impl_roles(self.sim))
        mark = self.model_alias.mark()  # the aliases of ids the step created depend on the outcome
        names = not self.config.wire
        model_obs = model_view(new, self.model_alias, names)
        if model_obs != impl_obs and impl_applied and model_applied and world is not None:
            before = self.model_alias.upto(mark)
            applied_event = event if part is None else part
            for prefer in _alternatives(log):
                candidate, candidate_log = step(world, applied_event, prefer=prefer)
                trial = before.copy()
                seen = model_view(candidate, trial, names)
                if seen == impl_obs:
                    new, log, self.model_alias, model_obs = candidate, candidate_log, trial, impl_obs
                    break
        self.last_model_obs, self.last_impl_obs = model_obs, impl_obs
        if model_applied != impl_applied or model_obs != impl_obs:
            recent = self.recent[-10:] if world is not None else self.recent[-11:-1]  # at finish: before the last
            self.divergence = Divergence(index, event, model_obs, impl_obs, model_applied, impl_applied,
                                         tuple(recent), None if part is None else new.now)
            return new, log, Violation(AGREEMENT.name, self.divergence.describe())
        polled = event.c if event.kind == "poll" and world is not None else None
        snapshot = self.impl_checker.snapshot(self.sim, self.sim._group(), raw, polled=polled)
        violation = self.impl_checker.check(self.snapshot, snapshot, event)
        self.snapshot = snapshot
        return new, log, violation


    def view(self) -> tuple:
        """The implementation's canonical observation after the last event compared in full."""
        return self.last_impl_obs

    def views(self, world) -> tuple:
        """Both sides' canonical observations now (*world*: the model's), as a full comparison
        reads them, touching no alias map: what a report shows of a run that ended on another
        property's violation, when the last full comparison may be some events old."""
        sim = self.sim
        raw, pending = sim.observation()
        impl = canonical(raw, self.impl_alias.copy(), pending) + (impl_in_flight(sim), impl_roles(sim))
        return model_view(world, self.model_alias.copy(), not self.config.wire), impl


def compare(config: Config, schedule, seed: int = 0) -> DiffResult:
    """Run *schedule* on both worlds; stop at the first divergence."""
    world = initial_world(config)
    diff = Differential(config, seed)
    applied = 0
    for event in schedule:
        event = as_event(event)
        new, log = step(world, event)
        new, _log, _problem = diff.after(world, event, new, log)
        if diff.divergence is not None:
            return DiffResult(seed, applied, diff.divergence)
        applied += new is not world
        world = new
    return DiffResult(seed, applied, None)
