"""Start ``groupcheck broker`` as a child process, for tests and ``groupcheck bench --wire``.

:func:`launch_groupcheck_broker` runs ``python -m properties.cli broker --port 0 ...`` with the same
interpreter, waits (bounded) for its ready line, and returns a :class:`LaunchedBroker` that knows
the ports and stops the process (SIGTERM, then SIGKILL) when the ``with`` block ends.
"""

from __future__ import annotations

import re
import signal
import sys
from typing import Iterable, Mapping, Optional, Sequence

from properties.live.child import ChildBroker, spawn_until_ready

READY = re.compile(r"groupcheck broker: listening on (\S+?):(\d+\.\.\d+|[\d,]+) \((\d+) brokers?\)")
READY_TIMEOUT_S = 30.0


class LaunchedBroker(ChildBroker):
    """A running ``groupcheck broker`` (see :func:`launch_groupcheck_broker`)."""

    def failover(self) -> None:
        """SIGUSR1: every ``__consumer_offsets`` partition moves to the next live broker."""
        self.process.send_signal(signal.SIGUSR1)


def launch_groupcheck_broker(brokers: int = 1, partitions: int = 4, topics: Optional[Mapping[str, int]] = None,
                             settings: Iterable[str] = (), trace: Optional[str] = None,
                             host: str = "127.0.0.1", faults: Optional[str] = None,
                             entry: Sequence[str] = ("properties.cli", "broker"),
                             faults_when_formed: Optional[int] = None) -> LaunchedBroker:
    """Start ``groupcheck broker`` on free ports and wait for its ready line. *entry*: the module
    (and its leading arguments) that runs it, for a broker started some other way (a mutant);
    *faults*: a fault schedule file (``--faults``); *faults_when_formed*: its clock held at the
    first fault until a group of that many members has formed (``--faults-when-formed``)."""
    args = [sys.executable, "-m", *entry, "--host", host, "--port", "0",
            "--brokers", str(brokers), "--partitions", str(partitions)]
    for name, count in (topics or {}).items():
        args += ["--topic", f"{name}:{count}"]
    for setting in settings:
        args += ["--set", setting]
    if trace:
        args += ["--trace", trace]
    if faults:
        args += ["--faults", faults]
    if faults_when_formed is not None:
        args += ["--faults-when-formed", str(faults_when_formed)]
    process, match, log_path = spawn_until_ready(args, "groupcheck-broker-", READY, READY_TIMEOUT_S,
                                                 "groupcheck broker")
    span = match.group(2)
    if ".." in span:
        first, last = (int(p) for p in span.split(".."))
        ports = list(range(first, last + 1))
    else:
        ports = [int(p) for p in span.split(",")]
    return LaunchedBroker(process, match.group(1), ports, log_path)
