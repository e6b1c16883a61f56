"""z3 proofs of the KIP-848 coordinator's ownership invariants (``model/kip848``), for N members
and P partitions.

The state is a symbolic group: per member slot whether it is a member, its epoch, its state
(STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS), its assigned and pending-revocation
partitions and its target; per partition its partition epoch (-1: free); the group and target
assignment epochs. Four transitions cover what ``consumerGroupHeartbeat`` and the timers do to
ownership:

``join``       a new member: epoch 0, STABLE, nothing held; the group epoch bumped;
``retarget``   the target recomputed at the group epoch: *any* target, overlapping or not (so
               the ownership proofs do not rest on the assignor);
``reconcile``  ``CurrentAssignmentBuilder.build`` for one member with *any* owned partitions the
               heartbeat reports (or none: null), then ``ConsumerGroup.updateMember``'s partition
               epochs (removed at the old epoch, added at the new one; adding over an owner at the
               same or a later epoch is the IllegalStateException the invariant rules out);
``fence``      leave, session or rebalance timeout: the member removed with its partition epochs,
               the group epoch bumped;
``static leave``  a static member's leave at epoch -2 (``consumerGroupStaticMemberGroupLeave``): it
               stays at epoch -2 with its assigned partitions (their partition epochs -2), its
               pending revocations dropped;
``replace``    a static member joining at epoch 0 with the instance id of a departed one (epoch
               -2) takes its place in any free slot or its own (``replaceMember``): its assigned
               partitions and target at epoch 0, the departed member removed.

A ``join`` may give the new member an instance id (``getOrMaybeSubscribeStaticConsumerGroupMember``:
only one nobody holds). A member at epoch -2 sends no heartbeat the coordinator reconciles (its
next request is a join, which replaces it): ``reconcile`` is for members at an epoch >= 0.

Splitting a heartbeat into join, retarget and reconcile only adds interleavings, which is sound
for invariants. Each property is proved inductive together with the others and the strengthening
invariants below; the broken variants of ``model/kip848/variants.py`` that act here are honoured
at the same decisions, and each must give a counterexample (:data:`TEETH`).
"""

from __future__ import annotations

import time

import z3

STABLE, UNREVOKED, UNRELEASED = 0, 1, 2
N_MAX, P_MAX = 4, 8

PROPERTIES = ("kip848-one-owner-per-partition", "kip848-partition-epochs-match", "kip848-epochs-bounded",
              "kip848-one-member-per-instance-id")
STATIC_LEAVE = -2
STRENGTHENING = ("a member never holds a partition both as assigned and as pending revocation",
                 "a member revoking is below the target epoch, and either holds only its target or is "
                 "two or more epochs below it",
                 "a member at the target epoch holds only its target",
                 "only a member revoking has partitions pending revocation; epochs are not negative",
                 "a departed static member (epoch -2) has an instance id, nothing pending revocation, and "
                 "what it holds would satisfy the above at epoch 0 (its replacement's)")
# variant -> the property its counterexample must break
TEETH = {"unreleased_assigned": "kip848-one-owner-per-partition",
         "fenced_partitions_kept": "kip848-partition-epochs-match",
         "epoch_past_target": "kip848-epochs-bounded",
         "static_duplicate_member": "kip848-one-member-per-instance-id"}


class State:
    """One symbolic (or concrete) group of *n* member slots and *p* partitions."""

    def __init__(self, n: int, p: int, tag: str):
        self.n, self.p = n, p
        self.present = [z3.Bool(f"{tag}present{i}") for i in range(n)]
        self.epoch = [z3.Int(f"{tag}epoch{i}") for i in range(n)]
        self.state = [z3.Int(f"{tag}state{i}") for i in range(n)]
        self.assigned = [[z3.Bool(f"{tag}a{i}_{q}") for q in range(p)] for i in range(n)]
        self.revoking = [[z3.Bool(f"{tag}r{i}_{q}") for q in range(p)] for i in range(n)]
        self.target = [[z3.Bool(f"{tag}t{i}_{q}") for q in range(p)] for i in range(n)]
        self.pe = [z3.Int(f"{tag}pe{q}") for q in range(p)]
        self.ge, self.ae = z3.Int(f"{tag}ge"), z3.Int(f"{tag}ae")
        self.inst = [z3.Int(f"{tag}inst{i}") for i in range(n)]  # the instance id, -1: a dynamic member

    def holds(self, i: int, q: int):
        return z3.Or(self.assigned[i][q], self.revoking[i][q])

    def fields(self):
        out = [self.ge, self.ae] + self.present + self.epoch + self.state + self.pe + self.inst
        for rows in (self.assigned, self.revoking, self.target):
            for row in rows:
                out += row
        return out


def same(a: State, b: State, skip=()) -> list:
    return [x == y for x, y, in zip(a.fields(), b.fields()) if str(x) not in skip]


# -- the properties and the strengthening ----------------------------------------------------------

def one_owner(s: State):
    return z3.And([z3.Not(z3.And(s.present[i], s.present[j], s.holds(i, q), s.holds(j, q)))
                   for q in range(s.p) for i in range(s.n) for j in range(i + 1, s.n)] or [z3.BoolVal(True)])


def epochs_match(s: State):
    out = []
    for q in range(s.p):
        expected = z3.IntVal(-1)
        for i in reversed(range(s.n)):
            expected = z3.If(z3.And(s.present[i], s.holds(i, q)), s.epoch[i], expected)
        out.append(s.pe[q] == expected)
    return z3.And(out)


def epochs_bounded(s: State):
    return z3.And([s.ae <= s.ge] + [z3.Implies(s.present[i], s.epoch[i] <= s.ae) for i in range(s.n)])


def one_member_per_instance(s: State):
    return z3.And([z3.Not(z3.And(s.present[i], s.present[j], s.inst[i] >= 0, s.inst[i] == s.inst[j]))
                   for i in range(s.n) for j in range(i + 1, s.n)] or [z3.BoolVal(True)])


def strengthening(s: State):
    out = [s.ae >= 0]
    for i in range(s.n):
        subset = z3.And([z3.Implies(s.assigned[i][q], s.target[i][q]) for q in range(s.p)])
        departed = z3.And(s.present[i], s.epoch[i] == STATIC_LEAVE)
        out.append(s.inst[i] >= -1)
        out.append(z3.Implies(s.present[i], z3.Or(s.epoch[i] >= 0, z3.And(s.epoch[i] == STATIC_LEAVE, s.inst[i] >= 0))))
        out.append(z3.Implies(departed, z3.And([z3.Not(x) for x in s.revoking[i]]
                                               + [z3.Implies(s.state[i] == UNREVOKED, z3.And(0 < s.ae, z3.Or(subset, 1 < s.ae))),
                                                  z3.Implies(s.ae == 0, subset)])))
        out.append(z3.Implies(s.present[i], z3.Or(s.state[i] == STABLE, s.state[i] == UNREVOKED, s.state[i] == UNRELEASED)))
        for q in range(s.p):
            out.append(z3.Not(z3.And(s.assigned[i][q], s.revoking[i][q])))
            out.append(z3.Implies(z3.And(s.present[i], s.revoking[i][q]), s.state[i] == UNREVOKED))
        out.append(z3.Implies(z3.And(s.present[i], s.state[i] == UNREVOKED),
                              z3.And(s.epoch[i] < s.ae, z3.Or(subset, s.epoch[i] + 1 < s.ae))))
        out.append(z3.Implies(z3.And(s.present[i], s.epoch[i] == s.ae), subset))
    return z3.And(out)


CHECKS = {"kip848-one-owner-per-partition": one_owner, "kip848-partition-epochs-match": epochs_match,
          "kip848-epochs-bounded": epochs_bounded, "kip848-one-member-per-instance-id": one_member_per_instance}


def invariant(s: State):
    return z3.And(one_owner(s), epochs_match(s), epochs_bounded(s), one_member_per_instance(s), strengthening(s))


# -- the transitions -------------------------------------------------------------------------------

def initial(s: State):
    return z3.And([s.ge == 0, s.ae == 0] + [z3.Not(x) for x in s.present] + [x == -1 for x in s.pe + s.inst]
                  + [z3.Not(x) for rows in (s.assigned, s.revoking, s.target) for row in rows for x in row])


def join(a: State, b: State, i: int, broken=frozenset()):
    """A new member in the free slot *i* (``getOrMaybeCreateMember``; ``bumpGroupEpoch``), dynamic or
    static with an instance id nobody holds (with ``static_duplicate_member``: none but a departed
    member at epoch -2, which stays)."""
    keep = {str(x) for x in [a.ge, a.present[i], a.epoch[i], a.state[i], a.inst[i]]
            + a.assigned[i] + a.revoking[i] + a.target[i]}
    held = [z3.And(a.present[j], a.inst[j] == b.inst[i],
                   *([a.epoch[j] != STATIC_LEAVE] if "static_duplicate_member" in broken else []))
            for j in range(a.n) if j != i]
    free = z3.Or(b.inst[i] == -1, z3.And(b.inst[i] >= 0, z3.Not(z3.Or(held)) if held else z3.BoolVal(True)))
    return z3.And([z3.Not(a.present[i]), b.present[i], b.epoch[i] == 0, b.state[i] == STABLE, b.ge == a.ge + 1, free]
                  + [z3.Not(x) for x in b.assigned[i] + b.revoking[i] + b.target[i]] + same(a, b, keep))


def static_leave(a: State, b: State, i: int):
    """``consumerGroupStaticMemberGroupLeave``: member *i*, static, at epoch -2 with its assigned
    partitions (``updateMember``: removed at the old epoch, added at -2), nothing pending."""
    keep = {str(x) for x in [a.epoch[i]] + a.revoking[i] + a.pe}
    out = [a.present[i], a.inst[i] >= 0, a.epoch[i] >= 0, b.epoch[i] == STATIC_LEAVE]
    out += [z3.Not(x) for x in b.revoking[i]]
    for q in range(a.p):
        removed = z3.If(z3.And(a.holds(i, q), a.pe[q] == a.epoch[i]), -1, a.pe[q])
        out.append(b.pe[q] == z3.If(a.assigned[i][q], STATIC_LEAVE, removed))
    return z3.And(out + same(a, b, keep))


def replace(a: State, b: State, j: int, i: int):
    """``replaceMember``: a static member joining with departed member *j*'s instance id takes its
    place in slot *i* (a free one, or *j* itself when it rejoins with its own member id): epoch and
    previous epoch 0, *j*'s state, assigned partitions and target; *j* removed; the partition
    epochs of what it holds moved from -2 to 0. No group epoch bump (the subscription is the same)."""
    slots = {i, j}
    keep = {str(x) for k in slots for x in [a.present[k], a.epoch[k], a.state[k], a.inst[k]]
            + a.assigned[k] + a.revoking[k] + a.target[k]} | {str(x) for x in a.pe}
    out = [a.present[j], a.epoch[j] == STATIC_LEAVE, b.present[i], b.inst[i] == a.inst[j], b.epoch[i] == 0,
           b.state[i] == a.state[j]]
    if i != j:
        out += [z3.Not(a.present[i]), z3.Not(b.present[j]), b.inst[j] == -1, b.epoch[j] == a.epoch[j],
                b.state[j] == a.state[j]]
        out += [z3.Not(x) for x in b.assigned[j] + b.revoking[j] + b.target[j]]
    out += [b.assigned[i][q] == a.assigned[j][q] for q in range(a.p)] + [z3.Not(x) for x in b.revoking[i]]
    out += [b.target[i][q] == a.target[j][q] for q in range(a.p)]
    for q in range(a.p):
        removed = z3.If(z3.And(a.holds(j, q), a.pe[q] == STATIC_LEAVE), -1, a.pe[q])
        out.append(b.pe[q] == z3.If(a.assigned[j][q], 0, removed))
    return z3.And(out + same(a, b, keep))


def retarget(a: State, b: State):
    """``updateTargetAssignment``: the target at the group epoch, any target at all."""
    keep = {str(x) for row in a.target for x in row} | {str(a.ae)}
    return z3.And([a.ge > a.ae, b.ae == a.ge] + same(a, b, keep))


def fence(a: State, b: State, i: int, broken=frozenset()):
    """``consumerGroupFenceMember``: removeMember (its partition epochs at its epoch), epoch bump."""
    keep = {str(x) for x in [a.ge, a.present[i], a.inst[i]] + a.pe + a.target[i]}
    out = [a.present[i], z3.Not(b.present[i]), b.ge == a.ge + 1, b.inst[i] == -1] + [z3.Not(x) for x in b.target[i]]
    for q in range(a.p):
        if "fenced_partitions_kept" in broken:
            out.append(b.pe[q] == a.pe[q])
        else:
            out.append(b.pe[q] == z3.If(z3.And(a.holds(i, q), a.pe[q] == a.epoch[i]), -1, a.pe[q]))
    return z3.And(out + same(a, b, keep))


def reconcile(a: State, b: State, i: int, owned_known, owned: list, broken=frozenset()):
    """``CurrentAssignmentBuilder.build`` for member *i* with the heartbeat's owned partitions
    (*owned_known* false: the field was null), then ``updateMember``'s partition epochs
    (``removePartitionEpochs`` at the old epoch, ``addPartitionEpochs`` at the new one). Returns
    (the step, the condition under which addPartitionEpochs would throw IllegalStateException);
    the step is taken only where it would not."""
    p = a.p
    A, R, T, e, s = a.assigned[i], a.revoking[i], a.target[i], a.epoch[i], a.state[i]

    def owns(xs):  # ownsRevokedPartitions: a null owned list counts as owning
        return z3.Or(z3.Not(owned_known), *[z3.And(owned[q], xs[q]) for q in range(p)])

    def nxt(epoch):  # computeNextAssignment(memberEpoch, memberAssignedPartitions)
        assigned = [z3.And(A[q], T[q]) for q in range(p)]
        revoke = [z3.And(A[q], z3.Not(T[q])) for q in range(p)]
        pending = [z3.And(T[q], z3.Not(A[q])) for q in range(p)]
        unreleased = [z3.And(pending[q], a.pe[q] != -1, z3.Not(R[q])) for q in range(p)]
        free = pending if "unreleased_assigned" in broken else [z3.And(pending[q], z3.Not(unreleased[q])) for q in range(p)]
        target_epoch = a.ae + 1 if "epoch_past_target" in broken else a.ae
        to_revoke = z3.And(z3.Or(revoke), owns(revoke))
        settled = z3.If(z3.Or(unreleased), UNRELEASED, STABLE)
        return (z3.If(to_revoke, UNREVOKED, settled), z3.If(to_revoke, epoch, target_epoch),
                [z3.If(to_revoke, assigned[q], z3.Or(assigned[q], free[q])) for q in range(p)],
                [z3.And(to_revoke, revoke[q]) for q in range(p)])

    unchanged = (s, e, list(A), list(R))
    stable, unrevoked, unreleased = nxt(e), nxt(e + 1), nxt(e)
    waits = owns(R)

    def one(x_stable, x_unrevoked, x_unreleased, x_same):  # build()'s switch on the member's state
        return z3.If(s == STABLE, z3.If(e != a.ae, x_stable, x_same),
                     z3.If(s == UNREVOKED, z3.If(waits, x_same, x_unrevoked), x_unreleased))

    def choose(k):
        if k < 2:
            return one(stable[k], unrevoked[k], unreleased[k], unchanged[k])
        return [one(stable[k][q], unrevoked[k][q], unreleased[k][q], unchanged[k][q]) for q in range(p)]

    new_state, new_epoch, new_a, new_r = choose(0), choose(1), choose(2), choose(3)
    out = [a.present[i], a.epoch[i] >= 0, b.state[i] == new_state, b.epoch[i] == new_epoch]
    out += [b.assigned[i][q] == new_a[q] for q in range(p)] + [b.revoking[i][q] == new_r[q] for q in range(p)]
    throws = []
    for q in range(p):
        removed = z3.If(z3.And(a.holds(i, q), a.pe[q] == e), -1, a.pe[q])
        out.append(b.pe[q] == z3.If(z3.Or(new_a[q], new_r[q]), new_epoch, removed))
        throws.append(z3.And(z3.Or(new_a[q], new_r[q]), removed != -1, removed >= new_epoch))
    keep = {str(x) for x in [a.state[i], a.epoch[i]] + a.assigned[i] + a.revoking[i] + a.pe}
    return z3.And(out + same(a, b, keep)), z3.Or(throws)


def steps(a: State, b: State, broken=frozenset()):
    """(name, relation, throw condition or None) for every transition of every slot."""
    out = [("retarget", retarget(a, b), None)]
    owned_known = z3.Bool("owned_known")
    owned = [z3.Bool(f"owned{q}") for q in range(a.p)]
    for i in range(a.n):
        out.append((f"join {i}", join(a, b, i, broken), None))
        out.append((f"fence {i}", fence(a, b, i, broken), None))
        out.append((f"static leave {i}", static_leave(a, b, i), None))
        for j in range(a.n):
            out.append((f"replace {j} by {i}", replace(a, b, j, i), None))
        step, throws = reconcile(a, b, i, owned_known, owned, broken)
        out.append((f"reconcile {i}", step, z3.And(a.present[i], throws)))
    return out


def prove(name: str, n: int = N_MAX, p: int = P_MAX, broken=frozenset(), timeout_ms: int = 300_000) -> dict:
    """Whether *name* holds initially and is preserved, with the strengthening invariants, by every
    transition from a state satisfying the whole invariant; for partition epochs also that no
    reconcile from such a state would make addPartitionEpochs throw. A proof table row."""
    start = time.perf_counter()
    a, b = State(n, p, "pre_"), State(n, p, "post_")
    check = CHECKS[name]
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    obligations = [("initially", z3.And(initial(a), z3.Not(z3.And(check(a), strengthening(a)))))]
    for step, relation, throws in steps(a, b, frozenset(broken)):
        obligations.append((step, z3.And(invariant(a), relation, z3.Not(z3.And(check(b), strengthening(b))))))
        if throws is not None and name == "kip848-partition-epochs-match":
            # the step without its guard, where addPartitionEpochs would throw
            obligations.append((f"{step} (addPartitionEpochs would throw)", z3.And(invariant(a), throws)))
    verdict, reason = "proved", ""
    for where, formula in obligations:
        solver.push()
        solver.add(formula)
        verdict, reason = _verdict(solver.check(), where)
        if verdict == "counterexample":
            reason += ": " + describe(solver.model(), a, b)
        solver.pop()
        if verdict != "proved":
            break
    return {"property": name, "bound": f"N={n} members, P={p} partitions", "result": verdict,
            "seconds": round(time.perf_counter() - start, 3), "invariants": list(STRENGTHENING), "reason": reason}


def describe(model, a: State, b: State) -> str:
    """A counterexample's states, member by member (slots present before or after)."""
    def show(s: State) -> str:
        ev = lambda x: model.eval(x, model_completion=True)  # noqa: E731
        members = []
        for i in range(s.n):
            if z3.is_true(ev(s.present[i])):
                held = lambda row: [q for q in range(s.p) if z3.is_true(ev(row[q]))]  # noqa: E731
                members.append(f"m{i} epoch {ev(s.epoch[i])} state {['STABLE', 'UNREVOKED', 'UNRELEASED'][ev(s.state[i]).as_long()] if ev(s.state[i]).as_long() in (0, 1, 2) else ev(s.state[i])} "
                               f"assigned {held(s.assigned[i])} revoking {held(s.revoking[i])} target {held(s.target[i])}")
        return (f"group epoch {ev(s.ge)}, target epoch {ev(s.ae)}, partition epochs {[ev(x) for x in s.pe]}; "
                + "; ".join(members))
    return f"before: {show(a)} / after: {show(b)}"


def _verdict(result, where: str) -> tuple[str, str]:
    if result == z3.unsat:
        return "proved", ""
    if result == z3.sat:
        return "counterexample", f"violated after {where}"
    return "unknown", f"z3 gave up at {where}"


def prove_all(n: int = N_MAX, p: int = P_MAX) -> list:
    return [prove(name, n, p) for name in PROPERTIES]
