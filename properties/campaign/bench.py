"""Campaign benchmark: the single-process walker against the Spark job, over the same seeds.

:func:`bench_campaign` runs the campaign's own task function (:func:`properties.campaign.spark.run_range`:
walk, check, collect coverage, shrink failures) over one seed range twice in one run — first in
this process, one task after another, then as a Spark job on ``local[2]`` — and reports both rates
in interleavings per second. The Spark time is the job's alone: the session is started (and its
Python workers warmed on a few seeds outside the range) before the clock starts, because a
campaign pays that once, not per interleaving. Both runs must agree on every count, which the
benchmark checks. With ``million=True`` it also runs one million interleavings on Spark and
reports the wall time (session start-up included).

:func:`bench_memory` (``--memory``) measures the campaign driver's peak resident memory for
campaigns of different sizes, which must not grow with the size.
"""

from __future__ import annotations

import argparse
import os
import time

from properties.engine.run import task_ranges
from properties.engine.spark import start_spark
from properties.campaign.spark import (DEFAULT_TASK_SIZE, make_plan, run_local, run_spark,
                                       versions)


def _plan(system: str, steps: int, eventually: bool, quiet_rate: float | None = None, clients: int = 3, brokers: int = 3,
          faults: str = "all") -> dict:
    args = argparse.Namespace(system=system, faults=faults, clients=clients, brokers=brokers, partitions=6,
                              mutant=None, crash_once=None, steps=steps, max_faults=6, eventually=eventually,
                              shrink_seconds=10.0, quiet_rate=quiet_rate,
                              kip848_every=0)  # the classic interleavings' rate, comparable across versions
    return make_plan(args)


def bench_campaign(interleavings: int = 2000, seed_start: int = 0, system: str = "model", steps: int = 40,
                   eventually: bool = True, master: str = "local[2]", million: bool = False,
                   million_eventually: bool = False, task_size: int | None = None, progress=None,
                   quiet_rate: float | None = None) -> dict:
    """Single-process rate, Spark rate (job time only) and their ratio over the same seeds; with
    *million*, the wall time of a 1,000,000-interleaving Spark campaign (3 clients, 3 brokers, all
    faults, *steps* events; *million_eventually* adds the settle phase)."""
    plan = _plan(system, steps, eventually, quiet_rate)
    size = task_size or DEFAULT_TASK_SIZE[(system, eventually)]
    size = max(1, min(size, interleavings // 16 or 1))
    ranges = list(task_ranges(seed_start, interleavings, size))

    load_before = os.getloadavg()
    t, c = time.perf_counter(), time.process_time()
    single = run_local(plan, ranges).tally
    single_s, single_cpu = time.perf_counter() - t, time.process_time() - c

    t = time.perf_counter()
    spark = start_spark(master, app="groupcheck-bench", log_path=os.devnull)
    startup_s = time.perf_counter() - t
    try:
        sc = spark.sparkContext
        warm = task_ranges(seed_start + interleavings + 1_000_000, 2 * sc.defaultParallelism, 1)
        run_spark(spark, plan, warm)  # start the Python workers and import the project in them
        t = time.perf_counter()
        parallel = run_spark(spark, plan, ranges).tally
        spark_s = time.perf_counter() - t
        if single.counts() != parallel.counts():
            raise AssertionError("the Spark job and the single-process run disagree on the same seeds")
        out = {
            "system": system,
            "steps": steps,
            "eventually": eventually,
            "quiet_rate": quiet_rate,
            "clients": 3,
            "brokers": 3,
            "faults": "all",
            "interleavings": interleavings,
            "events": single.events,
            "tasks": len(ranges),
            "master": sc.master,
            "cores": sc.defaultParallelism,
            "single_process_seconds": round(single_s, 3),
            "spark_seconds": round(spark_s, 3),
            "spark_startup_seconds": round(startup_s, 3),
            "single_process_rate": round(interleavings / single_s, 1),
            "spark_rate": round(interleavings / spark_s, 1),
            "ratio": round(single_s / spark_s, 3),
            # the machine is shared: CPU time shows what the work costs whatever else runs
            "single_process_cpu_seconds": round(single_cpu, 3),
            "spark_task_cpu_seconds": round(parallel.task_cpu_seconds, 3),
            "cpu_ms_per_interleaving": round(1000 * single_cpu / interleavings, 2),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
            "million_extrapolated_wall_seconds": round(1_000_000 / (interleavings / spark_s) + startup_s),
            "versions": versions(spark),
        }
        if million:
            m_plan = _plan(system, steps, million_eventually, quiet_rate)
            m_size = task_size or DEFAULT_TASK_SIZE[(system, million_eventually)]
            m_ranges = task_ranges(seed_start, 1_000_000, m_size)  # drawn as slots free up
            t = time.perf_counter()
            totals = run_spark(spark, m_plan, m_ranges, progress=progress).tally
            m_s = time.perf_counter() - t
            out["million"] = {
                "interleavings": totals.done,
                "events": totals.events,
                "eventually": million_eventually,
                "job_seconds": round(m_s, 1),
                "wall_seconds": round(m_s + startup_s, 1),
                "rate": round(totals.done / m_s, 1),
                "violations": totals.failed,
            }
    finally:
        spark.stop()
    return out


def _vm_hwm_kb(pid: int) -> int | None:
    """The process's own peak resident set (VmHWM, KiB), without its children's (the JVM's)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def campaign_peak_rss(interleavings: int, master: str = "local[2]", stop_after: float | None = None,
                      steps: int = 10) -> dict:
    """Run ``groupcheck campaign`` as a child process (model, no settle phase, no quiet time, *steps*
    events: the fast configuration) and sample its driver's peak resident set (VmHWM of the Python
    process alone, not of Spark's JVM) until it exits; with *stop_after* seconds, SIGTERM it then
    (a campaign too large to finish). Returns the figures and the report's counts."""
    import json
    import signal
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root)] + [p for p in os.environ.get("PYTHONPATH", "").split(
        os.pathsep) if p]))
    with tempfile.TemporaryDirectory(prefix="groupcheck-bench-memory-") as tmp:
        out = Path(tmp) / "report"
        proc = subprocess.Popen(
            [sys.executable, "-m", "properties.cli", "campaign", "--system", "model", "--no-eventually", "--quiet-rate", "0",
             "--steps", str(steps), "--interleavings", str(interleavings), "--master", master, "--out", str(out)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        began, peak, signalled = time.perf_counter(), 0, False
        while proc.poll() is None:
            peak = max(peak, _vm_hwm_kb(proc.pid) or 0)
            if stop_after is not None and not signalled and time.perf_counter() - began > stop_after:
                proc.send_signal(signal.SIGTERM)
                signalled = True
            time.sleep(0.1)
        results = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else {}
    return {"requested": interleavings, "master": master, "exit_status": proc.returncode,
            "wall_seconds": round(time.perf_counter() - began, 1), "driver_peak_rss_mb": round(peak / 1024, 1),
            "interleavings": results.get("interleavings"), "partial": results.get("partial")}


def bench_memory(sizes=(20_000, 200_000), master: str = "local[2]", huge: int = 10 ** 12, huge_seconds: float = 40) -> dict:
    """The driver's peak memory for campaigns of different sizes (it must not grow with the size:
    tasks are drawn as slots free up and rows are streamed to the report), and for a campaign of
    *huge* interleavings stopped with SIGTERM after *huge_seconds* s."""
    runs = [campaign_peak_rss(n, master) for n in sizes]
    if huge:
        runs.append(campaign_peak_rss(huge, master, stop_after=huge_seconds))
    return {"runs": runs, "versions": versions()}


if __name__ == "__main__":  # python -m properties.campaign.bench [N] [--system model] [--no-eventually] [--million|--memory]
    import json

    parser = argparse.ArgumentParser(prog="python -m properties.campaign.bench")
    parser.add_argument("interleavings", type=int, nargs="?", default=2000)
    parser.add_argument("--system", default="model")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--no-eventually", dest="eventually", action="store_false")
    parser.add_argument("--quiet-rate", type=float, default=None)
    parser.add_argument("--million", action="store_true", help="also run 1,000,000 interleavings on Spark (long)")
    parser.add_argument("--memory", action="store_true",
                        help="instead: the driver's peak memory for campaigns of N and 10*N interleavings, and for "
                             "10**12 stopped after 40 s")
    a = parser.parse_args()
    if a.memory:
        print(json.dumps(bench_memory((a.interleavings, 10 * a.interleavings)), indent=1))
        raise SystemExit(0)
    print(json.dumps(bench_campaign(a.interleavings, system=a.system, steps=a.steps, eventually=a.eventually,
                                    million=a.million, quiet_rate=a.quiet_rate), indent=1))
