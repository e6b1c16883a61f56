"""Test configuration.

* The Hypothesis profile (ci under CI=true, dev otherwise, or HYPOTHESIS_PROFILE=name) is loaded
  before any test runs.
* Every collected test gets exactly one cost tier — ``unit``, ``slow``, ``spark``, ``live``,
  ``properties`` or ``quality`` — from what it uses (:mod:`tests.helpers.tiers`), so that
  ``pytest -m unit`` is the fast, pure tier without anyone marking tests by hand.
* A ``unit`` test that connects or binds a socket, starts a process or spends more than a second
  of CPU is misclassified: the run lists it at its end, with what to do (it does not fail).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest

from properties.explore.profiles import load_default_profile
from tests.helpers import tiers

load_default_profile()


def pytest_collection_modifyitems(config, items):
    listed = tiers.listed()
    for item in items:
        tier, why = tiers.tier_of(item, listed)
        item.add_marker(getattr(pytest.mark, tier))
        item.user_properties.append(("tier", f"{tier}: {why}"))


# -- the unit tier stays fast and pure --------------------------------------------------------------------------


#: processes a unit test may start without being a test of processes: provenance reads the git
#: commit once per process; ctypes.util.find_library asks ldconfig where a shared library is
_INCIDENTAL = {"git", "ldconfig"}


def _program(args, kwargs) -> str:
    """The program a ``Popen(self, args, ...)`` call starts."""
    command = args[1] if len(args) > 1 else kwargs.get("args", "")
    first = command[0] if isinstance(command, (list, tuple)) and command else str(command).split(" ")[0]
    return os.path.basename(str(first))


class _Escapes:
    """While active, records what a unit test must not do: connect or bind a socket, start a process."""

    WATCHED = ((socket.socket, "connect", "connected a socket"), (socket.socket, "bind", "bound a socket"),
               (subprocess.Popen, "__init__", "started a process"))

    def __init__(self):
        self.found = set()
        self._saved = []

    def start(self):
        for owner, name, what in self.WATCHED:
            original = getattr(owner, name)

            def wrapper(*args, _original=original, _what=what, **kwargs):
                if _what != "started a process" or _program(args, kwargs) not in _INCIDENTAL:
                    self.found.add(_what)
                return _original(*args, **kwargs)

            self._saved.append((owner, name, name in vars(owner), original))
            setattr(owner, name, wrapper)

    def stop(self):
        for owner, name, own, original in reversed(self._saved):
            if own:
                setattr(owner, name, original)
            else:
                delattr(owner, name)
        self._saved.clear()


def pytest_runtest_setup(item):
    if item.get_closest_marker("unit") is not None:
        item._tier_watch = (_Escapes(), time.process_time())
        item._tier_watch[0].start()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    watch = getattr(item, "_tier_watch", None)
    if call.when != "teardown" or watch is None:
        return
    escapes, cpu = watch
    escapes.stop()
    del item._tier_watch
    spent = time.process_time() - cpu
    if spent > tiers.UNIT_BUDGET_S or escapes.found:
        # a plain string: it travels to xdist's controller with the report
        outcome.get_result().user_properties.append(("unit-tier-offence", f"{spent:.2f}|{', '.join(sorted(escapes.found))}"))


_OFFENDERS = []


def pytest_runtest_logreport(report):
    for key, value in report.user_properties:
        if key == "unit-tier-offence" and report.when == "teardown":
            spent, found = value.split("|", 1)
            _OFFENDERS.append((float(spent), report.nodeid, found))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _OFFENDERS:
        return
    terminalreporter.section("cost tiers")
    terminalreporter.write_line(
        f"{len(_OFFENDERS)} test(s) of the unit tier are not unit tests: over {tiers.UNIT_BUDGET_S:g} s of CPU "
        "(list them as slow in tests/helpers/tiers.txt), or a socket or a process (teach tests/helpers/tiers.py "
        "what they use, or list them there):")
    for spent, nodeid, found in sorted(_OFFENDERS, reverse=True):
        terminalreporter.write_line(f"  {spent:6.2f} s CPU  {nodeid}" + (f"  ({found})" if found else ""))
