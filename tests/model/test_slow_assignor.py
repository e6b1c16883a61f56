"""A slow assignor (issue 14, item 3: "an application delay between the JoinGroup answer and
SyncGroup"). Kafka runs the leader's assignor inside the JoinGroup answer's handler, holding the
coordinator's lock (AbstractCoordinator.JoinGroupResponseHandler.handle), so the whole process stands
still while it runs and the SyncGroup leaves when it returns. Meanwhile the group sits in
CompletingRebalance with a generation it has not stored: a coordinator failover then makes the new
coordinator load the older one, and a member's Heartbeat of the newer generation is answered
ILLEGAL_GENERATION on a live connection."""

from __future__ import annotations

import pytest

from model.client import COMPLETING_REBALANCE, STABLE
from model.config import Config, ConfigError, parse_settings, with_settings
from model.errors import Errors
from model.world import initial_world, step
from properties.catalogue import Checker
from properties.explore import swarm
from properties.explore.walker import walk
from properties.systems.differential import Differential, compare
from tests.helpers.slow_assignor import CONFIG, DELAY, assigning as _assigning, stable as _stable, until as _until


def test_the_setting_is_validated_and_named_like_kafkas():
    assert with_settings(Config(), parse_settings(["groupcheck.assignor.delay.ms=250"])).assignor_delay_ms == 250
    with pytest.raises(ConfigError, match="groupcheck.assignor.delay.ms"):
        with_settings(Config(), parse_settings(["groupcheck.assignor.delay.ms=-1"]))


def test_the_leader_stands_still_while_it_assigns_and_sends_the_sync_group_when_it_returns():
    world, schedule = _stable()
    logs: list = []
    world, _ = step(world, ("close", 2, 0))  # the others rejoin: a rebalance with a leader that assigns
    world = _until(world, schedule, _assigning, logs=logs)
    leader = next(c for c in world.clients if c.pending_sync is not None)
    i = leader.index
    assert leader.state == COMPLETING_REBALANCE and leader.join_future == ("assigning",)
    assert leader.stalled_until_ms == leader.paused_until_ms
    start = next(e for e in reversed(logs) if e[0] == "assigning")
    assert start[1] == i and start[3] == DELAY and world.group.state == "CompletingRebalance"
    end = leader.stalled_until_ms
    assert end - world.now <= DELAY
    for call in (("poll", i, 0), ("heartbeat", i, 0), ("commit", i, 0), ("close", i, 0)):
        assert step(world, call)[0] is world, call  # neither thread runs: no SyncGroup yet
    world, _ = step(world, ("tick", end - world.now, 0))
    resumed, log = step(world, ("heartbeat", i, 0))  # the first step after the stall sends it
    assert ("assigned", i, leader.generation) in log
    client = resumed.clients[i]
    assert client.pending_sync is None and client.join_future[0] == "pending"
    slot = CONFIG.brokers + client.coordinator
    assert any(r.api == "SyncGroup" for r in client.unsent[slot] + client.in_flight[slot])
    world = _until(resumed, schedule, lambda w: w.group.state == "Stable" and all(
        c.state == STABLE for c in w.clients if c.live), checker=Checker(CONFIG))
    assert world.group.generation == leader.generation


def _failover_while_assigning():
    """A stored Stable generation, then a rebalance whose leader assigns slowly, and the group's
    offsets partition moving to another broker meanwhile: the new coordinator loads the stored
    generation, one older than the members hold."""
    world, schedule = _stable()
    stored = world.persisted.generation
    world, _ = step(world, ("close", 2, 0))
    schedule.append(("close", 2, 0))
    world = _until(world, schedule, _assigning)
    assert world.group.generation == stored + 1 and world.persisted.generation == stored
    other = next(b for b in range(CONFIG.brokers) if b != world.leader)
    for event in (("failover", other, 0), ("load", other, 0)):
        world, _ = step(world, event)
        schedule.append(event)
    assert world.group.state == "Stable" and world.group.generation == stored
    return world, schedule, stored


def test_a_failover_while_the_leader_assigns_makes_heartbeats_of_the_newer_generation_illegal():
    world, schedule, stored = _failover_while_assigning()
    members = {c.member_id for c in world.clients if c.live}
    logs: list = []
    checker = Checker(CONFIG)
    world = _until(world, schedule, lambda w: w.group.state == "Stable" and w.group.generation > stored + 1
                   and all(c.state == STABLE for c in w.clients if c.live), logs=logs, checker=checker)
    illegal = [e for e in logs if e[0] == "reply" and e[3] == "Heartbeat" and e[4] == Errors.ILLEGAL_GENERATION]
    assert illegal  # answered on the live connection to the new coordinator
    resets = [e for e in logs if e[0] == "reset" and e[3] == Errors.ILLEGAL_GENERATION]
    assert resets and all(e[5][0] == stored + 1 for e in resets)
    # ILLEGAL_GENERATION resets the generation, not the member id (resetStateAndGeneration(..., false))
    assert {c.member_id for c in world.clients if c.live} == members


def test_the_implementation_goes_through_the_same_failover():
    world, schedule, _ = _failover_while_assigning()
    world = _until(world, schedule, lambda w: w.group.state == "Stable" and all(
        c.state == STABLE for c in w.clients if c.live), logs=None)
    result = compare(CONFIG, schedule)
    assert result.divergence is None, result.divergence
    assert result.steps >= len(schedule) - 5  # (a few quiet events change nothing on either side)


def test_the_implementation_world_holds_the_sync_group_until_the_assignor_returns():
    world, schedule = _stable()
    world, _ = step(world, ("close", 2, 0))
    schedule.append(("close", 2, 0))
    world = _until(world, schedule, _assigning)  # the model's schedule up to the leader's assignor
    leader = next(c.index for c in world.clients if c.pending_sync is not None)
    diff, model = Differential(CONFIG, 0), initial_world(CONFIG)
    for event in schedule:  # the implementation's world follows the model's choices
        new, log = step(model, tuple(event))
        model, _, _ = diff.after(model, tuple(event), new, log)
        assert diff.divergence is None
    sim = diff.sim
    assert [c for c in range(3) if sim.pending_sync[c] is not None] == [leader]
    assert sim.stalled_until[leader] == sim.paused_until[leader] == world.clients[leader].stalled_until_ms
    assert not sim.step(("poll", leader, 0)) and not sim.step(("heartbeat", leader, 0))
    assert sim.step(("tick", sim.stalled_until[leader] - sim.now, 0))
    assert sim.step(("heartbeat", leader, 0)) and sim.pending_sync[leader] is None
    sync = sim.consumers[leader].coordinator.join_future
    assert sync is not None and not sync.is_done()  # chained to the SyncGroup now in flight


def test_the_swarm_draws_slow_assignors_shorter_than_the_timeouts_that_would_expire_the_leader():
    drawn = [swarm.draw(seed) for seed in range(300)]
    slow = [w for w in drawn if dict(w.regimes)["assignor"] == "slow"]
    instant = [w for w in drawn if dict(w.regimes)["assignor"] == "instant"]
    assert len(slow) > 60 and len(instant) > 120
    assert all(w.config.assignor_delay_ms == 0 for w in instant)
    for w in slow:
        c = w.config
        assert 0 < c.assignor_delay_ms <= min(c.session_timeout_ms, c.max_poll_interval_ms, c.request_timeout_ms) // 2
    pinned = swarm.draw(1, pinned={"settings": ["groupcheck.assignor.delay.ms=700"]})
    assert pinned.config.assignor_delay_ms == 700


def test_swarm_walks_with_slow_assignors_agree_with_the_implementation():
    compared = 0
    for seed in range(60):
        world = swarm.draw(seed)
        if world.config.assignor_delay_ms == 0:
            continue
        schedule = walk(seed, world.config, steps=world.steps, faults=world.faults, hash_trace=False, eventually=False,
                        **world.walk_options()).schedule
        if any(e[0] in ("poll", "heartbeat") for e in schedule):
            result = compare(world.config, schedule, seed)
            assert result.divergence is None, (seed, result.divergence)
            compared += 1
        if compared == 6:
            break
    assert compared == 6


def test_the_failover_scenario_kills_the_mutants_that_misread_a_newer_generations_heartbeat():
    """The schedule above replayed on the implementation with each history mutant about an
    ILLEGAL_GENERATION heartbeat: resetting the member id on it (the member then rejoins as a new
    member), and checking the group's state before the heartbeat's generation (answering
    REBALANCE_IN_PROGRESS, which a completing member ignores), each part from the model."""
    from properties.mutation.mutants import applied

    world, schedule, _ = _failover_while_assigning()
    _until(world, schedule, lambda w: w.group.state == "Stable" and all(c.state == STABLE for c in w.clients if c.live))
    for name in ("heartbeat_illegal_generation_resets_member_id", "heartbeat_state_before_generation"):
        with applied(name):
            result = compare(CONFIG, schedule)
        assert result.divergence is not None, name
