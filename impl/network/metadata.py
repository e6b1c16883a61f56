"""Cluster metadata: ``Node``, ``Cluster`` and ``Metadata`` (``org.apache.kafka.clients.Metadata``).

``Metadata`` decides *when* a refresh is due (protocol reference §4.4); ``NetworkClient``'s
``DefaultMetadataUpdater`` sends the MetadataRequest and feeds the response back through
``update`` / ``failed_update``.

``timeToAllowUpdate`` exists in two variants: the flat ``refresh_backoff_ms`` of Kafka ≤ 3.6
(default) and trunk's KIP-580 exponential backoff (pass ``refresh_backoff`` =
an :class:`~impl.time.ExponentialBackoff`).
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from impl.errors import (
    Errors,
    IllegalStateException,
    KafkaException,
    TopicAuthorizationException,
)
from impl.protocol import MetadataRequestData, MetadataRequestTopic, MetadataResponseData, TopicPartition
from impl.time import ExponentialBackoff


def _java_long(value: int) -> int:
    """The value a Java ``long`` expression holds: two's-complement wrap-around at 64 bits.
    ``last + age - now`` overflows when the clock went back and ``metadata.max.age.ms`` is huge;
    Kafka then reads a negative time, i.e. an update is due at once (proved in properties/proofs/timing.py)."""
    if -_LONG_LIMIT <= value < _LONG_LIMIT:
        return value  # nearly always: no wrap-around
    return (value + _LONG_LIMIT) % (1 << 64) - _LONG_LIMIT


_LONG_LIMIT = 1 << 63


class Node:
    """``org.apache.kafka.common.Node``: a broker endpoint.

    Equality covers id, host, port and rack (as in Java); the hash is the id only, so hashing is
    deterministic (no string hashing) and nodes can key dicts cheaply.
    """

    __slots__ = ("id", "host", "port", "rack")

    def __init__(self, id: int, host: str, port: int, rack: Optional[str] = None) -> None:
        self.id = id
        self.host = host
        self.port = port
        self.rack = rack

    @property
    def id_string(self) -> str:
        return str(self.id)

    def is_empty(self) -> bool:
        """``Node.isEmpty()``: no usable address."""
        return self.host is None or self.host == "" or self.port < 0

    def has_rack(self) -> bool:
        return self.rack is not None

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Node):
            return NotImplemented
        return (self.id == other.id and self.port == other.port and self.host == other.host
                and self.rack == other.rack)

    def __hash__(self) -> int:
        return self.id

    def __repr__(self) -> str:
        return "%s:%d (id: %d rack: %s)" % (self.host, self.port, self.id, self.rack)

    @staticmethod
    def no_node() -> "Node":
        return _NO_NODE


_NO_NODE = Node(-1, "", -1)


class PartitionInfo:
    """``org.apache.kafka.common.PartitionInfo`` (leader may be None)."""

    __slots__ = ("topic", "partition", "leader", "replicas", "in_sync_replicas", "offline_replicas")

    def __init__(self, topic: str, partition: int, leader: Optional[Node],
                 replicas: Sequence[Node] = (), in_sync_replicas: Sequence[Node] = (),
                 offline_replicas: Sequence[Node] = ()) -> None:
        self.topic = topic
        self.partition = partition
        self.leader = leader
        self.replicas = tuple(replicas)
        self.in_sync_replicas = tuple(in_sync_replicas)
        self.offline_replicas = tuple(offline_replicas)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartitionInfo):
            return NotImplemented
        return (self.topic == other.topic and self.partition == other.partition
                and self.leader == other.leader and self.replicas == other.replicas
                and self.in_sync_replicas == other.in_sync_replicas
                and self.offline_replicas == other.offline_replicas)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "Partition(topic = %s, partition = %d, leader = %s)" % (
            self.topic, self.partition, None if self.leader is None else self.leader.id)


class Cluster:
    """``org.apache.kafka.common.Cluster``: an immutable snapshot of nodes and partitions.

    Node order is the order the brokers were listed in (Kafka's randomisation of the starting
    node lives in ``NetworkClient.leastLoadedNode``'s random offset, which is injected).
    """

    __slots__ = ("_nodes", "_nodes_by_id", "_partitions", "_partitions_by_topic",
                 "_unauthorized_topics", "_internal_topics", "_controller", "cluster_id",
                 "_is_bootstrap_configured", "_topic_ids", "_topic_names")

    def __init__(self, cluster_id: Optional[str], nodes: Iterable[Node],
                 partitions: Iterable[PartitionInfo] = (),
                 unauthorized_topics: Iterable[str] = (), internal_topics: Iterable[str] = (),
                 controller: Optional[Node] = None, is_bootstrap_configured: bool = False,
                 topic_ids: Optional[Dict[str, str]] = None) -> None:
        self.cluster_id = cluster_id
        self._topic_ids: Dict[str, str] = dict(topic_ids or {})  # name -> Uuid string (Metadata v10+)
        self._topic_names: Dict[str, str] = {i: name for name, i in self._topic_ids.items()}
        self._nodes: Tuple[Node, ...] = tuple(nodes)
        self._nodes_by_id: Dict[int, Node] = {n.id: n for n in self._nodes}
        self._partitions: Dict[TopicPartition, PartitionInfo] = {}
        self._partitions_by_topic: Dict[str, List[PartitionInfo]] = {}
        for p in partitions:
            self._partitions[TopicPartition(p.topic, p.partition)] = p
            self._partitions_by_topic.setdefault(p.topic, []).append(p)
        self._unauthorized_topics = tuple(unauthorized_topics)
        self._internal_topics = tuple(internal_topics)
        self._controller = controller
        self._is_bootstrap_configured = is_bootstrap_configured

    @staticmethod
    def empty() -> "Cluster":
        return Cluster(None, ())

    @staticmethod
    def bootstrap(addresses: Sequence[Tuple[str, int]]) -> "Cluster":
        """``Cluster.bootstrap``: one node per address with ids −1, −2, ..."""
        nodes = [Node(-(i + 1), host, port) for i, (host, port) in enumerate(addresses)]
        return Cluster(None, nodes, is_bootstrap_configured=True)

    def nodes(self) -> Tuple[Node, ...]:
        return self._nodes

    def node_by_id(self, node_id: int) -> Optional[Node]:
        return self._nodes_by_id.get(node_id)

    def leader_for(self, tp: TopicPartition) -> Optional[Node]:
        info = self._partitions.get(tp)
        return None if info is None else info.leader

    def partition(self, tp: TopicPartition) -> Optional[PartitionInfo]:
        return self._partitions.get(tp)

    def partitions_for_topic(self, topic: str) -> List[PartitionInfo]:
        return list(self._partitions_by_topic.get(topic, ()))

    def partition_count_for_topic(self, topic: str) -> Optional[int]:
        parts = self._partitions_by_topic.get(topic)
        return None if parts is None else len(parts)

    def topic_id(self, topic: str) -> Optional[str]:
        """``topicId(name)``: the topic's id (Metadata v10+), None if unknown."""
        return self._topic_ids.get(topic)

    def topic_name(self, topic_id: str) -> Optional[str]:
        """``topicName(id)``: the name of the topic with this id, None if unknown (KIP-848's
        assignments name topics by id)."""
        return self._topic_names.get(topic_id)

    def topics(self) -> List[str]:
        return list(self._partitions_by_topic)

    def unauthorized_topics(self) -> Tuple[str, ...]:
        return self._unauthorized_topics

    def internal_topics(self) -> Tuple[str, ...]:
        return self._internal_topics

    def controller(self) -> Optional[Node]:
        return self._controller

    def is_bootstrap_configured(self) -> bool:
        return self._is_bootstrap_configured

    def same_contents(self, other: "Cluster") -> bool:
        """Whether two snapshots describe the same nodes and partitions (equivalent responses)."""
        return (self._nodes == other._nodes and self._partitions == other._partitions
                and self.cluster_id == other.cluster_id and self._controller == other._controller)

    def __repr__(self) -> str:
        return "Cluster(id = %s, nodes = %r, partitions = %r)" % (
            self.cluster_id, list(self._nodes), list(self._partitions.values()))


class MetadataRequestAndVersion:
    """``Metadata.MetadataRequestAndVersion``."""

    __slots__ = ("request", "request_version", "is_partial_update")

    def __init__(self, request: MetadataRequestData, request_version: int, is_partial_update: bool) -> None:
        self.request = request
        self.request_version = request_version
        self.is_partial_update = is_partial_update


#: a last refresh long before any clock a world starts (see ``request_update_for_new_topics``);
#: the model's twin is model.netclient.LONG_AGO
LONG_AGO = -(2 ** 62)


class Metadata:
    """``org.apache.kafka.clients.Metadata`` (consumer flavour: a fixed topic interest list).

    ``topics=None`` means "all topics" (MetadataRequest with ``topics=None``); otherwise only the
    listed topics are requested.  Use ``set_topics`` to change the interest (this bumps the
    request version and requests an update, like ``ConsumerMetadata``' subscription change).
    """

    __slots__ = ("refresh_backoff_ms", "metadata_expire_ms", "_refresh_backoff",
                 "_update_version", "_request_version", "_last_refresh_ms",
                 "_last_successful_refresh_ms", "_attempts", "_equivalent_response_count",
                 "_need_full_update", "_need_partial_update", "_cluster", "_fatal_exception",
                 "_unauthorized_topics", "_is_closed", "_topics", "_allow_auto_topic_creation")

    def __init__(self, refresh_backoff_ms: int = 100, metadata_expire_ms: int = 300000,
                 refresh_backoff: Optional[ExponentialBackoff] = None,
                 topics: Optional[Sequence[str]] = None,
                 allow_auto_topic_creation: bool = False) -> None:
        self.refresh_backoff_ms = refresh_backoff_ms
        self.metadata_expire_ms = metadata_expire_ms
        # None => Kafka <= 3.6 flat backoff; else trunk (KIP-580) exponential backoff.
        self._refresh_backoff = refresh_backoff
        self._update_version = 0
        self._request_version = 0
        self._last_refresh_ms = 0
        self._last_successful_refresh_ms = 0
        self._attempts = 0
        self._equivalent_response_count = 0
        self._need_full_update = False
        self._need_partial_update = False
        self._cluster = Cluster.empty()
        self._fatal_exception: Optional[KafkaException] = None
        self._unauthorized_topics: List[str] = []
        self._is_closed = False
        self._topics: Optional[List[str]] = None if topics is None else list(topics)
        self._allow_auto_topic_creation = allow_auto_topic_creation

    # ---- queries ------------------------------------------------------------------------

    def fetch(self) -> Cluster:
        """The current cluster view."""
        return self._cluster

    def update_version(self) -> int:
        return self._update_version

    def request_version(self) -> int:
        return self._request_version

    def last_successful_update(self) -> int:
        return self._last_successful_refresh_ms

    def last_refresh_ms(self) -> int:
        return self._last_refresh_ms

    def attempts(self) -> int:
        return self._attempts

    def update_requested(self) -> bool:
        return self._need_full_update or self._need_partial_update

    def topics(self) -> Optional[List[str]]:
        return self._topics

    # ---- timing -------------------------------------------------------------------------

    def time_to_allow_update(self, now_ms: int) -> int:
        """How long until backoff allows the next update (0 if allowed now)."""
        backoff = self._refresh_backoff
        if backoff is None:
            # Kafka <= 3.6: flat refresh.backoff.ms after the last refresh attempt.
            t = self._last_refresh_ms + self.refresh_backoff_ms - now_ms
            if not -_LONG_LIMIT <= t < _LONG_LIMIT:
                t = _java_long(t)
            return t if t > 0 else 0
        # Trunk (KIP-580): backoff on failed attempts and on equivalent (no-progress) responses.
        attempts = self._attempts
        backoff_for_attempts = max(
            _java_long(self._last_refresh_ms + backoff.backoff(attempts - 1 if attempts > 0 else 0) - now_ms), 0)
        # Periodic updates based on expiration reset the equivalent response count.
        if max(_java_long(self._last_successful_refresh_ms + self.metadata_expire_ms - now_ms), 0) == 0:
            self._equivalent_response_count = 0
        count = self._equivalent_response_count
        backoff_for_equivalent = max(
            _java_long(self._last_refresh_ms + (backoff.backoff(count - 1) if count > 0 else 0) - now_ms), 0)
        return max(backoff_for_attempts, backoff_for_equivalent)

    def time_to_next_update(self, now_ms: int) -> int:
        """``max(timeToExpire, timeToAllowUpdate(now))``; 0 means an update is due now."""
        if self._need_full_update or self._need_partial_update:
            time_to_expire = 0
        else:
            time_to_expire = self._last_successful_refresh_ms + self.metadata_expire_ms - now_ms
            if not -_LONG_LIMIT <= time_to_expire < _LONG_LIMIT:  # _java_long's wrap-around, inline (every poll asks)
                time_to_expire = _java_long(time_to_expire)
            if time_to_expire < 0:
                time_to_expire = 0
        allow = self.time_to_allow_update(now_ms)
        return time_to_expire if time_to_expire > allow else allow

    # ---- mutations ----------------------------------------------------------------------

    def bootstrap(self, addresses: Sequence[Tuple[str, int]]) -> None:
        """``Metadata.bootstrap``: seed with bootstrap nodes and request a full update."""
        self._need_full_update = True
        self._update_version += 1
        self._cluster = Cluster.bootstrap(addresses)

    def request_update(self, reset_equivalent_response_backoff: bool = False) -> int:
        """Request a full update; returns the current ``update_version``."""
        self._need_full_update = True
        if reset_equivalent_response_backoff:
            self._equivalent_response_count = 0
        return self._update_version

    def request_update_for_new_topics(self) -> int:
        """``requestUpdateForNewTopics``: "override the timestamp of last refresh to let immediate
        update" (Kafka sets lastRefreshMs = 0, epoch time; the simulated worlds' clocks start at 0,
        so long ago is :data:`LONG_AGO` here) and request a partial update; returns the current
        ``update_version``."""
        self._last_refresh_ms = LONG_AGO
        self._need_partial_update = True
        self._equivalent_response_count = 0
        self._request_version += 1
        return self._update_version

    def set_topics(self, topics: Optional[Sequence[str]]) -> None:
        new = None if topics is None else list(topics)
        if new != self._topics:
            self._topics = new
            self._request_version += 1
            self.request_update(True)

    def new_metadata_request_and_version(self, now_ms: int) -> MetadataRequestAndVersion:
        """Always a full request here (partial new-topic requests are not modelled)."""
        if self._topics is None:
            request = MetadataRequestData(topics=None,
                                          allow_auto_topic_creation=self._allow_auto_topic_creation)
        else:
            request = MetadataRequestData(topics=[MetadataRequestTopic(t) for t in self._topics],
                                          allow_auto_topic_creation=self._allow_auto_topic_creation)
        return MetadataRequestAndVersion(request, self._request_version, False)

    def update(self, request_version: int, response: MetadataResponseData, is_partial_update: bool,
               now_ms: int) -> None:
        """``Metadata.update``: a successful response arrived."""
        if response is None:
            raise ValueError("Metadata response cannot be null")
        if self._is_closed:
            raise IllegalStateException("Update requested after metadata close")
        self._need_partial_update = request_version < self._request_version
        self._last_refresh_ms = now_ms
        self._attempts = 0
        self._update_version += 1
        if not is_partial_update:
            self._need_full_update = False
            self._last_successful_refresh_ms = now_ms
        # Reset to 0 below if the response turns out not to be equivalent to what we had.
        self._equivalent_response_count += 1
        new_cluster = self._handle_metadata_response(response)
        if not new_cluster.same_contents(self._cluster):
            self._equivalent_response_count = 0
        self._cluster = new_cluster

    def _handle_metadata_response(self, response: MetadataResponseData) -> Cluster:
        nodes = [Node(b.node_id, b.host, b.port, b.rack) for b in response.brokers]
        by_id = {n.id: n for n in nodes}
        partitions: List[PartitionInfo] = []
        unauthorized: List[str] = []
        internal: List[str] = []
        topic_ids: Dict[str, str] = {}
        for topic in response.topics:
            if topic.is_internal:
                internal.append(topic.name)
            if topic.error_code == Errors.TOPIC_AUTHORIZATION_FAILED.value:
                unauthorized.append(topic.name)
                continue
            if topic.error_code != Errors.NONE.value:
                continue
            if topic.topic_id is not None:
                topic_ids[topic.name] = topic.topic_id
            for p in topic.partitions:
                partitions.append(PartitionInfo(
                    topic.name, p.partition_index, by_id.get(p.leader_id),
                    [by_id[r] for r in p.replica_nodes if r in by_id],
                    [by_id[r] for r in p.isr_nodes if r in by_id],
                    [by_id[r] for r in p.offline_replicas if r in by_id]))
        self._unauthorized_topics = unauthorized
        return Cluster(response.cluster_id, nodes, partitions, unauthorized, internal,
                       by_id.get(response.controller_id), topic_ids=topic_ids)

    def failed_update(self, now_ms: int) -> None:
        """``Metadata.failedUpdate``: an attempt failed; back off from ``now_ms``."""
        self._last_refresh_ms = now_ms
        self._attempts += 1
        self._equivalent_response_count = 0

    def fatal_error(self, exception: KafkaException) -> None:
        self._fatal_exception = exception

    def maybe_throw_any_exception(self) -> None:
        """Raise (and clear) a fatal error, else a recoverable one (unauthorized topics)."""
        exc = self._fatal_exception
        if exc is None and self._unauthorized_topics:
            exc = TopicAuthorizationException(
                "Not authorized to access topics: " + str(sorted(self._unauthorized_topics)))
        self._fatal_exception = None
        self._unauthorized_topics = []
        if exc is not None:
            raise exc

    def close(self) -> None:
        self._is_closed = True

    def is_closed(self) -> bool:
        return self._is_closed

    def __repr__(self) -> str:
        return ("Metadata(update_version=%d, need_full_update=%s, last_refresh_ms=%d, "
                "last_successful_refresh_ms=%d, attempts=%d)" % (
                    self._update_version, self._need_full_update, self._last_refresh_ms,
                    self._last_successful_refresh_ms, self._attempts))
