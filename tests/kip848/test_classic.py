"""Classic members inside a consumer group (model/kip848/classic.py): each rule of Kafka 4.1's
classicGroupJoinToConsumerGroup, classicGroupSyncToConsumerGroup,
classicGroupHeartbeatToConsumerGroup and classicGroupLeaveToConsumerGroup, on small groups."""

import pytest

from model.kip848 import classic
from model.kip848 import coordinator as coord
from model.kip848.assignment import UNRELEASED_PARTITIONS, UNREVOKED_PARTITIONS
from model.kip848.config import Config
from model.kip848.variants import CLASSIC_VARIANTS, VARIANTS

CONFIG = Config(clients=3, partitions=4)
PROTOCOLS = ("cooperative-sticky", "range")


def consumer_group(*members):
    """A consumer group whose consumer-protocol *members* joined (and acknowledged) in turn."""
    group = coord.new_group(CONFIG.partitions)
    for mid in members:
        group, answer, _ = coord.heartbeat(group, coord.Request(mid, 0, 30_000, ("t",), frozenset()), 0, CONFIG)
        group, answer, _ = coord.heartbeat(group, coord.Request(mid, answer.epoch, owned=answer.assignment), 0, CONFIG)
    return group


def join(group, mid, owned=frozenset(), protocols=PROTOCOLS, session=45_000, config=CONFIG):
    return classic.join(group, classic.Join(mid, protocols, ("t",), owned, session, 30_000), 0, config)


def test_a_classic_member_is_asked_for_its_member_id_then_joins_at_the_bumped_epoch():
    group = consumer_group("a")
    same, answer, _ = join(group, "")
    assert answer.error == classic.MEMBER_ID_REQUIRED and same is group  # nothing created yet
    group, answer, log = join(group, "c")
    assert answer == classic.Answer(classic.NONE, "c", 2, "cooperative-sticky")  # generation = member epoch
    assert ("bump", 2) in log and ("target", 2) in log
    member = group.member("c")
    assert member.classic == classic.Classic(45_000, PROTOCOLS) and member.epoch == 2
    # "a" owns all four partitions at epoch 1: "c" waits for its half
    assert member.state == UNRELEASED_PARTITIONS and member.assigned == frozenset()


def test_a_join_to_a_group_without_members_is_the_classic_protocols_and_the_model_says_so():
    group, answer, log = join(coord.new_group(4), "c")
    assert answer is None and log[0][0] == "classic_group"
    left, _ = coord.fence(consumer_group("a"), "a", "left", CONFIG)
    assert join(left, "c")[1] is None  # an empty consumer group too (classicGroupJoinToClassicGroup)


def test_the_session_timeout_bounds_come_first():
    assert join(coord.new_group(4), "c", session=classic.MIN_SESSION_TIMEOUT_MS - 1)[1].error == \
        classic.INVALID_SESSION_TIMEOUT
    assert join(consumer_group("a"), "c", session=classic.MAX_SESSION_TIMEOUT_MS + 1)[1].error == \
        classic.INVALID_SESSION_TIMEOUT
    assert join(consumer_group("a"), "c", session=classic.MAX_SESSION_TIMEOUT_MS)[1].error == classic.NONE


def test_protocols_must_be_supported_by_every_classic_member_its_own_earlier_ones_included():
    group, _, _ = join(consumer_group("a"), "c", protocols=("roundrobin",))  # no classic member yet: any
    assert group.member("c").classic.protocols == ("roundrobin",)
    assert join(group, "d")[1].error == classic.INCONSISTENT_GROUP_PROTOCOL
    # the member's own earlier protocols count: Kafka 4.1 refuses it a change of assignor
    assert join(group, "c")[1].error == classic.INCONSISTENT_GROUP_PROTOCOL
    assert join(group, "d", protocols=("range", "roundrobin"))[1] == classic.Answer(classic.NONE, "d", 3, "range")
    wrong_type = classic.Join("d", PROTOCOLS, ("t",), protocol_type="connect")
    assert classic.join(group, wrong_type, 0, CONFIG)[1].error == classic.INCONSISTENT_GROUP_PROTOCOL


def test_sync_answers_the_assigned_partitions_and_refuses_what_the_coordinator_refuses():
    group, joined, _ = join(consumer_group("a"), "c")
    gen = joined.generation
    assert classic.sync(group, classic.Sync("c", gen, "cooperative-sticky"), 0, CONFIG)[1] == \
        classic.Answer(classic.NONE, protocol_name="cooperative-sticky", assignment=frozenset())
    assert classic.sync(group, classic.Sync("c", gen - 1, "cooperative-sticky"), 0, CONFIG)[1].error == \
        classic.ILLEGAL_GENERATION
    assert classic.sync(group, classic.Sync("c", gen, "range"), 0, CONFIG)[1].error == classic.INCONSISTENT_GROUP_PROTOCOL
    assert classic.sync(group, classic.Sync("c", gen, "cooperative-sticky", "connect"), 0, CONFIG)[1].error == \
        classic.INCONSISTENT_GROUP_PROTOCOL
    assert classic.sync(group, classic.Sync("x", gen, None), 0, CONFIG)[1].error == classic.UNKNOWN_MEMBER_ID
    assert classic.sync(group, classic.Sync("a", 1, None), 0, CONFIG)[1].error == classic.UNKNOWN_MEMBER_ID  # a consumer's
    # another member joins: the group epoch passes c's, which must rejoin first
    bumped, _, _ = coord.heartbeat(group, coord.Request("b", 0, 30_000, ("t",), frozenset()), 0, CONFIG)
    assert classic.sync(bumped, classic.Sync("c", gen, None), 0, CONFIG)[1].error == classic.REBALANCE_IN_PROGRESS


def c_owns_half():
    """a (consumer protocol) and c (classic) share the four partitions, c STABLE with {2, 3}: c joined,
    waited for a to release its half, and rejoined when told to."""
    group, answer, _ = join(consumer_group("a"), "c")
    # a releases its half: its acknowledgement shows two partitions owned
    a = group.member("a")
    group, a_answer, _ = coord.heartbeat(group, coord.Request("a", a.epoch), 0, CONFIG)
    group, _, _ = coord.heartbeat(group, coord.Request("a", a_answer.epoch, owned=a_answer.assignment), 0, CONFIG)
    # c is told (heartbeat) that the partitions it waited for are free: it rejoins and gets them
    assert classic.beat(group, classic.Beat("c", answer.generation), 0, CONFIG)[1].error == classic.REBALANCE_IN_PROGRESS
    group, answer, _ = join(group, "c")
    return group, answer


def test_a_classic_member_revokes_through_its_joins_and_syncs_never_owning_a_partition_twice():
    group, answer = c_owns_half()
    c = group.member("c")
    assert c.state == "STABLE" and c.assigned == frozenset({2, 3})
    assert classic.sync(group, classic.Sync("c", answer.generation, None), 0, CONFIG)[1].assignment == frozenset({2, 3})
    assert classic.beat(group, classic.Beat("c", answer.generation), 0, CONFIG)[1].error == classic.NONE
    # a third member, b: range gives a {0, 1}, b {2}, c {3}; c's rejoin still owning 2 leaves it revoking
    group, _, _ = coord.heartbeat(group, coord.Request("b", 0, 30_000, ("t",), frozenset()), 0, CONFIG)
    assert classic.beat(group, classic.Beat("c", answer.generation), 0, CONFIG)[1].error == classic.REBALANCE_IN_PROGRESS
    group, answer, _ = join(group, "c", owned=frozenset({2, 3}))
    c = group.member("c")
    assert c.state == UNREVOKED_PARTITIONS and c.revoking == frozenset({2})
    # SyncGroup gives what it keeps, never what it is revoking; a heartbeat says rejoin
    assert classic.sync(group, classic.Sync("c", answer.generation, None), 0, CONFIG)[1].assignment == frozenset({3})
    assert classic.beat(group, classic.Beat("c", answer.generation), 0, CONFIG)[1].error == classic.REBALANCE_IN_PROGRESS
    assert group.partition_epochs[2] == c.epoch  # still c's
    # the rejoin without partition 2 moves it on; partition 2 is free for b
    group, answer, _ = join(group, "c", owned=frozenset({3}))
    assert group.member("c").state == "STABLE" and group.partition_epochs[2] == coord.NO_EPOCH


def test_the_broken_variants_answer_otherwise():
    group, answer = c_owns_half()
    group, _, _ = coord.heartbeat(group, coord.Request("b", 0, 30_000, ("t",), frozenset()), 0, CONFIG)
    broken = {name: Config(clients=3, partitions=4, broken={name}) for name in CLASSIC_VARIANTS}
    # owned ignored: the rejoin that still owns partition 2 moves c on, and partition 2 is free while c has it
    wrong, _, _ = join(group, "c", owned=frozenset({2, 3}), config=broken["classic_owned_ignored"])
    assert wrong.member("c").state == "STABLE" and wrong.partition_epochs[2] == coord.NO_EPOCH
    # the heartbeat that must say rejoin does not
    beat = classic.Beat("c", answer.generation)
    assert classic.beat(group, beat, 0, broken["classic_heartbeat_never_rebalances"])[1].error == classic.NONE
    # the sync while revoking hands the revoked partition back
    revoking, again, _ = join(group, "c", owned=frozenset({2, 3}))
    sync = classic.Sync("c", again.generation, None)
    assert classic.sync(revoking, sync, 0, broken["classic_sync_gives_revoking"])[1].assignment == frozenset({2, 3})


def test_a_leave_fences_the_classic_member_and_the_last_consumer_leaving_downgrades():
    group, _, _ = join(consumer_group("a"), "c")
    group, answer, log = classic.leave(group, classic.Leave("c"), 0, CONFIG)
    assert answer.error == classic.NONE and group.member("c") is None and ("fenced", "c", "left (LeaveGroup)") in log
    assert not any(e[0] == "downgrade" for e in log)  # a consumer-protocol member is left
    assert classic.leave(group, classic.Leave("c"), 0, CONFIG)[1].error == classic.UNKNOWN_MEMBER_ID
    group, _, _ = join(group, "c")
    group, answer, log = coord.heartbeat(group, coord.Request("a", 1), 0, CONFIG)
    group, answer, log = coord.heartbeat(group, coord.Request("a", -1), 0, CONFIG)
    assert answer.error == coord.NONE and any(e[0] == "downgrade" for e in log)


def test_heartbeat_tells_a_member_to_rejoin_exactly_when_kafka_does():
    group, answer, _ = join(consumer_group("a"), "c")
    gen = answer.generation
    # waiting for partitions "a" still owns: no rejoin yet
    assert group.member("c").state == UNRELEASED_PARTITIONS
    assert classic.beat(group, classic.Beat("c", gen), 0, CONFIG)[1].error == classic.NONE
    assert classic.beat(group, classic.Beat("c", gen + 1), 0, CONFIG)[1].error == classic.ILLEGAL_GENERATION
    assert classic.beat(group, classic.Beat("zz", gen), 0, CONFIG)[1].error == classic.UNKNOWN_MEMBER_ID
    broken = Config(clients=3, partitions=4, broken={"classic_generation_unchecked"})
    assert classic.beat(group, classic.Beat("c", gen + 1), 0, broken)[1].error == classic.NONE


def test_classic_variants_are_named_apart_from_the_walkers():
    assert set(CLASSIC_VARIANTS).isdisjoint(VARIANTS) and all(v.startswith("classic_") for v in CLASSIC_VARIANTS)
    Config(broken={"classic_sync_gives_revoking"})  # accepted by the settings' check
    with pytest.raises(Exception, match="unknown KIP-848 variant"):
        Config(broken={"classic_nonsense"})


def test_the_upgrade_keeps_each_classic_members_assignment_at_the_classic_generation():
    members = [classic.ClassicGroupMember("c", PROTOCOLS, ("t",), frozenset({0, 1, 2}), 45_000, 30_000),
               classic.ClassicGroupMember("d", ("range",), ("t",), frozenset({3}), 10_000, 20_000)]
    group = classic.upgrade(5, members, 4, 100)
    assert (group.epoch, group.assignment_epoch) == (5, 5) and coord.state(group) == coord.STABLE
    c, d = group.member("c"), group.member("d")
    assert (c.epoch, c.previous_epoch, c.state, c.assigned) == (5, 5, "STABLE", frozenset({0, 1, 2}))
    assert d.classic == classic.Classic(10_000, ("range",)) and d.rebalance_timeout_ms == 20_000
    assert group.target_of("c") == frozenset({0, 1, 2}) and group.partition_epochs == (5, 5, 5, 5)
    assert dict(group.sessions) == {"c": 45_100, "d": 10_100}
    # the consumer that triggered it joins a group whose partitions are all owned: it waits for them
    group, answer, log = coord.heartbeat(group, coord.Request("a", 0, 30_000, ("t",), frozenset()), 0, CONFIG)
    assert answer.epoch == 6 and answer.assignment == frozenset() and ("bump", 6) in log
    assert group.member("a").state == UNRELEASED_PARTITIONS
    # the classic members learn it from their heartbeats
    assert classic.beat(group, classic.Beat("c", 5), 0, CONFIG)[1].error == classic.REBALANCE_IN_PROGRESS
    # the broken variant frees them at once: the new consumer is given partitions c still owns
    broken = Config(clients=3, partitions=4, broken={"classic_upgrade_drops_assignment"})
    free = classic.upgrade(5, members, 4, 100, broken)
    _, answer, _ = coord.heartbeat(free, coord.Request("a", 0, 30_000, ("t",), frozenset()), 0, CONFIG)
    assert answer.assignment and answer.assignment & frozenset({0, 1, 2})


def test_an_upgrade_of_overlapping_assignments_is_refused():
    members = [classic.ClassicGroupMember(m, PROTOCOLS, ("t",), frozenset({1}), 45_000, 30_000) for m in "cd"]
    with pytest.raises(ValueError, match="overlap"):
        classic.upgrade(1, members, 4, 0)
