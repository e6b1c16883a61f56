"""Run one schedule against a broker and judge every answer.

:func:`run_schedule` finds the group's coordinator, asks it for its ApiVersions, and then plays
the schedule one step at a time: the step's request is written on its member's connection, and
every frame that arrives on any member's connection is collected until the step's own answer is
in and the connections have been quiet for ``settle_ms`` — or, for a request the broker parks
(a JoinGroup or SyncGroup waiting for the others), until ``park_ms`` pass. The judge then decides
whether some model state allows exactly those answers; when none does, the divergence is
recorded and the judge goes on from the broker's answers. A broker that closes or resets a
connection, or answers with bytes that do not decode, is a finding too (a ``failure:``
divergence); the member opens a new connection for its next step. Only a broker that stops
accepting connections ends the schedule (:attr:`Result.failure`).

Schedules without timers set the session and rebalance timeouts to 30 s and are over long before;
the model runs with the broker's profile (minimum and maximum session timeout, initial rebalance
delay, which must be 0 here) and the JoinGroup version the broker and groupcheck agreed on.
"""

from __future__ import annotations

import re
import selectors
import time
from typing import Callable, Dict, List, Optional, Tuple

import attrs

from impl import protocol as P
from impl.wire import CODEC_VERSIONS, NodeApiVersions, api_versions_retry_version
from impl.wire.apis import kio_class
from impl.wire.build import build, to_plain
from model.config import Config
from properties.conform.judge import Divergence, Judge, canonical_observed
from properties.conform.members import TOPIC, Link, VirtualMember
from properties.live.exchange import Unreachable
from properties.conform.schedule import Schedule, Step
from properties.targets import Profile

GROUP_APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit")
#: how long a ``pause (short)`` step keeps the broker stopped
PAUSE_MS = 1000
#: the request a ``cut`` step writes, per variant: (action, variant of that action)
CUT_VARIANTS = {"join": "same", "sync": "current", "heartbeat": "current", "commit": "current", "leave": None}


@attrs.frozen
class Timing:
    """The timeouts of a schedule and how its timers are judged. Without timers (the default) the
    timeouts are long, nothing but a zero initial delay fires, and the judgement is deterministic;
    with timers they are short, schedules wait past them, and a timer may fire anywhere within
    ``tolerance_ms`` of its deadline (the broker's clock, its timer wheel and the network's delay)."""

    timers: bool = False
    session_timeout_ms: int = 30_000
    rebalance_timeout_ms: int = 30_000
    tolerance_ms: Optional[int] = None
    short_wait_ms: int = 300
    long_wait_ms: int = 0

    @classmethod
    def with_timers(cls, tolerance_ms: int = 250) -> "Timing":
        """A 2 s session timeout and a 1.5 s rebalance timeout, waits of 300 ms and 2.6 s (past
        both), timers judged within *tolerance_ms* (a profile's ``timing.timer_tolerance_ms``).
        The rebalance timeout is the shorter one so that it, not the session of a member that
        does not rejoin or sync, ends a join or sync phase: DelayedJoin's and DelayedSync's expiry
        are decisions of their own (with equal timeouts the session, armed earlier, always won)."""
        return cls(True, 2_000, 1_500, tolerance_ms, 300, 2_600)


NO_TIMERS = Timing()


FAILURE = "failure: "


def failure_signature(what: str) -> str:
    """The signature of a broker failure: what happened, without the member, ids and bytes."""
    return FAILURE + re.sub(r" \([^)]*\)", "", what).split(":")[0]


def _divergences(value) -> Tuple[Divergence, ...]:
    """None, one divergence, or several, as the tuple :class:`Result` keeps."""
    if value is None:
        return ()
    if isinstance(value, Divergence):
        return (value,)
    return tuple(value)


@attrs.frozen
class Result:
    """One schedule's outcome: every divergence in it, in order (the judge goes on past each), and
    the failure that ended it, if one did."""

    schedule: Schedule
    group_id: str
    divergences: Tuple[Divergence, ...] = attrs.field(converter=_divergences)
    failure: Optional[str]  # the broker closed a connection, sent undecodable bytes, or stopped answering
    steps_run: int  # the steps played: all of them, or up to the failure
    trace: Tuple[dict, ...]
    versions: Tuple[Tuple[str, int], ...]
    # (api, group state when the request arrived, answer) of every step answered as the model does
    decisions: Tuple[Tuple[str, str, str], ...] = ()

    @property
    def divergence(self) -> Optional[Divergence]:
        """The schedule's first divergence (the others may only follow from it)."""
        return self.divergences[0] if self.divergences else None

    @property
    def verdict(self) -> str:
        if self.failure or any(d.signature.startswith(FAILURE) for d in self.divergences):
            return "failure"
        return "divergence" if self.divergences else "conforms"

    def failure_signature(self) -> Optional[str]:
        return failure_signature(self.failure) if self.failure else None

    def signature(self) -> Optional[str]:
        """What ended or first broke the schedule: its failure, else its first divergence."""
        if self.failure:
            return self.failure_signature()
        return self.divergence.signature if self.divergence else None

    def signatures(self) -> Tuple[str, ...]:
        """Every distinct signature in the schedule, in the order first seen (a failure last)."""
        found = [d.signature for d in self.divergences] + ([self.failure_signature()] if self.failure else [])
        return tuple(dict.fromkeys(found))

    def step_of(self, signature: str) -> int:
        """The step at which *signature* first showed."""
        for d in self.divergences:
            if d.signature == signature:
                return d.step
        return self.steps_run

    def first_of(self, signature: str) -> Optional[Divergence]:
        return next((d for d in self.divergences if d.signature == signature), None)


class BrokerFailure(Exception):
    """What the broker did that is a finding on its own (closed, undecodable, no answer)."""


def _versions(address, timeout_s: float, caps: Dict[str, int]) -> NodeApiVersions:
    """ApiVersions at v3, and again at the broker's version after an UNSUPPORTED_VERSION answer in a
    v0 body (``NetworkClient.handleApiVersionsResponse``)."""
    version = CODEC_VERSIONS["ApiVersions"][1]
    for _ in range(2):
        link = Link(address, -1, 0, "groupcheck-conform", timeout_s)
        try:
            response = _round_trip(link, P.ApiVersionsRequestData(), version, timeout_s)
        finally:
            link.close()
        if response.error_code == 0:
            return NodeApiVersions.from_response(response, caps)
        retry = api_versions_retry_version(version, response)
        if retry is None or retry == version:
            break
        version = retry
    raise BrokerFailure(f"ApiVersions v{version} answered error {response.error_code}")


def _round_trip(link: Link, request, version: int, timeout_s: float):
    link.send(request, version)
    deadline = time.monotonic() + timeout_s
    sel = selectors.DefaultSelector()
    sel.register(link.sock, selectors.EVENT_READ)
    try:
        while time.monotonic() < deadline:
            sel.select(min(0.05, max(0.0, deadline - time.monotonic())))
            for event in link.read():
                if event[0] == "response":
                    return event[3]
                if event[0] == "undecodable":
                    raise BrokerFailure(f"undecodable {event[1]} v{event[2]} answer: {event[3]}")
                raise BrokerFailure(f"{request.api_key}: {event[1]}")
        raise BrokerFailure(f"{request.api_key} v{version}: no answer within {timeout_s:.0f} s")
    finally:
        sel.close()


def find_coordinator(bootstrap: Tuple[str, int], group_id: str, timeout_s: float) -> Tuple[str, int]:
    versions = _versions(bootstrap, timeout_s, {})
    version = versions.usable_version("FindCoordinator")
    if version is None:
        raise BrokerFailure("no FindCoordinator version both sides support")
    deadline = time.monotonic() + timeout_s
    link = Link(bootstrap, -1, 0, "groupcheck-conform", timeout_s)
    try:
        while True:
            found = _round_trip(link, P.FindCoordinatorRequestData(key=group_id), version, timeout_s)
            coordinator = found.coordinators[0] if getattr(found, "coordinators", None) else found
            # a retriable answer is asked again after retry.backoff.ms, as a consumer does
            # (AbstractCoordinator.ensureCoordinatorReady): Kafka answers COORDINATOR_NOT_AVAILABLE
            # while it creates __consumer_offsets on the first lookup (KafkaApis.getCoordinator)
            if coordinator.error_code not in RETRIABLE_LOOKUP or time.monotonic() + LOOKUP_BACKOFF_S > deadline:
                break
            time.sleep(LOOKUP_BACKOFF_S)
    finally:
        link.close()
    if coordinator.error_code != 0:
        raise BrokerFailure(f"FindCoordinator({group_id}) answered error {coordinator.error_code}")
    return coordinator.host, coordinator.port


#: FindCoordinator errors a consumer retries: COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE
RETRIABLE_LOOKUP = (14, 15)
LOOKUP_BACKOFF_S = 0.1  # retry.backoff.ms's default


#: The first version of each group API that carries group.instance.id (KIP-345).
STATIC_MIN_VERSIONS = {"JoinGroup": 5, "SyncGroup": 3, "Heartbeat": 3, "OffsetCommit": 7, "LeaveGroup": 3}
STATIC_JOIN_CAP = 8
STATIC_UNSUPPORTED = "static members need group.instance.id"


def model_config(profile: Profile, schedule: Schedule, join_version: int, timing: "Timing" = None) -> Config:
    timers = timing is not None and timing.timers
    return Config(brokers=1, clients=schedule.members, partitions=schedule.partitions, topic=TOPIC,
                  min_session_timeout_ms=profile.timers_min_session_timeout_ms if timers
                  else profile.min_session_timeout_ms,
                  max_session_timeout_ms=profile.max_session_timeout_ms,
                  initial_rebalance_delay_ms=profile.initial_rebalance_delay_ms,
                  join_group_version=min(join_version, 9), static_clients=schedule.static,
                  new_group_coordinator=profile.new_group_coordinator)


def run_schedule(bootstrap: Tuple[str, int], schedule: Schedule, group_id: str, profile: Profile,
                 park_ms: int = 250, settle_ms: int = 25, timeout_s: float = 10.0,
                 timing: Timing = NO_TIMERS, failover: Optional[Callable[[str], Tuple[int, Tuple[str, int]]]] = None,
                 pause: Optional[Callable[[int], None]] = None,
                 restart: Optional[Callable[[str], Tuple[str, int]]] = None) -> Result:
    """Play *schedule* against the broker at *bootstrap* with group *group_id*, judging every
    answer; a divergence is recorded and judging goes on from the broker's answers
    (:func:`properties.conform.judge.adopt`); a broker failure on a connection (closed, reset,
    undecodable) is recorded and the member reconnects; only a broker that no longer accepts
    connections ends the schedule (``Result.failure``). Raises :class:`Unreachable` if nothing
    listens there at the start. *failover(group)*
    (a cluster's ``kill_coordinator``) kills the group's coordinator and returns (its node id, the
    address of the node that took over); without it a ``failover`` step is skipped. *pause(ms)*
    (a launched broker's) stops the broker's process for *ms* and resumes it; without it a
    ``pause`` step is skipped."""
    trace: List[dict] = []
    start = time.monotonic()
    now_ms = lambda: int((time.monotonic() - start) * 1000)  # noqa: E731
    caps = dict(profile.caps)
    if schedule.static:
        # the model answers a static member's Stable rejoin the pre-v9 way (JoinGroup v9's
        # SkipAssignment, KIP-814, is not modelled): static schedules speak JoinGroup v8 at most
        caps["JoinGroup"] = min(caps.get("JoinGroup", STATIC_JOIN_CAP), STATIC_JOIN_CAP)
    try:
        address = find_coordinator(bootstrap, group_id, timeout_s)
        versions = _versions(address, timeout_s, caps)
    except BrokerFailure as e:
        return Result(schedule, group_id, None, str(e), 0, tuple(trace), ())
    chosen: Dict[str, int] = {}
    for api in GROUP_APIS:
        v = versions.usable_version(api)
        if v is None:
            return Result(schedule, group_id, None, f"no {api} version both groupcheck {CODEC_VERSIONS.get(api)} "
                          f"and the broker {versions.version_range(api)} support", 0, tuple(trace), ())
        chosen[api] = v
    if schedule.static:
        short = [f"{api} v{chosen[api]} (v{low}+)" for api, low in STATIC_MIN_VERSIONS.items() if chosen[api] < low]
        if short:
            return Result(schedule, group_id, None, f"{STATIC_UNSUPPORTED}, which the versions both sides support "
                          f"do not carry: {', '.join(short)}", 0, tuple(trace), ())
    describe_version = versions.usable_version("DescribeGroups")  # None: the broker does not offer it
    if describe_version is not None:
        chosen["DescribeGroups"] = describe_version
    fetch_version = versions.usable_version("OffsetFetch")
    if fetch_version is not None:
        chosen["OffsetFetch"] = fetch_version
    judge = Judge(model_config(profile, schedule, chosen["JoinGroup"], timing), profile.generation_offset,
                  timing.tolerance_ms)
    members = [VirtualMember(i, group_id, schedule.protocols[i], schedule.partitions, timing.session_timeout_ms,
                             timing.rebalance_timeout_ms, schedule.instance_id(i)) for i in range(schedule.members)]
    sel = selectors.DefaultSelector()
    version_list = tuple(sorted(chosen.items()))

    def record(member: VirtualMember, epoch: int, direction: str, api: str, version: int, body) -> None:
        trace.append({"t_ms": now_ms(), "member": member.index, "connection": epoch, "direction": direction,
                      "api": api, "version": version, "body": to_plain(body)})

    def finish(step_index: int, failure=None) -> Result:
        for m in members:
            if m.link is not None:
                m.link.close()
        sel.close()
        return Result(schedule, group_id, tuple(judge.divergences), failure, step_index, tuple(trace), version_list,
                      tuple(sorted(judge.decisions)))

    def hang_up(m: VirtualMember) -> int:
        """Close *m*'s connection on this side: neither the member nor the judge hears from it again
        (its epoch returned); the member opens a new one for its next step."""
        epoch = m.link.epoch
        judge.close(m.index, epoch)
        sel.unregister(m.link.sock)
        m.link.close()
        return epoch

    def failed(index: int, failures) -> None:
        """Broker failures of a step (a closed connection, an undecodable answer): findings of
        their own; the judge drops that connection's answers, and the schedule goes on."""
        for m, epoch, what in failures:
            judge.close(m, epoch)
            judge.divergences.append(Divergence(index, what, failure_signature(what), (), ()))
            trace.append({"t_ms": now_ms(), "member": m, "connection": epoch, "note": f"broker failure: {what}"})

    def noted(divergence, member: VirtualMember) -> None:
        """A divergence is recorded (by the judge) and the schedule goes on from the broker's answers."""
        if divergence is not None:
            trace.append({"t_ms": now_ms(), "member": member.index,
                          "note": f"divergence: {divergence.signature} (judging on from the broker's answers)"})

    try:
        index = 0
        for index, scheduled in enumerate(schedule.steps):
            for step in expand(scheduled, schedule.members):
                member = members[step.member]
                if step.action == "disconnect":
                    if member.link is None or member.link.closed:
                        trace.append({"t_ms": now_ms(), "member": member.index, "note": "disconnect: no open connection"})
                        continue
                    trace.append({"t_ms": now_ms(), "member": member.index, "connection": hang_up(member),
                                  "note": "disconnected"})
                    continue
                if step.action in ("failover", "restart"):
                    if (failover if step.action == "failover" else restart) is None:
                        trace.append({"t_ms": now_ms(), "member": member.index, "note": (
                            "failover skipped: the broker is a single node" if step.action == "failover" else
                            "restart skipped: not a broker groupcheck started with storage it keeps")})
                        continue
                    for m in members:  # the coordinator's connections die with its node
                        if m.link is not None and not m.link.closed:
                            hang_up(m)
                    try:
                        if step.action == "failover":
                            killed, address = failover(group_id)
                            note = (f"failover: node {killed} killed; node at {address[0]}:{address[1]} "
                                    "coordinates the group")
                        else:
                            address = restart(group_id)
                            note = "restart: the broker killed (SIGKILL) and started again on its storage"
                    except RuntimeError as e:
                        return finish(index, failure=f"{step.action}: {e}")
                    judge.failover(now_ms(), group_id)
                    trace.append({"t_ms": now_ms(), "member": member.index, "note": note})
                    continue
                if step.action == "pause":
                    if pause is None:
                        trace.append({"t_ms": now_ms(), "member": member.index,
                                      "note": "pause skipped: not a broker process groupcheck started"})
                        continue
                    duration = timing.long_wait_ms if step.variant == "long" else PAUSE_MS
                    started_at = now_ms()
                    trace.append({"t_ms": started_at, "member": member.index,
                                  "note": f"broker paused (SIGSTOP) for {duration} ms"})
                    pause(duration)
                    trace.append({"t_ms": now_ms(), "member": member.index, "note": "broker resumed (SIGCONT)"})
                    observed, failures = _collect(sel, members, None, None, park_ms, settle_ms, record,
                                                  profile.generation_offset)
                    failed(index, failures)
                    noted(judge.step(index, None, 0, None, None, started_at, "", observed, end=now_ms()), member)
                    continue
                if step.action == "wait":
                    if not timing.timers:
                        trace.append({"t_ms": now_ms(), "member": member.index, "note": "wait skipped: timers are off"})
                        continue
                    duration = timing.long_wait_ms if step.variant == "long" else timing.short_wait_ms
                    started_at = now_ms()
                    trace.append({"t_ms": started_at, "member": member.index, "note": f"waiting {duration} ms"})
                    observed, failures = _collect(sel, members, None, None, duration, settle_ms, record,
                                                  profile.generation_offset)
                    failed(index, failures)
                    noted(judge.step(index, None, 0, None, None, started_at, "", observed, end=now_ms()), member)
                    continue
                if step.action == "describe" and describe_version is None:
                    trace.append({"t_ms": now_ms(), "member": member.index,
                                  "note": "describe skipped: the broker does not offer DescribeGroups"})
                    continue
                if step.action == "fetch" and fetch_version is None:
                    trace.append({"t_ms": now_ms(), "member": member.index,
                                  "note": "fetch skipped: no OffsetFetch version both sides support"})
                    continue
                if member.busy and not all(m.busy for m in members):
                    trace.append({"t_ms": now_ms(), "member": member.index,
                                  "note": f"skipped {step.describe()}: a request is still parked"})
                    continue
                if member.busy:
                    # every member waits on a parked request: nothing else would ever run. The
                    # member gives up as a client whose request timed out does (NetworkClient's
                    # request timeout closes the connection; the coordinator keeps the member) and
                    # sends its step on a new connection
                    trace.append({"t_ms": now_ms(), "member": member.index, "connection": hang_up(member),
                                  "note": "gave up on its parked request (every member was waiting): disconnected"})
                if member.link is None or member.link.closed:
                    member.epochs += 1
                    member.link = Link(address, member.index, member.epochs, member.client_id, timeout_s)
                    sel.register(member.link.sock, selectors.EVENT_READ, member)
                cut = step.action == "cut"
                if step.action == "describe":
                    api = "DescribeGroups"
                    request = build(kio_class(api, describe_version, "request"),
                                    {"groups": [group_id], "include_authorized_operations": False})
                elif cut:
                    request = member.request(step.variant, CUT_VARIANTS[step.variant])
                    api = request.api_key
                else:
                    request = member.request(step.action, step.variant)
                    api = request.api_key
                sent_at = now_ms()
                record(member, member.link.epoch, "request", api, chosen[api], request)
                try:
                    correlation = member.link.send(request, chosen[api], step.variant, api)
                except OSError as e:  # the broker reset the connection under the write: not read
                    failed(index, [(member.index, hang_up(member), f"the broker reset the connection (m{member.index}'s, "
                                                         f"writing {api}: {e.strerror or e})")])
                    continue
                if cut:  # closed right after writing: read by the broker or not, its answer is never read
                    trace.append({"t_ms": now_ms(), "member": member.index, "connection": hang_up(member),
                                  "note": "connection cut right after the request"})
                    observed, failures = _collect(sel, members, None, None, settle_ms, settle_ms, record,
                                                  profile.generation_offset)
                else:
                    observed, failures = _collect(sel, members, member, correlation, park_ms, settle_ms, record,
                                                  profile.generation_offset)
                failed(index, failures)
                noted(judge.step(index, api, chosen[api], request, (member.index, member.link.epoch), sent_at,
                                 member.client_id, observed, end=now_ms() if timing.timers else None,
                                 maybe_unread=cut), member)
        return finish(len(schedule.steps))
    except Unreachable as e:  # a member could not connect again: the broker is gone
        return finish(index, failure=str(e))


def expand(step: Step, members: int) -> List[Step]:
    """The steps one schedule step stands for: itself, or for a ``round`` every member in turn
    (from the step's member on): every member rejoins, or every member syncs — what real clients
    do together after a rebalance starts, which random single steps rarely line up."""
    if step.variant != "round":
        return [step]
    action, variant = ("join", "same") if step.action == "join" else ("sync", "current")
    return [Step((step.member + i) % members, action, variant) for i in range(members)]


def _collect(sel, members, member, correlation, park_ms, settle_ms, record, generation_offset=0):
    """Every answer until the step's own answer is in and the connections were quiet for
    *settle_ms*, or *park_ms* passed without it (a parked request). A connection the broker
    closes, or on which it answers bytes that do not decode, is closed here and reported in the
    failures — ``[(member, connection epoch, what happened)]`` — and the collecting goes on with the
    other connections: the member opens a new one for its next step, as a client does."""
    observed: List[tuple] = []
    failures: List[tuple] = []
    started = time.monotonic()
    answered_at: Optional[float] = None
    last_frame = started
    while True:
        now = time.monotonic()
        if answered_at is not None and now - last_frame >= settle_ms / 1000:
            break
        if answered_at is None and now - started >= park_ms / 1000:
            break
        wait = (settle_ms / 1000 - (now - last_frame)) if answered_at is not None else (park_ms / 1000 - (now - started))
        for key, _ in sel.select(max(0.001, wait)):
            m = key.data
            link = m.link
            for event in link.read():
                if event[0] == "response":
                    _, api, version, body, variant = event
                    record(m, link.epoch, "response", api, version, body)
                    m.learn(api, body, variant)
                    observed.append(((m.index, link.epoch), canonical_observed(api, version, body, generation_offset)))
                    last_frame = time.monotonic()
                    if m is member and correlation not in link.inflight:
                        answered_at = last_frame
                    continue
                if event[0] == "undecodable":
                    what = f"undecodable {event[1]} v{event[2]} answer (to m{m.index}): {event[3]}"
                else:
                    what = f"{event[1]} (m{m.index}'s connection)"
                failures.append((m.index, link.epoch, what))
                sel.unregister(link.sock)
                link.close()
                last_frame = time.monotonic()
                if m is member:
                    answered_at = last_frame
                break
    return observed, failures
