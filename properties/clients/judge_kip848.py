"""The judge of real consumers speaking KIP-848's consumer group protocol (``conform client
--protocol consumer``): the rules of Kafka 4.1's Java consumer (``AsyncKafkaConsumer``, its
``ConsumerMembershipManager`` and ``ConsumerHeartbeatRequestManager``), checked on the broker's
trace of ConsumerGroupHeartbeat requests and answers and on the consumers' rebalance callbacks.
The trace, the fault bookkeeping and the settle check are :mod:`properties.clients.judge`'s; each
rule's source is in its ``SOURCES``.

``kip848-one-heartbeat-in-flight``
    a member's heartbeat is not read while its previous one is neither answered nor cut off —
    except a leave, which Kafka's consumer sends whatever is in flight, and the heartbeat after a
    leave (heartbeatRequestState.reset() cleared requestInFlight after it).
``kip848-heartbeat-carries-member-epoch``
    a heartbeat carries the epoch of the latest successful answer the member received; 0 only to
    join (before it was ever in the group, after FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID, or after
    it left); -1 to leave. After a fencing answer it never again sends the fenced epoch.
``kip848-member-id-kept``
    every heartbeat of one consumer carries the same, non-empty member id (KIP-1082).
``kip848-full-heartbeat-after-join-or-failure``
    a join sends its rebalance timeout, its subscription and no owned partitions; the heartbeat
    after an error answer or a failed request sends every field again.
``kip848-owned-were-assigned``
    the owned partitions a heartbeat reports were in assignments the member received since it
    last joined.
``kip848-revoked-before-acknowledged``
    a heartbeat that stops reporting a partition it reported before comes after the consumer's
    ``onPartitionsRevoked`` or ``onPartitionsLost`` for it.
``kip848-leaves-on-close``
    a consumer in the group when it is closed sends a heartbeat with epoch -1 (-2 for a static
    member, ``ConsumerMembershipManager.leaveGroupEpoch``).
``kip848-heartbeats-continue``
    a member in the group is never silent for the broker's consumer session timeout: nothing in
    flight, no fault holding it, no heartbeat read.
``group-settles``
    as for the classic protocol, with the coordinator's view from ConsumerGroupDescribe.

Static consumers (``--static N``) are held to one rule more:

``kip848-static-member-carries-instance-id``
    a static consumer's join (epoch 0) and its leave (epoch -2) carry its group.instance.id, and no
    heartbeat carries another; a dynamic one's carries none. Between them a heartbeat may leave it
    null (the field's definition: "null if not provided or if it didn't change since the last
    heartbeat"); Kafka's Java consumer sends it on every heartbeat, librdkafka on full ones.

A heartbeat answered UNRELEASED_INSTANCE_ID or FENCED_INSTANCE_ID is fatal to Kafka's consumer
(``ConsumerHeartbeatRequestManager.handleSpecificErrors``): the member is out of the group for good,
sends no more heartbeats (a later one is a ``kip848-heartbeat-carries-member-epoch`` finding), is not
expected to leave on close, and is left out of the settle check (the session's notes name it).
Kafka 4.1's coordinator answers UNRELEASED_INSTANCE_ID to a static member that rejoins with its own
member id after it was fenced (apache/kafka#23542, docs/kip848.md): with static members, an injected
fencing error makes Kafka's own consumer fatal, as the model says it must.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

from properties.clients.trace import Finding, _holds, _queueing, _silent_from, exchanges, settle_finding
from properties.clients.schedule import CONSUMER_SESSION_MS

API = "ConsumerGroupHeartbeat"
FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID = 110, 25
FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID = 82, 111
FATAL = (FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID)  # handleSpecificErrors: handleFatalFailure
LEAVE_EPOCHS = (-1, -2)
#: a callback's wall clock (the consumer's JVM) against the broker's read time (the same machine):
#: the slack for two processes' clock reads
CLOCK_SLACK_MS = 5


def judge_consumer_protocol(outcome) -> List[Finding]:
    """Every rule of the module docstring over one outcome: the findings in time order, at most
    one per rule and client (the first)."""
    zero = outcome.start_ms
    by_client = exchanges(outcome.trace)
    findings: List[Finding] = []
    for client in sorted(by_client):
        if client not in outcome.events:
            continue  # the settle probe and other tools
        holds = _holds(outcome.trace, client)
        exs = [ex for ex in by_client[client] if ex.api == API]
        _queueing(exs, holds)
        for rule in (_one_in_flight, _epochs, _member_id, _full_requests, _owned_were_assigned):
            found = rule(client, exs, zero)
            if found is not None:
                findings.append(found)
        instance = outcome.schedule.instance_of(client)
        for found in (_revoked_before_ack(client, exs, outcome.events[client], zero),
                      _leaves_on_close(client, exs, zero, outcome.stop_ms, outcome.notes, instance),
                      _heartbeats_continue(client, exs, zero, outcome.stop_ms, holds),
                      _carries_instance_id(client, instance, exs, zero)):
            if found is not None:
                findings.append(found)
    if not outcome.settle.settled:
        findings.append(settle_finding(outcome))
    return sorted(findings, key=lambda f: (f.at_ms, f.client, f.rule))


def _show(ex, zero: int) -> str:
    body = ex.request["body"]
    owned = body.get("topic_partitions")
    fields = f"epoch {body.get('member_epoch')}"
    if body.get("instance_id") is not None:
        fields += f", instance id {body['instance_id']}"
    if body.get("rebalance_timeout_ms", -1) != -1:
        fields += f", rebalance timeout {body['rebalance_timeout_ms']}"
    if body.get("subscribed_topic_names") is not None:
        fields += f", topics {body['subscribed_topic_names']}"
    if owned is not None:
        fields += f", owned {sorted(_partitions(owned))}"
    if ex.response is None:
        answer = f"closed at {ex.closed_ms - zero} ms" if ex.closed_ms is not None else "unanswered"
    else:
        answer = f"answered at {ex.answered - zero} ms, error {ex.error}"
        rb = ex.response["body"]
        if ex.error == 0:
            answer += f", epoch {rb.get('member_epoch')}"
            if rb.get("assignment") is not None:
                answer += f", assignment {sorted(_partitions(rb['assignment'].get('topic_partitions') or []))}"
    injected = f" [injected {ex.injected}]" if ex.injected else ""
    return f"{ex.sent - zero} ms ConsumerGroupHeartbeat ({fields}) {answer}{injected}"


def _partitions(topic_partitions) -> Set[Tuple[str, int]]:
    return {(tp.get("topic_id"), p) for tp in topic_partitions or () for p in tp.get("partitions") or ()}


def _epoch(ex) -> int:
    return int(ex.request["body"].get("member_epoch", 0))


def _succeeded(ex) -> bool:
    """An answer without an error that the member may have read."""
    return ex.response is not None and ex.error == 0 and not ex.maybe_unread


def _one_in_flight(client, exs, zero) -> Optional[Finding]:
    for before, ex in zip(exs, exs[1:]):
        if _epoch(ex) in LEAVE_EPOCHS or _epoch(before) in LEAVE_EPOCHS:
            continue  # AbstractHeartbeatRequestManager.poll/pollOnClose send a leave whatever is in flight
        if before.ended is None or ex.sent < before.ended:
            return Finding("kip848-one-heartbeat-in-flight", client, ex.sent - zero,
                           f"{client} sent a heartbeat while its previous one was still in flight",
                           (_show(before, zero), _show(ex, zero)))
    return None


def _epochs(client, exs, zero) -> Optional[Finding]:
    """The epoch each heartbeat must carry (see the module docstring)."""
    epoch: Optional[int] = None  # the latest successful answer's epoch; None: not in the group
    fenced: Optional[int] = None  # the epoch a fencing answer ended, until the member rejoins
    previous_epoch: Optional[int] = None  # the epoch before the latest answer (an answer it may not have read)
    fatal = None  # the fatal answer that ended its membership
    for ex in exs:
        sent = _epoch(ex)
        if fatal is not None:
            return Finding("kip848-heartbeat-carries-member-epoch", client, ex.sent - zero,
                           f"{client} sent a heartbeat after a fatal answer ({fatal}): its member is failed",
                           (_show(ex, zero),))
        if sent in LEAVE_EPOCHS:
            epoch, fenced = None, None
        elif sent == 0:
            if epoch is not None and fenced is None:
                return Finding("kip848-heartbeat-carries-member-epoch", client, ex.sent - zero,
                               f"{client} rejoined at epoch 0 while in the group at epoch {epoch}: no fencing answer, "
                               "no leave before it", (_show(ex, zero),))
            fenced = None
        elif fenced is not None:
            return Finding("kip848-heartbeat-carries-member-epoch", client, ex.sent - zero,
                           f"{client} sent epoch {sent} after its epoch was fenced: it must rejoin at epoch 0",
                           (_show(ex, zero),))
        elif sent != epoch and sent != previous_epoch:
            return Finding("kip848-heartbeat-carries-member-epoch", client, ex.sent - zero,
                           f"{client} sent epoch {sent}; the latest answer it received gave it epoch {epoch}",
                           (_show(ex, zero),))
        if ex.response is not None and not ex.maybe_unread and ex.error in FATAL:
            fatal = "UNRELEASED_INSTANCE_ID" if ex.error == UNRELEASED_INSTANCE_ID else "FENCED_INSTANCE_ID"
        if ex.response is not None and not ex.maybe_unread:
            if ex.error == 0 and sent not in LEAVE_EPOCHS:
                previous_epoch, epoch = None, int(ex.response["body"].get("member_epoch", 0))
            elif ex.error in (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID):
                fenced, previous_epoch, epoch = sent, None, None  # out of the group: it must rejoin
        elif ex.response is not None and ex.error == 0 and sent not in LEAVE_EPOCHS:  # maybe read, maybe not: either epoch
            previous_epoch, epoch = epoch, int(ex.response["body"].get("member_epoch", 0))
    return None


def _member_id(client, exs, zero) -> Optional[Finding]:
    first = None
    for ex in exs:
        member = ex.request["body"].get("member_id") or ""
        if not member:
            return Finding("kip848-member-id-kept", client, ex.sent - zero,
                           f"{client} sent a heartbeat without a member id (v1 needs the consumer's own)", (_show(ex, zero),))
        if first is None:
            first = (member, ex)
        elif member != first[0]:
            return Finding("kip848-member-id-kept", client, ex.sent - zero,
                           f"{client} changed its member id from {first[0]} to {member}",
                           (_show(first[1], zero), _show(ex, zero)))
    return None


def _full(body: dict) -> bool:
    return (body.get("rebalance_timeout_ms", -1) != -1 and body.get("subscribed_topic_names") is not None
            and body.get("topic_partitions") is not None)


def _full_requests(client, exs, zero) -> Optional[Finding]:
    failed_before = None
    for ex in exs:
        body, sent = ex.request["body"], _epoch(ex)
        if sent == 0 and not (_full(body) and not body.get("topic_partitions")):
            return Finding("kip848-full-heartbeat-after-join-or-failure", client, ex.sent - zero,
                           f"{client} joined without its rebalance timeout, its subscription or an empty owned list",
                           (_show(ex, zero),))
        if sent > 0 and failed_before is not None and not _full(body):
            return Finding("kip848-full-heartbeat-after-join-or-failure", client, ex.sent - zero,
                           f"{client}'s heartbeat after a failed one did not send every field again",
                           (_show(failed_before, zero), _show(ex, zero)))
        failed = ex.response is None or ex.error != 0
        failed_before = ex if failed and ex.ended is not None and sent not in LEAVE_EPOCHS else None
    return None


def _owned_were_assigned(client, exs, zero) -> Optional[Finding]:
    received: Set[Tuple[str, int]] = set()
    for ex in exs:
        body, sent = ex.request["body"], _epoch(ex)
        if sent == 0:
            received = set()
        owned = body.get("topic_partitions")
        if sent > 0 and owned is not None and not _partitions(owned) <= received:
            extra = sorted(p for _, p in _partitions(owned) - received)
            return Finding("kip848-owned-were-assigned", client, ex.sent - zero,
                           f"{client} reported owning partitions {extra} that no answer since its join assigned it",
                           (_show(ex, zero),))
        if ex.response is not None and ex.error == 0 and ex.response["body"].get("assignment") is not None:
            received |= _partitions(ex.response["body"]["assignment"].get("topic_partitions"))
    return None


def _revoked_before_ack(client, exs, events, zero) -> Optional[Finding]:
    released: Dict[int, List[int]] = {}  # partition -> wall times of its revoked / lost callbacks
    for e in events:
        if e.get("event") in ("revoked", "lost"):
            for p in e.get("partitions") or ():
                released.setdefault(p, []).append(int(e["wall_ms"]))
    reported: Optional[Set[int]] = None
    reported_at = None
    for ex in exs:
        body, sent = ex.request["body"], _epoch(ex)
        if sent <= 0:
            reported, reported_at = (set() if sent == 0 else None), ex.sent
            continue
        owned = body.get("topic_partitions")
        if owned is None:
            continue
        now = {p for _, p in _partitions(owned)}
        if reported is not None:
            for p in sorted(reported - now):
                if not any(reported_at - CLOCK_SLACK_MS <= t <= ex.sent + CLOCK_SLACK_MS for t in released.get(p, ())):
                    return Finding("kip848-revoked-before-acknowledged", client, ex.sent - zero,
                                   f"{client} stopped reporting partition {p} without onPartitionsRevoked or "
                                   "onPartitionsLost for it first", (_show(ex, zero),))
        reported, reported_at = now, ex.sent
    return None


def _out_of_group(ex) -> bool:
    """A leave, or an answer that puts the member out of the group (fenced, unknown, fatal)."""
    return _epoch(ex) in LEAVE_EPOCHS or (ex.response is not None
                                          and ex.error in (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID) + FATAL)


def _leaves_on_close(client, exs, zero, stopped, notes, instance=None) -> Optional[Finding]:
    if stopped is None or any(n.startswith(f"{client} ") for n in notes):
        return None  # it died or was killed: no close to judge
    leave = -1 if instance is None else -2  # leaveGroupEpoch
    in_group = False
    for ex in exs:
        if ex.sent >= stopped:
            if _epoch(ex) == leave:
                return None
            continue
        if _out_of_group(ex):
            in_group = False
        elif _succeeded(ex) and int(ex.response["body"].get("member_epoch", 0)) > 0:
            in_group = True
    if not in_group:
        return None
    return Finding("kip848-leaves-on-close", client, stopped - zero,
                   f"{client} was in the group when it was closed and sent no heartbeat with epoch {leave}", ())


def _carries_instance_id(client, instance, exs, zero) -> Optional[Finding]:
    """kip848-static-member-carries-instance-id: a static member's join and leave at -2 carry its
    instance id, and no heartbeat carries another (a partial heartbeat may leave it null: "null if
    not provided or if it didn't change since the last heartbeat"); a dynamic member's carries none."""
    for ex in exs:
        carried, sent = ex.request["body"].get("instance_id"), _epoch(ex)
        needed = instance is not None and sent in (0, -2)
        if (carried is None and needed) or (carried is not None and carried != instance):
            what = f"instance id {carried!r}" if carried is not None else "no instance id"
            kind = {0: "a join", -2: "a leave at -2"}.get(sent, "a heartbeat")
            return Finding("kip848-static-member-carries-instance-id", client, ex.sent - zero,
                           f"{client} (group.instance.id {instance!r}) sent {kind} with {what}", (_show(ex, zero),))
    return None


def _heartbeats_continue(client, exs, zero, stopped, holds) -> Optional[Finding]:
    busy = sorted([(ex.sent_after, ex.ended if ex.ended is not None else stopped) for ex in exs] + holds)
    in_group_from = None
    for ex in exs:
        if in_group_from is not None:
            silent = _silent_from(in_group_from, ex.sent, busy)
            if silent is not None and silent[1] - silent[0] > CONSUMER_SESSION_MS:
                return _silent(client, zero, silent, ex)
        if _out_of_group(ex):
            in_group_from = None
        elif _succeeded(ex) and int(ex.response["body"].get("member_epoch", 0)) > 0:
            in_group_from = ex.answered
        elif in_group_from is not None and ex.ended is not None:
            in_group_from = max(in_group_from, ex.ended)
    if in_group_from is not None and stopped is not None:
        silent = _silent_from(in_group_from, stopped, busy)
        if silent is not None and silent[1] - silent[0] > CONSUMER_SESSION_MS:
            return _silent(client, zero, silent, None)
    return None


def _silent(client, zero, silent, ex) -> Finding:
    lo, hi = silent
    until = f"until its heartbeat at {ex.sent - zero} ms" if ex is not None else "until it was stopped"
    return Finding("kip848-heartbeats-continue", client, lo - zero,
                   f"{client} was in the group and sent nothing for {hi - lo} ms (from {lo - zero} ms {until}), "
                   f"longer than the consumer session timeout {CONSUMER_SESSION_MS} ms", (_show(ex, zero),) if ex else ())
