"""Error-path cells no random campaign has reached (issue 37), reached by hand-made schedules
(tests/data/error_path_schedules.json: the cell, why the schedule gets there with Kafka's code, the
world and the events): each schedule reaches its cell in the model with its last event, the
implementation agrees with the model on every event (the differential's comparison), and no always
property fails on the way. They show that the cell is reachable (so the report is right to count it
among the reachable ones) and that both sides take the path the same way; the campaign's own reach
is in its report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model.world import initial_world, step
from properties import error_paths as ep
from properties.campaign.counterexample import config_from_dict
from properties.catalogue import Checker
from properties.coverage import Coverage
from properties.systems.differential import compare

SCHEDULES = {e["cell"]: e for e in json.loads((Path(__file__).parent / "data" / "error_path_schedules.json").read_text())}
_SPACE = dict(ep.client_cells() + ep.coordinator_cells())  # cell name -> reason it is unreachable, or None


def _cells(config, schedule: list) -> dict:
    """The cells the model's run of *schedule* reached ({name: count}, both matrices), every event
    applied, no always property failing."""
    coverage, checker = Coverage(), Checker(config)
    coverage.start_run(0)
    world = initial_world(config)
    for event in schedule:
        new, log = step(world, event)
        assert new is not world, f"{event} was not enabled"
        assert checker.check(world, new, event, log) is None
        coverage.on_step(world, event, new, log)
        world = new
    return {ep.name(k): n for k, n in {**coverage.client_paths, **coverage.coordinator_paths}.items()}


@pytest.mark.parametrize("cell", sorted(SCHEDULES))
def test_a_cell_no_campaign_reached_is_reached_by_its_schedule_and_both_sides_agree(cell):
    entry = SCHEDULES[cell]
    config, schedule = config_from_dict(entry["config"]), [tuple(e) for e in entry["schedule"]]
    assert cell in _SPACE and _SPACE[cell] is None  # a cell of the space, counted reachable
    assert _cells(config, schedule).get(cell) == 1
    assert cell not in _cells(config, schedule[:-1])  # the last event takes it there
    assert compare(config, schedule, seed=0).divergence is None
