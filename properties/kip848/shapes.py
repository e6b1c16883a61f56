"""The model's KIP-848 requests and answers in Kafka's request shapes (:mod:`impl.protocol`), both
ways: what impl/'s coordinator is handed beside the model (:mod:`.differential`) and what goes on
the wire to a broker (:mod:`.conform`). The model's partitions are those of one topic; *topic_id*
names it (Kafka's Uuid string)."""

from __future__ import annotations

from typing import Optional, Tuple

from impl import protocol as P
from impl.protocol import (ConsumerGroupHeartbeatRequestData, ConsumerGroupHeartbeatResponseData,
                           ConsumerGroupHeartbeatTopicPartitions)
from model.kip848 import classic
from model.kip848 import coordinator as coord


#: how a client library shapes the subscription of a full heartbeat: Kafka's AsyncKafkaConsumer sends
#: SubscribedTopicRegex null without a pattern (ConsumerHeartbeatRequestManager.HeartbeatState
#: .buildRequestData), librdkafka an empty regex beside the names
#: (rd_kafka_topic_partition_list_combine_regexes: ``rd_kafkap_str_new("", 0)``); Kafka reads an
#: empty regex as none (GroupMetadataManager.maybeUpdateRegularExpressions: ``isNotEmpty``)
SHAPES = {"java": None, "librdkafka": ""}


def to_request(request: coord.Request, group_id: str, topic_id: Optional[str],
               server_assignor: Optional[str] = None, shape: str = "java") -> ConsumerGroupHeartbeatRequestData:
    """The model's heartbeat as ConsumerGroupHeartbeatRequestData (its None fields stay None; no
    owned partitions is an empty list, as the Java consumer sends it), the regex beside the topic
    names as the client library *shape* sends it (:data:`SHAPES`)."""
    owned = None
    if request.owned is not None:
        owned = [ConsumerGroupHeartbeatTopicPartitions(topic_id, sorted(request.owned))] if request.owned else []
    return ConsumerGroupHeartbeatRequestData(
        group_id=group_id, member_id=request.member_id, member_epoch=request.epoch,
        rebalance_timeout_ms=request.rebalance_timeout_ms,
        subscribed_topic_names=None if request.subscribed is None else list(request.subscribed),
        subscribed_topic_regex=None if request.subscribed is None else SHAPES[shape],
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


# -- classic members inside a consumer group (model.kip848.classic) ---------------------------
CLASSIC_VERSIONS = {"JoinGroup": 9, "SyncGroup": 5, "Heartbeat": 4, "LeaveGroup": 5}  # what Kafka 4.1's consumer sends


def classic_to_wire(request, group_id: str, topic: str):
    """A classic request of the model (Join, Sync, Beat, Leave) as impl.protocol's request data, and
    its API's name: the JoinGroup's protocols each carry the ConsumerProtocol subscription of
    *topic* with the owned partitions, as the Java consumer's ConsumerCoordinator.metadata does."""
    if isinstance(request, classic.Join):
        def subscription():  # one per protocol (the codec keeps the bytes it encoded on the value)
            return P.Subscription(topics=list(request.subscribed),
                                  owned_partitions=[P.TopicPartition(topic, p) for p in sorted(request.owned)])

        wire = P.JoinGroupRequestData(group_id=group_id, session_timeout_ms=request.session_timeout_ms,
                                      rebalance_timeout_ms=request.rebalance_timeout_ms, member_id=request.member_id,
                                      protocol_type=request.protocol_type,
                                      protocols=[P.JoinGroupRequestProtocol(name, subscription())
                                                 for name in request.protocols])
        return wire, "JoinGroup"
    if isinstance(request, classic.Sync):
        return P.SyncGroupRequestData(group_id=group_id, generation_id=request.generation, member_id=request.member_id,
                                      protocol_type=request.protocol_type, protocol_name=request.protocol_name,
                                      assignments=[]), "SyncGroup"
    if isinstance(request, classic.Beat):
        return P.HeartbeatRequestData(group_id=group_id, generation_id=request.generation,
                                      member_id=request.member_id), "Heartbeat"
    if isinstance(request, classic.Leave):
        return P.LeaveGroupRequestData(group_id=group_id, members=[P.MemberIdentity(request.member_id)]), "LeaveGroup"
    raise TypeError(f"not a classic request of the model: {request!r}")


def classic_from_wire(api: str, body, topic: str):
    """A broker's answer to a classic request in the model's terms (classic.Answer): a JoinGroup's
    error, member id, generation and protocol name; a SyncGroup's error, protocol name and the
    partitions of *topic* it assigns (another topic's partition shows as -1, which no model
    assignment holds); a Heartbeat's error; a LeaveGroup's top-level error, else its member's."""
    error = error_name(body.error_code)
    if api == "JoinGroup":
        return classic.Answer(error, body.member_id, body.generation_id, body.protocol_name)
    if api == "SyncGroup":
        assignment = None
        if error == classic.NONE and body.assignment is not None:
            assignment = frozenset(tp.partition if tp.topic == topic else -1 for tp in body.assignment.partitions)
        elif error == classic.NONE:
            assignment = frozenset()
        return classic.Answer(error, protocol_name=body.protocol_name, assignment=assignment)
    if api == "LeaveGroup" and error == classic.NONE and body.members:
        return classic.Answer(error_name(body.members[0].error_code))
    return classic.Answer(error)
