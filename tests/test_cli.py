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
    assert set(result) == {"seed", "system", "steps", "verdict", "property", "step", "trace_hash", "replay", "out",
                           "settings", "tool"}
    assert result["settings"]["session.timeout.ms"] == 6000 and result["tool"]["name"] == "groupcheck"
    assert result["verdict"] == "ok" and result["property"] is None and result["step"] is None
    assert result["seed"] == 3 and result["system"] == "model" and result["steps"] > 0
    assert result["replay"].startswith("groupcheck run --seed 3 --system model ")


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
        (["run", "--seed", "1", "--system", "kafka"], "--system must be one of impl, model, got 'kafka'"),
        (["run", "--seed", "1", "--out", "/nonexistent-dir/x.json"], "--out /nonexistent-dir/x.json: folder /nonexistent-dir does not exist"),
        (["run", "--seed", "1", "--clients", "0"], "--clients must be >= 1, got 0"),
        (["run", "--seed", "1", "--broken", "nope"], "unknown variants ['nope']"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["bench", "--system", "model", "--seconds", "0"], "--seconds must be positive, got 0.0"),
        (["bench", "--seconds", "3"], "--seconds measures steps per second with --system"),
        (["bench", "--system", "model", "--million"], "--million belongs to the campaign benchmark"),
        (["run", "--seed", "1", "--steps", "-5"], "--steps must be >= 1, got -5"),
        (["run", "--seed", "1", "--steps", "0"], "--steps must be >= 1, got 0"),
        (["run", "--seed", "1", "--set", "session.timeout=9"], "unknown setting 'session.timeout'"),
        (["run", "--seed", "1", "--set", "session.timeout.ms"], "--set takes name=value, got 'session.timeout.ms'"),
        (["run", "--seed", "1", "--set", "session.timeout.ms=soon"], "session.timeout.ms must be an integer, got 'soon'"),
        (["run", "--seed", "1", "--set", "heartbeat.interval.ms=9000"],
         "heartbeat.interval.ms (9000) must be below session.timeout.ms (6000)"),
        (["run", "--seed", "1", "--set", "partition.assignment.strategy=sticky"], "unknown assignor 'sticky'"),
        (["walk", "--set", "group.max.size=0"], "group.max.size must be a positive integer, got 0"),
        (["run", "--seed", "1", "--out", "/proc/groupcheck-cx.json"], "--out /proc/groupcheck-cx.json: cannot be written"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err
    assert err.count("\n") == 1 and err.startswith("groupcheck: error: ")
    assert "Traceback" not in err


def test_walk_json_summary(capsys):
    code, out, _ = run(capsys, "walk", "--system", "model", "--seeds", "5", "--seed-start", "10", "--json")
    assert code == 0
    summary = json.loads(out)
    assert summary["interleavings"] == 5 and summary["seed_start"] == 10
    assert summary["violations"] == {} and summary["events"] > 0
    assert summary["coverage"]["group-state-Stable"] > 0  # fault-free or not, groups stabilise
    assert set(summary["coverage"]) >= {"leader-change", "unsent-expired", "member-id-required"}


def test_walk_reports_failing_seeds(capsys):
    code, out, _ = run(capsys, "walk", "--system", "model", "--seeds", "3", "--broken", "stable_skips_completing", "--json")
    assert code == 1
    assert json.loads(out)["violations"]["legal-group-transitions"]["count"] == 3


def test_bench_prints_its_figure(capsys):
    code, out, _ = run(capsys, "bench", "--system", "model", "--seconds", "0.5", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["steps_per_second"] > 0 and result["clients"] == 3 and result["brokers"] == 3


def test_run_defaults_to_the_implementation_beside_the_model(capsys):
    code, out, _ = run(capsys, "run", "--seed", "4", "--steps", "40", "--json")
    result = json.loads(out)
    assert code == 0 and result["system"] == "impl" and result["verdict"] == "ok"
    _, out, _ = run(capsys, "run", "--seed", "4", "--steps", "40", "--system", "model", "--json")
    # the model follows the implementation's choices, so an agreeing run has the model's trace
    assert json.loads(out)["trace_hash"] == result["trace_hash"]


def test_counterexample_file_replays_exactly(capsys, tmp_path):
    path = tmp_path / "cx.json"
    code, out, _ = run(capsys, "run", "--seed", "0", "--broken", "double_join", "--out", str(path), "--json")
    assert code == 1
    first = json.loads(out)
    document = json.loads(path.read_text())
    assert document["format"] == "groupcheck-counterexample" and document["version"] == 1
    assert document["property"] == first["property"] == "one-join-or-sync-in-flight"
    assert document["failing_step"] == len(document["schedule"]) - 1
    assert document["config"]["broken"] == ["double_join"] and document["tool"]["name"] == "groupcheck"
    assert document["settings"]["session.timeout.ms"] == 6000 and "commit" in document["tool"]
    assert set(document["state"]) == {"model", "impl"}
    code, out, _ = run(capsys, "replay", str(path), "--json")
    replayed = json.loads(out)
    assert code == 1 and replayed["reproduced"] is True
    assert replayed["trace_hash"] == first["trace_hash"]
    assert len(replayed["steps"]) == len(document["schedule"])
    assert {"time", "event", "members", "group", "responses"} <= set(replayed["steps"][0])
    code, out, _ = run(capsys, "replay", str(path))
    assert "reproduced exactly" in out and "one-join-or-sync-in-flight failed at step" in out


def test_a_passing_run_writes_no_counterexample(capsys, tmp_path):
    path = tmp_path / "cx.json"
    code, out, _ = run(capsys, "run", "--seed", "4", "--steps", "20", "--out", str(path))
    assert code == 0 and not path.exists() and "nothing was written" in out


def test_an_edited_schedule_does_not_reproduce(capsys, tmp_path):
    path = tmp_path / "cx.json"
    run(capsys, "run", "--seed", "0", "--broken", "double_join", "--out", str(path))
    document = json.loads(path.read_text())
    document["schedule"] = document["schedule"][:5]
    path.write_text(json.dumps(document))
    code, out, _ = run(capsys, "replay", str(path), "--json")
    replayed = json.loads(out)
    assert code == 0 and replayed["reproduced"] is False and replayed["property"] is None


@pytest.mark.parametrize(
    "content, needle",
    [
        ("not json at all", "not valid JSON"),
        ('{"format": "something-else"}', "not a groupcheck counterexample file"),
        ('{"format": "groupcheck-counterexample", "version": 99}', "format version 99 is not supported"),
        ('{"format": "groupcheck-counterexample", "version": 1, "system": "impl"}', "field 'seed' is missing"),
    ],
)
def test_corrupt_counterexample_files_get_one_clear_error(capsys, tmp_path, content, needle):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(capsys, "replay", str(path))
    assert code == 2 and needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_counterexample_with_a_bad_config_or_event_is_refused(capsys, tmp_path):
    path = tmp_path / "cx.json"
    run(capsys, "run", "--seed", "0", "--broken", "double_join", "--out", str(path))
    document = json.loads(path.read_text())
    bad = dict(document, config=dict(document["config"], clients=0))
    path.write_text(json.dumps(bad))
    code, _, err = run(capsys, "replay", str(path))
    assert code == 2 and "bad config: clients must be a positive integer, got 0" in err
    bad = dict(document, schedule=document["schedule"][:3] + [["teleport", 0, 1]])
    path.write_text(json.dumps(bad))
    code, _, err = run(capsys, "replay", str(path))
    assert code == 2 and "schedule event 3: unknown event kind 'teleport'" in err


def test_bench_impl_prints_differential_steps_and_where_the_time_goes(capsys):
    code, out, _ = run(capsys, "bench", "--system", "impl", "--seconds", "1", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["system"] == "impl" and result["steps_per_second"] > 0 and result["diverged"] == 0
    per_walk = result["steps_per_second"] / result["steps"] * result["interleavings"]
    assert result["interleavings"] > 0 and abs(result["interleavings_per_second"] - per_walk) <= 0.01 + per_walk / 100
    shares = result["share_impl"] + result["share_model"] + result["share_compare_and_checks"]
    assert 0.99 <= shares <= 1.01 or result["share_compare_and_checks"] == 0


def test_a_counterexample_against_a_mutant_replays_with_the_mutant_applied(capsys, tmp_path):
    from model.config import Config
    from properties.campaign import counterexample
    from properties import systems
    from properties.mutation.mutants import applied

    config = Config()
    with applied("generation_not_bumped"):
        result = systems.run("impl", 0, config, steps=60, faults="none")
    assert result.violation is not None
    document = counterexample.build(result, system="impl", seed=0, config=config, steps=60, faults="none")
    document["mutant"] = "generation_not_bumped"
    path = tmp_path / "mutant.json"
    counterexample.write(path, document)
    code, out, _ = run(capsys, "replay", str(path), "--json")
    replayed = json.loads(out)
    assert code == 1 and replayed["reproduced"] is True and replayed["mutant"] == "generation_not_bumped"
    del document["mutant"]  # without the mutant the implementation agrees with the model
    counterexample.write(path, document)
    code, out, _ = run(capsys, "replay", str(path), "--json")
    assert code == 0 and json.loads(out)["reproduced"] is False
    document["mutant"] = "no_such_mutant"
    counterexample.write(path, document)
    code, _, err = run(capsys, "replay", str(path))
    assert code == 2 and "unknown mutant 'no_such_mutant'" in err


def test_bench_without_a_system_compares_one_process_with_spark(capsys):
    code, out, _ = run(capsys, "bench", "--interleavings", "40", "--no-eventually", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["interleavings"] == 40
    assert result["single_process_rate"] > 0 and result["spark_rate"] > 0
    assert abs(result["ratio"] - result["spark_rate"] / result["single_process_rate"]) < 0.01


def test_every_command_has_the_same_world_defaults():
    """run, walk, campaign and mutants default to the same system and the same number of steps in the
    fixed world; the campaign, the default search, draws a world per interleaving."""
    from properties.cli import build_parser

    parser = build_parser()
    parsed = {name: parser.parse_args(argv) for name, argv in
              {"run": ["run", "--seed", "1"], "walk": ["walk"], "campaign": ["campaign"], "mutants": ["mutants"]}.items()}
    from properties.campaign.spark import fixed, world_of
    from properties.cli import _fixed

    # run, walk and campaign leave --steps None when it is not given (a swarm world draws it); the
    # fixed world's is 60
    assert {name: _fixed(args, "steps") if name in ("run", "walk") else fixed(args, "steps") if name == "campaign"
            else args.steps for name, args in parsed.items()} == dict.fromkeys(parsed, 60)
    assert (parsed["run"].steps, parsed["run"].world, parsed["walk"].world) == (None, "fixed", "fixed")
    assert world_of(parsed["campaign"]) == "swarm"  # the default search draws a world per interleaving
    assert {name: args.system for name, args in parsed.items() if hasattr(args, "system")} == \
        {"run": "impl", "walk": "impl", "campaign": "impl"}


def test_version_names_the_commit(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and out.startswith("groupcheck ")
    from properties.provenance import git_commit

    commit = git_commit()["commit"]
    assert (commit is None and "no git commit" in out) or f"commit {commit[:12]}" in out


def test_set_changes_the_world_and_is_recorded(capsys, tmp_path):
    code, out, _ = run(capsys, "run", "--system", "model", "--seed", "2", "--steps", "30", "--json",
                       "--set", "session.timeout.ms=12000", "--set", "partition.assignment.strategy=roundrobin")
    result = json.loads(out)
    assert result["settings"]["session.timeout.ms"] == 12000
    assert result["settings"]["partition.assignment.strategy"] == "roundrobin"
    assert "--set session.timeout.ms=12000 --set partition.assignment.strategy=roundrobin" in result["replay"]
    _, plain, _ = run(capsys, "run", "--system", "model", "--seed", "2", "--steps", "30", "--json")
    assert json.loads(plain)["trace_hash"] != result["trace_hash"]  # the setting reached the world
    _, again, _ = run(capsys, *result["replay"].split()[1:], "--json")
    assert json.loads(again)["trace_hash"] == result["trace_hash"]


def test_run_out_refuses_an_existing_file_before_any_work(capsys, tmp_path, monkeypatch):
    from properties import systems

    path = tmp_path / "cx.json"
    path.write_text("keep me")
    monkeypatch.setattr(systems, "run", lambda *a, **k: pytest.fail("ran before checking --out"))
    code, _, err = run(capsys, "run", "--seed", "0", "--broken", "double_join", "--system", "model", "--out", str(path))
    assert code == 2 and f"--out {path}: exists (use --force to replace it)" in err
    assert path.read_text() == "keep me"
    monkeypatch.undo()
    code, _, _ = run(capsys, "run", "--seed", "0", "--broken", "double_join", "--system", "model", "--out", str(path),
                     "--force")
    assert code == 1 and json.loads(path.read_text())["format"] == "groupcheck-counterexample"


def test_mutants_progress_has_no_carriage_returns_in_a_log(capsys):
    code, _, err = run(capsys, "mutants", "--only", "generation_not_bumped", "--budget", "200")
    assert code == 0 and "generation_not_bumped: killed by" in err
    assert "\r" not in err  # stderr is not a terminal here: whole lines, as a log wants


def test_the_readmes_run_then_replay_example_works(capsys, tmp_path, monkeypatch):
    """The README's example pair (`run ... --out cx.json`, then `replay cx.json`) must find a
    counterexample and reproduce it: an example that passes is a dead end for a new user."""
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    lines = [line.split("#")[0].strip() for line in readme.splitlines()]
    run_line = next(line for line in lines if line.startswith("groupcheck run --seed") and "--out cx.json" in line)
    replay_line = next(line for line in lines if line.startswith("groupcheck replay cx.json"))
    monkeypatch.chdir(tmp_path)
    code, _, _ = run(capsys, *shlex.split(run_line)[1:])
    assert code == 1 and (tmp_path / "cx.json").exists()
    code, out, _ = run(capsys, *[a for a in shlex.split(replay_line)[1:] if not a.startswith("[")], "--json")
    assert code == 1 and json.loads(out)["reproduced"] is True


def test_run_mutant_must_be_known_and_on_impl(capsys):
    code, _, err = run(capsys, "run", "--seed", "1", "--mutant", "nope")
    assert code == 2 and "--mutant must be one of" in err and "'nope'" in err
    code, _, err = run(capsys, "run", "--seed", "1", "--mutant", "generation_not_bumped", "--system", "model")
    assert code == 2 and "use it with --system impl" in err

