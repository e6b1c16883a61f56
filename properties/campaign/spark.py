"""Spark campaigns: many seeded interleavings, shrunk and clustered counterexamples, a report.

Two ways to run the same job::

    groupcheck campaign --interleavings 20000 [--system impl|model] [--master local[*]] ...
    spark-submit /path/to/properties/campaign/spark.py --interleavings 20000 ...   # any master, any directory

The job:

1. The seed range ``[seed_start, seed_start + interleavings)`` is split into small tasks (a few
   seconds of work each, ``--task-size`` seeds), each submitted as a Spark job of its own, a few
   more in flight than there are cores, so the cluster stays busy while every finished task is
   already safe on the driver. Tasks are drawn from the range only as slots free up.
2. Each task runs the lean seeded walker (:func:`properties.systems.run`, not Hypothesis) over its
   seeds, collecting coverage through the walker's ``on_step`` hook
   (:mod:`properties.coverage`). The first failing interleaving of each failure *signature* in the
   task is shrunk right there on the executor (:mod:`properties.explore.shrink`, within
   ``--shrink-seconds``) and turned into a counterexample document; the other failures of that
   signature are only counted. A task returns compact rows (one per interleaving), its coverage
   counts and its counterexamples.
3. The driver merges each task's results as it arrives (:class:`Totals`: sums, histograms, and the
   smallest counterexample per signature; the merge is order-independent, so the counts equal a
   single-process run over the same seeds, even when Spark re-runs a task whose worker died) and
   streams its rows into ``interleavings.jsonl.gz``: the driver's memory does not grow with the
   campaign. At the end it writes the rest of the report (:mod:`properties.campaign.report`):
   ``results.json``, ``counterexamples/<signature>.json``, ``summary.md``, ``index.html``.

Local masters get Spark's task retries (``local[N]`` becomes ``local[N,4]``: in local mode Spark
otherwise fails a job at the first task failure). For a non-local master the job zips the
project's own packages (``model``, ``impl``, ``properties``) and ships them with
``SparkContext.addPyFile``, so executors need only Python and the declared dependencies; a
``spark://`` master must accept a connection before Spark starts (:func:`check_master`).

stdout carries only the result (``--json``: the results document); progress and every other line
go to stderr, also under spark-submit (:func:`own_stderr`).

SIGINT and SIGTERM stop the campaign alike (the run engine's policy, :mod:`properties.engine.run`): the finished
tasks are kept, the report is written marked partial, Spark's JVM is stopped and waited for.

Exit status: 0 when no ``always`` property failed, 1 when one did, 2 on a usage error (bad
arguments, an unwritable or non-empty ``--out``, no Java, an unreachable master) or a task that
failed after Spark's retries (the report of what finished is written), 128 + the signal's number
when stopped (130 SIGINT, 143 SIGTERM; after writing the partial report).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):  # run as a script (spark-submit properties/campaign/spark.py): find the project
    # (in place of the script's own folder, whose module names must not shadow anything)
    sys.path[0] = str(Path(__file__).resolve().parents[2])

from properties.errors import int_at_least  # noqa: E402  (after the script-mode path fix)

from properties.engine import run as engine  # noqa: E402
from properties.engine.errors import RunError  # noqa: E402
from properties.engine.interrupts import Interrupts, exit_status  # noqa: E402
from properties.engine.run import Outcome, task_count, task_ranges  # noqa: E402
from properties.engine.spark import check_master, executor_count  # noqa: E402
from properties.engine.spark import started as spark_started  # noqa: E402
from properties.campaign.report import FORMAT, ROW_FIELDS  # noqa: E402
from properties.findings import SCHEMA  # noqa: E402
from properties.progress import Progress  # noqa: E402,F401  (groupcheck walk used it from here)
from properties.explore.swarm import FIXED_WORLD  # noqa: E402
from properties.explore.walker import DEFAULT_STEPS  # noqa: E402

from properties.engine.spark import ROOT  # noqa: E402
EXAMPLE_SEEDS = 5
# Seeds per task, for a few seconds of work (x3 without quiet bursts): a Spark task costs tens of milliseconds
# around the work (measured: 80,000 model interleavings without quiet time ran at 1,077/s in tasks
# of 1,200 seeds and 1,142/s in tasks of 5,000).
DEFAULT_TASK_SIZE = {("model", True): 100, ("model", False): 1500, ("impl", True): 25, ("impl", False): 80}


# --------------------------------------------------------------------------------------------------
# executor side
# --------------------------------------------------------------------------------------------------

class _NoMutant:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _mutant(name):
    if not name:
        return _NoMutant()
    from properties.mutation import mutants

    return mutants.applied(name)


def run_range(plan: dict, start: int, stop: int) -> dict:
    """Run seeds ``[start, stop)`` as one task: rows, coverage, shrunk counterexamples.

    *plan* is a plain dict (see :func:`make_plan`); everything returned is plain data, small
    enough to send back to the driver."""
    from properties.campaign import counterexample
    from properties.coverage import Coverage
    from properties.explore.shrink import signature
    from properties.systems import run

    began, began_cpu = time.perf_counter(), time.process_time()
    config = counterexample.config_from_dict(plan["config"])
    coverage = Coverage()
    rows = []
    failures: dict = {}
    crash = plan.get("crash_once")
    guided = plan.get("guided")
    corpus = None
    if guided is not None:
        from properties.explore.guided import Corpus, Features

        corpus = Corpus.from_plan(guided)
    offers = []  # guided search: (interleaving, features the corpus has not seen, walked, steps)
    with _mutant(plan.get("mutant")):
        for i in range(start, stop):
            if crash and i == crash["seed"] and not os.path.exists(crash["marker"]):
                # test hook: the Python worker dies mid-task, once; Spark must retry the task
                Path(crash["marker"]).write_text(str(i))
                os._exit(3)
            coverage.start_run(i)
            spec = corpus.spec(i) if corpus is not None else None
            seed = i if spec is None else spec.world_seed
            w = world_at(plan, config, seed)
            steps = spec.steps if spec is not None and spec.steps else w.steps
            features = Features(coverage.on_step) if corpus is not None else None
            # no trace hash: a campaign keeps schedules, and the counterexample files get theirs from
            # the shrunk schedule's replay
            result = run(plan["system"], seed, w.config, steps=steps, faults=w.faults,
                         max_faults=w.max_faults, eventually=plan["eventually"],
                         on_step=coverage.on_step if features is None else features.on_step,
                         quiet_rate=w.quiet_rate, hash_trace=False, reseed=() if spec is None else spec.reseed,
                         mix=w.mix)
            coverage.end_run(result)
            if features is not None:
                unseen = corpus.unknown(features.keys(result))
                if unseen:
                    offers.append((i, unseen, result.walked if result.walked is not None else result.steps, steps))
            group = result.world.group
            generation = group.generation if group is not None else -1
            v = result.violation
            label = w.label() if plan.get("world") == "swarm" else None
            if corpus is not None:
                kind = "search=fresh" if spec.parent is None else "search=child"
                label = f"{label} {kind}" if label else kind
            lineage = None if spec is None else [i, spec.parent, [list(r) for r in spec.reseed], spec.steps]
            if v is None:
                rows.append((seed, result.steps, generation, None, None, None, label, lineage))
                continue
            sig = signature(v)
            rows.append((seed, result.steps, generation, v.property, sig, result.step, label, lineage))
            entry = failures.get(sig)
            if entry is None:
                entry = failures[sig] = {"property": v.property, "count": 0, "seeds": [], "counterexample": None}
                doc = _counterexample(plan, w.config, seed, result, sig, steps=steps, faults=w.faults,
                                      max_faults=w.max_faults if label else None,
                                      quiet_rate=w.quiet_rate if label else None,
                                      mix=w.mix if w.mix != "default" else None)
                if label:
                    doc["world"] = {"kind": "swarm", "regimes": dict(w.regimes), "pinned": plan.get("pinned")}
                if spec is not None and spec.parent is not None:
                    doc["guided"] = spec.as_dict()  # the walk seed *seed* reseeded: its schedule replays it
                entry["counterexample"] = doc
            entry["count"] += 1
            if len(entry["seeds"]) < EXAMPLE_SEEDS:
                entry["seeds"].append(seed)
    part = {"start": start, "stop": stop, "rows": rows, "coverage": coverage.to_dict(), "failures": failures,
            "guided": offers}
    every = plan.get("kip848_every")
    if every:  # the KIP-848 worlds of this range's seeds (properties/kip848/campaign.py)
        from properties.kip848 import campaign as kip848

        part["kip848"] = kip848.run_seeds([i for i in range(start, stop) if i % every == 0],
                                          impl=plan.get("system") == "impl")  # as the classic ones: beside the model
    part.update(seconds=time.perf_counter() - began, cpu_seconds=time.process_time() - began_cpu)
    return part


def _counterexample(plan: dict, config, seed: int, result, sig: str, **build) -> dict:
    """The counterexample file of a failing run (*result*, its cluster's signature *sig*): its schedule
    shrunk within the plan's budget, built by :func:`properties.campaign.counterexample.build` (with
    *build*'s arguments), with the mutant, how it was shrunk (``campaign``) and its timeline."""
    from properties.campaign import counterexample
    from properties.campaign.timeline import timeline
    from properties.explore.shrink import shrink
    from properties.systems import replayer

    v = result.violation
    shrunk = shrink(replayer(plan["system"], config, seed), result.schedule, v, budget_seconds=plan["shrink_seconds"])
    # not reproduced (an eventually failure that a longer settle phase gets past): the original run
    # is the counterexample, unshrunk, and says so (campaign.reproduced)
    kept = shrunk.result if shrunk.reproduced else result
    doc = counterexample.build(kept, system=plan["system"], seed=seed, config=config, **build)
    doc["mutant"] = plan.get("mutant")
    doc["campaign"] = {"signature": sig, "original_events": shrunk.original_events,
                       "shrunk_events": len(shrunk.schedule), "shrink_replays": shrunk.replays,
                       "shrink_seconds": shrunk.seconds, "locally_minimal": shrunk.complete,
                       "reproduced": shrunk.reproduced, "original_message": v.message}
    doc["timeline"] = timeline(plan["system"], config, kept.schedule, seed)
    return doc


def run_directed(plan: dict) -> dict:
    """Replay the directed schedules (:mod:`properties.campaign.directed`) on the plan's system and
    under its mutant, each in its own world (with the plan's ``--wire``), with a settle phase and the
    eventually properties when the plan has them: their coverage, one outcome per schedule (its
    cell, events, and the property it failed or None), and the failures, shrunk and clustered as
    :func:`run_range` does (each counterexample says which directed schedule it came from)."""
    import attrs

    from properties.campaign import counterexample, directed
    from properties.coverage import Coverage
    from properties.explore.shrink import signature

    began = time.perf_counter()
    coverage = Coverage()
    wire = counterexample.config_from_dict(plan["config"]).wire
    outcomes, failures = [], {}
    with _mutant(plan.get("mutant")):
        for i, d in enumerate(directed.load()):
            config = attrs.evolve(d.config, wire=wire)
            coverage.start_run(i)
            result = directed.replay(plan["system"], d, config, plan["eventually"], coverage.on_step)
            coverage.end_run(result)
            v = result.violation
            outcomes.append({"cell": d.cell, "events": result.steps, "property": v.property if v else None})
            if v is None:
                continue
            sig = signature(v)
            entry = failures.get(sig)
            if entry is None:
                doc = _counterexample(plan, config, 0, result, sig, steps=len(d.schedule), faults="all")
                doc["directed"] = {"cell": d.cell, "why": d.why}
                entry = failures[sig] = {"property": v.property, "count": 0, "seeds": [], "counterexample": doc}
            entry["count"] += 1
    return {"schedules": len(outcomes), "coverage": coverage.to_dict(), "outcomes": outcomes, "failures": failures,
            "seconds": round(time.perf_counter() - began, 3)}


def world_at(plan: dict, config, seed: int):
    """The world interleaving *seed* runs in: the plan's fixed one, or its swarm draw."""
    from properties.explore.swarm import SwarmWorld, draw

    if plan.get("world") == "swarm":
        return draw(seed, config, plan.get("pinned") or {})
    return SwarmWorld(config, plan["steps"], plan["faults"], plan["max_faults"], plan.get("quiet_rate"), ())


# --------------------------------------------------------------------------------------------------
# driver side: merging
# --------------------------------------------------------------------------------------------------

class Totals:
    """The driver's running merge of task results; independent of the order tasks finish in.

    Its size does not depend on the campaign's: it keeps counts and histograms (events per
    interleaving, final generations: one entry per distinct value), the coverage counts, and per
    failure signature a count, the first few seeds and the smallest counterexample. The rows
    themselves (one per interleaving) go to *rows_path* (``interleavings.jsonl.gz``) as each task
    arrives, in the order tasks finish, each task's rows in seed order; ``rows_digest`` sums a hash
    of every row, so two runs over the same seeds can be compared without keeping the rows."""

    def __init__(self, rows_path=None):
        from properties.coverage import empty

        self.coverage = empty()
        self.failures: dict = {}
        self.interleavings = 0
        self.events = 0  # events applied, all interleavings
        self.failed = 0  # failing interleavings
        self.by_property: dict = {}  # property -> failing interleavings
        self.event_counts: dict = {}  # events in an interleaving -> interleavings
        self.generations: dict = {}  # final generation -> interleavings
        self.regimes: dict = {}  # swarm worlds: dimension -> bucket -> [interleavings, failing ones]
        self.rows_digest = 0
        self.task_seconds = 0.0  # wall time inside the tasks, summed
        self.task_cpu_seconds = 0.0  # CPU time of the tasks' processes, summed
        self.tasks = 0
        self.rows_path = rows_path
        self.offers: list = []  # guided search: this round's interleavings that saw unseen features
        self.corpus: dict | None = None  # guided search: the corpus's size after the last round
        self.directed: dict | None = None  # the directed schedules' part (run_directed), once they ran
        self.kip848: dict | None = None  # the KIP-848 worlds' merged parts (properties/kip848/campaign.py)
        self.kip848_directed: dict | None = None  # the directed KIP-848 schedules' part, once they ran
        self._rows = None  # opened at the first row (or at close: a report of no interleaving has the file too)

    def _open(self):
        import gzip

        if self._rows is None and self.rows_path is not None:
            self._rows = gzip.open(self.rows_path, "wt", encoding="utf-8", compresslevel=5)
        return self._rows

    def add(self, part: dict) -> None:
        from properties.coverage import merge

        self._open()
        for r in part["rows"]:
            line = json.dumps(dict(zip(ROW_FIELDS, r)), separators=(",", ":"))
            self.rows_digest = (self.rows_digest + _row_hash(line)) % _DIGEST_MODULUS
            if self._rows is not None:
                self._rows.write(line + "\n")
            self.interleavings += 1
            self.events += r[1]
            self.event_counts[r[1]] = self.event_counts.get(r[1], 0) + 1
            self.generations[r[2]] = self.generations.get(r[2], 0) + 1
            if r[3] is not None:
                self.failed += 1
                self.by_property[r[3]] = self.by_property.get(r[3], 0) + 1
            if len(r) > 6 and r[6]:
                for item in r[6].split():
                    dimension, _, bucket = item.partition("=")
                    cell = self.regimes.setdefault(dimension, {}).setdefault(bucket, [0, 0])
                    cell[0] += 1
                    cell[1] += r[3] is not None
        if self._rows is not None:
            self._rows.flush()  # a finished task's rows are on disk (readable even if the driver is killed)
        self.coverage = merge(self.coverage, part["coverage"])
        self.offers.extend(part.get("guided", ()))
        self.task_seconds += part["seconds"]
        self.task_cpu_seconds += part.get("cpu_seconds", 0.0)
        self.tasks += 1
        self._merge_failures(part["failures"])
        if "kip848" in part:
            from properties.kip848 import campaign as kip848

            self.kip848 = kip848.merge(self.kip848, part["kip848"])

    def _merge_failures(self, failures: dict) -> None:
        """A part's failure clusters into the campaign's: counts add up, the first seeds and the
        smallest counterexample are kept."""
        for sig, entry in failures.items():
            mine = self.failures.get(sig)
            if mine is None:
                self.failures[sig] = {**entry, "seeds": list(entry["seeds"])}
                continue
            mine["count"] += entry["count"]
            mine["seeds"] = sorted(mine["seeds"] + entry["seeds"])[:EXAMPLE_SEEDS]
            if _smaller(entry["counterexample"], mine["counterexample"]):
                mine["counterexample"] = entry["counterexample"]

    def add_directed(self, part: dict) -> None:
        """The directed schedules' part (:func:`run_directed`): their coverage and outcomes are kept
        apart from the interleavings'; a failing one joins the counterexample clusters."""
        self.directed = {k: part[k] for k in ("schedules", "coverage", "outcomes", "seconds")}
        self._merge_failures(part["failures"])

    def close(self, create: bool = True) -> None:
        """Finish the rows file (idempotent); with *create*, make it even when no row came."""
        if create:
            self._open()
        if self._rows is not None:
            self._rows.close()
            self._rows = None
        self.rows_path = None  # closed for good

    @property
    def done(self) -> int:
        return self.interleavings

    def counts(self) -> dict:
        """Everything a run over the same seeds must reproduce (for comparisons)."""
        return {"interleavings": self.interleavings, "events": self.events, "failed": self.failed,
                "by_property": dict(sorted(self.by_property.items())),
                "event_counts": dict(sorted(self.event_counts.items())),
                "generations": dict(sorted(self.generations.items())), "rows_digest": self.rows_digest,
                "regimes": {d: dict(sorted(b.items())) for d, b in sorted(self.regimes.items())},
                "coverage": self.coverage,
                "failures": {sig: {"count": e["count"], "seeds": e["seeds"]} for sig, e in sorted(self.failures.items())},
                "kip848": None if self.kip848 is None else {
                    "walks": self.kip848["walks"], "events": self.kip848["events"], "coverage": self.kip848["coverage"],
                    "failures": {p: {"count": e["count"], "seeds": e["seeds"]} for p, e in sorted(self.kip848["failures"].items())}}}


_DIGEST_MODULUS = 1 << 128


def _row_hash(line: str) -> int:
    import hashlib

    return int.from_bytes(hashlib.blake2b(line.encode(), digest_size=16).digest(), "big")


def _smaller(a: dict, b: dict) -> bool:
    return (len(a["schedule"]), a["seed"]) < (len(b["schedule"]), b["seed"])


def choose_task_size(args, cores: int) -> int:
    """Seeds per task: ``--task-size``, else a few seconds of work, but small enough that every core
    gets several tasks (progress moves, and a straggler does not hold up the end)."""
    if args.task_size:
        return args.task_size
    default = DEFAULT_TASK_SIZE[(args.system, args.eventually)]
    if getattr(args, "quiet_rate", None) == 0:
        default *= 3  # no quiet bursts: interleavings are ~5x shorter
    size = max(1, min(default, -(-args.interleavings // (8 * max(1, cores)))))
    if getattr(args, "search", None) == "guided":
        from properties.explore.guided import ROUND

        size = min(size, max(1, ROUND // (4 * max(1, cores))))  # a round is split over every core
    return size


def run_search(run_tasks, plan: dict, seed_start: int, interleavings: int, task_size: int,
               totals: Totals) -> Outcome:
    """Run the campaign's interleavings with ``run_tasks(plan, ranges)`` (:func:`run_local` or
    :func:`run_spark` bound to the rest of their arguments); returns the engine's outcome.

    A plain search is one pass over the seeds. A guided search (:mod:`properties.explore.guided`)
    runs round after round: every round's tasks get the corpus as it stood when the round began
    (in the plan), and send back which interleavings reached features it had not seen; the driver
    offers them to the corpus in interleaving order once the whole round is in, so the corpus (and
    every later round) does not depend on the order tasks finish in."""
    if plan.get("search") != "guided":
        return run_tasks(plan, task_ranges(seed_start, interleavings, task_size))
    from properties.explore.guided import CHILDREN, ROUND, Corpus

    rounds = plan.get("rounds") or {}
    corpus = Corpus(seed_start, rounds.get("size", ROUND), rounds.get("children", CHILDREN))
    stop = seed_start + interleavings
    r = 0
    outcome = Outcome(totals)
    while True:
        a, b = corpus.round_range(r, stop)
        if a >= stop:
            break
        totals.offers = []
        outcome = run_tasks(dict(plan, guided=corpus.to_plan()), task_ranges(a, b - a, task_size))
        if not outcome.partial:
            specs = {offer[0]: corpus.spec(offer[0]) for offer in totals.offers}  # as the round ran them
            for i, features, walked, steps in sorted(totals.offers, key=lambda offer: offer[0]):
                corpus.offer(specs[i], features, walked, steps)
        totals.corpus = {"parents": len(corpus.parents), "features": len(corpus.known), "rounds": r + 1}
        if outcome.partial:
            return outcome
        r += 1
    return outcome


def campaign_parts(plan: dict, start: int, stop: int) -> list:
    """The engine's work for one task: the task's one result (:func:`run_range`)."""
    return [run_range(plan, start, stop)]


def run_local(plan: dict, ranges, progress=None, totals: Totals | None = None,
              interrupts: Interrupts | None = None) -> Outcome:
    """The campaign's tasks in this process, one after the other (tests, the benchmark's baseline,
    ``--local``)."""
    totals = Totals() if totals is None else totals
    return engine.run(ranges, functools.partial(campaign_parts, plan), totals, engine.InProcess(), progress,
                      interrupts)


def run_spark(spark, plan: dict, ranges, progress=None, in_flight: int | None = None, totals: Totals | None = None,
              interrupts: Interrupts | None = None) -> Outcome:
    """The campaign's tasks on *spark*, each a Spark job of its own (:class:`properties.engine.run.Spark`)."""
    totals = Totals() if totals is None else totals
    return engine.run(ranges, functools.partial(campaign_parts, plan), totals,
                      engine.Spark(spark, in_flight), progress, interrupts)


def versions(spark=None) -> dict:
    import platform
    from importlib import metadata

    from properties.campaign.counterexample import tool_version

    out = {"groupcheck": tool_version(), "python": platform.python_version()}
    for dist in ("pyspark", "attrs", "hypothesis", "z3-solver"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    if spark is not None:
        try:
            out["java"] = spark.sparkContext._jvm.System.getProperty("java.version")
        except Exception:
            out["java"] = None
    return out


# --------------------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------------------

def _float(name):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"{name} must be >= 0, got {value}")
        return value

    return parse


def add_arguments(p: argparse.ArgumentParser, script: bool = False) -> None:
    from properties.explore.guided import SEARCHES
    from properties.explore.swarm import WORLDS
    from properties.explore.walker import FAULT_PROFILES

    p.add_argument("--interleavings", type=int_at_least("--interleavings", 1), default=2000, help="seeds to run (default 2000)")
    p.add_argument("--seed-start", type=int_at_least("--seed-start", 0), default=0)
    p.add_argument("--world", default=None, choices=WORLDS,
                   help="swarm (the default for --system impl and model): each interleaving draws its own world "
                        "(clients, brokers, partitions, timeouts, JoinGroup version, assignors, faults, length, quiet "
                        "rate; properties/explore/swarm.py) and the world options given explicitly pin theirs; "
                        "fixed: every interleaving in the one world the options below describe")
    p.add_argument("--search", default=None, choices=SEARCHES,
                   help="plain (the default): interleaving i is seed i; guided (--system impl and model): after "
                        "a first round of 200 interleavings, a quarter of every round is bred from the "
                        "interleavings that reached something no earlier one had (properties/explore/guided.py)")
    p.add_argument("--steps", type=int_at_least("--steps", 1), default=None,
                   help=f"random events per interleaving (fixed world default {DEFAULT_STEPS})")
    p.add_argument("--clients", type=int_at_least("--clients", 1), default=None, help="consumers (fixed world default 3)")
    p.add_argument("--brokers", type=int_at_least("--brokers", 1), default=None, help="brokers (fixed world default 3)")
    p.add_argument("--partitions", type=int_at_least("--partitions", 1), default=None,
                   help="partitions (fixed world default 6)")
    p.add_argument("--faults", default=None,
                   help=f"fault profile: {', '.join(FAULT_PROFILES)} (fixed world default all); with --system "
                        "broker:NAME none (default) or all: each task's broker paused, connections cut mid-request, "
                        "a broker with storage restarted (groupcheck conform broker --faults)")
    p.add_argument("--max-faults", type=int_at_least("--max-faults", 0), default=None,
                   help="disruptions per interleaving (fixed world default 6)")
    p.add_argument("--system", default="impl", help="impl (the implementation beside the model; default), model, or "
                                                     "broker:NAME (broker conformance schedules: groupcheck, tansu, "
                                                     "rdkafka-mock; see groupcheck conform broker), or client:NAME "
                                                     "(real consumers under faults: kafka-python, confluent-kafka, "
                                                     "aiokafka, groupcheck; see groupcheck conform client)")
    p.add_argument("--no-eventually", dest="eventually", action="store_false",
                   help="skip the final settle phase and the eventually properties (~3x faster; always properties only)")
    p.add_argument("--kip848-every", type=int_at_least("--kip848-every", 0), default=None, metavar="K",
                   help="--system impl and model: also walk a KIP-848 world (the consumer group protocol's model) "
                        "for every K-th seed of the range, in the same tasks (default 4; 0: none; none with "
                        "--mutant; properties/kip848/campaign.py)")
    p.add_argument("--no-directed", dest="directed", action="store_false",
                   help="--system impl and model: skip the directed schedules the campaign replays after its "
                        "interleavings (hand-made schedules for error paths random interleavings rarely reach; "
                        "properties/campaign/directed.py)")
    p.add_argument("--quiet-rate", type=_float("--quiet-rate"), default=None, metavar="P",
                   help="chance per drawn event of a burst of quiet time (the walker's default 0.04; 0 = none: "
                        "~5x faster, disruptions then hit groups still forming)")
    p.add_argument("--mutant", default=None, metavar="NAME", help="run against a mutated implementation (groupcheck mutants)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="settings",
                   help="a Kafka setting by its property name, repeatable (see groupcheck run --help)")
    p.add_argument("--wire", action="store_true",
                   help="encode and decode every message on the implementation's simulated links (impl/wire)")
    p.add_argument("--master", default=None if script else "local[*]",
                   help="Spark master (default local[*]" + ("; under spark-submit: the one it was given)" if script else ")"))
    p.add_argument("--out", default=None, metavar="DIR",
                   help="report folder, new or empty (default: reports/<campaign-id>/ in the project checkout groupcheck "
                        "runs from, else in the current directory; reports/latest links to it)")
    p.add_argument("--force", action="store_true",
                   help="--out may hold an earlier report: its files are replaced (nothing else in the folder is touched)")
    p.add_argument("--baseline", default=None, metavar="RESULTS.json", help="an earlier results.json: mark clusters new, known or fixed")
    p.add_argument("--task-size", type=int_at_least("--task-size", 1), default=None, help="seeds per Spark task (default: a few seconds of work)")
    p.add_argument("--shrink-seconds", type=_float("--shrink-seconds"), default=20.0, help="time budget per counterexample (default 20)")
    p.add_argument("--local", action="store_true", help="no Spark: run every task in this process (for comparison)")
    p.add_argument("--json", action="store_true", help="print results.json on stdout")
    p.add_argument("--bootstrap", default=None, metavar="HOST:PORT",
                   help="--system broker:NAME only: judge this running broker instead of launching one per task")
    p.add_argument("--timers", choices=("off", "on"), default="off",
                   help="--system broker:NAME only: schedules with short timeouts and waits (groupcheck conform broker)")
    p.add_argument("--profile", default=None, metavar="FILE.toml|NAME",
                   help="--system broker:NAME only: judge the broker by this profile (read on the driver, sent to "
                        "the tasks)")
    p.add_argument("--crash-once", default=None, help=argparse.SUPPRESS)  # test hook: SEED:MARKER


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``groupcheck campaign`` (called from properties.cli.build_parser)."""
    p = subparsers.add_parser("campaign", help="run a Spark campaign over many seeds and write a report",
                              description="Run many seeded interleavings on Spark, shrink and cluster the "
                                          "counterexamples, and write a report folder.")
    add_arguments(p)
    return p




def search_of(args) -> str:
    """``--search``, with its default: plain. Guided is not the default because, measured on the
    mutants (README, "Guided search"), it found nothing plain did not and found some later: the
    children take budget from fresh seeds. A broker campaign runs fixed schedules: plain only."""
    search = getattr(args, "search", None)
    if search == "guided" and _schedules(args):
        raise RunError("--search guided breeds walks of the simulated world: a broker campaign (--system "
                            f"{args.system}) runs fixed schedules; use --search plain or leave it out")
    if search is None:
        search = args.search = "plain"
    return search


def world_of(args) -> str:
    """``--world``, with its default: swarm (a broker campaign has no simulated world: fixed).
    Arguments built without a ``world`` at all (the campaign benchmark's) mean the fixed world."""
    world = getattr(args, "world", "fixed")
    if world is None:
        return "fixed" if _schedules(args) else "swarm"
    return world


def _schedules(args) -> bool:
    """Whether the campaign runs conformance schedules (a broker or a client library), not the
    simulated world."""
    from properties import targets

    return targets.resolve(args.system).kind != targets.SIMULATED


def fixed(args, name: str):
    """A world option's value, or the fixed world's default when it was not given."""
    value = getattr(args, name, None)
    return FIXED_WORLD[name] if value is None else value


def make_plan(args) -> dict:
    """Validate the arguments (RunError on anything wrong) and build the executors' plan."""
    from model.config import ConfigError
    from properties.campaign.counterexample import config_to_dict
    from properties.explore.swarm import check_pins
    from properties.systems import world_config

    if getattr(args, "quiet_rate", None) is not None and args.quiet_rate > 1:
        raise RunError(f"--quiet-rate must be between 0 and 1, got {args.quiet_rate}")
    world = world_of(args)
    search = search_of(args)
    settings = getattr(args, "settings", ())
    pinned = {name: getattr(args, name, None) for name in FIXED_WORLD}
    pinned.update(quiet_rate=getattr(args, "quiet_rate", None), settings=list(settings))
    try:
        config = world_config(args.system, fixed(args, "faults"), fixed(args, "clients"), fixed(args, "brokers"),
                              fixed(args, "partitions"), settings=() if world == "swarm" else settings,
                              wire=getattr(args, "wire", False))
        if world == "swarm":
            check_pins(pinned)
    except ConfigError as e:
        raise RunError(str(e)) from None
    if args.mutant:
        if args.system != "impl":
            raise RunError("--mutant mutates the implementation: use it with --system impl")
        try:
            from properties.mutation.mutants import ALL
        except ImportError:
            raise RunError("--mutant: this groupcheck has no mutants yet (properties/mutation/mutants.py)") from None
        if args.mutant not in ALL:  # those the random search does not reach too: the directed schedules may
            raise RunError(f"--mutant must be one of {', '.join(sorted(ALL))}, got {args.mutant!r}")
    crash = None
    if args.crash_once:
        seed, _, marker = args.crash_once.partition(":")
        crash = {"seed": int(seed), "marker": marker}
    return {
        "system": args.system,
        "world": world,
        "search": search,
        "pinned": {k: v for k, v in pinned.items() if v not in (None, [])} if world == "swarm" else None,
        "config": config_to_dict(config),
        "steps": fixed(args, "steps"),
        "faults": fixed(args, "faults"),
        "max_faults": fixed(args, "max_faults"),
        "eventually": args.eventually,
        "directed": getattr(args, "directed", True) and args.system in ("impl", "model"),
        "kip848_every": _kip848_every(args),
        "mutant": args.mutant,
        "shrink_seconds": args.shrink_seconds,
        "quiet_rate": getattr(args, "quiet_rate", None),
        "crash_once": crash,
    }


def _kip848_every(args) -> int:
    """Every how many seeds a KIP-848 world is walked (0: none): the default campaigns of the model
    and the implementation walk them; a mutant of impl/ is not KIP-848's, so its campaign does not."""
    from properties.kip848.campaign import DEFAULT_EVERY

    every = getattr(args, "kip848_every", None)
    if args.system not in ("impl", "model") or args.mutant:
        if every:
            raise RunError(f"--kip848-every {every}: KIP-848 worlds are walked beside --system impl or model "
                           "campaigns without --mutant")
        return 0
    return DEFAULT_EVERY if every is None else every


def campaign_id(args, now: datetime) -> str:
    return (f"{now.strftime('%Y%m%d-%H%M%S')}-{args.system}" + (f"-{args.mutant}" if args.mutant else "")
            + f"-s{args.seed_start}-n{args.interleavings}")


# the files a report consists of (counterexamples/ holds <signature>.json files)
REPORT_FILES = ("results.json", "summary.md", "index.html", "interleavings.jsonl.gz", "spark.log")


def default_reports_dir() -> Path:
    """Where reports go without ``--out``: ``reports/`` of the project checkout this groupcheck runs
    from (its pyproject.toml beside the packages), so that neither form of the campaign (nor the
    directory it is started from) scatters reports around; ``./reports`` when groupcheck is not
    run from a checkout (an installed copy)."""
    if (ROOT / "pyproject.toml").is_file() and (ROOT / "properties" / "campaign").is_dir():
        return ROOT / "reports"
    return Path.cwd() / "reports"


def prepare_out(args, cid: str) -> tuple[Path, str, bool]:
    """The report folder, created and checked writable now (not after an hour of work); returns
    (folder, campaign id, default?). An existing ``--out`` must be empty — a report never mixes
    with an earlier one's counterexample files — unless ``--force`` says to replace the earlier
    report in it (see :func:`remove_report`). The default folder is new: a second campaign started
    in the same second gets ``<campaign-id>-2``."""
    default = args.out is None
    if default:
        base = default_reports_dir()
        out, n, first = base / cid, 2, cid
        while out.exists() or out.is_symlink():
            cid = f"{first}-{n}"
            out, n = base / cid, n + 1
    else:
        out = Path(args.out)
        if out.is_dir() and any(out.iterdir()):
            if not getattr(args, "force", False):
                raise RunError(f"--out {out}: the folder is not empty; name a new or empty one, or add --force to "
                                    "replace the report in it")
            remove_report(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".groupcheck-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise RunError(f"cannot write the report to {out}: {e.strerror or e}") from None
    return out, cid, default


def remove_report(out: Path) -> list:
    """Remove an earlier report's files from *out* (``--force``): :data:`REPORT_FILES` and
    ``counterexamples/*.json`` (the folder too when that leaves it empty); nothing else. Refuses
    (RunError) a folder that does not hold a groupcheck report — one whose results.json is a
    campaign's, or the beginning of one that was stopped before it (its rows or spark.log) — so
    that ``--force`` never deletes someone else's index.html. Returns the paths removed."""
    results = out / "results.json"
    if results.exists():
        try:
            ours = _is_campaign_results(json.loads(results.read_text(encoding="utf-8")))
        except (OSError, ValueError, AttributeError):
            ours = False
    else:
        ours = (out / "interleavings.jsonl.gz").exists() or (out / "spark.log").exists()
    if not ours:
        raise RunError(f"--out {out}: --force replaces a groupcheck report, and this folder holds none; "
                            "name a new or empty folder")
    removed = []
    try:
        for name in REPORT_FILES:
            path = out / name
            if path.is_file() or path.is_symlink():
                path.unlink()
                removed.append(path)
        cx = out / "counterexamples"
        if cx.is_dir():
            for path in sorted(cx.glob("*.json")):
                path.unlink()
                removed.append(path)
            if not any(cx.iterdir()):
                cx.rmdir()
                removed.append(cx)
    except OSError as e:
        raise RunError(f"--out {out}: cannot remove the earlier report: {e.strerror or e}") from None
    return removed


def _load_baseline(path):
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise RunError(f"--baseline {path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RunError(f"--baseline {path}: not a readable results.json ({e})") from None
    if not _is_campaign_results(doc) or not isinstance(doc.get("findings", doc.get("clusters")), list):
        raise RunError(f"--baseline {path}: not a groupcheck campaign results.json")
    return doc


def _is_campaign_results(doc) -> bool:
    """A campaign's results.json: this shape's, or the format before the one report shape."""
    return isinstance(doc, dict) and (doc.get("checker") == "campaign" and doc.get("schema") == SCHEMA
                                      or doc.get("format") == FORMAT)


def cmd_campaign(args) -> int:
    """``groupcheck campaign``: validate, run, write the report, return the exit status (a
    RunError is one line on stderr and exit status 2)."""
    try:
        return _campaign(args)
    except RunError as e:
        print(f"groupcheck: error: {e}", file=sys.stderr)
        return 2


def _campaign(args) -> int:
    from properties.campaign import report

    started = datetime.now(timezone.utc)
    plan = make_plan(args)
    baseline = _load_baseline(args.baseline)
    if not args.local:
        check_master(args.master)  # before a report folder is made (spark-submit's master: in start_spark)
    created = args.out is None or not Path(args.out).exists()
    out, cid, default_out = prepare_out(args, campaign_id(args, started))
    progress = Progress(args.interleavings)
    spark = None
    master = "in-process" if args.local else args.master
    executors, cores, task_size = 1, 1, None
    outcome = None
    # SIGINT and SIGTERM: stop, keep what finished, write the report (the engine's one policy)
    with engine.session() as interrupts, contextlib.ExitStack() as stack:
        totals = Totals(out / "interleavings.jsonl.gz")
        stack.callback(totals.close, create=False)
        start = time.perf_counter()
        try:
            try:
                if args.local:
                    task_size = choose_task_size(args, 1)
                    outcome = run_search(
                        lambda p, ranges: run_local(p, ranges, progress, totals=totals, interrupts=interrupts),
                        plan, args.seed_start, args.interleavings, task_size, totals)
                else:
                    spark = stack.enter_context(spark_started(args.master, out / "spark.log", interrupts))
                    sc = spark.sparkContext
                    master, executors, cores = sc.master, executor_count(sc), sc.defaultParallelism
                    task_size = choose_task_size(args, cores)
                    print(f"groupcheck: campaign {cid}: {args.interleavings:,} interleavings of {args.system} in "
                          f"{task_count(args.interleavings, task_size):,} tasks on {master} ({cores} cores)",
                          file=sys.stderr, flush=True)
                    progress.start = start = time.perf_counter()
                    outcome = run_search(
                        lambda p, ranges: run_spark(spark, p, ranges, progress, totals=totals, interrupts=interrupts),
                        plan, args.seed_start, args.interleavings, task_size, totals)
            except KeyboardInterrupt:  # while Spark was starting
                outcome = Outcome(totals, interrupted=True)
            seconds = time.perf_counter() - start  # the interleavings' time (the directed schedules' is their own)
            if plan.get("directed") and not outcome.partial:
                try:
                    totals.add_directed(run_directed(plan))
                    if plan.get("kip848_every"):  # and the KIP-848 ones (properties/kip848/directed.py)
                        from properties.kip848 import directed as kip848_directed

                        totals.kip848_directed = kip848_directed.run(impl=plan["system"] == "impl")
                except KeyboardInterrupt:  # a signal while they ran: the report says they did not
                    outcome.interrupted = True
            outcome.signum = interrupts.signum
            with interrupts.held(release=False):  # the report is written whole, whatever arrives
                totals.close()
                task_size = task_size or choose_task_size(args, cores)
                progress(totals.done, totals.failed, final=True)
                results = report.assemble(
                    campaign_id=cid, started=started, plan=plan, args=args, totals=totals, seconds=seconds,
                    master=master, executors=executors, cores=cores, tasks=task_count(args.interleavings, task_size),
                    task_size=task_size, versions=versions(spark), partial=outcome.partial, baseline=baseline,
                    out=out, stopped_by=outcome.stopped_by, failure=outcome.failure)
                report.write(out, results, totals)
                if default_out:
                    _link_latest(out)
        except RunError:
            if created and out.is_dir() and not any(out.iterdir()):
                out.rmdir()  # Spark did not start: leave no empty report folder behind
            raise
    if outcome.failure is not None:
        raise RunError(f"the Spark job failed: {outcome.failure} (the tasks that finished are in the partial report "
                       f"{out}; details in {out / 'spark.log'})")
    if args.json:
        print(json.dumps(results, indent=1), flush=True)
    else:
        print(report.console_summary(results, out), flush=True)
    outcome.report_end(out, "interleavings")
    return outcome.exit_status(1 if results["verdict"] == "fail" else 0)


def _link_latest(out: Path) -> None:
    latest = out.parent / "latest"
    try:
        if latest.is_symlink() or latest.exists():
            latest.unlink()
        latest.symlink_to(out.name, target_is_directory=True)
    except OSError:
        pass  # a filesystem without symlinks: the campaign folder is still there


def own_stderr() -> None:
    """Under spark-submit, Spark's PythonRunner hands the Python driver one pipe for both stdout and
    stderr and copies it to its own stdout, so progress and error lines would land in ``--json``'s
    output. Send this process's stderr to spark-submit's own stderr instead (its parent's fd 2;
    Linux's /proc), so that stdout carries only the results. Elsewhere: nothing changes."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return
    try:
        out, err = os.fstat(1), os.fstat(2)
    except OSError:
        return
    if (out.st_dev, out.st_ino) != (err.st_dev, err.st_ino):
        return
    try:
        fd = os.open(f"/proc/{os.getppid()}/fd/2", os.O_WRONLY | os.O_APPEND)
    except OSError:
        return
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.close(fd)


def main(argv=None) -> int:
    """spark-submit entry point: the same arguments as ``groupcheck campaign``."""
    class _Parser(argparse.ArgumentParser):
        def error(self, message):
            raise RunError(message)

    own_stderr()
    parser = _Parser(prog="campaign.py", description=__doc__.split("\n\n")[0])
    add_arguments(parser, script=True)
    try:
        args = parser.parse_args(argv)
        return _campaign(args)
    except RunError as e:
        print(f"groupcheck: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        print("groupcheck: interrupted", file=sys.stderr)
        return exit_status(getattr(e, "signum", None))


if __name__ == "__main__":
    # import the module by its package name, so Spark pickles the task functions by reference
    # (executors import them from the shipped project) instead of by value from __main__
    from properties.campaign.spark import main as _main

    sys.exit(_main())
