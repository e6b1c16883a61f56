"""Default (idempotent) producers on ``groupcheck broker`` over loopback: kafka-python 3's
``KafkaProducer()`` as it comes (idempotence on, acks=all: InitProducerId, then sequenced batches)
writes records that a group of default kafka-python consumers reads, every record exactly once;
librdkafka's producer with ``enable.idempotence=true`` writes each record once, at consecutive
offsets; Kafka's own Java ``KafkaProducer`` with its defaults (``java/consumer/GroupcheckProducer.java``,
kafka-clients from Maven Central, as ``--client java``) writes each record once, and a default
kafka-python group reads them back.

Every test starts its own broker (properties/live/launch.py) and stops it; every wait is bounded.
"""

import json
import shutil
import subprocess
import threading
import time

import pytest

from properties.live.launch import launch_groupcheck_broker
from tests.helpers.kafka_python_log import CoordinatorLog

kafka = pytest.importorskip("kafka")

RECORDS = 300
PARTITIONS = 4


def _wait(condition, seconds, what, detail=lambda: ""):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}\n{detail()}"
        time.sleep(0.05)


class DefaultConsumer:
    """A kafka-python consumer with its defaults (group, earliest, nothing else set), polling on a
    thread of its own."""

    def __init__(self, bootstrap, group, topic, name, seen, lock):
        from kafka import KafkaConsumer

        self.log = CoordinatorLog(name)
        self.consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, client_id=name,
                                      auto_offset_reset="earliest")
        self.name, self.seen, self.lock = name, seen, lock
        self.duplicates, self.assignment, self.error, self.stopping = [], set(), None, False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        try:
            while not self.stopping:
                for records in self.consumer.poll(timeout_ms=100).values():
                    with self.lock:
                        for r in records:
                            key = (r.partition, r.offset)
                            if key in self.seen:
                                self.duplicates.append((key, self.seen[key][0], r.value))
                            self.seen[key] = (self.name, r.value)
                self.assignment = set(self.consumer.assignment())
        except Exception as e:  # kept for the failure message
            self.error = f"{type(e).__name__}: {e}"
        finally:
            self.consumer.close(timeout_ms=10000)

    def stop(self):
        self.stopping = True
        self.thread.join(timeout=30)
        self.log.close()


def _a_default_group_reads_each_record_once(bootstrap, topic, sent):
    """Three default kafka-python consumers in one group read *topic* until they have read
    ``len(sent)`` records (60 s at most): exactly *sent* ({(partition, offset): value}), no record
    twice, and more than one member read some."""
    records = len(sent)
    seen, lock = {}, threading.Lock()
    members = [DefaultConsumer(bootstrap, "readers", topic, f"c{i}", seen, lock) for i in range(3)]
    try:
        deadline = time.monotonic() + 60
        while len(seen) < records and time.monotonic() < deadline and not any(m.error for m in members):
            time.sleep(0.05)
        if len(seen) < records:
            stalled = [(m.name, m.log.stalled_after_sync()) for m in members if not m.assignment]
            if stalled and all(evidence for _, evidence in stalled):
                # kafka-python's fault, shown by its own log (see tests/live/test_broker.py)
                pytest.xfail("kafka-python stalled after a successful SyncGroup answer: "
                             + "; ".join(f"{name}: {evidence}" for name, evidence in stalled))
        assert [m.error for m in members] == [None, None, None]
        assert len(seen) == records, (f"{len(seen)} of {records} records read in 60 s; assignments: "
                                      + str({m.name: sorted(tp.partition for tp in m.assignment) for m in members}))
        assert {key: value for key, (_, value) in seen.items()} == sent
        assert [m.duplicates for m in members] == [[], [], []]
        readers = {name for name, _ in seen.values()}
        assert len(readers) >= 2, f"one member read everything: {readers}"  # a group, not one consumer
    finally:
        for m in members:
            m.stop()


def _each_written_once(bootstrap: str, topic: str, delivered) -> None:
    """The (partition, offset) of every delivered record are consecutive from 0 in each partition
    (nothing written twice, nothing skipped), and the broker's end offsets are those counts."""
    from kafka import KafkaConsumer, TopicPartition

    counts = {}
    for p in range(PARTITIONS):
        offsets = sorted(o for q, o in delivered if q == p)
        assert offsets == list(range(len(offsets)))
        counts[p] = len(offsets)
    reader = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        ends = reader.end_offsets([TopicPartition(topic, p) for p in range(PARTITIONS)])
    finally:
        reader.close()
    assert {tp.partition: end for tp, end in ends.items()} == counts


def test_a_default_kafka_python_producer_writes_and_a_default_group_reads_every_record_once():
    from kafka import KafkaProducer

    with launch_groupcheck_broker(brokers=1, partitions=PARTITIONS, topics={"orders": PARTITIONS}) as broker:
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap)  # idempotent by default (KIP-679)
        try:
            assert producer.config["enable_idempotence"] is True
            futures = [producer.send("orders", key=str(i).encode(), value=f"m{i}".encode()) for i in range(RECORDS)]
            producer.flush(timeout=30)
            sent = {}
            for i, f in enumerate(futures):
                metadata = f.get(timeout=5)  # raises if the send failed (before: "does not support InitProducerIdRequest")
                sent[(metadata.partition, metadata.offset)] = f"m{i}".encode()
            producer_id = producer._transaction_manager.producer_id_and_epoch.producer_id
        finally:
            producer.close(timeout=10)
        assert producer_id >= 0, "the producer never got a producer id"
        assert len(sent) == RECORDS and {p for p, _ in sent} == set(range(PARTITIONS))
        for p in range(PARTITIONS):  # consecutive offsets from 0 in each partition: nothing written twice
            offsets = sorted(o for q, o in sent if q == p)
            assert offsets == list(range(len(offsets)))

        _a_default_group_reads_each_record_once(broker.bootstrap, "orders", sent)


def test_librdkafka_idempotent_producer_writes_each_record_once():
    confluent_kafka = pytest.importorskip("confluent_kafka")

    with launch_groupcheck_broker(brokers=1, partitions=PARTITIONS, topics={"events": PARTITIONS}) as broker:
        producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True,
                                             "message.timeout.ms": 30000})
        delivered, errors = [], []

        def on_delivery(err, msg):
            (errors if err is not None else delivered).append(
                err if err is not None else (msg.partition(), msg.offset(), msg.value()))

        try:
            for i in range(RECORDS):
                producer.produce("events", key=str(i).encode(), value=f"e{i}".encode(), on_delivery=on_delivery)
                producer.poll(0)
            left = producer.flush(30)
        finally:
            producer.close()  # flushes what is left (nothing after a flush that returned 0)
        assert (left, errors) == (0, [])
        assert len(delivered) == RECORDS
        assert sorted(v for _, _, v in delivered) == sorted(f"e{i}".encode() for i in range(RECORDS))
        _each_written_once(broker.bootstrap, "events", [(q, o) for q, o, _ in delivered])


JAVA_RECORDS = 200
JAVA_FLUSH_EVERY = 25  # eight rounds: each partition gets eight or more batches, sequences well past 0


def test_a_default_java_producer_writes_each_record_once_and_a_default_group_reads_them(tmp_path):
    """Kafka's own KafkaProducer as it comes (kafka-clients 4.1.2: idempotence on, acks=all; only the
    servers and the serializers set): one InitProducerId, then sequenced batches, every record
    delivered once at consecutive offsets, the broker's end offsets the counts, and a default
    kafka-python group reads exactly those records."""
    from properties.clients.runners import java
    from properties.targets import JAVA_CLIENTS_VERSION

    missing = [program for program in ("java", "mvn") if shutil.which(program) is None]
    if missing:
        pytest.skip(f"Kafka's Java producer needs {' and '.join(missing)} on PATH (Java 17+, Maven)")
    command = java.prepare_producer(JAVA_CLIENTS_VERSION)  # resolved and compiled once into the cache
    trace = tmp_path / "trace.jsonl"
    with launch_groupcheck_broker(brokers=1, partitions=PARTITIONS, topics={"payments": PARTITIONS},
                                  trace=str(trace)) as broker:
        try:
            done = subprocess.run(command + java.producer_arguments(broker.bootstrap, "payments", JAVA_RECORDS, "p",
                                                                    JAVA_FLUSH_EVERY),
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90)
        except subprocess.TimeoutExpired as e:  # subprocess.run has killed the JVM
            pytest.fail(f"the Java producer did not finish in 90 s; it printed: {(e.stdout or b'')[-2000:]!r}")
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        said = f"exit {done.returncode}; stdout ends {done.stdout[-1500:]}; stderr ends {done.stderr[-1500:]}"
        assert [x for x in lines if x["event"] == "error"] == [], said
        assert done.returncode == 0 and lines[0]["event"] == "ready" and lines[-1] == dict(
            lines[-1], event="done", delivered=JAVA_RECORDS, errors=0), said
        assert lines[0]["version"] == JAVA_CLIENTS_VERSION
        delivered = [x for x in lines if x["event"] == "delivered"]
        assert sorted(x["index"] for x in delivered) == list(range(JAVA_RECORDS)), said
        assert all(x["value"] == f"p{x['index']}" for x in delivered)
        sent = {(x["partition"], x["offset"]): x["value"].encode() for x in delivered}
        assert len(sent) == JAVA_RECORDS and {p for p, _ in sent} == set(range(PARTITIONS))
        _each_written_once(broker.bootstrap, "payments", list(sent))

        _a_default_group_reads_each_record_once(broker.bootstrap, "payments", sent)

    # the defaults were in force: the producer asked for a producer id (only an idempotent one does)
    # and got one, and wrote with acks=all, every partition's answer without an error
    ours = [x for x in map(json.loads, trace.read_text().splitlines())
            if x.get("client_id", "").startswith("producer-") and x["direction"] in ("request", "response")]
    init = [x["body"] for x in ours if x["api"] == "InitProducerId"]
    assert len(init) == 2 and init[0]["transactional_id"] is None, init  # one request, one answer
    assert (init[1]["error_code"], init[1]["producer_epoch"]) == (0, 0) and init[1]["producer_id"] >= 0, init
    produce = [x["body"] for x in ours if x["api"] == "Produce"]
    assert produce and {b["acks"] for b in produce if "acks" in b} == {-1}
    answers = [r for b in produce if "responses" in b for t in b["responses"] for r in t["partition_responses"]]
    assert answers and {r["error_code"] for r in answers} == {0}
