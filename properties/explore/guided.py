"""Guided search: interleavings that reach something new are bred from (issue 14, item 4).

A plain campaign runs interleaving ``i`` as the walk of seed ``i`` in the world seed ``i`` draws.
Rare situations (a failover while the group completes a rebalance, a request that meets a
coordinator still loading the group) then have to be hit afresh by each seed. A guided search
keeps, as coverage-guided fuzzers do (AFL's queue, Zest's "semantic" coverage), the interleavings
that reached something no earlier one had, and spends part of the budget on *children* of them:

* the interleavings come in **rounds** of :data:`ROUND`; the first round is all fresh; in every
  later one the last :data:`CHILDREN` are children, the others fresh (fresh interleavings take
  the next unused world seed in order, so a guided search's fresh ones are a plain search's first
  seeds);
* a child repeats its parent's walk, event for event, up to a *cut* at or after the position
  where the parent first reached something new, and draws its own events from there
  (:func:`properties.explore.walker.walk`'s ``reseed``), with :data:`EXTRA_STEPS` more steps;
  the parent, the cut and the new draws come from ``random.Random("groupcheck-guided:<i>")``;
* *something new* is a :class:`Features` key no earlier interleaving of the search had: a group
  or member-state transition, an error code per API and per state of the member it answers, an
  event kind per group state (a ``failover`` in ``CompletingRebalance``), an abstract state (group
  state and the set of the members' states: as a multiset, the many ways five members can be
  spread over four states would crowd out the rarer features), a ``sometimes`` property, a cell of
  either error-path matrix (:mod:`properties.error_paths`: an answer by API, error, member state
  and generation; a request by API, group state and member relation).

The corpus changes between rounds only, and within a round an interleaving's features are
offered in interleaving order, so a search is a pure function of its start and size: the same in
one process as on a Spark cluster whose tasks finish in any order, under any ``PYTHONHASHSEED``
(keys are strings, compared as strings; nothing here hashes for a result).
"""

from __future__ import annotations

import random

import attrs

from properties import error_paths

ROUND = 200  # interleavings per round; the corpus grows only between rounds
CHILDREN = 50  # children among a round's interleavings (after the first round)
EXTRA_STEPS = 20  # a child walks this many steps more than its parent (so a cut at the end goes on)
MAX_STEPS = 400
SEARCHES = ("guided", "plain")


@attrs.frozen
class Spec:
    """How interleaving *interleaving* runs: the world of *world_seed* (its swarm draw or the fixed
    world), walked from *world_seed* with the *reseed* points, for *steps* (None: the world's)."""

    interleaving: int
    world_seed: int
    reseed: tuple = ()
    steps: int | None = None
    parent: int | None = None  # the interleaving it was bred from

    def as_dict(self) -> dict:
        return {"interleaving": self.interleaving, "world_seed": self.world_seed,
                "reseed": [list(r) for r in self.reseed], "steps": self.steps, "parent": self.parent}


@attrs.frozen
class Parent:
    """A corpus entry: an interleaving that reached something new, and how to repeat it."""

    interleaving: int
    world_seed: int
    reseed: tuple
    steps: int  # its step budget
    first_new: int  # the schedule position where it first reached something new
    walked: int  # its schedule's events before the final settle phase

    def as_tuple(self) -> tuple:
        return (self.interleaving, self.world_seed, self.reseed, self.steps, self.first_new, self.walked)


class Features:
    """The walker's ``on_step`` hook for one interleaving: every feature key it reaches, with the
    schedule position where it first did. *inner* (another ``on_step``, such as a campaign's
    :class:`properties.coverage.Coverage`) is called first."""

    __slots__ = ("first", "position", "inner", "result")

    def __init__(self, inner=None):
        self.first: dict = {}
        self.position = 0
        self.inner = inner
        self.result = None  # the interleaving's RunResult, set by whoever ran it

    def on_step(self, world, event, new, log) -> None:
        if self.inner is not None:
            self.inner(world, event, new, log)
        first, pos = self.first, self.position
        self.position = pos + 1
        group = world.group
        state = group.state if group is not None else "no group"
        key = ("V", event.kind, state)
        if key not in first:
            first[key] = pos
        for entry in log:  # model.entries
            tag = entry[0]
            if tag == "reply":
                c = entry.c
                key = ("R", entry.api, entry.error, world.clients[c].state if c < len(world.clients) else "?")
            elif tag == "answered":  # a cell of the client's error-path matrix
                key = error_paths.client_key(entry.api, entry.error, entry.state, entry.current)
                if key is None:
                    continue
                key = ("E", "client", key)
            elif tag == "handled":  # a cell of the coordinator's error-path matrix
                key = ("E", "coordinator",
                       error_paths.coordinator_key(entry.request, entry.group, entry.is_leader, entry.loading))
                if key[2] is None:
                    continue
            elif tag == "server" and entry.note == "transition":
                key = ("G", entry.from_state, entry.to_state)
            elif tag == "member_state":
                key = ("M", entry.old, entry.new)
            else:
                continue
            if key not in first:
                first[key] = pos
        if new.group is not group or new.clients is not world.clients:
            ng = new.group
            key = ("A", ng.state if ng is not None else "no group",
                   tuple(sorted({c.state if c.alive else "down" for c in new.clients})))
            if key not in first:
                first[key] = pos

    def keys(self, result) -> dict:
        """{feature text: first position}, with the ``sometimes`` properties *result* reached."""
        from model.errors import name_of

        out = {}
        for key, pos in self.first.items():
            if key[0] == "R":
                text = f"R {key[1]}:{name_of(key[2])}@{key[3]}"
            elif key[0] == "A":
                text = f"A {key[1]}|{','.join(key[2])}"
            elif key[0] == "E":
                text = f"E {key[1]}: {error_paths.name(key[2])}"
            else:
                text = f"{key[0]} {key[1]}>{key[2]}" if key[0] in "GM" else f"V {key[1]}@{key[2]}"
            out[text] = pos
        last = max(0, len(result.schedule) - 1)
        for name, hits in sorted(result.coverage.items()):
            if hits:
                out.setdefault(f"S {name}", last)
        return out


class Corpus:
    """The interleavings that reached something new, and every feature reached so far."""

    def __init__(self, start: int = 0, round_size: int = ROUND, children: int = CHILDREN):
        if not 0 <= children < round_size:
            raise ValueError(f"children must be in [0, round size {round_size}), got {children}")
        self.start = start
        self.round_size = round_size
        self.children = children
        self.known: set = set()
        self.parents: list = []

    # -- the search's plan --------------------------------------------------------------------
    def round_of(self, i: int) -> int:
        return (i - self.start) // self.round_size

    def round_range(self, r: int, stop: int) -> tuple:
        """The interleavings ``[a, b)`` of round *r* of a search that ends before *stop*."""
        a = self.start + r * self.round_size
        return a, min(a + self.round_size, stop)

    def spec(self, i: int) -> Spec:
        """How interleaving *i* runs, given the corpus as it stood when its round began."""
        r, j = divmod(i - self.start, self.round_size)
        fresh_per_round = self.round_size - self.children
        if r == 0 or j < fresh_per_round:
            # fresh: the next unused world seed (children take no seed of their own)
            fresh_before = self.round_size + (r - 1) * fresh_per_round if r else 0
            return Spec(i, self.start + fresh_before + j)
        if not self.parents:  # only if the first round ran no interleaving at all
            return Spec(i, self.start + i)
        text = f"groupcheck-guided:{i}"
        rng = random.Random(text)
        parent = self.parents[rng.randrange(len(self.parents))]
        low = min(parent.first_new + 1, parent.walked)
        cut = rng.randint(low, max(low, parent.walked))
        reseed = tuple(p for p in parent.reseed if p[0] < cut) + ((cut, text),)
        return Spec(i, parent.world_seed, reseed, min(MAX_STEPS, parent.steps + EXTRA_STEPS), parent.interleaving)

    # -- feedback -----------------------------------------------------------------------------
    def offer(self, spec: Spec, features: dict, walked: int, steps: int) -> list:
        """Take interleaving *spec*'s features (see :meth:`Features.keys`); if some are new it
        joins the corpus. Returns the new features, sorted. Offer a round's interleavings in
        interleaving order, after the whole round ran."""
        new = sorted(f for f in features if f not in self.known)
        if new:
            self.known.update(new)
            first_new = min(features[f] for f in new)
            self.parents.append(Parent(spec.interleaving, spec.world_seed, tuple(map(tuple, spec.reseed)), steps,
                                       first_new, walked))
        return new

    def unknown(self, features: dict) -> dict:
        """The part of *features* this corpus has not seen (what a task sends back)."""
        return {f: p for f, p in features.items() if f not in self.known}

    # -- shipping to tasks ----------------------------------------------------------------------
    def to_plan(self) -> dict:
        return {"start": self.start, "round_size": self.round_size, "children": self.children,
                "known": sorted(self.known), "parents": [p.as_tuple() for p in self.parents]}

    @classmethod
    def from_plan(cls, doc: dict) -> "Corpus":
        corpus = cls(doc["start"], doc["round_size"], doc["children"])
        corpus.known = set(doc["known"])
        corpus.parents = [Parent(i, w, tuple(tuple(x) for x in reseed), steps, first, walked)
                          for i, w, reseed, steps, first, walked in doc["parents"]]
        return corpus


def reseed_of(doc) -> tuple:
    """A spec's ``reseed`` from its JSON form (lists) back to tuples."""
    return tuple((int(pos), str(text)) for pos, text in (doc or ()))
