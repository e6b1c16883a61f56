"""The release matrix's parts that need no broker: which releases a --matrix names, how a
divergence's presence reads as ranges, and the usage errors (tests/live/test_kafka.py runs one)."""

import pytest

from properties.cli import main
from properties.conform import matrix
from properties.errors import UsageError


def test_a_range_names_every_line_between_by_its_latest_release_oldest_first():
    assert matrix.releases("kafka:2.8..3.3") == ["2.8.2", "3.0.2", "3.1.2", "3.2.3", "3.3.2"]
    assert matrix.releases("kafka:4.1..kafka:4.1") == ["4.1.2"]
    assert matrix.releases("kafka:3.3.1,kafka:2.6,kafka:3.3.1") == ["2.6.3", "3.3.1"]


@pytest.mark.parametrize("spec, words", [
    ("kafka:1.1..3.0", "no release line 1.1 known"),
    ("kafka:3.3..2.8", "3.3 comes after 2.8"),
    ("3.0..3.3", "expected kafka:LINE..LINE"),
    ("kafka:1.1.1", "runs Kafka 2.0 and later"),
    (",", "no release named"),
])
def test_a_bad_matrix_is_one_usage_error_naming_it(spec, words):
    with pytest.raises(UsageError) as e:
        matrix.releases(spec)
    assert "--matrix" in str(e.value) and words in str(e.value)


def test_presence_reads_as_ranges_with_the_releases_around_them():
    versions = ["2.8.2", "3.0.2", "3.1.2", "3.2.3", "3.3.2", "3.4.1"]
    showed = {"a": {"3.0.2", "3.1.2", "3.2.3"}, "b": {"2.8.2", "3.3.2", "3.4.1"}, "x": {"3.1.2"}}
    rows = {r["signature"]: r for r in matrix.presence(versions, showed)}
    assert [r["signature"] for r in matrix.presence(versions, showed)] == ["b", "a", "x"]  # oldest first
    assert matrix.describe(rows["a"]["ranges"]) == "present in 3.0.2–3.2.3; absent in 2.8.2, gone in 3.3.2"
    assert matrix.describe(rows["b"]["ranges"]) == ("present in 2.8.2; gone in 3.0.2 · "
                                                    "present in 3.3.2–3.4.1; absent in 3.2.3, still in the newest judged")
    assert matrix.describe(rows["x"]["ranges"]) == "present in 3.1.2; absent in 3.0.2, gone in 3.2.3"
    assert rows["x"]["decided"] is None


def test_a_known_divergence_says_what_kafkas_history_decided():
    (row,) = matrix.presence(["3.2.3", "3.3.2"], {"OffsetCommit: answered UNKNOWN_MEMBER_ID where the model allows NONE":
                                                  {"3.2.3"}})
    assert "KAFKA-14201" in row["decided"] and row["tickets"] == ["KAFKA-14201"]
    unrun = {"release": "3.3.2", "timers": "off", "exit": 130, "verdict": None, "schedules": None, "conforming": None, "seconds": None,
             "report": "kafka-3.3.2/report.md"}
    text = matrix.markdown({"releases": [unrun], "divergences": [{**row, "timers": "off"},
                                                                 {"signature": "s", "ranges": row["ranges"],
                                                                  "decided": None, "timers": "off"}],
                            "settings": {"seed": 0, "timers": "off", "runs": [{"timers": "off", "schedules": 2}],
                                         "members": 3, "steps": 24}})
    assert "KAFKA-14201" in text and "Not decided yet" in text and "seeds 0–1" in text
    assert "| 3.3.2 | no report (exit 130) | — |" in text


@pytest.mark.parametrize("extra, words", [
    (["--profile", "kafka:3.9"], "--profile with --matrix"),
    (["--brokers", "3"], "--brokers with --matrix"),
    (["--bootstrap", "127.0.0.1:9"], "not allowed with argument"),
])
def test_matrix_refuses_what_it_cannot_do_before_anything_starts(extra, words, capsys, tmp_path):
    assert main(["conform", "broker", "--matrix", "kafka:3.2..3.3", *extra, "--out", str(tmp_path / "r")]) == 2
    assert words in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def _fake_campaign(found):
    """A stand-in for command._campaign: writes the report.json a campaign would, with the
    signatures *found* gives for (release, timers), and records each call's settings."""
    calls = []

    def campaign(args, target):
        import json
        import os

        version = args.launch.split(":")[1]
        calls.append((version, args.timers, args.schedules, args.out))
        sigs = found.get((version, args.timers), ())
        os.makedirs(args.out, exist_ok=True)
        findings = [{"signature": s, "counterexample": f"counterexamples/{i:02d}-x.json"} for i, s in enumerate(sigs, 1)]
        with open(os.path.join(args.out, "report.json"), "w") as f:
            json.dump({"checker": "conform-broker", "verdict": "fail" if sigs else "pass", "schedules": args.schedules,
                       "partial": False, "stopped_by": None, "conforming": args.schedules - len(sigs), "seconds": 1.0,
                       "findings": findings,
                       "settings": {"seed": args.seed, "members": args.members, "steps": args.steps,
                                    "static": args.static, "faults": args.faults, "timers": args.timers == "on",
                                    "target": f"--launch {args.launch}"}}, f)
        return 1 if sigs else 0

    return campaign, calls


def test_timers_both_judges_each_release_off_then_on_and_keeps_the_two_apart(tmp_path):
    import argparse
    import json

    hb = "Heartbeat: answered REBALANCE_IN_PROGRESS where the model allows NONE"
    campaign, calls = _fake_campaign({("2.5.1", "off"): [hb], ("2.5.1", "on"): [hb, "timer: late"],
                                      ("2.6.3", "on"): ["timer: late"]})
    args = argparse.Namespace(matrix="kafka:2.5..2.6", out=str(tmp_path), timers="both", schedules=300,
                              timed_schedules=100, seed=7, members=3, steps=24, junit=None, launch=None,
                              static=0, faults=False)
    assert matrix.run(args, campaign) == 1
    assert [(v, t, n) for v, t, n, _ in calls] == [("2.5.1", "off", 300), ("2.5.1", "on", 100),
                                                   ("2.6.3", "off", 300), ("2.6.3", "on", 100)]
    assert calls[1][3] == str(tmp_path / "kafka-2.5.1-timers-on")
    m = json.loads((tmp_path / "matrix.json").read_text())
    got = {(d["timers"], d["signature"]): (matrix.describe(d["ranges"]), d["first"], d["counterexample"])
           for d in m["divergences"]}
    assert got == {("off", hb): ("present in 2.5.1; gone in 2.6.3", "2.5.1", "kafka-2.5.1-timers-off/counterexamples/01-x.json"),
                   ("on", hb): ("present in 2.5.1; gone in 2.6.3", "2.5.1", "kafka-2.5.1-timers-on/counterexamples/01-x.json"),
                   ("on", "timer: late"): ("present in 2.5.1–2.6.3; still in the newest judged", "2.5.1",
                                           "kafka-2.5.1-timers-on/counterexamples/02-x.json")}
    text = (tmp_path / "matrix.md").read_text()
    assert "300 schedules (seeds 7–306) with timers off and 100 schedules (seeds 7–106) with timers on" in text
    assert "| 2.6.3 | on | fail | 99 of 100 |" in text and "### Timers on" in text and "KAFKA-10134" in text


def test_a_single_timing_keeps_one_folder_per_release(tmp_path):
    import argparse

    campaign, calls = _fake_campaign({})
    args = argparse.Namespace(matrix="kafka:4.1", out=str(tmp_path), timers="on", schedules=5, timed_schedules=None,
                              seed=0, members=3, steps=24, junit=None, launch=None, static=0, faults=False)
    assert matrix.run(args, campaign) == 0
    assert calls == [("4.1.2", "on", 5, str(tmp_path / "kafka-4.1.2"))]
    assert "None." in (tmp_path / "matrix.md").read_text() and "### Timers" not in (tmp_path / "matrix.md").read_text()


@pytest.mark.parametrize("extra, words", [
    (["--launch", "kafka:4.1", "--timers", "both"], "--timers both is for --matrix"),
    (["--matrix", "kafka:4.1", "--timed-schedules", "5"], "--timed-schedules 5 needs --matrix ... --timers both"),
    (["--matrix", "kafka:4.1", "--timers", "both", "--timed-schedules", "0"], "--timed-schedules"),
])
def test_timers_both_and_timed_schedules_are_refused_where_they_mean_nothing(extra, words, capsys, tmp_path):
    assert main(["conform", "broker", *extra, "--out", str(tmp_path / "r")]) == 2
    assert words in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_known_bug_decides_a_divergence_only_in_the_releases_that_have_it():
    commit = "OffsetCommit: answered UNKNOWN_MEMBER_ID where the model allows NONE"  # KAFKA-14201: 3.0.0 to 3.3.0
    assert "KAFKA-14201" in matrix.decide(commit, "off", dict.fromkeys(["3.0.2", "3.2.3"]))
    assert matrix.decide(commit, "off", dict.fromkeys(["3.2.3", "3.9.2"])) is None  # 3.9.2 has the fix: not this bug
    assert matrix.decide(commit, "off", dict.fromkeys(["2.8.2"])) is None  # before the regression
    stuck = "SyncGroup: no answer where the model allows REBALANCE_IN_PROGRESS or UNKNOWN_MEMBER_ID"  # KAFKA-12890
    assert "KAFKA-12890" in matrix.decide(stuck, "on", dict.fromkeys(["2.5.1", "2.7.2"]))
    assert matrix.decide(stuck, "on", dict.fromkeys(["2.8.2"])) is None
    assert matrix.decide(stuck, "off", dict.fromkeys(["2.5.1"])) is None  # a timer's bug needs timers


def test_a_divergence_only_seen_after_a_decided_one_takes_its_decision():
    after = "SyncGroup: answered ILLEGAL_GENERATION where the model allows UNKNOWN_MEMBER_ID"
    stuck = "SyncGroup: no answer where the model allows REBALANCE_IN_PROGRESS or UNKNOWN_MEMBER_ID"
    text = matrix.decide(after, "on", {"2.5.1": stuck, "2.6.3": stuck})
    assert text.startswith(f"Only seen after '{stuck}'") and "KAFKA-12890" in text
    assert matrix.decide(after, "on", {"2.5.1": stuck, "2.6.3": None}) is None  # of its own in 2.6.3
    assert matrix.decide(after, "on", {"2.8.2": stuck}) is None  # its parent is not that bug there
    (row,) = matrix.presence(["2.5.1", "2.6.3"], {after: {"2.5.1"}}, "on", {after: {"2.5.1": stuck}})
    assert "KAFKA-12890" in row["decided"]


def test_releases_with_different_known_bugs_behind_one_signature_name_each_with_its_releases():
    commit = "OffsetCommit: answered REBALANCE_IN_PROGRESS where the model allows UNKNOWN_MEMBER_ID"
    assert "KAFKA-8487" in matrix.decide(commit, "off", dict.fromkeys(["2.0.1", "2.3.1"]))
    assert matrix.decide(commit, "off", dict.fromkeys(["2.3.1", "2.6.3"])) is None  # 2.6.3 timers off: neither
    text = matrix.decide(commit, "on", dict.fromkeys(["2.3.1", "2.6.3"]))
    assert "In 2.3.1: KAFKA-8487" in text and "In 2.3.1, 2.6.3: KAFKA-12890" in text


def test_resume_keeps_the_whole_runs_of_the_same_settings_and_runs_the_rest(tmp_path):
    import argparse
    import json

    hb = "Heartbeat: answered REBALANCE_IN_PROGRESS where the model allows NONE"
    campaign, calls = _fake_campaign({("2.5.1", "off"): [hb]})
    args = argparse.Namespace(matrix="kafka:2.5..2.6", out=str(tmp_path), timers="off", schedules=30, timed_schedules=None,
                              seed=0, members=3, steps=24, junit=None, launch=None, static=0, faults=False, resume=True)
    assert matrix.run(args, campaign) == 1 and len(calls) == 2
    report = tmp_path / "kafka-2.6.3" / "report.json"
    cut = json.loads(report.read_text())
    report.write_text(json.dumps({**cut, "partial": True}))  # 2.6.3 was stopped half way
    del calls[:]
    assert matrix.run(args, campaign) == 1
    assert [c[0] for c in calls] == ["2.6.3"]  # 2.5.1 kept, 2.6.3 run again
    m = json.loads((tmp_path / "matrix.json").read_text())
    assert [r["release"] for r in m["releases"]] == ["2.5.1", "2.6.3"] and "KAFKA-10134" in m["divergences"][0]["decided"]
    del calls[:]
    assert matrix.run(argparse.Namespace(**{**vars(args), "schedules": 31}), campaign) == 1
    assert len(calls) == 2  # other settings: nothing kept
    del calls[:]
    assert matrix.run(argparse.Namespace(**{**vars(args), "resume": False}), campaign) == 1 and len(calls) == 2


def test_resume_needs_a_matrix(capsys, tmp_path):
    assert main(["conform", "broker", "--launch", "kafka:4.1", "--resume", "--out", str(tmp_path / "r")]) == 2
    assert "--resume is for --matrix" in capsys.readouterr().err


def test_a_divergence_seen_after_different_decided_ones_in_different_releases_is_decided_by_them():
    after = "JoinGroup: no answer where the model allows UNKNOWN_MEMBER_ID"
    commit = "OffsetCommit: answered UNKNOWN_MEMBER_ID where the model allows NONE"  # KAFKA-9752 in 2.4.1, timers on
    heartbeat = "Heartbeat: answered NONE where the model allows UNKNOWN_MEMBER_ID"  # KAFKA-12890 before 2.8.1
    text = matrix.decide(after, "on", {"2.4.1": commit, "2.6.3": heartbeat, "2.7.2": heartbeat})
    assert f"In 2.4.1 only seen after '{commit}' (KAFKA-9752)" in text
    assert f"In 2.6.3, 2.7.2 only seen after '{heartbeat}' (KAFKA-12890)" in text
    assert matrix.decide(after, "on", {"2.4.1": commit, "3.9.2": heartbeat}) is None  # 3.9.2 has no such bug
    assert matrix.decide(after, "on", {"2.4.1": commit, "2.6.3": None}) is None  # of its own in 2.6.3


def test_a_signature_a_known_bug_explains_in_some_releases_and_a_decided_divergence_in_others_is_decided():
    """OffsetCommit refused with a metadata too large: KAFKA-14201 in 3.0.2-3.2.3; in 2.0.1 (timers
    on) only after a divergence KAFKA-12890 explains."""
    big = "OffsetCommit: answered UNKNOWN_MEMBER_ID where the model allows OFFSET_METADATA_TOO_LARGE"
    heartbeat = "Heartbeat: answered NONE where the model allows UNKNOWN_MEMBER_ID"
    text = matrix.decide(big, "on", {"2.0.1": heartbeat, "3.0.2": None, "3.2.3": None})
    assert text.startswith("In 3.0.2, 3.2.3: KAFKA-14201") and f"In 2.0.1 only seen after '{heartbeat}' (KAFKA-12890)" in text
    assert matrix.decide(big, "on", {"2.0.1": None, "3.0.2": None}) is None  # of its own where no bug explains it
