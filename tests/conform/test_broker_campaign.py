"""``groupcheck campaign --system broker:NAME``: broker schedules as a Spark job, each task with a
broker of its own; the same report, clusters by signature, and --baseline new/known/fixed."""

import json

import pytest

from properties.cli import main


def _campaign(capsys, *args):
    code = main(["campaign", *args, "--json"])
    out = capsys.readouterr()
    summary = json.loads(out.out) if out.out.strip() else None
    if summary is not None:
        summary["divergences"] = [f for f in summary["findings"] if f["status"] != "fixed"]
        summary["fixed"] = [f["signature"] for f in summary["findings"] if f["status"] == "fixed"]
    return code, summary, out.err


def test_on_spark_every_task_launches_its_own_broker_and_the_results_merge(capsys, tmp_path):
    pytest.importorskip("pyspark")
    code, summary, err = _campaign(capsys, "--system", "broker:groupcheck", "--interleavings", "6", "--task-size", "3",
                                   "--master", "local[2]", "--out", str(tmp_path / "r"))
    assert code == 0, err
    assert summary["schedules"] == 6 and summary["conforming"] == 6 and summary["settings"]["master"].startswith("local[2")
    assert (tmp_path / "r" / "report.md").exists()


def test_baseline_marks_divergences_new_or_known_and_lists_the_fixed(capsys, tmp_path):
    broken = ["--system", "broker:groupcheck", "--mutant", "generation_not_bumped", "--interleavings", "2", "--local"]
    code, first, _ = _campaign(capsys, *broken, "--out", str(tmp_path / "a"))
    assert code == 1 and first["divergences"]
    assert first["divergences"][0]["first_seeds"] == [0, 1]
    code, again, _ = _campaign(capsys, *broken, "--out", str(tmp_path / "b"), "--baseline", str(tmp_path / "a" / "report.json"))
    assert code == 1 and {d["status"] for d in again["divergences"]} == {"known"}
    page = (tmp_path / "b" / "index.html").read_text()
    assert "FAIL" in page and "[known]" in page and "groupcheck replay" in page
    assert "[known]" in (tmp_path / "b" / "report.md").read_text()
    code, fixed, _ = _campaign(capsys, "--system", "broker:groupcheck", "--interleavings", "2", "--local",
                               "--out", str(tmp_path / "c"), "--baseline", str(tmp_path / "a" / "report.json"))
    assert code == 0 and fixed["fixed"] == sorted(d["signature"] for d in first["divergences"])
    for name in ("index.html", "report.md"):  # the fixed ones are in the reports people read, not only the JSON
        assert "Fixed since the baseline" in (tmp_path / "c" / name).read_text()
    assert "PASS" in (tmp_path / "c" / "index.html").read_text()


@pytest.mark.parametrize("args, message", [
    (["--system", "broker:kafka"], "--system broker:kafka: not a system groupcheck knows"),
    (["--system", "broker:tansu", "--mutant", "generation_not_bumped"], "--mutant generation_not_bumped: broker:tansu takes no mutant"),
    (["--system", "impl", "--bootstrap", "127.0.0.1:9092"], "--bootstrap, --timers and --profile are for --system broker:NAME"),
    (["--system", "impl", "--profile", "kafka:4.1"], "--bootstrap, --timers and --profile are for --system broker:NAME"),
    (["--system", "broker:groupcheck", "--faults", "network"], "--faults network with --system broker:groupcheck: broker "
                                                               "schedules take none (the default) or all"),
    (["--system", "broker:groupcheck", "--faults", "all", "--bootstrap", "127.0.0.1:9"], "--faults pauses and restarts"),
    (["--system", "broker:groupcheck", "--profile", "/nonexistent.toml"], "--profile /nonexistent.toml: cannot be read"),
    (["--system", "broker:groupcheck", "--baseline", "/nonexistent.json"], "--baseline /nonexistent.json"),
])
def test_bad_arguments_are_one_line_and_exit_2(capsys, tmp_path, args, message):
    code = main(["campaign", *args, "--interleavings", "1", "--local", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err


def test_faults_and_a_profile_file_reach_every_task(capsys, tmp_path):
    """``--faults all --profile FILE.toml`` on a broker campaign: the driver reads the profile and
    sends it to the tasks, which judge by it — a profile saying the broker numbers generations
    from 1 more than Kafka (a generation offset of 1) makes groupcheck's own broker, which numbers
    them as Kafka does, diverge in every task — and the tasks draw fault steps."""
    profile = tmp_path / "offset.toml"
    profile.write_text('name = "numbered-from-two"\n[generation]\noffset = 1\n')
    code, summary, err = _campaign(capsys, "--system", "broker:groupcheck", "--interleavings", "4", "--task-size", "2",
                                   "--local", "--faults", "all", "--profile", str(profile), "--shrink-seconds", "0",
                                   "--out", str(tmp_path / "r"))
    assert summary is not None, err
    assert code == 1 and summary["settings"]["profile"] == "numbered-from-two", summary["settings"]
    assert summary["settings"]["faults"] is True
    assert any("faults (--faults)" in line for line in summary["checked"]["what"])
    assert any("generation_id" in d["signature"] for d in summary["divergences"]), summary["divergences"]
