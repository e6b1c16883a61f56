"""One request, one answer, on a blocking socket: for the few calls groupcheck makes outside a
member's connection (creating a started broker's topics, asking a group's state once a client
schedule settles); and the connection every checker opens to a broker (:func:`connect`)."""

from __future__ import annotations

import socket
from typing import Any, Tuple

from impl.wire import decode_response, encode_request


class Unreachable(Exception):
    """The broker's address does not accept connections (the message names it)."""


def connect(address: Tuple[str, int], timeout_s: float) -> socket.socket:
    """A blocking connection to *address* (TCP_NODELAY, *timeout_s* on every call); Unreachable
    naming the address when it cannot be made."""
    try:
        sock = socket.create_connection(address, timeout=timeout_s)
    except OSError as e:
        raise Unreachable(f"cannot connect to {address[0]}:{address[1]}: {e.strerror or e}") from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_frame(sock: socket.socket) -> bytes:
    """One response frame's payload (the size prefix read and dropped); EOFError if the peer
    closes first."""
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise EOFError("the broker closed the connection")
            data += chunk
        return data
    return exactly(int.from_bytes(exactly(4), "big", signed=True))


def exchange(address: Tuple[str, int], body: Any, api: str, version: int, timeout_s: float,
             client_id: str = "groupcheck", correlation_id: int = 1):
    """Send *body* (an impl.protocol or kio request) as *api* v*version* on a fresh connection and
    return the decoded answer (a DecodedResponse, or the codec's WireError when it does not
    decode). OSError or EOFError when the broker cannot be reached or hangs up."""
    with socket.create_connection(address, timeout=timeout_s) as sock:
        sock.sendall(encode_request(body, version, correlation_id, client_id))
        return decode_response(api, version, read_frame(sock))


#: the (FindCoordinator, DescribeGroups) versions :func:`describe_group` sends by default: those of
#: Kafka 2.4 and later; 2.0-2.3 take (1, 1)
DESCRIBE_VERSIONS = (3, 5)


def describe_group(bootstrap: Tuple[str, int], group: str, timeout_s: float, client_id: str = "groupcheck",
                   versions: Tuple[int, int] = DESCRIBE_VERSIONS):
    """*group* as its coordinator describes it (FindCoordinator, then DescribeGroups to the
    coordinator, at *versions*): ``(error, described)`` — a FindCoordinator error and None, or the
    DescribeGroups error of the group and the group (kio's DescribedGroup: its state, its members'
    client ids at any version). OSError or EOFError when unreachable."""
    from impl import protocol as P
    from impl.wire.apis import REQUEST, kio_class
    from impl.wire.build import build

    find, describe = versions
    found = exchange(bootstrap, P.FindCoordinatorRequestData(key=group), "FindCoordinator", find, timeout_s,
                     client_id, 1).body
    if found.error_code:
        return found.error_code, None
    request = build(kio_class("DescribeGroups", describe, REQUEST), {"groups": [group], "include_authorized_operations": False})
    (described,) = exchange((found.host, found.port), request, "DescribeGroups", describe, timeout_s, client_id,
                            2).body.groups
    return int(getattr(described.error_code, "value", described.error_code)), described


def describe_consumer_group(bootstrap: Tuple[str, int], group: str, timeout_s: float, client_id: str = "groupcheck"):
    """A KIP-848 consumer group as its coordinator describes it (FindCoordinator v4, then
    ConsumerGroupDescribe v0): ``(error, described)`` as :func:`describe_group` gives them (kio's
    DescribedGroup: state, epochs, members with their client ids, epochs and assignments)."""
    from impl import protocol as P
    from impl.wire.apis import REQUEST, kio_class
    from impl.wire.build import build

    found = exchange(bootstrap, P.FindCoordinatorRequestData(key=group), "FindCoordinator", 4, timeout_s,
                     client_id, 1).body
    if found.error_code:
        return found.error_code, None
    request = build(kio_class("ConsumerGroupDescribe", 0, REQUEST), {"group_ids": [group],
                                                                      "include_authorized_operations": False})
    (described,) = exchange((found.host, found.port), request, "ConsumerGroupDescribe", 0, timeout_s, client_id,
                            2).body.groups
    return int(getattr(described.error_code, "value", described.error_code)), described
