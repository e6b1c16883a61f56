"""Which broker coordinates a group (protocol reference §2).

``partitionFor(groupId) = Utils.abs(groupId.hashCode) % offsets.topic.num.partitions``; the
coordinator is the leader of that ``__consumer_offsets`` partition. Java's ``String.hashCode`` is
reproduced exactly (UTF-16 code units, 32-bit wrap-around) because Python's ``hash()`` is salted
per process and would break determinism.
"""

from __future__ import annotations

INT_MIN = -(2**31)


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode``: h = 31*h + c over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - 2**32 if h >= 2**31 else h


def java_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: |n|, except Integer.MIN_VALUE maps to 0 (Math.abs would overflow)."""
    return 0 if n == INT_MIN else abs(n)


def partition_for(group_id: str, offsets_partitions: int) -> int:
    """The ``__consumer_offsets`` partition that stores *group_id*'s records."""
    return java_abs(java_string_hash(group_id)) % offsets_partitions


def initial_leader(partition: int, brokers: int) -> int:
    """Leader of an offsets partition before any failover: partitions are spread round-robin."""
    return partition % brokers
