"""The transport interface between :class:`~impl.network.network_client.NetworkClient` and the
network (``org.apache.kafka.common.network.Selectable``).

In Kafka the Selector moves bytes over NIO channels.  Here requests and responses travel as
*objects*: ``send`` hands over ``(correlation_id, request_data)`` and a completed receive yields
``(source, correlation_id, response_data)``.  The simulated world implements this interface; a
socket implementation speaking the wire protocol can implement it later.

Contract (the same as Kafka's Selector):

* ``poll(timeout_ms)`` first clears the results of the previous poll, then performs I/O and fills
  ``completed_sends``, ``completed_receives``, ``disconnected`` and ``connected``; these stay valid
  until the next ``poll``.  A simulated transport may advance its clock by up to ``timeout_ms``.
* Connection ids are the ``NetworkClient``'s node ids (ints).  The coordinator connection uses the
  synthetic id ``Integer.MAX_VALUE − brokerId`` with the broker's host/port, which is why
  ``connect`` takes the address.
* ``close(id)`` closes silently (``CloseMode.DISCARD_NO_NOTIFY``): the id is *not* reported in
  ``disconnected`` afterwards, and nothing more (sends, receives) is reported for that connection
  until it is connected again — responses to requests sent on the closed connection are dropped.
* At most one send per connection is pending at a time (``NetworkClient`` guarantees it by only
  sending when the previous send completed).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple


class ChannelState:
    """``org.apache.kafka.common.network.ChannelState``: why a channel was disconnected.

    ``state`` is one of the class constants below; ``exception`` carries the
    AuthenticationException for AUTHENTICATION_FAILED.
    """

    __slots__ = ("state", "exception", "remote_address")

    NOT_CONNECTED = "NOT_CONNECTED"
    AUTHENTICATE = "AUTHENTICATE"
    READY = "READY"
    EXPIRED = "EXPIRED"
    FAILED_SEND = "FAILED_SEND"
    AUTHENTICATION_FAILED = "AUTHENTICATION_FAILED"
    LOCAL_CLOSE = "LOCAL_CLOSE"

    def __init__(self, state: str, exception: Optional[Exception] = None,
                 remote_address: Optional[str] = None) -> None:
        self.state = state
        self.exception = exception
        self.remote_address = remote_address

    def __repr__(self) -> str:
        return "ChannelState(%s)" % self.state


# Shared instances for the common cases (like ChannelState.READY / LOCAL_CLOSE in Java).
ChannelState.READY_STATE = ChannelState(ChannelState.READY)
ChannelState.LOCAL_CLOSE_STATE = ChannelState(ChannelState.LOCAL_CLOSE)
ChannelState.NOT_CONNECTED_STATE = ChannelState(ChannelState.NOT_CONNECTED)
ChannelState.EXPIRED_STATE = ChannelState(ChannelState.EXPIRED)


class Selectable:
    """Interface for asynchronous, multi-channel network I/O (``Selectable``).

    Attributes (refreshed by every ``poll``):

    * ``completed_sends``: list of ``(destination, correlation_id)`` whose send finished.
    * ``completed_receives``: list of ``(source, correlation_id, response)``, in arrival order
      (per connection, responses arrive in request order).
    * ``disconnected``: dict ``node_id -> ChannelState`` of connections closed *remotely* (or
      failed) during the poll, in the order they were detected.
    * ``connected``: list of node ids whose connection was established during the poll.
    """

    __slots__ = ()

    completed_sends: List[Tuple[int, int]]
    completed_receives: List[Tuple[int, int, Any]]
    disconnected: Dict[int, ChannelState]
    connected: List[int]

    def connect(self, node_id: int, host: str, port: int) -> None:
        """Begin connecting to ``host:port`` under connection id ``node_id``.

        May raise ``OSError`` for an immediate failure (the NetworkClient then marks the node
        disconnected); otherwise success/failure is reported by a later ``poll``.
        """
        raise NotImplementedError

    def send(self, destination: int, payload: Tuple[int, Any]) -> None:
        """Queue ``payload = (correlation_id, request)`` on the connection ``destination``."""
        raise NotImplementedError

    def poll(self, timeout_ms: int) -> None:
        """Do I/O, waiting up to ``timeout_ms`` for something to happen (0 = don't wait)."""
        raise NotImplementedError

    def close(self, node_id: int) -> None:
        """Close the connection silently (see the module docstring)."""
        raise NotImplementedError

    def wakeup(self) -> None:
        """Interrupt a blocking ``poll`` (a no-op in a single-threaded simulation)."""

    def is_channel_ready(self, node_id: int) -> bool:
        """Whether the channel finished its handshake (TLS/SASL) and can carry requests."""
        return True

    def close_all(self) -> None:
        """``Selector.close()``: release every connection."""
