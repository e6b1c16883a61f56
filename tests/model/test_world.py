"""The model world: determinism, replay, no-op events, and fault-free convergence."""

import json
import os
import subprocess
import sys

import pytest

from model import group as grp
from model.client import STABLE
from model.config import Config
from model.world import initial_world, step
from properties.explore.walker import replay, walk


def _run_json(seed: int, hashseed: str, system: str = "model") -> dict:
    """`groupcheck run --json` of *system* at *seed* in a fresh process under PYTHONHASHSEED=*hashseed*."""
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    out = subprocess.run(
        [sys.executable, "-m", "properties.cli", "run", "--system", system, "--seed", str(seed), "--json"],
        capture_output=True, text=True, env=env, check=False,
    )
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_same_seed_same_trace_hash_across_processes_and_hash_seeds():
    a = _run_json(7, "0")
    b = _run_json(7, "12345")
    assert a["trace_hash"] == b["trace_hash"]
    assert a["steps"] == b["steps"]


def test_below_draws_exactly_what_randrange_draws():
    import random

    from properties.explore.walker import below

    for n in (1, 2, 3, 6, 7, 8, 100, 1000, 65537):
        ours, theirs = random.Random(n), random.Random(n)
        assert [below(ours.getrandbits, n) for _ in range(200)] == [theirs.randrange(n) for _ in range(200)]


def test_a_walk_without_the_trace_hash_has_the_same_schedule():
    config = Config()
    hashed, unhashed = walk(5, config, steps=60), walk(5, config, steps=60, hash_trace=False)
    assert unhashed.trace_hash is None and hashed.trace_hash
    assert unhashed.schedule == hashed.schedule and unhashed.verdict == hashed.verdict


def test_different_seeds_give_different_traces():
    assert walk(1, Config()).trace_hash != walk(2, Config()).trace_hash


def test_replay_reproduces_the_trace_hash():
    config = Config()
    result = walk(11, config, steps=80)
    again = replay(config, result.schedule, eventually_after=0)
    assert again.trace_hash == result.trace_hash
    assert again.steps == result.steps


def test_events_that_are_not_enabled_change_nothing():
    world = initial_world(Config())
    for event in [("deliver", 0, 0, True, 0), ("connect", 1, 2, 0), ("load", 0, 0), ("heal", 0, 0, 0), ("tick", 0, 0)]:
        new, _ = step(world, event)
        assert new is world, event


def test_unknown_event_kind_is_refused():
    with pytest.raises(ValueError, match="unknown event kind 'explode'"):
        step(initial_world(Config()), ("explode", 0))


@pytest.mark.parametrize("seed", range(12))
def test_fault_free_walk_settles_into_a_stable_group(seed):
    config = Config()
    result = walk(seed, config, steps=60, faults="none")
    assert result.verdict == "ok", result.violation
    world = result.world
    assert world.group.state == grp.STABLE
    assert all(c.state == STABLE and c.generation == world.group.generation for c in world.clients)
    owned = sorted(p for c in world.clients for p in c.assignment)
    assert owned == list(range(config.partitions))


@pytest.mark.parametrize("seed", range(0, 300, 7))
def test_faulty_walks_hold_every_property(seed):
    result = walk(seed, Config(), steps=60, faults="all")
    assert result.verdict == "ok", f"seed {seed}: {result.violation}"


def test_committed_offsets_reach_the_log():
    # Walk until some commit is accepted; the world's committed offsets then hold it.
    for seed in range(40):
        result = walk(seed, Config(), steps=120, faults="none")
        if result.world.committed:
            assert all(offset > 0 for _, offset in result.world.committed)
            return
    pytest.fail("no walk of 40 committed an offset")


def test_closed_consumer_abandons_its_pending_connection():
    from properties.explore.walker import walk as _walk

    world = initial_world(Config())
    world, _ = step(world, ("poll", 0, 0))  # starts a lookup: a connection attempt
    (slot,) = [i for i, c in enumerate(world.clients[0].conns) if c.state == "CONNECTING"]
    world, _ = step(world, ("close", 0, 0))
    assert world.clients[0].closed
    after, _ = step(world, ("connect", 0, slot, 0))
    assert after is world  # not enabled


def test_member_ids_never_repeat_across_coordinators():
    """Kafka's member ids are UUIDs; the model's come from a world-wide sequence, so a coordinator
    that creates the group afresh, or loads an older record, does not hand out an id again."""
    from model.messages import JoinGroupRequest

    config = Config()
    request = JoinGroupRequest(config.group_id, "", config.session_timeout_ms, config.rebalance_timeout_ms,
                               "consumer", (("range", ((config.topic,), (), -1)),), "consumer-0")
    choose = lambda kind, cands: cands[0]  # noqa: E731
    first = grp.handle_join_group(None, request, ("r", 0), 0, config, choose)
    again = grp.handle_join_group(None, request, ("r", 0), 0, config, choose, member_seq=first.group.member_seq)
    (_, r1), (_, r2) = first.replies[0], again.replies[0]
    assert r1.member_id and r2.member_id and r1.member_id != r2.member_id
    loaded = grp.load(first.group, 0, config, choose, member_seq=again.group.member_seq)
    assert loaded.group.member_seq == again.group.member_seq
    # and the world threads the sequence through every coordinator
    result = walk(3, config, steps=80)
    assert result.world.member_seq >= (result.world.group.member_seq if result.world.group else 0)


def test_impl_same_seed_same_trace_hash_across_processes_and_hash_seeds():
    a = _run_json(9, "0", "impl")
    b = _run_json(9, "4242", "impl")
    assert a["trace_hash"] == b["trace_hash"] and a["steps"] == b["steps"] and a["system"] == "impl"
