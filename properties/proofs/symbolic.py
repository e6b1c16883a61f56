"""A z3 encoding of the server group coordinator (``model/group.py``) and inductive proofs of its
``always`` properties for a bound of N member ids and P partitions.

Why: random interleavings find bugs but do not prove their absence. Here every server event is a
transition relation over a *symbolic* group — symbolic generation, leader, member states,
assignments, deadlines and persisted record — and z3 proves, for each server-side ``always``
property of the catalogue, that it holds initially and is preserved by every transition from any
state satisfying it and its listed strengthening invariants (issue 5).

How the encoding stays honest
-----------------------------
* **One procedure per model procedure.** ``prepare_rebalance``, ``complete_join``,
  ``remove_member_and_update_group`` ... below follow ``model/group.py`` line by line, written in
  *guarded-update* style: every write is ``field := If(path condition, new, old)``, so the Python
  control flow of the model becomes a path condition and loops over members are unrolled over N
  slots.
* **The same code runs on concrete values.** The connectives (:func:`ite`, :func:`all_`, ...) fold
  Python values and build z3 terms only when an argument is symbolic, so the very encoding that z3
  reasons about can be executed on a concrete group and compared with the executable model
  (``tests/test_symbolic.py``, a Hypothesis test), and every counterexample z3 finds is turned into
  a concrete :class:`model.group.Group` and replayed through the model (:func:`replay`), which must
  show the same violation.
* **Teeth.** Model variants (``model/variants.py``) are honoured at the same decision points; for
  each property one variant must yield a counterexample (:data:`TEETH`).

Abstractions (stated, and sound for the proofs)
------------------------------------------------
* Member ids live in N *slots*; a slot is a member, a pending (MEMBER_ID_REQUIRED) id, or free. A
  JoinGroup that would hand out an (N+1)-th id is outside the bound. Slot order carries no meaning:
  Kafka's hash-map choices (leader re-pick, election) are free parameters constrained to the allowed
  candidates (``picks="free"``); replays use the lowest slot on both sides (``picks="lowest"``).
* Timer sequence numbers are not tracked: the timer events fire *an* earliest armed deadline (ties
  in either order), which over-approximates the model's (deadline, seq) order.
* Protocol metadata is one of three request shapes (:data:`PROTOS`): every member lists "range"
  first, so the protocol vote never ties and the group's protocol type is always "consumer".
* LeaveGroup carries one member (the clients never batch), by member id or, for a static member,
  by group.instance.id alone (the administrative form).
* Static members (KIP-345): a slot holds the instance id of its member (-1 for a dynamic one), and
  requests carry one too (-1 for none). Instance ids are N symbols. A static member's new id
  (``replaceStaticMember``) takes a free slot ``k``; the replaced id keeps its slot, marked
  ``fenced`` (a ghost: the ids the *current* coordinator has replaced, forgotten at a failover,
  which loads a record that may hold them), so that requests carrying it stay expressible; a slot
  is free when it holds no member, no pending id, no pending-sync entry and no fenced id.
  Environment assumptions A2/A3: only v5+ clients (``v4`` here) carry an instance id, and a
  MEMBER_ID_REQUIRED id is never sent with one (static members are never asked for a member id;
  Kafka throws IllegalStateException there: GroupCoordinator.doCurrentMemberJoinGroup).
* The leader's SyncGroup assignment is an input. It obeys the assignor contract (every partition of
  the topic to exactly one member of the generation, nothing else) — an environment assumption,
  listed as such; the variant ``assignor_drops_partition`` breaks it.
* The configuration is symbolic: group.max.size ≥ 1, session-timeout range, new-member timeout,
  initial rebalance delay ≥ 0, the partition count 1..P, and the JoinGroup version (v4+ two-phase
  join or not) are all free, so one proof covers them all.
"""

from __future__ import annotations

import contextlib
import time
import types

import attrs
import z3

from model import group as grp
from model.config import Config
from model.errors import Errors
from model.messages import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    SyncGroupRequest,
)

N_MAX = 4  # member ids (members + pending) the proofs cover
P_MAX = 8  # partitions of the subscribed topic the proofs cover (the count itself is symbolic)

# Group states. Dead is never held: unloading drops the group (world: None) until it is loaded.
E, PR, CR, S = 0, 1, 2, 3
STATE_CODE = {grp.EMPTY: E, grp.PREPARING_REBALANCE: PR, grp.COMPLETING_REBALANCE: CR, grp.STABLE: S}
STATE_NAME = {v: k for k, v in STATE_CODE.items()}
VALID_PREV = {STATE_CODE[t]: tuple(STATE_CODE[p] for p in sorted(ps) if p != grp.DEAD)
              for t, ps in grp.VALID_PREVIOUS_STATES.items() if t != grp.DEAD}

MD = ("t",)
# JoinGroup protocol shapes: 0 and 1 both prefer "range" (so votes never tie), 2 lists nothing
# (unsupported by any group: an Empty group needs a non-empty list, others a common name).
PROTOS = ((("range", MD),), (("range", MD), ("roundrobin", MD)), ())
UNSUPPORTED = 2

NONE = int(Errors.NONE)
FENCED_INSTANCE_ID = int(Errors.FENCED_INSTANCE_ID)
UNKNOWN_MEMBER_ID = int(Errors.UNKNOWN_MEMBER_ID)
ILLEGAL_GENERATION = int(Errors.ILLEGAL_GENERATION)
REBALANCE_IN_PROGRESS = int(Errors.REBALANCE_IN_PROGRESS)
COORDINATOR_NOT_AVAILABLE = int(Errors.COORDINATOR_NOT_AVAILABLE)
NO_OUTPUT = -1000

# ---------------------------------------------------------------------------------------------
# Connectives that fold Python values and build z3 terms only when needed
# ---------------------------------------------------------------------------------------------


def _lit(x):
    """True/False if *x* is a Python or z3 boolean literal, else None."""
    if isinstance(x, bool):
        return x
    if z3.is_true(x):
        return True
    if z3.is_false(x):
        return False
    return None


def ite(c, a, b):
    lit = _lit(c)
    if lit is not None:
        return a if lit else b
    if a is b:
        return a
    return z3.If(c, a, b)


def all_(*xs):
    out = []
    for x in xs:
        lit = _lit(x)
        if lit is False:
            return False
        if lit is None:
            out.append(x)
    if not out:
        return True
    return out[0] if len(out) == 1 else z3.And(out)


def any_(*xs):
    out = []
    for x in xs:
        lit = _lit(x)
        if lit is True:
            return True
        if lit is None:
            out.append(x)
    if not out:
        return False
    return out[0] if len(out) == 1 else z3.Or(out)


def not_(x):
    lit = _lit(x)
    if lit is not None:
        return not lit
    return z3.Not(x)


def implies(a, b):
    return any_(not_(a), b)


def max_(a, b):
    return ite(a > b, a, b)


def min_(a, b):
    return ite(a < b, a, b)


def count(xs):
    total = 0
    for x in xs:
        total = total + ite(x, 1, 0)
    return total


def one_of(x, values):
    return any_(*[x == v for v in values])


# ---------------------------------------------------------------------------------------------
# The symbolic state
# ---------------------------------------------------------------------------------------------

_GROUP_BOOLS = ("exists", "nma", "join", "idr_set", "sync", "p_exists")
_GROUP_INTS = ("state", "gen", "leader", "join_at", "idr", "sync_at", "sync_gen", "p_gen", "p_leader")
_SLOT_BOOLS = ("present", "pending", "aj", "as", "new", "hb", "ps", "p_present", "fenced")
_SLOT_INTS = ("pend_at", "asgen", "hb_at", "rt", "st", "proto", "p_rt", "p_st", "p_proto", "inst", "p_inst")


def schema(n: int, parts: int):
    """Every state field as (key, is_bool). Keys: a name, (name, slot) or (name, slot, partition).

    ``aj``/``as``: parked JoinGroup/SyncGroup; ``asgen``: the generation the parked SyncGroup
    carried (a ghost field, read only by the properties); ``new``: Member.is_new; ``hb``/``hb_at``:
    the session deadline; ``ps``: pending_sync; ``nma``: new_member_added; ``join``/``idr``: the
    (Initial)DelayedJoin and its remaining delay; ``sync``/``sync_gen``: the DelayedSync; ``p_*``:
    the persisted group record; ``inst``: the member's group.instance.id (-1: dynamic); ``fenced``:
    the slot's id was replaced by its static instance's new one (a ghost, read by the properties)."""
    out = [(k, True) for k in _GROUP_BOOLS] + [(k, False) for k in _GROUP_INTS]
    for i in range(n):
        out += [((k, i), True) for k in _SLOT_BOOLS] + [((k, i), False) for k in _SLOT_INTS]
        out += [(("asg", i, p), True) for p in range(parts)] + [(("p_asg", i, p), True) for p in range(parts)]
    return out


def _name(key) -> str:
    return key if isinstance(key, str) else "_".join(str(k) for k in key)


def symbolic_state(n: int, parts: int, prefix: str = "") -> dict:
    return {k: (z3.Bool if b else z3.Int)(prefix + _name(k)) for k, b in schema(n, parts)}


CONFIG_KEYS = ("v4", "gms", "min_st", "max_st", "nmjt", "ird", "hbi", "nparts")


def symbolic_config(parts: int) -> tuple[dict, object]:
    """The configuration as free constants, and the domain Kafka (and model.config) accepts."""
    c = {k: z3.Int("cfg_" + k) for k in CONFIG_KEYS if k != "v4"}
    c["v4"] = z3.Bool("cfg_v4")
    domain = all_(c["gms"] >= 1, c["min_st"] >= 1, c["max_st"] >= c["min_st"], c["nmjt"] >= 1,
                  c["ird"] >= 0, c["hbi"] >= 1, c["nparts"] >= 1, c["nparts"] <= parts)
    return c, domain


def initial_state(n: int, parts: int) -> dict:
    """No group at the coordinator and nothing persisted (other fields are irrelevant)."""
    s = symbolic_state(n, parts, prefix="init_")
    s["exists"] = False
    s["p_exists"] = False
    for i in range(n):
        s[("fenced", i)] = False
    return s


# ---------------------------------------------------------------------------------------------
# Guarded execution
# ---------------------------------------------------------------------------------------------


class Exec:
    """One transition being executed: the state as it evolves, the path condition, the
    assumptions the environment must meet, the property obligations met along the way and the
    outputs (response errors) of the request."""

    def __init__(self, pre: dict, cfg: dict, params: dict, n: int, parts: int, broken=frozenset(),
                 picks: str = "free", tag: str = ""):
        self.s = dict(pre)
        self.pre = pre
        self.cfg = cfg
        self.p = params
        self.n = n
        self.parts = parts
        self.broken = frozenset(broken)
        self.picks = picks
        self.tag = tag
        self.g = True
        self.assumptions = []
        self.obligations: dict = {}
        self._deferred = []
        self.out: dict = {}
        self._pick_no = 0

    def __getitem__(self, key):
        return self.s[key]

    def set(self, key, value) -> None:
        self.s[key] = ite(self.g, value, self.s[key])

    @contextlib.contextmanager
    def when(self, cond):
        old = self.g
        self.g = all_(old, cond)
        try:
            yield
        finally:
            self.g = old

    def assume(self, cond) -> None:
        self.assumptions.append(implies(self.g, cond))

    def oblige(self, prop: str, cond) -> None:
        self.obligations.setdefault(prop, []).append(implies(self.g, cond))

    def oblige_after(self, prop: str, fn) -> None:
        """An obligation on the state the transition ends in, under the current path."""
        self._deferred.append((prop, self.g, fn))

    def output(self, key: str, value) -> None:
        self.out[key] = ite(self.g, value, self.out.get(key, NO_OUTPUT))

    def finish(self) -> "Exec":
        for prop, g, fn in self._deferred:
            self.obligations.setdefault(prop, []).append(implies(g, fn(self.s)))
        self._deferred = []
        return self

    @property
    def slots(self):
        return range(self.n)

    def pick(self, candidates: list):
        """Kafka's hash-map choice among *candidates* (per-slot conditions): free, or the lowest."""
        if self.picks == "lowest":
            r = -1
            for i in reversed(self.slots):
                r = ite(candidates[i], i, r)
            return r
        var = self.p.setdefault(f"pick{self._pick_no}", z3.Int(f"{self.tag}pick{self._pick_no}"))
        self._pick_no += 1
        self.assume(ite(any_(*candidates), any_(*[all_(var == i, candidates[i]) for i in self.slots]), var == -1))
        return var


# ---------------------------------------------------------------------------------------------
# The coordinator's procedures (model/group.py, same names)
# ---------------------------------------------------------------------------------------------


def _present(x, i):
    return x[("present", i)]


def mapped_slot(x, inst):
    """``GroupMetadata.currentStaticMemberId``: the slot of the member *inst* names, or -1 (the
    lowest such slot: one-member-per-instance makes it the only one)."""
    j = -1
    for i in reversed(x.slots):
        j = ite(all_(inst >= 0, _present(x, i), x[("inst", i)] == inst), i, j)
    return j


def member_error(x, who, inst):
    """``GroupCoordinator.validateCurrentMember``: with an instance id it must name the member
    *who* (FENCED_INSTANCE_ID when it names another, UNKNOWN_MEMBER_ID when none); without one,
    *who* must be a member. NONE when valid."""
    j = mapped_slot(x, inst)
    present = any_(*[all_(who == i, _present(x, i)) for i in x.slots])
    return ite(inst >= 0, ite(j == -1, UNKNOWN_MEMBER_ID, ite(j == who, NONE, FENCED_INSTANCE_ID)),
               ite(present, NONE, UNKNOWN_MEMBER_ID))


def slot_value(x, j, key):
    """Field *key* (a name, or (name, partition)) of slot *j*, a symbolic slot number."""
    at = (lambda i: (key, i)) if isinstance(key, str) else (lambda i: (key[0], i, key[1]))
    v = x[at(x.n - 1)]
    for i in reversed(range(x.n - 1)):
        v = ite(j == i, x[at(i)], v)
    return v


def is_fenced(x, who):
    return any_(*[all_(who == i, x[("fenced", i)]) for i in x.slots])


def static_requests_assumed(x, p) -> None:
    """A2: only a v5+ client (``cfg.v4``) carries a group.instance.id."""
    x.assume(implies(p["inst"] >= 0, x.cfg["v4"]))


def has_members(x):
    return any_(*[_present(x, i) for i in x.slots])


def rebalance_timeout(x):
    """``group.rebalanceTimeoutMs``: the largest member rebalance timeout, 0 when empty."""
    m = 0
    for i in x.slots:
        m = ite(all_(_present(x, i), x[("rt", i)] > m), x[("rt", i)], m)
    return m


def has_all_members_joined(x):
    no_pending = not_(any_(*[x[("pending", i)] for i in x.slots]))
    if "join_completes_with_pending" in x.broken:
        no_pending = True
    return all_(no_pending, *[implies(_present(x, i), x[("aj", i)]) for i in x.slots])


def transition(x, target: int) -> None:
    """``transitionTo``: the legality of every state change is an obligation."""
    x.oblige("legal-group-transitions", one_of(x["state"], VALID_PREV[target]))
    x.set("state", target)


def session_deadline(x, is_new, parked, session_timeout, now):
    """``_Draft.session_deadline``: (armed, at) — unarmed when parked and not new."""
    armed = any_(not_(parked), is_new)
    return armed, now + ite(is_new, x.cfg["nmjt"], session_timeout)


def set_heartbeat(x, i, armed, at) -> None:
    x.set(("hb", i), armed)
    x.set(("hb_at", i), at)


def reschedule_heartbeat(x, i, now) -> None:
    parked = any_(x[("aj", i)], x[("as", i)])
    set_heartbeat(x, i, *session_deadline(x, x[("new", i)], parked, x[("st", i)], now))


def persist(x) -> None:
    """The group record written to __consumer_offsets (``d.persist = d.freeze()``)."""
    x.set("p_exists", True)
    x.set("p_gen", x["gen"])
    x.set("p_leader", x["leader"])
    for i in x.slots:
        x.set(("p_present", i), _present(x, i))
        for k in ("rt", "st", "proto", "inst"):
            x.set((f"p_{k}", i), x[(k, i)])
        for p in range(x.parts):
            x.set(("p_asg", i, p), x[("asg", i, p)])


def remove(x, mask: list, repick: bool = True) -> None:
    """``_Draft.remove`` for the slots in *mask*: members, pending ids and pending-sync entries
    go; a removed leader is re-picked among the remaining members (or cleared, ``repick=False``)."""
    leader = x["leader"]
    leader_removed = any_(*[all_(leader == i, mask[i]) for i in x.slots])
    for i in x.slots:
        for key in ("present", "pending", "ps"):
            x.set((key, i), all_(x[(key, i)], not_(mask[i])))
    if "leader_not_repicked" in x.broken:
        return
    with x.when(leader_removed):
        if repick:
            x.set("leader", x.pick([_present(x, i) for i in x.slots]))
        else:
            x.set("leader", -1)


def add_member_and_rebalance(x, k, req, now) -> None:
    """``addMemberAndRebalance``: a new member in slot *k*, parked in JoinGroup, with the
    new-member deadline; the first member becomes leader if there is none."""
    with x.when(all_(x["state"] == PR, x["gen"] == 0)):
        x.set("nma", True)
    with x.when(x["leader"] == -1):
        x.set("leader", k)
    for i in x.slots:
        with x.when(k == i):
            x.set(("present", i), True)
            x.set(("rt", i), req["rt"])
            x.set(("st", i), req["st"])
            x.set(("proto", i), req["proto"])
            x.set(("inst", i), req["inst"])
            for p in range(x.parts):
                x.set(("asg", i, p), False)
            x.set(("aj", i), True)
            x.set(("as", i), False)
            x.set(("new", i), True)
            x.set(("ps", i), False)
            set_heartbeat(x, i, *session_deadline(x, True, True, req["st"], now))
            x.set(("pending", i), False)
    maybe_prepare_rebalance(x, now)


def update_member_and_rebalance(x, who, req, now) -> None:
    for i in x.slots:
        with x.when(who == i):
            x.set(("proto", i), req["proto"])
            x.set(("rt", i), req["rt"])
            x.set(("st", i), req["st"])
            x.set(("aj", i), True)
    maybe_prepare_rebalance(x, now)


def maybe_prepare_rebalance(x, now) -> None:
    with x.when(one_of(x["state"], (S, CR, E))):
        prepare_rebalance(x, now)


def prepare_rebalance(x, now) -> None:
    """``prepareRebalance`` (§1.5)."""
    with x.when(x["state"] == CR):
        reset_and_propagate_assignment_error(x, now)
    for i in x.slots:
        x.set(("ps", i), False)
    x.set("sync", False)
    rto = rebalance_timeout(x)
    from_empty = x["state"] == E
    ird = x.cfg["ird"]
    x.set("join", True)
    x.set("join_at", ite(from_empty, now + ird, now + rto))
    x.set("idr", ite(from_empty, max_(rto - ird, 0), x["idr"]))
    x.set("idr_set", from_empty)
    transition(x, PR)
    try_complete_join(x, now)


def try_complete_join(x, now) -> None:
    """``DelayedJoin.tryComplete``: early completion once everyone joined (never initial delay)."""
    cond = all_(x["state"] == PR, x["join"], not_(x["idr_set"]), has_all_members_joined(x))
    with x.when(cond):
        x.set("join", False)
        complete_join(x, now, all_joined=True)


def complete_join(x, now, all_joined: bool) -> None:
    """``onCompleteJoin`` (§1.6)."""
    if all_joined:
        x.oblige("join-completes-when-all-joined", all_(
            *[not_(x[("pending", i)]) for i in x.slots],
            *[implies(_present(x, i), x[("aj", i)]) for i in x.slots]))
    gen_before = x["gen"]
    x.set("idr_set", False)
    if "non_rejoined_kept" not in x.broken:
        # dynamic members that did not rejoin go; static ones stay (only their session expiry
        # removes them), and a removed leader is re-picked among all that remain, rejoined or not
        remove(x, [all_(_present(x, i), not_(x[("aj", i)]), x[("inst", i)] == -1) for i in x.slots])
    members = has_members(x)
    elected = True
    with x.when(members):
        elected = elect_joined_leader(x)
    waiting = all_(members, not_(elected))
    with x.when(waiting):
        x.set("join", True)
        x.set("join_at", now + rebalance_timeout(x))
    with x.when(not_(waiting)):
        bump = 0 if "generation_not_bumped" in x.broken else 2 if "generation_bumped_twice" in x.broken else 1
        x.set("gen", x["gen"] + bump)
        x.oblige("generation-advances-by-one", x["gen"] == gen_before + 1)
        for i in x.slots:
            x.set(("ps", i), False)
        with x.when(not_(members)):
            transition(x, E)
            persist(x)
        with x.when(members):
            if "stable_skips_completing" in x.broken:
                transition(x, S)
            else:
                transition(x, CR)
            x.oblige("new-generation-members-rejoined",
                     all_(*[implies(all_(_present(x, i), x[("inst", i)] == -1), x[("aj", i)]) for i in x.slots]))
            for i in x.slots:
                with x.when(_present(x, i)):
                    x.set(("aj", i), False)
                    x.set(("new", i), False)
                    set_heartbeat(x, i, *session_deadline(x, False, x[("as", i)], x[("st", i)], now))
            for i in x.slots:
                x.set(("ps", i), _present(x, i))
            x.set("sync", True)
            x.set("sync_at", now + rebalance_timeout(x))
            x.set("sync_gen", x["gen"])


def elect_joined_leader(x):
    """``maybeElectNewJoinedLeader``: keep a leader that rejoined, else any member that did."""
    leader = x["leader"]
    keep = any_(*[all_(leader == i, _present(x, i), x[("aj", i)]) for i in x.slots])
    joined = [all_(_present(x, i), x[("aj", i)]) for i in x.slots]
    any_joined = any_(*joined)
    with x.when(all_(not_(keep), any_joined)):
        x.set("leader", x.pick(joined))
    return any_(keep, any_joined)


def reset_and_propagate_assignment_error(x, now) -> None:
    for i in x.slots:
        with x.when(_present(x, i)):
            for p in range(x.parts):
                x.set(("asg", i, p), False)
            with x.when(x[("as", i)]):
                x.set(("as", i), False)
                set_heartbeat(x, i, *session_deadline(x, x[("new", i)], x[("aj", i)], x[("st", i)], now))


def set_and_propagate_assignment(x, sa, now) -> None:
    """``setAndPropagateAssignment``: store each member's assignment, answer parked SyncGroups."""
    if "followers_get_leader_assignment" in x.broken:
        leader = x["leader"]
        sa = [[any_(*[all_(leader == j, sa[j][p]) for j in x.slots]) for p in range(x.parts)] for _ in x.slots]
    gen = x["gen"]
    for i in x.slots:
        with x.when(_present(x, i)):
            for p in range(x.parts):
                x.set(("asg", i, p), sa[i][p])
            with x.when(x[("as", i)]):
                # A SyncGroup answered NONE: it carries this generation's stored assignment ...
                x.oblige("assignment-matches-generation", x[("asgen", i)] == gen)
                # ... and the record of this generation is written (a member may now be STABLE).
                x.oblige_after("stable-member-generation-reached",
                               lambda s, gen=gen: all_(s["p_exists"], s["p_gen"] >= gen))
                x.set(("as", i), False)
                set_heartbeat(x, i, *session_deadline(x, x[("new", i)], x[("aj", i)], x[("st", i)], now))
    for p in range(x.parts):
        x.oblige("disjoint-assignments", count([all_(_present(x, i), x[("asg", i, p)]) for i in x.slots]) <= 1)


def remove_member_and_update_group(x, who, now) -> None:
    remove(x, [who == i for i in x.slots])
    state = x["state"]
    with x.when(one_of(state, (S, CR))):
        maybe_prepare_rebalance(x, now)
    with x.when(state == PR):
        try_complete_join(x, now)


def remove_pending_member_and_update_group(x, who, now) -> None:
    remove(x, [who == i for i in x.slots])
    with x.when(x["state"] == PR):
        try_complete_join(x, now)


def sync_is_complete(x):
    return any_(x["sync_gen"] != x["gen"], one_of(x["state"], (E, PR)),
                not_(any_(*[x[("ps", i)] for i in x.slots])))


def remove_pending_sync_member(x, who) -> None:
    for i in x.slots:
        with x.when(who == i):
            x.set(("ps", i), False)
    with x.when(all_(x["sync"], sync_is_complete(x))):
        x.set("sync", False)


def create_group(x) -> None:
    """``Group(group_id)``: Empty, generation 0, nobody."""
    for key, value in (("exists", True), ("state", E), ("gen", 0), ("leader", -1), ("nma", False),
                       ("join", False), ("idr_set", False), ("sync", False), ("sync_gen", -1)):
        x.set(key, value)
    for i in x.slots:
        for key in ("present", "pending", "ps"):
            x.set((key, i), False)


def assignor_contract(x, sa):
    """Environment assumption A1: the leader's assignment gives every partition of the topic to
    exactly one member of the generation and nothing else (``assignor_drops_partition`` leaves
    the last partition to nobody)."""
    nparts = x.cfg["nparts"]
    cs = []
    for p in range(x.parts):
        owners = count([all_(_present(x, i), sa[i][p]) for i in x.slots])
        want = ite(p < nparts, 1, 0)
        if "assignor_drops_partition" in x.broken:
            want = ite(p == nparts - 1, 0, want)
        cs.append(owners == want)
    return all_(*cs)


# ---------------------------------------------------------------------------------------------
# Events: one transition relation per server event
# ---------------------------------------------------------------------------------------------


def ev_join_group(x, p) -> None:
    """JoinGroup (``handle_join_group``): ``who`` is the member id's slot or -1 for "" (a new
    member, which gets slot ``k``); ``proto`` one of :data:`PROTOS`."""
    who, now = p["who"], p["t"]
    req = {"rt": p["rt"], "st": p["st"], "proto": p["proto"], "inst": p["inst"]}
    static_requests_assumed(x, p)
    st_ok = all_(x.cfg["min_st"] <= p["st"], p["st"] <= x.cfg["max_st"])
    existed = x["exists"]
    go = all_(st_ok, any_(existed, who == -1))
    with x.when(all_(go, not_(existed))):
        create_group(x)
    with x.when(go):
        accept = accept_joining_member(x, who)
        with x.when(not_(accept)):
            remove(x, [who == i for i in x.slots])
        with x.when(all_(accept, who == -1)):
            new_member_join(x, p, req, now)
        with x.when(all_(accept, who != -1)):
            current_member_join(x, who, p, req, now)
        with x.when(x["state"] == PR):
            try_complete_join(x, now)


def accept_joining_member(x, who):
    state = x["state"]
    present = any_(*[all_(who == i, _present(x, i)) for i in x.slots])
    parked = any_(*[all_(who == i, _present(x, i), x[("aj", i)]) for i in x.slots])
    awaiting = count([all_(_present(x, i), x[("aj", i)]) for i in x.slots])
    size = count([_present(x, i) for i in x.slots])
    gms = x.cfg["gms"]
    return ite(state == E, True, ite(state == PR, any_(parked, awaiting < gms), any_(present, size < gms)))


def new_member_join(x, p, req, now) -> None:
    """``doNewMemberJoinGroup``: a new id in the free slot ``k``; a known static instance's
    replaces the id it holds (``doStaticNewMemberJoinGroup``), a dynamic member's is only handed
    out (MEMBER_ID_REQUIRED) from v4 on."""
    with x.when(p["proto"] != UNSUPPORTED):
        k = p["k"]
        x.assume(any_(*[all_(k == i, not_(_present(x, i)), not_(x[("pending", i)]), not_(x[("ps", i)]),
                             not_(x[("fenced", i)])) for i in x.slots]))
        j = mapped_slot(x, req["inst"])
        replace = j != -1
        if "static_member_added_not_replaced" in x.broken:
            replace = False
        with x.when(replace):
            update_static_member_and_rebalance(x, j, k, req, now)
        with x.when(not_(replace)):
            with x.when(all_(x.cfg["v4"], req["inst"] == -1)):
                for i in x.slots:
                    with x.when(k == i):
                        x.set(("pending", i), True)
                        x.set(("pend_at", i), now + req["st"])
            with x.when(any_(not_(x.cfg["v4"]), req["inst"] != -1)):
                add_member_and_rebalance(x, k, req, now)


def update_static_member_and_rebalance(x, j, k, req, now) -> None:
    """``updateStaticMemberAndRebalance``: ``replaceStaticMember`` moves member *j* to its new id
    in slot *k* (what was parked under the old id is answered FENCED_INSTANCE_ID; the leader's id
    follows; the old id's pending-sync entry stays, as in Kafka), the session deadline is re-armed
    with the old session timeout, the new protocols and timeouts are taken and the JoinGroup
    parked. Stable: the group record is written with the new id and the member answered with the
    current generation (the protocol selection cannot change: every shape prefers "range");
    CompletingRebalance: a rebalance; PreparingRebalance: the JoinGroup waits."""
    old = {key: slot_value(x, j, key) for key in ("st", "proto", "new", "inst")}
    old_asg = [slot_value(x, j, ("asg", q)) for q in range(x.parts)]
    same_protocols = old["proto"] == req["proto"]
    for i in x.slots:
        with x.when(j == i):
            x.set(("present", i), False)
            x.set(("aj", i), False)
            x.set(("as", i), False)
            x.set(("fenced", i), True)
    for i in x.slots:
        with x.when(k == i):
            # the new id: a member (not pending), nothing parked yet, not awaited by the DelayedSync
            for key, value in (("present", True), ("pending", False), ("as", False), ("ps", False)):
                x.set((key, i), value)
            for key in ("new", "inst"):
                x.set((key, i), old[key])
            for q in range(x.parts):
                x.set(("asg", i, q), old_asg[q])
            set_heartbeat(x, i, True, now + old["st"])
            x.set(("proto", i), req["proto"])
            x.set(("rt", i), req["rt"])
            x.set(("st", i), req["st"])
            x.set(("aj", i), True)
    with x.when(x["leader"] == j):
        x.set("leader", k)
    state, gen = x["state"], x["gen"]
    with x.when(state == S):
        if "static_rejoin_rebalances" in x.broken:
            maybe_prepare_rebalance(x, now)
        else:
            persist(x)
            for i in x.slots:
                with x.when(k == i):
                    x.set(("aj", i), False)
        # answered at once, with the generation the group had, which it still has
        answered = any_(*[all_(k == i, not_(x[("aj", i)])) for i in x.slots])
        x.oblige("static-rejoin-keeps-generation",
                 implies(same_protocols, all_(answered, x["state"] == S, x["gen"] == gen)))
    with x.when(state == CR):
        prepare_rebalance(x, now)


def current_member_join(x, who, p, req, now) -> None:
    with x.when(p["proto"] != UNSUPPORTED):
        pending = any_(*[all_(who == i, x[("pending", i)]) for i in x.slots])
        # A3: a MEMBER_ID_REQUIRED id is never sent with an instance id
        x.assume(implies(pending, req["inst"] == -1))
        valid = member_error(x, who, req["inst"]) == NONE
        with x.when(pending):
            add_member_and_rebalance(x, who, req, now)
        with x.when(all_(not_(pending), valid)):
            x.oblige("fenced-member-id-never-accepted", not_(is_fenced(x, who)))
            state = x["state"]
            matches = any_(*[all_(who == i, x[("proto", i)] == req["proto"]) for i in x.slots])
            is_leader = x["leader"] == who
            update = any_(state == PR, all_(state == CR, not_(matches)),
                          all_(state == S, any_(is_leader, not_(matches))))
            with x.when(update):
                update_member_and_rebalance(x, who, req, now)


def ev_sync_group(x, p) -> None:
    """SyncGroup (``handle_sync_group``); ``sa[i][q]``: the leader's assignment of partition q."""
    who, rg, now = p["who"], p["gen"], p["t"]
    static_requests_assumed(x, p)
    valid = member_error(x, who, p["inst"]) == NONE
    stale = False if "sync_accepts_stale_generation" in x.broken else rg != x["gen"]
    state = x["state"]
    ok = all_(x["exists"], valid, not_(stale), state != E, state != PR)
    x.oblige("fenced-member-id-never-accepted", implies(ok, not_(is_fenced(x, who))))
    with x.when(all_(ok, state == CR)):
        for i in x.slots:
            with x.when(who == i):
                x.set(("as", i), True)
                x.set(("asgen", i), rg)
        remove_pending_sync_member(x, who)
        with x.when(x["leader"] == who):
            x.assume(assignor_contract(x, p["sa"]))
            set_and_propagate_assignment(x, p["sa"], now)
            transition(x, S)
            if "assignment_not_persisted" not in x.broken:
                persist(x)
    with x.when(all_(ok, state == S)):
        remove_pending_sync_member(x, who)
        for i in x.slots:
            with x.when(who == i):
                gen = x["gen"]
                x.oblige("assignment-matches-generation", all_(
                    rg == gen, x["p_exists"], x["p_gen"] == gen,
                    *[x[("asg", i, q)] == x[("p_asg", i, q)] for q in range(x.parts)]))
                x.oblige_after("stable-member-generation-reached",
                               lambda s, gen=gen: all_(s["p_exists"], s["p_gen"] >= gen))
                reschedule_heartbeat(x, i, now)


def _expected_member_error(x, who, inst):
    """§1.11 validateCurrentMember, written independently of :func:`member_error`: the members
    holding the instance id, then the one it must be."""
    holders = [all_(inst >= 0, _present(x, i), x[("inst", i)] == inst) for i in x.slots]
    is_who = any_(*[all_(holders[i], who == i) for i in x.slots])
    present = any_(*[all_(who == i, _present(x, i)) for i in x.slots])
    return ite(inst < 0, ite(present, NONE, UNKNOWN_MEMBER_ID),
               ite(not_(any_(*holders)), UNKNOWN_MEMBER_ID, ite(is_who, NONE, FENCED_INSTANCE_ID)))


def expected_heartbeat_error(x, who, rg, inst):
    """The reference's table (§1.8), written independently of the handler below."""
    member = _expected_member_error(x, who, inst)
    state = x["state"]
    return ite(not_(x["exists"]), UNKNOWN_MEMBER_ID,
               ite(member != NONE, member,
                   ite(rg != x["gen"], ILLEGAL_GENERATION,
                       ite(state == E, UNKNOWN_MEMBER_ID,
                           ite(state == PR, REBALANCE_IN_PROGRESS, NONE)))))


def ev_heartbeat(x, p) -> None:
    """Heartbeat (``handle_heartbeat``): validation before the state."""
    who, rg, now, inst = p["who"], p["gen"], p["t"], p["inst"]
    static_requests_assumed(x, p)
    expected = expected_heartbeat_error(x, who, rg, inst)
    fenced = is_fenced(x, who)
    if "fenced_static_member_accepted" in x.broken:
        j = mapped_slot(x, inst)
        who = ite(j != -1, j, who)  # the instance's current member, whoever sent it
    member = member_error(x, who, inst)
    state = x["state"]
    valid = all_(x["exists"], member == NONE, rg == x["gen"], state != E)
    preparing = NONE if "heartbeat_none_while_preparing" in x.broken else REBALANCE_IN_PROGRESS
    error = ite(not_(x["exists"]), UNKNOWN_MEMBER_ID,
                ite(member != NONE, member,
                    ite(rg != x["gen"], ILLEGAL_GENERATION,
                        ite(state == E, UNKNOWN_MEMBER_ID, ite(state == PR, preparing, NONE)))))
    with x.when(valid):
        for i in x.slots:
            with x.when(who == i):
                reschedule_heartbeat(x, i, now)
    x.output("error", error)
    x.oblige("heartbeat-error-table", error == expected)
    x.oblige("fenced-member-id-never-accepted", implies(error == NONE, not_(fenced)))


def ev_leave_group(x, p) -> None:
    """LeaveGroup with one member (``handle_leave_group``): by member id (validated with the
    instance id it carries), or by instance id alone (``who`` -1: the administrative form)."""
    who, now, inst = p["who"], p["t"], p["inst"]
    static_requests_assumed(x, p)
    pending = any_(*[all_(who == i, x[("pending", i)]) for i in x.slots])
    valid = member_error(x, who, inst) == NONE
    j = mapped_slot(x, inst)
    with x.when(all_(x["exists"], who == -1, j != -1)):
        remove_member_and_update_group(x, j, now)
    with x.when(all_(x["exists"], who != -1)):
        with x.when(pending):
            remove_pending_member_and_update_group(x, who, now)
        with x.when(all_(not_(pending), valid)):
            remove_member_and_update_group(x, who, now)


def expected_commit_error(x, existed, who, rg, inst):
    """The reference's validateOffsetCommit order and state table (§1.10), independently."""
    member = _expected_member_error(x, who, inst)
    state = x["state"]
    checked = ite(member != NONE, member,
                  ite(rg != x["gen"], ILLEGAL_GENERATION, ite(state == CR, REBALANCE_IN_PROGRESS, NONE)))
    on_group = ite(all_(rg < 0, state == E), NONE,
                   ite(any_(rg >= 0, who != -1, inst >= 0), checked, UNKNOWN_MEMBER_ID))
    return ite(not_(existed), ite(rg < 0, NONE, ILLEGAL_GENERATION), on_group)


def ev_offset_commit(x, p) -> None:
    """OffsetCommit with generation fencing (``handle_offset_commit``)."""
    who, rg, now, inst = p["who"], p["gen"], p["t"], p["inst"]
    static_requests_assumed(x, p)
    existed = x["exists"]
    with x.when(all_(not_(existed), rg < 0)):
        create_group(x)  # a "simple" consumer's group
    expected = expected_commit_error(x, existed, who, rg, inst)
    member = member_error(x, who, inst)
    state, gen = x["state"], x["gen"]
    stale = all_(rg != gen, "commit_accepts_stale_generation" not in x.broken)
    skips = "commit_skips_fencing" in x.broken
    if "commit_checks_generation_first" in x.broken:
        member_check = ite(stale, ILLEGAL_GENERATION,
                           ite(all_(member != NONE, not skips), member, NONE))
    else:
        member_check = ite(all_(member != NONE, not skips), member,
                           ite(all_(stale, not skips), ILLEGAL_GENERATION, NONE))
    validation = ite(all_(rg < 0, state == E), NONE,
                     ite(any_(rg >= 0, who != -1, inst >= 0), member_check, UNKNOWN_MEMBER_ID))
    on_group = ite(validation != NONE, validation, ite(state == CR, REBALANCE_IN_PROGRESS, NONE))
    error = ite(all_(not_(existed), rg >= 0), ILLEGAL_GENERATION, on_group)
    with x.when(all_(error == NONE, one_of(state, (S, PR)))):
        for i in x.slots:
            with x.when(all_(who == i, _present(x, i))):
                reschedule_heartbeat(x, i, now)
    x.output("error", error)
    x.oblige("commit-error-precedence", error == expected)
    # The catalogue's statement: an accepted commit carries the current generation, or a negative
    # one on an Empty group (a consumer outside any group).
    x.oblige("commit-fencing", implies(error == NONE, any_(all_(rg >= 0, rg == gen), all_(rg < 0, state == E))))
    # A commit outside group management (generation < 0 on an Empty group) is accepted whatever
    # member id it carries (GroupCoordinator.validateOffsetCommit checks neither member nor
    # instance then): only a commit the coordinator validates can be a fenced id's.
    x.oblige("fenced-member-id-never-accepted",
             implies(all_(error == NONE, any_(rg >= 0, state != E)), not_(is_fenced(x, who))))


def timers(x, early):
    """Every timer as (kind, slot, armed, due)."""
    ex = x["exists"]
    out = [("join", None, all_(ex, x["join"]), x["join_at"]), ("sync", None, all_(ex, x["sync"]), x["sync_at"])]
    for i in x.slots:
        out.append(("hb", i, all_(ex, _present(x, i), x[("hb", i)]), x[("hb_at", i)] - early))
    for i in x.slots:
        out.append(("pend", i, all_(ex, x[("pending", i)]), x[("pend_at", i)]))
    return out


def _fire(x, kind: str, which, strict: bool):
    """The guard that timer (*kind*, slot *which*) is armed and due first; returns its due time.
    ``strict``: due strictly before every other armed timer (no tie for replays to break)."""
    early = x.cfg["hbi"] if "expiry_ignores_deadline" in x.broken else 0
    table = timers(x, early)
    chosen = [(k, i, a, d) for k, i, a, d in table if k == kind]
    armed = any_(*[all_(a, True if i is None else which == i) for k, i, a, d in chosen])
    due = chosen[-1][3]
    for k, i, a, d in reversed(chosen[:-1]):
        due = ite(which == i, d, due)
    conds = [armed]
    for k, i, a, d in table:
        is_me = k == kind and (i is None or which == i)
        if k == kind and i is None:
            continue
        other = all_(a, not_(is_me)) if k == kind else a
        conds.append(implies(other, due < d if strict else due <= d))
    x.assume(all_(*conds))
    return due


def ev_join_deadline(x, p) -> None:
    """DelayedJoin / InitialDelayedJoin expiry (``on_join_deadline``): the rebalance timeout
    completes the join phase anyway; the initial delay first extends itself."""
    now = _fire(x, "join", None, p.get("strict", False))
    x.set("join", False)
    extend = all_(x["idr_set"], x["nma"], x["idr"] != 0)
    with x.when(extend):
        ird = x.cfg["ird"]
        x.set("nma", False)
        delay = min_(ird, x["idr"])
        x.set("idr", max_(x["idr"] - ird, 0))
        x.set("join", True)
        x.set("join_at", now + delay)
    with x.when(not_(extend)):
        complete_join(x, now, all_joined=False)


def ev_sync_deadline(x, p) -> None:
    """DelayedSync expiry (``on_sync_deadline``): members that did not sync within the rebalance
    timeout are removed and the group rebalances."""
    now = _fire(x, "sync", None, p.get("strict", False))
    x.set("sync", False)
    with x.when(not_(sync_is_complete(x))):
        remove(x, [all_(_present(x, i), x[("ps", i)]) for i in x.slots])
        prepare_rebalance(x, now)


def ev_session_expiry(x, p) -> None:
    """DelayedHeartbeat expiry of member ``which`` (``on_heartbeat_deadline``)."""
    which = p["which"]
    now = _fire(x, "hb", which, p.get("strict", False))
    for i in x.slots:
        with x.when(which == i):
            x.set(("hb", i), False)
            satisfied = all_(not_(x[("new", i)]), any_(x[("aj", i)], x[("as", i)]))
            with x.when(not_(satisfied)):
                x.oblige("no-early-session-expiry", x[("hb_at", i)] <= now)
    satisfied = any_(*[all_(which == i, not_(x[("new", i)]), any_(x[("aj", i)], x[("as", i)])) for i in x.slots])
    with x.when(not_(satisfied)):
        remove_member_and_update_group(x, which, now)


def ev_pending_expiry(x, p) -> None:
    """Expiry of the MEMBER_ID_REQUIRED id in slot ``which`` (``on_pending_deadline``)."""
    which = p["which"]
    now = _fire(x, "pend", which, p.get("strict", False))
    remove_pending_member_and_update_group(x, which, now)


def ev_failover(x, p) -> None:
    """Coordinator failover: the old coordinator unloads the group, the new one loads the last
    persisted record (``unload`` then ``load``)."""
    now = p["t"]
    pe = x["p_exists"]
    x.set("exists", pe)
    with x.when(pe):
        x.set("gen", x["p_gen"])
        x.set("leader", x["p_leader"])
        for i in x.slots:
            x.set(("present", i), x[("p_present", i)])
            for k in ("rt", "st", "inst"):
                x.set((k, i), x[(f"p_{k}", i)])
            # The record keeps the selected protocol's metadata only (readGroupMessageValue:
            # supportedProtocols = List((protocol, subscription))): a loaded member lists "range"
            # alone, shape 0, whatever it joined with (model.group.load).
            x.set(("proto", i), ite(x[("p_present", i)], 0, x[("p_proto", i)]))
            for q in range(x.parts):
                x.set(("asg", i, q), x[("p_asg", i, q)])
            for k in ("aj", "as", "new", "pending", "ps"):
                x.set((k, i), False)
        x.set("state", ite(has_members(x), S, E))
        for key, value in (("nma", False), ("join", False), ("idr_set", False), ("sync", False), ("sync_gen", -1)):
            x.set(key, value)
        with x.when(count([_present(x, i) for i in x.slots]) > x.cfg["gms"]):
            prepare_rebalance(x, now)
        for i in x.slots:
            with x.when(_present(x, i)):
                reschedule_heartbeat(x, i, now)
    for i in x.slots:
        # the new coordinator knows no replaced id: the record it loads may hold one again
        x.set(("fenced", i), False)


def ev_delete_group(x, p) -> None:
    """DeleteGroups (``GroupCoordinator.handleDeleteGroups`` → ``cleanupGroupMetadata``; the model's
    :func:`model.group.delete`): an Empty group is removed with its record (tombstones), so neither
    the coordinator nor a later one holds it; the ids the coordinator replaced go with it (a slot
    that takes a member again holds a new id). Any other state is refused (NON_EMPTY_GROUP) and
    nothing changes."""
    with x.when(all_(x["exists"], x["state"] == E)):
        x.set("exists", False)
        x.set("p_exists", False)
        for i in x.slots:
            x.set(("fenced", i), False)


EVENTS = {
    "JoinGroup": ev_join_group,
    "SyncGroup": ev_sync_group,
    "Heartbeat": ev_heartbeat,
    "LeaveGroup": ev_leave_group,
    "OffsetCommit": ev_offset_commit,
    "JoinDeadline": ev_join_deadline,
    "SyncDeadline": ev_sync_deadline,
    "SessionExpiry": ev_session_expiry,
    "PendingExpiry": ev_pending_expiry,
    "Failover": ev_failover,
    "DeleteGroup": ev_delete_group,
}

EVENT_DOC = {
    "JoinGroup": "JoinGroup (new or known member; completes the join phase when all joined)",
    "SyncGroup": "SyncGroup (the leader's assignment stored and propagated, or an immediate answer)",
    "Heartbeat": "Heartbeat",
    "LeaveGroup": "LeaveGroup",
    "OffsetCommit": "OffsetCommit",
    "JoinDeadline": "join completion at the rebalance timeout (DelayedJoin / InitialDelayedJoin)",
    "SyncDeadline": "DelayedSync: members that did not sync within the rebalance timeout",
    "SessionExpiry": "session expiry (DelayedHeartbeat)",
    "PendingExpiry": "expiry of a MEMBER_ID_REQUIRED id",
    "Failover": "coordinator failover from the persisted record",
    "DeleteGroup": "DeleteGroups: an Empty group removed with its record (tombstones)",
}


REQUESTS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit")


def symbolic_params(event: str, n: int, parts: int, tag: str = "") -> tuple[dict, object]:
    """The event's parameters as free constants and their domain."""
    I = lambda name: z3.Int(tag + name)  # noqa: E731
    p: dict = {"t": I("t")}
    dom = [p["t"] >= 0]
    if event in ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit"):
        p["who"] = I("who")
        p["inst"] = I("inst")
        dom += [p["who"] >= -1, p["who"] < n, p["inst"] >= -1, p["inst"] < n]
    if event == "JoinGroup":
        p.update(k=I("k"), proto=I("proto"), rt=I("rt"), st=I("st"))
        dom += [p["k"] >= 0, p["k"] < n, p["proto"] >= 0, p["proto"] <= 2, p["rt"] >= 1, p["st"] >= 1]
    if event in ("SyncGroup", "Heartbeat", "OffsetCommit"):
        p["gen"] = I("gen")
    if event == "SyncGroup":
        p["sa"] = [[z3.Bool(f"{tag}sa_{i}_{q}") for q in range(parts)] for i in range(n)]
    if event in ("SessionExpiry", "PendingExpiry"):
        p["which"] = I("which")
        dom += [p["which"] >= 0, p["which"] < n]
    return p, all_(*dom)


def run(event: str, pre: dict, cfg: dict, params: dict, n: int, parts: int, broken=frozenset(),
        picks: str = "free", tag: str = "") -> Exec:
    """Execute *event* from *pre*: symbolic if any input is symbolic, concrete otherwise."""
    if event in REQUESTS and "inst" not in params:
        params = dict(params, inst=-1)  # no group.instance.id
    x = Exec(pre, cfg, params, n, parts, broken, picks, tag)
    EVENTS[event](x, params)
    return x.finish()


# ---------------------------------------------------------------------------------------------
# Invariants and properties
# ---------------------------------------------------------------------------------------------


def _slots(s):
    return range(sum(1 for k in s if isinstance(k, tuple) and k[0] == "present"))


def _parts(s):
    return range(sum(1 for k in s if isinstance(k, tuple) and k[0] == "asg" and k[1] == 0))


def _partition(s, cfg, present_key, asg_key, exact: bool):
    cs = []
    for q in _parts(s):
        owners = count([all_(s[(present_key, i)], s[(asg_key, i, q)]) for i in _slots(s)])
        cs.append(owners == ite(q < cfg["nparts"], 1, 0) if exact else owners <= 1)
    return all_(*cs)


def inv_state_domain(s, cfg):
    """Types: the state is one of the four, members hold a protocol shape of :data:`PROTOS`
    (the unsupported one is never stored) and positive timeouts."""
    members = [implies(all_(s[pre + "exists"], s[(pre + "present", i)]), all_(one_of(s[(pre + "proto", i)], (0, 1)), s[(pre + "rt", i)] >= 1,
                                                      s[(pre + "st", i)] >= 1))
               for i in _slots(s) for pre in ("", "p_")]
    return all_(implies(s["exists"], all_(s["state"] >= E, s["state"] <= S)), *members)


def inv_generation_non_negative(s, cfg):
    return all_(implies(s["exists"], s["gen"] >= 0), implies(s["p_exists"], s["p_gen"] >= 0))


def inv_persisted_behind(s, cfg):
    return implies(s["p_exists"], all_(s["exists"], s["p_gen"] <= s["gen"]))


def _leader_ok(s, present_key, leader_key):
    present = [s[(present_key, i)] for i in _slots(s)]
    return ite(any_(*present), any_(*[all_(s[leader_key] == i, present[i]) for i in _slots(s)]), s[leader_key] == -1)


def inv_leader_is_member(s, cfg):
    return implies(s["exists"], _leader_ok(s, "present", "leader"))


def inv_persisted_leader_is_member(s, cfg):
    return implies(s["p_exists"], _leader_ok(s, "p_present", "p_leader"))


def inv_join_deadline_only_preparing(s, cfg):
    return implies(all_(s["exists"], s["join"]), s["state"] == PR)


def inv_stable_is_persisted(s, cfg):
    same = [s[("p_present", i)] == s[("present", i)] for i in _slots(s)]
    same += [implies(s[("present", i)], s[("asg", i, q)] == s[("p_asg", i, q)]) for i in _slots(s) for q in _parts(s)]
    return implies(all_(s["exists"], s["state"] == S),
                   all_(s["p_exists"], s["p_gen"] == s["gen"], s["p_leader"] == s["leader"], *same))


def inv_persisted_assignment_partitions(s, cfg):
    has = any_(*[s[("p_present", i)] for i in _slots(s)])
    return implies(all_(s["p_exists"], has), _partition(s, cfg, "p_present", "p_asg", exact=True))


def inv_stable_disjoint(s, cfg):
    return implies(all_(s["exists"], s["state"] == S), _partition(s, cfg, "present", "asg", exact=False))


def inv_stable_covers(s, cfg):
    return implies(all_(s["exists"], s["state"] == S), _partition(s, cfg, "present", "asg", exact=True))


def inv_parked_sync_only_completing(s, cfg):
    return implies(s["exists"], all_(*[implies(all_(s[("present", i)], s[("as", i)]), s["state"] == CR)
                                       for i in _slots(s)]))


def inv_parked_sync_generation(s, cfg):
    return implies(s["exists"], all_(*[implies(all_(s[("present", i)], s[("as", i)]), s[("asgen", i)] == s["gen"])
                                       for i in _slots(s)]))


def inv_well_formed(s, cfg):
    """Shape facts of reachable states (used to draw random states, not by the proofs): a slot is
    a member or a pending id, not both; pending-sync entries are members or replaced ids; member
    instance ids are -1 or one of the N symbols."""
    return all_(*[implies(s["exists"], all_(not_(all_(s[("present", i)], s[("pending", i)])),
                                            implies(s[("ps", i)], any_(s[("present", i)], s[("fenced", i)])),
                                            s[("inst", i)] >= -1, s[("inst", i)] < len(_slots(s))))
                  for i in _slots(s)])


def _instances_unique(s, present_key, inst_key):
    n = len(_slots(s))
    return all_(*[implies(all_(s[(present_key, i)], s[(present_key, j)], s[(inst_key, i)] >= 0),
                          s[(inst_key, i)] != s[(inst_key, j)])
                  for i in range(n) for j in range(i + 1, n)])


def inv_instance_unique(s, cfg):
    return implies(s["exists"], _instances_unique(s, "present", "inst"))


def inv_persisted_instance_unique(s, cfg):
    return implies(s["p_exists"], _instances_unique(s, "p_present", "p_inst"))


def inv_fenced_not_member(s, cfg):
    return all_(*[implies(s[("fenced", i)], all_(s["exists"], not_(s[("present", i)]), not_(s[("pending", i)])))
                  for i in _slots(s)])


def inv_member_or_pending(s, cfg):
    return implies(s["exists"], all_(*[not_(all_(s[("present", i)], s[("pending", i)])) for i in _slots(s)]))


INVARIANTS = {
    "member-or-pending": (inv_member_or_pending, "a member id is a member or a pending (MEMBER_ID_REQUIRED) id, not both"),
    "state-domain": (inv_state_domain, "types: the group is Empty, PreparingRebalance, CompletingRebalance or Stable (Dead groups are unloaded); members hold a supported protocol list and positive timeouts"),
    "generation-non-negative": (inv_generation_non_negative, "the group's and the persisted record's generation are >= 0"),
    "persisted-behind": (inv_persisted_behind, "a persisted record implies a group whose generation is at least the record's"),
    "leader-is-member": (inv_leader_is_member, "the group's leader is one of its members (none when it has none)"),
    "persisted-leader-is-member": (inv_persisted_leader_is_member, "the persisted record's leader is one of its members (none when it has none)"),
    "join-deadline-only-preparing": (inv_join_deadline_only_preparing, "a DelayedJoin is armed only while PreparingRebalance"),
    "stable-is-persisted": (inv_stable_is_persisted, "a Stable group equals its persisted record: generation, leader, members, assignments"),
    "persisted-assignment-partitions": (inv_persisted_assignment_partitions, "a persisted record with members assigns every partition to exactly one of them"),
    "parked-sync-only-completing": (inv_parked_sync_only_completing, "SyncGroups are parked only while CompletingRebalance"),
    "parked-sync-generation": (inv_parked_sync_generation, "a parked SyncGroup carries the group's generation"),
    "instance-unique": (inv_instance_unique, "the group's members hold distinct group.instance.ids"),
    "stable-covers": (inv_stable_covers, "a Stable group assigns every partition to exactly one member"),
    "persisted-instance-unique": (inv_persisted_instance_unique, "the persisted record's members hold distinct group.instance.ids"),
    "fenced-not-member": (inv_fenced_not_member, "a member id the coordinator replaced is neither a member nor a pending id of its group"),
}

ASSUMPTIONS = {
    "A1 assignor contract": "the leader's SyncGroup assignment gives every partition to exactly one member of the generation",
    "A2 static requests": "only a client on JoinGroup v5+ (the v4+ configuration) sends a group.instance.id",
    "A3 no static pending id": "a MEMBER_ID_REQUIRED member id is never sent with a group.instance.id (static members are never asked for one; GroupCoordinator.doCurrentMemberJoinGroup throws IllegalStateException)",
}


def _gen_step(pre, post, event):
    """generation-advances-by-one across the whole step: the coordinator's generation never goes
    back while it keeps the group; failover starts from the persisted generation; the persisted
    generation never goes back and a record is never lost — but with its group, when DeleteGroups
    removes the Empty group: the group starts again from generation 0, a new incarnation (the
    catalogue's Checker compares generations within one)."""
    kept = all_(post["p_exists"], post["p_gen"] >= pre["p_gen"])
    if event == "DeleteGroup":
        kept = any_(kept, all_(not_(post["exists"]), not_(post["p_exists"])))
    kept = implies(pre["p_exists"], kept)
    if event == "Failover":
        return all_(kept, implies(post["exists"], post["gen"] == pre["p_gen"]))
    return all_(kept, implies(all_(pre["exists"], post["exists"]), post["gen"] >= pre["gen"]))


# name -> (state invariant or None, step obligation or None, strengthening invariants, teeth variant)
PROPERTIES = {
    "generation-advances-by-one": (None, _gen_step, ("persisted-behind",), "generation_bumped_twice"),
    "leader-is-member": (inv_leader_is_member, None, ("persisted-leader-is-member",), "leader_not_repicked"),
    "legal-group-transitions": (None, None, ("join-deadline-only-preparing",), "stable_skips_completing"),
    "join-completes-when-all-joined": (None, None, (), "join_completes_with_pending"),
    "new-generation-members-rejoined": (None, None, (), "non_rejoined_kept"),
    "no-early-session-expiry": (None, None, (), "expiry_ignores_deadline"),
    "disjoint-assignments": (inv_stable_disjoint, None, ("persisted-assignment-partitions", "stable-covers", "join-deadline-only-preparing"), "followers_get_leader_assignment"),
    "stable-group-covers-partitions": (inv_stable_covers, None, ("persisted-assignment-partitions", "join-deadline-only-preparing"), "assignor_drops_partition"),
    "stable-member-generation-reached": (None, None, ("stable-is-persisted", "leader-is-member", "persisted-leader-is-member", "join-deadline-only-preparing"), "assignment_not_persisted"),
    "assignment-matches-generation": (None, None, ("stable-is-persisted", "leader-is-member", "persisted-leader-is-member", "parked-sync-only-completing", "parked-sync-generation", "join-deadline-only-preparing"), "sync_accepts_stale_generation"),
    "commit-fencing": (None, None, ("generation-non-negative",), "commit_skips_fencing"),
    "commit-error-precedence": (None, None, ("instance-unique", "persisted-instance-unique"), "commit_checks_generation_first"),
    "heartbeat-error-table": (None, None, ("instance-unique", "persisted-instance-unique"), "heartbeat_none_while_preparing"),
    "one-member-per-instance": (inv_instance_unique, None, ("persisted-instance-unique",), "static_member_added_not_replaced"),
    "fenced-member-id-never-accepted": (None, None, ("fenced-not-member",), "fenced_static_member_accepted"),
    "static-rejoin-keeps-generation": (None, None, (), "static_rejoin_rebalances"),
}

SERVER_STATEMENTS = {
    "stable-member-generation-reached": "server side: every SyncGroup answered NONE in generation g leaves a persisted record of generation >= g",
    "assignment-matches-generation": "server side: every SyncGroup answered NONE answers a request of the group's generation with the assignment stored for the member in it",
    "disjoint-assignments": "server side: a stored assignment, and a Stable group's assignments, give no partition to two members",
}

TEETH = {name: spec[3] for name, spec in PROPERTIES.items()}
# Variants that break the environment (the leader's assignor), not the coordinator.
ENVIRONMENT_VARIANTS = frozenset({"assignor_drops_partition"})


BASE_INVARIANTS = ("state-domain", "member-or-pending")


def _invariant(names, s, cfg):
    return all_(*[INVARIANTS[n][0](s, cfg) for n in BASE_INVARIANTS + tuple(names)])


def property_holds(name, pre, x: Exec, event, cfg):
    """The property's part of a step: its obligations, its state invariant after, its step rule."""
    state_inv, step, _, _ = PROPERTIES[name]
    parts = list(x.obligations.get(name, ()))
    if state_inv is not None:
        parts.append(state_inv(x.s, cfg))
    if step is not None:
        parts.append(step(pre, x.s, event))
    return all_(*parts)


# ---------------------------------------------------------------------------------------------
# Proofs
# ---------------------------------------------------------------------------------------------


class Result:
    """One proof: ``result`` is "proved", "counterexample" or "unknown"."""

    def __init__(self, prop, bound, result, seconds, invariants, reason="", counterexample=None):
        self.property, self.bound, self.result, self.seconds = prop, bound, result, seconds
        self.invariants, self.reason, self.counterexample = invariants, reason, counterexample

    def as_row(self) -> dict:
        return {"property": self.property, "bound": self.bound, "result": self.result,
                "seconds": round(self.seconds, 3), "invariants": list(self.invariants), "reason": self.reason}


class Encoding:
    """The symbolic transitions of every event, built once per (bound, variants, pick policy)."""

    def __init__(self, n: int = N_MAX, parts: int = P_MAX, broken=frozenset(), picks: str = "free", strict: bool = False):
        self.n, self.parts, self.broken, self.picks = n, parts, frozenset(broken), picks
        self.pre = symbolic_state(n, parts)
        self.cfg, self.cfg_domain = symbolic_config(parts)
        self.steps = {}
        for event in EVENTS:
            params, dom = symbolic_params(event, n, parts, tag=f"{event}_")
            if strict:
                params["strict"] = True
            x = run(event, self.pre, self.cfg, params, n, parts, self.broken, picks, tag=f"{event}_")
            self.steps[event] = (params, dom, x)

    @property
    def bound(self) -> str:
        return f"N<={self.n} members, P<={self.parts} partitions"

    def initially(self, name):
        """The property and its strengthening hold in the initial state."""
        _, _, support, _ = PROPERTIES[name]
        init = initial_state(self.n, self.parts)
        state_inv = PROPERTIES[name][0]
        goal = all_(_invariant(support, init, self.cfg), True if state_inv is None else state_inv(init, self.cfg))
        return self._check(all_(self.cfg_domain, not_(goal)))

    def _check(self, formula, timeout_ms: int = 60_000):
        # Simplify and drop unconstrained subterms before the SMT core: ~8x faster here than the
        # default solver on these if-then-else-heavy terms.
        solver = z3.Then("simplify", "elim-uncnstr", "smt").solver()
        solver.set("timeout", timeout_ms)
        solver.add(formula)
        verdict = solver.check()
        return verdict, (solver.model() if verdict == z3.sat else solver.reason_unknown() if verdict == z3.unknown else None)

    def step_query(self, name, event, which: str = "all", everything: bool = False):
        """J(pre) ∧ T(pre, post) ∧ ¬(what must hold after): *which* is "all" (property and its
        strengthening), "property" or "support". ``everything``: J is every invariant and state
        property at once (the teeth start from such a state, so that replays start from a state
        the correct model could be in)."""
        params, dom, x = self.steps[event]
        _, _, support, _ = PROPERTIES[name]
        state_inv = PROPERTIES[name][0]
        if everything:
            j_pre = all_(inv_well_formed(self.pre, self.cfg), _invariant(tuple(INVARIANTS), self.pre, self.cfg),
                         *[spec[0](self.pre, self.cfg) for spec in PROPERTIES.values() if spec[0] is not None])
        else:
            j_pre = all_(_invariant(support, self.pre, self.cfg),
                         True if state_inv is None else state_inv(self.pre, self.cfg))
        prop = property_holds(name, self.pre, x, event, self.cfg)
        supp = _invariant(support, x.s, self.cfg)
        goal = {"all": all_(prop, supp), "property": prop, "support": supp}[which]
        return all_(self.cfg_domain, dom, *x.assumptions, j_pre, not_(goal))

    def prove(self, name, timeout_ms: int = 60_000) -> Result:
        """Initiation and consecution of the property strengthened by its listed invariants."""
        start = time.perf_counter()
        support = PROPERTIES[name][2]
        verdict, info = self.initially(name)
        if verdict != z3.unsat:
            return Result(name, self.bound, "unknown" if verdict == z3.unknown else "counterexample",
                          time.perf_counter() - start, support, f"initial state: {info if verdict == z3.unknown else 'violated'}")
        for event in EVENTS:
            verdict, info = self._check(self.step_query(name, event), timeout_ms)
            if verdict == z3.unknown:
                return Result(name, self.bound, "unknown", time.perf_counter() - start, support,
                              f"z3 returned unknown on {event}: {info}")
            if verdict == z3.sat:
                cex = self.counterexample(event, info)
                prop_ok = _eval_bool(info, property_holds(name, self.pre, self.steps[event][2], event, self.cfg))
                if prop_ok:
                    return Result(name, self.bound, "unknown", time.perf_counter() - start, support,
                                  f"not inductive: a strengthening invariant fails after {event}", cex)
                return Result(name, self.bound, "counterexample", time.perf_counter() - start, support,
                              f"{event} violates it from a state satisfying the listed invariants", cex)
        return Result(name, self.bound, "proved", time.perf_counter() - start, BASE_INVARIANTS + support,
                      f"holds initially and is preserved by all {len(EVENTS)} events")

    def find_violation(self, name, timeout_ms: int = 60_000):
        """A counterexample to the property itself (teeth): (event, counterexample) or None."""
        for event in EVENTS:
            verdict, info = self._check(self.step_query(name, event, which="property", everything=True), timeout_ms)
            if verdict == z3.sat:
                return event, self.counterexample(event, info)
        return None

    def counterexample(self, event, model) -> dict:
        """The pre-state, configuration and event parameters of a z3 model, as Python values."""
        params, _, x = self.steps[event]
        pre = {k: _eval(model, v) for k, v in self.pre.items()}
        cfg = {k: _eval(model, v) for k, v in self.cfg.items()}
        ps = {}
        for k, v in params.items():
            if k == "sa":
                ps[k] = [[_eval(model, b) for b in row] for row in v]
            elif k == "strict":
                ps[k] = v
            else:
                ps[k] = _eval(model, v)
        return {"event": event, "pre": pre, "cfg": cfg, "params": ps, "n": self.n, "parts": self.parts,
                "broken": sorted(self.broken)}


def _eval(model, expr):
    v = model.eval(expr, model_completion=True)
    if z3.is_bool(v):
        return z3.is_true(v)
    return v.as_long()


def _eval_bool(model, expr) -> bool:
    if isinstance(expr, bool):
        return expr
    return z3.is_true(model.eval(expr, model_completion=True))


def prove_all(n: int = N_MAX, parts: int = P_MAX, names=None) -> list:
    enc = Encoding(n, parts)
    return [enc.prove(name) for name in (names or PROPERTIES)]


# ---------------------------------------------------------------------------------------------
# Concrete states: to and from model.group.Group, and replay through the executable model
# ---------------------------------------------------------------------------------------------


def slot_id(i: int, seq: int = 0) -> str:
    """Member ids carry their slot: "m<slot>-<seq>" (new ids are made from client id "m<slot>")."""
    return grp.new_member_id(f"m{i}", seq)


def slot_of(member_id) -> int:
    if not member_id:
        return -1
    return int(member_id.split("-")[0][1:])


def to_config(cfg: dict, broken=()) -> Config:
    return Config(
        partitions=cfg["nparts"], group_max_size=cfg["gms"], min_session_timeout_ms=cfg["min_st"],
        max_session_timeout_ms=cfg["max_st"], new_member_join_timeout_ms=cfg["nmjt"],
        initial_rebalance_delay_ms=cfg["ird"], heartbeat_interval_ms=cfg["hbi"],
        session_timeout_ms=cfg["hbi"] + 1, join_group_version=5 if cfg["v4"] else 3, broken=frozenset(broken),
        static_clients=1 if cfg["v4"] else 0,  # (the checker judges the static properties only then)
    )


def instance_id(inst: int):
    """The group.instance.id of instance symbol *inst* (None for -1)."""
    return None if inst < 0 else f"i{inst}"


def instance_of(instance) -> int:
    return -1 if instance is None else int(instance[1:])


def to_groups(vals: dict, n: int, parts: int):
    """(group, persisted) as model.group values, from a state's Python values."""
    seq = iter(range(10_000))
    group = None
    if vals["exists"]:
        members, pending = [], []
        for i in range(n):
            if vals[("present", i)]:
                members.append(grp.Member(
                    member_id=slot_id(i), client_id=f"m{i}", rebalance_timeout_ms=vals[("rt", i)],
                    session_timeout_ms=vals[("st", i)], protocol_type="consumer", protocols=PROTOS[vals[("proto", i)]],
                    assignment=tuple(q for q in range(parts) if vals[("asg", i, q)]),
                    awaiting_join=("join", i) if vals[("aj", i)] else None,
                    awaiting_sync=("sync", i, vals[("asgen", i)]) if vals[("as", i)] else None,
                    is_new=vals[("new", i)],
                    heartbeat=grp.Deadline(vals[("hb_at", i)], next(seq)) if vals[("hb", i)] else None,
                    group_instance_id=instance_id(vals[("inst", i)])))
        for i in range(n):
            if vals[("pending", i)]:
                pending.append((slot_id(i), grp.Deadline(vals[("pend_at", i)], next(seq))))
        state = STATE_NAME[vals["state"]]
        group = grp.Group(
            group_id="g", state=state, generation=vals["gen"], protocol_type="consumer",
            protocol_name="range" if members else None,
            leader_id=None if vals["leader"] == -1 else slot_id(vals["leader"]),
            members=tuple(members), pending_members=tuple(pending),
            pending_sync=frozenset(slot_id(i) for i in range(n) if vals[("ps", i)]),
            new_member_added=vals["nma"],
            join_deadline=grp.Deadline(vals["join_at"], next(seq)) if vals["join"] else None,
            initial_delay_remaining=vals["idr"] if vals["join"] and vals["idr_set"] else None,
            sync_deadline=grp.Deadline(vals["sync_at"], next(seq)) if vals["sync"] else None,
            sync_generation=vals["sync_gen"], timer_seq=1000, member_seq=1000)
    persisted = None
    if vals["p_exists"]:
        members = tuple(grp.Member(
            member_id=slot_id(i), client_id=f"m{i}", rebalance_timeout_ms=vals[("p_rt", i)],
            session_timeout_ms=vals[("p_st", i)], protocol_type="consumer", protocols=PROTOS[vals[("p_proto", i)]],
            assignment=tuple(q for q in range(parts) if vals[("p_asg", i, q)]), is_new=False,
            group_instance_id=instance_id(vals[("p_inst", i)]))
            for i in range(n) if vals[("p_present", i)])
        persisted = grp.Group(
            group_id="g", state=grp.STABLE if members else grp.EMPTY, generation=vals["p_gen"],
            protocol_type="consumer", protocol_name="range" if members else None,
            leader_id=None if vals["p_leader"] == -1 else slot_id(vals["p_leader"]), members=members,
            timer_seq=500, member_seq=1000)
    return group, persisted


def observe_groups(group, persisted, n: int, parts: int) -> dict:
    """The canonical observation of concrete groups (what the encoding must agree on)."""
    o: dict = {"exists": group is not None, "p_exists": persisted is not None}
    if group is not None:
        o.update(state=STATE_CODE[group.state], gen=group.generation, leader=slot_of(group.leader_id),
                 nma=group.new_member_added, join=group.join_deadline is not None,
                 sync=group.sync_deadline is not None, sync_gen=group.sync_generation)
        if group.join_deadline is not None:
            o["join_at"] = group.join_deadline.at
            o["idr"] = group.initial_delay_remaining
        if group.sync_deadline is not None:
            o["sync_at"] = group.sync_deadline.at
        members = {slot_of(m.member_id): m for m in group.members}
        pending = {slot_of(pid): d for pid, d in group.pending_members}
        for i in range(n):
            m = members.get(i)
            o[("present", i)] = m is not None
            o[("pending", i)] = i in pending
            if i in pending:
                o[("pend_at", i)] = pending[i].at
            o[("ps", i)] = any(slot_of(x) == i for x in group.pending_sync)
            if m is not None:
                o[("member", i)] = (
                    m.rebalance_timeout_ms, m.session_timeout_ms, PROTOS.index(m.protocols),
                    tuple(q for q in range(parts) if q in m.assignment), m.awaiting_join is not None,
                    None if m.awaiting_sync is None else m.awaiting_sync[2], m.is_new,
                    None if m.heartbeat is None else m.heartbeat.at, m.group_instance_id)
    if persisted is not None:
        o.update(p_gen=persisted.generation, p_leader=slot_of(persisted.leader_id))
        for m in persisted.members:
            o[("p_member", slot_of(m.member_id))] = (
                m.rebalance_timeout_ms, m.session_timeout_ms, PROTOS.index(m.protocols),
                tuple(q for q in range(parts) if q in m.assignment), m.group_instance_id)
    return o


def observe_values(vals: dict, n: int, parts: int) -> dict:
    """The same observation, from the encoding's (concrete) state values."""
    return observe_groups(*to_groups(vals, n, parts), n, parts)


def id_of(group, slot: int) -> str:
    """The member id the group holds in *slot* (member or pending), else the slot's default id."""
    if slot == -1:
        return ""
    if group is not None:
        for m in group.members:
            if slot_of(m.member_id) == slot:
                return m.member_id
        for pending_id, _ in group.pending_members:
            if slot_of(pending_id) == slot:
                return pending_id
    return slot_id(slot)


def concrete_request(event: str, params: dict, n: int, group=None):
    """The model request (and where its answer goes) for an event's parameters."""
    who = params.get("who", -1)
    member_id = id_of(group, who)
    instance = instance_id(params.get("inst", -1))
    if event == "JoinGroup":
        client = f"m{params['k']}" if who == -1 else f"m{who}"
        return JoinGroupRequest("g", member_id, params["st"], params["rt"], "consumer", PROTOS[params["proto"]],
                                client_id=client, group_instance_id=instance), ("join", who)
    if event == "SyncGroup":
        assignments = tuple((id_of(group, i), tuple(q for q, b in enumerate(params["sa"][i]) if b)) for i in range(n))
        return SyncGroupRequest("g", params["gen"], member_id, None, None, assignments,
                                group_instance_id=instance), ("sync", who, params["gen"])
    if event == "Heartbeat":
        return HeartbeatRequest("g", params["gen"], member_id, group_instance_id=instance), ("req",)
    if event == "LeaveGroup":
        return LeaveGroupRequest("g", (member_id,), instance_ids=(instance,) if instance else ()), ("req",)
    if event == "OffsetCommit":
        return OffsetCommitRequest("g", params["gen"], member_id, ((0, 1),), group_instance_id=instance), ("req",)
    return None, None


def lowest_choose(kind, candidates):
    """The replay's answer to Kafka's hash-map choices: the lowest slot (``picks="lowest"``)."""
    return min(candidates, key=slot_of)


_HANDLERS = {"JoinGroup": grp.handle_join_group, "SyncGroup": grp.handle_sync_group,
             "Heartbeat": grp.handle_heartbeat, "LeaveGroup": grp.handle_leave_group,
             "OffsetCommit": grp.handle_offset_commit}
_TIMER_KIND = {"JoinDeadline": grp._JOIN, "SyncDeadline": grp._SYNC, "SessionExpiry": grp._HEARTBEAT,
               "PendingExpiry": grp._PENDING}


def _ids(group) -> set:
    if group is None:
        return set()
    return {m.member_id for m in group.members} | {p for p, _ in group.pending_members}


def _renamed(group, old: str, new: str):
    """*group* with member id *old* called *new* (members, pending ids, pending sync, leader)."""
    if group is None:
        return None
    swap = lambda i: new if i == old else i  # noqa: E731
    return attrs.evolve(
        group, leader_id=swap(group.leader_id), pending_sync=frozenset(swap(i) for i in group.pending_sync),
        members=tuple(attrs.evolve(m, member_id=new) if m.member_id == old else m for m in group.members),
        pending_members=tuple((swap(i), d) for i, d in group.pending_members))


def model_step(event: str, group, persisted, params: dict, config: Config, n: int):
    """Run the executable model for one event: ``(outcome, persisted after, time, (request,
    reply_to))``. Timer events fire the model's own earliest timer (``fire_timers``' loop body,
    once) and check it is the one the event names. A static member's new id (the model makes it
    from the instance id) is renamed into the slot ``k`` the encoding gives it."""
    if event in _HANDLERS:
        request, reply_to = concrete_request(event, params, n, group)
        outcome = _HANDLERS[event](group, request, reply_to, params["t"], config, lowest_choose)
        if event == "JoinGroup" and params.get("who", -1) == -1 and params.get("inst", -1) >= 0:
            for new in _ids(outcome.group) - _ids(group):
                outcome = attrs.evolve(outcome, group=_renamed(outcome.group, new, slot_id(params["k"])),
                                       persist=_renamed(outcome.persist, new, slot_id(params["k"])))
        return outcome, outcome.persist or persisted, params["t"], (request, reply_to)
    if event == "Failover":
        unloaded = grp.unload(group)
        loaded = grp.load(persisted, params["t"], config, lowest_choose)
        outcome = grp.Outcome(loaded.group, unloaded.replies + loaded.replies, unloaded.notes + loaded.notes,
                              loaded.persist, ())
        return outcome, persisted, params["t"], (None, None)
    if event == "DeleteGroup":
        outcome = grp.delete(group)
        if outcome is None:  # refused: nothing changes
            return grp.Outcome(group), persisted, params["t"], (None, None)
        return outcome, None, params["t"], (None, None)
    early = config.heartbeat_interval_ms if "expiry_ignores_deadline" in config.broken else 0
    best = grp._earliest(group, early) if group is not None else None
    if best is None:
        raise ValueError(f"{event}: no timer is armed")
    now, kind, key, deadline_at = best
    if kind != _TIMER_KIND[event] or (key is not None and slot_of(key) != params.get("which")):
        raise ValueError(f"{event}: the model's earliest timer is {(kind, key)}")
    d = grp._Draft(group, config, lowest_choose)
    if kind == grp._JOIN:
        d.on_join_deadline(now)
    elif kind == grp._SYNC:
        d.on_sync_deadline(now)
    elif kind == grp._HEARTBEAT:
        d.on_heartbeat_deadline(grp._index_of(d.members, key), deadline_at, now)
    else:
        d.on_pending_deadline(key, now)
    outcome = d.outcome()
    return outcome, outcome.persist or persisted, now, (None, None)


def fenced_after(event, group, post, fenced) -> frozenset:
    """The slots of the ids the coordinator has replaced after a step, from the model's groups
    (the catalogue's ``Checker._track_fencing``): a static instance whose member id changed; a
    failover forgets them all, and so does a deletion (the group is gone)."""
    if event == "Failover" or (event == "DeleteGroup" and post is None):
        return frozenset()
    out = set(fenced)
    if group is not None and post is not None:
        now = {m.group_instance_id: m.member_id for m in post.members if m.group_instance_id is not None}
        out |= {slot_of(m.member_id) for m in group.members
                if m.group_instance_id is not None and now.get(m.group_instance_id, m.member_id) != m.member_id}
    return frozenset(out)


def concrete_violations(event, group, persisted, outcome, persisted_after, now, sent, config,
                        fenced=frozenset()) -> set:
    """The properties the executable model's step violates, judged by the catalogue's own
    :class:`~properties.catalogue.Checker` where it can judge a single coordinator step, and by
    the server-side statements of :data:`SERVER_STATEMENTS` for the two properties the catalogue
    judges on consumers. *sent*: (request, where its answer goes); *fenced*: the slots whose ids
    the coordinator has replaced before the step."""
    from properties.catalogue import Checker

    found = set()
    post = outcome.group
    request, request_reply_to = sent
    log = []
    rid = 1
    if request is not None:
        log.append(("handled", 0, rid, 0, request, group, True, False))
    for note in outcome.notes:
        log.append(("server",) + note)
    for reply_to, response in outcome.replies:
        if request is not None and reply_to == request_reply_to:
            log.append(("reply", 0, rid, response.api, response.error, response))
    leader_after = 1 if event == "Failover" else 0
    prev = types.SimpleNamespace(group=group, persisted=persisted, brokers=object(), clients=(), leader=0, now=now,
                                 partitions=config.partitions)
    world = types.SimpleNamespace(group=post, persisted=persisted_after, brokers=object(), clients=(),
                                  leader=leader_after, now=now, partitions=config.partitions)
    # The checker stops at the first violation of a step: run it once per log entry so that every
    # violated property is seen. Every prefix keeps the request's answer (at its end), which a
    # property of the request judges with it (a static rejoin must be answered in the step).
    replies = [e for e in log if e[0] == "reply"]
    base = [e for e in log if e[0] != "reply"]
    for k in range(len(base) + 1):
        checker = Checker(config)
        checker.fenced_ids = {slot_id(i) for i in fenced}
        v = checker.check(prev, world, ("step",), base[:k] + replies)
        if v is not None:
            found.add(v.property)
    for note in outcome.notes:
        # The catalogue's checker judges commit-fencing for non-negative generations; its statement
        # also admits a negative generation only on an Empty group.
        if note[0] == "commit" and note[5] == Errors.NONE and note[1] < 0 and note[4] not in (None, grp.EMPTY):
            found.add("commit-fencing")
    for reply_to, response in outcome.replies:
        if response.api != "SyncGroup" or response.error != Errors.NONE:
            continue
        gen = post.generation
        if persisted_after is None or persisted_after.generation < gen:
            found.add("stable-member-generation-reached")
        # The answer carries the generation the request was sent in (the reply handle) and the
        # assignment the coordinator holds, and has written, for the member in this generation.
        slot = reply_to[1]
        member = next((m for m in post.members if slot_of(m.member_id) == slot), None)
        stored = None
        if persisted_after is not None and persisted_after.generation == gen:
            stored = next((m.assignment for m in persisted_after.members if slot_of(m.member_id) == slot), None)
        answered = tuple(response.assignment)
        if reply_to[2] != gen or member is None or answered != tuple(member.assignment) or (
                stored is not None and tuple(stored) != answered):
            found.add("assignment-matches-generation")
    return found


def replay(cex: dict):
    """Turn a counterexample into concrete model values and run the executable model on it.
    Returns (violated properties, the encoding's concrete run, the model's outcome)."""
    n, parts, broken = cex["n"], cex["parts"], cex["broken"]
    config = to_config(cex["cfg"], broken)
    group, persisted = to_groups(cex["pre"], n, parts)
    params = dict(cex["params"])
    fenced = frozenset(i for i in range(n) if cex["pre"][("fenced", i)])
    outcome, persisted_after, now, sent = model_step(cex["event"], group, persisted, params, config, n)
    violated = concrete_violations(cex["event"], group, persisted, outcome, persisted_after, now, sent, config, fenced)
    return violated, outcome, persisted_after


# ---------------------------------------------------------------------------------------------
# Agreement: the encoding and the executable model on the same concrete state and event
# ---------------------------------------------------------------------------------------------


def values_from_groups(group, persisted, n: int, parts: int, fenced=frozenset()) -> dict:
    """A concrete state of the encoding (Python values) from model.group values and the slots of
    the ids the coordinator has replaced (*fenced*). Fields the model does not hold (a free
    slot's, an unarmed deadline's) get fixed filler values."""
    vals = {k: (False if b else 0) for k, b in schema(n, parts)}
    vals.update(leader=-1, p_leader=-1, sync_gen=-1)
    for i in fenced:
        vals[("fenced", i)] = True
    if group is not None:
        vals.update(exists=True, state=STATE_CODE[group.state], gen=group.generation,
                    leader=slot_of(group.leader_id), nma=group.new_member_added,
                    join=group.join_deadline is not None, sync=group.sync_deadline is not None,
                    sync_gen=group.sync_generation, idr_set=group.initial_delay_remaining is not None,
                    idr=group.initial_delay_remaining or 0)
        if group.join_deadline is not None:
            vals["join_at"] = group.join_deadline.at
        if group.sync_deadline is not None:
            vals["sync_at"] = group.sync_deadline.at
        for m in group.members:
            i = slot_of(m.member_id)
            vals[("present", i)] = True
            vals[("rt", i)], vals[("st", i)] = m.rebalance_timeout_ms, m.session_timeout_ms
            vals[("proto", i)] = PROTOS.index(m.protocols)
            vals[("inst", i)] = instance_of(m.group_instance_id)
            for q in m.assignment:
                vals[("asg", i, q)] = True
            vals[("aj", i)] = m.awaiting_join is not None
            vals[("as", i)] = m.awaiting_sync is not None
            vals[("asgen", i)] = m.awaiting_sync[2] if m.awaiting_sync is not None else 0
            vals[("new", i)] = m.is_new
            vals[("hb", i)] = m.heartbeat is not None
            vals[("hb_at", i)] = m.heartbeat.at if m.heartbeat is not None else 0
        for member_id, d in group.pending_members:
            vals[("pending", slot_of(member_id))] = True
            vals[("pend_at", slot_of(member_id))] = d.at
        for member_id in group.pending_sync:
            vals[("ps", slot_of(member_id))] = True
    if persisted is not None:
        vals.update(p_exists=True, p_gen=persisted.generation, p_leader=slot_of(persisted.leader_id))
        for m in persisted.members:
            i = slot_of(m.member_id)
            vals[("p_present", i)] = True
            vals[("p_rt", i)], vals[("p_st", i)] = m.rebalance_timeout_ms, m.session_timeout_ms
            vals[("p_proto", i)] = PROTOS.index(m.protocols)
            vals[("p_inst", i)] = instance_of(m.group_instance_id)
            for q in m.assignment:
                vals[("p_asg", i, q)] = True
    return vals


def config_values(config: Config) -> dict:
    return {"v4": config.require_known_member_id, "gms": config.group_max_size,
            "min_st": config.min_session_timeout_ms, "max_st": config.max_session_timeout_ms,
            "nmjt": config.new_member_join_timeout_ms, "ird": config.initial_rebalance_delay_ms,
            "hbi": config.heartbeat_interval_ms, "nparts": config.partitions}


class Disagreement(AssertionError):
    """The encoding and the executable model part ways on a concrete step."""


def agree(event: str, group, persisted, params: dict, config: Config, n: int, parts: int, fenced=frozenset()):
    """Run *event* through the encoding (on concrete values) and through the executable model and
    raise :class:`Disagreement` unless they reach the same state, answer the same error and judge
    every property alike. *fenced*: the slots of the ids the coordinator has replaced. Returns the
    model's (group, persisted, fenced) after the step, or None when the step is outside the
    encoding's bound (no free slot for a new member id) or its assumptions."""
    vals = values_from_groups(group, persisted, n, parts, fenced)
    x = run(event, vals, config_values(config), dict(params), n, parts, config.broken, picks="lowest")
    if not all(a is True for a in x.assumptions):
        return None
    outcome, persisted_after, now, sent = model_step(event, group, persisted, params, config, n)
    mine = observe_values(x.s, n, parts)
    theirs = observe_groups(outcome.group, persisted_after, n, parts)
    fenced_now = fenced_after(event, group, outcome.group, fenced)
    mine["fenced"] = frozenset(i for i in range(n) if x.s[("fenced", i)])
    theirs["fenced"] = fenced_now
    if mine != theirs:
        keys = sorted(set(mine) | set(theirs), key=str)
        diff = {k: (mine.get(k), theirs.get(k)) for k in keys if mine.get(k) != theirs.get(k)}
        raise Disagreement(f"{event} {params}: encoding vs model differ on {diff}")
    if "error" in x.out:
        response = next(r for to, r in outcome.replies if to == ("req",))
        if x.out["error"] != int(response.error):
            raise Disagreement(f"{event} {params}: encoding answers {x.out['error']}, model {response.error}")
    judged = {name for name in PROPERTIES
              if property_holds(name, vals, x, event, config_values(config)) is not True}
    violated = concrete_violations(event, group, persisted, outcome, persisted_after, now, sent, config, fenced)
    if judged != violated:
        raise Disagreement(f"{event} {params}: encoding judges {sorted(judged)} violated, model {sorted(violated)}")
    return outcome.group, persisted_after, fenced_now


def z3_step(enc: Encoding, event: str, vals: dict, cfg: dict, params: dict) -> dict:
    """The z3 terms of *enc*'s transition evaluated by z3 itself (substitute and simplify) on
    concrete values: the check that the Python folding and z3 read the encoding alike."""
    p_sym, _, x = enc.steps[event]
    pairs = [(v, _val(v, vals[k])) for k, v in enc.pre.items()]
    pairs += [(v, _val(v, cfg[k])) for k, v in enc.cfg.items()]
    for k, v in p_sym.items():
        if k == "sa":
            pairs += [(b, z3.BoolVal(params["sa"][i][q])) for i, row in enumerate(v) for q, b in enumerate(row)]
        elif k != "strict" and k in params:
            pairs.append((v, _val(v, params[k])))
    out = {}
    for k, e in x.s.items():
        if isinstance(e, (bool, int)):
            out[k] = e
        else:
            r = z3.simplify(z3.substitute(e, *pairs))
            out[k] = z3.is_true(r) if z3.is_bool(r) else r.as_long()
    return out


def _val(var, value):
    return z3.BoolVal(bool(value)) if z3.is_bool(var) else z3.IntVal(int(value))
