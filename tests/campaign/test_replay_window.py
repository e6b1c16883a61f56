"""``groupcheck replay`` of a long counterexample prints a window, not the whole schedule; the shrink
benchmark command; ``groupcheck properties`` lists the differential property (issue 11)."""

from __future__ import annotations

import json

import pytest

from model.config import Config
from properties import cli
from properties.campaign import counterexample
from properties.campaign.replay import WINDOW_BEFORE
from properties.systems import run


def _write(tmp_path, variant: str, seed: int, steps: int, name: str = "cx.json"):
    config = Config(clients=3, brokers=3, partitions=6, broken=frozenset({variant}))
    result = run("model", seed, config, steps=steps, eventually=False)
    assert result.violation is not None
    path = tmp_path / name
    counterexample.write(path, counterexample.build(result, system="model", seed=seed, config=config, steps=steps,
                                                    faults="all"))
    return path, result


@pytest.fixture(scope="module")
def long_file(tmp_path_factory):
    """disconnect_keeps_unsent fails seed 1 of the model after 18,137 events."""
    return _write(tmp_path_factory.mktemp("long"), "disconnect_keeps_unsent", 1, 1_000_000)


def test_replay_prints_a_window_around_the_failing_step(long_file, capsys):
    path, result = long_file
    status = cli.main(["replay", str(path)])
    out = capsys.readouterr().out
    assert status == 1
    assert len(out.splitlines()) < WINDOW_BEFORE + 40  # the whole table would be 18,137 rows
    assert f"{result.step - WINDOW_BEFORE:,} earlier events not shown" in out
    assert "--last N" in out
    table = [line.split()[0] for line in out.splitlines() if line.split() and line.split()[0].isdigit()]
    assert table[0] == str(result.step - WINDOW_BEFORE) and table[-1] == str(result.step)
    assert "reproduced exactly" in out


def test_replay_last_n(long_file, capsys):
    path, result = long_file
    assert cli.main(["replay", str(path), "--last", "5"]) == 1
    out = capsys.readouterr().out
    table = [line.split()[0] for line in out.splitlines() if line.split() and line.split()[0].isdigit()]
    assert table == [str(i) for i in range(result.step - 4, result.step + 1)]


def test_replay_json_is_bounded_the_same_way(long_file, capsys):
    path, result = long_file
    assert cli.main(["replay", str(path), "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["events"] == result.steps and summary["reproduced"]
    assert len(summary["steps"]) == WINDOW_BEFORE + 1
    assert summary["first_shown"] == summary["steps"][0]["step"] == result.step - WINDOW_BEFORE
    assert summary["steps"][-1]["step"] == result.step
    assert cli.main(["replay", str(path), "--json", "--last", "100000"]) == 1
    assert len(json.loads(capsys.readouterr().out)["steps"]) == result.steps  # all of it, when asked


def test_replay_last_must_be_positive(long_file, capsys):
    path, _ = long_file
    assert cli.main(["replay", str(path), "--last", "0"]) == 2
    err = capsys.readouterr().err
    assert "--last must be >= 1" in err and len(err.strip().splitlines()) == 1


def test_properties_lists_the_differential_property(capsys):
    from properties.systems.differential import AGREEMENT

    assert cli.main(["properties"]) == 0
    text = capsys.readouterr().out
    assert "impl-matches-model  [always]  (system impl only)" in text and AGREEMENT.statement in text
    assert cli.main(["properties", "--json"]) == 0
    listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)}
    assert listed["impl-matches-model"] == AGREEMENT.as_dict()


def test_bench_shrink_of_a_file(tmp_path, capsys):
    path, result = _write(tmp_path, "commit_skips_fencing", 14, 40)
    assert cli.main(["bench", "--shrink", str(path), "--shrink-seconds", "60", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["events_before"] == result.steps and figures["events_after"] < result.steps
    assert figures["kept_signature"] and figures["reproduced"] and figures["replays"] >= 2
    assert figures["phases"][0]["phase"] == "replay"


def test_bench_shrink_of_a_bad_file_is_one_line(tmp_path, capsys):
    assert cli.main(["bench", "--shrink", str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
