"""The KIP-848 walker: clean on the model, every broken variant caught by the property it names,
runs replayable and the same in any process."""

import json
import os
import subprocess
import sys

import pytest

from model.kip848.config import Config
from model.kip848.variants import VARIANTS
from properties.cli import main
from properties.kip848.catalogue import CATALOGUE
from properties.kip848.walker import COVERAGE, replay, walk

# variant -> the first seed whose walk catches it (``groupcheck kip848 --variants``); a change of
# the walker or the model moves these: re-pin them from that command's output
KILLS = {
    "unreleased_assigned": 0,
    "revocation_not_awaited": 7,
    "target_overlaps": 1,  # seed 0 draws the uniform assignor, which this range variant leaves alone
    "fenced_partitions_kept": 3,
    "assignment_only_when_changed": 2,
    "rebalance_timeout_ignored": 24,
    "lost_not_released": 3,
    "epoch_past_target": 0,
    "fenced_rejoins_directly": 0,
    "commit_epoch_unchecked": 0,
    "stale_keeps_partitions": 28,
    "static_unreleased_unchecked": 172,
    "static_duplicate_member": 14,
}


def test_every_variant_is_pinned_and_every_property_has_a_variant():
    assert set(KILLS) == set(VARIANTS)
    assert {prop for _, prop in VARIANTS.values()} == {p.name for p in CATALOGUE}


@pytest.mark.parametrize("name", sorted(KILLS))
def test_each_variant_is_caught_by_its_property_at_its_seed(name):
    seed = KILLS[name]
    broken = walk(seed, Config(broken=frozenset([name])))
    assert broken.violation is not None and broken.violation.property == VARIANTS[name][1], broken.violation
    assert walk(seed, Config()).violation is None  # the variant's decision is what breaks it
    for earlier in range(seed):  # the first seed: the pin says how hard the variant is to reach
        assert walk(earlier, Config(broken=frozenset([name]))).verdict != "counterexample"


def test_the_model_is_clean_and_reaches_every_corner():
    """Every corner is reached by 120 walks or by the directed schedules (properties/kip848/directed.py),
    which only the two corners made for them need."""
    from properties.kip848 import directed

    reached = dict.fromkeys(COVERAGE, 0)
    for seed in range(120):
        result = walk(seed, Config())
        assert result.verdict != "counterexample", (seed, result.violation)  # a known hazard is Kafka's own
        for corner, hits in result.coverage.items():
            reached[corner] += hits
    by_walks = {c for c, n in reached.items() if n == 0}
    assert by_walks <= {d.corner for d in directed.load()}
    part = directed.run(impl=False)
    assert [o["verdict"] for o in part["outcomes"]] == ["ok"] * len(part["outcomes"])
    assert [c for c in by_walks if not part["coverage"].get(c)] == []


def test_a_counterexample_replays_to_the_same_step_and_trace():
    result = walk(KILLS["revocation_not_awaited"], Config(broken=frozenset(["revocation_not_awaited"])))
    from properties.kip848.walker import seed_world

    config, _, _ = seed_world(result.seed, Config(broken=frozenset(["revocation_not_awaited"])))
    again = replay(result.schedule, config)
    assert (again.violation, again.step, again.trace_hash) == (result.violation, result.step, result.trace_hash)


def test_a_walk_without_the_trace_hash_is_the_same_walk():
    config = Config(broken=frozenset(["revocation_not_awaited"]))
    for seed in (KILLS["revocation_not_awaited"], 3):  # one that fails, one that does not
        hashed, unhashed = walk(seed, config, impl=True), walk(seed, config, impl=True, hash_trace=False)
        assert unhashed.trace_hash is None and hashed.trace_hash
        assert (unhashed.schedule, unhashed.verdict, unhashed.violation, unhashed.step, unhashed.coverage) == \
            (hashed.schedule, hashed.verdict, hashed.violation, hashed.step, hashed.coverage)


def test_the_group_checks_run_once_per_group_object_with_the_same_verdicts(monkeypatch):
    """The checker checks the coordinator's group alone only when the group is another object
    (00ea79e): at each variant's kill seed and a clean one, the walk is the one a checker that
    checks it after every event gives (the same violation, at the same step)."""
    from properties.kip848 import catalogue, walker

    class EveryEvent(catalogue.Checker):
        def check(self, before, after, event, log):
            self._held = None  # nothing remembered: every check runs on every event
            return super().check(before, after, event, log)

    def run(name, seed):
        result = walk(seed, Config(broken=frozenset([name]) if name else frozenset()), hash_trace=False)
        return result.verdict, result.violation, result.step, result.schedule

    cases = [(name, seed) for name, seed in sorted(KILLS.items())] + [(None, 5)]
    memoised = [run(*case) for case in cases]
    monkeypatch.setattr(walker, "Checker", EveryEvent)
    assert [run(*case) for case in cases] == memoised
    assert sum(verdict == "counterexample" for verdict, *_ in memoised) == len(KILLS)


def test_same_seed_same_trace_under_any_hash_seed():
    code = "from model.kip848.config import Config; from properties.kip848.walker import walk; print(walk(11, Config()).trace_hash)"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    hashes = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                             env=dict(os.environ, PYTHONHASHSEED=h)).stdout.strip() for h in ("0", "1", "4242")}
    assert hashes == {walk(11, Config()).trace_hash}


def test_command_walks_writes_and_replays(tmp_path, capsys):
    out = tmp_path / "ce.json"
    assert main(["kip848", "--seeds", "3", "--broken", "unreleased_assigned", "--out", str(out), "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["violations"]["kip848-one-owner-per-partition"]["count"] == 2  # seed 2 does not reach it
    assert main(["kip848", "--replay", str(out), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["reproduced"] is True
    assert main(["kip848", "--seeds", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["violations"] == {}


@pytest.mark.parametrize("argv, message", [
    (["kip848", "--broken", "nope"], "unknown KIP-848 variant(s) ['nope']"),
    (["kip848", "--replay", "/nonexistent/ce.json"], "--replay: cannot read /nonexistent/ce.json"),
    (["kip848", "--seeds", "0"], "--seeds"),
])
def test_command_errors_name_the_argument(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_replay_refuses_a_file_that_is_not_a_counterexample(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    assert main(["kip848", "--replay", str(bad)]) == 2
    assert "is not a KIP-848 counterexample" in capsys.readouterr().err
    bad.write_text("{not json")
    assert main(["kip848", "--replay", str(bad)]) == 2
    assert "is not JSON" in capsys.readouterr().err


# A known hazard of Kafka 4.1's own client and coordinator (catalogue.HAZARDS, docs/kip848.md),
# first found at seed 54609; since the model's consumer reconciles as Kafka's does (the background
# thread snapshots the target, the application's poll completes it: found beside impl/'s consumer),
# seed 115 reaches it: consumer 2 receives a target [1] while reconciling an earlier, empty one;
# its acknowledgement of that one reports its current assignment, [], so the coordinator reads
# partition 1 as released and gives it to consumer 1 at epoch 3 (consumer 2's answer: []); but
# consumer 2's background thread had started reconciling towards [1], and its application's poll
# completes that (maybeAbortReconciliation only looks at the state): both hold partition 1 at epoch 3.
HAZARD_SEED = 115


def hazard_replays(seed: int, hazard: str, words: str, impl: bool = False):
    """Seed *seed*'s walk ends at known hazard *hazard* (its message saying *words*), and its schedule
    replayed (with impl/ beside the model if *impl*) ends there again."""
    from properties.kip848.walker import seed_world

    result = walk(seed, Config())
    assert result.verdict == "hazard" and result.violation.property == hazard
    assert words in result.violation.message
    config, _, _ = seed_world(seed, Config())
    again = replay(result.schedule, config, impl=impl)
    assert (again.violation, again.step, again.verdict) == (result.violation, result.step, "hazard")


def test_the_stale_target_hazard_is_reached_classified_and_replayable():
    from properties.kip848.catalogue import STALE_TARGET

    hazard_replays(HAZARD_SEED, STALE_TARGET, "consumer 2 took it from a target older than its last report")
    # the same two holders without the consumer's full heartbeat are the property's, not the hazard's:
    # revocation_not_awaited's first catch stays a counterexample (test_each_variant_is_caught...)


# Found by a 100,000-walk run once the model's consumer handled every heartbeat's answer as Kafka's
# does (seeds 4227 and 50625): consumer 0's poll timer runs out while its join is in flight; it leaves
# (epoch -2: a static member), its application polls, it rejoins at epoch 0 reporting nothing, and
# the coordinator gives partition 2 to consumer 2; then the first join's answer arrives, its
# continuation runs (heartbeatRequestState.reset() cancelled nothing), and consumer 0 takes that
# answer's epoch and assignment [0, 1, 2] and reconciles to it: both hold partition 2 at epoch 2
# once the rejoin's answer brings consumer 0 epoch 2.
ORPHAN_SEED = 4227


def test_the_answer_from_before_a_leave_hazard_is_reached_classified_and_replayable():
    from properties.kip848.catalogue import ANSWER_FROM_BEFORE_LEAVE

    hazard_replays(ORPHAN_SEED, ANSWER_FROM_BEFORE_LEAVE,
                   "consumer 0 took it from the answer to a heartbeat it sent before it left")


# Seed 33 (a static world): consumer 1's join is answered, its answer lost; it retries its join at
# epoch 0 with its own member id and instance id, and Kafka 4.1's coordinator refuses it
# UNRELEASED_INSTANCE_ID (fatal for the Java consumer) — the known hazard apache/kafka#23542
# describes; tests/live/test_kip848_brokers.py shows Kafka 4.1.2 answering so.
STATIC_HAZARD_SEED = 33


def test_the_static_self_unreleased_hazard_is_reached_classified_and_agreed_by_impl():
    from properties.kip848.catalogue import STATIC_SELF_UNRELEASED
    from properties.kip848.walker import static_members

    assert static_members(STATIC_HAZARD_SEED, Config()) > 0
    # impl/ answers the same: still the hazard
    hazard_replays(STATIC_HAZARD_SEED, STATIC_SELF_UNRELEASED, "which it holds itself", impl=True)
