"""The membership half of Kafka 4.1's ``AsyncKafkaConsumer`` (``group.protocol=consumer``): what
the application thread's ``poll`` and ``close`` do to the membership, and one iteration of the
background thread (``ConsumerNetworkThread.runOnce``: the membership manager's ``poll``, then the
heartbeat request manager's). Fetching and offsets are not here; the caller carries the requests
(:meth:`AsyncConsumerMembership.background_poll` returns the one to send) and hands back answers.
"""

from __future__ import annotations

from typing import Callable, Optional

from impl.errors import IllegalStateException
from impl.membership.heartbeat_request_manager import ConsumerHeartbeatRequestManager
from impl.membership.membership_manager import ConsumerMembershipManager
from impl.time import Time


class AsyncConsumerMembership:
    """One consumer process's membership: *member_id* generated at start (KIP-1082)."""

    def __init__(self, time: Time, group_id: str, member_id: str, topics, topic_name: Callable[[str], Optional[str]],
                 max_poll_interval_ms: int, retry_backoff_ms: int = 100, retry_backoff_max_ms: int = 1000,
                 group_instance_id: Optional[str] = None, listener=None, server_assignor: Optional[str] = None):
        self.time = time
        self.membership_manager = ConsumerMembershipManager(group_id, member_id, group_instance_id, topics, topic_name,
                                                            listener, server_assignor)
        self.heartbeat_request_manager = ConsumerHeartbeatRequestManager(time, self.membership_manager,
                                                                         max_poll_interval_ms, retry_backoff_ms,
                                                                         retry_backoff_max_ms)
        self.closed = False
        self.swallowed: list = []  # the exceptions Kafka's background thread would swallow

    def poll(self) -> None:
        """The application's ``poll`` (one long enough for what it waits on): the PollEvent
        (``onConsumerPoll``, ``resetPollTimer``), then the background thread's reconciliation
        steps and the rebalance callbacks they queue, until none is left."""
        if self.closed:
            return
        now = self.time.milliseconds()
        mm = self.membership_manager
        mm.on_consumer_poll()
        self.heartbeat_request_manager.reset_poll_timer(now)
        # the callbacks queued for this thread run, the background thread going on between them
        # (poll's loop): a reconciliation completes and the next can start, until none is queued
        mm.poll(now)
        while mm.background_events:
            mm.run_callbacks()
            mm.poll(now)

    def background_poll(self, coordinator_known: bool = True):
        """One iteration of the background thread: (the heartbeat to send now or None, whether
        its answer is ignored)."""
        now = self.time.milliseconds()
        if not self.closed:
            self.membership_manager.poll(now)
        return self.heartbeat_request_manager.poll(now, coordinator_known)

    def on_response(self, response) -> None:
        """The heartbeat's continuation (``makeHeartbeatRequest``'s ``whenComplete``) with its answer."""
        self._continuation(self.heartbeat_request_manager.on_response, response, self.time.milliseconds())

    def on_failure(self, exception: Exception) -> None:
        self._continuation(self.heartbeat_request_manager.on_failure, exception, self.time.milliseconds())

    def _continuation(self, handler, *args) -> None:
        """An IllegalStateException out of a continuation (a transition MemberState refuses: a
        STALE member fenced by the answer to a heartbeat sent before it left) completes the
        dependent future that nobody reads (NetworkClientDelegate.UnsentRequest.whenComplete): the
        rest of the handler does not run; kept in :attr:`swallowed`."""
        try:
            handler(*args)
        except IllegalStateException as e:
            self.swallowed.append(str(e))

    def close(self) -> None:
        """``close``: the application thread releases what it holds (``runRebalanceCallbacksOnClose``:
        onPartitionsRevoked, or onPartitionsLost for a member without an epoch), then
        ``leaveGroupOnClose``; the background thread sends the leave next."""
        if self.closed:
            return
        mm = self.membership_manager
        if mm.assigned_partitions and mm.listener is not None:
            method = "on_partitions_revoked" if mm.member_epoch > 0 else "on_partitions_lost"
            getattr(mm.listener, method)(sorted(mm.assigned_partitions))
        mm.leave_group_on_close()
        self.closed = True
