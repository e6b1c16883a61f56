"""A consumer changing its subscription (issue 37's "a consumer changing its subscription to a topic
with other partitions, and back"): the ``subscribe`` event in both worlds, the leader assigning
topics only other members subscribe to, an assignment of a topic dropped while the JoinGroup was in
flight refused, the assignors over two topics, the coverage properties over two topics, and the
mutants of impl/ only this reaches."""

from __future__ import annotations

import random

import pytest

from impl.coordinator.assignors import RangeAssignor, RoundRobinAssignor
from impl.protocol import Subscription
from model.assignors import range_assign, roundrobin_assign
from model.config import Config, ConfigError
from model.topics import BOTH, FIRST, SECOND, SECOND_BASE
from model.world import initial_world, step
from properties.catalogue import Checker, covers_topics
from properties.mutation.mutants import applied
from tests.helpers.sides import Sides

TWO = Config(clients=2, brokers=1, partitions=4, second_partitions=3, assignors=("range",))
FIRST_PARTS, SECOND_PARTS = (0, 1, 2, 3), (100, 101, 102)


def _owned(sides) -> list:
    return [c.assignment for c in sides.world.clients]


def _settled(sides) -> bool:
    g = sides.group()
    return g is not None and g.state == "Stable" and all(
        c.state == "STABLE" and c.generation == g.generation and not c.rejoin_needed for c in sides.world.clients)


def test_a_consumer_that_subscribes_to_the_second_topic_rejoins_and_takes_it_and_comes_back():
    sides = Sides(TWO).settle()
    assert sides.problem is None and sorted(_owned(sides)) == [(0, 1), (2, 3)]
    generation = sides.group().generation
    sides.apply(("subscribe", 1, SECOND, 0))
    # nothing sent, nothing changed but the subscription: the next poll rejoins
    assert sides.world.clients[1].subscription == SECOND and sides.world.clients[1].assignment in ((0, 1), (2, 3))
    assert [e for e in sides.log if e[0] == "subscribed"] == [("subscribed", 1, ("u",))]
    sides.quiet(800, tick_ms=50, until=lambda w: _settled(sides) and sides.group().generation > generation)
    assert sides.problem is None, sides.problem
    assert _owned(sides) == [FIRST_PARTS, SECOND_PARTS]  # each the whole of its own topic
    generation = sides.group().generation
    sides.apply(("subscribe", 1, FIRST, 0))
    sides.quiet(800, tick_ms=50, until=lambda w: _settled(sides) and sides.group().generation > generation)
    assert sides.problem is None, sides.problem
    assert sorted(_owned(sides)) == [(0, 1), (2, 3)]


def test_the_leader_assigns_a_topic_only_another_member_subscribes_to_in_the_same_generation():
    """The leader stays on the first topic while the other member moves to both: the leader's
    updateGroupSubscription asks for the new topic's metadata at once (requestUpdateForNewTopics)
    and awaits it (ensureFreshMetadata), so the generation that follows assigns the second topic too
    and no further rebalance is needed; without the wait (a mutant) the leader assigns the first
    topic only and the implementation parts from the model."""
    def run():
        sides = Sides(TWO).settle()
        leader = next(c for c, client in enumerate(sides.world.clients) if client.is_leader)
        other = 1 - leader
        generation = sides.group().generation
        sides.apply(("subscribe", other, BOTH, 0))
        sides.quiet(800, tick_ms=50, until=lambda w: _settled(sides) and sides.group().generation > generation)
        return sides, leader, other, generation

    sides, leader, other, generation = run()
    assert sides.problem is None, sides.problem
    assert sides.group().generation == generation + 1  # one rebalance, no more
    assert set(sides.world.clients[other].assignment) >= set(SECOND_PARTS)
    assert not any(p >= SECOND_BASE for p in sides.world.clients[leader].assignment)
    with applied("leader_assigns_without_new_topic_metadata"):
        sides, *_ = run()
    assert sides.problem is not None and sides.problem.property == "impl-matches-model", sides.problem


def _join_in_flight_then_subscribe(sides, c: int, mask: int) -> None:
    """Client *c* rejoins (another member's subscription change started a rebalance) and, once its
    JoinGroup is sent, its application subscribes to *mask*."""
    sides.quiet(800, tick_ms=50, until=lambda w: w.clients[c].join_future is not None and w.clients[c].join_future[0] == "pending"
                and w.clients[c].state == "PREPARING_REBALANCE")
    sides.apply(("subscribe", c, mask, 0))


def test_an_assignment_of_a_topic_dropped_while_the_join_group_was_in_flight_is_refused():
    """Client 1 subscribes to the second topic; in the rebalance that follows, client 0 drops the
    first topic for the second after its JoinGroup left: the leader assigns by the topics the
    JoinGroups named, client 0 refuses the first topic's partitions (onJoinComplete:
    checkAssignmentMatchedSubscription), rejoins, and the group settles with both on the second
    topic. Model and implementation agree at every event; a consumer that took the assignment
    anyway, or never rejoined for its new subscription (mutants), parts from the model."""
    def run(mutant=None):
        sides = Sides(TWO).settle()
        sides.apply(("subscribe", 1, SECOND, 0))
        _join_in_flight_then_subscribe(sides, 0, SECOND)
        sides.quiet(800, tick_ms=50, until=lambda w: _settled(sides) and all(c.subscription == SECOND and c.assignment
                                                                 for c in w.clients))
        return sides

    sides = run()
    assert sides.problem is None, sides.problem
    refused = [e for e in sides.log if e[0] == "assignment_refused"]
    assert refused and refused[0].c == 0 and any(p < SECOND_BASE for p in refused[0].partitions)
    assert sorted(p for c in sides.world.clients for p in c.assignment) == list(SECOND_PARTS)
    assert sides.checker.coverage["assignment-of-old-subscription"] >= 1
    for mutant in ("assignment_not_matched_to_subscription", "subscription_change_not_rejoined"):
        with applied(mutant):
            sides = run()
        assert sides.problem is not None and sides.problem.property == "impl-matches-model", (mutant, sides.problem)


def test_subscribe_is_refused_where_kafka_would_not_run_it():
    world = initial_world(TWO)
    assert step(world, ("subscribe", 0, FIRST, 0))[0] is world  # the same set: no change
    assert step(world, ("subscribe", 0, 4, 0))[0] is world  # no such set
    one_topic = initial_world(Config(clients=1))
    assert step(one_topic, ("subscribe", 0, SECOND, 0))[0] is one_topic  # no second topic in this world
    new, log = step(world, ("subscribe", 0, BOTH, 0))
    assert new.clients[0].subscription == BOTH and new.clients[0].md_update_requested  # requestUpdateForNewTopics


@pytest.mark.parametrize("seed", range(40))
def test_the_model_assignors_deal_two_topics_as_the_implementation_does(seed):
    """Range and round robin over two topics and members subscribed to either or both: the model's
    (model/assignors.py) and Kafka-shaped impl/'s give every member the same partitions."""
    rng = random.Random(seed)
    members = [f"m{i}" for i in rng.sample(range(10), rng.randint(1, 5))]
    masks = {m: rng.choice((FIRST, SECOND, BOTH)) for m in members}
    counts = {"t": rng.randint(1, 7), "u": rng.randint(1, 7)}
    topics = ((FIRST, tuple(range(counts["t"]))), (SECOND, tuple(range(SECOND_BASE, SECOND_BASE + counts["u"]))))
    names = {FIRST: ["t"], SECOND: ["u"], BOTH: ["t", "u"]}
    subscriptions = {m: Subscription(topics=names[masks[m]]) for m in members}
    for model, impl in ((range_assign, RangeAssignor()), (roundrobin_assign, RoundRobinAssignor())):
        got = impl.assign(counts.get, subscriptions, {m: None for m in members})
        as_ints = {m: tuple(sorted(tp.partition if tp.topic == "t" else SECOND_BASE + tp.partition
                                   for tp in a.partitions)) for m, a in got.items()}
        assert model(members, topics, None, masks) == as_ints, (model.__name__, masks, counts)


def test_a_stable_group_covers_the_topics_its_members_subscribe_to_and_no_other():
    cfg = TWO
    assert covers_topics((0, 1, 2, 3, 100, 101, 102), cfg, 4, BOTH)
    assert covers_topics((100, 101, 102), cfg, 4, SECOND)
    assert not covers_topics((0, 1, 2, 3), cfg, 4, BOTH)  # a subscribed topic left out
    assert not covers_topics((0, 1, 2, 3, 100, 101, 102), cfg, 4, SECOND)  # a topic nobody subscribes to
    assert not covers_topics((0, 1, 2, 3, 100, 101), cfg, 4, BOTH)  # part of the second topic
    assert not covers_topics((0, 1, 100, 101, 102), cfg, 4, BOTH)  # part of the first
    assert covers_topics((0, 1, 2, 3), cfg, 4, None)  # a static member in the group: assigned topics covered
    assert not covers_topics((0, 1, 2, 3, 100), cfg, 4, None)


def test_the_settled_group_must_give_each_consumer_only_its_own_topics():
    """The eventually property over two topics: once settled, the live consumers' assignments cover
    the topics they subscribe to, once, and each owns only partitions of its own topics."""
    sides = Sides(TWO).settle()
    world = sides.world
    assert Checker(TWO).check_eventually(world) is None
    moved = world._replace(clients=(world.clients[0]._replace(subscription=SECOND),) + world.clients[1:])
    problem = Checker(TWO).check_eventually(moved)
    assert problem is not None and "does not subscribe to" in problem.message, problem
    both = world._replace(clients=tuple(c._replace(subscription=BOTH) for c in world.clients))
    problem = Checker(TWO).check_eventually(both)  # the second topic subscribed, nobody owns it
    assert problem is not None and "cover every partition once" in problem.message, problem


def test_a_second_topic_must_sort_after_the_first_and_leave_room_below_its_base():
    with pytest.raises(ConfigError, match="second_topic"):
        Config(second_partitions=2, second_topic="a")
    with pytest.raises(ConfigError, match="below 100"):
        Config(second_partitions=2, partitions=97)
    assert Config(second_partitions=0, second_topic="a").second_partitions == 0  # no second topic: no rule


def test_the_leaders_wait_for_new_topic_metadata_is_a_whole_nested_poll():
    """Regression (the implementation's Hypothesis machine with a second topic, 2026-11-30, shrunk
    to 93 events): a leader subscribed to the second topic alone assigns a group that also
    subscribes to the first. ConsumerCoordinator.updateGroupSubscription → requestUpdateForNewTopics,
    then ensureFreshMetadata → awaitMetadataUpdate → client.poll(timer): a whole poll of the network
    client nested in the JoinGroup answer's handler, which also sent the FindCoordinator the
    heartbeat thread had queued. The model refreshed the metadata without that poll and sent one
    FindCoordinator fewer; it now polls (model.member._update_group_subscription)."""
    import json
    from pathlib import Path

    from properties.campaign.counterexample import config_from_dict
    from properties.systems.differential import compare

    document = json.loads((Path(__file__).parent / "data" / "leader_new_topic_metadata_nested_poll.json").read_text())
    config, schedule = config_from_dict(document["config"]), [tuple(e) for e in document["schedule"]]
    assert any(e[0] == "subscribe" for e in schedule)
    assert compare(config, schedule, seed=0).divergence is None
