"""The judge of real consumers: the rules of Kafka's consumer-group client, checked on the broker's
trace and the consumers' callbacks.

The broker traces every request it read and every response it wrote, per connection, with the
client id, and every fault it injected (``groupcheck broker --trace``). A rule is judged from what
the client *had received* when it sent a request; the trace shows when the broker wrote an answer
and when it read a request, so an answer written less than :data:`WINDOW_MS` before a request
was read may not have been seen by the client yet (its request could have been on its way): such
a request is not held against it. Each rule names its source in Kafka's Java client
(``clients/src/main/java/org/apache/kafka/clients/consumer/internals``). Which error answers ask
for a rejoin, a reset of the generation or of the member id, or a new coordinator lookup is not
written here: :mod:`properties.clients.reactions` reads it off the model's own client
(``model/member.py``) by running its response handlers, so the judge and the model cannot drift
apart (``judge(outcome, reactions)`` takes another model's table, e.g. a broken variant's):

``one-rebalance-request-in-flight``
    at most one JoinGroup or SyncGroup of a member in flight: ``AbstractCoordinator.initiateJoinGroup``
    memoises the join future, and the SyncGroup is sent only from the JoinGroup answer's handler.
``heartbeat-carries-current-generation``, ``commit-carries-current-generation``
    a Heartbeat or a generation-carrying OffsetCommit names the newest (generation, member id) the
    member was given by a JoinGroup answer, and not one the coordinator has already told it is
    gone (``AbstractCoordinator.generation``, reset by ``resetStateAndGeneration`` on
    UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION; ``ConsumerCoordinator.sendOffsetCommitRequest`` takes
    ``generationIfStable()``; ``HeartbeatThread.run`` sends nothing while ``hasNotJoinedGroup``).
``rejoin-after-error``
    REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION answering a Heartbeat, SyncGroup or
    OffsetCommit of the member's current generation is followed by a JoinGroup within
    ``max.poll.interval.ms`` + :data:`REJOIN_SLACK_MS` (``HeartbeatResponseHandler`` /
    ``SyncGroupResponseHandler``: ``requestRejoin``; ``OffsetCommitResponseHandler``:
    ``resetStateAndRejoin``), unless the member stops first.
``member-id-kept-until-told``
    a JoinGroup without a member id from a member that had one follows an answer that its member
    id is unknown (UNKNOWN_MEMBER_ID, or ILLEGAL_GENERATION, which clients before KAFKA-13419 also
    reset on) or its own LeaveGroup: a disconnect or a coordinator move keeps it (KAFKA-13214,
    ``AbstractCoordinator.resetJoinGroupFuture``; ``joinGroupIfNeeded`` resets only in
    ``resetStateOnResponseError``).
``rediscover-after-coordinator-error``
    after NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE answering a group request, the member's next
    group request waits for the answer to a new FindCoordinator (``markCoordinatorUnknown``, then
    ``ensureCoordinatorReady``, which blocks on ``lookupCoordinator``'s future).
``heartbeats-continue``
    a member holding a generation (from its JoinGroup answer until it rejoins, leaves or is told the
    generation is gone) is never silent for a whole ``session.timeout.ms``: nothing in flight,
    nothing held by a fault, no request read (``HeartbeatThread.run`` sends a Heartbeat every
    ``heartbeat.interval.ms`` while the member is COMPLETING_REBALANCE or STABLE; the coordinator
    expires a silent member after ``session.timeout.ms``).
``assignment-matches-sync``
    an ``onPartitionsAssigned`` callback hands the application exactly the partitions of the
    member's latest SyncGroup answer (``ConsumerCoordinator.onJoinComplete``), and, in the eager
    protocol, the previous partitions were revoked or lost first (``onJoinPrepare``).
``revoke-before-rejoin``
    in the eager protocol a member gives up every partition it owns (``onPartitionsRevoked`` or
    ``onPartitionsLost``) before it sends its next JoinGroup (``ConsumerCoordinator.onJoinPrepare``),
    so no partition is owned by two consumers at once once the group has moved on; a member nobody
    told of the rebalance (a partitioned one) keeps its partitions until it hears, as in Kafka.
``group-settles``
    after the faults stop the group settles within the schedule's ``settle_ms``: every live
    consumer owns partitions, each partition exactly one owner, the coordinator Stable with the
    live consumers as its members.

Static consumers (``--static N``: group.instance.id, KIP-345) are held to two rules more:

``static-member-carries-instance-id``
    its JoinGroup (v5+), SyncGroup (v3+), Heartbeat (v3+) and OffsetCommit (v7+) are of a version
    with a group.instance.id field and carry its own (``AbstractCoordinator.sendJoinGroupRequest``,
    ``sendSyncGroupRequest``, ``sendHeartbeatRequest``, ``ConsumerCoordinator.sendOffsetCommitRequest``:
    ``setGroupInstanceId``; each request's ``Builder.build`` throws UnsupportedVersionException for
    a static member below that version rather than send it without: a coordinator could then
    neither fence the request of a replaced process with FENCED_INSTANCE_ID nor tell it apart).
``static-member-does-not-leave``
    it sends no LeaveGroup, on close or when its poll interval runs out: a static member's
    membership ends by session expiry only, so that a restart within the session costs the group
    no rebalance (``AbstractCoordinator.maybeLeaveGroup``: ``isDynamicMember()``).
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from properties.clients.reactions import MODEL, SENT_FROM, Reactions
from properties.clients.trace import (WINDOW_MS, Finding, _Exchange, _holds, _queueing, _silent_from, exchanges,
                                      settle_finding)

REJOIN_SLACK_MS = 2000
GROUP_REQUESTS = ("JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit", "LeaveGroup")
_NOT_COORDINATOR, _COORDINATOR_NOT_AVAILABLE = 16, 15
_UNKNOWN_MEMBER_ID, _ILLEGAL_GENERATION, _REBALANCE_IN_PROGRESS, _MEMBER_ID_REQUIRED = 25, 22, 27, 79
#: Clients before KAFKA-13419 (Kafka 3.1) reset their member id on ILLEGAL_GENERATION too; today's
#: model does not (it resets the generation only), and the judge does not hold the older rule
#: against a client.
LEGACY_MEMBER_ID_RESETS = (_ILLEGAL_GENERATION,)

#: The first version of each request with a group.instance.id field (KIP-345)
INSTANCE_ID_FROM = {"JoinGroup": 5, "SyncGroup": 3, "Heartbeat": 3, "OffsetCommit": 7}


def _a(api: str) -> str:
    """``an OffsetCommit``, ``a Heartbeat``."""
    return ("an " if api[0] in "AEIOU" else "a ") + api


def _show(ex: _Exchange, zero: int) -> str:
    body = ex.request["body"]
    fields = {k: body[k] for k in ("generation_id", "member_id") if k in body}
    if ex.api == "LeaveGroup":
        fields["members"] = [m.get("member_id") for m in body.get("members") or ()]
    answer = ("unanswered" if ex.ended is None else
              f"closed at {ex.closed_ms - zero} ms" if ex.response is None else
              f"answered at {ex.answered - zero} ms, error {ex.error}")
    injected = f" [injected {ex.injected}]" if ex.injected else ""
    return f"{ex.sent - zero} ms {ex.api} {fields} {answer}{injected}"


def judge(outcome, reactions: Reactions = MODEL) -> List[Finding]:
    """Every rule of the module docstring over one :class:`~properties.clients.session.Outcome`:
    the findings, in time order (at most one per rule and client: the first). *reactions*: what the
    model's client does with each error answer (:mod:`properties.clients.reactions`)."""
    if outcome.schedule.protocol == "consumer":  # KIP-848's consumer protocol: its own rules
        from properties.clients.judge_kip848 import judge_consumer_protocol

        return judge_consumer_protocol(outcome)
    zero = outcome.start_ms
    by_client = exchanges(outcome.trace)
    max_poll = int(outcome.schedule.settings_dict().get("max.poll.interval.ms", 300000))
    session_ms = int(outcome.schedule.settings_dict().get("session.timeout.ms", 45000))
    findings: List[Finding] = []
    for client in sorted(by_client):
        if client not in outcome.events:
            continue  # the settle probe and other tools
        exs = by_client[client]
        stopped = outcome.stop_ms
        _queueing(exs, _holds(outcome.trace, client))
        for rule in (_one_in_flight, _generations, _rejoin_after_error, _member_id_kept, _rediscover):
            found = rule(client, exs, zero, max_poll, stopped, reactions)
            if found is not None:
                findings.append(found)
        found = _heartbeats_continue(client, exs, zero, session_ms, stopped, _holds(outcome.trace, client), reactions)
        if found is not None:
            findings.append(found)
        for rule in (_assignments, _revoke_before_rejoin):
            found = rule(client, exs, outcome.events[client], zero)
            if found is not None:
                findings.append(found)
        instance = outcome.schedule.instance_of(client)
        if instance is not None:
            for rule in (_carries_instance_id, _does_not_leave):
                found = rule(client, instance, exs, zero)
                if found is not None:
                    findings.append(found)
    if not outcome.settle.settled:
        findings.append(settle_finding(outcome))
    return sorted(findings, key=lambda f: (f.at_ms, f.client, f.rule))


def _one_in_flight(client, exs, zero, max_poll, stopped, reactions) -> Optional[Finding]:
    pending: List[_Exchange] = []
    for ex in exs:
        if ex.api not in ("JoinGroup", "SyncGroup"):
            continue
        # still in flight when this one was read: not answered, its connection not closed (a close
        # that the broker saw just after the new request was read may be the client's own giving up)
        live = [p for p in pending if (p.ended is None or p.ended > ex.sent) and
                not (p.closed_ms is not None and p.closed_ms <= ex.sent + WINDOW_MS)]
        if live:
            return Finding("one-rebalance-request-in-flight", client, ex.sent - zero,
                           f"{client} sent {_a(ex.api)} while its {live[0].api} sent at {live[0].sent - zero} ms was "
                           f"still in flight", (_show(live[0], zero), _show(ex, zero)))
        pending = [p for p in pending if p.ended is None or p.ended > ex.sent] + [ex]
    return None


def _generations(client, exs, zero, max_poll, stopped, reactions) -> Optional[Finding]:
    """heartbeat- and commit-carries-current-generation."""
    # (time answered, generation, member id, trace position of the answer)
    given: List[Tuple[int, int, str, int]] = []  # of successful JoinGroups
    told: List[Tuple[int, int, str, int]] = []  # of answers saying that generation or member id is gone
    for ex in exs:
        body = ex.request["body"]
        if ex.api in ("Heartbeat", "OffsetCommit"):
            generation, member = body.get("generation_id", -1), body.get("member_id", "")
            rule = "heartbeat-carries-current-generation" if ex.api == "Heartbeat" else "commit-carries-current-generation"
            if ex.api == "OffsetCommit" and generation < 0 and not member:
                pass  # a commit outside the group's generations (Kafka: a manually assigned consumer)
            elif ex.api == "Heartbeat" and (generation < 0 or not member):
                return Finding(rule, client, ex.sent - zero, f"{client} sent a Heartbeat without a generation "
                               f"(generation {generation}, member id {member!r})", (_show(ex, zero),))
            else:
                known = [g for g in given if g[0] + WINDOW_MS <= ex.sent_after]
                if generation < 0:
                    return Finding(rule, client, ex.sent - zero,
                                   f"{client} sent {_a(ex.api)} with generation {generation} and its member id {member!r}: "
                                   f"a group member's {ex.api} outside a stable generation (Kafka's consumer fails "
                                   f"it locally)", (_show(ex, zero),))
                if not any(g[1] == generation and g[2] == member for g in given if g[0] <= ex.sent):
                    return Finding(rule, client, ex.sent - zero,
                                   f"{client} sent {_a(ex.api)} with generation {generation} and member id {member!r}, "
                                   f"which no JoinGroup answer had given it", (_show(ex, zero),))
                if known and (known[-1][1], known[-1][2]) != (generation, member) and known[-1][1] > generation:
                    return Finding(rule, client, ex.sent - zero,
                                   f"{client} sent {_a(ex.api)} with generation {generation} at least "
                                   f"{ex.sent_after - known[-1][0]} ms after a JoinGroup answer had given it generation "
                                   f"{known[-1][1]}", (_show(ex, zero),))
                gone = [t for t in told if t[0] + WINDOW_MS <= ex.sent_after and t[1] == generation and t[2] == member]
                # given again after it was told (trace order: the same millisecond is no tie)
                if gone and not any(g[3] > gone[-1][3] and g[1] == generation for g in given):
                    return Finding(rule, client, ex.sent - zero,
                                   f"{client} sent {_a(ex.api)} with generation {generation} at least "
                                   f"{ex.sent_after - gone[-1][0]} ms after the coordinator had answered that its "
                                   f"generation or member id was gone",
                                   (_show(ex, zero),))
        if ex.response is not None:
            error = ex.error
            if ex.api == "JoinGroup" and error == 0:
                response = ex.response["body"]
                given.append((ex.answered, response["generation_id"], response["member_id"], ex.answered_position))
            elif ex.api in ("Heartbeat", "SyncGroup", "OffsetCommit") and not ex.maybe_unread \
                    and error in reactions.errors(ex.api, "resets_generation"):
                told.append((ex.answered, body.get("generation_id", -1), body.get("member_id", ""), ex.answered_position))
    return None


def _current_generation(exs: List[_Exchange], at: int, position: Optional[int] = None) -> Optional[Tuple[int, str]]:
    """The (generation, member id) of the client's latest JoinGroup answer written by *at* (before
    trace line *position*, when given)."""
    current = None
    for ex in exs:
        if ex.api == "JoinGroup" and ex.answered is not None and ex.answered <= at and ex.error == 0 \
                and (position is None or ex.answered_position < position):
            current = (ex.response["body"]["generation_id"], ex.response["body"]["member_id"])
    return current


def _rejoin_after_error(client, exs, zero, max_poll, stopped, reactions) -> Optional[Finding]:
    """An error after which the model's member rejoins (and needs no coordinator lookup first: that
    wait is the rediscover rule's) is followed by a JoinGroup within the bound."""
    bound = max_poll + REJOIN_SLACK_MS
    for ex in exs:
        if ex.api not in ("Heartbeat", "SyncGroup", "OffsetCommit") or ex.maybe_unread or \
                ex.error not in _told_to_rejoin(ex.api, reactions):
            continue
        body = ex.request["body"]
        if ex.api == "OffsetCommit" and body.get("generation_id", -1) < 0:
            continue
        if _current_generation(exs, ex.answered) != (body.get("generation_id"), body.get("member_id")) \
                and ex.api != "SyncGroup":
            continue  # an answer for an older generation asks nothing of the current one
        deadline = ex.answered + bound
        if stopped is not None and stopped < deadline:
            continue
        # read after the answer was written (trace order: the same millisecond is no tie)
        rejoined = any(j.api in ("JoinGroup", "LeaveGroup") and j.position > ex.answered_position and j.sent <= deadline
                       for j in exs)
        if not rejoined:
            return Finding("rejoin-after-error", client, ex.answered - zero,
                           f"{client} was answered error {ex.error} to its {ex.api} of its current generation and "
                           f"sent no JoinGroup within {bound} ms (max.poll.interval.ms + {REJOIN_SLACK_MS})",
                           (_show(ex, zero),))
    return None


def _member_id_kept(client, exs, zero, max_poll, stopped, reactions) -> Optional[Finding]:
    member: Optional[str] = None
    released: Optional[int] = None  # when the client was told (or said) its member id is gone
    for ex in exs:
        body = ex.request["body"]
        if ex.api == "JoinGroup" and not body.get("member_id") and member is not None:
            if released is None or released > ex.sent:
                return Finding("member-id-kept-until-told", client, ex.sent - zero,
                               f"{client} rejoined without its member id {member!r}, though no answer had told it the "
                               f"id was unknown and it had not left the group", (_show(ex, zero),))
            member, released = None, None
        if ex.api == "LeaveGroup":
            released = ex.sent if released is None else min(released, ex.sent)
        if ex.response is None:
            continue
        response = ex.response["body"]
        if ex.api == "JoinGroup" and ex.error in (0, _MEMBER_ID_REQUIRED) and response.get("member_id") \
                and not ex.maybe_unread:
            # an answer on a connection the client closed right after it was written may never have
            # been read: the member id in it was not given (the Java consumer, seed 161: a Heartbeat
            # answered NOT_COORDINATOR made it drop the coordinator's connection, and the
            # MEMBER_ID_REQUIRED answer to its JoinGroup, written 2 ms before, with it;
            # ConsumerNetworkClient.disconnectAsync fails the in-flight request unread)
            if response["member_id"] != member:
                member, released = response["member_id"], None
        elif ex.error and _releases_member_id(ex, member, reactions,
                                              _current_generation(exs, ex.answered, ex.answered_position)):
            # the earliest telling counts: exchanges come in send order, but an answer on a held
            # connection can arrive after the answers to requests sent later on a new one (the
            # Java consumer, seed 51: told at 10.85 s on its new connection, rejoined at 10.9 s;
            # the old connection's Heartbeat, sent first, was answered at 12.9 s)
            released = ex.answered if released is None else min(released, ex.answered)
    return None


def _releases_member_id(ex: _Exchange, member: Optional[str], reactions: Reactions, current) -> bool:
    """Whether *ex*'s error answer tells the client its member id *member* is gone: the model's member
    resets its member id on it (on an answer to a request of its *current* (generation, member id),
    or of an older one), or it is an error older clients also reset on, or the answer to a
    LeaveGroup naming the member."""
    body = ex.request["body"]
    if ex.api == "LeaveGroup":
        return ex.error in (_UNKNOWN_MEMBER_ID, _ILLEGAL_GENERATION) and any(
            m.get("member_id") == member for m in body.get("members") or ())
    if ex.api not in SENT_FROM or body.get("member_id") != member:
        return False
    fresh = ex.api == "JoinGroup" or current == (body.get("generation_id"), member)
    return ex.error in reactions.errors(ex.api, "resets_member_id", current=fresh) + LEGACY_MEMBER_ID_RESETS


def _rediscover(client, exs, zero, max_poll, stopped, reactions) -> Optional[Finding]:
    """After a coordinator error, the next group request must have been sent after the client
    received the answer to a FindCoordinator it sent after the error. A request the broker read
    before it wrote that answer (trace order, so also within one millisecond and across
    connections) was sent before the client could have read it."""
    for i, ex in enumerate(exs):
        if ex.api not in GROUP_REQUESTS + ("OffsetFetch",) or ex.maybe_unread or ex.error not in (
                reactions.errors(ex.api, "rediscover") if ex.api in SENT_FROM else (_NOT_COORDINATOR, _COORDINATOR_NOT_AVAILABLE)):
            continue
        lookup_answered = None  # trace position of the answer to a FindCoordinator sent after the error
        for later in exs[i + 1:]:
            if later.api == "FindCoordinator" and later.position > ex.answered_position:
                if later.response is not None and lookup_answered is None:
                    lookup_answered = later.answered_position
                continue
            if later.api not in GROUP_REQUESTS or later.sent_after <= ex.answered + WINDOW_MS:
                continue
            if lookup_answered is not None and later.position > lookup_answered:
                break
            lookup = "" if lookup_answered is None else " (its FindCoordinator had not been answered yet)"
            return Finding("rediscover-after-coordinator-error", client, later.sent - zero,
                           f"{client} was answered error {ex.error} (the coordinator moved or is unavailable) and "
                           f"sent {_a(later.api)} {later.sent - ex.answered} ms later before finding the coordinator "
                           f"again{lookup}", (_show(ex, zero), _show(later, zero)))
    return None


def _told_to_rejoin(api: str, reactions: Reactions) -> Tuple[int, ...]:
    """The errors answering *api* after which the model's member rejoins without looking the
    coordinator up first (for the APIs the model does not send as a member: the membership errors)."""
    if api not in SENT_FROM:
        return (_UNKNOWN_MEMBER_ID, _ILLEGAL_GENERATION, _REBALANCE_IN_PROGRESS)
    return tuple(set(reactions.errors(api, "rejoin")) - set(reactions.errors(api, "rediscover")))


def _heartbeats_continue(client, exs, zero, session_ms, stopped, holds, reactions) -> Optional[Finding]:
    """The longest stretch in which the member held a generation, had nothing in flight, was not
    held by a fault, and sent nothing, must stay under ``session.timeout.ms``."""
    busy = sorted([(ex.sent, ex.ended if ex.ended is not None else stopped) for ex in exs] + holds)
    holding_from = None
    for i, ex in enumerate(exs):
        if holding_from is not None:
            silent = _silent_from(holding_from, ex.sent, busy)
            found = silent_finding(client, zero, silent, session_ms, ex) if silent is not None else None
            if found is not None:
                return found
        if ex.api in ("JoinGroup", "LeaveGroup"):
            holding_from = None
        if ex.response is not None and ex.api == "JoinGroup" and ex.error == 0:
            holding_from = ex.answered
        elif ex.response is not None and ex.error in _told_to_rejoin(ex.api, reactions):
            holding_from = None  # told to rejoin: rejoin-after-error judges what comes next
        elif holding_from is not None and ex.ended is not None:
            holding_from = max(holding_from, ex.ended)

    if holding_from is not None and stopped is not None:
        silent = _silent_from(holding_from, stopped, busy)
        if silent is not None:
            return silent_finding(client, zero, silent, session_ms, None)
    return None


def silent_finding(client, zero, silent, session_ms, next_request) -> Optional[Finding]:
    lo, hi = silent
    if hi - lo <= session_ms:
        return None
    after = f"until its {next_request.api} at {next_request.sent - zero} ms" if next_request else "until it was stopped"
    return Finding("heartbeats-continue", client, lo - zero,
                   f"{client} held a generation and sent nothing for {hi - lo} ms (from {lo - zero} ms {after}), "
                   f"longer than session.timeout.ms={session_ms}: no heartbeat, nothing in flight, no fault holding it",
                   (_show(next_request, zero),) if next_request else ())


def _assignment_partitions(response: dict) -> Optional[List[int]]:
    assignment = response.get("assignment")
    if not isinstance(assignment, dict):
        return None
    out = []
    for tp in assignment.get("partitions") or ():
        if isinstance(tp, (list, tuple)) and len(tp) == 2:  # a TopicPartition: [topic, partition]
            out.append(tp[1])
        elif isinstance(tp, dict):
            out.append(tp["partition"])
    return sorted(out)


def _assignments(client, exs, events, zero) -> Optional[Finding]:
    syncs = [(ex.answered, _assignment_partitions(ex.response["body"])) for ex in exs
             if ex.api == "SyncGroup" and ex.response is not None and ex.error == 0]
    owned: Optional[List[int]] = None
    for e in events:
        if e["event"] in ("revoked", "lost"):
            owned = sorted(set(owned or []) - set(e["partitions"]))
        elif e["event"] == "assigned" and not e.get("incremental"):
            latest = [s for s in syncs if s[0] <= e["wall_ms"]]
            if latest and latest[-1][1] is not None and sorted(e["partitions"]) != latest[-1][1]:
                return Finding("assignment-matches-sync", client, e["wall_ms"] - zero,
                               f"{client}'s onPartitionsAssigned got {sorted(e['partitions'])}, its latest SyncGroup "
                               f"answer (at {latest[-1][0] - zero} ms) assigned {latest[-1][1]}")
            if owned:
                return Finding("assignment-matches-sync", client, e["wall_ms"] - zero,
                               f"{client}'s onPartitionsAssigned came while it still owned {owned} (eager: revoked "
                               f"or lost first)")
            owned = sorted(e["partitions"])
    return None


def _revoke_before_rejoin(client, exs, events, zero) -> Optional[Finding]:
    """Every JoinGroup is read after the callbacks that emptied the member's assignment (the
    runner stamps a callback when the library calls it, before the library can send anything
    after it; both clocks are this machine's wall clock)."""
    changes = []  # (time, partitions owned from then on)
    owned: List[int] = []
    for e in events:
        if e["event"] in ("revoked", "lost"):
            owned = sorted(set(owned) - set(e["partitions"]))
        elif e["event"] == "assigned":
            owned = sorted(set(owned) | set(e["partitions"])) if e.get("incremental") else sorted(e["partitions"])
        else:
            continue
        changes.append((e["wall_ms"], owned, e["event"]))
    if any(e.get("incremental") for e in events if e["event"] == "assigned"):
        return None  # cooperative: a member keeps what it is not asked to give up
    for ex in exs:
        if ex.api != "JoinGroup":
            continue
        # a callback in the same millisecond as the JoinGroup's read: a revocation may have come
        # first (and is the client's due), an assignment cannot have (it answers a later SyncGroup)
        before = [o for t, o, kind in changes if t < ex.sent or (t == ex.sent and kind != "assigned")]
        if before and before[-1]:
            return Finding("revoke-before-rejoin", client, ex.sent - zero,
                           f"{client} sent a JoinGroup while its callbacks said it still owned partitions {before[-1]} "
                           f"(eager: revoked or lost first)", (_show(ex, zero),))
    return None


def _carries_instance_id(client, instance, exs, zero) -> Optional[Finding]:
    """static-member-carries-instance-id: the first request that drops the static member's instance id."""
    for ex in exs:
        since = INSTANCE_ID_FROM.get(ex.api)
        if since is None:
            continue
        version = ex.request.get("version")
        carried = ex.request["body"].get("group_instance_id")
        if version is not None and version < since:
            what = "it joined as a dynamic member" if ex.api == "JoinGroup" else \
                "the coordinator cannot fence it by its instance"
            return Finding("static-member-carries-instance-id", client, ex.sent - zero,
                           f"static member {client} (group.instance.id {instance!r}) sent {ex.api} v{version}, "
                           f"which has no group.instance.id (v{since}+): {what}",
                           (_show(ex, zero),))
        if carried != instance:
            return Finding("static-member-carries-instance-id", client, ex.sent - zero,
                           f"static member {client} sent {ex.api} v{version} with group.instance.id {carried!r}, "
                           f"not {instance!r}", (_show(ex, zero),))
    return None


def _does_not_leave(client, instance, exs, zero) -> Optional[Finding]:
    """static-member-does-not-leave: a LeaveGroup from a static member."""
    for ex in exs:
        if ex.api == "LeaveGroup":
            return Finding("static-member-does-not-leave", client, ex.sent - zero,
                           f"static member {client} (group.instance.id {instance!r}) sent LeaveGroup: a static "
                           f"member's membership ends by session expiry only", (_show(ex, zero),))
    return None
