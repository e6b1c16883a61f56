"""Group and member state of the classic group coordinator
(``kafka.coordinator.group.{GroupMetadata, MemberMetadata}``; protocol reference §1.1–§1.2, §1.6).

Differences from the Scala classes that matter for reading this code:

* ``members`` is a ``dict`` (insertion order) where Kafka has a ``HashMap`` with unspecified
  order.  Every order-dependent choice Kafka leaves to the hash map is made here in insertion
  order and isolated in a small method: leader re-pick after the leader is removed
  (:meth:`GroupMetadata.choose_leader_after_removal`: the first remaining member), the leader
  elected at join completion when the old leader did not rejoin
  (:meth:`GroupMetadata.maybe_elect_new_joined_leader`: the first member awaiting join), and the
  protocol-vote tie-break (:meth:`GroupMetadata.select_protocol`: the first candidate in
  ``supported_protocols`` order).
* Sets whose order can matter (``pending_members``, ``pending_sync_members``) are dicts used as
  ordered sets.
* Member protocol metadata and assignments are Python values (:class:`impl.protocol.Subscription`,
  :class:`impl.protocol.Assignment`) instead of bytes; ``None`` stands for Kafka's empty byte
  array (``member.assignment`` before a SyncGroup completes, or after it is reset).
* Callbacks are cleared *before* they are invoked (Kafka clears them right after), so a callback
  that synchronously re-enters the coordinator sees a consistent group.
"""

from __future__ import annotations

import enum
import uuid
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

from impl.errors import Errors, IllegalArgumentException, IllegalStateException
from impl.protocol import JoinGroupResponseData, JoinGroupResponseMember, Subscription, SyncGroupResponseData

__all__ = [
    "GroupState", "PREPARING_REBALANCE", "COMPLETING_REBALANCE", "STABLE", "DEAD", "EMPTY",
    "MemberMetadata", "GroupMetadata", "NO_GENERATION", "NO_LEADER", "NO_PROTOCOL",
    "MEMBER_ID_DELIMITER",
]

#: ``GroupMetadata.NoGeneration`` / ``NoLeader`` / ``NoProtocol`` (None in Option-typed fields).
NO_GENERATION = -1
NO_LEADER = ""
NO_PROTOCOL = ""
MEMBER_ID_DELIMITER = "-"

#: A member's supported protocols: ``((name, metadata), ...)`` in preference order.
Protocols = Tuple[Tuple[str, Subscription], ...]


class GroupState(enum.Enum):
    """``GroupState`` (sealed trait + case objects in Scala); values are Kafka's state names."""

    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"
    EMPTY = "Empty"

    @property
    def valid_previous_states(self) -> FrozenSet["GroupState"]:
        return _VALID_PREVIOUS_STATES[self]

    def __str__(self) -> str:
        return self.value


PREPARING_REBALANCE = GroupState.PREPARING_REBALANCE
COMPLETING_REBALANCE = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE
DEAD = GroupState.DEAD
EMPTY = GroupState.EMPTY

_VALID_PREVIOUS_STATES = {
    PREPARING_REBALANCE: frozenset((STABLE, COMPLETING_REBALANCE, EMPTY)),
    COMPLETING_REBALANCE: frozenset((PREPARING_REBALANCE,)),
    STABLE: frozenset((COMPLETING_REBALANCE,)),
    DEAD: frozenset((STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD)),
    EMPTY: frozenset((PREPARING_REBALANCE,)),
}

_CAN_REBALANCE = frozenset((STABLE, COMPLETING_REBALANCE, EMPTY))


class MemberMetadata:
    """``MemberMetadata``: one member of a group, as the coordinator sees it (§1.1)."""

    __slots__ = ("member_id", "group_instance_id", "client_id", "client_host", "rebalance_timeout_ms",
                 "session_timeout_ms", "protocol_type", "supported_protocols", "assignment",
                 "awaiting_join_callback", "awaiting_sync_callback", "is_new", "heartbeat_satisfied")

    def __init__(self, member_id: str, group_instance_id: Optional[str], client_id: str,
                 client_host: str, rebalance_timeout_ms: int, session_timeout_ms: int,
                 protocol_type: str, supported_protocols: Protocols) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.supported_protocols = supported_protocols
        self.assignment = None  # Kafka: Array.empty[Byte]
        self.awaiting_join_callback: Optional[Callable] = None
        self.awaiting_sync_callback: Optional[Callable] = None
        self.is_new = False
        self.heartbeat_satisfied = False

    def is_awaiting_join(self) -> bool:
        return self.awaiting_join_callback is not None

    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync_callback is not None

    def is_static_member(self) -> bool:
        return self.group_instance_id is not None

    def protocols(self) -> List[str]:
        """``plainProtocolSet``: the protocol names, deduplicated, in preference order."""
        return list(dict.fromkeys(name for name, _ in self.supported_protocols))

    def metadata(self, protocol: str) -> Subscription:
        """The metadata this member sent for ``protocol``."""
        for name, metadata in self.supported_protocols:
            if name == protocol:
                return metadata
        raise IllegalArgumentException("Member does not support protocol " + str(protocol))

    def has_satisfied_heartbeat(self) -> bool:
        """Whether a session expiry should be ignored (§1.1): new members can be expired while
        awaiting join, so that is checked first; members awaiting a rebalance response otherwise
        satisfy expected heartbeats automatically."""
        if self.is_new:
            return self.heartbeat_satisfied
        if self.awaiting_join_callback is not None or self.awaiting_sync_callback is not None:
            return True
        return self.heartbeat_satisfied

    def matches(self, protocols: Protocols) -> bool:
        """Same number of protocols, same names in the same order, equal metadata."""
        mine = self.supported_protocols
        if len(protocols) != len(mine):
            return False
        for (name, metadata), (my_name, my_metadata) in zip(protocols, mine):
            if name != my_name or metadata != my_metadata:
                return False
        return True

    def vote(self, candidates: Sequence[str]) -> str:
        """The first protocol of this member's preference list that is a candidate."""
        for name, _ in self.supported_protocols:
            if name in candidates:
                return name
        raise IllegalArgumentException("Member does not support any of the candidate protocols")

    def __repr__(self) -> str:
        return ("MemberMetadata(memberId=%s, groupInstanceId=%s, clientId=%s, rebalanceTimeoutMs=%d, "
                "sessionTimeoutMs=%d, protocols=%s, isNew=%s, awaitingJoin=%s, awaitingSync=%s)" % (
                    self.member_id, self.group_instance_id, self.client_id, self.rebalance_timeout_ms,
                    self.session_timeout_ms, self.protocols(), self.is_new,
                    self.is_awaiting_join(), self.is_awaiting_sync()))


class GroupMetadata:
    """``GroupMetadata``: the state of one group (§1.1) and its state machine (§1.2)."""

    __slots__ = ("group_id", "state", "generation_id", "protocol_type", "protocol_name",
                 "leader_id", "members", "static_members", "pending_members",
                 "pending_sync_members", "num_members_awaiting_join", "supported_protocols",
                 "new_member_added", "offsets", "current_state_timestamp")

    def __init__(self, group_id: str, initial_state: GroupState = EMPTY) -> None:
        self.group_id = group_id
        self.state = initial_state
        self.generation_id = 0
        self.protocol_type: Optional[str] = None
        self.protocol_name: Optional[str] = None
        self.leader_id: Optional[str] = None
        self.members: Dict[str, MemberMetadata] = {}
        self.static_members: Dict[str, str] = {}
        self.pending_members: Dict[str, None] = {}
        self.pending_sync_members: Dict[str, None] = {}
        self.num_members_awaiting_join = 0
        self.supported_protocols: Dict[str, int] = {}
        self.new_member_added = False
        #: committed offsets: TopicPartition → OffsetAndMetadata (see group_metadata_manager)
        self.offsets: Dict = {}
        self.current_state_timestamp: Optional[int] = None

    # -- state machine ----------------------------------------------------------------------

    def current_state(self) -> GroupState:
        return self.state

    def is_state(self, state: GroupState) -> bool:
        return self.state is state

    def can_rebalance(self) -> bool:
        return self.state in _CAN_REBALANCE

    def transition_to(self, group_state: GroupState) -> None:
        self.assert_valid_transition(group_state)
        self.state = group_state

    def assert_valid_transition(self, target_state: GroupState) -> None:
        if self.state not in _VALID_PREVIOUS_STATES[target_state]:
            raise IllegalStateException(
                "Group %s should be in the %s states before moving to %s state. Instead it is in %s state"
                % (self.group_id, "(" + ", ".join(s.value for s in target_state.valid_previous_states) + ")",
                   target_state.value, self.state.value))

    # -- members ----------------------------------------------------------------------------

    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def get(self, member_id: str) -> MemberMetadata:
        member = self.members.get(member_id)
        if member is None:
            raise IllegalArgumentException("Member %s not found in group %s" % (member_id, self.group_id))
        return member

    def size(self) -> int:
        return len(self.members)

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def leader_or_null(self) -> str:
        leader = self.leader_id
        return NO_LEADER if leader is None else leader

    def add(self, member: MemberMetadata, callback: Optional[Callable] = None) -> None:
        instance_id = member.group_instance_id
        if instance_id is not None:
            if instance_id in self.static_members:
                raise IllegalStateException(
                    "Static member with groupInstanceId=%s cannot be added to group %s since it is already a member"
                    % (instance_id, self.group_id))
            self.static_members[instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            # the first member to join is the leader
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._inc_supported_protocols(member)
        member.awaiting_join_callback = callback
        if callback is not None:
            self.num_members_awaiting_join += 1
        self.pending_members.pop(member.member_id, None)

    def remove(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self._dec_supported_protocols(member)
            if member.awaiting_join_callback is not None:
                self.num_members_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.leader_id == member_id:
            self.leader_id = self.choose_leader_after_removal()
        self.pending_members.pop(member_id, None)
        self.pending_sync_members.pop(member_id, None)

    def choose_leader_after_removal(self) -> Optional[str]:
        """The new leader when the leader is removed: ``members.keys.headOption``."""
        for member_id in self.members:
            return member_id
        return None

    def maybe_elect_new_joined_leader(self) -> bool:
        """At join completion: keep the leader if it rejoined, else pick a member that rejoined.

        Returns False when there is no leader or no member is awaiting join.
        """
        leader_id = self.leader_id
        if leader_id is None:
            return False
        current_leader = self.members.get(leader_id)
        if current_leader is not None and current_leader.awaiting_join_callback is not None:
            return True
        for member_id, member in self.members.items():
            if member.awaiting_join_callback is not None:
                self.leader_id = member_id
                return True
        return False

    def update_member(self, member: MemberMetadata, protocols: Protocols, rebalance_timeout_ms: int,
                      session_timeout_ms: int, callback: Optional[Callable]) -> None:
        """Replace protocols/timeouts and (over)write the parked JoinGroup callback.

        A previously parked callback of the member is dropped without an answer (as in Kafka).
        """
        self._dec_supported_protocols(member)
        member.supported_protocols = protocols
        self._inc_supported_protocols(member)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if callback is not None and member.awaiting_join_callback is None:
            self.num_members_awaiting_join += 1
        elif callback is None and member.awaiting_join_callback is not None:
            self.num_members_awaiting_join -= 1
        member.awaiting_join_callback = callback

    def maybe_invoke_join_callback(self, member: MemberMetadata, join_group_result) -> None:
        """``maybeInvokeJoinCallback``: answer the parked JoinGroup. A callback that fails is
        called once more with ``JoinGroupResult(member.memberId, UNKNOWN_SERVER_ERROR)``, so the
        member still gets an answer (Kafka catches any Throwable, logs it and does the same)."""
        callback = member.awaiting_join_callback
        if callback is not None:
            member.awaiting_join_callback = None
            self.num_members_awaiting_join -= 1
            try:
                callback(join_group_result)
            except Exception:
                callback(JoinGroupResponseData(error_code=Errors.UNKNOWN_SERVER_ERROR.value,
                                               member_id=member.member_id))

    def maybe_invoke_sync_callback(self, member: MemberMetadata, sync_group_result) -> bool:
        """``maybeInvokeSyncCallback``: answer the parked SyncGroup; True if there was one. A
        callback that fails is called once more with ``SyncGroupResult(UNKNOWN_SERVER_ERROR)``."""
        callback = member.awaiting_sync_callback
        if callback is not None:
            member.awaiting_sync_callback = None
            try:
                callback(sync_group_result)
            except Exception:
                callback(SyncGroupResponseData(error_code=Errors.UNKNOWN_SERVER_ERROR.value))
            return True
        return False

    def not_yet_rejoined_members(self) -> Dict[str, MemberMetadata]:
        return {mid: m for mid, m in self.members.items() if m.awaiting_join_callback is None}

    def has_all_members_joined(self) -> bool:
        """Join completion condition: every member is parked in JoinGroup and no member id
        handed out with MEMBER_ID_REQUIRED is still outstanding."""
        return len(self.members) == self.num_members_awaiting_join and not self.pending_members

    def all_members(self) -> List[str]:
        return list(self.members)

    def all_static_members(self) -> List[str]:
        return list(self.static_members)

    def all_member_metadata(self) -> List[MemberMetadata]:
        return list(self.members.values())

    def num_awaiting(self) -> int:
        return self.num_members_awaiting_join

    def rebalance_timeout_ms(self) -> int:
        """The max rebalance timeout of the current members (0 when empty)."""
        timeout = 0
        for member in self.members.values():
            if member.rebalance_timeout_ms > timeout:
                timeout = member.rebalance_timeout_ms
        return timeout

    def generate_member_id(self, client_id: str, group_instance_id: Optional[str], rng) -> str:
        """``clientId-UUID`` (dynamic) or ``groupInstanceId-UUID`` (static); the UUID comes from
        the injected ``random.Random``."""
        prefix = client_id if group_instance_id is None else group_instance_id
        return prefix + MEMBER_ID_DELIMITER + str(uuid.UUID(int=rng.getrandbits(128), version=4))

    # -- pending members (MEMBER_ID_REQUIRED) and pending syncs -----------------------------

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_members

    def add_pending_member(self, member_id: str) -> bool:
        """``addPendingMember``: True if the id was not pending yet. An id that is already a
        member of the group cannot become pending again (Kafka throws IllegalStateException)."""
        if member_id in self.members:
            raise IllegalStateException("Attempt to add pending member %s which is already a stable member of the group"
                                        % (member_id,))
        if member_id in self.pending_members:
            return False
        self.pending_members[member_id] = None
        return True

    def add_pending_sync_member(self, member_id: str) -> None:
        if member_id not in self.members:
            raise IllegalStateException("Attempt to add pending sync member %s which is not a member of group %s"
                                        % (member_id, self.group_id))
        self.pending_sync_members[member_id] = None

    def remove_pending_sync_member(self, member_id: str) -> None:
        if member_id not in self.members:
            raise IllegalStateException("Attempt to remove pending sync member %s which is not a member of group %s"
                                        % (member_id, self.group_id))
        self.pending_sync_members.pop(member_id, None)

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    def all_pending_sync_members(self) -> List[str]:
        return list(self.pending_sync_members)

    def clear_pending_sync_members(self) -> None:
        self.pending_sync_members.clear()

    # -- static membership ------------------------------------------------------------------

    def current_static_member_id(self, group_instance_id: str) -> Optional[str]:
        return self.static_members.get(group_instance_id)

    def add_static_member(self, group_instance_id: str, member_id: str) -> None:
        self.static_members[group_instance_id] = member_id

    def replace_static_member(self, group_instance_id: str, old_member_id: str,
                              new_member_id: str, fenced_join_result, fenced_sync_result) -> MemberMetadata:
        """Swap ``old_member_id`` for ``new_member_id`` (same member object); a parked JoinGroup or
        SyncGroup of the old id is fenced with the given results."""
        member = self.members.pop(old_member_id, None)
        if member is None:
            raise IllegalArgumentException("Cannot replace non-existing member id " + old_member_id)
        # Fence potential duplicate member immediately if someone awaits join/sync callback.
        self.maybe_invoke_join_callback(member, fenced_join_result)
        self.maybe_invoke_sync_callback(member, fenced_sync_result)
        member.member_id = new_member_id
        self.members[new_member_id] = member
        if self.leader_id == old_member_id:
            self.leader_id = new_member_id
        self.static_members[group_instance_id] = new_member_id
        return member

    # -- protocols --------------------------------------------------------------------------

    def _inc_supported_protocols(self, member: MemberMetadata) -> None:
        counts = self.supported_protocols
        for name in member.protocols():
            counts[name] = counts.get(name, 0) + 1

    def _dec_supported_protocols(self, member: MemberMetadata) -> None:
        counts = self.supported_protocols
        for name in member.protocols():
            counts[name] = counts.get(name, 0) - 1

    def candidate_protocols(self) -> List[str]:
        """Protocols supported by every member, in ``supported_protocols`` order."""
        n = len(self.members)
        return [name for name, count in self.supported_protocols.items() if count == n]

    def select_protocol(self) -> str:
        """Every member votes for its most preferred candidate; most votes wins, ties go to the
        first candidate in candidate order."""
        if not self.members:
            raise IllegalStateException("Cannot select protocol for empty group")
        candidates = self.candidate_protocols()
        votes = dict.fromkeys(candidates, 0)
        for member in self.members.values():
            votes[member.vote(candidates)] += 1
        best, best_votes = None, -1
        for name, count in votes.items():
            if count > best_votes:
                best, best_votes = name, count
        return best

    def supports_protocols(self, member_protocol_type: str, member_protocols: Sequence[str]) -> bool:
        """Empty group: a non-empty type and protocol list; otherwise the same type and at least
        one protocol that every current member supports."""
        if self.state is EMPTY:
            return bool(member_protocol_type) and len(member_protocols) > 0
        if self.protocol_type != member_protocol_type:
            return False
        n = len(self.members)
        counts = self.supported_protocols
        for name in member_protocols:
            if counts.get(name, 0) == n:
                return True
        return False

    # -- generations ------------------------------------------------------------------------

    def init_next_generation(self, now_ms: Optional[int] = None) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition_to(COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self.transition_to(EMPTY)
        self.current_state_timestamp = now_ms
        self.clear_pending_sync_members()

    def current_member_metadata(self) -> List[JoinGroupResponseMember]:
        """The member list the leader receives in its JoinGroup response."""
        if self.state is DEAD or self.state is PREPARING_REBALANCE:
            raise IllegalStateException("Cannot obtain member metadata for group in state " + self.state.value)
        protocol = self.protocol_name
        return [JoinGroupResponseMember(member_id, member.group_instance_id, member.metadata(protocol))
                for member_id, member in self.members.items()]

    # -- offsets ----------------------------------------------------------------------------

    def has_offsets(self) -> bool:
        return bool(self.offsets)

    def remove_all_offsets(self) -> Dict:
        """``removeAllOffsets``: every committed offset, now removed, by partition."""
        removed, self.offsets = self.offsets, {}
        return removed

    def offset(self, topic_partition):
        return self.offsets.get(topic_partition)

    def all_offsets(self) -> Dict:
        return self.offsets

    # -- loading ----------------------------------------------------------------------------

    @staticmethod
    def load_group(group_id: str, initial_state: GroupState, generation_id: int, protocol_type: Optional[str],
                   protocol_name: Optional[str], leader_id: Optional[str], current_state_timestamp: Optional[int],
                   members: Sequence[MemberMetadata]) -> "GroupMetadata":
        """``GroupMetadata.loadGroup``: rebuild a group from its persisted record."""
        group = GroupMetadata(group_id, initial_state)
        group.generation_id = generation_id
        group.protocol_type = protocol_type if protocol_type else None
        group.protocol_name = protocol_name
        group.leader_id = leader_id
        group.current_state_timestamp = current_state_timestamp
        for member in members:
            # group.add registers static members too
            group.add(member, None)
        return group

    def __repr__(self) -> str:
        return ("GroupMetadata(groupId=%s, generation=%d, protocolType=%s, currentState=%s, leader=%s, "
                "members=%s)" % (self.group_id, self.generation_id, self.protocol_type, self.state.value,
                                 self.leader_id, list(self.members)))
