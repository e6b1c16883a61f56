"""Malformed input never crashes the codec: every case comes back as a WireError value that
names the API, version, offset and bytes, in one line; unencodable values raise EncodeError."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from impl import protocol as P
from impl.errors import UnsupportedVersionException
from impl.wire import (CODEC_VERSIONS, DecodedRequest, DecodedResponse, EncodeError, ErrorKind, WireError,
                       decode_request, decode_response, encode_request)
from impl.wire.codec import encode_response_as
from impl.wire.consumer_protocol import encode_subscription

SUB = P.Subscription(["t"], None, [], -1, None)


def join_v5() -> bytes:
    r = P.JoinGroupRequestData("grp", 10000, 30000, "m", "i", "consumer", [P.JoinGroupRequestProtocol("range", SUB)])
    return encode_request(r, 5, 7, "cli")[4:]


def join_response_v9() -> bytes:
    r = P.JoinGroupResponseData(0, 1, "consumer", "range", "m", "m", [P.JoinGroupResponseMember("m", None, SUB)])
    return encode_response_as("JoinGroup", 9, 7, r)[4:]


def test_every_truncation_of_a_request_is_an_error_value():
    payload = join_v5()
    assert isinstance(decode_request(payload), DecodedRequest)
    for n in range(len(payload)):
        err = decode_request(payload[:n])
        assert isinstance(err, WireError) and err.kind == ErrorKind.TRUNCATED, (n, err)
        assert err.size == n and "\n" not in str(err)
        if n >= 8:
            assert (err.api, err.version, err.correlation_id) == ("JoinGroup", 5, 7)


def test_every_truncation_of_a_response_is_an_error_value():
    payload = join_response_v9()
    for n in range(len(payload)):
        err = decode_response("JoinGroup", 9, payload[:n])
        assert isinstance(err, WireError) and err.kind == ErrorKind.TRUNCATED, (n, err)


def test_truncated_body_names_the_field_and_offset():
    payload = join_v5()
    cut = payload[:-3]  # inside the protocols' metadata bytes
    err = decode_request(cut)
    assert err.field == "protocols" and err.offset is not None and 14 < err.offset < len(cut)
    assert err.hex and bytes.fromhex(err.hex) == cut[err.hex_start:err.hex_start + len(err.hex) // 2]
    line = str(err)
    assert "JoinGroup v5 request" in line and "correlation id 7" in line and "field protocols" in line


@pytest.mark.parametrize("api", sorted(CODEC_VERSIONS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), garbage=st.binary(max_size=60))
def test_garbage_never_raises(api, data, garbage):
    lo, hi = CODEC_VERSIONS[api]
    v = data.draw(st.integers(lo, hi))
    from impl.wire.apis import api_key
    got = decode_request(struct.pack(">hhi", api_key(api), v, 3) + garbage)
    assert isinstance(got, (DecodedRequest, WireError))
    got = decode_response(api, v, garbage)
    assert isinstance(got, (DecodedResponse, WireError))
    if isinstance(got, WireError):
        assert got.kind in (ErrorKind.TRUNCATED, ErrorKind.MALFORMED) and "\n" not in str(got)


def test_unknown_api_and_unsupported_versions():
    err = decode_request(struct.pack(">hhi", 999, 0, 5) + b"\x00\x00")
    assert (err.kind, err.api, err.api_key, err.correlation_id) == (ErrorKind.UNKNOWN_API, "ApiKey999", 999, 5)
    err = decode_request(struct.pack(">hhi", 71, 0, 5) + b"\x00\x00")  # known to kio, not spoken here
    assert err.kind == ErrorKind.UNKNOWN_API
    err = decode_request(struct.pack(">hhi", 11, 10, 6) + b"\x00\x00")
    assert (err.kind, err.api, err.version, err.correlation_id) == (ErrorKind.UNSUPPORTED_VERSION, "JoinGroup", 10, 6)
    err = decode_request(struct.pack(">hhi", 8, 1, 6) + b"\x00\x00")  # OffsetCommit v1: Kafka 4 dropped it
    assert err.kind == ErrorKind.UNSUPPORTED_VERSION
    err = decode_request(join_v5(), supported={"JoinGroup": (0, 4)})
    assert err.kind == ErrorKind.UNSUPPORTED_VERSION and "(0-4)" in err.reason
    err = decode_request(join_v5(), supported={"Heartbeat": (0, 4)})
    assert err.kind == ErrorKind.UNKNOWN_API
    assert isinstance(decode_response("JoinGroup", 10, b"\x00" * 8), WireError)


def _flexible_heartbeat_response(error_code: int, tail: bytes = b"\x00") -> bytes:
    # response header v1 (correlation id, no tags), throttle, error code, tagged fields
    return struct.pack(">ib", 9, 0) + struct.pack(">ih", 0, error_code) + tail


def test_schema_violations_are_malformed():
    ok = decode_response("Heartbeat", 4, _flexible_heartbeat_response(0))
    assert isinstance(ok, DecodedResponse) and ok.correlation_id == 9
    err = decode_response("Heartbeat", 4, _flexible_heartbeat_response(12345))
    assert err.kind == ErrorKind.MALFORMED and err.field == "error_code" and err.offset == 9
    err = decode_response("Heartbeat", 4, _flexible_heartbeat_response(0, b"\x01\x07\x01\x00"))  # unknown tag 7
    assert err.kind == ErrorKind.MALFORMED and "tag" in err.reason
    # a null group id (length -1) where the schema forbids null
    body = struct.pack(">h", -1) + struct.pack(">i", 1) + b"\x00\x01m"
    err = decode_request(struct.pack(">hhih", 12, 0, 4, 1) + b"c" + body)
    assert err.kind == ErrorKind.MALFORMED and err.field == "group_id"
    # invalid UTF-8 in the group id
    body = struct.pack(">h", 2) + b"\xff\xfe" + struct.pack(">i", 1) + b"\x00\x01m"
    err = decode_request(struct.pack(">hhih", 12, 0, 4, 1) + b"c" + body)
    assert err.kind == ErrorKind.MALFORMED and err.field == "group_id"


def test_request_header_tags_are_skipped_and_trailing_bytes_counted():
    r = P.HeartbeatRequestData("g", 1, "m")
    payload = encode_request(r, 4, 3, "c")[4:]
    # header v2 = 2+2+4 + (2+1) client id + 1 tag count; insert one unknown header tag
    tagged = payload[:11] + b"\x01\x05\x02hi" + payload[12:]
    got = decode_request(tagged + b"extra")
    assert isinstance(got, DecodedRequest) and got.body == r and got.trailing == 5


def test_null_client_id():
    got = decode_request(encode_request(P.HeartbeatRequestData("g", 1, "m"), 1, 3, None)[4:])
    assert got.header.client_id is None


def test_undecodable_consumer_metadata_stays_bytes_and_echoes_verbatim():
    r = P.JoinGroupRequestData("g", 1, 1, "m", None, "consumer", [P.JoinGroupRequestProtocol("range", b"\x00")])
    got = decode_request(encode_request(r, 5, 1, "c")[4:])
    assert got.body.protocols[0].metadata == b"\x00"
    v0 = b"\x00\x00" + struct.pack(">i", 1) + struct.pack(">h", 1) + b"t" + struct.pack(">i", -1)
    r.protocols[0].metadata = v0  # a v0 subscription, as kafka-python sends it
    got = decode_request(encode_request(r, 5, 1, "c")[4:])
    sub = got.body.protocols[0].metadata
    assert sub == P.Subscription(["t"]) and encode_subscription(sub) == v0  # echoed as received, not as v3


def test_encode_errors_are_unsupported_version_exceptions():
    r = P.JoinGroupRequestData("g", 1, 1, "m", "instance", "consumer", [])
    with pytest.raises(EncodeError) as info:
        encode_request(r, 4, 1, "c")
    assert isinstance(info.value, UnsupportedVersionException)
    assert info.value.error.kind == ErrorKind.UNENCODABLE and "group_instance_id" in str(info.value)
    encode_request(r, 5, 1, "c")
    r.reason = "dropped below v8: ignorable"
    assert encode_request(r, 5, 1, "c") == encode_request(P.JoinGroupRequestData(
        "g", 1, 1, "m", "instance", "consumer", []), 5, 1, "c")
    with pytest.raises(EncodeError):
        encode_request(P.HeartbeatRequestData("g", 2 ** 31, "m"), 1, 1, "c")  # int32 overflow
    with pytest.raises(EncodeError):
        encode_response_as("Heartbeat", 1, 1, P.HeartbeatResponseData(error_code=4242))
    with pytest.raises(EncodeError):
        encode_request(P.LeaveGroupRequestData("g", [P.MemberIdentity("a"), P.MemberIdentity("b")]), 2, 1, "c")
    with pytest.raises(EncodeError):
        encode_request(P.OffsetFetchRequestData("g", None), 1, 1, "c")
    with pytest.raises(EncodeError):
        encode_request(P.MetadataRequestData([]), 0, 1, "c")
    with pytest.raises(EncodeError):
        encode_response_as("FindCoordinator", 4, 1, P.FindCoordinatorResponseData(0, 1, "h", 9092))
    with pytest.raises(EncodeError) as info:
        encode_request(P.HeartbeatRequestData("g", 1, "m"), 9, 1, "c")
    assert info.value.error.kind == ErrorKind.UNSUPPORTED_VERSION


def test_kio_bodies_for_broker_only_apis():
    from kio.schema.list_groups.v4.request import ListGroupsRequest
    from kio.schema.list_groups.v4.response import ListGroupsResponse, ListedGroup
    from kio.schema.errors import ErrorCode
    import datetime
    req = ListGroupsRequest(states_filter=("Stable",))
    got = decode_request(encode_request(req, 4, 8, "c")[4:])
    assert got.header.api == "ListGroups" and got.body == req
    resp = ListGroupsResponse(throttle_time=datetime.timedelta(0), error_code=ErrorCode.none, groups=(
        ListedGroup(group_id="g", protocol_type="consumer", group_state="Stable"),))
    back = decode_response("ListGroups", 4, encode_response_as("ListGroups", 4, 8, resp)[4:])
    assert back.body == resp
    with pytest.raises(EncodeError):
        encode_request(req, 3, 8, "c")  # a v4 object cannot be sent as v3
