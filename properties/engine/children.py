"""The processes a run starts — brokers, consumer processes of a client library — and the
guarantee that none outlives it.

Every child is started through :func:`popen` (``subprocess.Popen`` with two additions) and is
known here until it has exited:

* :func:`stop_all` ends every child this process started and has not yet waited for (SIGTERM,
  then SIGKILL after a grace period). The run engine calls it when a run ends for any reason —
  finished, interrupted by SIGINT or SIGTERM, a failed job — and at interpreter exit, so a
  ``groupcheck conform broker --launch groupcheck`` stopped by SIGTERM leaves no ``groupcheck
  broker`` behind (issue 34 measured one that did).
* On Linux each child also gets ``PR_SET_PDEATHSIG`` = SIGTERM: when the process that started it
  dies without a chance to clean up (SIGKILL, or a Spark worker that the stopping JVM kills), the
  kernel ends the child too. (The signal follows the *thread* that forked: a child started from a
  pool thread is ended if that thread exits first; the engine's pools outlive their tasks, and
  every task stops what it started before it returns.)
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import signal
import subprocess
import sys
import threading
from typing import Iterable, List

_lock = threading.Lock()
_children: List[subprocess.Popen] = []

_PR_SET_PDEATHSIG = 1


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def _die_with_parent() -> None:  # runs in the child between fork and exec: keep it minimal
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def popen(args, **kwargs) -> subprocess.Popen:
    """``subprocess.Popen(args, **kwargs)``, known to :func:`stop_all` until it has exited, and
    ended by the kernel if this process dies first (Linux)."""
    if _LIBC is not None and "preexec_fn" not in kwargs:
        kwargs["preexec_fn"] = _die_with_parent
    process = subprocess.Popen(args, **kwargs)
    with _lock:
        _children[:] = [p for p in _children if p.poll() is None]
        _children.append(process)
    return process


def running() -> List[subprocess.Popen]:
    """The children started here that have not exited (yet)."""
    with _lock:
        return [p for p in _children if p.poll() is None]


def stop_all(grace_s: float = 5.0, keep: Iterable[subprocess.Popen] = ()) -> int:
    """End every child still running but those in *keep* (children started before a command
    began, which are not its own): SIGTERM to all, then SIGKILL to those still there after
    *grace_s* seconds; returns how many were running."""
    kept = {id(p) for p in keep}
    with _lock:
        alive = [p for p in _children if p.poll() is None and id(p) not in kept]
        _children[:] = [p for p in _children if id(p) in kept and p.poll() is None]
    for p in alive:
        try:
            p.terminate()
        except OSError:
            pass
    for p in alive:
        try:
            p.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            p.kill()
            try:
                p.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
    return len(alive)


atexit.register(stop_all)
