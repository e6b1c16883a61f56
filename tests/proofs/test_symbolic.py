"""The z3 encoding of the server coordinator (properties/proofs/symbolic.py): proofs, teeth, agreement.

* every server-side ``always`` property is proved inductive (a small bound here; ``groupcheck
  prove`` runs N<=4, P<=8);
* a property whose strengthening is missing is reported "unknown", never "proved";
* teeth: for every property, its broken variant yields a z3 counterexample which, turned into a
  concrete model state and replayed through model/group.py, shows the same violation;
* agreement: Hypothesis walks the executable model through random events and, at every step, the
  encoding evaluated on the same concrete state must reach the same state, answer the same error
  and judge every property alike; z3's own evaluation of the terms must match too.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model import group as grp
from properties.proofs import symbolic as sy
from properties.catalogue import ALWAYS_NAMES

N, P = 4, 8


def test_properties_are_catalogue_always_properties():
    assert set(sy.PROPERTIES) <= set(ALWAYS_NAMES)
    for name, (_, _, support, variant) in sy.PROPERTIES.items():
        assert set(support) <= set(sy.INVARIANTS), name
        assert variant, name


@pytest.fixture(scope="module")
def encoding():
    return sy.Encoding(N, P)


@pytest.mark.parametrize("name", sorted(sy.PROPERTIES))
def test_proved(encoding, name):
    result = encoding.prove(name)
    assert result.result == "proved", (result.reason, result.counterexample)
    assert set(sy.BASE_INVARIANTS) <= set(result.invariants)


def test_missing_strengthening_is_unknown_not_proved(encoding, monkeypatch):
    """Without "persisted-assignment-partitions", failover can load a record that does not cover
    the partitions: the prover must say so, not pass."""
    inv, step, _, variant = sy.PROPERTIES["stable-group-covers-partitions"]
    monkeypatch.setitem(sy.PROPERTIES, "stable-group-covers-partitions", (inv, step, (), variant))
    result = encoding.prove("stable-group-covers-partitions")
    assert result.result != "proved"
    assert result.counterexample is not None and result.counterexample["event"] == "Failover"


@pytest.mark.properties
@pytest.mark.parametrize("name", sorted(sy.PROPERTIES))
def test_teeth_counterexample_replays_in_model(name):
    variant = sy.TEETH[name]
    enc = sy.Encoding(N, P, broken={variant}, picks="lowest", strict=True)
    found = enc.find_violation(name)
    assert found is not None, f"z3 found no counterexample for {name} under {variant}"
    event, cex = found
    violated, outcome, _ = sy.replay(cex)
    assert name in violated, (event, cex["params"], violated)
    # and the correct model, from the very same state and event, does not violate it (unless the
    # variant breaks the environment: a broken assignor's SyncGroup is stored as sent)
    if variant not in sy.ENVIRONMENT_VARIANTS:
        assert name not in sy.replay(dict(cex, broken=[]))[0]


# ---------------------------------------------------------------------------------------------
# Agreement between the encoding and the executable model
# ---------------------------------------------------------------------------------------------

_EVENTS = ("JoinGroup", "JoinGroup", "JoinGroup", "SyncGroup", "SyncGroup", "Heartbeat", "LeaveGroup",
           "OffsetCommit", "Timer", "Timer", "Failover")


def _walk(draw, config, steps: int, check):
    """Drive the model through *steps* random events; *check(event, group, persisted, params)*
    returns the next (group, persisted) or None when the event is outside the bound."""
    group = persisted = None
    now = 0
    for _ in range(steps):
        event = draw(st.sampled_from(_EVENTS))
        members = [sy.slot_of(m.member_id) for m in group.members] if group else []
        ids = members + ([sy.slot_of(p) for p, _ in group.pending_members] if group else [])
        params = {}
        if event == "Timer":
            best = grp._earliest(group, 0) if group is not None else None
            if best is None:
                continue
            due, kind, key, _ = best
            event = {grp._JOIN: "JoinDeadline", grp._SYNC: "SyncDeadline", grp._HEARTBEAT: "SessionExpiry",
                     grp._PENDING: "PendingExpiry"}[kind]
            if key is not None:
                params["which"] = sy.slot_of(key)
            now = max(now, due)
        else:
            now += draw(st.sampled_from((0, 1, 500, 3000, 20_000)))
        params["t"] = now
        gen = group.generation if group is not None else 0
        if event in ("SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit"):
            params["who"] = draw(st.sampled_from([-1] + ids + [N - 1]))
        if event == "JoinGroup":
            params["who"] = draw(st.sampled_from([-1, -1] + ids))
            free = [i for i in range(N) if i not in ids]
            if params["who"] == -1 and not free:
                continue
            params.update(k=free[0] if free else 0, proto=draw(st.sampled_from((0, 0, 1, 2))),
                          rt=draw(st.sampled_from((5000, 8000))), st=draw(st.sampled_from((6000, 10_000, 500))))
        if event in ("SyncGroup", "Heartbeat", "OffsetCommit"):
            params["gen"] = draw(st.sampled_from((gen, gen, gen - 1, gen + 1, -1)))
        if event == "SyncGroup":
            sa = [[False] * P for _ in range(N)]
            if members:
                for q in range(config.partitions):
                    sa[draw(st.sampled_from(members))][q] = True
            params["sa"] = sa
        after = check(event, group, persisted, params)
        if after is not None:
            group, persisted = after


_configs = st.builds(
    dict, v4=st.booleans(), gms=st.integers(1, 5), min_st=st.just(1000), max_st=st.sampled_from((5000, 30_000)),
    nmjt=st.sampled_from((4000, 300_000)), ird=st.sampled_from((0, 3000)), hbi=st.just(100),
    nparts=st.integers(1, P))


@pytest.mark.properties
@settings(max_examples=40)
@given(cfg=_configs, data=st.data())
def test_encoding_agrees_with_model(cfg, data):
    config = sy.to_config(cfg)
    _walk(data.draw, config, 30, lambda event, g, p, params: sy.agree(event, g, p, params, config, N, P))


@pytest.fixture(scope="module")
def lowest_encoding():
    return sy.Encoding(N, P, picks="lowest")


@pytest.mark.properties
@settings(max_examples=2)
@given(cfg=_configs, data=st.data())
def test_z3_evaluates_terms_like_python(lowest_encoding, cfg, data):
    """The concrete folding of the connectives and z3's reading of the same terms agree."""
    config = sy.to_config(cfg)
    checked = []

    def check(event, g, p, params):
        vals = sy.values_from_groups(g, p, N, P)
        x = sy.run(event, vals, sy.config_values(config), dict(params), N, P, picks="lowest")
        if all(a is True for a in x.assumptions) and len(checked) < 2:
            by_z3 = sy.z3_step(lowest_encoding, event, vals, sy.config_values(config), params)
            assert sy.observe_values(by_z3, N, P) == sy.observe_values(x.s, N, P), event
            checked.append(event)
        return sy.agree(event, g, p, params, config, N, P)

    _walk(data.draw, config, 12, check)


def test_agreement_catches_a_drifted_encoding(monkeypatch):
    """The agreement check has teeth of its own: an encoding whose Heartbeat forgets to re-arm the
    session deadline disagrees with the model."""
    monkeypatch.setattr(sy, "reschedule_heartbeat", lambda x, i, now: None)
    config = sy.to_config(dict(v4=False, gms=5, min_st=1000, max_st=30_000, nmjt=300_000, ird=0, hbi=100, nparts=2))
    join = dict(t=0, who=-1, k=0, proto=0, rt=5000, st=6000)
    group, persisted = grp.handle_join_group(None, sy.concrete_request("JoinGroup", join, N)[0], ("join", 0), 0,
                                             config, sy.lowest_choose).group, None
    with pytest.raises(sy.Disagreement):
        sy.agree("OffsetCommit", group, persisted, dict(t=10, who=0, gen=0), config, N, P)


def test_failover_narrows_a_members_protocols_like_the_model():
    """A member that joined with both protocols comes back from the record with the selected one
    only (GroupMetadataManager.readGroupMessageValue); the encoding's failover must agree."""
    config = sy.to_config(dict(v4=False, gms=5, min_st=1000, max_st=30_000, nmjt=300_000, ird=0, hbi=100, nparts=2))
    join = dict(t=0, who=-1, k=0, proto=1, rt=5000, st=6000)
    group = grp.handle_join_group(None, sy.concrete_request("JoinGroup", join, N)[0], ("join", 0), 0,
                                  config, sy.lowest_choose).group
    group = grp.fire_timers(group, grp.next_deadline(group), config, sy.lowest_choose).group
    assignment = [[True, True] + [False] * (P - 2)] + [[False] * P] * (N - 1)
    request = sy.concrete_request("SyncGroup", dict(t=5000, who=0, gen=group.generation, sa=assignment), N)[0]
    out = grp.handle_sync_group(group, request, ("req",), 5000, config, sy.lowest_choose)
    assert out.persist.members[0].protocols == sy.PROTOS[1]
    loaded, _ = sy.agree("Failover", out.group, out.persist, dict(t=6000), config, N, P)
    assert loaded.members[0].protocols == sy.PROTOS[0]
