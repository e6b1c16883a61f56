"""Coverage of a campaign: what the interleavings reached, and what they never reached.

A :class:`Coverage` is fed by the walker's ``on_step`` hook (one call per applied event) and by
each finished run; it counts

* group states entered and group-state transitions (``Empty→PreparingRebalance``, from the
  coordinator's own transition notes; ``no group`` is a coordinator without the group: not yet
  created, still loading, crashed),
* member states entered and member-state transitions of the consumers (from the members' own
  state notes in the step log, as the catalogue counts them: also a state an event passes through),
* error codes in the coordinator's replies, per API (``JoinGroup:MEMBER_ID_REQUIRED``),
* the ``sometimes`` properties (the catalogue's own counters),
* the error-path matrices of :mod:`properties.error_paths`: each answer a client's handler got, by
  API, error, member state and whether its generation was still current; each request a
  coordinator got, by API, group state and the request's member id and generation,
* distinct *abstract states* — the group's state and each consumer's member state (``down`` for a
  crashed or closed one) — with the first seed that reached each, so the campaign can plot how the
  number of distinct states grows with the interleavings explored (a flat curve means more of the
  same seeds will not find new behaviour).

Everything is a plain dict of counts, so partial coverages from Spark tasks merge by addition (and
by ``min`` for first seeds) in any order with the same result. The hook is on the hot path of every
step, so it does identity checks first and touches only what changed.
"""

from __future__ import annotations

from model import group as grp
from model.client import COMPLETING_REBALANCE, PREPARING_REBALANCE, STABLE, UNJOINED
from model.errors import name_of
from properties.catalogue import SOMETIMES_NAMES
from properties import error_paths

MEMBER_STATES = (UNJOINED, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE)
INITIAL_MEMBER_STATE = UNJOINED  # where every consumer of the initial world starts
NO_GROUP = "no group"


def legal_group_transitions() -> list:
    """Every (from, to) group transition the coordinator's table allows (§1.2)."""
    return sorted((old, new) for new, olds in grp.VALID_PREVIOUS_STATES.items() for old in olds if old != new)


def legal_member_transitions() -> list:
    """Every (from, to) member-state edge the catalogue's legal-member-transitions allows (§3.1)."""
    from properties import catalogue

    return sorted(getattr(catalogue, "_LEGAL_MEMBER_EDGES", ()))


class Coverage:
    """Counts for one task (or a whole campaign after :meth:`merge`)."""

    __slots__ = ("group_states", "group_transitions", "member_states", "member_transitions", "errors",
                 "sometimes", "abstract_first", "seed", "client_paths", "coordinator_paths", "paths_first")

    def __init__(self):
        self.group_states: dict = {}
        self.group_transitions: dict = {}
        self.member_states: dict = {}
        self.member_transitions: dict = {}
        self.errors: dict = {}
        self.sometimes: dict = {name: 0 for name in SOMETIMES_NAMES}
        self.abstract_first: dict = {}  # abstract state key -> first seed that reached it
        self.seed = 0
        self.client_paths: dict = {}  # properties.error_paths.client_key -> answers
        self.coordinator_paths: dict = {}  # properties.error_paths.coordinator_key -> requests
        self.paths_first: dict = {}  # either matrix's key -> the first seed that reached it (to replay it)

    # -- collection (executor side, hot path) --------------------------------------------------
    def on_step(self, world, event, new, log) -> None:
        """The walker's ``on_step`` hook: called after every applied event."""
        pg, ng = world.group, new.group
        changed = False
        noted = None  # the last state the coordinator's notes moved the group to
        first = None  # the state the first note moved the group from
        for entry in log:  # model.entries
            tag = entry[0]
            if tag == "reply":
                key = (entry.api, entry.error)
                self.errors[key] = self.errors.get(key, 0) + 1
            elif tag == "answered":
                self._path(self.client_paths, error_paths.client_key(entry.api, entry.error, entry.state, entry.current))
            elif tag == "handled":
                self._path(self.coordinator_paths,
                           error_paths.coordinator_key(entry.request, entry.group, entry.is_leader, entry.loading))
            elif tag == "server" and entry.note == "transition":  # the coordinator's own transitions,
                self._group_edge(entry.from_state, entry.to_state)  # also those a single event passes through
                if first is None:
                    first = entry.from_state
                noted, changed = entry.to_state, True
            elif tag == "member_state":  # every member-state change, also those one event passes
                key = (entry.old, entry.new)  # through (PREPARING_REBALANCE -> UNJOINED -> PREPARING_REBALANCE)
                self.member_transitions[key] = self.member_transitions.get(key, 0) + 1
                self.member_states[entry.new] = self.member_states.get(entry.new, 0) + 1
                changed = True
        if pg is not ng:
            old = pg.state if pg is not None else NO_GROUP
            state = ng.state if ng is not None else NO_GROUP
            if noted is not None:
                if pg is not None:
                    old = noted  # vanished after the noted transitions
                else:
                    state = first  # created, then moved on by the noted transitions
            if old != state and (noted is None or pg is None or ng is None):
                # a group appearing or vanishing (coordinator loaded, failed over, crashed)
                self._group_edge(old, state)
                changed = True
        if not changed and world.clients is not new.clients:
            for before, after in zip(world.clients, new.clients):
                if before is not after and before.alive != after.alive:  # a crash: the abstract state changes
                    changed = True
        if changed:
            key = (ng.state if ng is not None else NO_GROUP,
                   tuple(c.state if c.alive else "down" for c in new.clients))
            if key not in self.abstract_first:
                self.abstract_first[key] = self.seed

    def _path(self, counts: dict, key) -> None:
        """One more of error-path cell *key* (None: not a cell) in *counts*; its first seed if new."""
        if key is None:
            return
        n = counts.get(key)
        if n is None:
            n = 0
            self.paths_first[key] = self.seed
        counts[key] = n + 1

    def _group_edge(self, old, new) -> None:
        key = (old, new)
        self.group_transitions[key] = self.group_transitions.get(key, 0) + 1
        if new != NO_GROUP:
            self.group_states[new] = self.group_states.get(new, 0) + 1

    def start_run(self, seed: int) -> None:
        self.seed = seed

    def end_run(self, result) -> None:
        for name, hits in result.coverage.items():
            if name in self.sometimes:
                self.sometimes[name] += hits

    # -- aggregation (driver side) ------------------------------------------------------------
    def to_dict(self) -> dict:
        """Compact, picklable, JSON-ready form (string keys, sorted)."""
        return {
            "group_states": dict(sorted(self.group_states.items())),
            "group_transitions": {f"{a}→{b}": n for (a, b), n in sorted(self.group_transitions.items())},
            "member_states": dict(sorted(self.member_states.items())),
            "member_transitions": {f"{a}→{b}": n for (a, b), n in sorted(self.member_transitions.items())},
            "errors": {f"{api}:{name_of(code)}": n for (api, code), n in sorted(self.errors.items())},
            "sometimes": dict(self.sometimes),
            "client_paths": {error_paths.name(k): n for k, n in sorted(self.client_paths.items())},
            "coordinator_paths": {error_paths.name(k): n for k, n in sorted(self.coordinator_paths.items())},
            "paths_first": {error_paths.name(k): seed for k, seed in sorted(self.paths_first.items())},
            "abstract_first": {_abstract_name(k): s for k, s in sorted(self.abstract_first.items(), key=lambda kv: _abstract_name(kv[0]))},
        }


def _abstract_name(key) -> str:
    group_state, members = key
    return f"{group_state} | {' '.join(members)}"


def empty() -> dict:
    return Coverage().to_dict()


def merge(a: dict, b: dict) -> dict:
    """Two coverage dicts (from :meth:`Coverage.to_dict`) merged; order-independent."""
    out = {}
    for field in ("group_states", "group_transitions", "member_states", "member_transitions", "errors", "sometimes",
                  "client_paths", "coordinator_paths"):
        merged = dict(a.get(field, {}))
        for k, n in b.get(field, {}).items():
            merged[k] = merged.get(k, 0) + n
        out[field] = dict(sorted(merged.items()))
    for field in ("abstract_first", "paths_first"):  # the first seed that reached each: the least
        first = dict(a.get(field, {}))
        for k, s in b.get(field, {}).items():
            first[k] = min(s, first.get(k, s))
        out[field] = dict(sorted(first.items()))
    return out


def summarise(cov: dict, seed_start: int, interleavings: int, points: int = 60, directed: dict | None = None) -> dict:
    """The campaign's coverage section: counts, what was seen and never seen, and the growth curve
    of distinct abstract states (interleavings explored → distinct states reached). *directed*: the
    coverage of the campaign's directed schedules, counted apart in the error-path matrices."""
    seen_group = {tuple(k.split("→")) for k in cov["group_transitions"]}
    seen_member = {tuple(k.split("→")) for k in cov["member_transitions"]}
    group_never = [f"{a}→{b}" for a, b in legal_group_transitions() if (a, b) not in seen_group]
    member_never = [f"{a}→{b}" for a, b in legal_member_transitions() if (a, b) not in seen_member]
    group_states_never = [s for s in grp.GROUP_STATES if s not in cov["group_states"]]
    # every consumer starts UNJOINED: in any interleaving that state is reached without being entered
    member_states_never = [s for s in MEMBER_STATES
                           if s not in cov["member_states"] and not (s == INITIAL_MEMBER_STATE and interleavings > 0)]
    sometimes_never = [k for k, n in cov["sometimes"].items() if n == 0]
    firsts = sorted(s - seed_start for s in cov["abstract_first"].values())
    curve = []
    if interleavings > 0:
        marks = sorted({max(1, round(interleavings * i / points)) for i in range(1, points + 1)})
        j = 0
        for m in marks:
            while j < len(firsts) and firsts[j] < m:
                j += 1
            curve.append([m, j])
    return {
        "group_states": cov["group_states"],
        "group_states_never": group_states_never,
        "group_transitions": cov["group_transitions"],
        "group_transitions_never": group_never,
        "member_states": cov["member_states"],
        "member_states_never": member_states_never,
        "member_transitions": cov["member_transitions"],
        "member_transitions_never": member_never,
        "errors": cov["errors"],
        "sometimes": cov["sometimes"],
        "sometimes_never": sometimes_never,
        "error_paths": error_paths.summarise(cov, directed),
        "abstract_states": len(cov["abstract_first"]),
        "abstract_states_curve": curve,
    }
