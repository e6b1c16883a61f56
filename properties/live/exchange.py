"""One request, one answer, on a blocking socket: for the few calls groupcheck makes outside a
member's connection (creating a started broker's topics, asking a group's state once a client
schedule settles)."""

from __future__ import annotations

import socket
from typing import Any, Tuple

from impl.wire import decode_response, encode_request


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
