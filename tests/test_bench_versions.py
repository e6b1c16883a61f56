"""``groupcheck bench --system impl --against DIR`` (properties/bench_versions.py): two checkouts'
differential checks timed on the same schedules, drawn by the other checkout's walker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model.config import Config
from properties.bench import WORLD
from properties.bench_versions import bench_against, checkout
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


def test_a_folder_that_is_not_a_checkout_is_named(tmp_path):
    with pytest.raises(UsageError, match=r"--against .*: not a groupcheck checkout \(no properties/bench.py\)"):
        checkout(str(tmp_path))


@pytest.mark.parametrize("argv, message", [
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
