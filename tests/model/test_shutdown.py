"""The application's consumer loop ends (``shutdown``: its last commitAsync(), then close(), no poll
between; the clients mix's applications commit after every poll and close this way). The empty
commit's pollNoWakeup can read a MEMBER_ID_REQUIRED answer the last poll did not: the member takes
the id, sends no second JoinGroup, and close() leaves with it while the coordinator holds it only as
pending. Kafka removes a pending member that leaves (KAFKA-7909, apache/kafka#6251:
GroupCoordinator.handleLeaveGroup's ``group.isPendingMember(memberId)`` branch)."""

from __future__ import annotations

from model.client import UNJOINED
from model.config import Config
from model.errors import Errors
from model.world import initial_world, step
from properties.catalogue import Checker
from properties.explore.walker import MIXES
from properties.systems.differential import compare
from tests.model.driving import apply, drive

CONFIG = Config(clients=1)


def _member_id_required_delivered(world):
    return any(n[0] == "received" and getattr(n[3][1], "error", None) == Errors.MEMBER_ID_REQUIRED
               for n in world.clients[0].notices)


def _shutdown_while_pending():
    """Client 0's MEMBER_ID_REQUIRED answer delivered, not yet read; then its loop ends."""
    checker, schedule = Checker(CONFIG), []
    world = drive(initial_world(CONFIG), 0, _member_id_required_delivered, schedule, checker)
    before = world
    world, log = step(world, ("shutdown", 0, 0))
    assert world is not before and checker.check(before, world, ("shutdown", 0, 0), log) is None
    schedule.append(("shutdown", 0, 0))
    return world, log, schedule, checker


def test_the_last_commit_reads_the_answer_and_close_leaves_with_the_id_the_coordinator_holds_as_pending():
    world, log, schedule, checker = _shutdown_while_pending()
    member_id = world.group.pending_members[0][0]
    assert ("leave", 0, member_id) in log  # the id the commit's poll handed the member
    assert not [e for e in log if e[0] == "send" and e[4] == "JoinGroup"]  # no second JoinGroup
    assert world.clients[0].state == UNJOINED
    world = drive(world, 0, lambda w: not w.group.pending_members, schedule, checker)
    assert world.group.state == "Empty" and not world.group.members  # the pending member is gone


def test_a_close_alone_does_not_leave_before_the_answer_is_read():
    """close() decides to leave with the member id it has (AbstractCoordinator.maybeLeaveGroup:
    generation.hasMemberId()); the unread answer gives none yet, so no LeaveGroup."""
    checker, schedule = Checker(CONFIG), []
    world = drive(initial_world(CONFIG), 0, _member_id_required_delivered, schedule, checker)
    world, log = step(world, ("close", 0, 0))
    assert ("leave", 0, "") in log and not [e for e in log if e[0] == "send" and e[4] == "LeaveGroup"]


def test_the_implementation_agrees_and_the_mutant_that_rejects_a_pending_members_leave_diverges():
    from properties.mutation.mutants import applied

    world, _, schedule, checker = _shutdown_while_pending()
    schedule = list(schedule)
    drive(world, 0, lambda w: not w.group.pending_members, schedule, checker)
    assert compare(CONFIG, schedule).divergence is None
    with applied("pending_member_leave_rejected"):
        divergence = compare(CONFIG, schedule).divergence
    assert divergence is not None and divergence.event[0] == "deliver", divergence


def test_only_the_clients_mix_ends_its_loops_and_commits_without_an_assignment():
    assert [name for name, mix in MIXES.items() if mix.commit_loop] == ["clients"]
    assert "shutdown" in MIXES["clients"].kinds and "close" not in MIXES["clients"].kinds
    assert all("shutdown" not in mix.kinds for name, mix in MIXES.items() if name != "clients")


def test_the_clients_mix_offers_commits_to_consumers_that_own_nothing():
    import random

    from properties.explore.walker import enabled_events

    world = initial_world(Config())
    assert not any(c.assignment for c in world.clients)
    offered = {name: {e[0] for e in enabled_events(world, random.Random(1), "all", 5, mix)} for name, mix in MIXES.items()}
    assert "commit" in offered["clients"]
    assert all("commit" not in kinds for name, kinds in offered.items() if name != "clients")


def _joining_with_unread_answer():
    world = drive(initial_world(CONFIG), 0, _member_id_required_delivered, [], Checker(CONFIG))
    assert world.clients[0].state == "PREPARING_REBALANCE"
    return world


def _shutdowns_offered(world, faults_left, mix):
    import random

    from properties.explore.walker import enabled_events

    return [e for e in enabled_events(world, random.Random(3), "all", faults_left, MIXES[mix]) if e[0] == "shutdown"]


def test_the_clients_mix_offers_a_joining_consumers_shutdown_while_an_answer_waits_unread_past_the_budget():
    """The window KAFKA-7909 lives in: quiet bursts settle most joins and the walk's fault budget is
    spent early, so the clients mix offers the loop's end whenever a joining consumer has an answer
    it has not read, four times its weight of copies, even with no faults left."""
    world = _joining_with_unread_answer()
    weight = MIXES["clients"].weight
    for faults_left in (0, 5):
        offered = _shutdowns_offered(world, faults_left, "clients")
        assert len([e for e in offered if e[1] == 0]) >= 4 * weight, (faults_left, offered)
    # once the answer is read (the consumer polled it and sent its second JoinGroup) the offer ends
    read, _ = step(world, ("poll", 0, 0))
    assert not _member_id_required_delivered(read)
    assert not _shutdowns_offered(read, 0, "clients")


def test_no_other_mix_offers_the_joining_shutdown():
    world = _joining_with_unread_answer()
    assert [name for name, mix in MIXES.items() if mix.joining_shutdowns] == ["clients"]
    for name in MIXES:
        if name != "clients":
            assert not _shutdowns_offered(world, 0, name), name
