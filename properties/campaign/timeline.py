"""The per-member timeline of a (shrunk) schedule, for the report.

:func:`timeline` re-runs a schedule and records, per event, which member it concerns and what
changed (sends, answers, group transitions, resets), and after it the group's and every member's
state, so a reader sees the failure unfold one column per consumer. It keeps the rows of the last
:data:`TIMELINE_ROWS` events only (the failing step is the schedule's last): a schedule the shrink
budget left long would otherwise make a counterexample file and a report of hundreds of megabytes;
the schedule itself stays whole in the counterexample file.
"""

from __future__ import annotations

from model.errors import name_of
from model.world import initial_world, step
from properties.systems import companion_for


def _actor(event) -> str:
    kind = event[0]
    if kind in ("poll", "heartbeat", "commit", "close", "crash", "connect", "deliver", "drop", "disconnect",
                "clock_jump", "partition", "heal", "pause"):
        return f"c{event[1]}"
    if kind in ("broker_crash", "broker_restart", "failover", "load", "late", "append_error"):
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
        processed = {0: "not processed", 2: "read, handled later"}.get(event[3], "processed")
        return f"disconnect slot {event[2]} ({processed})"
    if kind == "late":
        return f"b{event[1]} handles a request of a broken connection"
    if kind == "connect":
        return f"connect slot {event[2]}"
    if kind == "tick":
        return f"tick {event[1]} ms"
    if kind == "clock_jump":
        return f"clock jumps {event[2]:+d} ms"
    if kind == "append_error":
        return f"the coordinator's next append to __consumer_offsets fails: {name_of(event[1])}"
    if kind == "pause":
        return f"application busy {event[2]} ms (no poll)"
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
        elif tag == "server" and e[1] == "append_failed":
            notes.append(f"coordinator's append to __consumer_offsets fails: {name_of(e[2])}")
        elif tag == "server" and e[1] == "member_removed":
            notes.append(f"coordinator removes {e[2]} ({e[3]})")
        elif tag == "reset":
            notes.append(f"c{e[1]} reset by {e[2]} {name_of(e[3])}")
        elif tag == "dropped":
            notes.append(f"c{e[1]} slot {e[2]}: {e[4]} lost")
        elif tag == "assign":
            notes.append(f"c{e[1]} assigned {list(e[4])}")
    return notes


TIMELINE_ROWS = 150  # rows kept: most shrunk schedules are shorter, and 150 rows are a readable page


def timeline(system: str, config, schedule, seed: int = 0, last: int | None = TIMELINE_ROWS) -> list:
    """One row per event of the last *last* events of *schedule* (None: every event): index, the
    event, the member (or ``brokers``/``time``) it concerns, what it did (sends, answers,
    transitions), and after it the group's state and generation and every consumer's member state
    and generation. For system ``impl`` the model is run as the differential check runs it
    (following the coordinator's choices the implementation made), so the timeline matches the
    replay."""
    companion = companion_for(system, config, seed)
    world = initial_world(config)
    rows = []
    first = 0 if last is None else max(0, len(schedule) - last)
    for i, event in enumerate(schedule):
        event = tuple(event)
        new, log = step(world, event)
        if companion is not None:
            new, log, _problem = companion.after(world, event, new, log)
        if i < first:
            world = new
            continue
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
