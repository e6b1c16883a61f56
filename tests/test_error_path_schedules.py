"""Error-path cells no random campaign has reached (issue 37), reached by hand-made schedules:
each schedule reaches its cell in the model, the implementation agrees with the model on every
event of it (the differential's comparison), and no always property fails on the way. They show
that the cell is reachable (so the report is right to count it among the reachable ones) and
that both sides take the path the same way; the campaign's own reach is in its report."""

from __future__ import annotations

import pytest

from model.config import Config
from model.world import initial_world, step
from properties import error_paths as ep
from properties.catalogue import Checker
from properties.coverage import Coverage
from properties.systems.differential import compare

#: client 0 finds coordinator 0 (slot 3 is its connection to it), its first JoinGroup is answered
#: MEMBER_ID_REQUIRED and it rejoins with the id it was given
_JOINS = [("poll", 0, 0), ("connect", 0, 0, 0), ("poll", 0, 0), ("tick", 1, 0), ("deliver", 0, 0, True, 0),
          ("tick", 1, 0), ("deliver", 0, 0, False, 0), ("poll", 0, 0), ("connect", 0, 3, 0), ("poll", 0, 0),
          ("tick", 1, 0), ("deliver", 0, 3, True, 0), ("tick", 1, 0), ("deliver", 0, 3, False, 0), ("poll", 0, 0)]
#: client 1 finds the coordinator and sends its first JoinGroup, answered MEMBER_ID_REQUIRED: the
#: answer arrives and is not read. Its shutdown's commitAsync ends with pollNoWakeup
#: (ConsumerCoordinator.commitOffsetsAsync), which runs the handler (AbstractCoordinator's
#: JoinGroupResponseHandler: new Generation(DEFAULT_GENERATION_ID, memberId, null)) with no second
#: JoinGroup, and close() sends a LeaveGroup with the pending id (maybeLeaveGroup: the member is
#: PREPARING_REBALANCE with a member id); KAFKA-7909's path (tests/model/test_shutdown.py), here with
#: a group that is no longer Empty
_SECOND_JOINS_AND_SHUTS_DOWN = [
    ("poll", 1, 0), ("connect", 1, 0, 0), ("poll", 1, 0), ("tick", 1, 0), ("deliver", 1, 0, True, 0), ("tick", 1, 0),
    ("deliver", 1, 0, False, 0), ("poll", 1, 0), ("connect", 1, 3, 0), ("poll", 1, 0), ("tick", 1, 0),
    ("deliver", 1, 3, True, 0), ("tick", 1, 0), ("deliver", 1, 3, False, 0), ("shutdown", 1, 0), ("tick", 1, 0),
    ("deliver", 1, 3, True, 0)]

SCHEDULES = {
    # No group record is written before the failover, so broker 1 loads no group; client 0's
    # JoinGroup to broker 0 is answered NOT_COORDINATOR (it keeps its id and PREPARING_REBALANCE), it
    # finds broker 1, and its shutdown's LeaveGroup reaches a coordinator without the group
    # (GroupCoordinator.handleLeaveGroup: case None, UNKNOWN_MEMBER_ID).
    "LeaveGroup / no group": (Config(clients=1), _JOINS + [
        ("failover", 1, 0), ("load", 1, 0), ("tick", 1, 0), ("deliver", 0, 3, True, 0), ("tick", 1, 0),
        ("deliver", 0, 3, False, 0), ("poll", 0, 0), ("poll", 0, 0), ("tick", 1, 0), ("deliver", 0, 0, True, 0),
        ("tick", 1, 0), ("deliver", 0, 0, False, 0), ("shutdown", 0, 0), ("connect", 0, 4, 0), ("poll", 0, 0),
        ("poll", 0, 0), ("tick", 1, 0), ("deliver", 0, 4, True, 0)]),
    # client 0's JoinGroup waits out the initial rebalance delay: the group is PreparingRebalance
    # (handleLeaveGroup: isPendingMember, removePendingMemberAndUpdateGroup)
    "LeaveGroup / PreparingRebalance / pending member": (Config(clients=2), _JOINS + [
        ("tick", 1, 0), ("deliver", 0, 3, True, 0)] + _SECOND_JOINS_AND_SHUTS_DOWN),
    # the delay runs out and client 0's JoinGroup is answered; it has not sent its SyncGroup yet
    "LeaveGroup / CompletingRebalance / pending member": (Config(clients=2), _JOINS + [
        ("tick", 1, 0), ("deliver", 0, 3, True, 0), ("tick", 3000, 0)] + _SECOND_JOINS_AND_SHUTS_DOWN),
    # client 0 forms the group alone and is Stable
    "LeaveGroup / Stable / pending member": (Config(clients=2), [
        ("poll", 0, 0), ("connect", 0, 0, 0), ("poll", 0, 0), ("tick", 100, 0), ("deliver", 0, 0, True, 0),
        ("tick", 100, 0), ("deliver", 0, 0, False, 0), ("poll", 0, 0), ("connect", 0, 3, 0), ("poll", 0, 0),
        ("tick", 100, 0), ("deliver", 0, 3, True, 0), ("tick", 100, 0), ("deliver", 0, 3, False, 0), ("poll", 0, 0),
        ("tick", 100, 0), ("deliver", 0, 3, True, 0), ("tick", 3100, 0), ("deliver", 0, 3, False, 0), ("poll", 0, 0),
        ("tick", 100, 0), ("deliver", 0, 3, True, 0)] + _SECOND_JOINS_AND_SHUTS_DOWN),
}


def _cells(config: Config, schedule: list) -> tuple:
    """The cells the model's run of *schedule* reached ({name: count} for each matrix), every event
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
    return ({ep.name(k): n for k, n in coverage.client_paths.items()},
            {ep.name(k): n for k, n in coverage.coordinator_paths.items()})


_SPACE = dict(ep.client_cells() + ep.coordinator_cells())  # cell name -> reason it is unreachable, or None


@pytest.mark.parametrize("cell", sorted(SCHEDULES))
def test_a_cell_no_campaign_reached_is_reached_by_its_schedule_and_both_sides_agree(cell):
    config, schedule = SCHEDULES[cell]
    assert cell in _SPACE and _SPACE[cell] is None  # a cell of the space, counted reachable
    client, coordinator = _cells(config, schedule)
    assert {**client, **coordinator}.get(cell) == 1, (client, coordinator)
    client, coordinator = _cells(config, schedule[:-1])
    assert cell not in client and cell not in coordinator  # the last event takes it there
    assert compare(config, schedule, seed=0).divergence is None
