"""Schedules for virtual members: what each member asks the broker, in which order.

A schedule is a seeded list of :class:`Step`\\ s over ``members`` virtual members; the same seed gives
the same schedule in any process (``random.Random(seed)``, nothing else). A step names the member
and an action, with a variant that decides which ids and generation go in the request:

=============  ==========================================================================
``join``       JoinGroup with the member's id (``""`` before it has one). ``same``: its
               protocols as before; ``changed``: new metadata (a subscription change, which
               rebalances a Stable group); ``fresh``: forget the id and join as a new member
               (a restarted client); ``round``: every member in turn, from this one on, joins
               with ``same`` (what real clients do together when a rebalance starts).
``sync``       SyncGroup at the member's generation (``stale``: one below); a member that
               was told it leads assigns the partitions round-robin over the members it got;
               ``round``: every member in turn syncs.
``heartbeat``  Heartbeat, ``current`` / ``stale`` generation / ``unknown`` member id.
``commit``     OffsetCommit of one partition, ``current`` / ``stale`` / ``unknown`` /
               ``simple`` (generation -1 and no member id, a consumer outside the group).
``fetch``      OffsetFetch of every partition of the topic: the offsets committed so far.
``leave``      LeaveGroup with the member's id; the member forgets it.
``describe``   DescribeGroups for the group, where the broker offers it (state, protocol, the
               members, and their metadata and assignments once Stable); skipped otherwise.
``disconnect`` close the member's connection (a parked JoinGroup or SyncGroup is cut); its
               next request opens a new one.
``wait``       (timers on only) send nothing for a while — ``short``: less than any timeout;
               ``long``: past the session and rebalance timeouts — and collect what the broker's
               timers answer meanwhile.
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

ACTIONS = ("join", "sync", "heartbeat", "commit", "fetch", "leave", "disconnect", "describe", "wait", "failover")

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
)
#: With timers on, schedules also wait: ``short`` (less than any timeout) or ``long`` (past the
#: session and rebalance timeouts, so the broker's timers fire during the wait).
TIMER_MIX: Tuple[Tuple[str, Optional[str], int], ...] = (("wait", "short", 4), ("wait", "long", 3))
VARIANTS = {action: tuple(v for a, v, _ in MIX + TIMER_MIX if a == action) for action in ACTIONS}
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
             static: int = 0, failover: bool = False) -> Schedule:
    """The schedule of *seed*: every member joins first (in a random order); for even seeds the
    group then forms (two join rounds, a sync round); then *steps* steps drawn from :data:`MIX`
    (and :data:`TIMER_MIX` when *timers*), each for a random member. *static*: the first that many
    members are static (the draws are the same as without). *failover*: one ``failover`` step among
    the drawn ones, at a place drawn from a second generator (so the other draws stay the same)."""
    rng = random.Random(seed)
    lists = [p for p, _ in PROTOCOL_LISTS]
    weights = [w for _, w in PROTOCOL_LISTS]
    protocols = tuple(tuple(rng.choices(lists, weights)[0]) for _ in range(members))
    order = list(range(members))
    rng.shuffle(order)
    out: List[Step] = [Step(m, "join", "same") for m in order]
    if seed % 2 == 0:
        # even seeds: two join rounds and a sync round first, so the group forms whole (with an
        # initial delay of 0 the first member to rejoin completes a generation of its own and the
        # others join the next) and is Stable before the random part; odd seeds go random at once,
        # which reaches a broker's early divergences that a formed group would have gone past
        out += [Step(order[0], "join", "round"), Step(order[0], "join", "round"), Step(order[-1], "sync", "round")]
    table = MIX + (TIMER_MIX if timers else ())
    mix = [(a, v) for a, v, _ in table]
    mix_weights = [w for _, _, w in table]
    for _ in range(steps):
        action, variant = rng.choices(mix, mix_weights)[0]
        out.append(Step(rng.randrange(members), action, variant))
    if failover:
        drawn = len(out) - steps
        out.insert(drawn + random.Random(seed * 7919 + 1).randrange(steps + 1), Step(0, "failover"))
    return Schedule(seed, members, partitions, protocols, tuple(out), min(static, members))
