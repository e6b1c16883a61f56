"""The Selector over real loopback sockets: connects, frames both ways, one send in flight,
muting, closes with and without notification, oversized frames, idle expiry, wakeup."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from impl.errors import IllegalArgumentException, IllegalStateException
from impl.network.selectable import ChannelState
from impl.network.selector import NetworkSend, Selector
from impl.time import MockTime, SystemTime
from impl.wire.framing import frame


@pytest.fixture
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    yield server
    server.close()


def poll_until(selector: Selector, predicate, seconds: float = 5.0, step_ms: int = 50):
    """Poll until *predicate(selector)* holds after a poll; returns the results of each poll seen."""
    deadline = time.monotonic() + seconds
    seen = {"sends": [], "receives": [], "disconnected": {}, "connected": []}
    while time.monotonic() < deadline:
        selector.poll(step_ms)
        seen["sends"] += selector.completed_sends
        seen["receives"] += selector.completed_receives
        seen["disconnected"].update(selector.disconnected)
        seen["connected"] += selector.connected
        if predicate(seen):
            return seen
    raise AssertionError(f"not reached within {seconds} s: {seen}")


def pair(listener, client_time=None, server_time=None, **server_options):
    """A client Selector connected to a server Selector through *listener*: (client, server)."""
    client = Selector(client_time or SystemTime())
    server = Selector(server_time or SystemTime(), **server_options)
    port = listener.getsockname()[1]
    client.connect("n1", "127.0.0.1", port)
    accepted, _ = listener.accept()
    server.register("c1", accepted)
    poll_until(client, lambda s: "n1" in s["connected"])
    return client, server


def test_frames_travel_both_ways_and_sends_complete(listener):
    client, server = pair(listener)
    client.send(NetworkSend("n1", frame(b"hello")))
    seen = poll_until(client, lambda s: s["sends"])
    assert [s.destination for s in seen["sends"]] == ["n1"]
    got = poll_until(server, lambda s: s["receives"])["receives"]
    assert [(r.source, r.payload) for r in got] == [("c1", b"hello")]
    big = bytes(range(256)) * 4000  # > one socket buffer: written across several polls
    server.send(NetworkSend("c1", frame(big)))
    got = []
    deadline = time.monotonic() + 5
    while not got and time.monotonic() < deadline:
        server.poll(10)
        client.poll(10)
        got = client.completed_receives
    assert got and got[0].payload == big
    client.close_all(), server.close_all()


def test_one_send_in_flight_per_channel(listener):
    client, server = pair(listener)
    # the socket buffer takes a small frame at once only at the next poll: the first send is in flight
    client.send(NetworkSend("n1", frame(b"a")))
    with pytest.raises(IllegalStateException, match="prior send operation still in progress"):
        client.send(NetworkSend("n1", frame(b"b")))
    client.poll(0)
    assert client.disconnected["n1"].state == ChannelState.FAILED_SEND
    assert client.channel("n1") is None
    client.close_all(), server.close_all()


def test_one_receive_per_channel_per_poll_and_buffered_frames_are_not_waited_for(listener):
    client, server = pair(listener)
    client.send(NetworkSend("n1", frame(b"1") + frame(b"2") + frame(b"3")))  # three frames in one write
    poll_until(client, lambda s: s["sends"])
    first = poll_until(server, lambda s: s["receives"])["receives"]
    assert [r.payload for r in first] == [b"1"]
    started = time.monotonic()
    server.poll(5000)  # bytes are buffered after a poll that made read progress: no wait
    assert [r.payload for r in server.completed_receives] == [b"2"]
    server.poll(5000)
    assert [r.payload for r in server.completed_receives] == [b"3"]
    assert time.monotonic() - started < 4
    client.close_all(), server.close_all()


def test_muted_channel_is_not_read_until_unmuted(listener):
    client, server = pair(listener)
    server.mute("c1")
    assert server.is_muted("c1")
    client.send(NetworkSend("n1", frame(b"x")))
    poll_until(client, lambda s: s["sends"])
    for _ in range(5):
        server.poll(20)
        assert server.completed_receives == []
    server.unmute("c1")
    assert [r.payload for r in poll_until(server, lambda s: s["receives"])["receives"]] == [b"x"]
    client.close_all(), server.close_all()


def test_remote_close_is_reported_after_buffered_frames(listener):
    client, server = pair(listener)
    client.send(NetworkSend("n1", frame(b"p") + frame(b"q")))
    poll_until(client, lambda s: s["sends"])
    client.close("n1")  # local close: never reported on the client
    client.poll(0)
    assert client.disconnected == {}
    seen = poll_until(server, lambda s: "c1" in s["disconnected"])
    assert [r.payload for r in seen["receives"]] == [b"p", b"q"]  # both frames first
    assert seen["disconnected"]["c1"].state == ChannelState.READY  # lost after it was ready
    client.close_all(), server.close_all()


def test_refused_connect_is_a_disconnect_in_state_not_connected():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    selector = Selector(SystemTime())
    selector.connect("n9", "127.0.0.1", port)
    seen = poll_until(selector, lambda s: "n9" in s["disconnected"])
    assert seen["disconnected"]["n9"].state == ChannelState.NOT_CONNECTED and "n9" not in seen["connected"]
    with pytest.raises(OSError):
        selector.connect("bad", "no-such-host.invalid", 9092)
    assert selector.channel("bad") is None
    selector.close_all()


def test_oversized_frame_closes_only_that_channel(listener):
    client, server = pair(listener, max_receive_size=100)
    client2 = Selector(SystemTime())
    client2.connect("n2", "127.0.0.1", listener.getsockname()[1])
    accepted, _ = listener.accept()
    server.register("c2", accepted)
    poll_until(client2, lambda s: "n2" in s["connected"])
    client.send(NetworkSend("n1", struct.pack(">i", 101) + b"z" * 101))
    client2.send(NetworkSend("n2", frame(b"fine")))
    poll_until(client, lambda s: s["sends"]), poll_until(client2, lambda s: s["sends"])
    seen = poll_until(server, lambda s: "c1" in s["disconnected"] and s["receives"])
    assert [(r.source, r.payload) for r in seen["receives"]] == [("c2", b"fine")]
    assert server.channel("c2") is not None
    for c in (client, client2, server):
        c.close_all()


def test_idle_connections_expire_oldest_first(listener):
    clock = MockTime(current_time_ms=1_000)
    client = Selector(SystemTime())
    server = Selector(clock, connections_max_idle_ms=10_000)
    client.connect("n1", "127.0.0.1", listener.getsockname()[1])
    accepted, _ = listener.accept()
    server.register("c1", accepted)
    poll_until(client, lambda s: "n1" in s["connected"])
    clock.sleep(10_000)
    server.poll(0)
    assert server.disconnected == {}  # exactly max idle: not yet
    clock.sleep(1)
    server.poll(0)
    assert server.disconnected["c1"].state == ChannelState.EXPIRED
    client.close_all(), server.close_all()


def test_delayed_close_reports_after_the_delay(listener):
    clock = MockTime(current_time_ms=0)
    client, server = pair(listener, server_time=clock)
    server.close_delayed("c1", 500)
    server.poll(0)
    assert server.disconnected == {} and server.is_muted("c1")
    clock.sleep(500)
    server.poll(0)
    assert "c1" in server.disconnected
    client.close_all(), server.close_all()


def test_wakeup_interrupts_a_blocking_poll():
    selector = Selector(SystemTime())
    threading.Timer(0.2, selector.wakeup).start()
    started = time.monotonic()
    selector.poll(10_000)
    assert time.monotonic() - started < 5
    with pytest.raises(IllegalArgumentException):
        selector.poll(-1)
    selector.close_all()


def test_send_to_an_unknown_channel_is_refused():
    selector = Selector(SystemTime())
    with pytest.raises(IllegalStateException, match="no connection"):
        selector.send(NetworkSend("nobody", frame(b"")))
    selector.close_all()


def test_a_frame_buffered_behind_a_muted_channel_is_read_at_once_after_unmute(listener):
    """What a broker does with pipelined requests: mute the channel on a receive, answer, unmute.
    The next frame is already in the channel's buffer (read with the first): Kafka's
    ``Selector.unmute`` adds the channel to ``keysWithBufferedRead`` and sets
    ``madeReadProgressLastPoll``, so the next poll does not wait for the socket (found by
    ``groupcheck conform client``: pipelined requests waited out the broker's 300 ms poll)."""
    client, server = pair(listener)
    client.send(NetworkSend("n1", frame(b"1") + frame(b"2")))  # two requests in one write
    poll_until(client, lambda s: s["sends"])
    assert [r.payload for r in poll_until(server, lambda s: s["receives"])["receives"]] == [b"1"]
    server.mute("c1")  # the request is being handled
    server.send(NetworkSend("c1", frame(b"answer 1")))
    assert poll_until(server, lambda s: s["sends"])["receives"] == []  # a poll that only wrote
    server.unmute("c1")  # its response is written
    started = time.monotonic()
    server.poll(5000)
    assert [r.payload for r in server.completed_receives] == [b"2"]
    assert time.monotonic() - started < 4
    client.close_all(), server.close_all()
