"""A hanging implementation is a counterexample, wherever the campaign's tasks run (issue 34).

With the mutant ``generation_reset_join_future_kept`` (KAFKA-9140: the join future is kept when the
heartbeat thread reset the generation, and the consumer's poll then loops for good; seed 272 of the
swarm reaches it), ``groupcheck run`` reported ``impl-no-hang`` but a campaign spun for good, in this
process (``--local``) and on Spark ``local[2]``: the old watchdog was a SIGALRM armed only in a
main thread, and the campaign stepped the implementation outside it. Now each step's deadline is enforced by a monitor thread in every
process, and the campaign finishes with the hang as a shrunk, replayable counterexample.

One of the campaign's directed schedules reaches the same loop, so the campaign meets the hang twice.
Both are one finding: a hang's signature is the event's kind, not the line where the watchdog happened
to interrupt the loop, which moves from run to run. Until 2026-12-03 it was the line, so the two hangs
were two findings in a random order, and the shrinker, whose replays stopped elsewhere, called each
"not reproduced" and kept it unshrunk."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers.processes import kill_session, wait_until_empty

MUTANT = "generation_reset_join_future_kept"


@pytest.mark.parametrize("where", [["--local"], ["--master", "local[2]"]], ids=["in-process", "spark-local-2"])
def test_a_hanging_mutant_is_an_impl_no_hang_counterexample_and_the_campaign_finishes(tmp_path, where):
    out = tmp_path / "report"
    env = dict(os.environ, GROUPCHECK_HANG_SECONDS="1")  # the executors inherit it
    proc = subprocess.Popen([sys.executable, "-m", "properties.cli", "campaign", "--system", "impl", "--mutant", MUTANT,
                             "--seed-start", "272", "--interleavings", "2", "--shrink-seconds", "10", *where,
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        kill_session(proc)
    assert proc.returncode == 1, stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["interleavings"] == 2 and results["partial"] is False and results["verdict"] == "fail"
    hangs = [f for f in results["findings"] if f["rule"] == "impl-no-hang"]
    assert len(hangs) == 1, results["findings"]
    f = hangs[0]
    assert "still running after 1 s, at impl/" in f["summary"] and f["first_seeds"] == [272]
    assert f["count"] == 2  # seed 272 and the directed schedule
    assert f["shrunk"]["reproduced"] is True and f["shrunk"]["events"] <= f["shrunk"]["original_events"], f["shrunk"]
    doc = json.loads((out / f["counterexample"]).read_text())
    assert doc["property"] == "impl-no-hang" and doc["mutant"] == MUTANT
    assert wait_until_empty(proc.pid, 30) == {}  # no Spark JVM or worker left spinning
