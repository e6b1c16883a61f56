"""impl/'s KIP-848 consumer (impl.membership) on its own: the requests it builds, the callbacks it
runs and when, its timers (beside the model's consumer over walks: tests/kip848/test_impl.py)."""

import pytest

from impl.errors import IllegalStateException, TimeoutException
from impl.membership import AsyncConsumerMembership, MemberState
from impl.protocol import (ConsumerGroupHeartbeatAssignment, ConsumerGroupHeartbeatResponseData,
                           ConsumerGroupHeartbeatTopicPartitions, TopicPartition)
from impl.time import MockTime

T = "TOPICID"


class Recorder:
    def __init__(self):
        self.calls = []

    def on_partitions_revoked(self, partitions):
        self.calls.append(("revoked", [p.partition for p in partitions]))

    def on_partitions_assigned(self, partitions):
        self.calls.append(("assigned", [p.partition for p in partitions]))

    def on_partitions_lost(self, partitions):
        self.calls.append(("lost", [p.partition for p in partitions]))


def consumer(instance_id=None, listener=None, max_poll=4000):
    time = MockTime()
    member = AsyncConsumerMembership(time, "g", "m", ("t",), lambda tid: "t" if tid == T else None, max_poll,
                                     group_instance_id=instance_id, listener=listener or Recorder())
    return time, member


def answer(epoch, partitions=None, error=0, interval=1000):
    assignment = None if partitions is None else ConsumerGroupHeartbeatAssignment(
        [ConsumerGroupHeartbeatTopicPartitions(T, sorted(partitions))] if partitions else [])
    return ConsumerGroupHeartbeatResponseData(error_code=error, member_id="m", member_epoch=epoch,
                                              heartbeat_interval_ms=interval, assignment=assignment)


def owned(request):
    return None if request.topic_partitions is None else [p for tp in request.topic_partitions for p in tp.partitions]


def joined(partitions, listener=None):
    """A member that joined, reconciled *partitions* and acknowledged them (epoch 1)."""
    time, member = consumer(listener=listener)
    member.poll()
    member.background_poll()
    member.on_response(answer(1, partitions))
    member.poll()
    member.background_poll()
    member.on_response(answer(1))
    return time, member


def test_a_join_is_a_full_request_and_an_assignment_is_reconciled_at_the_poll_then_acknowledged_at_once():
    time, member = consumer()
    assert member.background_poll() == (None, False)  # UNSUBSCRIBED until the application polls
    member.poll()
    request, ignored = member.background_poll()
    assert not ignored and (request.member_id, request.member_epoch, request.rebalance_timeout_ms) == ("m", 0, 4000)
    assert request.subscribed_topic_names == ["t"] and request.topic_partitions == [] and request.subscribed_topic_regex is None
    member.on_response(answer(1, {0, 1}))
    mm = member.membership_manager
    assert mm.state == MemberState.RECONCILING and mm.owned_partitions(T) == frozenset()
    member.background_poll()  # the background thread starts the reconciliation; the callback waits for the poll
    assert mm.listener.calls == [] and mm.assigned_partitions == {TopicPartition("t", 0), TopicPartition("t", 1)}
    member.poll()
    assert mm.listener.calls == [("assigned", [0, 1])] and mm.state == MemberState.ACKNOWLEDGING
    request, _ = member.background_poll()  # ACKNOWLEDGING: at once, carrying what it holds now
    assert owned(request) == [0, 1] and request.rebalance_timeout_ms == -1 and request.subscribed_topic_names is None
    assert mm.state == MemberState.STABLE


def test_an_empty_first_assignment_still_runs_on_partitions_assigned_and_is_acknowledged():
    time, member = consumer()
    member.poll()
    member.background_poll()
    member.on_response(answer(1, set()))
    assert member.membership_manager.state == MemberState.RECONCILING  # LocalAssignment NONE is not (0, {})
    member.poll()
    assert member.membership_manager.listener.calls == [("assigned", [])]
    request, _ = member.background_poll()
    assert owned(request) == [] and member.membership_manager.state == MemberState.STABLE


def test_revocation_runs_before_assignment_and_the_target_moves_in_one_poll():
    time, member = joined({0, 1})
    member.membership_manager.listener.calls.clear()
    time.sleep(1000)
    member.background_poll()
    member.on_response(answer(2, {1, 2}))
    member.poll()
    assert member.membership_manager.listener.calls == [("revoked", [0]), ("assigned", [2])]
    assert member.membership_manager.owned_partitions(T) == frozenset({1, 2})


def test_a_fenced_member_loses_its_partitions_at_the_poll_and_one_without_rejoins_at_once():
    time, member = joined({0})
    time.sleep(1000)
    member.background_poll()
    member.on_response(answer(0, error=110))  # FENCED_MEMBER_EPOCH
    mm = member.membership_manager
    assert (mm.state, mm.member_epoch, mm.owned_partitions(T)) == (MemberState.FENCED, 0, frozenset({0}))
    member.poll()
    assert mm.listener.calls[-1] == ("lost", [0]) and mm.state == MemberState.JOINING
    assert mm.owned_partitions(T) == frozenset()

    time, member = consumer()
    member.poll()
    member.background_poll()
    member.on_response(answer(0, error=25))  # UNKNOWN_MEMBER_ID, nothing held: no callback to wait for
    assert member.membership_manager.state == MemberState.JOINING
    assert member.background_poll()[0].member_epoch == 0


def test_the_heartbeat_interval_runs_from_the_send_and_an_answer_leaves_a_short_backoff():
    time, member = joined({0})  # the last heartbeat was sent at 0, its answer set the interval (1000)
    time.sleep(999)
    assert member.background_poll() == (None, False)
    time.sleep(1)
    request, _ = member.background_poll()
    assert request is not None and owned(request) is None  # nothing changed: the fields stay null
    time.sleep(1000)
    member.on_response(answer(1))  # the answer came late: the timer already expired, the backoff holds it
    assert member.background_poll() == (None, False)
    time.sleep(100)
    assert member.background_poll()[0] is not None


def test_a_timeout_fails_the_heartbeat_and_the_next_one_is_full_after_the_backoff():
    time, member = joined({0})
    time.sleep(1000)
    member.background_poll()
    member.on_failure(TimeoutException("request.timeout.ms"))
    assert member.background_poll() == (None, False)  # retry.backoff.ms
    time.sleep(100)
    request, _ = member.background_poll()
    assert request.rebalance_timeout_ms == 4000 and request.subscribed_topic_names == ["t"] and owned(request) == [0]


def test_poll_timer_expiry_sends_an_ignored_leave_goes_stale_and_the_next_poll_rejoins():
    time, member = joined({0})
    time.sleep(4000)
    request, ignored = member.background_poll()
    mm = member.membership_manager
    assert (request.member_epoch, ignored, mm.state) == (-1, True, MemberState.STALE)
    assert owned(request) == []  # transitionToSendingLeaveGroup: the current assignment is NONE
    member.poll()
    assert mm.listener.calls[-1] == ("lost", [0]) and mm.state == MemberState.JOINING


@pytest.mark.parametrize("instance_id, epoch", [(None, -1), ("i", -2)])
def test_close_revokes_then_leaves_with_an_empty_subscription(instance_id, epoch):
    time, member = consumer(instance_id=instance_id)
    member.poll()
    member.background_poll()
    member.on_response(answer(1, {0}))
    member.poll()
    member.close()
    request, _ = member.background_poll()
    assert (request.member_epoch, request.instance_id, request.subscribed_topic_names) == (epoch, instance_id, [])
    assert member.membership_manager.listener.calls[-1] == ("revoked", [0])
    assert member.membership_manager.state == MemberState.UNSUBSCRIBED and member.background_poll() == (None, False)


def test_an_illegal_transition_raises_as_kafkas_does_and_a_continuation_swallows_it():
    time, member = consumer()
    with pytest.raises(IllegalStateException, match="Invalid state transition from UNSUBSCRIBED to STABLE"):
        member.membership_manager.transition_to(MemberState.STABLE)
    time, member = joined({0})
    time.sleep(500)
    member.background_poll()  # a heartbeat in flight when the poll timer runs out
    time.sleep(3500)
    leave, ignored = member.background_poll()
    assert ignored and member.membership_manager.state == MemberState.STALE
    member.on_response(answer(0, error=25))  # the first heartbeat's answer: UNKNOWN_MEMBER_ID
    assert member.membership_manager.state == MemberState.STALE
    assert member.swallowed == ["Invalid state transition from STALE to FENCED"]

