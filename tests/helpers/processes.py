"""The processes a command left behind: every live process of a session (the command started with
``start_new_session=True`` leads one, and everything it starts stays in it unless it leaves)."""

from __future__ import annotations

import os
import subprocess
import time


def session_processes(sid: int) -> dict:
    """{pid: command name} of the live (not zombie) processes in session *sid*."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state, ppid, pgrp, session, ...
        if int(fields[3]) == sid and fields[0] != "Z":
            found[int(entry)] = stat[stat.index("(") + 1:stat.rindex(")")]
    return found


def wait_until_empty(sid: int, seconds: float) -> dict:
    """Wait (at most *seconds*) until session *sid* has no live process; what is left."""
    deadline = time.monotonic() + seconds
    left = session_processes(sid)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = session_processes(sid)
    return left


def kill_session(proc: subprocess.Popen) -> None:
    """SIGKILL to a session's whole process group (a test's last resort)."""
    import signal

    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
