"""The settings of a KIP-848 world, validated (bad values name the field and the value).

Timeouts are exploration values, scaled down so that a walk of a few hundred events reaches
session expiry, rebalance timeouts and poll-timer expiry; Kafka's defaults are in the comments.
"""

from __future__ import annotations

import attrs

from model.config import ConfigError


def _positive(inst, attribute, value):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{attribute.name} must be a positive integer, got {value!r}")


def _not_negative(inst, attribute, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"{attribute.name} must be a non-negative integer, got {value!r}")


def _broken(inst, attribute, value):
    from model.kip848.variants import CLASSIC_VARIANTS, VARIANTS

    if not isinstance(value, frozenset) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"broken must be a frozenset of variant names, got {value!r}")
    unknown = sorted(value - set(VARIANTS) - set(CLASSIC_VARIANTS))
    if unknown:
        raise ConfigError(f"broken: unknown KIP-848 variant(s) {unknown}; known: {sorted(VARIANTS) + sorted(CLASSIC_VARIANTS)}")


#: the server assignors a world can run (group.consumer.assignors: Kafka's are uniform, range)
ASSIGNORS = ("range", "uniform")


def _assignor(inst, attribute, value):
    if value not in ASSIGNORS:
        raise ConfigError(f"assignor must be one of {', '.join(ASSIGNORS)}, got {value!r}")


@attrs.frozen(slots=True)
class Config:
    """Everything a KIP-848 world needs before its first event."""

    clients: int = attrs.field(default=3, validator=_positive)
    partitions: int = attrs.field(default=4, validator=_positive)  # of the one subscribed topic
    group_id: str = "g"
    # broker: group.consumer.session.timeout.ms (Kafka 45000), group.consumer.heartbeat.interval.ms (5000)
    session_timeout_ms: int = attrs.field(default=3000, validator=_positive)
    heartbeat_interval_ms: int = attrs.field(default=1000, validator=_positive)
    # client: max.poll.interval.ms (300000), sent as the RebalanceTimeoutMs and the poll timer;
    # request.timeout.ms (30000); retry.backoff.ms (100)
    max_poll_interval_ms: int = attrs.field(default=4000, validator=_positive)
    request_timeout_ms: int = attrs.field(default=1500, validator=_positive)
    retry_backoff_ms: int = attrs.field(default=100, validator=_positive)
    broken: frozenset = attrs.field(default=frozenset(), converter=frozenset, validator=_broken)
    # how many consumers (the first slots) have a group.instance.id: static members (KIP-345)
    static: int = attrs.field(default=0, validator=_not_negative)
    # the server assignor that computes the targets (every member asks for it, or none does and it
    # is the coordinator's default); a world's draw (properties.kip848.walker.swarm)
    assignor: str = attrs.field(default="range", validator=_assignor)

    def __attrs_post_init__(self):
        if self.static > self.clients:
            raise ConfigError(f"static ({self.static}) must not exceed clients ({self.clients})")
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ConfigError(f"heartbeat_interval_ms ({self.heartbeat_interval_ms}) must be below "
                              f"session_timeout_ms ({self.session_timeout_ms})")

    def is_broken(self, name: str) -> bool:
        return name in self.broken

    def instance_id(self, c: int) -> str | None:
        """Consumer slot *c*'s group.instance.id (every process in the slot has it), or None."""
        return f"i{c}" if c < self.static else None
