"""Every translated API, every version in range, both directions: a value representable in the
version survives encode -> frame -> decode exactly (header included), and the frame's size
prefix and correlation id are right."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from impl.wire import (CODEC_VERSIONS, TRANSLATED, FrameReader, decode_request, decode_response,
                       encode_request, encode_response)
from tests.wire.strategies import message

CASES = [(api, v) for api in sorted(TRANSLATED) for v in range(CODEC_VERSIONS[api][0], CODEC_VERSIONS[api][1] + 1)]
CLIENT_ID = st.none() | st.text(max_size=5)
CORRELATION = st.integers(-2 ** 31, 2 ** 31 - 1)


def _one_frame(data: bytes) -> bytes:
    reader = FrameReader()
    reader.feed(data)
    payload = reader.next()
    assert isinstance(payload, bytes) and reader.pending == 0 and reader.next() is None
    return payload


@pytest.mark.parametrize("api,version", CASES, ids=["%s-v%d" % c for c in CASES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), correlation_id=CORRELATION, client_id=CLIENT_ID)
def test_request_round_trip(api, version, data, correlation_id, client_id):
    request = data.draw(message(api, "request", version))
    got = decode_request(_one_frame(encode_request(request, version, correlation_id, client_id)))
    assert not hasattr(got, "kind"), str(got)
    assert (got.header.api, got.header.version, got.header.correlation_id, got.header.client_id) == (
        api, version, correlation_id, client_id)
    assert got.trailing == 0
    assert got.body == request


@pytest.mark.parametrize("api,version", CASES, ids=["%s-v%d" % c for c in CASES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), correlation_id=CORRELATION)
def test_response_round_trip(api, version, data, correlation_id):
    from impl.wire.codec import encode_response_as
    response = data.draw(message(api, "response", version))
    got = decode_response(api, version, _one_frame(encode_response_as(api, version, correlation_id, response)))
    assert not hasattr(got, "kind"), str(got)
    assert (got.correlation_id, got.version, got.trailing) == (correlation_id, version, 0)
    assert got.body == response


def test_encode_response_answers_in_the_request_version():
    from impl.protocol import HeartbeatRequestData, HeartbeatResponseData
    for v in range(5):
        req = decode_request(_one_frame(encode_request(HeartbeatRequestData("g", 1, "m"), v, 42, "c")))
        frame = encode_response(req.header, HeartbeatResponseData(27, 0))
        got = decode_response("Heartbeat", v, _one_frame(frame))
        assert (got.correlation_id, got.body.error_code) == (42, 27)
        # size, correlation id, error code; throttle time from v1; v4 is flexible: response header
        # v1 and the body each end with an empty tagged-field section
        assert len(frame) == {0: 10, 1: 14, 2: 14, 3: 14, 4: 16}[v]


@settings(max_examples=300, deadline=None)
@given(sub=st.deferred(lambda: __import__("tests.wire.strategies", fromlist=["SUBSCRIPTION"]).SUBSCRIPTION),
       asg=st.deferred(lambda: __import__("tests.wire.strategies", fromlist=["ASSIGNMENT"]).ASSIGNMENT))
def test_hand_written_consumer_protocol_bytes_equal_kios(sub, asg):
    from impl.wire.consumer_protocol import (decode_assignment, decode_subscription, encode_assignment,
                                             encode_assignment_kio, encode_subscription, encode_subscription_kio)
    data = encode_subscription(sub)
    assert data == encode_subscription_kio(sub) and decode_subscription(data) == sub
    data = encode_assignment(asg)
    assert data == encode_assignment_kio(asg) and decode_assignment(data) == asg
