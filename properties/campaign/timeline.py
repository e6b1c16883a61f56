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
from model.events import as_event
from model.world import initial_world, step
from properties.systems import companion_for


def _actor(event) -> str:
    """The timeline's column of *event*: its consumer (``c1``), ``brokers`` (a broker, the
    coordinator or the topic), or ``time`` (:mod:`model.events` ``ACTOR``)."""
    actor = event.ACTOR
    if actor == "c":
        return f"c{event.c}"
    return "time" if actor is None else "brokers"


def describe_event(event) -> str:
    """An event in words (the ``pick`` that resolves Kafka's open choices is left out)."""
    return as_event(event).describe()


def _notes(log) -> list:
    notes = []
    for e in log:  # model.entries
        tag = e[0]
        if tag == "send":
            notes.append(f"c{e.c} sends {e.api} #{e.request_id}")
        elif tag == "received":
            notes.append(f"c{e.c} gets {e.api} {name_of(e.error)}")
        elif tag == "reply":
            notes.append(f"broker answers c{e.c} {e.api} #{e.request_id}: {name_of(e.error)}")
        elif tag == "expire":
            notes.append(f"c{e.c} expires #{e.request_id}")
        elif tag == "fail_unsent":
            notes.append(f"c{e.c} fails unsent #{e.request_id}")
        elif tag == "server" and e.note == "transition":
            notes.append(f"group {e.from_state}→{e.to_state}")
        elif tag == "server" and e.note == "join_complete":
            notes.append(f"join complete: generation {e.generation_after}")
        elif tag == "server" and e.note == "append_failed":
            notes.append(f"coordinator's append to __consumer_offsets fails: {name_of(e.error)}")
        elif tag == "server" and e.note == "member_removed":
            notes.append(f"coordinator removes {e.member_id} ({e.reason})")
        elif tag == "reset":
            notes.append(f"c{e.c} reset by {e.api} {name_of(e.error)}")
        elif tag == "dropped":
            notes.append(f"c{e.c} slot {e.slot}: {e.api} lost")
        elif tag == "assign":
            notes.append(f"c{e.c} assigned {list(e.partitions)}")
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
        event = as_event(event)
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
