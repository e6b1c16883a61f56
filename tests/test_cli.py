"""The groupcheck command line: outputs, exit codes and one-line usage errors."""

import json

import pytest

from properties.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_properties_json_lists_the_catalogue(capsys):
    code, out, _ = run(capsys, "properties", "--json")
    assert code == 0
    props = json.loads(out)
    assert len(props) >= 15
    assert all(set(p) == {"name", "kind", "statement", "source"} for p in props)
    kinds = {p["kind"] for p in props}
    assert kinds == {"always", "eventually", "sometimes"}
    assert len({p["name"] for p in props}) == len(props)
    always = [p for p in props if p["kind"] == "always"]
    assert len(always) >= 15
    assert all(len(p["statement"]) > 60 for p in always)


def test_run_json_has_the_documented_fields(capsys):
    code, out, _ = run(capsys, "run", "--system", "model", "--seed", "3", "--json")
    assert code == 0
    result = json.loads(out)
    assert set(result) == {"seed", "system", "steps", "verdict", "property", "step", "trace_hash", "replay"}
    assert result["verdict"] == "ok" and result["property"] is None and result["step"] is None
    assert result["seed"] == 3 and result["system"] == "model" and result["steps"] > 0
    assert result["replay"].startswith("groupcheck run --system model --seed 3 ")


def test_run_counterexample_exits_1_and_names_the_property(capsys):
    code, out, _ = run(capsys, "run", "--seed", "0", "--broken", "generation_not_bumped", "--json")
    assert code == 1
    result = json.loads(out)
    assert result["verdict"] == "counterexample"
    assert result["property"] == "generation-advances-by-one"
    assert isinstance(result["step"], int) and result["step"] == result["steps"] - 1
    assert "--broken generation_not_bumped" in result["replay"]


def test_replay_command_reproduces_the_run(capsys):
    _, out, _ = run(capsys, "run", "--seed", "5", "--steps", "30", "--clients", "2", "--json")
    first = json.loads(out)
    argv = first["replay"].split()[1:] + ["--json"]
    _, out, _ = run(capsys, *argv)
    assert json.loads(out)["trace_hash"] == first["trace_hash"]


def test_run_human_output_reports_the_failure(capsys):
    code, out, _ = run(capsys, "run", "--seed", "0", "--broken", "double_join")
    assert code == 1
    assert "one-join-or-sync-in-flight" in out and "replay: groupcheck run" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["run"], "--seed"),
        (["run", "--seed", "x"], "--seed must be an integer, got 'x'"),
        (["run", "--seed", "-1"], "--seed must be >= 0, got -1"),
        (["run", "--seed", "1", "--faults", "chaos"], "--faults must be one of none, network, all, got 'chaos'"),
        (["run", "--seed", "1", "--system", "kafka"], "--system must be one of model, got 'kafka'"),
        (["run", "--seed", "1", "--clients", "0"], "--clients must be >= 1, got 0"),
        (["run", "--seed", "1", "--broken", "nope"], "unknown variants ['nope']"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["bench", "--seconds", "0"], "--seconds must be positive, got 0.0"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err
    assert err.count("\n") == 1 and err.startswith("groupcheck: error: ")
    assert "Traceback" not in err


def test_walk_json_summary(capsys):
    code, out, _ = run(capsys, "walk", "--seeds", "5", "--seed-start", "10", "--json")
    assert code == 0
    summary = json.loads(out)
    assert summary["interleavings"] == 5 and summary["seed_start"] == 10
    assert summary["violations"] == {} and summary["events"] > 0
    assert summary["coverage"]["group-state-Stable"] > 0  # fault-free or not, groups stabilise
    assert set(summary["coverage"]) >= {"leader-change", "unsent-expired", "member-id-required"}


def test_walk_reports_failing_seeds(capsys):
    code, out, _ = run(capsys, "walk", "--seeds", "3", "--broken", "stable_skips_completing", "--json")
    assert code == 1
    assert json.loads(out)["violations"]["legal-group-transitions"]["count"] == 3


def test_bench_prints_its_figure(capsys):
    code, out, _ = run(capsys, "bench", "--system", "model", "--seconds", "0.5", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["steps_per_second"] > 0 and result["clients"] == 3 and result["brokers"] == 3
