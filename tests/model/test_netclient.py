"""Scenario tests of the request lifecycle (model/netclient.py, protocol reference §4.1 and §4.3).

ConsumerNetworkClient over NetworkClient: ``send`` only queues; ``poll`` fires completions, handles
pending async disconnects, runs ``trySend``, times out in-flight requests, runs
``checkDisconnects``, ``trySend`` again, ``failExpiredRequests`` and fires completions again.
Each test builds a client on a :class:`model.client.Step`, sets its connections and queues by hand,
and checks one thing the reference says.

Unless a test says otherwise: 2 brokers (slots 0, 1; coordinator connections 2, 3),
request.timeout.ms 8000, reconnect.backoff.ms 50.
"""

from __future__ import annotations

from model import netclient as net
from model.client import CONNECTING, DISCONNECTED, READY, Conn, Step, new_client
from model.config import Config
from model.errors import DISCONNECT, REQUEST_TIMEOUT
from model.messages import FindCoordinatorRequest, HeartbeatRequest, HeartbeatResponse

REQUEST_TIMEOUT_MS = 8000
RECONNECT_BACKOFF_MS = 50


def make(now: int = 0, brokers: int = 2, **overrides) -> Step:
    values = dict(brokers=brokers, clients=1, request_timeout_ms=REQUEST_TIMEOUT_MS, reconnect_backoff_ms=RECONNECT_BACKOFF_MS)
    values.update(overrides)
    config = Config(**values)
    return Step(new_client(0, brokers), now, config, lambda kind, cands: cands[0], [])


def set_conn(s: Step, slot: int, state, last_attempt_ms: int = 0, epoch: int = 1) -> None:
    s.set_slot("conns", slot, Conn(state, last_attempt_ms, epoch))


def body(n: int = 0):
    return HeartbeatRequest("g", n, f"m{n}")


class Recorder:
    """A dispatch function that records every completion it is handed, in order."""

    def __init__(self):
        self.calls: list = []

    def __call__(self, s, req, result):
        self.calls.append((req.id, result))

    @property
    def ids(self):
        return [rid for rid, _ in self.calls]


def tags(s: Step, tag: str) -> list:
    return [e for e in s.log if e[0] == tag]


def tag_index(s: Step, tag: str, req_id: int | None = None) -> int:
    for i, e in enumerate(s.log):
        if e[0] == tag and (req_id is None or e[2] == req_id):
            return i
    raise AssertionError(f"no {tag!r} entry for request {req_id} in {s.log}")


def send_completed(s: Step) -> None:
    """The transport wrote every pending send (what NetworkClient.poll's handleCompletedSends sees)."""
    net.complete_sends(s)


def transmit_now(s: Step, slot: int, n: int, timeout_ms: int | None = None) -> list[int]:
    """Send n requests on a READY slot and transmit them one try_send per completed send,
    returning their ids."""
    ids = [net.send(s, slot, body(i), timeout_ms) for i in range(n)]
    for _ in range(n):
        net.try_send(s)
        send_completed(s)
    assert [r.id for r in s.in_flight[slot]][-n:] == ids
    return ids


# -- send ------------------------------------------------------------------------------------------


def test_send_queues_with_created_now_and_default_timeout():
    s = make(now=1234)
    set_conn(s, 0, READY)
    rid = net.send(s, 0, body())
    (req,) = s.unsent[0]
    assert req.id == rid
    assert req.created_ms == 1234
    assert req.timeout_ms == REQUEST_TIMEOUT_MS
    assert req.sent_ms == -1
    assert s.in_flight[0] == ()
    assert s.transmitted == []
    assert ("send", 0, rid, 0, "Heartbeat", 1234, REQUEST_TIMEOUT_MS) in s.log


def test_send_with_explicit_timeout_uses_it():
    s = make(now=10)
    rid = net.send(s, 1, body(), 123)
    (req,) = s.unsent[1]
    assert (req.id, req.timeout_ms, req.created_ms) == (rid, 123, 10)


def test_send_records_the_generation_at_send_time():
    s = make()
    s.generation, s.member_id, s.protocol = 4, "m-1", "range"
    net.send(s, 0, body())
    s.generation = 5
    assert s.unsent[0][0].sent_generation == (4, "m-1", "range")


def test_request_ids_are_fresh_and_increasing():
    s = make()
    ids = [net.send(s, i % 2, body(i)) for i in range(4)]
    assert ids == sorted(set(ids))


def test_nothing_is_transmitted_until_poll_then_created_time_is_kept():
    s = make(now=100)
    set_conn(s, 0, READY)
    rid = net.send(s, 0, body())
    assert s.transmitted == [] and s.in_flight[0] == ()
    s.now = 300
    net.poll(s, Recorder())
    (req,) = s.in_flight[0]
    assert req.id == rid
    assert req.created_ms == 100  # createdTimeMs is the send() time ...
    assert req.sent_ms == 300  # ... not the transmission time
    assert [r.id for r in s.transmitted] == [rid]
    assert s.unsent[0] == ()


# -- trySend ---------------------------------------------------------------------------------------


def test_try_send_transmits_in_fifo_order_on_a_ready_node():
    s = make()
    set_conn(s, 0, READY)
    ids = [net.send(s, 0, body(i)) for i in range(3)]
    for _ in ids:
        net.try_send(s)
        send_completed(s)
    assert [r.id for r in s.transmitted] == ids
    assert [r.id for r in s.in_flight[0]] == ids
    assert [e[2] for e in tags(s, "transmit")] == ids
    assert s.unsent[0] == ()


def test_a_node_takes_no_new_request_until_its_previous_send_completed():
    # canSendRequest requires the channel's last send to have completed (InFlightRequests.canSendMore).
    s = make()
    set_conn(s, 0, READY)
    ids = [net.send(s, 0, body(i)) for i in range(2)]
    net.try_send(s)
    assert [r.id for r in s.in_flight[0]] == ids[:1]
    assert [r.id for r in s.unsent[0]] == ids[1:]
    net.try_send(s)  # still sending: nothing more
    assert [r.id for r in s.unsent[0]] == ids[1:]
    net.network_poll(s)  # handleCompletedSends
    net.try_send(s)
    assert [r.id for r in s.in_flight[0]] == ids


def test_poll_transmits_at_most_two_requests_per_node():
    # trySend before client.poll(0) and again after it: one send completes in between.
    s = make()
    set_conn(s, 0, READY)
    ids = [net.send(s, 0, body(i)) for i in range(3)]
    net.poll(s, Recorder())
    assert [r.id for r in s.in_flight[0]] == ids[:2]
    assert [r.id for r in s.unsent[0]] == ids[2:]


def test_try_send_stops_at_a_not_ready_node_and_connects_once():
    s = make(now=500)
    ids = [net.send(s, 0, body(i)) for i in range(3)]
    net.try_send(s)
    assert s.transmitted == []
    assert [r.id for r in s.unsent[0]] == ids
    assert s.conns[0].state == CONNECTING
    assert s.conns[0].last_attempt_ms == 500
    assert tags(s, "connecting") == [("connecting", 0, 0)]


def test_try_send_new_connection_bumps_the_epoch():
    s = make(now=500)
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=0, epoch=3)
    net.send(s, 0, body())
    net.try_send(s)
    assert s.conns[0] == Conn(CONNECTING, 500, 4)


def test_try_send_does_not_reconnect_inside_the_backoff():
    s = make(now=100)
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=100 - RECONNECT_BACKOFF_MS + 1)
    net.send(s, 0, body())
    net.try_send(s)
    assert s.conns[0].state == DISCONNECTED
    assert tags(s, "connecting") == []
    s.now += 1  # now - last attempt == backoff: canConnect (>=)
    net.try_send(s)
    assert s.conns[0].state == CONNECTING


def test_try_send_a_not_ready_node_does_not_hold_back_other_nodes():
    s = make()
    set_conn(s, 1, READY)
    a = net.send(s, 0, body(0))
    b = net.send(s, 1, body(1))
    net.try_send(s)
    assert [r.id for r in s.in_flight[1]] == [b]
    assert [r.id for r in s.unsent[0]] == [a]
    assert s.transmitted == []  # staged: written by the next selector poll
    net.complete_sends(s)
    assert [r.id for r in s.transmitted] == [b]


def test_try_send_stops_at_the_in_flight_cap():
    s = make()
    set_conn(s, 0, READY)
    ids = [net.send(s, 0, body(i)) for i in range(net.MAX_IN_FLIGHT_PER_CONNECTION + 2)]
    for _ in ids:
        net.try_send(s)
        send_completed(s)
    cap = net.MAX_IN_FLIGHT_PER_CONNECTION
    assert [r.id for r in s.in_flight[0]] == ids[:cap]
    assert [r.id for r in s.unsent[0]] == ids[cap:]
    assert tags(s, "connecting") == []  # a READY connection is never re-initiated


# -- failExpiredRequests ---------------------------------------------------------------------------


def _queued_on_connecting_node(created: int, timeout: int, slot: int = 0) -> tuple[Step, int]:
    s = make(now=created)
    set_conn(s, slot, CONNECTING, last_attempt_ms=created)
    rid = net.send(s, slot, body(), timeout)
    return s, rid


def test_expiry_elapsed_equal_to_timeout_is_not_expired():
    s, rid = _queued_on_connecting_node(created=1000, timeout=100)
    s.now = 1100
    net.fail_expired_requests(s)
    assert [r.id for r in s.unsent[0]] == [rid]
    assert s.pending_completions == ()
    assert tags(s, "expire") == []


def test_expiry_one_past_the_timeout_is_expired():
    s, rid = _queued_on_connecting_node(created=1000, timeout=100)
    s.now = 1101
    net.fail_expired_requests(s)
    assert s.unsent[0] == ()
    assert [(r.id, res) for r, res in s.pending_completions] == [(rid, REQUEST_TIMEOUT)]
    assert tags(s, "expire") == [("expire", 0, rid, 0, 101, 100)]


def test_expiry_with_creation_in_the_future_counts_elapsed_as_zero():
    s, rid = _queued_on_connecting_node(created=5000, timeout=0)
    for now in (0, 4999, 5000):  # max(0, now - created) == 0, and 0 > 0 is false
        s.now = now
        net.fail_expired_requests(s)
        assert [r.id for r in s.unsent[0]] == [rid], now
    s.now = 5001
    net.fail_expired_requests(s)
    assert s.unsent[0] == ()
    assert [r.id for r, _ in s.pending_completions] == [rid]


def test_expiry_stops_at_the_first_non_expired_request_of_a_node():
    s = make(now=0)
    set_conn(s, 0, CONNECTING)
    long = net.send(s, 0, body(0), 10_000)
    short = net.send(s, 0, body(1), 10)
    s.now = 500
    net.fail_expired_requests(s)
    assert [r.id for r in s.unsent[0]] == [long, short]  # short has expired, but is kept
    assert s.pending_completions == ()


def test_expiry_stop_is_per_node():
    s = make(now=0)
    set_conn(s, 0, CONNECTING)
    set_conn(s, 1, CONNECTING)
    long0 = net.send(s, 0, body(0), 10_000)
    short0 = net.send(s, 0, body(1), 10)
    short1 = net.send(s, 1, body(2), 10)
    s.now = 500
    net.fail_expired_requests(s)
    assert [r.id for r in s.unsent[0]] == [long0, short0]
    assert s.unsent[1] == ()
    assert [(r.id, res) for r, res in s.pending_completions] == [(short1, REQUEST_TIMEOUT)]


def test_expiry_removes_the_expired_prefix_in_order():
    s = make(now=0)
    set_conn(s, 0, CONNECTING)
    a = net.send(s, 0, body(0), 10)
    b = net.send(s, 0, body(1), 20)
    c = net.send(s, 0, body(2), 1000)
    d = net.send(s, 0, body(3), 5)
    s.now = 100
    net.fail_expired_requests(s)
    assert [r.id for r, _ in s.pending_completions] == [a, b]
    assert [r.id for r in s.unsent[0]] == [c, d]


def test_expired_request_fails_with_timeout_and_is_never_transmitted():
    s, rid = _queued_on_connecting_node(created=0, timeout=100)
    rec = Recorder()
    s.now = 101
    net.poll(s, rec)
    assert rec.calls == [(rid, REQUEST_TIMEOUT)]
    assert REQUEST_TIMEOUT == "TimeoutException"
    set_conn(s, 0, READY)  # the connection comes up afterwards
    s.now = 102
    net.poll(s, rec)
    assert s.transmitted == []
    assert s.in_flight[0] == ()
    assert rec.calls == [(rid, REQUEST_TIMEOUT)]  # completed exactly once


# -- checkDisconnects ------------------------------------------------------------------------------


def test_check_disconnects_fails_every_unsent_request_of_a_failed_node_only():
    s = make(now=100)
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=100)
    set_conn(s, 1, CONNECTING, last_attempt_ms=100)
    a = net.send(s, 0, body(0))
    b = net.send(s, 0, body(1))
    c = net.send(s, 1, body(2))
    net.check_disconnects(s)
    assert s.unsent[0] == ()
    assert [r.id for r in s.unsent[1]] == [c]
    assert [(r.id, res) for r, res in s.pending_completions] == [(a, DISCONNECT), (b, DISCONNECT)]
    assert [e[2] for e in tags(s, "fail_unsent")] == [a, b]


def test_check_disconnects_ignores_never_connected_and_ready_nodes():
    s = make()
    set_conn(s, 1, READY)
    net.send(s, 0, body(0))
    net.send(s, 1, body(1))
    net.check_disconnects(s)
    assert len(s.unsent[0]) == 1 and len(s.unsent[1]) == 1
    assert s.pending_completions == ()


def test_poll_fails_unsent_of_a_node_in_reconnect_backoff_with_disconnect():
    s = make(now=100)
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=90)  # 10 ms into a 50 ms backoff
    rid = net.send(s, 0, body())
    rec = Recorder()
    net.poll(s, rec)
    assert rec.calls == [(rid, DISCONNECT)]
    assert s.unsent[0] == ()


# -- connection loss and in-flight timeouts --------------------------------------------------------


def test_connection_lost_completes_in_flight_as_disconnected_in_send_order():
    s = make(now=0)
    set_conn(s, 0, READY, epoch=2)
    ids = transmit_now(s, 0, 3)
    queued_behind = net.send(s, 0, body(9))
    s.now = 40
    net.connection_lost(s, 0)
    assert s.in_flight[0] == ()
    assert [(r.id, res) for r, res in s.pending_completions] == [(i, DISCONNECT) for i in ids]
    assert s.conns[0] == Conn(DISCONNECTED, 40, 2)
    assert [r.id for r in s.unsent[0]] == [queued_behind]  # unsent wait for checkDisconnects


def test_connection_lost_leaves_other_nodes_in_flight_alone():
    s = make()
    set_conn(s, 0, READY)
    set_conn(s, 1, READY)
    transmit_now(s, 0, 1)
    (other,) = transmit_now(s, 1, 1)
    net.connection_lost(s, 0)
    assert [r.id for r in s.in_flight[1]] == [other]
    assert s.conns[1].state == READY


def test_disconnect_closes_the_connection_and_completes_in_flight():
    s = make(now=7)
    set_conn(s, 2, READY)
    ids = transmit_now(s, 2, 2)
    net.disconnect(s, 2)
    assert s.closed_slots == [2]
    assert s.conns[2].state == DISCONNECTED
    assert [r.id for r, _ in s.pending_completions] == ids


def test_disconnect_of_an_already_disconnected_node_does_nothing():
    s = make()
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=0)
    net.disconnect(s, 0)
    assert s.closed_slots == []
    assert s.conns[0] == Conn(DISCONNECTED, 0, 1)


def test_in_flight_timeout_is_strict_and_counts_from_transmission():
    s = make(now=0)
    set_conn(s, 0, CONNECTING)
    rid = net.send(s, 0, body(), 100)  # created at 0
    s.now = 50
    set_conn(s, 0, READY)
    net.try_send(s)  # transmitted at 50
    rec = Recorder()
    s.now = 150  # 150 - sent == 100: not timed out (and 150 - created > 100 must not matter)
    net.poll(s, rec)
    assert [r.id for r in s.in_flight[0]] == [rid]
    assert s.conns[0].state == READY
    assert rec.calls == []
    s.now = 151
    net.poll(s, rec)
    assert rec.calls == [(rid, DISCONNECT)]
    assert s.conns[0].state == DISCONNECTED
    assert s.closed_slots == [0]
    assert tags(s, "inflight_timeout") == [("inflight_timeout", 0, rid, 0)]


def test_in_flight_timeout_fails_all_in_flight_of_the_node_only():
    s = make(now=0)
    set_conn(s, 0, READY)
    set_conn(s, 1, READY)
    short = net.send(s, 0, body(0), 100)
    long = net.send(s, 0, body(1), 100_000)
    net.try_send(s)
    s.now = 50
    other = net.send(s, 1, body(2), 100)
    net.try_send(s)  # transmitted at 50: not timed out at 101
    s.now = 101
    rec = Recorder()
    net.poll(s, rec)
    assert rec.calls == [(short, DISCONNECT), (long, DISCONNECT)]
    assert s.in_flight[0] == ()
    assert [r.id for r in s.in_flight[1]] == [other]
    assert s.conns[1].state == READY
    assert s.closed_slots == [0]


# -- completions -----------------------------------------------------------------------------------


def test_completions_fire_in_fifo_order_each_exactly_once():
    s = make()
    set_conn(s, 0, READY)
    set_conn(s, 1, READY)
    (a,) = transmit_now(s, 0, 1)
    (b,) = transmit_now(s, 1, 1)
    (c,) = transmit_now(s, 0, 1)
    # responses arrive b, a, c: completions are queued in arrival order
    assert net.receive(s, 1, b, HeartbeatResponse(0))
    assert net.receive(s, 0, a, HeartbeatResponse(0))
    assert net.receive(s, 0, c, HeartbeatResponse(0))
    rec = Recorder()
    net.fire_pending_completions(s, rec)
    assert rec.ids == [b, a, c]
    assert s.pending_completions == ()
    net.fire_pending_completions(s, rec)
    net.poll(s, rec)
    assert rec.ids == [b, a, c]


def test_one_selector_poll_handles_connections_in_slot_order_not_arrival_order():
    """Regression (groupcheck run --seed 1 --steps 100000000, step 584,371): Kafka's
    Selector.pollSelectionKeys walks the selected keys in the hash set's order, fixed per
    connection (determineHandlingOrder), not in the order the bytes arrived; the simulated
    transport uses the slot order. The model used the arrival order."""
    s = make()
    for slot in (0, 1, 3):
        set_conn(s, slot, READY)
    (a,) = transmit_now(s, 0, 1)
    (b,) = transmit_now(s, 3, 1)
    (c,) = transmit_now(s, 1, 1)
    (d,) = transmit_now(s, 3, 1)
    # arrival order: slot 3, slot 1, slot 3, slot 0
    s.notices = (("received", 3, 1, (b, HeartbeatResponse(0))), ("received", 1, 1, (c, HeartbeatResponse(0))),
                 ("received", 3, 1, (d, HeartbeatResponse(0))), ("received", 0, 1, (a, HeartbeatResponse(0))))
    rec = Recorder()
    net.poll(s, rec)
    assert rec.ids == [a, c, b, d]  # by slot, FIFO within a connection
    assert s.notices == ()


def test_completions_queued_while_firing_fire_in_the_same_pass_after_older_ones():
    s = make()
    set_conn(s, 0, READY)
    set_conn(s, 1, READY)
    (a,) = transmit_now(s, 0, 1)
    (b,) = transmit_now(s, 0, 1)
    (c,) = transmit_now(s, 1, 1)
    net.receive(s, 0, a, HeartbeatResponse(0))
    net.receive(s, 0, b, HeartbeatResponse(0))
    order = []

    def dispatch(s, req, result):
        order.append(req.id)
        if req.id == a:
            net.connection_lost(s, 1)  # queues c's completion while a fires

    net.fire_pending_completions(s, dispatch)
    assert order == [a, b, c]


def test_poll_fires_completions_queued_during_the_poll():
    s = make(now=0)
    set_conn(s, 0, CONNECTING)
    rid = net.send(s, 0, body(), 10)
    s.now = 11
    rec = Recorder()
    net.poll(s, rec)
    assert rec.calls == [(rid, REQUEST_TIMEOUT)]
    assert s.pending_completions == ()


# -- receive ---------------------------------------------------------------------------------------


def test_receive_matches_only_the_oldest_in_flight_request():
    s = make()
    set_conn(s, 0, READY)
    a, b = transmit_now(s, 0, 2)
    assert net.receive(s, 0, b, HeartbeatResponse(0)) is False
    assert [r.id for r in s.in_flight[0]] == [a, b]
    assert s.pending_completions == ()
    assert net.receive(s, 0, a, HeartbeatResponse(0)) is True
    assert [r.id for r in s.in_flight[0]] == [b]
    assert net.receive(s, 0, b, HeartbeatResponse(27)) is True
    assert [(r.id, res) for r, res in s.pending_completions] == [(a, HeartbeatResponse(0)), (b, HeartbeatResponse(27))]


def test_receive_on_a_slot_with_nothing_in_flight_is_ignored():
    s = make()
    set_conn(s, 0, READY)
    set_conn(s, 1, READY)
    (a,) = transmit_now(s, 0, 1)
    assert net.receive(s, 1, a, HeartbeatResponse(0)) is False
    assert [r.id for r in s.in_flight[0]] == [a]
    assert s.pending_completions == ()


# -- leastLoadedNode -------------------------------------------------------------------------------


def _fill_in_flight(s: Step, slot: int, n: int) -> None:
    for i in range(n):
        net.send(s, slot, body(i))
    for _ in range(n):
        net.try_send(s)
        send_completed(s)
    assert len(s.in_flight[slot]) == n


def test_least_loaded_prefers_idle_ready_nodes():
    s = make(now=1000, brokers=4)
    set_conn(s, 0, READY)
    _fill_in_flight(s, 0, 1)
    set_conn(s, 1, READY)
    set_conn(s, 2, CONNECTING)
    set_conn(s, 3, READY)
    assert net.least_loaded_candidates(s) == (1, 3)


def test_least_loaded_without_idle_takes_the_fewest_in_flight_ready_nodes():
    s = make(now=1000, brokers=4)
    for slot, n in ((0, 2), (1, 1), (2, 3), (3, 1)):
        set_conn(s, slot, READY)
        _fill_in_flight(s, slot, n)
    assert net.least_loaded_candidates(s) == (1, 3)


def test_least_loaded_ready_node_at_the_in_flight_cap_is_not_ready():
    s = make(now=1000, brokers=3)
    set_conn(s, 0, READY)
    _fill_in_flight(s, 0, net.MAX_IN_FLIGHT_PER_CONNECTION)
    set_conn(s, 1, CONNECTING)
    assert net.least_loaded_candidates(s) == (1,)


def test_least_loaded_prefers_connecting_over_connectable():
    s = make(now=1000, brokers=3)
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=0)  # connectable
    set_conn(s, 1, CONNECTING, last_attempt_ms=990)
    # slot 2 never connected: connectable
    assert net.least_loaded_candidates(s) == (1,)


def test_least_loaded_connectable_takes_the_oldest_attempt():
    s = make(now=1000, brokers=3)
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=500)
    set_conn(s, 1, DISCONNECTED, last_attempt_ms=200)
    set_conn(s, 2, DISCONNECTED, last_attempt_ms=900)
    assert net.least_loaded_candidates(s) == (1,)


def test_least_loaded_never_connected_node_counts_as_attempted_at_zero():
    # ClusterConnectionStates.lastConnectAttemptMs is 0 for a node with no state: it ties with a
    # node last tried at time 0 (the scan offset decides) and beats one tried later.
    s = make(now=1000, brokers=3)
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=0)
    assert net.least_loaded_candidates(s) == (0, 1, 2)
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=500)
    assert net.least_loaded_candidates(s) == (1, 2)


def test_least_loaded_skips_nodes_in_reconnect_backoff():
    s = make(now=1000, brokers=3)
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=1000 - RECONNECT_BACKOFF_MS + 1)  # in backoff
    set_conn(s, 1, DISCONNECTED, last_attempt_ms=999)
    set_conn(s, 2, DISCONNECTED, last_attempt_ms=1000 - RECONNECT_BACKOFF_MS)  # backoff just over
    assert net.least_loaded_candidates(s) == (2,)


def test_least_loaded_is_empty_when_every_node_is_in_backoff():
    s = make(now=1000, brokers=2)
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=990)
    set_conn(s, 1, DISCONNECTED, last_attempt_ms=999)
    assert net.least_loaded_candidates(s) == ()


def test_least_loaded_only_considers_broker_slots_not_coordinator_connections():
    s = make(now=1000, brokers=2)
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=999)
    set_conn(s, 1, DISCONNECTED, last_attempt_ms=999)
    set_conn(s, 2, READY)  # coordinator connection to broker 0
    set_conn(s, 3, READY)
    assert net.least_loaded_candidates(s) == ()


# -- poll order ------------------------------------------------------------------------------------


def test_poll_pending_disconnect_is_handled_before_try_send():
    s = make(now=10)
    set_conn(s, 2, READY)
    (inflight,) = transmit_now(s, 2, 1)
    unsent = net.send(s, 2, body(5))
    net.disconnect_async(s, 2)
    assert s.conns[2].state == READY  # asynchronous: nothing happens before the poll
    rec = Recorder()
    net.poll(s, rec)
    assert [r.id for r in s.transmitted] == [inflight]  # only the earlier transmission
    # the node's unsent fail first, then its in-flight complete as disconnected
    assert rec.calls == [(unsent, DISCONNECT), (inflight, DISCONNECT)]
    assert s.closed_slots == [2]
    assert s.conns[2].state == DISCONNECTED
    assert s.pending_disconnects == ()


def test_requested_disconnect_completes_through_aborted_sends_and_skips_the_selector():
    # NetworkClient.disconnect puts the in-flight failures in abortedSends; the next
    # NetworkClient.poll completes those and returns without polling the selector, so a
    # disconnection the transport reported on another node waits for the poll after.
    s = make(now=10, brokers=2)
    set_conn(s, 2, READY)
    set_conn(s, 0, READY)
    (on_coordinator,) = transmit_now(s, 2, 1)
    (on_broker,) = transmit_now(s, 0, 1)
    s.notices = (("disconnected", 0, 1, None),)
    net.disconnect_async(s, 2)
    rec = Recorder()
    net.poll(s, rec)
    assert rec.calls == [(on_coordinator, DISCONNECT)]
    assert s.conns[0].state == READY and s.notices  # not yet seen
    net.poll(s, rec)
    assert rec.calls == [(on_coordinator, DISCONNECT), (on_broker, DISCONNECT)]
    assert s.conns[0].state == DISCONNECTED


def test_disconnect_async_is_recorded_once():
    s = make()
    net.disconnect_async(s, 2)
    net.disconnect_async(s, 2)
    assert s.pending_disconnects == (2,)


def test_poll_fires_earlier_completions_before_transmitting():
    s = make()
    set_conn(s, 0, READY)
    (a,) = transmit_now(s, 0, 1)
    net.receive(s, 0, a, HeartbeatResponse(0))
    b = net.send(s, 0, body(1))
    net.poll(s, Recorder())
    assert tag_index(s, "complete", a) < tag_index(s, "transmit", b)


def test_poll_transmits_before_expiring():
    """trySend (step 3) runs before failExpiredRequests (step 9): an overdue request on a ready
    node is transmitted, not expired."""
    s = make(now=0)
    set_conn(s, 0, READY)
    rid = net.send(s, 0, body(), 100)
    s.now = 500
    rec = Recorder()
    net.poll(s, rec)
    assert [r.id for r in s.in_flight[0]] == [rid]
    assert rec.calls == []


def test_poll_check_disconnects_runs_before_expiry():
    """checkDisconnects (step 5) precedes failExpiredRequests (step 9): an overdue request of a
    failed node fails with DisconnectException, not TimeoutException."""
    s = make(now=0)
    set_conn(s, 0, CONNECTING)
    rid = net.send(s, 0, body(), 100)
    s.now = 500
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=490)  # in backoff: trySend will not reconnect
    rec = Recorder()
    net.poll(s, rec)
    assert rec.calls == [(rid, DISCONNECT)]


def test_poll_try_send_reconnects_before_check_disconnects():
    """trySend (step 3) precedes checkDisconnects (step 5): a failed node whose reconnect backoff
    is over is reconnected and its unsent requests survive."""
    s = make(now=1000)
    set_conn(s, 0, DISCONNECTED, last_attempt_ms=1000 - RECONNECT_BACKOFF_MS)
    rid = net.send(s, 0, body())
    rec = Recorder()
    net.poll(s, rec)
    assert s.conns[0].state == CONNECTING
    assert [r.id for r in s.unsent[0]] == [rid]
    assert rec.calls == []


def test_poll_in_flight_timeout_also_fails_the_nodes_unsent_in_the_same_poll():
    """The in-flight timeout (NetworkClient.poll, step 4) disconnects the node; checkDisconnects
    (step 5) then fails its unsent requests."""
    s = make(now=0)
    set_conn(s, 0, READY)
    ids = transmit_now(s, 0, net.MAX_IN_FLIGHT_PER_CONNECTION, timeout_ms=100)
    behind = net.send(s, 0, body(9), 100_000)  # cannot be transmitted: in-flight cap
    s.now = 101
    rec = Recorder()
    net.poll(s, rec)
    assert rec.calls == [(i, DISCONNECT) for i in ids] + [(behind, DISCONNECT)]
    assert s.unsent[0] == ()
    assert s.transmitted[-1].id != behind


def test_poll_logs_polled_last():
    s = make()
    net.send(s, 0, body())
    net.poll(s, Recorder())
    assert s.log[-1] == ("polled", 0)


def test_pending_request_count_is_unsent_plus_in_flight():
    s = make()
    set_conn(s, 0, READY)
    transmit_now(s, 0, 2)
    set_conn(s, 0, CONNECTING)
    net.send(s, 0, FindCoordinatorRequest("g"))
    assert net.pending_request_count(s, 0) == 3
    assert net.pending_request_count(s, 1) == 0


def _timed_out_in_one_poll(slots_in_send_order: list, brokers: int = 3) -> tuple[Step, list]:
    """One request on each of *slots_in_send_order* (READY), transmitted in that order, all timed
    out at the same poll: the slots the in-flight timeout disconnected, in order."""
    s = make(now=0, brokers=brokers)
    for slot in slots_in_send_order:
        set_conn(s, slot, READY)
        transmit_now(s, slot, 1, 100)
    s.now = 101
    net.poll(s, Recorder())
    return s, [e[3] for e in tags(s, "inflight_timeout")]


def test_timed_out_nodes_are_disconnected_in_kafkas_in_flight_map_order():
    """``handleTimedOutRequests`` disconnects in the order of ``InFlightRequests.requests``, a
    ``HashMap<String, Deque>`` keyed by node id (model.java_order). In a three-broker world the
    coordinators of brokers 1 and 2 (slots 4, 5: ``2147483646`` in bucket 5, ``2147483645`` in
    bucket 4) come in the reverse of their slots, and node 2 (slot 2) and broker 0's coordinator
    (slot 3, ``2147483647``) share bucket 2, so the one put first comes first. With two brokers
    the buckets follow the slots (the order before this was modelled)."""
    s, order = _timed_out_in_one_poll([0, 1, 2, 3, 4, 5])
    assert order == [0, 1, 2, 3, 5, 4]
    assert s.in_flight_puts == ()  # every timed-out node's key was removed with its connection
    _, order = _timed_out_in_one_poll([3, 5, 1, 2, 4, 0])
    assert order == [0, 1, 3, 2, 5, 4]  # 3 was put before 2
    _, order = _timed_out_in_one_poll([3, 2, 1, 0], brokers=2)
    assert order == [0, 1, 2, 3]


def test_a_node_put_again_after_its_disconnect_goes_behind_the_other_in_its_bucket():
    """``clearAll`` removes a disconnected node's key; its next request puts it again, behind a
    key that stayed (a HashMap bucket keeps its keys in put order)."""
    s = make(now=0, brokers=3)
    for slot in (2, 3):
        set_conn(s, slot, READY)
        transmit_now(s, slot, 1, 100_000)
    assert s.in_flight_puts == (2, 3)
    net.disconnect(s, 2)
    assert s.in_flight_puts == (3,)
    set_conn(s, 2, READY, epoch=2)
    transmit_now(s, 2, 1, 100_000)
    assert s.in_flight_puts == (3, 2)
    s.now = 200_000
    net.poll(s, Recorder())
    assert [e[3] for e in tags(s, "inflight_timeout")] == [3, 2]
    # a completed request leaves its node's (empty) deque in the map: the key stays
    s = make(now=0, brokers=3)
    set_conn(s, 2, READY)
    (rid,) = transmit_now(s, 2, 1)
    assert net.receive(s, 2, rid, HeartbeatResponse(0)) and s.in_flight[2] == ()
    assert s.in_flight_puts == (2,)


def test_the_models_timed_out_order_is_the_implementations_for_every_put_order():
    """model.java_order.timed_out_order (the slots, their put order kept only where a bucket is
    shared) against impl/'s InFlightRequests (every key in put order, Python's dict standing for
    the HashMap): the same order for every put order and every set of timed-out nodes, one to
    three brokers."""
    import itertools

    from impl.network.network_client import InFlightRequests
    from model.java_order import shared_buckets, timed_out_order

    class _Sent:
        def __init__(self, node, send_time_ms):
            self.destination, self.send_time_ms, self.request_timeout_ms = node, send_time_ms, 100

    for brokers in (1, 2, 3):
        node = [b for b in range(brokers)] + [2147483647 - b for b in range(brokers)]  # per slot
        for puts in itertools.permutations(range(2 * brokers)):
            for mask in range(1, 1 << len(puts)):
                requests = InFlightRequests(5)
                for slot in puts:  # a timed-out node's request sent at 0, the others' at 50
                    requests.add(_Sent(node[slot], 0 if mask >> slot & 1 else 50))
                impl_order = requests.nodes_with_timed_out_requests(101)
                timed_out = [slot for slot in range(2 * brokers) if mask >> slot & 1]
                shared = tuple(slot for slot in puts if slot in shared_buckets(brokers))
                assert [node[slot] for slot in timed_out_order(timed_out, shared, brokers)] == impl_order, (brokers, puts, mask)
