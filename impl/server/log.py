"""In-memory partition logs for ``groupcheck broker``: enough of Kafka's log for real consumers to
consume real messages (Produce, Fetch, ListOffsets).

A partition's log is a list of record batches kept as the producer sent them (magic v2 bytes),
each with its base offset rewritten to the next offset the log assigns, as Kafka's
``LogValidator`` does (the base offset lies before the batch's CRC, which covers the attributes
onwards, so rewriting it keeps the batch valid). The log end offset advances by each batch's
``lastOffsetDelta + 1``; the high watermark is the log end offset (one replica, acks=all is
acks=1). Nothing is ever deleted: the log start offset stays 0.

Idempotent producers are checked as Kafka's ``UnifiedLog.append`` does: each partition keeps a
:class:`~impl.server.producer_state.ProducerStateManager`; a batch with a producer id must carry
its producer's next sequence in an epoch no older than the last (else the whole append is refused
with the error :class:`~impl.server.producer_state.ProducerStateError` carries), and a batch that
repeats one of its producer's last five is not written again: the append answers the first
offset it was written at.

Not modelled: compression is passed through untouched, transactions (no transactional batch gets
here: see :mod:`impl.server.kafka_apis`), timestamps (ListOffsets by timestamp answers the log
end), retention, segments.
"""

from __future__ import annotations

import bisect
import struct
from typing import Dict, List, Optional, Tuple

from impl.server.producer_state import RECORD_BATCH_OVERHEAD, BatchHeader, ProducerStateManager, read_header

__all__ = ["InvalidRecordBatch", "LogManager", "PartitionLog", "EARLIEST_TIMESTAMP", "LATEST_TIMESTAMP",
           "batch_headers", "split_batches"]

#: ``ListOffsetsRequest.EARLIEST_TIMESTAMP`` / ``LATEST_TIMESTAMP``.
EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1

_LOG_OVERHEAD = 12  # baseOffset + batchLength


class InvalidRecordBatch(ValueError):
    """Bytes that are not a sequence of whole v2 record batches (Kafka: CORRUPT_MESSAGE)."""


def batch_headers(records: bytes) -> List[Tuple[int, BatchHeader]]:
    """``(start, header)`` of each batch in *records*; raises :class:`InvalidRecordBatch` unless
    they are whole v2 batches of at least ``RECORD_BATCH_OVERHEAD`` (61) bytes each, as
    ``DefaultRecordBatch.ensureValid`` requires."""
    out = []
    offset, n = 0, len(records)
    while offset < n:
        if n - offset < RECORD_BATCH_OVERHEAD:
            raise InvalidRecordBatch(f"a batch header needs {RECORD_BATCH_OVERHEAD} bytes, {n - offset} left at {offset}")
        header = read_header(records, offset)
        if header.magic != 2:
            raise InvalidRecordBatch(f"record batch magic {header.magic} at {offset}: only v2 batches are kept")
        end = offset + _LOG_OVERHEAD + header.length
        if header.length < RECORD_BATCH_OVERHEAD - _LOG_OVERHEAD or end > n or header.last_offset_delta < 0:
            raise InvalidRecordBatch(f"batch length {header.length} at {offset} does not fit the {n} bytes sent")
        out.append((offset, header))
        offset = end
    return out


def split_batches(records: bytes) -> List[Tuple[int, int]]:
    """``(start, record count)`` of each batch in *records*; raises :class:`InvalidRecordBatch`."""
    return [(start, header.last_offset_delta + 1) for start, header in batch_headers(records)]


class PartitionLog:
    """One partition: batches with their base offsets, in offset order."""

    __slots__ = ("topic", "partition", "_bases", "_batches", "log_end_offset", "size_in_bytes", "producer_state")

    def __init__(self, topic: str, partition: int) -> None:
        self.topic = topic
        self.partition = partition
        self._bases: List[int] = []
        self._batches: List[bytes] = []
        self.log_end_offset = 0
        self.size_in_bytes = 0
        self.producer_state = ProducerStateManager(f"{topic}-{partition}")

    @property
    def log_start_offset(self) -> int:
        return 0

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset

    def append(self, records: bytes) -> int:
        """Append the batches in *records* (``UnifiedLog.appendAsLeader``); return the first offset.

        The producer state is checked first (``analyzeAndValidateProducerState``): a refused batch
        raises :class:`~impl.server.producer_state.ProducerStateError` and nothing is written; a
        duplicate of a retained batch writes nothing and returns that batch's first offset."""
        first = self.log_end_offset
        spans = batch_headers(records)
        offsets, next_offset = [], first
        for _, header in spans:
            offsets.append((header, next_offset))
            next_offset += header.last_offset_delta + 1
        updated, duplicate = self.producer_state.analyze(offsets)
        if duplicate is not None:
            return duplicate.first_offset
        for start, header in spans:
            batch = bytearray(records[start:start + _LOG_OVERHEAD + header.length])
            struct.pack_into(">q", batch, 0, self.log_end_offset)
            self._bases.append(self.log_end_offset)
            self._batches.append(bytes(batch))
            self.log_end_offset += header.last_offset_delta + 1
            self.size_in_bytes += len(batch)
        self.producer_state.update(updated)
        return first

    def read(self, fetch_offset: int, max_bytes: int) -> bytes:
        """Whole batches from the one containing *fetch_offset*, up to *max_bytes* (at least one
        batch when there is one, as Kafka returns a first batch larger than the limit)."""
        if fetch_offset >= self.log_end_offset:
            return b""
        index = max(0, bisect.bisect_right(self._bases, fetch_offset) - 1)
        out, size = [], 0
        for batch in self._batches[index:]:
            if out and size + len(batch) > max_bytes:
                break
            out.append(batch)
            size += len(batch)
        return b"".join(out)

    def offset_for_timestamp(self, timestamp: int) -> int:
        return self.log_start_offset if timestamp == EARLIEST_TIMESTAMP else self.log_end_offset


class LogManager:
    """The topics of ``groupcheck broker`` (name -> partition logs), created explicitly or on first
    use (Kafka's ``auto.create.topics.enable`` with ``num.partitions``)."""

    __slots__ = ("default_partitions", "auto_create", "logs")

    def __init__(self, default_partitions: int, auto_create: bool = True) -> None:
        self.default_partitions = default_partitions
        self.auto_create = auto_create
        self.logs: Dict[str, List[PartitionLog]] = {}

    def create(self, topic: str, partitions: Optional[int] = None) -> List[PartitionLog]:
        count = self.default_partitions if partitions is None else partitions
        logs = self.logs.get(topic)
        if logs is None:
            logs = self.logs[topic] = [PartitionLog(topic, p) for p in range(count)]
        return logs

    def partitions(self, topic: str) -> Optional[int]:
        logs = self.logs.get(topic)
        return None if logs is None else len(logs)

    def get(self, topic: str, partition: int) -> Optional[PartitionLog]:
        logs = self.logs.get(topic)
        if logs is None or not 0 <= partition < len(logs):
            return None
        return logs[partition]
