"""What must hold in a KIP-848 world: the properties, and the checker that looks after every step.

The properties share the shapes of :mod:`properties.catalogue` (:class:`Property`,
:class:`Violation`); their names start with ``kip848-``. ``always`` ones are checked after every
event by :class:`Checker` (over the world before and after and the step's log);
``kip848-converges`` is the ``eventually`` one, checked by :func:`converged` at the end of a walk's
quiet phase.
"""

from __future__ import annotations

from model.kip848 import coordinator as coord
from model.kip848 import membership as mm
from model.kip848.assignment import NO_EPOCH, UNREVOKED_PARTITIONS
from properties.catalogue import ALWAYS, EVENTUALLY, Property, Violation

GMM = "GroupMetadataManager.consumerGroupHeartbeat"
CAB = "CurrentAssignmentBuilder.computeNextAssignment"

CATALOGUE = (
    Property(
        "kip848-one-owner-per-partition", ALWAYS,
        "The coordinator never has a partition in two members' assigned or pending-revocation "
        "partitions at once, and adds a partition to a member's assigned partitions only when its "
        "partition epoch is -1 (nobody owns it) or the member itself is revoking it: a partition "
        "moves only after its owner gave it up.",
        f"{CAB} (unreleased partitions); ConsumerGroup.addPartitionEpochs; KAFKA-16147",
    ),
    Property(
        "kip848-partition-epochs-match", ALWAYS,
        "A partition's epoch is its owner's member epoch, and -1 exactly when no member holds it; "
        "the coordinator never reaches addPartitionEpochs' IllegalStateException.",
        "ConsumerGroup.maybeUpdatePartitionEpoch, removePartitionEpochs, addPartitionEpochs",
    ),
    Property(
        "kip848-no-two-owners-at-one-epoch", ALWAYS,
        "No two consumers hold the same partition while at the same member epoch: an old owner that "
        "has not let go is at an older epoch than the new one.",
        "KIP-848 §Reconciliation; KAFKA-19974",
    ),
    Property(
        "kip848-epochs-bounded", ALWAYS,
        "Member epochs never pass the target assignment's epoch, which never passes the group epoch; "
        "the group epoch never decreases; a consumer's epoch never passes the target epoch either.",
        f"{GMM} (steps 1-3); CurrentAssignmentBuilder.updateMemberEpoch",
    ),
    Property(
        "kip848-target-is-a-partition", ALWAYS,
        "Whenever the group is not ASSIGNING (its target is at the group epoch), the target "
        "assignment gives each partition of the topic to exactly one subscribed member (none when no "
        "member is subscribed).",
        "TargetAssignmentBuilder; RangeAssignor.assignHomogeneousGroup",
    ),
    Property(
        "kip848-revocation-bounded", ALWAYS,
        "A member the coordinator holds in UNREVOKED_PARTITIONS has a rebalance timer for that "
        "epoch that has not run out: a member that never releases its partitions is fenced within "
        "its rebalance timeout (max.poll.interval.ms), so the others can get them.",
        "GroupMetadataManager.maybeReconcile, scheduleConsumerGroupRebalanceTimeout",
    ),
    Property(
        "kip848-commit-fencing", ALWAYS,
        "An OffsetCommit from a member is accepted only at the member's current epoch (or, at epoch "
        "-1, by a group without members): an old owner's commit after its partitions moved is refused "
        "with STALE_MEMBER_EPOCH.",
        "OffsetMetadataManager.validateOffsetCommit; ConsumerGroup.validateOffsetCommit, validateMemberEpoch",
    ),
    Property(
        "kip848-legal-member-transitions", ALWAYS,
        "A consumer's member state changes only along MemberState's table of valid previous states.",
        "clients: MemberState (static block), AbstractMembershipManager.transitionTo",
    ),
    Property(
        "kip848-outside-owns-nothing", ALWAYS,
        "A consumer that is joining, unsubscribed, stale or failed holds no partitions: it released "
        "them (onPartitionsRevoked or onPartitionsLost) on its way out — a failed one, as a fenced "
        "one, when the application's next poll has run onPartitionsLost.",
        "AbstractMembershipManager.transitionToFenced, transitionToStale, leaveGroup, clearAssignment",
    ),
    Property(
        "kip848-one-member-per-instance-id", ALWAYS,
        "No two members of the group have the same instance id: a static member that joins takes "
        "the instance id over from a departed one (epoch -2), or is refused while another member "
        "holds it.",
        "GroupMetadataManager.getOrMaybeSubscribeStaticConsumerGroupMember, replaceMember, "
        "throwIfInstanceIdIsUnreleased; ConsumerGroup.staticMembers",
    ),
    Property(
        "kip848-converges", EVENTUALLY,
        "After the faults stop, every live consumer that is still subscribed ends STABLE holding its "
        "target partitions at the target epoch, and the group is STABLE. A consumer made FATAL by "
        "UNRELEASED_INSTANCE_ID while another process held its instance id is out of this check: "
        "Kafka's client gives up by design (the application's poll throws; it must restart the "
        "consumer); the coverage's 'answer UNRELEASED_INSTANCE_ID' counts such answers.",
        "KIP-848 §Reconciliation; Vanlightly/kafka-tlaplus EventuallyConverges",
    ),
)
BY_NAME = {p.name: p for p in CATALOGUE}

# What the implementation beside the model must do (properties.kip848.differential): agree with the
# model's coordinator, and never raise.
IMPL_AGREEMENT = "kip848-impl-matches-model"
IMPL_CONSUMER_AGREEMENT = "kip848-impl-consumer-matches-model"
IMPL_CRASH = "kip848-impl-no-crash"
IMPL_HANG = "kip848-impl-no-hang"
IMPL_PROPERTIES = (
    Property(
        IMPL_AGREEMENT, ALWAYS,
        "impl/'s KIP-848 coordinator (impl.server.modern), handed every heartbeat and commit the "
        "model's coordinator handles, at the same times, answers each as the model does (the error; "
        "for a success the member id, epoch, heartbeat interval and assignment or its absence), and "
        "after every heartbeat, commit and tick holds the same group: epochs, state, members (epoch, "
        "previous epoch, state, assigned and pending-revocation partitions, rebalance timeout), "
        "target assignment, partition epochs, and session and rebalance deadlines.",
        "issue 39 (the implementation beside the model)",
    ),
    Property(
        IMPL_CONSUMER_AGREEMENT, ALWAYS,
        "impl/'s KIP-848 consumer (impl.membership: Kafka's ConsumerMembershipManager and "
        "ConsumerHeartbeatRequestManager), one per consumer process, driven by the same polls, "
        "background iterations, answers (impl/'s coordinator's), timeouts, closes and restarts as the "
        "model's consumer, sends the same heartbeat at the same moment (every field of "
        "ConsumerGroupHeartbeatRequestData) and holds the same membership after every event: state, "
        "member epoch, the assignment it holds and the target it reconciles to.",
        "issue 39 (the implementation beside the model); Kafka 4.1 AbstractMembershipManager, "
        "AbstractHeartbeatRequestManager",
    ),
    Property(
        IMPL_CRASH, ALWAYS,
        "No event makes impl/'s KIP-848 coordinator or consumer raise (Kafka's own "
        "IllegalStateException of addPartitionEpochs included).",
        "issue 39; ConsumerGroup.addPartitionEpochs",
    ),
    Property(
        IMPL_HANG, ALWAYS,
        "No event keeps impl/'s KIP-848 coordinator or consumer busy for more than "
        "properties.systems.watchdog.HANG_SECONDS of wall time: the watchdog interrupts it and reports "
        "where it was.",
        "issue 39; issue 14 (sharper eyes)",
    ),
)

# Known hazards: what Kafka's own client and coordinator allow that one of the properties above
# rules out. A walk that reaches one ends there as any violation does, but its verdict is the
# hazard's, which is reported (with the reason) and fails nothing.
HAZARD = "hazard"
STALE_TARGET = "kip848-hazard-stale-target-after-full-heartbeat"
STATIC_SELF_UNRELEASED = "kip848-hazard-static-member-refused-its-own-instance-id"
ANSWER_FROM_BEFORE_LEAVE = "kip848-hazard-answer-to-a-heartbeat-from-before-a-leave"
HAZARDS = (
    Property(
        STALE_TARGET, HAZARD,
        "Two consumers hold one partition at one epoch because one of them took it from a target "
        "received before a heartbeat of its that reported the partitions it owned without it: a "
        "heartbeat failed (a lost answer, a timeout), the next one was a full one and reported the "
        "consumer's current assignment, which its pending reconciliation had not reached; the "
        "coordinator read the missing partition as released (ownsRevokedPartitions) and gave it to "
        "another member; then the consumer's reconciliation, towards the target it last received, "
        "took it. Kafka 4.1's Java consumer and coordinator allow this; it breaks "
        "kip848-no-two-owners-at-one-epoch until the consumer hears of its new epoch and revokes.",
        "clients: ConsumerHeartbeatRequestManager.HeartbeatState.buildRequestData (owned = "
        "currentAssignment after reset), AbstractMembershipManager.maybeReconcile (towards "
        "currentTargetAssignment); group-coordinator: CurrentAssignmentBuilder.ownsRevokedPartitions",
    ),
    Property(
        ANSWER_FROM_BEFORE_LEAVE, HAZARD,
        "Two consumers hold one partition at one epoch because one of them took it from the answer "
        "to a heartbeat it sent before it left: its poll timer ran out while that heartbeat was in "
        "flight, so it left (epoch -1, or -2) and reset its request state, which cancels nothing; "
        "its application polled and it rejoined at epoch 0 reporting no partitions, so the "
        "coordinator gave them to others; then the old heartbeat's answer came and its continuation "
        "ran: the consumer took that answer's epoch and assignment (a JOINING member can take a new "
        "assignment) and reconciled to it. Kafka 4.1's Java consumer does this; it breaks "
        "kip848-no-two-owners-at-one-epoch until the rejoin's answer gives the consumer its new "
        "epoch and it revokes.",
        "clients: AbstractHeartbeatRequestManager.poll (the leave, then heartbeatRequestState.reset()) "
        "and makeHeartbeatRequest (the continuation: onResponse), ConsumerMembershipManager."
        "onHeartbeatSuccess, MemberState.canHandleNewAssignment (JOINING)",
    ),
    Property(
        STATIC_SELF_UNRELEASED, HAZARD,
        "A static member that joins again at epoch 0 with its own member id — its join's answer was "
        "lost or timed out, or it was answered FENCED_MEMBER_EPOCH — while the coordinator still "
        "has it at an epoch other than -2, is answered UNRELEASED_INSTANCE_ID: the coordinator "
        "reads the join as another process taking the instance id (it does not compare member "
        "ids), and Kafka's Java consumer treats the error as fatal. A dynamic member in the same "
        "place gets its assignment back. Kafka 4.1 does this; apache/kafka#23542 (open) proposes "
        "to take a known member id's join in place.",
        "group-coordinator: GroupMetadataManager.getOrMaybeSubscribeStaticConsumerGroupMember, "
        "throwIfInstanceIdIsUnreleased; clients: ConsumerHeartbeatRequestManager.handleSpecificErrors "
        "(UNRELEASED_INSTANCE_ID: handleFatalFailure); apache/kafka#23542",
    ),
)
KIND_OF = {p.name: p.kind for p in CATALOGUE + IMPL_PROPERTIES + HAZARDS}
# the fatal error that puts a consumer out of kip848-converges (see its statement)
BY_DESIGN_FATAL = (coord.UNRELEASED_INSTANCE_ID,)

# states in which a consumer holds no partitions (FENCED still does until its poll runs
# onPartitionsLost; LEAVING/PREPARE_LEAVING were cleared by close or still hold until STALE)
_EMPTY_HANDED = (mm.JOINING, mm.UNSUBSCRIBED, mm.STALE, mm.FATAL)


def _v(name: str, message: str) -> Violation:
    return Violation(name, message)


class Checker:
    """The always properties over one walk's successive worlds, and the known hazards."""

    def __init__(self, config):
        self.config = config
        self.events = 0
        # per member id: when it last received a target, when and what it last reported as owned,
        # and the partitions it took from a target older than that report (STALE_TARGET)
        self._held = None  # the last group object the checks of a group alone passed on
        self.target_at: dict = {}  # (member id, target's local epoch) -> when it was received
        self.last_target: dict = {}  # member id -> (local epoch, partitions) of its latest target
        self.reported: dict = {}
        self.stale: dict = {}
        # ANSWER_FROM_BEFORE_LEAVE: per member id the sequence number of its latest leave, the
        # targets (by local epoch) it took from answers to heartbeats sent before one, and the
        # partitions it holds from those
        self.left_at: dict = {}
        self.orphan_targets: set = set()
        self.orphaned: dict = {}

    def check(self, before, after, event, log) -> Violation | None:
        self.events += 1
        self._track(after, log)
        group = after.group
        fresh = group is not self._held  # what held of a group object holds of it again (it is immutable)
        return ((fresh and self._members(group)) or self._static(before.group, log)
                or self._group(before.group, group, log) or (fresh and self._partitions(group))
                or self._clients(after) or self._transitions(log) or self._bounds(after)
                or self._commits(before.group, log))

    def _members(self, group) -> Violation | None:
        """One member per instance id."""
        holders: dict = {}
        for m in group.members:
            if m.instance_id is not None:
                if m.instance_id in holders:
                    return _v("kip848-one-member-per-instance-id",
                              f"{holders[m.instance_id]} and {m.member_id} both hold instance id {m.instance_id}")
                holders[m.instance_id] = m.member_id
        return None

    def _static(self, before, log) -> Violation | None:
        """The hazard of a static member refused its own instance id."""
        for entry in log:
            if entry[0] == "answered" and entry[4].error == coord.UNRELEASED_INSTANCE_ID:
                request = entry[3]
                holder = before.static_member(request.instance_id)
                if holder is not None and holder.member_id == request.member_id:
                    return _v(STATIC_SELF_UNRELEASED,
                              f"{request.member_id} joined at epoch 0 with instance id {request.instance_id}, which "
                              f"it holds itself at epoch {holder.epoch}, and was answered UNRELEASED_INSTANCE_ID "
                              "(fatal for the consumer)")
        return None

    def _track(self, world, log) -> None:
        """What STALE_TARGET's classification needs, from the step's log."""
        for entry in log:
            if entry[0] == "received" and entry[3].assignment is not None:
                client = world.clients[entry[1]]
                if client is not None and client.target is not None:
                    # when the consumer received its target of this local epoch (a reconciliation
                    # started from it completes later, whatever newer target arrived meanwhile)
                    target = (client.target_local_epoch, client.target)
                    if self.last_target.get(client.member_id) != target:
                        self.last_target[client.member_id] = target
                        self.target_at[(client.member_id, client.target_local_epoch)] = self.events
                    if entry[2] < self.left_at.get(client.member_id, 0):  # the answer to a heartbeat from before a leave
                        self.orphan_targets.add((client.member_id, client.target_local_epoch))
            elif entry[0] == "sent" and isinstance(entry[3], coord.Request):
                if entry[3].owned is not None:
                    self.reported[entry[3].member_id] = (self.events, entry[3].owned)
                if entry[3].epoch < 0:
                    self.left_at[entry[3].member_id] = entry[2]
            elif entry[0] == "reconciled":
                mid, added, local_epoch = entry[1], entry[4], entry[5]
                at, owned = self.reported.get(mid, (-1, frozenset()))
                if at > self.target_at.get((mid, local_epoch), -1):
                    self.stale[mid] = self.stale.get(mid, frozenset()) | frozenset(p for p in added if p not in owned)
                if (mid, local_epoch) in self.orphan_targets:
                    self.orphaned[mid] = self.orphaned.get(mid, frozenset()) | frozenset(added)
        for client in world.clients:
            if client is not None and client.member_id in self.stale:
                self.stale[client.member_id] &= client.owned
            if client is not None and client.member_id in self.orphaned:
                self.orphaned[client.member_id] &= client.owned

    def _hazard(self, world, c: int, p: int) -> bool:
        """Consumer *c* holds *p* as STALE_TARGET describes: it took it from a target older than its
        last report of what it owned, and the coordinator no longer counts it as its member's."""
        client = world.clients[c]
        member = world.group.member(client.member_id)
        return p in self.stale.get(client.member_id, ()) and (member is None or p not in member.assigned | member.revoking)

    def _commits(self, group, log) -> Violation | None:
        for entry in log:
            if entry[0] == "committed":
                _, mid, epoch = entry
                member = group.member(mid)
                ok = member.epoch == epoch if member is not None else (epoch < 0 and not group.members)
                if not ok:
                    held = "no such member" if member is None else f"the member is at epoch {member.epoch}"
                    return _v("kip848-commit-fencing", f"a commit of {mid} at epoch {epoch} was accepted; {held}")
        return None

    def _group(self, before, group, log) -> Violation | None:
        """The coordinator's handing over of partitions, from *before* to *group*; the most
        specific property first (a partition handed over too early breaks the ones after it as
        well: :meth:`_partitions`)."""
        if group is not before:
            for m in group.members:
                old = before.member(m.member_id)
                gained = m.assigned - old.assigned if old is not None else m.assigned
                for p in sorted(gained) if gained else ():
                    was = before.partition_epochs[p] if before.partition_epochs else NO_EPOCH
                    own = (old is not None and p in old.revoking) or _taken_over(before, group, m, p)
                    if was != NO_EPOCH and not own:
                        return _v("kip848-one-owner-per-partition",
                                  f"partition {p} was given to {m.member_id} while still owned at epoch {was}")
        for entry in log:
            if entry[0] == "breach":
                return _v("kip848-partition-epochs-match", f"the coordinator would throw: {entry[1]}")
        return None

    def _partitions(self, group) -> Violation | None:
        """The coordinator's group alone: one owner per partition, the partition epochs its
        owners', the target a partition of the topic."""
        owner: dict = {}
        for m in group.members:
            for p in sorted(m.assigned | m.revoking):
                if p in owner:
                    return _v("kip848-one-owner-per-partition",
                              f"partition {p} is held by {owner[p]} and by {m.member_id}")
                owner[p] = m.member_id
        for p, epoch in enumerate(group.partition_epochs):
            m = group.member(owner[p]) if p in owner else None
            expected = NO_EPOCH if m is None else m.epoch
            if epoch != expected:
                held = "nobody holds it" if m is None else f"{m.member_id} holds it at epoch {m.epoch}"
                return _v("kip848-partition-epochs-match", f"partition {p} has epoch {epoch}; {held}")
        if group.assignment_epoch > 0 and group.assignment_epoch == group.epoch:  # not ASSIGNING
            # (fencing tombstones the fenced member's target and bumps the group epoch: the
            # target is whole again once the next heartbeat recomputes it)
            given = sorted(p for _, parts in group.target for p in parts)
            subscribed = any(m.subscribed for m in group.members)
            if given != (list(range(self.config.partitions)) if subscribed else []):
                return _v("kip848-target-is-a-partition",
                          f"the target at epoch {group.assignment_epoch} gives {given}")
        self._held = group  # (only ever after _members passed on it too)
        return None

    def _clients(self, world) -> Violation | None:
        seen: dict = {}
        two = None
        for c, client in enumerate(world.clients):
            if client is None:
                continue
            if client.owned and client.state in _EMPTY_HANDED and not client.releasing:
                return _v("kip848-outside-owns-nothing",
                          f"consumer {c} is {client.state} and holds {sorted(client.owned)}")
            if client.epoch <= 0:
                continue
            for p in sorted(client.owned):
                other = seen.setdefault((client.epoch, p), c)
                if other != c and two is None:
                    two = (other, c, p, client.epoch)
        if two is not None:
            other, c, p, epoch = two
            message = f"consumers {other} and {c} both hold partition {p} at epoch {epoch}"
            stale = [x for x in (other, c) if self._hazard(world, x, p)]
            if stale:
                return _v(STALE_TARGET, f"{message}; consumer {stale[0]} took it from a target older than its "
                                        "last report of what it owned, and the coordinator has released it")
            orphan = [x for x in (other, c) if p in self.orphaned.get(world.clients[x].member_id, ())]
            if orphan:
                return _v(ANSWER_FROM_BEFORE_LEAVE, f"{message}; consumer {orphan[0]} took it from the answer to a "
                                                    "heartbeat it sent before it left and rejoined")
            return _v("kip848-no-two-owners-at-one-epoch", message)
        return None

    def _transitions(self, log) -> Violation | None:
        for entry in log:
            if entry[0] == "transition":
                _, mid, old, new = entry
                if old not in mm.PREVIOUS_VALID_STATES[new]:
                    return _v("kip848-legal-member-transitions", f"{mid} went from {old} to {new}")
        return None

    def _bounds(self, world) -> Violation | None:
        group = world.group
        timers = {mid: (epoch, due) for mid, epoch, due in group.rebalances}
        for m in group.members:
            if m.state == UNREVOKED_PARTITIONS and m.epoch >= 0:  # (a departed static member's session bounds it)
                epoch, due = timers.get(m.member_id, (None, None))
                if epoch != m.epoch or due < world.now:
                    held = "none" if epoch is None else f"one for epoch {epoch} due at {due}"
                    return _v("kip848-revocation-bounded",
                              f"{m.member_id} is revoking at epoch {m.epoch} at {world.now} ms with a rebalance timer: {held}")
        if group.assignment_epoch > group.epoch:
            return _v("kip848-epochs-bounded",
                      f"the target epoch {group.assignment_epoch} passed the group epoch {group.epoch}")
        for m in group.members:
            if m.epoch > group.assignment_epoch:
                return _v("kip848-epochs-bounded",
                          f"{m.member_id} is at epoch {m.epoch}, past the target epoch {group.assignment_epoch}")
        for c, client in enumerate(world.clients):
            if client is not None and client.epoch > group.assignment_epoch:
                return _v("kip848-epochs-bounded",
                          f"consumer {c} is at epoch {client.epoch}, past the target epoch {group.assignment_epoch}")
        return None


def _taken_over(before, group, member, p: int) -> bool:
    """*member* got partition *p* by replacing the departed static member (epoch -2) that held it
    under the same instance id (replaceMember: the assignment carried over)."""
    departed = before.static_member(member.instance_id)
    return (departed is not None and departed.epoch == coord.STATIC_LEAVE_EPOCH and p in departed.assigned
            and group.member(departed.member_id) is None)


def converged(world, config) -> Violation | None:
    """kip848-converges, at the end of a quiet phase."""
    group = world.group
    for c, client in enumerate(world.clients):
        if client is None or client.closed or (client.state == mm.FATAL and client.fatal in BY_DESIGN_FATAL):
            continue
        member = group.member(client.member_id)
        if member is None:
            return _v("kip848-converges", f"consumer {c} ({client.member_id}, {client.state}) is not a member")
        target = group.target_of(client.member_id)
        if (client.state != mm.STABLE or client.epoch != group.assignment_epoch or client.owned != target
                or not member.reconciled_to(group.assignment_epoch)):
            return _v("kip848-converges",
                      f"consumer {c} is {client.state} at epoch {client.epoch} holding {sorted(client.owned)}; "
                      f"the coordinator has it {member.state} at epoch {member.epoch}, target "
                      f"{sorted(target)} at epoch {group.assignment_epoch}")
    if coord.state(group) not in (coord.STABLE, coord.EMPTY):
        return _v("kip848-converges", f"the group is {coord.state(group)}")
    return None
