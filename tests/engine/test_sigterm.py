"""SIGTERM to the driver alone (``kill PID``, ``docker stop``) during each checker that runs
schedules against real processes: the report of what finished is written, marked partial, the
command exits 143 (128 + SIGTERM), and nothing it started — a broker, a consumer process, Spark's
JVM and workers — is left behind (issue 34: ``conform broker`` lost every finished schedule and
left its ``groupcheck broker`` running). The simulation campaign's own test of this is
``tests/campaign/test_campaign.py::test_interrupt_on_spark_keeps_every_finished_task``."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers.processes import kill_session, wait_until_empty

PROGRESS = re.compile(r"^(\d[\d,]*)/[\d,]+ schedules", re.M)


def _sigterm_once_done(tmp_path, args, at_least: int = 1, timeout_s: float = 300):
    """Run ``groupcheck ARGS`` in a session of its own; once its progress line says *at_least*
    schedules are done, SIGTERM the driver alone. Returns (exit status, stdout, stderr, what was
    left in the session)."""
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "properties.cli", *args], stdout=subprocess.PIPE,
                                stderr=err, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and proc.poll() is None:
            done = [int(n.replace(",", "")) for n in PROGRESS.findall(err_path.read_text())]
            if done and max(done) >= at_least:
                break
            time.sleep(0.2)
        assert proc.poll() is None, f"finished or failed before the signal: {err_path.read_text()[-2000:]}"
        os.kill(proc.pid, signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=120)
        left = wait_until_empty(proc.pid, 30)
    finally:
        kill_session(proc)
    return proc.returncode, stdout, err_path.read_text(), left


def _assert_stopped_cleanly(status, stderr, left, report):
    assert status == 143, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    notes = [line for line in stderr.splitlines() if line.startswith("groupcheck: interrupted")]
    assert len(notes) == 1 and "SIGTERM" in notes[0], stderr[-3000:]
    assert left == {}, f"left behind: {left}"
    assert report["partial"] is True and report["stopped_by"] == "SIGTERM" and report["schedules"] >= 1
    assert report["checked"]["done"] == report["schedules"] < report["checked"]["requested"]


@pytest.mark.parametrize("args, task_size", [
    (["conform", "broker", "--launch", "groupcheck", "--schedules", "300", "--steps", "8"], 1),
    (["conform", "client", "--client", "groupcheck", "--schedules", "40", "--parallel", "2", "--consumers", "2"], 1),
    (["campaign", "--system", "broker:groupcheck", "--interleavings", "400", "--task-size", "2", "--steps", "8",
      "--master", "local[2]"], 2),
], ids=["conform-broker", "conform-client", "broker-campaign-on-spark"])
def test_sigterm_keeps_what_finished_and_leaves_nothing_behind(tmp_path, args, task_size):
    """conform broker: its launched broker; conform client: a broker and consumer processes per
    schedule under way; the broker campaign on Spark: the JVM, its Python workers and their brokers."""
    out = tmp_path / "report"
    status, _, stderr, left = _sigterm_once_done(tmp_path, [*args, "--out", str(out)], at_least=2)
    report = json.loads((out / "report.json").read_text())
    _assert_stopped_cleanly(status, stderr, left, report)
    assert report["schedules"] % task_size == 0  # whole tasks only
    assert "PARTIAL" in (out / "report.md").read_text()


def test_explore_stops_on_sigterm_and_says_it_proves_nothing(tmp_path):
    """The exhaustive search has no partial report to write: it stops, says the search proves
    nothing, and exits 143."""
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "properties.cli", "explore", "--clients", "3", "--brokers", "2",
                                 "--partitions", "3", "--horizon-ms", "4000", "--faults", "2", "--no-tour"],
                                stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True)
    try:
        time.sleep(4)
        assert proc.poll() is None, "the search should still be running"
        os.kill(proc.pid, signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=60)
    finally:
        kill_session(proc)
    stderr = err_path.read_text()
    assert proc.returncode == 143 and "Traceback" not in stderr, stderr
    assert stderr.strip().splitlines()[-1] == ("groupcheck: interrupted (SIGTERM); the search stopped part-way and "
                                               "proves nothing") and stdout == ""
