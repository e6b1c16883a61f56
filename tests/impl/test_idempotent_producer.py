"""Idempotent producers on ``groupcheck broker``, in-process (no sockets): InitProducerId
(impl/server/kafka_apis.py) and the producer state each partition log keeps
(impl/server/producer_state.py), answered as Kafka 4 answers (``TransactionCoordinator.handleInitProducerId``,
``ProducerAppendInfo``, ``ProducerStateEntry``, ``UnifiedLog.analyzeAndValidateProducerState``).

Each sequence test asserts both the answer and what the log holds afterwards, so that taking a
check out (the duplicate lookup, the sequence or the epoch check) fails it."""

import pytest

from impl import protocol as P
from impl.server.cluster import Cluster
from impl.server.kafka_apis import WIRE_API_VERSIONS, KafkaApis
from impl.server.log import LogManager, PartitionLog
from impl.server.producer_state import (INVALID_PRODUCER_EPOCH, NUM_BATCHES_TO_RETAIN, OUT_OF_ORDER_SEQUENCE_NUMBER,
                                        ProducerStateError, last_sequence)
from impl.time import MockTime
from impl.wire import decode_response, encode_response_as
from impl.wire.apis import REQUEST, kio_class
from impl.wire.build import build
from tests.helpers.records import batch
from tests.helpers.records import offsets_and_values as values_in

kafka = pytest.importorskip("kafka")

NONE, INVALID_REQUEST, TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 0, 42, 53
INT_MAX = 2 ** 31 - 1


def apis(brokers=1):
    cluster = Cluster(brokers, offsets_partitions=5, topics={"t": 2}, time=MockTime())
    return KafkaApis(cluster, LogManager(3))


def call(a, api, version, values, broker_id=0):
    body = build(kio_class(api, version, REQUEST), values)
    answers = []
    a.handle(broker_id, api, version, body, "client", "/127.0.0.1", answers.append)
    return answers


def init_producer_id(a, version=4, transactional_id=None, producer_id=-1, epoch=-1):
    (response,) = call(a, "InitProducerId", version, {"transactional_id": transactional_id, "transaction_timeout": 60000,
                                                      "producer_id": producer_id, "producer_epoch": epoch})
    frame = encode_response_as("InitProducerId", version, 5, response)  # what goes on the wire, read back
    decoded = decode_response("InitProducerId", version, memoryview(frame)[4:]).body
    return decoded.error_code.value, decoded.producer_id, decoded.producer_epoch


def produce(a, records, partition=0, acks=-1, version=9, transactional_id=None):
    answers = call(a, "Produce", version, {"transactional_id": transactional_id, "acks": acks, "timeout": 1000,
                                           "topic_data": [{"name": "t", "partition_data": [
                                               {"index": partition, "records": records}]}]})
    if answers == [None]:
        return None
    (p,) = answers[0].responses[0].partition_responses
    return p.error_code.value, p.base_offset


# -- InitProducerId ----------------------------------------------------------------------------------------

def test_api_versions_advertise_init_producer_id_in_the_codecs_versions():
    assert WIRE_API_VERSIONS["InitProducerId"] == (0, 5)
    a = apis()
    (response,) = call(a, "ApiVersions", 3, {"client_software_name": "x", "client_software_version": "1"})
    assert {v.api_key: (v.min_version, v.max_version) for v in response.api_keys}["InitProducerId"] == (0, 5)


def test_init_producer_id_hands_out_new_ids_from_0_with_epoch_0_in_every_version():
    a = apis()
    assert [init_producer_id(a, version=v) for v in range(6)] == [(NONE, i, 0) for i in range(6)]
    b = apis()  # deterministic: another broker hands out the same ids
    assert init_producer_id(b) == (NONE, 0, 0)


def test_an_idempotent_producers_current_id_and_epoch_get_a_new_id_not_a_bumped_epoch():
    """KIP-360's request (v3+) with the producer's id and epoch: for a null transactional id Kafka
    "always blindly accept[s] the request and return[s] a new producerId"."""
    a = apis()
    assert init_producer_id(a) == (NONE, 0, 0)
    assert init_producer_id(a, version=3, producer_id=0, epoch=0) == (NONE, 1, 0)
    assert init_producer_id(a, version=5, producer_id=1, epoch=7) == (NONE, 2, 0)


@pytest.mark.parametrize("producer_id, epoch", [(-1, 0), (5, -1)])
def test_an_id_without_an_epoch_or_an_epoch_without_an_id_is_an_invalid_request(producer_id, epoch):
    a = apis()
    assert init_producer_id(a, version=4, producer_id=producer_id, epoch=epoch) == (INVALID_REQUEST, -1, -1)
    assert init_producer_id(a) == (NONE, 0, 0)  # no id was spent on it


@pytest.mark.parametrize("transactional_id", ["tx-1", ""])
def test_a_transactional_id_is_refused_as_unauthorized_in_every_version(transactional_id):
    a = apis()
    for version in range(6):
        assert init_producer_id(a, version, transactional_id=transactional_id) == (
            TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1, -1)
    assert init_producer_id(a) == (NONE, 0, 0)


@pytest.mark.parametrize("version", [3, 4])
def test_find_coordinator_for_a_transactional_id_is_refused_as_unauthorized(version):
    a = apis()
    a.cluster.set_listener(0, "127.0.0.1", 9000)
    answers = []
    request = P.FindCoordinatorRequestData(key="tx-1", key_type=P.CoordinatorType.TRANSACTION,
                                           coordinator_keys=["tx-1", "tx-2"] if version >= 4 else [])
    a.handle(0, "FindCoordinator", version, request, "c", "/h", answers.append)
    (response,) = answers
    frame = encode_response_as("FindCoordinator", version, 1, response)
    decoded = decode_response("FindCoordinator", version, memoryview(frame)[4:]).body
    if version < 4:
        assert (decoded.error_code, decoded.node_id) == (TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1)
    else:
        assert [(c.key, c.error_code, c.node_id) for c in decoded.coordinators] == [
            ("tx-1", TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1), ("tx-2", TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1)]


# -- sequence checks over Produce ---------------------------------------------------------------------------

def test_in_order_batches_are_appended_and_a_retried_batch_answers_its_first_offset_once_written():
    a = apis()
    _, pid, epoch = init_producer_id(a)
    first = batch(b"a", b"b", b"c", producer_id=pid, epoch=epoch, sequence=0)
    assert produce(a, first) == (NONE, 0)
    assert produce(a, batch(b"d", b"e", producer_id=pid, epoch=epoch, sequence=3)) == (NONE, 3)
    assert produce(a, first) == (NONE, 0)  # a retry of a written batch: its offset, NONE, not written again
    log = a.logs.get("t", 0)
    assert log.log_end_offset == 5
    assert values_in(log.read(0, 1 << 20)) == [(0, b"a"), (1, b"b"), (2, b"c"), (3, b"d"), (4, b"e")]
    assert produce(a, batch(b"f", producer_id=pid, epoch=epoch, sequence=5)) == (NONE, 5)  # the sequence goes on


def test_a_duplicate_is_found_among_the_last_five_batches_only():
    log = PartitionLog("t", 0)
    batches = [batch(b"v%d" % i, producer_id=7, epoch=0, sequence=i) for i in range(NUM_BATCHES_TO_RETAIN + 1)]
    assert [log.append(b) for b in batches] == list(range(6))
    assert log.append(batches[1]) == 1  # retained: its offset, nothing written
    assert log.append(batches[5]) == 5
    assert log.log_end_offset == 6
    with pytest.raises(ProducerStateError) as refused:  # batch 0 has left the five: an old sequence
        log.append(batches[0])
    assert refused.value.error_code == OUT_OF_ORDER_SEQUENCE_NUMBER
    assert log.log_end_offset == 6


def test_a_gap_in_the_sequence_is_out_of_order_and_nothing_is_written():
    a = apis()
    _, pid, epoch = init_producer_id(a)
    assert produce(a, batch(b"a", b"b", producer_id=pid, epoch=epoch, sequence=0)) == (NONE, 0)
    assert produce(a, batch(b"x", producer_id=pid, epoch=epoch, sequence=3)) == (OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert produce(a, batch(b"x", producer_id=pid, epoch=epoch, sequence=1)) == (OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert a.logs.get("t", 0).log_end_offset == 2
    assert produce(a, batch(b"c", producer_id=pid, epoch=epoch, sequence=2)) == (NONE, 2)


def test_a_bad_batch_refuses_the_whole_append():
    a = apis()
    _, pid, epoch = init_producer_id(a)
    assert produce(a, batch(b"a", producer_id=pid, epoch=epoch, sequence=0)) == (NONE, 0)
    both = batch(b"b", producer_id=pid, epoch=epoch, sequence=1) + batch(b"c", producer_id=pid, epoch=epoch, sequence=5)
    assert produce(a, both) == (OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert a.logs.get("t", 0).log_end_offset == 1  # not even the good first batch
    chained = batch(b"b", producer_id=pid, epoch=epoch, sequence=1) + batch(b"c", producer_id=pid, epoch=epoch, sequence=2)
    assert produce(a, chained) == (NONE, 1)  # the second batch follows the first of the same append
    assert a.logs.get("t", 0).log_end_offset == 3


def test_an_older_epoch_is_invalid_producer_epoch_and_a_new_epoch_starts_at_sequence_0():
    a = apis()
    pid = 3
    assert produce(a, batch(b"a", producer_id=pid, epoch=0, sequence=0)) == (NONE, 0)
    assert produce(a, batch(b"b", producer_id=pid, epoch=1, sequence=1)) == (OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert produce(a, batch(b"b", producer_id=pid, epoch=1, sequence=0)) == (NONE, 1)  # a bumped epoch
    for version in (3, 9, 12):  # INVALID_PRODUCER_EPOCH in every Produce version, never PRODUCER_FENCED
        assert produce(a, batch(b"z", producer_id=pid, epoch=0, sequence=1), version=version) == (
            INVALID_PRODUCER_EPOCH, -1)
    assert produce(a, batch(b"a", producer_id=pid, epoch=0, sequence=0)) == (INVALID_PRODUCER_EPOCH, -1)  # not a duplicate any more
    assert a.logs.get("t", 0).log_end_offset == 2


def test_a_producer_the_partition_does_not_know_is_accepted_at_any_sequence():
    """Kafka 2.5+ (KIP-360): no UNKNOWN_PRODUCER_ID; the first batch of an unknown producer starts
    its sequence wherever it is."""
    a = apis()
    assert produce(a, batch(b"a", producer_id=11, epoch=0, sequence=42)) == (NONE, 0)
    assert produce(a, batch(b"b", producer_id=11, epoch=0, sequence=44)) == (OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert produce(a, batch(b"b", producer_id=11, epoch=0, sequence=43)) == (NONE, 1)


def test_producers_and_partitions_keep_their_own_sequences():
    a = apis()
    one, two = init_producer_id(a)[1], init_producer_id(a)[1]
    assert produce(a, batch(b"a", producer_id=one, epoch=0, sequence=0)) == (NONE, 0)
    assert produce(a, batch(b"b", producer_id=two, epoch=0, sequence=0)) == (NONE, 1)  # not a duplicate of one's
    assert produce(a, batch(b"c", producer_id=one, epoch=0, sequence=0), partition=1) == (NONE, 0)
    assert produce(a, batch(b"d", producer_id=one, epoch=0, sequence=1)) == (NONE, 2)
    assert produce(a, batch(b"e", b"f")) == (NONE, 3)  # no producer id: never checked, never deduplicated
    assert produce(a, batch(b"e", b"f")) == (NONE, 5)


def test_sequences_wrap_after_int_max():
    assert last_sequence(INT_MAX - 1, 3) == 1 and last_sequence(5, 2) == 7 and last_sequence(-1, 4) == -1
    log = PartitionLog("t", 0)
    assert log.append(batch(b"a", b"b", producer_id=1, epoch=0, sequence=INT_MAX - 1)) == 0
    assert log.append(batch(b"c", producer_id=1, epoch=0, sequence=0)) == 2  # INT_MAX + 1 wraps to 0
    with pytest.raises(ProducerStateError):
        log.append(batch(b"d", producer_id=1, epoch=0, sequence=INT_MAX))


def test_transactional_batches_are_refused_on_every_partition_and_never_written():
    a = apis()
    records = batch(b"a", producer_id=0, epoch=0, sequence=0, transactional=True)
    (response,) = call(a, "Produce", 9, {"transactional_id": "tx", "acks": -1, "timeout": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": records},
                                         {"index": 1, "records": batch(b"b", producer_id=0, epoch=0, sequence=0)}]}]})
    assert [(p.index, p.error_code.value, p.base_offset) for p in response.responses[0].partition_responses] == [
        (0, TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1), (1, TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1)]
    assert produce(a, records, acks=0) is None  # acks=0: no answer, still nothing written
    assert [a.logs.get("t", p).log_end_offset for p in (0, 1)] == [0, 0]
