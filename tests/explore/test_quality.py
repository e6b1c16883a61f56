"""The quality tier: every always property has a broken model variant that is caught.

Two searches are held to it. Hypothesis (the ``ModelMachine``) must find each variant's violation
of the property it targets and shrink it to a short rule sequence; the bound asserted here is
``MAX_RULES`` rule invocations (the shrunk sequences measured on this machine are listed in the
docs/tests.md). The lean walker must find every variant within a few hundred seeds, which is what
campaigns rely on.

A variant is a switch in the model (``model/variants.py``), never a copy of it.
"""

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from model.config import Config
from model.variants import UNREACHED, VARIANTS
from properties.catalogue import ALWAYS_NAMES
from properties.explore.machines import machine_for
from properties.explore.profiles import PHASES
from properties.explore.walker import walk
from tests.helpers.hypothesis_state import without_local_constants

pytestmark = pytest.mark.quality

MAX_RULES = 12  # the shrunk counterexample is at most this many Hypothesis rules

SMALL = dict(clients=2, brokers=2, partitions=3)
# A member whose session outlives the rebalance timeout survives until the join deadline, so the
# "removed for not rejoining" path is reached before session expiry removes it.
LONG_SESSION = dict(clients=2, brokers=1, partitions=2, session_timeout_ms=12000, heartbeat_interval_ms=3000, max_poll_interval_ms=8000)

# Zombie commits need a member to be expired while it still believes it is STABLE.
THREE_ON_ONE = dict(clients=3, brokers=1, partitions=3)
# Slow links keep several heartbeats in flight, so an answer can arrive after the member moved on.
SLOW_LINKS = dict(clients=2, brokers=1, partitions=2, latency_ms=1500)
# Static members: both clients join with a group.instance.id (JoinGroup v5)
STATIC = dict(clients=2, brokers=1, partitions=2, static_clients=2)
# Two processes given one group.instance.id: each joining fences the other; one assignor list for
# both, so the one that joins a Stable group takes the other's place without a rebalance
TWINS = dict(clients=2, brokers=1, partitions=2, static_clients=2, static_twins=1, assignors=("range",))
# Longer rule sequences for the variants whose trigger takes more steps to set up.
STEPS = {"commit_skips_fencing": 25, "commit_checks_generation_first": 25, "non_rejoined_kept": 25}

# Variants whose trigger needs a working group start from one (a burst of quiet time first).
PREFIX = {"join_completes_with_pending": (("quiet",),), "commit_checks_generation_first": (("quiet",),)}
# More examples for the variants whose trigger is rarest: with 400, whether Hypothesis met it
# depended on what ran before in the same process (seen after disconnects could leave requests
# to be handled late widened the fault alphabet). expiry_never needs a request left unsent past its
# timeout (a poll, a tick over request.timeout.ms before the connect completes, a poll): generating
# alone, Hypothesis met it at example 395 of 400 with the machines' hand-written alphabet and at 751
# with model.events.offers' (which no longer offers events the step refuses): low odds either way.
EXAMPLES = {"non_rejoined_kept": 1000, "expiry_never": 1000}

# The variant Hypothesis must catch for each always property, with the world it searches.
HYPOTHESIS_CASES = {
    "generation-advances-by-one": ("generation_not_bumped", SMALL),
    "leader-is-member": ("leader_not_repicked", SMALL),
    "one-member-per-instance": ("static_member_added_not_replaced", STATIC),
    "fenced-member-id-never-accepted": ("fenced_static_member_accepted", TWINS),
    "static-rejoin-keeps-generation": ("static_rejoin_rebalances", STATIC),
    "legal-group-transitions": ("stable_skips_completing", SMALL),
    "join-completes-when-all-joined": ("join_completes_with_pending", LONG_SESSION),
    "new-generation-members-rejoined": ("non_rejoined_kept", LONG_SESSION),
    "no-early-session-expiry": ("expiry_ignores_deadline", SMALL),
    "disjoint-assignments": ("followers_get_leader_assignment", SMALL),
    "stable-group-covers-partitions": ("assignor_drops_partition", SMALL),
    "stable-member-generation-reached": ("assignment_not_persisted", SMALL),
    "assignment-matches-generation": ("assignment_truncated", SMALL),
    "commit-fencing": ("commit_skips_fencing", THREE_ON_ONE),
    "commit-error-precedence": ("commit_checks_generation_first", THREE_ON_ONE),
    "heartbeat-error-table": ("heartbeat_none_while_preparing", SMALL),
    "legal-member-transitions": ("stable_without_sync", SMALL),
    "heartbeat-only-when-joined": ("heartbeat_while_unjoined", SMALL),
    "one-join-or-sync-in-flight": ("double_join", SMALL),
    "no-reset-by-stale-response": ("stale_response_resets", SLOW_LINKS),
    "member-id-kept-until-fenced": ("rebalance_resets_member_id", SMALL),
    "coordinator-unknown-once": ("coordinator_disconnect_sync", SMALL),
    "join-request-timeout": ("join_timeout_not_extended", SMALL),
    "unsent-expiry": ("expiry_never", SMALL),
    "disconnect-fails-unsent": ("disconnect_keeps_unsent", SMALL),
    "future-completes-once": ("future_completed_twice", SMALL),
    "completions-fifo": ("completions_lifo", SMALL),
    "per-node-fifo": ("send_reorders", SLOW_LINKS),
}


def test_every_always_property_has_a_hypothesis_case():
    assert sorted(HYPOTHESIS_CASES) == sorted(ALWAYS_NAMES)
    for prop, (variant, _) in HYPOTHESIS_CASES.items():
        assert VARIANTS[variant][1] == prop


@pytest.mark.parametrize("prop", sorted(HYPOTHESIS_CASES))
def test_hypothesis_finds_and_shrinks(prop):
    variant, world = HYPOTHESIS_CASES[prop]
    machine = machine_for(Config(broken={variant}, **world), check_eventually=False, prefix=PREFIX.get(variant, ()), target=prop)
    search = settings(
        max_examples=EXAMPLES.get(variant, 400),
        stateful_step_count=STEPS.get(variant, 15),
        deadline=None,
        phases=PHASES,
        derandomize=True,
        database=None,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )
    with without_local_constants(), pytest.raises(AssertionError):
        run_state_machine_as_test(machine, settings=search)
    failure = machine.last_failure
    assert failure["property"] == prop, failure["message"]
    assert failure["rules"] <= MAX_RULES, f"shrunk to {failure['rules']} rules ({failure['events']} events)"


# The walker's budget: every variant must fail within this many seeds (3 clients, 3 brokers unless
# the variant needs the long-session world).
WALKER_SEEDS = 400
WALKER_WORLD = {"non_rejoined_kept": LONG_SESSION, "join_completes_with_pending": LONG_SESSION,
                "static_member_added_not_replaced": STATIC, "fenced_static_member_accepted": TWINS,
                "static_rejoin_rebalances": STATIC}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_walker_finds_every_variant(variant):
    config = Config(broken={variant}, **WALKER_WORLD.get(variant, {}))
    for seed in range(WALKER_SEEDS):
        result = walk(seed, config, steps=60)
        if result.violation is not None:
            assert result.violation.property in ALWAYS_NAMES
            return
    pytest.fail(f"{variant} survived {WALKER_SEEDS} seeds")


def test_correct_model_survives_what_kills_the_variants():
    for seed in range(60):
        assert walk(seed, Config(), steps=60).verdict == "ok"


def test_unreached_variants_are_documented_not_tested():
    assert not set(UNREACHED) & set(VARIANTS)
    assert all(prop in ALWAYS_NAMES for _, prop in UNREACHED.values())
