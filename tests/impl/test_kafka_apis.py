"""What ``groupcheck broker`` answers beyond the simulated broker, in-process (no sockets): the
in-memory log (impl/server/log.py), Produce/Fetch/ListOffsets with the fetch purgatory,
FindCoordinator batches, DescribeGroups/ListGroups (impl/server/kafka_apis.py) and the kio
builder (impl/wire/build.py)."""

import datetime

import pytest

from impl import protocol as P
from impl.server.cluster import Cluster
from impl.server.kafka_apis import WIRE_API_VERSIONS, KafkaApis
from impl.server.log import InvalidRecordBatch, LogManager, PartitionLog
from impl.time import MockTime
from impl.wire import decode_response, encode_response_as
from impl.wire.apis import REQUEST, RESPONSE, kio_class
from impl.wire.build import build, to_plain
from tests.helpers.records import batch
from tests.helpers.records import offsets_and_values as offsets_in

kafka = pytest.importorskip("kafka")


def test_the_log_assigns_offsets_by_rewriting_each_batchs_base_offset():
    log = PartitionLog("t", 0)
    assert log.append(batch(b"a", b"b")) == 0
    assert log.append(batch(b"c") + batch(b"d", b"e")) == 2
    assert log.log_end_offset == log.high_watermark == 5
    assert offsets_in(log.read(0, 1 << 20)) == [(0, b"a"), (1, b"b"), (2, b"c"), (3, b"d"), (4, b"e")]
    assert offsets_in(log.read(3, 1 << 20)) == [(3, b"d"), (4, b"e")]  # the batch holding offset 3
    assert offsets_in(log.read(0, 1)) == [(0, b"a"), (1, b"b")]  # at least one batch, even over the limit
    assert log.read(5, 1 << 20) == b""


@pytest.mark.parametrize("bad", ["short header", "cut batch", "magic 1"])
def test_bytes_that_are_not_whole_v2_batches_are_refused(bad):
    data = {"short header": b"\0" * 10, "cut batch": batch(b"x")[:-3],
            "magic 1": bytes(16) + b"\x01" + bytes(60)}[bad]
    with pytest.raises(InvalidRecordBatch):
        PartitionLog("t", 0).append(data)


def apis(brokers=1, topics=None):
    cluster = Cluster(brokers, offsets_partitions=5, topics=topics if topics is not None else {"t": 2}, time=MockTime())
    return KafkaApis(cluster, LogManager(3))


def call(a, api, version, values, broker_id=0, owner=None):
    body = build(kio_class(api, version, REQUEST), values)
    answers = []
    a.handle(broker_id, api, version, body, "client", "/127.0.0.1", answers.append, owner)
    return answers


def produce(a, topic, partition, records, acks=-1, version=9):
    return call(a, "Produce", version, {"transactional_id": None, "acks": acks, "timeout": 1000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": records}]}]})


def fetch_values(max_wait=0, offset=0, topic="t", partition=0, version=12):
    return {"replica_id": -1, "max_wait": max_wait, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "topics": [{"topic": topic, "partitions": [
                {"partition": partition, "fetch_offset": offset, "partition_max_bytes": 1 << 20,
                 "current_leader_epoch": -1, "log_start_offset": -1, "last_fetched_epoch": -1}]}],
            "forgotten_topics_data": (), "rack_id": ""}


def test_produce_answers_base_offsets_and_acks_0_answers_nothing():
    a = apis()
    (first,) = produce(a, "t", 1, batch(b"a", b"b"))
    (second,) = produce(a, "t", 1, batch(b"c"))
    assert [(p.index, p.error_code.value, p.base_offset) for r in (first, second) for t in r.responses
            for p in t.partition_responses] == [(1, 0, 0), (1, 0, 2)]
    assert produce(a, "t", 1, batch(b"d"), acks=0) == [None]
    (unknown,) = produce(a, "t", 7, batch(b"x"))
    assert unknown.responses[0].partition_responses[0].error_code.value == 3  # UNKNOWN_TOPIC_OR_PARTITION
    (corrupt,) = produce(a, "t", 0, b"\0" * 20)
    assert corrupt.responses[0].partition_responses[0].error_code.value == 2  # CORRUPT_MESSAGE
    (auto,) = produce(a, "new-topic", 2, batch(b"y"))  # auto.create.topics.enable, num.partitions = 3
    assert auto.responses[0].partition_responses[0].error_code.value == 0
    assert a.cluster.num_partitions("new-topic") == 3 and a.logs.partitions("new-topic") == 3


def test_a_fetch_with_nothing_to_read_waits_for_a_produce_or_its_max_wait():
    a = apis()
    owner = object()
    assert call(a, "Fetch", 12, fetch_values(max_wait=500), owner=owner) == []  # parked
    assert a.next_deadline() == a.cluster.time.milliseconds() + 500
    waiting = a._delayed_fetches[0]
    answers = []
    waiting.respond = answers.append
    produce(a, "t", 0, batch(b"a"))
    (response,) = answers
    partition = response.responses[0].partitions[0]
    assert partition.high_watermark == 1 and offsets_in(partition.records) == [(0, b"a")]
    # nothing new: parked until max_wait, then answered empty
    assert call(a, "Fetch", 12, fetch_values(max_wait=500, offset=1)) == []
    late = []
    a._delayed_fetches[0].respond = late.append
    a.expire(a.cluster.time.milliseconds() + 499)
    assert late == []
    a.expire(a.cluster.time.milliseconds() + 500)
    assert len(late) == 1 and late[0].responses[0].partitions[0].records in (b"", None)
    # a closed connection's waiting fetch is forgotten
    assert call(a, "Fetch", 12, fetch_values(max_wait=500, offset=1), owner=owner) == []
    a.drop_waiting(owner)
    assert a.next_deadline() is None
    (out_of_range,) = call(a, "Fetch", 12, fetch_values(offset=9))
    assert out_of_range.responses[0].partitions[0].error_code.value == 1  # OFFSET_OUT_OF_RANGE


def test_list_offsets_earliest_and_latest():
    a = apis()
    produce(a, "t", 0, batch(b"a", b"b", b"c"))
    (response,) = call(a, "ListOffsets", 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": ts}
                                     for ts in (-2, -1)]}]})
    assert [p.offset for p in response.topics[0].partitions] == [0, 3]


def test_find_coordinator_v4_answers_every_key_of_the_batch_and_v3_the_flat_fields():
    a = apis(brokers=3)
    for b in range(3):
        a.cluster.set_listener(b, "127.0.0.1", 9000 + b)
    answers = []
    a.handle(0, "FindCoordinator", 4, P.FindCoordinatorRequestData(key="", coordinator_keys=["g1", "g2", "g3"]),
             "c", "/h", answers.append)
    (response,) = answers
    expected = [(k, a.cluster.coordinator_for(k), 9000 + a.cluster.coordinator_for(k)) for k in ("g1", "g2", "g3")]
    assert [(c.key, c.node_id, c.port) for c in response.coordinators] == expected
    frame = encode_response_as("FindCoordinator", 4, 1, response)  # and it is writable
    assert decode_response("FindCoordinator", 4, memoryview(frame)[4:]).body.coordinators[2].key == "g3"
    answers.clear()
    a.handle(0, "FindCoordinator", 3, P.FindCoordinatorRequestData(key="g2"), "c", "/h", answers.append)
    assert (answers[0].node_id, answers[0].port) == expected[1][1:]


def test_describe_and_list_groups_follow_the_coordinator():
    a = apis(brokers=2)
    coordinator = a.cluster.coordinator_for("grp")
    other = 1 - coordinator
    joined = []
    a.handle(coordinator, "JoinGroup", 5, P.JoinGroupRequestData(
        group_id="grp", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
        protocols=[P.JoinGroupRequestProtocol("range", P.Subscription(["t"]))]), "c", "/h", joined.append)
    assert joined[0].error_code == 79  # MEMBER_ID_REQUIRED
    (described,) = call(a, "DescribeGroups", 5, {"groups": ["grp", "nobody"], "include_authorized_operations": False},
                        broker_id=coordinator)
    assert [(g.group_id, g.error_code.value, g.group_state) for g in described.groups] == [
        ("grp", 0, "Empty"), ("nobody", 0, "Dead")]
    # from v6 on (KIP-1043) an unknown group is also GROUP_ID_NOT_FOUND, as Kafka 4.x answers
    # (GroupMetadataManager.describeGroups); found by conform broker describing a group not yet created
    (described,) = call(a, "DescribeGroups", 6, {"groups": ["grp", "nobody"], "include_authorized_operations": False},
                        broker_id=coordinator)
    assert [(g.group_id, g.error_code.value, g.group_state) for g in described.groups] == [
        ("grp", 0, "Empty"), ("nobody", 69, "Dead")]
    (elsewhere,) = call(a, "DescribeGroups", 5, {"groups": ["grp"], "include_authorized_operations": False},
                        broker_id=other)
    assert elsewhere.groups[0].error_code.value == 16  # NOT_COORDINATOR
    (listed,) = call(a, "ListGroups", 4, {"states_filter": ()}, broker_id=coordinator)
    assert [(g.group_id, g.group_state) for g in listed.groups] == [("grp", "Empty")]
    (filtered,) = call(a, "ListGroups", 4, {"states_filter": ("Stable",)}, broker_id=coordinator)
    assert filtered.groups == ()


def test_api_versions_advertise_the_wire_versions():
    a = apis()
    (response,) = call(a, "ApiVersions", 3, {"client_software_name": "x", "client_software_version": "1"})
    assert {v.api_key: (v.min_version, v.max_version) for v in response.api_keys} == WIRE_API_VERSIONS
    assert WIRE_API_VERSIONS["Fetch"][1] == 12 and WIRE_API_VERSIONS["Produce"][1] == 12


def test_build_fills_a_versions_fields_and_to_plain_makes_json():
    cls = kio_class("Heartbeat", 0, RESPONSE)
    obj = build(cls, {"error_code": 27, "throttle_time_ms": 5})  # v0 has no throttle time: ignored
    assert obj.error_code.value == 27
    with pytest.raises(TypeError, match="no value for 'error_code'"):
        build(cls, {})
    produced = build(kio_class("Produce", 9, RESPONSE), {"throttle_time": 7, "responses": [
        {"name": "t", "partition_responses": [{"index": 0, "error_code": 0, "base_offset": 4, "record_errors": ()}]}]})
    assert produced.throttle_time == datetime.timedelta(milliseconds=7)
    assert to_plain(produced)["responses"][0]["partition_responses"][0]["base_offset"] == 4
    assert to_plain(produced)["throttle_time"] == 7
    assert to_plain(b"\x01\x02") == "0102" and to_plain(b"x" * 100) == {"bytes": 100}


def test_metadata_of_every_topic_ends_with_the_offsets_topic_and_follows_crashes():
    """``__consumer_offsets`` is built only when asked for (a consumer names its own topics), yet
    a request for every topic, or for it by name, gets all its partitions, each led as the cluster
    is now: a crash after the last look is seen (the answer is not one cached before it)."""
    cluster = Cluster(num_brokers=3, offsets_partitions=5, topics={"t": 2})
    assert [t.name for t in cluster.topic_metadata(["t"])] == ["t"]
    names = [t.name for t in cluster.topic_metadata(None)]
    assert names == ["t", "__consumer_offsets"]
    offsets = cluster.topic_metadata(["__consumer_offsets"])[0]
    assert offsets.is_internal and [p.leader_id for p in offsets.partitions] == [0, 1, 2, 0, 1]
    cluster.crash(1)
    offsets = cluster.topic_metadata(["__consumer_offsets"])[0]
    assert [p.partition_index for p in offsets.partitions] == [0, 1, 2, 3, 4]
    assert all(1 not in p.isr_nodes for p in offsets.partitions)
    assert [t.name for t in cluster.topic_metadata(None)] == ["t", "__consumer_offsets"]
