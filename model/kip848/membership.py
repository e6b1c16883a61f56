"""The Java consumer's side of KIP-848 (``group.protocol=consumer``): one member's state machine
and the heartbeats it sends, as Kafka 4.1's ``AbstractMembershipManager``,
``ConsumerMembershipManager``, ``AbstractHeartbeatRequestManager`` and
``ConsumerHeartbeatRequestManager.HeartbeatState`` run them.

Two threads act on a member, and the world steps them as separate events:

``poll``       the application thread's ``KafkaConsumer.poll``: it restarts the poll timer,
               rejoins a stale or newly subscribed member, and runs the rebalance listener's
               callbacks queued for it — a reconciliation's (revoke, then assign: the member then
               holds the target the reconciliation started from and moves to ACKNOWLEDGING) and
               an onPartitionsLost (a fenced member then rejoins at epoch 0);
``heartbeat``  one iteration of the background thread: ``maybeReconcile`` (a reconciliation
               starts here, snapshotting the target), then ``AbstractHeartbeatRequestManager.poll``:
               a ConsumerGroupHeartbeat sent when the interval and the backoff have passed and
               none is in flight, or at once while JOINING or ACKNOWLEDGING (``shouldHeartbeatNow``)
               or LEAVING; a poll timer run out makes it leave (epoch -1, its answer ignored) and
               go STALE.

``on_response`` and ``on_failure`` are the answers: a success moves the epoch and takes a new
target assignment; FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID fence the member. Every heartbeat's
answer is handled when it comes, even one sent before a poll-timer leave reset the request state;
a heartbeat that runs out request.timeout.ms drops the connection, failing every heartbeat on it,
and the next request is a full one.

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
    # currentAssignment (LocalAssignment): the partitions the application holds and their local
    # epoch, -1 for LocalAssignment.NONE (cleared, or nothing yet; equality compares both)
    owned: frozenset = frozenset()
    local_epoch: int = -1
    target: frozenset | None = None  # currentTargetAssignment (None: LocalAssignment.NONE)
    target_local_epoch: int = -1
    sent_owned: tuple | None = None  # SentFields.localAssignment: (local epoch, owned) last sent
    sent_full: bool = False  # SentFields.rebalanceTimeoutMs sent since the last reset
    sent_names: tuple | None = None  # SentFields.subscribedTopicNames
    in_flight: int = 0  # HeartbeatRequestState.requestInFlight: the heartbeat's sequence number, 0 when none
    # the heartbeats on the connection, oldest first: (seq, sent at, whether its answer is ignored —
    # a leave sent because the poll timer ran out). Each answer is handled when it arrives, even one
    # to a heartbeat sent before a reset of the request state; one request running out its
    # request.timeout.ms drops the connection and fails them all (NetworkClient)
    awaiting: tuple = ()
    seq: int = 0
    heartbeat_due_ms: int = 0  # HeartbeatRequestState's heartbeat timer: the interval's end
    interval_ms: int = 0  # HeartbeatRequestState.heartbeatIntervalMs: 0 until the first answer
    backoff_until_ms: int = 0  # RequestState: lastReceivedMs + backoffMs
    failures: int = 0  # consecutive failed attempts (the exponential backoff's exponent)
    poll_deadline_ms: int = 0  # the poll timer (max.poll.interval.ms)
    poll_expired: bool = False  # isPollTimerExpired
    subscription_updated: bool = True  # onSubscriptionUpdated: subscribe() was called, not yet polled
    closed: bool = False  # close() left the group; the process does nothing more
    instance_id: str | None = None  # group.instance.id: a static member's
    # a reconciliation the background thread started (maybeReconcile): (local epoch, partitions it
    # moves to once the application's poll has run its callbacks, whether the member rejoined since
    # — it is then abandoned); None when none is in progress
    reconciling: tuple | None = None
    # an onPartitionsLost the application's next poll runs (a FENCED, STALE or FATAL member that
    # held partitions): the assignment is cleared when it has run
    releasing: bool = False
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


def reconciled(client: Client) -> bool:
    """targetAssignmentReconciled: the current assignment equals the target, local epochs included
    (so a first assignment, even an empty one, is reconciled — its callbacks run — before it is held)."""
    target = (-1, frozenset()) if client.target is None else (client.target_local_epoch, client.target)
    return (client.local_epoch, client.owned) == target


def assigned_partitions(client: Client) -> frozenset:
    """SubscriptionState.assignedPartitions: what the current assignment holds, or — once a
    reconciliation with nothing to revoke has started (assignPartitions:
    updateSubscriptionAwaitingCallback) — the partitions it moves to, awaiting onPartitionsAssigned.
    What an onPartitionsLost is given (so whether it is needed)."""
    if client.reconciling is not None and not client.reconciling[2] and not client.owned - client.reconciling[1]:
        return client.reconciling[1]
    return client.owned


def poll(client: Client, now: int, config) -> tuple[Client, list]:
    """The application's poll: the PollEvent (``onConsumerPoll``, ``resetPollTimer`` — which
    rejoins a stale member), the background thread's ``maybeReconcile``, and the rebalance
    callbacks queued for this thread: a reconciliation's (the member then holds what it started
    towards, and acknowledges) and an onPartitionsLost (the assignment cleared; a fenced member
    rejoins)."""
    log: list = []
    if client.closed:
        return client, log
    if client.subscription_updated:  # onConsumerPoll
        client = client._replace(subscription_updated=False)
        if client.state == UNSUBSCRIBED:
            client = _join(client, log)
    expired = now >= client.poll_deadline_ms
    client = client._replace(poll_deadline_ms=now + config.max_poll_interval_ms)
    if expired:  # resetPollTimer → maybeRejoinStaleMember (it joins once the release has run)
        client = client._replace(poll_expired=False)
    # the callbacks queued for this thread run, and the background thread goes on between them
    # (KafkaConsumer.poll's loop): a reconciliation completes, and the next one can start
    client = _start_reconcile(client, log)
    while client.reconciling is not None:
        local_epoch, target, rejoined = client.reconciling
        if client.state == RECONCILING and not rejoined:  # revokeAndAssign's completion
            revoked, added = client.owned - target, target - client.owned
            log.append(("reconciled", client.member_id, client.epoch, tuple(sorted(revoked)), tuple(sorted(added)),
                        local_epoch))
            client = _to(client._replace(owned=target, local_epoch=local_epoch), ACKNOWLEDGING, log)
        client = _start_reconcile(client._replace(reconciling=None), log)  # else maybeAbortReconciliation
    if client.releasing:  # onPartitionsLost ran: clearAssignment, and what waited on it
        client = _released(client._replace(releasing=False), log, config)
    if expired and client.state == STALE:
        client = _join(client, log)
    return client, log


def _released(client: Client, log: list, config) -> Client:
    """The continuation of an onPartitionsLost: the assignment cleared; a fenced member rejoins."""
    if client.state == FENCED:
        return _join(client if config.is_broken("lost_not_released") else _clear(client), log)
    if client.state == STALE and config.is_broken("stale_keeps_partitions"):
        return client
    return _clear(client)


def _join(client: Client, log: list) -> Client:
    """transitionToJoining: epoch 0, the target cleared (clearPendingAssignmentsAndLocalNamesCache),
    a reconciliation in progress marked to be abandoned when its callbacks have run
    (rejoinedWhileReconciliationInProgress; no other starts before)."""
    if client.state == FATAL:
        return client
    if client.reconciling is not None:
        client = client._replace(reconciling=client.reconciling[:2] + (True,))
        log.append(("reconciliation_abandoned", client.member_id, client.reconciling[0]))
    return _to(client._replace(epoch=JOIN_EPOCH, target=None, target_local_epoch=-1), JOINING, log)


def _clear(client: Client) -> Client:
    """clearAssignment: the current assignment and the target become LocalAssignment.NONE."""
    return client._replace(owned=frozenset(), local_epoch=-1, target=None, target_local_epoch=-1)


def _start_reconcile(client: Client, log: list) -> Client:
    """maybeReconcile (the background thread, each iteration): a member RECONCILING towards a
    target it does not hold, with no reconciliation in progress, starts one — its callbacks run at
    the application's next poll; when it already holds the target's partitions (under an older
    local epoch) it takes the target's local epoch and acknowledges at once, without callbacks."""
    if client.state != RECONCILING or reconciled(client) or client.reconciling is not None:
        return client
    if client.local_epoch != -1 and client.target == client.owned:  # KAFKA-16185
        log.append(("same_partitions_acknowledged", client.member_id, client.target_local_epoch))
        return _to(client._replace(local_epoch=client.target_local_epoch), ACKNOWLEDGING, log)
    return client._replace(reconciling=(client.target_local_epoch, client.target, False))


def heartbeat(client: Client, now: int, config) -> tuple[Client, Request | None, list]:
    """One iteration of the background thread: ``maybeReconcile``, then
    AbstractHeartbeatRequestManager.poll — the request to send now, or None."""
    log: list = []
    if client.closed and client.state != LEAVING:  # the background thread stops once the leave is sent
        return client, None, log
    client = _start_reconcile(client, log)
    if client.state in NOT_IN_GROUP:  # shouldSkipHeartbeat
        return client, None, log
    if now >= client.poll_deadline_ms and client.state not in (PREPARE_LEAVING, LEAVING):
        # "Consumer poll timeout has expired": leave (transitionToSendingLeaveGroup: the current
        # assignment becomes NONE), and go STALE once the leave is sent
        held = bool(assigned_partitions(client))
        client = _to(client._replace(poll_expired=True), PREPARE_LEAVING, log)
        client = client._replace(epoch=leave_epoch(client))
        if not config.is_broken("stale_keeps_partitions"):
            client = client._replace(owned=frozenset(), local_epoch=-1)
        client = _to(client, LEAVING, log)
        client, request = _send(client, now, config, ignored=True)
        # "We can ignore the leave response": heartbeatRequestState.reset(); resetHeartbeatState()
        client = _reset_request_state(client, config)._replace(sent_owned=None, sent_full=False, sent_names=None)
        return _generated(client, log, config, held), request, log
    heartbeat_now = client.state == LEAVING or (client.state in (ACKNOWLEDGING, JOINING) and not client.in_flight)
    can_send = not client.in_flight and now >= client.heartbeat_due_ms and now >= client.backoff_until_ms
    if not (can_send or heartbeat_now):
        return client, None, log
    client, request = _send(client, now, config)
    return _generated(client, log, config), request, log


def _reset_request_state(client: Client, config) -> Client:
    """RequestState.reset: nothing in flight, no failed attempt, the initial backoff from no answer."""
    return client._replace(in_flight=0, failures=0, backoff_until_ms=-1 + config.retry_backoff_ms)


def _send(client: Client, now: int, config, ignored: bool = False) -> tuple[Client, Request]:
    """HeartbeatState.buildRequestData: all fields while JOINING; otherwise only what changed since
    the last request (the subscription when it changed — a closed consumer unsubscribed; the
    current assignment when it is not the one last sent); then the heartbeat timer restarts."""
    full = client.state == JOINING
    timeout = config.max_poll_interval_ms if full or not client.sent_full else -1
    names = () if client.closed else ("t",)
    subscribed = names if full or client.sent_names != names else None
    local = (client.local_epoch, client.owned)
    owned = client.owned if full or client.sent_owned != local else None
    seq = client.seq + 1
    request = Request(client.member_id, client.epoch, timeout, subscribed, owned, client.instance_id)
    client = client._replace(seq=seq, in_flight=seq, sent_full=True, sent_owned=local, sent_names=names,
                             awaiting=client.awaiting + ((seq, now, ignored),),
                             heartbeat_due_ms=now + client.interval_ms)
    return client, request


def _generated(client: Client, log: list, config, held: bool = False) -> Client:
    """onHeartbeatRequestGenerated (*held*: the partitions a member whose poll timer ran out held
    before its leave: its onPartitionsLost waits for the application's poll)."""
    if client.state == ACKNOWLEDGING:
        return _to(client, STABLE if reconciled(client) else RECONCILING, log)
    if client.state == LEAVING:
        if client.poll_expired:  # transitionToStale: onPartitionsLost, then clearAssignment
            client = _to(client, STALE, log)
            return client._replace(releasing=True) if held else _released(client, log, config)
        return _to(client, UNSUBSCRIBED, log)
    return client


def on_response(client: Client, seq: int, response, now: int, config) -> tuple[Client, list]:
    """The answer to heartbeat *seq* arrived: handled whether or not it answers the latest
    heartbeat (AbstractHeartbeatRequestManager.makeHeartbeatRequest's continuation: onResponse);
    one whose request failed with its connection never reaches the consumer, and a leave's
    (logResponse) changes nothing: both ignored."""
    log: list = []
    entry = next((e for e in client.awaiting if e[0] == seq), None)
    if entry is None or entry[2]:
        awaiting = tuple(e for e in client.awaiting if e[0] != seq)
        return client._replace(awaiting=awaiting), [("ignored", client.member_id, seq)]
    # onSuccessfulAttempt / onFailedAttempt: requestInFlight = false, whichever heartbeat this answers
    client = client._replace(in_flight=0, awaiting=tuple(e for e in client.awaiting if e[0] != seq))
    if response.error != NONE:
        return _on_error(client, response, now, config, log)
    # onResponse: updateHeartbeatIntervalMs (the timer restarts only when the interval changed);
    # onSuccessfulAttempt (the initial backoff from this answer)
    if response.interval_ms != client.interval_ms:
        client = client._replace(interval_ms=response.interval_ms, heartbeat_due_ms=now + response.interval_ms)
    client = client._replace(backoff_until_ms=now + config.retry_backoff_ms, failures=0)
    if client.state == LEAVING or client.state in NOT_IN_GROUP or response.epoch < 0:
        return client, log  # onHeartbeatSuccess: leaving, not in the group, or a leave's answer
    client = client._replace(epoch=response.epoch)
    if response.assignment is not None and client.state in PREVIOUS_VALID_STATES[RECONCILING]:
        client = _assignment_received(client, response.assignment, log)
    return client, log


def _assignment_received(client: Client, assignment: frozenset, log: list) -> Client:
    """processAssignmentReceived: replaceTargetAssignmentWithNewAssignment (LocalAssignment.updateWith:
    a new target, or the first after NONE, takes the next local epoch), then RECONCILING unless
    the target is already held."""
    if client.target is None or client.target != assignment:
        client = client._replace(target=assignment, target_local_epoch=client.target_local_epoch + 1)
    if not reconciled(client):
        return _to(client, RECONCILING, log)
    if client.state in (RECONCILING, JOINING):
        return _to(client, STABLE, log)
    return client


class _IllegalTransition(Exception):
    """MemberState's table refuses the move (Kafka: IllegalStateException out of transitionTo)."""


def _check(client: Client, state: str) -> None:
    if state != client.state and client.state not in PREVIOUS_VALID_STATES[state]:
        raise _IllegalTransition(state)


def _on_error(client: Client, response, now: int, config, log: list) -> tuple[Client, list]:
    """onErrorResponse: the heartbeat state reset, a failed attempt; fencing errors fence.

    A move the transition table refuses — a STALE or FATAL member fenced, a STALE or FENCED one
    failed, by the answer to a heartbeat sent before it left — throws IllegalStateException out of
    transitionTo, inside the heartbeat's continuation, whose exception nothing reads
    (NetworkClientDelegate.UnsentRequest.whenComplete): the rest of the handler does not run, and
    the member stays as it was (logged ``illegal_transition``)."""
    client = _failed_attempt(client._replace(sent_owned=None, sent_full=False, sent_names=None), now, config)
    try:
        if response.error in (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID):
            if config.is_broken("fenced_rejoins_directly") and client.state not in (PREPARE_LEAVING, LEAVING,
                                                                                       UNSUBSCRIBED):
                return _to(_clear(client)._replace(epoch=JOIN_EPOCH), JOINING, log), log
            # transitionToFenced; then heartbeatRequestState.reset(): "Skip backoff so that a next HB
            # to rejoin is sent as soon as the fenced member releases"
            return _reset_request_state(_fenced(client, log, config), config), log
        return _fatal(client, response.error, log, config), log  # handleFatalFailure (the instance id's errors, the unexpected)
    except _IllegalTransition as refused:
        log.append(("illegal_transition", client.member_id, client.state, str(refused)))
        return client, log


def _fatal(client: Client, error: str, log: list, config) -> Client:
    """transitionToFatal: a member in the group loses its partitions (onPartitionsLost, then
    clearAssignment: at the application's next poll when it holds some); one leaving or out of
    the group has none."""
    before = client.state
    _check(client, FATAL)
    client = _to(client._replace(fatal=error), FATAL, log)
    if before in (UNSUBSCRIBED, LEAVING, PREPARE_LEAVING):
        return client
    return client._replace(releasing=True) if assigned_partitions(client) else _released(client, log, config)


def _fenced(client: Client, log: list, config) -> Client:
    """transitionToFenced: onPartitionsLost runs at the application's next poll, which then
    clears the assignment and rejoins; with no partitions held it all happens at once."""
    if client.state == PREPARE_LEAVING:
        client = _to(client._replace(epoch=leave_epoch(client), owned=frozenset(), local_epoch=-1), LEAVING, log)
        return _to(client, UNSUBSCRIBED, log)
    if client.state == LEAVING:
        return _to(client, UNSUBSCRIBED, log)
    if client.state == UNSUBSCRIBED:
        return client
    _check(client, FENCED)
    client = _to(client._replace(epoch=JOIN_EPOCH), FENCED, log)
    return client._replace(releasing=True) if assigned_partitions(client) else _released(client, log, config)


def timed_out(client: Client, now: int, config) -> bool:
    """Whether the oldest heartbeat on the connection has waited request.timeout.ms."""
    return bool(client.awaiting) and now >= client.awaiting[0][1] + config.request_timeout_ms


def on_failure(client: Client, now: int, config) -> tuple[Client, list]:
    """The oldest heartbeat timed out (request.timeout.ms): NetworkClient drops the connection and
    every heartbeat on it fails (retriable) — each one whose answer was awaited runs onFailure: the
    state reset so the next request is a full one, a failed attempt (the backoff grows)."""
    log: list = []
    for _, _, ignored in client.awaiting:
        if not ignored:
            client = _failed_attempt(client._replace(in_flight=0, sent_owned=None, sent_full=False, sent_names=None),
                                     now, config)
    return client._replace(awaiting=()), log


def _failed_attempt(client: Client, now: int, config) -> Client:
    """HeartbeatRequestState.onFailedAttempt: the heartbeat timer expires now, and the exponential
    backoff (retry.backoff.ms doubling to retry.backoff.max.ms; Kafka's jitter left out) runs from now."""
    backoff = min(MAX_BACKOFF_MS, config.retry_backoff_ms * 2 ** client.failures)
    return client._replace(heartbeat_due_ms=now, backoff_until_ms=now + backoff, failures=client.failures + 1)


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
    """KafkaConsumer.close: the application's onPartitionsRevoked (runRebalanceCallbacksOnClose),
    then leaveGroupOnClose — the subscription dropped, clearAssignment, and the leave heartbeat
    (epoch -1, or -2 for a static member) sent next by the background thread. A member out of the
    group sends nothing (a fenced one's assignment is cleared)."""
    log = [] if log is None else log
    if client.closed:
        return client, log
    if client.state in NOT_IN_GROUP:
        if client.state == FENCED:
            client = _to(_clear(client)._replace(releasing=False), UNSUBSCRIBED, log)
        return client._replace(closed=True), log
    client = _to(client._replace(reconciling=None), PREPARE_LEAVING, log)
    client = _clear(client)._replace(epoch=leave_epoch(client))
    return _to(client, LEAVING, log)._replace(closed=True), log
