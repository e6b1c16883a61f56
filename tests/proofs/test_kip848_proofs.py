"""The z3 proofs of the KIP-848 coordinator (properties/proofs/kip848.py): they prove at the
default bound, each broken variant they honour gives a counterexample, and the encoding's
reconcile and fence are the model's (model/kip848), checked on random concrete states."""

import random

import pytest
import z3

from model.kip848 import coordinator as coord
from model.kip848.assignment import NO_EPOCH, STABLE, UNRELEASED_PARTITIONS, UNREVOKED_PARTITIONS, Member, reconcile
from model.kip848.config import Config
from properties.proofs import kip848 as K

CODES = {STABLE: K.STABLE, UNREVOKED_PARTITIONS: K.UNREVOKED, UNRELEASED_PARTITIONS: K.UNRELEASED}
N, P = 3, 4


@pytest.mark.parametrize("name", K.PROPERTIES)
def test_each_property_is_proved_at_the_default_bound(name):
    row = K.prove(name)
    assert row["result"] == "proved", row["reason"]
    assert row["bound"] == f"N={K.N_MAX} members, P={K.P_MAX} partitions"


@pytest.mark.parametrize("variant", sorted(K.TEETH))
def test_each_variant_gives_a_counterexample(variant):
    row = K.prove(K.TEETH[variant], N, P, broken={variant})
    assert row["result"] == "counterexample" and "before:" in row["reason"]


def _pin(s: K.State, group: coord.Group, ids: list) -> list:
    """Constraints fixing symbolic state *s* to the concrete *group* (member ids in slots *ids*)."""
    out = [s.ge == group.epoch, s.ae == group.assignment_epoch] + [s.pe[q] == e for q, e in enumerate(group.partition_epochs)]
    for i, mid in enumerate(ids):
        m = group.member(mid) if mid is not None else None
        out.append(s.present[i] == (m is not None))
        out.append(s.inst[i] == (int(m.instance_id[1:]) if m is not None and m.instance_id else -1))
        target = group.target_of(mid) if mid is not None else frozenset()
        out += [s.target[i][q] == (q in target) for q in range(s.p)]
        if m is None:
            continue
        out += [s.epoch[i] == m.epoch, s.state[i] == CODES[m.state]]
        out += [s.assigned[i][q] == (q in m.assigned) for q in range(s.p)]
        out += [s.revoking[i][q] == (q in m.revoking) for q in range(s.p)]
    return out


def _random_group(rng) -> coord.Group:
    """A group whose members hold disjoint partitions with matching partition epochs."""
    ae = rng.randint(1, 6)
    owners = [rng.choice([None, 0, 1, 2]) for _ in range(P)]
    members, epochs = [], [NO_EPOCH] * P
    for i in range(N):
        if rng.random() < 0.2:
            continue
        held = frozenset(q for q in range(P) if owners[q] == i)
        state = rng.choice([STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS])
        epoch = rng.randint(0, ae - 1) if state == UNREVOKED_PARTITIONS else rng.randint(0, ae)
        revoking = frozenset(q for q in held if state == UNREVOKED_PARTITIONS and rng.random() < 0.5)
        members.append(Member(f"m{i}", epoch=epoch, state=state, assigned=held - revoking, revoking=revoking,
                              subscribed=("t",)))
        for q in held:
            epochs[q] = epoch
    target = tuple((m.member_id, frozenset(q for q in range(P) if rng.random() < 0.4)) for m in members)
    return coord.Group(epoch=ae + rng.randint(0, 1), assignment_epoch=ae, members=tuple(members), target=target,
                       partition_epochs=tuple(epochs))


def test_the_encodings_reconcile_and_fence_are_the_models_on_random_states():
    rng = random.Random(848)
    ids = [f"m{i}" for i in range(N)]
    checked = 0
    for _ in range(150):
        group = _random_group(rng)
        if not group.members:
            continue
        m = rng.choice(group.members)
        i = ids.index(m.member_id)
        owned = None if rng.random() < 0.3 else frozenset(q for q in range(P) if rng.random() < 0.5)
        new = reconcile(m, group.assignment_epoch, group.target_of(m.member_id), lambda q: group.partition_epochs[q], owned)
        log: list = []
        after = coord._put_member(group, new, m, log)
        a, b = K.State(N, P, "a_"), K.State(N, P, "b_")
        known, bits = z3.Bool("known"), [z3.Bool(f"o{q}") for q in range(P)]
        step, throws = K.reconcile(a, b, i, known, bits, frozenset())
        pins = _pin(a, group, ids) + [known == (owned is not None)] + [bits[q] == (owned is not None and q in owned) for q in range(P)]
        solver = z3.Solver()
        solver.add(pins)
        if log:  # the model would throw (a state the invariant excludes): so does the encoding
            assert solver.check(throws) == z3.sat
            continue
        solver.add(step)
        assert solver.check(*_pin(b, after, ids)) == z3.sat, (group, m, owned, after)
        assert solver.check(z3.Not(z3.And(_pin(b, after, ids)))) == z3.unsat  # and nothing else
        checked += 1
        fenced, _ = coord.fence(group, m.member_id, "left", Config(partitions=P))
        fs = z3.Solver()
        fs.add(*_pin(a, group, ids), K.fence(a, b, i))
        assert fs.check(*_pin(b, fenced, ids)) == z3.sat
    assert checked > 60


def test_the_encodings_static_leave_and_replace_are_the_models_on_random_states():
    """The model's own static paths (coordinator._leave at -2, coordinator._static's replacement)
    against the encoding's, state by state: the proof is about the model's transitions."""
    rng = random.Random(345)
    config = Config(partitions=P)
    ids = ["m0", "m1", "m2", "m3"]  # slot 3: where a new process's member goes
    checked = 0
    for _ in range(120):
        group = _random_group(rng)
        m = group.member("m0")
        if m is None:
            continue
        group = group._replace(members=tuple(x._replace(instance_id="i0") if x is m else x for x in group.members))
        left, response, _ = coord._leave(group, coord.Request("m0", coord.STATIC_LEAVE_EPOCH, instance_id="i0"), config)
        assert response.epoch == coord.STATIC_LEAVE_EPOCH
        a, b = K.State(4, P, "a_"), K.State(4, P, "b_")
        solver = z3.Solver()
        solver.add(*_pin(a, group, ids), K.static_leave(a, b, 0))
        assert solver.check(*_pin(b, left, ids)) == z3.sat, (group, left)
        assert solver.check(z3.Not(z3.And(_pin(b, left, ids)))) == z3.unsat
        for newcomer, slot in (("m3", 3), ("m0", 0)):  # another process, or the same member rejoining
            log: list = []
            request = coord.Request(newcomer, 0, 5000, ("t",), frozenset(), "i0")
            after, known, _, _, error = coord._static(left, request, config, log)
            assert error is None and known.epoch == 0
            rs = z3.Solver()
            rs.add(*_pin(a, left, ids), K.replace(a, b, 0, slot))
            assert rs.check(*_pin(b, after, ids)) == z3.sat, (left, after)
            assert rs.check(z3.Not(z3.And(_pin(b, after, ids)))) == z3.unsat
        checked += 1
    assert checked > 60
