"""``TargetAssignmentBuilder`` (``org.apache.kafka.coordinator.group.modern``): the target
assignment of every member at a group epoch, from the group's members with one member added,
updated or removed, run through the group's server assignor."""

from __future__ import annotations

from typing import Optional

from impl.java_collections import hash_map_key_order, timeline_key_order
from impl.server.modern.consumer_group_member import ConsumerGroupMember


class TargetAssignmentBuilder:
    def __init__(self, group_id: str, group_epoch: int, assignor):
        self.group_id = group_id
        self.group_epoch = group_epoch
        self.assignor = assignor
        self.members: dict = {}
        self.topic_ids: dict = {}  # topic name -> topic id (the metadata image)
        self.num_partitions: dict = {}  # topic id -> partitions
        self.updated: dict = {}
        self.read: tuple = ((), 2)  # the members map as read: (member ids in the order put, capacity)
        self.current: dict = {}

    def with_members(self, group) -> "TargetAssignmentBuilder":
        """The group's members (``withMembers(group.members())``), met in the order Kafka's members
        map iterates them as the handler read it (ConsumerGroup.members_as_read)."""
        self.members = dict(group.members)
        self.read = group.members_as_read
        return self

    def with_target_assignment(self, targets: dict) -> "TargetAssignmentBuilder":
        """Every member's current target ({member id: {topic id: frozenset}}), the sticky assignor's start."""
        self.current = dict(targets)
        return self

    def with_topics(self, topics: dict) -> "TargetAssignmentBuilder":
        """*topics*: {name: (topic id, partitions)} — the subscribed topics' metadata."""
        self.topic_ids = {name: tid for name, (tid, _) in topics.items()}
        self.num_partitions = {tid: n for tid, n in topics.values()}
        return self

    def add_or_update_member(self, member_id: str, member: Optional[ConsumerGroupMember]) -> "TargetAssignmentBuilder":
        """A member added or updated (None: removed) before the assignor runs."""
        self.updated[member_id] = member
        return self

    def build(self) -> dict:
        """{member id: {topic id: frozenset}} for every member (an empty dict for none). The assignor
        meets the members in the order of the HashMap ``build`` fills: the members map's in its
        iteration order, then the members it did not have (impl.java_collections)."""
        members = dict(self.members)
        for member_id, member in self.updated.items():
            if member is None:
                members.pop(member_id, None)
            else:
                members[member_id] = member
        read_ids, capacity = self.read
        known = set(read_ids)
        added = [mid for mid in members if mid not in known]
        order = hash_map_key_order([mid for mid in timeline_key_order(read_ids, capacity) if mid in members] + added,
                                   max_size=len(read_ids) + len(added))
        specs = {mid: (members[mid].instance_id, frozenset(self.topic_ids[t] for t in members[mid].subscribed_topic_names
                                                           if t in self.topic_ids))
                 for mid in order}
        assignment = self.assignor.assign(specs, self.num_partitions, self.current)
        return {mid: assignment.get(mid, {}) for mid in members}
