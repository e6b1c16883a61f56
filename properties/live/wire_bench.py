"""``groupcheck bench --wire``: heartbeats over loopback TCP, ``groupcheck broker`` beside Tansu.

Both brokers are measured in one run, the same way, so the ratios mean something on a shared,
noisy machine:

* **Round-trip latency**: one member of a one-member group sends Heartbeat after Heartbeat on one
  connection, each after the previous answer (as a Kafka client does: one heartbeat in flight);
  p50 and p99 of the time from writing the request to reading the whole response.
* **Throughput**: *connections* members (each of its own group, each on its own connection to the
  coordinator) keep one Heartbeat in flight each for *seconds*; heartbeats answered per second,
  and the share of its core the load generator used (near 100 %: the generator, not the broker,
  set the pace, and the figure is a lower bound).

Each broker process (all its threads) is pinned to CPU 0 and this load generator to CPU 1 when the
machine has two CPUs or more, so "on one core" is literal. The generator sends pre-encoded frames
(only the correlation id changes) and checks the error code of every response without decoding
the rest, so that its own cost stays far below the broker's. Setup (ApiVersions, FindCoordinator,
JoinGroup with the two-phase member id, SyncGroup) goes through :mod:`impl.wire`, at the highest
version both sides support.
"""

from __future__ import annotations

import os
import selectors
import socket
import struct
import time
from typing import Callable, Dict, List, Tuple

from impl import protocol as P
from impl.wire import CODEC_VERSIONS, NodeApiVersions, WireError, decode_response, encode_request

_SIZE = struct.Struct(">i")
_INT16 = struct.Struct(">h")
MEMBER_ID_REQUIRED = 79
#: The correlation id sits after the size prefix, the API key and the API version.
_CORRELATION_OFFSET = 8


class BenchError(RuntimeError):
    """A broker did not do what the benchmark needs (it names the step and the answer)."""


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            raise BenchError("the broker closed the connection")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _read_frame(sock: socket.socket) -> bytes:
    (size,) = _SIZE.unpack(_read_exactly(sock, 4))
    return _read_exactly(sock, size)


class RawMember:
    """A group member on blocking sockets, enough to reach the heartbeat loop."""

    def __init__(self, bootstrap: Tuple[str, int], group: str, client_id: str = "groupcheck-bench",
                 timeout_s: float = 30.0) -> None:
        self.group = group
        self.client_id = client_id
        self.timeout_s = timeout_s
        self.correlation_id = 0
        self.sock = self._connect(bootstrap)
        self.versions = self._api_versions()
        self.generation = -1
        self.member_id = ""

    def _connect(self, address: Tuple[str, int]) -> socket.socket:
        sock = socket.create_connection(address, timeout=self.timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def version(self, api: str) -> int:
        v = self.versions.usable_version(api)
        if v is None:
            raise BenchError(f"no {api} version both groupcheck's codec {CODEC_VERSIONS.get(api)} and the broker "
                             f"{self.versions.version_range(api)} support")
        return v

    def round_trip(self, request, version: int):
        self.correlation_id += 1
        self.sock.sendall(encode_request(request, version, self.correlation_id, self.client_id))
        decoded = decode_response(request.api_key, version, _read_frame(self.sock))
        if isinstance(decoded, WireError):
            raise BenchError(f"{request.api_key} v{version}: the response does not decode: {decoded}")
        return decoded.body

    def _api_versions(self) -> NodeApiVersions:
        response = self.round_trip(P.ApiVersionsRequestData(), 3)
        if response.error_code != 0:
            raise BenchError(f"ApiVersions v3 answered error {response.error_code}")
        return NodeApiVersions.from_response(response)

    def join(self, session_timeout_ms: int = 30000) -> None:
        """FindCoordinator, then JoinGroup (twice when the broker asks for a member id), then SyncGroup
        as the leader assigning nothing: the member is Stable and may heartbeat."""
        found = self.round_trip(P.FindCoordinatorRequestData(key=self.group), self.version("FindCoordinator"))
        coordinator = found.coordinators[0] if getattr(found, "coordinators", None) else found
        if coordinator.error_code != 0:
            raise BenchError(f"FindCoordinator({self.group}) answered error {coordinator.error_code}")
        self.sock.close()
        self.sock = self._connect((coordinator.host, coordinator.port))
        self.versions = self._api_versions()
        self.send_join(session_timeout_ms)
        self.finish_join()

    def send_join(self, session_timeout_ms: int = 30000) -> None:
        """Write the JoinGroup without waiting (so that many members can wait out the broker's
        initial rebalance delay together); :meth:`finish_join` reads the answer."""
        self._session_timeout_ms = session_timeout_ms
        self._join_version = self.version("JoinGroup")
        self.correlation_id += 1
        self.sock.sendall(encode_request(self._join_request(), self._join_version, self.correlation_id, self.client_id))

    def _join_request(self) -> P.JoinGroupRequestData:
        subscription = P.Subscription(topics=["bench"], user_data=None)
        return P.JoinGroupRequestData(group_id=self.group, session_timeout_ms=self._session_timeout_ms,
                                      rebalance_timeout_ms=self._session_timeout_ms, member_id=self.member_id,
                                      protocols=[P.JoinGroupRequestProtocol(name="range", metadata=subscription)])

    def read_join(self) -> bool:
        """Read the JoinGroup answer; True when the member joined, False when the broker asked for
        a member id first (KIP-394) and the JoinGroup must be sent again (:meth:`send_join`)."""
        decoded = decode_response("JoinGroup", self._join_version, _read_frame(self.sock))
        if isinstance(decoded, WireError):
            raise BenchError(f"JoinGroup v{self._join_version}: the response does not decode: {decoded}")
        joined = decoded.body
        if joined.error_code == MEMBER_ID_REQUIRED and not self.member_id:
            self.member_id = joined.member_id
            return False
        if joined.error_code != 0:
            raise BenchError(f"JoinGroup answered error {joined.error_code}")
        self.member_id, self.generation, self._protocol = joined.member_id, joined.generation_id, joined.protocol_name
        return True

    def sync(self) -> None:
        """SyncGroup as the group's only member (its leader), assigning nothing."""
        assignment = P.Assignment(partitions=[], user_data=None)
        synced = self.round_trip(P.SyncGroupRequestData(
            group_id=self.group, generation_id=self.generation, member_id=self.member_id,
            protocol_type="consumer", protocol_name=self._protocol,
            assignments=[P.SyncGroupRequestAssignment(member_id=self.member_id, assignment=assignment)]),
            self.version("SyncGroup"))
        if synced.error_code != 0:
            raise BenchError(f"SyncGroup answered error {synced.error_code}")

    def finish_join(self) -> None:
        if not self.read_join():
            self.send_join(self._session_timeout_ms)
            if not self.read_join():
                raise BenchError("JoinGroup asked for a member id twice")
        self.sync()

    def heartbeat_frame(self) -> Tuple[bytearray, int]:
        """The member's Heartbeat frame (correlation id 0, patched per send) and its version."""
        version = self.version("Heartbeat")
        frame = bytearray(encode_request(P.HeartbeatRequestData(group_id=self.group, generation_id=self.generation,
                                                                member_id=self.member_id), version, 0, self.client_id))
        return frame, version

    def close(self) -> None:
        self.sock.close()


def _heartbeat_error(payload: bytes, version: int) -> int:
    """The error code of a Heartbeat response payload: after the correlation id, the header's tagged
    fields (v4: flexible), the throttle time (v1+)."""
    offset = 4 + (1 if version >= 4 else 0) + (4 if version >= 1 else 0)
    return _INT16.unpack_from(payload, offset)[0]


def _percentile(sorted_values: List[float], q: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def measure_latency(bootstrap: Tuple[str, int], round_trips: int, group: str) -> Dict[str, float]:
    member = RawMember(bootstrap, group)
    try:
        member.join()
        frame, version = member.heartbeat_frame()
        sock = member.sock
        samples = []
        for i in range(round_trips + 50):
            struct.pack_into(">i", frame, _CORRELATION_OFFSET, i + 1)
            start = time.perf_counter_ns()
            sock.sendall(frame)
            payload = _read_frame(sock)
            elapsed = time.perf_counter_ns() - start
            if _heartbeat_error(payload, version) != 0:
                raise BenchError(f"Heartbeat answered error {_heartbeat_error(payload, version)}")
            if i >= 50:  # the first answers warm the broker's code paths up
                samples.append(elapsed / 1000.0)
        samples.sort()
        return {"round_trips": len(samples), "p50_us": _percentile(samples, 0.5),
                "p99_us": _percentile(samples, 0.99), "heartbeat_version": version}
    finally:
        member.close()


def measure_throughput(bootstrap: Tuple[str, int], connections: int, seconds: float, group_prefix: str
                       ) -> Dict[str, float]:
    members = [RawMember(bootstrap, f"{group_prefix}-{i}") for i in range(connections)]
    try:
        for m in members:  # FindCoordinator and the coordinator connection, one member at a time
            found = m.round_trip(P.FindCoordinatorRequestData(key=m.group), m.version("FindCoordinator"))
            coordinator = found.coordinators[0] if getattr(found, "coordinators", None) else found
            m.sock.close()
            m.sock = m._connect((coordinator.host, coordinator.port))
            m.versions = m._api_versions()
        # every JoinGroup waits out the broker's initial rebalance delay at the same time
        waiting = members
        for attempt in range(2):
            for m in waiting:
                m.send_join()
            waiting = [m for m in waiting if not m.read_join()]
        if waiting:
            raise BenchError("JoinGroup asked for a member id twice")
        for m in members:
            m.sync()
        frames = []
        selector = selectors.DefaultSelector()
        for index, m in enumerate(members):
            frame, version = m.heartbeat_frame()
            frames.append((frame, version))
            m.sock.setblocking(False)
            selector.register(m.sock, selectors.EVENT_READ, index)
        buffers = [b""] * len(members)
        answered = errors = 0
        correlation = 0

        def send(index: int) -> None:
            nonlocal correlation
            correlation += 1
            frame = frames[index][0]
            struct.pack_into(">i", frame, _CORRELATION_OFFSET, correlation)
            members[index].sock.sendall(frame)  # small frames: the socket buffer takes them whole

        start = time.perf_counter()
        cpu_start = time.process_time()
        deadline = start + seconds
        for index in range(len(members)):
            send(index)
        while True:
            now = time.perf_counter()
            if now >= deadline:
                break
            for key, _ in selector.select(deadline - now):
                index = key.data
                data = key.fileobj.recv(65536)
                if not data:
                    raise BenchError("the broker closed a connection during the throughput run")
                buf = buffers[index] + data
                while len(buf) >= 4:
                    (size,) = _SIZE.unpack_from(buf, 0)
                    if len(buf) < 4 + size:
                        break
                    payload, buf = buf[4:4 + size], buf[4 + size:]
                    answered += 1
                    if _heartbeat_error(payload, frames[index][1]) != 0:
                        errors += 1
                    send(index)
                buffers[index] = buf
        elapsed = time.perf_counter() - start
        generator_cpu = (time.process_time() - cpu_start) / elapsed
        selector.close()
        return {"connections": connections, "seconds": elapsed, "heartbeats": answered,
                "heartbeats_per_second": answered / elapsed, "errors": errors,
                "generator_cpu_share": generator_cpu}
    finally:
        for m in members:
            m.close()


def pin(pid: int, cpu: int) -> bool:
    """Pin every thread of process *pid* to *cpu*; False when the machine or the OS cannot."""
    if not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2:
        return False
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        tasks = [str(pid)]
    for tid in tasks:
        try:
            os.sched_setaffinity(int(tid), {cpu})
        except OSError:
            return False
    return True


def bench_broker(name: str, start: Callable[[], object], round_trips: int, connections: int, seconds: float,
                 progress: Callable[[str], None]) -> Dict[str, object]:
    """Start one broker, pin it, measure latency then throughput, stop it."""
    progress(f"{name}: starting")
    broker = start()
    try:
        host, _, port = broker.bootstrap.rpartition(":")
        pinned = pin(broker.process.pid, 0)
        progress(f"{name}: latency, {round_trips} heartbeat round trips")
        latency = measure_latency((host, int(port)), round_trips, f"bench-latency-{name}")
        progress(f"{name}: throughput, {connections} connections for {seconds:g} s")
        throughput = measure_throughput((host, int(port)), connections, seconds, f"bench-load-{name}")
        return {"broker": name, "pinned_to_one_core": pinned, **latency, **throughput}
    finally:
        broker.stop()


def run(round_trips: int = 5000, connections: int = 50, seconds: float = 10.0,
        progress: Callable[[str], None] = lambda line: None) -> Dict[str, object]:
    """Measure groupcheck broker and Tansu side by side; return the figures and the ratios."""
    from properties.live import tansu
    from properties.live.launch import launch_groupcheck_broker

    generator_pinned = False
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2:
        previous = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {1})
        generator_pinned = True
    try:
        groupcheck = bench_broker(
            "groupcheck", lambda: launch_groupcheck_broker(settings=("group.initial.rebalance.delay.ms=0",)),
            round_trips, connections, seconds, progress)
        other = bench_broker("tansu", tansu.start, round_trips, connections, seconds, progress)
    finally:
        if generator_pinned:
            os.sched_setaffinity(0, previous)
    return {
        "groupcheck": groupcheck, "tansu": other, "generator_pinned_to_cpu1": generator_pinned,
        "p50_ratio": groupcheck["p50_us"] / other["p50_us"],
        "p99_ratio": groupcheck["p99_us"] / other["p99_us"],
        "throughput_ratio": groupcheck["heartbeats_per_second"] / other["heartbeats_per_second"],
    }


def describe(result: Dict[str, object]) -> str:
    lines = []
    for name in ("groupcheck", "tansu"):
        r = result[name]
        lines.append(f"{name:10} Heartbeat v{r['heartbeat_version']}: round trip p50 {r['p50_us']:.0f} µs, "
                     f"p99 {r['p99_us']:.0f} µs ({r['round_trips']:,} round trips); "
                     f"{r['heartbeats_per_second']:,.0f} heartbeats/s from {r['connections']} connections "
                     f"({r['heartbeats']:,} in {r['seconds']:.1f} s, {r['errors']} errors; the load generator used "
                     f"{r['generator_cpu_share']:.0%} of its core)"
                     + ("; broker pinned to one core" if r["pinned_to_one_core"] else "; broker NOT pinned"))
    if max(result[n]["generator_cpu_share"] for n in ("groupcheck", "tansu")) > 0.9:
        lines.append("note: the load generator (one Python process) was near 100% of its core: the heartbeats/s figure "
                     "is a lower bound for the faster broker")
    lines.append(f"groupcheck/tansu: p50 {result['p50_ratio']:.2f}x, p99 {result['p99_ratio']:.2f}x, "
                 f"throughput {result['throughput_ratio']:.2f}x  (targets: p50 within 1.5x of Tansu's, "
                 f"at least 10,000 heartbeats/s through groupcheck broker on one core)")
    return "\n".join(lines)
