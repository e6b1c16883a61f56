"""Encoding and decoding whole frames: header + body, for both ends of a connection.

Client side (the Selector under ``NetworkClient``)::

    data = encode_request(request, version, correlation_id, client_id)      # bytes to send
    got = decode_response(api, version, payload)     # payload = a frame from FrameReader
    if isinstance(got, WireError): ...                # log str(got), close the connection
    else: got.correlation_id, got.body                # compare the id with the in-flight request

Server side (``groupcheck broker``)::

    got = decode_request(payload, supported)          # supported: name -> (min, max) advertised
    if isinstance(got, WireError):
        if got.kind == ErrorKind.UNSUPPORTED_VERSION and got.api == "ApiVersions":
            send(encode_api_versions_fallback(got.correlation_id, *supported["ApiVersions"]))
        else: close the connection                    # what Kafka's SocketServer does
    else:
        ... handle got.body (got.header.api, .version, .correlation_id, .client_id) ...
        send(encode_response(got.header, response))

Bodies of the APIs in :data:`~impl.wire.apis.TRANSLATED` are :mod:`impl.protocol` objects
(translated by :mod:`impl.wire.translate`); the others are kio's own classes (pass an instance of
the class of the right version; decoding returns one).  Every encoded result is a whole frame
(size prefix included); every decoder takes one frame's payload (without the prefix).

Headers follow each kio class's ``__header_schema__``: request header v1 (api key, version,
correlation id, nullable client id) or v2 (the same plus tagged fields, the client id still a
legacy nullable string), response header v0 (correlation id) or v1 (plus tagged fields);
ApiVersions responses always use v0, so a client can read the correlation id of a response to a
version the broker does not know.  Headers are written and read here (struct, not kio: they are
four fixed fields, and Kafka skips unknown header tags where kio refuses them); bodies go through
kio's generated readers (native) and writers.

ApiVersions fallback (``ApiVersionsResponse.parse``): a client that asked ApiVersions vN of a
broker that knows less gets error 35 in a **v0 body**; :func:`decode_response` for ApiVersions
tries vN and, if that fails, v0 — ``DecodedResponse.version`` says which.  See
:func:`impl.wire.versions.api_versions_retry_version` for the version to retry with.

Bytes after the body are ignored, as Kafka does (``DecodedRequest.trailing`` counts them).
Decoding never raises: every failure is a :class:`~impl.wire.errors.WireError`.
"""

from __future__ import annotations

import dataclasses
import io
import struct
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union

from kio.serial import entity_reader, entity_writer
from kio.serial import errors as kio_errors

from impl.protocol import ApiVersion, ApiVersionsResponseData
from impl.wire.apis import (CODEC_VERSIONS, REQUEST, RESPONSE, TRANSLATED, api_key as key_of,
                            api_name, kio_class)
from impl.wire.errors import EncodeError, ErrorKind, WireError, hex_window
from impl.wire.translate import TRANSLATORS, FieldNotInVersion

UNSUPPORTED_VERSION_CODE = 35  # Errors.UNSUPPORTED_VERSION

_HHI = struct.Struct(">hhi")
_H = struct.Struct(">h")
_I = struct.Struct(">i")


@dataclasses.dataclass(frozen=True, slots=True)
class RequestHeader:
    """A decoded request header (``org.apache.kafka.common.requests.RequestHeader``)."""

    api: str
    api_key: int
    version: int
    correlation_id: int
    client_id: Optional[str]
    header_version: int


@dataclasses.dataclass(frozen=True, slots=True)
class DecodedRequest:
    """A request read by :func:`decode_request`: its header, its body, the payload's size and
    how many bytes followed the body (ignored)."""

    header: RequestHeader
    body: Any
    size: int
    trailing: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class DecodedResponse:
    """A response read by :func:`decode_response`.  ``version`` is the version the body was read
    in: the one asked for, or 0 for an ApiVersions fallback body."""

    correlation_id: int
    body: Any
    version: int
    size: int
    trailing: int = 0


# -- per (api, version, direction) machinery -----------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class _Entry:
    api: str
    key: int
    version: int
    direction: str
    cls: type
    header_version: int
    read: Callable
    write: Callable
    to_kio: Optional[Callable]
    from_kio: Optional[Callable]


_ENTRIES: Dict[Tuple[str, int, str], Optional[_Entry]] = {}


def _entry(api: str, version: int, direction: str) -> Optional[_Entry]:
    k = (api, version, direction)
    try:
        return _ENTRIES[k]
    except KeyError:
        pass
    e = None
    r = CODEC_VERSIONS.get(api)
    if r is not None and r[0] <= version <= r[1]:
        cls = kio_class(api, version, direction)
        if cls is not None:
            t = TRANSLATORS.get(api)
            to_kio = from_kio = None
            if t is not None:
                to_kio, from_kio = (t[0], t[1]) if direction == REQUEST else (t[2], t[3])
            e = _Entry(api, key_of(api), version, direction, cls, cls.__header_schema__.__version__,
                       entity_reader(cls), entity_writer(cls), to_kio, from_kio)
    _ENTRIES[k] = e
    return e


def request_header_version(api: str, version: int) -> Optional[int]:
    """The request header version for *api* at *version* (``None`` if the codec lacks it)."""
    e = _entry(api, version, REQUEST)
    return None if e is None else e.header_version


def response_header_version(api: str, version: int) -> Optional[int]:
    """The response header version for *api* at *version* (always 0 for ApiVersions)."""
    e = _entry(api, version, RESPONSE)
    return None if e is None else e.header_version


# -- headers ---------------------------------------------------------------------------------------

def _write_request_header(buf: bytearray, key: int, version: int, correlation_id: int,
                          client_id: Optional[str], header_version: int) -> None:
    buf += _HHI.pack(key, version, correlation_id)
    if client_id is None:
        buf += b"\xff\xff"
    else:
        raw = client_id.encode("utf-8")
        buf += _H.pack(len(raw))
        buf += raw
    if header_version >= 2:
        buf += b"\x00"  # no tagged fields


class _Short(Exception):
    """Internal: the header ran past the end of the frame."""


def _uvarint(data, offset: int) -> Tuple[int, int]:
    value = shift = 0
    n = len(data)
    while True:
        if offset >= n:
            raise _Short()
        b = data[offset]
        offset += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, offset
        shift += 7
        if shift > 28:
            raise ValueError("unsigned varint longer than 5 bytes")


def _skip_tagged_fields(data, offset: int) -> int:
    count, offset = _uvarint(data, offset)
    for _ in range(count):
        _tag, offset = _uvarint(data, offset)
        size, offset = _uvarint(data, offset)
        offset += size
        if offset > len(data):
            raise _Short()
    return offset


# -- errors ------------------------------------------------------------------------------------------

def _kind_of(exc: BaseException) -> str:
    if isinstance(exc, (kio_errors.BufferUnderflow, _Short)):
        return ErrorKind.TRUNCATED
    return ErrorKind.MALFORMED


def _reason(exc: BaseException) -> str:
    if isinstance(exc, _Short):
        return "Buffer is exhausted"
    text = str(exc).strip("'\"") or type(exc).__name__
    return "%s: %s" % (type(exc).__name__, text)


def _locate(cls: type, data, offset: int) -> Tuple[int, Optional[str]]:
    """Where reading *cls* at *offset* fails: (offset of the failing top-level field, its name).
    Runs only on the error path, reading field by field."""
    try:
        from kio.serial._parse import get_field_reader
        from kio.serial._introspect import get_field_tag
        is_header = cls.__name__ == "RequestHeader"
        for f in dataclasses.fields(cls):
            if get_field_tag(f) is not None:
                continue
            reader = get_field_reader(cls, f, is_header, False)
            try:
                _value, size = reader(data, offset)
            except Exception:
                return offset, f.name
            offset += size
        return offset, "(tagged fields)" if cls.__flexible__ else None
    except Exception:
        return offset, None


def _error(kind: str, reason: str, data, *, api: Optional[str] = None, api_key: Optional[int] = None,
           version: Optional[int] = None, direction: Optional[str] = None,
           correlation_id: Optional[int] = None, offset: Optional[int] = None,
           field: Optional[str] = None) -> WireError:
    at = 0 if offset is None else offset
    start, hexed = hex_window(data, at)
    return WireError(kind, reason, api=api, api_key=api_key, version=version, direction=direction,
                     correlation_id=correlation_id, offset=offset, field=field, size=len(data),
                     hex_start=start, hex=hexed)


def _body_error(e: _Entry, exc: BaseException, data, body_offset: int, correlation_id: Optional[int]) -> WireError:
    offset, field = _locate(e.cls, data, body_offset)
    return _error(_kind_of(exc), _reason(exc), data, api=e.api, api_key=e.key, version=e.version,
                  direction=e.direction, correlation_id=correlation_id, offset=offset, field=field)


def _encode_error(api: Optional[str], version: Optional[int], direction: str, reason: str,
                  kind: str = ErrorKind.UNENCODABLE) -> EncodeError:
    key = None
    if api is not None:
        try:
            key = key_of(api)
        except KeyError:
            pass
    return EncodeError(WireError(kind, reason, api=api, api_key=key, version=version, direction=direction))


# -- bodies ------------------------------------------------------------------------------------------

def _api_of(body: Any) -> Tuple[str, bool]:
    """(API name, translated?) of a body: an impl.protocol object or a kio payload."""
    name = getattr(type(body), "api_key", None)
    if isinstance(name, str):
        return name, True
    key = getattr(type(body), "__api_key__", None)
    if key is None:
        raise _encode_error(None, None, REQUEST, "%r is neither an impl.protocol message nor a kio payload"
                            % type(body).__name__)
    return api_name(key), False


def _write_body(e: _Entry, buf: io.BytesIO, body: Any, translated: bool) -> None:
    try:
        if translated:
            if e.to_kio is None:
                raise FieldNotInVersion("%s bodies are kio objects, not %s" % (e.api, type(body).__name__))
            k = e.to_kio(body, e.version)
        else:
            if e.to_kio is not None:
                raise FieldNotInVersion("%s bodies are impl.protocol objects, not kio's %s"
                                        % (e.api, type(body).__name__))
            if type(body) is not e.cls:
                raise FieldNotInVersion("a %s v%d body was expected, got %s v%s"
                                        % (e.api, e.version, type(body).__qualname__,
                                           getattr(body, "__version__", "?")))
            k = body
        e.write(buf, k)
    except EncodeError:
        raise
    except Exception as exc:  # FieldNotInVersion, struct.error, kio's OutOfBoundValue, TypeError...
        raise _encode_error(e.api, e.version, e.direction, _reason(exc) if not isinstance(exc, FieldNotInVersion)
                            else str(exc)) from exc


def encode_body(api: str, version: int, direction: str, body: Any) -> bytes:
    """The bytes of *body* alone (no size, no header): *api*'s request or response at *version*."""
    e = _entry(api, version, direction)
    if e is None:
        raise _encode_error(api, version, direction, "the codec has no %s v%d" % (api, version),
                            ErrorKind.UNSUPPORTED_VERSION)
    buf = io.BytesIO()
    _write_body(e, buf, body, api in TRANSLATED and not hasattr(type(body), "__api_key__"))
    return buf.getvalue()


def decode_body(api: str, version: int, direction: str, data, offset: int = 0) -> Union[Tuple[Any, int], WireError]:
    """``(body, size)`` of *api*'s request or response at *version* read from ``data[offset:]``,
    or a :class:`WireError`."""
    e = _entry(api, version, direction)
    if e is None:
        return _error(ErrorKind.UNSUPPORTED_VERSION, "the codec has no %s v%d" % (api, version), data,
                      api=api, version=version, direction=direction)
    try:
        k, size = e.read(data, offset)
    except Exception as exc:
        return _body_error(e, exc, data, offset, None)
    if e.from_kio is None:
        return k, size
    try:
        return e.from_kio(k, version), size
    except Exception as exc:
        return _error(ErrorKind.MALFORMED, _reason(exc), data, api=api, api_key=e.key, version=version,
                      direction=direction, offset=offset)


# -- client side ---------------------------------------------------------------------------------------

def encode_request(request: Any, version: int, correlation_id: int, client_id: Optional[str]) -> bytes:
    """The frame (size prefix, header, body) of *request* at *version*.

    *request* is an :mod:`impl.protocol` request (its API from ``request.api_key``) or a kio
    request object of that version.  Raises :class:`~impl.wire.errors.EncodeError` (an
    ``UnsupportedVersionException``) if the codec lacks the version or the value cannot be
    written in it."""
    api, translated = _api_of(request)
    e = _entry(api, version, REQUEST)
    if e is None:
        raise _encode_error(api, version, REQUEST, "the codec has no %s v%d request" % (api, version),
                            ErrorKind.UNSUPPORTED_VERSION)
    buf = io.BytesIO()
    head = bytearray(b"\0\0\0\0")
    try:
        _write_request_header(head, e.key, version, correlation_id, client_id, e.header_version)
    except (struct.error, AttributeError, UnicodeError) as exc:
        raise _encode_error(api, version, REQUEST, "header: " + _reason(exc)) from exc
    buf.write(head)
    _write_body(e, buf, request, translated)
    out = buf.getbuffer()
    _I.pack_into(out, 0, len(out) - 4)
    del out
    return buf.getvalue()


def peek_correlation_id(payload) -> Optional[int]:
    """The correlation id at the start of a response payload (``None`` if too short)."""
    return _I.unpack_from(payload, 0)[0] if len(payload) >= 4 else None


def decode_response(api: str, version: int, payload) -> Union[DecodedResponse, WireError]:
    """The response to a request of *api* at *version*, read from one frame's *payload*.

    The caller knows *api* and *version* from the in-flight request (Kafka's ``NetworkClient``
    does the same) and checks ``correlation_id`` against it.  ApiVersions falls back to v0."""
    e = _entry(api, version, RESPONSE)
    n = len(payload)
    if e is None:
        return _error(ErrorKind.UNSUPPORTED_VERSION, "the codec has no %s v%d response" % (api, version), payload,
                      api=api, version=version, direction=RESPONSE, correlation_id=peek_correlation_id(payload))
    if n < 4:
        return _error(ErrorKind.TRUNCATED, "response header: Buffer is exhausted", payload, api=api, api_key=e.key,
                      version=version, direction=RESPONSE, offset=0, field="correlation_id")
    correlation_id = _I.unpack_from(payload, 0)[0]
    offset = 4
    if e.header_version >= 1:
        try:
            offset = _skip_tagged_fields(payload, 4)
        except Exception as exc:
            return _error(_kind_of(exc), "response header: " + _reason(exc), payload, api=api, api_key=e.key,
                          version=version, direction=RESPONSE, correlation_id=correlation_id, offset=4,
                          field="(header tagged fields)")
    try:
        k, size = e.read(payload, offset)
    except Exception as exc:
        if api == "ApiVersions" and version != 0:
            e0 = _entry(api, 0, RESPONSE)
            try:
                k, size = e0.read(payload, offset)
            except Exception:
                return _body_error(e, exc, payload, offset, correlation_id)
            return DecodedResponse(correlation_id, e0.from_kio(k, 0), 0, n, n - offset - size)
        return _body_error(e, exc, payload, offset, correlation_id)
    if e.from_kio is None:
        return DecodedResponse(correlation_id, k, version, n, n - offset - size)
    try:
        body = e.from_kio(k, version)
    except Exception as exc:
        return _error(ErrorKind.MALFORMED, _reason(exc), payload, api=api, api_key=e.key, version=version,
                      direction=RESPONSE, correlation_id=correlation_id, offset=offset)
    return DecodedResponse(correlation_id, body, version, n, n - offset - size)


# -- server side -------------------------------------------------------------------------------------

def decode_request_header(payload) -> Union[Tuple[RequestHeader, int], WireError]:
    """``(header, body offset)`` of a request payload, or a :class:`WireError` (truncated header,
    unknown API, version the codec lacks — the ApiVersions case is answerable, see
    :func:`encode_api_versions_fallback`)."""
    n = len(payload)
    if n < 8:
        return _error(ErrorKind.TRUNCATED, "request header: Buffer is exhausted", payload, offset=0,
                      correlation_id=_I.unpack_from(payload, 4)[0] if n >= 8 else None,
                      field="request_api_key" if n < 2 else "request_api_version" if n < 4 else "correlation_id",
                      api=api_name(_H.unpack_from(payload, 0)[0]) if n >= 2 else None,
                      api_key=_H.unpack_from(payload, 0)[0] if n >= 2 else None,
                      version=_H.unpack_from(payload, 2)[0] if n >= 4 else None, direction=REQUEST)
    key, version, correlation_id = _HHI.unpack_from(payload, 0)
    api = api_name(key)
    if api not in CODEC_VERSIONS:
        return _error(ErrorKind.UNKNOWN_API, "API key %d is not one groupcheck speaks" % key, payload, api=api,
                      api_key=key, version=version, direction=REQUEST, correlation_id=correlation_id, offset=0)
    e = _entry(api, version, REQUEST)
    if e is None:
        lo, hi = CODEC_VERSIONS[api]
        return _error(ErrorKind.UNSUPPORTED_VERSION, "%s v%d is not supported (%d-%d)" % (api, version, lo, hi),
                      payload, api=api, api_key=key, version=version, direction=REQUEST,
                      correlation_id=correlation_id, offset=2)
    offset = 8
    try:
        if n < 10:
            raise _Short()
        size = _H.unpack_from(payload, 8)[0]
        offset = 10
        if size < 0:
            client_id = None
        else:
            if offset + size > n:
                raise _Short()
            client_id = bytes(payload[offset:offset + size]).decode("utf-8")
            offset += size
        if e.header_version >= 2:
            offset = _skip_tagged_fields(payload, offset)
    except Exception as exc:
        return _error(_kind_of(exc), "request header: " + _reason(exc), payload, api=api, api_key=key,
                      version=version, direction=REQUEST, correlation_id=correlation_id, offset=8,
                      field="client_id" if offset <= 10 else "(header tagged fields)")
    return RequestHeader(api, key, version, correlation_id, client_id, e.header_version), offset


def decode_request(payload, supported: Optional[Mapping[str, Tuple[int, int]]] = None
                   ) -> Union[DecodedRequest, WireError]:
    """The request in one frame's *payload*, or a :class:`WireError`.

    *supported* (API name -> (min, max), e.g. what the broker advertises) narrows what is
    accepted: an API missing from it is ``unknown_api``, a version outside its range
    ``unsupported_version`` (as Kafka's ``SocketServer``, which closes the connection — except
    for ApiVersions, answered by :func:`encode_api_versions_fallback`).  An ApiVersions request
    of a version above the codec's own is reported the same way, without reading its body."""
    h = decode_request_header(payload)
    if isinstance(h, WireError):
        return h
    header, offset = h
    if supported is not None:
        r = supported.get(header.api)
        if r is None:
            return _error(ErrorKind.UNKNOWN_API, "%s is not enabled" % header.api, payload, api=header.api,
                          api_key=header.api_key, version=header.version, direction=REQUEST,
                          correlation_id=header.correlation_id, offset=0)
        if not r[0] <= header.version <= r[1]:
            return _error(ErrorKind.UNSUPPORTED_VERSION, "%s v%d is not supported (%d-%d)"
                          % (header.api, header.version, r[0], r[1]), payload, api=header.api,
                          api_key=header.api_key, version=header.version, direction=REQUEST,
                          correlation_id=header.correlation_id, offset=2)
    e = _entry(header.api, header.version, REQUEST)
    n = len(payload)
    try:
        k, size = e.read(payload, offset)
    except Exception as exc:
        return _body_error(e, exc, payload, offset, header.correlation_id)
    if e.from_kio is None:
        return DecodedRequest(header, k, n, n - offset - size)
    try:
        body = e.from_kio(k, header.version)
    except Exception as exc:
        return _error(ErrorKind.MALFORMED, _reason(exc), payload, api=header.api, api_key=header.api_key,
                      version=header.version, direction=REQUEST, correlation_id=header.correlation_id,
                      offset=offset)
    return DecodedRequest(header, body, n, n - offset - size)


def encode_response_as(api: str, version: int, correlation_id: int, response: Any) -> bytes:
    """The frame of *response* to a request of *api* at *version* with *correlation_id*."""
    e = _entry(api, version, RESPONSE)
    if e is None:
        raise _encode_error(api, version, RESPONSE, "the codec has no %s v%d response" % (api, version),
                            ErrorKind.UNSUPPORTED_VERSION)
    translated = e.to_kio is not None and not hasattr(type(response), "__api_key__")
    buf = io.BytesIO()
    try:
        head = _I.pack(0) + _I.pack(correlation_id)
    except struct.error as exc:
        raise _encode_error(api, version, RESPONSE, "header: " + _reason(exc)) from exc
    buf.write(head)
    if e.header_version >= 1:
        buf.write(b"\x00")
    _write_body(e, buf, response, translated)
    out = buf.getbuffer()
    _I.pack_into(out, 0, len(out) - 4)
    del out
    return buf.getvalue()


def encode_response(header: RequestHeader, response: Any) -> bytes:
    """The frame of *response* answering the request whose decoded header is *header* (same API,
    version and correlation id; the response header version follows the API and version)."""
    return encode_response_as(header.api, header.version, header.correlation_id, response)


def encode_api_versions_fallback(correlation_id: int, min_version: int, max_version: int) -> bytes:
    """Kafka's answer to an ApiVersions request of a version the broker does not support
    (``ApiVersionsRequest.getErrorResponse``): a **v0** body with error 35 UNSUPPORTED_VERSION
    listing only ApiVersions' own range, so the client can retry with ``max_version``."""
    body = ApiVersionsResponseData(error_code=UNSUPPORTED_VERSION_CODE,
                                   api_keys=[ApiVersion("ApiVersions", min_version, max_version)])
    return encode_response_as("ApiVersions", 0, correlation_id, body)
