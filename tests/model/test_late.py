"""Requests a broker read from a connection that broke, handled late (``disconnect`` with
``processed`` 2, then ``late``): Kafka's request handlers take requests from one queue shared by
every connection and handle one whose connection has closed, dropping only its response. It is
how a request carrying an older generation reaches a coordinator that has moved on (issue 14: the
OffsetCommit ILLEGAL_GENERATION answer, ``commit-fenced``, was never reached before)."""

from model.config import Config
from model.errors import Errors
from model.world import LATE, initial_world, step
from properties.catalogue import Checker
from properties.explore.swarm import draw
from properties.explore.walker import settle, walk
from properties.systems.differential import compare


def _stable(config):
    world, violation = settle(initial_world(config), Checker(config), None, [])
    assert violation is None
    return world


def _commit_in_transit(config):
    """A stable group; client 0 commits and its OffsetCommit is on the wire to the coordinator."""
    world = _stable(config)
    world, _ = step(world, ("commit", 0, 0))
    slot = config.brokers + world.clients[0].coordinator  # the coordinator connection (model.client.Step.coordinator_slot)
    if not world.links[0][slot].to_broker:
        world, _ = step(world, ("poll", 0, 0))
    assert [m[3].api for m in world.links[0][slot].to_broker] == ["OffsetCommit"]
    return world, slot


def test_a_late_request_is_handled_after_the_break_and_its_answer_goes_nowhere():
    config = Config(clients=2, brokers=1, partitions=2)
    world, slot = _commit_in_transit(config)
    before = world.committed
    world, log = step(world, ("disconnect", 0, slot, LATE, 0))
    assert [(o[0], o[1], [r[1].api for r in o[4]]) for o in world.orphans] == [(0, 0, ["OffsetCommit"])]
    assert world.committed == before and not any(e[0] == "reply" for e in log)  # read, not yet handled
    world, log = step(world, ("late", 0, 0))
    assert world.orphans == ()
    replies = [e for e in log if e[0] == "reply"]
    assert [(r[3], r[4]) for r in replies] == [("OffsetCommit", Errors.NONE)]
    assert world.committed != before  # the coordinator stored it
    assert not world.links[0][slot].to_client  # the answer had no connection to go to
    assert step(world, ("late", 0, 0))[0] is world  # nothing left: not enabled


def test_processed_now_and_lost_are_unchanged():
    config = Config(clients=2, brokers=1, partitions=2)
    world, slot = _commit_in_transit(config)
    now, _ = step(world, ("disconnect", 0, slot, 1, 0))
    lost, _ = step(world, ("disconnect", 0, slot, 0, 0))
    assert now.orphans == lost.orphans == ()
    assert now.committed != world.committed and lost.committed == world.committed


def test_a_crashed_broker_forgets_what_it_read():
    config = Config(clients=2, brokers=1, partitions=2)
    world, slot = _commit_in_transit(config)
    world, _ = step(world, ("disconnect", 0, slot, LATE, 0))
    world, _ = step(world, ("broker_crash", 0, 0))
    assert world.orphans == ()
    assert step(world, ("late", 0, 0))[0] is world


def test_the_default_search_reaches_a_fenced_commit_and_the_implementation_agrees():
    """Swarm seed 1133: an OffsetCommit read from a broken connection is handled after the group
    moved to a newer generation with that member in it, and is answered ILLEGAL_GENERATION. (Seed
    1157 did it until the swarm drew static members: its world now has a static twin.)"""
    seed = 1133
    world = draw(seed)
    fenced = []

    def on_step(w, event, new, log):
        for e in log:
            if e[0] == "server" and e[1] == "commit" and e[6] == Errors.ILLEGAL_GENERATION:
                fenced.append(event)

    result = walk(seed, world.config, steps=world.steps, faults=world.faults, max_faults=world.max_faults,
                  quiet_rate=world.quiet_rate, on_step=on_step)
    assert result.verdict == "ok"
    assert result.coverage["commit-fenced"] >= 1
    assert fenced and all(event[0] == "late" for event in fenced)
    assert compare(world.config, result.schedule, seed).divergence is None
