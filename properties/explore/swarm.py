"""Swarm worlds: each interleaving draws its own world (issue 14, "Reach").

A fixed world (three clients, three brokers, six partitions, the exploration timeouts) never
enters the regimes where many real bugs live: long sessions, short new-member timeouts, a single
broker, the pre-v4 JoinGroup, long interleavings, no quiet time. Swarm testing (Groce et al.,
"Swarm Testing", ISSTA 2012) draws the configuration per test instead, so that one default
campaign covers them all without the user knowing which knob to turn.

:func:`draw` is a pure function of the seed: the same seed draws the same world in any process
and under any ``PYTHONHASHSEED`` (``random.Random`` seeded with a string hashes it with SHA-512).
Options the user gave explicitly are *pinned*: the draw keeps them and draws the rest. Each draw
names its regimes (``session=long``, ``join=v0``, ...) so that a report can say how many
interleavings, and how many failures, each regime had.
"""

from __future__ import annotations

import random

import attrs

from model.config import Config, ConfigError, parse_settings
from properties.explore.walker import DEFAULT_STEPS, MIXES

WORLDS = ("swarm", "fixed")

#: The fixed world's options (``--world fixed``; what run and walk use by default).
FIXED_WORLD = {"clients": 3, "brokers": 3, "partitions": 6, "steps": DEFAULT_STEPS, "faults": "all", "max_faults": 6}

#: (bucket, weight, (low, high) in ms) per timeout dimension; "default" is the fixed world's value.
_SESSION = (("short", 2, (1000, 3000)), ("default", 4, (6000, 6000)), ("long", 2, (20000, 60000)),
            ("very-long", 1, (300000, 300000)))
_REBALANCE = (("short", 2, (2000, 5000)), ("default", 4, (10000, 10000)), ("long", 1, (60000, 120000)))
_REQUEST = (("short", 2, (1000, 3000)), ("default", 4, (8000, 8000)), ("long", 1, (30000, 30000)))
_NEW_MEMBER = (("short", 1, (1000, 5000)), ("default", 3, (300000, 300000)))  # short: past the join wait
_INITIAL_DELAY = (("none", 2, (0, 0)), ("default", 3, (3000, 3000)), ("long", 1, (10000, 10000)))
_JOIN_VERSIONS = ((0, 1), (3, 1), (4, 1), (5, 3))
_ASSIGNORS = (((), 3), (("range",), 1), (("roundrobin",), 1), (("range", "roundrobin"), 1), (("roundrobin", "range"), 1))
_FAULTS = (("none", 1), ("network", 2), ("all", 4))
_STEPS = ((20, 1), (60, 3), (150, 2))
_QUIET = ((0.0, 1), (0.04, 3), (0.15, 1))
# One-way link latency: slow links keep requests in transit (where a broken connection can leave
# them for the broker to handle late) and answers in flight past the member's next move.
_LATENCY = (("fast", 4, (1, 1)), ("slow", 2, (20, 200)), ("very-slow", 1, (1000, 1500)))
# The fault mix (properties.explore.walker.MIXES): which disruptions, how often, how slowly a new
# coordinator loads the group. Drawn after the latency, so every earlier draw stays as it was.
_MIX = (("default", 4), ("heavy", 1), ("coordinator", 2), ("clients", 1), ("topics", 1))
# metadata.max.age.ms of a topics-mix world (partitions are added there: the clients must refresh
# to learn of them); every other world keeps the never-expiring default
_METADATA_AGE = ((1000, 1), (5000, 2), (30000, 1))
# How long the group leader's assignor runs: at once, or slow — a share (in tenths) of the shortest
# of the session, max.poll.interval.ms and request.timeout.ms. While it runs the leader's heartbeats
# wait and the group's CompletingRebalance phase stretches, which is where a coordinator failover
# leaves members a generation the new coordinator never stored. No longer than that: an assignor
# that outlasts the leader's session, its poll interval or its in-flight requests' timeout makes
# Kafka's own group rebalance for ever (the leader is expired, leaves, or loses its connection
# every time it assigns), a world where no group can settle.
_ASSIGNOR_DELAY = (("instant", 3, (0, 0)), ("slow", 2, (2, 5)))
# The share of JoinGroup v5+ worlds with static members (a quarter of all worlds), and of those with
# two static clients or more, the share where two processes share one instance id. Twins are where
# FENCED_INSTANCE_ID lives (GroupCoordinator's fencing of the older process of an instance id) and
# with it a third of the client's reachable error paths (properties/error_paths.py): at a third and a
# quarter (2.3 % of worlds, 46 of the default 2,000) the default campaign reached none of the nine
# FENCED_INSTANCE_ID cells; a campaign of 1,000 twin worlds reached eleven cells more (issue 37).
STATIC_CHANCE = 1 / 2
TWIN_CHANCE = 2 / 3


@attrs.frozen
class SwarmWorld:
    """One drawn world: the Config and the walk's parameters, and the regimes they fall in."""

    config: Config
    steps: int
    faults: str
    max_faults: int
    quiet_rate: float
    regimes: tuple  # ((dimension, bucket), ...), in a fixed dimension order
    mix: str = "default"  # the walk's fault mix (properties.explore.walker.MIXES)

    def walk_options(self) -> dict:
        """The walk's own parameters beyond config, steps and faults (for walk and systems.run)."""
        return {"max_faults": self.max_faults, "quiet_rate": self.quiet_rate, "mix": self.mix}

    def label(self) -> str:
        """``clients=3 brokers=1 session=long ...``: the regimes on one line."""
        return " ".join(f"{d}={b}" for d, b in self.regimes)


def _weighted(rng: random.Random, table):
    total = sum(row[1] for row in table)
    x = rng.randrange(total)
    for row in table:
        x -= row[1]
        if x < 0:
            return row
    raise AssertionError("unreachable")


def _timeout(rng: random.Random, table) -> tuple[str, int]:
    bucket, _, (low, high) = _weighted(rng, table)
    return bucket, low if low == high else rng.randrange(low, high + 1, 500)


def draw(seed: int, base: Config | None = None, pinned: dict | None = None) -> SwarmWorld:
    """The world of interleaving *seed*. *base* supplies what the swarm does not vary (topic,
    group id, broken variants, wire); *pinned* maps ``clients``, ``brokers``, ``partitions``,
    ``steps``, ``faults``, ``max_faults``, ``quiet_rate`` and ``settings`` (``--set`` items) to
    values the user chose, which the draw keeps (``--set`` applies after the draw, so it wins)."""
    base = base or Config()
    pinned = pinned or {}
    rng = random.Random(f"groupcheck-swarm:{seed}")
    regimes = []

    def pick(dimension, drawn, shown=None):
        if dimension in pinned and pinned[dimension] is not None:
            regimes.append((dimension, "pinned"))
            return pinned[dimension]
        regimes.append((dimension, str(drawn if shown is None else shown)))
        return drawn

    # every draw is made whether or not it is pinned, so a pin does not shift the others
    clients = pick("clients", rng.randrange(1, 6))
    brokers = pick("brokers", rng.randrange(1, 4))
    partitions = pick("partitions", rng.choice((1, 2, 3, 6, 8)))
    session_bucket, session = _timeout(rng, _SESSION)
    rebalance_bucket, rebalance = _timeout(rng, _REBALANCE)
    request_bucket, request = _timeout(rng, _REQUEST)
    new_member_bucket, new_member = _timeout(rng, _NEW_MEMBER)
    delay_bucket, delay = _timeout(rng, _INITIAL_DELAY)
    # Kafka's documentation: heartbeat.interval.ms "no higher than 1/3 of" session.timeout.ms. And of
    # the rebalance timeout too: members hear of a rebalance only from a heartbeat (or commit)
    # answer, so with heartbeats rarer than the rebalance timeout they miss every join window and
    # the group churns for ever (a world where eventually-stable is false in Kafka as well).
    heartbeat = max(100, min(session, rebalance) // rng.choice((3, 5, 10)))
    version = _weighted(rng, _JOIN_VERSIONS)[0]
    assignors = _weighted(rng, _ASSIGNORS)[0]
    coordinator_rebalance = rebalance
    if version == 0:
        # JoinGroup v0 has no rebalance timeout: the coordinator waits up to the session timeout
        # (JoinGroupRequest.maybeOverrideRebalanceTimeout), and Kafka 0.10.0's ConsumerConfig
        # required request.timeout.ms above session.timeout.ms so that a JoinGroup is not given up
        # on while the coordinator still waits (else each retry joins as one more new member)
        request = max(request, session + 5000)
        coordinator_rebalance = session
    # The client gives up on its JoinGroup after max(request.timeout.ms, rebalance timeout + 5 s)
    # (AbstractCoordinator.joinGroupTimeoutMs); an initial delay that long answers a lone first
    # member never (Kafka's defaults: 3 s against 30 s): a long delay stops a second short of it.
    from model.config import join_group_request_timeout

    delay = min(delay, join_group_request_timeout(request, rebalance) - 1000)
    if new_member_bucket == "short":
        # Kafka's is a constant 5 minutes (GroupCoordinator.NewMemberJoinTimeoutMs). Shorter than the
        # join phase a new member waits through (the initial delay, extended up to the rebalance
        # timeout), a lone new member expires before its join can complete, for ever: short means
        # a few seconds past that wait, so a new member that stalls is expired within a walk.
        new_member += delay + coordinator_rebalance
    faults = pick("faults", _weighted(rng, _FAULTS)[0])
    max_faults = pick("max_faults", rng.randrange(0, 11))
    steps = pick("steps", _weighted(rng, _STEPS)[0])
    quiet_rate = pick("quiet_rate", _weighted(rng, _QUIET)[0])
    latency_bucket, _, (low, high) = _weighted(rng, _LATENCY)  # drawn last: the earlier draws stay as they were
    latency = rng.randrange(low, high + 1, 10) if high > low else low
    # a tenth of the shortest timeout at most: a member needs several round trips per session and
    # per rebalance (with a round trip near the session timeout no Kafka group settles either)
    latency = max(1, min(latency, min(session, rebalance, request) // 10))
    latency_bucket = "fast" if latency <= 1 else "slow" if latency < 1000 else "very-slow"
    mix = _weighted(rng, _MIX)[0] if faults == "all" else "default"  # the mix chooses among all the faults
    regimes += [("session", session_bucket), ("rebalance", rebalance_bucket), ("request", request_bucket),
                ("new-member", new_member_bucket), ("initial-delay", delay_bucket), ("join", f"v{version}"),
                ("assignors", ",".join(assignors) or "alternating"), ("latency", latency_bucket),
                ("mix", mix)]
    fields = dict(
        clients=clients, brokers=brokers, partitions=partitions, session_timeout_ms=session,
        heartbeat_interval_ms=heartbeat, max_poll_interval_ms=rebalance, request_timeout_ms=request,
        new_member_join_timeout_ms=new_member, initial_rebalance_delay_ms=delay, join_group_version=version,
        assignors=assignors, latency_ms=latency)
    if mix == "topics":
        age = fields["metadata_max_age_ms"] = _weighted(rng, _METADATA_AGE)[0]  # drawn last of all
        regimes.append(("metadata-age", f"{age // 1000}s"))
        # a second topic its consumers change their subscriptions to and back (the walker's
        # subscribe events), with another partition count than the first's: no draw, so every
        # world keeps the draws it had
        second = fields["second_partitions"] = 2 + (partitions + 1) % 3
        regimes.append(("second-topic", f"{second}p"))
    assignor_bucket, _, (low, high) = _weighted(rng, _ASSIGNOR_DELAY)  # drawn last of all
    shortest = min(session, rebalance, request)
    fields["assignor_delay_ms"] = shortest * rng.randrange(low, high + 1) // 10 if high else 0
    regimes.append(("assignor", assignor_bucket))
    if new_member_bucket == "short" and rng.random() < 0.5:  # drawn after all the others
        # Half the short new-member timeouts fall below the rebalance timeout, past the initial
        # delay: a lone new member still joins in time, but one that arrives while the group waits
        # for a slow member expires before the join phase ends (Kafka's 5 minutes against a
        # max.poll.interval.ms raised above them), which is where KAFKA-9752's check lives. Not
        # shorter than the members already in the group need to rejoin once a new member starts a
        # rebalance (they hear of it at their next heartbeat, a slow leader after its assignor
        # returns, then a few round trips): a new member then expires before every join phase it
        # starts ends, rejoins and starts the next, and Kafka's own group never settles (seed 76:
        # heartbeat 1 s, assignor 1.2 s, 300 ms links, new members expiring after 1 s, 600
        # generations in the settle phase).
        rejoin = heartbeat + fields["assignor_delay_ms"] + 4 * latency
        low, high = max(delay, rejoin) + 1000, coordinator_rebalance - 1000
        if high > low:
            fields["new_member_join_timeout_ms"] = rng.randrange(low, high + 1, 500)
            regimes[regimes.index(("new-member", "short"))] = ("new-member", "below-rebalance")
    # Static members (KIP-345): in half the worlds whose JoinGroup carries group.instance.id (v5+)
    # some clients are static, and in two thirds of those with two or more, two processes share one
    # instance id (groupcheck.static.twins; STATIC_CHANCE, TWIN_CHANCE). Drawn after all the others
    # and only in v5 worlds, so every other world, and every earlier draw, stays as it was.
    #
    # Not in a mix that adds partitions (the topics mix): there Kafka's own group never covers them
    # once a static leader's process has restarted. The restarted leader rejoins the Stable group
    # with a new member id and is answered with the old leader's id (GroupCoordinator.updateStaticMemberAndRebalance:
    # leaderId = currentLeader, "so that the current leader won't assume itself as a leader"), while
    # the group makes the new id its leader (GroupMetadata.replaceStaticMember): no consumer believes
    # it leads, none watches the topic's metadata, and no rebalance follows the new partitions.
    # KAFKA-13435, fixed by KIP-814 (JoinGroup v9's SkipAssignment, Kafka 3.2), which the model does
    # not speak (the swarm draws JoinGroup v5 at most). Campaign seed 3577 of 2026-11-29 found it
    # (tests/systems/data/static_leader_unaware_partitions_added.json).
    static = twins = 0
    if version >= 5 and "add_partitions" not in MIXES[mix].kinds and rng.random() < STATIC_CHANCE:
        static = rng.randrange(1, clients + 1)
        twins = 1 if static >= 2 and rng.random() < TWIN_CHANCE else 0
        fields["static_clients"], fields["static_twins"] = static, twins
    regimes.append(("static", f"{static}+twin" if twins else str(static) if static else "none"))
    settings = parse_settings(pinned.get("settings") or ())
    if settings:
        from model.config import SETTINGS

        given = {SETTINGS[name]: value for name, value in settings.items()}
        fields.update(given)
        if "heartbeat_interval_ms" not in given:  # keep the drawn ratio to a pinned session
            fields["heartbeat_interval_ms"] = max(1, fields["session_timeout_ms"] * heartbeat // session)
        if fields.get("static_clients"):
            # static members: as many of the drawn clients as asked for, and the JoinGroup version
            # that carries group.instance.id (v5+) unless one was pinned too
            fields["static_clients"] = min(fields["static_clients"], fields["clients"])
            if "join_group_version" not in given and fields["join_group_version"] < 5:
                fields["join_group_version"] = 5
                regimes[regimes.index(("join", f"v{version}"))] = ("join", "v5")
        if fields.get("static_twins"):  # at least one instance id of its own
            fields["static_twins"] = max(0, min(fields["static_twins"], fields.get("static_clients", 0) - 1))
        if "static_clients" in given or "static_twins" in given:
            regimes = [r for r in regimes if r[0] != "static"] + [("static", "pinned")]
        regimes.append(("settings", "pinned"))
    if "min_session_timeout_ms" not in fields:  # the broker accepts the session the clients ask for
        fields["min_session_timeout_ms"] = min(base.min_session_timeout_ms, fields["session_timeout_ms"])
    try:
        config = attrs.evolve(base, **fields)
    except ConfigError as e:
        from model.config import SETTINGS

        message = str(e)
        for name, field in sorted(SETTINGS.items(), key=lambda item: -len(item[1])):  # Kafka's names, as --set
            message = message.replace(field, name)
        raise ConfigError(f"the swarm world of seed {seed} with the pinned options is impossible: {message}") from None
    return SwarmWorld(config, steps, faults, max_faults, quiet_rate, tuple(regimes), mix)


def check_pins(pinned: dict) -> None:
    """Raise ConfigError, naming the option, if the pinned values are malformed or can make an
    impossible world (tried on the first seeds' draws)."""
    from properties.explore.walker import FAULT_PROFILES

    faults = pinned.get("faults")
    if faults is not None and faults not in FAULT_PROFILES:
        raise ConfigError(f"--faults must be one of {', '.join(FAULT_PROFILES)}, got {faults!r}")
    for seed in range(20):
        draw(seed, pinned=pinned)


def regime_totals(rows) -> dict:
    """{dimension: {bucket: [interleavings, failed]}} over (regimes, failed) pairs."""
    out: dict = {}
    for regimes, failed in rows:
        for dimension, bucket in regimes:
            cell = out.setdefault(dimension, {}).setdefault(bucket, [0, 0])
            cell[0] += 1
            cell[1] += bool(failed)
    return out
