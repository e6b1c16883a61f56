"""Group persistence in ``__consumer_offsets`` (``kafka.coordinator.group.GroupMetadataManager``).

* :class:`OffsetsTopicLog` is the in-memory ``__consumer_offsets`` topic.  One instance is shared
  by every broker of a :class:`~impl.server.cluster.Cluster` (it stands for the replicated log,
  which outlives coordinator moves).  An append is accepted only from the partition's current
  leader (else ``NOT_LEADER_OR_FOLLOWER``, like a produce to a follower), and append errors can be
  injected to exercise the coordinator's failure paths.  The log is kept *compacted*: per
  partition, the latest record of every key in order of last write (a tombstone deletes the key).
  Loading reads the latest record per key, which is all Kafka's loader keeps anyway.
* :class:`GroupMetadataManager` is one broker's view: the group cache, the partitions it owns and
  the partitions it is loading (``COORDINATOR_LOAD_IN_PROGRESS`` until :meth:`finish_loading`),
  ``store_group`` / ``store_offsets`` / ``get_offsets``, and load / unload of a partition.

Only Stable and Empty groups are persisted: a group record is written when the leader's
assignment is stored (SyncGroup), when a group becomes Empty, and when a static member is
replaced in a Stable group.  A loaded group is Stable if its record has members, else Empty.
"""

from __future__ import annotations

from typing import Callable, Dict, Hashable, Iterable, List, NamedTuple, Optional, Tuple

from impl.errors import Errors, IllegalArgumentException
from impl.protocol import (INVALID_OFFSET, NO_LEADER_EPOCH, NO_METADATA, Assignment, Subscription,
                           TopicPartition)
from impl.server.config import BrokerConfig
from impl.server.group_metadata import DEAD, EMPTY, STABLE, GroupMetadata, MemberMetadata
from impl.time import Time

__all__ = [
    "java_string_hash_code", "utils_abs", "partition_for", "GROUP_METADATA_TOPIC_NAME",
    "OffsetAndMetadata", "MemberMetadataValue", "GroupMetadataValue", "GroupMetadataKey",
    "OffsetKey", "OffsetsTopicLog", "OffsetFetchPartitionData", "GroupMetadataManager",
]

GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"

_INT_MIN = -(1 << 31)


# --------------------------------------------------------------------------------------------
# partitionFor (protocol reference §2)
# --------------------------------------------------------------------------------------------

def java_string_hash_code(s: str) -> int:
    """Java's ``String.hashCode``: ``h = 31*h + c`` over UTF-16 code units, 32-bit wrap-around."""
    h = 0
    if s.isascii():
        for ch in s:
            h = (31 * h + ord(ch)) & 0xFFFFFFFF
    else:
        data = s.encode("utf-16-be", "surrogatepass")
        for i in range(0, len(data), 2):
            h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - 0x100000000 if h & 0x80000000 else h


def utils_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: ``Integer.MIN_VALUE`` maps to 0, anything else to ``|n|``."""
    return 0 if n == _INT_MIN else abs(n)


def partition_for(group_id: str, num_partitions: int) -> int:
    """``Utils.abs(groupId.hashCode) % offsets.topic.num.partitions``."""
    return utils_abs(java_string_hash_code(group_id)) % num_partitions


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------

class OffsetAndMetadata(NamedTuple):
    """``OffsetAndMetadata`` (the offset-commit record value)."""

    offset: int
    leader_epoch: int = NO_LEADER_EPOCH
    metadata: str = NO_METADATA
    commit_timestamp: int = 0
    expire_timestamp: Optional[int] = None


class MemberMetadataValue(NamedTuple):
    """One member inside a group-metadata record."""

    member_id: str
    group_instance_id: Optional[str]
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: Subscription
    assignment: Optional[Assignment]


class GroupMetadataValue(NamedTuple):
    """The group-metadata record value (``GroupMetadataValue`` schema)."""

    protocol_type: str
    generation: int
    protocol: Optional[str]
    leader: Optional[str]
    current_state_timestamp: Optional[int]
    members: Tuple[MemberMetadataValue, ...]


class GroupMetadataKey(NamedTuple):
    group: str


class OffsetKey(NamedTuple):
    group: str
    topic_partition: TopicPartition


class OffsetsTopicLog:
    """The in-memory, compacted ``__consumer_offsets`` topic shared by a cluster's brokers."""

    __slots__ = ("num_partitions", "_partitions", "_end_offsets", "_leader_of", "_injected_errors")

    def __init__(self, num_partitions: int, leader_of: Optional[Callable[[int], Optional[int]]] = None) -> None:
        if num_partitions <= 0:
            raise IllegalArgumentException("offsets topic needs at least one partition")
        self.num_partitions = num_partitions
        # partition -> {key: value} in order of last write
        self._partitions: List[Dict[Hashable, object]] = [{} for _ in range(num_partitions)]
        self._end_offsets: List[int] = [0] * num_partitions
        self._leader_of = leader_of
        self._injected_errors: Dict[int, List[Errors]] = {}

    def inject_append_error(self, partition: int, error: Errors, count: int = 1) -> None:
        """Make the next ``count`` appends to ``partition`` fail with ``error``."""
        self._injected_errors.setdefault(partition, []).extend([error] * count)

    def injected_errors(self, partition: int) -> tuple:
        """The failures still waiting for ``partition``'s next appends, in order."""
        return tuple(self._injected_errors.get(partition, ()))

    def clear_injected_errors(self, partition: int) -> None:
        """Forget the failures injected for ``partition`` (its leadership moved: the replica
        trouble they stood for belonged to the old leader)."""
        self._injected_errors.pop(partition, None)

    def append(self, partition: int, broker_id: Optional[int], records: Iterable[Tuple[Hashable, object]]) -> Errors:
        """Append ``(key, value)`` records (value ``None`` = tombstone); returns the append error."""
        if not 0 <= partition < self.num_partitions:
            return Errors.UNKNOWN_TOPIC_OR_PARTITION
        injected = self._injected_errors.get(partition)
        if injected:
            error = injected.pop(0)
            if not injected:
                del self._injected_errors[partition]
            return error
        if self._leader_of is not None and broker_id is not None and self._leader_of(partition) != broker_id:
            return Errors.NOT_LEADER_OR_FOLLOWER
        log = self._partitions[partition]
        n = 0
        for key, value in records:
            log.pop(key, None)
            if value is not None:
                log[key] = value
            n += 1
        self._end_offsets[partition] += n
        return Errors.NONE

    def read(self, partition: int) -> List[Tuple[Hashable, object]]:
        """The latest record of every live key, in order of last write."""
        return list(self._partitions[partition].items())

    def end_offset(self, partition: int) -> int:
        return self._end_offsets[partition]

    def __repr__(self) -> str:
        return "OffsetsTopicLog(partitions=%d, records=%d)" % (self.num_partitions, sum(self._end_offsets))


class OffsetFetchPartitionData(NamedTuple):
    """``OffsetFetchResponse.PartitionData``."""

    offset: int
    leader_epoch: int
    metadata: str
    error: Errors


_NO_OFFSET = OffsetFetchPartitionData(INVALID_OFFSET, NO_LEADER_EPOCH, NO_METADATA, Errors.NONE)


# Error mapping of a failed group-metadata append (protocol reference §1.13).
_STORE_GROUP_ERROR_MAP = {
    # GroupMetadataManager.storeGroup's putCacheCallback (kafka.coordinator.group, Kafka 3.x): what
    # a failed append of the group record becomes in the SyncGroup answers
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
    Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
    Errors.REQUEST_TIMED_OUT: Errors.REBALANCE_IN_PROGRESS,
    Errors.MESSAGE_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
    Errors.RECORD_LIST_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
    Errors.INVALID_FETCH_SIZE: Errors.UNKNOWN_SERVER_ERROR,
}

# Error mapping of a failed offset-commit append (§1.10): GroupMetadataManager.storeOffsets's
# putCacheCallback through maybeConvertOffsetCommitError; other errors pass through unchanged
_STORE_OFFSETS_ERROR_MAP = {
    Errors.NETWORK_EXCEPTION: Errors.COORDINATOR_LOAD_IN_PROGRESS,
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
    Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
    Errors.MESSAGE_TOO_LARGE: Errors.INVALID_COMMIT_OFFSET_SIZE,
    Errors.RECORD_LIST_TOO_LARGE: Errors.INVALID_COMMIT_OFFSET_SIZE,
    Errors.INVALID_FETCH_SIZE: Errors.INVALID_COMMIT_OFFSET_SIZE,
}


class GroupMetadataManager:
    """One broker's group cache and its view of the ``__consumer_offsets`` partitions."""

    __slots__ = ("broker_id", "config", "log", "time", "_groups", "_loading_partitions",
                 "_owned_partitions", "_num_partitions", "_partition_cache")

    def __init__(self, broker_id: int, config: BrokerConfig, log: OffsetsTopicLog, time: Time) -> None:
        if log.num_partitions != config.offsets_topic_num_partitions:
            raise IllegalArgumentException("offsets log has %d partitions but offsets.topic.num.partitions is %d"
                                           % (log.num_partitions, config.offsets_topic_num_partitions))
        self.broker_id = broker_id
        self.config = config
        self.log = log
        self.time = time
        self._groups: Dict[str, GroupMetadata] = {}
        #: partition -> the onGroupLoaded callback to run when loading finishes
        self._loading_partitions: Dict[int, Callable[[GroupMetadata], None]] = {}
        self._owned_partitions: Dict[int, None] = {}
        self._num_partitions = config.offsets_topic_num_partitions
        self._partition_cache: Dict[str, int] = {}

    # -- partitions -------------------------------------------------------------------------

    def partition_for(self, group_id: str) -> int:
        p = self._partition_cache.get(group_id)
        if p is None:
            p = partition_for(group_id, self._num_partitions)
            if len(self._partition_cache) < 100000:
                self._partition_cache[group_id] = p
        return p

    def is_partition_owned(self, partition: int) -> bool:
        return partition in self._owned_partitions

    def is_partition_loading(self, partition: int) -> bool:
        return partition in self._loading_partitions

    def is_group_local(self, group_id: str) -> bool:
        return self.partition_for(group_id) in self._owned_partitions

    def is_group_loading(self, group_id: str) -> bool:
        return self.partition_for(group_id) in self._loading_partitions

    def owned_partitions(self) -> List[int]:
        return sorted(self._owned_partitions)

    def loading_partitions(self) -> List[int]:
        return sorted(self._loading_partitions)

    # -- group cache ------------------------------------------------------------------------

    def get_group(self, group_id: str) -> Optional[GroupMetadata]:
        return self._groups.get(group_id)

    def get_or_maybe_create_group(self, group_id: str, create_if_not_exist: bool) -> Optional[GroupMetadata]:
        group = self._groups.get(group_id)
        if group is None and create_if_not_exist:
            group = GroupMetadata(group_id, EMPTY)
            self._groups[group_id] = group
        return group

    def add_group(self, group: GroupMetadata) -> GroupMetadata:
        """Add ``group`` unless a group with that id exists; return the cached one."""
        existing = self._groups.get(group.group_id)
        if existing is not None:
            return existing
        self._groups[group.group_id] = group
        return group

    def current_groups(self) -> List[GroupMetadata]:
        return list(self._groups.values())

    def group_not_exists(self, group_id: str) -> bool:
        """``groupNotExists``: this broker owns the group's partition and holds no live group of
        that id (else the answer is NOT_COORDINATOR)."""
        if not self.is_group_local(group_id):
            return False
        group = self._groups.get(group_id)
        return group is None or group.state is DEAD

    def cleanup_group_metadata(self, groups: Iterable[GroupMetadata],
                               selector: Callable[[GroupMetadata], Dict]) -> int:
        """``cleanupGroupMetadata``: remove what *selector* takes of each group's offsets; an Empty
        group left without offsets goes Dead; a Dead group leaves the cache. Tombstones for the
        removed offsets and, for a Dead group past generation 0 (one that wrote a group record),
        for its record are appended to its partition, the write not waited on (acks 0: a failure
        is logged and ignored). Returns the number of offsets removed."""
        removed_total = 0
        for group in groups:
            group_id = group.group_id
            removed = selector(group)
            if group.state is EMPTY and not group.has_offsets():
                group.transition_to(DEAD)
            records: List[Tuple[Hashable, object]] = [(OffsetKey(group_id, tp), None) for tp in removed]
            if group.state is DEAD and self._groups.get(group_id) is group:
                del self._groups[group_id]
                if group.generation_id > 0:  # a group only storing offsets never wrote a record
                    records.append((GroupMetadataKey(group_id), None))
            if records and self.log.append(self.partition_for(group_id), self.broker_id, records) is Errors.NONE:
                removed_total += len(removed)
        return removed_total

    # -- writes -----------------------------------------------------------------------------

    def store_group(self, group: GroupMetadata, group_assignment: Dict[str, Optional[Assignment]],
                    response_callback: Callable[[Errors], None]) -> None:
        """Append the group's metadata record, then call ``response_callback(error)``.

        The record snapshots generation, protocol type/name, leader and every member (with its
        metadata for the selected protocol and its entry of ``group_assignment``).
        """
        protocol = group.protocol_name
        members = tuple(
            MemberMetadataValue(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                m.rebalance_timeout_ms, m.session_timeout_ms, m.metadata(protocol),
                                group_assignment.get(m.member_id))
            for m in group.members.values()) if protocol is not None else ()
        value = GroupMetadataValue(group.protocol_type or "", group.generation_id, protocol,
                                   group.leader_id, group.current_state_timestamp, members)
        error = self.log.append(self.partition_for(group.group_id), self.broker_id,
                                ((GroupMetadataKey(group.group_id), value),))
        if error is not Errors.NONE:
            error = _STORE_GROUP_ERROR_MAP.get(error, error)
        response_callback(error)

    def validate_offset_metadata_length(self, metadata: Optional[str]) -> bool:
        return metadata is None or len(metadata) <= self.config.offset_metadata_max_bytes

    def store_offsets(self, group: GroupMetadata, member_id: str,
                      offset_metadata: Dict[TopicPartition, OffsetAndMetadata],
                      response_callback: Callable[[Dict[TopicPartition, Errors]], None]) -> None:
        """Append offset-commit records; too-large metadata fails per partition
        (``OFFSET_METADATA_TOO_LARGE``); committed offsets become visible in the group."""
        valid = {tp: om for tp, om in offset_metadata.items() if self.validate_offset_metadata_length(om.metadata)}
        if not valid:
            response_callback({tp: Errors.OFFSET_METADATA_TOO_LARGE for tp in offset_metadata})
            return
        group_id = group.group_id
        error = self.log.append(self.partition_for(group_id), self.broker_id,
                                [(OffsetKey(group_id, tp), om) for tp, om in valid.items()])
        if error is Errors.NONE:
            if group.state is not DEAD:
                offsets = group.offsets
                for tp, om in valid.items():
                    offsets[tp] = om
        else:
            error = _STORE_OFFSETS_ERROR_MAP.get(error, error)
        response_callback({tp: (error if tp in valid else Errors.OFFSET_METADATA_TOO_LARGE)
                           for tp in offset_metadata})

    # -- reads ------------------------------------------------------------------------------

    def get_offsets(self, group_id: str, require_stable: bool,
                    topic_partitions: Optional[List[TopicPartition]]) -> Dict[TopicPartition, OffsetFetchPartitionData]:
        group = self._groups.get(group_id)
        if group is None or group.state is DEAD:
            return {tp: _NO_OFFSET for tp in (topic_partitions or ())}
        offsets = group.offsets
        if topic_partitions is None:
            topic_partitions = list(offsets)
        result = {}
        for tp in topic_partitions:
            om = offsets.get(tp)
            result[tp] = _NO_OFFSET if om is None else OffsetFetchPartitionData(
                om.offset, om.leader_epoch, om.metadata, Errors.NONE)
        return result

    # -- loading / unloading ----------------------------------------------------------------

    def schedule_load_group_and_offsets(self, offsets_partition: int,
                                        on_group_loaded: Callable[[GroupMetadata], None]) -> None:
        """Become leader of ``offsets_partition``: it is *loading* until :meth:`finish_loading`."""
        self._owned_partitions.pop(offsets_partition, None)
        self._loading_partitions[offsets_partition] = on_group_loaded

    def finish_loading(self, offsets_partition: Optional[int] = None) -> List[int]:
        """Run the pending load of one partition, or of every loading partition (ascending)."""
        partitions = self.loading_partitions() if offsets_partition is None else [offsets_partition]
        done = []
        for p in partitions:
            if p in self._loading_partitions:
                self.load_groups_for_partition(p)
                done.append(p)
        return done

    def load_groups_for_partition(self, offsets_partition: int) -> None:
        """Rebuild the partition's groups from the latest record per key, hand each to the
        coordinator's ``onGroupLoaded``, then own the partition."""
        on_group_loaded = self._loading_partitions.get(offsets_partition)
        if on_group_loaded is None:
            return
        loaded_groups: Dict[str, GroupMetadataValue] = {}
        loaded_offsets: Dict[str, Dict[TopicPartition, OffsetAndMetadata]] = {}
        for key, value in self.log.read(offsets_partition):
            if type(key) is GroupMetadataKey:
                loaded_groups[key.group] = value
            else:
                loaded_offsets.setdefault(key.group, {})[key.topic_partition] = value
        groups: List[GroupMetadata] = []
        for group_id, value in loaded_groups.items():
            groups.append(self._read_group(group_id, value, loaded_offsets.pop(group_id, {})))
        # groups that only committed offsets (no group management) come back Empty
        for group_id, offsets in loaded_offsets.items():
            group = GroupMetadata(group_id, EMPTY)
            group.offsets.update(offsets)
            groups.append(group)
        for group in groups:
            current = self.add_group(group)
            if current is group:
                on_group_loaded(group)
        del self._loading_partitions[offsets_partition]
        self._owned_partitions[offsets_partition] = None

    @staticmethod
    def _read_group(group_id: str, value: GroupMetadataValue,
                    offsets: Dict[TopicPartition, OffsetAndMetadata]) -> GroupMetadata:
        members = []
        for mv in value.members:
            member = MemberMetadata(mv.member_id, mv.group_instance_id, mv.client_id, mv.client_host,
                                    mv.rebalance_timeout_ms, mv.session_timeout_ms, value.protocol_type,
                                    ((value.protocol, mv.subscription),))
            member.assignment = mv.assignment
            members.append(member)
        group = GroupMetadata.load_group(group_id, STABLE if members else EMPTY, value.generation,
                                         value.protocol_type, value.protocol, value.leader,
                                         value.current_state_timestamp, members)
        group.offsets.update(offsets)
        return group

    def remove_groups_for_partition(self, offsets_partition: int,
                                    on_group_unloaded: Callable[[GroupMetadata], None]) -> None:
        """Resign from ``offsets_partition``: stop owning/loading it and unload its groups."""
        self._loading_partitions.pop(offsets_partition, None)
        self._owned_partitions.pop(offsets_partition, None)
        for group_id, group in list(self._groups.items()):
            if self.partition_for(group_id) == offsets_partition:
                on_group_unloaded(group)
                if self._groups.get(group_id) is group:
                    del self._groups[group_id]

    def shutdown(self) -> None:
        self._groups = {}
        self._loading_partitions = {}
        self._owned_partitions = {}

