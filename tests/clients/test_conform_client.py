"""``groupcheck conform client`` for real: consumers in processes of their own against
``groupcheck broker`` with faults, judged from the broker's trace and their callbacks.

The judge must catch a deliberately broken groupcheck consumer through the wire — each client-side
mutant below under a schedule that provokes its bug — and stay quiet on the correct consumer
under the same faults. Every broker and consumer is started here on loopback and stopped.
"""

import json
import subprocess
import sys
import warnings

import pytest

from properties import targets
from properties.cli import main
from properties.clients import command, libraries, session
from properties.clients.judge import judge
from properties.clients.schedule import DEFAULT_SETTINGS, ClientSchedule
from properties.live.faults import parse

#: how long a schedule's group may take to settle after its last fault: longer than a join phase can
#: last (the rebalance timeout is max.poll.interval.ms, 10 s in the schedules), so that a rejoin slowed
#: by a loaded machine (CI's two workers) is not taken for a group that never settles; a settled group
#: is seen at once whatever the window
SETTLE_MS = 15000


def schedule(*faults, consumers=2, partitions=4, static=0):
    return ClientSchedule(0, consumers, partitions, tuple(sorted(DEFAULT_SETTINGS.items())),
                          parse({"faults": list(faults)}), settle_ms=SETTLE_MS, static=static)


#: mutant -> (the schedule that provokes its bug, the rule that must catch it, or the rules of which one must)
BROKEN = {
    "heartbeat_while_unjoined": (
        [{"kind": "error", "api": "Heartbeat", "error": "UNKNOWN_MEMBER_ID", "client": "c0", "at_ms": 4500}],
        "heartbeat-carries-current-generation"),
    "commit_fencing_ignored": (  # the fenced generation goes out on whichever request comes next
        [{"kind": "error", "api": "OffsetCommit", "error": "UNKNOWN_MEMBER_ID", "client": "c0", "at_ms": 4500}],
        ("heartbeat-carries-current-generation", "commit-carries-current-generation")),
    "retriable_join_failure_resets_member": (
        [{"kind": "error", "api": "Heartbeat", "error": "REBALANCE_IN_PROGRESS", "client": "c0", "at_ms": 4500},
         {"kind": "drop", "api": "JoinGroup", "when": "before", "client": "c0", "at_ms": 4500}],
        "member-id-kept-until-told"),
    "heartbeat_not_coordinator_unhandled": (
        [{"kind": "error", "api": "Heartbeat", "error": "NOT_COORDINATOR", "client": "c0", "at_ms": 4500}],
        "rediscover-after-coordinator-error"),
}


@pytest.mark.parametrize("mutant", sorted(BROKEN))
def test_the_judge_catches_a_broken_consumer_through_the_wire(mutant):
    faults, rule = BROKEN[mutant]
    broken = session.run(libraries.get("groupcheck"), schedule(*faults), mutant=mutant)
    assert sum(1 for x in broken.trace if x["direction"] == "fault") >= len(faults), "the faults were not injected"
    found = {f.rule: f for f in judge(broken)}
    caught = [found[r] for r in ((rule,) if isinstance(rule, str) else rule) if r in found]
    assert caught, (mutant, [f.summary for f in found.values()])
    assert all(f.client == "c0" and f.evidence for f in caught)


def test_the_correct_consumer_breaks_no_rule_under_every_mutants_faults():
    """The four schedules above at once, each on a consumer of its own (c0..c3 in turn)."""
    faults = []
    for i, mutant in enumerate(sorted(BROKEN)):
        faults += [dict(f, client=f"c{i}") for f in BROKEN[mutant][0]]
    correct = session.run(libraries.get("groupcheck"), schedule(*faults, consumers=4))
    assert sum(1 for x in correct.trace if x["direction"] == "fault") >= len(faults), "the faults were not injected"
    assert judge(correct) == [], [f.summary for f in judge(correct)]


@pytest.mark.parametrize("name", ["kafka-python", "confluent-kafka", "aiokafka"])
def test_each_library_forms_a_group_and_is_judged_without_faults(name):
    pytest.importorskip(targets.TARGETS[(targets.CLIENT, name)].module)
    outcome = session.run(libraries.get(name), schedule())
    if name == "kafka-python" and not outcome.settle.settled and \
            any(f.rule == "heartbeats-continue" for f in judge(outcome)):
        # kafka-python 3.0.12's own hang after a SyncGroup answer (docs/live.md, "What the third-party
        # systems showed"): the judge names it; once is the library's, twice fails the test
        warnings.warn(f"kafka-python hung after SyncGroup: {[f.summary for f in judge(outcome)]}; running again")
        outcome = session.run(libraries.get(name), schedule())
    assert outcome.settle.settled, outcome.settle.detail
    assert judge(outcome) == []
    for client in ("c0", "c1"):
        kinds = [e["event"] for e in outcome.events[client]]
        assert "ready" in kinds and "assigned" in kinds and kinds[-1] == "closed", (client, kinds)
        assert any(x["direction"] == "request" and x["api"] == "OffsetCommit" and x["client_id"] == client
                   for x in outcome.trace), f"{client} never committed"


def test_confluent_kafka_speaks_kip848_and_is_judged_by_its_rules():
    """librdkafka with group.protocol=consumer on groupcheck broker's KIP-848 coordinator, under
    seed 1's faults of that protocol: every consumer heartbeats with ConsumerGroupHeartbeat (no
    JoinGroup), no rule of judge_kip848 is broken, the group settles (ConsumerGroupDescribe)."""
    pytest.importorskip("confluent_kafka")
    from properties.clients.schedule import generate

    outcome = session.run(libraries.get("confluent-kafka"), generate(1, protocol="consumer"))
    requests = [x for x in outcome.trace if x["direction"] == "request"]
    assert not any(x["api"] == "JoinGroup" for x in requests)
    for client in ("c0", "c1", "c2"):
        assert any(x["api"] == "ConsumerGroupHeartbeat" and x["client_id"] == client for x in requests), client
    assert outcome.settle.settled, outcome.settle.detail
    assert judge(outcome) == []


@pytest.mark.parametrize("seed", [0, 1])
def test_groupchecks_own_consumer_speaks_kip848_and_is_judged_by_its_rules(seed):
    """impl.membership's consumer (ModernConsumer) with group.protocol=consumer, under the faults of
    that protocol's schedules: ConsumerGroupHeartbeat only, no rule of judge_kip848 broken, the
    group settles."""
    from properties.clients.schedule import generate

    outcome = session.run(libraries.get("groupcheck"), generate(seed, protocol="consumer"))
    requests = [x for x in outcome.trace if x["direction"] == "request"]
    assert not any(x["api"] == "JoinGroup" for x in requests)
    for client in ("c0", "c1", "c2"):
        assert any(x["api"] == "ConsumerGroupHeartbeat" and x["client_id"] == client for x in requests), client
    assert outcome.settle.settled, outcome.settle.detail
    assert judge(outcome) == []


def test_confluent_kafka_sends_a_partial_heartbeat_after_a_timed_out_one():
    """librdkafka 2.16 times a ConsumerGroupHeartbeat out after the heartbeat interval and sends the
    next one without the fields it had sent (only coordinator errors and transport failures make it
    send a full request: rdkafka_cgrp.c, rd_kafka_cgrp_handle_ConsumerGroupHeartbeat), where Kafka's
    consumer sends every field after any failure (resetHeartbeatState). A heartbeat of c0 held 2 s
    (four heartbeat intervals) shows it (docs/kip848.md); a librdkafka that changes this fails here,
    which is what we want to know."""
    pytest.importorskip("confluent_kafka")
    from properties.clients.schedule import CONSUMER_SETTINGS

    held = ClientSchedule(0, 2, 4, tuple(sorted(CONSUMER_SETTINGS.items())), parse({"faults": [
        {"kind": "delay", "api": "ConsumerGroupHeartbeat", "ms": 2000, "client": "c0", "at_ms": 4000}]}, "test"),
        protocol="consumer")
    outcome = session.run(libraries.get("confluent-kafka"), held)
    assert "kip848-full-heartbeat-after-join-or-failure" in [f.rule for f in judge(outcome)]


def test_confluent_kafkas_static_consumer_is_refused_its_own_instance_id_and_fails_like_kafkas():
    """librdkafka 2.16 with group.protocol=consumer and a group.instance.id: an injected
    UNKNOWN_MEMBER_ID makes it rejoin at epoch 0 with its own member id; the coordinator still has
    the member and answers UNRELEASED_INSTANCE_ID (Kafka 4.1's hazard, docs/kip848.md), which
    librdkafka raises as a fatal error (through its error callback, which the runner reports) — as
    Kafka's consumer does. No finding; the consumer named in the notes; its heartbeats between
    full ones carry no instance id, which the protocol allows."""
    pytest.importorskip("confluent_kafka")
    from properties.clients.schedule import CONSUMER_SETTINGS

    fenced = ClientSchedule(0, 2, 4, tuple(sorted(CONSUMER_SETTINGS.items())), parse({"faults": [
        {"kind": "error", "api": "ConsumerGroupHeartbeat", "error": "UNKNOWN_MEMBER_ID", "client": "c0",
         "at_ms": 4000}]}, "test"), static=2, protocol="consumer")
    outcome = session.run(libraries.get("confluent-kafka"), fenced)
    answers = [x["body"].get("error_code") for x in outcome.trace if x["direction"] == "response"
               and x.get("api") == "ConsumerGroupHeartbeat" and x["client_id"] == "c0"]
    assert 111 in answers  # UNRELEASED_INSTANCE_ID
    assert any(n.startswith("c0: failed by a fatal answer") and "still used by another member" in n
               for n in outcome.notes), outcome.notes
    assert judge(outcome) == [] and outcome.settle.settled, outcome.settle.detail


def _group_requests(outcome, client):
    return [x for x in outcome.trace if x["direction"] == "request" and x["client_id"] == client
            and x["api"] in ("JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit", "LeaveGroup")]


def test_static_consumers_carry_their_instance_ids_and_do_not_leave():
    """groupcheck's consumer with two static members of three, one silenced past its session (the
    coordinator expires it; it rejoins by its instance) and a coordinator failover: no rule broken,
    every static request carries its instance id, and on close only the dynamic member leaves."""
    s = schedule({"kind": "silence", "client": "c0", "at_ms": 4000, "ms": 8000}, {"kind": "failover", "at_ms": 5000},
                 consumers=3, static=2)
    outcome = session.run(libraries.get("groupcheck"), s)
    assert outcome.settle.settled, outcome.settle.detail
    assert judge(outcome) == [], [f.summary for f in judge(outcome)]
    for client, instance in (("c0", "instance-0"), ("c1", "instance-1")):
        sent = _group_requests(outcome, client)
        assert sent and all(x["body"].get("group_instance_id") == instance for x in sent if x["api"] != "LeaveGroup")
        assert not any(x["api"] == "LeaveGroup" for x in sent), client
    assert any(x["api"] == "LeaveGroup" for x in _group_requests(outcome, "c2"))
    assert all(x["body"].get("group_instance_id") is None for x in _group_requests(outcome, "c2")
               if x["api"] != "LeaveGroup")


def test_aiokafka_static_members_heartbeat_without_their_instance_id():
    """aiokafka 0.14.0 joins as a static member with JoinGroup v5 but heartbeats with Heartbeat v1
    (tests/clients/findings/): the judge finds it through the wire, and nothing else."""
    pytest.importorskip("aiokafka")
    outcome = session.run(libraries.get("aiokafka"), schedule(static=1))
    rules = {(f.rule, f.client) for f in judge(outcome)}
    assert rules == {("static-member-carries-instance-id", "c0")}, [f.summary for f in judge(outcome)]


def test_the_command_runs_schedules_and_writes_its_report(tmp_path, capsys):
    out = tmp_path / "report"
    code = main(["conform", "client", "--client", "groupcheck", "--schedules", "1", "--consumers", "2",
                 "--parallel", "1", "--out", str(out), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["verdict"] == "pass" and summary["findings"] == []
    assert summary["system"] == "client:groupcheck" and summary["schedules"] == 1 and summary["faults_injected"] >= 0
    assert "**Verdict: PASS.** 1 of 1 schedules of client:groupcheck ran to the end; 0 findings." in (out / "report.md").read_text()
    assert json.loads((out / "report.json").read_text())["verdict"] == "pass"


def test_a_counterexample_replays_with_its_mutant(tmp_path, capsys):
    from properties.clients.trace import Finding

    faults, rule = BROKEN["heartbeat_while_unjoined"]
    s = schedule(*faults)
    outcome = session.Outcome(s, "groupcheck", (), {}, session.Settle(True, 0, {}, "Stable", (), ""), 0, 0)
    path = tmp_path / "example.json"
    command.write_counterexample(str(path), "groupcheck", outcome, Finding(rule, "c0", 0, "found before"),
                                 "heartbeat_while_unjoined")
    assert main(["replay", str(path), "--json"]) == 1  # the schedule, run again with the mutant
    assert json.loads(capsys.readouterr().out)["reproduced"] is True


@pytest.mark.parametrize("args, words", [
    (["--client", "nope"], "--client nope: not a client groupcheck can run (known: kafka-python"),
    (["--client", "groupcheck", "--set", "fetch.max.bytes=1"], "--set fetch.max.bytes: not a consumer setting"),
    (["--client", "groupcheck", "--set", "partition.assignment.strategy=sticky"], "expected a list of range, roundrobin"),
    (["--client", "kafka-python", "--mutant", "heartbeat_while_unjoined"], "use --client groupcheck"),
    (["--client", "groupcheck", "--mutant", "generation_not_bumped"], "a mutant of the broker"),
    (["--client", "groupcheck", "--mutant", "nope"], "unknown mutant 'nope'"),
    (["--client", "groupcheck", "--consumers", "2", "--static", "3"], "--static 3: more static members than consumers (2)"),
    (["--client", "groupcheck", "--static", "-1"], "--static"),
    (["--client", "kafka-python", "--protocol", "consumer"], "--protocol consumer: --client kafka-python is not judged"),
    (["--client", "groupcheck", "--protocol", "nope"], "--protocol"),
])
def test_bad_arguments_give_one_line_and_exit_2(args, words):
    done = subprocess.run([sys.executable, "-m", "properties.cli", "conform", "client", *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr


def test_a_library_that_is_not_installed_gives_one_line_and_exit_2(monkeypatch, capsys):
    import attrs

    key = (targets.CLIENT, "kafka-python")
    monkeypatch.setitem(targets.TARGETS, key, attrs.evolve(targets.TARGETS[key], module="no_such_module_here"))
    assert main(["conform", "client", "--client", "kafka-python"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["groupcheck: error: --client kafka-python: the library is not installed "
                   "(pip install kafka-python==3.0.12)"]


def test_shrinking_drops_every_fault_the_finding_does_not_need(monkeypatch):
    """Re-runs are faked: the rule fires while the schedule still has the UNKNOWN_MEMBER_ID fault."""
    from properties.clients.trace import Finding

    needed = {"kind": "error", "api": "Heartbeat", "error": "UNKNOWN_MEMBER_ID", "client": "c0", "at_ms": 4500}
    others = [{"kind": "failover", "at_ms": 5000}, {"kind": "delay", "api": "SyncGroup", "ms": 300, "at_ms": 3000},
              {"kind": "silence", "client": "c1", "at_ms": 6000, "ms": 7000}]
    runs = []

    def fake_run(library, s, group, mutant=None):
        runs.append(len(s.faults))
        hit = any(f.error == "UNKNOWN_MEMBER_ID" for f in s.faults)
        found = [Finding("heartbeat-carries-current-generation", "c0", 1, "x")] if hit else []
        return attrs.evolve(outcome, schedule=s), found

    import attrs

    s = schedule(others[0], needed, *others[1:])
    outcome = session.Outcome(s, "groupcheck", (), {}, session.Settle(True, 0, {}, "Stable", (), ""), 0, 0)
    monkeypatch.setattr(command, "run_and_judge", fake_run)
    shrunk, finding, reproduced = command.shrink(libraries.get("groupcheck"), outcome,
                                                 Finding("heartbeat-carries-current-generation", "c0", 1, "x"))
    assert [f.to_json() for f in shrunk.schedule.faults] == [needed] and finding.rule == "heartbeat-carries-current-generation"
    assert reproduced and runs == [4, 3, 2, 2, 1]  # the re-run, then one try per fault left (the needed one kept)


def test_a_finding_that_does_not_come_back_is_kept_as_found_and_called_intermittent(monkeypatch):
    from properties.clients.trace import Finding

    s = schedule({"kind": "failover", "at_ms": 5000})
    outcome = session.Outcome(s, "kafka-python", (), {}, session.Settle(True, 0, {}, "Stable", (), ""), 0, 0)
    monkeypatch.setattr(command, "run_and_judge", lambda *a, **k: (outcome, []))
    kept, _, reproduced = command.shrink(libraries.get("groupcheck"), outcome, Finding("heartbeats-continue", "c0", 1, "x"))
    assert kept is outcome and reproduced is False


def test_a_broker_that_does_not_start_gives_one_line_and_exit_3_inconclusive(monkeypatch, capsys, tmp_path):
    """Nothing about the client was learnt: inconclusive (3), not a usage error (2) nor a finding (1)."""
    def no_broker(**kwargs):
        raise RuntimeError("groupcheck broker did not start: Address already in use")

    monkeypatch.setattr(session, "launch_groupcheck_broker", no_broker)
    assert main(["conform", "client", "--client", "groupcheck", "--schedules", "1", "--out", str(tmp_path)]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "groupcheck: inconclusive: schedule 0: groupcheck broker did not start: Address already in use"


def test_a_stopped_run_keeps_every_finished_schedule_and_says_it_is_partial(tmp_path, monkeypatch, capsys):
    """SIGTERM while the third schedule runs: no new schedule starts, the one under way finishes and
    is counted, and the report is written, marked partial; exit 143 (128 + SIGTERM)."""
    import os
    import signal
    import threading
    import time as clock

    ran = []

    def fake_run_seed(plan, seed):
        ran.append(seed)
        if seed == 2:
            os.kill(os.getpid(), signal.SIGTERM)
            clock.sleep(0.3)  # still under way when the signal is handled
        return {"seed": seed, "findings": [], "outcome": None, "faults_injected": 1, "notes": []}

    assert threading.current_thread() is threading.main_thread()
    monkeypatch.setattr(command, "run_seed", fake_run_seed)
    out = tmp_path / "report"
    code = main(["conform", "client", "--client", "groupcheck", "--schedules", "10", "--parallel", "1",
                 "--out", str(out), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 143
    assert sorted(ran) == [0, 1, 2] and summary["schedules"] == 3 and summary["stopped_by"] == "SIGTERM"
    assert summary["partial"] is True and summary["checked"] == {**summary["checked"], "requested": 10, "done": 3}
    assert "PARTIAL: stopped by SIGTERM" in (out / "report.md").read_text()
    assert json.loads((out / "report.json").read_text())["schedules"] == 3


def test_a_runners_diagnosis_becomes_a_note_naming_its_client():
    """A ``diagnosis`` line (kafka-python's lost join completion, say) is shown among the session's
    notes with the client and generation, and only diagnosis lines are."""
    from types import SimpleNamespace

    runner = session._Runner.__new__(session._Runner)  # no process: only its lines matter here
    runner.client_id = "c1"
    runner.lines = SimpleNamespace(snapshot=lambda: [
        {"event": "assigned", "partitions": [0]}, {"event": "diagnosis", "text": "lost its join", "generation": 3},
        {"event": "error", "error": "x"}, {"event": "diagnosis", "text": "another"}])
    assert runner.diagnoses() == ["c1: lost its join (generation 3)", "c1: another"]


def test_a_schedule_due_before_the_group_formed_waits_for_it():
    """The broker runs a session's schedule with ``--faults-when-formed``: a failover due 50 ms after
    the broker started (long before two consumers can have joined) happens only once both have
    their assignment, the outcome says how long it waited, and its zero is where the faults
    finally counted from; a counterexample file keeps how long it waited."""
    early = schedule({"kind": "failover", "at_ms": 50})
    outcome = session.run(libraries.get("groupcheck"), early)
    fault = [x for x in outcome.trace if x["direction"] == "fault"]
    # the group is Stable once the leader's SyncGroup is handled (the answers are written after)
    synced = [x for x in outcome.trace if x["direction"] == "request" and x.get("api") == "SyncGroup"]
    assert len(fault) == 1 and fault[0]["fault"]["kind"] == "failover", fault
    assert {x["client_id"] for x in synced if x["time_ms"] <= fault[0]["time_ms"]} == {"c0", "c1"}, (fault, synced)
    assert outcome.held_ms > 0 and outcome.notes == ()
    assert outcome.start_ms + 50 <= fault[0]["time_ms"] <= outcome.start_ms + 50 + 500
    assert outcome.start_ms >= outcome.trace[0]["time_ms"]  # moved on from the broker's start
    assert judge(outcome) == []
    kept = command.outcome_of({"library": "groupcheck", **command.outcome_json(outcome)})
    assert kept.held_ms == outcome.held_ms and kept.start_ms == outcome.start_ms


def test_a_consumer_protocol_schedule_due_before_the_group_formed_fences_a_member_not_a_joiner():
    """The same with KIP-848's protocol (groupcheck's consumers): an UNKNOWN_MEMBER_ID due 50 ms
    after the broker started would answer c0's first ConsumerGroupHeartbeat (epoch 0, joining);
    held until the consumer group is Stable, it answers a heartbeat c0 sent as a member."""
    from properties.clients.schedule import CONSUMER_SETTINGS

    early = ClientSchedule(0, 2, 4, tuple(sorted(CONSUMER_SETTINGS.items())), parse({"faults": [
        {"kind": "error", "api": "ConsumerGroupHeartbeat", "error": "UNKNOWN_MEMBER_ID", "client": "c0",
         "at_ms": 50}]}, "test"), settle_ms=SETTLE_MS, protocol="consumer")
    outcome = session.run(libraries.get("groupcheck"), early)
    requests = {(x["connection"], x["correlation_id"]): x for x in outcome.trace if x["direction"] == "request"}
    fault = [x for x in outcome.trace if x["direction"] == "fault"]
    assert len(fault) == 1, fault
    fenced = requests[(fault[0]["connection"], fault[0]["correlation_id"])]
    assert fenced["body"]["member_epoch"] >= 1, fenced
    assert outcome.held_ms > 0
    assert judge(outcome) == [] and outcome.settle.settled
