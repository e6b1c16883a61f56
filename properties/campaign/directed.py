"""Directed schedules: hand-made schedules that reach error paths random interleavings rarely do.

Some cells of the error-path matrices (:mod:`properties.error_paths`) need several things to line up
that a random walk seldom lines up: a request on the wire while the coordinator fails over away and
back, a request the broker read before its connection broke handled a whole rebalance later, a
close() between the coordinator's decision and its answer's arrival, a late joiner's
MEMBER_ID_REQUIRED read by its shutdown's commit (issue 37: the default campaign's 2,000
interleavings reached none of them). Each is reached by a schedule made for it, kept in
``directed.json`` beside this module with the cell, why the schedule gets there in Kafka's code, the
world (a :class:`model.config.Config` as a counterexample file writes it) and the events.

A campaign of the implementation or the model replays every one after its interleavings
(:func:`properties.campaign.spark.run_directed`, each through :func:`replay`: with a settle phase
and the eventually properties when the campaign has them, on the system under test and under its
``--mutant``; ``--no-directed`` skips them). So every campaign takes each of those paths on the
system it checks, and its report counts their cells apart from the interleavings' (``directed`` in
each matrix row). A directed schedule that fails is a counterexample like any other, shrunk and
written with the cell it was made for. ``tests/test_error_path_schedules.py`` checks that each
schedule still reaches its cell with its last event and that model and implementation agree on it.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from model.config import Config

#: the directed schedules, beside this module
SCHEDULES_FILE = Path(__file__).with_name("directed.json")


@attrs.frozen
class Directed:
    """One directed schedule: the error-path *cell* it was made to reach (its name in
    :func:`properties.error_paths.name` form), *why* it gets there, the world and the events."""

    cell: str
    why: str
    config: Config
    schedule: tuple


def load(path: Path = SCHEDULES_FILE) -> tuple:
    """Every directed schedule of *path*, in the file's order."""
    from model.events import as_event
    from properties.campaign.counterexample import config_from_dict

    entries = json.loads(Path(path).read_text())
    return tuple(Directed(e["cell"], e["why"], config_from_dict(e["config"]),
                          tuple(as_event(tuple(event)) for event in e["schedule"])) for e in entries)


def replay(system: str, directed: Directed, config: Config, eventually: bool, on_step=None):
    """*directed*'s schedule on *system* (``impl`` or ``model``) in *config* (its own world, or that
    world with a campaign's ``--wire``), with a settle phase after it and the eventually properties
    judged there when *eventually*; *on_step* as the walker's (coverage). The RunResult."""
    from properties.systems import replay as replay_schedule

    return replay_schedule(system, config, directed.schedule, seed=0, check_eventually=eventually,
                           settle_after=eventually, on_step=on_step)
