"""A consumer process restarted with the same group.instance.id (issue 16): the ``restart`` event in
both worlds, what a restart of a static member does to a Stable group (KIP-345's point: no
rebalance), and that the default swarm's static worlds reach restarts, replacements and fencing."""

from __future__ import annotations

import collections

from model.config import Config
from model.errors import Errors
from model.world import initial_world, step
from properties.catalogue import Checker
from properties.explore.walker import settle, walk
from properties.systems.differential import Differential

STATIC = Config(clients=2, brokers=1, partitions=2, static_clients=2, assignors=("range",))


def _stable(config, seed=0):
    """The model and the implementation side by side, settled into a Stable group."""
    world, checker, diff, schedule = initial_world(config), Checker(config), Differential(config, seed), []
    world, violation = settle(world, checker, None, schedule, until_stable=True, companion=diff)
    assert violation is None, violation
    group = world.brokers[world.leader].group
    assert group is not None and group.state == "Stable"
    return world, checker, diff, schedule


def _apply(world, checker, diff, event):
    new, log = step(world, event)
    new, log, problem = diff.after(world, event, new, log)
    assert problem is None, problem
    violation = checker.check(world, new, event, log)
    assert violation is None, violation
    return new, log


def test_a_live_client_cannot_be_restarted_and_a_crashed_one_starts_afresh():
    world, checker, diff, _ = _stable(STATIC)
    new, _ = step(world, ("restart", 0, 1, 0))
    assert new is world  # not enabled: its process runs
    world = world._replace(clients=tuple(c._replace(clock_offset_ms=250) if c.index == 0 else c for c in world.clients))
    crashed, _ = step(world, ("crash", 0, 0))
    restarted, log = step(crashed, ("restart", 0, 1, 0))
    old, fresh = crashed.clients[0], restarted.clients[0]
    assert ("restart", 0) in log
    assert fresh.live and fresh.member_id == "" and fresh.generation == -1 and fresh.assignment == ()
    assert fresh.clock_offset_ms == 250 and fresh.commits == old.commits
    assert [c.epoch for c in fresh.conns] == [c.epoch for c in old.conns]  # nothing of the old one's reaches it
    assert all(not link.open for link in restarted.links[0])  # its old connections closed


def test_a_restarted_static_member_takes_its_place_in_a_stable_group_without_a_rebalance():
    world, checker, diff, schedule = _stable(STATIC)
    group = world.brokers[world.leader].group
    generation, old_id = group.generation, world.clients[0].member_id
    for event in (("crash", 0, 0), ("restart", 0, 1, 0)):
        world, _ = _apply(world, checker, diff, event)
    notes = []

    def on_step(w, event, new, log):
        notes.extend(e[1:] for e in log if e[0] == "server")

    world, violation = settle(world, checker, None, schedule, until_stable=True, companion=diff, on_step=on_step)
    assert violation is None, violation
    replaced = [n for n in notes if n[0] == "static_replaced"]
    assert replaced and replaced[0][1:3] == (generation, old_id)
    group = world.brokers[world.leader].group
    assert group.state == "Stable" and group.generation == generation  # no rebalance
    assert world.clients[0].member_id == replaced[0][3] != old_id and world.clients[0].generation == generation
    assert diff.sim.consumers[0].coordinator.generation_if_stable() is not None  # the implementation's too


def test_the_default_swarm_reaches_restarts_replacements_and_fencing():
    """Coverage of the static worlds the default swarm draws (seeds whose draw has static members),
    measured on the model alone: a default campaign that never restarted a static member, never
    replaced one or never fenced one would check none of the new properties."""
    from properties.explore.swarm import draw

    seen = collections.Counter()

    def on_step(w, event, new, log):
        for entry in log:
            if entry[0] == "restart":
                seen["restart"] += 1
            elif entry[:2] == ("server", "static_replaced"):
                seen["replaced in Stable"] += 1
            elif entry[0] == "reply" and entry[4] == Errors.FENCED_INSTANCE_ID:
                seen["fenced"] += 1

    static_worlds = 0
    for seed in range(400):
        world = draw(seed)
        if not world.config.static_clients:
            continue
        static_worlds += 1
        result = walk(seed, world.config, steps=world.steps, faults=world.faults, on_step=on_step,
                      hash_trace=False, **world.walk_options())
        assert result.violation is None, (seed, result.violation)
    assert static_worlds > 40
    assert seen["restart"] and seen["replaced in Stable"] and seen["fenced"], seen
