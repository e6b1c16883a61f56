"""``ConsumerHeartbeatRequestManager``: when a KIP-848 consumer sends its ConsumerGroupHeartbeat,
what the request carries, and what each answer does — Kafka 4.1's
``AbstractHeartbeatRequestManager``, ``ConsumerHeartbeatRequestManager`` (its ``HeartbeatState``
and ``SentFields``), ``HeartbeatRequestState`` and ``RequestState`` (``clients/consumer/internals``).

:meth:`ConsumerHeartbeatRequestManager.poll` is one iteration of the background thread: it returns
the request to send now (``ConsumerGroupHeartbeatRequestData``) or None. The caller sends it and
later calls :meth:`on_response` with the answer or :meth:`on_failure` with the exception (a request
that ran out its request.timeout.ms: a retriable :class:`impl.errors.TimeoutException`); a leave
sent because the poll timer ran out has no continuation (``logResponse``): its answer is ignored,
and :meth:`poll` says so by returning ``ignore_response``.

The retry backoff has no jitter here (``RETRY_BACKOFF_JITTER`` 0.2 in Kafka; Kafka 4.1.2 passes
max.poll.interval.ms as the heartbeat's jitter, KAFKA-19813): a deterministic backoff is what a
replayable run needs.
"""

from __future__ import annotations

from typing import Optional

from impl.errors import RetriableException
from impl.membership.member_state import MemberState
from impl.membership.membership_manager import ConsumerMembershipManager
from impl.protocol import ConsumerGroupHeartbeatRequestData, ConsumerGroupHeartbeatTopicPartitions
from impl.time import ExponentialBackoff, Time, Timer

# Errors (the codes the handler tells apart)
NONE, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS = 0, 16, 15, 14
FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, TOPIC_AUTHORIZATION_FAILED = 110, 25, 29
UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID = 111, 82


class RequestState:
    """``RequestState``: one request kind's in-flight flag and retry backoff."""

    def __init__(self, retry_backoff_ms: int, retry_backoff_max_ms: int):
        self.exponential_backoff = ExponentialBackoff(retry_backoff_ms, 2, retry_backoff_max_ms, 0.0)
        self.last_sent_ms = -1
        self.last_received_ms = -1
        self.num_attempts = 0
        self.backoff_ms = 0
        self.request_in_flight = False

    def reset(self) -> None:
        self.request_in_flight = False
        self.last_sent_ms = self.last_received_ms = -1
        self.num_attempts = 0
        self.backoff_ms = self.exponential_backoff.backoff(0)

    def can_send_request(self, current_time_ms: int) -> bool:
        return not self.request_in_flight and self.remaining_backoff_ms(current_time_ms) <= 0

    def on_send_attempt(self, current_time_ms: int) -> None:
        self.request_in_flight = True
        self.last_sent_ms = current_time_ms

    def on_successful_attempt(self, current_time_ms: int) -> None:
        self.request_in_flight = False
        self.last_received_ms = current_time_ms
        self.backoff_ms = self.exponential_backoff.backoff(0)
        self.num_attempts = 0

    def on_failed_attempt(self, current_time_ms: int) -> None:
        self.request_in_flight = False
        self.last_received_ms = current_time_ms
        self.backoff_ms = self.exponential_backoff.backoff(self.num_attempts)
        self.num_attempts += 1

    def remaining_backoff_ms(self, current_time_ms: int) -> int:
        return max(0, self.backoff_ms - (current_time_ms - self.last_received_ms))


class HeartbeatRequestState(RequestState):
    """``HeartbeatRequestState``: the backoff plus the heartbeat interval's timer, which starts at
    0 (a heartbeat at once) and takes the interval of the coordinator's first answer."""

    def __init__(self, time: Time, heartbeat_interval_ms: int, retry_backoff_ms: int, retry_backoff_max_ms: int):
        super().__init__(retry_backoff_ms, retry_backoff_max_ms)
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.heartbeat_timer = Timer(time, heartbeat_interval_ms)

    def reset_timer(self) -> None:
        self.heartbeat_timer.reset(self.heartbeat_interval_ms)

    def on_failed_attempt(self, current_time_ms: int) -> None:
        self.heartbeat_timer.reset(0)
        super().on_failed_attempt(current_time_ms)

    def can_send_request(self, current_time_ms: int) -> bool:
        self.heartbeat_timer.update(current_time_ms)
        return self.heartbeat_timer.is_expired() and super().can_send_request(current_time_ms)

    def update_heartbeat_interval_ms(self, heartbeat_interval_ms: int) -> None:
        if self.heartbeat_interval_ms == heartbeat_interval_ms:
            return
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.heartbeat_timer.update_and_reset(heartbeat_interval_ms)


class SentFields:
    """``HeartbeatState.SentFields``: what the last requests carried, so the next carries only changes."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.rebalance_timeout_ms = -1
        self.subscribed_topic_names = None
        self.server_assignor = None
        self.local_assignment = None


class HeartbeatState:
    """``ConsumerHeartbeatRequestManager.HeartbeatState``: builds each request."""

    def __init__(self, membership_manager: ConsumerMembershipManager, rebalance_timeout_ms: int):
        self.membership_manager = membership_manager
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.sent_fields = SentFields()

    def reset(self) -> None:
        self.sent_fields.reset()

    def build_request_data(self) -> ConsumerGroupHeartbeatRequestData:
        mm, sent = self.membership_manager, self.sent_fields
        data = ConsumerGroupHeartbeatRequestData(group_id=mm.group_id, member_id=mm.member_id,
                                                 member_epoch=mm.member_epoch, instance_id=mm.group_instance_id)
        send_all_fields = mm.state == MemberState.JOINING
        if send_all_fields or sent.rebalance_timeout_ms != self.rebalance_timeout_ms:
            data.rebalance_timeout_ms = sent.rebalance_timeout_ms = self.rebalance_timeout_ms
        names = sorted(mm.subscription)
        if send_all_fields or names != sent.subscribed_topic_names:
            data.subscribed_topic_names = sent.subscribed_topic_names = names
        # no SubscriptionPattern: a regex is not subscribed, so SubscribedTopicRegex stays null
        if mm.server_assignor is not None and (send_all_fields or mm.server_assignor != sent.server_assignor):
            data.server_assignor = sent.server_assignor = mm.server_assignor
        local = mm.current_assignment
        if send_all_fields or local != sent.local_assignment:
            data.topic_partitions = [ConsumerGroupHeartbeatTopicPartitions(topic_id, sorted(parts))
                                     for topic_id, parts in sorted(local.partitions.items())]
            sent.local_assignment = local
        return data


class ConsumerHeartbeatRequestManager:
    """The heartbeats of one consumer (*max_poll_interval_ms* is its poll timer and the rebalance
    timeout it sends)."""

    def __init__(self, time: Time, membership_manager: ConsumerMembershipManager, max_poll_interval_ms: int,
                 retry_backoff_ms: int = 100, retry_backoff_max_ms: int = 1000):
        self.time = time
        self.membership_manager = membership_manager
        self.max_poll_interval_ms = max_poll_interval_ms
        self.heartbeat_request_state = HeartbeatRequestState(time, 0, retry_backoff_ms, retry_backoff_max_ms)
        self.heartbeat_state = HeartbeatState(membership_manager, max_poll_interval_ms)
        self.poll_timer = Timer(time, max_poll_interval_ms)
        self.fatal_error: Optional[str] = None  # the error an ErrorEvent carries to the application

    def poll(self, current_time_ms: int,
             coordinator_known: bool = True) -> tuple[Optional[ConsumerGroupHeartbeatRequestData], bool]:
        """``AbstractHeartbeatRequestManager.poll``: (the request to send now or None, whether its
        answer is ignored). Nothing while the coordinator is not known (a leave then is skipped)."""
        mm = self.membership_manager
        # Kafka's background thread runs this every few milliseconds, each run bringing the
        # heartbeat timer's cached time up to date (canSendRequest: update); one call here stands
        # for all the runs since the last one, so the timer is brought up to date first (else a
        # leave's resetTimer would restart the interval from a time long past)
        self.heartbeat_request_state.heartbeat_timer.update(current_time_ms)
        if not coordinator_known or mm.should_skip_heartbeat():
            mm.on_heartbeat_request_skipped()
            return None, False
        self.poll_timer.update(current_time_ms)
        if self.poll_timer.is_expired() and not mm.is_leaving_group():
            # "Consumer poll timeout has expired": leave; the leave's answer is not waited for
            mm.transition_to_sending_leave_group(True)
            request = self._make_heartbeat_request(current_time_ms)
            self.heartbeat_request_state.reset()
            self.reset_heartbeat_state()
            return request, True
        heartbeat_now = mm.state == MemberState.LEAVING or (
            mm.should_heartbeat_now() and not self.heartbeat_request_state.request_in_flight)
        if not self.heartbeat_request_state.can_send_request(current_time_ms) and not heartbeat_now:
            return None, False
        return self._make_heartbeat_request(current_time_ms), False

    def reset_poll_timer(self, poll_ms: int) -> None:
        """``resetPollTimer`` (the application's poll): a member gone stale rejoins."""
        self.poll_timer.update(poll_ms)
        if self.poll_timer.is_expired():
            self.membership_manager.maybe_rejoin_stale_member()
        self.poll_timer.reset(self.max_poll_interval_ms)

    def reset_heartbeat_state(self) -> None:
        self.heartbeat_state.reset()

    def _make_heartbeat_request(self, current_time_ms: int) -> ConsumerGroupHeartbeatRequestData:
        request = self.heartbeat_state.build_request_data()
        self.heartbeat_request_state.on_send_attempt(current_time_ms)
        self.membership_manager.on_heartbeat_request_generated()
        self.heartbeat_request_state.reset_timer()
        return request

    def on_failure(self, exception: Exception, response_time_ms: int) -> None:
        """``onFailure``: no answer (a timeout or a lost connection: retriable)."""
        self.heartbeat_request_state.on_failed_attempt(response_time_ms)
        self.reset_heartbeat_state()
        retriable = isinstance(exception, RetriableException)
        if not retriable:
            self._handle_fatal_failure(f"{type(exception).__name__}: {exception}")
        self.membership_manager.on_heartbeat_failure(retriable)

    def on_response(self, response, current_time_ms: int) -> None:
        """``onResponse`` (*response*: ConsumerGroupHeartbeatResponseData)."""
        if response.error_code == NONE:
            self.heartbeat_request_state.update_heartbeat_interval_ms(response.heartbeat_interval_ms)
            self.heartbeat_request_state.on_successful_attempt(current_time_ms)
            self.membership_manager.on_heartbeat_success(response)
            return
        self._on_error_response(response, current_time_ms)

    def _on_error_response(self, response, current_time_ms: int) -> None:
        error = response.error_code
        self.reset_heartbeat_state()
        self.heartbeat_request_state.on_failed_attempt(current_time_ms)
        if error in (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE):
            self.heartbeat_request_state.reset()  # and the coordinator is looked up again
        elif error == COORDINATOR_LOAD_IN_PROGRESS:
            pass
        elif error == TOPIC_AUTHORIZATION_FAILED:
            self.fatal_error = f"error {error}"  # an ErrorEvent; the member stays
        elif error in (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID):
            self.membership_manager.transition_to_fenced()
            self.heartbeat_request_state.reset()
        else:  # the instance id's errors (handleSpecificErrors), INVALID_REQUEST, and the unexpected
            self._handle_fatal_failure(f"error {error}: {response.error_message}")
        self.membership_manager.on_heartbeat_failure(False)

    def _handle_fatal_failure(self, error: str) -> None:
        self.fatal_error = error
        self.membership_manager.transition_to_fatal()
