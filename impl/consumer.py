"""``Consumer``: a facade in the manner of ``KafkaConsumer`` (the classic protocol,
``ClassicKafkaConsumer`` in trunk) over the real network stack and group coordinator.

It wires ``Metadata`` (bootstrapped from the configured brokers), ``NetworkClient`` over an injected
:class:`~impl.network.selectable.Selectable` transport, ``ConsumerNetworkClient``,
``SubscriptionState`` and ``ConsumerCoordinator``, with an injected :class:`~impl.time.Time` and an
injected ``random.Random`` (only for ``leastLoadedNode``'s random starting offset).

What it does not do: fetch records (``poll`` returns the current assignment instead of records),
auto-commit, committed-offset position lookup (newly assigned partitions start at position 0;
``seek`` moves them), pattern subscriptions, interceptors.

``heartbeat_thread.run_once()`` runs one iteration of the coordinator's heartbeat thread (a no-op
returning ``"not-started"`` until ``ensure_active_group`` has started it); the driver decides when
the "thread" runs.

Deviations from ``KafkaConsumer.poll``: Kafka loops ``updateAssignmentMetadataIfNeeded`` +
``pollForFetches`` until records arrive or the timeout expires; without a fetcher no records ever
arrive, so one call does *one* iteration of that loop (the caller polls again, as a poll loop
does).  This also keeps a simulated consumer from spinning without time passing when its heartbeat
is due (``timeToNextHeartbeat`` = 0) but the heartbeat thread has not been scheduled.
"""

from __future__ import annotations

import random
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from impl.consumer_network_client import ConsumerNetworkClient
from impl.coordinator.abstract_coordinator import GroupRebalanceConfig
from impl.coordinator.assignors import assignor_for_name
from impl.coordinator.consumer_coordinator import (
    ConsumerCoordinator,
    ConsumerRebalanceListener,
    OffsetAndMetadata,
    SubscriptionState,
)
from impl.errors import (
    IllegalArgumentException,
    IllegalStateException,
    InvalidGroupIdException,
    KafkaException,
    TimeoutException,
)
from impl.future import PollCondition
from impl.network.metadata import Metadata
from impl.network.network_client import NetworkClient
from impl.network.selectable import Selectable
from impl.protocol import TopicPartition
from impl.time import Time

__all__ = ["Consumer", "ConsumerRebalanceListener", "DEFAULT_CONFIG", "HeartbeatThreadRunner",
           "OffsetAndMetadata", "TopicPartition"]

#: Kafka's consumer defaults for the keys this facade understands.  ``None`` means "derived":
#: ``retry.backoff.max.ms`` / ``reconnect.backoff.max.ms`` /
#: ``socket.connection.setup.timeout.max.ms`` default to their base value (a flat backoff, as in
#: Kafka ≤ 3.6; Kafka's own defaults 1000 / 1000 / 30000 make them exponential with jitter).
DEFAULT_CONFIG: Dict[str, Any] = {
    "bootstrap.servers": [0],
    "group.id": None,
    "group.instance.id": None,
    "client.id": "consumer",
    "session.timeout.ms": 45000,
    "heartbeat.interval.ms": 3000,
    "max.poll.interval.ms": 300000,
    "request.timeout.ms": 30000,
    "default.api.timeout.ms": 60000,
    "retry.backoff.ms": 100,
    "retry.backoff.max.ms": None,
    "reconnect.backoff.ms": 50,
    "reconnect.backoff.max.ms": None,
    "socket.connection.setup.timeout.ms": 10000,
    "socket.connection.setup.timeout.max.ms": None,
    "metadata.max.age.ms": 300000,
    "partition.assignment.strategy": ["range"],
    "enable.auto.commit": False,
    "internal.leave.group.on.close": True,
}

_INT_KEYS = ("session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "request.timeout.ms",
             "default.api.timeout.ms", "retry.backoff.ms", "retry.backoff.max.ms", "reconnect.backoff.ms",
             "reconnect.backoff.max.ms", "socket.connection.setup.timeout.ms",
             "socket.connection.setup.timeout.max.ms", "metadata.max.age.ms")

#: The broker address format of the simulated cluster (``BrokerConfig.host_format`` / ``port``)
#: used for bootstrap entries given as broker ids.
BROKER_HOST_FORMAT = "broker-%d"
BROKER_PORT = 9092

#: ``ConsumerUtils``: a fixed large enough value for max in-flight requests per connection.
MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION = 100


def _config_error(key: str, value: Any, why: str) -> IllegalArgumentException:
    return IllegalArgumentException("Invalid value %r for configuration %s: %s" % (value, key, why))


def _parse_config(config: Mapping[str, Any]) -> Dict[str, Any]:
    unknown = [k for k in config if k not in DEFAULT_CONFIG]
    if unknown:
        raise IllegalArgumentException("Unknown consumer configuration(s): %s (known: %s)"
                                       % (", ".join(sorted(unknown)), ", ".join(sorted(DEFAULT_CONFIG))))
    c = dict(DEFAULT_CONFIG)
    c.update(config)
    for key in _INT_KEYS:
        value = c[key]
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise _config_error(key, value, "must be a non-negative int")
    for key in ("session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "request.timeout.ms"):
        if c[key] <= 0:
            raise _config_error(key, c[key], "must be positive")
    for base in ("retry.backoff.ms", "reconnect.backoff.ms", "socket.connection.setup.timeout.ms"):
        key = base[:-3] + ".max.ms"
        if c[key] is None:
            c[key] = c[base]
    group_id = c["group.id"]
    if group_id is not None and not isinstance(group_id, str):
        raise _config_error("group.id", group_id, "must be a string")
    strategies = c["partition.assignment.strategy"]
    if isinstance(strategies, str):
        strategies = [s for s in strategies.split(",") if s.strip()]
    c["partition.assignment.strategy"] = list(strategies)
    if c["enable.auto.commit"]:
        raise _config_error("enable.auto.commit", c["enable.auto.commit"],
                            "auto-commit is not implemented; set it to False")
    servers = c["bootstrap.servers"]
    if isinstance(servers, (str, int)):
        servers = [servers]
    addresses: List[Tuple[str, int]] = []
    for entry in servers:
        if isinstance(entry, int) and not isinstance(entry, bool):
            addresses.append((BROKER_HOST_FORMAT % entry, BROKER_PORT))
        elif isinstance(entry, str) and ":" in entry:
            host, _, port = entry.rpartition(":")
            try:
                addresses.append((host, int(port)))
            except ValueError:
                raise _config_error("bootstrap.servers", entry, "port is not a number") from None
        else:
            raise _config_error("bootstrap.servers", entry, "expected a broker id or 'host:port'")
    if not addresses:
        raise _config_error("bootstrap.servers", servers, "at least one bootstrap broker is needed")
    c["bootstrap.servers"] = addresses
    return c


class _AlwaysBlock(PollCondition):
    """``() -> !fetcher.hasAvailableFetches()``: there is no fetcher, so never any fetches."""

    __slots__ = ()

    def should_block(self) -> bool:
        return True


_ALWAYS_BLOCK = _AlwaysBlock()


class HeartbeatThreadRunner:
    """The consumer's handle on its coordinator's heartbeat thread (which is created by the first
    ``ensure_active_group`` and replaced after it fails)."""

    __slots__ = ("_coordinator",)

    def __init__(self, coordinator: ConsumerCoordinator) -> None:
        self._coordinator = coordinator

    def is_started(self) -> bool:
        return self._coordinator.heartbeat_thread is not None

    def run_once(self) -> str:
        """One iteration of the heartbeat thread's loop (see ``HeartbeatThread.run_once``)."""
        thread = self._coordinator.heartbeat_thread
        if thread is None:
            return "not-started"
        return thread.run_once()

    def __repr__(self) -> str:
        return "HeartbeatThreadRunner(%r)" % (self._coordinator.heartbeat_thread,)


class Consumer:
    """A consumer in a group: ``subscribe``, ``poll``, ``commit_async``/``commit_sync``, ``close``.

    ``config`` uses Kafka's names (see :data:`DEFAULT_CONFIG`); ``bootstrap.servers`` lists broker
    ids (addressed as ``broker-<id>:9092``, the simulated cluster's addresses) or ``"host:port"``
    strings.  ``partition.assignment.strategy`` lists ``"range"`` / ``"roundrobin"`` in
    preference order.  ``discover_broker_versions``: ask each broker for its ApiVersions on every new
    connection (Kafka's consumer always does; the simulated world does not, and a transport that
    speaks the wire, :class:`~impl.network.wire_selector.WireSelector`, needs it).
    """

    def __init__(self, config: Mapping[str, Any], time: Time, transport: Selectable,
                 rng: random.Random, discover_broker_versions: bool = False) -> None:
        if not isinstance(rng, random.Random):
            raise IllegalArgumentException("rng must be an injected random.Random instance")
        c = _parse_config(config)
        self.config = c
        self.time = time
        self.client_id: str = c["client.id"]
        self.request_timeout_ms: int = c["request.timeout.ms"]
        self.default_api_timeout_ms: int = c["default.api.timeout.ms"]
        self.retry_backoff_ms: int = c["retry.backoff.ms"]
        self.metadata = Metadata(refresh_backoff_ms=c["retry.backoff.ms"],
                                 metadata_expire_ms=c["metadata.max.age.ms"], topics=[])
        self.metadata.bootstrap(c["bootstrap.servers"])
        self.network_client = NetworkClient(
            transport, self.metadata, self.client_id, time, rng,
            max_in_flight_requests_per_connection=MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
            reconnect_backoff_ms=c["reconnect.backoff.ms"],
            reconnect_backoff_max_ms=c["reconnect.backoff.max.ms"],
            default_request_timeout_ms=self.request_timeout_ms,
            connection_setup_timeout_ms=c["socket.connection.setup.timeout.ms"],
            connection_setup_timeout_max_ms=c["socket.connection.setup.timeout.max.ms"],
            discover_broker_versions=discover_broker_versions)
        self.client = ConsumerNetworkClient(self.network_client, self.metadata, time,
                                            retry_backoff_ms=self.retry_backoff_ms,
                                            request_timeout_ms=self.request_timeout_ms)
        self.subscriptions = SubscriptionState()
        self.coordinator: Optional[ConsumerCoordinator] = None
        self.heartbeat_thread: Optional[HeartbeatThreadRunner] = None
        if c["group.id"] is not None:
            rebalance_config = GroupRebalanceConfig(
                group_id=c["group.id"],
                session_timeout_ms=c["session.timeout.ms"],
                rebalance_timeout_ms=c["max.poll.interval.ms"],
                heartbeat_interval_ms=c["heartbeat.interval.ms"],
                group_instance_id=c["group.instance.id"],
                retry_backoff_ms=c["retry.backoff.ms"],
                retry_backoff_max_ms=c["retry.backoff.max.ms"],
                leave_group_on_close=bool(c["internal.leave.group.on.close"]))
            assignors = [assignor_for_name(name) for name in c["partition.assignment.strategy"]]
            # jitter of a non-flat retry backoff draws from its own generator, seeded from rng
            backoff_rng = None
            if c["retry.backoff.max.ms"] > c["retry.backoff.ms"]:
                backoff_rng = random.Random(rng.getrandbits(64))
            self.coordinator = ConsumerCoordinator(rebalance_config, self.client, assignors, self.metadata,
                                                   self.subscriptions, time, backoff_rng)
            self.heartbeat_thread = HeartbeatThreadRunner(self.coordinator)
        self.closed = False

    # ---- subscription ---------------------------------------------------------------------

    def _acquire_and_ensure_open(self) -> None:
        if self.closed:
            raise IllegalStateException("This consumer has already been closed.")

    def _maybe_throw_invalid_group_id_exception(self) -> None:
        if self.coordinator is None:
            raise InvalidGroupIdException(
                "To use the group management or offset commit APIs, you must provide a valid "
                "group.id in the consumer configuration.")

    def subscribe(self, topics: Iterable[str], listener: Optional[ConsumerRebalanceListener] = None) -> None:
        """Subscribe to ``topics`` (replacing the previous subscription); an empty list
        unsubscribes."""
        self._acquire_and_ensure_open()
        self._maybe_throw_invalid_group_id_exception()
        topics = list(topics)
        for topic in topics:
            if not isinstance(topic, str) or not topic.strip():
                raise IllegalArgumentException("Topic collection to subscribe to cannot contain null or empty topic")
        if not topics:
            # treat subscribing to empty topic list as the same as unsubscribing
            self.unsubscribe()
            return
        if self.subscriptions.subscribe(topics, listener):
            self.metadata.set_topics(self.subscriptions.metadata_topics())
            self.metadata.request_update_for_new_topics()

    def unsubscribe(self) -> None:
        self._acquire_and_ensure_open()
        if self.coordinator is not None:
            self.coordinator.on_leave_prepare()
            self.coordinator.maybe_leave_group("the consumer unsubscribed from all topics")
        self.subscriptions.unsubscribe()
        self.metadata.set_topics([])

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Manual assignment (no group management; commits carry no generation)."""
        self._acquire_and_ensure_open()
        partitions = list(partitions)
        if not partitions:
            self.unsubscribe()
            return
        if self.subscriptions.assign_from_user(partitions):
            self.metadata.set_topics(self.subscriptions.metadata_topics())

    def subscription(self) -> List[str]:
        return list(self.subscriptions.subscription)

    def assignment(self) -> List[TopicPartition]:
        """The partitions currently assigned to this consumer, sorted."""
        return self.subscriptions.assigned_partitions()

    def seek(self, partition: TopicPartition, offset: int) -> None:
        self._acquire_and_ensure_open()
        if offset < 0:
            raise IllegalArgumentException("seek offset must not be a negative number")
        self.subscriptions.seek(partition, offset)

    def position(self, partition: TopicPartition) -> int:
        self._acquire_and_ensure_open()
        return self.subscriptions.position(partition)

    # ---- poll -----------------------------------------------------------------------------

    def poll(self, timeout_ms: int) -> List[TopicPartition]:
        """One iteration of ``KafkaConsumer.poll(Duration)``: update the assignment (the join
        itself never waits: ``waitForJoinGroup`` is false, so a zero timeout never blocks), then
        a network poll bounded by the timeout and the time to the next heartbeat.  Returns the
        current assignment (there are no records)."""
        self._acquire_and_ensure_open()
        if timeout_ms < 0:
            raise IllegalArgumentException("Timeout must not be negative")
        if self.subscriptions.has_no_subscription_or_user_assignment():
            raise IllegalStateException("Consumer is not subscribed to any topics or assigned any partitions")
        timer = self.time.timer(timeout_ms)
        self.client.maybe_trigger_wakeup()
        # try to update assignment metadata BUT do not need to block on the timer for join group
        self._update_assignment_metadata_if_needed(timer, False)
        self._poll_for_fetches(timer)
        return self.assignment()

    def _update_assignment_metadata_if_needed(self, timer, wait_for_join_group: bool) -> bool:
        if self.coordinator is not None and not self.coordinator.poll(timer, wait_for_join_group):
            return False
        # (updateFetchPositions: there is no fetcher; positions start at 0)
        return True

    def _poll_for_fetches(self, timer) -> None:
        if self.coordinator is None:
            poll_timeout = timer.remaining_ms()
        else:
            poll_timeout = min(self.coordinator.time_to_next_poll(timer.current_time_ms()), timer.remaining_ms())
        # (no fetches to send or collect)
        poll_timer = self.time.timer(poll_timeout)
        self.client.poll(poll_timer, _ALWAYS_BLOCK)
        timer.update(poll_timer.current_time_ms())

    # ---- offsets --------------------------------------------------------------------------

    def commit_async(self, offsets: Optional[Mapping[TopicPartition, Union[int, OffsetAndMetadata]]] = None,
                     callback: Any = None) -> None:
        """Commit ``offsets`` (default: the positions of the owned partitions) without blocking;
        ``callback(offsets, exception)`` runs from a later poll/commit."""
        self._acquire_and_ensure_open()
        self._maybe_throw_invalid_group_id_exception()
        if offsets is None:
            offsets = self.subscriptions.all_consumed()
        self.coordinator.commit_offsets_async(dict(offsets), callback)

    def commit_sync(self, offsets: Optional[Mapping[TopicPartition, Union[int, OffsetAndMetadata]]] = None,
                    timeout_ms: Optional[int] = None) -> None:
        """Commit synchronously; raises TimeoutException if not done within the timeout
        (default ``default.api.timeout.ms``), or the commit's fatal error."""
        self._acquire_and_ensure_open()
        self._maybe_throw_invalid_group_id_exception()
        if timeout_ms is None:
            timeout_ms = self.default_api_timeout_ms
        if offsets is None:
            offsets = self.subscriptions.all_consumed()
        offsets = dict(offsets)
        if not self.coordinator.commit_offsets_sync(offsets, self.time.timer(timeout_ms)):
            raise TimeoutException("Timeout of %dms expired before successfully committing offsets %r"
                                   % (timeout_ms, offsets))

    def committed(self, partitions: Iterable[TopicPartition],
                  timeout_ms: Optional[int] = None) -> Dict[TopicPartition, Optional[OffsetAndMetadata]]:
        """The last committed offsets of ``partitions`` (OffsetFetch)."""
        self._acquire_and_ensure_open()
        self._maybe_throw_invalid_group_id_exception()
        if timeout_ms is None:
            timeout_ms = self.default_api_timeout_ms
        offsets = self.coordinator.fetch_committed_offsets(list(partitions), self.time.timer(timeout_ms))
        if offsets is None:
            raise TimeoutException("Timeout of %dms expired before the last committed offset for "
                                   "partitions %r could be determined." % (timeout_ms, list(partitions)))
        return offsets

    # ---- lifecycle ------------------------------------------------------------------------

    def wakeup(self) -> None:
        """Make the current or next blocking call raise WakeupException."""
        self.client.wakeup()

    def close(self, timeout_ms: int = 30000) -> None:
        """Close: leave the group (LeaveGroup for a joined dynamic member) and wait up to
        ``min(timeout_ms, request.timeout.ms)`` for pending coordinator requests."""
        if self.closed:
            return
        if timeout_ms < 0:
            raise IllegalArgumentException("The timeout cannot be negative.")
        first_exception: Optional[Exception] = None
        close_timer = self.time.timer(min(timeout_ms, self.request_timeout_ms))
        try:
            if self.coordinator is not None:
                # This is a blocking call bound by the time remaining in closeTimer
                self.coordinator.close(close_timer)
        except Exception as e:
            first_exception = e
        try:
            self.client.close()
        except Exception as e:
            if first_exception is None:
                first_exception = e
        self.closed = True
        if first_exception is not None:
            raise KafkaException("Failed to close kafka consumer") from first_exception

    def __repr__(self) -> str:
        return "Consumer(client_id=%s, coordinator=%r, assignment=%r)" % (
            self.client_id, self.coordinator, self.assignment())
