"""``ModernConsumer``: a consumer in a KIP-848 group (``group.protocol=consumer``) over impl/'s
network stack — the same Metadata, NetworkClient and ConsumerNetworkClient as the classic
:class:`impl.consumer.Consumer`, with :class:`impl.membership.AsyncConsumerMembership` for the
membership, a coordinator lookup (FindCoordinator, as Kafka 4.1's ``CoordinatorRequestManager``)
and OffsetCommit with the member's id and epoch (v9, as ``CommitRequestManager`` sends it).

Kafka runs the membership on a background thread; here :meth:`ModernConsumer.poll` is the
application's poll followed by background iterations (each: the coordinator lookup, the
membership's step, one network poll) until its timeout — one thread, the same order of steps.
The topic ids of an assignment are resolved through Metadata (v10+ carries them).
"""

from __future__ import annotations

import base64
import random
from typing import Any, Dict, Iterable, List, Mapping, Optional

from impl.consumer import _config_error, _parse_config
from impl.consumer_network_client import ConsumerNetworkClient
from impl.errors import (Errors, IllegalArgumentException, IllegalStateException, KafkaException, RetriableException,
                         TimeoutException)
from impl.future import FunctionListener, RequestFuture
from impl.membership.async_consumer import AsyncConsumerMembership
from impl.membership.heartbeat_request_manager import COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
from impl.membership.member_state import MemberState
from impl.network.metadata import Metadata, Node
from impl.network.network_client import NetworkClient
from impl.network.selectable import Selectable
from impl.protocol import (CoordinatorType, FindCoordinatorRequestData, OffsetCommitRequestData,
                           OffsetCommitRequestPartition, OffsetCommitRequestTopic, TopicPartition)
from impl.time import INT_MAX, Time

#: Settings of the classic protocol that Kafka refuses with group.protocol=consumer
#: (ConsumerConfig.checkUnsupportedConfigsPostProcess / CLASSIC_PROTOCOL_UNSUPPORTED_CONFIGS): the
#: coordinator owns the session, the heartbeat interval and the assignment
CLASSIC_ONLY = ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy")
#: KIP-848's own setting: the server-side assignor to ask for (None: the coordinator's default)
REMOTE_ASSIGNOR = "group.remote.assignor"


def generate_member_id(rng: random.Random) -> str:
    """A consumer-generated member id (KIP-1082: ``Uuid.randomUuid().toString()``, URL-safe
    base64 of 16 bytes without padding)."""
    return base64.urlsafe_b64encode(rng.getrandbits(128).to_bytes(16, "big")).decode().rstrip("=")


class ModernConsumer:
    """``KafkaConsumer`` with ``group.protocol=consumer``: ``subscribe``, ``poll``, ``commit_sync``,
    ``assignment``, ``close``. *config* uses Kafka's names (those of :data:`impl.consumer.DEFAULT_CONFIG`
    without :data:`CLASSIC_ONLY`, plus ``group.remote.assignor``)."""

    def __init__(self, config: Mapping[str, Any], time: Time, transport: Selectable, rng: random.Random,
                 discover_broker_versions: bool = True) -> None:
        if not isinstance(rng, random.Random):
            raise IllegalArgumentException("rng must be an injected random.Random instance")
        config = dict(config)
        for key in CLASSIC_ONLY:
            if key in config:
                raise _config_error(key, config[key], "not supported when group.protocol=consumer (the "
                                                      "coordinator decides it)")
        self.server_assignor: Optional[str] = config.pop(REMOTE_ASSIGNOR, None)
        c = _parse_config(config)
        if c["group.id"] is None:
            raise _config_error("group.id", None, "a group.protocol=consumer consumer needs a group")
        self.config = c
        self.time = time
        self.metadata = Metadata(refresh_backoff_ms=c["retry.backoff.ms"], metadata_expire_ms=c["metadata.max.age.ms"],
                                 topics=[])
        self.metadata.bootstrap(c["bootstrap.servers"])
        self.network_client = NetworkClient(
            transport, self.metadata, c["client.id"], time, rng, max_in_flight_requests_per_connection=5,
            reconnect_backoff_ms=c["reconnect.backoff.ms"], reconnect_backoff_max_ms=c["reconnect.backoff.max.ms"],
            default_request_timeout_ms=c["request.timeout.ms"],
            connection_setup_timeout_ms=c["socket.connection.setup.timeout.ms"],
            connection_setup_timeout_max_ms=c["socket.connection.setup.timeout.max.ms"],
            discover_broker_versions=discover_broker_versions)
        self.client = ConsumerNetworkClient(self.network_client, self.metadata, time,
                                            retry_backoff_ms=c["retry.backoff.ms"],
                                            request_timeout_ms=c["request.timeout.ms"])
        self.member_id = generate_member_id(rng)
        self.membership: Optional[AsyncConsumerMembership] = None
        self.coordinator: Optional[Node] = None
        self._find_coordinator: Optional[RequestFuture] = None
        self._fatal: Optional[KafkaException] = None
        self.closed = False

    # ---- the application's calls ---------------------------------------------------------
    def subscribe(self, topics: Iterable[str], listener=None) -> None:
        if self.closed:
            raise IllegalStateException("This consumer has already been closed.")
        if self.membership is not None:
            raise IllegalStateException("subscribe: this consumer is subscribed already")
        topics = sorted(set(topics))
        if not topics:
            raise IllegalArgumentException("subscribe: no topic")
        c = self.config
        self.metadata.set_topics(topics)
        self.metadata.request_update()
        self.membership = AsyncConsumerMembership(
            self.time, c["group.id"], self.member_id, topics, self._topic_name, c["max.poll.interval.ms"],
            c["retry.backoff.ms"], c["retry.backoff.max.ms"], group_instance_id=c["group.instance.id"],
            listener=listener, server_assignor=self.server_assignor)

    def poll(self, timeout_ms: int) -> List[TopicPartition]:
        """The application's poll (callbacks run here), then background iterations for up to
        *timeout_ms*. Returns the assignment (there are no records). A fatal error of the
        membership (FATAL: e.g. UNRELEASED_INSTANCE_ID) is raised, as Kafka's poll raises it."""
        self._ensure_open()
        if timeout_ms < 0:
            raise IllegalArgumentException("Timeout must not be negative")
        if self.membership is None:
            raise IllegalStateException("Consumer is not subscribed to any topics")
        self.membership.poll()
        timer = self.time.timer(timeout_ms)
        while True:
            self._run_once(timer.remaining_ms())
            if self.membership.membership_manager.background_events:  # callbacks the background step queued
                self.membership.poll()
            timer.update()
            if timer.is_expired():
                break
        self._maybe_throw_fatal()
        return self.assignment()

    def assignment(self) -> List[TopicPartition]:
        return [] if self.membership is None else sorted(self.membership.membership_manager.assigned_partitions)

    @property
    def member_epoch(self) -> int:
        return 0 if self.membership is None else self.membership.membership_manager.member_epoch

    @property
    def state(self) -> MemberState:
        return MemberState.UNSUBSCRIBED if self.membership is None else self.membership.membership_manager.state

    def commit_sync(self, offsets: Mapping[TopicPartition, int], timeout_ms: int = 60000) -> None:
        """OffsetCommit (v9: the member id and epoch) of *offsets*; raises the commit's error or
        TimeoutException."""
        self._ensure_open()
        mm = self.membership.membership_manager if self.membership is not None else None
        if mm is None or self.coordinator is None:
            raise KafkaException("commit_sync: not in a group with a known coordinator")
        by_topic: Dict[str, list] = {}
        for tp, offset in sorted(offsets.items()):
            by_topic.setdefault(tp.topic, []).append(OffsetCommitRequestPartition(tp.partition, int(offset)))
        data = OffsetCommitRequestData(group_id=self.config["group.id"], generation_id=mm.member_epoch,
                                       member_id=mm.member_id, group_instance_id=mm.group_instance_id,
                                       topics=[OffsetCommitRequestTopic(t, ps) for t, ps in by_topic.items()])
        future = self.client.send(self.coordinator, data)
        if not self.client.poll_future(future, self.time.timer(timeout_ms)):
            raise TimeoutException(f"Timeout of {timeout_ms}ms expired before successfully committing offsets")
        if future.failed():
            raise future.exception()
        for topic in future.value().response_body.topics:
            for p in topic.partitions:
                if p.error_code != 0:
                    error = Errors.for_code(p.error_code)
                    raise error.exception(f"{error.name}: OffsetCommit of {topic.name}-{p.partition_index} at member "
                                          f"epoch {mm.member_epoch}")

    def close(self, timeout_ms: int = 30000) -> None:
        """``close``: onPartitionsRevoked, then the leave heartbeat (epoch -1, or -2 for a static
        member), waited for up to ``min(timeout_ms, request.timeout.ms)``."""
        if self.closed:
            return
        if timeout_ms < 0:
            raise IllegalArgumentException("The timeout cannot be negative.")
        timer = self.time.timer(min(timeout_ms, self.config["request.timeout.ms"]))
        if self.membership is not None:
            self.membership.close()
            while not timer.is_expired() and (self.membership.membership_manager.state == MemberState.LEAVING
                                              or self.client.has_pending_requests()):
                self._run_once(timer.remaining_ms())
                timer.update()
        self.client.close()
        self.closed = True

    # ---- the background thread ----------------------------------------------------------
    def _run_once(self, max_wait_ms: int) -> None:
        """One iteration: find the coordinator if unknown, the membership's step (a heartbeat to
        send), one network poll."""
        if self.coordinator is None and self._find_coordinator is None:
            self._lookup_coordinator()
        request, ignored = self.membership.background_poll(self.coordinator is not None)
        if request is not None:
            future = self.client.send(self.coordinator, request)
            future.add_listener(FunctionListener(
                lambda response: self._on_heartbeat_response(response.response_body, ignored),
                lambda e: self._on_heartbeat_failure(e, ignored)))
        wait = max(0, min(max_wait_ms, self._time_to_next_heartbeat()))
        self.client.poll(self.time.timer(wait))

    def _time_to_next_heartbeat(self) -> int:
        hrm = self.membership.heartbeat_request_manager
        now = self.time.milliseconds()
        if self.coordinator is None or self.membership.membership_manager.should_heartbeat_now():
            return 50
        timer = hrm.heartbeat_request_state.heartbeat_timer
        timer.update(now)
        return max(timer.remaining_ms(), hrm.heartbeat_request_state.remaining_backoff_ms(now), 1)

    def _on_heartbeat_response(self, body, ignored: bool) -> None:
        if body.error_code in (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE):
            self._mark_coordinator_unknown()
        if not ignored:
            self.membership.on_response(body)
        hrm = self.membership.heartbeat_request_manager
        if hrm.fatal_error is not None and self._fatal is None:
            self._fatal = KafkaException(f"the consumer group heartbeat failed fatally: {hrm.fatal_error}")

    def _on_heartbeat_failure(self, e: Exception, ignored: bool) -> None:
        self._mark_coordinator_unknown()  # CoordinatorRequestManager.handleCoordinatorDisconnect
        if not ignored:
            self.membership.on_failure(e if isinstance(e, Exception) else KafkaException(str(e)))

    def _lookup_coordinator(self) -> None:
        node = self.client.least_loaded_node()
        if node is None:
            return
        data = FindCoordinatorRequestData(key=self.config["group.id"], key_type=CoordinatorType.GROUP)
        future = self.client.send(node, data)
        self._find_coordinator = future

        def found(response) -> None:
            self._find_coordinator = None
            body = response.response_body
            if body.error_code == 0:
                # Integer.MAX_VALUE - node id: a connection of its own for coordinator traffic
                self.coordinator = Node(INT_MAX - body.node_id, body.host, body.port)
                self.client.try_connect(self.coordinator)

        def failed(e: Exception) -> None:
            self._find_coordinator = None
            if not isinstance(e, RetriableException) and self._fatal is None:
                self._fatal = KafkaException(f"FindCoordinator failed: {e}")

        future.add_listener(FunctionListener(found, failed))

    def _mark_coordinator_unknown(self) -> None:
        if self.coordinator is not None:
            self.client.disconnect_async(self.coordinator)
        self.coordinator = None

    def _topic_name(self, topic_id: str) -> Optional[str]:
        name = self.metadata.fetch().topic_name(topic_id)
        if name is None:
            self.metadata.request_update()
        return name

    def _ensure_open(self) -> None:
        if self.closed:
            raise IllegalStateException("This consumer has already been closed.")

    def _maybe_throw_fatal(self) -> None:
        if self._fatal is not None:
            fatal, self._fatal = self._fatal, None
            raise fatal
