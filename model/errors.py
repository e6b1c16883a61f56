"""Kafka error codes used by the classic group protocol (protocol reference §0).

Errors are plain ints in messages (the wire value); :class:`Errors` gives them names. The client
decides what to do with an error by its *retriability*, which in Kafka is a property of the
exception class the code maps to; :data:`RETRIABLE` reproduces that table, together with the
client-side transport failures (:data:`DISCONNECT`, :data:`REQUEST_TIMEOUT`, ...), which never
travel on the wire and are therefore given names only, not codes.
"""

from __future__ import annotations

import enum


class Errors(enum.IntEnum):
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

    def __str__(self) -> str:  # "UNKNOWN_MEMBER_ID", not "Errors.UNKNOWN_MEMBER_ID"
        return self.name


# Wire errors whose client exception extends RetriableException.
RETRIABLE = frozenset(
    {
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.NOT_LEADER_OR_FOLLOWER,
        Errors.REQUEST_TIMED_OUT,
        Errors.NETWORK_EXCEPTION,
        Errors.COORDINATOR_LOAD_IN_PROGRESS,
        Errors.COORDINATOR_NOT_AVAILABLE,
        Errors.NOT_COORDINATOR,
        Errors.UNSTABLE_OFFSET_COMMIT,
    }
)

# Client-side failures of a request future that are not wire errors. All are retriable
# (DisconnectException, TimeoutException, NoAvailableBrokersException, UnjoinedGroupException
# extend RetriableException), except a WakeupException, which the model does not produce.
DISCONNECT = "DisconnectException"
REQUEST_TIMEOUT = "TimeoutException"
NO_AVAILABLE_BROKERS = "NoAvailableBrokersException"
UNJOINED_GROUP = "UnjoinedGroupException"
CLIENT_FAILURES = frozenset({DISCONNECT, REQUEST_TIMEOUT, NO_AVAILABLE_BROKERS, UNJOINED_GROUP})


def is_retriable(failure: int | str) -> bool:
    """True when the client treats *failure* (a wire error code or a client failure name) as retriable."""
    if isinstance(failure, str):
        return failure in CLIENT_FAILURES
    return failure in RETRIABLE


def name_of(failure: int | str) -> str:
    """A readable name for a wire error code or a client-side failure name."""
    if isinstance(failure, str):
        return failure
    try:
        return Errors(failure).name
    except ValueError:
        return f"ERROR_{failure}"
