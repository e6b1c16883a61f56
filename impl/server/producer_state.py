"""Idempotent producers for ``groupcheck broker``: producer ids, and each partition's producer
state that keeps a retried batch from being written twice.

Kafka's pieces, as of Kafka 4 (``apache/kafka``):

* ``ProducerIdManager`` (``core/.../coordinator/transaction/ProducerIdManager.scala``) hands out
  ids from blocks the controller allocates (``ProducerIdControlManager``, blocks of
  ``ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE`` = 1000 starting at ``ProducerIdsBlock.EMPTY``'s next
  id 0). :class:`ProducerIdManager` is one counter from 0 for the whole cluster: ids are unique
  and deterministic (no wall clock, no hashing), as the first broker of a fresh Kafka cluster hands
  them out.
* ``ProducerStateEntry`` (``storage/.../log/ProducerStateEntry.java``): per producer id and
  partition, the producer's epoch and the metadata of its last ``NUM_BATCHES_TO_RETAIN`` = 5
  batches (first and last sequence, first and last offset); a batch of another epoch clears them
  (``maybeUpdateProducerEpoch``). ``findDuplicateBatch`` is a batch of the same epoch with exactly
  the sequence range of a retained one.
* ``ProducerAppendInfo`` (``storage/.../log/ProducerAppendInfo.java``) validates each batch of
  an append against that state, before anything is written:

  - ``checkProducerEpoch``: an epoch below the last seen one is ``InvalidProducerEpochException``
    (INVALID_PRODUCER_EPOCH, 47, in every Produce version: "Starting from 2.7, we replaced
    ProducerFenced error with InvalidProducerEpoch in the producer send response callback";
    before 2.7 ``ProducerFencedException`` itself had code 47, and PRODUCER_FENCED, 90, is never
    a Produce answer);
  - ``checkSequence``: a new epoch must start at sequence 0 (unless the producer is unknown);
    in the same epoch the first sequence must follow the last one (``inSequence``: last + 1, or 0
    after ``Integer.MAX_VALUE``), else ``OutOfOrderSequenceException``
    (OUT_OF_ORDER_SEQUENCE_NUMBER, 45). A producer the partition has no state for is accepted at
    any sequence ("If there is no current producer epoch ... accept writes with any sequence
    number"): since KIP-360 (Kafka 2.5) the broker no longer throws
    ``UnknownProducerIdException`` (UNKNOWN_PRODUCER_ID, 59) — no broker code of Kafka 4 does.
* ``UnifiedLog.analyzeAndValidateProducerState`` (``core/.../log/UnifiedLog.scala``): for a
  client's append, a batch that duplicates one of the last five of its producer answers with the
  duplicate's offsets and nothing is appended (``maybeDuplicate`` in ``UnifiedLog.append``): the
  client gets error NONE and the original base offset — DUPLICATE_SEQUENCE_NUMBER (46) is not
  sent. After a successful append ``ProducerStateManager.update`` folds the new batches into the
  entry (``ProducerStateEntry.update``: same epoch, add up to five; new epoch, start afresh).

Transactions are not modelled: ``groupcheck broker`` answers as a Kafka whose authorizer grants
no transactional id (see :mod:`impl.server.kafka_apis`), so no transactional batch reaches a log.
"""

from __future__ import annotations

import struct
from collections import deque
from typing import Deque, Dict, List, Optional, Tuple

__all__ = ["BatchHeader", "BatchMetadata", "ProducerIdManager", "ProducerStateEntry", "ProducerStateError",
           "ProducerStateManager", "NO_PRODUCER_ID", "NO_PRODUCER_EPOCH", "NO_SEQUENCE", "NUM_BATCHES_TO_RETAIN",
           "OUT_OF_ORDER_SEQUENCE_NUMBER", "INVALID_PRODUCER_EPOCH", "RECORD_BATCH_OVERHEAD", "read_header",
           "last_sequence"]

#: ``RecordBatch.NO_PRODUCER_ID`` / ``NO_PRODUCER_EPOCH`` / ``NO_SEQUENCE``.
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
#: ``ProducerStateEntry.NUM_BATCHES_TO_RETAIN``.
NUM_BATCHES_TO_RETAIN = 5
_INT_MAX = 2 ** 31 - 1

#: ``Errors`` codes of the two checks.
OUT_OF_ORDER_SEQUENCE_NUMBER = 45
INVALID_PRODUCER_EPOCH = 47

#: ``DefaultRecordBatch``'s header: baseOffset int64, batchLength int32, partitionLeaderEpoch
#: int32, magic int8, crc uint32, attributes int16, lastOffsetDelta int32, baseTimestamp int64,
#: maxTimestamp int64, producerId int64, producerEpoch int16, baseSequence int32, recordCount
#: int32 (``RECORD_BATCH_OVERHEAD`` = 61 bytes).
_BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
RECORD_BATCH_OVERHEAD = _BATCH_HEADER.size
_TRANSACTIONAL_FLAG = 0x10  # DefaultRecordBatch.TRANSACTIONAL_FLAG_MASK
_CONTROL_FLAG = 0x20  # DefaultRecordBatch.CONTROL_FLAG_MASK


class BatchHeader:
    """The fields of one v2 batch header that the log and the producer state read."""

    __slots__ = ("length", "magic", "attributes", "last_offset_delta", "producer_id", "producer_epoch",
                 "base_sequence")

    def __init__(self, length: int, magic: int, attributes: int, last_offset_delta: int, producer_id: int,
                 producer_epoch: int, base_sequence: int) -> None:
        self.length = length
        self.magic = magic
        self.attributes = attributes
        self.last_offset_delta = last_offset_delta
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence

    @property
    def has_producer_id(self) -> bool:
        """``RecordBatch.hasProducerId``: ``producerId > NO_PRODUCER_ID``."""
        return self.producer_id > NO_PRODUCER_ID

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & _TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & _CONTROL_FLAG)

    @property
    def last_sequence(self) -> int:
        return last_sequence(self.base_sequence, self.last_offset_delta)


def read_header(records: bytes, offset: int) -> BatchHeader:
    """The header of the batch at *offset* (the caller checked that 61 bytes are there)."""
    (_, length, _, magic, _, attributes, last_delta, _, _, producer_id, producer_epoch, base_sequence,
     _) = _BATCH_HEADER.unpack_from(records, offset)
    return BatchHeader(length, magic, attributes, last_delta, producer_id, producer_epoch, base_sequence)


def last_sequence(base_sequence: int, last_offset_delta: int) -> int:
    """``DefaultRecordBatch.lastSequence``: ``incrementSequence(baseSequence, lastOffsetDelta)``,
    wrapping past ``Integer.MAX_VALUE`` to 0; NO_SEQUENCE stays NO_SEQUENCE."""
    if base_sequence == NO_SEQUENCE:
        return NO_SEQUENCE
    if base_sequence > _INT_MAX - last_offset_delta:
        return (base_sequence - _INT_MAX) + last_offset_delta - 1
    return base_sequence + last_offset_delta


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    """``ProducerAppendInfo.inSequence``."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == _INT_MAX)


class ProducerStateError(Exception):
    """An append the producer state refuses; ``error_code`` is what the Produce answer carries."""

    def __init__(self, error_code: int, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code


class BatchMetadata:
    """``BatchMetadata``: one retained batch of a producer."""

    __slots__ = ("first_seq", "last_seq", "first_offset", "last_offset")

    def __init__(self, first_seq: int, last_seq: int, first_offset: int, last_offset: int) -> None:
        self.first_seq = first_seq
        self.last_seq = last_seq
        self.first_offset = first_offset
        self.last_offset = last_offset

    def __repr__(self) -> str:
        return "BatchMetadata(seq %d-%d, offsets %d-%d)" % (self.first_seq, self.last_seq, self.first_offset,
                                                             self.last_offset)


class ProducerStateEntry:
    """``ProducerStateEntry``: a producer's epoch and its last five batches on one partition."""

    __slots__ = ("producer_id", "producer_epoch", "batches")

    def __init__(self, producer_id: int, producer_epoch: int = NO_PRODUCER_EPOCH,
                 batches: Optional[List[BatchMetadata]] = None) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.batches: Deque[BatchMetadata] = deque(batches or (), maxlen=NUM_BATCHES_TO_RETAIN)

    def is_empty(self) -> bool:
        return not self.batches

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    def maybe_update_producer_epoch(self, producer_epoch: int) -> None:
        """A new epoch forgets the batches of the old one."""
        if self.producer_epoch != producer_epoch:
            self.batches.clear()
            self.producer_epoch = producer_epoch

    def add_batch(self, producer_epoch: int, metadata: BatchMetadata) -> None:
        self.maybe_update_producer_epoch(producer_epoch)
        self.batches.append(metadata)  # the deque drops the oldest beyond five (addBatchMetadata)

    def update(self, next_entry: "ProducerStateEntry") -> None:
        """``ProducerStateEntry.update``: fold an append's entry into this one."""
        self.maybe_update_producer_epoch(next_entry.producer_epoch)
        self.batches.extend(next_entry.batches)

    def find_duplicate_batch(self, header: BatchHeader) -> Optional[BatchMetadata]:
        """``findDuplicateBatch``: a retained batch of the same epoch and sequence range."""
        if header.producer_epoch != self.producer_epoch:
            return None
        first, last = header.base_sequence, header.last_sequence
        for metadata in self.batches:
            if metadata.first_seq == first and metadata.last_seq == last:
                return metadata
        return None


class _AppendInfo:
    """``ProducerAppendInfo``: one producer's batches in one append, checked against the state
    before the append (``current``) and the batches of this append already checked (``updated``)."""

    __slots__ = ("current", "updated", "topic_partition")

    def __init__(self, current: ProducerStateEntry, topic_partition: str) -> None:
        self.current = current
        # currentEntry.withProducerIdAndBatchMetadata(producerId, Optional.empty()): its epoch, no batches
        self.updated = ProducerStateEntry(current.producer_id, current.producer_epoch)
        self.topic_partition = topic_partition

    def append_data_batch(self, header: BatchHeader, first_offset: int) -> None:
        epoch, first_seq = header.producer_epoch, header.base_sequence
        self._check_producer_epoch(epoch, first_offset)
        self._check_sequence(epoch, first_seq, first_offset)
        self.updated.add_batch(epoch, BatchMetadata(first_seq, header.last_sequence, first_offset,
                                                    first_offset + header.last_offset_delta))

    def _check_producer_epoch(self, epoch: int, offset: int) -> None:
        if epoch < self.updated.producer_epoch:
            raise ProducerStateError(INVALID_PRODUCER_EPOCH, (
                "Epoch of producer %d at offset %d in %s is %d, which is smaller than the last seen epoch %d"
                % (self.current.producer_id, offset, self.topic_partition, epoch, self.updated.producer_epoch)))

    def _check_sequence(self, epoch: int, first_seq: int, offset: int) -> None:
        producer_id = self.current.producer_id
        if epoch != self.updated.producer_epoch:
            if first_seq != 0 and self.updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise ProducerStateError(OUT_OF_ORDER_SEQUENCE_NUMBER, (
                    "Invalid sequence number for new epoch of producer %d at offset %d in partition %s: "
                    "%d (request epoch), %d (seq. number), %d (current producer epoch)"
                    % (producer_id, offset, self.topic_partition, epoch, first_seq, self.updated.producer_epoch)))
            return
        if not self.updated.is_empty():
            current_last_seq = self.updated.last_seq
        elif epoch == self.current.producer_epoch:
            current_last_seq = self.current.last_seq
        else:
            current_last_seq = NO_SEQUENCE
        if not (self.current.producer_epoch == NO_PRODUCER_EPOCH or _in_sequence(current_last_seq, first_seq)):
            raise ProducerStateError(OUT_OF_ORDER_SEQUENCE_NUMBER, (
                "Out of order sequence number for producer %d at offset %d in partition %s: "
                "%d (incoming seq. number), %d (current end sequence number)"
                % (producer_id, offset, self.topic_partition, first_seq, current_last_seq)))


class ProducerStateManager:
    """``ProducerStateManager`` of one partition: producer id -> :class:`ProducerStateEntry`."""

    __slots__ = ("topic_partition", "producers")

    def __init__(self, topic_partition: str) -> None:
        self.topic_partition = topic_partition
        self.producers: Dict[int, ProducerStateEntry] = {}

    def last_entry(self, producer_id: int) -> Optional[ProducerStateEntry]:
        return self.producers.get(producer_id)

    def analyze(self, headers: List[Tuple[BatchHeader, int]]) -> Tuple[Dict[int, _AppendInfo], Optional[BatchMetadata]]:
        """``UnifiedLog.analyzeAndValidateProducerState`` for a client's append of *headers*, each
        with the first offset it would get: the producers' pending updates, or the retained batch
        that the first duplicate batch repeats (then nothing is to be appended). Raises
        :class:`ProducerStateError` when a batch fails a check; nothing has changed then."""
        updated: Dict[int, _AppendInfo] = {}
        for header, first_offset in headers:
            if not header.has_producer_id:
                continue
            entry = self.producers.get(header.producer_id)
            if entry is not None:
                duplicate = entry.find_duplicate_batch(header)
                if duplicate is not None:
                    return updated, duplicate
            info = updated.get(header.producer_id)
            if info is None:
                info = updated[header.producer_id] = _AppendInfo(
                    entry if entry is not None else ProducerStateEntry(header.producer_id), self.topic_partition)
            info.append_data_batch(header, first_offset)
        return updated, None

    def update(self, updated: Dict[int, _AppendInfo]) -> None:
        """``ProducerStateManager.update`` after the append was written."""
        for producer_id, info in updated.items():
            entry = self.producers.get(producer_id)
            if entry is None:
                entry = self.producers[producer_id] = ProducerStateEntry(producer_id)
            entry.update(info.updated)


class ProducerIdManager:
    """Producer ids for InitProducerId: 0, 1, 2, ... (see the module docstring)."""

    __slots__ = ("next_producer_id",)

    def __init__(self, first: int = 0) -> None:
        self.next_producer_id = first

    def generate_producer_id(self) -> int:
        producer_id = self.next_producer_id
        self.next_producer_id += 1
        return producer_id
