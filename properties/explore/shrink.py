"""Shrinking failing schedules, and naming the shape of a failure.

A campaign finds a failing interleaving as a schedule of a few hundred events; a person can read a
dozen. :func:`shrink` removes events while the failure keeps its *signature* (the same property and
the same shape of message): first in chunks (halves, quarters, ... — most of a walk is unrelated
traffic), then one event at a time until removing any single event makes the failure go away or
change. Every prefix and sub-sequence of a schedule is a valid schedule (a step that is not enabled
changes nothing, :mod:`model.world`), so every candidate can simply be replayed; the replay keeps
only the events that applied and stops at the first violation, so each accepted candidate is also
truncated at its failing step. Shrinking stops at a per-counterexample time budget; the result
says whether it reached a locally minimal schedule.

:func:`signature` names a failure by its property and the shape of its message — numbers, member
ids and partition lists replaced by placeholders — never by its seed, so the many seeds that hit
the same bug land in one cluster. It is built with hashlib, never ``hash()``, so it is the same in
every process.

:func:`timeline` re-runs a (shrunk) schedule and records, per event, which member it concerns and
what changed, for the report's per-member timeline.
"""

from __future__ import annotations

import hashlib
import re
import time

import attrs

from model.errors import name_of
from properties.catalogue import BY_NAME, EVENTUALLY
from properties.systems import replay

_MEMBER_ID = re.compile(r"consumer-\d+-[0-9A-Za-z-]+|\bc\d+\.\d+\b")
_LIST = re.compile(r"\[[^\[\]]*\]|\{[^{}]*\}")
_NUMBER = re.compile(r"-?\d+")


_DIVERGENCE = re.compile(r"^after \((.*?)\): (.*)$")


def shape(message: str) -> str:
    """A failure message with the run-specific values abstracted away. For a model/implementation
    divergence (``after EVENT: field: model X, impl Y; ...``) the shape is the first differing
    field alone: the fields after it usually follow from it."""
    m = _DIVERGENCE.match(message)
    if m:
        message = "differs in " + m.group(2).split("; ")[0].split(":")[0]
    text = _MEMBER_ID.sub("<member>", message)
    text = _LIST.sub("[…]", text)
    return _NUMBER.sub("N", text)


def signature(violation) -> str:
    """``<property>-<8 hex>``: stable across seeds, processes and ``PYTHONHASHSEED``; usable as a
    file name."""
    digest = hashlib.sha256(f"{violation.property}\n{shape(violation.message)}".encode()).hexdigest()[:8]
    return f"{violation.property}-{digest}"


def is_eventually(property_name: str) -> bool:
    prop = BY_NAME.get(property_name)
    return prop is not None and prop.kind == EVENTUALLY


@attrs.frozen
class Shrunk:
    schedule: tuple  # the smallest failing schedule found
    result: object  # its replay RunResult (build the counterexample from this one)
    original_events: int
    replays: int
    seconds: float
    reproduced: bool  # the original schedule failed again the same way when replayed
    complete: bool  # locally minimal: no single event can be removed (False: the budget ran out)


def _fails_same(system, config, schedule, seed, sig, eventually):
    result = replay(system, config, schedule, seed=seed, check_eventually=eventually)
    if result.violation is not None and signature(result.violation) == sig:
        return result
    return None


def shrink(system: str, config, schedule, seed: int, violation, budget_seconds: float = 10.0,
           clock=time.monotonic) -> Shrunk:
    """The smallest schedule found within *budget_seconds* that still fails with *violation*'s
    signature (see the module docstring). *seed* seeds the implementation (system ``impl``)."""
    start = clock()
    deadline = start + budget_seconds
    sig = signature(violation)
    eventually = is_eventually(violation.property)
    schedule = tuple(tuple(e) for e in schedule)
    replays = 1
    best = _fails_same(system, config, schedule, seed, sig, eventually)
    if best is None:  # should not happen (replays are exact); keep the original, unshrunk
        result = replay(system, config, schedule, seed=seed, check_eventually=eventually)
        return Shrunk(schedule, result, len(schedule), replays, clock() - start, False, False)
    current = best.schedule
    complete = False
    chunk = max(1, len(current) // 2)
    out_of_time = False
    while not out_of_time:
        removed_any = False
        i = 0
        while i < len(current):
            if clock() > deadline:
                out_of_time = True
                break
            candidate = current[:i] + current[i + chunk:]
            replays += 1
            result = _fails_same(system, config, candidate, seed, sig, eventually) if candidate else None
            if result is not None and len(result.schedule) < len(current):
                best, current = result, result.schedule
                removed_any = True
            else:
                i += chunk
        if out_of_time:
            break
        if chunk == 1:
            if not removed_any:
                complete = True
                break
        else:
            chunk = max(1, chunk // 2)
    return Shrunk(current, best, len(schedule), replays, round(clock() - start, 3), True, complete)


# -- the per-member timeline ----------------------------------------------------------------------

def _actor(event) -> str:
    kind = event[0]
    if kind in ("poll", "heartbeat", "commit", "close", "crash", "connect", "deliver", "drop", "disconnect",
                "clock_jump", "partition", "heal"):
        return f"c{event[1]}"
    if kind in ("broker_crash", "broker_restart", "failover", "load"):
        return "brokers"
    return "time"


def describe_event(event) -> str:
    """An event in words (the ``pick`` that resolves Kafka's open choices is left out)."""
    kind = event[0]
    if kind == "deliver":
        return f"deliver {'request' if event[3] else 'response'} on slot {event[2]}"
    if kind == "drop":
        return f"drop {'request' if event[3] else 'response'} on slot {event[2]}"
    if kind == "disconnect":
        return f"disconnect slot {event[2]} ({'processed' if event[3] else 'not processed'})"
    if kind == "connect":
        return f"connect slot {event[2]}"
    if kind == "tick":
        return f"tick {event[1]} ms"
    if kind == "clock_jump":
        return f"clock jumps {event[2]:+d} ms"
    if kind in ("partition", "heal"):
        return f"{kind} c{event[1]}/b{event[2]}"
    if kind in ("broker_crash", "broker_restart", "failover", "load"):
        return f"{kind.replace('_', ' ')} b{event[1]}"
    return kind


def _notes(log) -> list:
    notes = []
    for e in log:
        tag = e[0]
        if tag == "send":
            notes.append(f"c{e[1]} sends {e[4]} #{e[2]}")
        elif tag == "received":
            notes.append(f"c{e[1]} gets {e[3]} {name_of(e[4])}")
        elif tag == "reply":
            notes.append(f"broker answers c{e[1]} {e[3]} #{e[2]}: {name_of(e[4])}")
        elif tag == "expire":
            notes.append(f"c{e[1]} expires #{e[2]}")
        elif tag == "fail_unsent":
            notes.append(f"c{e[1]} fails unsent #{e[2]}")
        elif tag == "server" and e[1] == "transition":
            notes.append(f"group {e[2]}→{e[3]}")
        elif tag == "server" and e[1] == "join_complete":
            notes.append(f"join complete: generation {e[3]}")
        elif tag == "server" and e[1] == "member_removed":
            notes.append(f"coordinator removes {e[2]} ({e[3]})")
        elif tag == "reset":
            notes.append(f"c{e[1]} reset by {e[2]} {name_of(e[3])}")
        elif tag == "dropped":
            notes.append(f"c{e[1]} slot {e[2]}: {e[4]} lost")
        elif tag == "assign":
            notes.append(f"c{e[1]} assigned {list(e[4])}")
    return notes


def timeline(system: str, config, schedule, seed: int = 0) -> list:
    """One row per event of *schedule*: index, the event, the member (or ``brokers``/``time``) it
    concerns, what it did (sends, answers, transitions), and after it the group's state and
    generation and every consumer's member state and generation. For system ``impl`` the model is
    run as the differential check runs it (following the coordinator's choices the implementation
    made), so the timeline matches the replay."""
    from model.world import initial_world, step

    companion = None
    if system == "impl":
        from properties.systems.differential import Differential

        companion = Differential(config, seed)
    world = initial_world(config)
    rows = []
    for i, event in enumerate(schedule):
        event = tuple(event)
        new, log = step(world, event)
        if companion is not None:
            new, log, _problem = companion.after(world, event, new, log)
        g = new.group
        rows.append({
            "i": i,
            "event": list(event),
            "what": describe_event(event),
            "actor": _actor(event),
            "notes": _notes(log),
            "group": None if g is None else [g.state, g.generation],
            "members": [[c.state if c.alive else "down", c.generation] for c in new.clients],
        })
        world = new
    return rows
