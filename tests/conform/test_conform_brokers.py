"""``groupcheck conform broker`` against real brokers on loopback, started by the tests:
groupcheck's own broker conforms; deliberately broken ones (server-side mutants) are caught,
shrunk and replayable; Tansu's divergences are found; bad input is one line and exit 2."""

import json
import socket

import pytest

from properties.cli import main


def _conform(capsys, tmp_path, *args):
    code = main(["conform", "broker", *args, "--out", str(tmp_path / "report"), "--json"])
    out = capsys.readouterr()
    summary = json.loads(out.out) if out.out.strip() else None
    if summary is not None:  # each finding's counterexample file, as a path from here
        for f in summary["findings"]:
            f["file"] = str(tmp_path / "report" / f["counterexample"]) if f["counterexample"] else None
        summary["divergences"] = [f for f in summary["findings"] if f["status"] != "fixed"]
    return code, summary, out.err


def test_groupcheck_broker_conforms(capsys, tmp_path):
    code, summary, _ = _conform(capsys, tmp_path, "--launch", "groupcheck", "--schedules", "30")
    assert summary["divergences"] == [] and summary["conforming"] == 30, summary
    assert code == 0 and summary["verdict"] == "pass"
    assert set(summary["versions"]) == {"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit",
                                        "DescribeGroups", "OffsetFetch"}
    report = (tmp_path / "report" / "report.md").read_text()
    assert "30 (seeds 0..29" in report and "No divergence" in report
    # the report names what was judged: every API the schedules sent, DescribeGroups and OffsetFetch too
    assert ("- every answer to JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch "
            "and DescribeGroups against") in report


@pytest.mark.parametrize("mutant, expected", [
    ("generation_not_bumped", "JoinGroup: answered NONE with generation_id"),
    ("heartbeat_none_while_preparing", "Heartbeat: answered NONE where the model allows REBALANCE_IN_PROGRESS"),
    ("sync_accepts_stale_generation", "SyncGroup:"),
    ("follower_sync_rejected", "SyncGroup: answered REBALANCE_IN_PROGRESS where the model allows no answer (parked)"),
])
def test_a_broken_broker_is_caught_shrunk_and_replayed(capsys, tmp_path, mutant, expected):
    code, summary, _ = _conform(capsys, tmp_path, "--launch", "groupcheck", "--mutant", mutant, "--schedules", "20")
    assert code == 1 and summary["verdict"] == "fail"
    found = [d for d in summary["divergences"] if d["signature"].startswith(expected)]
    assert found, summary["divergences"]
    with open(found[0]["file"]) as f:
        example = json.load(f)
    assert example["kind"] == "groupcheck-broker-conformance" and example["mutant"] == mutant
    assert len(example["schedule"]["steps"]) <= example["steps_before_shrinking"]
    assert len(example["schedule"]["steps"]) <= 8, example["schedule"]["steps"]  # shrunk to the point
    assert example["observed"] != [] or example["allowed"] != []
    assert any(x.get("direction") == "response" for x in example["trace"])
    # the replay reproduces it against a fresh broker with the same bug, and not against a correct one
    assert main(["replay", found[0]["file"], "--launch", "groupcheck", "--mutant", mutant]) == 1
    assert "reproduced" in capsys.readouterr().out
    assert main(["replay", found[0]["file"], "--launch", "groupcheck"]) == 0
    assert "NOT reproduced" in capsys.readouterr().out


def test_tansu_divergences_are_reported_with_shrunk_replayable_schedules(capsys, tmp_path):
    pytest.importorskip("properties.live.tansu")
    code, summary, _ = _conform(capsys, tmp_path, "--launch", "tansu", "--schedules", "6", "--shrink-seconds", "60")
    assert code == 1 and summary["divergences"], summary
    first = summary["divergences"][0]  # the most frequent divergence of its own, shrunk first
    with open(first["file"]) as f:
        example = json.load(f)
    assert first["follows"] is None
    assert len(example["schedule"]["steps"]) < example["steps_before_shrinking"]
    assert main(["replay", first["file"], "--launch", "tansu"]) == 1


def test_baseline_marks_divergences_new_known_and_fixed(capsys, tmp_path):
    broken = ("--launch", "groupcheck", "--mutant", "generation_not_bumped", "--schedules", "2", "--no-shrink")
    code, first, _ = _conform(capsys, tmp_path / "a", *broken)
    assert code == 1 and first["divergences"]
    before = tmp_path / "a" / "report" / "report.json"
    code, again, _ = _conform(capsys, tmp_path / "b", *broken, "--baseline", str(before))
    assert code == 1 and {d["status"] for d in again["divergences"]} == {"known"}
    code, fixed, _ = _conform(capsys, tmp_path / "c", "--launch", "groupcheck", "--schedules", "2",
                              "--baseline", str(before))
    assert code == 0 and fixed["verdict"] == "pass"
    assert sorted(f["signature"] for f in fixed["findings"] if f["status"] == "fixed") == \
        sorted(d["signature"] for d in first["divergences"])


def test_parallel_schedules_against_one_broker_each_have_their_own_group(capsys, tmp_path):
    code, summary, err = _conform(capsys, tmp_path, "--launch", "groupcheck", "--schedules", "8", "--parallel", "4")
    assert code == 0 and summary["conforming"] == 8, (summary, err)
    assert summary["settings"]["parallel"] == 4
    # the answer-time table comes from the wire traces of all of them
    assert summary["latency"]["JoinGroup"]["answers"] >= 8 * 3
    assert summary["latency"]["Heartbeat"]["p50_ms"] <= summary["latency"]["Heartbeat"]["p99_ms"]
    assert "## Answer times" in (tmp_path / "report" / "report.md").read_text()


def test_faults_pause_the_broker_and_cut_connections_and_groupcheck_still_conforms(capsys, tmp_path):
    from properties import targets
    from properties.conform.schedule import Schedule, Step
    from properties.conform.target import Broker, Runner

    code, summary, err = _conform(capsys, tmp_path, "--launch", "groupcheck", "--schedules", "6", "--faults")
    assert code == 0 and summary["conforming"] == 6, (summary, err)
    assert any("paused (SIGSTOP)" in line for line in summary["checked"]["what"])
    # one schedule by hand: a join cut right after it was written, a pause, and the group goes on
    steps = [Step(0, "join", "same"), Step(0, "join", "same"), Step(0, "cut", "heartbeat"), Step(0, "pause", "short"),
             Step(0, "sync", "current"), Step(0, "heartbeat", "current"), Step(1, "cut", "join"), Step(1, "join", "same"),
             Step(1, "join", "same")]
    broker = Broker(targets.get(targets.BROKER, "groupcheck", "--launch"))
    try:
        result = Runner(broker)(Schedule(1, 2, 6, (("range",), ("range",)), tuple(steps)))
    finally:
        broker.stop()
    assert result.verdict == "conforms", [d.summary for d in result.divergences]
    notes = [x.get("note", "") for x in result.trace]
    assert "connection cut right after the request" in notes
    assert any(n.startswith("broker paused (SIGSTOP) for 1000 ms") for n in notes) and "broker resumed (SIGCONT)" in notes


def test_a_mutant_that_misbehaves_only_after_an_acknowledged_divergence_is_caught(capsys, tmp_path):
    """A profile that acknowledges what a broken broker does first (generations numbered from 0)
    must not hide what it does after (a Heartbeat answered NONE during PreparingRebalance from its
    second generation on: tests/helpers/two_stage_broker.py). A checker that stopped at a
    schedule's first divergence saw only the acknowledged one and passed."""
    import sys

    from properties.findings import blocking

    acknowledged = "JoinGroup: answered NONE with generation_id 0 where the model allows 1"
    profile = tmp_path / "ack.toml"
    profile.write_text(f'''name = "numbered-from-zero"
[[acknowledged]]
signature = "{acknowledged}"
reason = "generations numbered from 0, as Tansu does: harmless to clients"
link = "https://github.com/tansu-io/tansu"
''')
    command = (f"{sys.executable} -m tests.helpers.two_stage_broker --port {{port}} --topic groupcheck-conform:6 "
               "--set group.initial.rebalance.delay.ms=0")
    code, summary, err = _conform(capsys, tmp_path, "--launch-cmd", command, "--profile", str(profile),
                                  "--schedules", "12", "--no-shrink")
    assert summary is not None, err
    by_signature = {f["signature"]: f for f in summary["divergences"]}
    assert by_signature[acknowledged]["status"] == "acknowledged" and by_signature[acknowledged]["follows"] is None
    late = by_signature.get("Heartbeat: answered NONE where the model allows REBALANCE_IN_PROGRESS")
    assert late is not None and blocking(late), summary["divergences"]
    assert code == 1 and summary["verdict"] == "fail"


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_broker_is_inconclusive_exit_3_not_a_usage_error(capsys, tmp_path):
    """CI tells "the broker is down" (3) from "the command line is wrong" (2) and "it diverges" (1)."""
    port = _closed_port()
    code = main(["conform", "broker", "--bootstrap", f"127.0.0.1:{port}", "--schedules", "1",
                 "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 3, err
    assert f"cannot connect to 127.0.0.1:{port}" in err and "inconclusive" in err and "Traceback" not in err
    assert err.strip().count("\n") == 0, err


@pytest.mark.parametrize("args, message", [
    (["--bootstrap", "nowhere"], "--bootstrap expects HOST:PORT"),
    (["--launch", "kafka-9"], "--launch kafka-9: not a broker groupcheck can start"),
    (["--launch", "tansu", "--mutant", "generation_not_bumped"], "--mutant generation_not_bumped: broker:tansu takes no mutant"),
    (["--launch", "groupcheck", "--mutant", "no_such_bug"], "unknown mutant 'no_such_bug'"),
    (["--bootstrap", "127.0.0.1:9", "--timers", "sometimes"], "invalid choice: 'sometimes'"),
    ([], "give --bootstrap HOST:PORT or --launch NAME"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, args, message):
    code = main(["conform", "broker", *args, "--schedules", "1", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err
    assert err.strip().count("\n") == 0, err


def test_replay_refuses_a_broker_counterexample_without_a_broker(capsys, tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"kind": "groupcheck-broker-conformance", "signature": "x",
                                "schedule": {"seed": 0, "members": 1, "partitions": 6, "protocols": [["range"]],
                                             "steps": [[0, "join", "same"]]}}))
    assert main(["replay", str(path)]) == 2
    assert "give --bootstrap HOST:PORT or --launch NAME" in capsys.readouterr().err


def test_rdkafka_mock_is_judged_with_its_profile_and_its_findings_reported(capsys, tmp_path):
    pytest.importorskip("confluent_kafka")
    code, summary, _ = _conform(capsys, tmp_path, "--launch", "rdkafka-mock", "--schedules", "12", "--no-shrink")
    assert code == 1 and summary["divergences"], summary
    # the profile's caps and acknowledged divergences are in the report, never silent
    assert summary["caps"]["JoinGroup"] == 3 and "flexible" in summary["caps_why"]
    assert any("generation_id 2" in sig for sig, *_ in summary["acknowledged"])
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## Version caps (profile)" in report and "## Acknowledged divergences (profile)" in report
    # with the generation offset translated, no schedule stops at the mock's first generation number
    assert not any(d["signature"].startswith("JoinGroup: answered NONE with generation_id") for d in summary["divergences"])
    # the versions the profile allows carry no group.instance.id: static schedules are refused in one line
    code = main(["conform", "broker", "--launch", "rdkafka-mock", "--static", "2", "--schedules", "2",
                 "--out", str(tmp_path / "static")])
    err = capsys.readouterr().err
    assert code == 2 and "static members need group.instance.id" in err and "JoinGroup v3 (v5+)" in err
    assert err.strip().count("\n") == 0, err


_DIES_ON_FIRST_REQUEST = r"""
import os, socket, sys
server = socket.create_server(("127.0.0.1", 0))
print(f"listening {server.getsockname()[1]}", flush=True)
conn, _ = server.accept()
conn.recv(4)
sys.stderr.write("fake broker: assertion failed, aborting\n")
sys.stderr.flush()
os._exit(3)
"""


def test_a_broker_that_crashes_is_a_finding_and_is_started_again(capsys, tmp_path, monkeypatch):
    import subprocess
    import sys
    import time

    import attrs

    from properties import targets
    from properties.live.child import ChildBroker

    started = []

    def launch(topics, mutant=None, timers=False):
        log = tmp_path / f"fake-{len(started)}.log"
        process = subprocess.Popen([sys.executable, "-c", _DIES_ON_FIRST_REQUEST], stdout=subprocess.PIPE,
                                   stderr=open(log, "w"), text=True)
        port = int(process.stdout.readline().split()[1])
        started.append(process)
        return ChildBroker(process, "127.0.0.1", [port], str(log), workdir=str(tmp_path / "unused"))

    key = (targets.BROKER, "groupcheck")
    monkeypatch.setitem(targets.TARGETS, key, attrs.evolve(targets.TARGETS[key], starter=launch))
    t0 = time.monotonic()
    code, summary, _ = _conform(capsys, tmp_path, "--launch", "groupcheck", "--schedules", "3")
    assert code == 1
    assert summary["crashes"] == 3 and len(started) == 4  # each crash relaunched, the last one stopped at the end
    assert [d["signature"] for d in summary["divergences"]] == ["failure: the broker process exited with status 3"]
    with open(summary["divergences"][0]["file"]) as f:
        assert "fake broker: assertion failed" in json.load(f)["summary"]
    assert all(p.poll() is not None for p in started)
    assert time.monotonic() - t0 < 30


def test_with_timers_groupcheck_broker_conforms_and_an_ignored_session_expiry_is_caught(capsys, tmp_path):
    """Timers on: 2 s session and 1.5 s rebalance timeouts, schedules wait past them, a timer may fire within 250 ms of its
    deadline. The correct broker conforms; with expired sessions ignored, a pending member that
    should have expired is still answered as a member (seed 10 reaches it) — invisible without timers."""
    code, summary, _ = _conform(capsys, tmp_path, "--launch", "groupcheck", "--timers", "on", "--schedules", "4")
    assert code == 0 and summary["timers"] is True and summary["conforming"] == 4, summary
    fired = {r["answer"] for r in summary["coverage"] if r["api"] == "timers" and r["schedules"]}
    assert {"initial rebalance delay", "rebalance timeout", "sync timeout"} <= fired, fired  # what the waits reach
    mutant = ["--launch", "groupcheck", "--mutant", "session_expiry_ignored", "--seed", "10"]
    code, summary, _ = _conform(capsys, tmp_path, *mutant, "--schedules", "1")
    assert code == 0, summary  # without timers nothing expires: the bug is out of reach
    # the schedule shows six divergences, four only after another: a small budget shrinks the first
    code, summary, _ = _conform(capsys, tmp_path, *mutant, "--timers", "on", "--schedules", "1",
                                "--shrink-seconds", "60")
    assert code == 1, summary
    with open(summary["divergences"][0]["file"]) as f:
        example = json.load(f)
    assert example["timers"] is True
    assert ["wait", "long"] in [step[1:] for step in example["schedule"]["steps"]]  # the expiry needs the wait
    assert len(example["schedule"]["steps"]) < example["steps_before_shrinking"]


def test_static_members_conform_on_groupcheck_broker_and_meet_replacement_and_fencing():
    """``--static 2``: the first two virtual members carry a group.instance.id on every request; a
    fresh join of theirs is a restarted process taking its instance's place. groupcheck's broker
    must conform, and the schedules must really replace static members and fence the old ids (a
    static run that never met FENCED_INSTANCE_ID would have judged nothing of KIP-345)."""
    from properties import targets
    from properties.conform.schedule import generate
    from properties.conform.target import Broker, Runner

    broker = Broker(targets.get(targets.BROKER, "groupcheck", "--launch"))
    try:
        run = Runner(broker)
        results = [run(generate(seed, static=2)) for seed in range(16)]
    finally:
        broker.stop()
    assert all(r.divergence is None and r.failure is None for r in results), \
        [(r.schedule.seed, r.failure, r.divergence and r.divergence.summary) for r in results if r.divergence or r.failure]
    versions = dict(results[0].versions)
    assert 5 <= versions["JoinGroup"] <= 8 and versions["OffsetCommit"] >= 7
    requests = [x for r in results for x in r.trace if x.get("direction") == "request"]
    answers = [x for r in results for x in r.trace if x.get("direction") == "response"]
    assert all(x["body"]["group_instance_id"] == f"conform-instance-{x['member']}"
               for x in requests if x["member"] < 2 and x["api"] in ("JoinGroup", "Heartbeat", "SyncGroup"))
    assert any(x["body"].get("error_code") == 82 for x in answers), "no FENCED_INSTANCE_ID answer"
    static_ids = {x["body"]["member_id"] for x in answers if x["api"] == "JoinGroup"
                  and x["body"].get("error_code") == 0 and x["body"]["member_id"].startswith("conform-instance-0-")}
    assert len(static_ids) >= 2  # instance 0 was given a new member id at least once: replaced


def test_static_schedules_refuse_more_static_members_than_members(capsys, tmp_path):
    code, _, err = _conform(capsys, tmp_path, "--launch", "groupcheck", "--members", "2", "--static", "3")
    assert code == 2 and "--static 3: more than the 2 members" in err


@pytest.mark.parametrize("args, message", [
    (("--classic", "1"), "--classic 1: classic members inside a consumer group need --protocol consumer"),
    (("--assignor", "uniform"), "--assignor uniform: server assignors belong to the consumer protocol"),
    (("--describe",), "--describe: ConsumerGroupDescribe reads KIP-848 groups (--protocol consumer)"),
    (("--protocol", "consumer", "--members", "2", "--classic", "2"),
     "--classic 2: at least one of the 2 members (--members) must speak the consumer protocol"),
    (("--protocol", "consumer", "--members", "3", "--static", "2", "--classic", "2"),
     "--static 2 and --classic 2: more than the 3 members"),
])
def test_classic_members_inside_a_consumer_group_are_refused_where_they_cannot_be(capsys, tmp_path, args, message):
    code, _, err = _conform(capsys, tmp_path, "--launch", "groupcheck", *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_an_upgrade_needs_a_classic_member(capsys, tmp_path):
    code, _, err = _conform(capsys, tmp_path, "--launch", "groupcheck", "--protocol", "consumer", "--upgrade")
    assert code == 2 and "--upgrade: the group starts classic, so it needs a classic member" in err
