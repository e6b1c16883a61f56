"""The seeded walker for KIP-848 worlds: seed → schedule → verdict.

A walk draws ``steps`` events from those :func:`model.kip848.world.offers` enables, weighted so
that the protocol's own traffic dominates and at most ``max_faults`` disruptions happen (a lost
message, a timeout, a close, a crash, a long tick), checking every ``always`` property after each
event. Then the disruptions stop and :func:`settle` gives the world quiet time, a round at a time
(every consumer polls and heartbeats, every message is delivered, 100 ms pass), long enough for
every timer a fault may have left (a session, a rebalance timeout, a poll timer, a request
timeout) to run out twice; then ``kip848-converges`` is checked. The schedule is the events applied:
:func:`replay` repeats a run exactly, and the trace hash (over the schedule and every world's
canonical form) proves it. A campaign's walks leave the hash out (``hash_trace=False``: it is more
than half of a walk's time); the walk of a seed kept as a counterexample is taken again with it.
"""

from __future__ import annotations

import hashlib
import random

import attrs

from model.kip848.world import initial_world, offers, step
from properties.catalogue import Violation
from properties.kip848.catalogue import HAZARD, KIND_OF, Checker, converged

DEFAULT_STEPS = 150
QUIET_ROUND_MS = 250

# the weight of each kind in a walk's draw; faults are rationed by max_faults as well
_WEIGHTS = {"poll": 6, "heartbeat": 8, "commit": 2, "deliver": 8, "receive": 8, "tick": 4, "timeout": 2,
            "lose": 1, "close": 0.3, "crash": 0.3, "restart": 1}
_FAULTS = ("lose", "close", "crash")


@attrs.frozen
class Result:
    seed: int
    schedule: tuple
    verdict: str  # "ok" | "counterexample" | "hazard" (a known hazard of Kafka's own: catalogue.HAZARDS)
    violation: Violation | None
    step: int | None  # index of the failing event, or None
    trace_hash: str | None  # None for a walk(hash_trace=False): walk or replay again to get it
    world: object
    walked: int  # events before the quiet phase
    coverage: dict = attrs.field(factory=dict)  # corner (see COVERAGE) -> times reached


# The corners a campaign should reach (the KIP-848 world's sometimes properties): the consumer's
# member states, the coordinator's member states, each error answer, each way a member is fenced,
# and a heartbeat at the member's previous epoch accepted (a lost answer recovered).
COVERAGE = (
    "consumer RECONCILING", "consumer ACKNOWLEDGING", "consumer FENCED", "consumer STALE", "consumer LEAVING",
    "member UNREVOKED_PARTITIONS", "member UNRELEASED_PARTITIONS",
    "answer FENCED_MEMBER_EPOCH", "answer UNKNOWN_MEMBER_ID", "commit accepted", "commit STALE_MEMBER_EPOCH",
    "fenced: left", "fenced: session expired", "fenced: rebalance timeout",
    "previous epoch accepted",
    "static member left", "static member replaced", "answer UNRELEASED_INSTANCE_ID",
    "consumer same partitions acknowledged", "consumer rejoined while reconciling",
)


def canonical(value):
    """A world (or any part) with every set sorted: the same text in any process."""
    if isinstance(value, frozenset):
        return tuple(sorted(value))
    if isinstance(value, tuple):
        return tuple(canonical(v) for v in value)
    return value


class _Run:
    """One walk in progress: the world, the checker, the schedule, the trace digest, coverage, and
    with *impl* impl/'s coordinator and consumers beside the model's (:mod:`properties.kip848.differential`)."""

    def __init__(self, config, impl: bool = False, hash_trace: bool = True):
        from properties.kip848.differential import Differential

        self.config = config
        self.world = initial_world(config)
        self.checker = Checker(config)
        self.differential = Differential(config) if impl else None
        self.schedule: list = []
        self.digest = hashlib.sha256() if hash_trace else None
        self.violation: Violation | None = None
        self.coverage = dict.fromkeys(COVERAGE, 0)

    def _cover(self, new, log) -> None:
        for corner in _corners(self.world, new, log):
            if corner in self.coverage:
                self.coverage[corner] += 1

    def apply(self, event) -> bool:
        """Step *event*; False once a property failed."""
        new, log = step(self.world, event, self.config)
        if new is self.world:
            return True
        self.schedule.append(tuple(event))
        if self.digest is not None:
            self.digest.update(repr((tuple(event), canonical(new))).encode())
        self.violation = self.checker.check(self.world, new, event, log)
        if self.differential is not None and (self.violation is None or KIND_OF[self.violation.property] == HAZARD):
            # impl/ is compared on a hazard's step too: its disagreement there is a counterexample
            self.violation = self.differential.after(self.world, event, new, log) or self.violation
        self._cover(new, log)
        self.world = new
        return self.violation is None


def swarm(rng: random.Random, config):
    """One seed's world and mix (swarm testing): the partition count and every timeout drawn
    from values that reach each timer's corner in a walk, the weights of the fault kinds, and
    whether one consumer's application stops polling from some event on (its poll timer runs out;
    it is slow to revoke). Returns (config, weights by kind, (the stalled consumer, from which
    event) or None)."""
    session = rng.choice((2000, 3000, 6000))
    config = attrs.evolve(
        config, partitions=rng.choice((1, 2, 3, 4, 6)), session_timeout_ms=session,
        heartbeat_interval_ms=rng.choice((500, 1000)) if session > 1000 else 500,
        max_poll_interval_ms=rng.choice((2500, 4000, 8000)), request_timeout_ms=rng.choice((800, 1500, 3000)))
    weights = dict(_WEIGHTS, lose=rng.choice((0, 1, 3)), timeout=rng.choice((1, 3)), tick=rng.choice((2, 4, 8)),
                   close=rng.choice((0, 0.3)), crash=rng.choice((0, 0.3)))
    stall = (rng.randrange(config.clients), rng.randrange(20, 100)) if rng.random() < 0.5 else None
    return config, weights, stall


def seed_world(seed: int, config, rng: random.Random | None = None):
    """A swarm seed's (config, weights by kind, stall): :func:`swarm` drawn from *rng* (the walk's
    generator, a fresh one seeded by *seed* if None), its server assignor (:func:`server_assignor`),
    then its static members, unless *config* sets them (:func:`static_members`). What a replay of a
    seed's schedule needs to rebuild its world."""
    config, weights, stall = swarm(random.Random(seed) if rng is None else rng, config)
    config = attrs.evolve(config, assignor=server_assignor(seed))
    if not config.static:
        config = attrs.evolve(config, static=static_members(seed, config))
    if config.static:  # rolling restarts are what static membership is for: a close in every such world
        weights = dict(weights, close=0.6)
    return config, weights, stall


def server_assignor(seed: int) -> str:
    """A seed's server assignor: ``uniform`` (Kafka's default, sticky) in half the worlds, ``range``
    in the others. Drawn from a generator of its own (seeded by text), so that the worlds it leaves
    with ``range`` walk exactly as they did before the uniform assignor was modelled."""
    return "uniform" if random.Random(f"kip848-assignor/{seed}").random() < 0.5 else "range"


def static_members(seed: int, config) -> int:
    """How many of a seed's consumers are static members: one world in three has from one to all
    of them. Drawn from a generator of its own (seeded by text: the same in every process), so
    that the worlds of the seeds it leaves dynamic walk exactly as they did before static members
    were modelled."""
    rng = random.Random(f"kip848-static/{seed}")
    return rng.randint(1, config.clients) if rng.random() < 1 / 3 else 0


def _corners(world, new, log):
    for entry in log:
        if entry[0] == "transition":
            yield f"consumer {entry[3]}"
        elif entry[0] == "fenced":
            yield f"fenced: {entry[2]}"
        elif entry[0] == "static_left":
            yield "static member left"
        elif entry[0] == "same_partitions_acknowledged":
            yield "consumer same partitions acknowledged"
        elif entry[0] == "reconciliation_abandoned":
            yield "consumer rejoined while reconciling"
        elif entry[0] == "static_replaced":
            yield "static member replaced"
        elif entry[0] == "commit_answered":
            yield "commit accepted" if entry[3] == "NONE" else f"commit {entry[3]}"
        elif entry[0] == "answered":
            request, response = entry[3], entry[4]
            if response.error != "NONE":
                yield f"answer {response.error}"
            elif request.epoch > 0:
                member = world.group.member(request.member_id)
                if member is not None and request.epoch == member.previous_epoch < member.epoch:
                    yield "previous epoch accepted"
    for m in new.group.members:
        if m.state != "STABLE":
            yield f"member {m.state}"


def walk(seed: int, config, steps: int = DEFAULT_STEPS, max_faults: int = 4, swarm_world: bool = True,
         impl: bool = False, hash_trace: bool = True) -> Result:
    """One seeded walk. With *swarm_world* (the default) the seed also draws the world's partitions
    and timeouts and the mix (:func:`swarm`); *config* gives the clients and the broken variants;
    with *impl*, impl/'s coordinator runs beside the model's and must agree with it (the schedule
    and the trace hash are the model's either way). *hash_trace* = False leaves the trace hash
    out (None), for campaigns: the same walk with it gives the same schedule, verdict and coverage."""
    rng = random.Random(seed)
    weights_by_kind, stall = _WEIGHTS, None
    if swarm_world:
        config, weights_by_kind, stall = seed_world(seed, config, rng)
    run = _Run(config, impl, hash_trace)
    faults = 0
    while len(run.schedule) < steps:
        enabled = [e for e in offers(run.world, config) if e[0] not in _FAULTS or faults < max_faults]
        stalled = stall is not None and len(run.schedule) >= stall[1]
        weights = [0.02 if stalled and e[0] == "poll" and e[1] == stall[0] else weights_by_kind[e[0]]
                   for e in enabled]
        event = rng.choices(enabled, weights)[0]
        long_tick = event[0] == "tick" and event[1] > 200  # a long silence is a fault too
        if long_tick and faults >= max_faults:
            event, long_tick = ("tick", 50), False
        if event[0] in _FAULTS or long_tick:
            faults += 1
        if not run.apply(event):
            return _result(seed, run, len(run.schedule))
    walked = len(run.schedule)
    settle(run)
    if run.violation is None:
        run.violation = converged(run.world, config)
        if run.violation is not None:
            return _result(seed, run, walked, failing=len(run.schedule) - 1)
    return _result(seed, run, walked, failing=None if run.violation is None else len(run.schedule) - 1)


def quiet_ms(config) -> int:
    """The quiet time a settle gives: every timer a fault can leave, run out twice."""
    return 2 * (config.session_timeout_ms + config.max_poll_interval_ms + config.request_timeout_ms)


def settle(run: _Run) -> None:
    """Quiet rounds: each consumer polls and heartbeats, every message in flight is delivered and
    read, expired heartbeats time out, then 100 ms pass."""
    config = run.config
    end = run.world.now + quiet_ms(config)
    while run.world.now < end:
        for c in range(config.clients):
            for event in (("poll", c), ("heartbeat", c)):
                if not run.apply(event):
                    return
            while run.world.requests[c] or run.world.responses[c]:
                event = ("deliver", c) if run.world.requests[c] else ("receive", c)
                if not run.apply(event):
                    return
            if not run.apply(("timeout", c)):
                return
        if not run.apply(("tick", QUIET_ROUND_MS)):
            return


def replay(schedule, config, eventually: bool = False, impl: bool = False, quiet: bool = False) -> Result:
    """Apply *schedule* as given (a walk's, quiet phase included): the verdict of its always
    properties (with *impl*, impl/'s agreement too), and with *eventually* of ``kip848-converges``
    at its end as well. With *quiet* the schedule is followed by the quiet phase a walk ends with
    (a directed schedule's, :mod:`properties.kip848.directed`)."""
    run = _Run(config, impl)
    for event in schedule:
        if not run.apply(tuple(event)):
            return _result(None, run, len(run.schedule))
    walked = len(run.schedule)
    if quiet:
        settle(run)
        if run.violation is not None:
            return _result(None, run, walked)
    if eventually:
        run.violation = converged(run.world, config)
    return _result(None, run, walked)


def _result(seed, run: _Run, walked: int, failing: int | None = -1) -> Result:
    if failing == -1:
        failing = len(run.schedule) - 1
    verdict = "ok" if run.violation is None else (
        "hazard" if KIND_OF.get(run.violation.property) == HAZARD else "counterexample")
    return Result(seed, tuple(run.schedule), verdict, run.violation, failing if run.violation else None,
                  None if run.digest is None else run.digest.hexdigest(), run.world, walked, run.coverage)
