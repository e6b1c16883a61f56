"""A consumer process redeployed with other settings (issue 37's missing events): the ``redeploy``
event in both worlds, what the coordinator does with a member whose JoinGroup carries other timeouts
or protocols than its first (GroupCoordinator.updateMember), and the mutants of impl/ only that
reach kills."""

from __future__ import annotations

import attrs
import pytest

from model.config import REDEPLOYS, Config, join_group_request_timeout, redeployed, settling_redeploys
from model.errors import Errors
from model.world import step
from properties.mutation.mutants import applied
from tests.helpers.sides import Sides

STATIC = Config(clients=2, brokers=1, partitions=2, static_clients=2, assignors=("range",))
DYNAMIC = Config(clients=2, brokers=1, partitions=2, assignors=("range", "roundrobin"))
SETTING = {name: i for i, (name, _) in enumerate(REDEPLOYS)}
LONGER_SESSION = SETTING["session.timeout.ms x1.5"]
LONGER_POLL = SETTING["max.poll.interval.ms x2"]
RANGE_ONLY = SETTING["partition.assignment.strategy=range"]
ROUNDROBIN_ONLY = SETTING["partition.assignment.strategy=roundrobin"]


def test_redeployed_settings_are_the_worlds_own_changed_and_valid():
    config = Config()
    assert redeployed(config, 0) is config
    for i, (name, _) in enumerate(REDEPLOYS[1:], 1):
        other = redeployed(config, i)
        assert other != config, name
        assert redeployed(config, i) is other  # kept
    assert redeployed(config, LONGER_SESSION).session_timeout_ms == 9000
    assert redeployed(config, LONGER_POLL).rebalance_timeout_ms == 20000
    assert redeployed(config, RANGE_ONLY).protocols(1) == ("range",)


def test_a_redeployed_process_joins_with_its_new_settings_and_a_restart_keeps_them():
    sides = Sides(STATIC).settle()
    assert sides.problem is None, sides.problem
    before = sides.world
    assert step(before, ("redeploy", 0, LONGER_SESSION, 0))[0] is before  # a live process is not redeployed
    sides.apply(("crash", 0, 0), ("redeploy", 0, 99, 0))
    assert sides.world.clients[0].alive is False  # no such settings: refused on both sides
    sides.apply(("redeploy", 0, LONGER_SESSION, 0))
    assert sides.problem is None, sides.problem
    fresh = sides.world.clients[0]
    assert fresh.live and fresh.settings == LONGER_SESSION and fresh.member_id == ""
    assert sides.diff.sim.settings[0] == LONGER_SESSION
    sides.settle()
    assert sides.problem is None, sides.problem
    member = next(m for m in sides.group().members if m.group_instance_id == STATIC.instance_id(0))
    assert member.session_timeout_ms == 9000 and member.rebalance_timeout_ms == STATIC.rebalance_timeout_ms
    sides.apply(("crash", 0, 0), ("restart", 0, 1, 0))
    assert sides.problem is None, sides.problem
    assert sides.world.clients[0].settings == LONGER_SESSION  # a restart runs the deployed settings again


def _longer_session_then_silence(config=STATIC):
    """A Stable static group; client 0's process is redeployed with a session timeout of 9 s instead
    of 6 s and takes its place; then it crashes (a static member does not leave) and 7 s pass."""
    sides = Sides(config).settle()
    sides.apply(("crash", 0, 0), ("redeploy", 0, LONGER_SESSION, 0))
    sides.settle()
    sides.apply(("crash", 0, 0), ("tick", 7000, 0))
    return sides


def test_the_coordinator_expires_a_redeployed_member_at_its_new_session_timeout():
    sides = _longer_session_then_silence()
    assert sides.problem is None, sides.problem
    instances = {m.group_instance_id for m in sides.group().members}
    assert STATIC.instance_id(0) in instances  # 7 s of silence: within its 9 s
    assert STATIC.instance_id(1) not in instances  # the other's 6 s ran out
    sides.apply(("tick", 2500, 0))
    assert sides.problem is None, sides.problem
    assert STATIC.instance_id(0) not in {m.group_instance_id for m in sides.group().members}


def test_a_coordinator_that_keeps_the_first_joins_session_timeout_is_caught():
    with applied("rejoin_keeps_session_timeout"):
        sides = _longer_session_then_silence()
    assert sides.problem is not None and "impl-matches-model" in str(sides.problem)


def test_a_replaced_static_member_keeps_its_old_session_until_its_next_heartbeat():
    """GroupCoordinator.updateStaticMemberAndRebalance schedules the replaced member's next expiry
    (completeAndScheduleNextHeartbeatExpiration) before updateMember gives it the new session
    timeout: until its first heartbeat the old 6 s hold. A process redeployed with 9 s that stands
    still right after its JoinGroup is answered is expired after 6 s."""
    def run():
        sides = Sides(STATIC).settle()
        sides.apply(("crash", 0, 0), ("redeploy", 0, LONGER_SESSION, 0))
        # client 0 joins: FindCoordinator, then its JoinGroup, answered at once in a Stable group
        sides.quiet(200, heartbeats=False, until=lambda w: any(
            m.group_instance_id == STATIC.instance_id(0) and m.session_timeout_ms == 9000 for m in w.group.members))
        sides.apply(("crash", 0, 0), ("tick", 7000, 0))
        return sides

    sides = run()
    assert sides.problem is None, sides.problem
    assert STATIC.instance_id(0) not in {m.group_instance_id for m in sides.group().members}
    with applied("static_replacement_expiry_with_new_timeout"):
        mutated = run()
    assert mutated.problem is not None and "impl-matches-model" in str(mutated.problem)


def test_a_static_member_redeployed_with_another_assignor_makes_the_group_rebalance():
    """Both members support range and roundrobin and prefer range; redeployed with roundrobin only,
    their JoinGroups to the Stable group make roundrobin the vote's winner: the coordinator
    rebalances rather than persisting the new member id (updateStaticMemberAndRebalance:
    selectProtocol against the group's protocol)."""
    def run():
        sides = Sides(attrs.evolve(STATIC, assignors=("range", "roundrobin"))).settle()
        assert sides.group().protocol_name == "range"
        generation = sides.group().generation
        sides.apply(("crash", 0, 0), ("redeploy", 0, ROUNDROBIN_ONLY, 0), ("crash", 1, 0),
                    ("redeploy", 1, ROUNDROBIN_ONLY, 0))
        sides.settle()
        return sides, generation

    sides, generation = run()
    assert sides.problem is None, sides.problem
    assert sides.group().protocol_name == "roundrobin" and sides.group().generation > generation
    with applied("static_replacement_ignores_protocols"):
        mutated, _ = run()
    assert mutated.problem is not None


def test_a_static_member_redeployed_with_an_assignor_the_group_lacks_is_refused():
    """A range-only group: client 0's process redeployed with roundrobin only rejoins by its
    instance id, and the group's protocol counts still hold its old record's range, so roundrobin is
    not supported by every member (GroupMetadata.supportsProtocols, checked before the static
    member is replaced): INCONSISTENT_GROUP_PROTOCOL, fatal to the new process; its old member stays."""
    sides = Sides(STATIC).settle()
    old_id = sides.world.clients[0].member_id
    sides.apply(("crash", 0, 0), ("redeploy", 0, ROUNDROBIN_ONLY, 0))
    sides.quiet(300, heartbeats=False, until=lambda w: w.clients[0].fatal is not None)
    assert sides.problem is None, sides.problem
    assert sides.world.clients[0].fatal is not None and sides.diff.sim.failed[0] is not None
    assert old_id in {m.member_id for m in sides.group().members}


def test_a_member_with_no_protocol_in_common_is_refused_and_stops():
    """Client 1 redeployed with roundrobin only while client 0 is redeployed with range only: the
    group's members share no protocol with it (GroupMetadata.supportsProtocols):
    INCONSISTENT_GROUP_PROTOCOL, which the consumer throws from its poll (fatal), on both sides."""
    sides = Sides(DYNAMIC).settle()
    sides.apply(("crash", 0, 0), ("redeploy", 0, RANGE_ONLY, 0))
    sides.settle()
    assert sides.problem is None, sides.problem
    sides.apply(("crash", 1, 0), ("redeploy", 1, ROUNDROBIN_ONLY, 0))
    sides.quiet(300, heartbeats=False, until=lambda w: w.clients[1].fatal is not None)
    assert sides.problem is None, sides.problem
    assert sides.world.clients[1].fatal is not None
    assert any(e[0] == "received" and e.c == 1 and e.error == Errors.INCONSISTENT_GROUP_PROTOCOL for e in sides.log)
    assert sides.diff.sim.failed[1] is not None  # the implementation's poll threw too


@pytest.mark.parametrize("name", ["rejoin_keeps_session_timeout", "rejoin_keeps_rebalance_timeout",
                                  "static_replacement_expiry_with_new_timeout", "static_replacement_ignores_protocols"])
def test_the_new_mutants_change_nothing_without_a_redeploy(name):
    """What makes them the redeploy's to kill: a world whose processes keep their settings runs the
    same under each (a static group settling, a restart, a settle again)."""
    def run():
        sides = Sides(STATIC).settle()
        sides.apply(("crash", 0, 0), ("restart", 0, 1, 0))
        sides.settle()
        return sides

    with applied(name):
        mutated = run()
    assert mutated.problem is None, mutated.problem


# Campaign seed 1,002,496's world (JoinGroup v3): a consumer gives up on its JoinGroup after
# max(8 s, 5 s + 5 s) = 10 s; a process redeployed with max.poll.interval.ms x2 makes the group's
# rebalance timeout 10 s as well.
V3 = Config(clients=4, brokers=1, partitions=1, join_group_version=3, session_timeout_ms=31500,
            heartbeat_interval_ms=1666, max_poll_interval_ms=5000, request_timeout_ms=8000, latency_ms=1,
            assignor_delay_ms=1500, assignors=("roundrobin",))


def test_a_redeploy_whose_join_phase_outlasts_a_joingroup_timeout_is_not_offered_up_to_v3():
    every = tuple(range(1, len(REDEPLOYS)))
    assert join_group_request_timeout(V3.request_timeout_ms, V3.max_poll_interval_ms) == 10000
    assert redeployed(V3, LONGER_POLL).max_poll_interval_ms == 10000  # the join phase may last as long
    assert settling_redeploys(V3) == tuple(s for s in every if s != LONGER_POLL)
    # the answer comes a round trip after the join phase: it must not come after the timeout (a
    # request expires when more than its timeout has passed), so instant links would make it settle...
    assert LONGER_POLL in settling_redeploys(attrs.evolve(V3, latency_ms=0))
    # ...and so would a JoinGroup timeout of the join phase and a round trip
    assert LONGER_POLL in settling_redeploys(attrs.evolve(V3, request_timeout_ms=10002))
    assert LONGER_POLL not in settling_redeploys(attrs.evolve(V3, request_timeout_ms=10001))
    # from v4 a member that gave up joins again with the id MEMBER_ID_REQUIRED gave it: all kept
    assert settling_redeploys(attrs.evolve(V3, join_group_version=4)) == every
    # v0: the coordinator waits up to the session timeout, so the longer session is the one left out
    v0 = attrs.evolve(V3, join_group_version=0, session_timeout_ms=30000, request_timeout_ms=35000)
    assert LONGER_SESSION not in settling_redeploys(v0) and LONGER_POLL in settling_redeploys(v0)
    assert LONGER_SESSION in settling_redeploys(attrs.evolve(v0, request_timeout_ms=45002))


def test_the_walker_redeploys_only_with_settings_the_group_settles_with():
    """Regression (campaign seed 1,002,496, 50,000 interleavings from seed 1,000,000: eventually-stable
    failed after 3,756 events, model and implementation agreeing at every one). The walker offers a
    redeploy only with the world's settings or one of :func:`settling_redeploys`; that seed's world
    now settles, and so does every walk of its kind."""
    from properties.explore.swarm import draw
    from properties.explore.walker import walk
    from properties.systems import run

    world = draw(1002496)
    assert world.config.join_group_version == 3 and world.mix == "clients"
    assert LONGER_POLL not in settling_redeploys(world.config)
    result = run("impl", 1002496, world.config, steps=world.steps, faults=world.faults, hash_trace=False,
                 **world.walk_options())
    assert result.violation is None, result.violation
    redeploys = 0
    for seed in range(1002490, 1002510):  # the same world's walks: redeploys offered, never the longer poll
        schedule = walk(seed, world.config, steps=world.steps, faults=world.faults, **world.walk_options()).schedule
        settings = [e[2] for e in schedule if e[0] == "redeploy"]
        assert LONGER_POLL not in settings
        redeploys += len(settings)
    assert redeploys > 0


def test_the_hypothesis_machines_draw_the_same_redeploys_as_the_walker():
    """They check the eventually properties after the faults too (properties/explore/machines.py)."""
    from model.world import initial_world
    from properties.explore.machines import fault_events

    for version, offered in ((3, {0, LONGER_SESSION, 3, RANGE_ONLY, ROUNDROBIN_ONLY}), (5, set(range(len(REDEPLOYS))))):
        config = Config(clients=2, brokers=1, partitions=3, join_group_version=version)  # 10 s poll interval, 8 s requests
        world, _ = step(initial_world(config), ("crash", 0, 0))
        assert {e[2] for e in fault_events(world) if e[0] == "redeploy"} == offered, version


def test_kafkas_group_churns_when_a_joingroup_times_out_inside_a_longer_join_phase():
    """The schedule campaign seed 1,002,496 failed eventually-stable with (3,756 events, kept in
    tests/systems/data): both sides agree at every event, so this is Kafka's own behaviour, and the
    world is what was wrong. Client 1 was redeployed with max.poll.interval.ms x2 (10 s), which
    became the group's rebalance timeout; client 2 gives up on its JoinGroup after
    max(8 s, 5 s + 5 s) = 10 s, and each JoinGroup it sends is a new member's (v3), answered only
    when the join phase ends, 10 s after it arrived, held open by the id its last attempt left
    behind: a round trip after its timeout. Every generation the same, 51 of them."""
    import json
    from pathlib import Path

    from model.world import initial_world
    from properties.campaign.counterexample import config_from_dict
    from properties.systems.differential import compare

    document = json.loads((Path(__file__).parent / "data" / "joingroup_timeout_inside_a_longer_join_phase.json").read_text())
    config, schedule = config_from_dict(document["config"]), [tuple(e) for e in document["schedule"]]
    assert config.join_group_version == 3 and LONGER_POLL not in settling_redeploys(config)
    assert ("redeploy", 1, LONGER_POLL) in {e[:3] for e in schedule}
    assert compare(config, schedule, document["seed"]).divergence is None
    world, generations = initial_world(config), set()
    for event in schedule:
        world, _ = step(world, event)
        if world.group is not None:
            generations.add(world.group.generation)
    group = world.group
    assert group.state != "Stable" and group.generation >= 50 and len(generations) >= 50
    waits = {m.rebalance_timeout_ms for m in group.members}
    assert max(waits) == 10000 == join_group_request_timeout(config.request_timeout_ms, config.max_poll_interval_ms)
    assert world.clients[2].member_id == "" and world.clients[2].generation == -1  # gave up again
