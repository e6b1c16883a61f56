"""``groupcheck bench --system impl --against DIR`` (properties/bench_versions.py): two checkouts'
differential checks timed on the same schedules, drawn by the other checkout's walker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model.config import Config
from properties.bench import WORLD
from properties.bench_versions import bench_against, checkout, kind_table
from properties.engine.errors import RunError
from properties.cli import main
from properties.errors import UsageError
from properties.explore.walker import walk

ROOT = Path(__file__).resolve().parent.parent


def test_against_itself_both_sides_replay_the_other_walkers_schedules_clean():
    result = bench_against(str(ROOT), walks=2, rounds=1)
    events = sum(len(walk(seed, Config(**WORLD), steps=60).schedule) for seed in range(2))
    assert result["walks"] == 2 and result["events"] == events
    (row,) = result["rounds"]
    assert row["steps"] == row["against_steps"] == events  # every event of every schedule, on both sides
    assert row["diverged"] == row["against_diverged"] == 0
    assert row["steps_per_second"] > 0 and row["against_steps_per_second"] > 0
    assert row["ratio"] == pytest.approx(row["steps_per_second"] / row["against_steps_per_second"], rel=1e-2)


def test_the_schedules_are_the_other_walkers_and_each_side_times_its_own_check(tmp_path):
    """A stand-in checkout whose walker draws seed + 3 ticks and whose differential pass only
    counts: the events measured are its walker's, and this checkout replays every one of them."""
    for package in ("model", "properties", "properties/explore"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "model/config.py").write_text("class Config:\n    def __init__(self, **world):\n        self.world = world\n")
    (tmp_path / "properties/explore/walker.py").write_text(
        "class _Run:\n    def __init__(self, schedule):\n        self.schedule = schedule\n\n"
        "def walk(seed, config, steps):\n    return _Run([('tick', 5, 0)] * (seed + 3))\n")
    (tmp_path / "properties/bench.py").write_text(
        "def _differential_pass(config, runs):\n    return sum(len(s) for _, s, _ in runs), 0, 0\n")
    result = bench_against(str(tmp_path), walks=3, rounds=1)
    assert result["events"] == 3 + 4 + 5
    (row,) = result["rounds"]
    assert row["steps"] == row["against_steps"] == 12 and row["diverged"] == 0
    # timing by kind needs the checkout's model step and catalogue, which this one lacks: said, no traceback
    with pytest.raises(RunError, match=r"timing by kind \(it needs properties.bench.step and properties.catalogue.Checker\)"):
        bench_against(str(tmp_path), walks=3, rounds=1, by_kind=True)


def test_a_folder_that_is_not_a_checkout_is_named(tmp_path):
    with pytest.raises(UsageError, match=r"--against .*: not a groupcheck checkout \(no properties/bench.py\)"):
        checkout(str(tmp_path))


def test_by_kind_times_every_event_of_both_sides_under_its_kind():
    result = bench_against(str(ROOT), walks=2, rounds=1, by_kind=True)
    kinds: dict = {}
    for seed in range(2):
        for event in walk(seed, Config(**WORLD), steps=60).schedule:
            kinds[event[0]] = kinds.get(event[0], 0) + 1
    *rows, everything = result["by_kind"]
    assert {r["kind"]: r["events"] for r in rows} == kinds  # every event, under its own kind
    assert {r["kind"]: r["against_events"] for r in rows} == kinds
    assert everything["kind"] == "all" and everything["events"] == everything["against_events"] == result["events"]
    assert sum(r["share"] for r in rows) == pytest.approx(1.0, abs=1e-3)
    assert [r["share"] for r in rows] == sorted((r["share"] for r in rows), reverse=True)
    for r in rows + [everything]:
        assert r["us_per_event"] > 0 and r["ratio"] == pytest.approx(r["against_us_per_event"] / r["us_per_event"], rel=1e-2)


def test_the_kind_table_orders_by_share_and_gives_no_ratio_to_a_kind_of_one_side():
    mine = {"poll": [4, 0.004], "tick": [2, 0.001], "redeploy": [1, 0.003]}
    theirs = {"poll": [4, 0.008], "tick": [2, 0.001], "idle": [5, 0.002]}
    rows = kind_table(mine, theirs)
    assert [r["kind"] for r in rows] == ["poll", "redeploy", "tick", "idle", "all"]
    poll, redeploy, tick, idle, everything = rows
    assert poll["us_per_event"] == 1000.0 and poll["against_us_per_event"] == 2000.0 and poll["ratio"] == 2.0
    assert poll["share"] == 0.5 and tick["ratio"] == 1.0
    assert redeploy["ratio"] is None and redeploy["against_events"] == 0
    assert idle["ratio"] is None and idle["events"] == 0 and idle["share"] == 0
    assert everything["events"] == 7 and everything["against_events"] == 11
    assert everything["ratio"] == pytest.approx((1e6 * 0.011 / 11) / (1e6 * 0.008 / 7), rel=1e-3)


@pytest.mark.parametrize("argv, message", [
    (["bench", "--by-kind"], "--by-kind compares two checkouts"),
    (["bench", "--system", "impl", "--by-kind"], "--by-kind compares two checkouts"),
    (["bench", "--against", "."], "use it with --system impl"),
    (["bench", "--system", "model", "--against", "."], "not --system model"),
    (["bench", "--system", "impl", "--against", ".", "--seconds", "3"], "--seconds does not go with --against"),
])
def test_against_refuses_what_it_does_not_measure(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_the_json_names_both_checkouts(capsys):
    assert main(["bench", "--system", "impl", "--against", str(ROOT), "--walks", "1", "--rounds", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["against"] == out["here"] == str(ROOT) and len(out["rounds"]) == 1
