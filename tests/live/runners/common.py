"""What every runner shares: its arguments, its JSON-lines output, and SIGTERM as "stop politely"."""
import faulthandler
import json
import signal
import sys
import time

bootstrap, group, topic, name = sys.argv[1:5]

# SIGUSR1: every thread's stack on stderr, so a test can show where a hung client is stuck.
faulthandler.register(signal.SIGUSR1, all_threads=True)


def emit(**fields):
    """One JSON line, stamped with CLOCK_MONOTONIC (system-wide on Linux, so the test can order
    events of different runners: who consumed a record first)."""
    print(json.dumps(dict(fields, t=time.monotonic())), flush=True)


class Stop:
    """Set by SIGTERM; the runner's loop checks it, closes its consumer (LeaveGroup) and exits."""

    requested = False

    @classmethod
    def install(cls):
        signal.signal(signal.SIGTERM, lambda signum, frame: setattr(cls, "requested", True))
