"""The consumer's whole process standing still (issue 14, item 2: the heartbeat thread's iterations
interleaved at the points Kafka allows; here the point where none runs): a long garbage-collection
pause, a starved or suspended VM. Unlike an application pause, the heartbeat thread stops too, so
past the session timeout the coordinator expires the member while it believes itself Stable."""

from __future__ import annotations

from model.client import STABLE
from model.world import step
from properties.catalogue import Checker
from properties.explore.walker import MIXES, settle
from properties.systems.simworld import SimWorld

from tests.helpers.walks import CONFIG, stable_world as _stable_world, walks_agree


def test_a_stalled_process_runs_neither_thread_until_the_stall_ends():
    world, _ = _stable_world()
    stalled, log = step(world, ("stall", 0, 5000, 0))
    client = stalled.clients[0]
    assert client.stalled_until_ms == client.paused_until_ms == world.now + 5000 and ("stall", 0, 5000) in log
    for call in (("poll", 0, 0), ("commit", 0, 0), ("close", 0, 0), ("heartbeat", 0, 0), ("pause", 0, 100, 0),
                 ("stall", 0, 100, 0)):
        assert step(stalled, call)[0] is stalled, call
    assert step(stalled, ("heartbeat", 1, 0))[0] is not stalled  # only client 0 stands still
    later, _ = step(stalled, ("tick", 4999, 0))
    assert step(later, ("heartbeat", 0, 0))[0] is later
    resumed, _ = step(later, ("tick", 1, 0))
    assert step(resumed, ("heartbeat", 0, 0))[0] is not resumed
    paused, _ = step(world, ("pause", 0, 5000, 0))
    assert step(paused, ("heartbeat", 0, 0))[0] is not paused  # a pause leaves the heartbeat thread running
    assert step(world, ("stall", 0, 0, 0))[0] is world
    crashed, _ = step(world, ("crash", 0, 0))
    assert step(crashed, ("stall", 0, 100, 0))[0] is crashed


def test_a_stall_past_the_session_timeout_expires_the_member_and_the_process_rejoins_after_it():
    """The coordinator hears nothing for a session and removes the member (a rebalance without
    it); the stalled client still believes itself Stable in the old generation. Resumed, it learns
    of its removal from its next heartbeat or commit answer and rejoins with a new member id."""
    world, schedule = _stable_world()
    old_id, old_generation = world.clients[0].member_id, world.clients[0].generation
    stall = CONFIG.session_timeout_ms + CONFIG.heartbeat_interval_ms
    world, _ = step(world, ("stall", 0, stall, 0))
    end = world.now + stall
    checker = Checker(CONFIG)
    logs: list = []

    def on_step(w, event, new, log):
        logs.extend(log)
        assert checker.check(w, new, event, log) is None

    while world.now < end:
        world, violation = settle(world, None, None, schedule, max_rounds=1, until_stable=True, on_step=on_step)
        assert violation is None
        if world.now < end:
            assert world.clients[0].member_id == old_id and world.clients[0].state == STABLE  # it knows nothing
    assert any(e[0] == "server" and e[1] == "member_removed" and e[2] == old_id and e[3] == "session" for e in logs)
    assert checker.coverage["stalled-member-expired"] == 1
    assert old_id not in {m.member_id for m in world.group.members}
    world, violation = settle(world, None, None, schedule, max_rounds=60, until_stable=True, on_step=on_step)
    assert violation is None
    client = world.clients[0]
    assert client.state == STABLE and client.member_id not in ("", old_id) and client.generation > old_generation
    assert client.member_id in {m.member_id for m in world.group.members}


def test_the_implementation_world_stalls_the_same_way():
    sim = SimWorld(CONFIG, 0)
    assert sim.step(("poll", 0, 0))
    assert sim.step(("stall", 0, 3000, 0))
    assert not sim.step(("stall", 0, 3000, 0)) and not sim.step(("pause", 0, 3000, 0))
    assert not sim.step(("poll", 0, 0)) and not sim.step(("heartbeat", 0, 0)) and not sim.step(("commit", 0, 0))
    assert sim.step(("heartbeat", 1, 0))
    assert sim.step(("tick", 3000, 0))
    assert sim.step(("heartbeat", 0, 0)) and sim.step(("poll", 0, 0))


def test_walks_with_stalls_agree_with_the_implementation():
    """The coordinator and clients mixes stall processes (half of their pauses), no other mix does;
    the implementation, driven by the same schedules, stays in step with the model."""
    stalls, compared = walks_agree("stall", MIXES, seeds=24, steps=60)
    assert {name for name, n in stalls.items() if n} == {"coordinator", "clients"}, stalls
    assert compared == 6
