"""A broker running as a child process (Tansu, ``groupcheck broker``): its address, its log file,
and a stop that always happens (SIGTERM, then SIGKILL), also as a context manager."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from typing import List, Optional, Sequence, Tuple

import attrs

from properties.engine import children

# the project root: children run from there, so ``python -m properties...`` finds the package
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def spawn_until_ready(args: Sequence[str], log_prefix: str, ready: "re.Pattern[str]", timeout_s: float,
                      what: str, log_dir: Optional[str] = None,
                      env: Optional[dict] = None) -> Tuple[subprocess.Popen, "re.Match[str]", str]:
    """Start *args* with stdout and stderr in a temporary log file (in *log_dir*, else the system's
    temporary folder) and wait (at most *timeout_s*) for a line matching *ready*: the process, the
    match and the log's path. A child that exits first or stays silent is stopped, its log
    removed, and RuntimeError names *what* with the end of its output."""
    process, log_path = spawn(args, log_prefix, log_dir, env)
    return process, wait_until_ready(process, log_path, ready, timeout_s, what), log_path


def spawn(args: Sequence[str], log_prefix: str, log_dir: Optional[str] = None,
          env: Optional[dict] = None) -> Tuple[subprocess.Popen, str]:
    """Start *args* (from this thread: the child's parent-death signal follows it) with its output
    in a fresh log file; the process and the log's path."""
    fd, log_path = tempfile.mkstemp(prefix=log_prefix, suffix=".log", dir=log_dir)
    with os.fdopen(fd, "wb") as log:
        process = children.popen(list(args), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                 cwd=PROJECT_ROOT, env=env)
    return process, log_path


def wait_until_ready(process: subprocess.Popen, log_path: str, ready: "re.Pattern[str]", timeout_s: float,
                     what: str) -> "re.Match[str]":
    """The first match of *ready* in the log of *process* (see :func:`spawn_until_ready`)."""
    deadline = time.monotonic() + timeout_s
    while True:
        with open(log_path, errors="replace") as f:
            match = ready.search(f.read())
        if match:
            return match
        if process.poll() is not None or time.monotonic() > deadline:
            with open(log_path, errors="replace") as f:
                output = f.read().strip()
            if process.poll() is None:
                process.kill()
                process.wait()
            os.unlink(log_path)
            raise RuntimeError(f"{what} did not start: {output[-800:] or 'no output'}")
        time.sleep(0.02)


@attrs.define(eq=False, slots=False)
class ChildBroker:
    """A broker groupcheck started as a child process, listening on *host*:*ports*; its output goes
    to *log_path*, its files (if any) live under *workdir*, removed by :meth:`stop`."""

    process: subprocess.Popen
    host: str
    ports: List[int]
    log_path: str
    _workdir: Optional[str] = None

    @property
    def port(self) -> int:
        return self.ports[0]

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.ports[0]}"

    def log(self) -> str:
        """What the process has written so far (stdout and stderr)."""
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self) -> Optional[int]:
        """End the process (twice is fine) and remove its files; its exit status."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
        else:
            try:
                os.unlink(self.log_path)
            except OSError:
                pass
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def add_set_option(parser, help: str) -> None:
    """The repeatable ``--set NAME=VALUE`` option (into ``args.settings``; :func:`split_settings` reads them)."""
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE", help=help)


def split_settings(pairs, error):
    """Each ``"name=value"`` of ``--set`` as ``(name, value)``, stripped; *error(message)* builds
    the exception for one without ``=``."""
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise error(f"--set expects NAME=VALUE, got {pair!r}")
        yield name.strip(), value.strip()


class JsonLines:
    """The JSON lines a child process prints on *stream*, read on a daemon thread as they come
    (a line that is not JSON is skipped): the runners of client libraries speak this way."""

    def __init__(self, stream=None) -> None:
        self.events: list = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, args=(stream,), daemon=True)
        if stream is not None:
            self.reader.start()

    def _read(self, stream) -> None:
        for line in stream:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self.lock:
                self.events.append(event)

    def snapshot(self) -> list:
        """The lines read so far."""
        with self.lock:
            return list(self.events)
