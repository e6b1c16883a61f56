"""ConsumerNetworkClient (protocol reference §4.1)."""

import random

import pytest

from impl.consumer_network_client import ConsumerNetworkClient
from impl.errors import DisconnectException, TimeoutException, WakeupException
from impl.future import FunctionListener
from impl.network.metadata import Metadata
from impl.network.network_client import NetworkClient
from impl.network.selectable import ChannelState
from impl.protocol import HeartbeatRequestData, HeartbeatResponseData, MetadataRequestData
from impl.time import MockTime
from tests.helpers.fakes import NODES, FakeSelectable, fresh_metadata, metadata_response

N0, N1, N2 = NODES


class CountingNetworkClient(NetworkClient):
    """NetworkClient recording every ``ready`` call."""

    __slots__ = ("ready_calls",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ready_calls = []

    def ready(self, node, now):
        self.ready_calls.append(node.id)
        return super().ready(node, now)


def make(request_timeout_ms=1000, retry_backoff_ms=100, responder=None, metadata=None, time=None):
    time = time or MockTime()
    selector = FakeSelectable(responder)
    metadata = metadata if metadata is not None else fresh_metadata(time.milliseconds())
    client = CountingNetworkClient(selector, metadata, "c1", time, random.Random(0),
                                   reconnect_backoff_ms=50, reconnect_backoff_max_ms=50,
                                   default_request_timeout_ms=30000)
    cnc = ConsumerNetworkClient(client, metadata, time, retry_backoff_ms=retry_backoff_ms,
                                request_timeout_ms=request_timeout_ms)
    return cnc, client, selector, time


def hb(i=0):
    return HeartbeatRequestData("g", 1, "m-%d" % i)


def heartbeat_responder(dest, request):
    return HeartbeatResponseData() if isinstance(request, HeartbeatRequestData) else None


def poll0(cnc, time):
    cnc.poll(time.timer(0))


# ---- send / transmit -------------------------------------------------------------------------

def test_send_buffers_until_poll_then_transmits_in_order():
    cnc, client, selector, time = make()
    time.sleep(5)
    futures = [cnc.send(N0, hb(i)) for i in range(2)]
    assert selector.sent == [] and cnc.pending_request_count(N0) == 2
    assert selector.wakeups == 2  # send wakes the client each time
    unsent = list(cnc.unsent.request_iterator(N0))
    assert [r.created_time_ms for r in unsent] == [5, 5]            # createdTimeMs = send time
    assert [r.request_timeout_ms for r in unsent] == [1000, 1000]   # default timeout
    poll0(cnc, time)   # connect, then send the first (the second waits for the send to complete)
    assert [r.member_id for _, _, r in selector.sent] == ["m-0"]
    poll0(cnc, time)
    assert [r.member_id for _, _, r in selector.sent] == ["m-0", "m-1"]
    assert not any(f.is_done() for f in futures)
    assert cnc.pending_request_count(N0) == 2 and cnc.unsent.request_count() == 0


def test_request_completes_with_client_response():
    cnc, client, selector, time = make(responder=heartbeat_responder)
    f = cnc.send(N0, hb())
    # first poll: connect (step 4) then send (step 8); second poll: response arrives
    assert cnc.poll_future(f, time.timer(0)) is False
    assert cnc.poll_future(f, time.timer(0)) is True
    assert f.succeeded()
    assert isinstance(f.value().response_body, HeartbeatResponseData)
    assert not cnc.has_pending_requests()


def test_try_send_calls_ready_once_for_a_not_ready_node():
    cnc, client, selector, time = make()
    selector.hold.add(0)
    for i in range(3):
        cnc.send(N0, hb(i))
    client.ready_calls.clear()
    cnc.try_send(0)
    assert client.ready_calls == [0]
    assert cnc.unsent.request_count(N0) == 3


def test_try_send_stops_at_first_not_ready_request_and_moves_to_next_node():
    cnc, client, selector, time = make()
    for n in (N0, N1):
        client.ready(n, 0)
    client.poll(0, 0)  # both READY
    for i in range(3):
        cnc.send(N0, hb(i))
    cnc.send(N1, hb(9))
    client.ready_calls.clear()
    cnc.try_send(0)
    # node 0: first request sent, second not ready (its send has not completed) -> stop;
    # node 1: its only request sent
    assert client.ready_calls == [0, 0, 1]
    assert [(d, r.member_id) for d, _, r in selector.sent] == [(0, "m-0"), (1, "m-9")]
    assert cnc.unsent.request_count(N0) == 2


def test_try_send_returns_min_poll_delay():
    cnc, client, selector, time = make()
    assert cnc.try_send(0) == 5000  # maxPollTimeoutMs, no unsent requests
    selector.refuse.add(0)
    cnc.send(N0, hb())
    cnc.try_send(0)                  # connect refused -> in reconnect backoff (50 ms)
    time.sleep(20)
    assert cnc.try_send(20) == 30


# ---- expiry --------------------------------------------------------------------------------------

def test_unsent_expiry_is_strictly_greater_than_timeout():
    cnc, client, selector, time = make(request_timeout_ms=1000)
    selector.hold.add(0)             # never connects: the request stays unsent
    f = cnc.send(N0, hb())
    time.sleep(1000)                 # elapsed == timeout
    poll0(cnc, time)
    assert not f.is_done()
    time.sleep(1)                    # elapsed == timeout + 1
    poll0(cnc, time)
    assert f.failed()
    e = f.exception()
    assert isinstance(e, TimeoutException) and f.is_retriable()
    assert str(e) == "Failed to send request after 1000 ms."
    assert cnc.unsent.request_count() == 0
    assert selector.sent == []


def test_expired_message_uses_the_request_timeout():
    cnc, client, selector, time = make()
    selector.hold.add(0)
    f = cnc.send(N0, hb(), request_timeout_ms=250)
    time.sleep(251)
    poll0(cnc, time)
    assert str(f.exception()) == "Failed to send request after 250 ms."


def test_expiry_stops_at_first_non_expired_request_of_each_node():
    cnc, client, selector, time = make()
    selector.hold.update({0, 1})
    a_long = cnc.send(N0, hb(0), request_timeout_ms=5000)   # head of node 0, not expired
    a_short = cnc.send(N0, hb(1), request_timeout_ms=100)   # behind it: shielded
    b_short = cnc.send(N1, hb(2), request_timeout_ms=100)
    b_long = cnc.send(N1, hb(3), request_timeout_ms=5000)
    time.sleep(200)
    poll0(cnc, time)
    assert not a_long.is_done() and not a_short.is_done()
    assert isinstance(b_short.exception(), TimeoutException)
    assert not b_long.is_done()
    assert cnc.unsent.request_count(N0) == 2 and cnc.unsent.request_count(N1) == 1


def test_expired_request_is_never_transmitted_afterwards():
    cnc, client, selector, time = make()
    selector.hold.add(0)
    f = cnc.send(N0, hb())
    time.sleep(1001)
    poll0(cnc, time)
    assert f.failed()
    selector.hold.clear()               # the connection now completes
    for _ in range(3):
        poll0(cnc, time)
    assert client.connection_states.is_ready(0, time.milliseconds())
    assert selector.sent == []


# ---- disconnects ------------------------------------------------------------------------------

def test_connection_failure_fails_all_unsent_of_that_node_with_disconnect():
    cnc, client, selector, time = make()
    selector.hold.update({0, 1})
    f0 = [cnc.send(N0, hb(i)) for i in range(3)]
    f1 = cnc.send(N1, hb(9))
    poll0(cnc, time)                    # both connecting
    order = []
    for i, f in enumerate(f0):
        f.add_listener(FunctionListener(lambda v: None, lambda e, i=i: order.append(i)))
    selector.disconnect_remote(0)
    poll0(cnc, time)
    assert all(f.failed() and f.exception() is DisconnectException.INSTANCE for f in f0)
    assert order == [0, 1, 2]           # completions fired in FIFO order
    assert not f1.is_done()
    assert cnc.unsent.request_count(N0) == 0 and cnc.unsent.request_count(N1) == 1


def test_check_disconnects_removes_queue_before_callbacks():
    cnc, client, selector, time = make()
    selector.refuse.add(0)
    seen_counts = []
    f = cnc.send(N0, hb())
    f.add_listener(FunctionListener(lambda v: None,
                                    lambda e: seen_counts.append(cnc.unsent.request_count(N0))))
    cnc.try_send(0)                     # connect refused -> connection failed
    handler = cnc.unsent.request_iterator(N0)[0].callback
    cnc.check_disconnects(0)
    assert cnc.unsent.request_count(N0) == 0
    assert cnc.pending_completion[0] is handler
    cnc.poll(time.timer(0))
    assert seen_counts == [0] and f.exception() is DisconnectException.INSTANCE


def test_disconnect_async_fails_unsent_and_in_flight():
    cnc, client, selector, time = make()
    in_flight = cnc.send(N0, hb(0))
    poll0(cnc, time)                    # connected and sent
    assert [r.member_id for _, _, r in selector.sent] == ["m-0"]
    poll0(cnc, time)
    unsent = cnc.send(N0, hb(1))
    cnc.disconnect_async(N0)
    assert not unsent.is_done()
    poll0(cnc, time)
    assert unsent.exception() is DisconnectException.INSTANCE
    assert in_flight.exception() is DisconnectException.INSTANCE
    assert selector.closed == [0]


# ---- completion order ------------------------------------------------------------------------

def test_completions_fire_in_fifo_order_across_nodes():
    cnc, client, selector, time = make(responder=heartbeat_responder)
    fired = []
    futures = [cnc.send(n, hb(i)) for i, n in enumerate((N1, N0, N2))]
    for i, f in enumerate(futures):
        f.add_listener(FunctionListener(lambda v, i=i: fired.append(i), lambda e: None))
    for _ in range(3):
        poll0(cnc, time)
    assert all(f.succeeded() for f in futures)
    # all three were sent in the same trySend and answered in the same poll, in send order
    assert fired == [0, 1, 2]


def test_completion_deferred_to_pending_queue_until_fired():
    cnc, client, selector, time = make()
    f = cnc.send(N0, hb())
    poll0(cnc, time)
    (dest, cid, _), = selector.sent
    selector.respond(0, cid, HeartbeatResponseData())
    cnc.transmit_sends()                # client.poll only: completion queued, not fired
    assert not f.is_done() and len(cnc.pending_completion) == 1
    poll0(cnc, time)
    assert f.succeeded() and not cnc.pending_completion


# ---- wakeup -----------------------------------------------------------------------------------

def test_wakeup_raises_once_from_poll():
    cnc, client, selector, time = make()
    cnc.wakeup()
    with pytest.raises(WakeupException):
        poll0(cnc, time)
    poll0(cnc, time)                    # flag consumed


def test_wakeup_leaves_completions_queued_for_next_poll():
    cnc, client, selector, time = make(responder=heartbeat_responder)
    f = cnc.send(N0, hb())
    poll0(cnc, time)                    # connected + sent; the answer arrives in the next poll
    assert not f.is_done()
    cnc.wakeup()
    with pytest.raises(WakeupException):
        poll0(cnc, time)
    assert not f.is_done() and len(cnc.pending_completion) == 1
    poll0(cnc, time)                    # step 1 fires the queued completion
    assert f.succeeded()


def test_wakeup_skips_steps_after_the_throw():
    cnc, client, selector, time = make()
    selector.hold.add(0)
    f = cnc.send(N0, hb())
    time.sleep(1001)
    cnc.wakeup()
    with pytest.raises(WakeupException):
        poll0(cnc, time)
    assert not f.is_done()              # failExpiredRequests was skipped
    poll0(cnc, time)
    assert isinstance(f.exception(), TimeoutException)


def test_disabled_wakeup_does_not_raise_or_consume():
    cnc, client, selector, time = make()
    cnc.wakeup()
    cnc.poll_no_wakeup()
    cnc.poll(time.timer(0), None, True)
    with pytest.raises(WakeupException):
        poll0(cnc, time)
    cnc.wakeup()
    cnc.disable_wakeups()
    poll0(cnc, time)


# ---- poll timeout / pending counts ----------------------------------------------------------

def test_poll_timeout_capped_by_retry_backoff_without_in_flight():
    cnc, client, selector, time = make(retry_backoff_ms=100)
    cnc.poll(time.timer(10000))
    assert selector.poll_timeouts[-1] == 100
    cnc.poll(time.timer(40))
    assert selector.poll_timeouts[-1] == 40


def test_poll_does_not_block_when_condition_satisfied_or_completions_pending():
    cnc, client, selector, time = make()
    done = cnc.send(N0, hb())
    done.complete(None)  # a satisfied condition
    cnc.poll(time.timer(10000), done)
    assert selector.poll_timeouts[-1] == 0


def test_pending_request_counts():
    cnc, client, selector, time = make()
    cnc.send(N0, hb(0))
    cnc.send(N0, hb(1))
    cnc.send(N1, hb(2))
    assert cnc.pending_request_count() == 3 and cnc.pending_request_count(N0) == 2
    poll0(cnc, time)
    assert client.in_flight_request_count() == 2
    assert cnc.pending_request_count() == 3 and cnc.has_pending_requests(N1)
    assert not cnc.has_pending_requests(N2)


def test_await_pending_requests():
    cnc, client, selector, time = make(responder=heartbeat_responder)
    cnc.send(N0, hb(0))
    cnc.send(N0, hb(1))
    assert cnc.await_pending_requests(N0, time.timer(0)) is False  # expired timer: no poll
    time.auto_tick_ms = 1   # let the timer advance as the client reads the clock
    assert cnc.await_pending_requests(N0, time.timer(100)) is True
    assert not cnc.has_pending_requests()


# ---- metadata / coordinator helpers --------------------------------------------------------------

def test_await_metadata_update():
    time = MockTime(current_time_ms=1000)
    md = fresh_metadata(1000)
    responder = lambda dest, req: metadata_response() if isinstance(req, MetadataRequestData) else None
    cnc, client, selector, _ = make(responder=responder, metadata=md, time=time)
    # the refresh backoff (100 ms after the last refresh) elapses while polling
    time.auto_tick_ms = 10
    v = md.update_version()
    assert cnc.await_metadata_update(time.timer(1000)) is True
    assert md.update_version() == v + 1
    assert not md.update_requested()


def test_is_unavailable_and_try_connect():
    cnc, client, selector, time = make()
    selector.refuse.add(0)
    assert not cnc.is_unavailable(N0)
    cnc.try_connect(N0)
    assert selector.connect_calls == [0]
    assert cnc.is_unavailable(N0)
    time.sleep(50)
    assert not cnc.is_unavailable(N0)   # backoff elapsed


def test_maybe_throw_auth_failure():
    from impl.errors import AuthenticationException
    cnc, client, selector, time = make()
    cnc.maybe_throw_auth_failure(N0)
    f = cnc.send(N0, hb())
    poll0(cnc, time)
    client.poll(0, 0)
    auth = AuthenticationException("bad creds")
    selector.disconnect_remote(0, ChannelState(ChannelState.AUTHENTICATION_FAILED, auth))
    # the metadata updater records it as fatal, and poll surfaces it via maybeThrowAnyException
    with pytest.raises(AuthenticationException):
        poll0(cnc, time)
    with pytest.raises(AuthenticationException):
        cnc.maybe_throw_auth_failure(N0)
    # in-flight requests complete as plainly disconnected (cancelInFlightRequests passes no auth
    # exception); only *unsent* ones carry the node's authentication exception
    assert f.exception() is DisconnectException.INSTANCE
    g = cnc.send(N0, hb(1))
    poll0(cnc, time)
    assert g.exception() is auth
    poll0(cnc, time)                  # raised once only


def test_least_loaded_node_delegates():
    cnc, client, selector, time = make()
    assert cnc.least_loaded_node() in NODES
    md = Metadata()
    cnc2, _, _, _ = make(metadata=md)
    with pytest.raises(Exception):
        cnc2.least_loaded_node()
