"""Fault schedules for ``groupcheck broker --faults FILE`` (issue 15: judging real clients under faults).

A schedule is a JSON file ``{"faults": [FAULT, ...]}``; each fault is an object with a ``kind``:

=========== ===================================================================================================
``error``    answer a request with an error instead of handling it (``api``, ``error``: a Kafka error name
             such as ``REBALANCE_IN_PROGRESS``). The coordinator never sees the request
             (``AbstractRequest.getErrorResponse``, as a broker that refuses it early answers).
``delay``    handle the request at once but hold its response for ``ms`` (the connection stays muted
             meanwhile, as Kafka's does until a response is written).
``drop``     close the connection: ``when: "before"`` on receipt, the request never handled; ``"after"``
             once handled, the response never written (the client cannot tell which happened).
``failover`` at ``at_ms``: every ``__consumer_offsets`` partition moves to the next live broker, which
             reloads the groups (the same as SIGUSR1): members get NOT_COORDINATOR and rediscover.
``silence``  from ``at_ms`` for ``ms``: the connections of client ``client`` are neither read nor
             answered (a network partition of one member; make ``ms`` longer than its session
             timeout and the coordinator expires it). What it sent meanwhile is handled afterwards.
``pause``    from ``at_ms`` for ``ms``: the same for every connection of broker ``broker`` (a stalled
             broker: its timers still run on the wall clock, as a JVM's do across a GC pause).
=========== ===================================================================================================

The request faults (``error``, ``delay``, ``drop``) select requests by ``api`` (required), ``client``
(a client id, exact; default: any), ``broker`` (default: any) and ``at_ms`` (received at least that
long after the broker started; default 0); ``after`` matching requests pass untouched first
(default 0), then the fault applies to the next ``count`` (default 1). A request takes the first
fault of the schedule that selects it; a request no fault selects is handled normally.

Every injection is written to the ``--trace`` (``direction: "fault"``, ``fault``: the fault's index
and kind) and logged on stderr, so that a judge reading the trace knows what was done on purpose.
:func:`load` and :func:`parse` raise :class:`~properties.errors.UsageError` naming the fault and the
field, for a file that is not JSON, a kind or an error name groupcheck does not know, a negative time.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Tuple

import attrs

from impl.errors import Errors
from properties.errors import UsageError

#: the longest a fault schedule waits for its group to form (``--faults-when-formed``)
HOLD_LIMIT_MS = 60000

KINDS = ("error", "delay", "drop", "failover", "silence", "pause")
REQUEST_KINDS = ("error", "delay", "drop")
#: the APIs a request fault may select: the ones a consumer group's members send
APIS = ("FindCoordinator", "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch",
        "Metadata", "ListOffsets", "Fetch", "ConsumerGroupHeartbeat")
#: the APIs an ``error`` fault can answer (the ones with an error response groupcheck can write)
ERROR_APIS = ("FindCoordinator", "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch",
              "ConsumerGroupHeartbeat")
_FIELDS = {
    "error": ("api", "error", "client", "broker", "at_ms", "after", "count"),
    "delay": ("api", "ms", "client", "broker", "at_ms", "after", "count"),
    "drop": ("api", "when", "client", "broker", "at_ms", "after", "count"),
    "failover": ("at_ms",),
    "silence": ("client", "at_ms", "ms"),
    "pause": ("broker", "at_ms", "ms"),
}
_REQUIRED = {"error": ("api", "error"), "delay": ("api", "ms"), "drop": ("api", "when"), "failover": ("at_ms",),
             "silence": ("client", "at_ms", "ms"), "pause": ("broker", "at_ms", "ms")}


@attrs.frozen
class Fault:
    """One fault of a schedule (see the module docstring for each kind's fields)."""

    index: int
    kind: str
    api: Optional[str] = None
    error: Optional[str] = None
    when: Optional[str] = None
    client: Optional[str] = None
    broker: Optional[int] = None
    at_ms: int = 0
    ms: int = 0
    after: int = 0
    count: int = 1

    def label(self) -> str:
        """``fault 2 (error REBALANCE_IN_PROGRESS on Heartbeat of consumer-1)``: for logs."""
        what = {"error": f"error {self.error} on {self.api}", "delay": f"delay {self.ms} ms on {self.api}",
                "drop": f"drop {self.when} {self.api}", "failover": "failover",
                "silence": f"silence {self.client} for {self.ms} ms", "pause": f"pause broker {self.broker} for {self.ms} ms"
                }[self.kind]
        if self.kind in REQUEST_KINDS and self.client is not None:
            what += f" of {self.client}"
        return f"fault {self.index} ({what})"

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"kind": self.kind}
        for name in _FIELDS[self.kind]:
            value = getattr(self, name)
            default = attrs.fields_dict(Fault)[name].default
            if value != default or name in _REQUIRED[self.kind]:
                out[name] = value
        return out


def _int(where: str, name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{where}: {name} must be an integer, got {value!r}")
    if value < minimum:
        raise UsageError(f"{where}: {name} must be at least {minimum}, got {value}")
    return value


def parse(document: Any, source: str = "the schedule", brokers: Optional[int] = None) -> Tuple[Fault, ...]:
    """The faults of a decoded schedule; *brokers*, if given, bounds ``broker`` fields."""
    if not isinstance(document, dict) or not isinstance(document.get("faults"), list):
        raise UsageError(f"{source}: expected an object {{\"faults\": [...]}}")
    unknown = sorted(set(document) - {"faults", "comment"})
    if unknown:
        raise UsageError(f"{source}: unknown key {unknown[0]!r} (a schedule has \"faults\" and an optional \"comment\")")
    faults = []
    for i, item in enumerate(document["faults"]):
        where = f"{source}: fault {i}"
        if not isinstance(item, dict):
            raise UsageError(f"{where}: expected an object, got {item!r}")
        kind = item.get("kind")
        if kind not in KINDS:
            raise UsageError(f"{where}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        allowed = _FIELDS[kind]
        for name in item:
            if name != "kind" and name not in allowed:
                raise UsageError(f"{where}: a {kind} fault has no field {name!r} (its fields: {', '.join(allowed)})")
        for name in _REQUIRED[kind]:
            if name not in item:
                raise UsageError(f"{where}: a {kind} fault needs {name!r}")
        values: Dict[str, Any] = {}
        if "api" in item:
            apis = ERROR_APIS if kind == "error" else APIS
            if item["api"] not in apis:
                raise UsageError(f"{where}: api must be one of {', '.join(apis)}, got {item['api']!r}")
            values["api"] = item["api"]
        if "error" in item:
            name = item["error"]
            if not isinstance(name, str) or name.upper() not in Errors.__members__ or name.upper() == "NONE":
                raise UsageError(f"{where}: error must be a Kafka error name such as REBALANCE_IN_PROGRESS, got {name!r}")
            values["error"] = name.upper()
        if "when" in item:
            if item["when"] not in ("before", "after"):
                raise UsageError(f"{where}: when must be \"before\" or \"after\", got {item['when']!r}")
            values["when"] = item["when"]
        if "client" in item:
            if not isinstance(item["client"], str) or not item["client"]:
                raise UsageError(f"{where}: client must be a client id (a non-empty string), got {item['client']!r}")
            values["client"] = item["client"]
        if "broker" in item:
            values["broker"] = _int(where, "broker", item["broker"], 0)
            if brokers is not None and values["broker"] >= brokers:
                raise UsageError(f"{where}: broker {values['broker']} does not exist (brokers 0..{brokers - 1})")
        for name, minimum in (("at_ms", 0), ("ms", 1), ("after", 0), ("count", 1)):
            if name in item:
                values[name] = _int(where, name, item[name], minimum)
        faults.append(Fault(index=i, kind=kind, **values))
    return tuple(faults)


def load(path: str, brokers: Optional[int] = None) -> Tuple[Fault, ...]:
    """The faults of the schedule file *path* (see :func:`parse`)."""
    source = f"--faults {path}"
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"{source}: {e.strerror or e}") from None
    try:
        document = json.loads(text)
    except ValueError as e:
        raise UsageError(f"{source}: not JSON: {e}") from None
    return parse(document, source, brokers)


@attrs.frozen
class Intercept:
    """What to do with one request (:meth:`FaultInjector.on_request`)."""

    fault: Fault

    @property
    def kind(self) -> str:
        return self.fault.kind if self.fault.kind != "drop" else f"drop-{self.fault.when}"


class FaultInjector:
    """A schedule applied by the :class:`~impl.server.socket_server.SocketServer` (its ``interceptor``):
    it selects requests (:meth:`on_request`), says until when a connection is held
    (:meth:`held_until`), and fires the timed faults (:meth:`fire_due`). Times are the broker's
    wall-clock milliseconds; ``at_ms`` counts from *start_ms*."""

    def __init__(self, faults: Tuple[Fault, ...], start_ms: int, formed: Optional[Callable[[], bool]] = None,
                 hold_limit_ms: int = HOLD_LIMIT_MS) -> None:
        self.faults = faults
        self.start_ms = start_ms
        # the hold (``--faults-when-formed``): until *formed* says yes, the fault clock stands at the
        # schedule's first fault, at most hold_limit_ms (see :meth:`_hold`)
        self._formed = formed
        self._first_at = min((f.at_ms for f in faults), default=0)
        self.hold_limit_ms = hold_limit_ms
        self.held_ms = 0  # how long the clock stood still
        self.hold_outcome: Optional[str] = None  # "in time", "formed" or "gave up", until it is logged
        self._seen = [0] * len(faults)
        self._applied = [0] * len(faults)
        self._timed = sorted((f for f in faults if f.kind in ("failover", "silence", "pause")),
                             key=lambda f: (f.at_ms, f.index))
        self._next_timed = 0
        self.injected: List[Tuple[int, Fault]] = []  # (time, fault), in order

    # -- the hold -----------------------------------------------------------------------------------

    def _hold(self, now_ms: int) -> None:
        """Keep the fault clock at the schedule's first fault until the group has formed.

        A schedule's times are meant for a formed group (:data:`properties.clients.schedule.FAULTS_FROM_MS`);
        on a slow host the consumers may still be joining then, and a fault meant for a member lands
        on a joining consumer instead: the same seed would test another point of the protocol. So
        when the clock reaches the first fault and *formed* says no, the zero of ``at_ms`` moves on
        with the wall clock (every fault keeps its place relative to the others) until *formed* says
        yes, or for at most :attr:`hold_limit_ms`; then the clock runs again. A group formed in
        time costs nothing: the zero never moves, and the schedule runs as it would without a hold.
        Every look at the schedule's clock (a request, a held connection, the timed faults) calls it
        first; once the hold is decided it returns at once."""
        if self._formed is None or now_ms - self.start_ms < self._first_at:
            return
        formed = self._formed()
        if self.held_ms or not formed:
            # holding, the zero follows the wall clock: now stands 1 ms before the first fault while
            # the group forms, at the first fault once it has formed
            zero = now_ms - self._first_at + (0 if formed else 1)
            moved = min(max(0, zero - self.start_ms), self.hold_limit_ms - self.held_ms)
            self.start_ms += moved
            self.held_ms += moved
            if not formed and self.held_ms < self.hold_limit_ms:
                return
        self._formed = None  # looked at for the last time
        self.hold_outcome = ("in time" if not self.held_ms else "formed" if formed else "gave up")

    def hold_line(self) -> str:
        """The log line that says, once, how the hold ended — not needed (the group had formed in
        time), the group formed, or the limit passed — and the zero of ``at_ms`` from then on
        (:func:`properties.clients.session` reads it, as it reads the first)."""
        outcome, self.hold_outcome = self.hold_outcome, None
        if outcome == "in time":
            what = "fault clock not held: the group had formed by the first fault"
        elif outcome == "formed":
            what = f"fault clock held {self.held_ms} ms until the group formed"
        else:
            what = (f"fault clock held {self.held_ms} ms and the group had not formed after {self.hold_limit_ms} ms: "
                    "the faults run now")
        return f"{what}; at_ms counted from {self.start_ms} (wall-clock ms)"

    # -- request faults ---------------------------------------------------------------------------

    def on_request(self, broker_id: int, client_id: Optional[str], api: str, now_ms: int) -> Optional[Intercept]:
        """The fault that applies to this request, or None (handle it normally)."""
        self._hold(now_ms)
        for i, fault in enumerate(self.faults):
            if fault.kind not in REQUEST_KINDS or fault.api != api:
                continue
            if fault.client is not None and fault.client != client_id:
                continue
            if fault.broker is not None and fault.broker != broker_id:
                continue
            if now_ms - self.start_ms < fault.at_ms or self._applied[i] >= fault.count:
                continue
            self._seen[i] += 1
            if self._seen[i] <= fault.after:
                continue
            self._applied[i] += 1
            self.injected.append((now_ms, fault))
            return Intercept(fault)
        return None

    # -- held connections -------------------------------------------------------------------------

    def held_until(self, broker_id: int, client_id: Optional[str], now_ms: int) -> Optional[int]:
        """The end of the latest silence or pause holding a connection of *client_id* to broker
        *broker_id* at *now_ms*, or None if nothing holds it."""
        self._hold(now_ms)
        until = None
        elapsed = now_ms - self.start_ms
        for fault in self._timed:
            if fault.kind == "silence" and (client_id is None or fault.client != client_id):
                continue
            if fault.kind == "pause" and fault.broker != broker_id:
                continue
            if fault.kind == "failover" or not fault.at_ms <= elapsed < fault.at_ms + fault.ms:
                continue
            end = self.start_ms + fault.at_ms + fault.ms
            until = end if until is None else max(until, end)
        return until

    # -- timed faults -----------------------------------------------------------------------------

    def next_deadline(self) -> Optional[int]:
        """When the next timed fault starts, in broker milliseconds (the end of a silence or pause
        needs no timer here: what it held is released by the server at the time :meth:`held_until`
        gave)."""
        if self._next_timed >= len(self._timed):
            return None
        if self._formed is not None and self.held_ms:
            return None  # holding: the server's own wake-ups (at most a poll's wait apart) look again
        return self.start_ms + self._timed[self._next_timed].at_ms

    def due(self, now_ms: int) -> List[Fault]:
        """The timed faults whose start has come (each returned once, in schedule time order)."""
        self._hold(now_ms)
        out = []
        while self._next_timed < len(self._timed) and self.start_ms + self._timed[self._next_timed].at_ms <= now_ms:
            fault = self._timed[self._next_timed]
            self._next_timed += 1
            self.injected.append((now_ms, fault))
            out.append(fault)
        return out

    def fire_due(self, now_ms: int, server) -> None:
        """Start the timed faults whose time has come: a failover moves the coordinators now; a
        silence or a pause only needs its start written down (the server asks :meth:`held_until`
        for every request and response). The end of a hold is logged here, with the new zero of
        ``at_ms``."""
        due = self.due(now_ms)  # (the hold is looked at first)
        if self.hold_outcome is not None:  # the hold ended now or at a request since the last look
            server.log(self.hold_line())
        for fault in due:
            server.trace_fault(fault.to_json())
            if fault.kind == "failover":
                moves = server.failover()
                pairs = sorted({(old, new) for _, old, new in moves})
                server.log(f"{fault.label()}: " + (", ".join(f"broker {o} -> {n}" for o, n in pairs) or "nothing to move")
                           + f" ({len(moves)} __consumer_offsets partitions)")
            else:
                server.log(f"{fault.label()} starts")
