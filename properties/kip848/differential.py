"""impl/'s KIP-848 coordinator and consumers beside the model's, one event at a time (issue 39).

The model's world (:mod:`model.kip848.world`) decides what happens; every heartbeat and commit its
coordinator handles is handed, translated into Kafka's request shapes, to
:class:`impl.server.modern.ConsumerGroupCoordinator` at the same time on a
:class:`impl.time.MockTime`, and every tick moves impl's timer to the same instant. After each of
those events the answers and the two groups are compared (``kip848-impl-matches-model``); an
exception out of impl/ is ``kip848-impl-no-crash`` and an event it never finishes
``kip848-impl-no-hang`` (:func:`properties.systems.watchdog.guarded`).

Beside each model consumer runs impl/'s (:class:`impl.membership.AsyncConsumerMembership`, with a
rebalance listener as the conformance runners register one), on the same clock: the application's
poll and close, the background thread's iteration (a ``heartbeat`` event: whether it sends, and
what), the answers impl/'s coordinator gave (a lost one never arrives; one to a request that timed
out finds no request waiting, as after Kafka's NetworkClient dropped the connection), the
timeouts, crashes and restarts. After each, the heartbeat sent and the membership are compared
(``kip848-impl-consumer-matches-model``).

The model's one topic is ``t`` with the topic id :data:`TOPIC_ID`.
"""

from __future__ import annotations

from impl.errors import TimeoutException
from impl.membership import AsyncConsumerMembership
from impl.server.modern import ConsumerGroupCoordinator, ModernGroupConfig
from impl.server.modern.coordinator import rebalance_timeout_key, session_timeout_key
from impl.server.timer import MockTimer
from impl.time import MockTime
from model.kip848 import coordinator as coord
from model.kip848.config import ASSIGNORS
from properties.catalogue import Violation
from properties.systems.watchdog import Crash, guarded
from properties.kip848.catalogue import IMPL_AGREEMENT, IMPL_CONSUMER_AGREEMENT, IMPL_CRASH, IMPL_HANG
from properties.kip848.shapes import error_name, to_request

TOPIC = "t"
TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"  # Kafka's Uuid 1 (Uuid.toString: URL-safe base64): one topic in a KIP-848 world


def response_view(response) -> tuple:
    """An answer as the comparison sees it, from either side: the error, and for a success the
    member id, epoch, interval and assignment (None when absent)."""
    if isinstance(response, coord.Response):
        if response.error != coord.NONE:
            return (response.error,)
        assignment = None if response.assignment is None else tuple(sorted(response.assignment))
        return (coord.NONE, response.member_id, response.epoch, response.interval_ms, assignment)
    error = error_name(response.error_code)
    if error != "NONE":
        return (error,)
    assignment = None
    if response.assignment is not None:
        assignment = tuple(sorted(p for tp in response.assignment.topic_partitions for p in tp.partitions))
    return ("NONE", response.member_id, response.member_epoch, response.heartbeat_interval_ms, assignment)


def model_group_view(group: coord.Group) -> tuple | None:
    """The model's group as :func:`impl_group_view` shows impl's (None: not created)."""
    if group.epoch == 0:
        return None
    members = tuple((m.member_id, m.instance_id, m.epoch, m.previous_epoch, m.state, tuple(sorted(m.assigned)),
                     tuple(sorted(m.revoking)), m.rebalance_timeout_ms) for m in sorted(group.members))
    target = tuple((mid, tuple(sorted(parts))) for mid, parts in sorted(group.target))
    return (group.epoch, group.assignment_epoch, coord.state(group), members, target, tuple(group.partition_epochs),
            tuple(sorted(group.sessions)), tuple(sorted((mid, d) for mid, _, d in group.rebalances)))


def impl_group_view(coordinator: ConsumerGroupCoordinator, group_id: str, partitions: int) -> tuple | None:
    group = coordinator.groups.get(group_id)
    if group is None:
        return None

    def parts(assignment: dict) -> tuple:
        return tuple(sorted(assignment.get(TOPIC_ID, ())))

    members = tuple((m.member_id, m.instance_id, m.member_epoch, m.previous_member_epoch, m.state.name,
                     parts(m.assigned_partitions), parts(m.partitions_pending_revocation), m.rebalance_timeout_ms)
                    for _, m in sorted(group.members.items()))
    target = tuple((mid, parts(a)) for mid, a in sorted(group.target_assignments.items()))
    epochs = tuple(group.current_partition_epoch(TOPIC_ID, p) for p in range(partitions))
    deadline = coordinator.timer.deadline
    sessions = tuple(sorted(item for item in ((mid, deadline(session_timeout_key(group_id, mid))) for mid in group.members)
                            if item[1] is not None))
    rebalances = tuple(sorted(item for item in ((mid, deadline(rebalance_timeout_key(group_id, mid))) for mid in group.members)
                              if item[1] is not None))
    return (group.group_epoch, group.target_assignment_epoch, group.state.name.upper(), members, target, epochs,
            sessions, rebalances)


_GROUP_FIELDS = ("group epoch", "assignment epoch", "state", "members", "target", "partition epochs",
                 "session deadlines", "rebalance deadlines")


def differences(model: tuple | None, impl: tuple | None) -> list:
    if model is None or impl is None:
        return [f"group: model {model!r}, impl {impl!r}"]
    return [f"{name}: model {a!r}, impl {b!r}" for name, a, b in zip(_GROUP_FIELDS, model, impl) if a != b]


class _Listener:
    """A rebalance listener that does nothing: with one, Kafka runs the callbacks on the
    application's poll (without, a reconciliation would not wait for it)."""

    def on_partitions_revoked(self, partitions) -> None:
        pass

    def on_partitions_assigned(self, partitions) -> None:
        pass

    def on_partitions_lost(self, partitions) -> None:
        pass


def model_member_view(client) -> tuple | None:
    """A model consumer as :func:`impl_member_view` shows impl's: state, member epoch, the
    partitions held and the target (None: none)."""
    if client is None:
        return None
    target = None if client.target is None else tuple(sorted(client.target))
    return (client.state, client.epoch, tuple(sorted(client.owned)), target)


def impl_member_view(member: AsyncConsumerMembership | None) -> tuple | None:
    if member is None:
        return None
    mm = member.membership_manager
    target = mm.current_target_assignment
    return (mm.state.name, mm.member_epoch, tuple(sorted(mm.owned_partitions(TOPIC_ID))),
            None if target.is_none() else tuple(sorted(target.partitions.get(TOPIC_ID, ()))))


_MEMBER_FIELDS = ("state", "member epoch", "holds", "target")


class Differential:
    """impl/'s coordinator and consumers for one walk (*config*: the walk's
    :class:`model.kip848.config.Config`)."""

    def __init__(self, config):
        from model.kip848.world import initial_world

        self.config = config
        self.time = MockTime()
        self.timer = MockTimer(self.time)
        self.coordinator = ConsumerGroupCoordinator(
            ModernGroupConfig(session_timeout_ms=config.session_timeout_ms,
                              heartbeat_interval_ms=config.heartbeat_interval_ms,
                              # the world's assignor the default (no consumer names one)
                              assignors=(config.assignor,) + tuple(a for a in ASSIGNORS if a != config.assignor)),
            self.timer, lambda name: (TOPIC_ID, config.partitions) if name == TOPIC else None)
        world = initial_world(config)
        self.members = [None if client is None else self._member(client.member_id, c) for c, client in enumerate(world.clients)]
        self.pending = [dict() for _ in world.clients]  # per slot: seq of a request awaiting its answer -> ignored?
        self.responses = [[] for _ in world.clients]  # per slot: impl/'s coordinator's answers, in order
        self.compared = 0  # answers compared
        self.requests_compared = 0  # heartbeats compared
        self._model_group: tuple = (None, None)  # (the model's group last compared, its view)

    def _model_group_view(self, group: coord.Group) -> tuple | None:
        """:func:`model_group_view`, read again only when the model's (immutable) group changed."""
        last = self._model_group
        if last[0] is not group:
            last = self._model_group = (group, model_group_view(group))
        return last[1]

    def _member(self, member_id: str, c: int) -> AsyncConsumerMembership:
        config = self.config
        return AsyncConsumerMembership(self.time, config.group_id, member_id, (TOPIC,),
                                       lambda topic_id: TOPIC if topic_id == TOPIC_ID else None,
                                       config.max_poll_interval_ms, config.retry_backoff_ms,
                                       group_instance_id=config.instance_id(c), listener=_Listener())

    def after(self, world, event, new, log: list) -> Violation | None:
        """impl/'s part of *event* (which took the model from *world* to *new*, logging *log*)."""
        kind = event[0]
        if kind == "commit":
            return None  # the commit reaches impl/'s coordinator when delivered
        steps = ((self._tick,) if kind == "tick" else
                 (self._client_event, self._deliver) if kind == "deliver" else (self._client_event,))
        for part in steps:
            problem, failure = guarded(part, event, new, log)
            if failure is not None:  # an exception out of impl/, or an event it never finishes
                prop = IMPL_CRASH if isinstance(failure, Crash) else IMPL_HANG
                return Violation(prop, f"{failure.describe()}, after {list(event)!r}")
            if problem is not None:
                return Violation(problem[0], f"after {list(event)!r}: {problem[1]}")
        if kind in ("deliver", "tick"):  # what reaches the coordinator: the group compared
            model, impl = self._model_group_view(new.group), impl_group_view(self.coordinator, self.config.group_id,
                                                                             self.config.partitions)
            if model != impl:
                return Violation(IMPL_AGREEMENT, f"after {list(event)!r}: " + "; ".join(differences(model, impl)[:3]))
        if kind == "tick":
            return None
        c = event[1]
        model, impl = model_member_view(new.clients[c]), impl_member_view(self.members[c])
        if model != impl:
            diffs = ([f"consumer {c}: model {model!r}, impl {impl!r}"] if model is None or impl is None else
                     [f"consumer {c}'s {name}: model {a!r}, impl {b!r}" for name, a, b in zip(_MEMBER_FIELDS, model, impl)
                      if a != b])
            return Violation(IMPL_CONSUMER_AGREEMENT, f"after {list(event)!r}: " + "; ".join(diffs))
        return None

    def _client_event(self, event, new, log: list):
        """The event's part on impl/'s consumer of slot event[1]; a disagreement as (property, what)."""
        kind, c = event[0], event[1]
        member = self.members[c]
        if kind == "poll":
            member.poll()
        elif kind == "heartbeat":
            sent = [entry for entry in log if entry[0] == "sent"]
            request, ignored = member.background_poll()
            model_request = None if not sent else to_request(sent[0][3], self.config.group_id, TOPIC_ID)
            self.requests_compared += 1
            if request != model_request:
                return IMPL_CONSUMER_AGREEMENT, f"consumer {c}'s heartbeat: model {model_request!r}, impl {request!r}"
            if sent:
                self.pending[c][sent[0][2]] = ignored
        elif kind == "receive":
            seq, mid, answer = self.responses[c].pop(0)
            if member is None or member.membership_manager.member_id != mid or isinstance(answer, str):
                return None  # the process is gone; or an OffsetCommit's answer (nothing changes)
            if seq in self.pending[c] and not self.pending[c].pop(seq):
                member.on_response(answer)
        elif kind == "timeout":  # the connection dropped: every request on it fails
            seqs = next(entry[2] for entry in log if entry[0] == "timed_out")
            if sorted(self.pending[c]) != sorted(seqs):
                return IMPL_CONSUMER_AGREEMENT, f"consumer {c}: heartbeats {list(seqs)} failed, impl awaits {sorted(self.pending[c])}"
            for seq in sorted(self.pending[c]):
                if not self.pending[c][seq]:
                    member.on_failure(TimeoutException(f"heartbeat {seq} timed out"))
            self.pending[c] = {}
        elif kind == "lose" and event[2] == "response":
            self.responses[c].pop(0)
        elif kind == "close":
            member.close()
        elif kind == "crash":
            self.members[c], self.pending[c] = None, {}
        elif kind == "restart":
            self.members[c], self.pending[c] = self._member(new.clients[c].member_id, c), {}
        return None

    def _deliver(self, event, new, log: list):
        c = next(entry[1] for entry in log if entry[0] in ("answered", "commit_answered"))
        for entry in log:
            if entry[0] == "answered":
                seq, request, response = entry[2], entry[3], entry[4]
                answer = self.coordinator.consumer_group_heartbeat(to_request(request, self.config.group_id, TOPIC_ID))
                self.responses[c].append((seq, request.member_id, answer))
                mine, theirs = response_view(response), response_view(answer)
            elif entry[0] == "commit_answered":
                request, error = entry[2], entry[3]
                mine = (error,)
                theirs = (self.coordinator.validate_offset_commit(self.config.group_id, request.member_id,
                                                                  request.instance_id, request.epoch, 9).name,)
                self.responses[c].append((0, request.member_id, theirs[0]))
            else:
                continue
            self.compared += 1
            if mine != theirs:
                return IMPL_AGREEMENT, f"the answer to {request!r}: model {mine!r}, impl {theirs!r}"
        return None

    def _tick(self, event, new, log: list) -> None:
        self.timer.advance_clock(new.now)
        self.time.set_current_time_ms(new.now)
