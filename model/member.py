"""The client's member state machine: AbstractCoordinator and ConsumerCoordinator (reference §3).

Entry points, each one action of the application or the heartbeat thread on a
:class:`model.client.Step`:

* :func:`consumer_poll` — ``KafkaConsumer.poll(Duration.ZERO)``: heartbeat poll timer reset,
  coordinator discovery, ``ensureActiveGroup`` / ``joinGroupIfNeeded`` with a zero timer, then the
  fetch poll. With a zero timer every backoff sleep is a no-op, exactly as in Kafka.
* :func:`heartbeat_thread` — one iteration of the heartbeat thread's loop.
* :func:`commit_async` — ``commitAsync`` of the offsets of the owned partitions.
* :func:`close` — ``KafkaConsumer.close``: revoke, LeaveGroup (best effort), stop.

Responses reach the handlers through :func:`dispatch`, called by the network client when a
completion fires. Each handler follows the error table of the reference; a response sent under an
older generation never resets the member (``generationUnchanged``), except where Kafka itself does
(OffsetCommit's UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION outside PREPARING_REBALANCE).
"""

from __future__ import annotations

from model import entries as E
from model import netclient as net
from model.assignors import ASSIGNORS
from model.client import COMPLETING_REBALANCE, PREPARING_REBALANCE, STABLE, UNJOINED, Step, SyncCommit
from model.errors import DISCONNECT, NO_AVAILABLE_BROKERS, UNJOINED_GROUP, Errors, is_retriable, name_of
from model.events import OVERSIZED  # noqa: F401 - defined with the commit_oversized event
from model.messages import (
    NO_GENERATION,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    SyncGroupRequest,
)
from model.topics import FIRST, SECOND, SECOND_BASE, topic_names, topic_of

PROTOCOL_TYPE = "consumer"

# Failures after which joinGroupIfNeeded retries at once instead of returning.
REJOIN_AT_ONCE = frozenset({Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION, Errors.REBALANCE_IN_PROGRESS, Errors.MEMBER_ID_REQUIRED})
# JoinGroup errors that are fatal to the consumer (raised out of poll).
_JOIN_FATAL = frozenset(
    {
        Errors.FENCED_INSTANCE_ID,
        Errors.INCONSISTENT_GROUP_PROTOCOL,
        Errors.INVALID_SESSION_TIMEOUT,
        Errors.INVALID_GROUP_ID,
        Errors.GROUP_AUTHORIZATION_FAILED,
        Errors.GROUP_MAX_SIZE_REACHED,
        Errors.UNSUPPORTED_VERSION,
    }
)


# -- member state ----------------------------------------------------------------------------------


def _set_state(s: Step, state: str) -> None:
    if s.state != state:
        s.log.append(E.MemberState(s.index, s.state, state))
        s.state = state


def _set_generation(s: Step, generation: int, member_id: str, protocol: str | None) -> None:
    s.generation, s.member_id, s.protocol = generation, member_id, protocol


def request_rejoin(s: Step) -> None:
    s.rejoin_needed = True


def reset_state_and_generation(s: Step, reset_member_id: bool) -> None:
    _set_state(s, UNJOINED)
    _set_generation(s, NO_GENERATION, "" if reset_member_id else s.member_id, None)


def reset_state_and_rejoin(s: Step, reset_member_id: bool) -> None:
    reset_state_and_generation(s, reset_member_id)
    request_rejoin(s)
    s.needs_join_prepare = True


def _reset_on_response_error(s: Step, req, error: int, reset_member_id: bool) -> None:
    """resetStateOnResponseError, logged so the properties can see which response caused it."""
    s.log.append(E.Reset(s.index, req.api, error, req.sent_generation, s.generation_tuple))
    reset_state_and_rejoin(s, reset_member_id)


def has_generation_reset(s: Step) -> bool:
    """``AbstractCoordinator.hasGenerationReset``: generation id -1 *and* no protocol name. The
    member id is not looked at (ILLEGAL_GENERATION keeps it), and a generation of -1 alone is not
    a reset: a successful JoinGroup answered with generation -1 and a protocol is a generation
    like any other for SyncGroupResponseHandler and joinGroupIfNeeded."""
    return s.generation == NO_GENERATION and s.protocol is None


def _generation_unchanged(s: Step, req) -> bool:
    return req.sent_generation == s.generation_tuple


def maybe_update_subscription_metadata(s: Step) -> None:
    """ConsumerCoordinator.maybeUpdateSubscriptionMetadata: take a new metadataSnapshot when the
    metadata's update version moved on: the partition counts of the topics the metadata watches
    (SubscriptionState.metadataTopics: the subscription and the leader's group subscription)."""
    if s.md_version > s.snapshot_version:
        watched = s.subscription | s.group_subscription
        s.snapshot_partitions = (s.md_partitions if watched & FIRST else 0,
                                 s.config.second_partitions if watched & SECOND else 0)
        s.snapshot_version = s.md_version


def request_update_for_new_topics(s: Step) -> None:
    """Metadata.requestUpdateForNewTopics: an update is requested and allowed at once ("override
    the timestamp of last refresh to let immediate update": lastRefreshMs = 0, which Kafka's
    epoch clock puts long before any backoff; the worlds' clocks start at 0, so the model's and
    the implementation's metadata both take it as long ago)."""
    s.md_update_requested = True
    s.md_refreshed_ms = net.LONG_AGO


def subscribe(s: Step, mask: int) -> None:
    """KafkaConsumer.subscribe(topics) (ClassicKafkaConsumer.subscribeInternal): the new set
    replaces the subscription (SubscriptionState.subscribe → changeSubscription) and, when it
    changed, the metadata is asked for the new topics at once (requestUpdateForNewTopics). Nothing
    is sent and nothing else changes: the member owns what it owned, and its next poll rejoins
    (rejoinNeededOrPending: the subscription is no longer joinedSubscription)."""
    if mask == s.subscription:
        return
    s.subscription = mask
    s.log.append(E.Subscribed(s.index, topic_names(s.config, mask)))
    request_update_for_new_topics(s)


def rejoin_needed_or_pending(s: Step) -> bool:
    """ConsumerCoordinator.rejoinNeededOrPending: the leader whose assignment snapshot no longer
    matches the metadata rejoins ("cached metadata has changed": partitions were added); then
    AbstractCoordinator's rejoinNeeded or a join in progress."""
    if s.assignment_snapshot is not None and s.assignment_snapshot != s.snapshot_partitions:
        if not s.rejoin_needed:  # requestRejoinIfNecessary
            request_rejoin(s)
        return True
    # "we need to join if our subscription has changed since the last join"
    if s.joined_subscription is not None and s.joined_subscription != s.subscription:
        if not s.rejoin_needed:  # requestRejoinIfNecessary
            request_rejoin(s)
        return True
    return s.rejoin_needed or s.join_future is not None


def _fail(s: Step, failure) -> None:
    """An exception thrown out of poll to the application: the consumer is finished."""
    s.fatal = name_of(failure)
    s.log.append(E.Fatal(s.index, s.fatal))


# -- coordinator discovery (§3.2) ------------------------------------------------------------------


def mark_coordinator_unknown(s: Step, disconnected: bool, cause: str) -> None:
    """markCoordinatorUnknown: forget the coordinator *before* disconnecting from it (the failed
    requests' callbacks mark it unknown too), and disconnect asynchronously: they run at the next
    poll, not inside this call. Logged from begin to done so the nesting is visible."""
    if s.coordinator is not None:
        slot = s.coordinator_slot()
        s.log.append(E.CoordinatorUnknown(s.index, s.coordinator, cause))
        if "coordinator_disconnect_sync" in s.config.broken and not disconnected:
            net.disconnect(s, slot)  # the in-flight requests fail now, and their callbacks run now
            net.fire_pending_completions(s, dispatch)
        s.coordinator = None
        if not disconnected:
            net.disconnect_async(s, slot)
        s.log.append(E.CoordinatorUnknownDone(s.index))


def coordinator_unknown(s: Step) -> bool:
    """checkAndGetCoordinator() == null: a coordinator whose connection failed and is still in
    reconnect backoff is marked unknown on the way."""
    if s.coordinator is not None and net.is_unavailable(s, s.coordinator_slot()):
        mark_coordinator_unknown(s, True, "coordinator unavailable")
    return s.coordinator is None


def lookup_coordinator(s: Step):
    """The memoised FindCoordinator future, or an immediate failure when no node is available."""
    if s.find_coordinator_request is None:
        candidates = net.least_loaded_candidates(s)
        if len(candidates) > 1:
            slot = s.choose("least_loaded", candidates)
        else:  # no choice to make, but logged all the same: every leastLoadedNode call is one entry
            slot = candidates[0] if candidates else None
            s.log.append(E.Choice("least_loaded", candidates, slot))
        if slot is None:
            return ("failed", NO_AVAILABLE_BROKERS)
        s.find_coordinator_request = ("pending", net.send(s, slot, FindCoordinatorRequest(s.config.group_id)))
    return s.find_coordinator_request


def ensure_coordinator_ready(s: Step, wakeup: bool = False) -> bool:
    """ensureCoordinatorReady with a zero timer: one lookup round. *wakeup*: False for
    ensureCoordinatorReadyAsync (commitAsync, close: its poll for the lookup disables wakeups); the
    awaitMetadataUpdate after a failed lookup polls with wakeups in either case, as Kafka's does."""
    if not coordinator_unknown(s):
        return True
    future = lookup_coordinator(s)
    net.poll(s, dispatch, wakeup)
    if future[0] == "pending":  # the memo now holds the outcome, if the response has fired
        future = s.find_coordinator_request
        if future[0] == "pending":  # ran out of time; an older lookup's answer may have found it meanwhile
            return not coordinator_unknown(s)
    if future[0] == "failed":
        if not is_retriable(future[1]):
            _fail(s, future[1])
            return False
        s.md_update_requested = True  # awaitMetadataUpdate(timer): requestUpdate, then one poll
        net.poll(s, dispatch, True)  # with an expired timer (ConsumerNetworkClient.poll(timer): wakeups allowed)
    elif s.coordinator is not None and net.is_unavailable(s, s.coordinator_slot()):
        mark_coordinator_unknown(s, True, "coordinator unavailable")
    s.find_coordinator_request = None
    return not coordinator_unknown(s)


def _on_find_coordinator(s: Step, req, result) -> None:
    outcome = _record_find_coordinator(s, result)
    if s.find_coordinator_request == ("pending", req.id):
        s.find_coordinator_request = outcome  # the memoised future completes; an older lookup's does not touch it
    if s.held_commits:  # the listeners commitAsync attached to this lookup
        held = [(offsets, oversized) for rid, offsets, oversized in s.held_commits if rid == req.id]
        s.held_commits = tuple(h for h in s.held_commits if h[0] != req.id)
        for offsets, oversized in held:
            if outcome == ("succeeded",):
                _do_commit_async(s, offsets, oversized)
                net.poll(s, dispatch)  # client.pollNoWakeup()
            else:
                s.log.append(E.CommitFailed(s.index, "RetriableCommitFailedException"))


def _record_find_coordinator(s: Step, result) -> tuple:
    """FindCoordinatorResponseHandler: adopt the coordinator a successful answer names (whichever
    lookup it answers) and return the outcome of that lookup's future."""
    if isinstance(result, str):
        return ("failed", result)
    if result.error == Errors.NONE:
        s.coordinator = result.node_id
        s.log.append(E.CoordinatorFound(s.index, result.node_id))
        slot = s.coordinator_slot()
        if net.can_connect(s, slot):  # client.tryConnect(coordinator)
            net.initiate_connect(s, slot)
        s.session_deadline_ms = heartbeat_now(s) + s.config.session_timeout_ms  # heartbeat.resetSessionTimeout()
        return ("succeeded",)
    return ("failed", result.error)


# -- join / sync (§3.3, §3.4) ----------------------------------------------------------------------


def on_join_prepare(s: Step) -> None:
    """ConsumerCoordinator.onJoinPrepare (eager, no auto-commit): revoke, or lose, every owned
    partition; then isLeader = false and the group subscription is reset (resetGroupSubscription)."""
    s.is_leader = False
    s.group_subscription = 0
    if s.assignment:
        lost = s.generation == NO_GENERATION or s.member_id == ""
        s.log.append((E.Lost if lost else E.Revoke)(s.index, s.assignment))
        if "partitions_not_revoked" not in s.config.broken:
            s.assignment = ()


def on_join_complete(s: Step, assignment: tuple) -> None:
    """ConsumerCoordinator.onJoinComplete (eager): take the assignment, unless it names a topic the
    subscription no longer has (checkAssignmentMatchedSubscription: the subscription changed since
    the JoinGroup was sent): then rejoin with the current subscription and take nothing."""
    if not s.is_leader:  # only the leader watches the metadata for partition changes
        s.assignment_snapshot = None
    if any(not topic_of(p) & s.subscription for p in assignment):
        s.log.append(E.AssignmentRefused(s.index, s.generation, assignment))
        request_rejoin(s)  # "received assignment does not match the current subscription"
        return
    if "partitions_not_revoked" in s.config.broken:
        assignment = tuple(sorted(set(s.assignment) | set(assignment)))
    if "assignment_truncated" in s.config.broken:
        assignment = assignment[:-1]
    s.assignment = assignment
    s.log.append(E.Assign(s.index, s.generation, s.member_id, assignment))


def send_join_group(s: Step):
    if coordinator_unknown(s):
        return ("failed", Errors.COORDINATOR_NOT_AVAILABLE)
    cfg = s.config
    timeout = cfg.request_timeout_ms if "join_timeout_not_extended" in cfg.broken else cfg.join_request_timeout_ms
    # ConsumerProtocol Subscription (v2+): topics, owned partitions (none after an eager
    # onJoinPrepare) and the member's generation. The coordinator compares these bytes
    # (member.matches), so a follower rejoining with another generation triggers a rebalance.
    # metadata() takes the subscription as joinedSubscription.
    s.joined_subscription = s.subscription
    subscription = (topic_names(cfg, s.subscription), tuple(sorted(s.assignment)), s.generation)
    request = JoinGroupRequest(
        group_id=cfg.group_id,
        member_id=s.member_id,
        session_timeout_ms=cfg.session_timeout_ms,
        rebalance_timeout_ms=cfg.rebalance_timeout_ms,
        protocol_type=PROTOCOL_TYPE,
        protocols=tuple((name, subscription) for name in cfg.protocols(s.index)),
        client_id=cfg.client_id(s.index),
        group_instance_id=cfg.instance_id(s.index),
    )
    return ("pending", net.send(s, s.coordinator_slot(), request, timeout))


def initiate_join_group(s: Step) -> None:
    if s.join_future is None or ("double_join" in s.config.broken and s.join_future[0] == "pending"):
        _set_state(s, PREPARING_REBALANCE)
        s.join_future = send_join_group(s)


def join_group_if_needed(s: Step) -> bool:
    """joinGroupIfNeeded with a zero timer. Returns True when the member is STABLE with no rejoin needed."""
    for _ in range(8):  # each round either returns or handles one completed join future
        if not rejoin_needed_or_pending(s):
            return True
        if not ensure_coordinator_ready(s):
            return False
        if s.needs_join_prepare:
            s.needs_join_prepare = False
            on_join_prepare(s)
        initiate_join_group(s)
        net.poll(s, dispatch, True)  # client.poll(future, timer)
        future = s.join_future
        if future is None or future[0] in ("pending", "assigning"):
            return False
        s.join_future = None
        if future[0] == "succeeded":
            if not has_generation_reset(s) and s.state == STABLE:
                on_join_complete(s, future[1])
                s.needs_join_prepare = True
            else:
                reset_state_and_rejoin(s, True)
            continue
        failure = future[1]
        request_rejoin(s)
        if failure in REJOIN_AT_ONCE:
            continue
        if not is_retriable(failure):
            _fail(s, failure)
        return False
    return False


def _on_join_group(s: Step, req, result) -> None:
    if s.join_future != ("pending", req.id):
        return  # not the current join (cannot happen in Kafka: the future is memoised)
    if isinstance(result, str):
        _on_transport_failure(s, result)
        s.join_future = ("failed", result)
        return
    error = result.error
    if error == Errors.NONE:
        if result.protocol_type is not None and result.protocol_type != PROTOCOL_TYPE:
            s.join_future = ("failed", Errors.INCONSISTENT_GROUP_PROTOCOL)
        elif s.state != PREPARING_REBALANCE:
            s.join_future = ("failed", UNJOINED_GROUP)
        else:
            _set_state(s, STABLE if "stable_without_sync" in s.config.broken else COMPLETING_REBALANCE)
            if s.heartbeat_thread:
                _enable_heartbeat_thread(s)
            _set_generation(s, result.generation_id, result.member_id, result.protocol_name)
            s.log.append(E.Joined(s.index, result.generation_id, result.member_id, result.leader_id == result.member_id))
            assignments = ()
            elected = result.leader_id == result.member_id  # joinResponse.isLeader()
            if elected:
                # onLeaderElected: updateGroupSubscription takes a fresh metadataSnapshot, the
                # assignor works from the metadata at hand, and that snapshot is kept to watch
                _update_group_subscription(s, result.members)
                s.is_leader = True
                assignor = ASSIGNORS[result.protocol_name]
                partitions = s.md_partitions - ("assignor_drops_partition" in s.config.broken)
                if s.config.second_partitions:  # per member, the topics its subscription names
                    topics = ((FIRST, tuple(range(partitions))),
                              (SECOND, tuple(range(SECOND_BASE, SECOND_BASE + s.config.second_partitions))))
                    masks = {m: _subscription_mask(s.config, metadata) for m, metadata in result.members}
                    plan = assignor([m for m, _ in result.members], topics, dict(result.member_instances), masks)
                else:
                    plan = assignor([m for m, _ in result.members], partitions, dict(result.member_instances))
                assignments = tuple((m, plan[m]) for m, _ in result.members)
                s.assignment_snapshot = s.snapshot_partitions
            sync = SyncGroupRequest(
                s.config.group_id, result.generation_id, result.member_id, PROTOCOL_TYPE, result.protocol_name, assignments,
                s.config.instance_id(s.index),
            )
            delay = s.config.assignor_delay_ms
            # The assignor runs in onJoinLeader only (JoinGroupResponseHandler.handle: if
            # (joinResponse.isLeader()) onJoinLeader(...) else onJoinFollower()). Not s.is_leader:
            # that is reset only by onJoinPrepare, which a rejoin after a failed SyncGroup skips
            # (needsJoinPrepare stays false), so a former leader joining as a follower still has it.
            if elected and delay:
                # The assignor runs inside this handler under the coordinator's lock: the application
                # thread is in it and the heartbeat thread waits for the lock, so the whole process
                # stands still (a stall) and the SyncGroup leaves when the assignor returns.
                s.pending_sync = sync
                s.join_future = ("assigning",)
                until = s.now - s.clock_offset_ms + delay  # world time
                s.stalled_until_ms = until
                s.paused_until_ms = until if s.paused_until_ms is None else max(s.paused_until_ms, until)
                s.log.append(E.Assigning(s.index, result.generation_id, delay))
                return
            _send_sync_group(s, sync)
        return
    if error == Errors.UNKNOWN_MEMBER_ID:
        if _generation_unchanged(s, req):
            _reset_on_response_error(s, req, error, True)
    elif error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
        mark_coordinator_unknown(s, False, name_of(error))
    elif error == Errors.MEMBER_ID_REQUIRED:
        _set_generation(s, NO_GENERATION, result.member_id, None)
        request_rejoin(s)
    elif error not in _JOIN_FATAL and error not in (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.REBALANCE_IN_PROGRESS):
        error = Errors.UNKNOWN_SERVER_ERROR  # KafkaException("Unexpected error in join group response")
    s.join_future = ("failed", error)


def _subscription_mask(config, metadata) -> int:
    """The topics (a mask) of a member's JoinGroup subscription metadata (topics, owned, generation)."""
    topics = metadata[0]
    return (FIRST if config.topic in topics else 0) | (SECOND if config.second_topic in topics else 0)


def _update_group_subscription(s: Step, members) -> None:
    """ConsumerCoordinator.updateGroupSubscription, in onLeaderElected: the leader watches every
    topic its group subscribes to (SubscriptionState.groupSubscribe: true when the group names a
    topic outside its own subscription, and then requestUpdateForNewTopics), awaits fresh metadata
    (ConsumerNetworkClient.ensureFreshMetadata) and takes the new metadataSnapshot it will assign
    from. Awaited only for new topics, as impl/ does (its module docstring says why): an update
    merely requested or due is not, and the leader assigns from the metadata at hand."""
    topics = 0
    for _, metadata in members:
        topics |= _subscription_mask(s.config, metadata)
    s.group_subscription = topics
    if topics & ~s.subscription:
        request_update_for_new_topics(s)
        # ensureFreshMetadata(timer(Long.MAX_VALUE)) → awaitMetadataUpdate: client.poll(timer)
        # until the update version moves on; the backoff was lifted, so the first poll's metadata
        # updater refreshes (served at once, as every refresh here). A whole poll of the network
        # client, nested in this response handler: it sends what is queued and fires what completed
        net.poll(s, dispatch, True)
    maybe_update_subscription_metadata(s)


def _send_sync_group(s: Step, sync: SyncGroupRequest) -> None:
    """sendSyncGroupRequest, chained to the join future: with the coordinator unknown by now it
    fails at once (RequestFuture.coordinatorNotAvailable())."""
    if coordinator_unknown(s):
        s.join_future = ("failed", Errors.COORDINATOR_NOT_AVAILABLE)
    else:
        s.join_future = ("pending", net.send(s, s.coordinator_slot(), sync))


def finish_assignment(s: Step) -> None:
    """The leader's slow assignor returns (config.assignor_delay_ms after the JoinGroup answer): the
    rest of onJoinLeader sends the SyncGroup with the assignment it computed, before either thread
    does anything else (the application thread still holds the coordinator's lock). Called at the
    client's first step once its stall is over; what else the interrupted call would have done
    after the handler is done by that step's own call."""
    sync = s.pending_sync
    s.pending_sync = None
    s.log.append(E.Assigned(s.index, sync.generation_id))
    _send_sync_group(s, sync)


def _on_sync_group(s: Step, req, result) -> None:
    if s.join_future != ("pending", req.id):
        return
    if isinstance(result, str):
        _on_transport_failure(s, result)
        s.join_future = ("failed", result)
        return
    error = result.error
    if error == Errors.NONE:
        if result.protocol_type is not None and result.protocol_type != PROTOCOL_TYPE:
            s.join_future = ("failed", Errors.INCONSISTENT_GROUP_PROTOCOL)
        elif not has_generation_reset(s) and s.state == COMPLETING_REBALANCE:
            if result.protocol_name is not None and result.protocol_name != s.protocol:
                s.join_future = ("failed", Errors.INCONSISTENT_GROUP_PROTOCOL)
            else:
                _set_state(s, STABLE)
                s.rejoin_needed = False
                s.join_future = ("succeeded", tuple(result.assignment))
        else:
            s.join_future = ("failed", Errors.ILLEGAL_GENERATION)
        return
    if error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
        if _generation_unchanged(s, req):
            _reset_on_response_error(s, req, error, error == Errors.UNKNOWN_MEMBER_ID)
    elif error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
        mark_coordinator_unknown(s, False, name_of(error))
    elif error not in (Errors.REBALANCE_IN_PROGRESS, Errors.GROUP_AUTHORIZATION_FAILED, Errors.FENCED_INSTANCE_ID):
        error = Errors.UNKNOWN_SERVER_ERROR
    s.join_future = ("failed", error)


def _on_transport_failure(s: Step, failure: str) -> None:
    """CoordinatorResponseHandler.onFailure: a disconnect marks the coordinator unknown."""
    if failure == DISCONNECT:
        mark_coordinator_unknown(s, True, DISCONNECT)


# -- heartbeat (§3.5) ------------------------------------------------------------------------------


def heartbeat_now(s: Step) -> int:
    """Heartbeat.update(now): the heartbeat, session and poll timers' time, max(now, their time)."""
    if s.now > s.heartbeat_clock_ms:
        s.heartbeat_clock_ms = s.now
    return s.heartbeat_clock_ms


def _enable_heartbeat_thread(s: Step) -> None:
    """HeartbeatThread.enable: reset the heartbeat, session and poll timers."""
    cfg = s.config
    s.heartbeat_enabled = True
    s.heartbeat_wait_until_ms = None  # notify()
    now = heartbeat_now(s)
    s.heartbeat_due_ms = now + cfg.heartbeat_interval_ms
    s.session_deadline_ms = now + cfg.session_timeout_ms
    s.poll_deadline_ms = now + cfg.max_poll_interval_ms


def _receive_heartbeat(s: Step) -> None:
    s.heartbeat_attempts = 0
    s.session_deadline_ms = heartbeat_now(s) + s.config.session_timeout_ms


def _fail_heartbeat(s: Step) -> None:
    s.heartbeat_attempts += 1
    s.heartbeat_due_ms = heartbeat_now(s) + s.config.retry_backoff_ms


def heartbeat_thread(s: Step) -> None:
    """One iteration of HeartbeatThread.run."""
    if not s.live_now() or not s.heartbeat_thread or not s.heartbeat_enabled:
        return
    if s.heartbeat_wait_until_ms is not None:
        if s.now < s.heartbeat_wait_until_ms:
            return  # still in wait(retry.backoff.ms): this iteration has not begun
        s.heartbeat_wait_until_ms = None
    state_at_start = s.state
    if s.state in (UNJOINED, PREPARING_REBALANCE) and "heartbeat_while_unjoined" not in s.config.broken:
        s.heartbeat_enabled = False
        return
    # A completion fired by this poll may reset the member (say an OffsetCommit answered
    # UNKNOWN_MEMBER_ID); Kafka does not re-check the state afterwards, so neither does the model.
    net.poll(s, dispatch)  # pollNoWakeup
    if coordinator_unknown(s):
        if s.find_coordinator_request is not None:
            # clearFindCoordinatorFuture(); AbstractCoordinator.this.wait(retryBackoffMs)
            # (AbstractCoordinator.HeartbeatThread.run): without the wait, iterations at one
            # instant would send FindCoordinator after FindCoordinator (groupcheck explore found it)
            s.find_coordinator_request = None
            s.heartbeat_wait_until_ms = s.now + s.config.retry_backoff_ms
        else:
            lookup_coordinator(s)
    elif heartbeat_now(s) >= s.session_deadline_ms:
        mark_coordinator_unknown(s, False, "session timed out without receiving a heartbeat response")
    elif heartbeat_now(s) >= s.poll_deadline_ms:
        s.log.append(E.PollTimeout(s.index))
        maybe_leave_group(s)
    elif heartbeat_now(s) >= s.heartbeat_due_ms:
        s.heartbeat_due_ms = heartbeat_now(s) + s.config.heartbeat_interval_ms  # sentHeartbeat
        s.log.append(E.HeartbeatSent(s.index, state_at_start, s.state, s.generation))
        net.send(s, s.coordinator_slot(),
                 HeartbeatRequest(s.config.group_id, s.generation, s.member_id, s.config.instance_id(s.index)))


def _on_heartbeat(s: Step, req, result) -> None:
    if isinstance(result, str):
        _on_transport_failure(s, result)
        _fail_heartbeat(s)
        return
    error = result.error
    if error == Errors.NONE:
        _receive_heartbeat(s)
    elif error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
        mark_coordinator_unknown(s, False, name_of(error))
        _fail_heartbeat(s)
    elif error == Errors.REBALANCE_IN_PROGRESS:
        if "rebalance_resets_member_id" in s.config.broken:
            reset_state_and_rejoin(s, True)
        elif s.state == STABLE:
            request_rejoin(s)
        _receive_heartbeat(s)  # success, or RebalanceInProgressException: both count as liveness
    elif error in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID):
        if _generation_unchanged(s, req) or "stale_response_resets" in s.config.broken:
            _reset_on_response_error(s, req, error, error != Errors.ILLEGAL_GENERATION)
            if error == Errors.FENCED_INSTANCE_ID:
                # the listener's onFailure: heartbeatThread.failed.set(e), thrown to the
                # application by its next pollHeartbeat (AbstractCoordinator.HeartbeatThread.run)
                s.heartbeat_failed = name_of(error)
                s.log.append(E.HeartbeatFailed(s.index, s.heartbeat_failed))
            else:
                _fail_heartbeat(s)
        else:
            _receive_heartbeat(s)  # ignored: the generation moved on
    else:
        _fail_heartbeat(s)


# -- leave, commit, close --------------------------------------------------------------------------


def maybe_leave_group(s: Step) -> None:
    """maybeLeaveGroup: best-effort LeaveGroup for a joined dynamic member, then always reset. A
    static member sends none ("consumer with valid group.instance.id is viewed as static member
    that never sends LeaveGroup", isDynamicMember()): its session expiry or a restart decides."""
    if s.config.instance_id(s.index) is None and not coordinator_unknown(s) and s.state != UNJOINED and s.member_id:
        net.send(s, s.coordinator_slot(), LeaveGroupRequest(s.config.group_id, (s.member_id,)))
        net.poll(s, dispatch)  # pollNoWakeup
    s.log.append(E.Leave(s.index, s.member_id))
    reset_state_and_rejoin(s, True)


def _on_leave_group(s: Step, req, result) -> None:
    if isinstance(result, str):
        _on_transport_failure(s, result)


def oversized_partitions(partitions: tuple, which: str | None) -> tuple:
    """The partitions of *partitions* (in commit order) that a commit with oversized metadata
    *which* (one of :data:`OVERSIZED`, None for none) gives too long a metadata string: the
    first, all but the first, or all (the broker then appends nothing)."""
    if which is None:
        return ()
    if which == "first":
        return partitions[:1]
    if which == "rest":
        return partitions[1:]
    return partitions


def commit_async(s: Step, oversize: str | None = None) -> None:
    """ConsumerCoordinator.commitOffsetsAsync of every owned partition, at offset = the number of
    commits made so far. With the coordinator unknown it tries once to find it (zero timer); if that
    does not settle it, the commit waits on the lookup and is sent when the lookup succeeds (or
    fails with it). Either way it ends with pollNoWakeup, so the commit can be transmitted.
    *oversize* (one of :data:`OVERSIZED`): the application attaches metadata longer than the
    broker's offset.metadata.max.bytes to those partitions (the client does not check it)."""
    if not s.live_now():
        return
    s.commits += 1  # the call counts, also one that throws an earlier commit's fencing (as the other world counts)
    if _commit_fence_thrown(s):
        return
    offsets = tuple((p, s.commits) for p in s.assignment)
    oversized = oversized_partitions(s.assignment, oversize)
    if offsets:
        if not coordinator_unknown(s) or ensure_coordinator_ready(s):
            _do_commit_async(s, offsets, oversized)
        else:
            future = lookup_coordinator(s)
            if future[0] == "pending":
                s.held_commits = s.held_commits + ((future[1], offsets, oversized),)
            else:
                s.log.append(E.CommitFailed(s.index, "RetriableCommitFailedException"))
    net.poll(s, dispatch)  # client.pollNoWakeup()


def _do_commit_async(s: Step, offsets: tuple, oversized: tuple = ()) -> None:
    """commitAsync's sendOffsetCommitRequest: a local failure goes to its callback."""
    future = send_offset_commit(s, offsets, oversized)
    if future[0] == "failed":
        s.log.append(E.CommitFailed(s.index, future[1]))


def send_offset_commit(s: Step, offsets: tuple, oversized: tuple = ()) -> tuple:
    """sendOffsetCommitRequest: its future, ("pending", request id), or ("failed", exception,
    retriable) at once without sending: no coordinator (COORDINATOR_NOT_AVAILABLE, retriable) or
    no stable generation (RebalanceInProgressException while rebalancing, else
    CommitFailedException; neither retriable)."""
    if coordinator_unknown(s):
        return ("failed", name_of(Errors.COORDINATOR_NOT_AVAILABLE), True)
    if s.state != STABLE:  # generationIfStable() == null
        rebalancing = s.state in (PREPARING_REBALANCE, COMPLETING_REBALANCE)
        return ("failed", "RebalanceInProgressException" if rebalancing else "CommitFailedException", False)
    return ("pending", net.send(s, s.coordinator_slot(), OffsetCommitRequest(
        s.config.group_id, s.generation, s.member_id, offsets, oversized, s.config.instance_id(s.index))))


def _on_offset_commit(s: Step, req, result) -> None:
    sync = req.id in s.sync_commit_requests  # commitSync's request (its future has no async listener)
    if sync:
        s.sync_commit_requests = tuple(i for i in s.sync_commit_requests if i != req.id)
    if isinstance(result, str):
        _on_transport_failure(s, result)
        return
    error = result.error
    if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR, Errors.REQUEST_TIMED_OUT):
        mark_coordinator_unknown(s, False, name_of(error))
    elif error == Errors.REBALANCE_IN_PROGRESS:
        request_rejoin(s)
    elif error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
        if _generation_unchanged(s, req) or s.state != PREPARING_REBALANCE:
            _reset_on_response_error(s, req, error, error == Errors.UNKNOWN_MEMBER_ID)
    elif error == Errors.GROUP_AUTHORIZATION_FAILED:
        _fail(s, error)
    elif error == Errors.FENCED_INSTANCE_ID:
        # OffsetCommitResponseHandler: fatal while the generation is the one the commit carried;
        # else RebalanceInProgressException / CommitFailedException to the callback only
        if _generation_unchanged(s, req) and not sync:
            # future.raise(error): commitAsync's listener sets asyncCommitFenced, which the next
            # invokeCompletedOffsetCommitCallbacks throws to the application (a commitSync's future
            # has no such listener: its caller throws the error, or, timed out, nobody reads it)
            s.commit_fenced = True
            s.log.append(E.CommitFenced(s.index))
    # OFFSET_METADATA_TOO_LARGE and INVALID_COMMIT_OFFSET_SIZE are raised to the commit's callback
    # and change nothing else; so do the errors the handler calls unexpected. The handler acts on
    # the answer's first partition error (OffsetCommitResponseHandler returns at the first).


# commitSync's exceptions the application catches and goes on after (the consumer stays usable:
# KafkaConsumer.commitSync's javadoc); any other one ends the consumer, as one out of poll does
COMMIT_SYNC_CAUGHT = frozenset({"CommitFailedException", "RebalanceInProgressException", "WakeupException"})


def commit_sync(s: Step, timeout_ms: int) -> None:
    """KafkaConsumer.commitSync(Duration) of every owned partition, at offset = the number of commits
    made so far: ConsumerCoordinator.commitOffsetsSync(offsets, timer) after
    invokeCompletedOffsetCommitCallbacks (which throws an earlier async commit's fencing). A
    blocking call: this begins it and runs its first pass (:func:`continue_commit_sync`); every
    later poll of the blocked application is one more pass, as close()'s waits are."""
    if not s.live_now() or not s.assignment:
        return
    s.commits += 1  # the call counts, as commitAsync's does
    if _commit_fence_thrown(s):
        return
    offsets = tuple((p, s.commits) for p in s.assignment)
    s.sync_commit = SyncCommit(offsets, s.now + timeout_ms, s.now)
    s.log.append(E.CommitSyncBegan(s.index, timeout_ms))
    continue_commit_sync(s)


def continue_commit_sync(s: Step) -> None:
    """One pass of commitOffsetsSync's do-while loop, in its order::

        do { if (coordinatorUnknownAndUnreadySync(timer)) return false;
             future = sendOffsetCommitRequest(offsets); client.poll(future, timer);
             invokeCompletedOffsetCommitCallbacks();
             if (future.succeeded()) return true;
             if (future.failed() && !future.isRetriable()) throw future.exception();
             timer.sleep(retryBackoff.backoff(attempts++)); } while (timer.notExpired()); return false;

    A pass is one zero-timer round of whichever wait the call is in: the coordinator lookup (one
    ensureCoordinatorReady round), the OffsetCommit's answer (one network poll, wakeups allowed:
    a pending wakeup throws WakeupException out of commitSync), or the backoff's sleep (nothing
    but time). When the timer has run out the call returns false (KafkaConsumer throws
    TimeoutException) with the OffsetCommit still in flight: its answer is handled by whichever
    later poll reads it (OffsetCommitResponseHandler: a late UNKNOWN_MEMBER_ID still resets the
    member). The flat retry backoff is retry.backoff.ms (the model's pre-3.7 backoff)."""
    sc = s.sync_commit
    clock = max(sc.clock_ms, s.now)  # timer.update()
    s.sync_commit = sc = sc._replace(clock_ms=clock)
    if sc.sleep_until_ms is not None:  # timer.sleep(backoff)
        if clock < sc.sleep_until_ms:
            return
        s.sync_commit = sc = sc._replace(sleep_until_ms=None)
        if clock >= sc.deadline_ms:  # while (timer.notExpired())
            _end_commit_sync(s, "timeout")
            return
    try:
        if sc.future is None:
            if coordinator_unknown(s) and not ensure_coordinator_ready(s, True):
                if s.fatal is None and s.sync_commit is not None and clock >= sc.deadline_ms:
                    _end_commit_sync(s, "timeout")
                elif s.fatal is not None:
                    s.sync_commit = None  # the lookup's fatal error was thrown out of commitSync
                return
            s.sync_commit = sc = sc._replace(future=_send_commit_sync(s, sc.offsets))
        if sc.future[0] == "pending":
            net.poll(s, dispatch, True)  # client.poll(future, timer)
    except net.Wakeup:
        _end_commit_sync(s, "WakeupException")
        raise
    if _commit_fence_thrown(s):  # invokeCompletedOffsetCommitCallbacks
        s.sync_commit = None
        return
    sc = s.sync_commit
    future = sc.future
    if future[0] == "succeeded":
        _end_commit_sync(s, "committed")
    elif future[0] == "failed" and not future[2]:
        _end_commit_sync(s, future[1])
    elif future[0] == "failed":
        backoff = s.config.retry_backoff_ms  # retryBackoff.backoff(attempts++), flat
        s.sync_commit = sc._replace(future=None, attempts=sc.attempts + 1,
                                    sleep_until_ms=clock + min(backoff, max(0, sc.deadline_ms - clock)))
        if clock >= sc.deadline_ms:
            _end_commit_sync(s, "timeout")
    elif clock >= sc.deadline_ms:
        _end_commit_sync(s, "timeout")


def _send_commit_sync(s: Step, offsets: tuple) -> tuple:
    """commitSync's sendOffsetCommitRequest; its request is remembered as commitSync's (its future
    has no commitAsync listener: see :func:`_on_offset_commit`)."""
    future = send_offset_commit(s, offsets)
    if future[0] == "pending":
        s.sync_commit_requests = s.sync_commit_requests + (future[1],)
    return future


def _commit_outcome(s: Step, req, result) -> tuple:
    """What the OffsetCommit's future completes with (OffsetCommitResponseHandler, decided before
    it acts): ("succeeded",) or ("failed", exception, retriable)."""
    if isinstance(result, str):  # DisconnectException, TimeoutException: retriable
        return ("failed", result, True)
    error = result.error
    if error == Errors.NONE:
        return ("succeeded",)
    if error in (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.COORDINATOR_NOT_AVAILABLE,
                 Errors.NOT_COORDINATOR, Errors.REQUEST_TIMED_OUT):
        return ("failed", name_of(error), True)
    stale_while_joining = not _generation_unchanged(s, req) and s.state == PREPARING_REBALANCE
    if error == Errors.FENCED_INSTANCE_ID:
        if _generation_unchanged(s, req):
            return ("failed", "FencedInstanceIdException", False)
        return ("failed", "RebalanceInProgressException" if s.state == PREPARING_REBALANCE else "CommitFailedException", False)
    if error == Errors.REBALANCE_IN_PROGRESS:
        return ("failed", "RebalanceInProgressException", False)
    if error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
        return ("failed", "RebalanceInProgressException" if stale_while_joining else "CommitFailedException", False)
    return ("failed", name_of(error), False)


def _end_commit_sync(s: Step, outcome: str) -> None:
    """commitSync returns (committed), throws TimeoutException (its timer ran out) or throws the
    commit's exception: the application catches :data:`COMMIT_SYNC_CAUGHT` and TimeoutException
    and goes on; any other exception ends the consumer."""
    sc = s.sync_commit
    s.sync_commit = None
    in_flight = sc.future is not None and sc.future[0] == "pending"
    s.log.append(E.CommitSyncDone(s.index, outcome, in_flight))
    if outcome not in ("committed", "timeout") and outcome not in COMMIT_SYNC_CAUGHT:
        _fail(s, outcome)


def _commit_fence_thrown(s: Step) -> bool:
    """ConsumerCoordinator.invokeCompletedOffsetCommitCallbacks: "Get fenced exception for
    group.instance.id" once an async commit was fenced; the consumer is finished."""
    if s.commit_fenced:
        _fail(s, Errors.FENCED_INSTANCE_ID)
    return s.commit_fenced


def close(s: Step) -> None:
    """KafkaConsumer.close(timeout) with min(timeout, request.timeout.ms) for the coordinator.
    ConsumerCoordinator.close first waits (polling) for the commitAsync calls held on a coordinator
    lookup; then AbstractCoordinator.close stops the heartbeat thread, revokes (onLeavePrepare),
    sends the LeaveGroup (maybeLeaveGroup) and awaits the coordinator's pending requests. The
    model runs this without blocking: every later poll is one more iteration of the current wait
    (:func:`continue_close`)."""
    if not s.live_now():
        return
    s.wakeups_disabled = True  # ConsumerCoordinator.close: client.disableWakeups(), never re-enabled
    s.closing_clock_ms = s.now
    s.closing_deadline_ms = s.now + min(s.config.close_timeout_ms, s.config.request_timeout_ms)
    s.closing_commits = True
    s.log.append(E.Closing(s.index))
    continue_close(s)


def continue_close(s: Step) -> None:
    """One iteration of close()'s current wait (see :func:`close`)."""
    s.closing_clock_ms = max(s.closing_clock_ms, s.now)  # timer.update()
    if not s.closing_commits:
        await_close(s, poll=True)
        return
    if s.held_commits and s.closing_clock_ms < s.closing_deadline_ms:
        ensure_coordinator_ready(s)
        net.poll(s, dispatch)
        if s.held_commits:
            return
    s.closing_commits = False
    s.heartbeat_thread = s.heartbeat_enabled = False
    if s.assignment:
        s.log.append(E.Revoke(s.index, s.assignment))
        s.assignment = ()
    maybe_leave_group(s)
    s.closing_slot = None if coordinator_unknown(s) else s.coordinator_slot()
    await_close(s, poll=False)


def await_close(s: Step, poll: bool) -> None:
    """awaitPendingRequests(coordinator, timer): poll until the coordinator connection has nothing
    pending or the close timer expires (no wait at all if the coordinator was unknown)."""
    slot = s.closing_slot
    if poll and slot is not None and net.pending_request_count(s, slot) and s.closing_clock_ms < s.closing_deadline_ms:
        net.poll(s, dispatch)
    if slot is None or not net.pending_request_count(s, slot) or s.closing_clock_ms >= s.closing_deadline_ms:
        s.closed = True
        s.log.append(E.Closed(s.index))


# -- the application's poll ------------------------------------------------------------------------


def consumer_poll(s: Step) -> None:
    """KafkaConsumer.poll(Duration.ZERO): ConsumerCoordinator.poll, then the fetch poll."""
    if s.closing_deadline_ms is not None and not s.closed:
        continue_close(s)
        return
    if not s.live_now():
        return
    if s.sync_commit is not None:  # the application is blocked in commitSync: one pass of its wait
        continue_commit_sync(s)
        return
    net.maybe_trigger_wakeup(s)  # KafkaConsumer.poll: client.maybeTriggerWakeup() first
    maybe_update_subscription_metadata(s)  # ConsumerCoordinator.poll begins with it
    if _commit_fence_thrown(s):  # invokeCompletedOffsetCommitCallbacks
        return
    if s.heartbeat_thread:
        if s.heartbeat_failed is not None:
            # pollHeartbeat: "set the heartbeat thread to null and raise an exception"
            s.heartbeat_thread = s.heartbeat_enabled = False
            _fail(s, s.heartbeat_failed)
            return
        # pollHeartbeat: "Awake the heartbeat thread if needed" (notify() when shouldHeartbeat)
        if heartbeat_now(s) >= s.heartbeat_due_ms:
            s.heartbeat_wait_until_ms = None
        s.poll_deadline_ms = heartbeat_now(s) + s.config.max_poll_interval_ms  # pollHeartbeat → heartbeat.poll(now)
    if not coordinator_unknown(s) or ensure_coordinator_ready(s, True):
        if rejoin_needed_or_pending(s) and s.fatal is None:
            if ensure_coordinator_ready(s, True):  # ensureActiveGroup
                s.heartbeat_thread = True  # startHeartbeatThreadIfNeeded
                join_group_if_needed(s)
    if s.fatal is None:
        net.poll(s, dispatch, True)  # pollForFetches


_DISPATCH = {
    "FindCoordinator": _on_find_coordinator,
    "JoinGroup": _on_join_group,
    "SyncGroup": _on_sync_group,
    "Heartbeat": _on_heartbeat,
    "LeaveGroup": _on_leave_group,
    "OffsetCommit": _on_offset_commit,
}


def dispatch(s: Step, req, result) -> None:
    """Fire one completion: the response handler of the request's API. An answer from the
    coordinator (not a transport failure, not FindCoordinator's) is logged as it reaches the
    handler, with the member's state and whether the request's generation is still the member's:
    what the handlers decide on (properties.error_paths counts it)."""
    if not isinstance(result, str) and req.api != "FindCoordinator":
        s.log.append(E.Answered(s.index, req.api, result.error, s.state, _generation_unchanged(s, req)))
    sc = s.sync_commit
    if sc is not None and sc.future is not None and sc.future[0] == "pending" and sc.future[1] == req.id:
        s.sync_commit = sc._replace(future=_commit_outcome(s, req, result))
    _DISPATCH[req.api](s, req, result)
