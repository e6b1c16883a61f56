"""Micro-benchmark of the wire codec: microseconds per framed message, encode and decode.

``python -m impl.wire.bench [--n N]`` prints, for a JoinGroup request and a 3-member JoinGroup
response (v5 and v9, ConsumerProtocol subscriptions inside) and a Heartbeat request/response (v1 and
v4), the cost of :func:`encode_request` / :func:`encode_response_as` (impl.protocol object ->
frame bytes, translation included) and of :func:`decode_request` / :func:`decode_response`
(payload -> impl.protocol object), the best of 5 rounds of N messages each.  Decoded metadata
keeps its bytes, so the response encode figures are those of a broker echoing real members'
metadata; "fresh" figures encode subscriptions built in Python.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, List

from impl import protocol as P
from impl.wire.codec import decode_request, decode_response, encode_request, encode_response_as


def _best(fn: Callable[[], object], n: int, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def _subscription(i: int) -> P.Subscription:
    return P.Subscription(["orders", "audit"], None, [P.TopicPartition("orders", i), P.TopicPartition("audit", i)],
                          3, None)


def rows(n: int) -> List[tuple]:
    out = []
    for v in (5, 9):
        req = P.JoinGroupRequestData("group-1", 45000, 300000, "consumer-1-5f1c", "inst-1", "consumer",
                                     [P.JoinGroupRequestProtocol("range", _subscription(0)),
                                      P.JoinGroupRequestProtocol("cooperative-sticky", _subscription(0))],
                                     "rebalance" if v >= 8 else None)
        frame = encode_request(req, v, 17, "groupcheck-1")
        payload = frame[4:]
        out.append(("JoinGroup v%d request" % v, len(frame),
                    _best(lambda: encode_request(req, v, 17, "groupcheck-1"), n),
                    _best(lambda: decode_request(payload), n)))
        fresh = P.JoinGroupResponseData(0, 4, "consumer" if v >= 7 else None, "range", "m-0", "m-0",
                                        [P.JoinGroupResponseMember("m-%d" % i, None, _subscription(i)) for i in range(3)],
                                        False, 0)
        frame = encode_response_as("JoinGroup", v, 17, fresh)
        payload = frame[4:]
        echoed = decode_response("JoinGroup", v, payload).body
        out.append(("JoinGroup v%d response, 3 members" % v, len(frame),
                    _best(lambda: encode_response_as("JoinGroup", v, 17, echoed), n),
                    _best(lambda: decode_response("JoinGroup", v, payload), n)))
        out.append(("  (same, fresh subscriptions)", len(frame),
                    _best(lambda: encode_response_as("JoinGroup", v, 17, fresh), n), float("nan")))
    for v in (1, 4):
        hb = P.HeartbeatRequestData("group-1", 4, "consumer-1-5f1c", None)
        frame = encode_request(hb, v, 18, "groupcheck-1")
        payload = frame[4:]
        out.append(("Heartbeat v%d request" % v, len(frame), _best(lambda: encode_request(hb, v, 18, "groupcheck-1"), n),
                    _best(lambda: decode_request(payload), n)))
        resp = P.HeartbeatResponseData(0, 0)
        frame = encode_response_as("Heartbeat", v, 18, resp)
        payload = frame[4:]
        out.append(("Heartbeat v%d response" % v, len(frame),
                    _best(lambda: encode_response_as("Heartbeat", v, 18, resp), n),
                    _best(lambda: decode_response("Heartbeat", v, payload), n)))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m impl.wire.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="messages per round (default 2000)")
    args = parser.parse_args(argv)
    if args.n < 1:
        print("error: --n must be at least 1, got %d" % args.n, file=sys.stderr)
        return 2
    print("%-36s %6s %12s %12s" % ("message", "bytes", "encode µs", "decode µs"))
    for name, size, enc, dec in rows(args.n):
        print("%-36s %6d %12.1f %12s" % (name, size, enc, "-" if dec != dec else "%.1f" % dec))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
