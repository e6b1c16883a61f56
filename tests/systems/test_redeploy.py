"""A consumer process redeployed with other settings (issue 37's missing events): the ``redeploy``
event in both worlds, what the coordinator does with a member whose JoinGroup carries other timeouts
or protocols than its first (GroupCoordinator.updateMember), and the mutants of impl/ only that
reach kills."""

from __future__ import annotations

import attrs
import pytest

from model.config import REDEPLOYS, Config, redeployed
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
