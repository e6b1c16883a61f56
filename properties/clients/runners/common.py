"""What every runner shares: its configuration, its JSON-lines output, SIGTERM as "stop politely",
and the explicit-offset commit schedule."""

from __future__ import annotations

import faulthandler
import json
import signal
import sys
import time
from typing import Any, Dict, Optional


def config() -> Dict[str, Any]:
    """The runner's configuration (argv[1], a JSON object; see the package docstring)."""
    return json.loads(sys.argv[1])


def emit(event: str, **fields: Any) -> None:
    """One JSON line on stdout, flushed, stamped with the wall clock in milliseconds."""
    print(json.dumps({"event": event, "wall_ms": int(time.time() * 1000), **fields}), flush=True)


class Stop:
    """Set by SIGTERM; the runner's loop checks it, closes its consumer (LeaveGroup) and exits.
    SIGUSR1 prints every thread's stack on stderr (where a hung client is stuck)."""

    requested = False

    @classmethod
    def install(cls) -> None:
        faulthandler.register(signal.SIGUSR1, all_threads=True)
        signal.signal(signal.SIGTERM, lambda signum, frame: setattr(cls, "requested", True))


class MemberWatch:
    """Prints a ``member`` line whenever what the library exposes of its membership changes."""

    def __init__(self) -> None:
        self.last: Optional[tuple] = None

    def see(self, member_id: Optional[str], generation: Optional[int], state: Optional[str]) -> None:
        now = (member_id, generation, state)
        if now != self.last:
            self.last = now
            emit("member", member_id=member_id, generation=generation, state=state)


class CommitClock:
    """Due every ``commit_interval_ms``; the offset to commit grows by one each time."""

    def __init__(self, interval_ms: int) -> None:
        self.interval_s = interval_ms / 1000.0
        self.next = time.monotonic() + self.interval_s
        self.offset = 0

    def due(self) -> bool:
        if time.monotonic() < self.next:
            return False
        self.next = time.monotonic() + self.interval_s
        self.offset += 1
        return True
