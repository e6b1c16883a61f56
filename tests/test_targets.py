"""The registry of targets: names resolve, Kafka's names parse into a release and a coordinator,
and what a missing Java or Maven does (a one-line usage error before anything starts)."""

import pytest

from properties import targets
from properties.cli import main
from properties.errors import UsageError
from properties.live import kafka


@pytest.mark.parametrize("name, version, new", [
    ("kafka:3.9", kafka.LINES["3.9"], False),
    ("kafka:3.9-new-coordinator", kafka.LINES["3.9"], True),
    ("kafka:4.1", kafka.LINES["4.1"], True),  # 4.1 has only the Java coordinator (KAFKA-18329)
    ("kafka:3.7.2", "3.7.2", False),
    ("kafka:4.0.1", "4.0.1", True),
    ("kafka:3.8", "3.8.1", False),  # every line from 3.0 by its latest release
    ("kafka:3.0", "3.0.2", False),
    ("kafka:2.8", "2.8.2", False),  # under ZooKeeper
    ("kafka:2.5.1", "2.5.1", False),
    ("kafka:2.0", "2.0.1", False),  # the oldest line run
])
def test_kafka_names_parse_into_a_release_and_a_coordinator(name, version, new):
    spec = kafka.parse(name)
    assert (spec.version, spec.new_coordinator) == (version, new)
    assert spec.logging == ("log4j2" if version.startswith("4.") else "reload4j")
    assert spec.zookeeper == version.startswith("2.")
    profile = targets.get(targets.BROKER, name, "--launch").profile
    assert profile.new_group_coordinator == new and profile.name == name


@pytest.mark.parametrize("name, words", [
    ("kafka:", "expected kafka:LINE or kafka:X.Y.Z"),
    ("kafka:latest", "expected kafka:LINE or kafka:X.Y.Z"),
    ("kafka:1.1", "no release line 1.1 known"),
    ("kafka:1.1.1", "runs Kafka 2.0 and later"),
    ("kafka:2.8.2-new-coordinator", "no Java group coordinator"),
])
def test_a_bad_kafka_name_is_one_line_naming_it(name, words):
    with pytest.raises(UsageError) as e:
        targets.get(targets.BROKER, name, "--launch")
    assert str(e.value).startswith(f"--launch {name}: ") and words in str(e.value)


@pytest.mark.parametrize("name, scala, zookeeper, create, describe", [
    ("kafka:2.0", "2.12", "3.5.9", 2, (1, 1)),  # no kafka_2.13 before 2.4; ZooKeeper 3.4's client fails on Java 14+
    ("kafka:2.3", "2.12", "3.5.9", 2, (1, 1)),
    ("kafka:2.4", "2.13", None, 5, (3, 5)),  # its own ZooKeeper 3.5, and the flexible versions
    ("kafka:4.1", "2.13", None, 5, (3, 5)),
])
def test_what_an_old_release_needs_to_be_run_and_asked(name, scala, zookeeper, create, describe):
    spec = kafka.parse(name)
    assert (spec.scala, spec.zookeeper_client, spec.create_topics_version, spec.describe_versions) == (
        scala, zookeeper, create, describe)


def test_the_new_coordinator_switch_is_written_for_3x_only():
    old = kafka.server_properties(kafka.parse("kafka:3.9"), 1, 2, "/d", {})
    new = kafka.server_properties(kafka.parse("kafka:3.9-new-coordinator"), 1, 2, "/d", {})
    four = kafka.server_properties(kafka.parse("kafka:4.1"), 1, 2, "/d", {"group.initial.rebalance.delay.ms": "0"})
    assert "group.coordinator.new.enable" not in old and new["group.coordinator.new.enable"] == "true"
    assert "group.coordinator.new.enable" not in four and four["group.initial.rebalance.delay.ms"] == "0"
    assert old["controller.quorum.voters"] == "1@127.0.0.1:2" and old["listeners"].startswith("PLAINTEXT://127.0.0.1:1,")


def test_without_maven_a_kafka_launch_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GROUPCHECK_CACHE", str(tmp_path / "cache"))  # nothing resolved yet
    monkeypatch.setenv("PATH", str(tmp_path))  # neither java nor mvn
    code = main(["conform", "broker", "--launch", "kafka:4.1", "--schedules", "1", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == "groupcheck: error: Kafka needs Maven (mvn on PATH): mvn was not found"
    assert not (tmp_path / "r").exists()


def test_a_launched_broker_takes_a_profile_too_checked_before_it_starts(capsys, tmp_path):
    # --profile replaces a launched broker's own profile (tests/test_profiles.py has the files)
    assert main(["conform", "broker", "--launch", "kafka:4.1", "--profile", "kafka:1.1",
                 "--out", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.startswith("groupcheck: error: --profile kafka:1.1: no release line 1.1 known")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("args, words", [
    (["--bootstrap", "127.0.0.1:9", "--brokers", "3"], "--brokers 3 is for --launch"),
    (["--launch", "kafka:4.1", "--brokers", "3", "--timers", "on"], "judges failovers with --timers off only"),
    (["--launch", "groupcheck", "--brokers", "3"], "--brokers 3: broker:groupcheck starts as one node only"),
    (["--launch", "kafka:2.8", "--brokers", "3"], "--brokers 3: broker:kafka:2.8 starts as one node only"),
    (["--launch", "kafka:4.1", "--brokers", "0"], "--brokers"),
])
def test_brokers_is_refused_where_groupcheck_cannot_run_a_failover(args, words, capsys, tmp_path):
    assert main(["conform", "broker", *args, "--schedules", "1", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1, err
    assert not (tmp_path / "r").exists()


def test_a_cluster_node_names_every_voter_and_replicates_the_offsets_topic():
    props = kafka.server_properties(kafka.parse("kafka:4.1"), 10, 20, "/d", {}, node_id=2,
                                    voters="1@127.0.0.1:20,2@127.0.0.1:21,3@127.0.0.1:22", replication=3)
    assert props["node.id"] == "2" and props["controller.quorum.voters"].count("@") == 3
    assert props["offsets.topic.replication.factor"] == "3" and props["transaction.state.log.replication.factor"] == "3"


def test_a_zookeeper_broker_asks_for_the_shortest_session_so_a_restart_need_not_wait_long():
    """--faults kills and restarts a broker: under ZooKeeper the killed broker's registration lives
    until its session expires, and the new one exits (NodeExistsException) if started before
    (seen on 2.5.1: every restart step a "broker failure"). KafkaBroker.restart waits that long."""
    props = kafka.zookeeper_server_properties(1, 2, "/d", {})
    assert props["zookeeper.session.timeout.ms"] == str(kafka.ZOOKEEPER_SESSION_MS) == "6000"
    assert kafka.ZOOKEEPER_SESSION_MS == 2 * kafka.ZOOKEEPER_TICK_MS  # the least ZooKeeper grants
