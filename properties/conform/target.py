"""The broker under judgement, and running schedules against it.

:class:`Broker` is a registry target (:mod:`properties.targets`) in use: an address
(``--bootstrap``) or a broker this run launched — launched again when its process dies, so one
crash does not end the search. :class:`Runner` plays one schedule against it with a fresh group id
and turns a broker that stopped listening, or a process that died, into the finding it is.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
import uuid
from typing import Optional

import attrs

from properties import targets
from properties.conform.members import TOPIC
from properties.live.exchange import Unreachable
from properties.conform.run import NO_TIMERS, Result, Timing, run_schedule
from properties.conform.schedule import Schedule
from properties.errors import Inconclusive, host_and_port

#: partitions of the schedules' topic on a launched broker
PARTITIONS = 6


#: what a schedule under way when the broker died reports, when another schedule saw the crash
CRASHED_ELSEWHERE = "the broker process exited during the schedule: it was restarted, its last words are in another finding"


def group_id(seed: int, nonce: str) -> str:
    return f"groupcheck-conform-{seed}-{nonce}"


class Broker:
    """The broker under judgement (see the module doc): *target* launched (with *mutant*), or,
    with *bootstrap*, the broker there (judged with *target*'s profile)."""

    def __init__(self, target: targets.Target, mutant: Optional[str] = None, bootstrap: Optional[str] = None,
                 timers: bool = False, start: bool = True, brokers: int = 1) -> None:
        self.target, self.mutant, self.timers, self.brokers = target, mutant, timers, brokers
        self.profile = target.profile
        self.system = bootstrap or (target.name + (f" (mutant {mutant})" if mutant else ""))
        self.text = f"--bootstrap {bootstrap}" if bootstrap else target.launch_text(brokers)
        self.process = None
        self.address = host_and_port(bootstrap) if bootstrap else None
        self.crashes = 0
        # schedules run on several threads (--parallel) see a crash, or a cluster to heal, together:
        # one of them restarts the broker
        self._restarting = threading.Lock()
        if bootstrap is None and start:  # start=False: a name for reports, no broker (nothing to run)
            self._start()

    @property
    def launched(self) -> bool:
        return self.process is not None

    def _start(self) -> None:
        self.process = self.target.start({TOPIC: PARTITIONS}, self.mutant, self.timers, self.brokers)
        host, port = self.process.bootstrap.rsplit(":", 1)
        self.address = (host, int(port))

    @property
    def pause(self):
        """``pause(ms)``: stop the launched broker's process (SIGSTOP) for *ms* and resume it
        (SIGCONT); None for a broker groupcheck did not start, or a cluster."""
        if getattr(self.process, "process", None) is None:
            return None

        def pause(ms: int) -> None:
            pid = self.process.process.pid  # looked up now: a restart starts another process
            os.kill(pid, signal.SIGSTOP)
            try:
                time.sleep(ms / 1000)
            finally:
                os.kill(pid, signal.SIGCONT)
        return pause

    @property
    def restart(self):
        """``restart(group) -> address``: kill the launched broker and start it again on its own
        storage (Kafka's folder; a ``--launch-cmd`` with ``{dir}``); None for a broker that keeps
        nothing across a restart (Tansu in memory, the mock, groupcheck's own) or was not launched."""
        restart = getattr(self.process, "restart", None)
        if restart is None or not getattr(self.process, "restartable", True):
            return None

        def restarted(group: str):
            self.address = restart(group)
            return self.address
        return restarted

    @property
    def failover(self):
        """``failover(group) -> (killed node, new coordinator's address)`` of a launched cluster, else None."""
        return getattr(self.process, "kill_coordinator", None)

    def heal(self) -> None:
        """A launched cluster with every node running again (after a schedule's failover)."""
        with self._restarting:
            self._heal()

    def _heal(self) -> None:
        if getattr(self.process, "failovers", 0) and any(n.killed for n in self.process.nodes):
            self.process.heal()
            host, port = self.process.bootstrap.rsplit(":", 1)
            self.address = (host, int(port))

    def crashed(self, wait_s: float = 0.0) -> Optional[str]:
        """A failure line if the launched broker's process has exited, waiting up to *wait_s* for it
        (a process that is aborting closes its sockets before it is gone); it is then started again."""
        if self.process is None:
            return None
        with self._restarting:
            return self._crashed(wait_s)

    def _crashed(self, wait_s: float) -> Optional[str]:
        deadline = time.monotonic() + wait_s
        while self.process.process.poll() is None:
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)
        tail = " | ".join(self.process.log().strip().splitlines()[-3:])
        line = f"the broker process exited with status {self.process.process.returncode}: {tail[-600:]}"
        self.crashes += 1
        self.process.stop()
        self._start()
        return line

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()


class Runner:
    """``runner(schedule) -> Result`` against *target*, one fresh group id per run."""

    def __init__(self, target: Broker, timing: Timing = NO_TIMERS) -> None:
        self.target, self.profile, self.timing = target, target.profile, timing
        self.nonce = uuid.uuid4().hex[:8]  # group ids differ between runs against one long-lived broker
        self._count = itertools.count(1)  # thread-safe: runs under way at once (--parallel) get their own numbers
        self.runs = 0

    def __call__(self, schedule: Schedule) -> Result:
        run = next(self._count)
        self.runs = max(self.runs, run)
        target = self.target
        crashes_before = target.crashes
        try:
            target.heal()
        except RuntimeError as e:
            return Result(schedule, "", None, f"the cluster did not heal after a failover: {e}", 0, (), ())
        try:
            result = run_schedule(target.address, schedule, group_id(schedule.seed, f"{self.nonce}-{run}"),
                                  self.profile, park_ms=self.profile.answer_window_ms, timing=self.timing,
                                  failover=target.failover, pause=target.pause, restart=target.restart)
        except Unreachable as e:
            crash = target.crashed(wait_s=2.0)
            if crash:
                return Result(schedule, "", None, crash, 0, (), ())
            if run == 1:
                raise Inconclusive(f"{target.text}: {e}") from None
            return Result(schedule, "", None, f"the broker stopped accepting connections ({e})", 0, (), ())
        lost = any("closed" in text or "connection error" in text
                   for text in [result.failure or ""] + [d.summary for d in result.divergences
                                                          if d.signature.startswith("failure:")])
        crash = target.crashed(wait_s=2.0 if lost else 0.0)
        if crash:
            return attrs.evolve(result, divergences=(), failure=crash)
        if target.crashes > crashes_before and (result.failure or result.verdict == "failure"):
            # the broker died under this schedule and another one (--parallel) started it again:
            # what this schedule saw after is that crash's, reported once by the other schedule
            return attrs.evolve(result, divergences=tuple(d for d in result.divergences
                                                          if not d.signature.startswith("failure:")),
                                failure=CRASHED_ELSEWHERE)
        return result
