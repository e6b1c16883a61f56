"""``MemberState``: the states of a KIP-848 consumer's membership and the states each may be
entered from (Kafka 4.1's ``clients/consumer/internals/MemberState.java``, its static block)."""

from __future__ import annotations

import enum


class MemberState(enum.Enum):
    UNSUBSCRIBED = "UNSUBSCRIBED"
    JOINING = "JOINING"
    RECONCILING = "RECONCILING"
    ACKNOWLEDGING = "ACKNOWLEDGING"
    STABLE = "STABLE"
    FENCED = "FENCED"
    PREPARE_LEAVING = "PREPARE_LEAVING"
    LEAVING = "LEAVING"
    FATAL = "FATAL"
    STALE = "STALE"

    @property
    def previous_valid_states(self) -> tuple:
        return _PREVIOUS_VALID_STATES[self]

    def can_handle_new_assignment(self) -> bool:
        """``canHandleNewAssignment``: a state RECONCILING may be entered from."""
        return self in _PREVIOUS_VALID_STATES[MemberState.RECONCILING]


S = MemberState
_PREVIOUS_VALID_STATES = {
    S.STABLE: (S.JOINING, S.ACKNOWLEDGING, S.RECONCILING),
    S.RECONCILING: (S.STABLE, S.JOINING, S.ACKNOWLEDGING, S.RECONCILING),
    S.ACKNOWLEDGING: (S.RECONCILING,),
    S.FATAL: (S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING, S.LEAVING, S.UNSUBSCRIBED),
    S.FENCED: (S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING, S.LEAVING),
    S.JOINING: (S.FENCED, S.UNSUBSCRIBED, S.STALE),
    S.PREPARE_LEAVING: (S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.UNSUBSCRIBED),
    S.LEAVING: (S.PREPARE_LEAVING,),
    S.UNSUBSCRIBED: (S.PREPARE_LEAVING, S.LEAVING, S.FENCED),
    S.STALE: (S.LEAVING,),
}
del S
