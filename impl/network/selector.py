"""The Selector: Kafka's multi-channel, non-blocking network I/O over TCP
(``org.apache.kafka.common.network.Selector``, the "KSelector" of the source articles).

One :class:`Selector` owns many :class:`KafkaChannel` s, each a non-blocking socket known by a
connection id (a string or an int: the NetworkClient's node id, or a server's id for an accepted
connection). It moves *frames*: a :class:`NetworkSend` is a whole size-prefixed frame to write,
a :class:`NetworkReceive` a whole frame read (its payload, without the prefix). What the bytes
mean is the caller's business (:mod:`impl.wire` on both sides).

``poll(timeout_ms)`` works as Kafka's does:

1. ``clear()`` forgets the previous poll's results, and reports the channels whose closing was
   put off (a channel closed remotely while it still held complete frames, once they have all
   been received; a send that failed) in ``disconnected``.
2. It waits up to *timeout_ms* for readiness — not at all when a connect completed at once
   (``immediately connected keys``) or a channel holds buffered bytes after a poll that made read
   progress — then ``pollSelectionKeys`` walks the ready channels: finish a connect (``connected``),
   attempt one read (at most one completed receive per channel per poll, and none for a channel
   muted explicitly), attempt the write of the channel's one send in flight (``completed_sends``).
   Any failure closes that channel gracefully; it shows up in ``disconnected`` with its
   :class:`~impl.network.selectable.ChannelState` (NOT_CONNECTED for a refused connect, READY for
   a connection lost later, EXPIRED for an idle one, FAILED_SEND, ...).
3. Channels whose delayed close is due are closed, then the single oldest channel that has been
   idle longer than ``connections_max_idle_ms`` is expired.

Rules kept from Kafka: one send in flight per channel (a second ``send`` before the first completed
fails the channel: FAILED_SEND, reported at the next poll, and the error is raised);
``close(id)`` is a local close with no notification; a send to a channel that is closing is a
failed send; a frame above ``max_receive_size`` (or with a negative size) closes that channel;
``wakeup()`` interrupts a blocking poll from another thread.

This module uses the wall clock only through the injected :class:`~impl.time.Time`, and the
operating system's readiness through :mod:`selectors`.
"""

from __future__ import annotations

import errno
import selectors
import socket
import threading
from collections import OrderedDict
from typing import Dict, List, Optional, Union

from impl.errors import IllegalArgumentException, IllegalStateException
from impl.network.selectable import ChannelState
from impl.time import Time
from impl.wire.framing import FrameReader

ConnectionId = Union[str, int]

#: How many bytes one read asks the socket for. Larger reads mean fewer system calls; whatever is
#: read past the current frame stays buffered in the channel (``has_bytes_buffered``).
READ_CHUNK = 64 * 1024

#: ``socket.request.max.bytes`` / the client's unlimited receive: ``None`` is no limit.
NO_LIMIT = None


class NetworkSend:
    """``NetworkSend``: a whole frame (size prefix included) for *destination*, written as far as
    the socket takes it at each attempt."""

    __slots__ = ("destination", "buffer", "_offset", "size")

    def __init__(self, destination: ConnectionId, buffer: bytes) -> None:
        self.destination = destination
        self.buffer = memoryview(bytes(buffer))
        self.size = len(buffer)
        self._offset = 0

    @property
    def completed(self) -> bool:
        return self._offset >= self.size

    @property
    def remaining(self) -> int:
        return self.size - self._offset

    def write_to(self, sock: socket.socket) -> int:
        """Write as much as the socket takes now; the bytes written (0 when it would block)."""
        try:
            n = sock.send(self.buffer[self._offset:])
        except (BlockingIOError, InterruptedError):
            return 0
        self._offset += n
        return n

    def __repr__(self) -> str:
        return f"NetworkSend(destination={self.destination!r}, size={self.size}, remaining={self.remaining})"


class NetworkReceive:
    """``NetworkReceive``: one complete frame's payload from *source* (without its size prefix)."""

    __slots__ = ("source", "payload")

    def __init__(self, source: ConnectionId, payload: bytes) -> None:
        self.source = source
        self.payload = payload

    @property
    def size(self) -> int:
        return len(self.payload)

    def __repr__(self) -> str:
        return f"NetworkReceive(source={self.source!r}, size={self.size})"


class InvalidReceiveException(Exception):
    """A frame the channel cannot take (``org.apache.kafka.common.network.InvalidReceiveException``):
    a negative size or a size above the maximum receive size."""


class KafkaChannel:
    """``KafkaChannel``: one connection — its socket, its state, the frame being received and the
    one send in flight, and whether it is muted."""

    __slots__ = ("id", "sock", "state", "send", "reader", "muted", "connected", "remote_address",
                 "_interest")

    def __init__(self, channel_id: ConnectionId, sock: socket.socket, max_receive_size: Optional[int],
                 connected: bool, remote_address: Optional[str] = None) -> None:
        self.id = channel_id
        self.sock = sock
        self.state = ChannelState.NOT_CONNECTED_STATE
        self.send: Optional[NetworkSend] = None
        self.reader = FrameReader(max_receive_size)
        self.muted = False
        self.connected = connected
        self.remote_address = remote_address
        self._interest = 0

    def ready(self) -> bool:
        """Connected and through its handshake (plaintext: as soon as it is connected)."""
        return self.connected

    def has_send(self) -> bool:
        return self.send is not None

    def set_send(self, send: NetworkSend) -> None:
        if self.send is not None:
            raise IllegalStateException(
                "Attempt to begin a send operation with prior send operation still in progress, connection id is "
                f"{self.id}")
        self.send = send

    def has_bytes_buffered(self) -> bool:
        """Bytes read from the socket that hold at least one more complete frame (or a bad size)."""
        return self.reader.pending >= 4

    def read(self) -> int:
        """Read what the socket has (up to :data:`READ_CHUNK`); -1 at end of stream."""
        try:
            data = self.sock.recv(READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return 0
        if not data:
            return -1
        self.reader.feed(data)
        return len(data)

    def maybe_complete_receive(self) -> Optional[NetworkReceive]:
        """The next complete frame, if the buffered bytes hold one (raises on a bad size prefix)."""
        item = self.reader.next()
        if item is None:
            return None
        if isinstance(item, bytes):
            return NetworkReceive(self.id, item)
        raise InvalidReceiveException(item.reason)

    def write(self) -> Optional[NetworkSend]:
        """Write the send in flight as far as possible; the send once it is complete."""
        send = self.send
        if send is None:
            return None
        send.write_to(self.sock)
        if send.completed:
            self.send = None
            return send
        return None

    def __repr__(self) -> str:
        return f"KafkaChannel(id={self.id!r}, state={self.state.state}, muted={self.muted})"


class _IdleExpiryManager:
    """``Selector.IdleExpiryManager``: the channels in order of their last activity."""

    __slots__ = ("max_idle_ms", "lru", "next_check_ms")

    def __init__(self, max_idle_ms: int, now_ms: int) -> None:
        self.max_idle_ms = max_idle_ms
        self.lru: "OrderedDict[ConnectionId, int]" = OrderedDict()
        self.next_check_ms = now_ms + max_idle_ms

    def update(self, channel_id: ConnectionId, now_ms: int) -> None:
        self.lru.pop(channel_id, None)
        self.lru[channel_id] = now_ms

    def remove(self, channel_id: ConnectionId) -> None:
        self.lru.pop(channel_id, None)

    def poll_expired_connection(self, now_ms: int) -> Optional[ConnectionId]:
        if now_ms < self.next_check_ms:
            return None
        if not self.lru:
            self.next_check_ms = now_ms + self.max_idle_ms
            return None
        oldest_id, last = next(iter(self.lru.items()))
        self.next_check_ms = last + self.max_idle_ms
        return oldest_id if now_ms > self.next_check_ms else None


class Selector:
    """``org.apache.kafka.common.network.Selector`` over :mod:`selectors` (see the module docstring).

    *max_receive_size*: the largest frame a channel accepts (``None``: no limit, the client's
    default). *connections_max_idle_ms*: channels idle longer are closed with state EXPIRED
    (negative: never). *time*: the clock for idle expiry and delayed closes.
    """

    def __init__(self, time: Time, max_receive_size: Optional[int] = NO_LIMIT,
                 connections_max_idle_ms: int = -1) -> None:
        self.time = time
        self.max_receive_size = max_receive_size
        self._selector = selectors.DefaultSelector()
        self.channels: Dict[ConnectionId, KafkaChannel] = {}
        self.closing_channels: Dict[ConnectionId, KafkaChannel] = {}
        self.explicitly_muted: set = set()
        self._immediately_connected: List[KafkaChannel] = []
        self._failed_sends: List[ConnectionId] = []
        self._delayed_close: Dict[ConnectionId, int] = {}  # id -> close deadline (ms)
        self._idle = _IdleExpiryManager(connections_max_idle_ms, time.milliseconds()) \
            if connections_max_idle_ms >= 0 else None
        self._made_read_progress_last_poll = False
        self.completed_sends: List[NetworkSend] = []
        self.completed_receives: List[NetworkReceive] = []
        self.disconnected: Dict[ConnectionId, ChannelState] = {}
        self.connected: List[ConnectionId] = []
        # wakeup(): a socket pair whose read end is always registered
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._wake_lock = threading.Lock()
        self._closed = False

    # -- channels ------------------------------------------------------------------------------

    def connect(self, channel_id: ConnectionId, host: str, port: int, send_buffer_size: int = -1,
                receive_buffer_size: int = -1) -> None:
        """Begin a non-blocking connect. A connect that completes at once (loopback often does) is
        finished at the next poll, which then does not wait. An immediate failure (an unresolvable
        host) raises OSError and leaves nothing behind."""
        self._ensure_not_registered(channel_id)
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)  # OSError: unknown host
        family, kind, proto, _, address = addresses[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            if send_buffer_size > 0:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer_size)
            if receive_buffer_size > 0:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer_size)
            code = sock.connect_ex(address)
            if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EALREADY):
                raise OSError(code, f"connect to {host}:{port} failed: {errno.errorcode.get(code, code)}")
        except OSError:
            sock.close()
            raise
        channel = KafkaChannel(channel_id, sock, self.max_receive_size, connected=False,
                               remote_address=f"{host}:{port}")
        self.channels[channel_id] = channel
        if code == 0:  # connected already: poll finishes it without waiting (interest 0 until then)
            self._register(channel, 0)
            self._immediately_connected.append(channel)
        else:
            self._register(channel, selectors.EVENT_WRITE)  # OP_CONNECT
        if self._idle is not None:
            self._idle.update(channel_id, self.time.milliseconds())

    def register(self, channel_id: ConnectionId, sock: socket.socket) -> None:
        """Take over an accepted, connected socket (a server's new connection)."""
        self._ensure_not_registered(channel_id)
        sock.setblocking(False)
        try:
            peer = sock.getpeername()
            remote = f"{peer[0]}:{peer[1]}"
        except OSError:
            remote = None
        channel = KafkaChannel(channel_id, sock, self.max_receive_size, connected=True, remote_address=remote)
        channel.state = ChannelState.READY_STATE
        self.channels[channel_id] = channel
        self._register(channel, selectors.EVENT_READ)
        if self._idle is not None:
            self._idle.update(channel_id, self.time.milliseconds())

    def _ensure_not_registered(self, channel_id: ConnectionId) -> None:
        if channel_id in self.channels:
            raise IllegalStateException(f"There is already a connection for id {channel_id}")
        if channel_id in self.closing_channels:
            raise IllegalStateException(f"There is already a connection for id {channel_id} that is still being closed")

    def channel(self, channel_id: ConnectionId) -> Optional[KafkaChannel]:
        return self.channels.get(channel_id)

    def closing_channel(self, channel_id: ConnectionId) -> Optional[KafkaChannel]:
        return self.closing_channels.get(channel_id)

    def is_channel_ready(self, channel_id: ConnectionId) -> bool:
        channel = self.channels.get(channel_id)
        return channel is not None and channel.ready()

    # -- sends ---------------------------------------------------------------------------------

    def send(self, send: NetworkSend) -> None:
        """Queue *send* as its channel's one send in flight (written by the next polls)."""
        channel_id = send.destination
        channel = self.channels.get(channel_id)
        if channel is None:
            if channel_id in self.closing_channels:
                self._failed_sends.append(channel_id)  # reported through `disconnected` next poll
                return
            raise IllegalStateException(f"Attempt to retrieve channel for which there is no connection. "
                                        f"Connection id {channel_id} existing connections {list(self.channels)}")
        try:
            channel.set_send(send)
        except IllegalStateException:
            channel.state = ChannelState(ChannelState.FAILED_SEND, remote_address=channel.remote_address)
            self._failed_sends.append(channel_id)
            self._close(channel, notify=False)
            raise
        self._interest(channel)

    # -- muting --------------------------------------------------------------------------------

    def mute(self, channel_id: ConnectionId) -> None:
        """Stop reading from the channel until :meth:`unmute` (Kafka's explicitly muted channels:
        a server mutes a connection while one of its requests is being handled)."""
        channel = self._open_or_closing(channel_id)
        self.explicitly_muted.add(channel_id)
        channel.muted = True
        self._interest(channel)

    def unmute(self, channel_id: ConnectionId) -> None:
        """``unmute``: read the channel again; a frame already in its buffer is read at the next poll
        without waiting (Kafka's ``Selector.unmute``: ``keysWithBufferedRead`` and
        ``madeReadProgressLastPoll = true`` when ``hasBytesBuffered()``)."""
        channel = self._open_or_closing(channel_id)
        self.explicitly_muted.discard(channel_id)
        channel.muted = False
        self._interest(channel)
        if channel.has_bytes_buffered():
            self._made_read_progress_last_poll = True

    def mute_all(self) -> None:
        for channel_id in list(self.channels):
            self.mute(channel_id)

    def unmute_all(self) -> None:
        for channel_id in list(self.channels):
            self.unmute(channel_id)

    def is_muted(self, channel_id: ConnectionId) -> bool:
        return channel_id in self.explicitly_muted

    def _open_or_closing(self, channel_id: ConnectionId) -> KafkaChannel:
        channel = self.channels.get(channel_id) or self.closing_channels.get(channel_id)
        if channel is None:
            raise IllegalStateException(f"Attempt to retrieve channel for which there is no open connection. "
                                        f"Connection id {channel_id} existing connections {list(self.channels)}")
        return channel

    # -- poll ----------------------------------------------------------------------------------

    def poll(self, timeout_ms: int) -> None:
        """Do I/O, waiting up to *timeout_ms* for something to happen (see the module docstring)."""
        if timeout_ms < 0:
            raise IllegalArgumentException("timeout should be >= 0")
        if self._closed:
            raise IllegalStateException("the selector is closed")
        made_read_progress = self._made_read_progress_last_poll
        self._clear()
        buffered = [c for c in self.channels.values()
                    if c.has_bytes_buffered() and c.ready() and c.id not in self.explicitly_muted]
        if self._immediately_connected or (made_read_progress and buffered):
            timeout_ms = 0
        deadlines = [deadline for deadline in self._delayed_close.values()]
        if deadlines:
            timeout_ms = max(0, min(timeout_ms, min(deadlines) - self.time.milliseconds()))
        events = self._selector.select(timeout_ms / 1000.0)
        now = self.time.milliseconds()
        ready: "OrderedDict[ConnectionId, int]" = OrderedDict()
        for key, mask in events:
            if key.data is None:  # the wakeup socket
                self._drain_wakeup()
                continue
            ready[key.data.id] = mask
        for channel in buffered:  # keysWithBufferedRead
            ready.setdefault(channel.id, 0)
        if ready:
            self._poll_selection_keys(ready, False, now)
        else:
            self._made_read_progress_last_poll = True
        if self._immediately_connected:
            immediate = OrderedDict((c.id, 0) for c in self._immediately_connected if c.id in self.channels)
            self._immediately_connected = []
            self._poll_selection_keys(immediate, True, now)
        self._complete_delayed_channel_close(self.time.milliseconds())
        self._maybe_close_oldest_connection(now)

    def _clear(self) -> None:
        self.completed_sends = []
        self.completed_receives = []
        self.connected = []
        self.disconnected = {}
        for channel_id, channel in list(self.closing_channels.items()):
            # a channel closed remotely with complete frames still buffered: one frame per poll
            # (none while it is muted), then it is reported disconnected
            if channel_id in self.explicitly_muted:
                continue
            try:
                receive = channel.maybe_complete_receive()
            except InvalidReceiveException:
                receive = None
            if receive is not None:
                self.completed_receives.append(receive)
                continue
            del self.closing_channels[channel_id]
            self.disconnected[channel_id] = channel.state
        for channel_id in self._failed_sends:
            self.disconnected[channel_id] = ChannelState(ChannelState.FAILED_SEND)
        self._failed_sends = []
        self._made_read_progress_last_poll = False

    def _poll_selection_keys(self, ready: "OrderedDict[ConnectionId, int]", immediately_connected: bool,
                             now_ms: int) -> None:
        for channel_id, mask in ready.items():
            channel = self.channels.get(channel_id)
            if channel is None:
                continue
            if self._idle is not None:
                self._idle.update(channel_id, now_ms)
            try:
                if immediately_connected or not channel.connected:
                    if not self._finish_connect(channel, mask, immediately_connected):
                        continue
                    self.connected.append(channel_id)
                if channel.ready() and channel.state.state == ChannelState.NOT_CONNECTED:
                    channel.state = ChannelState.READY_STATE
                if (channel.ready() and (mask & selectors.EVENT_READ or channel.has_bytes_buffered())
                        and channel_id not in self.explicitly_muted):
                    self._attempt_read(channel)
                if channel.has_send() and channel.ready() and channel_id in self.channels:
                    send = channel.write()
                    if send is not None:
                        self.completed_sends.append(send)
                    self._interest(channel)
            except (OSError, InvalidReceiveException, IllegalStateException) as e:
                self._lost(channel, e)

    def _finish_connect(self, channel: KafkaChannel, mask: int, immediately: bool) -> bool:
        if not immediately and not mask & selectors.EVENT_WRITE:
            return False
        code = channel.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if code != 0:
            raise ConnectionRefusedError(code, f"connection to {channel.remote_address} failed: "
                                               f"{errno.errorcode.get(code, code)}")
        channel.connected = True
        self._interest(channel)
        return True

    def _attempt_read(self, channel: KafkaChannel) -> None:
        if channel.has_bytes_buffered():  # a frame may already be complete: no read needed for it
            receive = channel.maybe_complete_receive()
            if receive is not None:
                self._made_read_progress_last_poll = True
                self.completed_receives.append(receive)
                return
        n = channel.read()
        if n < 0:
            raise ConnectionResetError(errno.ECONNRESET, "end of stream")
        if n > 0:
            self._made_read_progress_last_poll = True
            receive = channel.maybe_complete_receive()
            if receive is not None:
                self.completed_receives.append(receive)

    def _lost(self, channel: KafkaChannel, error: Exception) -> None:
        """A failure on the channel: close it gracefully — with complete frames still buffered it
        waits in ``closing_channels`` until they are received, else it is reported now. The
        reported :class:`ChannelState` carries *error* (``exception``), so that a server can log why
        it lost the connection (a frame above the maximum, a reset, end of stream)."""
        channel.state = ChannelState(channel.state.state, error, channel.remote_address)
        if channel.connected and channel.reader.error is None and channel.has_bytes_buffered():
            self._close_socket(channel)
            del self.channels[channel.id]
            self.closing_channels[channel.id] = channel
            return
        self._close(channel, notify=True)

    # -- closing -------------------------------------------------------------------------------

    def close(self, channel_id: Optional[ConnectionId] = None) -> None:
        """``close(id)``: close the connection locally, with no disconnect notification (its state
        becomes LOCAL_CLOSE); a channel still closing is dropped. ``close()``: close everything."""
        if channel_id is None:
            self.close_all()
            return
        channel = self.channels.get(channel_id)
        if channel is not None:
            channel.state = ChannelState.LOCAL_CLOSE_STATE
            self._close(channel, notify=False)
            return
        closing = self.closing_channels.pop(channel_id, None)
        if closing is not None:
            self.explicitly_muted.discard(channel_id)

    def close_delayed(self, channel_id: ConnectionId, delay_ms: int) -> None:
        """Close the channel after *delay_ms* (Kafka delays the close after a failed authentication
        so a client cannot hammer the server): it is muted now and reported disconnected when the
        delay is over."""
        channel = self.channels.get(channel_id)
        if channel is None:
            return
        self.mute(channel_id)
        self._delayed_close[channel_id] = self.time.milliseconds() + delay_ms

    def _complete_delayed_channel_close(self, now_ms: int) -> None:
        for channel_id, deadline in list(self._delayed_close.items()):
            if deadline <= now_ms:
                del self._delayed_close[channel_id]
                channel = self.channels.get(channel_id)
                if channel is not None:
                    self._close(channel, notify=True)

    def _maybe_close_oldest_connection(self, now_ms: int) -> None:
        if self._idle is None:
            return
        channel_id = self._idle.poll_expired_connection(now_ms)
        if channel_id is None:
            return
        channel = self.channels.get(channel_id)
        if channel is not None:
            channel.state = ChannelState.EXPIRED_STATE
            self._close(channel, notify=True)

    def _close(self, channel: KafkaChannel, notify: bool) -> None:
        self._close_socket(channel)
        self.channels.pop(channel.id, None)
        self._delayed_close.pop(channel.id, None)
        self.explicitly_muted.discard(channel.id)
        if channel in self._immediately_connected:
            self._immediately_connected.remove(channel)
        if channel.id in self.connected:
            self.connected.remove(channel.id)
        if notify:
            self.disconnected[channel.id] = channel.state

    def _close_socket(self, channel: KafkaChannel) -> None:
        if self._idle is not None:
            self._idle.remove(channel.id)
        try:
            self._selector.unregister(channel.sock)
        except (KeyError, ValueError):
            pass
        try:
            channel.sock.close()
        except OSError:
            pass

    def close_all(self) -> None:
        """``Selector.close()``: every channel and the selector itself."""
        for channel in list(self.channels.values()):
            self._close(channel, notify=False)
        self.closing_channels.clear()
        if not self._closed:
            self._closed = True
            self._selector.close()
            self._wake_r.close()
            self._wake_w.close()

    # -- wakeup ----------------------------------------------------------------------------------

    def wakeup(self) -> None:
        """Interrupt a blocking :meth:`poll` (from any thread)."""
        with self._wake_lock:
            if self._closed:
                return
            try:
                self._wake_w.send(b"\0")
            except (BlockingIOError, InterruptedError):
                pass  # the pipe is full: a wakeup is pending already

    def _drain_wakeup(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    # -- interest ops --------------------------------------------------------------------------

    def _register(self, channel: KafkaChannel, interest: int) -> None:
        channel._interest = interest
        if interest:
            self._selector.register(channel.sock, interest, channel)

    def _interest(self, channel: KafkaChannel) -> None:
        """Read while connected and not muted; write while connecting or a send is in flight."""
        if channel.id not in self.channels:
            return
        interest = 0
        if not channel.connected:
            interest = selectors.EVENT_WRITE
        else:
            if not channel.muted:
                interest |= selectors.EVENT_READ
            if channel.send is not None:
                interest |= selectors.EVENT_WRITE
        if interest == channel._interest:
            return
        if channel._interest and interest:
            self._selector.modify(channel.sock, interest, channel)
        elif channel._interest:
            self._selector.unregister(channel.sock)
        else:
            self._selector.register(channel.sock, interest, channel)
        channel._interest = interest
