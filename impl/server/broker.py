"""A simulated broker: request dispatch in the manner of ``kafka.server.KafkaApis``.

:meth:`Broker.handle` takes a request data object (:mod:`impl.protocol`), the request header's
api version and client id, and a ``response_callback(response_data)``.  Group requests go to the
broker's :class:`~impl.server.group_coordinator.GroupCoordinator`; a parked JoinGroup/SyncGroup is
answered later (from another request or from the timer), exactly as Kafka answers a request from
the purgatory.  ApiVersions, Metadata and FindCoordinator are answered from the
:class:`MetadataCache` view of the cluster it belongs to.

A crashed broker loses everything but its id: parked callbacks are dropped without an answer (the
transport is expected to report the disconnect), the timer is cleared, and a restart brings up a
fresh coordinator that owns nothing until the cluster makes it a partition leader.

KIP-848's ConsumerGroupHeartbeat goes to the broker's
:class:`~impl.server.modern.ConsumerGroupCoordinator` (its consumer groups, on the same timer), for
a group this broker coordinates (the classic coordinator's ``validateGroupStatus`` decides); an
OffsetCommit to one of its consumer groups is validated there (``ConsumerGroup.validateOffsetCommit``)
and its offsets stored as a simple group's in the classic manager. Unlike Kafka, which rebuilds its
consumer groups from ``__consumer_offsets`` records, a broker's consumer groups are lost when it
crashes. A classic JoinGroup, SyncGroup, Heartbeat or LeaveGroup to a consumer group goes to it
(``classicGroupJoinToConsumerGroup`` and the others: a classic member inside a consumer group, as
Kafka 4.x's online migration runs it), and a ConsumerGroupHeartbeat joining a classic group with
members converts it (``convertToConsumerGroup``); a JoinGroup to an empty consumer group drops it
and makes a classic group, as Kafka does, but a consumer group left with only classic members
stays one (Kafka's downgrade is not implemented).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Protocol

from impl.errors import Errors, IllegalStateException
from impl.protocol import (INVALID_OFFSET, NO_METADATA, ApiVersion, ApiVersionsRequestData,
                           ApiVersionsResponseData, ConsumerGroupHeartbeatRequestData,
                           ConsumerGroupHeartbeatResponseData, CoordinatorType, FindCoordinatorRequestData,
                           FindCoordinatorResponseData, HeartbeatRequestData, HeartbeatResponseData,
                           JoinGroupRequestData, LeaveGroupRequestData,
                           LeaveGroupResponseData, MetadataRequestData, MetadataResponseData,
                           OffsetCommitRequestData, OffsetCommitResponseData, OffsetCommitResponsePartition,
                           OffsetCommitResponseTopic, OffsetFetchRequestData, OffsetFetchResponseData,
                           OffsetFetchResponsePartition, OffsetFetchResponseTopic, SyncGroupRequestData,
                           TopicPartition)
from impl.server.config import BrokerConfig
from impl.server.group_coordinator import GroupCoordinator, join_error, sync_error
from impl.server.group_metadata import EMPTY, GroupMetadata
from impl.server.group_metadata_manager import GroupMetadataManager, OffsetAndMetadata, OffsetsTopicLog
from impl.server.modern import ConsumerGroupCoordinator, ModernGroupConfig
from impl.server.timer import MockTimer
from impl.server.topic_id import topic_id
from impl.time import Time

__all__ = ["Broker", "DEFAULT_CLIENT_HOST"]

DEFAULT_CLIENT_HOST = "/127.0.0.1"
_NONE_CODE = Errors.NONE.value


class MetadataCache(Protocol):
    """What a broker reads from the cluster it belongs to — Kafka's ``MetadataCache`` plus the
    replicated ``__consumer_offsets`` log. :class:`~impl.server.cluster.Cluster` provides it; the
    broker depends on this view only, so ``cluster`` may import ``broker`` and not the other way."""

    cluster_id: str
    offsets_log: OffsetsTopicLog

    def alive_broker_metadata(self) -> list: ...

    def topic_metadata(self, names) -> list: ...

    def controller_id(self) -> int: ...

    def offsets_partition_leader_node(self, partition: int): ...

    def num_partitions(self, topic: str) -> Optional[int]: ...


class Broker:
    """One broker of a simulated :class:`~impl.server.cluster.Cluster`."""

    __slots__ = ("broker_id", "cluster", "time", "rng", "config", "host", "port", "timer",
                 "group_coordinator", "consumer_groups", "alive", "_handlers")

    def __init__(self, broker_id: int, cluster: MetadataCache, time: Time, rng, config: Optional[BrokerConfig] = None) -> None:
        self.broker_id = broker_id
        self.cluster = cluster
        self.time = time
        self.rng = rng
        self.config = config if config is not None else BrokerConfig()
        self.host = self.config.host_format % broker_id
        self.port = self.config.port
        self.timer: Optional[MockTimer] = None
        self.group_coordinator: Optional[GroupCoordinator] = None
        self.consumer_groups: Optional[ConsumerGroupCoordinator] = None
        self.alive = False
        self._handlers: Dict[str, Callable] = {
            "ApiVersions": self.handle_api_versions_request,
            "Metadata": self.handle_topic_metadata_request,
            "FindCoordinator": self.handle_find_coordinator_request,
            "JoinGroup": self.handle_join_group_request,
            "SyncGroup": self.handle_sync_group_request,
            "Heartbeat": self.handle_heartbeat_request,
            "LeaveGroup": self.handle_leave_group_request,
            "OffsetCommit": self.handle_offset_commit_request,
            "OffsetFetch": self.handle_offset_fetch_request,
            "ConsumerGroupHeartbeat": self.handle_consumer_group_heartbeat_request,
        }
        self.startup()

    # -- lifecycle --------------------------------------------------------------------------

    def startup(self) -> None:
        """Start with empty state: a new timer and a coordinator that owns no partition."""
        self.timer = MockTimer(self.time)
        manager = GroupMetadataManager(self.broker_id, self.config, self.cluster.offsets_log, self.time)
        self.group_coordinator = GroupCoordinator(self.broker_id, self.config, manager, self.time,
                                                  self.timer, self.rng)
        self.group_coordinator.startup()
        config = self.config
        self.consumer_groups = ConsumerGroupCoordinator(
            ModernGroupConfig(session_timeout_ms=config.consumer_session_timeout_ms,
                              heartbeat_interval_ms=config.consumer_heartbeat_interval_ms),
            self.timer, self._topic_image, self.group_coordinator.rng, self.group_coordinator.take_members_for_upgrade)
        self.alive = True

    def _topic_image(self, name: str) -> Optional[tuple]:
        """(topic id, partitions) of *name*, or None: the consumer groups' metadata image."""
        partitions = self.cluster.num_partitions(name)
        return None if partitions is None else (topic_id(name), partitions)

    def crash(self) -> None:
        """The process dies: all in-memory state is lost, nothing is answered."""
        self.alive = False
        self.timer.clear()
        self.group_coordinator.shutdown()

    def on_election(self, offsets_partition: int) -> None:
        self.group_coordinator.on_election(offsets_partition)

    def on_resignation(self, offsets_partition: int) -> None:
        self.group_coordinator.on_resignation(offsets_partition)

    def finish_loading(self, offsets_partition: Optional[int] = None) -> List[int]:
        return self.group_coordinator.finish_loading(offsets_partition)

    # -- time -------------------------------------------------------------------------------

    def next_deadline(self) -> Optional[int]:
        return self.timer.next_deadline()

    def advance_clock(self, until_ms: int) -> bool:
        return self.timer.advance_clock(until_ms)

    def expire_overdue(self) -> None:
        """Run the delayed operations whose deadline the clock has already reached."""
        timer = self.timer
        deadline = timer.next_deadline()
        if deadline is not None:
            now = self.time.milliseconds()
            if timer.is_due(deadline, now):
                timer.advance_clock(now)

    # -- request dispatch -------------------------------------------------------------------

    def handle(self, request_data, api_version: int, client_id: str,
               response_callback: Callable[[object], None], client_host: str = DEFAULT_CLIENT_HOST) -> None:
        """Handle one request; the response goes to ``response_callback`` (now or later)."""
        if not self.alive:
            raise IllegalStateException("Broker %d is not running" % self.broker_id)
        api_key = request_data.api_key
        handler = self._handlers.get(api_key)
        if handler is None:
            raise IllegalStateException("Unsupported api " + str(api_key))
        versions = self.config.api_versions.get(api_key)
        if versions is None or not versions[0] <= api_version <= versions[1]:
            response_callback(error_response(request_data, Errors.UNSUPPORTED_VERSION))
            return
        if self.config.expire_overdue_before_request:
            self.expire_overdue()
        handler(request_data, api_version, client_id, client_host, response_callback)
        if self.config.expire_overdue_before_request:
            # Kafka's SystemTimer.add runs a task whose deadline has passed at once
            # (SystemTimer.addTimerTaskEntry): an InitialDelayedJoin of delay 0 completes right away
            self.expire_overdue()

    # -- ApiVersions / Metadata / FindCoordinator -------------------------------------------

    def handle_api_versions_request(self, request: ApiVersionsRequestData, version: int, client_id: str,
                                    client_host: str, callback: Callable) -> None:
        callback(ApiVersionsResponseData(error_code=_NONE_CODE, api_keys=[
            ApiVersion(name, lo, hi) for name, (lo, hi) in self.config.api_versions.items()]))

    def handle_topic_metadata_request(self, request: MetadataRequestData, version: int, client_id: str,
                                      client_host: str, callback: Callable) -> None:
        cluster = self.cluster
        names = None if request.topics is None else [t.name for t in request.topics]
        callback(MetadataResponseData(brokers=cluster.alive_broker_metadata(),
                                      topics=cluster.topic_metadata(names),
                                      cluster_id=cluster.cluster_id,
                                      controller_id=cluster.controller_id()))

    def handle_find_coordinator_request(self, request: FindCoordinatorRequestData, version: int,
                                        client_id: str, client_host: str, callback: Callable) -> None:
        """``KafkaApis.getCoordinator``: the leader of the key's ``__consumer_offsets`` partition,
        if it is alive, else COORDINATOR_NOT_AVAILABLE."""
        if request.key_type != CoordinatorType.GROUP:
            callback(error_response(request, Errors.INVALID_REQUEST))
            return
        partition = self.group_coordinator.partition_for(request.key)
        node = self.cluster.offsets_partition_leader_node(partition)
        if node is None:
            error = Errors.COORDINATOR_NOT_AVAILABLE
            callback(FindCoordinatorResponseData(error_code=error.value, node_id=-1, host="", port=-1,
                                                 error_message=error.message))
        else:
            callback(FindCoordinatorResponseData(error_code=_NONE_CODE, node_id=node[0], host=node[1],
                                                 port=node[2], error_message="NONE"))

    # -- group APIs -------------------------------------------------------------------------

    def _to_consumer_group(self, group_id: str, api: str, join: bool = False) -> bool:
        """Whether a classic request goes to the group's consumer group (classicGroupJoin /
        classicGroupSync / classicGroupHeartbeat / classicGroupLeave route by the group's type): the
        classic coordinator's status error first (False when there is one, or no consumer group: the
        classic coordinator answers)."""
        if self.consumer_groups is None or self.group_coordinator.validate_group_status(group_id, api) is not None:
            return False
        if join:
            return self.consumer_groups.takes_classic_join(group_id)
        return self.consumer_groups.holds(group_id)

    def handle_join_group_request(self, request: JoinGroupRequestData, version: int, client_id: str,
                                  client_host: str, callback: Callable) -> None:
        if self._to_consumer_group(request.group_id, "JoinGroup", join=True):
            if not self.group_coordinator.is_valid_session_timeout(request.session_timeout_ms):
                callback(join_error(request.member_id, Errors.INVALID_SESSION_TIMEOUT))
            else:
                callback(self.consumer_groups.classic_group_join(request, version, client_id))
            return
        group_instance_id = request.group_instance_id
        # Only return MEMBER_ID_REQUIRED error if joinGroupRequest version is >= 4
        # and groupInstanceId is configured to unknown.
        require_known_member_id = version >= 4 and group_instance_id is None
        # v0 has no rebalance timeout: it is the session timeout
        rebalance_timeout_ms = request.session_timeout_ms if version == 0 else request.rebalance_timeout_ms
        protocols = tuple((p.name, p.metadata) for p in request.protocols)
        self.group_coordinator.handle_join_group(
            request.group_id, request.member_id, group_instance_id, require_known_member_id, version >= 9,
            client_id, client_host, rebalance_timeout_ms, request.session_timeout_ms, request.protocol_type,
            protocols, callback, request.reason)

    def handle_sync_group_request(self, request: SyncGroupRequestData, version: int, client_id: str,
                                  client_host: str, callback: Callable) -> None:
        if version >= 5 and (request.protocol_type is None or request.protocol_name is None):
            # protocol type and name are mandatory from v5
            callback(sync_error(Errors.INCONSISTENT_GROUP_PROTOCOL))
            return
        if self._to_consumer_group(request.group_id, "SyncGroup"):
            callback(self.consumer_groups.classic_group_sync(request))
            return
        assignment = {a.member_id: a.assignment for a in request.assignments}
        self.group_coordinator.handle_sync_group(
            request.group_id, request.generation_id, request.member_id, request.protocol_type,
            request.protocol_name, request.group_instance_id, assignment, callback)

    def handle_heartbeat_request(self, request: HeartbeatRequestData, version: int, client_id: str,
                                 client_host: str, callback: Callable) -> None:
        if self._to_consumer_group(request.group_id, "Heartbeat"):
            callback(self.consumer_groups.classic_group_heartbeat(request))
            return
        self.group_coordinator.handle_heartbeat(request.group_id, request.member_id, request.group_instance_id,
                                                request.generation_id, callback)

    def handle_leave_group_request(self, request: LeaveGroupRequestData, version: int, client_id: str,
                                   client_host: str, callback: Callable) -> None:
        if self._to_consumer_group(request.group_id, "LeaveGroup"):
            def leave(group_id, members, respond):  # classicGroupLeaveToConsumerGroup
                respond(self.consumer_groups.classic_group_leave(request))
        else:
            leave = self.group_coordinator.handle_leave_group
        if version >= 3:
            leave(request.group_id, request.members, callback)
            return

        def single_member_callback(response: LeaveGroupResponseData) -> None:
            # v0-2 carry one member and a top-level error only
            error_code = response.error_code
            if error_code == _NONE_CODE:
                for member in response.members:
                    if member.error_code != _NONE_CODE:
                        error_code = member.error_code
                        break
            callback(LeaveGroupResponseData(error_code=error_code))

        leave(request.group_id, request.members, single_member_callback)

    def handle_consumer_group_heartbeat_request(self, request: ConsumerGroupHeartbeatRequestData, version: int,
                                                client_id: str, client_host: str, callback: Callable) -> None:
        """KafkaApis.handleConsumerGroupHeartbeat → GroupCoordinatorService.consumerGroupHeartbeat."""
        error = self.group_coordinator.validate_group_status(request.group_id, "ConsumerGroupHeartbeat")
        if error is Errors.INVALID_GROUP_ID:  # throwIfConsumerGroupHeartbeatRequestIsInvalid: "GroupId can't be empty."
            error = Errors.INVALID_REQUEST
        if error is not None:
            callback(ConsumerGroupHeartbeatResponseData(error_code=error.value))
            return
        callback(self.consumer_groups.consumer_group_heartbeat(request, version, client_id))

    def handle_offset_commit_request(self, request: OffsetCommitRequestData, version: int, client_id: str,
                                     client_host: str, callback: Callable) -> None:
        cluster = self.cluster
        errors: Dict[TopicPartition, Errors] = {}
        authorized: Dict[TopicPartition, OffsetAndMetadata] = {}
        now = self.time.milliseconds()
        for topic in request.topics:
            num_partitions = cluster.num_partitions(topic.name)
            for p in topic.partitions:
                tp = TopicPartition(topic.name, p.partition_index)
                if num_partitions is None or not 0 <= p.partition_index < num_partitions:
                    errors[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    metadata = p.committed_metadata
                    authorized[tp] = OffsetAndMetadata(p.committed_offset, p.committed_leader_epoch,
                                                       NO_METADATA if metadata is None else metadata, now, None)

        def send_response_callback(commit_status: Dict[TopicPartition, Errors]) -> None:
            combined = errors
            if commit_status:
                combined = dict(errors)
                combined.update(commit_status)
            callback(_offset_commit_response(request, combined))

        if not authorized:
            send_response_callback({})
            return
        if request.group_id in self.consumer_groups.groups:
            self._commit_to_consumer_group(request, version, authorized, send_response_callback)
            return
        self.group_coordinator.handle_commit_offsets(request.group_id, request.member_id,
                                                     request.group_instance_id, request.generation_id,
                                                     authorized, send_response_callback)

    def _commit_to_consumer_group(self, request: OffsetCommitRequestData, version: int,
                                  offsets: Dict[TopicPartition, OffsetAndMetadata], callback: Callable) -> None:
        """An OffsetCommit to a consumer group: OffsetMetadataManager.validateOffsetCommit (the
        member and its epoch), then the offsets stored as a simple group's."""
        error = self.group_coordinator.validate_group_status(request.group_id, "OffsetCommit")
        if error is None:
            error = self.consumer_groups.validate_offset_commit(request.group_id, request.member_id,
                                                                request.group_instance_id, request.generation_id,
                                                                version)
        if error is not Errors.NONE:
            callback(dict.fromkeys(offsets, error))
            return
        manager = self.group_coordinator.group_manager
        holder = manager.get_group(request.group_id) or manager.add_group(GroupMetadata(request.group_id, EMPTY))
        manager.store_offsets(holder, "", offsets, callback)

    def handle_offset_fetch_request(self, request: OffsetFetchRequestData, version: int, client_id: str,
                                    client_host: str, callback: Callable) -> None:
        partitions = None
        if request.topics is not None:
            partitions = [TopicPartition(t.name, i) for t in request.topics for i in t.partition_indexes]
        error, data = self.group_coordinator.handle_fetch_offsets(request.group_id, request.require_stable,
                                                                  partitions)
        if error is not Errors.NONE:
            if version < 2:
                topics = [OffsetFetchResponseTopic(t.name, [
                    OffsetFetchResponsePartition(i, INVALID_OFFSET, error_code=error.value)
                    for i in t.partition_indexes]) for t in (request.topics or ())]
                callback(OffsetFetchResponseData(topics=topics, error_code=error.value))
            else:
                callback(OffsetFetchResponseData(topics=[], error_code=error.value))
            return
        by_topic: Dict[str, OffsetFetchResponseTopic] = {}
        for tp, pd in data.items():
            topic = by_topic.get(tp.topic)
            if topic is None:
                topic = by_topic[tp.topic] = OffsetFetchResponseTopic(tp.topic)
            topic.partitions.append(OffsetFetchResponsePartition(tp.partition, pd.offset, pd.leader_epoch,
                                                                 pd.metadata, pd.error.value))
        callback(OffsetFetchResponseData(topics=list(by_topic.values()), error_code=_NONE_CODE))

    def __repr__(self) -> str:
        return "Broker(%d, %s)" % (self.broker_id, "alive" if self.alive else "down")


def _offset_commit_response(request: OffsetCommitRequestData,
                            results: Dict[TopicPartition, Errors]) -> OffsetCommitResponseData:
    """Per-partition results in request order."""
    topics = []
    for topic in request.topics:
        name = topic.name
        topics.append(OffsetCommitResponseTopic(name, [
            OffsetCommitResponsePartition(p.partition_index,
                                          results.get(TopicPartition(name, p.partition_index), Errors.NONE).value)
            for p in topic.partitions]))
    return OffsetCommitResponseData(topics=topics)


def error_response(request, error: Errors):
    """``AbstractRequest.getErrorResponse``: the response of ``request``'s API carrying ``error``."""
    code = error.value
    api_key = request.api_key
    if api_key == "JoinGroup":
        return join_error(request.member_id, error)
    if api_key == "SyncGroup":
        return sync_error(error)
    if api_key == "Heartbeat":
        return HeartbeatResponseData(error_code=code)
    if api_key == "LeaveGroup":
        return LeaveGroupResponseData(error_code=code)
    if api_key == "OffsetCommit":
        return _offset_commit_response(request, {
            TopicPartition(t.name, p.partition_index): error for t in request.topics for p in t.partitions})
    if api_key == "OffsetFetch":
        return OffsetFetchResponseData(error_code=code)
    if api_key == "FindCoordinator":
        return FindCoordinatorResponseData(error_code=code, error_message=error.message)
    if api_key == "ApiVersions":
        return ApiVersionsResponseData(error_code=code)
    if api_key == "ConsumerGroupHeartbeat":
        return ConsumerGroupHeartbeatResponseData(error_code=code, error_message=error.message)
    if api_key == "Metadata":
        return MetadataResponseData()
    raise IllegalStateException("Unsupported api " + str(api_key))

