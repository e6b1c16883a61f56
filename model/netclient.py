"""The request lifecycle: ConsumerNetworkClient over NetworkClient (protocol reference §4.1, §4.3).

Every function works on a :class:`model.client.Step`. A request is *sent* into the per-node FIFO
``unsent`` queue with its creation time; ``poll`` transmits what it can (``trySend`` stops at a
node's first request whose node is not ready), fails unsent requests that waited strictly longer
than their timeout (stopping at a node's first request that has not), fails the unsent requests of
nodes whose connection failed, times out in-flight requests by disconnecting their node, and fires
completions in FIFO order, each exactly once.

What the transport does is not decided here: the requests the selector writes and the
connections the client closes are handed to the world in ``Step.wire``, in the order they
happened (bytes written before a close reach the broker).
"""

from __future__ import annotations

from model import entries as E
from model.client import CONNECTING, DISCONNECTED, READY, Conn, Request, Step
from model.errors import DISCONNECT, REQUEST_TIMEOUT
from model.java_order import shared_buckets, timed_out_order

MAX_IN_FLIGHT_PER_CONNECTION = 100  # KafkaConsumer fixes it (ConsumerUtils: "a fixed large enough value"); 5 is the producer default


def send(s: Step, slot: int, body, timeout_ms: int | None = None) -> int:
    """ConsumerNetworkClient.send: queue *body* for *slot*; nothing is transmitted until poll."""
    req = Request(
        id=s.next_request_id,
        slot=slot,
        body=body,
        created_ms=s.now,
        timeout_ms=s.config.request_timeout_ms if timeout_ms is None else timeout_ms,
        sent_generation=(s.generation, s.member_id, s.protocol),
    )
    s.next_request_id += 1
    s.set_slot("unsent", slot, s.unsent[slot] + (req,))
    s.log.append(E.Send(s.index, req.id, slot, req.api, req.created_ms, req.timeout_ms))
    return req.id


def can_connect(s: Step, slot: int) -> bool:
    conn = s.conns[slot]
    return conn.state is None or (
        conn.state == DISCONNECTED and s.now - conn.last_attempt_ms >= s.config.reconnect_backoff_ms
    )


#: a last refresh long before any clock a world starts (Metadata.requestUpdateForNewTopics sets
#: lastRefreshMs = 0, epoch time, so that the refresh backoff allows the update at once)
LONG_AGO = -(2 ** 62)


def maybe_refresh_metadata(s: Step) -> None:
    """The metadata updater's ``isUpdateDue`` / ``maybeUpdate``, as the implementation's world
    serves metadata (``LocalMetadataUpdater``: from the cluster, at once, never failing): due when
    metadata.max.age.ms has passed since the last refresh, or an update was requested, and the
    refresh backoff (retry.backoff.ms, flat) allows it (``Metadata.timeToNextUpdate``); then the
    client learns the topic's partition count and the update version moves on."""
    since = s.now - s.md_refreshed_ms
    if (s.md_update_requested or since >= s.config.metadata_max_age_ms) and since >= s.config.retry_backoff_ms:
        s.md_partitions = s.config.partitions if s.topic_partitions is None else s.topic_partitions
        s.md_version += 1
        s.md_refreshed_ms = s.now
        s.md_update_requested = False


def is_ready(s: Step, slot: int) -> bool:
    """NetworkClient.isReady: no metadata update due (a due one is served first), then
    canSendRequest: connected, the previous send on this connection completed, and room in flight."""
    maybe_refresh_metadata(s)
    if s.conns[slot].state != READY or len(s.in_flight[slot]) >= MAX_IN_FLIGHT_PER_CONNECTION:
        return False
    for req in s.sending:
        if req.slot == slot:
            return False
    return True


def ready(s: Step, slot: int) -> bool:
    """NetworkClient.ready: true if a request can be sent now; otherwise start connecting if allowed."""
    if is_ready(s, slot):
        return True
    if can_connect(s, slot):
        initiate_connect(s, slot)
    return False


def initiate_connect(s: Step, slot: int) -> None:
    conn = s.conns[slot]
    s.set_slot("conns", slot, Conn(CONNECTING, s.now, conn.epoch + 1))
    s.log.append(E.Connecting(s.index, slot))


def is_unavailable(s: Step, slot: int) -> bool:
    """ConsumerNetworkClient.isUnavailable: the connection failed and is still in reconnect backoff."""
    conn = s.conns[slot]
    return conn.state == DISCONNECTED and s.now - conn.last_attempt_ms < s.config.reconnect_backoff_ms


def connection_failed(s: Step, slot: int) -> bool:
    return s.conns[slot].state == DISCONNECTED


def try_send(s: Step) -> None:
    """trySend: per node, transmit in FIFO order while the node is ready; stop at the first that is not."""
    for slot, queue in enumerate(s.unsent):
        if not queue:
            continue
        order = queue[::-1] if "send_reorders" in s.config.broken else queue
        sent = 0
        for req in order:
            if not ready(s, slot):
                break
            _transmit(s, req)
            sent += 1
        if sent:
            remaining = order[sent:]
            s.set_slot("unsent", slot, remaining[::-1] if "send_reorders" in s.config.broken else remaining)


def _transmit(s: Step, req: Request) -> None:
    sent = Request(req.id, req.slot, req.body, req.created_ms, req.timeout_ms, req.sent_generation, s.now)
    s.set_slot("in_flight", req.slot, s.in_flight[req.slot] + (sent,))
    if req.slot in shared_buckets(s.config.brokers) and req.slot not in s.in_flight_puts:
        s.in_flight_puts = s.in_flight_puts + (req.slot,)  # InFlightRequests.add puts the node's deque
    s.sending = s.sending + (sent,)  # selector.send stages it; the next selector.poll writes it
    s.log.append(E.Transmit(s.index, req.id, req.slot, req.api, s.now, req.created_ms, req.timeout_ms))


def fail_expired_requests(s: Step) -> None:
    """failExpiredRequests: a request expires when max(0, now - created) > its timeout (strict); the
    scan of a node's queue stops at its first request that has not expired."""
    broken = s.config.broken
    for slot, queue in enumerate(s.unsent):
        if not queue:
            continue
        kept = []
        stopped = False
        for req in queue:
            elapsed = max(0, s.now - req.created_ms)
            if stopped:
                kept.append(req)
            elif "expiry_never" not in broken and (
                elapsed > req.timeout_ms or ("expiry_ge" in broken and elapsed == req.timeout_ms)
            ):
                s.log.append(E.Expire(s.index, req.id, slot, elapsed, req.timeout_ms))
                _complete(s, req, REQUEST_TIMEOUT)
                if "future_completed_twice" in broken:
                    kept.append(req)  # forgot to remove it: it will be completed (or sent) again
            else:
                kept.append(req)
                stopped = "expiry_no_stop" not in broken
        if len(kept) != len(queue):
            s.set_slot("unsent", slot, tuple(kept))


def fail_unsent(s: Step, slot: int, failure: str) -> None:
    queue = s.unsent[slot]
    if queue:
        s.set_slot("unsent", slot, ())  # remove the whole queue first, then complete each
        for req in queue:
            s.log.append(E.FailUnsent(s.index, req.id, slot, failure))
            _complete(s, req, failure)


def check_disconnects(s: Step) -> None:
    """checkDisconnects: fail every unsent request of a node whose connection has failed."""
    if "disconnect_keeps_unsent" in s.config.broken:
        return
    for slot, queue in enumerate(s.unsent):
        if queue and connection_failed(s, slot):
            fail_unsent(s, slot, DISCONNECT)


def disconnect(s: Step, slot: int, requested: bool = False) -> None:
    """Close the connection; in-flight requests complete as disconnected. *requested*: the client
    asked for it (NetworkClient.disconnect, from disconnectAsync), so the failures go to
    abortedSends and complete at the next NetworkClient.poll, which then does nothing else; an
    in-flight timeout's disconnect completes them in the poll that found it."""
    conn = s.conns[slot]
    if conn.state is None or conn.state == DISCONNECTED:
        return
    s.wire.append(("close", slot))
    if s.notices:  # selector.close drops whatever the channel had not yet delivered
        s.notices = tuple(n for n in s.notices if n[1] != slot)
    connection_lost(s, slot, requested)


def connection_lost(s: Step, slot: int, aborted: bool = False) -> None:
    """processDisconnection: the connection is DISCONNECTED as of now; in-flight requests complete
    as disconnected, in send order."""
    conn = s.conns[slot]
    s.set_slot("conns", slot, Conn(DISCONNECTED, s.now, conn.epoch))
    if s.sending:
        s.sending = tuple(r for r in s.sending if r.slot != slot)
    s.log.append(E.Disconnected(s.index, slot))
    if slot in s.in_flight_puts:  # cancelInFlightRequests: InFlightRequests.clearAll removes the node's key
        s.in_flight_puts = tuple(p for p in s.in_flight_puts if p != slot)
    in_flight = s.in_flight[slot]
    if in_flight:
        s.set_slot("in_flight", slot, ())
        for req in in_flight:
            if aborted:
                s.aborted.append((req, DISCONNECT))
            else:
                _complete(s, req, DISCONNECT)


def disconnect_async(s: Step, slot: int) -> None:
    """ConsumerNetworkClient.disconnectAsync: handled at the start of the next poll."""
    if slot not in s.pending_disconnects:
        s.pending_disconnects = s.pending_disconnects + (slot,)


def handle_timed_out_requests(s: Step) -> None:
    """NetworkClient.handleTimedOutRequests: a node with an in-flight request older than its timeout
    (now - sendTime > requestTimeout) is disconnected, in the order InFlightRequests.requests (a
    HashMap) iterates its nodes (model.java_order.timed_out_order): each disconnect decides what
    that connection's requests in transit become, so the order is what the broker sees."""
    timed_out = []
    for slot, in_flight in enumerate(s.in_flight):
        for req in in_flight:
            if s.now - req.sent_ms > req.timeout_ms:
                timed_out.append((slot, req.id))
                break
    if len(timed_out) > 1:  # (most polls time out no node, or one: no order to find)
        order = timed_out_order([slot for slot, _ in timed_out], s.in_flight_puts, s.config.brokers)
        timed_out.sort(key=lambda t: order.index(t[0]))
    for slot, request_id in timed_out:
        s.log.append(E.InflightTimeout(s.index, request_id, slot))
        disconnect(s, slot)


def complete_sends(s: Step) -> None:
    """selector.poll writes every staged send to its connection (handleCompletedSends): only now
    does the request travel, and the channel can take the next one."""
    if s.sending:
        s.wire.extend(("write", req) for req in s.sending)
        s.sending = ()


def network_poll(s: Step) -> None:
    """NetworkClient.poll(0) after selector.poll: completed sends, then received responses (each
    answers the oldest in-flight request of its connection), then disconnections, then new
    connections, then in-flight request timeouts. With aborted sends waiting, it only completes
    those and returns: the selector is not polled.

    What one selector poll saw is handled connection by connection in slot order, not in the order
    the messages arrived: Kafka's ``Selector.pollSelectionKeys`` walks the NIO selector's
    ``selectedKeys()`` (a hash set; ``determineHandlingOrder`` keeps its iteration order, which "is
    the same every invocation"), so the order among connections is fixed per connection and does
    not depend on which bytes came first. The slot order is one such fixed order, the one the
    simulated transport of the implementation uses (``properties.systems.simworld``,
    ``notice_order="slot"``). Arrival order is not: two polls can see two connections' messages
    arrive in opposite orders, which no fixed key order reproduces (run seed 1, step 584,371: a
    FindCoordinator answer on a broker connection and an OffsetCommit UNKNOWN_MEMBER_ID on the
    coordinator connection, in either order)."""
    if s.aborted:
        aborted, s.aborted = s.aborted, []
        for req, result in aborted:
            _complete(s, req, result)
        return
    if s.wakeup_in_polls:  # another thread's wakeup() lands while this poll waits
        s.wakeup_in_polls -= 1
        if not s.wakeup_in_polls:
            s.wakeup_pending = True
    maybe_refresh_metadata(s)  # metadataUpdater.maybeUpdate(now)
    complete_sends(s)
    notices = s.notices
    if notices:
        s.notices = ()
        if len(notices) > 1:
            notices = sorted(notices, key=_notice_slot)  # stable: FIFO within a connection
        for kind, slot, epoch, payload in notices:
            if kind == "received" and epoch == s.conns[slot].epoch:
                receive(s, slot, *payload)
        for kind, slot, epoch, _ in notices:
            conn = s.conns[slot]
            if kind == "disconnected" and epoch == conn.epoch and conn.state in (READY, CONNECTING):
                connection_lost(s, slot)
        for kind, slot, epoch, _ in notices:
            conn = s.conns[slot]
            if kind == "connected" and epoch == conn.epoch and conn.state == CONNECTING:
                s.set_slot("conns", slot, Conn(READY, conn.last_attempt_ms, conn.epoch))
                s.log.append(E.Connected(s.index, slot))
    if any(s.in_flight):
        handle_timed_out_requests(s)


def _notice_slot(notice) -> int:
    return notice[1]


def receive(s: Step, slot: int, request_id: int, response) -> bool:
    """handleCompletedReceives for one response: it answers the oldest in-flight request of its
    connection (correlation ids are checked in order). False if it answers nothing."""
    in_flight = s.in_flight[slot]
    if not in_flight or in_flight[0].id != request_id:
        return False
    s.set_slot("in_flight", slot, in_flight[1:])
    s.log.append(E.Received(s.index, request_id, response.api, response.error))
    _complete(s, in_flight[0], response)
    return True


def _complete(s: Step, req: Request, result) -> None:
    """RequestFutureCompletionHandler: record the result; it fires later, from poll, in FIFO order."""
    s.pending_completions = s.pending_completions + ((req, result),)
    s.log.append(E.Queued(s.index, req.id))


def fire_pending_completions(s: Step, dispatch) -> None:
    """firePendingCompletedRequests: fire queued completions in the order they were queued;
    completions queued while firing are fired in the same pass."""
    lifo = "completions_lifo" in s.config.broken
    while s.pending_completions:
        if lifo:
            req, result = s.pending_completions[-1]
            s.pending_completions = s.pending_completions[:-1]
        else:
            req, result = s.pending_completions[0]
            s.pending_completions = s.pending_completions[1:]
        s.log.append(E.Complete(s.index, req.id, req.api, result if isinstance(result, str) else result.error))
        dispatch(s, req, result)


class Wakeup(Exception):
    """WakeupException: KafkaConsumer.wakeup() was called and a poll that allows wakeups ran."""


def maybe_trigger_wakeup(s: Step) -> None:
    """ConsumerNetworkClient.maybeTriggerWakeup: throw once for a pending wakeup, unless disabled."""
    if s.wakeup_pending and not s.wakeups_disabled:
        s.wakeup_pending = False
        s.log.append(E.WakeupThrown(s.index))
        raise Wakeup()


def poll(s: Step, dispatch, wakeup: bool = False) -> None:
    """ConsumerNetworkClient.poll with a zero timer, in the reference's exact order. *wakeup*: the
    caller's poll allows wakeups (``client.poll(timer)``, not ``pollNoWakeup``): a pending wakeup is
    thrown after the disconnects are checked, before the second trySend and the completions (which
    stay for the next poll)."""
    if s.pending_completions:
        fire_pending_completions(s, dispatch)
    if s.pending_disconnects:
        for slot in s.pending_disconnects:
            fail_unsent(s, slot, DISCONNECT)
            disconnect(s, slot, requested=True)
        s.pending_disconnects = ()
    has_unsent = any(s.unsent)
    if has_unsent:
        try_send(s)
    network_poll(s)  # client.poll(0)
    if has_unsent or any(s.unsent):  # (a completion handler may have sent meanwhile)
        check_disconnects(s)
    if wakeup:
        maybe_trigger_wakeup(s)
    if has_unsent or any(s.unsent):
        try_send(s)
        fail_expired_requests(s)
    if s.pending_completions:
        fire_pending_completions(s, dispatch)
    s.log.append(E.POLLED[s.index])  # Polled(s.index), built once


def least_loaded_candidates(s: Step) -> tuple:
    """NetworkClient.leastLoadedNode scans the metadata nodes from a random offset, so every node
    that the scan could return from some offset is allowed: ready nodes with nothing in flight;
    else the ready nodes with the fewest in flight; else connecting nodes; else the connectable
    nodes with the oldest last attempt (0 for a node never tried). Empty when no node qualifies."""
    brokers = s.config.brokers
    idle, ready_counts, connecting, connectable = [], [], [], []
    for slot in range(brokers):
        if is_ready(s, slot):
            n = len(s.in_flight[slot])
            (idle if n == 0 else ready_counts).append((n, slot) if n else slot)
        elif s.conns[slot].state == CONNECTING:
            connecting.append(slot)
        elif can_connect(s, slot):
            conn = s.conns[slot]
            # ClusterConnectionStates.lastConnectAttemptMs is 0 for a node with no state yet
            connectable.append((0 if conn.state is None else conn.last_attempt_ms, slot))
    if idle:
        return tuple(idle)
    if ready_counts:
        least = min(n for n, _ in ready_counts)
        return tuple(slot for n, slot in ready_counts if n == least)
    if connecting:
        return tuple(connecting)
    if connectable:
        oldest = min(t for t, _ in connectable)
        return tuple(slot for t, slot in connectable if t == oldest)
    return ()


def pending_request_count(s, slot: int) -> int:
    return len(s.unsent[slot]) + len(s.in_flight[slot])
