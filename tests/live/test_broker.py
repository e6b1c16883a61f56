"""``groupcheck broker`` on loopback: real Kafka clients against it, bad input, load, CLI errors.

Every test starts its own broker process (properties/live/launch.py) on kernel-chosen ports and
stops it afterwards; every wait is bounded.
"""

import json
import os
import socket
import struct
import subprocess
import sys
import time

import pytest

from impl import protocol as P
from impl.wire import decode_response, encode_request
from properties.live.launch import launch_groupcheck_broker
from tests.helpers.broker_wire import FAST, api_versions_round_trip, closed_by_peer
from tests.helpers.broker_wire import address as _address, read_frame as _read_frame
from tests.helpers.kafka_python_log import CoordinatorLog

kafka = pytest.importorskip("kafka")


@pytest.fixture(scope="module")
def broker():
    with launch_groupcheck_broker(brokers=1, partitions=4, topics={"orders": 4},
                                  settings=FAST + ("socket.request.max.bytes=1048576",)) as b:
        yield b


# -- real clients ------------------------------------------------------------------------------------------

class ConsumerThread:
    """A kafka-python consumer polling on its own thread (kafka-python blocks in poll while it
    joins, so one thread cannot drive two members), committing after each batch."""

    def __init__(self, bootstrap, group, topic, name, seen, lock):
        import threading
        from kafka import KafkaConsumer

        self.log = CoordinatorLog(name)
        self.consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, client_id=name,
                                      auto_offset_reset="earliest", enable_auto_commit=False,
                                      session_timeout_ms=10000, heartbeat_interval_ms=500)
        self.name, self.seen, self.lock = name, seen, lock
        self.duplicates = []
        self.assignment = set()
        self.stopping = False
        self.polls = 0
        self.error = None
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        try:
            while not self.stopping:
                self.polls += 1
                for records in self.consumer.poll(timeout_ms=100).values():
                    with self.lock:
                        for r in records:
                            if (r.partition, r.offset) in self.seen:
                                self.duplicates.append((r.partition, r.offset))
                            self.seen[(r.partition, r.offset)] = self.name
                    self.consumer.commit()
                self.assignment = set(self.consumer.assignment())
        except Exception as e:  # kept for the failure message: a dead consumer thread is the client's
            self.error = f"{type(e).__name__}: {e}"
        self.consumer.close()

    def describe(self) -> str:
        """What a failure message needs to tell a stalled client from a broker that did not answer."""
        import sys
        import traceback

        frame = sys._current_frames().get(self.thread.ident)
        where = "".join(traceback.format_stack(frame)[-3:]) if frame is not None else "(thread ended)"
        return (f"{self.name}: {self.polls} polls, assignment {sorted(tp.partition for tp in self.assignment)}, "
                f"error {self.error}, now in:\n{where}")

    def stop(self):
        self.stopping = True
        self.thread.join(timeout=30)
        self.log.close()


def _wait(condition, seconds, what, detail=lambda: ""):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}\n{detail()}"
        time.sleep(0.05)


def test_kafka_python_produces_and_a_two_member_group_consumes_everything_once(broker):
    import threading
    from kafka import KafkaAdminClient, KafkaProducer, TopicPartition

    seen, lock = {}, threading.Lock()
    members = [ConsumerThread(broker.bootstrap, "two", "orders", f"c{i}", seen, lock) for i in range(2)]
    try:
        deadline = time.monotonic() + 60
        while not all(m.assignment for m in members) and time.monotonic() < deadline:
            time.sleep(0.05)
        stalled = [(m.name, m.log.stalled_after_sync()) for m in members if not m.assignment]
        if stalled and all(evidence for _, evidence in stalled):
            # kafka-python's fault, shown by its own log: the SyncGroup was answered, the client did
            # not apply it (seen 3 times in ~25 runs; the broker's trace had every answer sent)
            pytest.xfail("kafka-python stalled after a successful SyncGroup answer: "
                         + "; ".join(f"{name}: {evidence}" for name, evidence in stalled))
        assert not stalled, ("waited 60 s for both members to be assigned\n"
                             + "\n".join(m.describe() for m in members))
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, enable_idempotence=False)
        sent = [producer.send("orders", key=str(i).encode(), value=f"m{i}".encode()) for i in range(200)]
        producer.flush(timeout=20)
        producer.close()
        positions = {(f.get(5).partition, f.get(5).offset) for f in sent}
        assert len(positions) == 200  # every message got its own offset
        assert {p for p, _ in positions} == {0, 1, 2, 3}
        _wait(lambda: len(seen) >= 200, 60, "every message to be consumed")
        assert set(seen) == positions
        assert [m.duplicates for m in members] == [[], []]
        owners = [m.assignment for m in members]
        assert not owners[0] & owners[1]
        assert owners[0] | owners[1] == {TopicPartition("orders", p) for p in range(4)}
        assert {seen[(p, o)] for p, o in positions} == {"c0", "c1"}
    finally:
        for m in members:
            m.stop()
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        committed = admin.list_group_offsets("two")["two"]
        ends = {}
        for partition, offset in positions:
            ends[partition] = max(ends.get(partition, 0), offset + 1)
        assert {tp.partition: om.offset for tp, om in committed.items()} == ends
        assert {"group_id": "two", "protocol_type": "consumer", "group_state": "Empty",
                "group_type": "classic"} in admin.list_groups()  # both members left on close
        described = admin.describe_groups(["two"])["two"]
        assert (described["group_state"], described["members"], described["error"]) == ("Empty", [], None)
    finally:
        admin.close()


def test_failover_on_sigusr1_moves_the_coordinator_and_the_group_carries_on():
    from kafka import KafkaConsumer, KafkaProducer

    with launch_groupcheck_broker(brokers=3, partitions=3, settings=FAST) as b:
        producer = KafkaProducer(bootstrap_servers=b.bootstrap, enable_idempotence=False)
        consumer = KafkaConsumer("events", bootstrap_servers=b.bootstrap, group_id="fo", auto_offset_reset="earliest",
                                 enable_auto_commit=False, session_timeout_ms=10000, heartbeat_interval_ms=500)
        try:
            def consume(n):
                got, deadline = [], time.monotonic() + 30
                while len(got) < n and time.monotonic() < deadline:
                    for records in consumer.poll(timeout_ms=200).values():
                        got.extend(r.value for r in records)
                    consumer.commit()
                return got

            for i in range(30):
                producer.send("events", f"a{i}".encode())
            producer.flush(timeout=20)
            assert sorted(consume(30)) == sorted(f"a{i}".encode() for i in range(30))
            b.failover()
            deadline = time.monotonic() + 10
            while "coordinator failover" not in b.log() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert "coordinator failover: broker 0 -> 1" in b.log()
            for i in range(30):
                producer.send("events", f"b{i}".encode())
            producer.flush(timeout=20)
            assert sorted(consume(30)) == sorted(f"b{i}".encode() for i in range(30))
        finally:
            consumer.close()
            producer.close()


def test_trace_writes_every_request_and_response_as_json(tmp_path):
    trace = tmp_path / "trace.jsonl"
    with launch_groupcheck_broker(settings=FAST, trace=str(trace)) as b:
        api_versions_round_trip(_address(b), correlation_id=5)
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [(x["direction"], x["api"], x["version"], x["correlation_id"]) for x in lines[:2]] == [
        ("request", "ApiVersions", 3, 5), ("response", "ApiVersions", 3, 5)]
    assert lines[0]["client_id"] == "probe" and lines[1]["body"]["error_code"] == 0
    # the client hung up with nothing in flight: a "closed" line by the client, if the broker saw the
    # hang-up before it was stopped (the with-block ends right after)
    assert [(x["direction"], x["by"], x["client_id"], "api" in x) for x in lines[2:]] in (
        [], [("closed", "client", "probe", False)])


# -- bad input: one connection closed (or answered as Kafka does), a line logged, the others served ----------

def _raw(broker):
    return socket.create_connection(_address(broker), timeout=10)


def _expect_closed_and_logged(broker, sock, words):
    assert closed_by_peer(sock), "the broker kept a connection that sent bad input"
    sock.close()
    deadline = time.monotonic() + 5
    while words not in broker.log() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert words in broker.log()
    assert api_versions_round_trip(_address(broker)).error_code == 0


def test_garbage_bytes_close_that_connection_only(broker):
    with _raw(broker) as keeper:  # another client's connection, open throughout
        sock = _raw(broker)
        sock.sendall(struct.pack(">i", 12) + b"\xff\xfe\xfd\xfc" + os.urandom(8))
        _expect_closed_and_logged(broker, sock, "unknown_api")
        keeper.sendall(encode_request(P.ApiVersionsRequestData(), 3, 1, "keeper"))
        assert decode_response("ApiVersions", 3, _read_frame(keeper)).body.error_code == 0


def test_a_body_that_does_not_decode_closes_the_connection(broker):
    sock = _raw(broker)
    frame = bytearray(encode_request(P.HeartbeatRequestData(group_id="g", generation_id=1, member_id="m"), 3, 9, "x"))
    truncated = frame[4:-6]  # the body stops in the middle of the member id
    sock.sendall(struct.pack(">i", len(truncated)) + truncated)
    _expect_closed_and_logged(broker, sock, "Heartbeat v3 request")


def test_a_size_prefix_above_socket_request_max_bytes_closes_the_connection(broker):
    sock = _raw(broker)
    sock.sendall(struct.pack(">i", 50 * 1024 * 1024) + b"\0" * 64)  # max is 1 MiB here
    _expect_closed_and_logged(broker, sock, "closed")


def test_a_negative_size_prefix_closes_the_connection(broker):
    sock = _raw(broker)
    sock.sendall(struct.pack(">i", -5))
    assert closed_by_peer(sock)
    sock.close()
    assert api_versions_round_trip(_address(broker)).error_code == 0


def test_an_unknown_api_key_closes_the_connection(broker):
    sock = _raw(broker)
    header = struct.pack(">hhih", 9999, 0, 3, 1) + b"x"
    sock.sendall(struct.pack(">i", len(header)) + header)
    _expect_closed_and_logged(broker, sock, "API key 9999")


def test_an_unsupported_api_versions_version_gets_kafkas_v0_fallback_answer(broker):
    with _raw(broker) as sock:
        header = struct.pack(">hhih", 18, 77, 42, 5) + b"probe" + b"\0" * 8
        sock.sendall(struct.pack(">i", len(header)) + header)
        payload = _read_frame(sock)
        assert payload is not None
        body = decode_response("ApiVersions", 0, payload).body
        assert body.error_code == 35  # UNSUPPORTED_VERSION
        assert [(a.api_key, a.min_version, a.max_version) for a in body.api_keys] == [("ApiVersions", 0, 4)]
        # the connection stays usable: the client retries at a version the broker lists
        sock.sendall(encode_request(P.ApiVersionsRequestData(), 3, 43, "probe"))
        assert decode_response("ApiVersions", 3, _read_frame(sock)).body.error_code == 0


def test_an_unsupported_version_of_another_api_closes_the_connection(broker):
    sock = _raw(broker)
    header = struct.pack(">hhih", 12, 42, 3, 1) + b"x"  # Heartbeat v42
    sock.sendall(struct.pack(">i", len(header)) + header)
    _expect_closed_and_logged(broker, sock, "Heartbeat v42 is not supported")


def test_silent_and_vanishing_clients_do_not_disturb_the_others(broker):
    silent = [_raw(broker) for _ in range(5)]
    vanishing = _raw(broker)
    frame = encode_request(P.ApiVersionsRequestData(), 3, 1, "gone")
    vanishing.sendall(frame[:7])  # half a frame, then gone
    vanishing.close()
    half = _raw(broker)
    half.sendall(frame[:3])  # not even the size prefix, and it stays
    assert api_versions_round_trip(_address(broker)).error_code == 0
    for s in silent + [half]:
        s.close()
    assert api_versions_round_trip(_address(broker)).error_code == 0


def test_idle_connections_expire_after_connections_max_idle_ms():
    with launch_groupcheck_broker(settings=("connections.max.idle.ms=300",)) as b:
        sock = _raw(b)
        assert closed_by_peer(sock, timeout=10)
        sock.close()
        deadline = time.monotonic() + 5
        while "idle longer than connections.max.idle.ms=300" not in b.log() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "idle longer than connections.max.idle.ms=300" in b.log()
        assert api_versions_round_trip(_address(b)).error_code == 0


def test_five_hundred_concurrent_connections_are_all_answered(broker):
    address = _address(broker)
    socks = [socket.create_connection(address, timeout=20) for _ in range(500)]
    try:
        for i, sock in enumerate(socks):
            sock.sendall(encode_request(P.ApiVersionsRequestData(), 3, i, "load"))
        answered = 0
        for i, sock in enumerate(socks):
            decoded = decode_response("ApiVersions", 3, _read_frame(sock))
            assert decoded.correlation_id == i and decoded.body.error_code == 0
            answered += 1
        assert answered == 500
    finally:
        for sock in socks:
            sock.close()
    assert api_versions_round_trip(address).error_code == 0


# -- the command line ----------------------------------------------------------------------------------------

def _cli(*args, timeout=30):
    return subprocess.run([sys.executable, "-m", "properties.cli", "broker", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("args, words", [
    (("--set", "group.bogus.ms=1"), "--set group.bogus.ms: not a setting groupcheck broker knows"),
    (("--set", "connections.max.idle.ms=soon"), "expected an integer"),
    (("--brokers", "0"), "--brokers must be at least 1"),
    (("--topic", "t:zero"), "PARTITIONS: expected a number"),
    (("--port", "70000"), "--port 70000"),
])
def test_bad_arguments_give_one_line_and_exit_2(args, words):
    done = _cli("--port", "0", *args) if args[0] != "--port" else _cli(*args)
    assert done.returncode == 2
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_a_port_in_use_gives_one_line_and_exit_2(broker):
    done = _cli("--port", str(_address(broker)[1]))
    assert done.returncode == 2
    assert "cannot listen on" in done.stderr and "Traceback" not in done.stderr


def test_the_docs_example_runs_as_written(tmp_path):
    """docs/live.md's copy-paste example (kafka-python against groupcheck broker), on a free port."""
    import re

    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "live.md")).read()
    block = re.search(r"```bash\n(groupcheck broker --port 9092 .*?)```", readme, re.S).group(1)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = subprocess.run(["bash", "-c", block.replace("9092", str(port)).replace("/tmp/trace.jsonl",
                                                                              str(tmp_path / "trace.jsonl"))],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str([f"order {i}" for i in range(10)])
    assert "stopped after" in done.stderr
    assert any('"api": "Produce"' in line for line in (tmp_path / "trace.jsonl").read_text().splitlines())


def test_a_kafka_python_stall_is_told_from_a_member_left_unanswered():
    """The attribution above excuses only what the client's own log shows."""
    log = CoordinatorLog("cX")
    log.close()
    assert log.stalled_after_sync() is None  # never synced: not the client's doing
    log.lines = ["Received SyncGroup response: SyncGroupResponse(version=5, error_code=27, ...)"]
    assert log.stalled_after_sync() is None  # an error answer: the broker said no
    log.lines = ["Received SyncGroup response: SyncGroupResponse(version=5, error_code=0, ...)",
                 "Enabling heartbeat", "Setting newly assigned partitions set() for group two"]
    assert log.stalled_after_sync() is None  # applied: whatever happened next is not this stall
    log.lines = log.lines[:1] + ["Sending JoinGroup (...)"] + log.lines[:1]
    assert log.stalled_after_sync() == log.lines[-1]  # the last SyncGroup answer, then nothing
