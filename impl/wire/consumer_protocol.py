"""``ConsumerProtocol``: the bytes inside JoinGroup protocol metadata (a :class:`Subscription`)
and SyncGroup assignments (an :class:`Assignment`), through kio's ``ConsumerProtocolSubscription``
and ``ConsumerProtocolAssignment`` schemas (v0-3).

The bytes are an int16 version followed by the data at that version
(``MessageUtil.toVersionPrefixedByteBuffer``).  As in Kafka's ``ConsumerProtocol``:

* we write version 3 (the highest); a version above 3 is read as 3 (the later fields are
  appended, so the known prefix parses — forward compatibility), a negative one is an error;
* an empty rack id reads as ``None``;
* owned / assigned partitions are grouped by topic.  Unlike Kafka we do not sort topics or
  partitions first: consecutive partitions of one topic form one group, so a value round-trips
  exactly, order included (the consumer's assignors decide the order).

Decoded values remember their bytes (``wire``), and :func:`encode_subscription` /
:func:`encode_assignment` re-send them verbatim: a broker echoes each member's metadata to the
leader, and each assignment to its member, byte for byte, as Kafka does.
"""

from __future__ import annotations

import io
import struct
from typing import List, Optional, Tuple

from kio.schema.consumer_protocol_assignment.v3 import data as _a3
from kio.schema.consumer_protocol_subscription import v0 as _s0, v1 as _s1, v2 as _s2, v3 as _s3
from kio.serial import entity_reader, entity_writer

from impl.protocol import Assignment, Subscription, TopicPartition

_VERSION = struct.Struct(">h")
_INT32 = struct.Struct(">i")
HIGHEST_VERSION = 3

_SUB_CLASSES = (_s0.ConsumerProtocolSubscription, _s1.ConsumerProtocolSubscription,
                _s2.ConsumerProtocolSubscription, _s3.ConsumerProtocolSubscription)
_SUB_READERS = tuple(entity_reader(c) for c in _SUB_CLASSES)
_SUB3 = _s3.ConsumerProtocolSubscription
_SUB3_TP = _s3.data.TopicPartition
_SUB3_WRITE = entity_writer(_SUB3)
# Assignment v0-3 share one schema (the versions only mark cooperative rebalancing).
_ASG = _a3.ConsumerProtocolAssignment
_ASG_TP = _a3.TopicPartition
_ASG_READ = entity_reader(_ASG)
_ASG_WRITE = entity_writer(_ASG)
_V3_PREFIX = _VERSION.pack(HIGHEST_VERSION)


class ConsumerProtocolError(ValueError):
    """The bytes are not a ConsumerProtocol subscription/assignment (internal to :mod:`impl.wire`)."""


def _group(tps, cls) -> tuple:
    """Consecutive partitions of one topic as one ``cls(topic, partitions)``."""
    out: List = []
    topic: Optional[str] = None
    parts: List[int] = []
    for tp in tps:
        if tp[0] != topic:
            if topic is not None:
                out.append(cls(topic=topic, partitions=tuple(parts)))
            topic, parts = tp[0], []
        parts.append(tp[1])
    if topic is not None:
        out.append(cls(topic=topic, partitions=tuple(parts)))
    return tuple(out)


def _flatten(groups) -> List[TopicPartition]:
    return [TopicPartition(g.topic, p) for g in groups for p in g.partitions]


def _version(data: bytes) -> Tuple[int, int]:
    if len(data) < 2:
        raise ConsumerProtocolError("Buffer underflow while parsing consumer protocol's header")
    version = _VERSION.unpack_from(data, 0)[0]
    if version < 0:
        raise ConsumerProtocolError("Unsupported version: %d" % version)
    return min(version, HIGHEST_VERSION), version


def _string(out: bytearray, s: Optional[str]) -> None:
    if s is None:
        out += b"\xff\xff"
        return
    raw = s.encode("utf-8")
    out += _VERSION.pack(len(raw))
    out += raw


def _nullable_bytes(out: bytearray, b: Optional[bytes]) -> None:
    if b is None:
        out += b"\xff\xff\xff\xff"
    else:
        out += _INT32.pack(len(b))
        out += b


def _topic_partitions(out: bytearray, tps) -> None:
    groups = _group(tps, _Group)
    out += _INT32.pack(len(groups))
    for g in groups:
        _string(out, g.topic)
        out += _INT32.pack(len(g.partitions))
        for p in g.partitions:
            out += _INT32.pack(p)


class _Group:
    __slots__ = ("topic", "partitions")

    def __init__(self, topic: str, partitions: tuple) -> None:
        self.topic, self.partitions = topic, partitions


def encode_subscription(subscription: Subscription) -> bytes:
    """The bytes of *subscription* (its ``wire`` bytes if it was decoded, else version 3).

    Written here with ``struct`` (the schema is four non-flexible fields; kio's Python writer
    took most of a JoinGroup's encoding time); the tests hold it byte-equal to kio's writer
    (:func:`encode_subscription_kio`) and to kafka-python's."""
    if subscription.wire is not None:
        return subscription.wire
    out = bytearray(_V3_PREFIX)
    topics = subscription.topics
    out += _INT32.pack(len(topics))
    for t in topics:
        _string(out, t)
    _nullable_bytes(out, subscription.user_data)
    _topic_partitions(out, subscription.owned_partitions)
    out += _INT32.pack(subscription.generation_id)
    _string(out, subscription.rack_id)
    return bytes(out)


def encode_subscription_kio(subscription: Subscription) -> bytes:
    """Version 3 bytes of *subscription* through kio's writer (the reference for the tests)."""
    buf = io.BytesIO()
    buf.write(_V3_PREFIX)
    _SUB3_WRITE(buf, _SUB3(topics=tuple(subscription.topics), user_data=subscription.user_data,
                           owned_partitions=_group(subscription.owned_partitions, _SUB3_TP),
                           generation_id=subscription.generation_id, rack_id=subscription.rack_id))
    return buf.getvalue()


def decode_subscription(data: bytes) -> Subscription:
    """The :class:`Subscription` in *data*; raises :class:`ConsumerProtocolError` (or a kio
    decode error) if it is not one."""
    version, _ = _version(data)
    d, _size = _SUB_READERS[version](data, 2)
    rack = getattr(d, "rack_id", None)
    return Subscription(
        topics=list(d.topics), user_data=d.user_data,
        owned_partitions=_flatten(d.owned_partitions) if version >= 1 else [],
        generation_id=d.generation_id if version >= 2 else -1,
        rack_id=rack if rack else None, wire=bytes(data))


def encode_assignment(assignment: Assignment) -> bytes:
    """The bytes of *assignment* (its ``wire`` bytes if it was decoded, else version 3), written
    with ``struct`` like :func:`encode_subscription`."""
    if assignment.wire is not None:
        return assignment.wire
    out = bytearray(_V3_PREFIX)
    _topic_partitions(out, assignment.partitions)
    _nullable_bytes(out, assignment.user_data)
    return bytes(out)


def encode_assignment_kio(assignment: Assignment) -> bytes:
    """Version 3 bytes of *assignment* through kio's writer (the reference for the tests)."""
    buf = io.BytesIO()
    buf.write(_V3_PREFIX)
    _ASG_WRITE(buf, _ASG(assigned_partitions=_group(assignment.partitions, _ASG_TP),
                         user_data=assignment.user_data))
    return buf.getvalue()


def decode_assignment(data: bytes) -> Assignment:
    """The :class:`Assignment` in *data*; raises if it is not one."""
    _version(data)
    d, _size = _ASG_READ(data, 2)
    return Assignment(partitions=_flatten(d.assigned_partitions), user_data=d.user_data, wire=bytes(data))
