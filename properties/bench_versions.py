"""Two checkouts of groupcheck side by side on the same schedules (issue 37): the differential
steps per second of each, measured at the same time, each process on a core of its own.

``groupcheck bench --system impl`` replays the walker's own schedules, so its per-step figure moves
whenever the walker changes what a step is: when issue 37's settle phase stopped making idle calls
(the cheapest steps) the figure fell while the interleavings per second doubled. Comparing the
speed of two versions needs one set of schedules both run. ``groupcheck bench --system impl
--against DIR`` draws it with the walker of the checkout DIR (the older one, as a rule: a newer
checkout replays an older one's events, not the other way round), in the bench's world
(:data:`properties.bench.WORLD`), then runs each checkout's own differential check
(``properties.bench._differential_pass``: both worlds stepped, observations compared, both sides'
always properties checked) over all of them, both processes at once, pinned to two cores that are
swapped every round, so both see the same machine. Each side also reports how many schedules its
implementation diverged on (none, when the two checkouts agree on what they replay).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from properties.bench import STEPS, WORLD
from properties.engine.errors import RunError
from properties.errors import UsageError

#: Draws the schedules with one checkout's walker (argv: checkout, world as JSON, how many, random events each).
_DRAW = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from model.config import Config
from properties.explore.walker import walk
config = Config(**json.loads(sys.argv[2]))
json.dump([[list(e) for e in walk(seed, config, steps=int(sys.argv[4])).schedule] for seed in range(int(sys.argv[3]))], sys.stdout)
"""

#: How both timing children begin (argv: checkout, world as JSON, schedules file, warm-up
#: schedules): the checkout's own modules, its world, the schedules as its events.
_LOAD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from model.config import Config
try:
    from model.events import as_event
except ImportError:  # a checkout from before typed events steps plain tuples
    as_event = tuple
config = Config(**json.loads(sys.argv[2]))
with open(sys.argv[3]) as f:
    runs = [(seed, [as_event(tuple(e)) for e in schedule], None) for seed, schedule in enumerate(json.load(f))]
"""

#: Times one checkout's differential check over the schedules: one JSON line, {"steps",
#: "diverged", "seconds"}.
_TIME = _LOAD + r"""
from properties.bench import _differential_pass
_differential_pass(config, runs[:int(sys.argv[4])])  # imports, caches
start = time.perf_counter()
result = _differential_pass(config, runs)
print(json.dumps({"steps": result[0], "diverged": result[1], "seconds": time.perf_counter() - start}))
"""

#: Times one checkout's differential check event by event, by the event's kind: the checkout's
#: own ``_differential_pass``, each event timed from its call of the model's ``step`` (the loop's
#: first) to the return of the catalogue's ``Checker.check`` (its last), so every part of a step
#: is in its event's time. One JSON line, {kind: [events, seconds]}.
_BY_KIND = _LOAD + r"""
import properties.bench as bench
from properties.catalogue import Checker
clock, spent, count, started = time.perf_counter, {}, {}, [0.0, None]
model_step, catalogue_check = bench.step, Checker.check

def step(world, event, *args, **kwargs):
    started[0], started[1] = clock(), event[0]  # the kind: an event's first field, typed or not
    return model_step(world, event, *args, **kwargs)

def check(self, prev, world, event, log):
    violation = catalogue_check(self, prev, world, event, log)
    kind = started[1]
    spent[kind] = spent.get(kind, 0.0) + clock() - started[0]
    count[kind] = count.get(kind, 0) + 1
    return violation

bench.step, Checker.check = step, check
bench._differential_pass(config, runs[:int(sys.argv[4])])  # imports, caches
spent.clear(), count.clear()
bench._differential_pass(config, runs)
print(json.dumps({kind: [count[kind], spent[kind]] for kind in count}))
"""

_HERE = Path(__file__).resolve().parent.parent  # this checkout


def checkout(path: str) -> Path:
    """*path* as a groupcheck checkout whose differential check can be timed; UsageError naming
    ``--against`` when it is not one."""
    root = Path(path).expanduser().resolve()
    for needed in ("properties/bench.py", "properties/explore/walker.py", "model/config.py"):
        if not (root / needed).is_file():
            raise UsageError(f"--against {path}: not a groupcheck checkout (no {needed})")
    return root


def _child(code: str, root: Path, *args: str, core: int | None = None) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(root))  # the checkout's own modules, before any installed one
    pin = (lambda: os.sched_setaffinity(0, {core})) if core is not None else None
    return subprocess.Popen([sys.executable, "-c", code, str(root), *args], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=pin)


def _result(process: subprocess.Popen, root: Path, what: str) -> str:
    out, err = process.communicate()
    if process.returncode != 0:
        last = (err.strip().splitlines() or ["no message"])[-1]
        raise RunError(f"{what} in {root} failed (exit {process.returncode}): {last}")
    return out


def bench_against(other: str, walks: int = 300, rounds: int = 2, progress=None, by_kind: bool = False) -> dict:
    """This checkout's differential steps per second against checkout *other*'s, on *walks*
    schedules drawn by *other*'s walker, *rounds* times (see the module docstring). With
    *by_kind*, one more pass of each (at once, as the first round) times every event and sums
    the times by the event's kind: which kinds of event keep the ratio where it is
    (:func:`kind_table`)."""
    if walks < 1 or rounds < 1:
        raise UsageError(f"--walks and --rounds must be at least 1, got {walks} and {rounds}")
    root = checkout(other)
    world = json.dumps(WORLD)
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    with tempfile.TemporaryDirectory(prefix="groupcheck-bench-") as tmp:
        path = Path(tmp) / "schedules.json"
        path.write_text(_result(_child(_DRAW, root, world, str(walks), str(STEPS)), root, "drawing the schedules"))
        events = sum(map(len, json.loads(path.read_text())))
        if progress:
            progress(f"{walks} schedules, {events:,} events, drawn by the walker of {root}")
        warm = str(min(20, walks))
        measured = []
        for r in range(rounds):
            if len(cores) >= 2:  # at once, each on a core of its own, swapped every round
                mine, theirs = (cores[0], cores[1]) if r % 2 == 0 else (cores[1], cores[0])
                here = _child(_TIME, _HERE, world, str(path), warm, core=mine)
                there = _child(_TIME, root, world, str(path), warm, core=theirs)
                a, b = json.loads(_result(here, _HERE, "timing")), json.loads(_result(there, root, "timing"))
            else:  # one core: one after the other
                a = json.loads(_result(_child(_TIME, _HERE, world, str(path), warm), _HERE, "timing"))
                b = json.loads(_result(_child(_TIME, root, world, str(path), warm), root, "timing"))
            row = {"steps_per_second": round(a["steps"] / a["seconds"], 1),
                   "against_steps_per_second": round(b["steps"] / b["seconds"], 1),
                   "steps": a["steps"], "against_steps": b["steps"],
                   "diverged": a["diverged"], "against_diverged": b["diverged"]}
            row["ratio"] = round(row["steps_per_second"] / row["against_steps_per_second"], 3)
            measured.append(row)
            if progress:
                progress(f"round {r + 1}: {row['steps_per_second']:,.0f} against {row['against_steps_per_second']:,.0f} "
                         f"steps/s, {row['ratio']:.2f}x")
        kinds = _by_kind(root, world, path, warm, cores) if by_kind else None
    result = {"system": "impl", **WORLD, "walks": walks, "events": events, "against": str(root),
              "here": str(_HERE), "at_once": len(cores) >= 2, "rounds": measured}
    if kinds is not None:
        result["by_kind"] = kinds
    return result


def _by_kind(root: Path, world: str, path: Path, warm: str, cores: list) -> list:
    """Both checkouts' time per event kind over the schedules in *path*, one pass each (at once on
    two cores when there are two): rows of {kind, events, us_per_event, against_us_per_event,
    ratio, share}, the largest share of this checkout's time first, then an ``all`` row."""
    need = "timing by kind (it needs properties.bench.step and properties.catalogue.Checker)"
    if len(cores) >= 2:  # at once, as the first round
        here = _child(_BY_KIND, _HERE, world, str(path), warm, core=cores[0])
        there = _child(_BY_KIND, root, world, str(path), warm, core=cores[1])
        mine, theirs = json.loads(_result(here, _HERE, need)), json.loads(_result(there, root, need))
    else:
        mine = json.loads(_result(_child(_BY_KIND, _HERE, world, str(path), warm), _HERE, need))
        theirs = json.loads(_result(_child(_BY_KIND, root, world, str(path), warm), root, need))
    return kind_table(mine, theirs)


def kind_table(mine: dict, theirs: dict) -> list:
    """Rows comparing {kind: [events, seconds]} of this checkout (*mine*) with the other's: the
    microseconds an event of each kind took on each side, their ratio (theirs over mine: above 1,
    this checkout is faster) and the kind's share of this checkout's time; the kinds with the
    largest share first, then ``all``. A kind only one side stepped has no ratio."""
    total = sum(seconds for _, seconds in mine.values()) or 1.0

    def row(kind, a, b):
        here = 1e6 * a[1] / a[0] if a and a[0] else None
        there = 1e6 * b[1] / b[0] if b and b[0] else None
        return {"kind": kind, "events": a[0] if a else 0, "against_events": b[0] if b else 0,
                "us_per_event": None if here is None else round(here, 2),
                "against_us_per_event": None if there is None else round(there, 2),
                "ratio": round(there / here, 3) if here and there else None,
                "share": round((a[1] if a else 0.0) / total, 4)}

    rows = [row(kind, mine.get(kind), theirs.get(kind)) for kind in sorted(set(mine) | set(theirs))]
    rows.sort(key=lambda r: (-r["share"], r["kind"]))
    both = [sum(v[i] for v in side.values()) for side in (mine, theirs) for i in (0, 1)]
    rows.append(row("all", both[:2], both[2:]))
    return rows
