"""The directed schedules (properties/campaign/directed.py, issue 37): hand-made schedules for
error-path cells random interleavings rarely reach. Each reaches its cell in the model with its last
event, the implementation agrees with the model on every event (the differential's comparison), and
no always property fails on the way: the cell is reachable (the report is right to count it among
the reachable ones) and both sides take the path the same way."""

from __future__ import annotations

import pytest

from properties import error_paths as ep
from properties.campaign import directed
from properties.coverage import Coverage
from properties.systems import replay
from properties.systems.differential import compare

SCHEDULES = {d.cell: d for d in directed.load()}
_SPACE = dict(ep.client_cells() + ep.coordinator_cells())  # cell name -> reason it is unreachable, or None


def _cells(config, schedule) -> dict:
    """The cells the model's run of *schedule* reached ({name: count}, both matrices), every event
    applied, no always property failing."""
    coverage = Coverage()
    result = replay("model", config, schedule, on_step=coverage.on_step)
    assert result.violation is None and result.steps == len(schedule), (result.violation, result.steps)
    return {ep.name(k): n for k, n in {**coverage.client_paths, **coverage.coordinator_paths}.items()}


def test_every_directed_schedule_is_made_for_a_different_cell_and_says_why():
    assert len(SCHEDULES) == len(directed.load()) >= 20
    assert all(len(d.why) > 40 for d in SCHEDULES.values())


@pytest.mark.parametrize("cell", sorted(SCHEDULES))
def test_a_directed_schedule_reaches_its_cell_and_both_sides_agree(cell):
    d = SCHEDULES[cell]
    assert cell in _SPACE and _SPACE[cell] is None  # a cell of the space, counted reachable
    assert _cells(d.config, d.schedule).get(cell) == 1
    assert cell not in _cells(d.config, d.schedule[:-1])  # the last event takes it there
    assert compare(d.config, d.schedule, seed=0).divergence is None


def test_the_heartbeat_of_a_reset_generation_schedules_kill_a_heartbeat_thread_that_rechecks_the_state():
    """The three UNJOINED / generation current Heartbeat cells exist because Kafka's heartbeat thread
    checks the member state only before its pollNoWakeup: a thread that checks again after it
    (``heartbeat_rechecks_state_after_poll``) sends no Heartbeat of the reset generation, and each
    of their schedules tells it from the model."""
    from properties.mutation.mutants import applied

    cells = [c for c in SCHEDULES if c.startswith("Heartbeat / ") and c.endswith(" / UNJOINED / " + ep.CURRENT)]
    assert len(cells) == 3
    with applied("heartbeat_rechecks_state_after_poll"):
        for cell in cells:
            d = SCHEDULES[cell]
            divergence = compare(d.config, d.schedule, seed=0).divergence
            assert divergence is not None and divergence.index < len(d.schedule), cell


def test_the_empty_group_pending_leave_schedule_kills_kafka_7909s_mutant():
    """``LeaveGroup / Empty / pending member`` is KAFKA-7909's path itself: a consumer closed with
    its MEMBER_ID_REQUIRED unread leaves with the pending id. The default interleavings kill
    ``pending_member_leave_rejected`` (a pending member's LeaveGroup answered UNKNOWN_MEMBER_ID and
    the member kept) on that path; a campaign whose pins keep it out of reach (``--brokers 3
    --max-faults 30`` missed the cell in 20,000 interleavings) still kills it with this schedule."""
    from properties.mutation.mutants import applied

    d = SCHEDULES["LeaveGroup / Empty / pending member"]
    assert compare(d.config, d.schedule, seed=0).divergence is None
    with applied("pending_member_leave_rejected"):
        divergence = compare(d.config, d.schedule, seed=0).divergence
    assert divergence is not None and divergence.index == len(d.schedule) - 1


#: The schedules shrunk from the default campaign's rarest reaches (2026-12-03: the cells its 2,000
#: interleavings reached one to three times with no schedule of their own, and three coordinator cells
#: reached four to seven times), each with a mutant of impl/ on the path it takes that it kills in a
#: campaign's replay (with the settle phase and the eventually properties): a schedule kept for reach
#: that catches no bug on its path would be reach only.
RARE_WALK_KILLS = {
    "SyncGroup / no group": "deleted_group_record_kept",
    "SyncGroup / Stable / member, older generation": "disconnect_keeps_coordinator",
    "Heartbeat / PreparingRebalance / member, older generation": "heartbeat_illegal_generation_resets_member_id",
    "Heartbeat / PreparingRebalance / member, newer generation": "non_rejoined_kept",
    "OffsetCommit / Stable / member, older generation": "commit_accepts_stale_generation",
    "Heartbeat / FENCED_INSTANCE_ID / UNJOINED / " + ep.OLDER: "heartbeat_fenced_rejoins",
    "Heartbeat / ILLEGAL_GENERATION / PREPARING_REBALANCE / " + ep.OLDER: "heartbeat_rechecks_state_after_poll",
    "Heartbeat / FENCED_INSTANCE_ID / PREPARING_REBALANCE / " + ep.OLDER: "commit_fencing_ignored",
    "Heartbeat / FENCED_INSTANCE_ID / PREPARING_REBALANCE / " + ep.CURRENT: "heartbeat_fenced_rejoins",
    "OffsetCommit / FENCED_INSTANCE_ID / STABLE / " + ep.CURRENT: "commit_fenced_not_fatal",
    "JoinGroup / loading": "ownership_checked_before_loading",
    "LeaveGroup / not coordinator": "heartbeat_disabled_until_stable",
    "LeaveGroup / Stable / unknown member id": "inflight_timeout_ignored",
}


@pytest.mark.parametrize("cell", sorted(RARE_WALK_KILLS))
def test_a_schedule_shrunk_from_a_rare_walk_kills_a_mutant_on_its_path(cell):
    from properties.mutation.mutants import applied

    d = SCHEDULES[cell]
    assert directed.replay("impl", d, d.config, True).violation is None
    with applied(RARE_WALK_KILLS[cell]):
        assert directed.replay("impl", d, d.config, True).violation is not None
