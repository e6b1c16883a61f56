"""Drive one client of a model world by hand: its connects, its deliveries both ways and its polls,
with 1 ms ticks for the links' latency, until a condition holds. Scenario tests use it to reach an
exact situation (an answer read but not yet handled, an answer delivered but not yet read) and then
play the one event that matters."""

from __future__ import annotations

from model.world import step


def drive(world, c: int, until, schedule: list, checker=None, limit: int = 400):
    """Apply events of client *c* until *until(world)*; each applied event joins *schedule* and, with
    a *checker*, is checked (no violation allowed). Returns the world."""
    slots = range(len(world.links[c]))
    for _ in range(limit):
        if until(world):
            return world
        moves = [("connect", c, s, 0) for s in slots] + [("deliver", c, s, to_broker, 0) for s in slots
                                                          for to_broker in (True, False)]
        for event in moves + [("poll", c, 0), ("tick", 1, 0)]:
            world, applied = apply(world, event, schedule, checker)
            if applied and (event[0] != "poll" or until(world)):
                break
    raise AssertionError("the condition was never met")


def apply(world, event, schedule: list, checker=None):
    """One event; (world, whether it applied). Checked with *checker* if given."""
    new, log = step(world, event)
    if new is world:
        return world, False
    if checker is not None:
        violation = checker.check(world, new, event, log)
        assert violation is None, violation
    schedule.append(event)
    return new, True
