"""``groupcheck consume``: impl's consumer over TCP against any Kafka-compatible broker, printing
its membership events.

``groupcheck consume --bootstrap HOST:PORT --group G --topic T [--set k=v ...] [--json]
[--duration SECONDS] [--client-id ID]`` runs :class:`impl.consumer.Consumer` on a
:class:`~impl.network.wire_selector.WireSelector` with the wall clock, and prints a line per event:

* ``joined generation N as leader|follower, member id M`` (``"event": "joined"``)
* ``assigned [t-0, t-1]`` / ``revoked [...]`` / ``lost [...]`` (the rebalance listener's calls)
* ``committed {t-0: 0}`` (the positions it owns, committed every ``--commit-interval`` seconds and
  before giving partitions up; impl's consumer fetches no records, so positions stay where they
  start unless committed offsets say otherwise)

The heartbeat: Kafka runs it on a thread of its own; here one loop alternates the application's
``poll`` (bounded by the time to the next heartbeat) and one iteration of the heartbeat thread
(:meth:`impl.consumer.HeartbeatThreadRunner.run_once`), an equivalent schedule on one thread.

``--protocol consumer`` runs KIP-848's protocol instead (:class:`impl.membership.consumer.ModernConsumer`:
ConsumerGroupHeartbeat, the coordinator assigning): ``epoch N, member id M`` (``"event": "epoch"``)
each time the member epoch changes, then the same assigned / revoked / lost / committed lines. The
classic settings the coordinator owns then (session.timeout.ms, heartbeat.interval.ms,
partition.assignment.strategy) are refused, as Kafka refuses them; group.remote.assignor is accepted.

Ctrl-C or SIGTERM leaves the group (LeaveGroup, or a heartbeat at epoch -1 / -2) and exits 130 or
143; ``--duration`` ends with 0.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import socket
import sys
from typing import Any, Dict, List, Optional

from impl.consumer import DEFAULT_CONFIG, Consumer, ConsumerRebalanceListener
from impl.errors import KafkaException
from impl.membership.consumer import CLASSIC_ONLY, REMOTE_ASSIGNOR, ModernConsumer
from impl.network.wire_selector import WireSelector
from impl.protocol import TopicPartition
from impl.time import SystemTime
from properties.errors import UsageError, host_and_port, whole_number
from properties.live.child import add_set_option, split_settings

#: Settings ``--set`` accepts: impl's consumer configuration keys, minus those it fixes itself.
_FIXED = ("bootstrap.servers", "group.id", "client.id", "enable.auto.commit")
#: Settings whose value is a string (the rest are integers, booleans or the assignor list).
_TEXT = ("group.instance.id",)


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "consume", help="run groupcheck's consumer against a broker over TCP and print its membership events",
        description="Join group G on topic T with groupcheck's own consumer (impl/) over TCP and print membership "
                    "events: joined (generation, leader or follower, member id), assigned, revoked, lost, committed. "
                    "The heartbeat runs in the same loop as poll (one thread).")
    p.add_argument("--bootstrap", required=True, metavar="HOST:PORT", help="a broker to bootstrap from")
    p.add_argument("--group", required=True, help="the consumer group id")
    p.add_argument("--topic", required=True, action="append", help="a topic to subscribe to (repeatable)")
    p.add_argument("--client-id", default="groupcheck-consume", help="client.id (default groupcheck-consume)")
    add_set_option(p, "a consumer setting by its Kafka name, e.g. session.timeout.ms=10000, "
                      "partition.assignment.strategy=roundrobin")
    p.add_argument("--duration", type=float, default=None, metavar="SECONDS", help="stop after SECONDS (default: run "
                                                                                   "until Ctrl-C or SIGTERM)")
    p.add_argument("--commit-interval", type=float, default=5.0, metavar="SECONDS",
                   help="commit the owned positions this often (default 5)")
    p.add_argument("--protocol", choices=("classic", "consumer"), default="classic",
                   help="the group protocol: classic (JoinGroup/SyncGroup, the default) or consumer (KIP-848's "
                        "ConsumerGroupHeartbeat, group.protocol=consumer)")
    p.add_argument("--json", action="store_true", help="one JSON object per event")
    p.set_defaults(func=cmd_consume)
    return p


def parse_consumer_settings(pairs: List[str], protocol: str = "classic") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for name, value in split_settings(pairs, UsageError):
        if name in _FIXED:
            raise UsageError(f"--set {name}: set by groupcheck consume itself (use --bootstrap, --group, --client-id)")
        if protocol == "consumer" and name in CLASSIC_ONLY:
            raise UsageError(f"--set {name}: not a setting of KIP-848's consumer protocol (the coordinator decides it; "
                             "Kafka refuses it with group.protocol=consumer)")
        if protocol == "consumer" and name == REMOTE_ASSIGNOR:
            if not value.strip():
                raise UsageError(f"--set {name}: expected an assignor's name (uniform, range)")
            out[name] = value.strip()
            continue
        if name not in DEFAULT_CONFIG:
            known = ", ".join(k for k in DEFAULT_CONFIG if k not in _FIXED)
            raise UsageError(f"--set {name}: not a consumer setting groupcheck knows (known: {known})")
        default = DEFAULT_CONFIG[name]
        if name in _TEXT:
            if not value.strip():
                raise UsageError(f"--set {name}: expected a non-empty string (a static member's id, KIP-345)")
            out[name] = value.strip()
        elif name == "partition.assignment.strategy":
            out[name] = [s.strip() for s in value.split(",") if s.strip()]
        elif isinstance(default, bool):
            if value.lower() not in ("true", "false"):
                raise UsageError(f"--set {name}={value}: expected true or false")
            out[name] = value.lower() == "true"
        else:
            out[name] = whole_number(f"--set {name}={value}", value, what="an integer (milliseconds)")
    return out


class EventPrinter(ConsumerRebalanceListener):
    """Membership events as lines or JSON lines, in the order they happen."""

    def __init__(self, consumer_ref: List[Consumer], time: SystemTime, as_json: bool, out=sys.stdout) -> None:
        self.consumer_ref = consumer_ref
        self.time = time
        self.as_json = as_json
        self.out = out
        self.events = 0
        self.epoch = 0  # the member epoch last shown (KIP-848)

    def emit(self, event: str, text: str, **fields: Any) -> None:
        self.events += 1
        if self.as_json:
            line = json.dumps({"event": event, "time_ms": self.time.milliseconds(), **fields})
        else:
            line = f"{event:9} {text}"
        print(line, file=self.out, flush=True)

    @staticmethod
    def _names(partitions) -> List[str]:
        return sorted(f"{tp.topic}-{tp.partition}" for tp in partitions)

    def see_epoch(self) -> None:
        """KIP-848: an ``epoch`` event when the member epoch changed since the last look."""
        consumer = self.consumer_ref[0]
        if consumer.member_epoch != self.epoch:
            self.epoch = consumer.member_epoch
            self.emit("epoch", f"member epoch {consumer.member_epoch}, member id {consumer.member_id}",
                      member_epoch=consumer.member_epoch, member_id=consumer.member_id, state=consumer.state.name)

    def on_partitions_assigned(self, partitions: List[TopicPartition]) -> None:
        if isinstance(self.consumer_ref[0], ModernConsumer):
            self.see_epoch()
            names = self._names(partitions)
            self.emit("assigned", "[" + ", ".join(names) + "]", partitions=names)
            return
        coordinator = self.consumer_ref[0].coordinator
        generation = coordinator.generation
        role = "leader" if coordinator.is_leader else "follower"
        self.emit("joined", f"generation {generation.generation_id} as {role}, member id {generation.member_id}",
                  generation=generation.generation_id, member_id=generation.member_id, leader=coordinator.is_leader,
                  protocol=generation.protocol_name)
        names = self._names(partitions)
        self.emit("assigned", "[" + ", ".join(names) + "]", partitions=names)

    def on_partitions_revoked(self, partitions: List[TopicPartition]) -> None:
        names = self._names(partitions)
        if names:
            self.commit_now(synchronous=True)
        self.emit("revoked", "[" + ", ".join(names) + "]", partitions=names)

    def on_partitions_lost(self, partitions: List[TopicPartition]) -> None:
        names = self._names(partitions)
        self.emit("lost", "[" + ", ".join(names) + "]", partitions=names)

    def commit_now(self, synchronous: bool = False) -> None:
        consumer = self.consumer_ref[0]
        if isinstance(consumer, ModernConsumer):  # no fetching: the positions stay at 0
            offsets = {tp: 0 for tp in consumer.assignment()}
            synchronous = True
        else:
            offsets = dict(consumer.subscriptions.all_consumed())
        if not offsets:
            return

        def done(committed, exception) -> None:
            if exception is not None:
                self.emit("commit-failed", f"{type(exception).__name__}: {exception}", error=type(exception).__name__,
                          message=str(exception))
                return
            shown = {f"{tp.topic}-{tp.partition}": getattr(om, "offset", om) for tp, om in sorted(
                committed.items(), key=lambda item: (item[0].topic, item[0].partition))}
            self.emit("committed", "{" + ", ".join(f"{k}: {v}" for k, v in shown.items()) + "}", offsets=shown)

        if synchronous:
            try:
                consumer.commit_sync(offsets, timeout_ms=5000)
            except KafkaException as e:
                done(offsets, e)
                return
            done(offsets, None)
        else:
            consumer.commit_async(offsets, done)


def check_reachable(bootstrap: str, timeout_s: float = 3.0) -> None:
    host, _, port = bootstrap.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as e:
        raise UsageError(f"--bootstrap {bootstrap}: cannot connect ({e.strerror or e})") from None


def cmd_consume(args) -> int:
    bootstrap = "%s:%d" % host_and_port(args.bootstrap)
    settings = parse_consumer_settings(args.settings, args.protocol)
    if args.duration is not None and not args.duration > 0:
        raise UsageError(f"--duration must be positive, got {args.duration}")
    if not args.commit_interval > 0:
        raise UsageError(f"--commit-interval must be positive, got {args.commit_interval}")
    check_reachable(bootstrap)
    time = SystemTime()
    log = (lambda line: print(f"groupcheck consume: {line}", file=sys.stderr, flush=True))
    config = {"bootstrap.servers": [bootstrap], "group.id": args.group, "client.id": args.client_id, **settings}
    transport = WireSelector(time, args.client_id, log=log)
    try:
        if args.protocol == "consumer":
            consumer = ModernConsumer(config, time, transport, random.Random())
        else:
            consumer = Consumer(config, time, transport, random.Random(), discover_broker_versions=True)
    except KafkaException as e:
        raise UsageError(f"--set: {e}") from None
    printer = EventPrinter([consumer], time, args.json)
    consumer.subscribe(args.topic, printer)
    stop: List[Optional[int]] = [None]

    def on_signal(signum, frame):
        stop[0] = 128 + signum
        transport.wakeup()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    start = time.milliseconds()
    next_commit = start + int(args.commit_interval * 1000)
    end = None if args.duration is None else start + int(args.duration * 1000)
    try:
        while stop[0] is None:
            now = time.milliseconds()
            if end is not None and now >= end:
                stop[0] = 0
                break
            consumer.poll(100 if end is None else max(0, min(100, end - now)))
            if args.protocol == "consumer":
                printer.see_epoch()
            else:
                consumer.heartbeat_thread.run_once()
            if time.milliseconds() >= next_commit:
                printer.commit_now()
                next_commit = time.milliseconds() + int(args.commit_interval * 1000)
    except KafkaException as e:
        log(f"stopped: {type(e).__name__}: {e}")
        stop[0] = 1
    finally:
        try:
            consumer.close(5000)
        except KafkaException as e:
            log(f"close: {e}")
    return stop[0]
