"""``--wire``: the simulated links carry Kafka's wire format, not Python objects.

With ``Config.wire`` the simulated transport (:mod:`properties.systems.simworld`) encodes every
request a consumer sends into the frame Kafka's client would write (size prefix, request header,
body, at the version the simulation speaks for that API), the broker reads it back with the same
decoder ``groupcheck broker`` uses, and every response makes the same round trip. So a campaign
exercises the codec (:mod:`impl.wire`) on millions of real messages: a translation that loses or
changes a field shows up as a difference between the model and the implementation, and a frame
the codec cannot read stops the run with a :class:`WireRoundTripError` naming the API, version and
bytes.

The versions are the ones the simulated broker handles each API at (its advertised maximum;
JoinGroup at ``Config.join_group_version``), so the schedule, the model and the implementation do
exactly what they do without ``--wire``.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

from impl.wire import (CODEC_VERSIONS, DecodedRequest, WireError, decode_request, decode_response, encode_request,
                       encode_response)


class WireRoundTripError(AssertionError):
    """A frame the codec wrote and could not read back: a codec bug, reported with its bytes."""


class WireLinks:
    """Encoding and decoding for one simulated world's links. Requests are encoded on the client
    side (:meth:`request_frame`) and decoded on the broker side (:meth:`read_request`); responses the
    other way round, the client matching each response to its request's API and version by
    correlation id, as Kafka's NetworkClient does."""

    __slots__ = ("versions", "_in_flight", "messages", "requests_by_api")

    def __init__(self, api_versions: Dict[str, Tuple[int, int]], join_group_version: int) -> None:
        self.versions = {api: min(hi, CODEC_VERSIONS[api][1]) for api, (_, hi) in api_versions.items()
                         if api in CODEC_VERSIONS}
        self.versions["JoinGroup"] = join_group_version
        self._in_flight: Dict[Tuple[int, int], Tuple[str, int]] = {}  # (client, correlation id) -> (api, version)
        self.messages = 0  # frames encoded and decoded (requests and responses)
        self.requests_by_api: Dict[str, int] = {}

    def version_of(self, api: str) -> int:
        return self.versions[api]

    def request_frame(self, client: int, correlation_id: int, request: Any, client_id: str) -> bytes:
        api = request.api_key
        version = self.versions[api]
        self._in_flight[(client, correlation_id)] = (api, version)
        self.messages += 1
        self.requests_by_api[api] = self.requests_by_api.get(api, 0) + 1
        return encode_request(request, version, correlation_id, client_id)

    def read_request(self, frame: bytes) -> DecodedRequest:
        decoded = decode_request(memoryview(frame)[4:])
        if isinstance(decoded, WireError):
            raise WireRoundTripError(f"the broker could not read a request the client encoded: {decoded}")
        return decoded

    def response_frame(self, request: DecodedRequest, response: Any) -> bytes:
        self.messages += 1
        return encode_response(request.header, response)

    def read_response(self, client: int, correlation_id: int, frame: bytes) -> Any:
        api, version = self._in_flight.pop((client, correlation_id))
        decoded = decode_response(api, version, memoryview(frame)[4:])
        if isinstance(decoded, WireError):
            raise WireRoundTripError(f"the client could not read a response the broker encoded: {decoded}")
        if decoded.correlation_id != correlation_id:
            raise WireRoundTripError(f"{api} v{version}: response correlation id {decoded.correlation_id}, "
                                     f"request {correlation_id}")
        return decoded.body

    def forget(self, client: int, correlation_id: int) -> None:
        """A request whose response will never come (its connection broke)."""
        self._in_flight.pop((client, correlation_id), None)
