"""Record batches for the broker's Produce/Fetch tests: built with kafka-python's record classes
(a second implementation of Kafka's batch format, not groupcheck's own) and read back."""


def batch(*values, producer_id=-1, epoch=-1, sequence=-1, transactional=False) -> bytes:
    """One v2 record batch of *values* (an idempotent one with a producer id, epoch and base sequence)."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=transactional,
                                        producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence,
                                        batch_size=1 << 20)
    for i, value in enumerate(values):
        builder.append(i, timestamp=1_700_000_000_000 + i, key=None, value=value, headers=[])
    return bytes(builder.build())


def offsets_and_values(records) -> list:
    """(offset, value) of every record in *records* (the bytes of a Fetch answer's partition)."""
    from kafka.record import MemoryRecords

    memory, out = MemoryRecords(records), []
    while True:
        b = memory.next_batch()
        if b is None:
            return out
        out += [(r.offset, r.value) for r in b]
