"""The consumer's partition assignors, run by the group leader (protocol reference §3.4, JoinGroup NONE).

Both sort members as Kafka's RangeAssignor and RoundRobinAssignor do
(``AbstractPartitionAssignor.MemberInfo.compareTo``): static members first, by group.instance.id,
then the dynamic ones by member id; and assign the partitions of the one subscribed topic. The result maps each member id to a sorted tuple of
partitions; together the tuples cover every partition exactly once.
"""

from __future__ import annotations


def _ordered(member_ids, instance_ids) -> list:
    """MemberInfo order: (0, instance id) for a static member, (1, member id) for a dynamic one."""
    instance_ids = instance_ids or {}

    def key(member):
        instance = instance_ids.get(member)
        return (0, instance) if instance is not None else (1, member)

    return sorted(member_ids, key=key)


def range_assign(member_ids, partitions: int, instance_ids=None) -> dict:
    """RangeAssignor: consecutive ranges; the first ``partitions % n`` members get one extra.

    No members, no assignment: Kafka's ``RangeAssignor.assign`` divides by the number of consumers
    of a topic only inside its loop over ``consumersPerTopic(subscriptions)``, which is empty when
    there are no subscriptions, so it returns an empty map and never divides by zero."""
    members = _ordered(member_ids, instance_ids)
    n = len(members)
    if n == 0:
        return {}
    per, extra = divmod(partitions, n)
    out, start = {}, 0
    for i, member in enumerate(members):
        length = per + (1 if i < extra else 0)
        out[member] = tuple(range(start, start + length))
        start += length
    return out


def roundrobin_assign(member_ids, partitions: int, instance_ids=None) -> dict:
    """RoundRobinAssignor: partitions dealt to the sorted members in turn."""
    members = _ordered(member_ids, instance_ids)
    n = len(members)
    return {member: tuple(range(i, partitions, n)) for i, member in enumerate(members)}


ASSIGNORS = {"range": range_assign, "roundrobin": roundrobin_assign}
