"""Partitions added to the subscribed topic (issue 14, item 2: "topic partition-count change with
Metadata refresh ... and the rebalance it triggers"), in the model and the implementation alike.

Kafka: a consumer learns the topic's new partition count at its next metadata refresh
(Metadata.timeToNextUpdate: metadata.max.age.ms, or an update requested after a failed coordinator
lookup); ConsumerCoordinator.poll takes a new metadataSnapshot; the leader, whose
assignmentSnapshot no longer matches, rejoins (rejoinNeededOrPending, "cached metadata has
changed") and assigns the new partitions."""

from __future__ import annotations

import pytest

import model.member as member
from model.config import Config
from model.topics import FIRST, SECOND_BASE
from model.world import MAX_ADDED_PARTITIONS, step
from properties.catalogue import Checker, covers
from properties.explore.swarm import draw
from properties.explore.walker import quiet_time_bound_ms, settle, walk
from properties.systems.differential import compare

AGE = 5000
CONFIG = Config(metadata_max_age_ms=AGE)


def _stable():
    result = walk(0, CONFIG, steps=60, faults="none")
    world = result.world
    assert world.group.state == "Stable" and world.partitions == CONFIG.partitions
    return world, list(result.schedule)


def test_the_leader_learns_of_new_partitions_at_its_refresh_and_rebalances_them_in():
    world, schedule = _stable()
    generation = world.group.generation
    grown, log = step(world, ("add_partitions", 2, 0))
    schedule.append(("add_partitions", 2, 0))
    assert grown.partitions == CONFIG.partitions + 2 and ("add_partitions", 6, 8) in log
    assert all(c.md_partitions == CONFIG.partitions for c in grown.clients)  # nobody knows yet
    seen = []

    def on_step(w, event, new, log):
        seen.append((new.now, new.group.generation if new.group else None,
                     max(c.md_partitions for c in new.clients)))

    checker = Checker(CONFIG)
    settled, violation = settle(grown, checker, None, schedule, on_step=on_step)
    assert violation is None
    assert settled.group.state == "Stable" and settled.group.generation > generation
    owned = sorted(p for c in settled.clients for p in c.assignment)
    assert owned == list(range(CONFIG.partitions + 2))
    # the rebalance came only after a refresh, metadata.max.age.ms after the last one
    first_rebalance = next(now for now, g, _ in seen if g is not None and g > generation)
    first_known = next(now for now, _, known in seen if known == CONFIG.partitions + 2)
    assert first_known <= first_rebalance and first_known >= world.now  # learned, then rebalanced
    assert checker.coverage["new-partitions-assigned"] >= 1  # the sometimes property saw it
    assert compare(CONFIG, schedule, 0).divergence is None  # the implementation does the same


def test_a_leader_that_ignores_the_metadata_change_fails_the_eventually_property(monkeypatch):
    world, schedule = _stable()
    grown, _ = step(world, ("add_partitions", 1, 0))
    monkeypatch.setattr(member, "rejoin_needed_or_pending",
                        lambda s: s.rejoin_needed or s.join_future is not None)  # no snapshot check
    _, violation = settle(grown, Checker(CONFIG), None, schedule + [("add_partitions", 1, 0)])
    assert violation is not None and violation.property == "eventually-stable"
    assert "cover every partition" in violation.message


def test_the_topic_grows_within_bounds_and_the_stable_coverage_rule_follows_it():
    world, _ = _stable()
    assert step(world, ("add_partitions", 0, 0))[0] is world
    assert step(world, ("add_partitions", MAX_ADDED_PARTITIONS + 1, 0))[0] is world
    assert step(world, ("add_partitions", MAX_ADDED_PARTITIONS, 0))[0].partitions == CONFIG.partitions + MAX_ADDED_PARTITIONS
    assert covers([0, 1, 2], 3, 3) and covers([0, 1, 2], 3, 5) and covers([0, 1, 2, 3, 4], 3, 5)
    assert not covers([0, 1], 3, 5)  # fewer than the topic ever had
    assert not covers([0, 2, 3], 3, 5)  # a hole
    assert not covers([0, 1, 2, 3, 4, 5], 3, 5)  # more than it has
    # a refresh must fit in the settle phase's quiet time, or the eventually properties could not hold
    assert quiet_time_bound_ms(CONFIG) - quiet_time_bound_ms(Config()) == 2 * AGE


@pytest.mark.parametrize("start", [0, 1000])
def test_topics_worlds_agree_with_the_implementation(start):
    """The swarm's topics mix adds partitions and gives its worlds a metadata.max.age.ms that runs
    out; walked beside the implementation, the worlds that add partitions stay in step."""
    from properties.systems import run

    grown = 0
    for seed in range(start, start + 1000):
        w = draw(seed, Config())
        if w.mix != "topics":
            continue
        assert w.config.metadata_max_age_ms in (1000, 5000, 30000) and "metadata-age=" in w.label()
        model = walk(seed, w.config, steps=w.steps, faults=w.faults, mix=w.mix, hash_trace=False,
                     **{k: v for k, v in w.walk_options().items() if k != "mix"})
        if model.world.partitions == w.config.partitions:
            continue  # no partitions added: not this test's business
        result = run("impl", seed, w.config, steps=w.steps, faults=w.faults, max_faults=w.max_faults,
                     quiet_rate=w.quiet_rate, hash_trace=False, mix=w.mix)
        assert result.violation is None, (seed, result.violation)
        # the settled group took them all in (the first topic's: its consumers may have moved some
        # of their subscriptions to the world's second topic, model/topics.py)
        live = [c for c in result.world.clients if c.live]
        owned = sorted(p for c in live for p in c.assignment if p < SECOND_BASE)
        grown += any(c.subscription & FIRST for c in live) and owned == list(range(result.world.partitions))
        if grown == 4:
            break
    assert grown == 4
