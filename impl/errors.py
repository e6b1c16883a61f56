"""Kafka error codes and the client exception hierarchy.

Mirrors ``org.apache.kafka.common.protocol.Errors`` and the exception classes of
``org.apache.kafka.common.errors`` (protocol reference §0).  The Java hierarchy is kept::

    KafkaException                      (RuntimeException)
    ├── ApiException
    │   ├── RetriableException
    │   │   ├── InvalidMetadataException
    │   │   │   ├── UnknownTopicOrPartitionException, NotLeaderOrFollowerException,
    │   │   │   ├── NetworkException, NoAvailableBrokersException
    │   │   ├── CoordinatorLoadInProgressException, CoordinatorNotAvailableException,
    │   │   ├── NotCoordinatorException, DisconnectException, TimeoutException,
    │   │   └── UnstableOffsetCommitException, RetriableCommitFailedException
    │   ├── IllegalGenerationException, UnknownMemberIdException, RebalanceInProgressException,
    │   ├── MemberIdRequiredException, FencedInstanceIdException, ... (non-retriable)
    │   └── AuthorizationException / AuthenticationException
    ├── WakeupException, InterruptException, CommitFailedException  (not ApiException)

Java's ``IllegalStateException`` / ``IllegalArgumentException`` are not Kafka exceptions; they are
modelled as subclasses of Python's ``RuntimeError`` / ``ValueError`` so an ``except KafkaException``
does not swallow them, exactly as in Java.
"""

from __future__ import annotations

import enum
from typing import Optional


# --------------------------------------------------------------------------------------------
# java.lang equivalents
# --------------------------------------------------------------------------------------------

class IllegalStateException(RuntimeError):
    """java.lang.IllegalStateException."""


class IllegalArgumentException(ValueError):
    """java.lang.IllegalArgumentException."""


# --------------------------------------------------------------------------------------------
# org.apache.kafka.common.errors
# --------------------------------------------------------------------------------------------

class KafkaException(Exception):
    """org.apache.kafka.common.KafkaException (a RuntimeException in Java)."""


class ApiException(KafkaException):
    """Any exception that can be returned by the broker as an error code."""


class RetriableException(ApiException):
    """A retriable exception: the operation may succeed if retried."""


class InvalidMetadataException(RetriableException):
    """The client's metadata is out of date; a refresh may fix it."""


class UnknownServerException(ApiException):
    pass


class UnknownTopicOrPartitionException(InvalidMetadataException):
    pass


class NotLeaderOrFollowerException(InvalidMetadataException):
    pass


class TimeoutException(RetriableException):
    """org.apache.kafka.common.errors.TimeoutException (REQUEST_TIMED_OUT, and client-side
    request expiry, e.g. ``ConsumerNetworkClient.failExpiredRequests``)."""


class OffsetMetadataTooLargeException(ApiException):
    pass


class InvalidFetchSizeException(ApiException):
    pass


class RecordTooLargeException(ApiException):
    pass


class RecordBatchTooLargeException(ApiException):
    pass


class NotEnoughReplicasException(RetriableException):
    pass


class NotEnoughReplicasAfterAppendException(RetriableException):
    pass


class KafkaStorageException(InvalidMetadataException):
    pass


class NetworkException(InvalidMetadataException):
    pass


class CoordinatorLoadInProgressException(RetriableException):
    pass


class CoordinatorNotAvailableException(RetriableException):
    pass


class NotCoordinatorException(RetriableException):
    pass


class IllegalGenerationException(ApiException):
    pass


class InconsistentGroupProtocolException(ApiException):
    pass


class InvalidGroupIdException(ApiException):
    pass


class UnknownMemberIdException(ApiException):
    pass


class InvalidSessionTimeoutException(ApiException):
    pass


class RebalanceInProgressException(ApiException):
    pass


class InvalidCommitOffsetSizeException(ApiException):
    pass


class AuthorizationException(ApiException):
    pass


class TopicAuthorizationException(AuthorizationException):
    pass


class GroupAuthorizationException(AuthorizationException):
    pass


class AuthenticationException(ApiException):
    """Raised when a connection failed SASL/SSL authentication (never retriable)."""


class UnsupportedVersionException(ApiException):
    pass


class InvalidRequestException(ApiException):
    pass


class GroupNotEmptyException(ApiException):
    pass


class GroupIdNotFoundException(ApiException):
    pass


class MemberIdRequiredException(ApiException):
    pass


class GroupMaxSizeReachedException(ApiException):
    pass


class FencedInstanceIdException(ApiException):
    pass


class GroupSubscribedToTopicException(ApiException):
    pass


class UnstableOffsetCommitException(RetriableException):
    pass


class UnreleasedInstanceIdException(ApiException):
    pass


class StaleMemberEpochException(ApiException):
    pass


class FencedMemberEpochException(ApiException):
    pass


class UnsupportedAssignorException(ApiException):
    pass


# ---- client-side only (never travel on the wire) ------------------------------------------

class DisconnectException(RetriableException):
    """The connection to the node was lost (or the request was failed because it was).

    ``DisconnectException.INSTANCE`` is the shared instance Kafka uses on the hot path.
    """

    INSTANCE: "DisconnectException"


DisconnectException.INSTANCE = DisconnectException()


class NoAvailableBrokersException(InvalidMetadataException):
    """No broker could be selected (``leastLoadedNode`` returned null)."""


class UnjoinedGroupException(RetriableException):
    """AbstractCoordinator's private ``UnjoinedGroupException``: the member is not (yet) part of an
    active generation; retriable."""


class RetriableCommitFailedException(RetriableException):
    pass


class WakeupException(KafkaException):
    """Raised from a blocking call after ``wakeup()`` was invoked; not retriable."""


class InterruptException(KafkaException):
    """org.apache.kafka.common.errors.InterruptException."""


class CommitFailedException(KafkaException):
    """The commit cannot be completed since the group has already rebalanced."""

    DEFAULT_MESSAGE = (
        "Commit cannot be completed since the group has already rebalanced and assigned the "
        "partitions to another member. This means that the time between subsequent calls to "
        "poll() was longer than the configured max.poll.interval.ms, which typically implies "
        "that the poll loop is spending too much time message processing. You can address this "
        "either by increasing max.poll.interval.ms or by reducing the maximum size of batches "
        "returned in poll() with max.poll.records."
    )

    def __init__(self, message: Optional[str] = None) -> None:
        super().__init__(self.DEFAULT_MESSAGE if message is None else message)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

class Errors(enum.Enum):
    """Wire error codes (name = code), mirroring ``org.apache.kafka.common.protocol.Errors``.

    ``Errors.X.value`` / ``Errors.X.code`` is the short code; ``Errors.for_code(c)`` looks one up
    (unknown codes map to UNKNOWN_SERVER_ERROR, like Java); ``exception()`` builds a new instance
    of the mapped exception with the default message (``None`` for NONE).
    """

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    INVALID_FETCH_SIZE = 4
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    MESSAGE_TOO_LARGE = 10
    OFFSET_METADATA_TOO_LARGE = 12
    NETWORK_EXCEPTION = 13
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    UNSUPPORTED_VERSION = 35
    INVALID_REQUEST = 42
    KAFKA_STORAGE_ERROR = 56
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    UNSTABLE_OFFSET_COMMIT = 88
    UNSUPPORTED_ASSIGNOR = 106
    FENCED_MEMBER_EPOCH = 110
    UNRELEASED_INSTANCE_ID = 111
    STALE_MEMBER_EPOCH = 113

    @property
    def code(self) -> int:
        return self.value

    @property
    def exception_class(self) -> Optional[type]:
        return _EXCEPTION_CLASS[self]

    @property
    def message(self) -> str:
        return _MESSAGE[self]

    def exception(self, message: Optional[str] = None) -> Optional[ApiException]:
        """A new exception for this error (``None`` for NONE); ``message`` overrides the default."""
        cls = _EXCEPTION_CLASS[self]
        if cls is None:
            return None
        return cls(_MESSAGE[self] if message is None else message)

    @staticmethod
    def for_code(code: int) -> "Errors":
        """``Errors.forCode``: unknown codes map to UNKNOWN_SERVER_ERROR."""
        err = _BY_CODE.get(code)
        return Errors.UNKNOWN_SERVER_ERROR if err is None else err

    @staticmethod
    def for_exception(exc: BaseException) -> "Errors":
        """``Errors.forException``: walk the class hierarchy to the nearest mapped class."""
        for klass in type(exc).__mro__:
            err = _BY_CLASS.get(klass)
            if err is not None:
                return err
        return Errors.UNKNOWN_SERVER_ERROR


_EXCEPTION_CLASS: dict = {
    Errors.UNKNOWN_SERVER_ERROR: UnknownServerException,
    Errors.NONE: None,
    Errors.UNKNOWN_TOPIC_OR_PARTITION: UnknownTopicOrPartitionException,
    Errors.NOT_LEADER_OR_FOLLOWER: NotLeaderOrFollowerException,
    Errors.REQUEST_TIMED_OUT: TimeoutException,
    Errors.OFFSET_METADATA_TOO_LARGE: OffsetMetadataTooLargeException,
    Errors.NETWORK_EXCEPTION: NetworkException,
    Errors.COORDINATOR_LOAD_IN_PROGRESS: CoordinatorLoadInProgressException,
    Errors.COORDINATOR_NOT_AVAILABLE: CoordinatorNotAvailableException,
    Errors.NOT_COORDINATOR: NotCoordinatorException,
    Errors.INVALID_FETCH_SIZE: InvalidFetchSizeException,
    Errors.MESSAGE_TOO_LARGE: RecordTooLargeException,
    Errors.RECORD_LIST_TOO_LARGE: RecordBatchTooLargeException,
    Errors.NOT_ENOUGH_REPLICAS: NotEnoughReplicasException,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: NotEnoughReplicasAfterAppendException,
    Errors.KAFKA_STORAGE_ERROR: KafkaStorageException,
    Errors.ILLEGAL_GENERATION: IllegalGenerationException,
    Errors.INCONSISTENT_GROUP_PROTOCOL: InconsistentGroupProtocolException,
    Errors.INVALID_GROUP_ID: InvalidGroupIdException,
    Errors.UNKNOWN_MEMBER_ID: UnknownMemberIdException,
    Errors.INVALID_SESSION_TIMEOUT: InvalidSessionTimeoutException,
    Errors.REBALANCE_IN_PROGRESS: RebalanceInProgressException,
    Errors.INVALID_COMMIT_OFFSET_SIZE: InvalidCommitOffsetSizeException,
    Errors.TOPIC_AUTHORIZATION_FAILED: TopicAuthorizationException,
    Errors.GROUP_AUTHORIZATION_FAILED: GroupAuthorizationException,
    Errors.UNSUPPORTED_VERSION: UnsupportedVersionException,
    Errors.INVALID_REQUEST: InvalidRequestException,
    Errors.NON_EMPTY_GROUP: GroupNotEmptyException,
    Errors.GROUP_ID_NOT_FOUND: GroupIdNotFoundException,
    Errors.MEMBER_ID_REQUIRED: MemberIdRequiredException,
    Errors.GROUP_MAX_SIZE_REACHED: GroupMaxSizeReachedException,
    Errors.FENCED_INSTANCE_ID: FencedInstanceIdException,
    Errors.GROUP_SUBSCRIBED_TO_TOPIC: GroupSubscribedToTopicException,
    Errors.UNSTABLE_OFFSET_COMMIT: UnstableOffsetCommitException,
    Errors.UNSUPPORTED_ASSIGNOR: UnsupportedAssignorException,
    Errors.FENCED_MEMBER_EPOCH: FencedMemberEpochException,
    Errors.UNRELEASED_INSTANCE_ID: UnreleasedInstanceIdException,
    Errors.STALE_MEMBER_EPOCH: StaleMemberEpochException,
}

# Default messages, paraphrasing Errors.java.
_MESSAGE: dict = {
    Errors.UNKNOWN_SERVER_ERROR: "The server experienced an unexpected error when processing the request.",
    Errors.NONE: "",
    Errors.UNKNOWN_TOPIC_OR_PARTITION: "This server does not host this topic-partition.",
    Errors.NOT_LEADER_OR_FOLLOWER: "For requests intended only for the leader, this error indicates that the broker is not the current leader.",
    Errors.REQUEST_TIMED_OUT: "The request timed out.",
    Errors.OFFSET_METADATA_TOO_LARGE: "The metadata field of the offset request was too large.",
    Errors.NETWORK_EXCEPTION: "The server disconnected before a response was received.",
    Errors.COORDINATOR_LOAD_IN_PROGRESS: "The coordinator is loading and hence can't process requests.",
    Errors.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
    Errors.NOT_COORDINATOR: "This is not the correct coordinator.",
    Errors.INVALID_FETCH_SIZE: "The requested fetch size is invalid.",
    Errors.MESSAGE_TOO_LARGE: "The request included a message larger than the max message size the server will accept.",
    Errors.RECORD_LIST_TOO_LARGE: "The request included message batch larger than the configured segment size on the server.",
    Errors.NOT_ENOUGH_REPLICAS: "Messages are rejected since there are fewer in-sync replicas than required.",
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: "Messages are written to the log, but to fewer in-sync replicas than required.",
    Errors.KAFKA_STORAGE_ERROR: "Disk error when trying to access log file on the disk.",
    Errors.ILLEGAL_GENERATION: "Specified group generation id is not valid.",
    Errors.INCONSISTENT_GROUP_PROTOCOL: "The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list.",
    Errors.INVALID_GROUP_ID: "The configured groupId is invalid.",
    Errors.UNKNOWN_MEMBER_ID: "The coordinator is not aware of this member.",
    Errors.INVALID_SESSION_TIMEOUT: "The session timeout is not within the range allowed by the broker (as configured by group.min.session.timeout.ms and group.max.session.timeout.ms).",
    Errors.REBALANCE_IN_PROGRESS: "The group is rebalancing, so a rejoin is needed.",
    Errors.INVALID_COMMIT_OFFSET_SIZE: "The committing offset data size is not valid.",
    Errors.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    Errors.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    Errors.UNSUPPORTED_VERSION: "The version of API is not supported.",
    Errors.INVALID_REQUEST: "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker.",
    Errors.NON_EMPTY_GROUP: "The group is not empty.",
    Errors.GROUP_ID_NOT_FOUND: "The group id does not exist.",
    Errors.MEMBER_ID_REQUIRED: "The group member needs to have a valid member id before actually entering a consumer group.",
    Errors.GROUP_MAX_SIZE_REACHED: "The consumer group has reached its max size.",
    Errors.FENCED_INSTANCE_ID: "The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id.",
    Errors.GROUP_SUBSCRIBED_TO_TOPIC: "The consumer group is actively subscribed to the topic.",
    Errors.UNSTABLE_OFFSET_COMMIT: "There are unstable offsets that need to be cleared.",
    Errors.UNSUPPORTED_ASSIGNOR: "The assignor or its version range is not supported by the consumer group.",
    Errors.FENCED_MEMBER_EPOCH: "The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin.",
    Errors.UNRELEASED_INSTANCE_ID: "The instance ID is still used by another member in the consumer group.",
    Errors.STALE_MEMBER_EPOCH: "The member epoch is stale.",
}

_BY_CODE: dict = {e.value: e for e in Errors}
# Exact-class reverse map used by for_exception (first mapping wins).
_BY_CLASS: dict = {}
for _err, _cls in _EXCEPTION_CLASS.items():
    if _cls is not None and _cls not in _BY_CLASS:
        _BY_CLASS[_cls] = _err
del _err, _cls
