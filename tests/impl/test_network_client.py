"""NetworkClient, ClusterConnectionStates, InFlightRequests, leastLoadedNode (protocol §4.3)."""

import random

import pytest

from impl.errors import IllegalStateException
from impl.network.metadata import Metadata
from impl.network.network_client import (
    ClusterConnectionStates,
    ConnectionState,
    ManualMetadataUpdater,
    NetworkClient,
    RequestCompletionHandler,
)
from impl.protocol import HeartbeatRequestData, HeartbeatResponseData, MetadataRequestData
from impl.time import LONG_MAX, MockTime
from tests.helpers.fakes import NODES, FakeSelectable, fresh_metadata, metadata_response


class Recorder(RequestCompletionHandler):
    def __init__(self):
        self.responses = []

    def on_complete(self, response):
        self.responses.append(response)


def make_client(seed=0, nodes=NODES, time=None, metadata=None, **kwargs):
    time = time or MockTime()
    selector = FakeSelectable()
    metadata = metadata if metadata is not None else fresh_metadata(time.milliseconds(), nodes)
    kwargs.setdefault("reconnect_backoff_ms", 50)
    kwargs.setdefault("reconnect_backoff_max_ms", 50)
    kwargs.setdefault("default_request_timeout_ms", 1000)
    client = NetworkClient(selector, metadata, "client-1", time, random.Random(seed), **kwargs)
    return client, selector, time


def connect(client, selector, node, time):
    """Drive ``node`` to READY."""
    assert not client.ready(node, time.milliseconds())
    client.poll(0, time.milliseconds())
    assert client.ready(node, time.milliseconds())


def hb(i=0):
    return HeartbeatRequestData("g", 1, "m-%d" % i)


def send(client, node, time, request=None, timeout=None, cb=None):
    req = client.new_client_request(node.id, request or hb(), time.milliseconds(), True, timeout, cb or Recorder())
    client.send(req, time.milliseconds())
    return req


# ---- construction / determinism ----------------------------------------------------------------

def test_rng_must_be_injected_instance():
    with pytest.raises(Exception):
        NetworkClient(FakeSelectable(), fresh_metadata(), "c", MockTime(), random)  # the module


# ---- ready / connect ---------------------------------------------------------------------------

def test_ready_initiates_connect_once_and_becomes_ready_after_poll():
    client, selector, time = make_client()
    n0 = NODES[0]
    assert not client.ready(n0, 0)
    assert selector.connect_calls == [0]
    assert client.connection_states.is_connecting(0)
    assert not client.ready(n0, 0)  # still connecting: no second connect
    assert selector.connect_calls == [0]
    client.poll(0, 0)
    assert client.connection_states.connection_state(0) == ConnectionState.READY
    assert client.ready(n0, 0)


def test_send_to_not_ready_node_is_illegal():
    client, selector, time = make_client()
    req = client.new_client_request(0, hb(), 0, True)
    with pytest.raises(IllegalStateException, match="not ready"):
        client.send(req, 0)


def test_correlation_ids_increase_and_are_carried_to_transport():
    client, selector, time = make_client()
    connect(client, selector, NODES[0], time)
    r1 = send(client, NODES[0], time)
    client.poll(0, 0)  # completes the send so another can go
    r2 = send(client, NODES[0], time)
    assert r2.correlation_id == r1.correlation_id + 1
    assert [(d, c) for d, c, _ in selector.sent] == [(0, r1.correlation_id), (0, r2.correlation_id)]


def test_response_completes_request_with_body():
    client, selector, time = make_client()
    connect(client, selector, NODES[0], time)
    cb = Recorder()
    req = send(client, NODES[0], time, cb=cb)
    time.sleep(7)
    selector.respond(0, req.correlation_id, HeartbeatResponseData())
    responses = client.poll(0, time.milliseconds())
    assert len(responses) == 1 and cb.responses == responses
    r = responses[0]
    assert not r.disconnected and isinstance(r.response_body, HeartbeatResponseData)
    assert r.request_latency_ms == 7 and r.request_header.correlation_id == req.correlation_id
    assert client.in_flight_request_count() == 0


def test_mismatched_correlation_id_is_illegal_state():
    client, selector, time = make_client()
    connect(client, selector, NODES[0], time)
    req = send(client, NODES[0], time)
    selector.respond(0, req.correlation_id + 99, HeartbeatResponseData())
    with pytest.raises(IllegalStateException, match="Correlation id"):
        client.poll(0, 0)


def test_max_in_flight_and_send_completion_gate_can_send_more():
    client, selector, time = make_client(max_in_flight_requests_per_connection=2)
    n0 = NODES[0]
    connect(client, selector, n0, time)
    send(client, n0, time)
    # the first send has not completed yet: cannot send more
    assert not client.ready(n0, 0)
    client.poll(0, 0)
    assert client.ready(n0, 0)
    send(client, n0, time)
    client.poll(0, 0)
    assert client.in_flight_request_count(0) == 2
    assert not client.ready(n0, 0)  # cap of 2 reached


def test_is_ready_false_while_metadata_update_due():
    client, selector, time = make_client()
    n0 = NODES[0]
    connect(client, selector, n0, time)
    assert client.is_ready(n0, 0)
    client.metadata_updater.metadata.request_update()
    time.sleep(100)  # past refresh backoff (100 ms after the last refresh at 0)
    assert not client.is_ready(n0, time.milliseconds())


# ---- in-flight request timeout --------------------------------------------------------------------

def test_in_flight_request_timeout_disconnects_node_and_fails_all_its_requests():
    client, selector, time = make_client(default_request_timeout_ms=1000)
    n0 = NODES[0]
    connect(client, selector, n0, time)
    cb1, cb2 = Recorder(), Recorder()
    r1 = send(client, n0, time, cb=cb1)          # sent at 0, timeout 1000
    client.poll(0, 0)
    time.sleep(500)
    send(client, n0, time, cb=cb2, timeout=5000)  # sent at 500, long timeout
    time.sleep(500)                               # now = 1000: elapsed == timeout, not expired
    client.poll(0, time.milliseconds())
    assert cb1.responses == [] and selector.closed == []
    time.sleep(1)                                 # now = 1001 > 0 + 1000
    client.poll(0, time.milliseconds())
    assert selector.closed == [0]
    assert [r.disconnected for r in cb1.responses] == [True]
    assert [r.disconnected for r in cb2.responses] == [True]  # all of the node's in-flight
    assert cb1.responses[0].request_header.correlation_id == r1.correlation_id
    assert client.connection_failed(n0)
    assert client.in_flight_request_count() == 0


def test_remote_disconnect_completes_in_flight_as_disconnected():
    client, selector, time = make_client()
    n0, n1 = NODES[0], NODES[1]
    connect(client, selector, n0, time)
    connect(client, selector, n1, time)
    cb0, cb1 = Recorder(), Recorder()
    send(client, n0, time, cb=cb0)
    send(client, n1, time, cb=cb1)
    selector.disconnect_remote(0)
    client.poll(0, 0)
    assert [r.disconnected for r in cb0.responses] == [True]
    assert cb1.responses == []
    assert client.connection_failed(n0) and not client.connection_failed(n1)


def test_disconnect_completes_in_flight_at_next_poll_without_selector_poll():
    client, selector, time = make_client()
    n0 = NODES[0]
    connect(client, selector, n0, time)
    cb = Recorder()
    send(client, n0, time, cb=cb)
    client.disconnect(0)
    assert cb.responses == [] and selector.closed == [0]
    polls_before = len(selector.poll_timeouts)
    responses = client.poll(100, 0)
    assert len(selector.poll_timeouts) == polls_before  # aborted sends short-circuit poll
    assert [r.disconnected for r in responses] == [True] and cb.responses == responses
    assert client.connection_failed(n0)


# ---- reconnect backoff -------------------------------------------------------------------------

def test_reconnect_backoff_flat():
    client, selector, time = make_client(reconnect_backoff_ms=50, reconnect_backoff_max_ms=50)
    n0 = NODES[0]
    selector.refuse.add(0)
    time.sleep(1000)
    assert not client.ready(n0, 1000)      # connect raises -> disconnected at 1000
    assert client.connection_failed(n0)
    states = client.connection_states
    assert states.is_blacked_out(0, 1049) and not states.can_connect(0, 1049)
    assert client.connection_delay(n0, 1049) == 1
    assert client.connection_delay(n0, 1020) == 30
    assert not states.is_blacked_out(0, 1050) and states.can_connect(0, 1050)
    assert client.connection_delay(n0, 1050) == 0
    assert not client.ready(n0, 1049)
    assert selector.connect_calls == [0]   # no attempt inside the backoff
    assert not client.ready(n0, 1050)
    assert selector.connect_calls == [0, 0]


def test_reconnect_backoff_exponential_without_jitter():
    states = ClusterConnectionStates(50, 1000, 10000, 30000, random.Random(0),
                                     reconnect_backoff_jitter=0.0, connection_setup_timeout_jitter=0.0)
    backoffs = []
    now = 0
    for _ in range(7):
        states.connecting(0, now, "h")
        states.disconnected(0, now)
        backoffs.append(states.connection_delay(0, now))
    assert backoffs == [50, 100, 200, 400, 800, 1000, 1000]
    states.connecting(0, now, "h")
    states.ready(0)
    states.disconnected(0, now)
    assert states.connection_delay(0, now) == 50  # reset by ready


def test_connection_delay_by_state():
    states = ClusterConnectionStates(50, 50, 10000, 10000, random.Random(0))
    assert states.connection_delay(0, 0) == 0           # no state
    states.connecting(0, 0, "h")
    assert states.connection_delay(0, 5) == 10000        # setup timeout while connecting
    states.ready(0)
    assert states.connection_delay(0, 5) == LONG_MAX     # connected


def test_connection_setup_timeout_disconnects():
    client, selector, time = make_client(connection_setup_timeout_ms=300, connection_setup_timeout_max_ms=300)
    n0 = NODES[0]
    selector.hold.add(0)
    client.ready(n0, 0)
    time.sleep(300)
    client.poll(0, 300)
    assert client.connection_states.is_connecting(0)
    time.sleep(1)
    client.poll(0, 301)
    assert client.connection_failed(n0) and selector.closed == [0]


# ---- leastLoadedNode ------------------------------------------------------------------------------

def offset_for(seed, n=3):
    return random.Random(seed).randrange(n)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_least_loaded_with_no_state_picks_node_at_random_offset(seed):
    client, selector, time = make_client(seed=seed)
    assert client.least_loaded_node(0).node == NODES[offset_for(seed)]


def test_random_offset_comes_from_injected_rng_only():
    picks = set()
    for seed in range(20):
        client, _, _ = make_client(seed=seed)
        picks.add(client.least_loaded_node(0).node.id)
    assert picks == {0, 1, 2}
    random.seed(12345)  # the global generator must not matter
    a = make_client(seed=7)[0].least_loaded_node(0).node
    random.seed(999)
    b = make_client(seed=7)[0].least_loaded_node(0).node
    assert a == b


def test_least_loaded_prefers_idle_ready_node():
    for seed in range(6):
        client, selector, time = make_client(seed=seed)
        connect(client, selector, NODES[2], time)
        lln = client.least_loaded_node(0)
        assert lln.node == NODES[2] and lln.at_least_one_connection_ready


def test_least_loaded_prefers_fewest_in_flight_among_ready_over_connecting():
    for seed in range(6):
        client, selector, time = make_client(seed=seed)
        for n in NODES[:2]:
            connect(client, selector, n, time)
        send(client, NODES[0], time)
        client.poll(0, 0)
        send(client, NODES[0], time)   # node 0: 2 in flight
        send(client, NODES[1], time)   # node 1: 1 in flight
        client.poll(0, 0)
        selector.hold.add(2)
        client.ready(NODES[2], 0)       # node 2: connecting
        assert client.least_loaded_node(0).node == NODES[1]


def test_least_loaded_prefers_connecting_over_can_connect():
    for seed in range(6):
        client, selector, time = make_client(seed=seed)
        selector.hold.add(1)
        client.ready(NODES[1], 0)
        lln = client.least_loaded_node(0)
        assert lln.node == NODES[1] and not lln.at_least_one_connection_ready


def test_least_loaded_can_connect_prefers_oldest_attempt_and_skips_backoff():
    client, selector, time = make_client(seed=0, reconnect_backoff_ms=50, reconnect_backoff_max_ms=50)
    selector.refuse.update({0, 1, 2})
    for t, n in ((0, NODES[1]), (10, NODES[0]), (20, NODES[2])):
        client.ready(n, t)
    # at 65: node 1 (attempt at 0) and node 0 (10) are out of backoff, node 2 (20) is not
    for seed in range(6):
        client._rand_offset = random.Random(seed)
        assert client.least_loaded_node(65).node == NODES[1]
    # at 60 only node 1 and 0 ... at 55 only node 1; at 49 none
    assert client.least_loaded_node(55).node == NODES[1]
    assert client.least_loaded_node(49).node is None


def test_least_loaded_with_no_nodes_is_illegal_state():
    client, selector, time = make_client(metadata=Metadata())
    with pytest.raises(IllegalStateException):
        client.least_loaded_node(0)


# ---- metadata updater ------------------------------------------------------------------------------

def test_metadata_request_sent_to_least_loaded_node_when_due_and_update_applied():
    time = MockTime()
    md = Metadata(refresh_backoff_ms=100)
    md.bootstrap([("boot", 9092)])
    client, selector, _ = make_client(time=time, metadata=md)
    selector.responder = lambda dest, req: metadata_response() if isinstance(req, MetadataRequestData) else None
    # Metadata starts with lastRefreshMs = 0, so even the bootstrap fetch waits out the backoff.
    assert md.time_to_next_update(0) == 100
    client.poll(0, 0)
    assert selector.connect_calls == []
    time.sleep(100)
    assert md.time_to_next_update(100) == 0
    client.poll(0, 100)       # connects to the bootstrap node -1
    assert selector.connect_calls == [-1]
    v = md.update_version()
    # sends the MetadataRequest (internal); the fake answers within the same poll
    responses = client.poll(0, 100)
    assert [(d, type(r).__name__) for d, _, r in selector.sent] == [(-1, "MetadataRequestData")]
    assert responses == []  # internal responses are not handed to callers
    assert md.update_version() == v + 1
    assert [n.id for n in md.fetch().nodes()] == [0, 1, 2]
    assert md.time_to_next_update(100) == 300000  # metadata.max.age.ms


def test_manual_metadata_updater_never_due():
    time = MockTime()
    client = NetworkClient(FakeSelectable(), ManualMetadataUpdater(NODES), "c", time, random.Random(0))
    assert client.least_loaded_node(0).node in NODES
    assert not client.metadata_updater.is_update_due(0)


def test_timed_out_nodes_come_in_the_order_kafkas_in_flight_map_iterates_them():
    """Regression (campaign seed 2,016,606, 50,000 interleavings from seed 2,000,000: the committed
    offsets diverged after 147 events). ``InFlightRequests.requests`` is a ``HashMap<String, Deque>``
    keyed by node id, and ``handleTimedOutRequests`` disconnects the nodes in its order; each
    disconnect decides what the node's requests still in transit become. Node ``1`` hashes to bucket
    1 and the coordinator's ``2147483647`` (broker 0's) to bucket 2, so Kafka disconnects ``1``
    first whichever got a request first; impl/ used the order the nodes first got one."""
    from impl.network.network_client import InFlightRequests

    class _Sent:
        def __init__(self, node):
            self.destination, self.send_time_ms, self.request_timeout_ms = node, 0, 100

    requests = InFlightRequests(5)
    for node in (0, 2147483647, 1):  # the order of the seed's poll: 0 first, then the coordinator
        requests.add(_Sent(node))
    assert requests.nodes_with_timed_out_requests(101) == [0, 1, 2147483647]
    assert requests.nodes_with_timed_out_requests(100) == []
    one = InFlightRequests(5)
    one.add(_Sent(2147483647))
    assert one.nodes_with_timed_out_requests(101) == [2147483647]


def test_timed_out_nodes_of_three_brokers_sharing_a_bucket_come_in_put_order():
    """With three brokers node ``2`` and broker 0's coordinator ``2147483647`` share bucket 2 of
    ``InFlightRequests.requests`` (a bucket keeps its keys in put order), and the coordinators of
    brokers 1 and 2 fall in buckets 5 (``2147483646``) and 4 (``2147483645``); ``clearAll`` removes a
    key, so a node put again goes behind the key that stayed (model.java_order computes the same)."""
    from impl.network.network_client import InFlightRequests

    class _Sent:
        def __init__(self, node):
            self.destination, self.send_time_ms, self.request_timeout_ms = node, 0, 100

    every = (2147483647, 2147483646, 2147483645, 2, 1, 0)
    requests = InFlightRequests(5)
    for node in every:
        requests.add(_Sent(node))
    assert requests.nodes_with_timed_out_requests(101) == [0, 1, 2147483647, 2, 2147483645, 2147483646]
    requests.clear_all(2147483647)
    requests.add(_Sent(2147483647))
    assert requests.nodes_with_timed_out_requests(101) == [0, 1, 2, 2147483647, 2147483645, 2147483646]


def test_the_seed_whose_timed_out_nodes_were_disconnected_out_of_order_agrees():
    from properties.explore.swarm import draw
    from properties.systems import run

    world = draw(2016606)
    result = run("impl", 2016606, world.config, steps=world.steps, faults=world.faults, hash_trace=False,
                 **world.walk_options())
    assert result.violation is None, result.violation
