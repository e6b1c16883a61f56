"""Run one client schedule: ``groupcheck broker`` with the schedule's faults, N consumers of one
library, the faults, then the group's chance to settle.

:func:`run` starts the broker (a child process: ``--faults``, ``--trace``, one topic of the
schedule's partitions, no initial rebalance delay), then the N runners (``c0`` … ``c{N-1}``,
:mod:`properties.clients.runners`), waits until the last fault is over, then polls until the group
has settled — every live consumer owns partitions (when there are enough), every partition has
exactly one owner by the consumers' own callbacks, and the coordinator says ``Stable`` with exactly
the live consumers as members (DescribeGroups; ConsumerGroupDescribe for a KIP-848 group) — or
``settle_ms`` pass. Then it stops the consumers
(SIGTERM: they close and leave; one that does not exit within 15 s is killed and noted) and the
broker, and returns an :class:`Outcome`: the broker's trace, every consumer's events, what
settling found. Judging is :mod:`properties.clients.judge`'s.

The schedule's times are meant for a formed group, so the broker runs with
``--faults-when-formed N``: on a host slow enough that the N consumers have not formed their group
when the first fault is due, the schedule's clock waits for them (at most a minute), and the same
seed meets the group at the same point of the protocol on any host. The outcome's ``start_ms`` is
the zero the faults finally counted from, its ``held_ms`` how long the clock was held (the report
counts the schedules that waited), and a note says so if the group never formed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

from properties.engine import children

import attrs

from properties.targets import Target
from properties.clients.schedule import CONSUMER_BROKER_SETTINGS, ClientSchedule
from properties.live.child import JsonLines
from properties.live.faults import HOLD_LIMIT_MS
from properties.live.exchange import describe_consumer_group as exchange_describe_consumer_group
from properties.live.exchange import describe_group as exchange_describe_group
from properties.live.launch import launch_groupcheck_broker

TOPIC = "orders"
COMMIT_INTERVAL_MS = 700
BROKER_SETTINGS = ("group.initial.rebalance.delay.ms=0",)


@attrs.frozen
class Settle:
    """What the group looked like when the session stopped waiting."""

    settled: bool
    waited_ms: int
    owners: Dict[int, List[str]]  # partition -> the consumers whose callbacks say they own it
    group_state: Optional[str]
    members: Tuple[str, ...]  # client ids of the coordinator's members
    detail: str  # why it did not settle ("" if it did)


@attrs.frozen
class Outcome:
    schedule: ClientSchedule
    library: str
    trace: Tuple[dict, ...]  # the broker's trace lines
    events: Dict[str, Tuple[dict, ...]]  # client id -> its runner's lines
    settle: Settle
    start_ms: int  # the broker's clock when the fault schedule started (its at_ms zero)
    stop_ms: int  # when the session began stopping the consumers (wall-clock ms)
    notes: Tuple[str, ...] = ()  # what went wrong around the consumers (a runner that died, would not stop)
    stderr: Dict[str, str] = attrs.field(factory=dict)  # client id -> the tail of its stderr
    held_ms: int = 0  # how long the broker held the fault schedule for the group to form (--faults-when-formed)


class SessionError(Exception):
    """A schedule could not be run at all (its broker did not start)."""


class _Runner:
    def __init__(self, library: Target, client_id: str, config: Dict[str, Any], log_dir: str) -> None:
        self.client_id = client_id
        self.stderr_path = os.path.join(log_dir, f"{client_id}.stderr")
        self._stderr = open(self.stderr_path, "w")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.process = children.popen([sys.executable, "-m", library.runner, json.dumps(config)],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr,
                                        text=True, env=env)
        self.lines = JsonLines(self.process.stdout)

    def snapshot(self) -> List[dict]:
        return self.lines.snapshot()

    def owned(self) -> Optional[List[int]]:
        """The partitions its callbacks say it owns now (None: no assignment yet)."""
        owned = None
        for e in self.snapshot():
            if e["event"] == "assigned":
                owned = sorted(set(owned or []) | set(e["partitions"])) if _incremental(e) else list(e["partitions"])
            elif e["event"] in ("revoked", "lost"):
                owned = sorted(set(owned or []) - set(e["partitions"]))
        return owned

    def alive(self) -> bool:
        return self.process.poll() is None

    def failed_fatally(self) -> Optional[str]:
        """The first error its library raised that is fatal to a KIP-848 member (the instance id's
        errors, ``ConsumerHeartbeatRequestManager.handleSpecificErrors``), or None."""
        for e in self.snapshot():
            if e["event"] == "error" and any(name in str(e.get("error", "")) for name in FATAL_ERRORS):
                return str(e["error"])
        return None

    def diagnoses(self) -> List[str]:
        """What the runner recognised in its library's own state (its ``diagnosis`` lines), as notes."""
        return [f"{self.client_id}: {e['text']}" + (f" (generation {e['generation']})" if "generation" in e else "")
                for e in self.snapshot() if e["event"] == "diagnosis"]

    def stop(self, timeout_s: float) -> Optional[str]:
        """SIGTERM, then SIGKILL after *timeout_s*; a note if it had to be killed or had died."""
        note = None
        if self.process.poll() is not None:
            last = self.stderr_tail(400).strip().splitlines()
            note = (f"{self.client_id} had exited with status {self.process.returncode} before the end"
                    + (f": {last[-1]}" if last else ""))
        else:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
                note = f"{self.client_id} did not close within {timeout_s:.0f} s of SIGTERM and was killed"
        self.lines.reader.join(timeout=5)
        self._stderr.close()
        return note

    def stderr_tail(self, limit: int = 2000) -> str:
        try:
            with open(self.stderr_path, errors="replace") as f:
                return f.read()[-limit:]
        except OSError:
            return ""


def _incremental(event: dict) -> bool:
    return bool(event.get("incremental"))


def describe_group(bootstrap: str, group: str, timeout_s: float = 3.0,
                   consumer_protocol: bool = False) -> Tuple[Optional[str], Tuple[str, ...]]:
    """(state, members' client ids) of *group* from its coordinator — DescribeGroups, or for a
    KIP-848 group (*consumer_protocol*) ConsumerGroupDescribe; (None, ()) if the broker does not say."""
    host, _, port = bootstrap.rpartition(":")
    describe = exchange_describe_consumer_group if consumer_protocol else exchange_describe_group
    try:
        error, described = describe((host, int(port)), group, timeout_s, "groupcheck-settle")
    except (OSError, ValueError, EOFError, AttributeError):
        return None, ()
    if error:
        return None, ()
    return described.group_state, tuple(sorted(m.client_id for m in described.members))


#: what a library says when the coordinator answered a KIP-848 member with an error fatal to it:
#: Kafka's exceptions, the errors' names, and librdkafka's texts for them (rdkafka.c, rd_kafka_err_descs)
FATAL_ERRORS = ("UnreleasedInstanceIdException", "FencedInstanceIdException", "UNRELEASED_INSTANCE_ID",
                "FENCED_INSTANCE_ID", "The instance ID is still used by another member in the consumer group",
                "Static consumer fenced by other consumer with same group.instance.id")


def _settle_state(runners: List[_Runner], schedule: ClientSchedule, bootstrap: str, group: str) -> Settle:
    owners: Dict[int, List[str]] = {p: [] for p in range(schedule.partitions)}
    live = [r for r in runners if r.alive()]
    failed = []
    if schedule.protocol == "consumer":  # a member failed by a fatal answer is out of the group for good
        failed = [r for r in live if r.failed_fatally() is not None]
        live = [r for r in live if r not in failed]
    unassigned = []
    for r in live:
        owned = r.owned()
        if not owned:
            unassigned.append(r.client_id)
        for p in owned or []:
            owners.setdefault(p, []).append(r.client_id)
    state, members = describe_group(bootstrap, group, consumer_protocol=schedule.protocol == "consumer")
    problems = []
    if unassigned and schedule.partitions >= len(live):
        problems.append(f"{', '.join(unassigned)} own no partition")
    orphans = [p for p, o in owners.items() if not o]
    shared = {p: o for p, o in owners.items() if len(o) > 1}
    if orphans and (live or not failed):  # every consumer failed: nobody is left to own them
        problems.append(f"partitions {orphans} have no owner")
    if shared:
        problems.append("partitions with two owners: " + ", ".join(f"{p}: {'+'.join(o)}" for p, o in shared.items()))
    if failed and not live:  # the coordinator must have let every failed member go
        if state != "Empty":
            problems.append(f"every consumer failed; the coordinator says {state or 'nothing'}, not Empty")
    elif state != "Stable":
        problems.append(f"the coordinator says {state or 'nothing'}")
    elif members != tuple(sorted(r.client_id for r in live)):
        problems.append(f"the coordinator's members are {list(members)}, the live consumers "
                        f"{sorted(r.client_id for r in live)}")
    return Settle(not problems, 0, owners, state, members, "; ".join(problems))


def run(library: Target, schedule: ClientSchedule, group: str = "conform", keep_dir: Optional[str] = None,
        mutant: Optional[str] = None) -> Outcome:
    """Run *schedule* with consumers of *library* (see the module docstring); *mutant*: a consumer
    mutant for the ``groupcheck`` library's runner."""
    work = keep_dir or tempfile.mkdtemp(prefix="groupcheck-clients-")
    os.makedirs(work, exist_ok=True)
    faults_path = os.path.join(work, "faults.json")
    trace_path = os.path.join(work, "trace.jsonl")
    with open(faults_path, "w") as f:
        json.dump({"faults": [x.to_json() for x in schedule.faults]}, f)
    notes: List[str] = []
    runners: List[_Runner] = []
    try:
        broker_settings = BROKER_SETTINGS + (CONSUMER_BROKER_SETTINGS if schedule.protocol == "consumer" else ())
        broker = launch_groupcheck_broker(partitions=schedule.partitions, topics={TOPIC: schedule.partitions},
                                          settings=broker_settings, trace=trace_path, faults=faults_path,
                                          faults_when_formed=schedule.consumers)
    except RuntimeError as e:  # it printed why; nothing was started
        raise SessionError(f"schedule {schedule.seed}: {e}") from None
    try:
        start_ms = _schedule_start(broker.log())
        settings = schedule.settings_dict()
        for i in range(schedule.consumers):
            config = {"bootstrap": broker.bootstrap, "group": group, "topic": TOPIC, "client_id": schedule.client_id(i),
                      "settings": settings, "commit_interval_ms": COMMIT_INTERVAL_MS, "mutant": mutant,
                      "group_instance_id": schedule.instance_id(i), "library": library.name}
            runners.append(_Runner(library, schedule.client_id(i), config, work))
        first_due = time.time() * 1000 + min((f.at_ms for f in schedule.faults), default=0)
        while True:  # until the last fault is over, counted from where the broker's hold put the zero
            log = broker.log()
            start_ms = _schedule_start(log, start_ms)
            now = time.time() * 1000
            if _holding(log):  # the broker has not yet said whether it held the faults
                if now > first_due + HOLD_LIMIT_MS + schedule.faults_end_ms():
                    break  # (it always says, within the limit: a broker that does not is cut short)
            elif now >= start_ms + schedule.faults_end_ms():
                break
            time.sleep(0.1)
        waited_from = time.monotonic()
        deadline = waited_from + schedule.settle_ms / 1000.0
        settle = _settle_state(runners, schedule, broker.bootstrap, group)
        while not settle.settled and time.monotonic() < deadline:
            time.sleep(0.25)
            settle = _settle_state(runners, schedule, broker.bootstrap, group)
        settle = attrs.evolve(settle, waited_ms=int((time.monotonic() - waited_from) * 1000))
    finally:
        stop_ms = int(time.time() * 1000)
        for r in runners:
            note = r.stop(15.0)
            if note:
                notes.append(note)
            notes += r.diagnoses()
            fatal = r.failed_fatally() if schedule.protocol == "consumer" else None
            if fatal is not None:
                notes.append(f"{r.client_id}: failed by a fatal answer ({fatal[:160]}): out of the group for good "
                             "(the client gives up, as Kafka's does; its application must restart it), left out of the "
                             "settle check; with static members, Kafka 4.1's coordinator refuses a member its own "
                             "instance id after it was fenced (apache/kafka#23542, docs/kip848.md)")
        held_ms, formed = _held(broker.log())  # (stop removes the log)
        if not formed:
            notes.append("a schedule's group had not formed a minute after its first fault was due: its faults "
                         "ran on a group still forming")
        broker.stop()
    trace = []
    try:
        with open(trace_path) as f:
            trace = [json.loads(line) for line in f]
    except (OSError, ValueError) as e:
        notes.append(f"the broker's trace could not be read: {e}")
    outcome = Outcome(schedule, library.name, tuple(trace), {r.client_id: tuple(r.snapshot()) for r in runners},
                      settle, start_ms, stop_ms, tuple(notes), {r.client_id: r.stderr_tail() for r in runners},
                      held_ms)
    if keep_dir is None:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return outcome


def _schedule_start(log: str, default: Optional[int] = None) -> int:
    """The broker's wall-clock ms at which its fault schedule's at_ms count from (its log says; the
    last line that says it: a hold moves the zero on), else *default* (else now)."""
    found = re.findall(r"at_ms counted from (\d+)", log)
    if not found:
        return int(time.time() * 1000) if default is None else default
    return int(found[-1])


def _holding(log: str) -> bool:
    """Whether the broker was told to hold its fault schedule for the group and has not yet said how
    that ended (``--faults-when-formed``: one line once the first fault was due)."""
    return "held at the first fault" in log and "fault clock " not in log


def _held(log: str) -> Tuple[int, bool]:
    """How long the broker held the fault schedule for the group to form, and whether it did form
    (the broker's log says: ``--faults-when-formed``); (0, True) when it did not hold."""
    match = re.search(r"fault clock held (\d+) ms (until the group formed|and the group had not formed)", log)
    if match is None:
        return 0, True
    return int(match.group(1)), match.group(2).startswith("until")
