"""Exhaustive search of tiny worlds: every reachable model state, breadth first, as TLC and
Stateright do.

A *state* is the model world together with the history the ``always`` properties read
(:meth:`properties.catalogue.Checker.history`) and what is left of the path's budgets (faults,
commits). Its *key* is a digest of a canonical rendering of all that (sets sorted, the world's
event counter left out), so the same state reached along two paths is expanded once, in any
process and under any ``PYTHONHASHSEED``.

From each state every event the world offers (:func:`model.events.offers`, the list the walker
and the Hypothesis machines use too) within the bounded alphabet (:func:`events`) is tried, with
every value of its parameter, and every way the step can go: each choice Kafka leaves open (a protocol-vote tie, where a new member id sorts,
whether a broken connection's requests were processed, ...) is enumerated by running the step
with scripted choices (:func:`outcomes`), and every outcome is checked against every ``always``
property. An outcome's event carries a ``pick`` that makes :func:`model.world.step` choose the
same way, so any path is a replayable schedule (``groupcheck replay``, ``walk --schedule``).

The state space is finite because the bounds make it so (TLC's state constraint): time advances
in ``quantum_ms`` steps up to ``horizon_ms``, at most ``faults`` disruptions of ``fault_kinds``
and ``commits`` commitAsync calls per client happen on a path. A run that stops at
``max_depth`` before the frontier is empty says so: it has not exhausted the world.

:func:`explore` is the single-process search; :mod:`properties.campaign.exhaustive_spark` runs
the same levels on Spark (each frontier level expanded by the executors, deduplicated with a
shuffle) and must count the same states and transitions.
"""

from __future__ import annotations

import hashlib
import time as _time
from typing import Callable, NamedTuple

import attrs

from model.config import Config
from model.events import as_event, expand, offers
from model.world import World, initial_world, step
from properties.catalogue import Checker, Violation

FAULT_KINDS = ("drop", "disconnect", "crash", "close", "broker_crash", "broker_restart", "failover", "redeploy",
               "delete_group", "commit_sync", "subscribe")
DEFAULT_FAULT_KINDS = ("drop", "disconnect", "crash")
#: the protocol's own events, always in the alphabet (time is the tick the bounds allow)
PROTOCOL_KINDS = ("poll", "heartbeat", "commit", "connect", "deliver", "load", "late", "tick")


@attrs.frozen
class Bounds:
    """What makes a world tiny enough to exhaust."""

    quantum_ms: int = 1000  # the one tick: time advances in these steps
    horizon_ms: int = 3000  # no tick beyond this time
    faults: int = 1  # disruptions on one path
    fault_kinds: tuple = DEFAULT_FAULT_KINDS
    commits: int = 1  # commitAsync calls per client on one path
    max_depth: int | None = None  # stop after this many levels (the world is then not exhausted)

    def __attrs_post_init__(self):
        if self.quantum_ms <= 0:
            raise ValueError(f"quantum_ms must be positive, got {self.quantum_ms}")
        if self.horizon_ms < 0:
            raise ValueError(f"horizon_ms must be at least 0, got {self.horizon_ms}")
        if self.faults < 0 or self.commits < 0:
            raise ValueError(f"faults and commits must be at least 0, got {self.faults} and {self.commits}")
        unknown = [k for k in self.fault_kinds if k not in FAULT_KINDS]
        if unknown:
            raise ValueError(f"fault kinds must be among {', '.join(FAULT_KINDS)}, got {unknown[0]!r}")


class State(NamedTuple):
    """One explored state: the world, the properties' history, the path's budgets."""

    world: World
    checker: Checker
    faults_left: int
    commits_left: tuple  # per client


# -- the canonical key --------------------------------------------------------------------------


def _group(group):
    """A group whose ``repr`` does not depend on hash order: the one set a world holds besides
    ``partitioned`` is a group's ``pending_sync`` (member ids, strings: their order in a frozenset
    follows ``PYTHONHASHSEED``)."""
    if group is None or len(group.pending_sync) <= 1:
        return group
    return attrs.evolve(group, pending_sync=tuple(sorted(group.pending_sync)))


def world_key(world: World) -> str:
    """The world as a canonical string: everything but the config (fixed in one search), the event
    counter and the derived ``group`` field, with its two sets sorted. (``repr`` of the frozen
    values is deterministic; a test explores under two ``PYTHONHASHSEED`` values and compares.)"""
    brokers = tuple(b if b.group is None or len(b.group.pending_sync) <= 1 else attrs.evolve(b, group=_group(b.group))
                    for b in world.brokers)
    return repr((world.now, world.clients, brokers, world.leader, _group(world.persisted), world.committed,
                 world.links, tuple(sorted(world.partitioned)), world.member_seq))


def state_key(state: State) -> str:
    """The digest that deduplicates states: equal keys have the same futures and verdicts."""
    value = (world_key(state.world), state.checker.history(), state.faults_left, state.commits_left)
    return hashlib.blake2b(repr(value).encode(), digest_size=16).hexdigest()


# -- the alphabet and the outcomes of one event ------------------------------------------------


_ALPHABETS: dict = {}


def _alphabet(kinds: tuple) -> frozenset:
    """The explored kinds: the protocol's own and the fault *kinds* (kept per *kinds*)."""
    alphabet = _ALPHABETS.get(kinds)
    if alphabet is None:
        alphabet = _ALPHABETS[kinds] = frozenset(PROTOCOL_KINDS + tuple(kinds))
    return alphabet


def events(state: State, bounds: Bounds) -> list:
    """Every event worth trying from *state*, with pick 0 (:func:`outcomes` enumerates the
    choices): what the world offers (:func:`model.events.offers`) among the protocol's own kinds
    and, while the path's fault budget lasts, the bounds' fault kinds, every parameter value
    enumerated; the bounds' filters: one tick of ``quantum_ms`` while it stays within the horizon,
    and a commit only while the client's commit budget lasts. An event that is not enabled
    changes nothing and is dropped by the caller."""
    world = state.world
    kinds = _alphabet(bounds.fault_kinds if state.faults_left > 0 else ())
    ticks = (bounds.quantum_ms,) if world.now + bounds.quantum_ms <= bounds.horizon_ms else ()
    out = expand(offers(world, kinds, ticks=ticks))
    if "commit" in kinds and not all(state.commits_left):
        out = [e for e in out if e.kind != "commit" or state.commits_left[e.c] > 0]
    return out


def _scripted(script: tuple, made: list):
    def factory(log):
        def choose(kind, candidates):
            k = len(made)
            i = script[k] if k < len(script) else 0
            made.append((i, len(candidates)))
            chosen = candidates[i]
            log.append(("choice", kind, candidates, chosen))
            return chosen

        return choose

    return factory


def outcomes(world: World, event: tuple):
    """Every way *event* can go from *world*: yields ``(choices, new_world, log)`` for each
    sequence of choices the step can make (``choices`` = ((index, candidates count), ...))."""
    scripts = [()]
    while scripts:
        script = scripts.pop()
        made: list = []
        new, log = step(world, event, choices=_scripted(script, made))
        for k in range(len(script), len(made)):
            prefix = tuple(i for i, _ in made[:k])
            for alternative in range(1, made[k][1]):
                scripts.append(prefix + (alternative,))
        yield tuple(made), new, log


def _follows(pick: int, choices: tuple) -> bool:
    """Whether :func:`model.world.chooser` with *pick* makes exactly *choices*."""
    value = pick
    for index, n in choices:
        if value % n != index:
            return False
        value = value // n if value >= n else value * 7 + 3
    return True


def pick_for(choices: tuple) -> int:
    """A pick that makes :func:`model.world.chooser` choose *choices*: the mixed-radix number of
    the indices, with a leading 1 when the plain number would run out before the last choice (the
    chooser then scrambles what is left)."""
    value, radix = 0, 1
    for index, n in choices:
        value += index * radix
        radix *= n
    if _follows(value, choices):
        return value
    return value + radix  # every remainder stays >= its radix, so each choice reads its own digit


def successors(state: State, bounds: Bounds):
    """Yields ``(event, new_state, violation)`` for every outcome of every event that changes the
    world; *event* carries the pick that replays the outcome."""
    for event in events(state, bounds):
        for choices, new, log in outcomes(state.world, event):
            if new is state.world:
                continue
            replayable = event._replace(pick=pick_for(choices))
            yield (replayable,) + advance(state, replayable, new, log)


def advance(state: State, event: tuple, new: World, log: list) -> tuple[State, Violation | None]:
    """The state after *event* took *state*'s world to *new* (with the step's *log*): the
    properties' history carried on and checked, the path's budgets spent."""
    checker = state.checker.fork()
    violation = checker.check(state.world, new, event, log)
    faults_left = state.faults_left - (1 if event.kind in FAULT_KINDS else 0)
    commits_left = state.commits_left
    if event.kind == "commit":
        c = event.c
        commits_left = commits_left[:c] + (commits_left[c] - 1,) + commits_left[c + 1:]
    return State(new, checker, faults_left, commits_left), violation


def initial_state(config: Config, bounds: Bounds) -> State:
    return State(initial_world(config), Checker(config), bounds.faults, (bounds.commits,) * config.clients)


# -- the search ---------------------------------------------------------------------------------


@attrs.frozen
class Counterexample:
    schedule: tuple  # events from the initial world; the last one breaks the property
    violation: Violation


@attrs.frozen
class Exploration:
    """What a search found: ``states`` distinct states (the initial one included), ``transitions``
    outcomes tried from them (each a checked edge), the number of BFS levels expanded into new
    states (``depth``: the longest shortest path), whether the frontier emptied (``exhausted``),
    the first counterexample (at the smallest depth; among those, the least schedule), and the
    seconds it took. ``levels`` counts the new states of each level, the initial one first."""

    states: int
    transitions: int
    depth: int
    exhausted: bool
    counterexample: Counterexample | None
    seconds: float
    levels: tuple = ()
    edges: tuple = ()  # (source key, event, target key) of every transition, when kept (the tour)
    paths: dict = attrs.field(factory=dict)  # key -> least shortest schedule reaching it, when kept


def expand_level(frontier, bounds: Bounds, seen, keep_graph: bool = False):
    """Expand one BFS level. *frontier*: iterable of (key, schedule, state); *seen*: keys of earlier
    levels (anything with ``in``). Returns (found, transitions, bad, edges): the new states as
    {key: (schedule, state)} with the least schedule for each key, the outcomes tried, the least
    failing (schedule, violation) or None, and the edges when *keep_graph*. The least schedule
    wins (tuples compare event by event) so that the single-process and the Spark searches, which
    meet a state's parents in different orders, agree on every path."""
    found: dict = {}
    transitions = 0
    bad = None
    edges: list = []
    for key, schedule, state in frontier:
        for event, new, violation in successors(state, bounds):
            transitions += 1
            path = schedule + (event,)
            if violation is not None:
                if bad is None or path < bad[0]:
                    bad = (path, violation)
                continue
            new_key = state_key(new)
            if keep_graph:
                edges.append((key, event, new_key))
            if new_key in seen:
                continue
            old = found.get(new_key)
            if old is None or path < old[0]:
                found[new_key] = (path, new)
    return found, transitions, bad, edges


def explore(config: Config, bounds: Bounds, keep_graph: bool = False, progress: Callable | None = None,
            clock=_time.monotonic) -> Exploration:
    """Breadth-first search of every state reachable within *bounds*, in this process. Stops after
    the first level with a counterexample. *keep_graph*: keep every edge and each state's path
    (what :func:`tour` needs). *progress(depth, states, transitions)* is called after each level."""
    started = clock()
    root = initial_state(config, bounds)
    root_key = state_key(root)
    seen = {root_key}
    frontier = [(root_key, (), root)]
    paths = {root_key: ()} if keep_graph else {}
    edges: list = []
    transitions = depth = 0
    levels = [1]
    while frontier and (bounds.max_depth is None or depth < bounds.max_depth):
        found, tried, bad, level_edges = expand_level(frontier, bounds, seen, keep_graph)
        transitions += tried
        edges += level_edges
        if bad is not None:
            return Exploration(len(seen), transitions, depth + 1, False, Counterexample(*bad), clock() - started,
                               tuple(levels), tuple(edges), paths)
        if not found:
            frontier = []
            break
        depth += 1
        levels.append(len(found))
        seen.update(found)
        if keep_graph:
            paths.update((k, v[0]) for k, v in found.items())
        frontier = [(k, v[0], v[1]) for k, v in sorted(found.items())]
        if progress is not None:
            progress(depth, len(seen), transitions)
    return Exploration(len(seen), transitions, depth, not frontier, None, clock() - started, tuple(levels),
                       tuple(edges), paths)


# -- the transition tour ------------------------------------------------------------------------


def tour_schedules(edges, paths: dict) -> list:
    """Schedules that together take every edge of the explored graph: from each state, in order of
    its shortest path, a schedule follows that path and then edges not yet taken for as long as
    there are any (a greedy tour, as test generation from a state graph does)."""
    out: dict = {}
    for source, event, target in edges:
        out.setdefault(source, []).append((event, target))
    for pending in out.values():
        pending.reverse()  # pop() takes them in the order they were found
    schedules = []
    for key in sorted(paths, key=lambda k: (len(paths[k]), paths[k])):
        while out.get(key):
            schedule, current = list(paths[key]), key
            while out.get(current):
                event, current = out[current].pop()
                schedule.append(event)
            schedules.append(tuple(schedule))
    return schedules


@attrs.frozen
class Tour:
    """The implementation driven along the explored graph: ``schedules`` run (``events`` in all),
    ``covered`` of the graph's ``transitions`` taken by the model beside the implementation exactly
    as explored, and the first problem as (schedule, violation). The model follows the
    implementation where Kafka leaves the coordinator a choice (:mod:`properties.systems.differential`),
    so a schedule leaves the explored path where the implementation chose the other way:
    ``departures`` counts those by choice (``protocol``, ``member_order``, ``leader``; a departure
    with no such choice would be a fault of the tour itself and is counted as ``unexplained``).
    A schedule that departed at ``member_order`` is tried again with other seeds of the
    implementation (its member ids are random UUIDs); the other choices it makes one way always
    (``GroupMetadata.select_protocol`` takes the first candidate of a tie)."""

    schedules: int
    events: int
    transitions: int
    covered: int
    failure: tuple | None
    seconds: float
    departures: dict = attrs.field(factory=dict)


class _Follower:
    """Recomputes the explorer's state keys along a replay (``on_step``): which explored edges the
    model really took, and where and why it left the path the schedule was made from."""

    def __init__(self, config: Config, bounds: Bounds, expected: dict, taken: set):
        self.state = initial_state(config, bounds)
        self.key = state_key(self.state)
        self.expected = expected
        self.taken = taken
        self.departure = None  # why the model left the explored path, or None

    def __call__(self, world, event, new, log):
        event = as_event(event)
        self.state, _ = advance(self.state, event, new, log)
        key = state_key(self.state)
        edge = (self.key, event, key)
        if self.departure is None and self.expected.get(edge[:2]) != key:
            self.departure = _why_departed(world, event, new, log)
        self.taken.add(edge)
        self.key = key


def _why_departed(world, event, new, log) -> str:
    """The choices in which the model's step differs from the step the event's pick makes (the
    coordinator choices the model followed the implementation in), or ``unexplained``."""
    plain, plain_log = step(world, event)
    if repr(plain) == repr(new):
        return "unexplained"
    made = [(e.kind, e.chosen) for e in log if e.tag == "choice"]
    picked = [(e.kind, e.chosen) for e in plain_log if e.tag == "choice"]
    kinds = sorted({kind for (kind, value), (_, other) in zip(made, picked) if value != other})
    return "+".join(kinds) or "unexplained"


def tour(config: Config, bounds: Bounds, exploration: Exploration, replay: Callable, seed: int = 0,
         retries: int = 2, progress: Callable | None = None, clock=_time.monotonic) -> Tour:
    """Replay :func:`tour_schedules` of a kept graph with *replay(schedule, seed, on_step)* (a
    system's replay: the implementation beside the model, every step compared and checked,
    :func:`properties.systems.replay`); a schedule that left the explored path at a coordinator
    choice is tried again with up to *retries* other seeds. Stops at the first problem."""
    started = clock()
    schedules = tour_schedules(exploration.edges, exploration.paths)
    expected = {(s, tuple(e)): t for s, e, t in exploration.edges}
    taken: set = set()
    events = 0
    departures: dict = {}
    failure = None
    for i, schedule in enumerate(schedules):
        for attempt in range(retries + 1):
            follower = _Follower(config, bounds, expected, taken)
            result = replay(schedule, seed + attempt, follower)
            events += len(schedule)
            if result.violation is not None:
                failure = (tuple(result.schedule), result.violation)
                break
            if follower.departure is None or "member_order" not in follower.departure:
                break  # only where a new member id sorts depends on the seed (random UUIDs)
        if failure is not None:
            break
        if follower.departure is not None:
            departures[follower.departure] = departures.get(follower.departure, 0) + 1
        if progress is not None:
            progress(i + 1, len(schedules))
    wanted = {(s, tuple(e), t) for s, e, t in exploration.edges}
    return Tour(len(schedules), events, len(wanted), len(wanted & taken), failure, clock() - started,
                dict(sorted(departures.items())))
