"""What every runner shares: its configuration, its JSON-lines output, SIGTERM as "stop politely",
and the explicit-offset commit schedule."""

from __future__ import annotations

import faulthandler
import json
import signal
import sys
import time
from typing import Any, Dict, Optional


def config() -> Dict[str, Any]:
    """The runner's configuration (argv[1], a JSON object; see the package docstring)."""
    return json.loads(sys.argv[1])


def emit(event: str, **fields: Any) -> None:
    """One JSON line on stdout, flushed, stamped with the wall clock in milliseconds."""
    print(json.dumps({"event": event, "wall_ms": int(time.time() * 1000), **fields}), flush=True)


def partitions_changed(kind: str, partitions, incremental: bool = False) -> None:
    """A ``revoked``, ``assigned`` or ``lost`` line for *partitions* (objects with ``.partition``);
    *incremental*: an ``assigned`` of the partitions added only (cooperative or KIP-848 callbacks)."""
    if incremental and kind == "assigned":
        emit(kind, partitions=sorted(p.partition for p in partitions), incremental=True)
    else:
        emit(kind, partitions=sorted(p.partition for p in partitions))


def rebalance_listener(base, asynchronous: bool = False):
    """An instance of a subclass of *base* (the library's ConsumerRebalanceListener) whose three
    callbacks print ``revoked``, ``assigned`` and ``lost`` lines (coroutines if *asynchronous*)."""
    def callback(kind: str):
        if asynchronous:
            async def changed(self, partitions):
                partitions_changed(kind, partitions)
        else:
            def changed(self, partitions):
                partitions_changed(kind, partitions)
        return changed

    return type("Listener", (base,), {f"on_partitions_{k}": callback(k) for k in ("revoked", "assigned", "lost")})()


def python_client_settings(c: Dict[str, Any], assignors: Dict[str, Any], collection=list) -> Dict[str, Any]:
    """The schedule's consumer settings as kafka-python's and aiokafka's keyword arguments (both
    take Kafka's names in snake case); the assignor classes in *collection*."""
    s = c["settings"]
    kwargs = {"session_timeout_ms": s.get("session.timeout.ms"), "heartbeat_interval_ms": s.get("heartbeat.interval.ms"),
              "max_poll_interval_ms": s.get("max.poll.interval.ms"), "request_timeout_ms": s.get("request.timeout.ms")}
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    if c.get("group_instance_id"):
        kwargs["group_instance_id"] = c["group_instance_id"]  # a static member (KIP-345)
    if "partition.assignment.strategy" in s:
        kwargs["partition_assignment_strategy"] = collection(assignors[a] for a in s["partition.assignment.strategy"])
    return kwargs


class Stop:
    """Set by SIGTERM; the runner's loop checks it, closes its consumer (LeaveGroup) and exits.
    SIGUSR1 prints every thread's stack on stderr (where a hung client is stuck)."""

    requested = False

    @classmethod
    def install(cls) -> None:
        faulthandler.register(signal.SIGUSR1, all_threads=True)
        signal.signal(signal.SIGTERM, lambda signum, frame: setattr(cls, "requested", True))


class MemberWatch:
    """Prints a ``member`` line whenever what the library exposes of its membership changes."""

    def __init__(self) -> None:
        self.last: Optional[tuple] = None

    def see(self, member_id: Optional[str], generation: Optional[int], state: Optional[str]) -> None:
        now = (member_id, generation, state)
        if now != self.last:
            self.last = now
            emit("member", member_id=member_id, generation=generation, state=state)


class CommitClock:
    """Due every ``commit_interval_ms``; the offset to commit grows by one each time."""

    def __init__(self, interval_ms: int) -> None:
        self.interval_s = interval_ms / 1000.0
        self.next = time.monotonic() + self.interval_s
        self.offset = 0

    def due(self) -> bool:
        if time.monotonic() < self.next:
            return False
        self.next = time.monotonic() + self.interval_s
        self.offset += 1
        return True
