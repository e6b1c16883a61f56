"""What a consumer must do when the coordinator answers a group request with an error, read off the
model's own client (``model/member.py``) rather than written down a second time.

The judge of real consumers (:mod:`properties.clients.judge`) holds a client to a reaction for each
error it was answered: rejoin, forget its generation, forget its member id, look the coordinator up
again. Those reactions are the model's response handlers (``_on_heartbeat``, ``_on_sync_group``,
``_on_offset_commit``, ``_on_join_group``, each citing Kafka's), so :func:`reaction` runs the handler
on a model member in the state that request is sent from, with the request of the member's current
generation (or of an older one), and reads what changed. A model that changes its mind (a fix, or a
broken variant of :mod:`model.variants`) changes the judge with it: :class:`Reactions` is built from
a model configuration.
"""

from __future__ import annotations

from functools import lru_cache
from typing import FrozenSet, Tuple

import attrs

from model import member
from model.client import COMPLETING_REBALANCE, PREPARING_REBALANCE, STABLE, Request, Step, new_client
from model.config import Config
from model.errors import Errors, is_retriable
from model.messages import (
    HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse, OffsetCommitRequest,
    OffsetCommitResponse, SyncGroupRequest, SyncGroupResponse,
)

#: the group requests whose error answers the judge holds a client to, and the member state each
#: is sent from when it carries the member's current generation (a Heartbeat and a commit from a
#: Stable member, the SyncGroup while completing the rebalance, the JoinGroup while preparing)
SENT_FROM = {"Heartbeat": STABLE, "OffsetCommit": STABLE, "SyncGroup": COMPLETING_REBALANCE,
             "JoinGroup": PREPARING_REBALANCE}
#: the errors a coordinator answers group requests with (the ones groupcheck's fault schedules inject)
ERRORS = (Errors.REBALANCE_IN_PROGRESS, Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID,
          Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS)

_GENERATION, _MEMBER, _PROTOCOL = 5, "member-a", "range"


@attrs.frozen
class Reaction:
    """What the model's member did with one error answer."""

    rejoin: bool  # it will send a JoinGroup (requestRejoin, or its join future failed retriably)
    resets_generation: bool  # resetStateAndGeneration: its generation is gone
    resets_member_id: bool  # ... and its member id with it
    rediscover: bool  # markCoordinatorUnknown: it looks the coordinator up before its next request
    fatal: bool  # the error is raised to the application


def _request(api: str, current: bool):
    generation = _GENERATION if current else _GENERATION - 1
    if api == "Heartbeat":
        return HeartbeatRequest("g", generation, _MEMBER)
    if api == "OffsetCommit":
        return OffsetCommitRequest("g", generation, _MEMBER, ((0, 1),))
    if api == "SyncGroup":
        return SyncGroupRequest("g", generation, _MEMBER, "consumer", _PROTOCOL, ())
    return JoinGroupRequest("g", _MEMBER, 6000, 10000, "consumer", ((_PROTOCOL, ()),))


def _response(api: str, error: int):
    if api == "Heartbeat":
        return HeartbeatResponse(error)
    if api == "OffsetCommit":
        return OffsetCommitResponse(((0, error),))
    if api == "SyncGroup":
        return SyncGroupResponse(error)
    return JoinGroupResponse(error, -1, None, "", _MEMBER, ())


def reaction(api: str, error: int, current: bool = True, broken: FrozenSet[str] = frozenset()) -> Reaction:
    """The model member's reaction to *error* answering its *api* request, sent from the state
    :data:`SENT_FROM` names with its current generation (*current*) or the one before it. *broken*:
    the model variants to apply (:mod:`model.variants`)."""
    return _reaction(api, int(error), current, frozenset(broken))


@lru_cache(maxsize=None)
def _reaction(api: str, error: int, current: bool, broken: FrozenSet[str]) -> Reaction:
    config = Config(clients=1, brokers=1, broken=broken)
    s = Step(new_client(0, config.brokers, config.partitions), 0, config, None, [])
    s.state, s.coordinator = SENT_FROM[api], 0
    s.generation, s.member_id, s.protocol = _GENERATION, _MEMBER, _PROTOCOL
    s.rejoin_needed = api in ("JoinGroup", "SyncGroup")  # the rebalance under way
    sent = (_GENERATION if current else _GENERATION - 1, _MEMBER, _PROTOCOL)
    req = Request(id=1, slot=config.brokers, body=_request(api, current), created_ms=0,
                  timeout_ms=config.request_timeout_ms, sent_generation=sent)
    if api in ("JoinGroup", "SyncGroup"):
        s.join_future = ("pending", req.id)
    member.dispatch(s, req, _response(api, error))
    failed = s.join_future is not None and s.join_future[0] == "failed"
    fatal = s.fatal is not None or (failed and not is_retriable(s.join_future[1])
                                    and s.join_future[1] not in member.REJOIN_AT_ONCE)
    return Reaction(
        rejoin=(s.rejoin_needed and api not in ("JoinGroup", "SyncGroup")) or (failed and not fatal),
        resets_generation=s.generation != _GENERATION,
        resets_member_id=s.member_id != _MEMBER,
        rediscover=s.coordinator is None,
        fatal=fatal,
    )


@attrs.frozen
class Reactions:
    """The judge's error sets, per API, from the model (with *broken* variants applied)."""

    broken: FrozenSet[str] = attrs.field(default=frozenset(), converter=frozenset)

    def errors(self, api: str, what: str, current: bool = True) -> Tuple[int, ...]:
        """The errors answering *api* after which the model's member does *what* (a
        :class:`Reaction` field name)."""
        return tuple(e for e in ERRORS if getattr(reaction(api, e, current, self.broken), what))


#: the reactions of the model as it is
MODEL = Reactions()
