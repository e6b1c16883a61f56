"""Failed writes to __consumer_offsets (issue 14: "group-metadata write failures at the
coordinator"): the group record a leader's SyncGroup stores, the empty group's record, and an
OffsetCommit's offsets, in the model, in the implementation, and side by side.

Kafka: GroupCoordinator.doSyncGroup's storeGroup callback (resetAndPropagateAssignmentError, then
maybePrepareRebalance), onCompleteJoin's empty-group write (only a warning), and
GroupMetadataManager.storeGroup / storeOffsets's error mapping (maybeConvertOffsetCommitError)."""

from __future__ import annotations

import attrs
import pytest

from model.config import Config
from model.errors import Errors
from model.group import COMPLETING_REBALANCE, EMPTY, PREPARING_REBALANCE, STABLE, load
from model.world import APPEND_ERRORS, initial_world, step
from properties.explore.walker import walk
from properties.systems.differential import compare
from tests.helpers.group import commit, form, leave, member, only_reply, settle, stable, sync


def _failing(group, *errors):
    return attrs.evolve(group, append_errors=tuple(errors))


@pytest.mark.parametrize("log_error, answer", [
    (Errors.NOT_ENOUGH_REPLICAS, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_COORDINATOR),
    (Errors.REQUEST_TIMED_OUT, Errors.REBALANCE_IN_PROGRESS),
    (Errors.MESSAGE_TOO_LARGE, Errors.UNKNOWN_SERVER_ERROR),
])
def test_a_leader_sync_whose_record_is_not_written_fails_every_parked_sync_and_rebalances(log_error, answer):
    g, (a, b, c), now = form(("a", "b", "c"))
    g = sync(g, c, 1, now).group  # c parks
    out = sync(_failing(g, log_error), a, 1, now + 1, ((a, (0,)), (b, (1,)), (c, (2,))))
    assert [r[0] for r in out.replies] == [("sync", a), ("sync", c)]
    assert all(r[1].error == answer and r[1].assignment == () for r in out.replies)
    assert out.group.state == PREPARING_REBALANCE and out.persist is None
    assert all(m.assignment == () for m in out.group.members)
    assert out.group.append_errors == ()  # used up
    assert not any(n[0] == "assignment_stored" for n in out.notes)


def test_an_offset_commit_that_is_not_written_answers_every_partition_and_commits_nothing():
    g, (a, b), now = stable()
    for log_error, answer in [(Errors.NOT_ENOUGH_REPLICAS, Errors.COORDINATOR_NOT_AVAILABLE),
                              (Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_COORDINATOR),
                              (Errors.REQUEST_TIMED_OUT, Errors.REQUEST_TIMED_OUT),
                              (Errors.MESSAGE_TOO_LARGE, Errors.INVALID_COMMIT_OFFSET_SIZE)]:
        out = commit(_failing(g, log_error, Errors.NOT_ENOUGH_REPLICAS), a, 1, now)
        assert only_reply(out).errors == ((0, answer), (1, answer))
        assert out.committed == ()
        assert out.group.append_errors == (Errors.NOT_ENOUGH_REPLICAS,)  # one append, one failure
    out = commit(_failing(g, Errors.NOT_ENOUGH_REPLICAS), a, 0, now)  # fenced first: no append
    assert only_reply(out).errors[0][1] == Errors.ILLEGAL_GENERATION
    assert out.group.append_errors == (Errors.NOT_ENOUGH_REPLICAS,)
    out = commit(_failing(g, Errors.NOT_ENOUGH_REPLICAS), a, 1, now, offsets=())  # nothing to append
    assert out.group.append_errors == (Errors.NOT_ENOUGH_REPLICAS,)


def test_an_empty_group_record_that_is_not_written_leaves_the_last_one_to_be_loaded_again():
    g, (a, b), now = stable()
    out = leave(_failing(g, Errors.NOT_ENOUGH_REPLICAS), a, b, now=now)
    group, _ = settle(out.group)
    assert group.state == EMPTY and group.append_errors == ()
    assert out.persist is None  # Kafka only warns; the Stable record of generation 1 stays the latest
    reloaded = load(g, now, Config(), lambda kind, candidates: candidates[0]).group
    assert reloaded.state == STABLE and reloaded.generation == 1 and reloaded.append_errors == ()
    assert load(_failing(g, Errors.NOT_ENOUGH_REPLICAS), now, Config(), None).group.append_errors == ()


def test_the_world_injects_failures_only_at_a_coordinator_with_the_group_loaded():
    config = Config()
    world = initial_world(config)
    code = int(Errors.NOT_ENOUGH_REPLICAS)
    assert step(world, ("append_error", code, 0))[0] is world  # no group yet
    result = walk(0, config, steps=60, faults="none")
    world = result.world
    assert world.group.state == "Stable"
    assert step(world, ("append_error", int(Errors.NONE), 0))[0] is world  # not a log failure
    once, log = step(world, ("append_error", code, 0))
    assert once.group.append_errors == (Errors.NOT_ENOUGH_REPLICAS,) and ("append_error", world.leader, code) in log
    twice, _ = step(once, ("append_error", code, 0))
    assert step(twice, ("append_error", code, 0))[0] is twice  # at most two waiting
    other = next(b for b in range(config.brokers) if b != world.leader)
    moved, _ = step(twice, ("failover", other, 0))
    assert moved.group is None or moved.group.append_errors == ()


def test_walks_with_failed_appends_agree_with_the_implementation():
    """The coordinator mix injects failures; the implementation, driven by the same schedules
    (its in-memory __consumer_offsets log fails the same appends), stays in step with the model,
    and the failures reach SyncGroup and OffsetCommit answers."""
    config = Config(clients=3, brokers=2)
    injected = compared = failed = 0
    used = {}  # API of the request whose append used a failure up -> count
    consumed = [0]  # failures used up by appends (by requests and by timers)

    def on_step(world, event, new, log):
        before = world.group.append_errors if world.group is not None else ()
        after = new.group.append_errors if new.group is not None else ()
        if world.leader == new.leader and len(after) < len(before):
            consumed[0] += len(before) - len(after)
            for entry in log:
                if entry[0] == "handled":
                    used[entry[4].api] = used.get(entry[4].api, 0) + 1

    for seed in range(200):
        result = walk(seed, config, steps=80, mix="coordinator", eventually=False, hash_trace=False,
                      on_step=on_step)
        n = sum(1 for e in result.schedule if e[0] == "append_error")
        injected += n
        failed += result.coverage["append-failed"]
        if n and compared < 8:
            compared += 1
            outcome = compare(config, result.schedule, seed)
            assert outcome.divergence is None, (seed, outcome.divergence)
    assert injected > 40 and compared == 8, (injected, compared)
    assert used.get("SyncGroup", 0) > 0 and used.get("OffsetCommit", 0) > 0, used
    assert failed == consumed[0] > 0  # the sometimes property counts each failed append
    assert all(int(e) in (6, 7, 10, 19) for e in APPEND_ERRORS)
