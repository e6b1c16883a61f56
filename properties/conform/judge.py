"""The judge: which broker answers does Kafka's protocol allow, given everything seen so far?

The model's server side is a pure function of (group, request, time, ``choose``), so the judge
keeps a set of :class:`Hypothesis` values — a model group, the aliasing of the broker's member ids
to the model's, the model's member-id counter — and for every step:

1. fires the model's timers that are due (schedules without timers set every timeout long, so only
   a zero initial rebalance delay fires: at once, as the broker's does);
2. runs the step's request through ``model.broker.handle_group_request`` for every hypothesis and
   every resolution of its ``choose`` points (leader re-pick, protocol vote tie-break);
3. keeps the (hypothesis, outcome) pairs whose replies equal the answers the broker gave during the
   step, member ids compared through the aliasing (a broker id seen for the first time is bound to
   the model id in the same place; the binding is one-to-one).

When no pair survives, the broker did something no model state allows: a :class:`Divergence`,
with the answers observed and the ones the model would have accepted. The judge then goes on
(issue 36): it *adopts* the broker's answers (:func:`adopt`: the model states closest to what was
observed, the ids the broker handed out bound to the model's) and judges the rest of the schedule
from there, so one schedule can show several divergences (:attr:`Judge.divergences`). Answers
meant for a connection the member has closed are not observed by anyone and are dropped on both
sides.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import attrs

from model import group as g
from model.broker import BrokerState, handle_group_request
from model.config import Config
from impl.wire.consumer_protocol import decode_assignment, decode_subscription
from model.errors import Errors
from model.messages import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    SyncGroupRequest,
)

#: Prefix of a model-side member id standing for a broker id the aliasing does not know (an id a
#: member made up, or one the broker never handed out).
UNBOUND = "unbound:"
#: SyncGroup carries protocol_type and protocol_name from v5 on (KIP-559)
SYNC_GROUP_NAMES_VERSION = 5
MAX_HYPOTHESES = 256


@attrs.frozen
class Hypothesis:
    group: Optional[g.Group]
    aliases: Tuple[Tuple[str, str], ...] = ()  # (broker id, model id), sorted
    member_seq: int = 0
    offsets: Tuple[Tuple[int, int], ...] = ()  # (partition, committed offset), sorted: what OffsetFetch returns
    persisted: Optional[g.Group] = None  # the group's last record in __consumer_offsets: what a failover loads

    def to_model(self) -> Dict[str, str]:
        return dict(self.aliases)

    def to_broker(self) -> Dict[str, str]:
        return {m: b for b, m in self.aliases}


@attrs.frozen
class Divergence:
    step: int
    summary: str
    signature: str
    observed: Tuple[str, ...]
    allowed: Tuple[Tuple[str, ...], ...]
    # (api, answer) the broker gave the step's request, named as a decision (decisions.py): an
    # answer Kafka's coordinator never gives that request cannot follow from another group state
    answer: Optional[Tuple[str, str]] = None


# ---------------------------------------------------------------------------------------------
# Canonical answers: what is compared, ids marked so they can be aliased
# ---------------------------------------------------------------------------------------------

@attrs.frozen
class Id:
    value: str


@attrs.frozen
class Bag:
    """An unordered collection (Kafka's JoinGroup member list comes from a hash map)."""
    items: tuple


@attrs.frozen
class GroupSummary:
    """What DescribeGroups answers for a model group (``GroupCoordinator.handleDescribeGroup``,
    ``GroupMetadata.summary``): an unknown group is Dead with no members -- from DescribeGroups v6
    on (KIP-1043) with the error GROUP_ID_NOT_FOUND (4.1.2 ``GroupMetadataManager.describeGroups``:
    ``if (context.requestVersion() >= 6)``); members' metadata and assignments are given only when
    the group is Stable. Every member with its client id (``MemberSummary.clientId``): where the
    ids are new to the judge (JoinGroup v3 and older hand a new member its id only when the join
    completes), the client ids say which member is which; the metadata, outside Stable, do not."""

    state: str
    protocol_type: str
    protocol: str
    members: tuple  # ((member_id, client_id, metadata, assignment), ...)
    version: int = 0  # the request's version
    api = "DescribeGroups"

    @classmethod
    def of(cls, group: Optional[g.Group], version: int = 0) -> "GroupSummary":
        if group is None:
            return cls("Dead", "", "", (), version)
        stable = group.state == g.STABLE
        members = tuple((m.member_id, m.client_id, dict(m.protocols).get(group.protocol_name) if stable else None,
                         tuple(m.assignment) if stable else None) for m in group.members)
        return cls(group.state, group.protocol_type or "", (group.protocol_name or "") if stable else "", members)


@attrs.frozen
class CommittedOffsets:
    """What OffsetFetch answers (``GroupCoordinator.handleFetchOffsets``): the committed offset of
    every partition asked for, -1 where nothing was committed (also for an unknown group)."""

    offsets: tuple  # ((partition, offset), ...)
    api = "OffsetFetch"


def _error_name(code: int) -> str:
    try:
        return Errors(code).name
    except ValueError:
        return f"error {code}"


def canonical_model(response) -> tuple:
    """A model response as the tuple the judge compares (ids as :class:`Id`)."""
    api = response.api
    if api == "JoinGroup":
        error = response.error
        if error == Errors.NONE:
            return (api, _error_name(error), response.generation_id, response.protocol_name,
                    Id(response.leader_id), Id(response.member_id),
                    Bag(tuple((Id(m), meta) for m, meta in response.members)))
        if error == Errors.MEMBER_ID_REQUIRED:
            return (api, _error_name(error), Id(response.member_id))
        return (api, _error_name(error))
    if api == "SyncGroup":
        if response.error == Errors.NONE:
            return (api, _error_name(response.error), tuple(response.assignment))
        return (api, _error_name(response.error))
    if api == "Heartbeat":
        return (api, _error_name(response.error))
    if api == "LeaveGroup":
        return (api, _error_name(response.overall_error()))
    if api == "OffsetCommit":
        return (api, tuple((p, _error_name(e)) for p, e in response.errors))
    if api == "OffsetFetch":
        return (api, "NONE", tuple((p, o, "NONE") for p, o in response.offsets))
    if api == "DescribeGroups":
        if response.state == "Dead" and response.version >= 6:
            return (api, "GROUP_ID_NOT_FOUND")
        return (api, "NONE", response.state, response.protocol_type, response.protocol,
                Bag(tuple((Id(m), client, meta, asg) for m, client, meta, asg in response.members)))
    raise ValueError(f"no canonical form for {api}")


def metadata_key(metadata) -> tuple:
    """A subscription (as decoded, or raw bytes) as the value the model stores for it."""
    if metadata is None:
        return ("none",)
    if isinstance(metadata, (bytes, bytearray)):
        return ("raw", bytes(metadata).hex())
    return (tuple(metadata.topics), bytes(metadata.user_data or b""))


def assignment_key(assignment) -> tuple:
    if assignment is None:
        return ()
    if isinstance(assignment, (bytes, bytearray)):
        return ("raw", bytes(assignment).hex()) if assignment else ()
    return tuple(tp.partition for tp in assignment.partitions)


def canonical_observed(api: str, version: int, body, generation_offset: int = 0) -> tuple:
    """A decoded broker answer (``impl.protocol``) as the tuple the judge compares. A broker whose
    generations are numbered from ``1 + generation_offset`` (a profile's acknowledged divergence)
    has its generation numbers translated to Kafka's."""
    if api == "JoinGroup":
        error = body.error_code
        if error == Errors.NONE:
            # a group of another protocol type ("connect") gets its members' metadata as bytes the
            # codec does not read as a subscription: read here, as the model keeps them
            return (api, _error_name(error), body.generation_id - generation_offset, body.protocol_name, Id(body.leader),
                    Id(body.member_id), Bag(tuple(
                        (Id(m.member_id), _decoded(m.metadata, decode_subscription, metadata_key)
                         if isinstance(m.metadata, (bytes, bytearray)) else metadata_key(m.metadata))
                        for m in body.members)))
        if error == Errors.MEMBER_ID_REQUIRED:
            return (api, _error_name(error), Id(body.member_id))
        return (api, _error_name(error))
    if api == "SyncGroup":
        if body.error_code == Errors.NONE:
            return (api, _error_name(body.error_code), assignment_key(body.assignment))
        return (api, _error_name(body.error_code))
    if api == "Heartbeat":
        return (api, _error_name(body.error_code))
    if api == "LeaveGroup":
        error = body.error_code or next((m.error_code for m in body.members if m.error_code), 0)
        return (api, _error_name(error))
    if api == "OffsetCommit":
        return (api, tuple((p.partition_index, _error_name(p.error_code)) for t in body.topics for p in t.partitions))
    if api == "OffsetFetch":
        if body.error_code:
            return (api, _error_name(body.error_code))
        return (api, "NONE", tuple(sorted((p.partition_index, p.committed_offset, _error_name(p.error_code))
                                          for t in body.topics for p in t.partitions)))
    if api == "DescribeGroups":  # a kio object: one group asked, one described
        group = body.groups[0] if body.groups else None
        if group is None or group.error_code:
            return (api, _error_name(group.error_code) if group is not None else "no group")
        stable = group.group_state == "Stable"
        members = tuple((Id(m.member_id), m.client_id,
                         _decoded(m.member_metadata, decode_subscription, metadata_key) if stable else None,
                         _decoded(m.member_assignment, decode_assignment, assignment_key) if stable else None)
                        for m in group.members)
        return (api, "NONE", group.group_state, group.protocol_type, group.protocol_data, Bag(members))
    raise ValueError(f"no canonical form for {api}")


def _decoded(data, decode, key):
    """ConsumerProtocol bytes as the model keeps them (raw bytes when they are not ConsumerProtocol)."""
    if not data:
        return key(None) if key is metadata_key else ()
    try:
        return key(decode(bytes(data)))
    except Exception:  # not ConsumerProtocol bytes: compare them as they are
        return ("raw", bytes(data).hex())


def render(value, names: Optional[Dict[str, str]] = None) -> str:
    """One readable line for a canonical answer; *names* renames ids (model id -> broker id)."""
    def show(v):
        if isinstance(v, Id):
            return repr((names or {}).get(v.value, v.value))
        if isinstance(v, Bag):
            return "{" + ", ".join(show(x) for x in v.items) + "}"
        if isinstance(v, tuple):
            return "(" + ", ".join(show(x) for x in v) + ")"
        if isinstance(v, bytes):
            return v.hex() or "''"
        return repr(v) if isinstance(v, str) else str(v)
    api, *rest = value
    return f"{api} " + ", ".join(show(x) for x in rest)


# ---------------------------------------------------------------------------------------------
# Matching with aliasing
# ---------------------------------------------------------------------------------------------

def _bind(broker_id: str, model_id: str, to_model: Dict[str, str], to_broker: Dict[str, str]):
    """The aliasing extended by broker_id ~ model_id, or None if that contradicts it."""
    if model_id.startswith(UNBOUND):
        return (to_model, to_broker) if broker_id == model_id[len(UNBOUND):] else None
    if broker_id == "" or model_id == "":
        return (to_model, to_broker) if broker_id == model_id else None
    known = to_model.get(broker_id)
    if known is not None:
        return (to_model, to_broker) if known == model_id else None
    if model_id in to_broker:
        return None
    to_model = dict(to_model)
    to_broker = dict(to_broker)
    to_model[broker_id] = model_id
    to_broker[model_id] = broker_id
    return to_model, to_broker


def match(observed, expected, to_model: Dict[str, str], to_broker: Dict[str, str]):
    """The aliasing under which *observed* equals *expected*, or None (the first of
    :func:`matches`)."""
    return next(matches(observed, expected, to_model, to_broker), None)


def matches(observed, expected, to_model: Dict[str, str], to_broker: Dict[str, str]):
    """Every aliasing under which *observed* equals *expected*: a :class:`Bag` of ids the aliasing
    does not know yet may line up in several ways (three new members with the same subscription),
    and only a later answer of the same step (a member's own id) says which is right."""
    if isinstance(expected, Id):
        if isinstance(observed, Id):
            state = _bind(observed.value, expected.value, to_model, to_broker)
            if state is not None:
                yield state
        return
    if isinstance(expected, Bag):
        if isinstance(observed, Bag) and len(observed.items) == len(expected.items):
            yield from _bag_matches(list(observed.items), list(expected.items), to_model, to_broker)
        return
    if isinstance(expected, tuple):
        if isinstance(observed, tuple) and len(observed) == len(expected):
            yield from _sequence_matches(list(observed), list(expected), to_model, to_broker)
        return
    if observed == expected:
        yield to_model, to_broker


def _sequence_matches(observed: list, expected: list, to_model, to_broker):
    if not observed:
        yield to_model, to_broker
        return
    for state in matches(observed[0], expected[0], to_model, to_broker):
        yield from _sequence_matches(observed[1:], expected[1:], *state)


def _bag_matches(observed: list, expected: list, to_model, to_broker):
    if not observed:
        yield to_model, to_broker
        return
    first, rest = observed[0], observed[1:]
    for i, e in enumerate(expected):
        for state in matches(first, e, to_model, to_broker):
            yield from _bag_matches(rest, expected[:i] + expected[i + 1:], *state)


def _lenient(observed, expected, to_model, to_broker):
    """Like :func:`match`, but a field that differs is skipped instead of failing the whole answer:
    (the aliasing extended wherever ids line up, how many fields agreed). What the judge learns
    from an answer it did not allow (:func:`adopt`)."""
    exact = match(observed, expected, to_model, to_broker)
    if exact is not None:
        return exact, _size(expected)
    if isinstance(expected, tuple) and isinstance(observed, tuple) and len(observed) == len(expected):
        agreed = 0
        for o, e in zip(observed, expected):
            (to_model, to_broker), n = _lenient(o, e, to_model, to_broker)
            agreed += n
        return (to_model, to_broker), agreed
    return (to_model, to_broker), 0


def _size(value) -> int:
    if isinstance(value, tuple):
        return sum(_size(v) for v in value)
    if isinstance(value, Bag):
        return sum(_size(v) for v in value.items)
    return 1


def _adopt_generation(group: Optional[g.Group], observed: tuple, expected: tuple) -> Optional[g.Group]:
    """*group* numbered as the broker numbers it, when a completed JoinGroup's answer gives another
    generation than the model's: the members will send the broker's number, and the model then
    judges them by it rather than calling every later request of theirs stale."""
    if (group is None or observed[:2] != ("JoinGroup", "NONE") or expected[:2] != ("JoinGroup", "NONE")
            or observed[2] == expected[2] or group.generation != expected[2]):
        return group
    sync_generation = observed[2] if group.sync_generation == expected[2] else group.sync_generation
    return attrs.evolve(group, generation=observed[2], sync_generation=sync_generation)


def adopt(candidates, observed_by: Dict[tuple, list]) -> List[Hypothesis]:
    """The hypotheses to go on from after a divergence: the model states closest to what the
    broker was seen to do, its answers taken as given.

    *candidates* are (hypothesis before the step, the model's answers per connection, the
    hypothesis after it) for every outcome the model allows — the request handled, and the
    request skipped (a broker that refused it, or parked it unread, changed nothing the model
    knows of). The ones kept agree with the broker on the most connections (every answer equal
    under the aliasing), then on the most fields of the answers that differ; each keeps the
    aliasing those answers imply (a member id the broker handed out where the model handed out
    another is bound to it), so the members' later requests — which carry what the broker told
    them — are judged against that state. A later divergence that only follows from this one is
    reported under it (:class:`properties.conform.tally.Tally`)."""
    scored = []
    for before, expected_by, after in candidates:
        to_model, to_broker = before.to_model(), before.to_broker()
        agreeing = 0
        differing = []
        for where in sorted(set(observed_by) | set(expected_by)):
            observed, expected = observed_by.get(where, []), expected_by.get(where, [])
            state = Judge._match_lists(observed, expected, to_model, to_broker)
            if state is None:
                differing.append((observed, expected))
            else:
                agreeing += 1
                to_model, to_broker = state
        fields = 0
        group = after.group
        for observed, expected in differing:
            for o, e in zip(observed, expected):
                (to_model, to_broker), n = _lenient(o, e, to_model, to_broker)
                fields += n
                group = _adopt_generation(group, o, e)
        scored.append(((agreeing, fields), attrs.evolve(after, group=group, aliases=tuple(sorted(to_model.items())))))
    if not scored:
        return [Hypothesis(None)]
    best = max(score for score, _ in scored)
    return list(dict.fromkeys(h for score, h in scored if score == best))[:MAX_HYPOTHESES]


# ---------------------------------------------------------------------------------------------
# The judge
# ---------------------------------------------------------------------------------------------

def all_choices(run):
    """``run(choose)`` for every resolution of the ``choose`` points it meets (depth first)."""
    results = []
    stack: List[tuple] = [()]
    while stack:
        prefix = stack.pop()
        made: List[int] = []

        def choose(kind, candidates, prefix=prefix, made=made):
            i = len(made)
            if i < len(prefix):
                made.append(prefix[i])
                return candidates[prefix[i]]
            for j in range(len(candidates) - 1, 0, -1):
                stack.append(tuple(made) + (j,))
            made.append(0)
            return candidates[0]

        results.append(run(choose))
    return results


class Judge:
    """The set of model states consistent with a broker's answers so far (see the module doc)."""

    def __init__(self, config: Config, generation_offset: int = 0, tolerance_ms: Optional[int] = None) -> None:
        self.config = config
        self.generation_offset = generation_offset
        self.tolerance_ms = tolerance_ms  # None: timers off (deterministic); else the tolerance window
        self.hypotheses: List[Hypothesis] = [Hypothesis(None)]
        self.closed: set = set()  # (member, epoch) of connections a member closed
        self.divergences: List[Divergence] = []  # every divergence so far, in order (the judge goes on past each)
        # (api, group state when the request arrived, the answer) of every step the broker answered
        # as the model does: the coordinator's decisions this schedule reached (decisions.py)
        self.decisions: set = set()

    def close(self, member: int, epoch: int) -> None:
        self.closed.add((member, epoch))

    def failover(self, now: int, group_id: str) -> None:
        """The node coordinating the group was killed and another has loaded the group from
        ``__consumer_offsets``: every hypothesis's group becomes what its last record rebuilds
        (``model.group.load``, §1.13 ``onGroupLoaded``; Kafka 4.x's ``GroupMetadataManager.replay``
        rebuilds the same: Stable with the record's members, each supporting the chosen protocol
        only, or Empty; a group with committed offsets and no record loads Empty), with fresh
        session deadlines from *now*. Nothing parked survives (its connection died with the node);
        committed offsets and the member-id aliasing do."""
        loaded: List[Hypothesis] = []
        for h in self.hypotheses:
            records = [h.persisted]
            if self.config.new_group_coordinator and _creation_record(h.persisted):
                # 4.x answers the JoinGroup that created the group (MEMBER_ID_REQUIRED) without
                # waiting for the empty record it appends (GroupCoordinatorService.joinGroup returns
                # the response future, the write completes apart: classicGroupJoin's
                # CoordinatorResult(records, appendFuture)); killed before that record committed,
                # the node leaves no group behind (measured: a DescribeGroups at once says Dead,
                # one after a failover a second later Empty)
                records.append(None)
            for record in records:
                for out in all_choices(lambda choose, h=h, record=record: g.load(
                        record, now, self.config, choose, h.member_seq, group_id, bool(h.offsets))):
                    seq = max(h.member_seq, out.group.member_seq if out.group is not None else 0)
                    loaded.append(attrs.evolve(h, group=out.group, member_seq=seq, persisted=record))
        self.hypotheses = list(dict.fromkeys(loaded))[:MAX_HYPOTHESES]

    def model_request(self, api: str, request, to_model: Dict[str, str], client_id: str, version: Optional[int] = None):
        """The model's request for a broker request written at *version* (None: every field as
        given): a field the version does not carry is not seen by the broker, nor by the model."""
        def mid(broker_id: str) -> str:
            if broker_id == "":
                return ""
            return to_model.get(broker_id, UNBOUND + broker_id)

        def gen(generation: int) -> int:  # the broker's numbering -> Kafka's (see canonical_observed)
            return generation if generation < 0 else generation - self.generation_offset

        if api == "JoinGroup":
            return JoinGroupRequest(request.group_id, mid(request.member_id), request.session_timeout_ms,
                                    request.rebalance_timeout_ms, request.protocol_type,
                                    tuple((p.name, metadata_key(p.metadata)) for p in request.protocols), client_id,
                                    request.group_instance_id)
        if api == "SyncGroup":
            named = version is None or version >= SYNC_GROUP_NAMES_VERSION
            return SyncGroupRequest(request.group_id, gen(request.generation_id), mid(request.member_id),
                                    request.protocol_type if named else None,
                                    request.protocol_name if named else None,
                                    tuple((mid(a.member_id), assignment_key(a.assignment)) for a in request.assignments),
                                    request.group_instance_id)
        if api == "Heartbeat":
            return HeartbeatRequest(request.group_id, gen(request.generation_id), mid(request.member_id),
                                    request.group_instance_id)
        if api == "LeaveGroup":
            instances = tuple(m.group_instance_id for m in request.members)
            return LeaveGroupRequest(request.group_id, tuple(mid(m.member_id) for m in request.members),
                                     instances if any(i is not None for i in instances) else ())
        if api == "OffsetCommit":
            partitions = [p for t in request.topics for p in t.partitions]
            return OffsetCommitRequest(request.group_id, gen(request.generation_id), mid(request.member_id),
                                       tuple((p.partition_index, p.committed_offset) for p in partitions),
                                       tuple(p.partition_index for p in partitions
                                             if len(p.committed_metadata or "") > g.OFFSET_METADATA_MAX_BYTES),
                                       request.group_instance_id)
        raise ValueError(f"the judge has no model request for {api}")

    def _settle(self, group, lo: int, hi: int, choose):
        """Fire the model's timers as a broker on wall-clock time may have by now: with timers off
        (no tolerance), every deadline up to *lo*; with a tolerance, every deadline before *lo* and
        then any prefix of those up to *hi* — how far is a ``choose("timer", ...)`` point, so every
        possibility is judged. Returns (group, replies, the last group record written or None, the
        timers that fired as :func:`timers_fired` names them)."""
        if self.tolerance_ms is None:
            out = g.fire_timers(group, lo, self.config, choose)
            return out.group, list(out.replies), out.persist, timers_fired(group, out)
        out = g.fire_timers(group, lo - 1, self.config, choose)
        fired = timers_fired(group, out)
        group, replies, persist = out.group, list(out.replies), out.persist
        while True:
            deadline = g.next_deadline(group)
            if deadline is None or deadline > hi or not choose("timer", (False, True)):
                return group, replies, persist, fired
            out = g.fire_timers(group, deadline, self.config, choose)
            fired += timers_fired(group, out)
            group = out.group
            replies += out.replies
            persist = out.persist or persist

    def _outcomes(self, h: Hypothesis, api: str, version: int, request, reply_to, now: int, end: int,
                  client_id: str):
        model_request = (self.model_request(api, request, h.to_model(), client_id, version)
                         if request is not None and api not in ("DescribeGroups", "OffsetFetch") else None)
        config = self.config
        tolerance = self.tolerance_ms or 0

        def run(choose):
            group, replies, offsets, persisted, timers = h.group, [], dict(h.offsets), h.persisted, []
            if request is not None:
                group, fired, persist, kinds = self._settle(group, now - tolerance, now + tolerance, choose)
                replies += fired
                persisted = persist or persisted
                timers += kinds
            seq = max(h.member_seq, group.member_seq if group is not None else 0)
            if api == "DescribeGroups":
                replies.append((reply_to, GroupSummary.of(group, version)))
            elif api == "OffsetFetch":
                asked = [p for t in request.topics for p in t.partition_indexes]
                replies.append((reply_to, CommittedOffsets(tuple((p, offsets.get(p, -1)) for p in sorted(asked)))))
            elif model_request is not None:
                out = handle_group_request(BrokerState(group=group), True, model_request, reply_to, now, config,
                                           choose, seq, version)
                group = out.group
                replies += out.replies
                offsets.update(out.committed)
                persisted = out.persist or persisted
            group, fired, persist, kinds = self._settle(group, end - tolerance, end + tolerance, choose)
            replies += fired
            persisted = persist or persisted
            timers += kinds
            seq = max(seq, group.member_seq if group is not None else 0)
            return group, seq, tuple(replies), tuple(sorted(offsets.items())), persisted, tuple(timers)

        return all_choices(run)

    def step(self, index: int, api: Optional[str], version: int, request, reply_to, now: int, client_id: str,
             observed: Sequence[Tuple[tuple, tuple]], end: Optional[int] = None,
             maybe_unread: bool = False) -> Optional[Divergence]:
        """Judge one step: *request* (``impl.protocol``, or None for a wait, which sends nothing)
        sent on *reply_to* = (member, epoch) at model time *now*; the step's observation window
        ends at *end* (default *now*); *observed* = ((member, epoch), canonical answer) for every
        answer the broker gave during the step, in arrival order. *maybe_unread*: the request's
        connection was cut right after it was written, so the broker may never have read it: the
        model states where it did not are kept too."""
        end = now if end is None else end
        observed_by: Dict[tuple, list] = {}
        for where, answer in observed:
            if where not in self.closed:  # a connection the broker broke during the step: judged by neither side
                observed_by.setdefault(where, []).append(answer)
        survivors: List[Hypothesis] = []
        allowed: List[Tuple[str, ...]] = []
        allowed_own: List[tuple] = []  # what the model allows the step's own connection, per outcome
        candidates: List[Tuple[Hypothesis, Dict[tuple, list], Hypothesis]] = []  # for adopting the broker's answers
        # (api, group state before the step, the model's answer) of every surviving outcome, and
        # ("timers", the group's state before, what fired) for the coordinator's timers that fired in one
        reached: set = set()
        timer_outcomes: list = []  # a wait's or a pause's outcomes: (hypothesis, the model's replies)
        for h in self.hypotheses:
            for group, seq, replies, offsets, persisted, timers in self._outcomes(h, api, version, request, reply_to,
                                                                                  now, end, client_id):
                expected_by = self._expected(replies)
                state = self._match_all(observed_by, expected_by, h)
                if state is not None:
                    aliases = tuple(sorted(state[0].items()))
                    survivors.append(Hypothesis(group, aliases, seq, offsets, persisted))
                    own = expected_by.get(reply_to)
                    if api is not None:
                        reached.add((api, h.group.state if h.group is not None else "no group",
                                     decision_of(own[0]) if own else "parked"))
                    reached.update(("timers", before, kind) for before, kind in timers)
                    continue
                candidates.append((h, expected_by, Hypothesis(group, h.aliases, seq, offsets, persisted)))
                allowed_own.append(tuple(expected_by.get(reply_to, ())))
                if api is None:
                    timer_outcomes.append((h, replies))
                if len(allowed) < 6:
                    names = h.to_broker()
                    line = tuple(f"m{w[0]}: {render(r, names)}" for w, rs in sorted(expected_by.items()) for r in rs)
                    if line not in allowed:
                        allowed.append(line)
        # the model states where the request was never read: kept for a cut connection, and
        # candidates for adopting the broker's answers after a divergence (computed once)
        skipped = [(h, self._expected(replies), Hypothesis(group, h.aliases, seq, offsets, persisted))
                   for h in self.hypotheses
                   for group, seq, replies, offsets, persisted, _ in self._outcomes(h, None, version, None, reply_to,
                                                                                    now, end, client_id)
                   ] if request is not None and (maybe_unread or not survivors) else []
        if maybe_unread:
            for h, expected_by, after in skipped:
                state = self._match_all(observed_by, expected_by, h)
                if state is not None:
                    survivors.append(attrs.evolve(after, aliases=tuple(sorted(state[0].items()))))
            reached = set()  # read or not: no decision to count
        if survivors:
            self.decisions.update(reached)
            unique = list(dict.fromkeys(survivors))
            self.hypotheses = unique[:MAX_HYPOTHESES]
            return None
        candidates += skipped  # the broker may have refused the request, or not read it: the model skips it
        seen = tuple(f"m{w[0]}: {render(a)}" for w, answers in sorted(observed_by.items()) for a in answers)
        if api is None:  # a wait or a pause: what the broker's timers answered, on any connection
            own = tuple(a for _, answers in sorted(observed_by.items()) for a in answers)
            allowed_own = [tuple(a for _, answers in sorted(self._expected(replies).items()) for a in answers)
                           for _, replies in timer_outcomes] if timer_outcomes else allowed_own
        else:
            own = tuple(observed_by.get(reply_to, ()))
        answer = (api, decision_of(own[0]) if own else "parked") if api is not None else None
        divergence = Divergence(index, self._summary(api, observed_by, allowed), signature(api, own, allowed_own),
                                seen, tuple(allowed), answer)
        self.hypotheses = adopt(candidates, observed_by)
        self.divergences.append(divergence)
        return divergence

    def _expected(self, replies) -> Dict[tuple, list]:
        """The model's replies as canonical answers per open connection (a closed one's are dropped)."""
        expected_by: Dict[tuple, list] = {}
        for where, response in replies:
            if where not in self.closed:
                expected_by.setdefault(where, []).append(canonical_model(response))
        return expected_by

    @staticmethod
    def _match_all(observed_by, expected_by, h: Hypothesis):
        """The aliasing under which every connection's answers equal the model's, or None: the
        ways one answer's ids line up are tried until the others agree too (a leader's member list
        binds new ids only as the members' own answers allow)."""
        if set(observed_by) != set(expected_by):
            return None
        wheres = list(observed_by)

        def every(i, to_model, to_broker):
            if i == len(wheres):
                yield to_model, to_broker
                return
            answers, expected = observed_by[wheres[i]], expected_by[wheres[i]]
            if len(answers) == len(expected):
                for state in _sequence_matches(list(answers), list(expected), to_model, to_broker):
                    yield from every(i + 1, *state)

        return next(every(0, h.to_model(), h.to_broker()), None)

    @staticmethod
    def _match_lists(answers: list, expected: list, to_model, to_broker):
        """The aliasing under which one connection's answers equal the model's, in order, or None."""
        if len(answers) != len(expected):
            return None
        return next(_sequence_matches(list(answers), list(expected), to_model, to_broker), None)

    @staticmethod
    def _summary(api, observed_by, allowed) -> str:
        seen = "; ".join(f"m{w[0]}: {render(a)}" for w, answers in sorted(observed_by.items()) for a in answers)
        wanted = " | ".join("; ".join(line) or "no answer" for line in allowed[:2])
        return f"after {api or 'a wait'}: the broker answered [{seen or 'nothing'}], the model allows [{wanted}]"



def timers_fired(before, out) -> List[Tuple[str, str]]:
    """The coordinator's timers that fired between *before* (a group, or None) and
    ``g.fire_timers``' outcome *out*, as (the group's state before, what fired) — the timer
    decisions of :mod:`properties.decisions`: ``session expiry`` (a member removed at its
    session deadline), ``initial rebalance delay`` (the first join phase of an Empty group
    completed when the delay ran out), ``rebalance timeout`` (a later join phase completed without
    every member),
    ``sync timeout`` (members that did not sync removed), ``pending member expiry`` (an id handed
    out with MEMBER_ID_REQUIRED forgotten)."""
    if before is None:
        return []
    state = before.state
    fired = []
    for note in out.notes:
        if note[0] == "member_removed" and note.reason in _TIMER_REMOVALS:
            fired.append((state, _TIMER_REMOVALS[note.reason]))
        elif note[0] == "join_complete" and not note.all_joined:
            # the first join of an Empty group waits the initial delay (InitialDelayedJoin), any
            # other the rebalance timeout (DelayedJoin)
            fired.append((state, "initial rebalance delay" if before.initial_delay_remaining is not None
                          else "rebalance timeout"))
    after = {p[0] for p in out.group.pending_members} if out.group is not None else set()
    if any(p[0] not in after for p in before.pending_members):
        fired.append((state, "pending member expiry"))
    return fired


_TIMER_REMOVALS = {"session": "session expiry", "not_synced": "sync timeout"}


def _creation_record(persisted: Optional[g.Group]) -> bool:
    """Whether *persisted* is the empty record 4.x writes for a group a JoinGroup created (no
    members, generation 0: a record the Scala coordinator never writes, its first empty record
    comes from a completed join, generation 1 or more)."""
    return persisted is not None and not persisted.members and persisted.generation == 0


#: The states DescribeGroups reports for a classic group (GroupMetadata's states, ClassicGroupState)
CLASSIC_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")

#: The fields of a canonical answer, after the API name, for signatures.
FIELDS = {"JoinGroup": ("error", "generation_id", "protocol_name", "leader", "member_id", "members"),
          "SyncGroup": ("error", "assignment"), "Heartbeat": ("error",), "LeaveGroup": ("error",),
          "OffsetCommit": ("partition errors",),
          "DescribeGroups": ("error", "group_state", "protocol_type", "protocol_data", "members"),
          "OffsetFetch": ("error", "offsets")}


def decision_of(answer: tuple) -> str:
    """The answer a decision is named by: its error (a DescribeGroups answer's group state too)."""
    if answer[0] == "DescribeGroups" and answer[1] == "NONE":
        return f"NONE {answer[2]}"
    return _error_of(answer)


def _error_of(answer: tuple) -> str:
    if answer[0] == "OffsetCommit":  # the errors, not the partitions (they differ between schedules)
        return "/".join(sorted({error for _, error in answer[1]})) or "no partitions"
    return answer[1] if isinstance(answer[1], str) else render(answer)


def _offsets_differ(got: tuple, allowed: List[tuple]) -> str:
    """How committed offsets differ from the model's, in words that do not depend on the
    partitions or the numbers: a commit the broker lost, one it has that the model does not, or
    another offset."""
    mine = {p: o for p, o, _ in got}
    kinds = set()
    for offsets in allowed:
        for p, o, _ in offsets:
            if mine.get(p, -1) == o:
                continue
            kinds.add("a committed offset missing" if mine.get(p, -1) == -1 else
                      "an offset the model has no commit for" if o == -1 else "another committed offset")
    return " / ".join(sorted(kinds)) if kinds else "other offsets"


def signature(api: Optional[str], own: tuple, allowed_own: List[tuple]) -> str:
    """What kind of divergence, in words that do not depend on ids or timing: the request, what
    the broker answered it, and what the model allows (errors, or the first field that differs)."""
    if api is None:  # a wait or a pause: the answers the broker's timers gave, on any connection
        wanted = sorted({f"{a[0][0]} {_error_of(a[0])}" for a in allowed_own if a}) or ["no answer"]
        got = f"{own[0][0]} {_error_of(own[0])}" if own else "no answer"
        if got in wanted:  # the first answer agrees: the others differ
            return f"timers: {got}, but the other answers differ from the model's"
        return f"timers: {got} where the model allows {' or '.join(wanted)}"
    name = api
    allowed_first = [a[0] for a in allowed_own if a]
    wanted = sorted({_error_of(a) for a in allowed_first}) or ["no answer"]
    if not own:
        if wanted == ["no answer"]:  # both park it: what differs is another member's answer
            return f"{name}: no answer (parked, as the model allows), but the answers to the other members differ"
        return f"{name}: no answer where the model allows {' or '.join(wanted)}"
    got = own[0]
    if not allowed_first:
        return f"{name}: answered {_error_of(got)} where the model allows no answer (parked)"
    same_error = [a for a in allowed_first if a[:2] == got[:2]]
    if not same_error:
        return f"{name}: answered {_error_of(got)} where the model allows {' or '.join(wanted)}"
    if got[0] == "OffsetFetch" and len(got) > 2:
        return f"{name}: answered {_error_of(got)} with {_offsets_differ(got[2], [a[2] for a in same_error if len(a) > 2])}"
    if got[0] == "DescribeGroups" and len(got) > 2 and got[2] not in CLASSIC_STATES:
        # a state Kafka's classic groups never report: the same divergence whatever the model expected
        return f"{name}: answered {_error_of(got)} with group_state {got[2]!r}, not a state of Kafka's classic groups"
    fields = FIELDS.get(got[0], ())
    for position, field in enumerate(fields[1:], start=2):
        if all(len(a) > position and len(got) > position and type(a[position]) is type(got[position])
               and not isinstance(got[position], (Id, Bag)) and a[position] != got[position] for a in same_error):
            return (f"{name}: answered {_error_of(got)} with {field} {render((got[0], got[position]))[len(got[0]) + 1:]} "
                    f"where the model allows {' or '.join(sorted({render((a[0], a[position]))[len(a[0]) + 1:] for a in same_error}))}")
    return f"{name}: answered {_error_of(got)}, but the answers to the other members differ from the model's"
