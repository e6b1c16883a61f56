"""A campaign on a real Spark standalone cluster (issue 11): a master and a worker started with
pyspark's own ``spark-class`` on 127.0.0.1, executors whose Python has only the declared
dependencies (not the project), both forms of the campaign (``groupcheck campaign --master
spark://...`` and ``spark-submit .../properties/campaign/spark.py``) started from a directory
outside the project, and their counts equal to an in-process run over the same seeds.

The executors' Python is a wrapper around this interpreter: ``python -S`` (the .pth files in
site-packages, among them the editable install of groupcheck, are not read) with PYTHONPATH set
to site-packages (the dependencies import) and cleared of the project's checkout. So groupcheck
imports on the executors only from the zip the job ships with ``addPyFile`` — which the test
checks first: the wrapper alone cannot import ``model``.
"""

from __future__ import annotations

import gzip
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from properties import cli

ROOT = Path(__file__).resolve().parents[2]
SPARK_HOME = Path(__import__("pyspark").__file__).resolve().parent
ARGS = ["--system", "model", "--no-eventually", "--interleavings", "200", "--seed-start", "1000", "--json"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _wait_for(what: str, ready, procs, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        for name, proc, log in procs:
            if proc.poll() is not None:
                pytest.fail(f"the {name} exited ({proc.returncode}) before {what}: {log.read_text()[-2000:]}")
        time.sleep(0.3)
    pytest.fail(f"timed out waiting for {what}")


def _executor_python(folder: Path) -> Path:
    """The executors' Python: no project, only the dependencies (see the module docstring); each
    start is logged (pid and working directory) to ``executor-pythons.log`` beside it."""
    site = os.pathsep.join(dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]))
    wrapper = folder / "executor-python"
    wrapper.write_text(f"""#!/bin/sh
# Python for Spark executors without the project: -S skips site processing (the editable install of
# groupcheck is a .pth file), site-packages come from PYTHONPATH, and the project's checkout is
# dropped from it: groupcheck imports only from the zip the job ships.
root={shlex.quote(str(ROOT))}
keep=
IFS=:
for p in ${{PYTHONPATH:-}}; do
  case "$p" in "$root"|"$root"/*) ;; *) keep="$keep${{keep:+:}}$p";; esac
done
unset IFS
export PYTHONPATH="$keep${{keep:+:}}"{shlex.quote(site)}
echo "$$ $(pwd)" >> {shlex.quote(str(folder / "executor-pythons.log"))}
exec {shlex.quote(sys.executable)} -S "$@"
""")
    wrapper.chmod(0o755)
    return wrapper


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A standalone master and one worker (2 cores) on 127.0.0.1, free ports, stopped afterwards
    (their process groups killed): yields (master URL, folder)."""
    folder = tmp_path_factory.mktemp("cluster")
    port, master_ui, worker_ui, worker_port = (_free_port() for _ in range(4))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_CONF_DIR")}
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m",
               SPARK_DAEMON_JAVA_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
               SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false")
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    procs = []
    try:
        log = folder / "master.log"
        with open(log, "w") as f:
            master = subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                       "--port", str(port), "--webui-port", str(master_ui)],
                                      stdout=f, stderr=subprocess.STDOUT, env=env, cwd=folder, start_new_session=True)
        procs.append(("master", master, log))
        _wait_for("the master to listen", lambda: _listening(port), procs)
        log = folder / "worker.log"
        (folder / "work").mkdir()
        with open(log, "w") as f:
            worker = subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}",
                                       "--host", "127.0.0.1", "--port", str(worker_port), "--cores", "2", "--memory", "1g",
                                       "--webui-port", str(worker_ui), "--work-dir", str(folder / "work")],
                                      stdout=f, stderr=subprocess.STDOUT, env=env, cwd=folder, start_new_session=True)
        procs.append(("worker", worker, log))
        _wait_for("the worker to register", lambda: "Registering worker" in (folder / "master.log").read_text(), procs)
        yield f"spark://127.0.0.1:{port}", folder
    finally:
        for _, proc, _ in reversed(procs):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _rows(folder: Path) -> list:
    with gzip.open(folder / "interleavings.jsonl.gz", "rt") as f:
        return sorted(f.read().splitlines())


def _counts(results: dict) -> dict:
    return {"interleavings": results["interleavings"], "events": results["steps"], "violations": results["violations"],
            "by_property": results["violations_by_property"], "coverage": results["coverage"],
            "histograms": results["histograms"],
            "findings": [(f["signature"], f["count"], f["first_seeds"]) for f in results["findings"]],
            "seed_range": results["seed_range"]}


def test_campaign_on_a_standalone_cluster_equals_a_local_run(cluster, tmp_path, capsys):
    url, folder = cluster
    python = _executor_python(folder)
    elsewhere = tmp_path / "elsewhere"  # neither form runs from the project's directory
    elsewhere.mkdir()

    # the executors' Python cannot import the project by itself, but has the dependencies
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    alone = subprocess.run([str(python), "-c", "import model"], cwd=elsewhere, env=env, capture_output=True, text=True,
                           timeout=60)
    assert alone.returncode != 0 and "No module named 'model'" in alone.stderr
    deps = subprocess.run([str(python), "-c", "import pyspark, py4j, attr, hypothesis"], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=60)
    assert deps.returncode == 0, deps.stderr
    (folder / "executor-pythons.log").unlink(missing_ok=True)

    base = dict(os.environ, PYSPARK_PYTHON=str(python), PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    base.pop("SPARK_CONF_DIR", None)

    # 1. groupcheck campaign --master spark://...
    first = tmp_path / "campaign"
    run = subprocess.run([sys.executable, "-m", "properties.cli", "campaign", "--master", url, *ARGS, "--out", str(first)],
                         cwd=elsewhere, env=dict(base, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-3000:]
    via_cli = json.loads(run.stdout)  # --json: stdout is the results and nothing else

    # 2. spark-submit --master spark://... /abs/path/properties/campaign/spark.py (no PYTHONPATH: the
    # script finds its project itself)
    second = tmp_path / "submit"
    submit_env = {k: v for k, v in base.items() if k != "PYTHONPATH"}
    run = subprocess.run([str(SPARK_HOME / "bin" / "spark-submit"), "--master", url, "--conf", "spark.log.level=ERROR",
                          str(ROOT / "properties" / "campaign" / "spark.py"), *ARGS, "--out", str(second)],
                         cwd=elsewhere, env=submit_env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-3000:] + run.stdout[-3000:]
    via_submit = json.loads(run.stdout)
    assert "200/200 interleavings (100%)" in run.stderr  # progress went to stderr

    # executors ran the wrapper, in the worker's folders (not the project's)
    starts = (folder / "executor-pythons.log").read_text().splitlines()
    assert starts and all(line.split(" ", 1)[1].startswith(str(folder / "work")) for line in starts)

    # 3. the same seeds in this process
    local = tmp_path / "local"
    assert cli.main(["campaign", "--local", *ARGS, "--out", str(local)]) == 0
    in_process = json.loads(capsys.readouterr().out)

    for results, out in ((via_cli, first), (via_submit, second)):
        assert results["master"] == url and results["partial"] is False
        assert results == json.loads((out / "results.json").read_text())
        assert _counts(results) == _counts(in_process)
        assert _rows(out) == _rows(local)
    assert in_process["interleavings"] == 200 and in_process["steps"] > 0


def test_spark_submit_to_an_unreachable_master_is_one_line(tmp_path):
    """Under spark-submit the master comes from spark-submit's own configuration: checked all the
    same before the SparkContext starts, one line on stderr, exit 2, nothing on stdout and no
    report folder left behind."""
    port = _free_port()
    out = tmp_path / "report"
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_DRIVER_PYTHON=sys.executable)
    env.pop("SPARK_CONF_DIR", None)
    run = subprocess.run([str(SPARK_HOME / "bin" / "spark-submit"), "--master", f"spark://127.0.0.1:{port}",
                          "--conf", "spark.log.level=ERROR", str(ROOT / "properties" / "campaign" / "spark.py"),
                          "--interleavings", "5", "--out", str(out), "--json"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == "", run.stdout + run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("groupcheck: error:")]
    assert errors == [f"groupcheck: error: --master spark://127.0.0.1:{port}: no Spark master reachable "
                      f"(127.0.0.1:{port}: Connection refused)"], run.stderr
    assert "Traceback" not in run.stderr and not out.exists()
