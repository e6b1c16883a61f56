"""z3 proofs of the timing arithmetic, in Java's 64-bit (and 32-bit) two's-complement integers.

Why: overflow and off-by-one bugs hide in timeouts and deadlines (Kafka has had both: a JoinGroup
request timeout that overflowed, expiry comparisons that were off by one). Each proof below takes
one computation as Kafka writes it — in ``long`` (64-bit) or ``int`` (32-bit) bit-vectors with
wrap-around — and proves it equal to the mathematical intent (computed exactly, in wider bit-vectors) over
the configuration domain Kafka accepts, or proves the exact boundary where the two part ways.

Domains (from Kafka's ConfigDef): ``request.timeout.ms`` INT ≥ 0; ``max.poll.interval.ms`` (the
rebalance timeout) INT ≥ 1; ``session.timeout.ms`` and ``heartbeat.interval.ms`` INT;
``group.initial.rebalance.delay.ms`` INT ≥ 0; ``retry.backoff.ms``, ``reconnect.backoff.ms``,
``metadata.max.age.ms`` LONG ≥ 0. Clock readings (``System.currentTimeMillis``, the model's
clocks) are in [0, Long.MAX_VALUE]; a proof says when it needs the clock not to go backwards.

Every proof has teeth: a broken variant of the computation (a guard removed, a comparison
flipped) for which z3 must return a counterexample (``tests/test_timing_proofs.py``).
"""

from __future__ import annotations

import time

import z3

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
W = 64
WIDE = 67  # exact arithmetic for sums and differences of up to three 64-bit values (|x| < 3·2^63 < 2^66)


def long(name):
    return z3.BitVec(name, W)


def wide(x):
    """Exact (mathematical) value of a signed bit-vector, widened to WIDE bits."""
    return z3.SignExt(WIDE - x.size(), x)


def L(v):
    return z3.BitVecVal(v, W)


def Wv(v):
    return z3.BitVecVal(v, WIDE)


def jmax(a, b):
    return z3.If(a > b, a, b)  # signed comparison, as Java's Math.max


def jmin(a, b):
    return z3.If(a < b, a, b)


def in_range(x, lo, hi):
    return z3.And(x >= lo, x <= hi)


def int_to_long(x32):
    return z3.SignExt(W - 32, x32)


class TimingProof:
    """One computation: ``claim(broken)`` returns (domain, goal); proved when domain ∧ ¬goal is
    unsat. ``boundary`` states where the computation stops meaning what it should (proved as part
    of the goal when not None)."""

    def __init__(self, name, statement, source, claim, kafka, boundary, teeth):
        self.name, self.statement, self.source = name, statement, source
        self.claim, self.kafka, self.boundary, self.teeth = claim, kafka, boundary, teeth

    def check(self, broken: bool = False, timeout_ms: int = 60_000):
        domain, goal = self.claim(broken)
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        s.add(domain, z3.Not(goal))
        start = time.perf_counter()
        verdict = s.check()
        seconds = time.perf_counter() - start
        if verdict == z3.unsat:
            return "proved", seconds, None
        if verdict == z3.sat:
            m = s.model()
            cex = {d.name(): m[d].as_signed_long() for d in m.decls() if z3.is_bv_sort(m[d].sort())}
            return "counterexample", seconds, cex
        return "unknown", seconds, s.reason_unknown()


# ---------------------------------------------------------------------------------------------
# ConsumerNetworkClient.failExpiredRequests: max(0, now - created) > requestTimeoutMs
# ---------------------------------------------------------------------------------------------


def _unsent_expiry(broken):
    now, created, t32 = long("now"), long("created"), z3.BitVec("timeout", 32)
    timeout = int_to_long(t32)
    elapsed = jmax(L(0), now - created)
    expired = elapsed >= timeout if broken else elapsed > timeout
    # Intent: failed exactly when it waited strictly longer than its timeout (never when the clock
    # went back); the model writes max(0, now - created) > timeout over unbounded integers.
    waited = wide(now) - wide(created)
    intent = z3.And(waited > 0, waited > wide(timeout))
    domain = z3.And(in_range(now, 0, LONG_MAX), in_range(created, 0, LONG_MAX), in_range(t32, 0, INT_MAX))
    return domain, expired == intent


def _inflight_timeout(broken):
    now, sent, t32 = long("now"), long("sent"), z3.BitVec("timeout", 32)
    timeout = int_to_long(t32)
    # NetworkClient: timeElapsedSinceSend = max(0, now - sendTimeMs) > requestTimeoutMs. The
    # model writes now - sent > timeout (no max): equal because the timeout is never negative.
    kafka = jmax(L(0), now - sent) > timeout
    model = (now - sent >= timeout) if broken else (now - sent > timeout)  # broken: MockClient's >=
    intent = wide(now) - wide(sent) > wide(timeout)
    domain = z3.And(in_range(now, 0, LONG_MAX), in_range(sent, 0, LONG_MAX), in_range(t32, 0, INT_MAX))
    return domain, z3.And(kafka == intent, model == intent)


# ---------------------------------------------------------------------------------------------
# AbstractCoordinator: JoinGroup request timeout = max(request.timeout.ms, rebalance timeout + 5000)
# ---------------------------------------------------------------------------------------------

LAPSE = 5000
JOIN_BOUNDARY = INT_MAX - LAPSE  # 2147478647: the largest rebalance timeout whose + 5000 fits an int


def _join_timeout(broken):
    req, rt = z3.BitVec("request_timeout", 32), z3.BitVec("rebalance_timeout", 32)
    lapse = z3.BitVecVal(LAPSE, 32)
    if broken:  # the unguarded form: max(request timeout, rebalance timeout + 5000)
        kafka = jmax(req, rt + lapse)
    else:  # max(request timeout, max(rebalance timeout + 5000, rebalance timeout))
        kafka = jmax(req, jmax(rt + lapse, rt))
    # The model's guard (model.config.join_group_request_timeout), over unbounded integers.
    w_req, w_rt = z3.SignExt(32, req), z3.SignExt(32, rt)
    w_lapse = z3.BitVecVal(LAPSE, 64)
    model = z3.If(w_rt > z3.BitVecVal(JOIN_BOUNDARY, 64), jmax(w_req, w_rt), jmax(w_req, w_rt + w_lapse))
    # Intent: never below the request timeout nor the rebalance timeout (the coordinator may hold
    # the JoinGroup that long); the full lapse exactly when it fits an int.
    result = z3.SignExt(32, kafka)
    intent = z3.And(result >= w_req, result >= w_rt,
                    z3.If(w_rt <= z3.BitVecVal(JOIN_BOUNDARY, 64), result == jmax(w_req, w_rt + w_lapse),
                          result == jmax(w_req, w_rt)),
                    result == model)
    domain = z3.And(in_range(req, 0, INT_MAX), in_range(rt, 1, INT_MAX))
    return domain, intent


# ---------------------------------------------------------------------------------------------
# Server deadlines: session (DelayedHeartbeat), rebalance (DelayedJoin, DelayedSync), initial delay
# ---------------------------------------------------------------------------------------------

DEADLINE_CLOCK_MAX = LONG_MAX - INT_MAX  # clocks up to here never overflow now + an int timeout


def _server_deadline(broken):
    now, t32 = long("now"), z3.BitVec("timeout", 32)
    deadline = now + int_to_long(t32)  # DelayedOperation: hiResClockMs + delayMs, in long
    exact = wide(now) + wide(int_to_long(t32))
    clock_max = LONG_MAX if broken else DEADLINE_CLOCK_MAX
    # Intent: the deadline is exactly now + timeout (the model's unbounded sum), never in the past.
    domain = z3.And(in_range(now, 0, clock_max), in_range(t32, 0, INT_MAX))
    return domain, z3.And(wide(deadline) == exact, deadline >= now)


def _server_deadline_boundary(broken):
    """Exactly where now + timeout wraps: above Long.MAX - timeout."""
    now, t32 = long("now"), z3.BitVec("timeout", 32)
    timeout = int_to_long(t32)
    wraps = wide(now + timeout) != wide(now) + wide(timeout)
    edge = now > L(LONG_MAX) - timeout
    if broken:
        edge = now >= L(LONG_MAX) - timeout
    domain = z3.And(in_range(now, 0, LONG_MAX), in_range(t32, 0, INT_MAX))
    return domain, wraps == edge


def _initial_delay(broken):
    """InitialDelayedJoin: each extension waits min(delay, remaining) and leaves
    max(remaining - delay, 0) (Kafka subtracts the configured delay); waited + remaining is
    invariant, so the first rebalance of an empty group never waits more than
    max(group.initial.rebalance.delay.ms, rebalance timeout). Inductive step over Kafka's ints;
    ``waited`` is a ghost counter, exact in 34 bits (it never exceeds Int.MAX)."""
    d32, r32, rt32 = z3.BitVec("delay", 32), z3.BitVec("remaining", 32), z3.BitVec("rebalance_timeout", 32)
    x34 = lambda v: z3.SignExt(2, v)  # noqa: E731
    waited = z3.BitVec("waited", 34)
    step = jmin(d32, r32)
    if broken:
        step = d32  # the extension waits a full delay even when less remains
    waited2 = waited + x34(step)
    r2 = jmax(r32 - d32, z3.BitVecVal(0, 32))
    bound = x34(jmax(d32, rt32))
    inv = lambda w, r: z3.And(in_range(r, 0, INT_MAX), w >= 0, w + x34(r) <= bound)  # noqa: E731
    # Initially: waited = delay, remaining = max(rebalance timeout - delay, 0) (no int overflow:
    # the int difference equals the exact one).
    r0 = jmax(rt32 - d32, z3.BitVecVal(0, 32))
    exact_r0 = jmax(x34(rt32) - x34(d32), z3.BitVecVal(0, 34))
    init = z3.And(x34(r0) == exact_r0, inv(x34(d32), r0))
    domain = z3.And(in_range(d32, 0, INT_MAX), in_range(rt32, 0, INT_MAX), in_range(waited, 0, INT_MAX))
    return domain, z3.And(init, z3.Implies(z3.And(inv(waited, r32), r32 != 0), inv(waited2, r2)))


# ---------------------------------------------------------------------------------------------
# Client timers: Timer.reset saturates at Long.MAX; heartbeat, session and poll due times
# ---------------------------------------------------------------------------------------------


def _timer_reset(broken):
    """Timer.reset: deadline = now + timeout, saturating at Long.MAX_VALUE (timeouts are longs:
    poll(Long.MAX_VALUE) is legal); expired ⇔ now ≥ deadline; remaining = max(0, deadline − now).
    Goal: for any later reading, expired ⇔ the timeout has elapsed, except at the saturated
    boundary now' = Long.MAX, and remaining never exceeds the timeout."""
    now, now2, timeout = long("now"), long("later"), long("timeout")
    if broken:
        deadline = now + timeout  # wraps negative: expired at once
    else:
        deadline = z3.If(now > L(LONG_MAX) - timeout, L(LONG_MAX), now + timeout)
    expired = now2 >= deadline
    remaining = jmax(L(0), deadline - now2)
    elapsed_enough = wide(now2) - wide(now) >= wide(timeout)
    saturated_edge = z3.And(now2 == L(LONG_MAX), wide(now) + wide(timeout) > Wv(LONG_MAX))
    goal = z3.And(expired == z3.Or(elapsed_enough, saturated_edge),
                  remaining >= 0, wide(remaining) <= wide(timeout))
    domain = z3.And(in_range(now, 0, LONG_MAX), in_range(now2, 0, LONG_MAX), now2 >= now, in_range(timeout, 0, LONG_MAX))
    return domain, goal


def _commit_sync_sleep(broken):
    """commitOffsetsSync's ``timer.sleep(retryBackoff.backoff(attempts++))`` after a retriable
    failure: Timer.sleep sleeps min(backoff, remainingMs()) (the model's and CommitOffsetsSync's
    ``sleep_until = now + min(backoff, max(0, deadline - now))``). Goal: the wake-up time is exact
    (no overflow) and never past the timer's (saturated) deadline, so a commitSync never overstays
    its timeout by a backoff; with the timer expired it sleeps 0."""
    now, timeout, backoff = long("now"), long("timeout"), long("backoff")
    deadline = z3.If(now > L(LONG_MAX) - timeout, L(LONG_MAX), now + timeout)
    remaining = jmax(L(0), deadline - now)
    slept = backoff if broken else jmin(backoff, remaining)
    wake = now + slept
    goal = z3.And(wide(wake) == wide(now) + wide(slept), wide(wake) <= wide(deadline),
                  z3.Implies(remaining == 0, slept == 0))
    domain = z3.And(in_range(now, 0, LONG_MAX), in_range(timeout, 0, LONG_MAX), in_range(backoff, 0, LONG_MAX))
    return domain, goal


def _heartbeat_due(broken):
    """Heartbeat: sentHeartbeat resets the heartbeat timer to heartbeat.interval.ms;
    timeToNextHeartbeat = remaining ∈ [0, interval]; a heartbeat is due (shouldHeartbeat) exactly
    when interval ms have passed — the model's ``now >= heartbeat_due_ms`` over unbounded ints."""
    now, now2, i32 = long("sent"), long("later"), z3.BitVec("interval", 32)
    interval = int_to_long(i32)
    deadline = z3.If(now > L(LONG_MAX) - interval, L(LONG_MAX), now + interval)
    remaining = (deadline - now2) if broken else jmax(L(0), deadline - now2)
    due = now2 >= deadline
    model_due = wide(now2) >= wide(now) + wide(interval)
    domain = z3.And(in_range(now, 0, DEADLINE_CLOCK_MAX), in_range(now2, 0, LONG_MAX), now2 >= now,
                    in_range(i32, 1, INT_MAX))
    return domain, z3.And(remaining >= 0, remaining <= interval, due == model_due, due == (remaining == 0))


# ---------------------------------------------------------------------------------------------
# Metadata.timeToNextUpdate and the poll timeout
# ---------------------------------------------------------------------------------------------


def _metadata(broken):
    """Metadata.timeToNextUpdate = max(timeToExpire, timeToAllowUpdate), each of the form
    max(last + d − now, 0) in long (timeToExpire: lastSuccessfulRefreshMs + metadata.max.age.ms;
    timeToAllowUpdate: lastRefreshMs + the refresh backoff); timeToExpire is 0 when an update is
    requested. The max of exact non-negative terms is exact, so one term is the whole proof."""
    now, last, d = long("now"), long("last_refresh"), long("max_age_or_backoff")
    raw = last + d - now
    kafka = raw if broken else jmax(raw, L(0))
    exact = jmax(wide(last) + wide(d) - wide(now), Wv(0))
    domain = z3.And(*[in_range(x, 0, LONG_MAX) for x in (now, last, d)], last <= now)
    return domain, z3.And(wide(kafka) == exact, kafka >= 0)


def _metadata_boundary(broken):
    """With the clock gone back below the last refresh, timeToExpire overflows exactly when
    metadata.max.age.ms > Long.MAX − (lastSuccessfulRefresh − now); Java then reads 0 (refresh
    due now) where the intent is a long wait."""
    now, last_ok, expire = long("now"), long("last_success"), long("max_age")
    wraps = wide(last_ok + expire - now) != wide(last_ok) + wide(expire) - wide(now)
    edge = wide(expire) > Wv(LONG_MAX) - (wide(last_ok) - wide(now))
    if broken:
        edge = wide(expire) >= Wv(LONG_MAX) - (wide(last_ok) - wide(now))
    domain = z3.And(*[in_range(x, 0, LONG_MAX) for x in (now, last_ok, expire)], last_ok > now)
    return domain, wraps == edge


def _poll_timeout(broken):
    """ConsumerNetworkClient.poll: min(timer.remaining, trySend's pollDelay), capped at
    retry.backoff.ms when nothing is in flight; trySend's pollDelay = min(maxPollTimeout (≤ 5000),
    connectionDelay) with connectionDelay = max(reconnectBackoff − (now − lastAttempt), 0). Then
    NetworkClient.poll waits min(timeout, metadataTimeout, request.timeout.ms). Goal: the wait is
    in [0, 5000], at most the timer's remaining time and, with nothing in flight, at most the
    retry backoff — no overflow turns it negative or huge."""
    now, last_attempt, reconnect, remaining, retry, meta = (
        long(n) for n in ("now", "last_attempt", "reconnect_backoff", "timer_remaining", "retry_backoff", "metadata_timeout"))
    r32 = z3.BitVec("request_timeout", 32)
    in_flight = z3.Bool("in_flight")
    connection_delay = jmax(reconnect - (now - last_attempt), L(0))
    poll_delay = jmin(L(5000), connection_delay)
    timeout = jmin(remaining, poll_delay)
    if not broken:
        timeout = z3.If(z3.And(z3.Not(in_flight), retry < timeout), retry, timeout)
    wait = jmin(jmin(timeout, meta), int_to_long(r32))
    domain = z3.And(*[in_range(x, 0, LONG_MAX) for x in (now, last_attempt, reconnect, remaining, retry, meta)],
                    last_attempt <= now, in_range(r32, 0, INT_MAX))
    goal = z3.And(wait >= 0, wait <= 5000, wait <= remaining, z3.Implies(z3.Not(in_flight), wait <= retry))
    return domain, goal


PROOFS = (
    TimingProof("unsent-expiry", "an unsent request is failed exactly when max(0, now - created) > timeout "
                "(strict), in long arithmetic, equals 'waited strictly longer than its timeout' (never when the "
                "clock went back)", "protocol.md §4.1 failExpiredRequests", _unsent_expiry,
                "max(0, now - createdTimeMs) > requestTimeoutMs", None, "expiry with >= instead of >"),
    TimingProof("inflight-timeout", "an in-flight request times out exactly when now - sendTime > timeout; Kafka's "
                "max(0, ...) and the model's plain difference agree (the timeout is never negative)",
                "protocol.md §4.1 (NetworkClient in-flight timeouts)", _inflight_timeout,
                "max(0, now - sendTimeMs) > requestTimeoutMs", None, "MockClient's >= instead of >"),
    TimingProof("join-request-timeout", "JoinGroup's request timeout max(request.timeout.ms, max(rebalance + 5000, "
                "rebalance)) in int is never below either timeout, adds the full 5000 ms exactly when "
                "rebalance timeout <= 2147478647, and equals the model's guarded form",
                "protocol.md §3.3 sendJoinGroupRequest", _join_timeout,
                "max(requestTimeoutMs, max(rebalanceTimeoutMs + 5000, rebalanceTimeoutMs)) (int)",
                f"rebalance timeout > {JOIN_BOUNDARY}: rebalance + 5000 wraps negative; the guard falls back to the rebalance timeout itself",
                "the unguarded max(request timeout, rebalance timeout + 5000)"),
    TimingProof("server-deadlines", "session, new-member, DelayedJoin and DelayedSync deadlines now + timeout (long) "
                f"are exact and in the future for clocks up to Long.MAX - Int.MAX = {DEADLINE_CLOCK_MAX}",
                "protocol.md §1.5, §1.7, §1.12", _server_deadline, "hiResClockMs + delayMs (long)",
                f"clock > {DEADLINE_CLOCK_MAX} (~292 million years of epoch ms)", "the whole clock range"),
    TimingProof("server-deadline-boundary", "now + timeout wraps exactly when now > Long.MAX - timeout",
                "protocol.md §1.12", _server_deadline_boundary, "hiResClockMs + delayMs (long)",
                "now > Long.MAX_VALUE - timeout", ">= instead of >"),
    TimingProof("initial-rebalance-delay", "InitialDelayedJoin's extensions keep waited + remaining constant: the "
                "first rebalance of an empty group never waits more than max(initial delay, rebalance timeout), "
                "and remaining = max(rebalance - delay, 0) never overflows an int", "protocol.md §1.5",
                _initial_delay, "delay' = min(delay, remaining); remaining' = max(remaining - delay, 0)", None,
                "an extension that waits the full delay"),
    TimingProof("timer-reset", "Timer.reset saturates at Long.MAX: expired <=> the timeout has elapsed, except at the "
                "single reading now = Long.MAX_VALUE of a saturated timer; remaining in [0, timeout]",
                "protocol.md §3.5 (Timer)", _timer_reset, "deadline = now > MAX - timeout ? MAX : now + timeout",
                "a saturated timer (now + timeout > Long.MAX) reads expired at now = Long.MAX_VALUE",
                "reset without saturation"),
    TimingProof("commit-sync-backoff", "commitSync's retry sleep, min(backoff, remaining) after a retriable failure, "
                "wakes at an exact time never past the timer's deadline (a commitSync never overstays its timeout by "
                "a backoff), and sleeps 0 once the timer has expired", "ConsumerCoordinator.commitOffsetsSync, Timer.sleep",
                _commit_sync_sleep, "time.sleep(Math.min(durationMs, remainingMs()))", None,
                "sleeping the full backoff"),
    TimingProof("heartbeat-due", "timeToNextHeartbeat is in [0, heartbeat.interval.ms] and a heartbeat is due exactly "
                "when the interval has elapsed (the model's now >= due)", "protocol.md §3.5",
                _heartbeat_due, "heartbeatTimer.remainingMs()", None, "remaining without max(0, ...)"),
    TimingProof("metadata-time-to-next-update", "Metadata.timeToNextUpdate = max(timeToExpire, timeToAllowUpdate) "
                "in long equals its exact value and is >= 0 for any metadata.max.age.ms and backoff "
                "(intermediate overflow of lastRefresh + maxAge wraps back) while the clock does not go back",
                "protocol.md §4.4", _metadata, "max(lastSuccessfulRefreshMs + metadataExpireMs - nowMs, 0), max(lastRefreshMs + backoff - nowMs, 0)",
                "see metadata-clock-back", "timeToExpire without max(..., 0)"),
    TimingProof("metadata-clock-back", "with the clock behind lastSuccessfulRefresh, timeToExpire overflows exactly "
                "when metadata.max.age.ms > Long.MAX - (lastSuccessfulRefresh - now)", "protocol.md §4.4",
                _metadata_boundary, "lastSuccessfulRefreshMs + metadataExpireMs - nowMs (long)",
                "max.age > Long.MAX - (lastSuccessfulRefresh - now): Java reads 0 (refresh now)", ">= instead of >"),
    TimingProof("poll-timeout", "ConsumerNetworkClient/NetworkClient poll timeout is in [0, 5000], at most the timer's "
                "remaining time, and at most retry.backoff.ms with nothing in flight", "protocol.md §4.1 poll",
                _poll_timeout, "min(timer.remaining, pollDelay), capped at retryBackoff; min(.., metadata, request timeout)",
                None, "no retry-backoff cap"),
)


def prove_timing(names=None) -> list:
    """Rows for the proof table: each computation proved (and its teeth checked)."""
    rows = []
    for proof in PROOFS:
        if names and proof.name not in names:
            continue
        result, seconds, info = proof.check()
        teeth, teeth_seconds, cex = proof.check(broken=True)
        reason = "proved over the domain" if result == "proved" else f"{result}: {info}"
        if proof.boundary:
            reason += f"; boundary: {proof.boundary}"
        reason += f"; teeth ({proof.teeth}): {teeth}"
        rows.append({"property": f"timing: {proof.name}", "bound": "64-bit long / 32-bit int, Kafka config domain",
                     "result": result, "seconds": round(seconds + teeth_seconds, 3), "invariants": [],
                     "reason": reason, "teeth": teeth, "teeth_counterexample": cex})
    return rows
