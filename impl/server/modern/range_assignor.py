"""The server ``RangeAssignor`` (``org.apache.kafka.coordinator.group.assignor.RangeAssignor``):
members sorted by instance id (members with one first), then member id; for each topic,
contiguous ranges in that order, the first ``partitions % members`` one partition larger.

``assign`` takes ``{member id: (instance id, subscribed topic ids)}`` and the topics' partition
counts and returns ``{member id: {topic id: frozenset}}``. A homogeneous group (every member
subscribed to the same topics) is ``assignHomogeneousGroup``; otherwise each topic is shared by its
subscribers (``assignHeterogeneousGroup``); both give the same ranges where they overlap.
"""

from __future__ import annotations

import functools

from impl.errors import KafkaException

NAME = "range"


class PartitionAssignorException(KafkaException):
    pass


def _compare(a: tuple, b: tuple) -> int:
    """sortMemberIds' comparator over (member id, instance id or None)."""
    (id1, inst1), (id2, inst2) = a, b
    if inst1 is not None and inst2 is not None:
        return (inst1 > inst2) - (inst1 < inst2)
    if inst1 is not None:
        return -1
    if inst2 is not None:
        return 1
    return (id1 > id2) - (id1 < id2)


class RangeAssignor:
    name = NAME

    def assign(self, members: dict, num_partitions: dict, current: dict | None = None) -> dict:
        """(*current*, the members' current targets, is the sticky assignors'; range ignores it)"""
        if not members:
            return {}
        order = sorted(((mid, spec[0]) for mid, spec in members.items()), key=functools.cmp_to_key(_compare))
        sorted_ids = [mid for mid, _ in order]
        subscribers: dict = {}  # topic id -> [member id] in sorted order
        for mid in sorted_ids:
            for topic_id in sorted(members[mid][1]):
                subscribers.setdefault(topic_id, []).append(mid)
        assignment: dict = {mid: {} for mid in sorted_ids}
        for topic_id, mids in sorted(subscribers.items()):
            partitions = num_partitions.get(topic_id, -1)
            if partitions == -1:
                raise PartitionAssignorException("Member is subscribed to a non-existent topic")
            min_quota, extra = divmod(partitions, len(mids))
            next_range = 0
            for mid in mids:  # addPartitionsToAssignment
                quota = min_quota
                if extra > 0:
                    quota += 1
                    extra -= 1
                end = min(next_range + quota, partitions)
                if next_range < end:
                    assignment[mid][topic_id] = frozenset(range(next_range, end))
                next_range = end
        return assignment
