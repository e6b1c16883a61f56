"""The Java consumer's side of KIP-848 (``group.protocol=consumer``): one member's state machine
and the heartbeats it sends, as Kafka 4.1's ``AbstractMembershipManager``,
``ConsumerMembershipManager``, ``AbstractHeartbeatRequestManager`` and
``ConsumerHeartbeatRequestManager.HeartbeatState`` run them.

Two threads act on a member, and the world steps them as separate events:

``poll``       the application thread's ``KafkaConsumer.poll``: it restarts the poll timer,
               rejoins a stale or newly subscribed member, and runs the rebalance listener's
               callbacks, so a reconciliation (revoke, then assign) completes here and the member
               moves to ACKNOWLEDGING; a fenced member's ``onPartitionsLost`` runs here too
               before it rejoins at epoch 0;
``heartbeat``  the background thread's ``AbstractHeartbeatRequestManager.poll``: at most one
               ConsumerGroupHeartbeat in flight; sent when the interval (or the backoff after a
               failure) has passed, or at once while JOINING or ACKNOWLEDGING (``shouldHeartbeatNow``)
               or LEAVING; a poll timer run out makes it leave (epoch -1) and go STALE.

``on_response`` and ``on_failure`` are the answers: a success moves the epoch and takes a new
target assignment; FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID fence the member; a lost or late
answer (request.timeout.ms) resets the heartbeat state so that the next request is a full one.

The member id is generated once per consumer (``AbstractMembershipManager.memberId``, KIP-1082)
and kept across rejoins; a restarted process is a new consumer with a new id. A consumer with a
``group.instance.id`` is a static member: every heartbeat carries its instance id, and it leaves
at epoch -2 (``ConsumerMembershipManager.leaveGroupEpoch``: the coordinator keeps its assignment
for the process that takes the instance id next); UNRELEASED_INSTANCE_ID and FENCED_INSTANCE_ID
are fatal (``ConsumerHeartbeatRequestManager.handleSpecificErrors``).
"""

from __future__ import annotations

from typing import NamedTuple

from model.kip848.coordinator import (FENCED_MEMBER_EPOCH, JOIN_EPOCH, LEAVE_EPOCH, NONE, STATIC_LEAVE_EPOCH,
                                      UNKNOWN_MEMBER_ID, Request)

UNSUBSCRIBED, JOINING, RECONCILING, ACKNOWLEDGING, STABLE = "UNSUBSCRIBED", "JOINING", "RECONCILING", "ACKNOWLEDGING", "STABLE"
FENCED, PREPARE_LEAVING, LEAVING, FATAL, STALE = "FENCED", "PREPARE_LEAVING", "LEAVING", "FATAL", "STALE"

# MemberState's static block: each state and the states it may be entered from
PREVIOUS_VALID_STATES = {
    STABLE: (JOINING, ACKNOWLEDGING, RECONCILING),
    RECONCILING: (STABLE, JOINING, ACKNOWLEDGING, RECONCILING),
    ACKNOWLEDGING: (RECONCILING,),
    FATAL: (JOINING, STABLE, RECONCILING, ACKNOWLEDGING, PREPARE_LEAVING, LEAVING, UNSUBSCRIBED),
    FENCED: (JOINING, STABLE, RECONCILING, ACKNOWLEDGING, PREPARE_LEAVING, LEAVING),
    JOINING: (FENCED, UNSUBSCRIBED, STALE),
    PREPARE_LEAVING: (JOINING, STABLE, RECONCILING, ACKNOWLEDGING, UNSUBSCRIBED),
    LEAVING: (PREPARE_LEAVING,),
    UNSUBSCRIBED: (PREPARE_LEAVING, LEAVING, FENCED),
    STALE: (LEAVING,),
}
NOT_IN_GROUP = (UNSUBSCRIBED, FENCED, FATAL, STALE)  # isNotInGroup; also shouldSkipHeartbeat's states
MAX_BACKOFF_MS = 1000  # retry.backoff.max.ms


class Client(NamedTuple):
    """One consumer's membership and heartbeat state."""

    member_id: str
    state: str = UNSUBSCRIBED
    epoch: int = 0
    owned: frozenset = frozenset()  # currentAssignment: what the application holds
    local_epoch: int = 0  # currentAssignment's LocalAssignment.localEpoch
    target: frozenset | None = None  # currentTargetAssignment (None: LocalAssignment.NONE)
    target_local_epoch: int = 0
    sent_owned: tuple | None = None  # SentFields.localAssignment: (local epoch, owned) last sent
    sent_full: bool = False  # SentFields' subscription and rebalance timeout sent since the last reset
    in_flight: int = 0  # the sequence number of the heartbeat in flight, 0 when none
    sent_at: int = 0
    seq: int = 0
    heartbeat_due_ms: int = 0  # HeartbeatRequestState: the interval's (or the backoff's) end
    failures: int = 0  # consecutive failed attempts (the exponential backoff's exponent)
    poll_deadline_ms: int = 0  # the poll timer (max.poll.interval.ms)
    poll_expired: bool = False  # isPollTimerExpired
    subscription_updated: bool = True  # onSubscriptionUpdated: subscribe() was called, not yet polled
    closed: bool = False  # close() left the group; the process does nothing more
    instance_id: str | None = None  # group.instance.id: a static member's
    fatal: str | None = None  # the error that made it FATAL (the application's poll throws it)


def new_client(member_id: str, now: int, config, instance_id: str | None = None) -> Client:
    return Client(member_id, poll_deadline_ms=now + config.max_poll_interval_ms, instance_id=instance_id)


def leave_epoch(client: Client) -> int:
    """ConsumerMembershipManager.leaveGroupEpoch (close's default operation): -2 for a static
    member, -1 for a dynamic one."""
    return LEAVE_EPOCH if client.instance_id is None else STATIC_LEAVE_EPOCH


def _to(client: Client, state: str, log: list) -> Client:
    """transitionTo (the table is checked by the catalogue, from the log)."""
    if state != client.state:
        log.append(("transition", client.member_id, client.state, state))
    return client._replace(state=state)


def poll(client: Client, now: int, config) -> tuple[Client, list]:
    """The application's poll: ``onConsumerPoll``, ``maybeRejoinStaleMember``, the poll timer
    reset, the callbacks of a pending reconciliation or of a fencing."""
    log: list = []
    if client.closed:
        return client, log
    client = client._replace(poll_deadline_ms=now + config.max_poll_interval_ms, poll_expired=False)
    if client.state == STALE:  # maybeRejoinStaleMember (its partitions were released going STALE)
        client = _join(client, log)
    elif client.state == UNSUBSCRIBED and client.subscription_updated:  # onConsumerPoll
        client = _join(client._replace(subscription_updated=False), log)
    elif client.state == FENCED:  # onPartitionsLost ran; clearAssignment; transitionToJoining
        client = _join(client if config.is_broken("lost_not_released") else _clear(client), log)
    elif client.state == RECONCILING:
        client = _reconcile(client, log)
    return client, log


def _join(client: Client, log: list) -> Client:
    """transitionToJoining: epoch 0, pending assignments cleared."""
    client = _to(client._replace(epoch=JOIN_EPOCH, target=None), JOINING, log)
    return client


def _clear(client: Client) -> Client:
    """clearAssignment."""
    return client._replace(owned=frozenset(), local_epoch=client.local_epoch + 1, target=None)


def _reconcile(client: Client, log: list) -> Client:
    """maybeReconcile → revokeAndAssign with the listener's callbacks (onPartitionsRevoked, then
    onPartitionsAssigned), run by this poll: the member then holds its target and acknowledges."""
    if client.target is None or client.target == client.owned:
        return client
    revoked, added = client.owned - client.target, client.target - client.owned
    log.append(("reconciled", client.member_id, client.epoch, tuple(sorted(revoked)), tuple(sorted(added))))
    client = client._replace(owned=client.target, local_epoch=client.target_local_epoch)
    return _to(client, ACKNOWLEDGING, log)


def heartbeat(client: Client, now: int, config) -> tuple[Client, Request | None, list]:
    """AbstractHeartbeatRequestManager.poll: the request to send now, or None."""
    log: list = []
    if client.closed and client.state != LEAVING:
        return client, None, log
    if client.state in NOT_IN_GROUP:  # shouldSkipHeartbeat
        return client, None, log
    if now >= client.poll_deadline_ms and client.state not in (PREPARE_LEAVING, LEAVING):
        # "Consumer poll timeout has expired": leave, and go STALE once the leave is sent
        client = _to(client._replace(poll_expired=True), PREPARE_LEAVING, log)
        client = _to(client._replace(epoch=leave_epoch(client)), LEAVING, log)
        client, request = _send(client, now, config)
        # "We can ignore the leave response": heartbeatRequestState.reset(); resetHeartbeatState()
        client = client._replace(in_flight=0, heartbeat_due_ms=now, failures=0, sent_owned=None, sent_full=False)
        return _generated(client, log, config), request, log
    heartbeat_now = client.state == LEAVING or (client.state in (ACKNOWLEDGING, JOINING) and not client.in_flight)
    can_send = not client.in_flight and now >= client.heartbeat_due_ms
    if not (can_send or heartbeat_now):
        return client, None, log
    client, request = _send(client, now, config)
    return _generated(client, log, config), request, log


def _send(client: Client, now: int, config) -> tuple[Client, Request]:
    """HeartbeatState.buildRequestData: all fields while JOINING; otherwise only what changed since
    the last request (the owned partitions when the local assignment changed)."""
    full = client.state == JOINING
    timeout, subscribed, owned = -1, None, None
    if full or not client.sent_full:
        timeout, subscribed = config.max_poll_interval_ms, ("t",)
    local = (client.local_epoch, client.owned)
    if full or client.sent_owned != local:
        owned = client.owned
    seq = client.seq + 1
    request = Request(client.member_id, client.epoch, timeout, subscribed, owned, client.instance_id)
    client = client._replace(seq=seq, in_flight=seq, sent_at=now, sent_full=True, sent_owned=local,
                             heartbeat_due_ms=now + config.heartbeat_interval_ms)
    return client, request


def _generated(client: Client, log: list, config) -> Client:
    """onHeartbeatRequestGenerated."""
    if client.state == ACKNOWLEDGING:
        return _to(client, STABLE if client.target == client.owned else RECONCILING, log)
    if client.state == LEAVING:
        if client.poll_expired:  # transitionToStale: onPartitionsLost, clearAssignment
            return _to(client if config.is_broken("stale_keeps_partitions") else _clear(client), STALE, log)
        return _to(client, UNSUBSCRIBED, log)
    return client


def on_response(client: Client, seq: int, response, now: int, config) -> tuple[Client, list]:
    """The answer to heartbeat *seq* arrived (one that is no longer in flight was dropped with
    its connection: ignored)."""
    log: list = []
    if seq != client.in_flight:
        return client, [("ignored", client.member_id, seq)]
    client = client._replace(in_flight=0)
    if response.error != NONE:
        return _on_error(client, response, now, config, log)
    # onResponse: the interval from the answer; onSuccessfulAttempt
    client = client._replace(heartbeat_due_ms=now + response.interval_ms, failures=0)
    if client.state == LEAVING or client.state in NOT_IN_GROUP or response.epoch < 0:
        return client, log  # onHeartbeatSuccess: leaving, not in the group, or a leave's answer
    client = client._replace(epoch=response.epoch)
    if response.assignment is not None and client.state in PREVIOUS_VALID_STATES[RECONCILING]:
        client = _assignment_received(client, response.assignment, log)
    return client, log


def _assignment_received(client: Client, assignment: frozenset, log: list) -> Client:
    """processAssignmentReceived (replaceTargetAssignmentWithNewAssignment bumps the local epoch
    when the target changed)."""
    if client.target != assignment:
        client = client._replace(target=assignment, target_local_epoch=client.local_epoch + 1)
    if client.target != client.owned:
        return _to(client, RECONCILING, log)
    if client.state in (RECONCILING, JOINING):
        return _to(client, STABLE, log)
    return client


def _on_error(client: Client, response, now: int, config, log: list) -> tuple[Client, list]:
    """onErrorResponse: the heartbeat state reset, a failed attempt; fencing errors fence."""
    client = client._replace(sent_owned=None, sent_full=False)
    if response.error in (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID):
        # "Skip backoff so that a next HB to rejoin is sent as soon as the fenced member releases"
        client = client._replace(heartbeat_due_ms=now, failures=0)
        if config.is_broken("fenced_rejoins_directly") and client.state not in (PREPARE_LEAVING, LEAVING, UNSUBSCRIBED):
            return _to(_clear(client)._replace(epoch=JOIN_EPOCH, target=None), JOINING, log), log
        return _fenced(client, log), log
    client = _failed_attempt(client, now, config)
    return _fatal(client, response.error, log), log  # handleFatalFailure (the instance id's errors, the unexpected)


def _fatal(client: Client, error: str, log: list) -> Client:
    """transitionToFatal: a member in the group loses its partitions (onPartitionsLost,
    clearAssignment); one leaving or out of the group has none."""
    before = client.state
    client = _to(client._replace(fatal=error), FATAL, log)
    if before in (UNSUBSCRIBED, LEAVING, PREPARE_LEAVING):
        return client
    return _clear(client)


def _fenced(client: Client, log: list) -> Client:
    """transitionToFenced."""
    if client.state == PREPARE_LEAVING:
        client = _to(client._replace(epoch=leave_epoch(client)), LEAVING, log)
        return _to(client, UNSUBSCRIBED, log)
    if client.state == LEAVING:
        return _to(client, UNSUBSCRIBED, log)
    if client.state == UNSUBSCRIBED:
        return client
    return _to(client._replace(epoch=JOIN_EPOCH), FENCED, log)  # onPartitionsLost runs at the next poll


def on_failure(client: Client, now: int, config) -> tuple[Client, list]:
    """onFailure: the heartbeat in flight timed out (request.timeout.ms; retriable): the state
    reset so the next request is a full one, the backoff applied."""
    log: list = []
    client = _failed_attempt(client._replace(in_flight=0, sent_owned=None, sent_full=False), now, config)
    return client, log


def _failed_attempt(client: Client, now: int, config) -> Client:
    """HeartbeatRequestState.onFailedAttempt: the exponential backoff (retry.backoff.ms doubling to
    retry.backoff.max.ms; Kafka's jitter left out)."""
    backoff = min(MAX_BACKOFF_MS, config.retry_backoff_ms * 2 ** client.failures)
    return client._replace(heartbeat_due_ms=now + backoff, failures=client.failures + 1)


def can_commit(client: Client) -> bool:
    """Whether the application has offsets to commit as a member: it holds partitions and is in
    the group (CommitRequestManager sends the member's id and its latest epoch)."""
    return bool(client.owned) and not client.closed and client.state in (STABLE, RECONCILING, ACKNOWLEDGING) \
        and client.epoch > 0


def commit_request(client: Client):
    """commitSync of what it holds: OffsetCommit v9 with its member id and current epoch."""
    from model.kip848.coordinator import Commit

    return Commit(client.member_id, client.epoch, client.owned, client.instance_id)


def close(client: Client, log: list | None = None) -> tuple[Client, list]:
    """KafkaConsumer.close → leaveGroup(runCallbacks): onPartitionsRevoked, clearAssignment, and
    the leave heartbeat (epoch -1, or -2 for a static member) sent next by the background thread."""
    log = [] if log is None else log
    if client.closed:
        return client, log
    if client.state in NOT_IN_GROUP:
        if client.state == FENCED:
            client = _to(_clear(client), UNSUBSCRIBED, log)
        return client._replace(closed=True), log
    client = _to(client, PREPARE_LEAVING, log)
    client = _clear(client)._replace(epoch=leave_epoch(client))
    return _to(client, LEAVING, log)._replace(closed=True), log
