"""The broker under judgement, and running schedules against it.

:class:`Target` is an address (``--bootstrap``) or a broker this run launched — launched again
when its process dies, so one crash does not end the search. :class:`Runner` plays one schedule
against it with a fresh group id and turns a broker that stopped listening, or a process that
died, into the finding it is.
"""

from __future__ import annotations

import time
import uuid
from typing import Optional, Tuple

import attrs

from properties.conform import systems
from properties.conform.members import Unreachable
from properties.conform.run import NO_TIMERS, Profile, Result, Timing, run_schedule
from properties.conform.schedule import Schedule
from properties.errors import UsageError


def group_id(seed: int, nonce: str) -> str:
    return f"groupcheck-conform-{seed}-{nonce}"


class Target:
    """The broker under judgement (see the module doc)."""

    def __init__(self, bootstrap: Optional[str], launch: Optional[str], mutant: Optional[str],
                 address: Optional[Tuple[str, int]] = None, timers: bool = False, start: bool = True) -> None:
        self.launch, self.mutant, self.timers = launch, mutant, timers
        self.system = bootstrap or (launch + (f" (mutant {mutant})" if mutant else ""))
        self.text = f"--bootstrap {bootstrap}" if bootstrap else f"--launch {launch}"
        self.broker = None
        self.address = address
        self.crashes = 0
        if launch and start:  # start=False: a name for reports, no broker (nothing to run)
            self._start()

    def _start(self) -> None:
        self.broker = systems.launch(self.launch, self.mutant, self.timers)
        host, port = self.broker.bootstrap.rsplit(":", 1)
        self.address = (host, int(port))

    def crashed(self, wait_s: float = 0.0) -> Optional[str]:
        """A failure line if the launched broker's process has exited, waiting up to *wait_s* for it
        (a process that is aborting closes its sockets before it is gone); it is then started again."""
        if self.broker is None:
            return None
        deadline = time.monotonic() + wait_s
        while self.broker.process.poll() is None:
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)
        tail = " | ".join(self.broker.log().strip().splitlines()[-3:])
        line = f"the broker process exited with status {self.broker.process.returncode}: {tail[-600:]}"
        self.crashes += 1
        self.broker.stop()
        self._start()
        return line

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()


class Runner:
    """``runner(schedule) -> Result`` against *target*, one fresh group id per run."""

    def __init__(self, target: Target, profile: Profile, timing: Timing = NO_TIMERS) -> None:
        self.target, self.profile, self.timing = target, profile, timing
        self.nonce = uuid.uuid4().hex[:8]  # group ids differ between runs against one long-lived broker
        self.runs = 0

    def __call__(self, schedule: Schedule) -> Result:
        self.runs += 1
        target = self.target
        try:
            result = run_schedule(target.address, schedule, group_id(schedule.seed, f"{self.nonce}-{self.runs}"),
                                  self.profile, timing=self.timing)
        except Unreachable as e:
            crash = target.crashed(wait_s=2.0)
            if crash:
                return Result(schedule, "", None, crash, 0, (), ())
            if self.runs == 1:
                raise UsageError(f"{target.text}: {e}") from None
            return Result(schedule, "", None, f"the broker stopped accepting connections ({e})", 0, (), ())
        lost = result.failure is not None and ("closed" in result.failure or "connection error" in result.failure)
        crash = target.crashed(wait_s=2.0 if lost else 0.0)
        if crash:
            return attrs.evolve(result, divergence=None, failure=crash)
        return result
