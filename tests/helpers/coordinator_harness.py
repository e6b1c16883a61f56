"""impl's group coordinator (``impl/server``) on a mock clock, driven request by request: one
coordinator owning every partition of a small offsets topic, like Kafka's GroupCoordinatorTest.
The model's side of the same scenarios is :mod:`tests.helpers.group`."""

from __future__ import annotations

import random

from impl.errors import Errors
from impl.protocol import Assignment, MemberIdentity, Subscription, TopicPartition
from impl.server import (
    BrokerConfig,
    GroupCoordinator,
    GroupMetadata,
    GroupMetadataManager,
    MockTimer,
    OffsetAndMetadata,
    OffsetsTopicLog,
)
from impl.server.group_metadata import COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE
from impl.time import MockTime


GROUP = "groupId"
SUB = Subscription(["topic"])
PROTOCOLS = (("range", SUB),)
TP0 = TopicPartition("topic", 0)
NONE = Errors.NONE.value
RNG_SEED = 7

E = Errors


def code(e: Errors) -> int:
    return e.value


class Harness:
    """One coordinator owning every partition of a small offsets topic (like GroupCoordinatorTest)."""

    def __init__(self, partitions: int = 1, **config):
        config.setdefault("group_initial_rebalance_delay_ms", 0)
        self.config = BrokerConfig(offsets_topic_num_partitions=partitions, **config)
        self.time = MockTime()
        self.timer = MockTimer(self.time)
        self.log = OffsetsTopicLog(partitions)
        self.manager = GroupMetadataManager(0, self.config, self.log, self.time)
        self.coord = GroupCoordinator(0, self.config, self.manager, self.time, self.timer, random.Random(RNG_SEED))
        self.coord.startup()
        for p in range(partitions):
            self.coord.on_election(p)
        self.coord.finish_loading()

    # clock
    def now(self) -> int:
        return self.time.milliseconds()

    def advance(self, ms: int) -> None:
        self.timer.advance_clock(self.now() + ms)

    def advance_to(self, t: int) -> None:
        self.timer.advance_clock(t)

    def group(self) -> GroupMetadata:
        return self.manager.get_group(GROUP)

    # requests (each returns the list the response callback appends to)
    def join(self, member_id="", *, version=5, instance_id=None, protocols=PROTOCOLS, session=10000,
             rebalance=30000, client_id="consumer", protocol_type="consumer", group_id=GROUP):
        out = []
        self.coord.handle_join_group(group_id, member_id, instance_id, version >= 4 and instance_id is None,
                                     version >= 9, client_id, "/host", rebalance, session, protocol_type,
                                     protocols, out.append)
        return out

    def sync(self, member_id, generation, assignments=None, instance_id=None, protocol_type="consumer",
             protocol_name="range", group_id=GROUP):
        out = []
        self.coord.handle_sync_group(group_id, generation, member_id, protocol_type, protocol_name, instance_id,
                                     assignments or {}, out.append)
        return out

    def heartbeat(self, member_id, generation, instance_id=None, group_id=GROUP) -> int:
        out = []
        self.coord.handle_heartbeat(group_id, member_id, instance_id, generation, out.append)
        assert len(out) == 1
        return out[0].error_code

    def leave(self, *members, group_id=GROUP):
        out = []
        identities = [m if isinstance(m, MemberIdentity) else MemberIdentity(m) for m in members]
        self.coord.handle_leave_group(group_id, identities, out.append)
        assert len(out) == 1
        return out[0]

    def commit(self, member_id, generation, offsets=None, instance_id=None, group_id=GROUP):
        out = []
        offsets = offsets if offsets is not None else {TP0: OffsetAndMetadata(10, metadata="m")}
        self.coord.handle_commit_offsets(group_id, member_id, instance_id, generation, offsets, out.append)
        assert len(out) == 1
        return out[0]

    # composite steps
    def join_new_member(self, client_id="consumer", version=5, **kw):
        """A new dynamic member: two-phase for v4+, direct for older versions. Returns (id, parked list)."""
        if version >= 4:
            first = self.join("", version=version, client_id=client_id, **kw)
            assert first[0].error_code == code(E.MEMBER_ID_REQUIRED)
            member_id = first[0].member_id
            return member_id, self.join(member_id, version=version, client_id=client_id, **kw)
        out = self.join("", version=version, client_id=client_id, **kw)
        return list(self.group().members)[-1], out

    def completing_group(self, n=2, **kw):
        """n members through the join phase: CompletingRebalance. Returns (ids, generation, join responses)."""
        ids, outs = [], []
        for i in range(n):
            member_id, out = self.join_new_member(client_id="c%d" % i, **kw)
            ids.append(member_id)
            outs.append(out)
        self.advance(0)
        assert all(len(o) == 1 and o[0].error_code == NONE for o in outs)
        assert self.group().state is COMPLETING_REBALANCE
        return ids, outs[0][0].generation_id, [o[0] for o in outs]

    def stable_group(self, n=2, **kw):
        """n members, leader synced with one partition each: Stable. Returns (ids, generation)."""
        ids, generation, _ = self.completing_group(n, **kw)
        assignments = {m: Assignment([TopicPartition("topic", i)]) for i, m in enumerate(ids)}
        follower_syncs = [self.sync(m, generation) for m in ids[1:]]
        leader_sync = self.sync(ids[0], generation, assignments)
        assert leader_sync[0].error_code == NONE
        assert all(s[0].error_code == NONE for s in follower_syncs)
        assert self.group().state is STABLE
        return ids, generation

    def empty_group(self):
        """A group that had a member which left: Empty at generation 2."""
        ids, generation = self.stable_group(1)
        self.leave(ids[0])
        assert self.group().state is EMPTY
        return ids, self.group().generation_id

    def preparing_group(self):
        """Stable group of two whose leader rejoined: PreparingRebalance (leader parked)."""
        ids, generation = self.stable_group(2)
        parked = self.join(ids[0])
        assert parked == [] and self.group().state is PREPARING_REBALANCE
        return ids, generation, parked

    def dead_group(self):
        ids, generation = self.stable_group(2)
        self.group().transition_to(DEAD)
        return ids, generation
