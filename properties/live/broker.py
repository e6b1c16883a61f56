"""``groupcheck broker``: impl's cluster served on loopback TCP, speaking Kafka's wire protocol.

``groupcheck broker [--port P] [--brokers N] [--partitions K] [--topic NAME[:PARTITIONS]] [--set k=v]
[--trace FILE] [--faults FILE [--faults-when-formed N]] [--host H]`` starts N brokers in one process, broker ``i`` listening on port
``P + i`` (``--port 0``: ports the kernel picks), all sharing one :class:`impl.server.cluster.Cluster`
(group coordinators placed by ``partitionFor``, one ``__consumer_offsets`` log) on a wall-clock
timer. It prints one ready line on stderr::

    groupcheck broker: listening on 127.0.0.1:9092..9094 (3 brokers)

(with ``--port 0`` and several brokers the kernel's ports are listed: ``127.0.0.1:40001,40017``).

Signals: **SIGUSR1 is coordinator failover** — every ``__consumer_offsets`` partition moves to the
next live broker (with one broker, the coordinator resigns and is elected again), which reloads
the groups from the log; members get NOT_COORDINATOR and rediscover. SIGTERM or Ctrl-C (SIGINT)
closes the listeners and exits 0.

``--trace FILE`` writes one JSON line per request and per response (``time_ms``, ``broker``,
``connection``, ``direction``, ``api``, ``version``, ``correlation_id``, ``client_id``, ``body``).

``--faults FILE`` applies a fault schedule (:mod:`properties.live.faults`: error answers, delayed
answers, dropped connections, failovers, a client silenced, a broker paused); every injection is
logged on stderr and written to the trace as a ``direction: "fault"`` line. With
``--faults-when-formed N`` the schedule's clock stands still at its first fault until a group has
N members in a stable generation (a classic group Stable with every member's SyncGroup received, a
consumer group Stable: every member at the target assignment epoch), for at most a minute: a schedule written for a formed group then
meets one on a slow host too (:meth:`properties.live.faults.FaultInjector._hold`). The log says how
long it held, and the new zero of ``at_ms``.
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
from typing import Dict, List, Optional

from impl.server.cluster import Cluster
from impl.server.config import BrokerConfig
from impl.server.kafka_apis import WIRE_API_VERSIONS, KafkaApis
from impl.server.log import LogManager
from impl.server.socket_server import SocketServer, SocketServerConfig, bind_listeners
from impl.time import MockTime, SystemTime
from properties.errors import UsageError, whole_number
from properties.live.child import add_set_option, split_settings
from properties.live.faults import FaultInjector
from properties.live.faults import load as load_faults

#: ``--set`` names (Kafka's broker configuration keys) -> BrokerConfig field, or a listener setting.
BROKER_SETTINGS: Dict[str, str] = {
    "group.min.session.timeout.ms": "group_min_session_timeout_ms",
    "group.max.session.timeout.ms": "group_max_session_timeout_ms",
    "group.initial.rebalance.delay.ms": "group_initial_rebalance_delay_ms",
    "group.max.size": "group_max_size",
    "offsets.commit.timeout.ms": "offsets_commit_timeout_ms",
    "offset.metadata.max.bytes": "offset_metadata_max_bytes",
    "group.consumer.session.timeout.ms": "consumer_session_timeout_ms",  # KIP-848's consumer groups
    "group.consumer.heartbeat.interval.ms": "consumer_heartbeat_interval_ms",
}
LISTENER_SETTINGS = ("connections.max.idle.ms", "socket.request.max.bytes")
CLUSTER_SETTINGS = ("offsets.topic.num.partitions", "num.partitions", "auto.create.topics.enable")
ALL_SETTINGS = tuple(BROKER_SETTINGS) + LISTENER_SETTINGS + CLUSTER_SETTINGS


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "broker", help="serve impl's brokers on loopback TCP (Kafka's wire protocol)",
        description="Start N brokers of groupcheck's implementation in one process, on consecutive ports. "
                    "Answers ApiVersions, Metadata, FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, "
                    "OffsetCommit, OffsetFetch, ListOffsets, Produce, Fetch (in-memory log), DescribeGroups, ListGroups, "
                    "ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848), "
                    "InitProducerId (idempotent producers; no transactions). "
                    "SIGUSR1: coordinator failover (every __consumer_offsets partition moves to the next live broker). "
                    "SIGTERM / Ctrl-C: stop.")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on and advertise (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=9092, help="broker 0's port; broker i listens on PORT+i "
                                                           "(0: free ports chosen by the kernel; default 9092)")
    p.add_argument("--brokers", type=int, default=1, help="brokers in the cluster (default 1)")
    p.add_argument("--partitions", type=int, default=None,
                   help="partitions of auto-created topics (num.partitions; default 4)")
    p.add_argument("--topic", action="append", default=[], metavar="NAME[:PARTITIONS]",
                   help="create a topic at start (repeatable)")
    add_set_option(p, "a broker setting by its Kafka name: " + ", ".join(ALL_SETTINGS))
    p.add_argument("--trace", default=None, metavar="FILE",
                   help="write every request and response as a JSON line to FILE")
    p.add_argument("--faults", default=None, metavar="FILE",
                   help="a fault schedule (JSON: {\"faults\": [...]}): error answers, delays, dropped connections, "
                        "failovers, silenced clients, paused brokers (see properties/live/faults.py)")
    p.add_argument("--faults-when-formed", type=int, default=None, metavar="N",
                   help="with --faults: hold the schedule's clock at its first fault until a group has N members "
                        "in a stable generation (at most 60 s), so that its faults meet a formed group on a slow "
                        "host too")
    p.set_defaults(func=cmd_broker)
    return p


def parse_broker_settings(pairs: List[str]) -> Dict[str, object]:
    out: Dict[str, object] = {}
    for name, value in split_settings(pairs, UsageError):
        if name not in ALL_SETTINGS:
            raise UsageError(f"--set {name}: not a setting groupcheck broker knows (known: {', '.join(ALL_SETTINGS)})")
        if name == "auto.create.topics.enable":
            if value.lower() not in ("true", "false"):
                raise UsageError(f"--set {name}={value}: expected true or false")
            out[name] = value.lower() == "true"
            continue
        minimum = 1 if name in ("offsets.topic.num.partitions", "num.partitions", "socket.request.max.bytes",
                                "group.max.size") else 0
        if name == "connections.max.idle.ms" and value.strip() == "-1":
            minimum = -1  # -1: idle connections are never closed
        out[name] = whole_number(f"--set {name}={value}", value, minimum)
    return out


def parse_topics(specs: List[str], default_partitions: int) -> Dict[str, int]:
    topics: Dict[str, int] = {}
    for spec in specs:
        name, sep, count = spec.partition(":")
        if not name or name.startswith("__"):
            raise UsageError(f"--topic {spec!r}: a topic needs a name that does not start with '__'")
        topics[name] = whole_number(f"--topic {spec!r}: PARTITIONS", count, 1, "a number") if sep else default_partitions
    return topics


class BrokerProcess:
    """Everything ``groupcheck broker`` runs, built from validated arguments (tests use it in-process)."""

    def __init__(self, host: str, port: int, brokers: int, partitions: Optional[int], topics: List[str],
                 settings: List[str], trace_path: Optional[str], log=None, faults_path: Optional[str] = None,
                 faults_when_formed: Optional[int] = None) -> None:
        if brokers < 1:
            raise UsageError(f"--brokers must be at least 1, got {brokers}")
        if not 0 <= port <= 65535 or (port and port + brokers - 1 > 65535):
            raise UsageError(f"--port {port}: the ports {port}..{port + brokers - 1} are not all valid TCP ports")
        values = parse_broker_settings(settings)
        default_partitions = partitions if partitions is not None else int(values.get("num.partitions", 4))
        if default_partitions < 1:
            raise UsageError(f"--partitions must be at least 1, got {default_partitions}")
        initial_topics = parse_topics(topics, default_partitions)
        faults = load_faults(faults_path, brokers) if faults_path else None
        if faults_when_formed is not None and (faults_when_formed < 1 or not faults_path):
            raise UsageError(f"--faults-when-formed {faults_when_formed}: " + (
                "needs --faults FILE" if faults_when_formed >= 1 else "a group needs at least 1 member"))
        config = dataclasses.replace(
            BrokerConfig(), api_versions=dict(WIRE_API_VERSIONS),
            **{field: values[name] for name, field in BROKER_SETTINGS.items() if name in values})
        self.log = log or (lambda line: print(f"groupcheck broker: {line}", file=sys.stderr, flush=True))
        wall = SystemTime()
        self.clock = MockTime(current_time_ms=wall.milliseconds())
        self.cluster = Cluster(brokers, offsets_partitions=int(values.get("offsets.topic.num.partitions", 50)),
                               topics=initial_topics, time=self.clock, config=config)
        self.apis = KafkaApis(self.cluster, LogManager(default_partitions,
                                                       auto_create=bool(values.get("auto.create.topics.enable", True))))
        listener = SocketServerConfig(host, [port + i if port else 0 for i in range(brokers)],
                                      socket_request_max_bytes=int(values.get("socket.request.max.bytes", 104857600)),
                                      connections_max_idle_ms=int(values.get("connections.max.idle.ms", 600000)))
        try:
            sockets = bind_listeners(host, listener.ports, listener.backlog)
        except OSError as e:
            raise UsageError(f"--port {port}: cannot listen on {host}:{port}..{port + brokers - 1}: {e.strerror or e}") from None
        self.trace = None
        if trace_path:
            try:
                self.trace = open(trace_path, "w", buffering=1 << 16)
            except OSError as e:
                for s in sockets:
                    s.close()
                raise UsageError(f"--trace {trace_path}: {e.strerror or e}") from None
        formed = None if faults_when_formed is None else (lambda: self.group_formed(faults_when_formed))
        injector = FaultInjector(faults, self.clock.milliseconds(), formed) if faults else None
        self.server = SocketServer(self.cluster, self.apis, self.clock, wall, listener, sockets, self.log, self.trace,
                                   interceptor=injector)

    def group_formed(self, members: int) -> bool:
        """Whether some group on a live broker has at least *members* members in a stable
        generation, each holding its assignment: a classic group Stable with every member's
        SyncGroup received (``GroupMetadata.hasReceivedSyncFromAllMembers``: a follower's comes
        after the leader's made the group Stable), or a KIP-848 consumer group Stable (every member
        reconciled to the target assignment epoch)."""
        for broker_id in self.cluster.alive_broker_ids():
            broker = self.cluster.broker(broker_id)
            for group in broker.group_coordinator.group_manager.current_groups():
                if group.current_state().value == "Stable" and group.size() >= members and \
                        group.has_received_sync_from_all_members():
                    return True
            if broker.consumer_groups is not None:
                for group in broker.consumer_groups.groups.values():
                    if group.state.value == "Stable" and len(group.members) >= members:
                        return True
        return False

    @property
    def ports(self) -> List[int]:
        return self.server.ports

    def ready_line(self) -> str:
        ports = self.ports
        consecutive = ports == list(range(ports[0], ports[0] + len(ports)))
        span = (f"{ports[0]}" if len(ports) == 1 else f"{ports[0]}..{ports[-1]}" if consecutive
                else ",".join(map(str, ports)))
        n = len(ports)
        return f"listening on {self.server.config.host}:{span} ({n} broker{'s' if n > 1 else ''})"

    def failover(self) -> None:
        moves = self.server.failover()
        brokers = sorted({(old, new) for _, old, new in moves})
        self.log("coordinator failover: " + (", ".join(f"broker {o} -> {n}" for o, n in brokers) or "nothing to move")
                 + f" ({len(moves)} __consumer_offsets partitions)")

    def close(self) -> None:
        if self.trace is not None:
            self.trace.close()


def cmd_broker(args) -> int:
    process = BrokerProcess(args.host, args.port, args.brokers, args.partitions, args.topic, args.settings, args.trace,
                            faults_path=args.faults, faults_when_formed=args.faults_when_formed)
    server = process.server

    def on_failover(signum, frame):
        server.call_soon(process.failover)

    def on_stop(signum, frame):
        server.stop()

    signal.signal(signal.SIGUSR1, on_failover)
    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    injector = server.interceptor
    if injector is not None:
        hold = ("" if args.faults_when_formed is None else
                f"; held at the first fault until a group of {args.faults_when_formed} has formed")
        process.log(f"fault schedule {args.faults}: {len(injector.faults)} faults, at_ms counted from "
                    f"{injector.start_ms} (wall-clock ms){hold}")
    process.log(process.ready_line())
    try:
        server.serve()
    finally:
        process.close()
    process.log(f"stopped after {server.requests:,} requests")
    return 0
