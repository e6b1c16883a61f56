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


# What the timeline says of a log entry (model.entries), by its tag (a coordinator entry by its
# note as well); entries not listed here are not shown.
_NOTES = {
    "send": lambda e: f"c{e.c} sends {e.api} #{e.request_id}",
    "received": lambda e: f"c{e.c} gets {e.api} {name_of(e.error)}",
    "reply": lambda e: f"broker answers c{e.c} {e.api} #{e.request_id}: {name_of(e.error)}",
    "expire": lambda e: f"c{e.c} expires #{e.request_id}",
    "fail_unsent": lambda e: f"c{e.c} fails unsent #{e.request_id}",
    ("server", "transition"): lambda e: f"group {e.from_state}→{e.to_state}",
    ("server", "join_complete"): lambda e: f"join complete: generation {e.generation_after}",
    ("server", "append_failed"): lambda e: f"coordinator's append to __consumer_offsets fails: {name_of(e.error)}",
    ("server", "member_removed"): lambda e: f"coordinator removes {e.member_id} ({e.reason})",
    "reset": lambda e: f"c{e.c} reset by {e.api} {name_of(e.error)}",
    "dropped": lambda e: f"c{e.c} slot {e.slot}: {e.api} lost",
    "assign": lambda e: f"c{e.c} assigned {list(e.partitions)}",
    "subscribed": lambda e: f"c{e.c} subscribes to {', '.join(e.topics)}",
    "assignment_refused": lambda e: f"c{e.c} refuses {list(e.partitions)}: not its subscription now",
}


def _notes(log) -> list:
    notes = []
    for e in log:
        say = _NOTES.get((e[0], e.note) if e[0] == "server" else e[0])
        if say is not None:
            notes.append(say(e))
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
