"""``KafkaApis`` for ``groupcheck broker``: every request that arrives over TCP, by API.

The group APIs (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch) and
Metadata go to the broker's :meth:`impl.server.broker.Broker.handle`, the same code the simulated
world runs. What only a real listener needs is here:

* ApiVersions advertising :data:`WIRE_API_VERSIONS` (the codec's versions of the APIs answered);
* FindCoordinator in every version, including v4+'s batch of keys (``KafkaApis.handleFindCoordinatorRequest``
  answers each key in ``coordinators``);
* topics created on first use, as Kafka's ``auto.create.topics.enable`` / ``num.partitions`` do, on a
  Metadata request that allows it and on Produce;
* Produce, Fetch and ListOffsets over the in-memory logs of :mod:`impl.server.log` — a Fetch that
  finds fewer than ``min_bytes`` waits up to ``max_wait_ms`` for a Produce, as in Kafka's fetch
  purgatory (``DelayedFetch``);
* DescribeGroups and ListGroups from the coordinators' groups (``GroupCoordinator.handleDescribeGroup``
  / ``handleListGroups``, ``GroupMetadata.summary``: member metadata and assignments only in Stable);
* DeleteGroups (``GroupCoordinator.handleDeleteGroups``): an Empty group deleted with its offsets;
* InitProducerId for idempotent producers, and their sequence checks on Produce
  (:mod:`impl.server.producer_state`), so that a default producer of Kafka's Java client (since
  3.0, KIP-679), kafka-python 3 or librdkafka with ``enable.idempotence`` can write here.

Transactions are not served. ``groupcheck broker`` answers as a Kafka whose authorizer grants no
transactional id: ``KafkaApis.handleInitProducerIdRequest`` answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED
(53) to a request with a transactional id, ``handleProduceRequest`` answers it on every partition of a
request holding transactional batches, and ``handleFindCoordinatorRequest`` answers it for a
transaction coordinator key — an error every client treats as fatal and names, where Kafka's other
answers (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) would have a transactional producer retry forever.

Each handler takes the decoded request and a ``respond(body)`` callback; ``respond(None)`` means
"no response, carry on" (Produce with acks=0).
"""

from __future__ import annotations

import base64
import uuid
from typing import Callable, Dict, List, Optional, Tuple

from impl import protocol as P
from impl.errors import Errors
from impl.server.cluster import Cluster
from impl.server.group_metadata import STABLE
from impl.server.log import InvalidRecordBatch, LogManager, batch_headers
from impl.server.topic_id import topic_id
from impl.server.producer_state import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, ProducerIdManager, ProducerStateError
from impl.wire import CODEC_VERSIONS
from impl.wire.apis import RESPONSE, kio_class
from impl.wire.build import build
from impl.wire.consumer_protocol import encode_assignment, encode_subscription

__all__ = ["KafkaApis", "WIRE_API_VERSIONS"]

#: What ``groupcheck broker`` advertises: the codec's range of each API it answers, except Produce
#: and Fetch, capped at the last versions that name topics (v13 switched both to topic ids, which
#: the in-memory log does not keep).
WIRE_API_VERSIONS: Dict[str, Tuple[int, int]] = {
    api: (CODEC_VERSIONS[api][0], min(CODEC_VERSIONS[api][1], cap))
    for api, cap in (("ApiVersions", 99), ("Metadata", 99), ("FindCoordinator", 99), ("JoinGroup", 99),
                     ("SyncGroup", 99), ("Heartbeat", 99), ("LeaveGroup", 99), ("OffsetCommit", 99),
                     ("OffsetFetch", 99), ("Produce", 12), ("Fetch", 12), ("ListOffsets", 99),
                     ("DescribeGroups", 99), ("ListGroups", 99), ("InitProducerId", 99), ("DeleteGroups", 99),
                     ("ConsumerGroupHeartbeat", 99), ("ConsumerGroupDescribe", 99))
}

_NONE = Errors.NONE.value
_UNKNOWN_TOPIC_OR_PARTITION = Errors.UNKNOWN_TOPIC_OR_PARTITION.value
_NOT_LEADER_OR_FOLLOWER = 6
_OFFSET_OUT_OF_RANGE = 1
_CORRUPT_MESSAGE = 2
_NOT_COORDINATOR = Errors.NOT_COORDINATOR.value
_COORDINATOR_LOAD_IN_PROGRESS = Errors.COORDINATOR_LOAD_IN_PROGRESS.value
_GROUP_ID_NOT_FOUND = Errors.GROUP_ID_NOT_FOUND.value
#: DescribeGroups answers GROUP_ID_NOT_FOUND for an unknown group from this version on (KIP-1043)
DESCRIBE_GROUPS_NOT_FOUND_VERSION = 6
_COORDINATOR_NOT_AVAILABLE = Errors.COORDINATOR_NOT_AVAILABLE.value
_INVALID_REQUEST = Errors.INVALID_REQUEST.value
_TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
_TRANSACTIONAL_ID_AUTHORIZATION_FAILED_MESSAGE = "Transactional Id authorization failed."

Respond = Callable[[object], None]


class _DelayedFetch:
    __slots__ = ("owner", "broker_id", "request", "version", "deadline_ms", "respond")

    def __init__(self, owner: object, broker_id: int, request, version: int, deadline_ms: int, respond: Respond) -> None:
        self.owner = owner
        self.broker_id = broker_id
        self.request = request
        self.version = version
        self.deadline_ms = deadline_ms
        self.respond = respond


class KafkaApis:
    """Request handling of all brokers of one :class:`Cluster` served over TCP."""

    def __init__(self, cluster: Cluster, logs: LogManager) -> None:
        self.cluster = cluster
        self.logs = logs
        self._delayed_fetches: List[_DelayedFetch] = []
        self.producer_ids = ProducerIdManager()
        for name, count in list(cluster.topics.items()):
            logs.create(name, count)
        self._handlers = {
            "ApiVersions": self._api_versions, "Metadata": self._metadata,
            "FindCoordinator": self._find_coordinator, "Produce": self._produce, "Fetch": self._fetch,
            "ListOffsets": self._list_offsets, "DescribeGroups": self._describe_groups,
            "ListGroups": self._list_groups, "InitProducerId": self._init_producer_id,
            "DeleteGroups": self._delete_groups, "ConsumerGroupDescribe": self._consumer_group_describe,
        }

    # -- dispatch ------------------------------------------------------------------------------

    def handle(self, broker_id: int, api: str, version: int, body, client_id: Optional[str], client_host: str,
               respond: Respond, owner: object = None) -> None:
        """Handle one request; *owner* (the connection) lets :meth:`drop_waiting` forget what waits
        for it once it is gone."""
        handler = self._handlers.get(api)
        if api == "Fetch":
            self._fetch(broker_id, version, body, respond, owner)
        elif handler is not None:
            handler(broker_id, version, body, respond)
        else:
            self.cluster.broker(broker_id).handle(body, version, client_id or "", respond, client_host)

    def create_topic(self, name: str, partitions: Optional[int] = None) -> None:
        count = self.logs.default_partitions if partitions is None else partitions
        self.logs.create(name, count)
        self.cluster.create_topic(name, count)

    # -- ApiVersions / Metadata / FindCoordinator ------------------------------------------------

    def _api_versions(self, broker_id: int, version: int, body, respond: Respond) -> None:
        respond(P.ApiVersionsResponseData(error_code=_NONE, api_keys=[
            P.ApiVersion(name, lo, hi) for name, (lo, hi) in WIRE_API_VERSIONS.items()]))

    def _metadata(self, broker_id: int, version: int, body: P.MetadataRequestData, respond: Respond) -> None:
        if body.topics and self.logs.auto_create and (body.allow_auto_topic_creation or version < 4):
            for topic in body.topics:
                if topic.name and self.cluster.num_partitions(topic.name) is None and not topic.name.startswith("__"):
                    self.create_topic(topic.name)
        self.cluster.broker(broker_id).handle(body, version, "", respond)

    def _find_coordinator(self, broker_id: int, version: int, body: P.FindCoordinatorRequestData,
                          respond: Respond) -> None:
        """``KafkaApis.handleFindCoordinatorRequest``: the leader of each group's
        ``__consumer_offsets`` partition; v4+ answers every key of the batch. A transaction
        coordinator is TRANSACTIONAL_ID_AUTHORIZATION_FAILED (``getCoordinator`` when DESCRIBE on the
        transactional id is denied: see the module docstring)."""
        if body.key_type == P.CoordinatorType.TRANSACTION:
            keys = list(body.coordinator_keys) if version >= 4 and body.coordinator_keys else [body.key]
            if version < 4:
                respond(P.FindCoordinatorResponseData(
                    error_code=_TRANSACTIONAL_ID_AUTHORIZATION_FAILED, node_id=-1, host="", port=-1,
                    error_message=_TRANSACTIONAL_ID_AUTHORIZATION_FAILED_MESSAGE))
            else:
                respond(P.FindCoordinatorResponseData(coordinators=[
                    P.Coordinator(key=key, node_id=-1, host="", port=-1, error_code=_TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                                  error_message=None) for key in keys]))
            return
        if body.key_type != P.CoordinatorType.GROUP:
            respond(P.FindCoordinatorResponseData(error_code=_INVALID_REQUEST, error_message="only group coordinators"))
            return
        keys = list(body.coordinator_keys) if version >= 4 and body.coordinator_keys else [body.key]
        coordinators = [self._coordinator(key) for key in keys]
        if version < 4:
            c = coordinators[0]
            respond(P.FindCoordinatorResponseData(error_code=c.error_code, node_id=c.node_id, host=c.host,
                                                  port=c.port, error_message=c.error_message))
            return
        response = P.FindCoordinatorResponseData(coordinators=coordinators)
        if len(coordinators) == 1:
            c = coordinators[0]
            response.error_code, response.node_id, response.host, response.port = c.error_code, c.node_id, c.host, c.port
            response.error_message = c.error_message
        respond(response)

    def _coordinator(self, key: str) -> P.Coordinator:
        node = self.cluster.offsets_partition_leader_node(self.cluster.partition_for(key))
        if node is None:
            return P.Coordinator(key=key, node_id=-1, host="", port=-1, error_code=_COORDINATOR_NOT_AVAILABLE,
                                 error_message=Errors.COORDINATOR_NOT_AVAILABLE.message)
        return P.Coordinator(key=key, node_id=node[0], host=node[1], port=node[2], error_code=_NONE, error_message=None)

    # -- Produce / Fetch / ListOffsets -------------------------------------------------------------

    def _partition_error(self, broker_id: int, topic: str, partition: int) -> int:
        if self.logs.get(topic, partition) is None:
            return _UNKNOWN_TOPIC_OR_PARTITION
        if self.cluster.topic_partition_leader(partition) != broker_id:
            return _NOT_LEADER_OR_FOLLOWER
        return _NONE

    def _produce(self, broker_id: int, version: int, body, respond: Respond) -> None:
        """``KafkaApis.handleProduceRequest``: a request holding transactional batches is refused on
        every partition (no transactional id is authorized, see the module docstring); each
        partition's records go to its log, which checks idempotent producers' sequences
        (:meth:`impl.server.log.PartitionLog.append`) — an error there answers base offset -1 and
        no message (``ReplicaManager.appendToLocalLog``, ``hasCustomErrorMessage = false``)."""
        if _has_transactional_records(body):
            if body.acks == 0:
                respond(None)
                return
            respond(build(kio_class("Produce", version, RESPONSE), {"throttle_time": 0, "responses": [
                {"name": topic.name, "partition_responses": [
                    {"index": data.index, "error_code": _TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "base_offset": -1,
                     "log_append_time": None, "log_start_offset": -1, "record_errors": (),
                     "error_message": _TRANSACTIONAL_ID_AUTHORIZATION_FAILED_MESSAGE}
                    for data in topic.partition_data]} for topic in body.topic_data]}))
            return
        responses = []
        for topic in body.topic_data:
            if self.logs.auto_create and self.logs.partitions(topic.name) is None and not topic.name.startswith("__"):
                self.create_topic(topic.name)
            partitions = []
            for data in topic.partition_data:
                error, base_offset = self._partition_error(broker_id, topic.name, data.index), -1
                log = self.logs.get(topic.name, data.index)
                if error == _NONE and data.records:
                    try:
                        base_offset = log.append(bytes(data.records))
                    except InvalidRecordBatch:
                        error = _CORRUPT_MESSAGE
                    except ProducerStateError as e:
                        error = e.error_code
                partitions.append({"index": data.index, "error_code": error, "base_offset": base_offset,
                                   "log_append_time": None, "log_start_offset": 0 if log is not None else -1,
                                   "record_errors": (), "error_message": None})
            responses.append({"name": topic.name, "partition_responses": partitions})
        if responses:
            self._complete_delayed_fetches(force=False)
        if body.acks == 0:
            respond(None)  # acks=0: Kafka sends no response at all
            return
        respond(build(kio_class("Produce", version, RESPONSE), {"responses": responses, "throttle_time": 0}))

    # -- InitProducerId ----------------------------------------------------------------------------

    def _init_producer_id(self, broker_id: int, version: int, body, respond: Respond) -> None:
        """``KafkaApis.handleInitProducerIdRequest`` + ``TransactionCoordinator.handleInitProducerId``.

        * A transactional id (even an empty one): TRANSACTIONAL_ID_AUTHORIZATION_FAILED, the answer of a
          Kafka whose authorizer denies WRITE on it (checked before anything else).
        * v3+ (KIP-360) carries the producer's current id and epoch: one of them -1 without the other
          is INVALID_REQUEST.
        * Otherwise a new producer id with epoch 0, whatever id and epoch the request carries: for a
          null transactional id Kafka "always blindly accept[s] the request and return[s] a new
          producerId from the producerId manager". The epoch bump of KIP-360 exists only for a
          transactional id's producer; an idempotent producer that sends its id and epoch (as
          kafka-python and librdkafka do to recover from a sequence error) gets a fresh id.

        An error answers producer id -1 and epoch -1 (``InitProducerIdRequest.getErrorResponse``)."""
        producer_id = getattr(body, "producer_id", NO_PRODUCER_ID)
        producer_epoch = getattr(body, "producer_epoch", NO_PRODUCER_EPOCH)
        if body.transactional_id is not None:
            error = _TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        elif (producer_id == NO_PRODUCER_ID) != (producer_epoch == NO_PRODUCER_EPOCH):
            error = _INVALID_REQUEST
        else:
            error = _NONE
        if error != _NONE:
            respond(build(kio_class("InitProducerId", version, RESPONSE), {
                "throttle_time": 0, "error_code": error, "producer_id": NO_PRODUCER_ID,
                "producer_epoch": NO_PRODUCER_EPOCH}))
            return
        respond(build(kio_class("InitProducerId", version, RESPONSE), {
            "throttle_time": 0, "error_code": _NONE, "producer_id": self.producer_ids.generate_producer_id(),
            "producer_epoch": 0}))

    def _fetch_response(self, broker_id: int, version: int, body) -> Tuple[object, int]:
        topics, total = [], 0
        for topic in body.topics:
            partitions = []
            for p in topic.partitions:
                error = self._partition_error(broker_id, topic.topic, p.partition)
                log = self.logs.get(topic.topic, p.partition)
                records, high_watermark = b"", -1
                if error == _NONE:
                    high_watermark = log.high_watermark
                    if not 0 <= p.fetch_offset <= log.log_end_offset:
                        error = _OFFSET_OUT_OF_RANGE
                    else:
                        records = log.read(p.fetch_offset, p.partition_max_bytes)
                        total += len(records)
                partitions.append({"partition_index": p.partition, "error_code": error,
                                   "high_watermark": high_watermark, "last_stable_offset": high_watermark,
                                   "log_start_offset": 0 if log is not None else -1, "aborted_transactions": None,
                                   "preferred_read_replica": -1, "records": records})
            topics.append({"topic": topic.topic, "partitions": partitions})
        response = build(kio_class("Fetch", version, RESPONSE),
                         {"throttle_time": 0, "error_code": _NONE, "session_id": 0, "responses": topics})
        return response, total

    def _fetch(self, broker_id: int, version: int, body, respond: Respond, owner: object = None) -> None:
        response, total = self._fetch_response(broker_id, version, body)
        max_wait = int(body.max_wait.total_seconds() * 1000)
        if total >= max(1, body.min_bytes) or max_wait <= 0:
            respond(response)
            return
        now = self.cluster.time.milliseconds()
        self._delayed_fetches.append(_DelayedFetch(owner, broker_id, body, version, now + max_wait, respond))

    def _complete_delayed_fetches(self, force: bool) -> None:
        """Answer the waiting fetches that now find data (after a Produce), or all (``force``)."""
        waiting, self._delayed_fetches = self._delayed_fetches, []
        for fetch in waiting:
            response, total = self._fetch_response(fetch.broker_id, fetch.version, fetch.request)
            if force or total >= max(1, fetch.request.min_bytes):
                fetch.respond(response)
            else:
                self._delayed_fetches.append(fetch)

    def next_deadline(self) -> Optional[int]:
        return min((f.deadline_ms for f in self._delayed_fetches), default=None)

    def expire(self, now_ms: int) -> None:
        """Answer the fetches whose ``max_wait_ms`` is over, with what there is."""
        due = [f for f in self._delayed_fetches if f.deadline_ms <= now_ms]
        if not due:
            return
        self._delayed_fetches = [f for f in self._delayed_fetches if f.deadline_ms > now_ms]
        for fetch in due:
            fetch.respond(self._fetch_response(fetch.broker_id, fetch.version, fetch.request)[0])

    def drop_waiting(self, owner: object) -> None:
        """Forget the waiting fetches of a connection that closed."""
        self._delayed_fetches = [f for f in self._delayed_fetches if f.owner is not owner]

    def _list_offsets(self, broker_id: int, version: int, body, respond: Respond) -> None:
        topics = []
        for topic in body.topics:
            partitions = []
            for p in topic.partitions:
                error = self._partition_error(broker_id, topic.name, p.partition_index)
                offset = -1
                if error == _NONE:
                    offset = self.logs.get(topic.name, p.partition_index).offset_for_timestamp(p.timestamp)
                partitions.append({"partition_index": p.partition_index, "error_code": error, "timestamp": -1,
                                   "offset": offset, "leader_epoch": -1, "old_style_offsets": ()})
            topics.append({"name": topic.name, "partitions": partitions})
        respond(build(kio_class("ListOffsets", version, RESPONSE), {"throttle_time": 0, "topics": topics}))

    # -- DeleteGroups --------------------------------------------------------------------------------

    def _delete_groups(self, broker_id: int, version: int, body, respond: Respond) -> None:
        """``KafkaApis.handleDeleteGroupsRequest`` -> ``GroupCoordinator.handleDeleteGroups``: each Empty
        group is deleted with its offsets (tombstones in __consumer_offsets, so no later coordinator
        loads it), a group with members is refused NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND,
        one this broker does not coordinate NOT_COORDINATOR; one result per group named."""
        names = list(body.groups_names)
        errors = self.cluster.broker(broker_id).group_coordinator.handle_delete_groups(names)
        results = [{"group_id": name, "error_code": errors[name].value} for name in names]
        respond(build(kio_class("DeleteGroups", version, RESPONSE), {"throttle_time": 0, "results": results}))

    # -- DescribeGroups / ListGroups ---------------------------------------------------------------

    def _describe_groups(self, broker_id: int, version: int, body, respond: Respond) -> None:
        coordinator = self.cluster.broker(broker_id).group_coordinator
        groups = []
        for group_id in body.groups:
            groups.append(self._describe(coordinator, group_id, version))
        respond(build(kio_class("DescribeGroups", version, RESPONSE), {"throttle_time": 0, "groups": groups}))

    def _describe(self, coordinator, group_id: str, version: int) -> dict:
        """``GroupCoordinator.handleDescribeGroup`` + ``GroupMetadata.summary``; a group the
        coordinator does not know is Dead, and from DescribeGroups v6 on (KIP-1043, Kafka 4.0) also
        GROUP_ID_NOT_FOUND (4.1's ``GroupMetadataManager.describeGroups``: ``if
        (context.requestVersion() >= 6)``): a client asking at v6 must be told, as Kafka tells it
        (found by conform broker's DescribeGroups before the group exists)."""
        dead = {"group_id": group_id, "group_state": "Dead", "protocol_type": "", "protocol_data": "",
                "members": (), "authorized_operations": -2147483648, "error_message": None}
        if not coordinator.is_coordinator_for_group(group_id):
            return {**dead, "error_code": _NOT_COORDINATOR, "group_state": ""}
        if coordinator.is_coordinator_load_in_progress(group_id):
            return {**dead, "error_code": _COORDINATOR_LOAD_IN_PROGRESS, "group_state": ""}
        group = coordinator.group_manager.get_group(group_id)
        if group is None:
            if version >= DESCRIBE_GROUPS_NOT_FOUND_VERSION:
                return {**dead, "error_code": _GROUP_ID_NOT_FOUND, "error_message": f"Group {group_id} not found."}
            return {**dead, "error_code": _NONE}
        stable = group.is_state(STABLE)
        members = []
        for member in group.all_member_metadata():
            metadata = assignment = b""
            if stable:
                subscription = member.metadata(group.protocol_name)
                metadata = subscription if isinstance(subscription, bytes) else encode_subscription(subscription)
                if isinstance(member.assignment, bytes):
                    assignment = member.assignment
                elif member.assignment is not None:
                    assignment = encode_assignment(member.assignment)
            members.append({"member_id": member.member_id, "group_instance_id": member.group_instance_id,
                            "client_id": member.client_id, "client_host": member.client_host,
                            "member_metadata": metadata, "member_assignment": assignment})
        return {"error_code": _NONE, "group_id": group_id, "group_state": group.current_state().value,
                "protocol_type": group.protocol_type or "", "protocol_data": (group.protocol_name or "") if stable else "",
                "members": members, "authorized_operations": -2147483648, "error_message": None}

    def _consumer_group_describe(self, broker_id: int, version: int, body, respond: Respond) -> None:
        """``GroupMetadataManager.consumerGroupDescribe`` (KIP-848): each consumer group's state,
        epochs and members (epoch, client id, assignment and target); a group the broker does not
        coordinate NOT_COORDINATOR, one it does not have GROUP_ID_NOT_FOUND."""
        broker = self.cluster.broker(broker_id)
        names = {topic_id(name): name for name in self.cluster.topics}

        def assignment(parts: dict) -> dict:
            return {"topic_partitions": [{"topic_id": _uuid_of(tid), "topic_name": names.get(tid, ""),
                                          "partitions": sorted(ps)} for tid, ps in sorted(parts.items())]}

        groups = []
        for group_id in body.group_ids:
            error = broker.group_coordinator.validate_group_status(group_id, "ConsumerGroupDescribe")
            group = broker.consumer_groups.groups.get(group_id)
            if error is None and group is None:
                error = Errors.GROUP_ID_NOT_FOUND
            if error is not None:
                groups.append({"error_code": error.value, "error_message": None, "group_id": group_id,
                               "group_state": "", "group_epoch": -1, "assignment_epoch": -1, "assignor_name": "",
                               "members": [], "authorized_operations": -2147483648})
                continue
            members = [{"member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
                        "member_epoch": m.member_epoch, "client_id": m.client_id, "client_host": "",
                        "subscribed_topic_names": sorted(m.subscribed_topic_names), "subscribed_topic_regex": None,
                        "assignment": assignment(m.assigned_partitions),
                        "target_assignment": assignment(group.target_assignment(m.member_id)),
                        "member_type": 1} for _, m in sorted(group.members.items())]
            groups.append({"error_code": _NONE, "error_message": None, "group_id": group_id,
                           "group_state": group.state.value, "group_epoch": group.group_epoch,
                           "assignment_epoch": group.target_assignment_epoch, "assignor_name": "range",
                           "members": members, "authorized_operations": -2147483648})
        respond(build(kio_class("ConsumerGroupDescribe", version, RESPONSE), {"throttle_time": 0, "groups": groups}))

    def _list_groups(self, broker_id: int, version: int, body, respond: Respond) -> None:
        coordinator = self.cluster.broker(broker_id).group_coordinator
        wanted = {s.lower() for s in getattr(body, "states_filter", ()) or ()}
        groups = []
        for group in coordinator.group_manager.current_groups():
            state = group.current_state().value
            if wanted and state.lower() not in wanted:
                continue
            groups.append({"group_id": group.group_id, "protocol_type": group.protocol_type or "",
                           "group_state": state, "group_type": "classic"})
        respond(build(kio_class("ListGroups", version, RESPONSE), {"throttle_time": 0, "error_code": _NONE,
                                                                    "groups": groups}))


def _has_transactional_records(body) -> bool:
    """``RequestUtils.hasTransactionalRecords``: any batch of any partition is transactional
    (records that do not parse are left to the log, which answers CORRUPT_MESSAGE)."""
    for topic in body.topic_data:
        for data in topic.partition_data:
            if not data.records:
                continue
            try:
                if any(header.is_transactional for _, header in batch_headers(bytes(data.records))):
                    return True
            except InvalidRecordBatch:
                continue
    return False


def _uuid_of(topic_id: str) -> uuid.UUID:
    """A Kafka Uuid string (impl/server/topic_id.py) as the UUID kio writes."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(topic_id + "=="))
