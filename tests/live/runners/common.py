"""What every runner shares: its arguments, its JSON-lines output, and SIGTERM as "stop politely".

argv: ``bootstrap group topic name [--library-defaults]``. Without the flag a runner gives its
library the short group timings the groupcheck-broker tests run with (:func:`timing`); with it the
library keeps its own defaults for session.timeout.ms, heartbeat.interval.ms and
max.poll.interval.ms (and everything else): the runner then sets only the group id, the client id,
auto.offset.reset=earliest and manual commits.
"""
import faulthandler
import json
import signal
import sys
import time

_flags = [a for a in sys.argv[1:] if a.startswith("--")]
_unknown = set(_flags) - {"--library-defaults"}
if _unknown:
    sys.exit(f"unknown option(s) {sorted(_unknown)}; usage: bootstrap group topic name [--library-defaults]")
library_defaults = "--library-defaults" in _flags
bootstrap, group, topic, name = [a for a in sys.argv[1:] if not a.startswith("--")][:4]

# SIGUSR1: every thread's stack on stderr, so a test can show where a hung client is stuck.
faulthandler.register(signal.SIGUSR1, all_threads=True)


def timing(**tuned):
    """The settings *tuned* (a short session, frequent heartbeats, a bounded poll interval), or
    nothing under ``--library-defaults``: the library's own defaults then apply."""
    return {} if library_defaults else tuned


def emit(**fields):
    """One JSON line, stamped with CLOCK_MONOTONIC (system-wide on Linux, so the test can order
    events of different runners: who consumed a record first)."""
    print(json.dumps(dict(fields, t=time.monotonic())), flush=True)


_last_alive = [0.0]


def polling():
    """Before the runner's first poll: a ``polling`` line, so the test can tell a client whose very
    first poll never returns (``polled`` alone cannot: it comes only after a poll) from one still
    starting up."""
    emit(event="polling")


def alive():
    """After a poll returned: a ``polled`` line at most once a second, so the test can tell a client
    whose own loop stopped (a library hang) from one that polls on and gets nothing."""
    now = time.monotonic()
    if now - _last_alive[0] >= 1.0:
        _last_alive[0] = now
        emit(event="polled")


class Stop:
    """Set by SIGTERM; the runner's loop checks it, closes its consumer (LeaveGroup) and exits."""

    requested = False

    @classmethod
    def install(cls):
        signal.signal(signal.SIGTERM, lambda signum, frame: setattr(cls, "requested", True))
