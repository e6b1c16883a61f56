"""The KIP-848 model's rules, case by case, against Kafka 4.1's code (the cited methods)."""

import pytest

from model.config import ConfigError
from model.kip848 import coordinator as coord
from model.kip848 import membership as mm
from model.kip848.assignment import (NO_EPOCH, STABLE, UNRELEASED_PARTITIONS, UNREVOKED_PARTITIONS, Member,
                                     reconcile, target_assignment)
from model.kip848.config import Config
from model.kip848.coordinator import Request
from model.kip848.world import initial_world, offers, step

FREE = lambda p: NO_EPOCH  # noqa: E731 - every partition released


# ------------------------------------------------------------- CurrentAssignmentBuilder.build

def test_stable_member_moves_to_a_new_epoch_with_the_same_partitions():
    m = Member("a", epoch=10, previous_epoch=9, assigned=frozenset({0, 1}))
    new = reconcile(m, 11, frozenset({0, 1}), FREE, None)
    assert (new.state, new.epoch, new.previous_epoch, new.assigned) == (STABLE, 11, 10, frozenset({0, 1}))


def test_stable_member_reconciled_to_its_target_is_unchanged():
    m = Member("a", epoch=11, previous_epoch=10, assigned=frozenset({0}))
    assert reconcile(m, 11, frozenset({1}), FREE, None) is m


def test_partitions_to_revoke_keep_the_member_at_its_epoch_until_released():
    m = Member("a", epoch=10, assigned=frozenset({0, 1}))
    new = reconcile(m, 11, frozenset({1, 2}), FREE, frozenset({0, 1}))
    assert (new.state, new.epoch, new.assigned, new.revoking) == (UNREVOKED_PARTITIONS, 10, frozenset({1}), frozenset({0}))
    # still reporting partition 0 (or not reporting at all): no progress
    assert reconcile(new, 11, frozenset({1, 2}), FREE, frozenset({0, 1})) == new
    assert reconcile(new, 11, frozenset({1, 2}), FREE, None) == new
    # released: the next epoch, and partition 2 (free) added
    done = reconcile(new, 11, frozenset({1, 2}), FREE, frozenset({1}))
    assert (done.state, done.epoch, done.assigned, done.revoking) == (STABLE, 11, frozenset({1, 2}), frozenset())


def test_a_partition_still_owned_elsewhere_is_not_given():
    m = Member("b", epoch=10, assigned=frozenset({3}))
    owned_by_other = {2: 10}
    new = reconcile(m, 11, frozenset({2, 3}), lambda p: owned_by_other.get(p, NO_EPOCH), frozenset({3}))
    assert (new.state, new.epoch, new.assigned) == (UNRELEASED_PARTITIONS, 11, frozenset({3}))
    # once released, the next heartbeat takes it
    later = reconcile(new, 11, frozenset({2, 3}), FREE, None)
    assert (later.state, later.epoch, later.assigned) == (STABLE, 11, frozenset({2, 3}))


def test_range_assignor_gives_contiguous_ranges_by_member_id():
    members = [Member("m1", subscribed=("t",)), Member("m0", subscribed=("t",)), Member("m2")]
    assert target_assignment(members, 5) == {"m0": frozenset({0, 1, 2}), "m1": frozenset({3, 4}), "m2": frozenset()}


# ------------------------------------------------------------- consumerGroupHeartbeat

def join(group, mid, now=0, config=Config(partitions=2)):
    return coord.heartbeat(group, Request(mid, 0, 5000, ("t",), frozenset()), now, config)


def test_uniform_assignor_is_sticky_and_deals_what_is_free_in_the_members_order():
    """UniformHomogeneousAssignmentBuilder: each member, in the order given, keeps up to its quota of
    its current target; the extra partitions go to the first members unless one with room to spare
    can give its extra up to the members left; the free partitions are dealt to the members with
    room, in that order: those nobody held (ascending), then those given up."""
    a, b, c = (Member(m, subscribed=("t",)) for m in "abc")
    # a new member takes only the surplus: a keeps {0, 1} and gives 4 up, b keeps {2, 3} and gives 5 up
    assert target_assignment([a, b, c], 6, assignor="uniform", current={"a": frozenset({0, 1, 4}),
                                                                          "b": frozenset({2, 3, 5})},
                             order=["a", "b", "c"]) == {"a": frozenset({0, 1}), "b": frozenset({2, 3}),
                                                       "c": frozenset({4, 5})}
    # 4 partitions, 3 members: one extra; a has nothing, so it gives the extra up (two members are left
    # to take it), b keeps two and gives 2 up; the free partitions are dealt as found: 3 (never held)
    # first, then 2 (given up)
    assert target_assignment([a, b, c], 4, assignor="uniform", current={"b": frozenset({0, 1, 2})},
                             order=["a", "b", "c"]) == {"a": frozenset({3}), "b": frozenset({0, 1}),
                                                       "c": frozenset({2})}
    # the order decides who keeps the extra partition
    current = {"a": frozenset({0, 1}), "b": frozenset({2, 3})}
    assert target_assignment([a, b, c], 4, assignor="uniform", current=current, order=["a", "b", "c"])["a"] == {0, 1}
    assert target_assignment([a, b, c], 4, assignor="uniform", current=current, order=["c", "b", "a"])["a"] == {0}
    with pytest.raises(ValueError, match="does not name the members"):
        target_assignment([a, b], 4, assignor="uniform", current={}, order=["a"])


def test_the_group_keeps_its_members_map_for_the_uniform_order():
    """joined: the order members were put in (a removal drops one, a rejoin appends it); capacity:
    2, doubled at a put when (size + 1) * 0.75 passes it (TimelineHashMap)."""
    config = Config(partitions=4, assignor="uniform")
    group = coord.new_group(4)
    for m in ("m0", "m1", "m2"):
        group, answer, _ = coord.heartbeat(group, Request(m, 0, 4000, ("t",), frozenset()), 0, config)
        assert answer.error == "NONE"
    assert group.joined == ("m0", "m1", "m2") and group.capacity == 4
    group, _, _ = coord.heartbeat(group, Request("m1", -1), 0, config)
    assert group.joined == ("m0", "m2")
    group, _, _ = coord.heartbeat(group, Request("m1", 0, 4000, ("t",), frozenset()), 0, config)
    assert group.joined == ("m0", "m2", "m1")
    with pytest.raises(ConfigError, match="assignor must be one of range, uniform, got 'sticky'"):
        Config(assignor="sticky")


def test_join_creates_the_group_and_answers_the_assignment():
    config = Config(partitions=2)
    group, resp, log = join(coord.new_group(2), "a", config=config)
    assert resp == coord.Response("NONE", "a", 1, config.heartbeat_interval_ms, frozenset({0, 1}))
    assert (group.epoch, group.assignment_epoch, coord.state(group)) == (1, 1, coord.STABLE)
    assert group.partition_epochs == (1, 1) and ("bump", 1) in log
    assert group.sessions == (("a", config.session_timeout_ms),)


@pytest.mark.parametrize("request_, error", [
    (Request("a", 0, -1, ("t",), frozenset()), "INVALID_REQUEST"),  # no rebalance timeout on a join
    (Request("a", 0, 5000, ("t",), frozenset({1})), "INVALID_REQUEST"),  # owned partitions on a join
    (Request("a", 0, 5000, ("t",), None), "INVALID_REQUEST"),
    (Request("a", 0, 5000, None, frozenset()), "INVALID_REQUEST"),
    (Request("a", -3), "INVALID_REQUEST"),
    (Request("", 1), "INVALID_REQUEST"),
    (Request("z", 1), "UNKNOWN_MEMBER_ID"),
    (Request("a", 2), "FENCED_MEMBER_EPOCH"),  # above the member's epoch (1)
    (Request("a", -1), "NONE"),
    (Request("z", -1), "UNKNOWN_MEMBER_ID"),
])
def test_heartbeat_validation_and_epoch_checks(request_, error):
    group, _, _ = join(coord.new_group(2), "a")
    _, resp, _ = coord.heartbeat(group, request_, 10, Config(partitions=2))
    assert resp.error == error


def test_a_group_that_does_not_exist_is_not_found_but_for_a_join():
    config = Config(partitions=2)
    empty = coord.new_group(2)
    assert coord.heartbeat(empty, Request("a", 3), 0, config)[1].error == "GROUP_ID_NOT_FOUND"
    assert coord.heartbeat(empty, Request("a", -1), 0, config)[1].error == "GROUP_ID_NOT_FOUND"
    assert join(empty, "a", config=config)[1].error == "NONE"


def test_previous_epoch_accepted_only_with_owned_partitions_it_still_has():
    config = Config(partitions=2)
    group, _, _ = join(coord.new_group(2), "a", config=config)  # a: epoch 1, {0, 1}
    group, resp, _ = join(group, "b", config=config)  # b: epoch 2 at once; a must give up 1
    group, resp, _ = coord.heartbeat(group, Request("a", 1, owned=frozenset({0, 1})), 5, config)
    assert group.member("a").state == UNREVOKED_PARTITIONS
    group, resp, _ = coord.heartbeat(group, Request("a", 1, owned=frozenset({0})), 6, config)
    a = group.member("a")
    assert (a.epoch, a.previous_epoch, a.assigned) == (2, 1, frozenset({0}))
    # a lost answer: epoch 1 again, owning {0}, is accepted; owning {0, 1} is not
    assert coord.heartbeat(group, Request("a", 1, owned=frozenset({0})), 7, config)[1].error == "NONE"
    assert coord.heartbeat(group, Request("a", 1, owned=frozenset({0, 1})), 7, config)[1].error == "FENCED_MEMBER_EPOCH"
    assert coord.heartbeat(group, Request("a", 1), 7, config)[1].error == "FENCED_MEMBER_EPOCH"  # isSubset(null) is false


def test_leave_and_session_expiry_fence_and_release():
    config = Config(partitions=2)
    group, _, _ = join(coord.new_group(2), "a", config=config)
    left, resp, log = coord.heartbeat(group, Request("a", -1), 5, config)
    assert resp == coord.Response("NONE", "a", -1) and left.members == () and left.partition_epochs == (NO_EPOCH,) * 2
    assert left.epoch == 2 and coord.state(left) == coord.EMPTY
    expired, log = coord.expire(group, config.session_timeout_ms, config)
    assert ("fenced", "a", "session expired") in log and expired.members == ()
    assert coord.expire(group, config.session_timeout_ms - 1, config) == (group, [])


def test_rebalance_timeout_fences_only_a_member_still_at_that_epoch():
    config = Config(partitions=2, session_timeout_ms=60_000)
    group, _, _ = join(coord.new_group(2), "a", config=config)
    group, _, _ = join(group, "b", config=config)
    group, _, _ = coord.heartbeat(group, Request("a", 1, owned=frozenset({0, 1})), 5, config)
    assert group.rebalances == (("a", 1, 5 + 5000),)
    fenced, log = coord.expire(group, 5005, config)
    assert log[0] == ("fenced", "a", "rebalance timeout") and fenced.member("a") is None
    assert coord.expire(group, 5004, config) == (group, [])
    moved, _, _ = coord.heartbeat(group, Request("a", 1, owned=frozenset({0})), 6, config)
    assert moved.rebalances == ()  # cancelled when it left UNREVOKED_PARTITIONS


# ------------------------------------------------------------- the consumer

def test_joining_sends_a_full_request_then_only_changes():
    config = Config()
    c = mm.new_client("a", 0, config)
    c, log = mm.poll(c, 0, config)
    assert c.state == mm.JOINING and ("transition", "a", mm.UNSUBSCRIBED, mm.JOINING) in log
    c, req, _ = mm.heartbeat(c, 0, config)
    assert req == Request("a", 0, config.max_poll_interval_ms, ("t",), frozenset())
    c, _ = mm.on_response(c, c.in_flight, coord.Response("NONE", "a", 3, 1000, frozenset({1})), 1, config)
    assert (c.state, c.epoch, c.target) == (mm.RECONCILING, 3, frozenset({1}))
    c, _ = mm.poll(c, 2, config)  # the callbacks run: holds {1}, acknowledges at once
    assert (c.state, c.owned) == (mm.ACKNOWLEDGING, frozenset({1}))
    c, req, _ = mm.heartbeat(c, 2, config)
    assert req == Request("a", 3, -1, None, frozenset({1})) and c.state == mm.STABLE
    c, _ = mm.on_response(c, c.in_flight, coord.Response("NONE", "a", 3, 1000), 3, config)
    assert mm.heartbeat(c, 500, config)[1] is None  # the interval has not passed
    assert mm.heartbeat(c, 1003, config)[1] == Request("a", 3)


def test_fenced_consumer_releases_at_its_poll_and_rejoins_at_epoch_0():
    config = Config()
    c = mm.Client("a", mm.STABLE, 4, frozenset({0}), 1, frozenset({0}), 1, in_flight=7, awaiting=((7, 0, False),))
    c, _ = mm.on_response(c, 7, coord.Response("FENCED_MEMBER_EPOCH", "a", 4), 10, config)
    assert (c.state, c.epoch, c.owned, c.releasing) == (mm.FENCED, 0, frozenset({0}), True)  # onPartitionsLost not run yet
    assert mm.heartbeat(c, 10, config)[1] is None
    c, _ = mm.poll(c, 11, config)
    assert (c.state, c.owned, c.releasing) == (mm.JOINING, frozenset(), False)
    assert mm.heartbeat(c, 11, config)[1].epoch == 0


def test_a_fenced_consumer_that_holds_nothing_rejoins_at_once():
    # transitionToFenced: signalPartitionsLost of nothing is a completed future, so clearAssignment
    # and transitionToJoining run in the same step, without waiting for the application's poll
    config = Config()
    c = mm.Client("a", mm.RECONCILING, 4, target=frozenset({0}), target_local_epoch=0, in_flight=7,
                  awaiting=((7, 0, False),), poll_deadline_ms=60_000)
    c, _ = mm.on_response(c, 7, coord.Response("UNKNOWN_MEMBER_ID", "a", 4), 10, config)
    assert (c.state, c.epoch, c.target) == (mm.JOINING, 0, None)
    assert mm.heartbeat(c, 10, config)[1].epoch == 0


def test_a_first_assignment_even_empty_is_reconciled_at_a_poll_and_acknowledged():
    # LocalAssignment: the current assignment is NONE (local epoch -1) until a reconciliation;
    # updateWith gives the first target local epoch 0, so an empty one is not "reconciled" yet
    config = Config()
    c = mm.new_client("a", 0, config)
    c, _ = mm.poll(c, 0, config)
    c, request, _ = mm.heartbeat(c, 0, config)
    c, _ = mm.on_response(c, c.seq, coord.Response("NONE", "a", 1, 1000, frozenset()), 5, config)
    assert (c.state, c.target, c.target_local_epoch, c.local_epoch) == (mm.RECONCILING, frozenset(), 0, -1)
    c, log = mm.poll(c, 6, config)  # onPartitionsAssigned([]) runs
    assert c.state == mm.ACKNOWLEDGING and ("reconciled", "a", 1, (), (), 0) in log
    c, request, _ = mm.heartbeat(c, 6, config)  # shouldHeartbeatNow: at once, with the empty assignment
    assert (request.owned, c.state) == (frozenset(), mm.STABLE)


def test_a_reconciliation_completes_with_the_target_it_started_from():
    # maybeReconcile snapshots the target; a newer one arriving before the callbacks ran does not
    # abort it (maybeAbortReconciliation: only a state change or a rejoin): the member takes the
    # older target, acknowledges, and reconciles again
    config = Config()
    c = mm.Client("a", mm.RECONCILING, 3, target=frozenset({1}), target_local_epoch=0, poll_deadline_ms=60_000)
    c, _, _ = mm.heartbeat(c, 0, config)  # the background thread starts it
    assert c.reconciling == (0, frozenset({1}), False) and mm.assigned_partitions(c) == frozenset({1})
    c = c._replace(in_flight=0, awaiting=((9, 0, False),))
    c, _ = mm.on_response(c, 9, coord.Response("NONE", "a", 3, 1000, frozenset()), 5, config)
    assert (c.state, c.target, c.target_local_epoch) == (mm.RECONCILING, frozenset(), 1)
    c, _ = mm.poll(c, 6, config)
    assert (c.state, c.owned, c.local_epoch) == (mm.ACKNOWLEDGING, frozenset({1}), 0)
    c, request, _ = mm.heartbeat(c, 6, config)
    assert request.owned == frozenset({1}) and c.state == mm.RECONCILING


def test_poll_timer_expiry_leaves_and_goes_stale_until_the_next_poll():
    config = Config()
    c = mm.Client("a", mm.STABLE, 4, frozenset({0}), 1, frozenset({0}), 1, poll_deadline_ms=100)
    c, req, log = mm.heartbeat(c, 100, config)
    assert req.epoch == -1 and (c.state, c.owned) == (mm.STALE, frozenset())
    assert [e[3] for e in log if e[0] == "transition"] == [mm.PREPARE_LEAVING, mm.LEAVING, mm.STALE]
    c, _ = mm.poll(c, 200, config)
    assert (c.state, c.epoch) == (mm.JOINING, 0)


def test_a_timeout_drops_the_connection_and_makes_the_next_request_full():
    config = Config()
    c = mm.Client("a", mm.STABLE, 4, frozenset({0}), 1, frozenset({0}), 1, sent_owned=(1, frozenset({0})),
                  sent_full=True, sent_names=("t",), in_flight=5, poll_deadline_ms=60_000,
                  awaiting=((5, 0, False),))
    assert mm.timed_out(c, config.request_timeout_ms, config) and not mm.timed_out(c, config.request_timeout_ms - 1, config)
    c, _ = mm.on_failure(c, config.request_timeout_ms, config)
    assert (c.in_flight, c.awaiting, c.heartbeat_due_ms) == (0, (), config.request_timeout_ms)
    assert c.backoff_until_ms == config.request_timeout_ms + config.retry_backoff_ms
    assert mm.on_response(c, 5, coord.Response("NONE", "a", 9), 0, config) == (c, [("ignored", "a", 5)])
    _, req, _ = mm.heartbeat(c, 10_000, config)
    assert req == Request("a", 4, config.max_poll_interval_ms, ("t",), frozenset({0}))


def test_the_answer_to_a_heartbeat_sent_before_a_poll_timer_leave_is_handled_after_the_rejoin():
    # Kafka's heartbeatRequestState.reset() after the leave does not cancel the heartbeat in
    # flight: its continuation (onResponse) still runs when the answer comes, even after the
    # member rejoined (seed 100 of the differential walk, where the model used to ignore it)
    config = Config(max_poll_interval_ms=4000)
    c = mm.new_client("a", 0, config)
    c, _ = mm.poll(c, 0, config)
    c, join, _ = mm.heartbeat(c, 0, config)
    first = c.seq
    c, leave, _ = mm.heartbeat(c, 4000, config)  # the poll timer ran out: leave, STALE
    assert (leave.epoch, c.state, c.in_flight) == (-1, mm.STALE, 0)
    assert [(seq, ignored) for seq, _, ignored in c.awaiting] == [(first, False), (c.seq, True)]
    c, _ = mm.poll(c, 4100, config)
    assert c.state == mm.JOINING
    c, log = mm.on_response(c, first, coord.Response("NONE", "a", 1, 1000, frozenset({0})), 4200, config)
    assert (c.state, c.epoch, c.target) == (mm.RECONCILING, 1, frozenset({0})) and log[0][0] != "ignored"
    c, log = mm.on_response(c, first + 1, coord.Response("NONE", "a", -1, 1000), 4300, config)
    assert log == [("ignored", "a", first + 1)] and c.awaiting == ()  # logResponse: the leave's answer


def test_a_fencing_answer_to_a_heartbeat_sent_before_the_member_went_stale_changes_nothing_but_the_request_state():
    # Kafka's transitionToFenced from STALE: transitionTo throws IllegalStateException (FENCED is
    # not entered from STALE), inside the heartbeat's continuation, whose exception nothing reads
    # (NetworkClientDelegate.UnsentRequest.whenComplete): seed 446 of 2,000 walks, where the model
    # moved STALE -> FENCED, a transition its own table refuses
    config = Config()
    c = mm.Client("a", mm.STALE, -1, sent_owned=(-1, frozenset()), sent_full=True, sent_names=("t",),
                  awaiting=((5, 0, False), (6, 0, True)), poll_deadline_ms=0, poll_expired=True)
    after, log = mm.on_response(c, 5, coord.Response("UNKNOWN_MEMBER_ID", "a", 1), 100, config)
    assert (after.state, after.epoch) == (mm.STALE, -1) and ("illegal_transition", "a", mm.STALE, mm.FENCED) in log
    assert (after.sent_full, after.sent_owned, after.failures) == (False, None, 1)  # what ran before the throw
    after, log = mm.on_response(c, 5, coord.Response("UNRELEASED_INSTANCE_ID", "a", 1), 100, config)
    assert after.state == mm.STALE and ("illegal_transition", "a", mm.STALE, mm.FATAL) in log


def test_a_closed_consumer_leaves_with_an_empty_subscription():
    # clearAssignmentAndLeaveGroup: subscriptions.unsubscribe(), so the leave carries
    # SubscribedTopicNames [] (changed since last sent) and the assignment NONE
    config = Config()
    c = mm.Client("a", mm.STABLE, 4, frozenset({0}), 1, frozenset({0}), 1, sent_owned=(1, frozenset({0})),
                  sent_full=True, sent_names=("t",), poll_deadline_ms=60_000)
    c, _ = mm.close(c)
    c, request, _ = mm.heartbeat(c, 10, config)
    assert request == Request("a", -1, -1, (), frozenset())


# ------------------------------------------------------------- the world and its settings

def test_world_offers_and_steps():
    config = Config(clients=2, partitions=2)
    world = initial_world(config)
    assert ("poll", 0) in offers(world, config) and ("deliver", 0) not in offers(world, config)
    world, _ = step(world, ("poll", 0), config)
    world, log = step(world, ("heartbeat", 0), config)
    assert log[-1][0] == "sent" and ("deliver", 0) in offers(world, config)
    world, log = step(world, ("deliver", 0), config)
    assert world.group.member("m0.0") is not None and ("receive", 0) in offers(world, config)
    assert step(world, ("deliver", 0), config) == (world, [])  # nothing left to deliver: not enabled
    with pytest.raises(ValueError, match="unknown KIP-848 event kind 'jump'"):
        step(world, ("jump", 0), config)


@pytest.mark.parametrize("kwargs, message", [
    ({"clients": 0}, "clients must be a positive integer, got 0"),
    ({"session_timeout_ms": 1000, "heartbeat_interval_ms": 1000}, "heartbeat_interval_ms (1000) must be below"),
    ({"broken": frozenset({"nope"})}, "unknown KIP-848 variant"),
])
def test_config_errors_name_the_field(kwargs, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Config(**kwargs)


def test_offset_commit_is_fenced_by_the_member_epoch():
    config = Config(partitions=2)
    empty = coord.new_group(2)
    assert coord.commit(empty, coord.Commit("a", 1), config)[0] == "GROUP_ID_NOT_FOUND"
    assert coord.commit(empty, coord.Commit("", -1), config)[0] == "NONE"  # a simple group takes the offsets
    group, _, _ = join(empty, "a", config=config)  # a at epoch 1
    assert coord.commit(group, coord.Commit("a", 1, frozenset({0})), config) == ("NONE", [("committed", "a", 1)])
    assert coord.commit(group, coord.Commit("a", 0), config)[0] == "STALE_MEMBER_EPOCH"
    assert coord.commit(group, coord.Commit("a", 2), config)[0] == "STALE_MEMBER_EPOCH"
    assert coord.commit(group, coord.Commit("z", 1), config)[0] == "UNKNOWN_MEMBER_ID"
    assert coord.commit(group, coord.Commit("", -1), config)[0] == "UNKNOWN_MEMBER_ID"  # the group has members
    left, _, _ = coord.heartbeat(group, Request("a", -1), 5, config)
    assert coord.commit(left, coord.Commit("", -1), config)[0] == "NONE"


# ------------------------------------------------------------- static members

def static_join(group, mid, instance, now=0, config=Config(partitions=2)):
    return coord.heartbeat(group, Request(mid, 0, 5000, ("t",), frozenset(), instance), now, config)


def test_a_static_member_leaves_at_minus_2_keeping_its_partitions_and_a_new_process_takes_its_place():
    config = Config(partitions=2)
    group, _, _ = static_join(coord.new_group(2), "a", "i0", config=config)  # a holds [0, 1] at epoch 1
    group, _, _ = static_join(group, "b", "i1", config=config)  # b joins: epoch 2, a revokes 1
    group, _, _ = coord.heartbeat(group, Request("a", 1, owned=frozenset({0}), instance_id="i0"), 5, config)
    a = group.member("a")
    assert (a.epoch, a.assigned, group.target_of("b")) == (2, frozenset({0}), frozenset({1}))
    # the leave at -2 (consumerGroupStaticMemberGroupLeave): kept, at epoch -2, its partitions held at -2
    left, resp, log = coord.heartbeat(group, Request("a", -2, instance_id="i0"), 10, config)
    assert resp == coord.Response("NONE", "a", -2) and ("static_left", "a") in log
    a = left.member("a")
    assert (a.epoch, a.assigned, a.revoking) == (-2, frozenset({0}), frozenset())
    assert left.partition_epochs[0] == -2 and left.epoch == group.epoch  # no bump: nobody is given partition 0
    assert coord.state(left) == coord.RECONCILING
    # a new process (member id c) with the instance id replaces it: a's assignment and target, no bump
    after, resp, log = static_join(left, "c", "i0", now=20, config=config)
    assert ("static_replaced", "a", "c") in log and after.member("a") is None
    c = after.member("c")
    assert (c.instance_id, c.epoch, c.assigned, after.epoch) == ("i0", 2, frozenset({0}), left.epoch)
    assert resp == coord.Response("NONE", "c", 2, config.heartbeat_interval_ms, frozenset({0}))
    assert after.partition_epochs[0] == 2 and ("a", 10 + config.session_timeout_ms) not in after.sessions
    assert after.target_of("c") == frozenset({0}) and after.target_of("a") == frozenset()


@pytest.mark.parametrize("request_, error", [
    (Request("a", 0, 5000, ("t",), frozenset(), "i0"), "UNRELEASED_INSTANCE_ID"),  # its own id: the hazard
    (Request("z", 0, 5000, ("t",), frozenset(), "i0"), "UNRELEASED_INSTANCE_ID"),  # another process, a still live
    (Request("z", 1, instance_id="i0"), "FENCED_INSTANCE_ID"),  # throwIfInstanceIdIsFenced
    (Request("z", -2, instance_id="i0"), "FENCED_INSTANCE_ID"),
    (Request("a", 1, instance_id="i9"), "UNKNOWN_MEMBER_ID"),  # throwIfStaticMemberIsUnknown
    (Request("a", 2, instance_id="i0"), "FENCED_MEMBER_EPOCH"),  # then the epoch check
    (Request("a", -2), "INVALID_REQUEST"),  # "InstanceId can't be null."
])
def test_static_member_errors(request_, error):
    config = Config(partitions=2)
    group, _, _ = static_join(coord.new_group(2), "a", "i0", config=config)
    after, resp, _ = coord.heartbeat(group, request_, 5, config)
    assert resp.error == error and after == group


def test_a_static_member_leaving_at_minus_1_is_fenced_and_its_instance_id_freed():
    config = Config(partitions=2)
    group, _, _ = static_join(coord.new_group(2), "a", "i0", config=config)
    left, resp, log = coord.heartbeat(group, Request("a", -1, instance_id="i0"), 5, config)
    assert resp.error == "NONE" and ("fenced", "a", "left") in log and left.static_member("i0") is None
    assert static_join(left, "z", "i0", config=config)[1].error == "NONE"  # a new static member


def test_a_static_consumer_leaves_at_minus_2_and_instance_id_errors_are_fatal():
    config = Config(partitions=2, static=1)
    c = mm.new_client("a", 0, config, "i0")._replace(state=mm.STABLE, epoch=3, owned=frozenset({0}))
    closed, _ = mm.close(c)
    assert (closed.state, closed.epoch, closed.owned) == (mm.LEAVING, -2, frozenset())
    _, request, _ = mm.heartbeat(closed, 0, config)
    assert (request.epoch, request.instance_id) == (-2, "i0")
    sent = c._replace(in_flight=1, awaiting=((1, 0, False),))
    fatal, log = mm.on_response(sent, 1, coord.Response("UNRELEASED_INSTANCE_ID"), 0, config)
    # transitionToFatal: onPartitionsLost runs at the application's next poll, then clearAssignment
    assert (fatal.state, fatal.fatal, fatal.owned, fatal.releasing) == (mm.FATAL, "UNRELEASED_INSTANCE_ID", frozenset({0}), True)
    fatal, _ = mm.poll(fatal, 1, config)
    assert (fatal.state, fatal.owned, fatal.releasing) == (mm.FATAL, frozenset(), False)


def test_a_static_slot_restarts_after_its_close_was_sent_and_a_dynamic_one_does_not():
    config = Config(clients=2, partitions=2, static=1)
    world = initial_world(config)
    assert world.clients[0].instance_id == "i0" and world.clients[1].instance_id is None
    for c in (0, 1):
        world, _ = step(world, ("poll", c), config)  # JOINING: in the group, so close leaves
        world, _ = step(world, ("close", c), config)
    assert world.clients[0].state == mm.LEAVING
    assert ("restart", 0) not in offers(world, config)  # its leave is not sent yet
    world, _ = step(world, ("heartbeat", 0), config)
    world, _ = step(world, ("heartbeat", 1), config)
    assert ("restart", 0) in offers(world, config) and ("restart", 1) not in offers(world, config)
    world, log = step(world, ("restart", 0), config)
    assert log == [("restarted", 0, "m0.1")] and world.clients[0].instance_id == "i0"


def test_static_config_errors():
    with pytest.raises(ConfigError, match=r"static \(3\) must not exceed clients \(2\)"):
        Config(clients=2, static=3)
    with pytest.raises(ConfigError, match="static must be a non-negative integer"):
        Config(static=-1)
