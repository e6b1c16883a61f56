"""The orders in which Kafka iterates its hash maps, where what it does depends on them: the
coordinator's walk of a group's member ids (an assignor's), and the client's walk of the nodes with
requests in flight (which of them an in-flight timeout disconnects first).

The ``uniform`` assignor (``UniformHomogeneousAssignmentBuilder``) walks ``groupSpec.memberIds()``
in order: who keeps an extra partition and who gets which free ones follows it. That collection is
the key set of a ``java.util.HashMap`` that ``TargetAssignmentBuilder.build`` fills from the group's
``members`` (a ``TimelineHashMap``, iterated in its own slot order) and then from the members the
heartbeat adds. Both orders are functions of ``String.hashCode`` and of the order of insertion, so
the model computes them:

- ``HashMap``: bucket ``(h ^ (h >>> 16)) & (capacity - 1)`` in ascending order, a bucket's keys in
  the order they were put (a resize splits a bucket without reordering it); the capacity is 16,
  doubled whenever a put takes the size past three quarters of it.
- ``TimelineHashMap`` (``org.apache.kafka.timeline.BaseHashTable``): slot ``findSlot`` — Knuth's
  multiplicative hash, ``(hashCode * -7046029254386353131L) >>> (65 - log2(capacity))`` — in
  ascending order, a slot's keys in *reverse* insertion order (a slot keeps them in insertion order,
  ``rehash`` too, and ``SnapshottableHashTable.CurrentIterator.next`` takes them from the end of the
  slot's list: ``ready.remove(ready.size() - 1)``); the capacity starts at 2
  (``new TimelineHashMap<>(snapshotRegistry, 0)``) and doubles at a put when
  ``(size + 1) * 0.75 > capacity`` (``baseAddOrReplace``, whether the key is new or not), and never
  shrinks.

(A ``HashMap`` bucket of eight keys would be treeified or the table resized; no world has eight
members in one bucket.)

``NetworkClient.handleTimedOutRequests`` disconnects the nodes ``InFlightRequests.nodesWithTimedOutRequests``
lists, in the order of ``InFlightRequests.requests``: a ``HashMap<String, Deque>`` keyed by node id,
a key put at the node's first request (``add``) and removed only when its connection goes
(``clearAll``, from every disconnect). A client's node ids are its brokers' ids and, for a broker that
coordinates, ``Integer.MAX_VALUE - id`` (``AbstractCoordinator``'s coordinator node): in a world of
three brokers node ``2`` and broker 0's coordinator ``2147483647`` share bucket 2, so their order is
the order they were put, and the coordinators of brokers 1 and 2 come in buckets 5 and 4
(:func:`in_flight_buckets`, :func:`timed_out_order`).
"""

from __future__ import annotations

import functools

_MASK32 = 0xFFFFFFFF
_MASK64 = (1 << 64) - 1
_FIBONACCI = -7046029254386353131  # BaseHashTable.findSlot's multiplier


def string_hash(s: str) -> int:
    """``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, as a signed int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & _MASK32
    return h - (1 << 32) if h >= 1 << 31 else h


def hash_map_order(keys_in_insertion_order, max_size: int | None = None) -> list:
    """A ``new HashMap<>()``'s key order after *keys* were put in that order (*max_size*: the most
    keys it held at once, if entries were removed since; it sets the capacity)."""
    keys = list(keys_in_insertion_order)
    size = max(len(keys), max_size or 0)
    capacity = 16
    while size > capacity * 3 // 4:  # putVal: if (++size > threshold) resize()
        capacity *= 2

    def bucket(key: str) -> int:
        h = string_hash(key) & _MASK32
        return (h ^ (h >> 16)) & (capacity - 1)

    return [k for _, _, k in sorted((bucket(k), i, k) for i, k in enumerate(keys))]


def timeline_slot(key: str, capacity: int) -> int:
    """``BaseHashTable.findSlot(key, capacity)``."""
    shift = 65 - capacity.bit_length()  # 65 - (32 - Integer.numberOfLeadingZeros(capacity))
    return ((string_hash(key) * _FIBONACCI) & _MASK64) >> shift


def timeline_order(keys_in_insertion_order, capacity: int) -> list:
    """A ``TimelineHashMap``'s key order: by slot at *capacity*, a slot's keys last put first."""
    keys = list(keys_in_insertion_order)
    return [k for _, _, k in sorted((timeline_slot(k, capacity), -i, k) for i, k in enumerate(keys))]


def timeline_capacity(capacity: int, size: int) -> int:
    """The capacity after one put into a ``TimelineHashMap`` of *size* keys at *capacity*
    (``baseAddOrReplace``: grown before the put, whether or not the key is new)."""
    if (size + 1) * 0.75 > capacity:
        return capacity * 2
    return capacity


@functools.lru_cache(maxsize=None)
def in_flight_buckets(brokers: int) -> tuple:
    """Per connection slot of a client in a world of *brokers* brokers (slot ``b``: broker ``b``'s
    node, id ``b``; slot ``brokers + b``: its coordinator node, ``Integer.MAX_VALUE - b``), the
    bucket its node id takes in ``InFlightRequests.requests``. The table holds at most one key per
    slot; up to six brokers (twelve keys) it is never resized from its 16 buckets, and beyond that the
    buckets are those of a table that once held every slot's key."""
    slots = 2 * brokers
    capacity = 16
    while slots > capacity * 3 // 4:
        capacity *= 2
    ids = [str(slot) if slot < brokers else str(2147483647 - (slot - brokers)) for slot in range(slots)]
    hashes = [string_hash(i) & _MASK32 for i in ids]
    return tuple((h ^ (h >> 16)) & (capacity - 1) for h in hashes)  # HashMap.hash, then (n - 1) & hash


@functools.lru_cache(maxsize=None)
def shared_buckets(brokers: int) -> frozenset:
    """The slots whose bucket (:func:`in_flight_buckets`) another slot's node shares: only their put
    order is needed to know Kafka's order (three brokers: node 2 and broker 0's coordinator)."""
    buckets = in_flight_buckets(brokers)
    return frozenset(slot for slot, bucket in enumerate(buckets) if buckets.count(bucket) > 1)


def timed_out_order(slots, puts: tuple, brokers: int) -> list:
    """*slots* (nodes with a timed-out request) in the order ``InFlightRequests.requests`` iterates
    them: by bucket, a shared bucket's keys in the order they were put (*puts*: the slots of
    :func:`shared_buckets` with a key in the map, in put order)."""
    buckets = in_flight_buckets(brokers)
    return sorted(slots, key=lambda slot: (buckets[slot], puts.index(slot) if slot in puts else -1))
