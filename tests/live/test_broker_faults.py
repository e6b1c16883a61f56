"""``groupcheck broker --faults FILE``: fault schedules parsed strictly, and applied on the wire.

The schedule tests are pure; the wire tests start their own broker (properties/live/launch.py) on
kernel-chosen ports, speak the group APIs with groupcheck's codec, and bound every wait.
"""

import json
import re
import socket
import subprocess
import sys
import time

import pytest

from impl import protocol as P
from impl.errors import Errors
from impl.wire import decode_response, encode_request
from impl.wire.apis import REQUEST, kio_class
from impl.wire.build import build
from properties.errors import UsageError
from properties.live import faults
from properties.live.launch import launch_groupcheck_broker
from tests.helpers.broker_wire import FAST, closed_by_peer
from tests.helpers.broker_wire import address as _address, read_frame as _read_frame

# -- the schedule ---------------------------------------------------------------------------------------------


def test_a_schedule_of_every_kind_parses_and_round_trips():
    document = {"comment": "one of each", "faults": [
        {"kind": "error", "api": "Heartbeat", "error": "rebalance_in_progress", "client": "c1", "after": 2, "count": 3},
        {"kind": "delay", "api": "SyncGroup", "ms": 1500},
        {"kind": "drop", "api": "JoinGroup", "when": "after", "broker": 1, "at_ms": 200},
        {"kind": "failover", "at_ms": 4000},
        {"kind": "silence", "client": "c2", "at_ms": 3000, "ms": 12000},
        {"kind": "pause", "broker": 0, "at_ms": 5000, "ms": 2000}]}
    parsed = faults.parse(document, brokers=2)
    assert [f.kind for f in parsed] == ["error", "delay", "drop", "failover", "silence", "pause"]
    assert parsed[0].error == "REBALANCE_IN_PROGRESS" and (parsed[0].after, parsed[0].count) == (2, 3)
    assert parsed[1].count == 1 and parsed[1].client is None  # the defaults
    again = faults.parse({"faults": [f.to_json() for f in parsed]}, brokers=2)
    assert again == parsed
    assert parsed[0].label() == "fault 0 (error REBALANCE_IN_PROGRESS on Heartbeat of c1)"


@pytest.mark.parametrize("fault, words", [
    ({"kind": "explode"}, "fault 0: kind must be one of error, delay"),
    ({"kind": "error", "api": "Heartbeat"}, "fault 0: a error fault needs 'error'"),
    ({"kind": "error", "api": "Heartbeat", "error": "NO_SUCH_ERROR"}, "error must be a Kafka error name"),
    ({"kind": "error", "api": "Heartbeat", "error": "NONE"}, "error must be a Kafka error name"),
    ({"kind": "error", "api": "Produce", "error": "UNKNOWN_MEMBER_ID"}, "api must be one of FindCoordinator"),
    ({"kind": "delay", "api": "SyncGroup", "ms": 0}, "ms must be at least 1, got 0"),
    ({"kind": "delay", "api": "SyncGroup", "ms": "5"}, "ms must be an integer, got '5'"),
    ({"kind": "drop", "api": "JoinGroup", "when": "during"}, "when must be \"before\" or \"after\""),
    ({"kind": "failover", "at_ms": -1}, "at_ms must be at least 0, got -1"),
    ({"kind": "failover", "at_ms": 10, "client": "c1"}, "a failover fault has no field 'client'"),
    ({"kind": "silence", "client": "", "at_ms": 0, "ms": 5}, "client must be a client id"),
    ({"kind": "pause", "broker": 3, "at_ms": 0, "ms": 5}, "broker 3 does not exist (brokers 0..1)"),
    ({"kind": "error", "api": "Heartbeat", "error": "UNKNOWN_MEMBER_ID", "count": 0}, "count must be at least 1"),
])
def test_a_bad_fault_is_refused_naming_the_fault_and_the_field(fault, words):
    with pytest.raises(UsageError) as e:
        faults.parse({"faults": [{"kind": "failover", "at_ms": 1}, fault]}, "s.json", brokers=2)
    assert str(e.value).startswith("s.json: fault 1") and words.replace("fault 0", "fault 1") in str(e.value)


@pytest.mark.parametrize("text, words", [
    ("{not json", "not JSON"), ("[]", "expected an object {\"faults\": [...]}"),
    ('{"faults": [], "extra": 1}', "unknown key 'extra'")])
def test_a_bad_file_is_refused(tmp_path, text, words):
    path = tmp_path / "s.json"
    path.write_text(text)
    with pytest.raises(UsageError, match="--faults .*s.json: " + words.replace("[", r"\[").replace("]", r"\]")
                       .replace("{", r"\{").replace("}", r"\}")):
        faults.load(str(path))
    with pytest.raises(UsageError, match="No such file"):
        faults.load(str(tmp_path / "missing.json"))


def test_the_broker_refuses_a_bad_schedule_with_one_line_and_exit_2(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"faults": [{"kind": "pause", "broker": 2, "at_ms": 0, "ms": 10}]}))
    done = subprocess.run([sys.executable, "-m", "properties.cli", "broker", "--port", "0", "--faults", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "fault 0: broker 2 does not exist (brokers 0..0)" in lines[0], done.stderr


@pytest.mark.parametrize("args, words", [
    (["--faults-when-formed", "2"], "--faults-when-formed 2: needs --faults FILE"),
    (["--faults-when-formed", "0", "--faults", "FILE"], "--faults-when-formed 0: a group needs at least 1 member")])
def test_the_broker_refuses_a_hold_without_a_schedule_or_a_group(tmp_path, args, words):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"faults": [{"kind": "failover", "at_ms": 10}]}))
    args = [str(path) if a == "FILE" else a for a in args]
    done = subprocess.run([sys.executable, "-m", "properties.cli", "broker", "--port", "0", *args],
                          capture_output=True, text=True, timeout=60)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and words in lines[0], done.stderr


# -- the injector, without a network -----------------------------------------------------------------------


def test_request_faults_select_by_api_client_broker_and_time_then_skip_after_and_stop_at_count():
    schedule = faults.parse({"faults": [
        {"kind": "error", "api": "Heartbeat", "error": "REBALANCE_IN_PROGRESS", "client": "c1", "after": 1, "count": 2},
        {"kind": "delay", "api": "Heartbeat", "ms": 50, "broker": 1, "at_ms": 100}]})
    injector = faults.FaultInjector(schedule, start_ms=1000)
    decisions = [injector.on_request(0, "c1", "Heartbeat", 1000 + t) for t in (0, 1, 2, 3)]
    assert [d and d.kind for d in decisions] == [None, "error", "error", None]
    assert injector.on_request(0, "c2", "Heartbeat", 1005) is None  # another client
    assert injector.on_request(0, "c1", "JoinGroup", 1005) is None  # another API
    assert injector.on_request(1, "c2", "Heartbeat", 1099) is None  # too early
    delayed = injector.on_request(1, "c2", "Heartbeat", 1100)
    assert delayed.kind == "delay" and delayed.fault.ms == 50
    assert injector.on_request(1, "c2", "Heartbeat", 1101) is None  # count 1 spent
    assert [f.index for _, f in injector.injected] == [0, 0, 1]


def test_silences_and_pauses_hold_the_connections_they_name_for_their_window():
    schedule = faults.parse({"faults": [
        {"kind": "silence", "client": "c1", "at_ms": 100, "ms": 300},
        {"kind": "pause", "broker": 1, "at_ms": 200, "ms": 400},
        {"kind": "failover", "at_ms": 150}]})
    injector = faults.FaultInjector(schedule, start_ms=0)
    assert injector.held_until(0, "c1", 99) is None
    assert injector.held_until(0, "c1", 100) == 400
    assert injector.held_until(0, "c2", 150) is None
    assert injector.held_until(1, "c1", 250) == 600  # the later end of the two
    assert injector.held_until(1, None, 599) == 600 and injector.held_until(1, None, 600) is None
    assert injector.next_deadline() == 100
    assert [f.kind for f in injector.due(160)] == ["silence", "failover"]
    assert injector.next_deadline() == 200 and injector.due(160) == []
    assert [f.kind for f in injector.due(10_000)] == ["pause"] and injector.next_deadline() is None


def _held(formed_at_ms, limit_ms=60000):
    """An injector over a Heartbeat error at 100 ms and a failover at 300 ms, started at 0, whose
    group forms at *formed_at_ms* (None: never)."""
    schedule = faults.parse({"faults": [
        {"kind": "error", "api": "Heartbeat", "error": "REBALANCE_IN_PROGRESS", "at_ms": 100},
        {"kind": "failover", "at_ms": 300}]})
    clock = {"now": 0}
    formed = lambda: formed_at_ms is not None and clock["now"] >= formed_at_ms  # noqa: E731
    return faults.FaultInjector(schedule, start_ms=0, formed=formed, hold_limit_ms=limit_ms), clock


def test_a_group_formed_in_time_leaves_the_schedule_as_it_is():
    injector, clock = _held(formed_at_ms=50)
    clock["now"] = 100
    assert injector.on_request(0, "c0", "Heartbeat", 100).kind == "error"
    assert injector.start_ms == 0 and injector.held_ms == 0
    assert injector.next_deadline() == 300
    assert injector.hold_line() == ("fault clock not held: the group had formed by the first fault; at_ms counted "
                                    "from 0 (wall-clock ms)")


def test_the_schedule_waits_at_its_first_fault_until_the_group_forms():
    injector, clock = _held(formed_at_ms=2000)
    for now in (100, 700, 1500):  # due, but the group is still forming: nothing applies
        clock["now"] = now
        assert injector.on_request(0, "c0", "Heartbeat", now) is None
        assert injector.due(now) == [] and injector.next_deadline() is None
    assert injector.start_ms == 1401 and injector.held_ms == 1401  # 1 ms before the first fault
    clock["now"] = 2000
    assert injector.on_request(0, "c0", "Heartbeat", 2000).kind == "error"  # formed: the first fault, now
    assert injector.start_ms == 1900 and injector.held_ms == 1900
    assert injector.next_deadline() == 2200  # the failover keeps its 200 ms after the first fault
    assert injector.due(2199) == [] and [f.kind for f in injector.due(2200)] == ["failover"]
    assert injector.hold_line() == ("fault clock held 1900 ms until the group formed; at_ms counted from 1900 "
                                    "(wall-clock ms)")
    assert injector.hold_outcome is None  # said once


def test_a_hold_ended_by_a_request_is_logged_at_the_servers_next_look():
    injector, clock = _held(formed_at_ms=2000)
    clock["now"] = 150
    assert injector.on_request(0, "c0", "Heartbeat", 150) is None
    clock["now"] = 2000
    assert injector.on_request(0, "c0", "Heartbeat", 2000).kind == "error"
    logged, traced = [], []
    server = type("Server", (), {"log": staticmethod(logged.append), "trace_fault": staticmethod(traced.append)})
    injector.fire_due(2001, server)
    assert logged == ["fault clock held 1900 ms until the group formed; at_ms counted from 1900 (wall-clock ms)"]
    assert traced == []  # a hold is not a fault: the trace's fault lines are what was injected
    injector.fire_due(2002, server)
    assert len(logged) == 1


def test_a_group_that_never_forms_holds_the_schedule_for_the_limit_only():
    injector, clock = _held(formed_at_ms=None, limit_ms=1000)
    for now in (100, 600, 5000):
        clock["now"] = now
        decision = injector.on_request(0, "c0", "Heartbeat", now)
    assert decision.kind == "error" and injector.held_ms == 1000 and injector.start_ms == 1000
    assert "the group had not formed after 1000 ms: the faults run now" in injector.hold_line()


# -- on the wire -------------------------------------------------------------------------------------------


def _schedule(tmp_path, *items):
    path = tmp_path / "faults.json"
    path.write_text(json.dumps({"faults": list(items)}))
    return str(path)


def _ask(sock, body, version, correlation_id, client_id, api=None):
    sock.sendall(encode_request(body, version, correlation_id, client_id))
    payload = _read_frame(sock)
    assert payload is not None, "the broker closed the connection"
    decoded = decode_response(api or body.api_key, version, payload)
    assert decoded.correlation_id == correlation_id
    return decoded.body


def _heartbeat(member="m"):
    return P.HeartbeatRequestData(group_id="g", generation_id=1, member_id=member)


def _trace(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def test_an_error_fault_answers_the_chosen_request_of_the_chosen_client_and_only_it(tmp_path):
    schedule = _schedule(tmp_path, {"kind": "error", "api": "Heartbeat", "error": "REBALANCE_IN_PROGRESS",
                                    "client": "c1", "after": 1})
    trace = str(tmp_path / "trace.jsonl")
    with launch_groupcheck_broker(settings=FAST, faults=schedule, trace=trace) as b:
        with socket.create_connection(_address(b), timeout=10) as c1, \
                socket.create_connection(_address(b), timeout=10) as c2:
            codes = [_ask(c1, _heartbeat(), 4, i, "c1").error_code for i in range(3)]
            other = _ask(c2, _heartbeat(), 4, 9, "c2").error_code
        log = b.log()
    unknown = Errors.UNKNOWN_MEMBER_ID.value  # what the coordinator answers a member of no group
    assert codes == [unknown, Errors.REBALANCE_IN_PROGRESS.value, unknown] and other == unknown
    assert "fault 0 (error REBALANCE_IN_PROGRESS on Heartbeat of c1): Heartbeat v4 #1 of 'c1'" in log
    lines = _trace(trace)
    injected = [x for x in lines if x["direction"] == "fault"]
    assert len(injected) == 1 and injected[0]["correlation_id"] == 1 and injected[0]["fault"]["kind"] == "error"
    answered = [x for x in lines if x["direction"] == "response" and x["client_id"] == "c1"]
    assert [x["body"]["error_code"] for x in answered] == codes


@pytest.mark.parametrize("version", [2, 4])
def test_an_error_fault_on_find_coordinator_answers_in_the_versions_shape(tmp_path, version):
    schedule = _schedule(tmp_path, {"kind": "error", "api": "FindCoordinator", "error": "COORDINATOR_NOT_AVAILABLE"})
    with launch_groupcheck_broker(settings=FAST, faults=schedule) as b:
        with socket.create_connection(_address(b), timeout=10) as sock:
            first = _ask(sock, P.FindCoordinatorRequestData(key="g"), version, 1, "c")
            second = _ask(sock, P.FindCoordinatorRequestData(key="g"), version, 2, "c")
    assert first.error_code == Errors.COORDINATOR_NOT_AVAILABLE.value
    if version >= 4:
        assert [(c.key, c.error_code) for c in first.coordinators] == [("g", Errors.COORDINATOR_NOT_AVAILABLE.value)]
    assert second.error_code == 0 and second.port == _address(b)[1]


def test_a_delay_holds_the_response_and_the_rest_of_that_connection_but_not_the_others(tmp_path):
    schedule = _schedule(tmp_path, {"kind": "delay", "api": "FindCoordinator", "ms": 800, "client": "slow"})
    with launch_groupcheck_broker(settings=FAST, faults=schedule) as b:
        with socket.create_connection(_address(b), timeout=10) as slow, \
                socket.create_connection(_address(b), timeout=10) as fast:
            started = time.monotonic()
            slow.sendall(encode_request(P.FindCoordinatorRequestData(key="g"), 3, 1, "slow"))
            slow.sendall(encode_request(P.FindCoordinatorRequestData(key="g"), 3, 2, "slow"))
            assert _ask(fast, P.FindCoordinatorRequestData(key="g"), 3, 7, "fast").error_code == 0
            fast_s = time.monotonic() - started
            first = decode_response("FindCoordinator", 3, _read_frame(slow))
            first_s = time.monotonic() - started
            second = decode_response("FindCoordinator", 3, _read_frame(slow))
    assert (first.correlation_id, second.correlation_id) == (1, 2)
    assert first_s >= 0.8 > fast_s, (fast_s, first_s)  # held at least as long as the schedule says


def test_drop_before_closes_unhandled_and_drop_after_closes_once_handled(tmp_path):
    schedule = _schedule(tmp_path, {"kind": "drop", "api": "JoinGroup", "when": "before", "client": "early"},
                         {"kind": "drop", "api": "JoinGroup", "when": "after", "client": "late"})

    def join(client_id):
        return encode_request(P.JoinGroupRequestData(
            group_id=client_id, session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
            protocols=[P.JoinGroupRequestProtocol("range", P.Subscription(["t"]))]), 3, 1, client_id)

    with launch_groupcheck_broker(settings=FAST, faults=schedule) as b:
        for client_id in ("early", "late"):
            with socket.create_connection(_address(b), timeout=10) as sock:
                sock.sendall(join(client_id))
                assert closed_by_peer(sock), f"{client_id}: the connection stayed open"
        with socket.create_connection(_address(b), timeout=10) as sock:
            request = build(kio_class("DescribeGroups", 5, REQUEST),
                            {"groups": ["early", "late"], "include_authorized_operations": False})
            described = _ask(sock, request, 5, 3, "look", api="DescribeGroups")
    states = {g.group_id: (g.group_state, len(g.members)) for g in described.groups}
    # the group of the dropped-before join was never created; the dropped-after join was handled
    # (v3 JoinGroup: the member is added and the group completes its join)
    assert states["early"] == ("Dead", 0)
    assert states["late"][0] in ("CompletingRebalance", "PreparingRebalance") and states["late"][1] == 1, states


def test_a_silenced_client_is_answered_only_after_its_window_while_others_are_answered_at_once(tmp_path):
    schedule = _schedule(tmp_path, {"kind": "silence", "client": "mute", "at_ms": 0, "ms": 2500})
    with launch_groupcheck_broker(settings=FAST, faults=schedule) as b:
        with socket.create_connection(_address(b), timeout=10) as mute, \
                socket.create_connection(_address(b), timeout=10) as free:
            mute.sendall(encode_request(_heartbeat(), 4, 1, "mute"))
            assert _ask(free, _heartbeat(), 4, 2, "free").error_code == Errors.UNKNOWN_MEMBER_ID.value
            mute.settimeout(0.3)
            with pytest.raises(socket.timeout):
                mute.recv(1)  # nothing yet: the free client was answered while this one waits
            mute.settimeout(10)
            late = decode_response("Heartbeat", 4, _read_frame(mute))
        log = b.log()
    assert late.correlation_id == 1 and late.body.error_code == Errors.UNKNOWN_MEMBER_ID.value
    assert "fault 0 (silence mute for 2500 ms) starts" in log


def test_a_connection_its_client_closed_while_silenced_is_traced_closed_and_not_answered(tmp_path):
    """Kafka's consumer disconnects from a coordinator that stopped answering its heartbeats; a
    silenced connection is not read, so the broker learns of the close only when the silence ends:
    it must trace the close and answer nothing (the client reads nothing more), not answer the
    requests left in the socket as if they were read (found with --client java, seeds 32, 115); it
    now traces the close when it happens (a muted connection's CLOSE_WAIT, looked at every 50 ms)."""
    schedule = _schedule(tmp_path, {"kind": "silence", "client": "gone", "at_ms": 0, "ms": 1500})
    trace = tmp_path / "trace.jsonl"
    with launch_groupcheck_broker(settings=FAST, faults=schedule, trace=str(trace)) as b:
        with socket.create_connection(_address(b), timeout=10) as gone:
            gone.sendall(encode_request(_heartbeat(), 4, 1, "gone"))
            time.sleep(0.3)
        time.sleep(2.5)  # past the silence: the broker looks at the connection again
    # (the trace is written through when the broker stops)
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    (silence,) = [x["time_ms"] for x in lines if x["direction"] == "fault"]
    mine = [x for x in lines if x.get("client_id") == "gone"]
    # the held Heartbeat is neither handled nor answered: the close is all there is, traced when the
    # client closed (the broker looks at held connections every HELD_CHECK_MS), not at the silence's end
    assert [(x["direction"], x.get("by")) for x in mine] == [("closed", "client")], mine
    assert 250 <= mine[0]["time_ms"] - silence < 1400


def test_a_scheduled_failover_moves_the_coordinator_and_is_logged(tmp_path):
    schedule = _schedule(tmp_path, {"kind": "failover", "at_ms": 1500})
    with launch_groupcheck_broker(brokers=2, settings=FAST, faults=schedule) as b:
        with socket.create_connection(_address(b), timeout=10) as sock:
            before = _ask(sock, P.FindCoordinatorRequestData(key="g"), 3, 1, "c").node_id
            deadline = time.monotonic() + 15
            while "fault 0 (failover)" not in b.log() and time.monotonic() < deadline:
                time.sleep(0.05)
            after = _ask(sock, P.FindCoordinatorRequestData(key="g"), 3, 2, "c").node_id
        log = b.log()
    assert "fault 0 (failover): broker" in log and before != after, log



@pytest.mark.parametrize("when_formed", [None, 1])
def test_faults_when_formed_holds_a_heartbeat_error_until_a_group_is_stable(tmp_path, when_formed):
    """``--faults-when-formed 1``: a Heartbeat error due at 300 ms is not applied while no group has
    formed (the heartbeat 1 s in is answered as usual), and is applied to the first heartbeat after a
    JoinGroup and SyncGroup made a group Stable; the log says how long the clock was held. Without
    the option the same heartbeat 1 s in gets the error."""
    schedule = _schedule(tmp_path, {"kind": "error", "api": "Heartbeat", "error": "REBALANCE_IN_PROGRESS",
                                    "at_ms": 300})
    rebalancing = Errors.REBALANCE_IN_PROGRESS.value
    with launch_groupcheck_broker(settings=FAST, faults=schedule, faults_when_formed=when_formed) as b:
        with socket.create_connection(_address(b), timeout=10) as sock:
            time.sleep(1.0)
            early = _ask(sock, _heartbeat(), 3, 1, "c0").error_code
            if when_formed is None:
                assert early == rebalancing
                return
            assert early == Errors.UNKNOWN_MEMBER_ID.value  # the group "g" does not exist: the coordinator's answer
            join = _ask(sock, P.JoinGroupRequestData(
                group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
                protocols=[P.JoinGroupRequestProtocol("range", P.Subscription(["t"]))]), 3, 2, "c0")
            assert join.error_code == 0 and join.leader == join.member_id
            sync = _ask(sock, P.SyncGroupRequestData(
                group_id="g", generation_id=join.generation_id, member_id=join.member_id,
                assignments=[P.SyncGroupRequestAssignment(join.member_id, P.Assignment([]))]), 1, 3, "c0")
            assert sync.error_code == 0
            beat = P.HeartbeatRequestData(group_id="g", generation_id=join.generation_id, member_id=join.member_id)
            assert _ask(sock, beat, 3, 4, "c0").error_code == rebalancing
        log = b.log()
    held = re.search(r"fault clock held (\d+) ms until the group formed; at_ms counted from \d+", log)
    assert held and int(held.group(1)) >= 700, log
    assert "held at the first fault until a group of 1 has formed" in log
