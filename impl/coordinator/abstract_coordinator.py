"""``AbstractCoordinator`` (``org.apache.kafka.clients.consumer.internals``), protocol §3.

The client side of the classic group membership protocol: coordinator discovery (§3.2), the join
loop ``ensureActiveGroup`` / ``joinGroupIfNeeded`` (§3.3), the JoinGroup / SyncGroup / Heartbeat /
LeaveGroup response handlers with Kafka's error tables (§3.4), and the heartbeat thread (§3.5).

Threads.  Kafka runs the heartbeat loop on its own thread, synchronised with the application thread
on the coordinator's monitor.  Here :class:`HeartbeatThread` has no thread: :meth:`HeartbeatThread.
run_once` performs exactly one iteration of ``HeartbeatThread.run``'s loop body, and whoever drives
the client (a test, the simulated world) decides when the thread runs.  ``wait``/``notify`` on the
monitor become no-ops: the waits only decide *when* the next iteration happens, which is the
driver's choice.  The places Java takes the monitor are noted in comments where they matter for
reasoning about interleavings (e.g. the generation/state snapshot in ``join_group_if_needed``).

Time is always the injected :class:`~impl.time.Time`.  Backoffs: the join loop sleeps a flat
``retry.backoff.ms`` (as trunk does); ``ensure_coordinator_ready`` (and the consumer's sync commit
and offset fetch) use ``retry_backoff.backoff(attempts)``, which is flat ``retry.backoff.ms``
(Kafka ≤ 3.6) unless ``retry_backoff_max_ms`` > ``retry_backoff_ms`` (trunk's exponential backoff,
jitter drawn from an injected ``random.Random``); failed heartbeats back off a flat
``retry.backoff.ms`` (see :mod:`impl.coordinator.heartbeat`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from impl.consumer_network_client import ConsumerNetworkClient
from impl.coordinator.heartbeat import Heartbeat
from impl.errors import (
    DisconnectException,
    Errors,
    FencedInstanceIdException,
    GroupAuthorizationException,
    GroupMaxSizeReachedException,
    IllegalStateException,
    KafkaException,
    MemberIdRequiredException,
    IllegalGenerationException,
    RebalanceInProgressException,
    RetriableException,
    UnjoinedGroupException,
    UnknownMemberIdException,
)
from impl.future import RequestFuture, RequestFutureAdapter, RequestFutureListener
from impl.network.metadata import Node
from impl.protocol import (
    CoordinatorType,
    FindCoordinatorRequestData,
    HeartbeatRequestData,
    JoinGroupRequestData,
    JoinGroupRequestProtocol,
    JoinGroupResponseMember,
    LeaveGroupRequestData,
    MemberIdentity,
    SyncGroupRequestAssignment,
    SyncGroupRequestData,
)
from impl.time import INT_MAX, LONG_MAX, ExponentialBackoff, Time, Timer

__all__ = [
    "AbstractCoordinator", "CoordinatorResponseHandler", "FindCoordinatorResponseHandler",
    "Generation", "GroupRebalanceConfig", "HeartbeatResponseHandler", "HeartbeatThread",
    "JOIN_GROUP_TIMEOUT_LAPSE", "JoinGroupResponseHandler", "LeaveGroupResponseHandler",
    "MemberState", "NO_GENERATION", "SyncGroupResponseHandler", "join_group_request_timeout_ms",
    "maybe_truncate_reason",
]

#: ``AbstractCoordinator.JOIN_GROUP_TIMEOUT_LAPSE``: slack added to the rebalance timeout to get the
#: JoinGroup request timeout.
JOIN_GROUP_TIMEOUT_LAPSE = 5000

#: ``JoinGroupRequest.MAX_REASON_LENGTH``.
MAX_REASON_LENGTH = 255


def _java_int_add(a: int, b: int) -> int:
    """``a + b`` with Java ``int`` (32-bit two's complement) wrap-around."""
    r = (a + b) & 0xFFFFFFFF
    return r - (1 << 32) if r >= (1 << 31) else r


def join_group_request_timeout_ms(default_request_timeout_ms: int, rebalance_timeout_ms: int) -> int:
    """``max(request.timeout.ms, max(rebalanceTimeout + 5000, rebalanceTimeout))`` in Java ``int``
    arithmetic: the inner ``max`` guards against the sum overflowing when the rebalance timeout is
    close to Integer.MAX_VALUE (the sum wraps negative and the rebalance timeout itself wins)."""
    return max(default_request_timeout_ms,
               max(_java_int_add(rebalance_timeout_ms, JOIN_GROUP_TIMEOUT_LAPSE), rebalance_timeout_ms))


def maybe_truncate_reason(reason: Optional[str]) -> Optional[str]:
    """``JoinGroupRequest.maybeTruncateReason``: at most 255 characters."""
    if reason is not None and len(reason) > MAX_REASON_LENGTH:
        return reason[:MAX_REASON_LENGTH]
    return reason


# --------------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------------

class MemberState(enum.Enum):
    """``AbstractCoordinator.MemberState``."""

    #: the client is not part of a group
    UNJOINED = "UNJOINED"
    #: the client has sent the join group request, but have not received response
    PREPARING_REBALANCE = "PREPARING_REBALANCE"
    #: the client has received join group response, but have not received assignment
    COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
    #: the client has joined and is sending heartbeats
    STABLE = "STABLE"

    def has_not_joined_group(self) -> bool:
        return self is MemberState.UNJOINED or self is MemberState.PREPARING_REBALANCE

    def __repr__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Generation:
    """``AbstractCoordinator.Generation``: equality on all three fields."""

    generation_id: int
    member_id: str
    protocol_name: Optional[str]

    def has_member_id(self) -> bool:
        """Whether the member id is non-empty (``hasMemberId``)."""
        return self.member_id != ""

    def __repr__(self) -> str:
        return "Generation{generationId=%d, memberId='%s', protocol='%s'}" % (
            self.generation_id, self.member_id, self.protocol_name)


#: ``Generation.NO_GENERATION``.
NO_GENERATION = Generation(-1, "", None)


def has_generation_reset(generation: Generation) -> bool:
    """``hasGenerationReset``: generation id -1 and no protocol (the member id is ignored, since it
    may be kept across a reset)."""
    return (generation.generation_id == NO_GENERATION.generation_id
            and generation.protocol_name is None)


@dataclass(slots=True)
class GroupRebalanceConfig:
    """``org.apache.kafka.clients.GroupRebalanceConfig`` (consumer flavour: the rebalance timeout
    is ``max.poll.interval.ms``)."""

    group_id: str
    session_timeout_ms: int = 45000
    rebalance_timeout_ms: int = 300000
    heartbeat_interval_ms: int = 3000
    group_instance_id: Optional[str] = None
    retry_backoff_ms: int = 100
    #: ``retry.backoff.max.ms``; equal to ``retry_backoff_ms`` means a flat backoff (Kafka ≤ 3.6).
    retry_backoff_max_ms: int = 100
    leave_group_on_close: bool = True


# --------------------------------------------------------------------------------------------
# Response handlers
# --------------------------------------------------------------------------------------------

class CoordinatorResponseHandler(RequestFutureAdapter):
    """``AbstractCoordinator.CoordinatorResponseHandler<R, T>``.

    Remembers the generation the request was sent with (``sent_generation``); subclasses implement
    :meth:`handle`.  A DisconnectException marks the coordinator unknown (as disconnected); a
    RuntimeException raised while handling fails the future if it is not done yet.
    """

    __slots__ = ("coordinator", "sent_generation", "response")

    def __init__(self, coordinator: "AbstractCoordinator", generation: Generation) -> None:
        self.coordinator = coordinator
        self.sent_generation = generation
        self.response = None

    def handle(self, response: Any, future: RequestFuture) -> None:
        raise NotImplementedError

    def on_failure(self, e: Exception, future: RequestFuture) -> None:
        # mark the coordinator as dead
        if isinstance(e, DisconnectException):
            self.coordinator.mark_coordinator_unknown(True, str(e))
        future.raise_(e)

    def on_success(self, client_response: Any, future: RequestFuture) -> None:
        try:
            self.response = client_response
            self.handle(client_response.response_body, future)
        except Exception as e:  # Java: catch (RuntimeException e)
            if not future.is_done():
                future.raise_(e)

    def generation_unchanged(self) -> bool:
        """Whether the coordinator's generation still equals the one this request carried."""
        return self.coordinator.generation == self.sent_generation


class FindCoordinatorResponseHandler(RequestFutureAdapter):
    """``AbstractCoordinator.FindCoordinatorResponseHandler``.

    On NONE: the coordinator becomes ``Node(Integer.MAX_VALUE − nodeId, host, port)`` — a separate
    connection id for coordinator traffic — then ``tryConnect`` and a session-timer reset.  A
    non-retriable transport failure is remembered and rethrown by the next
    ``ensure_coordinator_ready``.

    The response here is the single-key FindCoordinator form (v0-3), so Kafka's "≠ 1 coordinator
    entries → IllegalStateException" check of the batched form cannot trigger.
    """

    __slots__ = ("coordinator",)

    def __init__(self, coordinator: "AbstractCoordinator") -> None:
        self.coordinator = coordinator

    def on_success(self, resp: Any, future: RequestFuture) -> None:
        c = self.coordinator
        data = resp.response_body
        error = Errors.for_code(data.error_code)
        if error is Errors.NONE:
            # synchronized (AbstractCoordinator.this)
            # use MAX_VALUE - node.id as the coordinator id to allow separate connections
            # for the coordinator in the underlying network client layer
            coordinator_connection_id = INT_MAX - data.node_id
            c.coordinator = Node(coordinator_connection_id, data.host, data.port)
            c.client.try_connect(c.coordinator)
            c.heartbeat.reset_session_timeout()
            future.complete(None)
        elif error is Errors.GROUP_AUTHORIZATION_FAILED:
            future.raise_(group_authorization_exception(c.rebalance_config.group_id))
        else:
            future.raise_(error)

    def on_failure(self, e: Exception, future: RequestFuture) -> None:
        if not isinstance(e, RetriableException):
            # Remember the exception if fatal so we can ensure it gets thrown by the main thread
            self.coordinator.fatal_find_coordinator_exception = e
        future.raise_(e)


class JoinGroupResponseHandler(CoordinatorResponseHandler):
    """``AbstractCoordinator.JoinGroupResponseHandler`` — the JoinGroup table of §3.4."""

    __slots__ = ()

    def handle(self, join_response: Any, future: RequestFuture) -> None:
        c = self.coordinator
        error = Errors.for_code(join_response.error_code)
        if error is Errors.NONE:
            if c.is_protocol_type_inconsistent(join_response.protocol_type):
                future.raise_(Errors.INCONSISTENT_GROUP_PROTOCOL)
                return
            # synchronized (AbstractCoordinator.this)
            if c.state is not MemberState.PREPARING_REBALANCE:
                # if the consumer was woken up before a rebalance completes, we may have already
                # left the group. In this case, we do not want to continue with the sync group.
                future.raise_(UnjoinedGroupException())
                return
            c.state = MemberState.COMPLETING_REBALANCE
            # we only need to enable heartbeat thread whenever we transit to
            # COMPLETING_REBALANCE state since we always transit from this state to STABLE
            if c.heartbeat_thread is not None:
                c.heartbeat_thread.enable()
            c.generation = Generation(join_response.generation_id, join_response.member_id,
                                      join_response.protocol_name)
            if join_response.leader == join_response.member_id:
                c._on_leader_elected_and_sync(join_response).chain(future)
            else:
                c._on_join_follower().chain(future)
        elif error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
            # backoff and retry
            future.raise_(error)
        elif error is Errors.UNKNOWN_MEMBER_ID:
            # only need to reset the member id if generation has not been changed,
            # then retry immediately
            if self.generation_unchanged():
                c.reset_state_on_response_error("JoinGroup", error, True)
            future.raise_(error)
        elif error is Errors.COORDINATOR_NOT_AVAILABLE or error is Errors.NOT_COORDINATOR:
            # re-discover the coordinator and retry with backoff
            c.mark_coordinator_unknown(False, "error response " + error.name)
            future.raise_(error)
        elif error is Errors.FENCED_INSTANCE_ID:
            # for join-group request, even if the generation has changed we would not expect the
            # instance id gets fenced, and hence we always treat this as a fatal error
            future.raise_(error)
        elif error in (Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.INVALID_SESSION_TIMEOUT,
                       Errors.INVALID_GROUP_ID, Errors.GROUP_AUTHORIZATION_FAILED,
                       Errors.GROUP_MAX_SIZE_REACHED):
            group_id = c.rebalance_config.group_id
            if error is Errors.GROUP_MAX_SIZE_REACHED:
                future.raise_(GroupMaxSizeReachedException(
                    "Consumer group %s already has the configured maximum number of members." % group_id))
            elif error is Errors.GROUP_AUTHORIZATION_FAILED:
                future.raise_(group_authorization_exception(group_id))
            else:
                future.raise_(error)
        elif error is Errors.UNSUPPORTED_VERSION:
            future.raise_(error)
        elif error is Errors.MEMBER_ID_REQUIRED:
            # Broker requires a concrete member id to be allowed to join the group. Update member
            # id and send another join group request in next cycle.
            member_id = join_response.member_id
            # synchronized (AbstractCoordinator.this)
            c.generation = Generation(-1, member_id, None)  # OffsetCommitRequest.DEFAULT_GENERATION_ID
            c.request_rejoin("need to re-join with the given member-id: " + member_id)
            future.raise_(error)
        elif error is Errors.REBALANCE_IN_PROGRESS:
            # the group is rebalancing; the join loop retries immediately (no reset)
            future.raise_(error)
        else:
            # unexpected error, throw the exception
            future.raise_(KafkaException("Unexpected error in join group response: " + error.message))


class SyncGroupResponseHandler(CoordinatorResponseHandler):
    """``AbstractCoordinator.SyncGroupResponseHandler`` — the SyncGroup table of §3.4."""

    __slots__ = ()

    def handle(self, sync_response: Any, future: RequestFuture) -> None:
        c = self.coordinator
        error = Errors.for_code(sync_response.error_code)
        if error is Errors.NONE:
            if c.is_protocol_type_inconsistent(sync_response.protocol_type):
                future.raise_(Errors.INCONSISTENT_GROUP_PROTOCOL)
                return
            # synchronized (AbstractCoordinator.this)
            if not has_generation_reset(c.generation) and c.state is MemberState.COMPLETING_REBALANCE:
                # check protocol name only if the generation is not reset
                protocol_name = sync_response.protocol_name
                if protocol_name is not None and protocol_name != c.generation.protocol_name:
                    future.raise_(Errors.INCONSISTENT_GROUP_PROTOCOL)
                else:
                    c.state = MemberState.STABLE
                    c.rejoin_reason = ""
                    c.rejoin_needed = False
                    # record rebalance latency
                    c.last_rebalance_end_ms = c.time.milliseconds()
                    c.last_rebalance_start_ms = -1
                    future.complete(sync_response.assignment)
            else:
                # Generation data was cleared by the heartbeat thread before the SyncGroup
                # response arrived: use ILLEGAL_GENERATION to make the join loop retry at once.
                future.raise_(Errors.ILLEGAL_GENERATION)
        elif error is Errors.GROUP_AUTHORIZATION_FAILED:
            future.raise_(group_authorization_exception(c.rebalance_config.group_id))
        elif error is Errors.REBALANCE_IN_PROGRESS:
            # the group began another rebalance: re-join (the generation is kept; KAFKA-13891's
            # reset here was reverted)
            future.raise_(error)
        elif error is Errors.FENCED_INSTANCE_ID:
            # for sync-group request, even if the generation has changed we would not expect the
            # instance id gets fenced, and hence we always treat this as a fatal error
            future.raise_(error)
        elif error is Errors.UNKNOWN_MEMBER_ID or error is Errors.ILLEGAL_GENERATION:
            if self.generation_unchanged():
                # don't reset generation member ID when ILLEGAL_GENERATION, since the member ID
                # might still be valid
                c.reset_state_on_response_error("SyncGroup", error, error is not Errors.ILLEGAL_GENERATION)
            future.raise_(error)
        elif error is Errors.COORDINATOR_NOT_AVAILABLE or error is Errors.NOT_COORDINATOR:
            c.mark_coordinator_unknown(False, "error response " + error.name)
            future.raise_(error)
        else:
            future.raise_(KafkaException("Unexpected error from SyncGroup: " + error.message))


class HeartbeatResponseHandler(CoordinatorResponseHandler):
    """``AbstractCoordinator.HeartbeatResponseHandler`` — the Heartbeat table of §3.4."""

    __slots__ = ()

    def handle(self, heartbeat_response: Any, future: RequestFuture) -> None:
        c = self.coordinator
        error = Errors.for_code(heartbeat_response.error_code)
        if error is Errors.NONE:
            future.complete(None)
        elif error is Errors.COORDINATOR_NOT_AVAILABLE or error is Errors.NOT_COORDINATOR:
            c.mark_coordinator_unknown(False, "error response " + error.name)
            future.raise_(error)
        elif error is Errors.REBALANCE_IN_PROGRESS:
            # since we may be sending the request during rebalance, we should check
            # this case and ignore the REBALANCE_IN_PROGRESS error
            # synchronized (AbstractCoordinator.this)
            if c.state is MemberState.STABLE:
                c.request_rejoin("group is already rebalancing")
                future.raise_(error)
            else:
                future.complete(None)
        elif error in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID):
            if self.generation_unchanged():
                c.reset_state_on_response_error("Heartbeat", error, error is not Errors.ILLEGAL_GENERATION)
                future.raise_(error)
            else:
                # a stale heartbeat (older generation): ignore the error
                future.complete(None)
        elif error is Errors.GROUP_AUTHORIZATION_FAILED:
            future.raise_(group_authorization_exception(c.rebalance_config.group_id))
        else:
            future.raise_(KafkaException("Unexpected error in heartbeat response: " + error.message))


class LeaveGroupResponseHandler(CoordinatorResponseHandler):
    """``AbstractCoordinator.LeaveGroupResponseHandler``."""

    __slots__ = ()

    def handle(self, leave_response: Any, future: RequestFuture) -> None:
        members = leave_response.members
        if len(members) > 1:
            future.raise_(IllegalStateException(
                "The expected leave group response should only contain no more than one member "
                "info, however get %r" % (members,)))
            return
        error = leave_group_response_error(leave_response)
        if error is Errors.NONE:
            future.complete(None)
        else:
            future.raise_(error)


def leave_group_response_error(leave_response: Any) -> Errors:
    """``LeaveGroupResponse.error()``: the top-level error, else the first member error."""
    top = Errors.for_code(leave_response.error_code)
    if top is not Errors.NONE:
        return top
    for member in leave_response.members:
        err = Errors.for_code(member.error_code)
        if err is not Errors.NONE:
            return err
    return Errors.NONE


def group_authorization_exception(group_id: str) -> GroupAuthorizationException:
    """``GroupAuthorizationException.forGroupId``."""
    return GroupAuthorizationException("Not authorized to access group: " + group_id)


# --------------------------------------------------------------------------------------------
# AbstractCoordinator
# --------------------------------------------------------------------------------------------

class AbstractCoordinator:
    """``AbstractCoordinator``: group membership for a single group (the classic protocol).

    Subclasses provide the embedded protocol: :meth:`protocol_type`, :meth:`metadata`,
    :meth:`on_join_prepare`, :meth:`on_leader_elected`, :meth:`on_join_complete` and
    :meth:`on_leave_prepare`.
    """

    def __init__(self, rebalance_config: GroupRebalanceConfig, client: ConsumerNetworkClient,
                 time: Time, rng: Optional[Any] = None, heartbeat: Optional[Heartbeat] = None) -> None:
        self.rebalance_config = rebalance_config
        self.client = client
        self.time = time
        self.heartbeat = heartbeat if heartbeat is not None else Heartbeat(
            time, rebalance_config.session_timeout_ms, rebalance_config.heartbeat_interval_ms,
            rebalance_config.rebalance_timeout_ms, rebalance_config.retry_backoff_ms)
        flat = rebalance_config.retry_backoff_max_ms <= rebalance_config.retry_backoff_ms
        # CommonClientConfigs.RETRY_BACKOFF_EXP_BASE = 2, RETRY_BACKOFF_JITTER = 0.2
        self.retry_backoff = ExponentialBackoff(
            rebalance_config.retry_backoff_ms, 2,
            max(rebalance_config.retry_backoff_max_ms, rebalance_config.retry_backoff_ms),
            0.0 if flat else 0.2, rng)
        self.heartbeat_thread: Optional[HeartbeatThread] = None
        self.rejoin_needed = True
        self.rejoin_reason = ""
        self.needs_join_prepare = True
        self.state = MemberState.UNJOINED
        self.join_future: Optional[RequestFuture] = None
        self.coordinator: Optional[Node] = None
        self.generation: Generation = NO_GENERATION
        self.last_rebalance_start_ms = -1
        self.last_rebalance_end_ms = -1
        self.last_time_of_connection_ms = -1
        self.find_coordinator_future: Optional[RequestFuture] = None
        self.fatal_find_coordinator_exception: Optional[Exception] = None

    # ---- the embedded protocol (subclass hooks) -------------------------------------------

    def protocol_type(self) -> str:
        """Unique identifier for the class of supported protocols (e.g. "consumer")."""
        raise NotImplementedError

    def metadata(self) -> List[JoinGroupRequestProtocol]:
        """The protocols supported by this member, in preference order, with their metadata."""
        raise NotImplementedError

    def on_join_prepare(self, timer: Timer, generation_id: int, member_id: str) -> bool:
        """Invoked prior to each group join or rejoin; False means "not ready yet, call again"."""
        raise NotImplementedError

    def on_leader_elected(self, leader_id: str, protocol: str,
                          all_member_metadata: List[JoinGroupResponseMember],
                          skip_assignment: bool) -> Dict[str, Any]:
        """Perform the assignment as the leader: member id → assignment."""
        raise NotImplementedError

    def on_join_complete(self, generation: int, member_id: str, protocol: Optional[str],
                         member_assignment: Any) -> None:
        """Invoked when a group member has successfully joined a group."""
        raise NotImplementedError

    def on_leave_prepare(self) -> None:
        """Invoked prior to each leave group event (close / unsubscribe)."""

    # ---- coordinator discovery (§3.2) -----------------------------------------------------

    def ensure_coordinator_ready(self, timer: Timer, disable_wakeup: bool = False) -> bool:
        """Block until the coordinator for this group is known and ready (or the timer expires).

        Returns whether the coordinator is known at the end.
        """
        if not self.coordinator_unknown():
            return True
        attempts = 0
        while True:
            if self.fatal_find_coordinator_exception is not None:
                fatal_exception = self.fatal_find_coordinator_exception
                self.fatal_find_coordinator_exception = None
                raise fatal_exception
            future = self.lookup_coordinator()
            self.client.poll_future(future, timer, disable_wakeup)
            if not future.is_done():
                # ran out of time
                break
            fatal_exception = None
            if future.failed():
                if future.is_retriable():
                    timer.sleep(self.retry_backoff.backoff(attempts))
                    attempts += 1
                    self.client.await_metadata_update(timer)
                else:
                    fatal_exception = future.exception()
            elif self.coordinator is not None and self.client.is_unavailable(self.coordinator):
                # we found the coordinator, but the connection has failed, so mark
                # it dead and backoff before retrying discovery
                self.mark_coordinator_unknown(False, "coordinator unavailable")
                timer.sleep(self.retry_backoff.backoff(attempts))
                attempts += 1
            self.clear_find_coordinator_future()
            if fatal_exception is not None:
                raise fatal_exception
            if not (self.coordinator_unknown() and timer.not_expired()):
                break
        return not self.coordinator_unknown()

    def ensure_coordinator_ready_async(self) -> bool:
        """``ensureCoordinatorReadyAsync``: one non-blocking attempt, without wakeups."""
        return self.ensure_coordinator_ready(self.time.timer(0), True)

    def lookup_coordinator(self) -> RequestFuture:
        """The memoised FindCoordinator future; sends one to the least loaded node if none."""
        if self.find_coordinator_future is None:
            # find a node to ask about the coordinator
            node = self.client.least_loaded_node()
            if node is None:
                return RequestFuture.no_brokers_available()
            self.find_coordinator_future = self.send_find_coordinator_request(node)
        return self.find_coordinator_future

    def clear_find_coordinator_future(self) -> None:
        self.find_coordinator_future = None

    def send_find_coordinator_request(self, node: Node) -> RequestFuture:
        data = FindCoordinatorRequestData(key=self.rebalance_config.group_id,
                                          key_type=CoordinatorType.GROUP)
        return self.client.send(node, data).compose(FindCoordinatorResponseHandler(self))

    def coordinator_unknown(self) -> bool:
        """Whether the coordinator is unknown (checking its connection first)."""
        return self.check_and_get_coordinator() is None

    def check_and_get_coordinator(self) -> Optional[Node]:
        """The coordinator, or None; if its connection failed and is still within the reconnect
        backoff, mark it unknown (as disconnected) first."""
        if self.coordinator is not None and self.client.is_unavailable(self.coordinator):
            self.mark_coordinator_unknown(True, "coordinator unavailable")
            return None
        return self.coordinator

    def mark_coordinator_unknown(self, is_disconnected: bool = False, cause: str = "") -> None:
        """Forget the coordinator; unless already disconnected, disconnect from it asynchronously
        (its unsent requests fail with DisconnectException at the next poll)."""
        if self.coordinator is not None:
            old_coordinator = self.coordinator
            # Mark the coordinator dead before disconnecting requests since the callbacks for any
            # pending requests may attempt to do likewise. This also prevents new requests from
            # being sent to the coordinator while the disconnect is in progress.
            self.coordinator = None
            # Disconnect from the coordinator to ensure that there are no in-flight requests
            # remaining. Pending callbacks will be invoked with a DisconnectException on the
            # next call to poll.
            if not is_disconnected:
                self.client.disconnect_async(old_coordinator)
            self.last_time_of_connection_ms = self.time.milliseconds()

    # ---- group membership (§3.3) ----------------------------------------------------------

    def rejoin_needed_or_pending(self) -> bool:
        # if there's a pending joinFuture, we should try to complete handling it.
        return self.rejoin_needed or self.join_future is not None

    def poll_heartbeat(self, now: int) -> None:
        """Check the heartbeat thread's health, wake it if a heartbeat is due (a no-op here), and
        record the application's poll (resets the poll timer)."""
        thread = self.heartbeat_thread
        if thread is not None:
            if thread.has_failed():
                # set the heartbeat thread to null and raise an exception. If the user catches
                # it, the next call to ensureActiveGroup() will spawn a new heartbeat thread.
                cause = thread.failure_cause()
                self.heartbeat_thread = None
                raise cause
            # Awake the heartbeat thread if needed
            if self.heartbeat.should_heartbeat(now):
                thread.notify()
            self.heartbeat.poll(now)

    def time_to_next_heartbeat(self, now: int) -> int:
        # if we have not joined the group or we are preparing rebalance,
        # we don't need to send heartbeats
        if self.state.has_not_joined_group():
            return LONG_MAX
        thread = self.heartbeat_thread
        if thread is not None and thread.has_failed():
            # if an exception occurs in the heartbeat thread, raise it.
            raise thread.failure_cause()
        return self.heartbeat.time_to_next_heartbeat(now)

    def ensure_active_group(self, timer: Optional[Timer] = None) -> bool:
        """Ensure the group is active (the coordinator is known and this member is STABLE).

        Without a timer, loops with an infinite one until it succeeds (``ensureActiveGroup()``).
        """
        if timer is None:
            while not self.ensure_active_group(self.time.timer(LONG_MAX)):
                pass
            return True
        # always ensure that the coordinator is ready because we may have been disconnected
        # when sending heartbeats and does not necessarily require us to rejoin the group.
        if not self.ensure_coordinator_ready(timer):
            return False
        self.start_heartbeat_thread_if_needed()
        return self.join_group_if_needed(timer)

    def start_heartbeat_thread_if_needed(self) -> None:
        if self.heartbeat_thread is None:
            self.heartbeat_thread = HeartbeatThread(self)

    def close_heartbeat_thread(self) -> None:
        thread = self.heartbeat_thread
        if thread is None:
            return
        thread.close()
        self.heartbeat_thread = None

    def join_group_if_needed(self, timer: Timer) -> bool:
        """Join the group if needed; True when the member is STABLE (or no rejoin was needed),
        False if the timer expired first.  Exactly §3.3 steps 1-6."""
        while self.rejoin_needed_or_pending():
            if not self.ensure_coordinator_ready(timer):
                return False

            # call onJoinPrepare if needed. We set a flag to make sure that we do not call it a
            # second time if the client is woken up before a pending rebalance completes. This
            # must be called on each iteration of the loop because an event requiring a
            # rebalance (such as a metadata refresh which changes the matched subscription set)
            # can occur while another rebalance is still in progress.
            if self.needs_join_prepare:
                # need to set the flag before calling onJoinPrepare since the user callback may
                # throw exception, in which case upon retry we should not retry onJoinPrepare
                # either.
                self.needs_join_prepare = False
                # return false when onJoinPrepare is waiting for committing offset
                if not self.on_join_prepare(timer, self.generation.generation_id,
                                            self.generation.member_id):
                    self.needs_join_prepare = True
                    # should not initiateJoinGroup if needsJoinPrepare still is true
                    return False

            future = self.initiate_join_group()
            self.client.poll_future(future, timer)
            if not future.is_done():
                # we ran out of time
                return False

            if future.succeeded():
                # Generation data maybe concurrently cleared by the heartbeat thread: snapshot it
                # (under the monitor in Java).
                generation_snapshot = self.generation
                state_snapshot = self.state
                if not has_generation_reset(generation_snapshot) and state_snapshot is MemberState.STABLE:
                    self.on_join_complete(generation_snapshot.generation_id, generation_snapshot.member_id,
                                          generation_snapshot.protocol_name, future.value())
                    # We can only reset the join group future after the completion callback
                    # returns. This ensures that if the callback is woken up, we will retry it on
                    # the next joinGroupIfNeeded.
                    self.reset_join_group_future()
                    self.needs_join_prepare = True
                else:
                    reason = ("rebalance failed since the generation/state was modified by heartbeat "
                              "thread to %r/%r before the rebalance callback triggered"
                              % (generation_snapshot, state_snapshot))
                    self.reset_state_and_rejoin(reason, True)
                    self.reset_join_group_future()
            else:
                exception = future.exception()
                self.reset_join_group_future()
                if not isinstance(exception, MemberIdRequiredException):
                    # synchronized (AbstractCoordinator.this)
                    simple_name = type(exception).__name__
                    self.request_rejoin("rebalance failed due to " + simple_name,
                                        "rebalance failed due to '%s' (%s)" % (exception, simple_name))
                if isinstance(exception, (UnknownMemberIdException, IllegalGenerationException,
                                          RebalanceInProgressException, MemberIdRequiredException)):
                    continue
                if not future.is_retriable():
                    raise exception
                # We need to return upon expired timer, in case if the client.poll returns
                # immediately and the time has elapsed.
                if timer.is_expired():
                    return False
                timer.sleep(self.rebalance_config.retry_backoff_ms)
        return True

    def reset_join_group_future(self) -> None:
        self.join_future = None

    def initiate_join_group(self) -> RequestFuture:
        """The memoised join future: a JoinGroup is sent only if none is pending, so a wakeup
        never causes a second JoinGroup (nor a second onJoinPrepare)."""
        if self.join_future is None:
            self.state = MemberState.PREPARING_REBALANCE
            # a rebalance can be triggered consecutively if the previous one failed,
            # in this case we would not update the start time.
            if self.last_rebalance_start_ms == -1:
                self.last_rebalance_start_ms = self.time.milliseconds()
            self.join_future = self.send_join_group_request()
        return self.join_future

    def join_group_request_timeout_ms(self) -> int:
        return join_group_request_timeout_ms(self.client.default_request_timeout_ms(),
                                             self.rebalance_config.rebalance_timeout_ms)

    def send_join_group_request(self) -> RequestFuture:
        """Send a JoinGroup to the coordinator; its future completes with the assignment once
        the chained SyncGroup completes."""
        if self.coordinator_unknown():
            return RequestFuture.coordinator_not_available()
        config = self.rebalance_config
        data = JoinGroupRequestData(
            group_id=config.group_id,
            session_timeout_ms=config.session_timeout_ms,
            rebalance_timeout_ms=config.rebalance_timeout_ms,
            member_id=self.generation.member_id,
            group_instance_id=config.group_instance_id,
            protocol_type=self.protocol_type(),
            protocols=self.metadata(),
            reason=maybe_truncate_reason(self.rejoin_reason))
        # Note that we override the request timeout using the rebalance timeout since that is
        # the maximum time that it may block on the coordinator. We add an extra 5 seconds for
        # small delays.
        return self.client.send(self.coordinator, data, self.join_group_request_timeout_ms()) \
            .compose(JoinGroupResponseHandler(self, self.generation))

    def _on_join_follower(self) -> RequestFuture:
        # send follower's sync group with an empty assignment
        return self._send_sync_group_request(self._sync_group_request([]))

    def _on_leader_elected_and_sync(self, join_response: Any) -> RequestFuture:
        """``onLeaderElected(JoinGroupResponse)``: run the assignor, then SyncGroup with every
        member's assignment."""
        try:
            # perform the leader synchronization and send back the assignment for the group
            group_assignment = self.on_leader_elected(join_response.leader, join_response.protocol_name,
                                                      join_response.members, join_response.skip_assignment)
            assignments = [SyncGroupRequestAssignment(member_id, assignment)
                           for member_id, assignment in group_assignment.items()]
            return self._send_sync_group_request(self._sync_group_request(assignments))
        except Exception as e:  # Java: catch (RuntimeException e)
            return RequestFuture.failure(e)

    def _sync_group_request(self, assignments: List[SyncGroupRequestAssignment]) -> SyncGroupRequestData:
        return SyncGroupRequestData(
            group_id=self.rebalance_config.group_id,
            generation_id=self.generation.generation_id,
            member_id=self.generation.member_id,
            group_instance_id=self.rebalance_config.group_instance_id,
            protocol_type=self.protocol_type(),
            protocol_name=self.generation.protocol_name,
            assignments=assignments)

    def _send_sync_group_request(self, data: SyncGroupRequestData) -> RequestFuture:
        if self.coordinator_unknown():
            return RequestFuture.coordinator_not_available()
        return self.client.send(self.coordinator, data).compose(
            SyncGroupResponseHandler(self, self.generation))

    def is_protocol_type_inconsistent(self, protocol_type: Optional[str]) -> bool:
        return protocol_type is not None and protocol_type != self.protocol_type()

    # ---- generation / state ---------------------------------------------------------------

    def generation_if_stable(self) -> Optional[Generation]:
        """The current generation if STABLE, else None (``generationIfStable``)."""
        if self.state is not MemberState.STABLE:
            return None
        return self.generation

    def member_id(self) -> str:
        return self.generation.member_id

    def rebalance_in_progress(self) -> bool:
        return self.state is MemberState.PREPARING_REBALANCE or self.state is MemberState.COMPLETING_REBALANCE

    def is_dynamic_member(self) -> bool:
        return self.rebalance_config.group_instance_id is None

    def reset_state_and_generation(self, reason: str, should_reset_member_id: bool) -> None:
        self.state = MemberState.UNJOINED
        if should_reset_member_id:
            self.generation = NO_GENERATION
        else:
            # keep member id since it might be still valid, to avoid to wait for the old member
            # id leaving group until rebalance timeout in next rebalance
            self.generation = Generation(NO_GENERATION.generation_id, self.generation.member_id, None)

    def reset_state_and_rejoin(self, reason: str, should_reset_member_id: bool) -> None:
        self.reset_state_and_generation(reason, should_reset_member_id)
        self.request_rejoin(reason)
        self.needs_join_prepare = True

    def reset_state_on_response_error(self, api: str, error: Errors, should_reset_member_id: bool) -> None:
        reason = "encountered %s from %s response" % (error.name, api)
        self.reset_state_and_rejoin(reason, should_reset_member_id)

    def reset_generation_on_leave_group(self) -> None:
        self.reset_state_and_rejoin("consumer pro-actively leaving the group", True)

    def request_rejoin(self, short_reason: str, full_reason: Optional[str] = None) -> None:
        self.rejoin_reason = short_reason
        self.rejoin_needed = True

    # ---- heartbeats / leaving -------------------------------------------------------------

    def send_heartbeat_request(self) -> RequestFuture:
        data = HeartbeatRequestData(group_id=self.rebalance_config.group_id,
                                    generation_id=self.generation.generation_id,
                                    member_id=self.generation.member_id,
                                    group_instance_id=self.rebalance_config.group_instance_id)
        return self.client.send(self.coordinator, data).compose(
            HeartbeatResponseHandler(self, self.generation))

    def maybe_leave_group(self, leave_reason: str) -> Optional[RequestFuture]:
        """Leave the group (best effort, once, no retry) if this is a joined dynamic member with
        a member id and a known coordinator; always reset the generation and request a rejoin."""
        future = None
        # Starting from 2.3, only dynamic members will send LeaveGroupRequest to the broker,
        # consumer with valid group.instance.id is viewed as static member that never sends
        # LeaveGroup, and the membership expiration is only controlled by session timeout.
        if (self.is_dynamic_member() and not self.coordinator_unknown()
                and self.state is not MemberState.UNJOINED and self.generation.has_member_id()):
            # this is a minimal effort attempt to leave the group. we do not
            # attempt any resending if the request fails or times out.
            data = LeaveGroupRequestData(group_id=self.rebalance_config.group_id, members=[
                MemberIdentity(member_id=self.generation.member_id,
                               reason=maybe_truncate_reason(leave_reason))])
            future = self.client.send(self.coordinator, data).compose(
                LeaveGroupResponseHandler(self, self.generation))
            self.client.poll_no_wakeup()
        self.reset_generation_on_leave_group()
        return future

    def close(self, timer: Optional[Timer] = None) -> None:
        """Close the coordinator: stop the heartbeat thread, leave the group, and wait (up to the
        timer) for pending requests to the coordinator."""
        if timer is None:
            timer = self.time.timer(0)
        try:
            self.close_heartbeat_thread()
        finally:
            if self.rebalance_config.leave_group_on_close:
                self.on_leave_prepare()
                self.maybe_leave_group("the consumer is being closed")
            # At this point, there may be pending commits (async commits or sync commits that
            # were interrupted using wakeup) and the leave group request which have been queued,
            # but not yet sent to the broker. Wait up to close timeout for these pending requests
            # to be processed. If coordinator is not known, requests are aborted.
            coordinator = self.check_and_get_coordinator()
            if coordinator is not None:
                self.client.await_pending_requests(coordinator, timer)

    def __repr__(self) -> str:
        return "%s(state=%r, generation=%r, coordinator=%r, rejoin_needed=%s)" % (
            type(self).__name__, self.state, self.generation, self.coordinator, self.rejoin_needed)


# --------------------------------------------------------------------------------------------
# The heartbeat thread, one loop iteration at a time
# --------------------------------------------------------------------------------------------

class _HeartbeatListener(RequestFutureListener):
    """The listener the heartbeat thread puts on each Heartbeat future."""

    __slots__ = ("thread",)

    def __init__(self, thread: "HeartbeatThread") -> None:
        self.thread = thread

    def on_success(self, value: Any) -> None:
        # synchronized (AbstractCoordinator.this)
        self.thread.coordinator.heartbeat.receive_heartbeat()

    def on_failure(self, e: Exception) -> None:
        # synchronized (AbstractCoordinator.this)
        if isinstance(e, RebalanceInProgressException):
            # it is valid to continue heartbeating while the group is rebalancing. This ensures
            # that the coordinator keeps the member in the group for as long as the duration of
            # the rebalance timeout. If we stop sending heartbeats, however, then the session
            # timeout may expire before we can rejoin.
            self.thread.coordinator.heartbeat.receive_heartbeat()
        elif isinstance(e, FencedInstanceIdException):
            self.thread.failed = e
        else:
            self.thread.coordinator.heartbeat.fail_heartbeat()
            # wake up the thread if it's sleeping to reschedule the heartbeat (notify(): no-op)


class HeartbeatThread:
    """``AbstractCoordinator.HeartbeatThread`` without a thread.

    :meth:`run_once` is one iteration of the ``while (true)`` loop in ``HeartbeatThread.run``; it
    returns a short tag naming the branch taken (useful to drivers and tests).  The monitor waits
    (``wait()`` while disabled, ``wait(retry.backoff.ms)`` when no heartbeat is due) end the
    iteration: when the next one runs is up to the caller; the ``wait(retry.backoff.ms)`` after
    clearing a coordinator lookup is kept by the thread (an iteration before it ends, or before a
    ``notify()``, is ``waiting``).
    """

    __slots__ = ("coordinator", "enabled", "closed", "failed", "wait_until")

    def __init__(self, coordinator: AbstractCoordinator) -> None:
        self.coordinator = coordinator
        self.enabled = False
        self.closed = False
        self.failed: Optional[Exception] = None
        # in wait(retry.backoff.ms) after clearing the FindCoordinator future, until this time
        self.wait_until: Optional[int] = None

    def enable(self) -> None:
        """Enable heartbeating: all Heartbeat timers restart (then ``notify()``)."""
        self.enabled = True
        self.coordinator.heartbeat.reset_timeouts()
        self.notify()

    def notify(self) -> None:
        """``AbstractCoordinator.this.notify()``: a thread in ``wait(retry.backoff.ms)`` wakes."""
        self.wait_until = None

    def disable(self) -> None:
        self.enabled = False

    def close(self) -> None:
        self.closed = True

    def has_failed(self) -> bool:
        return self.failed is not None

    def failure_cause(self) -> Optional[Exception]:
        return self.failed

    def run_once(self) -> str:
        """One iteration of the heartbeat loop (see the module docstring).

        Tags: ``closed``, ``disabled`` (waiting to be enabled), ``waiting`` (in the backoff after
        ``clear-lookup``), ``disable`` (not joined or failed:
        disabled itself), ``lookup`` / ``clear-lookup`` (coordinator unknown), ``session-expired``,
        ``poll-expired``, ``not-due``, ``heartbeat`` (sent one), ``failed`` (an exception ended
        the thread; it surfaces from the next ``poll_heartbeat`` / ``time_to_next_heartbeat``).
        """
        c = self.coordinator
        try:
            # synchronized (AbstractCoordinator.this)
            if self.closed:
                return "closed"
            if not self.enabled:
                # AbstractCoordinator.this.wait()
                return "disabled"
            if self.wait_until is not None:
                if c.time.milliseconds() < self.wait_until:
                    return "waiting"  # still in wait(retry.backoff.ms) after clearing a lookup
                self.wait_until = None
            # we do not need to heartbeat we are not part of a group yet;
            # also if we already have fatal error, the client will be
            # crashed soon, hence we do not need to continue heartbeating either
            if c.state.has_not_joined_group() or self.has_failed():
                self.disable()
                return "disable"

            # Note: the member state is not re-checked after this poll, as in Kafka.
            c.client.poll_no_wakeup()
            now = c.time.milliseconds()

            if c.coordinator_unknown():
                if c.find_coordinator_future is not None:
                    # clear the future so that after the backoff, if the hb still sees
                    # coordinator unknown in the next iteration it will try to re-discover the
                    # coordinator in case the main thread cannot
                    c.clear_find_coordinator_future()
                    # backoff properly: wait(retry.backoff.ms), kept here so that no driver can run
                    # the next iteration (a new FindCoordinator) at the same instant
                    self.wait_until = now + c.rebalance_config.retry_backoff_ms
                    tag = "clear-lookup"
                else:
                    c.lookup_coordinator()
                    tag = "lookup"
                return tag
            if c.heartbeat.session_timeout_expired(now):
                # the session timeout has expired without seeing a successful heartbeat, so we
                # should probably make sure the coordinator is still healthy.
                c.mark_coordinator_unknown(False, "session timed out without receiving a heartbeat response")
                return "session-expired"
            if c.heartbeat.poll_timeout_expired(now):
                # the poll timeout has expired, which means that the foreground thread has stalled
                # in between calls to poll().
                c.maybe_leave_group("consumer poll timeout has expired.")
                return "poll-expired"
            if not c.heartbeat.should_heartbeat(now):
                # poll again after waiting for the retry backoff in case the heartbeat failed or
                # the coordinator disconnected: wait(retry.backoff.ms)
                return "not-due"
            c.heartbeat.sent_heartbeat(now)
            heartbeat_future = c.send_heartbeat_request()
            heartbeat_future.add_listener(_HeartbeatListener(self))
            return "heartbeat"
        except Exception as e:  # Java catches AuthenticationException, ..., Throwable
            self.failed = e
            # finally { closed = true }: the thread has exited
            self.closed = True
            return "failed"

    def __repr__(self) -> str:
        return "HeartbeatThread(enabled=%s, closed=%s, failed=%r)" % (self.enabled, self.closed, self.failed)
