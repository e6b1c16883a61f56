"""A group deleted while a consumer still believes itself a member (issue 37's "a coordinator asked
about a group it does not know"): the ``delete_group`` event in both worlds, what the coordinator
answers a member of a group it no longer has, the group's next incarnation starting again from
generation 0, and the mutants of impl/ only that reaches."""

from __future__ import annotations

import pytest

from model.config import Config
from model.errors import Errors
from model.world import step
from properties.mutation.mutants import applied
from tests.helpers.sides import Sides

ONE = Config(clients=1, brokers=1, partitions=2)
TWO = Config(clients=2, brokers=1, partitions=2, assignors=("range",))


def _zombie_commits(config=ONE):
    """A Stable group of one; its process stands still past its session, so the coordinator
    expires it and the group is Empty; the group is deleted; the process resumes and commits."""
    sides = Sides(config).settle()
    sides.apply(("stall", 0, 7000, 0), ("tick", 6500, 0), ("tick", 600, 0))
    assert sides.problem is None, sides.problem
    assert sides.group().state == "Empty" and sides.world.clients[0].state == "STABLE"
    sides.apply(("delete_group", 0))
    sides.apply(("commit", 0, 0))
    sides.quiet(50, until=lambda w: any(e[0] == "reply" and e.api == "OffsetCommit" for e in sides.log))
    return sides


def test_a_deleted_group_is_gone_with_its_offsets_on_both_sides():
    sides = Sides(ONE).settle()
    sides.apply(("commit", 0, 0))
    sides.quiet(50, until=lambda w: bool(w.committed))
    assert sides.world.committed
    assert step(sides.world, ("delete_group", 0))[0] is sides.world  # a Stable group is not deleted
    sides.apply(("stall", 0, 7000, 0), ("tick", 6500, 0), ("tick", 600, 0), ("delete_group", 0))
    assert sides.problem is None, sides.problem
    assert sides.group() is None and sides.world.persisted is None and sides.world.committed == ()
    assert ("group_deleted", 0, sides.world.clients[0].generation + 1) in sides.log
    assert sides.diff.sim._group() is None and sides.diff.sim.committed() == ()
    assert sides.checker.incarnation == 1 and sides.checker.coverage["group-deleted"] == 1


def test_a_member_of_a_deleted_group_is_answered_as_the_coordinator_does_not_know_it():
    """Its OffsetCommit at its generation finds no group: ILLEGAL_GENERATION
    (GroupCoordinator.handleCommitOffsets: "this is a request coming from an older generation"); it
    rejoins, and the group starts again from generation 0: its first join makes generation 1."""
    sides = _zombie_commits()
    assert sides.problem is None, sides.problem
    commits = [e for e in sides.handled("OffsetCommit") if e.group is None]
    assert commits and commits[-1].request.generation_id >= 1
    assert [e.error for e in sides.log if e[0] == "reply" and e.api == "OffsetCommit"] == [Errors.ILLEGAL_GENERATION]
    sides.settle()
    assert sides.problem is None, sides.problem
    assert sides.group().state == "Stable" and sides.group().generation == 1
    assert sides.world.clients[0].generation == 1


def test_a_coordinator_that_creates_the_group_for_such_a_commit_is_caught():
    with applied("commit_to_unknown_group_creates_it"):
        sides = _zombie_commits()
    assert sides.problem is not None and "impl-matches-model" in str(sides.problem)


def test_a_deletion_without_a_tombstone_for_the_group_record_is_caught():
    """The group comes back at the next coordinator: the record the deletion should have covered is
    loaded again."""
    def run():
        sides = Sides(attrs_evolve(ONE, brokers=2)).settle()
        sides.apply(("stall", 0, 7000, 0), ("tick", 6500, 0), ("tick", 600, 0), ("delete_group", 0))
        other = 1 - sides.world.leader
        sides.apply(("failover", other, 0), ("load", other, 0))
        return sides

    sides = run()
    assert sides.problem is None, sides.problem
    assert sides.group() is None
    with applied("deleted_group_record_kept"):
        mutated = run()
    assert mutated.problem is not None and "impl-matches-model" in str(mutated.problem)


def attrs_evolve(config, **changes):
    import attrs

    return attrs.evolve(config, **changes)


def test_two_incarnations_may_each_have_a_member_stable_in_generation_1_owning_one_partition():
    """Both members stand still past their sessions; the Empty group is deleted; client 1 resumes,
    is told its member id is unknown, rejoins alone and is STABLE in the new group's generation 1
    with both partitions, while client 0, still standing still, believes itself STABLE in the old
    group's generation 1 with partition 0. Kafka allows it (the old member's requests are refused:
    the new group knows none of its ids); disjoint-assignments compares members within one
    incarnation, and stable-member-generation-reached against every generation written."""
    sides = Sides(TWO).settle()
    generation = sides.group().generation
    sides.apply(("stall", 0, 60000, 0), ("stall", 1, 7000, 0), ("tick", 6500, 0), ("tick", 600, 0))
    assert sides.group().state == "Empty", sides.group().state
    sides.apply(("delete_group", 0))
    sides.quiet(1000, tick_ms=10, until=lambda w: w.group is not None and w.group.state == "Stable"
                and w.clients[1].state == "STABLE" and w.clients[1].generation == 1 and len(w.clients[1].assignment) == 2)
    assert sides.problem is None, sides.problem
    zombie, fresh = sides.world.clients
    assert zombie.state == "STABLE" and zombie.generation == generation == 1
    assert fresh.state == "STABLE" and fresh.generation == 1 and set(zombie.assignment) < set(fresh.assignment)
    assert sides.checker.stable_in == {0: 0, 1: 1}


@pytest.mark.parametrize("name", ["commit_to_unknown_group_creates_it", "deleted_group_record_kept"])
def test_the_deletion_mutants_change_nothing_without_a_deletion(name):
    def run():
        sides = Sides(attrs_evolve(TWO, brokers=2)).settle()
        sides.apply(("crash", 0, 0), ("commit", 1, 0))
        other = 1 - sides.world.leader
        sides.apply(("failover", other, 0), ("load", other, 0))
        return sides.settle()

    with applied(name):
        mutated = run()
    assert mutated.problem is None, mutated.problem
