"""Driving the server group coordinator model (``model/group.py``) the way a broker would: the
requests as functions, a formed or Stable group in one call, and choice functions for ``choose``.

Unless a test says otherwise members ask for a 10 s session timeout and an 8 s rebalance timeout,
the broker's initial rebalance delay is 3 s, and clients speak JoinGroup v5 (two-phase join).
"""

from __future__ import annotations

from model.config import Config
from model.errors import Errors
from model.group import (
    COMPLETING_REBALANCE,
    PREPARING_REBALANCE,
    STABLE,
    fire_timers,
    handle_heartbeat,
    handle_join_group,
    handle_leave_group,
    handle_offset_commit,
    handle_sync_group,
    next_deadline,
)
from model.messages import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    SyncGroupRequest,
)


SESSION = 10_000
REBALANCE = 8_000
RANGE = (("range", ("t",)),)
ROUNDROBIN = (("roundrobin", ("t",)),)
RANGE_RR = (("range", ("t",)), ("roundrobin", ("t",)))
RR_RANGE = (("roundrobin", ("t",)), ("range", ("t",)))


def cfg(**overrides) -> Config:
    values = dict(
        join_group_version=5,
        initial_rebalance_delay_ms=3000,
        session_timeout_ms=SESSION,
        heartbeat_interval_ms=3000,
        max_poll_interval_ms=REBALANCE,
    )
    values.update(overrides)
    return Config(**values)


CFG = cfg()
V3 = cfg(join_group_version=3)


def first(kind, candidates):
    return candidates[0]


def never(kind, candidates):
    raise AssertionError(f"choose({kind!r}, {candidates!r}) was not expected")


class Chooser:
    """Records every choose() call and answers with the candidate at ``pick``."""

    def __init__(self, pick=0):
        self.pick = pick
        self.calls = []

    def __call__(self, kind, candidates):
        self.calls.append((kind, candidates))
        return candidates[self.pick]


def join(group, member_id="", client="c", now=0, config=CFG, choose=first, protocols=RANGE,
         session=SESSION, rebalance=REBALANCE, protocol_type="consumer", reply_to=None):
    request = JoinGroupRequest(group_id="g", member_id=member_id, session_timeout_ms=session,
                               rebalance_timeout_ms=rebalance, protocol_type=protocol_type, protocols=protocols,
                               client_id=client)
    return handle_join_group(group, request, reply_to or ("join", client), now, config, choose)


def sync(group, member_id, generation, now=0, assignments=(), config=CFG, choose=first,
         protocol_type=None, protocol_name=None, reply_to=None):
    request = SyncGroupRequest("g", generation, member_id, protocol_type, protocol_name, assignments)
    return handle_sync_group(group, request, reply_to or ("sync", member_id), now, config, choose)


def heartbeat(group, member_id, generation, now=0, config=CFG, choose=never):
    request = HeartbeatRequest("g", generation, member_id)
    return handle_heartbeat(group, request, ("hb", member_id), now, config, choose)


def leave(group, *member_ids, now=0, config=CFG, choose=first):
    request = LeaveGroupRequest("g", tuple(member_ids))
    return handle_leave_group(group, request, "leave", now, config, choose)


def commit(group, member_id, generation, now=0, config=CFG, offsets=((0, 5), (1, 7))):
    request = OffsetCommitRequest("g", generation, member_id, offsets)
    return handle_offset_commit(group, request, "commit", now, config, never)


def only_reply(outcome):
    assert len(outcome.replies) == 1, outcome.replies
    return outcome.replies[0][1]


def member(group, member_id):
    return next(m for m in group.members if m.member_id == member_id)


def ids_of(group):
    return tuple(m.member_id for m in group.members)


def transitions(outcome):
    return [n[1:] for n in outcome.notes if n[0] == "transition"]


def admit(group, client, now=0, config=CFG, protocols=RANGE, rebalance=REBALANCE, choose=first):
    """One new member joins (two-phase under v4+). Returns (outcome of the last join, member id)."""
    out = join(group, client=client, now=now, config=config, protocols=protocols,
               rebalance=rebalance, choose=choose)
    response = only_reply(out) if out.replies else None
    if config.require_known_member_id:
        assert response.error == Errors.MEMBER_ID_REQUIRED
        member_id = response.member_id
        out = join(out.group, member_id, client=client, now=now, config=config,
                   protocols=protocols, rebalance=rebalance, choose=choose)
    else:
        member_id = out.group.members[-1].member_id
    return out, member_id


def settle(group, config=CFG, choose=first):
    """Fire timers one deadline at a time until the join phase is over; returns (group, time)."""
    now = 0
    for _ in range(20):
        if group.state != PREPARING_REBALANCE:
            return group, now
        now = next_deadline(group)
        group = fire_timers(group, now, config, choose).group
    raise AssertionError("the join phase never ended")


def form(clients=("a", "b"), config=CFG, protocols=None, rebalance=REBALANCE, choose=first):
    """Every client joins at t=0 and the first join phase completes: a CompletingRebalance group
    of generation 1 led by the first client. Returns (group, member ids, completion time)."""
    group, ids = None, []
    for i, client in enumerate(clients):
        out, member_id = admit(group, client, 0, config, protocols[i] if protocols else RANGE,
                               rebalance)
        group = out.group
        ids.append(member_id)
    group, now = settle(group, config, choose)
    assert group.state == COMPLETING_REBALANCE
    return group, ids, now


def stable(clients=("a", "b"), config=CFG, rebalance=REBALANCE):
    """form(), then the leader syncs (partition i to member i) and every follower syncs."""
    group, ids, now = form(clients, config, rebalance=rebalance)
    assignments = tuple((member_id, (i,)) for i, member_id in enumerate(ids))
    group = sync(group, ids[0], group.generation, now, assignments, config).group
    for member_id in ids[1:]:
        group = sync(group, member_id, group.generation, now, config=config).group
    assert group.state == STABLE and not group.pending_sync
    return group, ids, now
