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
from properties.campaign.spark import make_plan, run_local, run_range, run_spark
from properties.engine import spark as engine_spark
from properties.engine.errors import RunError
from properties.engine.run import task_ranges
from tests.helpers.processes import session_processes
from properties.explore.shrink import shape, shrink, signature
from properties.systems import replay, replayer, run


@pytest.fixture(scope="module")
def spark():
    session = engine_spark.start_spark("local[2]", app="groupcheck-tests", log_path=os.devnull)
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
    assert results["schema"] == "groupcheck-report/1" and results["checker"] == "campaign"
    assert results["interleavings"] == 120 and results["partial"] is False
    assert results["seed_range"] == {"start": 500, "stop": 620, "requested": 120, "completed": 120}
    assert results["master"].startswith("local[2") and results["cores"] == 2
    assert results["seconds"] > 0 and results["rate"] == pytest.approx(120 / results["seconds"], rel=0.01)
    assert results["violations"] == 0 and results["findings"] == [] and results["verdict"] == "pass"
    assert results["versions"]["pyspark"] and results["versions"]["java"]
    verdicts = {p["property"]: p["verdict"] for p in results["properties"]}
    assert verdicts["commit-fencing"] == "held" and verdicts["eventually-stable"] == "held"
    cov = results["coverage"]
    assert cov["group_states"].get("Stable", 0) > 0 and cov["abstract_states"] > 5
    assert cov["abstract_states_curve"][-1] == [120, cov["abstract_states"]]
    for name in ("summary.md", "index.html", "interleavings.jsonl.gz"):
        assert (out / name).stat().st_size > 0
    assert "120/120 interleavings (100%)" in captured.err  # live progress went to stderr

    assert results["settings"]["world"] == "swarm" and results["settings"]["pinned"] == {"steps": 30}
    assert set(results["regimes"]["join"]) <= {"v0", "v3", "v4", "v5"}
    assert sum(n for n, _ in results["regimes"]["clients"].values()) == 120

    # the same seeds in one process: identical rows and coverage
    from properties.cli import build_parser

    plan = make_plan(build_parser().parse_args(["campaign", "--seed-start", "500", "--steps", "30", "--system", "model"]))
    outcome = run_local(plan, task_ranges(500, 120, 40))
    single = outcome.tally
    assert not outcome.partial
    assert results["steps"] == single.events
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
    plan = make_plan(_args(steps=25, crash_once=f"21:{marker}"))
    outcome = run_spark(spark, plan, task_ranges(0, 48, 6), totals=campaign.Totals(tmp_path / "rows.jsonl.gz"))
    totals, interrupted = outcome.tally, outcome.partial
    totals.close()
    assert marker.exists(), "the worker was supposed to die once"
    assert not interrupted
    single = run_local(make_plan(_args(steps=25)), task_ranges(0, 48, 6)).tally
    assert totals.counts() == single.counts()  # rows (their digest), coverage, failures
    with gzip.open(tmp_path / "rows.jsonl.gz", "rt") as f:
        assert sorted(json.loads(line)["seed"] for line in f) == list(range(48))
    assert totals.failures == single.failures


def test_guided_campaign_on_spark_equals_one_process(spark, tmp_path):
    """A guided search (three rounds of 24, 10 children in each after the first) gives the same
    rows, coverage and corpus on Spark, whose tasks finish in any order, as in one process; its
    children are in the rows with their lineage."""
    plan = make_plan(_args(steps=25, search="guided"))
    assert plan["search"] == "guided"
    plan["rounds"] = {"size": 24, "children": 10}
    on_spark = campaign.Totals(tmp_path / "rows.jsonl.gz")
    outcome = campaign.run_search(lambda p, r: run_spark(spark, p, r, totals=on_spark), plan, 0, 72, 5, on_spark)
    on_spark.close()
    assert not outcome.partial
    single = campaign.Totals()
    campaign.run_search(lambda p, r: run_local(p, r, totals=single), plan, 0, 72, 7, single)
    assert on_spark.counts() == single.counts() and on_spark.corpus == single.corpus
    assert on_spark.corpus["rounds"] == 3 and on_spark.corpus["parents"] > 3
    with gzip.open(tmp_path / "rows.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    children = [r for r in rows if r["guided"][1] is not None]
    assert sorted(r["guided"][0] for r in children) == list(range(38, 48)) + list(range(62, 72))
    assert all("search=child" in r["world"] for r in children)
    fresh_seeds = sorted(r["seed"] for r in rows if r["guided"][1] is None)
    assert fresh_seeds == list(range(52))  # 24 + 14 + 14 fresh interleavings, seeds in order
    # a child's row names a real walk: its world seed walked with its reseed points gives its events
    child = children[0]
    world = campaign.world_at(plan, config_from_dict(plan["config"]), child["seed"])
    again = run("model", child["seed"], world.config, steps=child["guided"][3], faults=world.faults,
                max_faults=world.max_faults, quiet_rate=world.quiet_rate,
                reseed=tuple(tuple(x) for x in child["guided"][2]))
    assert again.steps == child["events"]


def test_a_guided_campaign_reports_its_search(tmp_path, capsys, monkeypatch):
    """--search guided in one process: results.json, the console, summary.md and index.html say how
    many children came from how big a corpus; a plain campaign says nothing of the kind."""
    from properties.explore import guided

    monkeypatch.setattr(guided, "ROUND", 20)
    monkeypatch.setattr(guided, "CHILDREN", 8)
    out = tmp_path / "g"
    status = cli.main(["campaign", "--local", "--system", "model", "--search", "guided", "--interleavings", "60",
                       "--steps", "15", "--out", str(out), "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    results = json.loads(captured.out)
    g = results["guided"]
    assert results["settings"]["search"] == "guided"
    assert g["rounds"] == 3 and g["children"] == 16 and g["parents"] > 0 and g["features"] > g["parents"]
    assert "search: guided, 3 rounds; 16 interleavings bred" in (out / "summary.md").read_text()
    assert "<h2>Search</h2>" in (out / "index.html").read_text()
    with gzip.open(out / "interleavings.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    assert sum(r["guided"][1] is not None for r in rows) == 16
    plain = tmp_path / "p"
    assert cli.main(["campaign", "--local", "--system", "model", "--interleavings", "5", "--steps", "15",
                     "--out", str(plain), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["guided"] is None


def test_guided_search_is_refused_for_a_broker_campaign(tmp_path, capsys):
    status = cli.main(["campaign", "--system", "broker:groupcheck", "--search", "guided", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert status == 2 and "--search guided" in err and len(err.strip().splitlines()) == 1


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
    (["--system", "kafka"], "--system kafka: not a system groupcheck knows (known: impl, model, broker:"),
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
    monkeypatch.setattr(engine_spark, "_active_session", lambda: None)
    status = cli.main(["campaign", "--interleavings", "5", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert status == 2 and "Java not found" in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("groupcheck: error: Java not found")


def test_master_gets_task_retries():
    assert engine_spark.with_retries("local[*]") == "local[*,4]"
    assert engine_spark.with_retries("local[2]") == "local[2,4]"
    assert engine_spark.with_retries("local") == "local[1,4]"
    assert engine_spark.with_retries("local[2,3]") == "local[2,3]"
    assert engine_spark.with_retries("spark://host:7077") == "spark://host:7077"


def test_project_zip_ships_the_packages(tmp_path):
    import zipfile

    names = zipfile.ZipFile(engine_spark.project_zip(str(tmp_path))).namelist()
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
    assert results["violations"] == 6 and results["settings"]["mutant"] == "generation_not_bumped"
    cluster = results["findings"][0]
    assert cluster["kind"] == "always" and cluster["count"] >= 1
    assert cluster["shrunk"]["minimal"] and cluster["shrunk"]["events"] < cluster["shrunk"]["original_events"]
    assert cluster["shrunk"]["events"] <= 40  # a person can follow it
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


def test_a_campaign_stopped_before_any_interleaving_finished_is_inconclusive(tmp_path, capsys, monkeypatch):
    """Issue 34: the partial report of a campaign stopped at once said "Verdict: PASS" for 0
    interleavings. Nothing was checked, so nothing is claimed to hold."""
    def interrupted(plan, start, stop):
        raise KeyboardInterrupt

    monkeypatch.setattr(campaign, "run_range", interrupted)
    out = tmp_path / "nothing"
    status = cli.main(["campaign", "--local", "--system", "model", "--interleavings", "40", "--out", str(out)])
    assert status == 130
    results = json.loads((out / "results.json").read_text())
    assert results["verdict"] == "inconclusive" and results["partial"] is True and results["interleavings"] == 0
    for name in ("summary.md", "index.html"):
        text = (out / name).read_text()
        assert "INCONCLUSIVE" in text and "PASS" not in text and "nothing is claimed to hold" in text
    assert "INCONCLUSIVE" in capsys.readouterr().out


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


def _rows_so_far(path) -> int:
    """Complete rows in a (possibly still growing) interleavings.jsonl.gz."""
    n = 0
    try:
        with gzip.open(path, "rt") as f:
            for line in f:
                n += line.endswith("\n")
    except (OSError, EOFError):
        pass
    return n


@pytest.mark.parametrize("signum, whole_group", [
    (2, True),    # Ctrl-C: the terminal sends SIGINT to the whole foreground process group
    (15, True),   # a CI timeout: SIGTERM to the whole process group (Spark's JVM dies at once too)
    (15, False),  # docker stop / kill: SIGTERM to the driver alone (it must stop Spark itself)
], ids=["sigint-group", "sigterm-group", "sigterm-driver"])
def test_interrupt_on_spark_keeps_every_finished_task(tmp_path, signum, whole_group):
    """A real interrupt once some tasks have finished (their rows are in the report folder: the
    campaign streams them there): the report is written, marked partial, exit status 128 + the
    signal's number, one line about it on stderr, and it holds every task that had finished (whole
    tasks of consecutive seeds); nothing of Spark (JVM, Python workers) outlives the campaign."""
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
    try:
        deadline = time.monotonic() + 300  # generous: the machine may be loaded
        jvm = None
        while time.monotonic() < deadline and proc.poll() is None:
            if jvm is None:
                jvm = next((pid for pid, name in session_processes(proc.pid).items() if name == "java"), None)
            if jvm is not None and _rows_so_far(out / "interleavings.jsonl.gz") >= size:
                break
            time.sleep(0.2)
        assert proc.poll() is None and jvm is not None, "the campaign should be running on Spark"
        (os.killpg if whole_group else os.kill)(proc.pid, signum)
        stdout, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    notes = [line for line in stderr.splitlines() if line.startswith("groupcheck: interrupted")]
    assert len(notes) == 1 and signal.Signals(signum).name in notes[0], stderr
    assert "PARTIAL" in stdout
    # nothing of Spark is left: the JVM has exited when the campaign does, its Python workers soon after
    assert jvm not in session_processes(proc.pid)
    deadline = time.monotonic() + 20
    while session_processes(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert session_processes(proc.pid) == {}

    results = json.loads((out / "results.json").read_text())
    done = results["interleavings"]
    assert results["partial"] is True and size <= done < total
    assert done % size == 0  # whole tasks only
    with gzip.open(out / "interleavings.jsonl.gz", "rt") as f:
        seeds = sorted(json.loads(line)["seed"] for line in f)
    assert len(seeds) == done and len(set(seeds)) == done
    from collections import Counter

    assert set(Counter(s // size for s in seeds).values()) == {size}  # each task complete
    assert "PARTIAL" in (out / "summary.md").read_text()


# -- memory: independent of the campaign's size ---------------------------------------------------

def _fake_part(start, stop):
    from properties.coverage import empty

    return {"start": start, "stop": stop, "rows": [(seed, 10 + seed % 7, seed % 3, None, None, None)
                                                   for seed in range(start, stop)],
            "coverage": empty(), "failures": {}, "seconds": 0.0, "cpu_seconds": 0.0}


class _FakeSpark:
    """Just enough of a SparkSession for run_spark: each job "runs" its one task at once."""

    def __init__(self, on_job):
        outer = self

        class Context:
            defaultParallelism = 2
            master = "fake[2]"

            def setJobDescription(self, text):
                pass

            def cancelAllJobs(self):
                pass

            def parallelize(self, tasks, slices):
                class RDD:
                    def flatMap(self, fn):
                        class Collected:
                            def collect(self):
                                outer.on_job(tasks[0])
                                return [_fake_part(*tasks[0])]
                        return Collected()
                return RDD()

        self.sparkContext = Context()
        self.on_job = on_job


def test_driver_holds_a_bounded_number_of_tasks():
    """Tasks are drawn from the seed range only when a slot is free: however large the campaign,
    the driver never holds more than in_flight tasks it has not merged yet."""
    import threading

    lock = threading.Lock()
    drawn = [0]
    merged_seeds = []
    worst = [0]

    def ranges():
        for task in task_ranges(0, 20_000, 2):
            with lock:
                drawn[0] += 1
            yield task

    class Counting(campaign.Totals):
        def add(self, part):
            super().add(part)
            merged_seeds.append(part["stop"] - part["start"])

    def on_job(task):
        with lock:
            worst[0] = max(worst[0], drawn[0] - len(merged_seeds))

    outcome = run_spark(_FakeSpark(on_job), {}, ranges(), in_flight=4, totals=Counting())
    totals, interrupted = outcome.tally, outcome.partial
    assert not interrupted and totals.done == 20_000 and drawn[0] == 10_000
    assert 1 <= worst[0] <= 4  # never more than in_flight drawn and not yet merged


def test_task_ranges_are_generated_lazily():
    """A trillion seeds is 666,666,667 tasks: they are generated as asked for, never listed."""
    ranges = task_ranges(0, 10 ** 6, 1)  # (small enough that a list would not hurt this machine)
    assert iter(ranges) is ranges and not isinstance(ranges, (list, tuple))
    ranges = task_ranges(0, 10 ** 12, 1500)
    assert next(ranges) == (0, 1500) and next(ranges) == (1500, 3000)
    assert campaign.task_count(10 ** 12, 1500) == 666_666_667
    assert list(task_ranges(10, 7, 3)) == [(10, 13), (13, 16), (16, 17)]


def test_totals_do_not_grow_with_the_rows(tmp_path):
    """The driver's merge keeps counts and histograms, not rows: its state is the same size after
    200 and after 20,000 interleavings (with the same distinct values); the rows are in the file."""
    import pickle

    def state(t):
        return len(pickle.dumps({k: v for k, v in vars(t).items() if k != "_rows"}))

    small, large = campaign.Totals(tmp_path / "small.jsonl.gz"), campaign.Totals(tmp_path / "large.jsonl.gz")
    for start in range(0, 200, 100):
        small.add(_fake_part(start, start + 100))
    for start in range(0, 20_000, 100):
        large.add(_fake_part(start, start + 100))
    small.close()
    large.close()
    assert large.done == 20_000 and large.events == sum(10 + s % 7 for s in range(20_000))
    assert state(large) <= state(small) + 64  # a few bigger integers, nothing per row
    with gzip.open(tmp_path / "large.jsonl.gz", "rt") as f:
        assert sum(1 for _ in f) == 20_000


# -- an unreachable master: one line, at once ----------------------------------------------------

def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_master_is_one_line_before_spark_starts(tmp_path, capsys, monkeypatch):
    """Nothing listens at the master's address: exit 2 with one line naming it, no report folder,
    and no Spark started (Spark itself would retry for ~70 s and hide the cause in its log)."""
    monkeypatch.setattr(engine_spark, "start_spark", lambda *a, **k: pytest.fail("Spark was started"))
    port = _free_port()
    out = tmp_path / "r"
    status = cli.main(["campaign", "--master", f"spark://127.0.0.1:{port}", "--interleavings", "5", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"groupcheck: error: --master spark://127.0.0.1:{port}: no Spark master reachable")
    assert not out.exists()
    with pytest.raises(RunError, match="not a Spark master URL"):
        engine_spark.check_master("spark://nohost")


# -- the report folder ---------------------------------------------------------------------------

def test_default_report_folder_is_the_checkouts(tmp_path, monkeypatch):
    """Without --out: reports/ of the project checkout groupcheck runs from, whatever the current
    directory; an installed copy (no checkout around it) uses ./reports."""
    monkeypatch.chdir(tmp_path)
    assert campaign.default_reports_dir() == campaign.ROOT / "reports"
    installed = tmp_path / "site-packages"
    (installed / "properties" / "campaign").mkdir(parents=True)
    monkeypatch.setattr(campaign, "ROOT", installed)
    assert campaign.default_reports_dir() == tmp_path / "reports"


def _earlier_report(folder):
    (folder / "counterexamples").mkdir(parents=True)
    (folder / "counterexamples" / "commit-fencing-0badc0de.json").write_text("{}")
    (folder / "results.json").write_text(json.dumps({"format": "groupcheck-campaign", "version": 1}))
    (folder / "index.html").write_text("old")
    (folder / "notes.txt").write_text("mine")


def test_non_empty_out_is_refused(tmp_path, capsys):
    out = tmp_path / "old"
    _earlier_report(out)
    status = cli.main(["campaign", "--local", "--system", "model", "--interleavings", "5", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert f"--out {out}: the folder is not empty" in err and "--force" in err
    assert (out / "index.html").read_text() == "old"  # untouched
    assert (out / "counterexamples" / "commit-fencing-0badc0de.json").exists()


def test_force_replaces_only_the_earlier_report(tmp_path, capsys):
    out = tmp_path / "old"
    _earlier_report(out)
    status = cli.main(["campaign", "--local", "--system", "model", "--interleavings", "5", "--steps", "20",
                       "--out", str(out), "--force"])
    assert status == 0, capsys.readouterr().err
    assert not (out / "counterexamples" / "commit-fencing-0badc0de.json").exists()  # no stale counterexample
    assert json.loads((out / "results.json").read_text())["interleavings"] == 5
    assert (out / "index.html").read_text() != "old"
    assert (out / "notes.txt").read_text() == "mine"  # not a report file: left alone


def test_force_refuses_a_folder_that_holds_no_report(tmp_path, capsys):
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("someone else's page")
    status = cli.main(["campaign", "--local", "--system", "model", "--interleavings", "5", "--out", str(out), "--force"])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1 and "holds none" in err
    assert (out / "index.html").read_text() == "someone else's page"


def test_campaign_takes_kafka_settings():
    """--set reaches the campaign's world (and so every row and counterexample file); a bad one is
    one usage error before Spark starts."""
    from model.config import settings_of
    from properties.cli import build_parser

    given = ["--set", "session.timeout.ms=9000", "--set", "partition.assignment.strategy=roundrobin"]
    config = config_from_dict(make_plan(build_parser().parse_args(["campaign", "--world", "fixed"] + given))["config"])
    assert config.session_timeout_ms == 9000 and config.protocols(0) == ("roundrobin",)
    assert settings_of(config)["session.timeout.ms"] == 9000
    plan = make_plan(build_parser().parse_args(["campaign"] + given))  # swarm worlds: the settings are pinned
    for seed in range(10):
        drawn = campaign.world_at(plan, config_from_dict(plan["config"]), seed).config
        assert drawn.session_timeout_ms == 9000 and drawn.protocols(1) == ("roundrobin",)
    bad = build_parser().parse_args(["campaign", "--set", "heartbeat.interval.ms=9000"])
    with pytest.raises(RunError, match=r"heartbeat\.interval\.ms \(9000\) must be below"):
        make_plan(bad)


# -- the directed schedules ----------------------------------------------------------------------

def test_a_campaign_replays_the_directed_schedules_and_counts_their_cells_apart(tmp_path, capsys):
    """Issue 37: after its interleavings a campaign of the implementation replays every directed
    schedule (properties/campaign/directed.py) with the same checks; the error-path matrices count
    their cells in a column of their own, and the interleavings' figures are as without them."""
    from properties.campaign import directed

    runs = {}
    for flag in ([], ["--no-directed"]):
        out = tmp_path / ("without" if flag else "with")
        status = cli.main(["campaign", "--local", "--system", "impl", "--interleavings", "2", "--steps", "20",
                           "--out", str(out)] + flag)
        assert status == 0
        runs[bool(flag)] = json.loads((out / "results.json").read_text()), (out / "summary.md").read_text()
    (with_, md), (without, md_without) = runs[False], runs[True]
    schedules = directed.load()
    assert with_["directed"]["ran"] and with_["directed"]["schedules"] == len(schedules) and not with_["directed"]["failed"]
    assert without["directed"] is None
    rows = {r["cell"]: r for side in ("client", "coordinator") for r in with_["coverage"]["error_paths"][side]["rows"]}
    assert all(rows[d.cell]["directed"] >= 1 for d in schedules)
    assert not any(r["directed"] for side in ("client", "coordinator")
                   for r in without["coverage"]["error_paths"][side]["rows"])
    for side in ("client", "coordinator"):  # the interleavings' own reach is the same either way
        assert with_["coverage"]["error_paths"][side]["reached"] == without["coverage"]["error_paths"][side]["reached"]
    assert with_["steps"] == without["steps"]
    assert "with the directed schedules" in md and "Reached only by the directed schedules" in md
    assert "by the directed schedules" in md and "directed schedules" not in md_without
    assert any("directed schedules" in line and "none failed" in line for line in with_["checked"]["what"])


def test_a_bug_only_a_directed_schedule_reaches_fails_the_campaign_with_a_replayable_counterexample(tmp_path):
    """KAFKA-13419's mutant (a SyncGroup answered ILLEGAL_GENERATION resets the member id too): the
    random search does not reach it (properties/mutation/mutants.py WHY_UNREACHED), the directed
    schedule of a SyncGroup newer than the generation a coordinator reloaded does. The campaign
    fails; the counterexample names the directed schedule and replays under the mutant only."""
    from properties.mutation import mutants

    name = "sync_illegal_generation_resets_member_id"
    assert name in mutants.UNREACHED
    out = tmp_path / "directed"
    status = cli.main(["campaign", "--local", "--system", "impl", "--mutant", name, "--interleavings", "2",
                       "--steps", "20", "--shrink-seconds", "5", "--out", str(out)])
    assert status == 1
    results = json.loads((out / "results.json").read_text())
    assert results["violations"] == 0  # no interleaving failed: the directed schedules did
    failed = results["directed"]["failed"]
    assert failed and all(o["property"] == "impl-matches-model" for o in failed)
    finding = results["findings"][0]
    doc = json.loads((out / finding["counterexample"]).read_text())
    assert doc["directed"]["cell"] in {o["cell"] for o in failed} and doc["mutant"] == name
    assert len(doc["timeline"]) == len(doc["schedule"])  # shrunk and laid out like an interleaving's
    config, schedule = config_from_dict(doc["config"]), [tuple(e) for e in doc["schedule"]]
    with mutants.applied(name):
        again = replay("impl", config, schedule, seed=doc["seed"], check_eventually=doc["check_eventually"])
    assert again.violation is not None and again.violation.property == "impl-matches-model"
    assert replay("impl", config, schedule, seed=doc["seed"], check_eventually=doc["check_eventually"]).violation is None
