"""Driving one client of the model (``model/member.py`` on a :class:`model.client.Step`): a fresh,
joining, completing or STABLE member, and responses handed to ``netclient.receive``.

Unless a test says otherwise: 2 brokers, the coordinator is broker 0 (coordinator connection slot
2, READY), session.timeout.ms 6000, heartbeat.interval.ms 2000, max.poll.interval.ms (= rebalance
timeout) 10000, request.timeout.ms 8000, retry.backoff.ms 100, reconnect.backoff.ms 50, 6
partitions.
"""

from __future__ import annotations

from model import member
from model import netclient as net
from model.client import COMPLETING_REBALANCE, PREPARING_REBALANCE, READY, STABLE, Conn, Step, new_client
from model.config import Config
from model.errors import Errors
from model.messages import JoinGroupResponse


B = 2
COORD = 0
CSLOT = B + COORD  # the coordinator connection of broker 0
SESSION = 6000
HB_INTERVAL = 2000
MAX_POLL = 10_000
REQUEST_TIMEOUT_MS = 8000
RETRY_BACKOFF = 100
RECONNECT_BACKOFF = 50
T0 = 100_000


def cfg(**overrides) -> Config:
    values = dict(
        brokers=B,
        clients=2,
        partitions=6,
        session_timeout_ms=SESSION,
        heartbeat_interval_ms=HB_INTERVAL,
        max_poll_interval_ms=MAX_POLL,
        request_timeout_ms=REQUEST_TIMEOUT_MS,
        retry_backoff_ms=RETRY_BACKOFF,
        reconnect_backoff_ms=RECONNECT_BACKOFF,
    )
    values.update(overrides)
    return Config(**values)


def fresh(now: int = T0, config: Config | None = None, choose=None) -> Step:
    config = config or cfg()
    return Step(new_client(0, B, config.partitions), now, config, choose or (lambda kind, cands: cands[0]), [])


def with_coordinator(s: Step, coordinator: int = COORD) -> Step:
    s.coordinator = coordinator
    s.set_slot("conns", B + coordinator, Conn(READY, 0, 1))
    s.set_slot("conns", coordinator, Conn(READY, 0, 1))
    return s


def stable(now: int = T0, config: Config | None = None, assignment=(0, 1, 2), generation=3, member_id="m-0") -> Step:
    """A STABLE member of generation 3 owning partitions 0-2, heartbeat thread running, all
    timers fresh."""
    s = with_coordinator(fresh(now, config))
    s.state = STABLE
    s.generation, s.member_id, s.protocol = generation, member_id, "range"
    s.rejoin_needed = False
    s.needs_join_prepare = True
    s.heartbeat_thread = True
    s.heartbeat_enabled = True
    s.heartbeat_due_ms = now + HB_INTERVAL
    s.session_deadline_ms = now + SESSION
    s.poll_deadline_ms = now + MAX_POLL
    s.assignment = assignment
    return s


def joining(member_id: str = "", generation: int = -1, protocol=None, assignment=()) -> Step:
    """A member whose first consumer poll sent a JoinGroup (now in flight on the coordinator)."""
    s = with_coordinator(fresh())
    s.generation, s.member_id, s.protocol = generation, member_id, protocol
    s.assignment = assignment
    member.consumer_poll(s)
    assert s.state == PREPARING_REBALANCE
    assert [r.api for r in s.in_flight[CSLOT]] == ["JoinGroup"]
    return s


def in_flight(s: Step, api: str, slot: int = CSLOT) -> list:
    return [r for r in s.in_flight[slot] if r.api == api]


def unsent(s: Step, api: str, slot: int = CSLOT) -> list:
    return [r for r in s.unsent[slot] if r.api == api]


def sent(s: Step, api: str, slot: int = CSLOT) -> list:
    """Requests of *api* queued or in flight on *slot*."""
    return unsent(s, api, slot) + in_flight(s, api, slot)


def respond(s: Step, api: str, response, slot: int = CSLOT):
    """Deliver *response* to the oldest in-flight request on *slot*, which must be an *api*."""
    req = s.in_flight[slot][0]
    assert req.api == api, (req.api, api)
    assert net.receive(s, slot, req.id, response)
    return req


def fire(s: Step) -> None:
    """pollNoWakeup: fire the queued completions through the member's handlers."""
    net.poll(s, member.dispatch)


def tags(s: Step, tag: str) -> list:
    return [e for e in s.log if e[0] == tag]


def first_index(s: Step, pred) -> int:
    for i, e in enumerate(s.log):
        if pred(e):
            return i
    raise AssertionError(f"no matching log entry in {s.log}")


def join_ok(generation=4, member_id="m-0", leader="m-1", members=(), protocol="range", protocol_type="consumer"):
    return JoinGroupResponse(Errors.NONE, generation_id=generation, protocol_type=protocol_type, protocol_name=protocol,
                             leader_id=leader, member_id=member_id, members=members)


def completing(generation=4, member_id="m-0") -> Step:
    """A member whose JoinGroup succeeded (follower): COMPLETING_REBALANCE, SyncGroup in flight."""
    s = joining(member_id=member_id)
    respond(s, "JoinGroup", join_ok(generation, member_id))
    member.consumer_poll(s)
    assert s.state == COMPLETING_REBALANCE
    assert len(in_flight(s, "SyncGroup")) == 1
    return s
