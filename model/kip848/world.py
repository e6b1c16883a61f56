"""A KIP-848 world: consumers, one group coordinator, the links between them, and time.

Each consumer slot holds a :class:`model.kip848.membership.Client` (None while its process is
down). A link per slot carries heartbeats to the coordinator and answers back, in order; either
can be lost. Time moves only by ``tick``, which fires the coordinator's timers at their deadlines
in order. An event is a tuple, kind first (JSON: a list):

``("poll", c)``        the application's poll (callbacks, rejoining, the poll timer restarted)
``("heartbeat", c)``   the background thread's heartbeat poll (sends one if it is time)
``("commit", c)``      the application commits the offsets of the partitions it holds
                       (``commitSync``: OffsetCommit v9 with its member id and epoch)
``("deliver", c)``     the coordinator handles the oldest heartbeat on c's link
``("receive", c)``     consumer c reads the oldest answer on its link
``("lose", c, way)``   the oldest message one way ("request" or "response") is lost
``("timeout", c)``     the oldest heartbeat on c's connection has waited request.timeout.ms:
                       the connection is dropped, every heartbeat on it failed
``("close", c)``       the application closes the consumer (it leaves the group)
``("crash", c)``       the process dies: no leave; what it sent may still arrive
``("restart", c)``     a new process (a new member id) subscribes in slot c: after a crash, or
                       for a static member's slot also after a close whose leave was sent (a
                       rolling restart: the new process takes over the instance id)
``("tick", ms)``       time passes

:func:`offers` lists the events that can change a world, in that order; :func:`step` applies one
(an event that is not enabled changes nothing and logs nothing).
"""

from __future__ import annotations

from typing import NamedTuple

from model.kip848 import coordinator as coord
from model.kip848 import membership as mm

TICKS = (1, 50, 200, 700)  # the tick lengths an engine offers


class World(NamedTuple):
    now: int
    group: coord.Group
    clients: tuple  # Client or None (process down)
    incarnations: tuple  # per slot: how many processes it has started (the member id's suffix)
    requests: tuple  # per slot: ((seq, member id, Request), ...) on their way to the coordinator
    responses: tuple  # per slot: ((seq, member id, Response), ...) on their way back
    steps: int = 0


def member_id(c: int, incarnation: int) -> str:
    """A consumer-generated member id (KIP-1082): slot and process, so ids sort by slot."""
    return f"m{c}.{incarnation}"


def initial_world(config) -> World:
    n = config.clients
    clients = tuple(mm.new_client(member_id(c, 0), 0, config, config.instance_id(c)) for c in range(n))
    return World(0, coord.new_group(config.partitions), clients, (0,) * n, ((),) * n, ((),) * n)


def offers(world: World, config) -> list:
    """Every event that can change *world*, in a fixed order."""
    out = []
    for c, client in enumerate(world.clients):
        if _restartable(client, c, config):
            out.append(("restart", c))
        if client is not None:
            if not client.closed:
                out.append(("poll", c))
            out.append(("heartbeat", c))
            if mm.can_commit(client):
                out.append(("commit", c))
            if mm.timed_out(client, world.now, config):
                out.append(("timeout", c))
            if not client.closed:
                out += [("close", c), ("crash", c)]
        if world.requests[c]:
            out += [("deliver", c), ("lose", c, "request")]
        if world.responses[c]:
            out += [("receive", c), ("lose", c, "response")]
    out += [("tick", ms) for ms in TICKS]
    return out


def step(world: World, event, config) -> tuple[World, list]:
    """*world* after *event*, and what happened (the log). Unchanged and [] if not enabled."""
    kind = event[0]
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise ValueError(f"unknown KIP-848 event kind {kind!r} in {list(event)!r}")
    new, log = handler(world, event, config)
    if new is world:
        return world, []
    return new._replace(steps=world.steps + 1), log


def _restartable(client, c: int, config) -> bool:
    """A slot takes a new process when its process is down, or, a static member's, when its
    process closed and sent its leave (a dynamic consumer's closed slot stays closed)."""
    if client is None:
        return True
    return config.instance_id(c) is not None and client.closed and client.state != mm.LEAVING


def _set(items: tuple, i: int, value) -> tuple:
    return items[:i] + (value,) + items[i + 1:]


def _ev_poll(world, event, config):
    c = event[1]
    client = world.clients[c]
    if client is None or client.closed:
        return world, []
    new, log = mm.poll(client, world.now, config)
    return (world if new == client else world._replace(clients=_set(world.clients, c, new))), log


def _ev_heartbeat(world, event, config):
    c = event[1]
    client = world.clients[c]
    if client is None:
        return world, []
    new, request, log = mm.heartbeat(client, world.now, config)
    if request is None and new == client:
        return world, []
    world = world._replace(clients=_set(world.clients, c, new))
    if request is not None:
        world = world._replace(requests=_set(world.requests, c, world.requests[c] + ((new.seq, new.member_id, request),)))
        log.append(("sent", c, new.seq, request))
    return world, log


def _ev_commit(world, event, config):
    c = event[1]
    client = world.clients[c]
    if client is None or not mm.can_commit(client):
        return world, []
    request = mm.commit_request(client)
    world = world._replace(requests=_set(world.requests, c, world.requests[c] + ((0, client.member_id, request),)))
    return world, [("sent", c, 0, request)]


def _ev_deliver(world, event, config):
    c = event[1]
    if not world.requests[c]:
        return world, []
    (seq, mid, request), rest = world.requests[c][0], world.requests[c][1:]
    if isinstance(request, coord.Commit):  # an OffsetCommit: answered with its error, the group unchanged
        error, log = coord.commit(world.group, request, config)
        log.append(("commit_answered", c, request, error))
        world = world._replace(requests=_set(world.requests, c, rest),
                               responses=_set(world.responses, c, world.responses[c] + ((0, mid, error),)))
        return world, log
    group, response, log = coord.heartbeat(world.group, request, world.now, config)
    log.append(("answered", c, seq, request, response))
    world = world._replace(group=group, requests=_set(world.requests, c, rest),
                           responses=_set(world.responses, c, world.responses[c] + ((seq, mid, response),)))
    return world, log


def _ev_receive(world, event, config):
    c = event[1]
    if not world.responses[c]:
        return world, []
    (seq, mid, response), rest = world.responses[c][0], world.responses[c][1:]
    world = world._replace(responses=_set(world.responses, c, rest))
    client = world.clients[c]
    if client is None or client.member_id != mid:  # its process is gone, and the connection with it
        return world, [("discarded", c, seq)]
    if isinstance(response, str):  # an OffsetCommit's answer: commitSync returns or throws; no state changes
        return world, [("commit_result", c, response)]
    new, log = mm.on_response(client, seq, response, world.now, config)
    if not (log and log[0][0] == "ignored"):
        log.append(("received", c, seq, response))
    return world._replace(clients=_set(world.clients, c, new)), log


def _ev_lose(world, event, config):
    c, way = event[1], event[2]
    queues = world.requests if way == "request" else world.responses
    if not queues[c]:
        return world, []
    lost = queues[c][0]
    queues = _set(queues, c, queues[c][1:])
    world = world._replace(requests=queues) if way == "request" else world._replace(responses=queues)
    return world, [("lost", c, way, lost[0])]


def _ev_timeout(world, event, config):
    c = event[1]
    client = world.clients[c]
    if client is None or not mm.timed_out(client, world.now, config):
        return world, []
    new, log = mm.on_failure(client, world.now, config)
    log.append(("timed_out", c, tuple(seq for seq, _, _ in client.awaiting)))
    return world._replace(clients=_set(world.clients, c, new)), log


def _ev_close(world, event, config):
    c = event[1]
    client = world.clients[c]
    if client is None or client.closed:
        return world, []
    new, log = mm.close(client)
    return world._replace(clients=_set(world.clients, c, new)), log


def _ev_crash(world, event, config):
    c = event[1]
    client = world.clients[c]
    if client is None or client.closed:
        return world, []
    return world._replace(clients=_set(world.clients, c, None)), [("crashed", c, client.member_id)]


def _ev_restart(world, event, config):
    c = event[1]
    if not _restartable(world.clients[c], c, config):
        return world, []
    incarnation = world.incarnations[c] + 1
    client = mm.new_client(member_id(c, incarnation), world.now, config, config.instance_id(c))
    return (world._replace(clients=_set(world.clients, c, client), incarnations=_set(world.incarnations, c, incarnation)),
            [("restarted", c, client.member_id)])


def _ev_tick(world, event, config):
    ms = event[1]
    if ms <= 0:
        return world, []
    end, group, log = world.now + ms, world.group, []
    while True:
        due = coord.next_due(group)
        if due is None or due > end:
            break
        group, more = coord.expire(group, max(due, world.now), config)
        log += more
    return world._replace(now=end, group=group), log


_HANDLERS = {"poll": _ev_poll, "heartbeat": _ev_heartbeat, "commit": _ev_commit, "deliver": _ev_deliver, "receive": _ev_receive,
             "lose": _ev_lose, "timeout": _ev_timeout, "close": _ev_close, "crash": _ev_crash,
             "restart": _ev_restart, "tick": _ev_tick}
KINDS = tuple(_HANDLERS)
