"""Talking to a broker over a raw socket: its address, one Kafka frame read, an ApiVersions round
trip, and whether the broker closed the connection. ``FAST``: the broker setting that lets a group
form at once (no initial rebalance delay)."""

import socket
import struct

from impl import protocol as P
from impl.wire import decode_response, encode_request


FAST = ("group.initial.rebalance.delay.ms=0",)


def address(broker):
    host, _, port = broker.bootstrap.rpartition(":")
    return host, int(port)


def read_frame(sock):
    head = b""
    while len(head) < 4:
        chunk = sock.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    (size,) = struct.unpack(">i", head)
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def api_versions_round_trip(address, version=3, correlation_id=11):
    """A well-behaved client: one ApiVersions request, its decoded answer."""
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(encode_request(P.ApiVersionsRequestData(), version, correlation_id, "probe"))
        payload = read_frame(sock)
    assert payload is not None, "the broker closed a well-behaved client's connection"
    decoded = decode_response("ApiVersions", version, payload)
    assert decoded.correlation_id == correlation_id
    return decoded.body


def closed_by_peer(sock, timeout=10.0):
    """True when the broker closes the connection within *timeout* (reads EOF or a reset)."""
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False
