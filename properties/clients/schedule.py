"""Seeded fault schedules for client conformance.

:func:`generate` draws, from the seed alone (``random.Random`` seeded with a string: the same in
every process and under any ``PYTHONHASHSEED``), one to four faults for ``groupcheck broker`` to
inject (:mod:`properties.live.faults`) while N consumers of one library form a group: error answers
of the kinds Kafka's consumer must handle (the error lists of ``AbstractCoordinator``'s
``JoinGroupResponseHandler``, ``SyncGroupResponseHandler``, ``HeartbeatResponseHandler``,
``FindCoordinatorResponseHandler`` and ``ConsumerCoordinator.OffsetCommitResponseHandler``),
delayed answers, connections dropped before or after a request is handled, coordinator failovers,
a consumer silenced past its session timeout, a paused broker. The faults fall in the fault phase
(:data:`FAULTS_FROM_MS` after the broker starts, when the group has formed, for
:data:`FAULT_PHASE_MS`); after the last one ends the group has ``settle_ms`` to settle. On a host
where the group has not formed by then, the broker holds the schedule's clock until it has
(``groupcheck broker --faults-when-formed``, :mod:`properties.clients.session`).
"""

from __future__ import annotations

import random
from typing import Any, Dict, Optional, Tuple

import attrs

from properties.live.faults import Fault, parse

FAULTS_FROM_MS = 3000
FAULT_PHASE_MS = 8000
SETTLE_MS = 30000
REQUEST_FAULT_WINDOW_MS = 3000
PARTITIONS = 6
#: The consumers' settings unless ``--set`` says otherwise: Kafka's defaults but for a session of 6 s
#: (the broker's minimum), heartbeats every 500 ms and a 10 s poll interval, so that a schedule
#: that expires a member takes seconds, not minutes.
DEFAULT_SETTINGS: Dict[str, Any] = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
                                    "max.poll.interval.ms": 10000, "request.timeout.ms": 10000}

#: (API, the errors its response handler in Kafka's consumer distinguishes)
ERRORS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("Heartbeat", ("REBALANCE_IN_PROGRESS", "ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "NOT_COORDINATOR",
                   "COORDINATOR_NOT_AVAILABLE")),
    ("JoinGroup", ("UNKNOWN_MEMBER_ID", "COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR",
                   "REBALANCE_IN_PROGRESS")),
    ("SyncGroup", ("REBALANCE_IN_PROGRESS", "ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "NOT_COORDINATOR",
                   "COORDINATOR_NOT_AVAILABLE")),
    ("OffsetCommit", ("ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS", "NOT_COORDINATOR",
                      "COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE", "REQUEST_TIMED_OUT")),
    ("FindCoordinator", ("COORDINATOR_NOT_AVAILABLE",)),
)
_KINDS = (("error", 6), ("delay", 2), ("drop", 2), ("failover", 1), ("silence", 1), ("pause", 1))
_DELAYED = ("JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit", "FindCoordinator")

# KIP-848's consumer group protocol (``--protocol consumer``): the consumers run with
# group.protocol=consumer; the session and the heartbeat interval are the broker's
# (group.consumer.*: the client refuses session.timeout.ms and heartbeat.interval.ms with that
# protocol, ConsumerConfig.CONSUMER_PROTOCOL_UNSUPPORTED_CONFIGS).
PROTOCOLS = ("classic", "consumer")
CONSUMER_SETTINGS: Dict[str, Any] = {"group.protocol": "consumer", "max.poll.interval.ms": 10000,
                                     "request.timeout.ms": 10000}
CONSUMER_SESSION_MS = 6000
CONSUMER_HEARTBEAT_INTERVAL_MS = 500
#: the broker's settings for consumer groups (``groupcheck broker --set``)
CONSUMER_BROKER_SETTINGS = (f"group.consumer.session.timeout.ms={CONSUMER_SESSION_MS}",
                            f"group.consumer.heartbeat.interval.ms={CONSUMER_HEARTBEAT_INTERVAL_MS}")
#: (API, the errors the consumer protocol's client handles and recovers from:
#: AbstractHeartbeatRequestManager.onErrorResponse, CommitRequestManager's OffsetCommit handling)
CONSUMER_ERRORS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("ConsumerGroupHeartbeat", ("FENCED_MEMBER_EPOCH", "UNKNOWN_MEMBER_ID", "NOT_COORDINATOR",
                                "COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS")),
    ("OffsetCommit", ("STALE_MEMBER_EPOCH", "UNKNOWN_MEMBER_ID", "NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE",
                      "REQUEST_TIMED_OUT")),
    ("FindCoordinator", ("COORDINATOR_NOT_AVAILABLE",)),
)
# no failover: groupcheck broker keeps its consumer groups in memory (Kafka reloads them from
# __consumer_offsets), so a moved coordinator would not know the group (docs/kip848.md)
_CONSUMER_KINDS = (("error", 6), ("delay", 2), ("drop", 2), ("silence", 1), ("pause", 1))
_CONSUMER_DELAYED = ("ConsumerGroupHeartbeat", "OffsetCommit", "FindCoordinator")


@attrs.frozen
class ClientSchedule:
    """What one run does: N consumers with these settings, these faults, then settle. The first
    ``static`` consumers are static members (KIP-345): ``c{i}`` joins with group.instance.id
    ``instance-{i}``."""

    seed: int
    consumers: int
    partitions: int
    settings: Tuple[Tuple[str, Any], ...]
    faults: Tuple[Fault, ...]
    settle_ms: int = SETTLE_MS
    static: int = 0
    protocol: str = "classic"  # the group protocol: classic (JoinGroup/SyncGroup) or consumer (KIP-848)

    def client_id(self, i: int) -> str:
        return f"c{i}"

    def instance_id(self, i: int) -> Optional[str]:
        """The group.instance.id consumer *i* joins with, None for a dynamic member."""
        return f"instance-{i}" if i < self.static else None

    def instance_of(self, client_id: str) -> Optional[str]:
        """The group.instance.id of the consumer called *client_id* (``c{i}``), None if dynamic."""
        if not client_id.startswith("c") or not client_id[1:].isdigit():
            return None
        return self.instance_id(int(client_id[1:]))

    def settings_dict(self) -> Dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.settings}

    def faults_end_ms(self) -> int:
        """When the last fault is over (ms after the broker started): a silence or a pause at its
        end, a request fault :data:`REQUEST_FAULT_WINDOW_MS` after it may first apply (time for the
        requests it selects to come), a failover when it happens."""
        end = FAULTS_FROM_MS
        for f in self.faults:
            length = {"silence": f.ms, "pause": f.ms, "failover": 0}.get(f.kind, REQUEST_FAULT_WINDOW_MS)
            end = max(end, f.at_ms + length)
        return end

    def to_json(self) -> Dict[str, Any]:
        return {"seed": self.seed, "consumers": self.consumers, "partitions": self.partitions,
                "settings": self.settings_dict(), "faults": [f.to_json() for f in self.faults],
                "settle_ms": self.settle_ms, "static": self.static, "protocol": self.protocol}

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "ClientSchedule":
        settings = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(data["settings"].items()))
        return cls(int(data["seed"]), int(data["consumers"]), int(data["partitions"]), settings,
                   parse({"faults": data["faults"]}, "the schedule"), int(data.get("settle_ms", SETTLE_MS)),
                   int(data.get("static", 0)), str(data.get("protocol", "classic")))

    def without(self, index: int) -> "ClientSchedule":
        """The same schedule minus its fault at *index* (for shrinking), renumbered."""
        kept = [f.to_json() for i, f in enumerate(self.faults) if i != index]
        return attrs.evolve(self, faults=parse({"faults": kept}, "the schedule"))


def _weighted(rng: random.Random, table):
    x = rng.randrange(sum(w for _, w in table))
    for value, w in table:
        x -= w
        if x < 0:
            return value
    raise AssertionError("unreachable")


def _faults(rng: random.Random, consumers: int, brokers: int, session_ms: int, kinds, errors, delayed) -> list:
    """One to four faults drawn from *rng*: their kinds weighted by *kinds*, error answers from
    *errors*, delays and drops of the APIs *delayed*, silences past *session_ms*."""
    faults = []
    for _ in range(rng.randrange(1, 5)):
        kind = _weighted(rng, kinds)
        at = FAULTS_FROM_MS + rng.randrange(0, FAULT_PHASE_MS, 100)
        client = f"c{rng.randrange(consumers)}"
        if kind == "error":
            api, choices = errors[rng.randrange(len(errors))]
            faults.append({"kind": "error", "api": api, "error": rng.choice(choices), "client": client, "at_ms": at,
                           "count": rng.choice((1, 1, 2, 3))})
        elif kind == "delay":
            faults.append({"kind": "delay", "api": rng.choice(delayed), "ms": rng.randrange(200, 3001, 100),
                           "client": client, "at_ms": at})
        elif kind == "drop":
            faults.append({"kind": "drop", "api": rng.choice(delayed), "when": rng.choice(("before", "after")),
                           "client": client, "at_ms": at})
        elif kind == "failover":
            faults.append({"kind": "failover", "at_ms": at})
        elif kind == "silence":  # past the session: the coordinator expires the member
            faults.append({"kind": "silence", "client": client, "at_ms": at,
                           "ms": session_ms + rng.randrange(1000, 4001, 500)})
        else:
            faults.append({"kind": "pause", "broker": rng.randrange(brokers), "at_ms": at,
                           "ms": rng.randrange(500, 3001, 500)})
    return faults


def generate(seed: int, consumers: int = 3, settings: Optional[Dict[str, Any]] = None,
             partitions: int = PARTITIONS, brokers: int = 1, static: int = 0, protocol: str = "classic") -> ClientSchedule:
    """The schedule of *seed* (see the module docstring); *settings* override :data:`DEFAULT_SETTINGS`;
    the first *static* consumers are static members (the faults are the same either way); with
    *protocol* ``consumer``, KIP-848's (:func:`generate_consumer`)."""
    if protocol == "consumer":
        return generate_consumer(seed, consumers, settings, partitions, brokers, static)
    rng = random.Random(f"groupcheck-clients:{seed}")
    merged = {**DEFAULT_SETTINGS, **(settings or {})}
    faults = _faults(rng, consumers, brokers, int(merged["session.timeout.ms"]), _KINDS, ERRORS, _DELAYED)
    settings_tuple = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(merged.items()))
    return ClientSchedule(seed, consumers, partitions, settings_tuple, parse({"faults": faults}, f"schedule {seed}"),
                          static=static)


def generate_consumer(seed: int, consumers: int = 3, settings: Optional[Dict[str, Any]] = None,
                      partitions: int = PARTITIONS, brokers: int = 1, static: int = 0) -> ClientSchedule:
    """The schedule of *seed* for consumers of KIP-848's protocol: the faults a consumer of that
    protocol meets (:data:`CONSUMER_ERRORS` on its heartbeats, commits and coordinator lookups,
    delayed and dropped heartbeats, a member silenced past the broker's consumer session, a paused
    broker), drawn from their own seeded stream; the first *static* consumers are static members."""
    rng = random.Random(f"groupcheck-clients-consumer:{seed}")
    merged = {**CONSUMER_SETTINGS, **(settings or {})}
    faults = _faults(rng, consumers, brokers, CONSUMER_SESSION_MS, _CONSUMER_KINDS, CONSUMER_ERRORS, _CONSUMER_DELAYED)
    settings_tuple = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(merged.items()))
    return ClientSchedule(seed, consumers, partitions, settings_tuple, parse({"faults": faults}, f"schedule {seed}"),
                          static=static, protocol="consumer")
