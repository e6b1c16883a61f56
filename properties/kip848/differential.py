"""impl/'s KIP-848 coordinator beside the model's, one event at a time (issue 39).

The model's world (:mod:`model.kip848.world`) decides what happens; every heartbeat and commit its
coordinator handles is handed, translated into Kafka's request shapes, to
:class:`impl.server.modern.ConsumerGroupCoordinator` at the same time on a
:class:`impl.time.MockTime`, and every tick moves impl's timer to the same instant. After each of
those events the answers and the two groups are compared (``kip848-impl-matches-model``); an
exception out of impl/ is ``kip848-impl-no-crash`` and an event it never finishes
``kip848-impl-no-hang`` (:func:`properties.systems.watchdog.guarded`). The consumers stay the model's own: impl/ has no
KIP-848 consumer yet.

The model's one topic is ``t`` with the topic id :data:`TOPIC_ID`.
"""

from __future__ import annotations

from impl.server.modern import ConsumerGroupCoordinator, ModernGroupConfig
from impl.server.modern.coordinator import rebalance_timeout_key, session_timeout_key
from impl.server.timer import MockTimer
from impl.time import MockTime
from model.kip848 import coordinator as coord
from properties.catalogue import Violation
from properties.systems.watchdog import Crash, guarded
from properties.kip848.catalogue import IMPL_AGREEMENT, IMPL_CRASH, IMPL_HANG
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
    timer = coordinator.timer
    sessions = tuple(sorted((mid, timer.deadline(session_timeout_key(group_id, mid)))
                            for mid in group.members if timer.deadline(session_timeout_key(group_id, mid)) is not None))
    rebalances = tuple(sorted((mid, timer.deadline(rebalance_timeout_key(group_id, mid)))
                              for mid in group.members
                              if timer.deadline(rebalance_timeout_key(group_id, mid)) is not None))
    return (group.group_epoch, group.target_assignment_epoch, group.state.name.upper(), members, target, epochs,
            sessions, rebalances)


_GROUP_FIELDS = ("group epoch", "assignment epoch", "state", "members", "target", "partition epochs",
                 "session deadlines", "rebalance deadlines")


def differences(model: tuple | None, impl: tuple | None) -> list:
    if model is None or impl is None:
        return [f"group: model {model!r}, impl {impl!r}"]
    return [f"{name}: model {a!r}, impl {b!r}" for name, a, b in zip(_GROUP_FIELDS, model, impl) if a != b]


class Differential:
    """impl/'s coordinator for one walk (*config*: the walk's :class:`model.kip848.config.Config`)."""

    def __init__(self, config):
        self.config = config
        self.time = MockTime()
        self.timer = MockTimer(self.time)
        self.coordinator = ConsumerGroupCoordinator(
            ModernGroupConfig(session_timeout_ms=config.session_timeout_ms,
                              heartbeat_interval_ms=config.heartbeat_interval_ms),
            self.timer, lambda name: (TOPIC_ID, config.partitions) if name == TOPIC else None)
        self.compared = 0  # answers compared

    def after(self, world, event, new, log: list) -> Violation | None:
        """impl/'s part of *event* (which took the model from *world* to *new*, logging *log*)."""
        kind = event[0]
        if kind not in ("deliver", "tick"):
            return None  # nothing else reaches the coordinator
        problem, failure = guarded(self._deliver if kind == "deliver" else self._tick, new, log)
        if failure is not None:  # an exception out of impl/, or an event it never finishes
            prop = IMPL_CRASH if isinstance(failure, Crash) else IMPL_HANG
            return Violation(prop, f"{failure.describe()}, after {list(event)!r}")
        if problem is not None:
            return Violation(IMPL_AGREEMENT, f"after {list(event)!r}: {problem}")
        model, impl = model_group_view(new.group), impl_group_view(self.coordinator, self.config.group_id,
                                                                   self.config.partitions)
        if model != impl:
            return Violation(IMPL_AGREEMENT, f"after {list(event)!r}: " + "; ".join(differences(model, impl)[:3]))
        return None

    def _deliver(self, new, log: list) -> str | None:
        for entry in log:
            if entry[0] == "answered":
                request, response = entry[3], entry[4]
                answer = self.coordinator.consumer_group_heartbeat(to_request(request, self.config.group_id, TOPIC_ID))
                mine, theirs = response_view(response), response_view(answer)
            elif entry[0] == "commit_answered":
                request, error = entry[2], entry[3]
                mine = (error,)
                theirs = (self.coordinator.validate_offset_commit(self.config.group_id, request.member_id,
                                                                  request.instance_id, request.epoch, 9).name,)
            else:
                continue
            self.compared += 1
            if mine != theirs:
                return f"the answer to {request!r}: model {mine!r}, impl {theirs!r}"
        return None

    def _tick(self, new, log: list) -> None:
        self.timer.advance_clock(new.now)
        self.time.set_current_time_ms(new.now)
        return None
