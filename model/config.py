"""World configuration: brokers, clients, the subscribed topic and every timeout that matters.

The defaults are *exploration* values, not Kafka's: they are scaled down so that a random walk of
a few dozen steps reaches session expiry, rebalance timeouts and request expiry. Kafka's own
defaults are given in each field's comment and in :data:`KAFKA_DEFAULTS`.

Impossible configurations (a zero or negative timeout, a heartbeat interval not below the session
timeout, no partitions, no brokers, ...) are refused with :class:`ConfigError`, whose message names
the field and the value. Configurations Kafka accepts but the group coordinator rejects at run time
(a session timeout outside the broker's range, a group larger than ``group.max.size``) are allowed:
they are scenarios, not mistakes.
"""

from __future__ import annotations

import functools

import attrs

from model.variants import ALL_VARIANTS

MAX_INT = 2**31 - 1
MAX_LONG = 2**63 - 1


class ConfigError(ValueError):
    """A configuration value is impossible. The message names the field and the value."""


def _positive(inst, attribute, value):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{attribute.name} must be a positive integer, got {value!r}")


def _non_negative(inst, attribute, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"{attribute.name} must be a non-negative integer, got {value!r}")


@attrs.frozen(slots=True, cache_hash=True)  # hashed at every step of a walk (boundary_ticks' cache)
class Config:
    """Everything a world needs to know before its first event. Immutable and validated."""

    # -- cluster ------------------------------------------------------------------------------
    brokers: int = attrs.field(default=3, validator=_positive)
    clients: int = attrs.field(default=3, validator=_positive)
    partitions: int = attrs.field(default=6, validator=_positive)  # of the one subscribed topic
    topic: str = "t"
    # A second topic a consumer may change its subscription to (the ``subscribe`` event; 0: none,
    # a world of one topic). Its partitions are fixed; model/topics.py numbers them.
    second_topic: str = "u"
    second_partitions: int = attrs.field(default=0, validator=_non_negative)
    group_id: str = "test-group"
    offsets_partitions: int = attrs.field(default=50, validator=_positive)  # offsets.topic.num.partitions

    # -- broker (group coordinator) -----------------------------------------------------------
    min_session_timeout_ms: int = attrs.field(default=6000, validator=_positive)  # Kafka 6000
    max_session_timeout_ms: int = attrs.field(default=1_800_000, validator=_positive)  # Kafka 1800000
    initial_rebalance_delay_ms: int = attrs.field(default=3000, validator=_non_negative)  # Kafka 3000
    group_max_size: int = attrs.field(default=MAX_INT, validator=_positive)  # Kafka Integer.MAX_VALUE
    new_member_join_timeout_ms: int = attrs.field(default=300_000, validator=_positive)  # Kafka 300000
    # JoinGroup API version the clients speak; >= 4 means the two-phase join (MEMBER_ID_REQUIRED).
    join_group_version: int = attrs.field(default=5)
    # Which of Kafka's group coordinators answers: False, the Scala GroupCoordinator (Kafka up to 3.9,
    # the one docs/protocol.md follows); True, the Java GroupMetadataManager with ClassicGroup (the
    # default from 4.0, the only one from 4.1, KAFKA-18329; 3.7-3.9 with group.coordinator.new.enable).
    # The classic protocol's answers differ where this field is read (model.group), each with its source.
    new_group_coordinator: bool = attrs.field(default=False)

    # -- client ---------------------------------------------------------------------------------
    session_timeout_ms: int = attrs.field(default=6000, validator=_positive)  # Kafka 45000
    heartbeat_interval_ms: int = attrs.field(default=2000, validator=_positive)  # Kafka 3000
    max_poll_interval_ms: int = attrs.field(default=10_000, validator=_positive)  # Kafka 300000; = rebalance timeout
    request_timeout_ms: int = attrs.field(default=8000, validator=_positive)  # Kafka 30000
    retry_backoff_ms: int = attrs.field(default=100, validator=_positive)  # Kafka 100 (flat, pre-3.7)
    reconnect_backoff_ms: int = attrs.field(default=50, validator=_positive)  # Kafka 50
    close_timeout_ms: int = attrs.field(default=30_000, validator=_non_negative)  # KafkaConsumer.close() default 30 s
    latency_ms: int = attrs.field(default=1, validator=_non_negative)  # one-way link latency
    # metadata.max.age.ms: how often a client refreshes its view of the topic (Kafka 300000). The
    # default never expires: the topic's partition count is fixed unless a world adds partitions
    # (add_partitions), which only makes sense with an age that runs out.
    metadata_max_age_ms: int = attrs.field(default=2**62, validator=_positive)
    # How long the group leader's assignor runs (groupcheck's own setting: a custom assignor over
    # many partitions or topics, a slow listener inside it). Kafka runs it inside the JoinGroup
    # answer's handler, holding the coordinator's lock (AbstractCoordinator.JoinGroupResponseHandler
    # .handle: synchronized (AbstractCoordinator.this) { ... onJoinLeader }), so the heartbeat thread
    # waits as well and the SyncGroup leaves when the assignor returns. 0: it returns at once.
    assignor_delay_ms: int = attrs.field(default=0, validator=_non_negative)
    # partition.assignment.strategy of every client, most preferred first; () = the exploration
    # default, where even clients prefer range and odd ones roundrobin (so protocol votes can tie)
    assignors: tuple = attrs.field(default=(), converter=tuple)
    # the implementation's simulated links carry Kafka's wire format (groupcheck --wire); the model
    # itself ignores it
    wire: bool = attrs.field(default=False)
    # static members (group.instance.id, KIP-345): clients 0 .. static_clients-1 join with the
    # instance id instance_id(c); the others are dynamic. Needs JoinGroup v5+ (older ones carry no
    # instance id: Kafka's client refuses static membership there)
    static_clients: int = attrs.field(default=0, validator=_non_negative)
    # two processes started with one group.instance.id (a copy-pasted deployment, a restarted pod
    # whose old instance still runs): the last static_twins static clients share the instance ids
    # of the first ones (instance_id), so the coordinator fences one with the other (KIP-345)
    static_twins: int = attrs.field(default=0, validator=_non_negative)

    # -- broken variants (quality tier): names from model.variants.VARIANTS ---------------------
    broken: frozenset = attrs.field(default=frozenset(), converter=frozenset)

    @join_group_version.validator
    def _check_version(self, attribute, value):
        if not isinstance(value, int) or not 0 <= value <= 9:
            raise ConfigError(f"join_group_version must be an integer from 0 to 9, got {value!r}")

    @wire.validator
    @new_group_coordinator.validator
    def _check_flag(self, attribute, value):
        if not isinstance(value, bool):
            raise ConfigError(f"{attribute.name} must be true or false, got {value!r}")

    @assignors.validator
    def _check_assignors(self, attribute, value):
        unknown = [name for name in value if name not in ASSIGNORS]
        if unknown:
            raise ConfigError(f"assignors names unknown assignor {unknown[0]!r}; known: {', '.join(ASSIGNORS)}")
        if len(set(value)) != len(value):
            raise ConfigError(f"assignors lists an assignor twice: {list(value)}")

    @broken.validator
    def _check_broken(self, attribute, value):
        unknown = sorted(set(value) - set(ALL_VARIANTS))
        if unknown:
            raise ConfigError(f"broken names unknown variants {unknown}; known: {sorted(ALL_VARIANTS)}")

    def __attrs_post_init__(self):
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ConfigError(
                f"heartbeat_interval_ms ({self.heartbeat_interval_ms}) must be below "
                f"session_timeout_ms ({self.session_timeout_ms})"
            )
        if self.static_clients > self.clients:
            raise ConfigError(f"static_clients ({self.static_clients}) exceeds clients ({self.clients})")
        if self.static_twins and self.static_twins >= self.static_clients:
            raise ConfigError(f"static_twins ({self.static_twins}) must be below static_clients "
                              f"({self.static_clients}): a twin shares the instance id of another static client")
        if self.static_clients and self.join_group_version < 5:
            raise ConfigError(f"static members (static_clients={self.static_clients}) need JoinGroup v5 or later, "
                              f"got join_group_version={self.join_group_version}")
        if self.min_session_timeout_ms > self.max_session_timeout_ms:
            raise ConfigError(
                f"min_session_timeout_ms ({self.min_session_timeout_ms}) exceeds "
                f"max_session_timeout_ms ({self.max_session_timeout_ms})"
            )
        if not self.group_id:
            raise ConfigError("group_id must be a non-empty string, got ''")
        if not self.topic:
            raise ConfigError("topic must be a non-empty string, got ''")
        if self.second_partitions:
            from model.topics import MAX_ADDED_PARTITIONS, SECOND_BASE

            if not self.second_topic or self.second_topic <= self.topic:
                raise ConfigError(f"second_topic ({self.second_topic!r}) must be a topic name sorting after topic "
                                  f"({self.topic!r}): the model numbers the second topic's partitions after the first's")
            if self.partitions + MAX_ADDED_PARTITIONS >= SECOND_BASE or self.second_partitions > SECOND_BASE:
                raise ConfigError(f"with a second topic, partitions ({self.partitions}, and up to "
                                  f"{MAX_ADDED_PARTITIONS} added) and second_partitions ({self.second_partitions}) "
                                  f"must stay below {SECOND_BASE}")

    # -- derived values -----------------------------------------------------------------------
    @property
    def require_known_member_id(self) -> bool:
        """JoinGroup v4+ without a group.instance.id answers a new member MEMBER_ID_REQUIRED first."""
        return self.join_group_version >= 4

    @property
    def rebalance_timeout_ms(self) -> int:
        """The consumer sends max.poll.interval.ms as its JoinGroup rebalance timeout."""
        return self.max_poll_interval_ms

    @property
    def join_request_timeout_ms(self) -> int:
        """JoinGroup's own request timeout: max(request.timeout.ms, rebalance timeout + 5000)."""
        return join_group_request_timeout(self.request_timeout_ms, self.rebalance_timeout_ms)

    def client_id(self, client: int) -> str:
        return f"consumer-{client}"

    def instance_id(self, client: int) -> str | None:
        """group.instance.id of a static client, None for a dynamic one; a twin (the last
        static_twins static clients) has the id of client ``client % distinct``."""
        if client >= self.static_clients:
            return None
        return f"instance-{client % (self.static_clients - self.static_twins)}"

    def protocols(self, client: int) -> tuple[str, ...]:
        """Assignor preference of a client: :attr:`assignors` when set; by default even clients
        prefer range and odd ones roundrobin, so that protocol votes can tie."""
        if self.assignors:
            return self.assignors
        return ("range", "roundrobin") if client % 2 == 0 else ("roundrobin", "range")


ASSIGNORS = ("range", "roundrobin")  # what the model and the implementation can assign with

JOIN_GROUP_TIMEOUT_LAPSE_MS = 5000


def join_group_request_timeout(request_timeout_ms: int, rebalance_timeout_ms: int) -> int:
    """``max(request.timeout.ms, rebalance.timeout.ms + 5000)``, guarded against int overflow the
    way AbstractCoordinator does: when the sum would overflow a Java int, the rebalance timeout
    itself (already huge) is used."""
    if rebalance_timeout_ms > MAX_INT - JOIN_GROUP_TIMEOUT_LAPSE_MS:
        return max(request_timeout_ms, rebalance_timeout_ms)
    return max(request_timeout_ms, rebalance_timeout_ms + JOIN_GROUP_TIMEOUT_LAPSE_MS)


# -- a process redeployed with other settings (issue 37) -------------------------------------------

#: The settings a consumer process can be redeployed with (the ``redeploy`` event's ``settings``),
#: each a change of the world's own: (name, {Config field: value as a function of the world's
#: config}). 0 is the world's settings themselves (a redeploy back). The timeouts are what a member
#: sends in every JoinGroup, so a rejoin with them is where the coordinator must take the new values
#: (GroupCoordinator.updateMemberAndRebalance / updateStaticMemberAndRebalance -> group.updateMember);
#: a one-assignor list can leave the group with no protocol in common (INCONSISTENT_GROUP_PROTOCOL,
#: GroupMetadata.supportsProtocols). Only changes no world's group is the worse for: a longer session
#: or poll interval, more frequent heartbeats (a shorter max.poll.interval.ms than the world's would
#: undo what the swarm keeps, a rebalance timeout well above the slow assignor's time and a few round
#: trips: under it Kafka's own group rebalances for ever, campaign seed 485's 227 generations of
#: 2026-11-29). A redeploy back to 0 after one of them makes the value shorter again. With JoinGroup
#: v0-v3 a longer wait of the coordinator can outlast another member's JoinGroup timeout, which
#: Kafka's group does not settle from either: :func:`settling_redeploys` says which entries a walk
#: may use in a world.
REDEPLOYS = (
    ("as configured", {}),
    ("session.timeout.ms x1.5", {"session_timeout_ms": lambda c: c.session_timeout_ms * 3 // 2}),
    ("max.poll.interval.ms x2", {"max_poll_interval_ms": lambda c: c.max_poll_interval_ms * 2}),
    ("heartbeat.interval.ms /2", {"heartbeat_interval_ms": lambda c: max(1, c.heartbeat_interval_ms // 2)}),
    ("partition.assignment.strategy=range", {"assignors": lambda c: ("range",)}),
    ("partition.assignment.strategy=roundrobin", {"assignors": lambda c: ("roundrobin",)}),
)


def redeployed(config: Config, settings: int) -> Config:
    """The configuration a process of a world with *config* runs with when deployed with
    :data:`REDEPLOYS` entry *settings* (0: *config* itself)."""
    return _redeployed(config, settings) if settings else config


@functools.lru_cache(maxsize=256)  # every client step of a redeployed process asks
def _redeployed(config: Config, settings: int) -> Config:
    return attrs.evolve(config, **{field: value(config) for field, value in REDEPLOYS[settings][1].items()})


@functools.lru_cache(maxsize=256)  # the walker asks at every redeploy it offers
def settling_redeploys(config: Config) -> tuple:
    """The :data:`REDEPLOYS` entries (besides 0) that processes of a world with *config* may run
    with, any of them beside any other, while their group can still settle.

    Up to JoinGroup v3 a consumer learns its member id only from the JoinGroup answer, so one that
    gives up on its JoinGroup joins again as a new member and leaves the id the coordinator gave it
    behind. The coordinator keeps the join phase open while a member has not rejoined, up to the
    group's rebalance timeout: the longest any member sent (``GroupMetadata.rebalanceTimeoutMs``;
    for v0 the session timeout, ``JoinGroupRequest.maybeOverrideRebalanceTimeout``), scheduled by
    ``GroupCoordinator.prepareRebalance`` (``DelayedJoin``), and only ``onCompleteJoin`` removes
    the id left behind. A member that gives up (``AbstractCoordinator``'s JoinGroup timeout,
    max(request.timeout.ms, rebalance timeout + 5 s): :func:`join_group_request_timeout`) before
    that wait and a round trip are over gives up every time, leaves another id that never rejoins,
    and its next JoinGroup starts the next rebalance: Kafka's own group churns for ever (campaign
    seed 1,002,496: max.poll.interval.ms 5 s, one process redeployed with 10 s, a JoinGroup timeout
    of 10 s against a join phase of 10 s and 2 ms of round trip, 52 generations in the settle phase).
    An entry is kept when no two settings among 0 and the entries kept before it (itself included)
    let that happen. From JoinGroup v4 a new member learns its id first (MEMBER_ID_REQUIRED) and
    joins again with it: every entry is kept."""
    every = tuple(range(1, len(REDEPLOYS)))
    if config.join_group_version >= 4:
        return every

    def wait(c: Config) -> int:  # how long the coordinator may wait for this member's rejoin
        return c.session_timeout_ms if c.join_group_version == 0 else c.max_poll_interval_ms

    def gives_up(c: Config) -> int:
        return join_group_request_timeout(c.request_timeout_ms, c.max_poll_interval_ms)

    round_trip = 2 * config.latency_ms
    kept = [0]
    for settings in every:
        deployed = [redeployed(config, k) for k in kept + [settings]]
        if all(wait(a) + round_trip <= gives_up(b) for a in deployed for b in deployed):
            kept.append(settings)
    return tuple(kept[1:])


def settling_settings(config: Config) -> tuple:
    """The :data:`REDEPLOYS` entries a walk (the walker's, the Hypothesis machines') may redeploy a
    process of a world with *config* with: the world's own (0) and :func:`settling_redeploys`."""
    return (0,) + settling_redeploys(config)


KAFKA_DEFAULTS = {
    "session.timeout.ms": 45000,
    "heartbeat.interval.ms": 3000,
    "max.poll.interval.ms": 300000,
    "request.timeout.ms": 30000,
    "retry.backoff.ms": 100,
    "reconnect.backoff.ms": 50,
    "group.min.session.timeout.ms": 6000,
    "group.max.session.timeout.ms": 1800000,
    "group.initial.rebalance.delay.ms": 3000,
    "offsets.topic.num.partitions": 50,
}


# -- settings by Kafka's names ----------------------------------------------------------------------

# Kafka's property name -> Config field. Client (consumer) properties, broker (group coordinator)
# properties, and one of groupcheck's own: the JoinGroup version the clients speak, which Kafka
# negotiates through ApiVersions rather than configures.
SETTINGS = {
    "session.timeout.ms": "session_timeout_ms",
    "heartbeat.interval.ms": "heartbeat_interval_ms",
    "max.poll.interval.ms": "max_poll_interval_ms",  # also the JoinGroup rebalance timeout
    "request.timeout.ms": "request_timeout_ms",
    "retry.backoff.ms": "retry_backoff_ms",
    "reconnect.backoff.ms": "reconnect_backoff_ms",
    "partition.assignment.strategy": "assignors",
    "group.min.session.timeout.ms": "min_session_timeout_ms",
    "group.max.session.timeout.ms": "max_session_timeout_ms",
    "group.initial.rebalance.delay.ms": "initial_rebalance_delay_ms",
    "group.max.size": "group_max_size",
    "offsets.topic.num.partitions": "offsets_partitions",
    "groupcheck.join.group.version": "join_group_version",
    "groupcheck.assignor.delay.ms": "assignor_delay_ms",
    "groupcheck.static.clients": "static_clients",
    "groupcheck.static.twins": "static_twins",
    "groupcheck.second.topic.partitions": "second_partitions",
}

# Kafka's class names for the assignors, accepted as well as the short names
_ASSIGNOR_CLASSES = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
}


def _setting_value(name: str, text: str):
    field = SETTINGS[name]
    if field == "assignors":
        names = [part.strip() for part in text.split(",") if part.strip()]
        if not names:
            raise ConfigError(f"{name} must list at least one assignor ({', '.join(ASSIGNORS)}), got {text!r}")
        names = [_ASSIGNOR_CLASSES.get(n, n) for n in names]
        unknown = [n for n in names if n not in ASSIGNORS]
        if unknown:
            raise ConfigError(f"{name}: unknown assignor {unknown[0]!r}; known: {', '.join(ASSIGNORS)}")
        return tuple(names)
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {text!r}") from None
    if not -2**63 <= value < 2**63:
        raise ConfigError(f"{name} must fit in a Java long, got {text!r}")
    return value


def parse_settings(items) -> dict:
    """``["session.timeout.ms=10000", ...]`` -> {Kafka name: value}, each name known and each value
    well-formed; raises ConfigError naming the setting. A later item overrides an earlier one."""
    out = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep:
            raise ConfigError(f"--set takes name=value, got {item!r}")
        if name not in SETTINGS:
            raise ConfigError(f"unknown setting {name!r}; known: {', '.join(sorted(SETTINGS))}")
        out[name] = _setting_value(name, text.strip())
    return out


def with_settings(config: Config, settings: dict) -> Config:
    """*config* with the given settings ({Kafka name: value}) applied and the result validated as a
    whole (a ConfigError names the setting, by its Kafka name)."""
    if not settings:
        return config
    changes = {SETTINGS[name]: value for name, value in settings.items()}
    try:
        return attrs.evolve(config, **changes)
    except ConfigError as e:
        message = str(e)
        for name, field in sorted(SETTINGS.items(), key=lambda item: -len(item[1])):  # min_session_... first
            message = message.replace(field, name)
        raise ConfigError(message) from None


def settings_of(config: Config) -> dict:
    """Every setting of *config* by its Kafka name (what results and counterexample files record)."""
    out = {}
    for name, field in SETTINGS.items():
        value = getattr(config, field)
        if field == "assignors":
            value = ",".join(value) if value else "range,roundrobin|roundrobin,range (alternating by client)"
        out[name] = value
    return out
