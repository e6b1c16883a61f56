"""A broker running as a child process (Tansu, ``groupcheck broker``): its address, its log file,
and a stop that always happens (SIGTERM, then SIGKILL), also as a context manager."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import List, Optional


class ChildBroker:
    def __init__(self, process: subprocess.Popen, host: str, ports: List[int], log_path: str,
                 workdir: Optional[str] = None) -> None:
        self.process = process
        self.host = host
        self.ports = ports
        self.log_path = log_path
        self._workdir = workdir

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


def split_setting(pair: str, error) -> tuple:
    """``"name=value"`` -> ``(name, value)``; *error(message)* builds the exception otherwise."""
    name, sep, value = pair.partition("=")
    if not sep:
        raise error(f"--set expects NAME=VALUE, got {pair!r}")
    return name.strip(), value.strip()
