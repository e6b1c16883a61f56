"""``TargetAssignmentBuilder`` (``org.apache.kafka.coordinator.group.modern``): the target
assignment of every member at a group epoch, from the group's members with one member added,
updated or removed, run through the group's server assignor."""

from __future__ import annotations

from typing import Optional

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

    def with_members(self, members: dict) -> "TargetAssignmentBuilder":
        self.members = dict(members)
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
        """{member id: {topic id: frozenset}} for every member (an empty dict for none)."""
        members = dict(self.members)
        for member_id, member in self.updated.items():
            if member is None:
                members.pop(member_id, None)
            else:
                members[member_id] = member
        specs = {mid: (m.instance_id, frozenset(self.topic_ids[t] for t in m.subscribed_topic_names
                                                if t in self.topic_ids))
                 for mid, m in members.items()}
        assignment = self.assignor.assign(specs, self.num_partitions)
        return {mid: assignment.get(mid, {}) for mid in members}
