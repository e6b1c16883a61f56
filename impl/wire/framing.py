"""Size-prefixed framing: every Kafka request and response travels as a 4-byte big-endian
signed size followed by that many bytes (``NetworkSend`` / ``NetworkReceive``).

* :func:`frame` prefixes a payload with its size.
* :class:`FrameReader` is a streaming reader for a non-blocking socket: feed it whatever bytes
  arrived (any split, down to one byte at a time), take out complete payloads.  Like Kafka's
  ``NetworkReceive`` it refuses a negative size and a size above its maximum *as soon as the
  prefix is complete* — before buffering the body — and reports it as a :class:`WireError`
  value; after such an error the stream is unusable (the caller closes the connection).
"""

from __future__ import annotations

import struct
from typing import List, Optional, Union

from impl.wire.errors import ErrorKind, WireError, hex_window

_SIZE = struct.Struct(">i")

#: ``socket.request.max.bytes`` (Kafka's broker default, 100 MiB): the largest request a broker
#: accepts.  Clients have no limit on responses (``NetworkReceive.UNLIMITED``); a checker should
#: still set one.
DEFAULT_MAX_FRAME_SIZE = 100 * 1024 * 1024


def frame(payload: bytes) -> bytes:
    """*payload* prefixed with its length (4 bytes, big-endian)."""
    return _SIZE.pack(len(payload)) + payload


class FrameReader:
    """Reassembles size-prefixed frames from a byte stream.

    ``feed(data)`` appends received bytes; ``next()`` returns the next complete payload
    (``bytes``, without the prefix), ``None`` when more bytes are needed, or a
    :class:`WireError` (``negative_size`` / ``frame_too_large``) once the stream is broken —
    every later call returns the same error.  ``max_size=None`` means no limit.
    ``pending`` is how many bytes are buffered but not yet returned.
    """

    __slots__ = ("max_size", "_buf", "_need", "_error")

    def __init__(self, max_size: Optional[int] = DEFAULT_MAX_FRAME_SIZE) -> None:
        if max_size is not None and max_size < 0:
            raise ValueError("max_size must be None or >= 0, got %r" % (max_size,))
        self.max_size = max_size
        self._buf = bytearray()
        self._need = -1  # payload size of the frame being read, -1 while the prefix is incomplete
        self._error: Optional[WireError] = None

    @property
    def pending(self) -> int:
        return len(self._buf)

    @property
    def error(self) -> Optional[WireError]:
        return self._error

    def feed(self, data: bytes) -> None:
        """Append received bytes (ignored once the stream is broken)."""
        if self._error is None:
            self._buf += data

    def next(self) -> Union[bytes, WireError, None]:
        """The next complete payload, ``None`` if incomplete, or the stream's error."""
        if self._error is not None:
            return self._error
        buf = self._buf
        if self._need < 0:
            if len(buf) < 4:
                return None
            size = _SIZE.unpack_from(buf, 0)[0]
            if size < 0:
                return self._fail(ErrorKind.NEGATIVE_SIZE, "Invalid receive (size = %d)" % size)
            if self.max_size is not None and size > self.max_size:
                return self._fail(ErrorKind.FRAME_TOO_LARGE,
                                  "Invalid receive (size = %d larger than %d)" % (size, self.max_size))
            self._need = size
        end = 4 + self._need
        if len(buf) < end:
            return None
        payload = bytes(buf[4:end])
        del buf[:end]
        self._need = -1
        return payload

    def drain(self) -> List[Union[bytes, WireError]]:
        """Every complete payload now buffered, in order; a :class:`WireError` ends the list."""
        out: List[Union[bytes, WireError]] = []
        while True:
            item = self.next()
            if item is None:
                return out
            out.append(item)
            if isinstance(item, WireError):
                return out

    def _fail(self, kind: str, reason: str) -> WireError:
        start, hexed = hex_window(self._buf, 0)
        self._error = WireError(kind, reason, offset=0, hex_start=start, hex=hexed[:8])
        self._buf = bytearray()
        return self._error
