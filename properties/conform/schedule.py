"""Schedules for virtual members: what each member asks the broker, in which order.

A schedule is a seeded list of :class:`Step`\\ s over ``members`` virtual members; the same seed gives
the same schedule in any process (``random.Random(seed)``, nothing else). A step names the member
and an action, with a variant that decides which ids and generation go in the request:

=============  ==========================================================================
``join``       JoinGroup with the member's id (``""`` before it has one). ``same``: its
               protocols as before; ``changed``: new metadata (a subscription change, which
               rebalances a Stable group); ``fresh``: forget the id and join as a new member
               (a restarted client); ``round``: every member in turn, from this one on, joins
               with ``same`` (what real clients do together when a rebalance starts). The
               corners: ``short-session`` / ``long-session`` (a session timeout below any
               minimum / above Kafka's maximum: INVALID_SESSION_TIMEOUT), ``other-type``
               (protocol type ``connect``), ``no-protocols``, ``foreign`` (only a protocol no
               other member offers: INCONSISTENT_GROUP_PROTOCOL unless the group is empty),
               ``unknown`` (a member id nobody has: UNKNOWN_MEMBER_ID).
``sync``       SyncGroup at the member's generation (``stale``: one below); a member that
               was told it leads assigns the partitions round-robin over the members it got;
               ``round``: every member in turn syncs; ``unknown``: a member id nobody has;
               ``wrong-name``: a protocol name that is not the group's (SyncGroup v5+:
               INCONSISTENT_GROUP_PROTOCOL; older versions do not carry it).
``heartbeat``  Heartbeat, ``current`` / ``stale`` generation / ``unknown`` member id.
``commit``     OffsetCommit of one partition, ``current`` / ``stale`` / ``unknown`` /
               ``simple`` (generation -1 and no member id, a consumer outside the group) /
               ``big-metadata`` (metadata over offset.metadata.max.bytes: OFFSET_METADATA_TOO_LARGE) /
               ``ahead`` (a generation the group has not reached, 1 before the member joined:
               ILLEGAL_GENERATION, also from a coordinator that has no such group).
``fetch``      OffsetFetch of every partition of the topic: the offsets committed so far.
``leave``      LeaveGroup with the member's id; the member forgets it. ``unknown``: an id
               nobody has (UNKNOWN_MEMBER_ID); the member keeps its own.
``describe``   DescribeGroups for the group, where the broker offers it (state, protocol, the
               members, and their metadata and assignments once Stable); skipped otherwise.
``disconnect`` close the member's connection (a parked JoinGroup or SyncGroup is cut); its
               next request opens a new one.
``wait``       (timers on only) send nothing for a while — ``short``: less than any timeout;
               ``long``: past the session and rebalance timeouts — and collect what the broker's
               timers answer meanwhile.
``pause``      (``--faults``, a broker groupcheck started) stop the broker's process (SIGSTOP)
               and resume it (SIGCONT): ``short`` 1 s, ``long`` (timers on) past the timeouts;
               what its timers answer on resuming is judged as after a ``wait``.
``cut``        (``--faults``) write the request the variant names (``join`` same, ``sync``,
               ``heartbeat`` and ``commit`` current, ``leave``) and close the connection at
               once: the broker may have read it or not, and either is judged right.
``restart``    (``--faults``, timers off, a launched broker with storage: Kafka, a ``--launch-cmd``
               with ``{dir}``) kill the broker (SIGKILL) and start it again on its folder: every
               connection is gone and the group is what the broker loads from what it persisted,
               judged as a ``failover``. Skipped for a broker that keeps nothing (in memory).
``failover``   (a cluster of brokers only, ``--brokers N``) kill the node that coordinates the
               group and carry on with the node that takes over: every member's connection is
               gone, and the group is what the new coordinator loads from its log. One per
               schedule, at a seeded place among the drawn steps (its member is always 0).
=============  ==========================================================================

With *static* members (``--static N``: members 0..N-1 carry a ``group.instance.id``, KIP-345)
every request of theirs names it, a ``join`` (``fresh``) of theirs is a restarted process taking
the instance's place, and a ``leave`` names the instance too.

Whether a step runs depends on what happened before: a member whose request is still parked at
the broker cannot send another one (Kafka mutes the channel), so such a step is skipped and the
trace says so (``disconnect`` always runs).
"""

from __future__ import annotations

import random
from typing import List, Optional, Tuple

import attrs

ACTIONS = ("join", "sync", "heartbeat", "commit", "fetch", "leave", "disconnect", "describe", "wait", "failover",
           "pause", "cut", "restart")

#: (action, variant, weight): the mix of a generated schedule.
MIX: Tuple[Tuple[str, Optional[str], int], ...] = (
    ("join", "same", 16), ("join", "changed", 4), ("join", "fresh", 5), ("join", "round", 8),
    ("sync", "current", 18), ("sync", "stale", 2), ("sync", "round", 8),
    ("heartbeat", "current", 11), ("heartbeat", "stale", 2), ("heartbeat", "unknown", 2),
    ("commit", "current", 7), ("commit", "stale", 2), ("commit", "unknown", 1), ("commit", "simple", 2),
    ("leave", None, 5),
    ("disconnect", None, 3),
    ("describe", None, 3),
    ("fetch", None, 3),
) + (
    # the corners: requests Kafka's coordinator refuses, each a decision of its own (see
    # properties/decisions.py for which one, and its source)
    ("join", "short-session", 1), ("join", "long-session", 1), ("join", "other-type", 1),
    ("join", "no-protocols", 1), ("join", "foreign", 1), ("join", "unknown", 1),
    ("sync", "unknown", 1), ("sync", "wrong-name", 1),
    ("commit", "big-metadata", 1), ("leave", "unknown", 1), ("commit", "ahead", 1),
)
#: What one seed in four (seed % 4 == 1) asks before any member joined: a coordinator asked about a
#: group it does not have (Heartbeat, SyncGroup and LeaveGroup: UNKNOWN_MEMBER_ID; an OffsetCommit
#: at generation 1: ILLEGAL_GENERATION — GroupCoordinator.handleHeartbeat / handleSyncGroup /
#: handleLeaveGroup / handleCommitOffsets, ``case None``)
BEFORE_GROUP: Tuple[Tuple[str, Optional[str]], ...] = (
    ("heartbeat", "unknown"), ("sync", "unknown"), ("leave", "unknown"), ("commit", "ahead"))
#: With timers on, schedules also wait: ``short`` (less than any timeout) or ``long`` (past the
#: session and rebalance timeouts, so the broker's timers fire during the wait).
TIMER_MIX: Tuple[Tuple[str, Optional[str], int], ...] = (("wait", "short", 4), ("wait", "long", 3))
#: With faults (``--faults``): the broker paused and resumed (``short``: 1 s; ``long``, timers on
#: only: past the session and rebalance timeouts), and a request whose connection is cut right
#: after it was written (the variant says which request: it may or may not have been read).
FAULT_MIX: Tuple[Tuple[str, Optional[str], int], ...] = (
    ("pause", "short", 3), ("cut", "join", 2), ("cut", "sync", 2), ("cut", "heartbeat", 1), ("cut", "commit", 1),
    ("cut", "leave", 1))
TIMER_FAULT_MIX: Tuple[Tuple[str, Optional[str], int], ...] = (("pause", "long", 2),)
#: With faults and timers off: the broker killed and started again on its storage (judged as a
#: failover, which is judged with timers off only: when the group is loaded again restarts its
#: session timers at a moment the checker does not see)
RESTART_MIX: Tuple[Tuple[str, Optional[str], int], ...] = (("restart", None, 2),)
VARIANTS = {action: tuple(v for a, v, _ in MIX + TIMER_MIX + FAULT_MIX + TIMER_FAULT_MIX + RESTART_MIX if a == action)
            for action in ACTIONS}
VARIANTS["failover"] = (None,)

#: Protocol lists a member may offer (most preferred first), and how often.
PROTOCOL_LISTS: Tuple[Tuple[Tuple[str, ...], int], ...] = (
    (("range",), 6), (("range", "roundrobin"), 3), (("roundrobin", "range"), 2), (("roundrobin",), 1),
)


@attrs.frozen
class Step:
    member: int
    action: str
    variant: Optional[str] = None

    def __attrs_post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown action {self.action!r}; known: {', '.join(ACTIONS)}")
        if self.variant not in VARIANTS[self.action]:
            raise ValueError(f"{self.action}: unknown variant {self.variant!r}; known: {VARIANTS[self.action]}")

    def describe(self) -> str:
        if self.action == "failover":
            return "failover (the coordinator's node killed)"
        if self.action == "restart":
            return "restart (the broker killed and started again on its storage)"
        if self.action == "cut":
            return f"m{self.member} {self.variant} (connection cut)"
        return f"m{self.member} {self.action}" + (f" ({self.variant})" if self.variant else "")

    def to_json(self) -> list:
        return [self.member, self.action, self.variant]

    @classmethod
    def from_json(cls, value) -> "Step":
        member, action, variant = value
        return cls(int(member), str(action), variant)


@attrs.frozen
class Schedule:
    seed: int
    members: int
    partitions: int
    protocols: Tuple[Tuple[str, ...], ...]  # per member
    steps: Tuple[Step, ...]
    static: int = 0  # members 0..static-1 have a group.instance.id

    def instance_id(self, member: int) -> Optional[str]:
        return f"conform-instance-{member}" if member < self.static else None

    def with_steps(self, steps) -> "Schedule":
        return attrs.evolve(self, steps=tuple(steps))

    def to_json(self) -> dict:
        out = {"seed": self.seed, "members": self.members, "partitions": self.partitions,
               "protocols": [list(p) for p in self.protocols], "steps": [s.to_json() for s in self.steps]}
        if self.static:
            out["static"] = self.static
        return out

    @classmethod
    def from_json(cls, value: dict) -> "Schedule":
        members = int(value["members"])
        protocols = tuple(tuple(str(n) for n in p) for p in value["protocols"])
        if len(protocols) != members:
            raise ValueError(f"protocols lists {len(protocols)} members, members is {members}")
        steps = tuple(Step.from_json(s) for s in value["steps"])
        for s in steps:
            if not 0 <= s.member < members:
                raise ValueError(f"step {s.describe()}: member {s.member} is not one of the {members} members")
        static = int(value.get("static", 0))
        if not 0 <= static <= members:
            raise ValueError(f"static is {static}, not between 0 and the {members} members")
        return cls(int(value["seed"]), members, int(value["partitions"]), protocols, steps, static)


def generate(seed: int, members: int = 3, steps: int = 24, partitions: int = 6, timers: bool = False,
             static: int = 0, failover: bool = False, faults: bool = False) -> Schedule:
    """The schedule of *seed*: every member joins first (in a random order; for one seed in four
    after a DescribeGroups of the group that does not exist yet, for another one in four after one
    or two requests of :data:`BEFORE_GROUP` to it); for even seeds the
    group then forms (two join rounds, a sync round); then *steps* steps drawn from :data:`MIX`
    (and :data:`TIMER_MIX` when *timers*), each for a random member. *static*: the first that many
    members are static (the draws are the same as without). *failover*: one ``failover`` step among
    the drawn ones, at a place drawn from a second generator (so the other draws stay the same).
    *faults*: ``pause`` and ``cut`` steps are drawn too (:data:`FAULT_MIX`), and ``restart`` ones
    with timers off (:data:`RESTART_MIX`)."""
    rng = random.Random(seed)
    lists = [p for p, _ in PROTOCOL_LISTS]
    weights = [w for _, w in PROTOCOL_LISTS]
    protocols = tuple(tuple(rng.choices(lists, weights)[0]) for _ in range(members))
    order = list(range(members))
    rng.shuffle(order)
    out: List[Step] = [Step(m, "join", "same") for m in order]
    if seed % 4 == 3:  # one in four asks about the group before it exists (Dead; v6+: GROUP_ID_NOT_FOUND)
        out.insert(0, Step(order[0], "describe"))
    elif seed % 4 == 1:  # and one in four sends it a request of a member before there is a group
        before = random.Random(seed * 7919 + 2)  # its own generator: the other draws stay the same
        out[:0] = [Step(before.randrange(members), *before.choice(BEFORE_GROUP)) for _ in range(before.randint(1, 2))]
    if seed % 2 == 0:
        # even seeds: two join rounds and a sync round first, so the group forms whole (with an
        # initial delay of 0 the first member to rejoin completes a generation of its own and the
        # others join the next) and is Stable before the random part; odd seeds go random at once,
        # which reaches a broker's early divergences that a formed group would have gone past
        out += [Step(order[0], "join", "round"), Step(order[0], "join", "round"), Step(order[-1], "sync", "round")]
    table = MIX + (TIMER_MIX if timers else ()) + (FAULT_MIX if faults else ()) + (
        (TIMER_FAULT_MIX if timers else RESTART_MIX) if faults else ())
    mix = [(a, v) for a, v, _ in table]
    mix_weights = [w for _, _, w in table]
    for _ in range(steps):
        action, variant = rng.choices(mix, mix_weights)[0]
        out.append(Step(rng.randrange(members), action, variant))
    if failover:
        drawn = len(out) - steps
        out.insert(drawn + random.Random(seed * 7919 + 1).randrange(steps + 1), Step(0, "failover"))
    return Schedule(seed, members, partitions, protocols, tuple(out), min(static, members))
