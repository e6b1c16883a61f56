"""The consumer side of KIP-848 (``group.protocol=consumer``) in Kafka 4.1's class shapes: the
member's states (:mod:`.member_state`), its membership and reconciliation
(:mod:`.membership_manager`), its heartbeats (:mod:`.heartbeat_request_manager`), and what the
application's poll and close and the background thread do with them (:mod:`.async_consumer`)."""

from impl.membership.async_consumer import AsyncConsumerMembership
from impl.membership.member_state import MemberState

__all__ = ["AsyncConsumerMembership", "MemberState"]
