"""What goes wrong on the wire, as values.

Bytes from a peer are untrusted: every way a frame can be wrong (a size prefix out of range, a
truncated header, an unknown API key, a version nobody supports, a body that does not follow its
schema) comes back from the decoding functions as a :class:`WireError` — a frozen value carrying
the API, the version, the correlation id when it could be read, the offset into the frame where
decoding stopped, the bytes around that offset (hex) and a reason.  Decoding never raises, so a
server logs ``str(error)`` (one line) and answers or closes that one connection; a client drops
the connection to that node.

Encoding faces our own objects, so its failures raise :class:`EncodeError` (carrying a
:class:`WireError` too).  The common one mirrors Kafka's generated ``write`` methods: a field that
the chosen version does not have, holding a non-default value, and which the schema does not mark
``ignorable`` (e.g. ``group_instance_id`` in a JoinGroup v4 request).  Kafka throws
``UnsupportedVersionException`` there, so :class:`EncodeError` *is* an
:class:`impl.errors.UnsupportedVersionException`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from impl.errors import UnsupportedVersionException

#: How many bytes before and after the offset a :class:`WireError` keeps (hex).
WINDOW_BEFORE = 16
WINDOW_AFTER = 48


class ErrorKind:
    """The kinds of :class:`WireError` (plain strings, stable for logs and tests)."""

    #: The 4-byte size prefix is negative (Kafka's ``NetworkReceive``: "Invalid receive (size = -1)").
    NEGATIVE_SIZE = "negative_size"
    #: The size prefix exceeds the reader's maximum ("Invalid receive (size = N larger than M)").
    FRAME_TOO_LARGE = "frame_too_large"
    #: The frame ends inside the header or inside the body (a field ran past the end).
    TRUNCATED = "truncated"
    #: The API key is not one groupcheck speaks (Kafka closes the connection).
    UNKNOWN_API = "unknown_api"
    #: The API is known but not in this version.  For an ApiVersions request the server answers
    #: (see :func:`impl.wire.codec.encode_api_versions_fallback`); anything else closes.
    UNSUPPORTED_VERSION = "unsupported_version"
    #: The bytes do not follow the schema: an unknown error code, an unknown tagged field, a null
    #: in a non-nullable field, invalid UTF-8, a negative length.
    MALFORMED = "malformed"
    #: Encoding only: a field the version lacks holds a non-default value (see module docstring),
    #: or a value does not fit its type.
    UNENCODABLE = "unencodable"


def hex_window(data: bytes, offset: int) -> tuple:
    """``(start, hex)``: the bytes of *data* from ``offset - WINDOW_BEFORE`` to
    ``offset + WINDOW_AFTER`` (clamped), in hex."""
    start = max(0, min(offset, len(data)) - WINDOW_BEFORE)
    return start, bytes(data[start:offset + WINDOW_AFTER]).hex()


@dataclass(frozen=True, slots=True)
class WireError:
    """One thing wrong with one frame (or one value to encode).

    ``offset`` counts from the start of the frame's payload (after the size prefix); ``hex`` holds
    the payload's bytes from ``hex_start`` (at most :data:`WINDOW_BEFORE` before ``offset`` and
    :data:`WINDOW_AFTER` after it); ``size`` is the payload's length.  ``api`` is the API's name
    (``"ApiKey<n>"`` for a key groupcheck does not know), ``field`` the top-level field being
    read when decoding stopped, when it could be located.
    """

    kind: str
    reason: str
    api: Optional[str] = None
    api_key: Optional[int] = None
    version: Optional[int] = None
    direction: Optional[str] = None  # "request" or "response"
    correlation_id: Optional[int] = None
    offset: Optional[int] = None
    field: Optional[str] = None
    size: Optional[int] = None
    hex_start: int = 0
    hex: str = ""

    def __str__(self) -> str:
        parts = ["wire error [%s]" % self.kind]
        if self.api is not None:
            what = self.api if self.version is None else "%s v%d" % (self.api, self.version)
            if self.direction:
                what += " " + self.direction
            parts.append(what)
        if self.correlation_id is not None:
            parts.append("correlation id %d" % self.correlation_id)
        if self.offset is not None:
            at = "at offset %d" % self.offset
            if self.field:
                at += " (field %s)" % self.field
            if self.size is not None:
                at += " of %d" % self.size
            parts.append(at)
        line = ", ".join(parts) + ": " + self.reason
        if self.hex:
            line += "; bytes[%d:] %s" % (self.hex_start, self.hex)
        return line


class EncodeError(UnsupportedVersionException):
    """Raised by the encoding functions; ``error`` is the :class:`WireError` describing why."""

    def __init__(self, error: WireError) -> None:
        super().__init__(str(error))
        self.error = error
