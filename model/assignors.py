"""The consumer's partition assignors, run by the group leader (protocol reference §3.4, JoinGroup NONE).

Both sort members as Kafka's RangeAssignor and RoundRobinAssignor do
(``AbstractPartitionAssignor.MemberInfo.compareTo``): static members first, by group.instance.id,
then the dynamic ones by member id; and assign the partitions of the topics the members subscribe
to (``partitions``: the first topic's count when every member subscribes to it alone, or per topic
the model's partition ints, model/topics.py). The result maps each member id to a sorted tuple of
partitions; together the tuples cover every partition of a subscribed topic exactly once.
"""
from __future__ import annotations

from model.topics import BOTH, FIRST


def _ordered(member_ids, instance_ids) -> list:
    """MemberInfo order: (0, instance id) for a static member, (1, member id) for a dynamic one."""
    instance_ids = instance_ids or {}

    def key(member):
        instance = instance_ids.get(member)
        return (0, instance) if instance is not None else (1, member)

    return sorted(member_ids, key=key)


def _topics(partitions, member_ids, subscriptions) -> tuple:
    """((topic bit, partitions of the topic), ...) in topic order, and each member's subscription
    mask: one topic subscribed by every member when *partitions* is a count."""
    if isinstance(partitions, int):
        return ((FIRST, tuple(range(partitions))),), {m: FIRST for m in member_ids}
    masks = subscriptions if subscriptions is not None else {m: BOTH for m in member_ids}
    return tuple(partitions), masks


def range_assign(member_ids, partitions, instance_ids=None, subscriptions=None) -> dict:
    """RangeAssignor: per topic, its consumers in order get consecutive ranges, the first
    ``count % n`` of them one extra (``RangeAssignor.assignPartitions`` without racks).

    No members, no assignment: Kafka's ``RangeAssignor.assign`` divides by the number of consumers
    of a topic only inside its loop over ``consumersPerTopic(subscriptions)``, which is empty when
    there are no subscriptions, so it returns an empty map and never divides by zero."""
    topics, masks = _topics(partitions, member_ids, subscriptions)
    members = _ordered(member_ids, instance_ids)
    out = {member: [] for member in members}
    for bit, parts in topics:
        consumers = [m for m in members if masks[m] & bit]
        n = len(consumers)
        if n == 0:
            continue
        per, extra = divmod(len(parts), n)
        start = 0
        for i, member in enumerate(consumers):
            length = per + (1 if i < extra else 0)
            out[member] += parts[start:start + length]
            start += length
    return {member: tuple(sorted(parts)) for member, parts in out.items()}


def roundrobin_assign(member_ids, partitions, instance_ids=None, subscriptions=None) -> dict:
    """RoundRobinAssignor: every subscribed topic's partitions in order (``allPartitionsSorted``),
    each dealt to the next member in the circular order that subscribes to its topic."""
    topics, masks = _topics(partitions, member_ids, subscriptions)
    members = _ordered(member_ids, instance_ids)
    out = {member: [] for member in members}
    if not members:
        return {}
    i = 0
    for bit, parts in topics:
        if not any(masks[m] & bit for m in members):
            continue
        for p in parts:
            while not masks[members[i % len(members)]] & bit:  # CircularIterator.peek/next
                i += 1
            out[members[i % len(members)]].append(p)
            i += 1
    return {member: tuple(parts) for member, parts in out.items()}


ASSIGNORS = {"range": range_assign, "roundrobin": roundrobin_assign}
