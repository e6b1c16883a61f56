"""The iteration orders of the Java collections Kafka walks where what it does depends on them
(impl/ keeps Python dicts; these give the order Kafka's maps would iterate them in). Both wings use
them, so they live here, beside neither:

- the group coordinator's: ``TargetAssignmentBuilder.build`` fills a ``java.util.HashMap`` from the
  group's ``members``, an ``org.apache.kafka.timeline.TimelineHashMap``, and the ``UniformAssignor``
  walks that HashMap's keys;
- the client's: ``NetworkClient.handleTimedOutRequests`` disconnects the nodes of
  ``InFlightRequests.requests``, a ``HashMap<String, Deque>`` keyed by node id, in its order.

The orders:

- ``HashMap``: ascending bucket ``(h ^ (h >>> 16)) & (capacity - 1)`` of ``h = key.hashCode()``, a
  bucket's keys in the order they were put; capacity 16, doubled when a put takes the size past
  three quarters of it (``putVal``/``resize``, which splits a bucket without reordering it).
- ``TimelineHashMap`` (``BaseHashTable``): ascending slot ``findSlot(key, capacity)`` (Knuth's
  multiplicative hash, the top bits of ``hashCode * -7046029254386353131L``), a slot's keys last put
  first (``SnapshottableHashTable.CurrentIterator.next``: ``ready.remove(ready.size() - 1)``); capacity 2
  (``new TimelineHashMap<>(snapshotRegistry, 0)``), doubled by ``baseAddOrReplace`` before a put when
  ``(size + 1) * 0.75 > capacity``, new key or not; never shrunk.
"""

from __future__ import annotations

from typing import Iterable, List

_MASK32 = 0xFFFFFFFF
_MASK64 = (1 << 64) - 1
_GOLDEN = -7046029254386353131  # BaseHashTable.findSlot's multiplier
MAX_LOAD_FACTOR = 0.75


def string_hash_code(s: str) -> int:
    """``String.hashCode()`` (UTF-16 code units), a signed 32-bit int."""
    h = 0
    units = s.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & _MASK32
    return h - (1 << 32) if h & 0x80000000 else h


def hash_map_key_order(keys_put: Iterable[str], max_size: int = 0) -> List[str]:
    """The key set order of a ``new HashMap<>()`` the distinct *keys_put* were put into, in that
    order (*max_size*: the most keys it held at once, when some were removed since)."""
    keys = list(keys_put)
    capacity, threshold = 16, 12
    while max(len(keys), max_size) > threshold:
        capacity, threshold = capacity * 2, threshold * 2

    def spread(key: str) -> int:
        h = string_hash_code(key) & _MASK32
        return (h ^ (h >> 16)) & (capacity - 1)

    indexed = sorted(range(len(keys)), key=lambda i: (spread(keys[i]), i))
    return [keys[i] for i in indexed]


def find_slot(key: str, num_elements: int) -> int:
    """``BaseHashTable.findSlot``."""
    log2size = num_elements.bit_length()  # 32 - Integer.numberOfLeadingZeros(numElements)
    return ((string_hash_code(key) * _GOLDEN) & _MASK64) >> (65 - log2size)


def timeline_key_order(keys_put: Iterable[str], capacity: int) -> List[str]:
    """A ``TimelineHashMap``'s key order, *keys_put* in the order they were first put (a key
    removed and put again counts from the second time)."""
    keys = list(keys_put)
    indexed = sorted(range(len(keys)), key=lambda i: (find_slot(keys[i], capacity), -i))
    return [keys[i] for i in indexed]


def grown_capacity(capacity: int, size: int) -> int:
    """A ``BaseHashTable`` of *size* keys at *capacity*, about to take a put: its capacity."""
    return capacity * 2 if (size + 1) * MAX_LOAD_FACTOR > capacity else capacity
