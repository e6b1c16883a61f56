"""Spark campaigns (issue 4): a small campaign end to end on local[2], a worker killed mid-task,
usage errors, shrinking, signatures, a campaign against a mutated implementation, interruption.

One Spark session serves the module (Spark takes several seconds to start); the campaigns here are
small (the model system, a few hundred interleavings) so the module stays well under two minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import sys
import types

import pytest

from model.config import Config
from properties.campaign import spark as campaign
from properties import cli
from properties.campaign.counterexample import config_from_dict
from properties.campaign.spark import make_plan, run_local, run_range, run_spark, task_ranges
from properties.explore.shrink import shape, shrink, signature
from properties.systems import replay, replayer, run


@pytest.fixture(scope="module")
def spark():
    session = campaign.start_spark("local[2]", app="groupcheck-tests", log_path=os.devnull)
    yield session
    session.stop()


def _args(**overrides):
    values = dict(system="model", faults="all", clients=3, brokers=3, partitions=6, mutant=None, crash_once=None,
                  steps=30, max_faults=6, eventually=True, shrink_seconds=10.0)
    values.update(overrides)
    return argparse.Namespace(**values)


# -- end to end ----------------------------------------------------------------------------------

def test_small_campaign_end_to_end(spark, tmp_path, capsys):
    """The README's test command: ``groupcheck campaign`` on local[2] writes every report file,
    and its counts equal a single-process run over the same seeds."""
    out = tmp_path / "report"
    status = cli.main(["campaign", "--interleavings", "120", "--seed-start", "500", "--steps", "30", "--system", "model",
                       "--master", "local[2]", "--out", str(out), "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    results = json.loads(captured.out)
    assert results == json.loads((out / "results.json").read_text())
    assert results["format"] == "groupcheck-campaign" and results["version"] == 1
    assert results["interleavings"] == 120 and results["partial"] is False
    assert results["seed_range"] == {"start": 500, "stop": 620, "requested": 120, "completed": 120}
    assert results["master"].startswith("local[2") and results["cores"] == 2
    assert results["seconds"] > 0 and results["rate"] == pytest.approx(120 / results["seconds"], rel=0.01)
    assert results["violations"] == 0 and results["clusters"] == [] and results["verdict"] == "pass"
    assert results["versions"]["pyspark"] and results["versions"]["java"]
    verdicts = {p["property"]: p["verdict"] for p in results["properties"]}
    assert verdicts["commit-fencing"] == "held" and verdicts["eventually-stable"] == "held"
    cov = results["coverage"]
    assert cov["group_states"].get("Stable", 0) > 0 and cov["abstract_states"] > 5
    assert cov["abstract_states_curve"][-1] == [120, cov["abstract_states"]]
    for name in ("summary.md", "index.html", "interleavings.jsonl.gz"):
        assert (out / name).stat().st_size > 0
    assert "120/120 interleavings (100%)" in captured.err  # live progress went to stderr

    # the same seeds in one process: identical rows and coverage
    plan = make_plan(_args(steps=30))
    single, interrupted = run_local(plan, task_ranges(500, 120, 40))
    assert not interrupted
    assert results["steps"] == sum(r[1] for r in single.rows)
    assert results["coverage"]["sometimes"] == single.coverage["sometimes"]
    assert results["coverage"]["group_transitions"] == single.coverage["group_transitions"]

    # the rows are queryable with Spark SQL
    rows = spark.read.json(str(out / "interleavings.jsonl.gz"))
    rows.createOrReplaceTempView("interleavings")
    got = spark.sql("SELECT count(*) AS n, sum(events) AS events, min(seed) AS lo, max(seed) AS hi FROM interleavings").collect()[0]
    assert (got.n, got.events, got.lo, got.hi) == (120, results["steps"], 500, 619)


def test_worker_killed_mid_task_loses_nothing(spark, tmp_path):
    """A Python worker that dies in the middle of a task (os._exit) is retried by Spark; the
    campaign's counts equal a single-process run over the same seeds."""
    marker = tmp_path / "crashed"
    ranges = task_ranges(0, 48, 6)
    plan = make_plan(_args(steps=25, crash_once=f"21:{marker}"))
    totals, interrupted = run_spark(spark, plan, ranges)
    assert marker.exists(), "the worker was supposed to die once"
    assert not interrupted
    single, _ = run_local(make_plan(_args(steps=25)), ranges)
    assert sorted(totals.rows) == sorted(single.rows)
    assert [r[0] for r in sorted(totals.rows)] == list(range(48))
    assert totals.coverage == single.coverage
    assert totals.failures == single.failures


def test_quiet_rate_knob_is_the_walker_itself():
    """--quiet-rate calls the walker directly; at the walker's default it is exactly systems.run."""
    from properties.explore.walker import walk
    import inspect

    default = inspect.signature(walk).parameters["quiet_rate"].default
    plain = run_range(make_plan(_args(steps=25)), 0, 6)
    knob = run_range(make_plan(_args(steps=25, quiet_rate=default)), 0, 6)
    assert plain["rows"] == knob["rows"] and plain["coverage"] == knob["coverage"]
    fast = run_range(make_plan(_args(steps=25, quiet_rate=0.0, eventually=False)), 0, 6)
    assert sum(r[1] for r in fast["rows"]) < sum(r[1] for r in plain["rows"])


# -- usage errors: one line, exit 2, no traceback, before any Spark work ---------------------------

@pytest.mark.parametrize("argv, expected", [
    (["--interleavings", "0"], "--interleavings must be >= 1"),
    (["--steps", "many"], "--steps must be an integer"),
    (["--system", "kafka"], "--system must be one of"),
    (["--faults", "some"], "--faults must be one of"),
    (["--mutant", "x", "--system", "model"], "--mutant mutates the implementation"),
    (["--baseline", "/nonexistent/results.json"], "--baseline /nonexistent/results.json: no such file"),
])
def test_bad_arguments_are_one_line(argv, expected, tmp_path, capsys):
    status = cli.main(["campaign", "--out", str(tmp_path / "r")] + argv)
    err = capsys.readouterr().err
    assert status == 2
    assert expected in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_unwritable_out_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    status = cli.main(["campaign", "--interleavings", "5", "--out", str(blocker / "report")])
    err = capsys.readouterr().err
    assert status == 2 and "cannot write the report to" in err and len(err.strip().splitlines()) == 1


def test_missing_java_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no java on it
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(campaign, "_active_session", lambda: None)
    status = cli.main(["campaign", "--interleavings", "5", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert status == 2 and "Java not found" in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("groupcheck: error: Java not found")


def test_master_gets_task_retries():
    assert campaign.with_retries("local[*]") == "local[*,4]"
    assert campaign.with_retries("local[2]") == "local[2,4]"
    assert campaign.with_retries("local") == "local[1,4]"
    assert campaign.with_retries("local[2,3]") == "local[2,3]"
    assert campaign.with_retries("spark://host:7077") == "spark://host:7077"


def test_project_zip_ships_the_packages(tmp_path):
    import zipfile

    names = zipfile.ZipFile(campaign.project_zip(str(tmp_path))).namelist()
    for module in ("properties/campaign/spark.py", "properties/explore/walker.py", "model/world.py", "impl/__init__.py"):
        assert module in names


# -- signatures and shrinking -------------------------------------------------------------------

def test_signature_is_the_shape_not_the_seed():
    from properties.catalogue import Violation

    a = Violation("commit-fencing", "OffsetCommit from 'consumer-1-00000000' with generation 1 was accepted while the group was in generation 2")
    b = Violation("commit-fencing", "OffsetCommit from 'consumer-2-00000007' with generation 4 was accepted while the group was in generation 6")
    c = Violation("commit-error-precedence", a.message)
    assert signature(a) == signature(b) != signature(c)
    assert signature(a) == "commit-fencing-" + __import__("hashlib").sha256(
        f"commit-fencing\n{shape(a.message)}".encode()).hexdigest()[:8]
    d1 = Violation("impl-matches-model", "after ('tick', 1000, 0): group generation: model 1, impl 0")
    d2 = Violation("impl-matches-model", "after ('tick', 8001, 7): group generation: model 3, impl 2; group protocol: model 'range', impl 'roundrobin'")
    assert signature(d1) == signature(d2)


def _first_failure(config, system="model", steps=40, limit=200):
    for seed in range(limit):
        result = run(system, seed, config, steps=steps)
        if result.violation is not None:
            return seed, result
    raise AssertionError("no failing seed")


def test_shrink_is_locally_minimal_and_deterministic():
    config = Config(clients=3, brokers=3, partitions=6, broken=frozenset({"commit_skips_fencing"}))
    seed, result = _first_failure(config)
    shrunk = shrink(replayer("model", config, seed), result.schedule, result.violation, budget_seconds=60)
    assert shrunk.reproduced and shrunk.complete
    assert len(shrunk.schedule) < len(result.schedule)
    sig = signature(result.violation)
    assert signature(shrunk.result.violation) == sig
    for i in range(len(shrunk.schedule)):  # removing any one event makes the failure go away or change
        r = replay("model", config, shrunk.schedule[:i] + shrunk.schedule[i + 1:], seed=seed)
        assert r.violation is None or signature(r.violation) != sig or len(r.schedule) >= len(shrunk.schedule)
    again = shrink(replayer("model", config, seed), result.schedule, result.violation, budget_seconds=60)
    assert again.schedule == shrunk.schedule


# -- a campaign against a mutated implementation ------------------------------------------------------

def _stand_in_mutants():
    """A tiny properties.mutation.mutants with the interface campaigns use (MUTANTS, applied), for when the
    real module is not there: JoinGroup completion forgets to bump the generation."""
    module = types.ModuleType("properties.mutation.mutants")
    module.MUTANTS = {"generation_not_bumped": "join completion does not increment the generation"}

    @contextlib.contextmanager
    def applied(name):
        from impl.server.group_metadata import GroupMetadata

        original = GroupMetadata.init_next_generation

        def mutated(self, *args, **kwargs):
            original(self, *args, **kwargs)
            self.generation_id -= 1  # MUTANT

        GroupMetadata.init_next_generation = mutated
        try:
            yield
        finally:
            GroupMetadata.init_next_generation = original

    module.applied = applied
    return module


def test_mutant_campaign_report_has_a_followable_reproducible_cluster(tmp_path, capsys, monkeypatch):
    try:
        from properties.mutation import mutants
        assert "generation_not_bumped" in mutants.MUTANTS
    except (ImportError, AssertionError):
        mutants = _stand_in_mutants()
        monkeypatch.setitem(sys.modules, "properties.mutation.mutants", mutants)
    out = tmp_path / "mutant"
    status = cli.main(["campaign", "--local", "--system", "impl", "--mutant", "generation_not_bumped",
                       "--interleavings", "6", "--steps", "30", "--shrink-seconds", "30", "--out", str(out)])
    assert status == 1  # an always property failed
    results = json.loads((out / "results.json").read_text())
    assert results["violations"] == 6 and results["config"]["mutant"] == "generation_not_bumped"
    cluster = results["clusters"][0]
    assert cluster["kind"] == "always" and cluster["count"] >= 1
    assert cluster["locally_minimal"] and cluster["shrunk_events"] < cluster["original_events"]
    assert cluster["shrunk_events"] <= 40  # a person can follow it
    doc = json.loads((out / cluster["counterexample"]).read_text())
    assert doc["mutant"] == "generation_not_bumped" and len(doc["timeline"]) == len(doc["schedule"])
    assert any("join complete" in n for row in doc["timeline"] for n in row["notes"])
    assert cluster["replay"].startswith("groupcheck replay ") and cluster["counterexample"] in cluster["replay"]
    schedule = [tuple(e) for e in doc["schedule"]]
    config = config_from_dict(doc["config"])
    with mutants.applied("generation_not_bumped"):  # reproduces under the mutant, trace hash and all
        again = replay("impl", config, schedule, seed=doc["seed"], check_eventually=doc["check_eventually"])
    assert again.violation is not None and again.violation.property == doc["property"]
    assert again.trace_hash == doc["trace_hash"]
    fixed = replay("impl", config, schedule, seed=doc["seed"], check_eventually=doc["check_eventually"])
    assert fixed.violation is None  # and passes on the real implementation
    assert "generation" in (out / "summary.md").read_text()


def test_interrupted_campaign_writes_a_partial_report(tmp_path, capsys, monkeypatch):
    real = campaign.run_range
    calls = []

    def interrupted_on_third(plan, start, stop):
        calls.append(start)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(plan, start, stop)

    monkeypatch.setattr(campaign, "run_range", interrupted_on_third)
    out = tmp_path / "partial"
    status = cli.main(["campaign", "--local", "--system", "model", "--interleavings", "40", "--task-size", "5",
                       "--steps", "20", "--out", str(out)])
    assert status == 130
    results = json.loads((out / "results.json").read_text())
    assert results["partial"] is True and results["interleavings"] == 10
    assert results["seed_range"]["completed"] == 10 and results["seed_range"]["requested"] == 40
    assert "PARTIAL" in (out / "summary.md").read_text() and "PARTIAL" in (out / "index.html").read_text()
    with gzip.open(out / "interleavings.jsonl.gz", "rt") as f:
        assert len(f.readlines()) == 10


def test_ctrl_c_on_spark_keeps_every_finished_task(tmp_path):
    """A real Ctrl-C: SIGINT to the campaign's whole process group (the driver, Spark's JVM and
    its Python workers) once some tasks have finished. The report is written, marked partial, with
    exit status 130, and it holds every task that had finished: whole tasks of consecutive seeds."""
    import signal
    import subprocess
    import time

    out = tmp_path / "interrupted"
    size, total = 200, 200_000
    proc = subprocess.Popen(
        [sys.executable, "-m", "properties.cli", "campaign", "--system", "model", "--no-eventually", "--quiet-rate", "0",
         "--steps", "20", "--interleavings", str(total), "--task-size", str(size), "--master", "local[2]",
         "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen = ""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:  # progress lines come every 10 s when stderr is not a terminal
        line = proc.stderr.readline()
        seen += line
        if not line or (" interleavings (" in line and not line.startswith("0/")):
            break
    assert proc.poll() is None, seen
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, seen + stderr
    results = json.loads((out / "results.json").read_text())
    done = results["interleavings"]
    assert results["partial"] is True and 0 < done < total
    assert done % size == 0  # whole tasks only
    with gzip.open(out / "interleavings.jsonl.gz", "rt") as f:
        seeds = sorted(json.loads(line)["seed"] for line in f)
    assert len(seeds) == done and len(set(seeds)) == done
    from collections import Counter

    assert set(Counter(s // size for s in seeds).values()) == {size}  # each task complete
    assert "PARTIAL" in (out / "summary.md").read_text()
