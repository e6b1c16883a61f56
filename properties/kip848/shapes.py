"""The model's KIP-848 requests and answers in Kafka's request shapes (:mod:`impl.protocol`), both
ways: what impl/'s coordinator is handed beside the model (:mod:`.differential`) and what goes on
the wire to a broker (:mod:`.conform`). The model's partitions are those of one topic; *topic_id*
names it (Kafka's Uuid string)."""

from __future__ import annotations

from typing import Optional, Tuple

from impl.protocol import (ConsumerGroupHeartbeatRequestData, ConsumerGroupHeartbeatResponseData,
                           ConsumerGroupHeartbeatTopicPartitions)
from model.kip848 import coordinator as coord


def to_request(request: coord.Request, group_id: str, topic_id: Optional[str],
               server_assignor: Optional[str] = None) -> ConsumerGroupHeartbeatRequestData:
    """The model's heartbeat as ConsumerGroupHeartbeatRequestData (its None fields stay None; no
    owned partitions is an empty list, as the Java consumer sends it)."""
    owned = None
    if request.owned is not None:
        owned = [ConsumerGroupHeartbeatTopicPartitions(topic_id, sorted(request.owned))] if request.owned else []
    return ConsumerGroupHeartbeatRequestData(
        group_id=group_id, member_id=request.member_id, member_epoch=request.epoch,
        rebalance_timeout_ms=request.rebalance_timeout_ms,
        subscribed_topic_names=None if request.subscribed is None else list(request.subscribed),
        server_assignor=server_assignor, topic_partitions=owned, instance_id=request.instance_id)


def error_name(code: int) -> str:
    """Kafka's name of an error code (every code Kafka 4 knows, from kio's table; ``ERROR_<n>``
    for one it does not), so an answer is never judged by a name it was not given."""
    from kio.schema.errors import ErrorCode

    try:
        return ErrorCode(code).name.upper()
    except ValueError:
        return f"ERROR_{code}"


def from_response(body: ConsumerGroupHeartbeatResponseData) -> Tuple[coord.Response, Optional[str]]:
    """A broker's (or impl/'s) answer in the model's terms, and the topic id its assignment names."""
    assignment, topic_id = None, None
    if body.assignment is not None:
        parts: set = set()
        for tp in body.assignment.topic_partitions:
            topic_id = tp.topic_id
            parts |= set(tp.partitions)
        assignment = frozenset(parts)
    error = error_name(body.error_code)
    return coord.Response(error, body.member_id or "", body.member_epoch, body.heartbeat_interval_ms, assignment), topic_id
