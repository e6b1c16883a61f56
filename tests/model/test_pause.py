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


class _Joined(Exception):
    """Stops a settle phase at the world where client 0 has sent its JoinGroup."""

    def __init__(self, world):
        super().__init__()
        self.world = world


def test_a_pause_between_the_joingroup_answer_and_the_syncgroup_is_removed_at_the_sync_deadline():
    """Issue 37's application that stops polling between its JoinGroup answer and its SyncGroup: a
    member has sent its JoinGroup when its application pauses longer than the rebalance timeout. The
    join phase completes and answers it, but nothing reads the answer (its heartbeat thread stays
    disabled until the member has joined: HeartbeatThread.run disables itself while
    hasNotJoinedGroup), so no SyncGroup comes: the coordinator's DelayedSync removes it at the
    rebalance timeout (GroupCoordinator.onExpirePendingSync) and the group rebalances without it.
    The session must outlast the rebalance timeout (else the session expiry, armed at the join's
    completion, removes it first): session.timeout.ms 24 s, max.poll.interval.ms 10 s, a 12 s pause.
    After the pause its late SyncGroup is refused and it joins again. The implementation, replaying
    the same schedule, stays in step."""
    import attrs

    from model.client import PREPARING_REBALANCE
    from properties.explore.walker import walk
    from properties.systems.differential import compare

    config = attrs.evolve(CONFIG, session_timeout_ms=24_000)
    result = walk(0, config, steps=60, faults="none")
    world, schedule = result.world, list(result.schedule)
    assert world.group.state == "Stable" and all(c.state == STABLE for c in world.clients)
    leaving, _ = step(world, ("close", 2, 0))  # a member leaves: the others rejoin
    schedule.append(("close", 2, 0))
    checker = Checker(config)
    logs: list = []
    watching = [True]  # until client 0 has sent its JoinGroup

    def judged(w, event, new, log):
        logs.extend(log)
        assert checker.check(w, new, event, log) is None
        c0 = new.clients[0]
        if watching[0] and c0.state == PREPARING_REBALANCE and c0.join_future is not None \
                and c0.join_future[0] == "pending" and not any(n[0] == "received" for n in c0.notices):
            raise _Joined(new)

    try:
        settle(leaving, None, None, schedule, max_rounds=60, until_stable=True, on_step=judged)
        raise AssertionError("client 0 never sent its JoinGroup")
    except _Joined as joined:
        world, watching[0] = joined.world, False
    member_id = world.clients[0].member_id
    pause = pauses_of(config)[-1]
    assert config.max_poll_interval_ms < pause < config.session_timeout_ms  # past the rebalance timeout only
    event = ("pause", 0, pause, 0)
    world, log = step(world, event)
    schedule.append(event)
    end = world.now + pause
    assert checker.coverage["sync-deadline-missed"] == 0
    while world.now < end:
        world, violation = settle(world, None, None, schedule, max_rounds=1, until_stable=True, on_step=judged)
        assert violation is None
    removed = [e for e in logs if e[0] == "server" and e[1] == "member_removed" and e[2] == member_id]
    assert removed and removed[0][3] == "not_synced", removed
    assert checker.coverage["sync-deadline-missed"] == 1
    world, violation = settle(world, None, None, schedule, max_rounds=60, until_stable=True, on_step=judged)
    assert violation is None and world.clients[0].state == STABLE
    assert world.clients[0].member_id in {m.member_id for m in world.group.members}
    assert compare(config, schedule, 0).divergence is None
