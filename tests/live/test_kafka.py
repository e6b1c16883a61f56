"""Apache Kafka itself, judged by the broker checker (issue 35): one Kafka 4.1 node per test
session (per worker), started from Maven Central's jars (properties/live/kafka.py), and a short
run of Kafka 3.9 launched by the command line. The first start on a fresh machine resolves the
jars with Maven (about 10 s a version); later starts are offline."""

import json
import uuid

import pytest

from properties import targets
from properties.cli import main
from properties.conform.members import TOPIC
from properties.conform.run import Timing, run_schedule
from properties.conform.schedule import Schedule
from tests.helpers.schedules import RESTART


def _address(broker):
    host, port = broker.bootstrap.rsplit(":", 1)
    return host, int(port)


# The schedule conform broker --launch kafka:4.1 found diverging from the model of 3.9's coordinator
# (seed 19, shrunk): m0 rejoins fresh (a pending member id) while m1 and m2 wait in SyncGroup, then
# leaves with the pending id. Kafka 4.1 rebalances (m1 and m2 get REBALANCE_IN_PROGRESS,
# GroupMetadataManager.classicGroupLeaveToClassicGroup); 3.9's GroupCoordinator.handleLeaveGroup
# only drops the pending member.
PENDING_LEAVE = {"seed": 19, "members": 3, "partitions": 6,
                 "protocols": [["range", "roundrobin"], ["roundrobin", "range"], ["range", "roundrobin"]],
                 "steps": [[0, "join", "same"], [0, "join", "round"], [1, "join", "round"], [0, "join", "fresh"],
                           [1, "sync", "round"], [0, "leave", None]]}


def test_kafka_41_leaves_of_pending_members_rebalance_as_its_profile_says(kafka41):
    schedule = Schedule.from_json(PENDING_LEAVE)
    as_41 = targets.get(targets.BROKER, "kafka:4.1", "--launch").profile
    as_39 = targets.get(targets.BROKER, "kafka:3.9", "--launch").profile
    assert as_41.new_group_coordinator and not as_39.new_group_coordinator
    judged_41 = run_schedule(_address(kafka41), schedule, f"pending-leave-{uuid.uuid4().hex[:8]}", as_41)
    assert judged_41.divergence is None and judged_41.failure is None, judged_41.signature()
    # the same answers judged by 3.9's rules: the divergence the search found
    judged_39 = run_schedule(_address(kafka41), schedule, f"pending-leave-{uuid.uuid4().hex[:8]}", as_39)
    assert judged_39.signature() == ("LeaveGroup: answered NONE, but the answers to the other members differ "
                                     "from the model's")


# Found with timers (seed 1046, shrunk; docs/results/kafka-2026-11-28/k41-on-2/01): the generation-2
# join completes at t, m0's SyncGroup reaches the Stable group later and m0 never heartbeats. Kafka
# 4.1 expires m0 at t + session timeout (GroupMetadataManager.classicGroupSyncToClassicGroup does not
# reschedule the heartbeat of a member syncing to a Stable group) and so completes the generation-3
# join at once; 3.9's GroupCoordinator.doSyncGroup reschedules it and the join waits longer.
LATE_SYNC = {"seed": 1046, "members": 3, "partitions": 6,
             "protocols": [["range"], ["roundrobin", "range"], ["range"]],
             "steps": [[2, "join", "same"], [1, "join", "same"], [2, "join", "round"], [2, "join", "round"],
                       [1, "sync", "round"], [0, "join", "round"], [0, "join", "fresh"], [1, "wait", "short"],
                       [1, "join", "same"], [0, "wait", "short"], [1, "disconnect", None], [1, "join", "round"]]}


#: the timing it was found with (2026-11-28: session and rebalance timeouts both 2 s)
LATE_SYNC_TIMING = Timing(True, 2_000, 2_000, 250, 300, 2_600)


def test_kafka_41_does_not_keep_a_session_alive_on_a_stable_sync(kafka41):
    schedule = Schedule.from_json(LATE_SYNC)
    as_41 = targets.get(targets.BROKER, "kafka:4.1", "--launch").profile
    as_39 = targets.get(targets.BROKER, "kafka:3.9", "--launch").profile
    judged_41 = run_schedule(_address(kafka41), schedule, f"late-sync-{uuid.uuid4().hex[:8]}", as_41,
                             timing=LATE_SYNC_TIMING)
    assert judged_41.divergence is None and judged_41.failure is None, judged_41.signature()
    judged_39 = run_schedule(_address(kafka41), schedule, f"late-sync-{uuid.uuid4().hex[:8]}", as_39,
                             timing=LATE_SYNC_TIMING)
    assert judged_39.signature() == "JoinGroup: answered NONE where the model allows no answer (parked)"


@pytest.mark.parametrize("timers", ["off", "on"])
def test_kafka_41_conforms_over_seeded_schedules(kafka41, tmp_path, capsys, timers):
    out = tmp_path / "report"
    code = main(["conform", "broker", "--bootstrap", kafka41.bootstrap, "--profile", "kafka:4.1",
                 "--schedules", "8" if timers == "off" else "3", "--seed", "100", "--timers", timers,
                 "--out", str(out), "--json"])
    report = json.loads((out / "report.json").read_text())
    assert code == 0 and report["verdict"] == "pass", report["findings"]
    assert report["checked"]["done"] == (8 if timers == "off" else 3)


def test_kafka_39_launched_conforms(tmp_path):
    out = tmp_path / "report"
    code = main(["conform", "broker", "--launch", "kafka:3.9", "--schedules", "6", "--seed", "200",
                 "--out", str(out), "--json"])
    report = json.loads((out / "report.json").read_text())
    assert code == 0 and report["verdict"] == "pass", report["findings"]
    assert report["system"] == "broker:kafka:3.9" and report["settings"]["profile"] == "kafka:3.9"
    assert "Kafka 3.9's GroupCoordinator" in report["checked"]["what"][0]


# Found by conform broker --launch kafka:3.0.2 (seed 1, shrunk; also 3.1.2 and 3.2.3, not 3.3.2 on):
# a member handed a pending member id (MEMBER_ID_REQUIRED) commits with generation -1 and that id to
# the Empty group. Kafka before 3.3 validates the member id (validateOffsetCommit ->
# validateCurrentMember: UNKNOWN_MEMBER_ID); KAFKA-14201 (cfa1f098d6f in 3.3.0, 706adc39f6a on trunk
# for 3.4.0) lets a generation -1 commit to an Empty group through without looking at the ids, as
# the model (3.9's rules) does. A bug of the old releases, fixed: judged by today's rules.
SIMPLE_COMMIT_WITH_A_PENDING_ID = {"seed": 1, "members": 3, "partitions": 6,
                                   "protocols": [["range"], ["roundrobin", "range"], ["roundrobin", "range"]],
                                   "steps": [[1, "join", "same"], [1, "commit", "current"]]}


def test_kafka_before_3_3_refuses_a_generation_less_commit_to_an_empty_group_kafka_14201():
    judged = _judged_on({"3.2.3": SIMPLE_COMMIT_WITH_A_PENDING_ID, "3.3.2": SIMPLE_COMMIT_WITH_A_PENDING_ID})  # KRaft
    assert judged["3.2.3"].signature() == "OffsetCommit: answered UNKNOWN_MEMBER_ID where the model allows NONE"
    assert judged["3.3.2"].divergence is None and judged["3.3.2"].failure is None, judged["3.3.2"].signature()


# Found by conform broker --launch kafka:2.5.1 (seed 0, shrunk): m2's Heartbeat of the new generation
# reaches the group in CompletingRebalance (the leader has not synced yet). Kafka before 2.6.1
# answers REBALANCE_IN_PROGRESS (GroupCoordinator.handleHeartbeat: case CompletingRebalance), and a
# 2.5 consumer, which heartbeats from its JoinGroup answer on, rejoined; KAFKA-10134 (7e7bb184d2a for
# 2.7.0, 16ec1793d53 in 2.6.1) answers NONE and keeps the session alive, as the model (3.9's rules)
# does. A behaviour Kafka fixed: judged by today's rule.
HEARTBEAT_WHILE_COMPLETING = {"seed": 0, "members": 3, "partitions": 6,
                              "protocols": [["roundrobin", "range"], ["roundrobin", "range"], ["range"]],
                              "steps": [[0, "join", "same"], [2, "join", "same"], [1, "join", "same"],
                                        [1, "join", "same"], [2, "join", "round"], [2, "heartbeat", "current"]]}


# Found by conform broker --matrix kafka:2.0..4.1 (2.0.1-2.3.1): m0 alone joins (generation 1,
# CompletingRebalance: it has not synced), and m1, no member, commits with generation -1 and no
# member id. Kafka before 2.4.0 answers REBALANCE_IN_PROGRESS (GroupCoordinator.doCommitOffsets
# looked at CompletingRebalance before the member id); KAFKA-8487 (bebcbe3a049, 2.4.0) checks the
# member first: UNKNOWN_MEMBER_ID, as the model (3.9's validateOffsetCommit) does. A bug Kafka fixed.
COMMIT_BY_NO_MEMBER_WHILE_COMPLETING = {"seed": 0, "members": 2, "partitions": 6, "protocols": [["range"], ["range"]],
                                        "steps": [[0, "join", "same"], [0, "join", "same"], [1, "commit", "current"]]}


# Found by conform broker --matrix kafka:2.4..2.5 --static 1 (seed 11, shrunk): static m0 joins
# alone (generation 1, CompletingRebalance), then its restarted process joins without its member
# id. 2.4.1 answers at once with no rebalance (GroupCoordinator.doUnknownJoinGroup: case Stable |
# CompletingRebalance); KAFKA-9801 (146811ab296, 2.5.0) rebalances and parks it, as the model does.
STATIC_REJOIN_WHILE_COMPLETING = {"seed": 11, "members": 3, "partitions": 6,
                                  "protocols": [["range"], ["range", "roundrobin"], ["roundrobin"]],
                                  "steps": [[2, "join", "same"], [0, "join", "same"], [0, "join", "fresh"]],
                                  "static": 1}


def test_zookeeper_releases_show_kafka_8487_9801_and_10134_where_kafka_had_them():
    """Four ZooKeeper-mode releases, each under its own ZooKeeper: 2.3.1 (kafka_2.12, ZooKeeper
    3.5.9's client in place of its 3.4), 2.4.1, 2.5.1 and 2.6.3."""
    judged = _judged_on({"2.3.1": [COMMIT_BY_NO_MEMBER_WHILE_COMPLETING],
                         "2.4.1": [STATIC_REJOIN_WHILE_COMPLETING],
                         "2.5.1": [COMMIT_BY_NO_MEMBER_WHILE_COMPLETING, HEARTBEAT_WHILE_COMPLETING,
                                   STATIC_REJOIN_WHILE_COMPLETING],
                         "2.6.3": [HEARTBEAT_WHILE_COMPLETING]})
    (commit_231,), (heartbeat_263,) = judged["2.3.1"], judged["2.6.3"]
    (static_241,), (commit_251, heartbeat_251, static_251) = judged["2.4.1"], judged["2.5.1"]
    assert static_241.signature() == "JoinGroup: answered NONE where the model allows no answer (parked)"  # KAFKA-9801
    assert static_251.divergence is None and static_251.failure is None, static_251.signature()
    assert commit_231.signature() == "OffsetCommit: answered REBALANCE_IN_PROGRESS where the model allows UNKNOWN_MEMBER_ID"
    assert commit_251.divergence is None and commit_251.failure is None, commit_251.signature()
    assert heartbeat_251.signature() == "Heartbeat: answered REBALANCE_IN_PROGRESS where the model allows NONE"
    assert heartbeat_263.divergence is None and heartbeat_263.failure is None, heartbeat_263.signature()


def _judged_on(schedules):
    """Each of *schedules* (release -> schedules, or release -> one schedule) run on a fresh node of
    that Kafka release, judged by its launch profile: {release: the judged runs (or run)}; each node
    stopped."""
    from properties.live import kafka

    judged = {}
    for version, mine in schedules.items():
        name = f"kafka:{version}"
        broker = kafka.start(kafka.parse(name), {TOPIC: 6}, kafka.settings_for(False))
        try:
            profile = targets.get(targets.BROKER, name, "--launch").profile
            runs = [run_schedule(_address(broker), Schedule.from_json(schedule), f"releases-{uuid.uuid4().hex[:8]}",
                                 profile) for schedule in (mine if isinstance(mine, list) else [mine])]
            judged[version] = runs if isinstance(mine, list) else runs[0]
        finally:
            broker.stop()
    return judged


def test_a_launched_broker_is_handed_over_with_its_group_coordinator_loaded(tmp_path):
    """Kafka 3.9 with the Java coordinator answered the first JoinGroup after its start
    COORDINATOR_LOAD_IN_PROGRESS (its __consumer_offsets partition was still loading): the
    launcher now waits for the coordinator (kafka.wait_for_group_coordinator), so seed 0, the
    first schedule, conforms."""
    out = tmp_path / "report"
    code = main(["conform", "broker", "--launch", "kafka:3.9-new-coordinator", "--schedules", "2", "--seed", "0",
                 "--out", str(out), "--json"])
    report = json.loads((out / "report.json").read_text())
    assert code == 0 and report["verdict"] == "pass", report["findings"]
    assert "Kafka 4.x's GroupMetadataManager" in report["checked"]["what"][0]



def test_kafka_41_keeps_what_it_persisted_across_a_restart(kafka41):
    schedule = Schedule.from_json(RESTART)
    profile = targets.get(targets.BROKER, "kafka:4.1", "--launch").profile
    result = run_schedule(_address(kafka41), schedule, f"restart-{uuid.uuid4().hex[:8]}", profile,
                          restart=kafka41.restart)
    assert result.divergence is None and result.failure is None, result.signature()
    notes = [e.get("note", "") for e in result.trace]
    assert any(n.startswith("restart: the broker killed") for n in notes), notes
    # after the restart the fetch was answered with the offsets committed before it
    fetched = [e for e in result.trace if e.get("api") == "OffsetFetch" and e.get("direction") == "response"]
    assert fetched and any(p["committed_offset"] >= 0 for t in fetched[0]["body"]["topics"] for p in t["partitions"])


def test_a_matrix_of_two_releases_shows_where_a_divergence_goes(tmp_path, capsys):
    """--matrix kafka:3.2..3.3 with seed 1 (KAFKA-14201's schedule): 3.2.3 diverges, 3.3.2
    conforms, and the matrix says the divergence is present in 3.2.3 and gone in 3.3.2, decided."""
    out = tmp_path / "m"
    code = main(["conform", "broker", "--matrix", "kafka:3.2..3.3", "--schedules", "1", "--seed", "1",
                 "--no-shrink", "--out", str(out)])
    matrix = json.loads((out / "matrix.json").read_text())
    assert code == 1 and [(r["release"], r["verdict"]) for r in matrix["releases"]] == [("3.2.3", "fail"),
                                                                                          ("3.3.2", "pass")]
    first = matrix["divergences"][0]
    assert first["signature"] == "OffsetCommit: answered UNKNOWN_MEMBER_ID where the model allows NONE"
    assert first["ranges"] == [{"from": "3.2.3", "to": "3.2.3", "absent_before": None, "gone_in": "3.3.2"}]
    assert "KAFKA-14201" in first["decided"] and (out / "kafka-3.2.3" / "report.json").exists()
    assert "present in 3.2.3; gone in 3.3.2" in (out / "matrix.md").read_text()
