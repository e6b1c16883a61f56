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
    monkeypatch.setitem(sy.PROPERTIES, "stable-group-covers-partitions",
                        (inv, step, ("join-deadline-only-preparing",), variant))
    result = encoding.prove("stable-group-covers-partitions")
    assert result.result != "proved"
    assert result.counterexample is not None and result.counterexample["event"] == "Failover"


@pytest.mark.parametrize("name, dropped, event", [
    # a replaced id that is still a member would be accepted
    ("fenced-member-id-never-accepted", "fenced-not-member", None),
    # a failover may load a record that holds one instance twice
    ("one-member-per-instance", "persisted-instance-unique", "Failover"),
    # a static member kept through a join phase by a JoinDeadline outside PreparingRebalance
    ("stable-group-covers-partitions", "join-deadline-only-preparing", "JoinDeadline"),
])
def test_static_strengthenings_are_needed(encoding, monkeypatch, name, dropped, event):
    """The invariants static membership added to the proofs are needed: without each, the prover
    reports the property unproved, never proved."""
    inv, step, support, variant = sy.PROPERTIES[name]
    assert dropped in support
    monkeypatch.setitem(sy.PROPERTIES, name, (inv, step, tuple(s for s in support if s != dropped), variant))
    result = encoding.prove(name)
    assert result.result != "proved", result.reason
    if event is not None:
        assert result.counterexample["event"] == event


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
           "OffsetCommit", "Timer", "Timer", "Failover", "DeleteGroup")


def _walk(draw, config, steps: int, check):
    """Drive the model through *steps* random events; *check(event, group, persisted, params,
    fenced)* returns the next (group, persisted, fenced) or None when the event is outside the
    bound. In a v4+ world requests carry group.instance.ids: a member's own, another's, a new one
    or none, so static members join, are replaced (their old ids fenced) and are fenced."""
    group = persisted = None
    fenced = frozenset()
    now = 0
    static = config.static_clients > 0
    for _ in range(steps):
        event = draw(st.sampled_from(_EVENTS))
        members = [sy.slot_of(m.member_id) for m in group.members] if group else []
        pending = [sy.slot_of(p) for p, _ in group.pending_members] if group else []
        ids = members + pending
        syncing = [sy.slot_of(m) for m in group.pending_sync] if group else []
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
            params["who"] = draw(st.sampled_from([-1] + ids + sorted(fenced) + [N - 1]))
        if event == "JoinGroup":
            params["who"] = draw(st.sampled_from([-1, -1] + ids + sorted(fenced)))
            free = [i for i in range(N) if i not in ids and i not in fenced and i not in syncing]
            if params["who"] == -1 and not free:
                continue
        if event in sy.REQUESTS and static and params["who"] not in pending:
            own = [sy.instance_of(m.group_instance_id) for m in group.members
                   if sy.slot_of(m.member_id) == params["who"]] if group else []
            params["inst"] = draw(st.sampled_from([-1, -1, 0, 1, 2] + own + own))
        if event == "JoinGroup":
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
        after = check(event, group, persisted, params, fenced)
        if after is not None:
            group, persisted, fenced = after


_configs = st.builds(
    dict, v4=st.booleans(), gms=st.integers(1, 5), min_st=st.just(1000), max_st=st.sampled_from((5000, 30_000)),
    nmjt=st.sampled_from((4000, 300_000)), ird=st.sampled_from((0, 3000)), hbi=st.just(100),
    nparts=st.integers(1, P))


@pytest.mark.properties
@settings(max_examples=40)
@given(cfg=_configs, data=st.data())
def test_encoding_agrees_with_model(cfg, data):
    config = sy.to_config(cfg)
    _walk(data.draw, config, 30, lambda event, g, p, params, fenced: sy.agree(event, g, p, params, config, N, P, fenced))


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

    def check(event, g, p, params, fenced):
        vals = sy.values_from_groups(g, p, N, P, fenced)
        x = sy.run(event, vals, sy.config_values(config), dict(params), N, P, picks="lowest")
        if all(a is True for a in x.assumptions) and len(checked) < 2:
            by_z3 = sy.z3_step(lowest_encoding, event, vals, sy.config_values(config), params)
            assert sy.observe_values(by_z3, N, P) == sy.observe_values(x.s, N, P), event
            checked.append(event)
        return sy.agree(event, g, p, params, config, N, P, fenced)

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
    loaded, _, _ = sy.agree("Failover", out.group, out.persist, dict(t=6000), config, N, P)
    assert loaded.members[0].protocols == sy.PROTOS[0]


def test_static_replacement_agrees_step_by_step():
    """KIP-345 through the encoding and the model side by side: a static member of a Stable group
    rejoins with an unknown member id (a restart): its id moves to a new slot without a rebalance,
    the old one is fenced (its Heartbeat answered FENCED_INSTANCE_ID in both), and a failover
    forgets the fencing while loading the record the replacement wrote."""
    config = sy.to_config(dict(v4=True, gms=5, min_st=1000, max_st=30_000, nmjt=300_000, ird=0, hbi=100, nparts=2))
    join = dict(t=0, who=-1, inst=0, k=0, proto=0, rt=5000, st=6000)
    group, persisted, fenced = sy.agree("JoinGroup", None, None, join, config, N, P)
    group, persisted, fenced = sy.agree("JoinDeadline", group, persisted, dict(t=0), config, N, P, fenced)
    assignment = [[True, True] + [False] * (P - 2)] + [[False] * P] * (N - 1)
    group, persisted, fenced = sy.agree("SyncGroup", group, persisted,
                                        dict(t=10, who=0, inst=0, gen=group.generation, sa=assignment), config, N, P)
    assert group.state == grp.STABLE and fenced == frozenset()
    generation = group.generation
    rejoin = dict(t=20, who=-1, inst=0, k=1, proto=0, rt=5000, st=6000)
    group, persisted, fenced = sy.agree("JoinGroup", group, persisted, rejoin, config, N, P, fenced)
    assert fenced == {0}
    assert group.state == grp.STABLE and group.generation == generation
    assert [sy.slot_of(m.member_id) for m in group.members] == [1] and group.leader_id == sy.slot_id(1)
    assert [sy.slot_of(m.member_id) for m in persisted.members] == [1]
    out = grp.handle_heartbeat(group, sy.concrete_request("Heartbeat", dict(t=30, who=0, inst=0, gen=generation), N)[0],
                               ("req",), 30, config, sy.lowest_choose)
    assert out.replies[0][1].error == grp.Errors.FENCED_INSTANCE_ID
    group, persisted, fenced = sy.agree("Heartbeat", group, persisted, dict(t=30, who=0, inst=0, gen=generation),
                                        config, N, P, fenced)
    group, persisted, fenced = sy.agree("Failover", group, persisted, dict(t=40), config, N, P, fenced)
    assert fenced == frozenset() and [sy.slot_of(m.member_id) for m in group.members] == [1]


def test_agreement_catches_an_encoding_blind_to_instances(monkeypatch):
    """An encoding that never finds an instance's member (so a restarted static member is added
    beside its old id) disagrees with the model at the rejoin."""
    monkeypatch.setattr(sy, "mapped_slot", lambda x, inst: -1)
    config = sy.to_config(dict(v4=True, gms=5, min_st=1000, max_st=30_000, nmjt=300_000, ird=0, hbi=100, nparts=2))
    group, persisted, _ = sy.agree("JoinGroup", None, None, dict(t=0, who=-1, inst=0, k=0, proto=0, rt=5000, st=6000),
                                   config, N, P)
    with pytest.raises(sy.Disagreement):
        sy.agree("JoinGroup", group, persisted, dict(t=1, who=-1, inst=0, k=1, proto=0, rt=5000, st=6000), config, N, P)


def test_deleted_group_agrees_step_by_step():
    """DeleteGroups through the encoding and the model side by side: refused while the group has a
    member (nothing changes), then, once its member left, the Empty group is gone with its record
    of generation 2 and a new member starts it again from generation 0."""
    config = sy.to_config(dict(v4=True, gms=5, min_st=1000, max_st=30_000, nmjt=300_000, ird=0, hbi=100, nparts=2))
    group, persisted, fenced = sy.agree("JoinGroup", None, None, dict(t=0, who=-1, inst=0, k=0, proto=0, rt=5000, st=6000),
                                        config, N, P)
    group, persisted, fenced = sy.agree("JoinDeadline", group, persisted, dict(t=0), config, N, P, fenced)
    assignment = [[True, True] + [False] * (P - 2)] + [[False] * P] * (N - 1)
    group, persisted, fenced = sy.agree("SyncGroup", group, persisted,
                                        dict(t=10, who=0, inst=0, gen=group.generation, sa=assignment), config, N, P)
    kept = sy.agree("DeleteGroup", group, persisted, dict(t=20), config, N, P, fenced)
    assert kept == (group, persisted, fenced)  # NON_EMPTY_GROUP
    group, persisted, fenced = sy.agree("JoinGroup", group, persisted,
                                        dict(t=30, who=-1, inst=0, k=1, proto=0, rt=5000, st=6000), config, N, P, fenced)
    assert fenced == {0}
    group, persisted, fenced = sy.agree("LeaveGroup", group, persisted, dict(t=40, who=1, inst=0), config, N, P, fenced)
    assert group.state == grp.EMPTY and persisted.generation == 2
    group, persisted, fenced = sy.agree("DeleteGroup", group, persisted, dict(t=50), config, N, P, fenced)
    assert (group, persisted, fenced) == (None, None, frozenset())
    group, persisted, fenced = sy.agree("JoinGroup", group, persisted,
                                        dict(t=60, who=-1, inst=1, k=0, proto=0, rt=5000, st=6000), config, N, P, fenced)
    assert group.generation == 0 and persisted is None


def _delete_keeping(keep: str):
    """A broken DeleteGroup that removes the group but keeps its record, or its replaced ids."""
    def ev(x, p):
        with x.when(sy.all_(x["exists"], x["state"] == sy.E)):
            x.set("exists", False)
            if keep != "record":
                x.set("p_exists", False)
            if keep != "fenced":
                for i in x.slots:
                    x.set(("fenced", i), False)
    return ev


@pytest.mark.parametrize("keep, name", [("record", "generation-advances-by-one"),
                                        ("fenced", "fenced-member-id-never-accepted")])
def test_delete_group_proof_obligations_have_teeth(monkeypatch, keep, name):
    """The proofs cover the deletion: one that keeps the group's record (a later coordinator would
    load the old generation over the new incarnation's) or the ids it replaced (a slot taking a
    new member would still count as fenced) is not proved, and the failing step is the deletion."""
    monkeypatch.setitem(sy.EVENTS, "DeleteGroup", _delete_keeping(keep))
    result = sy.Encoding(2, 2).prove(name)
    assert result.result != "proved", result.reason
    assert result.counterexample["event"] == "DeleteGroup"
