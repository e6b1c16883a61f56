"""The application pausing between two polls (issue 14, item 2): the consumer's own calls stop, the
heartbeat thread does not, in the model and in the implementation's world alike."""

from __future__ import annotations

from model.client import STABLE, UNJOINED
from model.world import step
from properties.catalogue import Checker
from properties.explore.walker import MIXES, pauses_of, settle
from properties.systems.simworld import SimWorld
from tests.helpers.walks import CONFIG, stable_world as _stable_world, walks_agree


def test_a_paused_application_makes_no_call_until_its_pause_ends():
    world, _ = _stable_world()
    paused, log = step(world, ("pause", 0, 5000, 0))
    assert paused.clients[0].paused_until_ms == world.now + 5000 and ("pause", 0, 5000) in log
    for call in (("poll", 0, 0), ("commit", 0, 0), ("close", 0, 0), ("pause", 0, 100, 0)):
        assert step(paused, call)[0] is paused, call  # the application is busy
    assert step(paused, ("poll", 1, 0))[0] is not paused  # only client 0's application is
    assert step(paused, ("heartbeat", 0, 0))[0] is not paused  # the heartbeat thread runs on
    later, _ = step(paused, ("tick", 4999, 0))
    assert step(later, ("poll", 0, 0))[0] is later
    resumed, _ = step(later, ("tick", 1, 0))
    assert step(resumed, ("poll", 0, 0))[0] is not resumed
    assert step(world, ("pause", 0, 0, 0))[0] is world  # no empty pause
    crashed, _ = step(world, ("crash", 0, 0))
    assert step(crashed, ("pause", 0, 100, 0))[0] is crashed  # only a live client's application


def test_a_pause_past_max_poll_interval_makes_the_heartbeat_thread_leave_and_the_next_poll_rejoin():
    """KIP-62: the heartbeat thread keeps the member alive while the application is busy, up to
    max.poll.interval.ms; then it leaves the group (LeaveGroup, member id dropped); the group
    rebalances without it; the application's next poll rejoins as a new member."""
    world, schedule = _stable_world()
    old_id = world.clients[0].member_id
    pause = pauses_of(CONFIG)[-1]
    assert pause > CONFIG.max_poll_interval_ms
    world, _ = step(world, ("pause", 0, pause, 0))
    end = world.now + pause
    logs: list = []
    seen: list = []

    checker = Checker(CONFIG)

    def on_step(w, event, new, log):
        logs.extend(log)
        seen.append((new.now, new.clients[0].member_id, new.clients[0].state))
        assert checker.check(w, new, event, log) is None

    while world.now < end:  # quiet time while client 0's application is busy: polls of it are refused
        world, violation = settle(world, None, None, schedule, max_rounds=1, until_stable=True, on_step=on_step)
        assert violation is None
    assert ("poll_timeout", 0) in logs and checker.coverage["poll-timeout-leave"] == 1
    assert any(member_id == "" and state == UNJOINED for now, member_id, state in seen if now < end)
    assert any(e[0] == "server" and e[1] == "member_removed" and e[2] == old_id for e in logs)
    world, violation = settle(world, None, None, schedule, max_rounds=60, until_stable=True, on_step=on_step)
    assert violation is None
    assert world.clients[0].state == STABLE and world.clients[0].member_id not in ("", old_id)
    assert world.clients[0].member_id in {m.member_id for m in world.group.members}


def test_the_implementation_world_pauses_the_same_way():
    sim = SimWorld(CONFIG, 0)
    assert sim.step(("poll", 0, 0))
    assert sim.step(("pause", 0, 3000, 0))
    assert not sim.step(("pause", 0, 3000, 0))
    assert not sim.step(("poll", 0, 0)) and not sim.step(("commit", 0, 0)) and not sim.step(("close", 0, 0))
    assert sim.step(("heartbeat", 0, 0)) and sim.step(("poll", 1, 0))
    assert sim.step(("tick", 3000, 0))
    assert sim.step(("poll", 0, 0))


def test_walks_with_pauses_agree_with_the_implementation():
    """The mixes with pauses offer them, the default mix never; and the implementation, driven by
    the same schedules, stays in step with the model (the poll refusals line up)."""
    pauses, compared = walks_agree("pause", ("default", "clients"), seeds=24, steps=60)
    assert pauses["default"] == 0 and pauses["clients"] > 10, pauses
    assert compared == 6
    assert MIXES["default"].pause_chance == 0 and all(MIXES[m].pause_chance > 0 for m in ("heavy", "coordinator", "clients"))
