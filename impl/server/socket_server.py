"""``SocketServer`` for ``groupcheck broker``: Kafka's network layer on the server side
(``kafka.network.SocketServer``: an ``Acceptor`` per listener, a ``Processor`` over a Selector).

* One :class:`Acceptor` thread per broker listens on its port and hands each accepted socket to the
  processor (``Processor.accept``: a queue, then ``selector.wakeup()``), as Kafka's acceptor does.
* One :class:`Processor` — this server's only other thread, the one that calls :meth:`SocketServer.serve`
  — owns the :class:`~impl.network.selector.Selector` *and* runs the requests (Kafka hands them to
  request-handler threads through the ``RequestChannel``; here the cluster is single-threaded, so
  the processor calls ``KafkaApis`` directly). Per connection, one request at a time: the channel is
  muted when a request is received and unmuted when its response has been written
  (``Processor.processCompletedReceives`` / ``processCompletedSends``), so a parked JoinGroup or
  SyncGroup holds its connection, and the next request waits in the socket.
* Time: the cluster runs on a :class:`~impl.time.MockTime` that the processor moves to the wall
  clock (the injected :class:`~impl.time.Time`) before every step, firing the coordinators' delayed
  operations (join, sync and session deadlines, the initial rebalance delay) at their deadlines;
  the selector's wait is bounded by the next deadline. That is the broker's wall-clock timer.

Bad input, as Kafka's ``SocketServer`` / ``RequestContext`` treat it, closing only that connection
and logging one line: a frame that does not decode (garbage, a truncated body, a null where the
schema forbids one), an unknown API key, an unsupported version — except ApiVersions, answered with
the v0 UNSUPPORTED_VERSION body listing the versions supported (``ApiVersionsRequest.getErrorResponse``)
— and a size prefix above ``socket.request.max.bytes`` (the Selector refuses the frame before
buffering it, so memory stays bounded). A client that vanishes mid-frame or sends nothing costs its
buffered bytes until it closes or ``connections.max.idle.ms`` expires it.

Fault injection (``groupcheck broker --faults``): an optional *interceptor* (duck-typed, see
:class:`Interceptor`; groupcheck's is :class:`properties.live.faults.FaultInjector`) may answer a
request with an error instead of handling it, delay its response, close the connection before
handling it or instead of answering, and hold every connection of a client or of a broker for a
while (nothing read is handled and nothing is written until the hold ends). The server stays
ignorant of schedules: it only applies what the interceptor decides.
"""

from __future__ import annotations

import heapq
import itertools
import json
import queue
import socket
import threading
from typing import Any, Callable, Dict, List, Optional, Protocol, TextIO, Tuple

from impl.network.selector import NetworkSend, Selector
from impl.server.cluster import Cluster
from impl.server.kafka_apis import WIRE_API_VERSIONS, KafkaApis
from impl.time import MockTime, Time
from impl.wire import (DecodedRequest, EncodeError, ErrorKind, WireError, decode_request, encode_api_versions_fallback,
                       encode_response)
from impl.wire.build import to_plain

__all__ = ["Acceptor", "Interceptor", "SocketServer", "SocketServerConfig"]


class Interceptor(Protocol):
    """What :class:`SocketServer` asks a fault injector (all times in the broker's milliseconds).

    ``on_request`` returns None (handle the request) or an object whose ``kind`` is ``"error"`` (its
    ``fault.error`` names the Kafka error to answer with), ``"delay"`` (hold the response
    ``fault.ms``), ``"drop-before"`` or ``"drop-after"``, and whose ``fault.to_json()`` and
    ``fault.label()`` describe it for the trace and the log."""

    def on_request(self, broker_id: int, client_id: Optional[str], api: str, now_ms: int) -> Optional[Any]: ...

    def held_until(self, broker_id: int, client_id: Optional[str], now_ms: int) -> Optional[int]: ...

    def next_deadline(self) -> Optional[int]: ...

    def fire_due(self, now_ms: int, server: "SocketServer") -> None: ...


class SocketServerConfig:
    """The listener settings, with Kafka's names and defaults."""

    __slots__ = ("host", "ports", "socket_request_max_bytes", "connections_max_idle_ms", "backlog")

    def __init__(self, host: str, ports: List[int], socket_request_max_bytes: int = 104857600,
                 connections_max_idle_ms: int = 600000, backlog: int = 1024) -> None:
        self.host = host
        self.ports = ports
        self.socket_request_max_bytes = socket_request_max_bytes
        self.connections_max_idle_ms = connections_max_idle_ms
        self.backlog = backlog


class Acceptor(threading.Thread):
    """``SocketServer.Acceptor``: accepts connections on one listening socket and hands them over."""

    def __init__(self, broker_id: int, server_socket: socket.socket, hand_over: Callable[[int, socket.socket], None]
                 ) -> None:
        super().__init__(name=f"acceptor-{broker_id}", daemon=True)
        self.broker_id = broker_id
        self.server_socket = server_socket
        self._hand_over = hand_over
        self._running = True

    def run(self) -> None:
        while self._running:
            try:
                sock, _ = self.server_socket.accept()
            except OSError:
                if not self._running:
                    return
                continue  # e.g. EMFILE: keep accepting once descriptors free up
            self._hand_over(self.broker_id, sock)

    def shutdown(self) -> None:
        self._running = False
        try:
            self.server_socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.server_socket.close()


def bind_listeners(host: str, ports: List[int], backlog: int) -> List[socket.socket]:
    """Listening sockets on *host* for each port (0: the kernel picks); OSError if one is taken."""
    sockets = []
    try:
        for port in ports:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, port))
            s.listen(backlog)
            sockets.append(s)
    except OSError:
        for s in sockets:
            s.close()
        raise
    return sockets


class _PeerClosed:
    """The disconnect state of a connection whose client closed it while the broker held it."""

    state = "CLOSED_BY_PEER"
    exception = None


#: While a connection is held, the broker looks at least this often whether its client closed it.
HELD_CHECK_MS = 50


class _Connection:
    __slots__ = ("id", "broker_id", "remote", "in_flight", "open", "client_id", "delay_ms", "drop_after")

    def __init__(self, connection_id: str, broker_id: int, remote: str) -> None:
        self.id = connection_id
        self.broker_id = broker_id
        self.remote = remote
        self.in_flight: Optional[Tuple[int, str, int]] = None  # (correlation id, api, version)
        self.open = True
        self.client_id: Optional[str] = None  # the client id of its latest request
        self.delay_ms = 0  # an injected delay of the in-flight request's response
        self.drop_after = False  # an injected close instead of the in-flight request's response


class SocketServer:
    """N listeners (broker ``i`` on ``ports[i]``) serving one :class:`Cluster` (see the module docstring)."""

    def __init__(self, cluster: Cluster, apis: KafkaApis, clock: MockTime, wall: Time, config: SocketServerConfig,
                 server_sockets: List[socket.socket], log: Callable[[str], None] = lambda line: None,
                 trace: Optional[TextIO] = None, interceptor: Optional[Interceptor] = None) -> None:
        self.cluster = cluster
        self.apis = apis
        self.clock = clock
        self.wall = wall
        self.config = config
        self.log = log
        self.trace = trace
        self.selector = Selector(wall, max_receive_size=config.socket_request_max_bytes,
                                 connections_max_idle_ms=config.connections_max_idle_ms)
        self.ports = [s.getsockname()[1] for s in server_sockets]
        for broker_id, port in enumerate(self.ports):
            cluster.set_listener(broker_id, config.host, port)
        self._new_connections: "queue.Queue[Tuple[int, socket.socket]]" = queue.Queue()
        self.acceptors = [Acceptor(b, s, self._accept) for b, s in enumerate(server_sockets)]
        self.connections: Dict[str, _Connection] = {}
        self._sequence = itertools.count()
        self._stop = False
        self._between_polls: List[Callable[[], None]] = []
        self.requests = 0
        self.interceptor = interceptor
        # requests and responses an interceptor holds: (release time, sequence, connection, action)
        self._held: List[Tuple[int, int, _Connection, Callable[[], None]]] = []

    # -- lifecycle -------------------------------------------------------------------------------

    def _accept(self, broker_id: int, sock: socket.socket) -> None:
        self._new_connections.put((broker_id, sock))
        self.selector.wakeup()

    def call_soon(self, action: Callable[[], None]) -> None:
        """Run *action* on the processor thread before its next poll (signal handlers use it:
        failover, shutdown)."""
        self._between_polls.append(action)
        self.selector.wakeup()

    def stop(self) -> None:
        self._stop = True
        self.selector.wakeup()

    def serve(self) -> None:
        """Accept and answer until :meth:`stop`; then close every connection and listener."""
        for acceptor in self.acceptors:
            acceptor.start()
        try:
            while not self._stop:
                self.poll_once()
        finally:
            for acceptor in self.acceptors:
                acceptor.shutdown()
            self.selector.close_all()
            if self.trace is not None:
                self.trace.flush()

    def _advance_clock(self) -> int:
        now = max(self.wall.milliseconds(), self.clock.milliseconds())
        self.clock.set_current_time_ms(now)
        self.cluster.advance_clock(now)
        self.apis.expire(now)
        return now

    def poll_once(self, max_wait_ms: int = 300) -> None:
        while self._between_polls:
            self._between_polls.pop(0)()
        self._configure_new_connections()
        now = self._advance_clock()
        if self.interceptor is not None:
            self.interceptor.fire_due(now, self)
            self._release_held(now)
            self._reap_held_closed()
        timeout = max_wait_ms if not self._held else min(max_wait_ms, HELD_CHECK_MS)
        deadlines = [self.cluster.next_deadline(), self.apis.next_deadline()]
        if self.interceptor is not None:
            deadlines += [self.interceptor.next_deadline(), self._held[0][0] if self._held else None]
        for deadline in deadlines:
            if deadline is not None:
                timeout = max(0, min(timeout, deadline - now))
        self.selector.poll(timeout)
        self._advance_clock()
        for receive in self.selector.completed_receives:
            self._process_completed_receive(receive.source, receive.payload)
        for send in self.selector.completed_sends:
            self._process_completed_send(send.destination)
        for connection_id, state in self.selector.disconnected.items():
            self._process_disconnected(connection_id, state)

    def _configure_new_connections(self) -> None:
        while True:
            try:
                broker_id, sock = self._new_connections.get_nowait()
            except queue.Empty:
                return
            try:
                local = sock.getsockname()
                peer = sock.getpeername()
            except OSError:
                sock.close()  # gone before we got to it
                continue
            # Kafka's connection id: local address-remote address-index
            connection_id = f"{local[0]}:{local[1]}-{peer[0]}:{peer[1]}-{next(self._sequence)}"
            self.selector.register(connection_id, sock)
            self.connections[connection_id] = _Connection(connection_id, broker_id, f"{peer[0]}:{peer[1]}")

    # -- requests and responses ------------------------------------------------------------------

    def _process_completed_receive(self, connection_id: str, payload: bytes) -> None:
        connection = self.connections.get(connection_id)
        if connection is None:
            return
        self.selector.mute(connection_id)
        decoded = decode_request(memoryview(payload), WIRE_API_VERSIONS)
        if isinstance(decoded, WireError):
            self._bad_request(connection, decoded)
            return
        connection.client_id = decoded.header.client_id
        if self._hold(connection, lambda: self._handle(connection, decoded)):
            return
        self._handle(connection, decoded)

    def _handle(self, connection: _Connection, decoded: DecodedRequest) -> None:
        if not connection.open:
            return
        header = decoded.header
        self.requests += 1
        connection.in_flight = (header.correlation_id, header.api, header.version)
        self._trace(connection, "request", header.api, header.version, header.correlation_id, header.client_id,
                    decoded.body)

        def respond(body, connection=connection, decoded=decoded) -> None:
            self._respond(connection, decoded, body)

        broker = self.cluster.broker(connection.broker_id)
        if not broker.alive:
            self._close(connection, "the broker is down")
            return
        if self.interceptor is not None and self._intercept(connection, decoded, respond):
            return
        try:
            self.apis.handle(connection.broker_id, header.api, header.version, decoded.body, header.client_id,
                             "/" + connection.remote.rpartition(":")[0], respond, connection)
        except Exception as e:  # a bug of ours: this connection pays, the others are served
            self.log(f"closing {connection.id}: {header.api} v{header.version} failed: {type(e).__name__}: {e}")
            self._close(connection, None)

    def _bad_request(self, connection: _Connection, error: WireError) -> None:
        if error.kind == ErrorKind.UNSUPPORTED_VERSION and error.api == "ApiVersions" and error.correlation_id is not None:
            lo, hi = WIRE_API_VERSIONS["ApiVersions"]
            connection.in_flight = (error.correlation_id, "ApiVersions", 0)
            self.log(f"{connection.id}: ApiVersions v{error.version} is not supported: answering "
                     f"UNSUPPORTED_VERSION with versions {lo}-{hi}")
            self._send(connection, encode_api_versions_fallback(error.correlation_id, lo, hi))
            return
        self.log(f"closing {connection.id} from {connection.remote}: {error}")
        self._close(connection, None)

    def _respond(self, connection: _Connection, decoded: DecodedRequest, body) -> None:
        if not connection.open:
            return  # the client went away while its request waited (a parked JoinGroup, a fetch)
        header = decoded.header
        if body is None:  # Produce with acks=0: no response; the next request may come
            connection.in_flight = None
            self.selector.unmute(connection.id)
            return
        if connection.drop_after:
            connection.drop_after = False
            self._close(connection, f"{header.api} handled, its response dropped (an injected fault)")
            return
        if connection.delay_ms:
            release, connection.delay_ms = self.clock.milliseconds() + connection.delay_ms, 0
            self._hold_until(release, connection, lambda: self._respond(connection, decoded, body))
            return
        if self._hold(connection, lambda: self._respond(connection, decoded, body)):
            return
        self._trace(connection, "response", header.api, header.version, header.correlation_id, header.client_id, body)
        try:
            frame = encode_response(header, body)
        except EncodeError as e:
            self.log(f"closing {connection.id}: the {header.api} v{header.version} response cannot be written: {e}")
            self._close(connection, None)
            return
        self._send(connection, frame)

    def _send(self, connection: _Connection, frame: bytes) -> None:
        if self.selector.channel(connection.id) is None:
            return
        self.selector.send(NetworkSend(connection.id, frame))

    def _process_completed_send(self, connection_id: str) -> None:
        connection = self.connections.get(connection_id)
        if connection is None:
            return
        connection.in_flight = None
        if self.selector.channel(connection_id) is not None:
            self.selector.unmute(connection_id)

    def _process_disconnected(self, connection_id: str, state) -> None:
        connection = self.connections.pop(connection_id, None)
        if connection is None:
            return
        connection.open = False
        if isinstance(state, _PeerClosed):
            self.selector.close(connection_id)
        self.apis.drop_waiting(connection)
        self._trace_closed(connection, "client" if state.state != "EXPIRED" else "idle")
        exception = getattr(state, "exception", None)
        if state.state == "EXPIRED":
            self.log(f"closed {connection_id} from {connection.remote}: idle longer than "
                     f"connections.max.idle.ms={self.config.connections_max_idle_ms}")
        elif exception is not None and not isinstance(exception, (ConnectionResetError, BrokenPipeError)):
            self.log(f"closed {connection_id} from {connection.remote}: {exception}")

    def _close(self, connection: _Connection, reason: Optional[str]) -> None:
        if reason:
            self.log(f"closing {connection.id} from {connection.remote}: {reason}")
        connection.open = False
        self.connections.pop(connection.id, None)
        self.apis.drop_waiting(connection)
        self._trace_closed(connection, "broker")
        self.selector.close(connection.id)

    # -- injected faults ---------------------------------------------------------------------------

    def _intercept(self, connection: _Connection, decoded: DecodedRequest, respond: Callable[[Any], None]) -> bool:
        """Apply the interceptor's decision on a request about to be handled; True if it is not
        to be handled (answered with an error, or its connection closed)."""
        header = decoded.header
        now = self.clock.milliseconds()
        intercept = self.interceptor.on_request(connection.broker_id, header.client_id, header.api, now)
        if intercept is None:
            return False
        self.trace_fault(intercept.fault.to_json(), connection, header)
        self.log(f"{intercept.fault.label()}: {header.api} v{header.version} #{header.correlation_id} "
                 f"of {header.client_id!r} on {connection.id}")
        kind = intercept.kind
        if kind == "drop-before":
            self._close(connection, None)
            return True
        if kind == "error":
            from impl.errors import Errors
            from impl.server.broker import error_response

            respond(_error_body(decoded, Errors[intercept.fault.error], error_response))
            return True
        if kind == "drop-after":
            connection.drop_after = True
        elif kind == "delay":
            connection.delay_ms = intercept.fault.ms
        return False

    def _hold(self, connection: _Connection, action: Callable[[], None]) -> bool:
        """Defer *action* (handling a request, writing a response) while the interceptor holds the
        connection; True if deferred."""
        if self.interceptor is None:
            return False
        now = self.clock.milliseconds()
        until = self.interceptor.held_until(connection.broker_id, connection.client_id, now)
        if until is None or until <= now:
            return False
        self._hold_until(until, connection, action)
        return True

    def _hold_until(self, release_ms: int, connection: _Connection, action: Callable[[], None]) -> None:
        heapq.heappush(self._held, (release_ms, next(self._sequence), connection, action))

    def _release_held(self, now: int) -> None:
        while self._held and self._held[0][0] <= now:
            _, _, connection, action = heapq.heappop(self._held)
            if connection.open and self._peer_closed(connection):
                # the client gave up on the connection while it was held (Kafka's consumer disconnects
                # from a coordinator whose heartbeat answers stop, HeartbeatThread.run ->
                # markCoordinatorUnknown): it reads nothing more on it, so nothing held is handled
                # or answered, and the trace says when the broker learned it
                self._process_disconnected(connection.id, _PeerClosed())
            if connection.open:
                action()

    def _reap_held_closed(self) -> None:
        """Every held connection its client has closed meanwhile is closed and traced now, not when
        its hold ends: a client that gives up on a request held by a delay (librdkafka times a
        ConsumerGroupHeartbeat out after the heartbeat interval and reconnects) must not look as if
        it had two requests in flight."""
        for _, _, connection, _ in list(self._held):
            if connection.open and self._peer_closed(connection):
                self._process_disconnected(connection.id, _PeerClosed())

    def _peer_closed(self, connection: _Connection) -> bool:
        """Whether the client has closed its end of *connection* (TCP CLOSE_WAIT: its FIN arrived),
        which a muted connection, not being read, does not otherwise learn (Linux; False elsewhere)."""
        channel = self.selector.channel(connection.id)
        try:
            return channel is not None and channel.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] == 8
        except (OSError, AttributeError):
            return False

    def _trace_closed(self, connection: _Connection, by: str) -> None:
        """One ``direction: "closed"`` trace line: a connection went away (``by``: ``client``, ``broker``
        or ``idle``), with the request it had in flight (that request is never answered)."""
        if self.trace is None:
            return
        line = {"time_ms": self.clock.milliseconds(), "broker": connection.broker_id, "connection": connection.id,
                "direction": "closed", "by": by, "client_id": connection.client_id}
        if connection.in_flight is not None:
            line.update(correlation_id=connection.in_flight[0], api=connection.in_flight[1],
                        version=connection.in_flight[2])
        self.trace.write(json.dumps(line) + "\n")

    def trace_fault(self, fault: dict, connection: Optional[_Connection] = None, header=None) -> None:
        """One ``direction: "fault"`` trace line: what was injected, where and into which request."""
        if self.trace is None:
            return
        line = {"time_ms": self.clock.milliseconds(), "direction": "fault", "fault": fault}
        if connection is not None:
            line.update(broker=connection.broker_id, connection=connection.id)
        if header is not None:
            line.update(api=header.api, version=header.version, correlation_id=header.correlation_id,
                        client_id=header.client_id)
        self.trace.write(json.dumps(line) + "\n")

    # -- admin -----------------------------------------------------------------------------------

    def failover(self) -> List[Tuple[int, int, int]]:
        """Coordinator failover: every ``__consumer_offsets`` partition moves to the next live broker
        (with one broker: it resigns and is elected again), which loads the groups from the log.
        Members of moved groups get NOT_COORDINATOR and rediscover. Returns ``(partition, from, to)``."""
        cluster = self.cluster
        live = cluster.alive_broker_ids()
        moves = []
        for p in range(cluster.offsets_partitions):
            old = cluster.offsets_partition_leader(p)
            if old is None or not live:
                continue
            later = [b for b in live if b > old]
            new = later[0] if later else live[0]
            if new == old:
                cluster.broker(old).on_resignation(p)
                cluster.broker(old).on_election(p)
            else:
                cluster.move_leadership(p, new)
            moves.append((p, old, new))
        for b in live:
            cluster.finish_loading(b)
        return moves

    # -- trace -----------------------------------------------------------------------------------

    def _trace(self, connection: _Connection, direction: str, api: str, version: int, correlation_id: int,
               client_id: Optional[str], body) -> None:
        if self.trace is None:
            return
        line = {"time_ms": self.clock.milliseconds(), "broker": connection.broker_id, "connection": connection.id,
                "direction": direction, "api": api, "version": version, "correlation_id": correlation_id,
                "client_id": client_id, "body": to_plain(body)}
        self.trace.write(json.dumps(line, sort_keys=False) + "\n")


def _error_body(decoded: DecodedRequest, error, error_response) -> Any:
    """The response to *decoded* carrying *error* (``AbstractRequest.getErrorResponse``); a
    FindCoordinator of v4 and later answers per key."""
    body = decoded.body
    if decoded.header.api == "FindCoordinator" and decoded.header.version >= 4:
        from impl import protocol as P

        keys = list(body.coordinator_keys or ()) or [body.key]
        return P.FindCoordinatorResponseData(
            error_code=error.value, error_message=error.message, coordinators=[
                P.Coordinator(key=k, node_id=-1, host="", port=-1, error_code=error.value, error_message=error.message)
                for k in keys])
    return error_response(body, error)
