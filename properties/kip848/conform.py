"""Judging a broker's KIP-848 coordinator over TCP: ``groupcheck conform broker --protocol consumer``.

Virtual consumers (one connection each) send ConsumerGroupHeartbeat v1 requests that a seeded
schedule of actions chooses; before each answer arrives, the model's coordinator
(:func:`model.kip848.coordinator.heartbeat`, over the same group) says what it must be: the error,
and on success the member epoch, the heartbeat interval and the assignment (or none). The virtual
consumers then learn from the broker's answer, as a client would: an epoch, a target; fencing
errors make them rejoin at epoch 0; an acknowledgement reports the target as owned.

Each schedule has a group of its own, so a broker serves any number of schedules. Its timers
stay out of the judgement: a schedule lasts a few hundred milliseconds, against a session
timeout of 45 s and a rebalance timeout of 30 s (the model's clock stays at 0; a divergence a
timer could explain would be one of those, and none can fire). Divergences are results: the
first one ends its schedule, with the request, the answer the model expected and the broker's.

Actions (each builds its request from what the virtual consumer knows):

``join``      epoch 0, the full request (rebalance timeout, subscription, no owned partitions)
``beat``      its epoch, nothing changed (every optional field null)
``ack``       reconciles: reports its target as owned (TopicPartitions)
``full``      its epoch and every field, as after an error (resetHeartbeatState)
``previous``  its previous epoch with the partitions it owns (an answer was lost)
``ahead``     its epoch + 1 (a broken client; FENCED_MEMBER_EPOCH)
``leave``     epoch -1
``stranger``  a member id the group never saw, at epoch 1 (UNKNOWN_MEMBER_ID)
``bad_join``  epoch 0 with owned partitions (INVALID_REQUEST)
``commit``    OffsetCommit v9 of the partitions it owns (or partition 0), at its epoch
``stale_commit``  the same at its epoch - 1 (STALE_MEMBER_EPOCH)

With ``--static N`` the first N virtual consumers have an instance id (``i0``, ``i1``, ...), sent
in every heartbeat, and four more actions are drawn (a dynamic consumer sends ``leave``,
``join`` or ``beat``, and ``stranger`` for them):

``static_leave``  epoch -2: the member stays, at epoch -2 with its assignment
``restart``   a rolling restart: a consumer in the group leaves at -2 first; one that has left
              starts again as a new process (a new member id) and joins with its instance id,
              taking the departed member's place and assignment
``rejoin``    epoch 0 with its own member id while the coordinator still has it (its join's answer
              was lost, or it was fenced): Kafka 4.1 answers UNRELEASED_INSTANCE_ID (the known
              hazard, apache/kafka#23542); the consumer then leaves at -2 and joins again
``impostor``  a heartbeat at its epoch from another member id with its instance id (FENCED_INSTANCE_ID)

With ``--classic N`` the last N virtual consumers speak the classic protocol inside the consumer
group (Kafka 4.x's online migration; the model's :mod:`model.kip848.classic`), as the Java
consumer's cooperative ConsumerCoordinator would (JoinGroup v9, SyncGroup v5, Heartbeat v4,
LeaveGroup v5):

``cjoin``     JoinGroup with its owned partitions (a new member first gets MEMBER_ID_REQUIRED and
              the member id to join with); then ``csync`` SyncGroup at the generation it was given
``cbeat``     Heartbeat: REBALANCE_IN_PROGRESS tells it to rejoin
``cleave``    LeaveGroup
``cstale``    a Heartbeat at a generation before its own (ILLEGAL_GENERATION)
``cbad``      JoinGroup with a session timeout of 0 ms, below group.min.session.timeout.ms (INVALID_SESSION_TIMEOUT)
``cforeign``  JoinGroup naming only a protocol the other classic members do not support
              (INCONSISTENT_GROUP_PROTOCOL when there are some)

A consumer-protocol member joins first — unless ``--upgrade``: then the first classic consumer
forms a classic group alone (``cform``: MEMBER_ID_REQUIRED, generation 1 as the leader, its
SyncGroup with every partition), and the consumer-protocol join that follows converts it
(:func:`model.kip848.classic.upgrade`). A schedule ends where the group would change type: a
JoinGroup to a group without members (Kafka makes it a classic group) is not sent, and the answer
to a request after which only classic members are left (Kafka converts the group to a classic one,
``group.consumer.migration.policy=bidirectional``) is the last one judged.
"""

from __future__ import annotations

import random
import time
import uuid
from typing import List, Optional, Tuple

import attrs

from model.kip848 import classic
from model.kip848 import coordinator as coord
from properties.kip848.shapes import (CLASSIC_VERSIONS, classic_from_wire, classic_to_wire, error_name, from_response,
                                      to_request)
from model.kip848.config import Config
from properties.live.exchange import Unreachable, connect

API = "ConsumerGroupHeartbeat"
VERSION = 1
TOPIC = "kip848"
REBALANCE_TIMEOUT_MS = 30_000
ACTIONS = ("join", "beat", "ack", "full", "previous", "ahead", "leave", "stranger", "bad_join", "commit", "stale_commit")
_WEIGHTS = (3, 4, 5, 1, 1, 0.3, 0.5, 0.2, 0.2, 1, 0.3)
COMMIT_VERSION = 9
COMMITS = ("commit", "stale_commit")
STATIC_ACTIONS = ("static_leave", "restart", "rejoin", "impostor")
_STATIC_WEIGHTS = (0.6, 0.6, 0.4, 0.2)
CLASSIC_ACTIONS = ("cjoin", "csync", "cbeat", "cleave", "cstale", "cbad", "cforeign")
_CLASSIC_WEIGHTS = (2, 2, 5, 0.4, 0.3, 0.2, 0.2)
CLASSIC_PROTOCOLS = ("cooperative-sticky", "range")  # the Java consumer's default assignors, in its order
SESSION_TIMEOUT_MS = 45_000  # the classic consumer's session.timeout.ms default


@attrs.frozen
class Divergence:
    seed: int
    step: int
    member: int
    action: str
    request: str
    expected: str
    observed: str

    def describe(self) -> str:
        return (f"seed {self.seed} step {self.step}: consumer {self.member} {self.action} {self.request}: "
                f"expected {self.expected}, the broker answered {self.observed}")


@attrs.frozen
class Result:
    seed: int
    steps: int  # requests judged
    divergence: Optional[Divergence]
    coverage: dict = attrs.field(factory=dict)  # what the judged answers covered -> times


def _covered(coverage: dict, action: str, expected: coord.Response, group: coord.Group) -> None:
    """Tally an agreed answer: the action and its outcome, and the member states the group holds."""
    key = f"{action} -> {expected.error}"
    coverage[key] = coverage.get(key, 0) + 1
    for m in group.members:
        if m.state != "STABLE":
            coverage[f"member {m.state}"] = coverage.get(f"member {m.state}", 0) + 1


def schedule(seed: int, consumers: int, length: int, static: int = 0, classic_members: int = 0,
             upgrade: bool = False) -> List[Tuple[int, str]]:
    """(consumer, action) pairs: every consumer joins first, then actions by weight (with *static*,
    the static members' actions too; the last *classic_members* consumers draw the classic
    protocol's actions, and a consumer-protocol member joins first — with *upgrade*, the first
    classic member forms a classic group first, which the consumer-protocol join upgrades)."""
    rng = random.Random(seed)
    first_classic = consumers - classic_members
    steps = [(c, "join" if c < first_classic else "cjoin") for c in range(consumers)]
    rng.shuffle(steps)
    if classic_members:
        lead = next(i for i, (c, _) in enumerate(steps) if c < first_classic)
        steps.insert(0, steps.pop(lead))
    if upgrade:
        steps.remove((first_classic, "cjoin"))
        steps.insert(0, (first_classic, "cform"))
    actions, weights = (ACTIONS + STATIC_ACTIONS, _WEIGHTS + _STATIC_WEIGHTS) if static else (ACTIONS, _WEIGHTS)
    while len(steps) < length:
        c = rng.randrange(consumers)
        if c >= first_classic:
            steps.append((c, rng.choices(CLASSIC_ACTIONS, _CLASSIC_WEIGHTS)[0]))
        else:
            steps.append((c, rng.choices(actions, weights)[0]))
    return steps


class _Consumer:
    """What a virtual consumer knows: its id, epoch and previous epoch, target, owned partitions.
    A join the broker fences (the member id is still a member at a later epoch, which stays so
    until its session times out) is followed by a restart: a new process, a new member id."""

    def __init__(self, index: int, seed: int, instance_id: str | None = None):
        self.index, self.seed, self.incarnation = index, seed, 0
        self.instance_id = instance_id
        self.member_id = self._id()
        self.epoch = 0
        self.previous = 0
        self.target: frozenset | None = None
        self.owned: frozenset = frozenset()
        self.left_static = False  # its last leave was at -2: a restart takes its place
        self.unreleased = False  # its join was answered UNRELEASED_INSTANCE_ID
        self.restarting = False  # it left at -2 for a rolling restart: the new process joins next

    def request(self, action: str):
        """The request *action* sends (a heartbeat Request, or a Commit), from what it knows."""
        request = self._request(action)
        if self.instance_id is not None and isinstance(request, coord.Request) and action not in ("stranger",):
            request = request._replace(instance_id=self.instance_id)
        return request

    def _request(self, action: str):
        if action == "restart":  # a new process with a new member id
            self.incarnation += 1
            self.member_id = self._id()
            self.left_static = False
            action = "join"
        if action in ("join", "rejoin"):
            self.owned, self.target = frozenset(), None
            return coord.Request(self.member_id, 0, REBALANCE_TIMEOUT_MS, (TOPIC,), frozenset())
        if action == "static_leave":
            return coord.Request(self.member_id, coord.STATIC_LEAVE_EPOCH)
        if action == "impostor":
            return coord.Request(str(uuid.UUID(int=(self.index + 1) << 96 | 0xbad << 64 | self.seed)), self.epoch)
        if action == "ack":
            if self.target is not None:
                self.owned = self.target
            return coord.Request(self.member_id, self.epoch, owned=self.owned)
        if action == "full":
            return coord.Request(self.member_id, self.epoch, REBALANCE_TIMEOUT_MS, (TOPIC,), self.owned)
        if action == "previous":
            return coord.Request(self.member_id, self.previous, owned=self.owned)
        if action == "ahead":
            return coord.Request(self.member_id, self.epoch + 1)
        if action == "leave":
            return coord.Request(self.member_id, -1)
        if action == "stranger":
            return coord.Request(str(uuid.UUID(int=0xdead)), 1)
        if action == "bad_join":
            return coord.Request(self.member_id, 0, REBALANCE_TIMEOUT_MS, (TOPIC,), frozenset({0}))
        if action in COMMITS:
            return coord.Commit(self.member_id, self.epoch - (action == "stale_commit"), self.owned or frozenset({0}))
        return coord.Request(self.member_id, self.epoch)  # beat

    def _id(self) -> str:
        return str(uuid.UUID(int=(self.index + 1) << 96 | self.incarnation << 64 | self.seed))

    def next_action(self, action: str) -> str:
        """The action a client would take: a consumer out of the group (fenced, or never joined,
        or left) joins before anything else; the broken requests are sent as drawn."""
        if self.instance_id is None and action in STATIC_ACTIONS:
            action = {"static_leave": "leave", "restart": "join", "rejoin": "beat", "impostor": "stranger"}[action]
        if self.unreleased:  # it gives its instance id up, then joins again
            return "static_leave"
        if self.instance_id is not None and action == "join" and self.epoch > 0:
            return "beat"  # a static member's join while in the group is drawn as "rejoin"
        if self.restarting and self.left_static:
            action = "restart"
        self.restarting = False
        if action == "restart" and not self.left_static:
            if self.epoch > 0:
                self.restarting = True
                return "static_leave"
            return "join"
        if self.epoch == 0 and action not in ("stranger", "bad_join", "ahead", "commit", "restart"):
            return "join"
        if action == "previous" and self.previous <= 0:
            return "beat"
        return action

    def learn(self, action: str, response: coord.Response) -> None:
        if action in ("stranger", "bad_join", "impostor") + COMMITS:
            return
        if action == "static_leave":
            self.unreleased = False
            self.epoch, self.previous, self.owned, self.target = 0, 0, frozenset(), None
            self.left_static = response.error == coord.NONE
            return
        if response.error == coord.UNRELEASED_INSTANCE_ID:
            self.unreleased = True
            return
        if response.error == coord.NONE:
            self.left_static = False  # back in the group
            if response.epoch >= 0:
                if response.epoch != self.epoch:
                    self.previous = self.epoch
                self.epoch = response.epoch
            if response.assignment is not None:
                self.target = response.assignment
            if action == "leave":
                self.epoch, self.previous, self.owned, self.target = 0, 0, frozenset(), None
        elif response.error in (coord.FENCED_MEMBER_EPOCH, coord.UNKNOWN_MEMBER_ID):
            self.epoch, self.previous, self.owned, self.target = 0, 0, frozenset(), None
            if action in ("join", "restart") and self.instance_id is None:
                self.incarnation += 1
                self.member_id = self._id()


class _ClassicConsumer:
    """What a virtual consumer of the classic protocol knows, as the Java consumer's cooperative
    ConsumerCoordinator keeps it: its member id (none before the coordinator gives one), its
    generation, the partitions it owns, whether it waits for its SyncGroup or must rejoin."""

    def __init__(self, index: int):
        self.index = index
        self.member_id = ""
        self.generation = -1
        self.protocol_name: str | None = None
        self.owned: frozenset = frozenset()
        self.syncing = False  # joined: its SyncGroup comes next
        self.rejoin = False  # a REBALANCE_IN_PROGRESS, or partitions it revoked: it joins again

    def next_action(self, action: str) -> str:
        """A consumer out of the group joins (the broken joins go as drawn); after a JoinGroup the
        SyncGroup; a consumer told to rejoin rejoins; otherwise as drawn."""
        if action in ("cbad", "cforeign"):
            return action
        if self.generation < 0:
            return "cjoin"
        if self.syncing and action not in ("cleave", "cstale"):
            return "csync"
        if self.rejoin and action in ("cbeat", "csync"):
            return "cjoin"
        return action

    def request(self, action: str):
        if action == "cjoin":
            return classic.Join(self.member_id, CLASSIC_PROTOCOLS, (TOPIC,), self.owned, SESSION_TIMEOUT_MS,
                                REBALANCE_TIMEOUT_MS)
        if action == "cbad":
            # 0 ms: below group.min.session.timeout.ms however a broker sets it (conformance runs lower it to 1000)
            return classic.Join(self.member_id, CLASSIC_PROTOCOLS, (TOPIC,), self.owned, 0, REBALANCE_TIMEOUT_MS)
        if action == "cforeign":
            return classic.Join(self.member_id or str(uuid.UUID(int=0xf0 << 64 | self.index)), ("roundrobin",), (TOPIC,),
                                self.owned, SESSION_TIMEOUT_MS, REBALANCE_TIMEOUT_MS)
        if action == "csync":
            return classic.Sync(self.member_id, self.generation, self.protocol_name)
        if action == "cstale":
            return classic.Beat(self.member_id, self.generation - 1)
        if action == "cleave":
            return classic.Leave(self.member_id)
        return classic.Beat(self.member_id, self.generation)  # cbeat

    def learn(self, action: str, answer: classic.Answer) -> None:
        error = answer.error
        if action in ("cbad", "cstale") or (action == "cforeign" and error != classic.NONE):
            return  # a broken request's answer tells a client nothing about its membership
        if action in ("cjoin", "cforeign"):
            if error == classic.MEMBER_ID_REQUIRED:
                self.member_id = answer.member_id or ""
            elif error == classic.NONE:
                self.member_id, self.generation, self.protocol_name = answer.member_id, answer.generation, answer.protocol_name
                self.syncing, self.rejoin = True, False
            elif error in (classic.UNKNOWN_MEMBER_ID, classic.ILLEGAL_GENERATION):
                self._reset(keep_member_id=error == classic.ILLEGAL_GENERATION)
            return
        if action == "cleave":
            self._reset()
            return
        if error == classic.NONE and action == "csync":
            # ConsumerCoordinator.onJoinComplete (cooperative): revoke what is no longer assigned,
            # then rejoin when anything was revoked
            assigned = answer.assignment or frozenset()
            revoked = self.owned - assigned
            self.owned, self.syncing, self.rejoin = assigned, False, bool(revoked)
        elif error == classic.REBALANCE_IN_PROGRESS:
            self.rejoin = True
        elif error in (classic.UNKNOWN_MEMBER_ID, classic.ILLEGAL_GENERATION):
            self._reset(keep_member_id=error == classic.ILLEGAL_GENERATION)

    def _reset(self, keep_member_id: bool = False) -> None:
        """resetStateOnResponseError: the generation gone (its partitions lost at the next join,
        ConsumerCoordinator.onJoinPrepare); the member id kept after ILLEGAL_GENERATION ("the
        member ID is still valid"), dropped otherwise."""
        self.member_id = self.member_id if keep_member_id else ""
        self.generation, self.protocol_name = -1, None
        self.owned, self.syncing, self.rejoin = frozenset(), False, False


def commit_to_wire(request: coord.Commit, group_id: str):
    """OffsetCommit v9 (impl.protocol): GenerationIdOrMemberEpoch carries the member epoch."""
    from impl import protocol as P

    return P.OffsetCommitRequestData(group_id=group_id, generation_id=request.epoch, member_id=request.member_id,
                                     topics=[P.OffsetCommitRequestTopic(TOPIC, [P.OffsetCommitRequestPartition(p, 1)
                                                                               for p in sorted(request.partitions)])])


def commit_error(body) -> str:
    """The error of an OffsetCommit answer (every partition carries the group's; the first one's)."""
    codes = [p.error_code for t in body.topics for p in t.partitions]
    return coord.NONE if not codes else error_name(codes[0])


def _round_trip(sock, request, group_id: str, topic_id, correlation_id: int, shape: str = "java",
                assignor: str = "range"):
    """Write *request* (a heartbeat, a commit or a classic request) on *sock* and read its answer:
    the decoded response, or the codec's WireError. OSError or EOFError when the broker hangs up."""
    from impl.wire.codec import decode_response, encode_request
    from properties.live.exchange import read_frame

    if isinstance(request, coord.Commit):
        wire, api, version = commit_to_wire(request, group_id), "OffsetCommit", COMMIT_VERSION
    elif isinstance(request, coord.Request):
        wire = to_request(request, group_id, topic_id, assignor if request.epoch == 0 else None, shape)
        api, version = API, VERSION
    else:
        wire, api = classic_to_wire(request, group_id, TOPIC)
        version = CLASSIC_VERSIONS[api]
    sock.sendall(encode_request(wire, version, correlation_id, "groupcheck"))
    return decode_response(api, version, read_frame(sock))


def _judged(expected, observed) -> bool:
    """Equal where the protocol fixes the answer: the error always; on success the epoch, the
    interval and the assignment (absent where the model sends none); for a classic request the
    member id (unless the model leaves it open), generation, protocol name and assignment."""
    if expected.error != observed.error:
        return False
    if isinstance(expected, classic.Answer):
        if expected.error != coord.NONE:
            return True
        return (expected.member_id in (None, observed.member_id) and expected.generation == observed.generation
                and expected.protocol_name == observed.protocol_name and expected.assignment == observed.assignment)
    if expected.error != coord.NONE:
        return True
    return (expected.epoch, expected.interval_ms, expected.assignment) == (observed.epoch, observed.interval_ms,
                                                                          observed.assignment)


_CLASSIC_STEPS = {classic.Join: classic.join, classic.Sync: classic.sync, classic.Beat: classic.beat,
                  classic.Leave: classic.leave}
_CLASSIC_APIS = {classic.Join: "JoinGroup", classic.Sync: "SyncGroup", classic.Beat: "Heartbeat",
                 classic.Leave: "LeaveGroup"}


def _expect(group: coord.Group, request, config):
    """The model's group after *request* and the answer it must get (None: the group would
    change type before it, so it is not sent), and the step's log."""
    if isinstance(request, coord.Commit):
        return group, coord.Response(coord.commit(group, request, config)[0]), []
    if isinstance(request, coord.Request):
        return coord.heartbeat(group, request, 0, config)
    return _CLASSIC_STEPS[type(request)](group, request, 0, config)


def _observed(request, decoded):
    """The broker's answer in the model's terms, and the topic id it names (or None)."""
    if isinstance(request, coord.Commit):
        return coord.Response(commit_error(decoded.body)), None
    if isinstance(request, coord.Request):
        return from_response(decoded.body)
    return classic_from_wire(_CLASSIC_APIS[type(request)], decoded.body, TOPIC), None


def _form_classic_group(sock, consumer: "_ClassicConsumer", group_id: str, partitions: int, correlation_id: int):
    """``cform``: the lone classic consumer forms a classic group, as the classic protocol has it
    for a new group (classicGroupJoinToClassicGroup: MEMBER_ID_REQUIRED, then generation 1 with the
    member as the leader and the only member; classicGroupSyncToClassicGroup: the leader's
    assignment back — every partition). Returns (the classic group's member for
    :func:`model.kip848.classic.upgrade`, None) or (None, (request, expected, observed)) where the
    broker answered otherwise."""
    from impl import protocol as P
    from impl.wire.codec import decode_response, encode_request
    from properties.live.exchange import read_frame

    def call(wire, api):
        version = CLASSIC_VERSIONS[api]
        sock.sendall(encode_request(wire, version, correlation_id, "groupcheck"))
        return getattr(decode_response(api, version, read_frame(sock)), "body", None)

    join = classic.Join("", CLASSIC_PROTOCOLS, (TOPIC,), frozenset(), SESSION_TIMEOUT_MS, REBALANCE_TIMEOUT_MS)
    wire, _ = classic_to_wire(join, group_id, TOPIC)
    body = call(wire, "JoinGroup")
    if body is None or body.error_code != 79 or not body.member_id:  # MEMBER_ID_REQUIRED
        return None, (_show(join), "MEMBER_ID_REQUIRED with a member id", "undecodable" if body is None else
                      f"{error_name(body.error_code)} member id {body.member_id!r}")
    member_id = body.member_id
    wire, _ = classic_to_wire(join._replace(member_id=member_id), group_id, TOPIC)
    body = call(wire, "JoinGroup")
    expected = f"NONE generation 1, leader {member_id}, members [{member_id}], protocol {CLASSIC_PROTOCOLS[0]}"
    if (body is None or body.error_code != 0 or body.generation_id != 1 or body.leader != member_id
            or [m.member_id for m in body.members] != [member_id] or body.protocol_name != CLASSIC_PROTOCOLS[0]):
        return None, (_show(join._replace(member_id=member_id)), expected, "undecodable" if body is None else
                      f"{error_name(body.error_code)} generation {body.generation_id}, leader {body.leader}, "
                      f"members {[m.member_id for m in body.members]}, protocol {body.protocol_name}")
    everything = frozenset(range(partitions))
    assignment = P.Assignment([P.TopicPartition(TOPIC, p) for p in sorted(everything)])
    body = call(P.SyncGroupRequestData(group_id=group_id, generation_id=1, member_id=member_id, protocol_type="consumer",
                                       protocol_name=CLASSIC_PROTOCOLS[0],
                                       assignments=[P.SyncGroupRequestAssignment(member_id, assignment)]), "SyncGroup")
    answer = None if body is None else classic_from_wire("SyncGroup", body, TOPIC)
    if answer is None or answer.error != classic.NONE or answer.assignment != everything:
        return None, (f"(SyncGroup v{CLASSIC_VERSIONS['SyncGroup']} as the leader, assigning {sorted(everything)})",
                      f"NONE assignment {sorted(everything)}", "undecodable" if answer is None else _show(answer))
    consumer.member_id, consumer.generation, consumer.protocol_name = member_id, 1, CLASSIC_PROTOCOLS[0]
    consumer.owned, consumer.syncing, consumer.rejoin = everything, False, False
    return classic.ClassicGroupMember(member_id, CLASSIC_PROTOCOLS, (TOPIC,), everything, SESSION_TIMEOUT_MS,
                                      REBALANCE_TIMEOUT_MS), None


def group_view(group: coord.Group) -> tuple:
    """What ConsumerGroupDescribe shows of *group*, as the model has it: (group epoch, assignment
    epoch, ((member id, member epoch, assigned partitions, target partitions), ...) by member id)."""
    return (group.epoch, group.assignment_epoch,
            tuple((m.member_id, m.epoch, tuple(sorted(m.assigned)), tuple(sorted(group.target_of(m.member_id))))
                  for m in sorted(group.members)))


def described_view(address: Tuple[str, int], group_id: str, timeout_s: float) -> tuple | str:
    """The broker's ConsumerGroupDescribe of *group_id* in :func:`group_view`'s shape, or what went
    wrong (a string)."""
    from properties.live.exchange import describe_consumer_group

    try:
        error, described = describe_consumer_group(address, group_id, timeout_s)
    except (OSError, EOFError) as e:
        return f"no answer to ConsumerGroupDescribe: {e}"
    if error:
        return f"ConsumerGroupDescribe answered {error_name(error)}"

    def partitions(assignment) -> tuple:
        return tuple(sorted(p for t in assignment.topic_partitions for p in t.partitions))

    return (described.group_epoch, described.assignment_epoch,
            tuple(sorted((m.member_id, m.member_epoch, partitions(m.assignment), partitions(m.target_assignment))
                         for m in described.members)))


def _show_view(view) -> str:
    if isinstance(view, str):
        return view
    epoch, assignment_epoch, members = view
    return (f"group epoch {epoch}, assignment epoch {assignment_epoch}, members "
            + "; ".join(f"{mid} epoch {e} assigned {list(a)} target {list(t)}" for mid, e, a, t in members))


def run_schedule(address: Tuple[str, int], seed: int, consumers: int = 3, length: int = 40, partitions: int = 4,
                 heartbeat_interval_ms: int = 5000, timeout_s: float = 10.0, broken=frozenset(),
                 static: int = 0, classic_members: int = 0, upgrade: bool = False, shape: str = "java",
                 assignor: str = "range", describe: bool = False) -> Result:
    """Play seed *seed*'s schedule against the broker at *address* (its group coordinator for the
    schedule's group, a topic TOPIC of *partitions* partitions existing), judging every answer
    (by the model with the *broken* variants, to show the judge's teeth); the first *static*
    consumers are static members, the last *classic_members* speak the classic protocol (with
    *upgrade*, the first of them forms a classic group, which the first join of the consumer
    protocol upgrades to a consumer group: judged from there on); the heartbeats are shaped as the
    client library *shape* sends them (:data:`properties.kip848.shapes.SHAPES`); every join asks for
    the server assignor *assignor* (``range`` or ``uniform``), which the model runs too. With
    *describe*, after every agreed answer the group is read back with ConsumerGroupDescribe and must
    be the model's: its epochs, and every member's epoch, assigned partitions and target — the
    targets of members no answer has shown included."""
    config = Config(clients=consumers, partitions=partitions, heartbeat_interval_ms=heartbeat_interval_ms,
                    session_timeout_ms=45_000, broken=frozenset(broken), assignor=assignor)
    coverage: dict = {}
    group_id = f"groupcheck-kip848-{seed}-{uuid.uuid4().hex[:8]}"
    first_classic = consumers - classic_members
    members = [_Consumer(c, seed, f"i{c}" if c < static else None) if c < first_classic else _ClassicConsumer(c)
               for c in range(consumers)]
    group = coord.new_group(partitions)
    topic_id = None
    socks = [connect(address, timeout_s) for _ in range(consumers)]
    classic_group = None  # the classic group's member, until the upgrade
    try:
        for i, (c, drawn) in enumerate(schedule(seed, consumers, length, static, classic_members, upgrade)):
            consumer = members[c]
            if drawn == "cform":
                try:
                    classic_group, wrong = _form_classic_group(socks[c], consumer, group_id, partitions, i + 1)
                except (OSError, EOFError) as e:
                    wrong = ("(JoinGroup, SyncGroup: a classic group of one)", "answers", f"no answer: {e}")
                if wrong is not None:
                    return Result(seed, i, Divergence(seed, i, c, "cform", *wrong), coverage)
                coverage["cform -> a classic group of one, Stable at generation 1"] = 1
                continue
            action = consumer.next_action(drawn)
            request = consumer.request(action)
            if classic_group is not None:  # convertToConsumerGroup, at the consumer protocol's first join
                assert isinstance(request, coord.Request) and request.epoch == coord.JOIN_EPOCH, request
                group = classic.upgrade(1, [classic_group], partitions, 0, config)
                classic_group = None
                coverage["upgrade -> the classic group became a consumer group"] = 1
            expected_group, expected, log = _expect(group, request, config)
            if expected is None:  # Kafka would make the group a classic one: the model stops here
                coverage["stopped: a JoinGroup to a group without members"] = 1
                return Result(seed, i, None, coverage)
            try:
                decoded = _round_trip(socks[c], request, group_id, topic_id, i + 1, shape, assignor)
            except (OSError, EOFError) as e:  # a broker that hangs up on a request: a finding, the schedule ends
                return Result(seed, i, Divergence(seed, i, c, action, _show(request), _show(expected),
                                                  f"no answer: {e}"), coverage)
            if not hasattr(decoded, "body"):
                return Result(seed, i, Divergence(seed, i, c, action, _show(request), _show(expected),
                                                  f"undecodable: {decoded}"), coverage)
            observed, named = _observed(request, decoded)
            topic_id = topic_id or named
            if not _judged(expected, observed):
                return Result(seed, i + 1, Divergence(seed, i, c, action, _show(request), _show(expected),
                                                      _show(observed)), coverage)
            group = expected_group
            _covered(coverage, action, expected, group)
            consumer.learn(action, observed)
            if any(entry[0] == "downgrade" for entry in log):  # Kafka converted the group to a classic one
                coverage["stopped: the group downgraded to classic"] = 1
                return Result(seed, i + 1, None, coverage)
            if describe and group.epoch:  # the whole group, as the broker describes it (a consumer group still)
                seen = described_view(address, group_id, timeout_s)
                if seen != group_view(group):
                    return Result(seed, i + 1, Divergence(seed, i, c, "describe", "(ConsumerGroupDescribe after "
                                                          f"the answer to {action})", _show_view(group_view(group)),
                                                          _show_view(seen)), coverage)
                coverage["describe -> the model's group"] = coverage.get("describe -> the model's group", 0) + 1
        return Result(seed, length, None, coverage)
    finally:
        for s in socks:
            s.close()


def _show(value) -> str:
    if isinstance(value, (classic.Join, classic.Sync, classic.Beat, classic.Leave)):
        return _show_classic(value)
    if isinstance(value, classic.Answer):
        if value.error != coord.NONE:
            return value.error
        fields = [f"{k} {v}" for k, v in (("member id", value.member_id), ("generation", value.generation),
                                          ("protocol", value.protocol_name)) if v not in (None, -1)]
        if value.assignment is not None:
            fields.append(f"assignment {sorted(value.assignment)}")
        return " ".join(["NONE"] + fields)
    if isinstance(value, coord.Commit):
        return f"(OffsetCommit v{COMMIT_VERSION} at epoch {value.epoch} of partitions {sorted(value.partitions)})"
    if isinstance(value, coord.Request):
        fields = [f"epoch {value.epoch}"] + ([] if value.instance_id is None else [f"instance id {value.instance_id}"])
        if value.rebalance_timeout_ms != -1:
            fields.append(f"rebalance timeout {value.rebalance_timeout_ms}")
        if value.subscribed is not None:
            fields.append(f"topics {list(value.subscribed)}")
        if value.owned is not None:
            fields.append(f"owned {sorted(value.owned)}")
        return "(" + ", ".join(fields) + ")"
    if value.error != coord.NONE:
        return value.error
    shown = f"NONE epoch {value.epoch} interval {value.interval_ms}"
    return shown + ("" if value.assignment is None else f" assignment {sorted(value.assignment)}")


def _show_classic(request) -> str:
    name = _CLASSIC_APIS[type(request)]
    version = CLASSIC_VERSIONS[name]
    if isinstance(request, classic.Join):
        return (f"({name} v{version} member id {request.member_id or '(none)'}, protocols {list(request.protocols)}, "
                f"owned {sorted(request.owned)}, session timeout {request.session_timeout_ms})")
    if isinstance(request, classic.Leave):
        return f"({name} v{version} member id {request.member_id})"
    return f"({name} v{version} member id {request.member_id}, generation {request.generation})"


#: the API ``--describe`` reads the group with (v0)
DESCRIBE_API = "ConsumerGroupDescribe"


def supports(address: Tuple[str, int], timeout_s: float = 10.0, api: str = API) -> Optional[Tuple[int, int]]:
    """The versions of *api* (ConsumerGroupHeartbeat by default) the broker advertises in
    ApiVersions (asked at v3, and again at the broker's version after an UNSUPPORTED_VERSION answer,
    as ``NetworkClient.handleApiVersionsResponse`` does), or None."""
    from impl import protocol as P
    from impl.wire import CODEC_VERSIONS, api_versions_retry_version
    from properties.live.exchange import exchange

    version = CODEC_VERSIONS["ApiVersions"][1]
    for _ in range(2):
        body = getattr(exchange(address, P.ApiVersionsRequestData(), "ApiVersions", version, timeout_s), "body", None)
        if body is None:
            return None
        if body.error_code == 0:
            for key in body.api_keys:
                if key.api_key == api:
                    return key.min_version, key.max_version
            return None
        retry = api_versions_retry_version(version, body)
        if retry is None or retry == version:
            return None
        version = retry
    return None


def wait_for_topic(address: Tuple[str, int], partitions: int = 4, timeout_s: float = 30.0, shape: str = "java") -> None:
    """Until a probe member joining a probe group is assigned all *partitions* of TOPIC: a topic
    just created reaches the group coordinator's metadata image a little later, and a member
    subscribed to a topic the coordinator does not know yet is assigned nothing (Kafka's answer,
    not the model's world). RuntimeError if it never is."""

    deadline = time.monotonic() + timeout_s
    attempt = 0
    while True:
        attempt += 1
        member = str(uuid.UUID(int=attempt))
        group_id = f"groupcheck-kip848-probe-{uuid.uuid4().hex[:8]}"
        sock = connect(address, timeout_s)
        try:
            join = coord.Request(member, 0, REBALANCE_TIMEOUT_MS, (TOPIC,), frozenset())
            decoded = _round_trip(sock, join, group_id, None, 1, shape)
            if not hasattr(decoded, "body"):
                raise RuntimeError(f"the answer to a probe's join does not decode: {decoded}")
            answer, _ = from_response(decoded.body)
            _round_trip(sock, coord.Request(member, -1), group_id, None, 2, shape)
        except (OSError, EOFError):
            return  # a broker that hangs up on a join: the schedules will show it, judged
        finally:
            sock.close()
        if answer.error == coord.NONE and answer.assignment == frozenset(range(partitions)):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the coordinator never assigned the {partitions} partitions of topic {TOPIC} "
                               f"(last answer: {_show(answer)})")
        time.sleep(0.2)


def cmd_broker(args) -> int:
    """``groupcheck conform broker --protocol consumer``: the schedules against the broker, a
    summary (and JSON), the report under --out. Exit 0: no divergence; 1: a divergence; 2: usage,
    an unreachable broker, or one that does not speak ConsumerGroupHeartbeat v1."""
    import json
    import os

    from properties import targets
    from properties.errors import Inconclusive, UsageError, host_and_port
    from properties.progress import Progress

    for option, given in (("--matrix", args.matrix), ("--launch-cmd", args.launch_cmd),
                          ("--faults", args.faults), ("--baseline", args.baseline),
                          ("--junit", args.junit), ("--timers on", args.timers != "off"), ("--brokers", args.brokers != 1),
                          ("--parallel", args.parallel != 1)):
        if given:
            raise UsageError(f"{option} with --protocol consumer: not yet (KIP-848 schedules run one at a time on one "
                             "broker, timers off)")
    if not args.bootstrap and not args.launch:
        raise UsageError("conform broker --protocol consumer: give --bootstrap HOST:PORT or --launch NAME")
    if args.mutant and not args.launch:
        raise UsageError("--mutant needs --launch groupcheck")
    process = None
    interval = DEFAULT_HEARTBEAT_INTERVAL_MS
    if args.bootstrap:
        address, name = host_and_port(args.bootstrap), args.bootstrap
    else:
        target = targets.get(targets.BROKER, args.launch, "--launch")
        interval = target.consumer_heartbeat_interval_ms
        process = target.start({TOPIC: PARTITIONS}, args.mutant)
        host, port = process.bootstrap.rsplit(":", 1)
        address, name = (host, int(port)), target.name + (f" with mutant {args.mutant}" if args.mutant else "")
    failure = None
    try:
        try:
            versions = supports(address)
        except (OSError, EOFError) as e:
            raise UsageError(f"cannot ask {name} for its ApiVersions: {e}") from None
        if versions is None or versions[1] < VERSION:
            raise Inconclusive(f"{name} does not advertise ConsumerGroupHeartbeat v{VERSION} (KIP-848) in ApiVersions"
                               + ("" if versions is None else f": it has v{versions[0]}-v{versions[1]}"))
        if args.describe and supports(address, api=DESCRIBE_API) is None:
            raise Inconclusive(f"--describe: {name} does not advertise ConsumerGroupDescribe in ApiVersions")
        try:
            wait_for_topic(address, PARTITIONS, shape=args.shape)
        except RuntimeError as e:
            raise Inconclusive(f"{name}: {e}") from None
        started = time.monotonic()
        progress = Progress(args.schedules, unit="schedules", failures="divergences")
        divergences, coverage, judged = [], {}, 0
        done = 0
        for i, seed in enumerate(range(args.seed, args.seed + args.schedules), 1):
            try:
                result = run_schedule(address, seed, consumers=args.members, length=args.members + args.steps,
                                      partitions=PARTITIONS, static=args.static, classic_members=args.classic,
                                      upgrade=args.upgrade, shape=args.shape, heartbeat_interval_ms=interval,
                                      assignor=args.assignor, describe=args.describe)
            except Unreachable as e:  # the broker went away: what it said last, and the schedules so far
                failure = f"{e} (from schedule {seed} on){_exit_note(process)}"
                break
            done = i
            judged += result.steps
            for key, n in result.coverage.items():
                coverage[key] = coverage.get(key, 0) + n
            if result.divergence is not None:
                divergences.append(result.divergence)
            progress(i, len(divergences), final=i == args.schedules)
        seconds = time.monotonic() - started
    finally:
        if process is not None:
            process.stop()
    verdict = "fails" if failure else ("diverges" if divergences else "conforms")
    summary = {"system": name, "mutant": args.mutant, "protocol": "consumer", "members": args.members, "static": args.static,
               "classic": args.classic, "upgrade": args.upgrade, "shape": args.shape, "assignor": args.assignor,
               "describe": args.describe,
               "schedules": done,
               "requested": args.schedules,
               "requests_judged": judged, "seconds": round(seconds, 1), "failure": failure,
               "divergences": [attrs.asdict(d) for d in divergences],
               "coverage": dict(sorted(coverage.items())), "verdict": verdict}
    out = args.out or f"reports/conform-{name.replace(':', '-').replace(' with mutant ', '-')}-consumer"
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(_markdown(summary))
    if args.json:
        print(json.dumps(summary))
    else:
        members = f"{args.static} of {args.members} members static" if args.static else "dynamic members"
        if args.classic:
            members += (f", {args.classic} of the {args.members} classic"
                        + (", the group upgraded from classic" if args.upgrade else ""))
        print(f"{name}, KIP-848 (ConsumerGroupHeartbeat v{VERSION}, {members}): {done} of {args.schedules} schedules, {judged} "
              f"answers judged in {seconds:.1f} s: {summary['verdict']}")
        for d in divergences[:10]:
            print("  DIVERGENCE " + d.describe())
        if failure:
            print("  FAILURE " + failure)
        print(f"report: {out}/report.md")
    return 1 if divergences or failure else 0


def _exit_note(process) -> str:
    """How a broker groupcheck started ended, and the last lines of its log, when it has exited."""
    import subprocess

    popen = getattr(process, "process", None)
    if popen is None:
        return ""
    try:
        popen.wait(timeout=5)  # it refuses connections: gone, or on its way out
    except subprocess.TimeoutExpired:
        return ""
    tail = ""
    try:
        with open(process.log_path, errors="replace") as f:
            tail = " | ".join(line.strip() for line in f.readlines()[-3:] if line.strip())
    except (OSError, AttributeError):
        pass
    return f"; the broker's process exited with status {popen.returncode}" + (f"; its log ends: {tail}" if tail else "")


PARTITIONS = 4
DEFAULT_HEARTBEAT_INTERVAL_MS = 5000  # group.consumer.heartbeat.interval.ms's default, for --bootstrap


def _markdown(summary: dict) -> str:
    lines = [f"# {summary['system']}: KIP-848 conformance", "",
             f"Verdict: **{summary['verdict']}** — {summary['schedules']} of {summary['requested']} schedules, "
             f"{summary['requests_judged']} "
             f"ConsumerGroupHeartbeat v{VERSION} answers judged against the model's coordinator "
             "(model/kip848/coordinator.py) in {:.1f} s.".format(summary["seconds"]), "",
             "What was checked: every answer's error code; on success its member epoch, heartbeat interval and "
             "assignment (present or absent); every OffsetCommit v9's error (member epochs fence commits)"
             + (f"; {summary['static']} of the {summary['members']} members static (an instance id in every heartbeat; "
                "leaves at -2, rolling restarts that replace a departed member, rejoins with the member's own id, "
                "impostors)" if summary.get("static") else "; dynamic members only (`--static N` for static ones)")
             + (f"; {summary['classic']} of the {summary['members']} members classic inside the consumer group "
                "(JoinGroup v9: error, member id, generation = member epoch, protocol name; SyncGroup v5: error, "
                "protocol name, assigned partitions; Heartbeat v4 and LeaveGroup v5: error), each schedule judged up "
                "to where the group would change type (a JoinGroup to a group without members is not sent; the "
                "answer that leaves only classic members, after which Kafka converts the group to a classic one, is "
                "the last judged)" if summary.get("classic") else "")
             + ("; each schedule's group formed first as a classic group of one (checked against the classic "
                "protocol's fixed answers for a lone member of a new group) and upgraded by the first "
                "consumer-protocol join, every answer after judged" if summary.get("upgrade") else "")
             + ("; heartbeats shaped as librdkafka sends them (an empty SubscribedTopicRegex beside the topic "
                "names, which Kafka reads as none)" if summary.get("shape") == "librdkafka" else "")
             + (f"; every join asks for the `{summary.get('assignor', 'range')}` server assignor, which the "
                "model runs too" + (" (sticky: the targets depend on the order Kafka's hash maps meet the members in, "
                                    "model/java_order.py)" if summary.get("assignor") == "uniform" else ""))
             + ("; after every agreed answer the group read back with ConsumerGroupDescribe: its epochs and "
                "every member's epoch, assigned partitions and target, the model's" if summary.get("describe") else "")
             + ". Not checked: the session and rebalance timers (schedules are over long before them), the "
             f"{'range' if summary.get('assignor') == 'uniform' else 'uniform'} assignor (`--assignor`)"
             + ("." if summary.get("describe") else ", and the targets of members no answer shows (`--describe`)."),
             ""]
    if summary["failure"]:
        lines += ["## Failure", "", summary["failure"], ""]
    if summary["divergences"]:
        lines += ["## Divergences", ""] + [f"- seed {d['seed']} step {d['step']}: consumer {d['member']} "
                                           f"{d['action']} {d['request']}: expected {d['expected']}, "
                                           f"the broker answered {d['observed']}" for d in summary["divergences"]] + [""]
    lines += ["## Coverage (answers agreed, by action and outcome; member states the group held)", "",
              "| what | times |", "|---|---|"] + [f"| {k} | {v} |" for k, v in summary["coverage"].items()]
    return "\n".join(lines) + "\n"
