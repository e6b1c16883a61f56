"""impl/'s KIP-848 coordinator (impl/server/modern): its rules one by one, its agreement with the
model over walks, and the mutants of it that the default campaign's KIP-848 walks must kill."""

import json

import pytest

from impl.errors import Errors, IllegalStateException
from impl.protocol import ConsumerGroupHeartbeatRequestData as Req
from impl.protocol import ConsumerGroupHeartbeatTopicPartitions as TP
from impl.server.modern import ConsumerGroupCoordinator, ModernGroupConfig
from impl.server.modern.consumer_group import ConsumerGroup
from impl.server.modern.consumer_group_member import ConsumerGroupMember, MemberState
from impl.server.timer import MockTimer
from impl.time import MockTime
from model.kip848.config import Config
from properties.cli import main
from properties.kip848 import walker
from properties.kip848.catalogue import IMPL_AGREEMENT, IMPL_CONSUMER_AGREEMENT, IMPL_CRASH
from properties.kip848.mutants import MUTANTS, hunt

T = "AAAAAAAAAAAAAAAAAAAAAQ"  # Kafka Uuid 1


def coordinator(partitions=4, session=3000):
    timer = MockTimer(MockTime())
    return ConsumerGroupCoordinator(ModernGroupConfig(session_timeout_ms=session, heartbeat_interval_ms=1000),
                                    timer, lambda name: (T, partitions) if name == "t" else None), timer


def join(c, member_id, timeout=4000):
    return c.consumer_group_heartbeat(Req("g", member_id, 0, rebalance_timeout_ms=timeout,
                                          subscribed_topic_names=["t"], topic_partitions=[]))


def beat(c, member_id, epoch, owned=None):
    return c.consumer_group_heartbeat(Req("g", member_id, epoch, topic_partitions=owned))


def parts(response):
    return None if response.assignment is None else sorted(p for tp in response.assignment.topic_partitions
                                                            for p in tp.partitions)


def test_the_assignor_the_members_name_computes_the_targets_even_at_a_heartbeat_that_changes_nothing():
    """computePreferredServerAssignor counts the heartbeat's member with the name it holds: of three
    members only b asks for `range` (the coordinator's default being `uniform`, as Kafka 4.x's), so
    `range` it is; after a leaves, b's next heartbeat recomputes the targets by `range` (contiguous), not
    by the default. (impl/ counted nothing for a member its heartbeat left unchanged, and fell back to
    `uniform`: found by `conform broker --describe`, seed 250 of --classic 2 --upgrade.)"""
    c, _ = coordinator()
    for m in "abc":
        assert c.consumer_group_heartbeat(Req("g", m, 0, rebalance_timeout_ms=4000, subscribed_topic_names=["t"],
                                              topic_partitions=[], server_assignor="range" if m == "b" else None)
                                          ).error_code == 0
    group = c.groups["g"]
    assert {m: sorted(group.target_assignment(m)[T]) for m in "abc"} == {"a": [0, 1], "b": [2], "c": [3]}
    assert c.consumer_group_heartbeat(Req("g", "a", -1)).error_code == 0  # a leaves: the group epoch is bumped
    beat(c, "b", group.members["b"].member_epoch)  # nothing about b changes; the targets are recomputed
    assert {m: sorted(group.target_assignment(m).get(T, ())) for m in "bc"} == {"b": [0, 1], "c": [2, 3]}  # uniform: [0, 2], [1, 3]


def test_a_second_member_waits_until_the_first_revokes_and_the_partitions_move_one_owner_at_a_time():
    c, _ = coordinator()
    a = join(c, "a")
    assert (a.error_code, a.member_epoch, parts(a), a.heartbeat_interval_ms) == (0, 1, [0, 1, 2, 3], 1000)
    b = join(c, "b")  # the group epoch is bumped, the target split; b's partitions are still a's
    group = c.groups["g"]
    assert (b.member_epoch, parts(b), group.group_epoch) == (2, [], 2)
    assert group.members["b"].state is MemberState.UNRELEASED_PARTITIONS
    a = beat(c, "a", 1, owned=[TP(T, [0, 1, 2, 3])])  # a must revoke 2 and 3 first, at its epoch
    assert (a.member_epoch, parts(a)) == (1, [0, 1]) and group.members["a"].state is MemberState.UNREVOKED_PARTITIONS
    assert beat(c, "b", 2).assignment is None  # still held by a
    a = beat(c, "a", 1, owned=[TP(T, [0, 1])])  # released: a moves to epoch 2
    assert (a.member_epoch, group.current_partition_epoch(T, 2)) == (2, -1)
    b = beat(c, "b", 2)
    assert parts(b) == [2, 3] and group.current_partition_epoch(T, 2) == 2 and group.state.name == "STABLE"


def test_epochs_are_checked_and_a_lost_answer_is_forgiven_only_with_owned_partitions_it_has():
    c, _ = coordinator()
    join(c, "a")
    join(c, "b")
    beat(c, "a", 1, owned=[TP(T, [0, 1, 2, 3])])
    beat(c, "a", 1, owned=[TP(T, [0, 1])])  # a is at epoch 2, previous epoch 1
    assert Errors.for_code(beat(c, "a", 3).error_code) is Errors.FENCED_MEMBER_EPOCH  # greater
    assert beat(c, "a", 1, owned=[TP(T, [0, 1])]).member_epoch == 2  # the previous epoch, owned ⊆ assigned
    assert Errors.for_code(beat(c, "a", 1, owned=[TP(T, [0, 3])]).error_code) is Errors.FENCED_MEMBER_EPOCH
    assert Errors.for_code(beat(c, "a", 1).error_code) is Errors.FENCED_MEMBER_EPOCH  # owned not sent
    assert Errors.for_code(beat(c, "zz", 2).error_code) is Errors.UNKNOWN_MEMBER_ID
    assert Errors.for_code(c.consumer_group_heartbeat(Req("h", "a", 1)).error_code) is Errors.GROUP_ID_NOT_FOUND


@pytest.mark.parametrize("request_, why", [
    (Req("g", "a", 0, subscribed_topic_names=["t"], topic_partitions=[]), "RebalanceTimeoutMs"),
    (Req("g", "a", 0, rebalance_timeout_ms=1, subscribed_topic_names=["t"]), "TopicPartitions"),
    (Req("g", "a", 0, rebalance_timeout_ms=1, topic_partitions=[]), "SubscribedTopicNames"),
    (Req("g", "", 1), "MemberId"),
    (Req("g", "a", -2), "InstanceId"),
    (Req("g", "a", -3), "MemberEpoch"),
])
def test_invalid_requests_are_answered_invalid_request_with_kafkas_message(request_, why):
    c, _ = coordinator()
    response = c.consumer_group_heartbeat(request_)
    assert Errors.for_code(response.error_code) is Errors.INVALID_REQUEST and why in response.error_message
    assert "g" not in c.groups


def test_a_leave_fences_the_member_and_releases_its_partitions():
    c, _ = coordinator()
    join(c, "a")
    response = c.consumer_group_heartbeat(Req("g", "a", -1))
    group = c.groups["g"]
    assert (response.error_code, response.member_id, response.member_epoch) == (0, "a", -1)
    assert group.members == {} and group.current_partition_epochs == {} and group.group_epoch == 2
    assert group.state.name == "EMPTY" and list(c.fenced) == [("g", "a", "left")]


def test_the_session_and_rebalance_timers_fence_at_their_deadlines():
    c, timer = coordinator(session=3000)
    join(c, "a", timeout=1000)
    join(c, "b")
    beat(c, "a", 1, owned=[TP(T, [0, 1, 2, 3])])  # a starts revoking at 0: its rebalance timer is due at 1000
    timer.advance_clock(999)
    assert "a" in c.groups["g"].members
    timer.advance_clock(1000)
    assert "a" not in c.groups["g"].members and c.fenced[-1] == ("g", "a", "rebalance timeout")
    beat(c, "b", 2)  # b's session restarted at 1000: due at 4000
    timer.advance_clock(3999)
    assert "b" in c.groups["g"].members
    timer.advance_clock(4000)
    assert c.groups["g"].members == {} and c.fenced[-1] == ("g", "b", "session expired")


def test_a_full_group_refuses_a_new_member_and_an_unknown_assignor_is_refused():
    timer = MockTimer(MockTime())
    c = ConsumerGroupCoordinator(ModernGroupConfig(max_size=1), timer, lambda name: (T, 4) if name == "t" else None)
    join(c, "a")
    assert Errors.for_code(join(c, "b").error_code) is Errors.GROUP_MAX_SIZE_REACHED  # throwIfConsumerGroupIsFull
    assert beat(c, "a", 1).error_code == 0  # a member already in it is not refused
    response = c.consumer_group_heartbeat(Req("g", "b", 0, rebalance_timeout_ms=1, subscribed_topic_names=["t"],
                                              topic_partitions=[], server_assignor="sticky"))
    assert (Errors.for_code(response.error_code) is Errors.UNSUPPORTED_ASSIGNOR
            and "Supported assignors: uniform, range." in response.error_message)


def test_offset_commits_are_fenced_by_member_epoch():
    c, _ = coordinator()
    assert c.validate_offset_commit("g", "a", None, 1, 9) is Errors.GROUP_ID_NOT_FOUND
    assert c.validate_offset_commit("g", "a", None, 1, 8) is Errors.ILLEGAL_GENERATION
    assert c.validate_offset_commit("g", "", None, -1, 9) is Errors.NONE  # a simple group
    join(c, "a")
    assert c.validate_offset_commit("g", "a", None, 1, 9) is Errors.NONE
    assert c.validate_offset_commit("g", "a", None, 0, 9) is Errors.STALE_MEMBER_EPOCH
    assert c.validate_offset_commit("g", "b", None, 1, 9) is Errors.UNKNOWN_MEMBER_ID
    assert c.validate_offset_commit("g", "a", None, 1, 8) is Errors.UNSUPPORTED_VERSION


def test_a_partition_given_while_still_owned_is_kafkas_illegal_state():
    group = ConsumerGroup("g")
    group.update_member(ConsumerGroupMember("a", member_epoch=3, assigned_partitions={T: frozenset({0})}))
    with pytest.raises(IllegalStateException, match="still owned at epoch 3"):
        group.update_member(ConsumerGroupMember("b", member_epoch=3, assigned_partitions={T: frozenset({0})}))


def test_static_members_leave_at_minus_2_are_replaced_and_refused_while_the_instance_id_is_held():
    c, timer = coordinator(partitions=2)

    def static(member_id, epoch, **fields):
        return c.consumer_group_heartbeat(Req("g", member_id, epoch, instance_id="i0", **fields))

    a = static("a", 0, rebalance_timeout_ms=4000, subscribed_topic_names=["t"], topic_partitions=[])
    group = c.groups["g"]
    assert (a.member_epoch, parts(a), group.static_members) == (1, [0, 1], {"i0": "a"})
    # the instance id is held at a live epoch: a new process, and the member itself, are refused
    for member_id in ("z", "a"):
        refused = static(member_id, 0, rebalance_timeout_ms=4000, subscribed_topic_names=["t"], topic_partitions=[])
        assert refused.error_code == Errors.UNRELEASED_INSTANCE_ID.code
    assert static("z", 1).error_code == Errors.FENCED_INSTANCE_ID.code
    assert c.consumer_group_heartbeat(Req("g", "a", 1, instance_id="i9")).error_code == Errors.UNKNOWN_MEMBER_ID.code
    left = static("a", -2)
    assert (left.error_code, left.member_id, left.member_epoch) == (0, "a", -2)
    assert group.members["a"].member_epoch == -2 and group.current_partition_epoch(T, 0) == -2
    new = static("z", 0, rebalance_timeout_ms=4000, subscribed_topic_names=["t"], topic_partitions=[])
    assert (new.error_code, new.member_epoch, parts(new)) == (0, 1, [0, 1])  # a's place, no bump
    assert "a" not in group.members and group.static_members == {"i0": "z"} and group.group_epoch == 1
    assert group.target_assignment("z") == {T: frozenset({0, 1})} and "a" not in group.target_assignments
    timer.advance_clock(3000)  # a's session timer finds nobody; z's session (restarted at its join) ends
    assert "z" not in group.members and group.group_epoch == 2


def test_impl_agrees_with_the_model_over_walks_and_compares_every_answer(monkeypatch):
    runs = []
    real = walker._Run.__init__

    def spy(self, config, impl=False, hash_trace=True):
        real(self, config, impl, hash_trace)
        runs.append(self)

    monkeypatch.setattr(walker._Run, "__init__", spy)
    statics = 0
    for seed in range(40):
        result = walker.walk(seed, Config(), impl=True)
        assert result.verdict != "counterexample", (seed, result.violation)  # a hazard is Kafka's own
        statics += result.world.group.epoch > 0 and any(c is not None and c.instance_id for c in result.world.clients)
    assert sum(r.differential.compared for r in runs) > 2000
    assert sum(r.differential.requests_compared for r in runs) > 3000  # impl/'s consumers beside the model's
    assert statics >= 5  # static members' worlds are among them


def test_an_exception_out_of_impl_is_reported_as_a_crash_with_where_it_came_from(monkeypatch):
    def boom(self, assignment, epoch):
        raise IllegalStateException("Cannot set the epoch")

    monkeypatch.setattr(ConsumerGroup, "add_partition_epochs", boom)
    result = walker.walk(0, Config(), impl=True)
    assert result.violation.property == IMPL_CRASH
    message = result.violation.message  # the innermost impl/ frame it came through
    assert "IllegalStateException: Cannot set the epoch" in message and "impl/server/modern/consumer_group.py" in message


# The first of the default campaign's KIP-848 seeds (0, 4, 8, ...) that kills each mutant: a change
# of impl/server/modern, the differential or the walker moves these.
KILLS = {"partition_epoch_lost_on_reassign": 136, "own_revoking_counted_unreleased": 136,
         "unreleased_partitions_assigned": 0, "revocation_not_awaited": 16, "rebalance_timer_not_restarted": 0,
         "previous_epoch_rejected": 8, "fenced_target_kept": 0, "session_not_restarted": 0,
         "full_request_without_assignment": 28, "commit_epoch_unchecked": 0,
         "static_target_not_carried": 36, "static_leave_keeps_revoking": 124, "static_unreleased_unchecked": 172,
         "local_epoch_ignored": 0, "orphan_answer_dropped": 100}


# the mutants of impl/'s consumer in corners the default campaign's 500 KIP-848 walks do not reach: each
# killed by the directed schedule made for its corner (properties/kip848/directed.json), which the default
# campaign replays after its walks
DIRECTED_KILLS = {"same_partitions_not_acknowledged": "consumer same partitions acknowledged",
                  "rejoin_keeps_reconciliation": "consumer rejoined while reconciling"}


def test_every_mutant_is_pinned():
    assert set(KILLS) | set(DIRECTED_KILLS) == set(MUTANTS) and not set(KILLS) & set(DIRECTED_KILLS)


@pytest.mark.parametrize("name", sorted(KILLS))
def test_each_mutant_is_killed_by_the_default_campaigns_kip848_walks_at_its_seed(name):
    outcome = hunt(name, Config(), interleavings=KILLS[name] + 1, directed=False)
    assert outcome["killed"] and outcome["seed"] == KILLS[name], outcome
    assert outcome["property"] in (IMPL_AGREEMENT, IMPL_CONSUMER_AGREEMENT, IMPL_CRASH)


@pytest.mark.parametrize("name", sorted(DIRECTED_KILLS))
def test_each_deep_consumer_mutant_is_killed_by_the_directed_schedule_of_its_corner(name):
    """hunt() goes on to the directed schedules when the walks leave a mutant alive (here after one
    walk; the default campaign's 500 leave these two alive): the one made for its corner kills it."""
    outcome = hunt(name, Config(), interleavings=1)
    assert outcome["killed"] and outcome["seed"] is None, outcome
    assert (outcome["directed"], outcome["property"]) == (DIRECTED_KILLS[name], IMPL_CONSUMER_AGREEMENT)


def test_command_walks_with_a_mutant_writes_and_replays_it(tmp_path, capsys):
    out = tmp_path / "cx.json"
    assert main(["kip848", "--seeds", "2", "--mutant", "fenced_target_kept", "--out", str(out)]) == 1
    doc = json.loads(out.read_text())
    assert (doc["system"], doc["mutant"], doc["violation"]["property"]) == ("impl", "fenced_target_kept", IMPL_AGREEMENT)
    capsys.readouterr()
    assert main(["kip848", "--replay", str(out), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["reproduced"]
    out.write_text(json.dumps(dict(doc, mutant=None)))  # the same schedule against the real coordinator
    assert main(["kip848", "--replay", str(out), "--json"]) == 0
    assert not json.loads(capsys.readouterr().out)["reproduced"]


@pytest.mark.parametrize("argv, message", [
    (["--mutant", "nope"], "--mutant must be one of"),
    (["--mutant", "fenced_target_kept", "--system", "model"], "--mutant mutates impl/'s coordinator"),
])
def test_command_errors_name_the_argument(argv, message, capsys):
    assert main(["kip848", "--seeds", "1"] + argv) == 2
    assert message in capsys.readouterr().err


def test_the_campaign_section_says_whether_impl_ran():
    from properties.kip848 import campaign

    with_impl = campaign.section(campaign.run_seeds(range(0, 3)), 4)
    model_only = campaign.section(campaign.run_seeds(range(0, 3), impl=False), 4)
    verdict = {p["property"]: p["verdict"] for p in with_impl["properties"]}
    assert verdict[IMPL_AGREEMENT] == verdict[IMPL_CRASH] == verdict["kip848-impl-no-hang"] == "held" and with_impl["impl"]
    verdict = {p["property"]: p["verdict"] for p in model_only["properties"]}
    assert verdict[IMPL_AGREEMENT] == "not checked" and verdict["kip848-one-owner-per-partition"] == "held"
    assert ("impl/'s KIP-848 coordinator (impl/server/modern) and consumers (impl/membership) ran beside"
            in "\n".join(campaign.markdown(with_impl)))
    assert "The model alone" in "\n".join(campaign.markdown(model_only))



def test_the_group_is_compared_after_a_tick_too():
    # a session expiry is a tick's: impl/'s fencing that keeps the target shows right after it
    from properties.kip848.mutants import _fails
    from properties.mutation.mutants import KIP848, applied

    with applied(KIP848["fenced_target_kept"]):
        prop, message = _fails(0, Config(), walker.DEFAULT_STEPS)
    assert prop == IMPL_AGREEMENT and message.startswith("after ['tick', ") and "target: model" in message
