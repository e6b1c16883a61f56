"""Guided search (properties/explore/guided.py, issue 14 item 4): a child repeats its parent up to
the cut and goes elsewhere after it; rounds, seeds and corpus are deterministic whatever order
the tasks finish in; a guided campaign on Spark equals one in a single process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from model.config import Config
from properties.explore.guided import Corpus, Features, Spec
from properties.explore.walker import walk

CONFIG = Config(clients=3, brokers=2, partitions=4)


def test_a_reseeded_walk_repeats_its_parent_up_to_the_cut_and_then_differs():
    differs = 0
    for seed in range(6):
        parent = walk(seed, CONFIG, steps=40, eventually=False, hash_trace=False)
        cut = len(parent.schedule) // 2
        child = walk(seed, CONFIG, steps=40, eventually=False, hash_trace=False, reseed=((cut, f"x{seed}"),))
        assert child.schedule[:cut] == parent.schedule[:cut]
        differs += child.schedule[cut:] != parent.schedule[cut:]
        # the same reseed gives the same child
        again = walk(seed, CONFIG, steps=40, eventually=False, hash_trace=False, reseed=((cut, f"x{seed}"),))
        assert again.schedule == child.schedule
    assert differs >= 5


def test_walked_marks_where_the_settle_phase_began():
    settled = 0
    for seed in range(3, 8):  # a settle phase that finds the group stable adds no event (idle calls are skipped)
        result = walk(seed, CONFIG, steps=30, hash_trace=False)
        bare = walk(seed, CONFIG, steps=30, eventually=False, hash_trace=False)
        assert result.walked == len(bare.schedule) and result.schedule[:result.walked] == bare.schedule
        settled += len(result.schedule) > result.walked
    assert settled >= 2


def _offer_round(corpus: Corpus, r: int, stop: int, features_of):
    a, b = corpus.round_range(r, stop)
    specs = [corpus.spec(i) for i in range(a, b)]
    for spec in specs:
        corpus.offer(spec, features_of(spec), walked=30, steps=30)
    return specs


def test_rounds_give_fresh_seeds_in_order_and_children_of_the_corpus():
    corpus = Corpus(start=100, round_size=10, children=4)
    seen = {}
    specs = []
    for r in range(3):
        specs += _offer_round(corpus, r, 130, lambda s: {f"F{s.world_seed % 7}": 3, f"G{s.interleaving % 11}": 5})
    fresh = [s for s in specs if s.parent is None]
    children = [s for s in specs if s.parent is not None]
    assert [s.world_seed for s in fresh] == list(range(100, 100 + len(fresh)))  # no seed skipped or repeated
    assert len(children) == 8 and [s.interleaving for s in children] == [116, 117, 118, 119, 126, 127, 128, 129]
    parents = {p.interleaving: p for p in corpus.parents}
    for child in children:
        parent = specs[child.parent - 100]
        assert child.world_seed == parent.world_seed and child.parent in parents
        cut = child.reseed[-1][0]
        assert parents[child.parent].first_new + 1 <= cut <= 30  # after what was new, before the settle phase
        assert child.steps == 30 + 20
        seen[child.interleaving] = child
    # a spec is a pure function of the corpus: asked again, the same
    again = Corpus.from_plan(corpus.to_plan())
    assert [again.spec(i) for i in range(120, 130)] == [corpus.spec(i) for i in range(120, 130)]


def test_a_feature_is_new_once():
    corpus = Corpus(round_size=4, children=1)
    assert corpus.offer(Spec(0, 0), {"a": 2, "b": 1}, 10, 20) == ["a", "b"]
    assert corpus.offer(Spec(1, 1), {"a": 0, "c": 7}, 10, 20) == ["c"]
    assert corpus.offer(Spec(2, 2), {"a": 0}, 10, 20) == []
    assert [(p.interleaving, p.first_new) for p in corpus.parents] == [(0, 1), (1, 7)]
    with pytest.raises(ValueError, match="children must be in"):
        Corpus(round_size=4, children=4)


def test_features_name_transitions_errors_events_error_paths_and_sometimes():
    features = Features()
    result = walk(5, CONFIG, steps=60, on_step=features.on_step, hash_trace=False)
    keys = features.keys(result)
    kinds = {k.split(" ", 1)[0] for k in keys}
    assert kinds == {"V", "R", "G", "M", "A", "S", "E"}
    assert "G Empty>PreparingRebalance" in keys and "R JoinGroup:NONE@PREPARING_REBALANCE" in keys
    # the error-path cells, named as the report names them
    assert "E coordinator: JoinGroup / Empty / new member (no member id)" in keys
    assert "E coordinator: SyncGroup / Stable / member, current generation" in keys
    zero = Features()
    assert "E client: Heartbeat / UNKNOWN_MEMBER_ID / STABLE / generation current" in zero.keys(
        walk(0, CONFIG, steps=60, on_step=zero.on_step, hash_trace=False))
    assert all(0 <= pos < len(result.schedule) for pos in keys.values())


def test_guided_search_is_the_same_under_another_hash_seed():
    code = ("from properties.mutation.mutants import Search\n"
            "from properties.explore.guided import Corpus, Features\n"
            "from properties.mutation.mutants import _verdict\n"
            "s = Search(world='swarm', search='guided'); c = Corpus(0, 12, 5); out = []; offers = []\n"
            "for i in range(30):\n"
            "    if i and c.round_of(i) != c.round_of(i - 1):\n"
            "        [c.offer(*o) for o in offers]; offers = []\n"
            "    spec = c.spec(i); case = s.case('x', i, spec); f = Features(); _verdict(case, f)\n"
            "    offers.append((spec, f.keys(f.result), f.result.walked, case.steps))\n"
            "    out.append((spec.world_seed, spec.reseed, len(f.result.schedule)))\n"
            "print(out, sorted(c.known))")
    outputs = set()
    for hash_seed in ("0", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
