"""Version choice (highest both sides support, per-peer caps) and the ApiVersions negotiation,
including Kafka's fallback: an ApiVersions request above the broker's range is answered with
UNSUPPORTED_VERSION in a v0 body, and the client retries with the highest version listed."""

from __future__ import annotations

import pytest

from impl import protocol as P
from impl.errors import UnsupportedVersionException
from impl.server.config import DEFAULT_API_VERSIONS
from impl.wire import (ErrorKind, NodeApiVersions, WireError, advertised_versions, api_versions_retry_version,
                       decode_request, decode_response, encode_api_versions_fallback, encode_request,
                       encode_response, usable_version)


def test_usable_version_is_the_highest_common_under_the_cap():
    assert usable_version((0, 9), (0, 5)) == 5
    assert usable_version((0, 4), (2, 9)) == 4
    assert usable_version((0, 9), (0, 9), cap=5) == 5
    assert usable_version((0, 9), (6, 9), cap=5) is None
    assert usable_version((2, 9), (0, 1)) is None
    assert usable_version((0, 9), None) is None


def test_node_api_versions_mirrors_latest_usable_version():
    node = NodeApiVersions({"JoinGroup": (0, 9), "OffsetCommit": (0, 8), "Heartbeat": (0, 4)}, caps={"JoinGroup": 5})
    assert node.latest_usable_version("JoinGroup") == 5
    assert node.latest_usable_version("OffsetCommit") == 8
    assert node.latest_usable_version("Heartbeat", latest=2) == 2
    assert node.usable_version("OffsetCommit", ours=(9, 10)) is None and node.usable_version("OffsetCommit") == 8
    with pytest.raises(UnsupportedVersionException, match="does not support SyncGroup"):
        node.latest_usable_version("SyncGroup")
    with pytest.raises(UnsupportedVersionException, match=r"range \[6,9\].*capped at 5"):
        node.latest_usable_version("JoinGroup", oldest=6)


def test_broker_advertises_only_what_the_codec_has():
    adv = advertised_versions(DEFAULT_API_VERSIONS)
    assert adv["OffsetCommit"] == (2, 8) and adv["OffsetFetch"] == (1, 7) and adv["JoinGroup"] == (0, 9)
    assert adv["FindCoordinator"] == (0, 3) and adv["Metadata"] == (0, 12)
    assert advertised_versions({"JoinGroup": (10, 12), "Nope": (0, 1)}) == {}


def test_fallback_bytes_are_kafkas():
    frame = encode_api_versions_fallback(7, 0, 3)
    # size 16; response header v0 (correlation id); v0 body: error 35, one entry (18, 0, 3)
    assert frame.hex() == "00000010" "00000007" "0023" "00000001" "0012" "0000" "0003"


def test_api_versions_negotiation_with_the_v0_fallback():
    broker = {"ApiVersions": (0, 3), "JoinGroup": (0, 9), "Heartbeat": (0, 4)}
    # the client asks v4; the broker knows 0-3 and answers in a v0 body
    sent = encode_request(P.ApiVersionsRequestData("groupcheck", "0.1"), 4, 1, "cli")
    err = decode_request(sent[4:], supported=broker)
    assert isinstance(err, WireError) and (err.kind, err.api, err.correlation_id) == (
        ErrorKind.UNSUPPORTED_VERSION, "ApiVersions", 1)
    answer = decode_response("ApiVersions", 4, encode_api_versions_fallback(err.correlation_id, *broker["ApiVersions"])[4:])
    assert answer.version == 0 and answer.correlation_id == 1 and answer.body.error_code == 35
    retry = api_versions_retry_version(4, answer.body)
    assert retry == 3
    # the retry succeeds; the broker lists everything; the client picks versions under its cap
    req = decode_request(encode_request(P.ApiVersionsRequestData("groupcheck", "0.1"), retry, 2, "cli")[4:],
                         supported=broker)
    assert req.body == P.ApiVersionsRequestData("groupcheck", "0.1")
    full = P.ApiVersionsResponseData(0, [P.ApiVersion(n, lo, hi) for n, (lo, hi) in broker.items()])
    got = decode_response("ApiVersions", retry, encode_response(req.header, full)[4:])
    assert got.version == 3 and got.body == full
    node = NodeApiVersions.from_response(got.body, caps={"JoinGroup": 5})
    assert node.latest_usable_version("JoinGroup") == 5 and node.latest_usable_version("Heartbeat") == 4


def test_retry_decision_follows_network_client():
    listed = P.ApiVersionsResponseData(35, [P.ApiVersion("ApiVersions", 0, 2)])
    assert api_versions_retry_version(3, listed) == 2
    assert api_versions_retry_version(0, listed) is None                      # v0 refused: disconnect
    assert api_versions_retry_version(3, P.ApiVersionsResponseData(35)) == 0   # pre-2.4 broker lists nothing
    assert api_versions_retry_version(3, P.ApiVersionsResponseData(1)) is None  # another error: disconnect
    assert api_versions_retry_version(3, P.ApiVersionsResponseData(0)) is None  # no error: nothing to retry
    assert api_versions_retry_version(3, P.ApiVersionsResponseData(35, [P.ApiVersion("ApiVersions", 0, 9)])) == 4


def test_a_broken_v0_fallback_is_still_an_error_value():
    frame = encode_api_versions_fallback(7, 0, 3)
    err = decode_response("ApiVersions", 4, frame[4:-1])
    assert isinstance(err, WireError) and err.kind == ErrorKind.TRUNCATED and err.version == 4
