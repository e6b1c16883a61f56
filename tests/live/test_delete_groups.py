"""DeleteGroups over TCP on ``groupcheck broker`` (issue 37's deletion of a group, as a client of
Kafka's admin API meets it): an Empty group is deleted with its offsets, a group with members is
refused, an unknown one is not found (``GroupCoordinator.handleDeleteGroups``)."""

from __future__ import annotations

import socket

from impl import protocol as P
from impl.errors import Errors
from impl.wire import decode_response, encode_request
from impl.wire.apis import REQUEST, kio_class
from impl.wire.build import build
from properties.live.launch import launch_groupcheck_broker
from tests.helpers.broker_wire import FAST, address, read_frame


def _ask(sock, body, version, correlation_id, api=None):
    sock.sendall(encode_request(body, version, correlation_id, "admin"))
    payload = read_frame(sock)
    assert payload is not None, "the broker closed the connection"
    decoded = decode_response(api or body.api_key, version, payload)
    assert decoded.correlation_id == correlation_id
    return decoded.body


def _delete(sock, names, correlation_id, version=2):
    body = build(kio_class("DeleteGroups", version, REQUEST), {"groups_names": names})
    answer = _ask(sock, body, version, correlation_id, api="DeleteGroups")
    return {r.group_id: r.error_code for r in answer.results}


def _committed(sock, group, correlation_id):
    fetched = _ask(sock, P.OffsetFetchRequestData(group_id=group, topics=[P.OffsetFetchRequestTopic("t", [0])]),
                   5, correlation_id)
    return fetched.topics[0].partitions[0].committed_offset


def test_delete_groups_deletes_an_empty_group_with_its_offsets_and_refuses_the_others():
    with launch_groupcheck_broker(settings=FAST) as broker:
        with socket.create_connection(address(broker), timeout=10) as sock:
            versions = _ask(sock, P.ApiVersionsRequestData(), 3, 1)
            advertised = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
            assert advertised["DeleteGroups"] == (0, 2)
            _ask(sock, P.MetadataRequestData(topics=[P.MetadataRequestTopic("t")]), 9, 8)  # creates topic t
            # a consumer without group management commits: an Empty group holding offsets
            commit = P.OffsetCommitRequestData(group_id="simple", topics=[P.OffsetCommitRequestTopic(
                "t", [P.OffsetCommitRequestPartition(0, 42)])])
            assert _ask(sock, commit, 7, 2).topics[0].partitions[0].error_code == 0
            assert _committed(sock, "simple", 3) == 42
            # a group with a member (a v3 JoinGroup: no MEMBER_ID_REQUIRED round)
            join = P.JoinGroupRequestData(group_id="busy", session_timeout_ms=10000, rebalance_timeout_ms=10000,
                                          member_id="", protocols=[P.JoinGroupRequestProtocol("range", P.Subscription(["t"]))])
            assert _ask(sock, join, 3, 4).error_code == 0
            errors = _delete(sock, ["simple", "busy", "nobody"], 5)
            assert errors == {"simple": Errors.NONE.value, "busy": Errors.NON_EMPTY_GROUP.value,
                              "nobody": Errors.GROUP_ID_NOT_FOUND.value}
            assert _committed(sock, "simple", 6) == -1  # its offsets went with it
            assert _delete(sock, ["simple"], 7, version=0) == {"simple": Errors.GROUP_ID_NOT_FOUND.value}
