"""The wire codec: Kafka's binary protocol for groupcheck, on top of kio.

kio (pinned in ``pyproject.toml``) supplies typed per-version dataclasses generated from Kafka's
JSON message schemas, with native readers and Python writers, for message *bodies*.  This package
adds what kio does not do, and the boundary to :mod:`impl.protocol`:

* :mod:`impl.wire.framing` — the 4-byte size prefix; :class:`FrameReader` reassembles frames from
  a non-blocking socket's reads, with a maximum size.
* :mod:`impl.wire.codec` — request/response headers (v0-v2, tagged fields, the legacy client id),
  correlation ids, whole-frame :func:`encode_request` / :func:`decode_response` (client side) and
  :func:`decode_request` / :func:`encode_response` (server side), the ApiVersions fallback.
* :mod:`impl.wire.apis` — API names <-> keys, and :data:`CODEC_VERSIONS`, the versions handled.
* :mod:`impl.wire.versions` — version choice (highest both sides support, per-peer caps), the
  ApiVersions retry decision.
* :mod:`impl.wire.translate` / :mod:`impl.wire.consumer_protocol` — kio <-> impl.protocol for
  ApiVersions, Metadata, FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
  OffsetCommit and OffsetFetch in every supported version, including the ConsumerProtocol bytes
  (Subscription, Assignment).  Produce, Fetch, ListOffsets, DescribeGroups and ListGroups travel
  as kio objects.
* :mod:`impl.wire.errors` — :class:`WireError`, the value every decoding failure is (never an
  exception), and :class:`EncodeError` for values that cannot be written.
* ``python -m impl.wire.bench`` — encode/decode cost per message.

Decision: translate, not replace.  :mod:`impl.protocol` stays the one vocabulary of ``impl``
(mutable, version-independent, like Kafka's ``*Data`` classes, and what the simulated world and
the differential check already use); kio's classes are per version and frozen, which is right
for bytes but would spread version branches through the client and the broker.  Translation
happens once, at the channel boundary.
"""

from impl.wire.apis import CODEC_VERSIONS, TRANSLATED, advertised_versions, api_key, api_name, supports
from impl.wire.codec import (DecodedRequest, DecodedResponse, RequestHeader, decode_body, decode_request,
                             decode_request_header, decode_response, encode_api_versions_fallback, encode_body,
                             encode_request, encode_response, encode_response_as, peek_correlation_id,
                             request_header_version, response_header_version)
from impl.wire.errors import EncodeError, ErrorKind, WireError
from impl.wire.framing import DEFAULT_MAX_FRAME_SIZE, FrameReader, frame
from impl.wire.versions import NodeApiVersions, api_versions_retry_version, usable_version

__all__ = [
    "CODEC_VERSIONS", "TRANSLATED", "advertised_versions", "api_key", "api_name", "supports",
    "DecodedRequest", "DecodedResponse", "RequestHeader", "decode_body", "decode_request", "decode_request_header",
    "decode_response", "encode_api_versions_fallback", "encode_body", "encode_request", "encode_response",
    "encode_response_as", "peek_correlation_id", "request_header_version", "response_header_version",
    "EncodeError", "ErrorKind", "WireError",
    "DEFAULT_MAX_FRAME_SIZE", "FrameReader", "frame",
    "NodeApiVersions", "api_versions_retry_version", "usable_version",
]
