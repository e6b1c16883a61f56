"""``ConsumerCoordinator`` (``org.apache.kafka.clients.consumer.internals``), protocol §3.

The consumer's embedded protocol on top of :class:`~impl.coordinator.abstract_coordinator.
AbstractCoordinator`: protocol type ``"consumer"``, one JoinGroup protocol per assignor (the
subscription as metadata), eager revocation in ``on_join_prepare``, the leader's assignment in
``on_leader_elected``, applying the assignment in ``on_join_complete``, OffsetCommit with
generation fencing and OffsetFetch.

Also here, in reduced form: ``SubscriptionState`` (subscribed topics, the leader's group
subscription, the assignment and positions), ``OffsetAndMetadata``, ``ConsumerRebalanceListener``
and its invoker, and the ``MetadataSnapshot`` that makes the leader rejoin when the partition
counts it assigned from change.

Not implemented: auto-commit (``enable.auto.commit`` is treated as false), the cooperative
protocol, pattern subscriptions, and interceptors.

Deviation: after ``updateGroupSubscription`` the leader in Kafka blocks inside the JoinGroup
response handler in ``client.ensureFreshMetadata(timer(Long.MAX_VALUE))`` when a metadata refresh
is requested or due.  A nested, unbounded poll inside a completion handler would hang a simulated
world in which the network or the clock is stopped; here the leader awaits it only when the group
subscribes to a topic outside its own subscription (``requestUpdateForNewTopics`` lifts the refresh
backoff, so the first nested poll refreshes), and otherwise assigns from the metadata at hand: the
metadata snapshot check in ``rejoin_needed_or_pending`` makes it rejoin once a refresh shows
different partition counts (the same mechanism Kafka relies on for later changes).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Deque, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from impl.consumer_network_client import ConsumerNetworkClient
from impl.coordinator.abstract_coordinator import (
    NO_GENERATION,
    AbstractCoordinator,
    CoordinatorResponseHandler,
    Generation,
    GroupRebalanceConfig,
    MemberState,
    group_authorization_exception,
)
from impl.coordinator.assignors import AbstractPartitionAssignor, RebalanceProtocol
from impl.errors import (
    CommitFailedException,
    Errors,
    FencedInstanceIdException,
    IllegalArgumentException,
    IllegalStateException,
    InterruptException,
    KafkaException,
    RebalanceInProgressException,
    RetriableCommitFailedException,
    RetriableException,
    TimeoutException,
    TopicAuthorizationException,
    UnstableOffsetCommitException,
    WakeupException,
)
from impl.future import RequestFuture, RequestFutureListener
from impl.network.metadata import Cluster, Metadata
from impl.protocol import (
    CONSUMER_PROTOCOL_TYPE,
    NO_LEADER_EPOCH,
    JoinGroupRequestProtocol,
    JoinGroupResponseMember,
    OffsetCommitRequestData,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetFetchRequestData,
    OffsetFetchRequestTopic,
    Subscription,
    TopicPartition,
)
from impl.time import LONG_MAX, Time, Timer

__all__ = [
    "ConsumerCoordinator", "ConsumerRebalanceListener", "MetadataSnapshot", "OffsetAndMetadata",
    "OffsetCommitResponseHandler", "OffsetFetchResponseHandler", "SubscriptionState",
]


# --------------------------------------------------------------------------------------------
# Values and the subscription state
# --------------------------------------------------------------------------------------------

class OffsetAndMetadata:
    """``org.apache.kafka.clients.consumer.OffsetAndMetadata``."""

    __slots__ = ("offset", "leader_epoch", "metadata")

    def __init__(self, offset: int, leader_epoch: Optional[int] = None, metadata: str = "") -> None:
        if offset < 0:
            raise IllegalArgumentException("Invalid negative offset")
        self.offset = offset
        self.leader_epoch = leader_epoch
        self.metadata = metadata

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, OffsetAndMetadata) and self.offset == other.offset
                and self.leader_epoch == other.leader_epoch and self.metadata == other.metadata)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "OffsetAndMetadata{offset=%d, leaderEpoch=%s, metadata='%s'}" % (
            self.offset, self.leader_epoch, self.metadata)


def _as_offset_and_metadata(value: Union[int, OffsetAndMetadata]) -> OffsetAndMetadata:
    return value if isinstance(value, OffsetAndMetadata) else OffsetAndMetadata(value)


class ConsumerRebalanceListener:
    """``ConsumerRebalanceListener``: callbacks around a rebalance.

    Partition lists are sorted by (topic, partition).  ``on_partitions_lost`` defaults to
    ``on_partitions_revoked``, as in Kafka.
    """

    def on_partitions_revoked(self, partitions: List[TopicPartition]) -> None:
        pass

    def on_partitions_assigned(self, partitions: List[TopicPartition]) -> None:
        pass

    def on_partitions_lost(self, partitions: List[TopicPartition]) -> None:
        self.on_partitions_revoked(partitions)


class SubscriptionState:
    """A reduced ``SubscriptionState``: what the consumer subscribed to and owns.

    ``subscription`` (sorted topics), the leader's ``group_subscription``, the ``assignment``
    (sorted partitions) with a position per partition, and the rebalance listener.  Newly assigned
    partitions start at position 0 (there is no fetcher to look up committed offsets or reset
    positions); :meth:`seek` moves a position.
    """

    NONE = "NONE"
    AUTO_TOPICS = "AUTO_TOPICS"
    USER_ASSIGNED = "USER_ASSIGNED"

    def __init__(self) -> None:
        self.subscription_type = SubscriptionState.NONE
        self.subscription: List[str] = []
        self.group_subscription: List[str] = []
        self._assignment: Dict[TopicPartition, int] = {}
        self.rebalance_listener: Optional[ConsumerRebalanceListener] = None

    def _set_subscription_type(self, type_: str) -> None:
        if self.subscription_type == SubscriptionState.NONE:
            self.subscription_type = type_
        elif self.subscription_type != type_:
            raise IllegalStateException(
                "Subscription to topics, partitions and pattern are mutually exclusive")

    def subscribe(self, topics: Iterable[str], listener: Optional[ConsumerRebalanceListener]) -> bool:
        """Subscribe to ``topics``; True if the subscription changed."""
        self._set_subscription_type(SubscriptionState.AUTO_TOPICS)
        self.rebalance_listener = listener
        new = sorted(set(topics))
        if new == self.subscription:
            return False
        self.subscription = new
        return True

    def group_subscribe(self, topics: Iterable[str]) -> bool:
        """``groupSubscribe``: the leader watches every topic the group subscribes to; True when
        the group names a topic outside this consumer's own subscription."""
        if not self.has_auto_assigned_partitions():
            raise IllegalStateException("Subscription to topics, partitions and pattern are mutually exclusive")
        self.group_subscription = sorted(set(topics))
        return not set(self.group_subscription) <= set(self.subscription)

    def reset_group_subscription(self) -> None:
        self.group_subscription = []

    def metadata_topics(self) -> List[str]:
        return sorted(set(self.subscription) | set(self.group_subscription))

    def assign_from_user(self, partitions: Iterable[TopicPartition]) -> bool:
        self._set_subscription_type(SubscriptionState.USER_ASSIGNED)
        new = sorted(set(partitions))
        if new == self.assigned_partitions():
            return False
        self._assignment = {tp: self._assignment.get(tp, 0) for tp in new}
        self.subscription = sorted({tp.topic for tp in new})
        return True

    def assign_from_subscribed(self, assignments: Iterable[TopicPartition]) -> None:
        if not self.has_auto_assigned_partitions():
            raise IllegalArgumentException("Attempt to dynamically assign partitions while manual assignment in use")
        new = sorted(set(assignments))
        for tp in new:
            if tp.topic not in self.subscription:
                raise IllegalArgumentException("Assigned partition %s for non-subscribed topic." % (tp,))
        self._assignment = {tp: self._assignment.get(tp, 0) for tp in new}

    def check_assignment_matched_subscription(self, assignments: Iterable[TopicPartition]) -> bool:
        for tp in assignments:
            if tp.topic not in self.subscription:
                return False
        return True

    def unsubscribe(self) -> None:
        self.subscription = []
        self.group_subscription = []
        self._assignment = {}
        self.subscription_type = SubscriptionState.NONE
        self.rebalance_listener = None

    def has_auto_assigned_partitions(self) -> bool:
        return self.subscription_type == SubscriptionState.AUTO_TOPICS

    def has_no_subscription_or_user_assignment(self) -> bool:
        return self.subscription_type == SubscriptionState.NONE

    def assigned_partitions(self) -> List[TopicPartition]:
        return sorted(self._assignment)

    def is_assigned(self, tp: TopicPartition) -> bool:
        return tp in self._assignment

    def seek(self, tp: TopicPartition, offset: int) -> None:
        if tp not in self._assignment:
            raise IllegalStateException("No current assignment for partition " + str(tp))
        self._assignment[tp] = offset

    def position(self, tp: TopicPartition) -> int:
        if tp not in self._assignment:
            raise IllegalStateException("No current assignment for partition " + str(tp))
        return self._assignment[tp]

    def all_consumed(self) -> Dict[TopicPartition, OffsetAndMetadata]:
        """The positions of all assigned partitions, as offsets to commit (sorted)."""
        return {tp: OffsetAndMetadata(self._assignment[tp]) for tp in sorted(self._assignment)}


class MetadataSnapshot:
    """``ConsumerCoordinator.MetadataSnapshot``: partition counts of the watched topics at a
    metadata version (racks are not modelled)."""

    __slots__ = ("partitions_per_topic", "version")

    def __init__(self, subscription: SubscriptionState, cluster: Cluster, version: int) -> None:
        partitions_per_topic: Dict[str, int] = {}
        for topic in subscription.metadata_topics():
            count = cluster.partition_count_for_topic(topic)
            if count is not None and count > 0:
                partitions_per_topic[topic] = count
        self.partitions_per_topic = partitions_per_topic
        self.version = version

    def matches(self, other: "MetadataSnapshot") -> bool:
        return self is other or self.partitions_per_topic == other.partitions_per_topic

    def __repr__(self) -> str:
        return "(version%d: %r)" % (self.version, self.partitions_per_topic)


class ConsumerRebalanceListenerInvoker:
    """``ConsumerRebalanceListenerInvoker``: call the user's listener; an exception is returned
    (to be rethrown after the assignment bookkeeping), except Wakeup/Interrupt which propagate."""

    __slots__ = ("subscriptions",)

    def __init__(self, subscriptions: SubscriptionState) -> None:
        self.subscriptions = subscriptions

    def _invoke(self, method: str, partitions: List[TopicPartition]) -> Optional[Exception]:
        listener = self.subscriptions.rebalance_listener
        if listener is None:
            return None
        try:
            getattr(listener, method)(list(partitions))
        except (WakeupException, InterruptException):
            raise
        except Exception as e:
            return e
        return None

    def invoke_partitions_assigned(self, partitions: List[TopicPartition]) -> Optional[Exception]:
        return self._invoke("on_partitions_assigned", partitions)

    def invoke_partitions_revoked(self, partitions: List[TopicPartition]) -> Optional[Exception]:
        return self._invoke("on_partitions_revoked", partitions)

    def invoke_partitions_lost(self, partitions: List[TopicPartition]) -> Optional[Exception]:
        return self._invoke("on_partitions_lost", partitions)


#: ``OffsetCommitCallback``: ``fn(offsets, exception_or_None)`` or an object with
#: ``on_complete(offsets, exception)``.
OffsetCommitCallback = Any


class _OffsetCommitCompletion:
    __slots__ = ("callback", "offsets", "exception")

    def __init__(self, callback: OffsetCommitCallback, offsets: Dict[TopicPartition, OffsetAndMetadata],
                 exception: Optional[Exception]) -> None:
        self.callback = callback
        self.offsets = offsets
        self.exception = exception

    def invoke(self) -> None:
        cb = self.callback
        if cb is None:
            return
        on_complete = getattr(cb, "on_complete", None)
        if on_complete is not None:
            on_complete(self.offsets, self.exception)
        else:
            cb(self.offsets, self.exception)


# --------------------------------------------------------------------------------------------
# Response handlers
# --------------------------------------------------------------------------------------------

class CommitOffsetsSync:
    """``ConsumerCoordinator.commitOffsetsSync``'s loop as an object::

        do { if (coordinatorUnknownAndUnreadySync(timer)) return false;
             future = sendOffsetCommitRequest(offsets); client.poll(future, timer);
             invokeCompletedOffsetCommitCallbacks();
             if (future.succeeded()) return true;
             if (future.failed() && !future.isRetriable()) throw future.exception();
             timer.sleep(retryBackoff.backoff(attempts++)); } while (timer.notExpired());
        return false;

    :meth:`run` is that blocking call. :meth:`step` runs it one wait at a time, for a world that
    interleaves the application's blocking call with everything else (the simulated world: each
    later poll of the blocked application is one pass, as close()'s waits are): a pass is one
    zero-timer round of the wait the call is in — the coordinator lookup, the OffsetCommit's answer
    (wakeups allowed), the backoff's sleep. A timer that runs out leaves the OffsetCommit in
    flight: its answer is handled by whichever later poll reads it (OffsetCommitResponseHandler),
    as Kafka's is."""

    __slots__ = ("coordinator", "offsets", "timer", "future", "attempts", "sleep_until")

    def __init__(self, coordinator: "ConsumerCoordinator",
                 offsets: Mapping[TopicPartition, Union[int, OffsetAndMetadata]], timer: Timer) -> None:
        self.coordinator = coordinator
        self.timer = timer
        self.future: Optional[RequestFuture] = None
        self.attempts = 0
        self.sleep_until: Optional[int] = None  # a timer.sleep(backoff) in progress, until then
        coordinator.invoke_completed_offset_commit_callbacks()
        self.offsets = {tp: _as_offset_and_metadata(v) for tp, v in offsets.items()}

    def run(self) -> bool:
        """The blocking call: True once committed, False if the timer expired first; raises the
        commit's exception if it is not retriable."""
        if not self.offsets:
            # We guarantee that the callbacks for all commitAsync() will be invoked when
            # commitSync() completes, even if the user tries to commit empty offsets.
            return self.coordinator.invoke_pending_async_commits(self.timer)
        while True:
            done = self._pass(block=True)
            if done is not None:
                return done

    def step(self) -> Optional[bool]:
        """One pass of the current wait: True committed, False the timer ran out (the OffsetCommit
        may still be in flight), None still waiting; raises as :meth:`run` does."""
        return self._pass(block=False)

    def _pass(self, block: bool) -> Optional[bool]:
        c, timer = self.coordinator, self.timer
        timer.update()
        if self.sleep_until is not None:  # timer.sleep(backoff)
            if timer.current_time_ms() < self.sleep_until:
                return None
            self.sleep_until = None
            if not timer.not_expired():  # while (timer.notExpired())
                return False
        if self.future is None:
            if block:
                if c.coordinator_unknown_and_unready_sync(timer):
                    return False
            elif c.coordinator_unknown() and not c.ensure_coordinator_ready(c.time.timer(0)):
                timer.update()
                return None if timer.not_expired() else False
            self.future = c.send_offset_commit_request(self.offsets)
        future = self.future
        if block:
            c.client.poll_future(future, timer)
        elif not future.is_done():
            c.client.poll(c.time.timer(0), future)
            timer.update()
        # We may have had in-flight offset commits when the synchronous commit began. If so,
        # ensure that the corresponding callbacks are invoked prior to returning in order to
        # preserve the order that the offset commits were applied.
        c.invoke_completed_offset_commit_callbacks()
        if future.succeeded():
            return True
        if future.failed() and not future.is_retriable():
            raise future.exception()
        if future.failed():
            self.future = None
            backoff = c.retry_backoff.backoff(self.attempts)
            self.attempts += 1
            if block:
                timer.sleep(backoff)
            else:
                self.sleep_until = timer.current_time_ms() + min(backoff, timer.remaining_ms())
            return None if timer.not_expired() else False
        if block:  # poll(future, timer) returned undone: the timer expired (timer.sleep(...) sleeps 0)
            c.retry_backoff.backoff(self.attempts)
            return False
        return None if timer.not_expired() else False  # the answer still awaited: wait on, or time out


class OffsetCommitResponseHandler(CoordinatorResponseHandler):
    """``ConsumerCoordinator.OffsetCommitResponseHandler`` — the OffsetCommit table of §3.4."""

    __slots__ = ("offsets",)

    def __init__(self, coordinator: "ConsumerCoordinator",
                 offsets: Dict[TopicPartition, OffsetAndMetadata], generation: Generation) -> None:
        super().__init__(coordinator, generation)
        self.offsets = offsets

    def handle(self, commit_response: Any, future: RequestFuture) -> None:
        c = self.coordinator
        unauthorized_topics: List[str] = []
        for topic in commit_response.topics:
            for partition in topic.partitions:
                error = Errors.for_code(partition.error_code)
                if error is Errors.NONE:
                    continue
                if error is Errors.GROUP_AUTHORIZATION_FAILED:
                    future.raise_(group_authorization_exception(c.rebalance_config.group_id))
                    return
                elif error is Errors.TOPIC_AUTHORIZATION_FAILED:
                    if topic.name not in unauthorized_topics:
                        unauthorized_topics.append(topic.name)
                elif error is Errors.OFFSET_METADATA_TOO_LARGE or error is Errors.INVALID_COMMIT_OFFSET_SIZE:
                    # raise the error to the user
                    future.raise_(error)
                    return
                elif error is Errors.COORDINATOR_LOAD_IN_PROGRESS or error is Errors.UNKNOWN_TOPIC_OR_PARTITION:
                    # just retry
                    future.raise_(error)
                    return
                elif error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR,
                               Errors.REQUEST_TIMED_OUT):
                    c.mark_coordinator_unknown(False, "error response " + error.name)
                    future.raise_(error)
                    return
                elif error is Errors.FENCED_INSTANCE_ID:
                    # if the generation has changed or we are not in rebalancing, do not raise the
                    # fatal error but rebalance-in-progress
                    if self.generation_unchanged():
                        future.raise_(error)
                    elif c.state is MemberState.PREPARING_REBALANCE:
                        future.raise_(RebalanceInProgressException(
                            "Offset commit cannot be completed since the consumer member's old "
                            "generation is fenced by its group instance id, it is possible that this "
                            "consumer has already participated another rebalance and got a new generation"))
                    else:
                        future.raise_(CommitFailedException())
                    return
                elif error is Errors.REBALANCE_IN_PROGRESS:
                    # Consumer should not try to commit offset in between join-group and
                    # sync-group; if it happens the broker says we are still rebalancing: request
                    # a rejoin but do not reset the generation.
                    c.request_rejoin("offset commit failed since group is already rebalancing")
                    future.raise_(RebalanceInProgressException(
                        "Offset commit cannot be completed since the consumer group is executing a "
                        "rebalance at the moment. You can try completing the rebalance by calling "
                        "poll() and then retry commit again"))
                    return
                elif error is Errors.UNKNOWN_MEMBER_ID or error is Errors.ILLEGAL_GENERATION:
                    # only need to reset generation and re-join group if generation has not
                    # changed or we are not in rebalancing; otherwise only raise
                    # rebalance-in-progress error
                    # synchronized (ConsumerCoordinator.this)
                    if not self.generation_unchanged() and c.state is MemberState.PREPARING_REBALANCE:
                        exception: Exception = RebalanceInProgressException(
                            "Offset commit cannot be completed since the consumer member's generation "
                            "is already stale, meaning it has already participated another rebalance "
                            "and got a new generation. You can try completing the rebalance by calling "
                            "poll() and then retry commit again")
                    else:
                        # don't reset generation member ID when ILLEGAL_GENERATION, since the
                        # member might be still valid
                        c.reset_state_on_response_error("OffsetCommit", error,
                                                        error is not Errors.ILLEGAL_GENERATION)
                        exception = CommitFailedException()
                    future.raise_(exception)
                    return
                else:
                    future.raise_(KafkaException("Unexpected error in commit: " + error.message))
                    return
        if unauthorized_topics:
            future.raise_(TopicAuthorizationException(
                "Not authorized to access topics: %s" % (unauthorized_topics,)))
        else:
            future.complete(None)


class OffsetFetchResponseHandler(CoordinatorResponseHandler):
    """``ConsumerCoordinator.OffsetFetchResponseHandler`` (sent generation: NO_GENERATION)."""

    __slots__ = ()

    def __init__(self, coordinator: "ConsumerCoordinator") -> None:
        super().__init__(coordinator, NO_GENERATION)

    def handle(self, response: Any, future: RequestFuture) -> None:
        c = self.coordinator
        response_error = Errors.for_code(response.error_code)
        if response_error is not Errors.NONE:
            if response_error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
                # just retry
                future.raise_(response_error)
            elif response_error is Errors.NOT_COORDINATOR:
                # re-discover the coordinator and retry
                c.mark_coordinator_unknown(False, "error response " + response_error.name)
                future.raise_(response_error)
            elif response_error is Errors.GROUP_AUTHORIZATION_FAILED:
                future.raise_(group_authorization_exception(c.rebalance_config.group_id))
            else:
                future.raise_(KafkaException("Unexpected error in fetch offset response: " + response_error.message))
            return
        unauthorized_topics: Optional[List[str]] = None
        offsets: Dict[TopicPartition, Optional[OffsetAndMetadata]] = {}
        unstable: List[TopicPartition] = []
        for topic in response.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.name, p.partition_index)
                error = Errors.for_code(p.error_code)
                if error is not Errors.NONE:
                    if error is Errors.UNKNOWN_TOPIC_OR_PARTITION:
                        future.raise_(KafkaException("Topic or Partition %s does not exist" % (tp,)))
                        return
                    elif error is Errors.TOPIC_AUTHORIZATION_FAILED:
                        if unauthorized_topics is None:
                            unauthorized_topics = []
                        if tp.topic not in unauthorized_topics:
                            unauthorized_topics.append(tp.topic)
                    elif error is Errors.UNSTABLE_OFFSET_COMMIT:
                        unstable.append(tp)
                    else:
                        future.raise_(KafkaException(
                            "Unexpected error in fetch offset response for partition %s: %s" % (tp, error.message)))
                        return
                elif p.committed_offset >= 0:
                    # record the position with the offset (-1 indicates no committed offset)
                    leader_epoch = None if p.committed_leader_epoch == NO_LEADER_EPOCH else p.committed_leader_epoch
                    offsets[tp] = OffsetAndMetadata(p.committed_offset, leader_epoch,
                                                    "" if p.metadata is None else p.metadata)
                else:
                    offsets[tp] = None
        if unauthorized_topics is not None:
            future.raise_(TopicAuthorizationException("Not authorized to access topics: %s" % (unauthorized_topics,)))
        elif unstable:
            # just retry
            future.raise_(UnstableOffsetCommitException(
                "There are unstable offsets for the requested topic partitions"))
        else:
            future.complete(offsets)


class _PendingCommittedOffsetRequest:
    __slots__ = ("requested_partitions", "request_generation", "response")

    def __init__(self, requested_partitions: List[TopicPartition], generation: Optional[Generation],
                 response: RequestFuture) -> None:
        self.requested_partitions = requested_partitions
        self.request_generation = generation
        self.response = response

    def same_request(self, current_request: List[TopicPartition], current_generation: Optional[Generation]) -> bool:
        return (self.request_generation == current_generation
                and self.requested_partitions == current_request)


class _AsyncCommitListener(RequestFutureListener):
    """The listener ``doCommitOffsetsAsync`` puts on the commit future."""

    __slots__ = ("coordinator", "offsets", "callback")

    def __init__(self, coordinator: "ConsumerCoordinator", offsets, callback) -> None:
        self.coordinator = coordinator
        self.offsets = offsets
        self.callback = callback

    def on_success(self, value: Any) -> None:
        c = self.coordinator
        c.in_flight_async_commits -= 1
        c.completed_offset_commits.append(_OffsetCommitCompletion(self.callback, self.offsets, None))

    def on_failure(self, e: Exception) -> None:
        c = self.coordinator
        c.in_flight_async_commits -= 1
        commit_exception: Exception = e
        if isinstance(e, RetriableException):
            commit_exception = RetriableCommitFailedException(str(e))
            commit_exception.__cause__ = e
        c.completed_offset_commits.append(_OffsetCommitCompletion(self.callback, self.offsets, commit_exception))
        if isinstance(commit_exception, FencedInstanceIdException):
            c.async_commit_fenced = True


class _LookupThenCommitListener(RequestFutureListener):
    """The listener ``commitOffsetsAsync`` puts on a coordinator lookup when the coordinator is
    unknown: commit once it is found, else complete the callback with a retriable failure."""

    __slots__ = ("coordinator", "offsets", "callback")

    def __init__(self, coordinator: "ConsumerCoordinator", offsets, callback) -> None:
        self.coordinator = coordinator
        self.offsets = offsets
        self.callback = callback

    def on_success(self, value: Any) -> None:
        c = self.coordinator
        c.pending_async_commits -= 1
        c._do_commit_offsets_async(self.offsets, self.callback)
        c.client.poll_no_wakeup()

    def on_failure(self, e: Exception) -> None:
        c = self.coordinator
        c.pending_async_commits -= 1
        exc = RetriableCommitFailedException(str(e))
        exc.__cause__ = e
        c.completed_offset_commits.append(_OffsetCommitCompletion(self.callback, self.offsets, exc))


# --------------------------------------------------------------------------------------------
# ConsumerCoordinator
# --------------------------------------------------------------------------------------------

class ConsumerCoordinator(AbstractCoordinator):
    """This class manages the coordination process with the consumer coordinator."""

    def __init__(self, rebalance_config: GroupRebalanceConfig, client: ConsumerNetworkClient,
                 assignors: Sequence[AbstractPartitionAssignor], metadata: Metadata,
                 subscriptions: SubscriptionState, time: Time, rng: Optional[Any] = None,
                 default_offset_commit_callback: OffsetCommitCallback = None) -> None:
        super().__init__(rebalance_config, client, time, rng)
        self.assignors: List[AbstractPartitionAssignor] = list(assignors)
        self.cluster_metadata = metadata
        self.subscriptions = subscriptions
        self.rebalance_listener_invoker = ConsumerRebalanceListenerInvoker(subscriptions)
        self.default_offset_commit_callback = default_offset_commit_callback
        self.completed_offset_commits: Deque[_OffsetCommitCompletion] = deque()
        self.is_leader = False
        self.joined_subscription: Optional[List[str]] = None
        self.metadata_snapshot = MetadataSnapshot(subscriptions, metadata.fetch(), metadata.update_version())
        self.assignment_snapshot: Optional[MetadataSnapshot] = None
        self.pending_async_commits = 0
        self.in_flight_async_commits = 0
        # this collection must be thread-safe because it is modified from the response handler
        # of offset commit requests, which may be invoked from the heartbeat thread
        self.async_commit_fenced = False
        self.pending_committed_offset_request: Optional[_PendingCommittedOffsetRequest] = None
        self.join_prepare_timer: Optional[Timer] = None
        if not self.assignors:
            self.protocol: Optional[str] = None
        else:
            # select the rebalance protocol such that all assignors support it (highest first)
            common = None
            for assignor in self.assignors:
                supported = assignor.supported_protocols()
                common = list(supported) if common is None else [p for p in common if p in supported]
            if not common:
                raise IllegalArgumentException(
                    "Specified assignors %r do not have commonly supported rebalance protocol"
                    % ([a.name() for a in self.assignors],))
            self.protocol = RebalanceProtocol.COOPERATIVE if RebalanceProtocol.COOPERATIVE in common \
                else RebalanceProtocol.EAGER

    # ---- the embedded protocol ------------------------------------------------------------

    def protocol_type(self) -> str:
        return CONSUMER_PROTOCOL_TYPE

    def metadata(self) -> List[JoinGroupRequestProtocol]:
        """One protocol per assignor, in preference order, each carrying the subscription."""
        self.joined_subscription = list(self.subscriptions.subscription)
        owned = self.subscriptions.assigned_partitions()
        protocol_set: List[JoinGroupRequestProtocol] = []
        for assignor in self.assignors:
            topics = list(self.joined_subscription)
            subscription = Subscription(topics=topics,
                                        user_data=assignor.subscription_user_data(topics),
                                        owned_partitions=list(owned),
                                        generation_id=self.generation.generation_id,
                                        rack_id=None)
            protocol_set.append(JoinGroupRequestProtocol(assignor.name(), subscription))
        return protocol_set

    def lookup_assignor(self, name: Optional[str]) -> Optional[AbstractPartitionAssignor]:
        for assignor in self.assignors:
            if assignor.name() == name:
                return assignor
        return None

    def maybe_update_subscription_metadata(self) -> None:
        version = self.cluster_metadata.update_version()
        if version > self.metadata_snapshot.version:
            # Update the current snapshot, which will be used to check for subscription changes
            # that would require a rebalance (e.g. new partitions).
            self.metadata_snapshot = MetadataSnapshot(self.subscriptions, self.cluster_metadata.fetch(), version)

    def _update_group_subscription(self, topics: List[str]) -> None:
        # the leader will begin watching for changes to any of the topics the group is
        # interested in, which ensures that all metadata changes will eventually be seen
        if self.subscriptions.group_subscribe(topics):
            self.cluster_metadata.set_topics(self.subscriptions.metadata_topics())
            self.cluster_metadata.request_update_for_new_topics()
            # update metadata (if needed) and keep track of the metadata used for assignment so
            # that we can check after rebalance completion whether anything has changed: Kafka's
            # client.ensureFreshMetadata(infinite timer), inside this response handler. Awaited
            # here only for new topics, whose update the backoff allows at once (one poll
            # refreshes: at once in the simulated world, a round trip over TCP); an update merely
            # requested or due is not awaited (see the module docstring): we assign from the
            # metadata at hand and rely on the metadata snapshot to rejoin if it was stale.
            if not self.client.ensure_fresh_metadata(self.time.timer(LONG_MAX)):
                raise TimeoutException("Timeout awaiting metadata for the group's new topics")
        self.maybe_update_subscription_metadata()

    def on_leader_elected(self, leader_id: str, assignment_strategy: str,
                          all_subscriptions: List[JoinGroupResponseMember],
                          skip_assignment: bool) -> Dict[str, Any]:
        assignor = self.lookup_assignor(assignment_strategy)
        if assignor is None:
            raise IllegalStateException("Coordinator selected invalid assignment protocol: %s" % assignment_strategy)
        all_subscribed_topics: List[str] = []
        subscriptions: Dict[str, Subscription] = {}
        group_instance_ids: Dict[str, Optional[str]] = {}
        for member_subscription in all_subscriptions:
            subscription = member_subscription.metadata
            subscriptions[member_subscription.member_id] = subscription
            group_instance_ids[member_subscription.member_id] = member_subscription.group_instance_id
            for topic in subscription.topics:
                if topic not in all_subscribed_topics:
                    all_subscribed_topics.append(topic)
        self._update_group_subscription(all_subscribed_topics)
        self.is_leader = True
        if skip_assignment:
            self.assignment_snapshot = self.metadata_snapshot
            return {}
        cluster = self.cluster_metadata.fetch()
        assignments = assignor.assign(cluster.partition_count_for_topic, subscriptions, group_instance_ids)
        # metadataSnapshot could be updated when the subscription is updated therefore we must
        # take the assignment snapshot after.
        self.assignment_snapshot = self.metadata_snapshot
        return assignments

    def on_join_prepare(self, timer: Timer, generation: int, member_id: str) -> bool:
        """Eager: revoke every owned partition (or report them lost when the generation or
        member id was reset).  No auto-commit, so this never has to wait."""
        if self.join_prepare_timer is None:
            # We should complete onJoinPrepare before rebalanceTimeout
            self.join_prepare_timer = self.time.timer(self.rebalance_config.rebalance_timeout_ms)
        else:
            self.join_prepare_timer.update()
        # (auto-commit before a rebalance is not implemented: enable.auto.commit is false)

        # the generation / member-id can possibly be reset by the heartbeat thread upon getting
        # errors or heartbeat timeouts; in this case whatever is previously owned partitions
        # would be lost, we should trigger the callback and cleanup the assignment; otherwise we
        # can proceed normally and revoke the partitions depending on the protocol, and in that
        # case we should only change the assignment AFTER the revoke callback is triggered so
        # that users can still access the previously owned partitions to commit offsets etc.
        exception = None
        if generation == NO_GENERATION.generation_id or member_id == NO_GENERATION.member_id:
            revoked_partitions = self.subscriptions.assigned_partitions()
            if revoked_partitions:
                exception = self.rebalance_listener_invoker.invoke_partitions_lost(revoked_partitions)
                self.subscriptions.assign_from_subscribed([])
        else:
            # EAGER: revoke all partitions
            revoked_partitions = self.subscriptions.assigned_partitions()
            exception = self.rebalance_listener_invoker.invoke_partitions_revoked(revoked_partitions)
            self.subscriptions.assign_from_subscribed([])
        self.is_leader = False
        self.subscriptions.reset_group_subscription()
        self.join_prepare_timer = None
        timer.update()
        if exception is not None:
            raise KafkaException("User rebalance callback throws an error: %r" % (exception,)) from exception
        return True

    def on_join_complete(self, generation: int, member_id: str, assignment_strategy: Optional[str],
                         assignment: Any) -> None:
        # Only the leader is responsible for monitoring for metadata changes (i.e. partition changes)
        if not self.is_leader:
            self.assignment_snapshot = None
        assignor = self.lookup_assignor(assignment_strategy)
        if assignor is None:
            raise IllegalStateException("Coordinator selected invalid assignment protocol: %s" % assignment_strategy)
        owned_partitions = self.subscriptions.assigned_partitions()
        if assignment is None:
            # Kafka: an empty assignment buffer cannot be deserialised
            raise IllegalStateException(
                "There are insufficient bytes available to read assignment from the sync-group "
                "response (actual byte size 0) , this is not expected; it is possible that the "
                "leader's assign function is buggy and did not return any assignment for this member")
        assigned_partitions = sorted(set(assignment.partitions))
        if not self.subscriptions.check_assignment_matched_subscription(assigned_partitions):
            self.request_rejoin("received assignment does not match subscription",
                                "received assignment %r does not match the current subscription %r"
                                % (assigned_partitions, self.subscriptions.subscription))
            return
        added_partitions = [tp for tp in assigned_partitions if tp not in owned_partitions]
        first_exception: Optional[Exception] = None
        # Give the assignor a chance to update internal state based on the received assignment
        try:
            assignor.on_assignment(assignment, generation)
        except Exception as e:
            first_exception = e
        self.subscriptions.assign_from_subscribed(assigned_partitions)
        # Add partitions that were not previously owned but are now assigned
        e = self.rebalance_listener_invoker.invoke_partitions_assigned(added_partitions)
        if first_exception is None:
            first_exception = e
        if first_exception is not None:
            if isinstance(first_exception, KafkaException):
                raise first_exception
            raise KafkaException("User rebalance callback throws an error: %r" % (first_exception,)) \
                from first_exception

    def on_leave_prepare(self) -> None:
        # Save the current Generation, since the onPartitionsRevoked/Lost callbacks may be invoked
        current_generation = self.generation
        dropped_partitions = self.subscriptions.assigned_partitions()
        if self.subscriptions.has_auto_assigned_partitions() and dropped_partitions:
            if (current_generation.generation_id == NO_GENERATION.generation_id
                    or current_generation.member_id == NO_GENERATION.member_id
                    or self.rebalance_in_progress()):
                e = self.rebalance_listener_invoker.invoke_partitions_lost(dropped_partitions)
            else:
                e = self.rebalance_listener_invoker.invoke_partitions_revoked(dropped_partitions)
            self.subscriptions.assign_from_subscribed([])
            if e is not None:
                raise KafkaException("User rebalance callback throws an error: %r" % (e,)) from e

    def rejoin_needed_or_pending(self) -> bool:
        if not self.subscriptions.has_auto_assigned_partitions():
            return False
        # we need to rejoin if we performed the assignment and metadata has changed;
        # also for those owned-but-no-longer-existed partitions we should drop them as lost
        if self.assignment_snapshot is not None and not self.assignment_snapshot.matches(self.metadata_snapshot):
            self._request_rejoin_if_necessary(
                "cached metadata has changed",
                "cached metadata has changed from %r at the beginning of the rebalance to %r"
                % (self.assignment_snapshot, self.metadata_snapshot))
            return True
        # we need to join if our subscription has changed since the last join
        if self.joined_subscription is not None and self.joined_subscription != self.subscriptions.subscription:
            self._request_rejoin_if_necessary(
                "subscription has changed",
                "subscription has changed from %r at the beginning of the rebalance to %r"
                % (self.joined_subscription, self.subscriptions.subscription))
            return True
        return super().rejoin_needed_or_pending()

    def _request_rejoin_if_necessary(self, short_reason: str, full_reason: str) -> None:
        if not self.rejoin_needed:
            self.request_rejoin(short_reason, full_reason)

    # ---- poll -----------------------------------------------------------------------------

    def poll(self, timer: Timer, wait_for_join_group: bool = True) -> bool:
        """``ConsumerCoordinator.poll(Timer, boolean)``: ensure the coordinator is known and the
        consumer has joined the group (if it uses group management).  Returns False if the timer
        expired first.  With ``wait_for_join_group`` False the join itself gets a zero timer."""
        self.maybe_update_subscription_metadata()
        self.invoke_completed_offset_commit_callbacks()
        if self.subscriptions.has_auto_assigned_partitions():
            if self.protocol is None:
                raise IllegalStateException(
                    "User configured partition.assignment.strategy to empty while trying to "
                    "subscribe for group protocol to auto assign partitions")
            # Always update the heartbeat last poll time so that the heartbeat thread does not
            # leave the group proactively due to application inactivity even if (say) the
            # coordinator cannot be found.
            self.poll_heartbeat(timer.current_time_ms())
            if self.coordinator_unknown_and_unready_sync(timer):
                return False
            if self.rejoin_needed_or_pending():
                # if not wait for join group, we would just use a timer of 0
                if not self.ensure_active_group(timer if wait_for_join_group else self.time.timer(0)):
                    # since we may use a different timer in the callee, we'd still need
                    # to update the original timer's current time after the call
                    timer.update(self.time.milliseconds())
                    return False
        else:
            # For manually assigned partitions, we do not try to pro-actively lookup coordinator;
            # instead we only try to refresh metadata when necessary.
            if self.cluster_metadata.update_requested() and not self.client.has_ready_nodes(timer.current_time_ms()):
                self.client.await_metadata_update(timer)
            # if there is pending coordinator requests, ensure they have a chance to be transmitted.
            self.client.poll_no_wakeup()
        # (maybeAutoCommitOffsetsAsync: auto-commit is not implemented)
        return True

    def coordinator_unknown_and_unready_sync(self, timer: Timer) -> bool:
        return self.coordinator_unknown() and not self.ensure_coordinator_ready(timer)

    def coordinator_unknown_and_unready_async(self) -> bool:
        return self.coordinator_unknown() and not self.ensure_coordinator_ready_async()

    def time_to_next_poll(self, now: int) -> int:
        """How long the application may block before it must call ``poll`` again (no auto-commit:
        the time to the next heartbeat)."""
        return self.time_to_next_heartbeat(now)

    # ---- offsets --------------------------------------------------------------------------

    def invoke_completed_offset_commit_callbacks(self) -> None:
        if self.async_commit_fenced:
            raise FencedInstanceIdException(
                "Get fenced exception for group.instance.id %s, current member.id is %s"
                % (self.rebalance_config.group_instance_id or "unset_instance_id", self.member_id()))
        while self.completed_offset_commits:
            self.completed_offset_commits.popleft().invoke()

    def commit_offsets_async(self, offsets: Mapping[TopicPartition, Union[int, OffsetAndMetadata]],
                             callback: OffsetCommitCallback = None) -> Optional[RequestFuture]:
        """Commit ``offsets`` without blocking; the callback runs from a later poll/commit."""
        self.invoke_completed_offset_commit_callbacks()
        offsets = {tp: _as_offset_and_metadata(v) for tp, v in offsets.items()}
        future = None
        if not offsets:
            # No need to check coordinator if offsets is empty since commit of empty offsets is
            # completed locally.
            future = self._do_commit_offsets_async(offsets, callback)
        elif not self.coordinator_unknown_and_unready_async():
            # we need to make sure coordinator is ready before committing, since this is for
            # async committing we do not try to block, but just try once to clear the previous
            # discover-coordinator future, resend, or get responses; if the coordinator is not
            # ready yet then we would just proceed and put that into the pending requests, and
            # future poll calls would still try to complete them.
            future = self._do_commit_offsets_async(offsets, callback)
        else:
            # we don't know the current coordinator, so try to find it and then send the commit
            # or fail (we don't want recursive retries which can cause offset commits to arrive
            # out of order). Note that there may be multiple offset commits chained to the same
            # coordinator lookup request. This is fine because the listeners will be invoked in
            # the same order that they were added.
            self.pending_async_commits += 1
            self.lookup_coordinator().add_listener(_LookupThenCommitListener(self, offsets, callback))
        # ensure the commit has a chance to be transmitted (without blocking on its completion).
        # Note that commits are treated as heartbeats by the coordinator, so there is no need to
        # explicitly allow heartbeats through delayed task execution.
        self.client.poll_no_wakeup()
        return future

    def _do_commit_offsets_async(self, offsets: Dict[TopicPartition, OffsetAndMetadata],
                                 callback: OffsetCommitCallback) -> RequestFuture:
        future = self.send_offset_commit_request(offsets)
        self.in_flight_async_commits += 1
        cb = self.default_offset_commit_callback if callback is None else callback
        future.add_listener(_AsyncCommitListener(self, offsets, cb))
        return future

    def commit_offsets_sync(self, offsets: Mapping[TopicPartition, Union[int, OffsetAndMetadata]],
                            timer: Timer) -> bool:
        """Commit ``offsets`` synchronously; False if the timer expired first.  Raises the
        commit's exception if it is not retriable."""
        return CommitOffsetsSync(self, offsets, timer).run()

    def invoke_pending_async_commits(self, timer: Timer) -> bool:
        """Wait (up to the timer) for in-flight async commits and run their callbacks."""
        if self.in_flight_async_commits == 0:
            return True
        while True:
            self.ensure_coordinator_ready(timer)
            self.client.poll(timer)
            self.invoke_completed_offset_commit_callbacks()
            if self.in_flight_async_commits == 0:
                return True
            timer.sleep(self.rebalance_config.retry_backoff_ms)
            if not timer.not_expired():
                return False

    def send_offset_commit_request(self, offsets: Dict[TopicPartition, OffsetAndMetadata]) -> RequestFuture:
        """Send OffsetCommit carrying ``generation_if_stable()`` (auto-assigned partitions) or
        NO_GENERATION (manual assignment); fail locally, without sending, when the member is
        not STABLE."""
        if not offsets:
            return RequestFuture.void_success()
        coordinator = self.check_and_get_coordinator()
        if coordinator is None:
            return RequestFuture.coordinator_not_available()
        # create the offset commit request
        request_topic_data: Dict[str, OffsetCommitRequestTopic] = {}
        for tp, offset_and_metadata in offsets.items():
            if offset_and_metadata.offset < 0:
                return RequestFuture.failure(IllegalArgumentException("Invalid offset: %d" % offset_and_metadata.offset))
            topic = request_topic_data.get(tp.topic)
            if topic is None:
                topic = request_topic_data[tp.topic] = OffsetCommitRequestTopic(tp.topic)
            topic.partitions.append(OffsetCommitRequestPartition(
                partition_index=tp.partition,
                committed_offset=offset_and_metadata.offset,
                committed_metadata=offset_and_metadata.metadata,
                committed_leader_epoch=NO_LEADER_EPOCH if offset_and_metadata.leader_epoch is None
                else offset_and_metadata.leader_epoch))
        if self.subscriptions.has_auto_assigned_partitions():
            generation = self.generation_if_stable()
            group_instance_id = self.rebalance_config.group_instance_id
            # if the generation is null, we are not part of an active group (and we expect to
            # be). the only thing we can do is fail the commit and let the user rejoin the group
            # in poll().
            if generation is None:
                if self.rebalance_in_progress():
                    # if the client knows it is already rebalancing, we can use
                    # RebalanceInProgressException instead of CommitFailedException to indicate
                    # this is not a fatal error
                    return RequestFuture.failure(RebalanceInProgressException(
                        "Offset commit cannot be completed since the consumer is undergoing a "
                        "rebalance for auto partition assignment. You can try completing the "
                        "rebalance by calling poll() and then retry the operation."))
                return RequestFuture.failure(CommitFailedException(
                    "Offset commit cannot be completed since the consumer is not part of an active "
                    "group for auto partition assignment; it is likely that the consumer was kicked "
                    "out of the group."))
        else:
            generation = NO_GENERATION
            group_instance_id = None
        data = OffsetCommitRequestData(group_id=self.rebalance_config.group_id,
                                       generation_id=generation.generation_id,
                                       member_id=generation.member_id,
                                       group_instance_id=group_instance_id,
                                       topics=list(request_topic_data.values()))
        return self.client.send(coordinator, data).compose(
            OffsetCommitResponseHandler(self, offsets, generation))

    def fetch_committed_offsets(self, partitions: Iterable[TopicPartition],
                                timer: Timer) -> Optional[Dict[TopicPartition, Optional[OffsetAndMetadata]]]:
        """The committed offsets of ``partitions`` (None for a partition without one), or None
        if the timer expired first."""
        partitions = sorted(set(partitions))
        if not partitions:
            return {}
        generation_for_offset_request = self.generation_if_stable()
        pending = self.pending_committed_offset_request
        if pending is not None and not pending.same_request(partitions, generation_for_offset_request):
            # if we were waiting for a different request, then just clear it.
            self.pending_committed_offset_request = None
        attempts = 0
        while True:
            if not self.ensure_coordinator_ready(timer):
                return None
            # contact coordinator to fetch committed offsets
            if self.pending_committed_offset_request is not None:
                future = self.pending_committed_offset_request.response
            else:
                future = self.send_offset_fetch_request(partitions)
                self.pending_committed_offset_request = _PendingCommittedOffsetRequest(
                    partitions, generation_for_offset_request, future)
            self.client.poll_future(future, timer)
            if not future.is_done():
                return None
            self.pending_committed_offset_request = None
            if future.succeeded():
                return future.value()
            if not future.is_retriable():
                raise future.exception()
            timer.sleep(self.retry_backoff.backoff(attempts))
            attempts += 1
            if not timer.not_expired():
                return None

    def send_offset_fetch_request(self, partitions: List[TopicPartition]) -> RequestFuture:
        coordinator = self.check_and_get_coordinator()
        if coordinator is None:
            return RequestFuture.coordinator_not_available()
        topics: Dict[str, OffsetFetchRequestTopic] = {}
        for tp in partitions:
            topic = topics.get(tp.topic)
            if topic is None:
                topic = topics[tp.topic] = OffsetFetchRequestTopic(tp.topic)
            topic.partition_indexes.append(tp.partition)
        data = OffsetFetchRequestData(group_id=self.rebalance_config.group_id,
                                      topics=list(topics.values()), require_stable=True)
        return self.client.send(coordinator, data).compose(OffsetFetchResponseHandler(self))

    # ---- close ----------------------------------------------------------------------------

    def close(self, timer: Optional[Timer] = None) -> None:
        if timer is None:
            timer = self.time.timer(0)
        # we do not need to re-enable wakeups since we are closing already
        self.client.disable_wakeups()
        try:
            # (maybeAutoCommitOffsetsSync: auto-commit is not implemented)
            while self.pending_async_commits > 0 and timer.not_expired():
                self.ensure_coordinator_ready(timer)
                self.client.poll(timer)
                self.invoke_completed_offset_commit_callbacks()
        finally:
            super().close(timer)
