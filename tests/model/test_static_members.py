"""Static membership (KIP-345, issue 16) on the coordinator: each scenario runs on the model's group
(model/group.py) and on the implementation's GroupCoordinator (impl/server) through one small
interface, and both must answer alike. The rules are Kafka's GroupCoordinator
(``doStaticNewMemberJoinGroup``, ``updateStaticMemberAndRebalance``, ``validateCurrentMember``,
``onCompleteJoin``, ``handleLeaveGroup``) and GroupMetadata (``replaceStaticMember``); protocol
reference §1.11."""

from __future__ import annotations

import pytest

from impl.protocol import MemberIdentity, Subscription
from model import group as grp
from model.config import Config
from model.errors import Errors
from model.messages import HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, OffsetCommitRequest, SyncGroupRequest
from tests.helpers.coordinator_harness import Harness

RANGE = "range"
NONE, FENCED, UNKNOWN = int(Errors.NONE), int(Errors.FENCED_INSTANCE_ID), int(Errors.UNKNOWN_MEMBER_ID)


class Join:
    """One JoinGroup's answer as both sides give it: error, member id, generation, leader id."""

    def __init__(self, error, member_id, generation, leader):
        self.error, self.member_id, self.generation, self.leader = int(error), member_id, generation, leader


class ImplSide:
    name = "impl"

    def __init__(self):
        self.h = Harness()

    def join(self, member_id="", instance_id=None, protocols=(RANGE,), session=10000, rebalance=30000):
        out = self.h.join(member_id, instance_id=instance_id, session=session, rebalance=rebalance,
                          protocols=tuple((p, Subscription(["topic"])) for p in protocols))
        return _Answers(out, lambda r: Join(r.error_code, r.member_id, r.generation_id, r.leader))

    def sync(self, member_id, generation, assignments=None, instance_id=None):
        out = self.h.sync(member_id, generation, assignments, instance_id=instance_id)
        return _Answers(out, lambda r: int(r.error_code))

    def heartbeat(self, member_id, generation, instance_id=None) -> int:
        return int(self.h.heartbeat(member_id, generation, instance_id=instance_id))

    def commit(self, member_id, generation, instance_id=None) -> int:
        return int(next(iter(self.h.commit(member_id, generation, instance_id=instance_id).values())).value)

    def leave(self, *members) -> list:
        response = self.h.leave(*(MemberIdentity(m, group_instance_id=i) for m, i in members))
        return [int(m.error_code) for m in response.members]

    def advance(self, ms: int) -> None:
        self.h.advance(ms)

    def state(self) -> str:
        return self.h.group().state.value

    def generation(self) -> int:
        return self.h.group().generation_id

    def members(self) -> int:
        return len(self.h.group().members)


class ModelSide:
    name = "model"
    config = Config(initial_rebalance_delay_ms=0)

    def __init__(self):
        self.group, self.now, self.persisted = None, 0, None
        self.answers: dict = {}
        self.next_reply = 0

    def _apply(self, outcome):
        self.group = outcome.group
        if outcome.persist is not None:
            self.persisted = outcome.persist
        for reply_to, response in outcome.replies:
            self.answers[reply_to].append(response)

    def _reply_to(self):
        self.next_reply += 1
        self.answers[self.next_reply] = []
        return self.next_reply

    @staticmethod
    def _choose(kind, candidates):
        return candidates[0]

    def join(self, member_id="", instance_id=None, protocols=(RANGE,), session=10000, rebalance=30000):
        r = self._reply_to()
        request = JoinGroupRequest("groupId", member_id, session, rebalance, "consumer",
                                   tuple((p, ("topic",)) for p in protocols), "consumer", instance_id)
        self._apply(grp.handle_join_group(self.group, request, r, self.now, self.config, self._choose))
        return _Answers(self.answers[r], lambda x: Join(x.error, x.member_id, x.generation_id, x.leader_id))

    def sync(self, member_id, generation, assignments=None, instance_id=None):
        r = self._reply_to()
        request = SyncGroupRequest("groupId", generation, member_id, "consumer", RANGE,
                                   tuple((m, ()) for m in (assignments or {})), instance_id)
        self._apply(grp.handle_sync_group(self.group, request, r, self.now, self.config, self._choose))
        return _Answers(self.answers[r], lambda x: int(x.error))

    def heartbeat(self, member_id, generation, instance_id=None) -> int:
        r = self._reply_to()
        self._apply(grp.handle_heartbeat(self.group, HeartbeatRequest("groupId", generation, member_id, instance_id),
                                         r, self.now, self.config, self._choose))
        return int(self.answers[r][0].error)

    def commit(self, member_id, generation, instance_id=None) -> int:
        r = self._reply_to()
        request = OffsetCommitRequest("groupId", generation, member_id, ((0, 10),), group_instance_id=instance_id)
        self._apply(grp.handle_offset_commit(self.group, request, r, self.now, self.config, self._choose))
        return int(self.answers[r][0].error)

    def leave(self, *members) -> list:
        r = self._reply_to()
        request = LeaveGroupRequest("groupId", tuple(m for m, _ in members), tuple(i for _, i in members))
        self._apply(grp.handle_leave_group(self.group, request, r, self.now, self.config, self._choose))
        return [int(e) for _, e in self.answers[r][0].member_errors]

    def advance(self, ms: int) -> None:
        self.now += ms
        self._apply(grp.fire_timers(self.group, self.now, self.config, self._choose))

    def state(self) -> str:
        return self.group.state

    def generation(self) -> int:
        return self.group.generation

    def members(self) -> int:
        return len(self.group.members)


class _Answers:
    """The answers a request has had so far (a parked request gets its answer later)."""

    def __init__(self, raw: list, view):
        self.raw, self.view = raw, view

    def __len__(self):
        return len(self.raw)

    def __getitem__(self, i):
        return self.view(self.raw[i])


@pytest.fixture(params=[ModelSide, ImplSide], ids=lambda c: c.name)
def side(request):
    return request.param()


def _stable(side, *instances, session=10000):
    """A Stable group of static members (one per instance id); their member ids, the generation."""
    joins = [side.join("", instance_id=i, session=session) for i in instances]
    side.advance(0)
    ids = [j[0].member_id for j in joins]
    generation = joins[0][0].generation
    leader = joins[0][0].leader
    syncs = [side.sync(m, generation, {m: () for m in ids} if m == leader else None, instance_id=i)
             for m, i in zip(ids, instances)]
    assert side.state() == "Stable" and all(s[0] == NONE for s in syncs)
    return ids, generation


def test_a_static_member_joins_without_member_id_required_and_is_fenced_by_its_instance(side):
    ids, generation = _stable(side, "instance-1")
    assert ids[0].startswith("instance-1-")  # groupInstanceId + "-" + UUID
    assert side.heartbeat(ids[0], generation, "instance-1") == NONE
    assert side.heartbeat("other-id", generation, "instance-1") == FENCED
    assert side.heartbeat(ids[0], generation, "instance-2") == UNKNOWN
    assert side.commit("other-id", generation, "instance-1") == FENCED
    assert side.sync("other-id", generation, instance_id="instance-1")[0] == FENCED


def test_a_static_rejoin_with_unknown_id_in_a_stable_group_replaces_the_id_without_a_rebalance(side):
    (leader, follower), generation = _stable(side, "a", "b")
    again = side.join("", instance_id="a")  # the leader's process restarted
    assert again[0].error == NONE and again[0].generation == generation
    new_id = again[0].member_id
    assert new_id != leader and new_id.startswith("a-")
    assert again[0].leader == leader  # the old leader id: the restarted leader does not assign a Stable group
    assert side.state() == "Stable" and side.generation() == generation
    assert side.heartbeat(leader, generation, "a") == FENCED  # the old id is fenced for good
    assert side.heartbeat(new_id, generation, "a") == NONE


def test_a_static_rejoin_that_would_change_the_protocol_rebalances(side):
    (_, _), generation = _stable(side, "a", "b")
    side.join("", instance_id="b", protocols=("roundrobin", RANGE))
    assert side.state() == "Stable"  # range still wins: both list it, one prefers it
    side.join("", instance_id="a", protocols=("roundrobin", RANGE))
    assert side.state() == "PreparingRebalance" and side.generation() == generation


def test_a_static_rejoin_with_its_protocols_keeps_a_tied_vote_however_ties_break(side):
    """Regression (the first walks with restarts, 2026-11-26): two static members whose votes tie
    (range first for one, roundrobin first for the other); one restarts and joins the Stable group
    with the protocols it had. Kafka's selectProtocol is a function of the votes (its tie-break is
    a hash map's order), so unchanged votes select the current protocol again: no rebalance. The
    model resolved the tie with a fresh choice and, choosing the other name, rebalanced."""
    if side.name == "model":  # Kafka's order is free in the model: break the two ties differently
        calls = []

        def alternating(kind, candidates):
            calls.append(kind)
            return candidates[-1] if kind == "protocol" and calls.count("protocol") % 2 == 0 else candidates[0]

        side._choose = alternating
    joins = [side.join("", instance_id="a", protocols=(RANGE, "roundrobin")),
             side.join("", instance_id="b", protocols=("roundrobin", RANGE))]
    side.advance(0)
    ids, generation, leader = [j[0].member_id for j in joins], joins[0][0].generation, joins[0][0].leader
    for m, i in zip(ids, ("a", "b")):
        assert side.sync(m, generation, {x: () for x in ids} if m == leader else None, instance_id=i)[0] == NONE
    again = side.join("", instance_id="b", protocols=("roundrobin", RANGE))
    assert again[0].error == NONE and again[0].generation == generation
    assert side.state() == "Stable" and side.generation() == generation


def test_a_static_rejoin_fences_the_old_ids_parked_sync_and_restarts_the_rebalance(side):
    joins = [side.join("", instance_id=i) for i in ("a", "b")]
    side.advance(0)
    (a, b), generation = [j[0].member_id for j in joins], joins[0][0].generation
    follower = b if joins[0][0].leader == a else a
    follower_instance = "b" if follower == b else "a"
    parked = side.sync(follower, generation, instance_id=follower_instance)
    assert len(parked) == 0 and side.state() == "CompletingRebalance"
    side.join("", instance_id=follower_instance)
    assert parked[0] == FENCED and side.state() == "PreparingRebalance"


def test_a_static_member_that_does_not_rejoin_stays_through_the_join(side):
    (a, b), generation = _stable(side, "a", "b", session=60000)
    side.join(a, instance_id="a", session=60000)  # a rejoins (as the leader it starts a rebalance)
    assert side.state() == "PreparingRebalance"
    side.advance(30000)  # the rebalance timeout: b never rejoined, and its session runs on
    assert side.generation() == generation + 1 and side.members() == 2 and side.state() == "CompletingRebalance"
    assert side.heartbeat(b, generation + 1, "b") == NONE  # b is still a member, of the new generation


def test_leave_by_instance_id_removes_the_static_member_and_a_wrong_id_is_fenced(side):
    (a, b), generation = _stable(side, "a", "b")
    assert side.leave(("other", "a")) == [FENCED]
    assert side.leave(("", "ghost")) == [UNKNOWN]
    assert side.leave(("", "b")) == [NONE]  # the administrative removal, by instance id alone
    assert side.members() == 1 and side.state() == "PreparingRebalance"
    assert side.heartbeat(b, generation, "b") == UNKNOWN


def test_a_static_member_whose_session_expires_is_removed_with_its_instance(side):
    (a, b), generation = _stable(side, "a", "b")
    for _ in range(4):
        side.advance(3000)
        assert side.heartbeat(a, side.generation(), "a") in (NONE, int(Errors.REBALANCE_IN_PROGRESS))
    assert side.members() == 1  # b's 10 s session ran out
    assert side.heartbeat(b, generation, "b") == UNKNOWN
    back = side.join("", instance_id="b")
    assert len(back) == 0 and side.members() == 2  # a new member: parked until the join completes


def test_the_model_writes_the_instance_ids_into_the_group_record_and_a_load_keeps_the_fencing():
    side = ModelSide()
    (a, b), generation = _stable(side, "a", "b")
    side.join("", instance_id="b")  # replaced in Stable: the record is written with the new id
    record = side.persisted
    assert {m.group_instance_id for m in record.members} == {"a", "b"}
    loaded = grp.load(record, side.now, side.config, side._choose).group
    assert grp.static_member_id(loaded.members, "b") not in (None, b)
    assert grp.validate_current_member(loaded.members, b, "b") == Errors.FENCED_INSTANCE_ID


# -- the client side and the worlds -----------------------------------------------------------

def test_static_clients_are_configured_by_count_and_need_join_group_v5():
    from model.config import ConfigError, parse_settings, with_settings

    config = with_settings(Config(), parse_settings(["groupcheck.static.clients=2"]))
    assert [config.instance_id(c) for c in range(3)] == ["instance-0", "instance-1", None]
    with pytest.raises(ConfigError, match="static_clients"):
        Config(clients=2, static_clients=3)
    with pytest.raises(ConfigError, match="JoinGroup v5"):
        Config(static_clients=1, join_group_version=4)


def test_the_assignors_put_static_members_first_in_instance_id_order():
    from model.assignors import range_assign, roundrobin_assign

    members, instances = ["a-member", "z-dynamic", "b-member"], {"a-member": "inst-2", "b-member": "inst-1"}
    assert range_assign(members, 3, instances) == {"b-member": (0,), "a-member": (1,), "z-dynamic": (2,)}
    assert roundrobin_assign(members, 3, instances)["b-member"] == (0,)
    assert range_assign(members, 3) == {"a-member": (0,), "b-member": (1,), "z-dynamic": (2,)}  # all dynamic


def _stable_world(config):
    from model.client import STABLE
    from properties.explore.walker import walk

    world = walk(0, config, steps=60, faults="none").world
    assert world.group.state == "Stable" and all(c.state == STABLE for c in world.clients)
    return world


def test_a_static_client_joins_with_its_instance_id_and_sends_no_leave_group_on_close():
    from model.world import step
    from properties.explore.walker import settle

    config = Config(static_clients=1)
    world = _stable_world(config)
    static = {m.group_instance_id: m.member_id for m in world.group.members}
    assert static["instance-0"].startswith("instance-0-") and set(static) == {"instance-0", None}
    for c, leaves in ((0, False), (1, True)):
        closed, logs = step(world, ("close", c, 0))
        closed, _ = settle(closed, None, None, [], max_rounds=3, until_stable=False,
                           on_step=lambda w, e, n, log: logs.extend(log))
        sent = [e[4] for e in logs if e[0] == "send" and e[1] == c]
        assert ("LeaveGroup" in sent) == leaves, (c, sent)


def test_walks_with_static_clients_agree_with_the_implementation_and_reach_a_replacement():
    from model.world import initial_world, step
    from properties.explore.walker import walk
    from properties.systems.differential import compare

    config, replaced, fenced = Config(static_clients=2), 0, 0
    for seed in range(40):
        result = walk(seed, config, steps=80, faults="all")
        assert result.violation is None, (seed, result.violation)
        assert compare(config, result.schedule, seed).divergence is None, seed
        world = initial_world(config)
        for event in result.schedule:
            world, log = step(world, event)
            replaced += sum(1 for e in log if e[:2] == ("server", "static_replaced"))
            fenced += sum(1 for e in log if e[0] == "reply" and len(e) > 4 and e[4] == Errors.FENCED_INSTANCE_ID)
    assert replaced and fenced  # the static paths were taken, not only configured


def test_a_new_static_member_replaced_while_parked_expires_after_one_session():
    """Regression (the first fixed-world campaign with groupcheck.static.clients=2, 71 events):
    client 0's JoinGroup is parked in the first join phase when the client, having lost its
    coordinator, joins again without a member id. replaceStaticMember fences the parked one, and
    completeAndScheduleNextHeartbeatExpiration arms one session timeout (6 s) for the new id, not
    the new-member join timeout (5 min) of addMemberAndRebalance; the member is still new, so only a
    heartbeat satisfies it (hasSatisfiedHeartbeat) and it is removed when the 6 s run out. The
    model armed the 5 minutes; the implementation removed it."""
    import json
    from pathlib import Path

    from properties.campaign.counterexample import config_from_dict
    from properties.systems.differential import compare

    document = json.loads((Path(__file__).parents[1] / "systems" / "data" / "static_new_member_replaced.json").read_text())
    config, schedule = config_from_dict(document["config"]), [tuple(e) for e in document["schedule"]]
    assert config.static_clients == 2
    assert compare(config, schedule, document["seed"]).divergence is None
    from model.world import initial_world, step

    world, removed = initial_world(config), []
    for event in schedule:
        world, log = step(world, event)
        removed += [e[2] for e in log if e[:2] == ("server", "member_removed") and e[3] == "session"]
    assert [m for m in removed if m.startswith("instance-0-")] and world.now >= 9133


def test_a_leader_removed_at_join_completion_is_repicked_among_the_members_left():
    """Regression (the first swarm campaign with groupcheck.static.clients=2, 75 events): the
    leader did not rejoin and was removed when the join phase completed; only a static member that
    had not rejoined either was left. GroupMetadata.remove re-picks the leader at once among the
    members left (leaderId = members.keys.headOption), and maybeElectNewJoinedLeader, finding no
    member that rejoined, leaves it: the group waits another rebalance timeout with that leader.
    The model left no leader (leader-is-member failed); the implementation had one."""
    import json
    from pathlib import Path

    from model.world import initial_world, step
    from properties.campaign.counterexample import config_from_dict
    from properties.catalogue import Checker
    from properties.systems.differential import compare

    document = json.loads((Path(__file__).parents[1] / "systems" / "data" / "static_leader_repicked.json").read_text())
    config, schedule = config_from_dict(document["config"]), [tuple(e) for e in document["schedule"]]
    assert config.static_clients == 2
    world, checker = initial_world(config), Checker(config)
    for event in schedule:
        new, log = step(world, event)
        assert checker.check(world, new, event, log) is None, event
        world = new
    group = world.brokers[world.leader].group
    assert group.leader_id in {m.member_id for m in group.members}
    assert compare(config, schedule, document["seed"]).divergence is None


def test_the_heartbeat_oracle_expects_fenced_instance_id_for_a_replaced_member():
    from properties.catalogue import expected_heartbeat_error

    side = ModelSide()
    (a, b), generation = _stable(side, "a", "b")
    side.join("", instance_id="a")  # a's id replaced
    assert expected_heartbeat_error(side.group, HeartbeatRequest("groupId", generation, a, "a")) == Errors.FENCED_INSTANCE_ID
    assert expected_heartbeat_error(side.group, HeartbeatRequest("groupId", generation, a, None)) == Errors.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize("generation, state, violated", [
    (0, grp.STABLE, True),   # a commit of the generation it had: validated, and must not pass
    (-1, grp.STABLE, True),  # a member id with generation -1 is still validated on a live group
    (-1, grp.EMPTY, False),  # outside group management: Kafka validates no member id at all
])
def test_fenced_member_id_never_accepted_judges_commits_kafka_validates(generation, state, violated):
    """fenced-member-id-never-accepted judges an OffsetCommit only where
    GroupCoordinator.validateOffsetCommit looks at its member id: a generation -1 commit to an
    Empty group is accepted from anyone (found by the z3 proof of the property, issue 16)."""
    import types

    from model.messages import OffsetCommitResponse
    from properties.catalogue import Checker

    config = Config(clients=2, static_clients=1)
    group = grp.Group(group_id="g", state=state, generation=0)
    checker = Checker(config)
    checker.fenced_ids = {"a-old"}
    request = OffsetCommitRequest("g", generation, "a-old", ((0, 1),), group_instance_id="a")
    log = [("handled", 0, 1, 0, request, group, True, False),
           ("reply", 0, 1, "OffsetCommit", Errors.NONE, OffsetCommitResponse(((0, Errors.NONE),)))]
    world = types.SimpleNamespace(group=group, persisted=None, brokers=object(), clients=(), leader=0, now=0,
                                  partitions=1)
    v = checker.check(world, world, ("step",), log)
    assert (v is not None and v.property == "fenced-member-id-never-accepted") == violated, v
