"""Campaign benchmark: the single-process walker against the Spark job, over the same seeds.

:func:`bench_campaign` runs the campaign's own task function (:func:`properties.campaign.spark.run_range`:
walk, check, collect coverage, shrink failures) over one seed range twice in one run — first in
this process, one task after another, then as a Spark job on ``local[2]`` — and reports both rates
in interleavings per second. The Spark time is the job's alone: the session is started (and its
Python workers warmed on a few seeds outside the range) before the clock starts, because a
campaign pays that once, not per interleaving. Both runs must agree on every count, which the
benchmark checks. With ``million=True`` it also runs one million interleavings on Spark and
reports the wall time (session start-up included).
"""

from __future__ import annotations

import argparse
import os
import time

from properties.campaign.spark import (DEFAULT_TASK_SIZE, make_plan, run_local, run_spark, start_spark, task_ranges,
                                 versions)


def _plan(system: str, steps: int, eventually: bool, quiet_rate: float | None = None, clients: int = 3, brokers: int = 3,
          faults: str = "all") -> dict:
    args = argparse.Namespace(system=system, faults=faults, clients=clients, brokers=brokers, partitions=6,
                              mutant=None, crash_once=None, steps=steps, max_faults=6, eventually=eventually,
                              shrink_seconds=10.0, quiet_rate=quiet_rate)
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
    ranges = task_ranges(seed_start, interleavings, max(1, min(size, interleavings // 16 or 1)))

    load_before = os.getloadavg()
    t, c = time.perf_counter(), time.process_time()
    single, _ = run_local(plan, ranges)
    single_s, single_cpu = time.perf_counter() - t, time.process_time() - c

    t = time.perf_counter()
    spark = start_spark(master, app="groupcheck-bench", log_path=os.devnull)
    startup_s = time.perf_counter() - t
    try:
        sc = spark.sparkContext
        warm = task_ranges(seed_start + interleavings + 1_000_000, 2 * sc.defaultParallelism, 1)
        run_spark(spark, plan, warm)  # start the Python workers and import the project in them
        t = time.perf_counter()
        parallel, _ = run_spark(spark, plan, ranges)
        spark_s = time.perf_counter() - t
        if sorted(single.rows) != sorted(parallel.rows):
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
            "events": sum(r[1] for r in single.rows),
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
            m_ranges = task_ranges(seed_start, 1_000_000, m_size)
            t = time.perf_counter()
            totals, _ = run_spark(spark, m_plan, m_ranges, progress=progress)
            m_s = time.perf_counter() - t
            out["million"] = {
                "interleavings": totals.done,
                "events": sum(r[1] for r in totals.rows),
                "eventually": million_eventually,
                "job_seconds": round(m_s, 1),
                "wall_seconds": round(m_s + startup_s, 1),
                "rate": round(totals.done / m_s, 1),
                "violations": totals.failed,
            }
    finally:
        spark.stop()
    return out


if __name__ == "__main__":  # python -m properties.campaign.bench [N] [--system model] [--no-eventually] [--million]
    import json

    parser = argparse.ArgumentParser(prog="python -m properties.campaign.bench")
    parser.add_argument("interleavings", type=int, nargs="?", default=2000)
    parser.add_argument("--system", default="model")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--no-eventually", dest="eventually", action="store_false")
    parser.add_argument("--quiet-rate", type=float, default=None)
    parser.add_argument("--million", action="store_true", help="also run 1,000,000 interleavings on Spark (long)")
    a = parser.parse_args()
    print(json.dumps(bench_campaign(a.interleavings, system=a.system, steps=a.steps, eventually=a.eventually,
                                    million=a.million, quiet_rate=a.quiet_rate), indent=1))
