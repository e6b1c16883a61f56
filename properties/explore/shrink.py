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

"""

from __future__ import annotations

import hashlib
import re
import time

import attrs

from properties.catalogue import BY_NAME, EVENTUALLY

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


def _fails_same(replay, schedule, sig, eventually):
    result = replay(schedule, check_eventually=eventually)
    if result.violation is not None and signature(result.violation) == sig:
        return result
    return None


def shrink(replay, schedule, violation, budget_seconds: float = 10.0, clock=time.monotonic) -> Shrunk:
    """The smallest schedule found within *budget_seconds* that still fails with *violation*'s
    signature (see the module docstring). *replay(schedule, check_eventually=...)* re-runs a
    schedule on the system that failed and returns its RunResult — for a system by name,
    :func:`properties.systems.replayer` (explore does not know the systems; they are handed in)."""
    start = clock()
    deadline = start + budget_seconds
    sig = signature(violation)
    eventually = is_eventually(violation.property)
    schedule = tuple(tuple(e) for e in schedule)
    replays = 1
    best = _fails_same(replay, schedule, sig, eventually)
    if best is None:  # should not happen (replays are exact); keep the original, unshrunk
        result = replay(schedule, check_eventually=eventually)
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
            result = _fails_same(replay, candidate, sig, eventually) if candidate else None
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
