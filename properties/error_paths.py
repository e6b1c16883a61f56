"""Error paths: which of the protocol's answers the interleavings took, and where (issue 37).

Two matrices, counted from the model's step log by :class:`properties.coverage.Coverage` and laid
out here for the campaign's report:

* **the client's**: an answer reaching its response handler, as (API, error, the member state then,
  whether the request's generation — generation, member id and protocol — is still the member's),
  for the answers whose handling depends on those: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
  REBALANCE_IN_PROGRESS and FENCED_INSTANCE_ID on JoinGroup, SyncGroup, Heartbeat and
  OffsetCommit (Kafka's ``AbstractCoordinator.JoinGroupResponseHandler``,
  ``SyncGroupResponseHandler``, ``HeartbeatResponseHandler`` and
  ``ConsumerCoordinator.OffsetCommitResponseHandler`` decide with ``generationUnchanged()`` and the
  member state which of generation and member id to reset; the model's ``model/member.py`` logs
  ``Answered`` where it dispatches);
* **the coordinator's**: a request reaching the broker, as (API, the group's state then, how the
  request's member id and generation stand to the group's).

A cell no schedule can reach is listed with the reason (:func:`client_cells`,
:func:`coordinator_cells`); the others are the matrix a campaign should fill. The counts are plain
dicts keyed by strings, so partial coverages from Spark tasks merge by addition.
"""

from __future__ import annotations

from model.client import COMPLETING_REBALANCE, PREPARING_REBALANCE, STABLE, UNJOINED
from model.errors import Errors, name_of
from properties.decisions import ANSWERS

CLIENT_APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit")
CLIENT_ERRORS = ("ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS", "FENCED_INSTANCE_ID")
MEMBER_STATES = (UNJOINED, PREPARING_REBALANCE, COMPLETING_REBALANCE, STABLE)
CURRENT, OLDER = "generation current", "sent before a rejoin or reset"

#: where the coordinator decides before it looks at members: one cell per API
NOT_COORDINATOR, LOADING, NO_GROUP = "not coordinator", "loading", "no group"
GROUP_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")
NEW, MEMBER, PENDING, UNKNOWN = "new member (no member id)", "member", "pending member", "unknown member id"
GEN_CURRENT, GEN_OLDER, GEN_NEWER = "member, current generation", "member, older generation", "member, newer generation"
RELATIONS = {
    "JoinGroup": (NEW, MEMBER, PENDING, UNKNOWN),
    "SyncGroup": (GEN_CURRENT, GEN_OLDER, GEN_NEWER, PENDING, UNKNOWN),
    "Heartbeat": (GEN_CURRENT, GEN_OLDER, GEN_NEWER, PENDING, UNKNOWN),
    "OffsetCommit": (GEN_CURRENT, GEN_OLDER, GEN_NEWER, PENDING, UNKNOWN),
    "LeaveGroup": (MEMBER, PENDING, UNKNOWN),
}
_ERRORS = frozenset(getattr(Errors, name) for name in CLIENT_ERRORS)
_SEP = " / "


def client_key(api: str, error, state: str, current: bool) -> tuple | None:
    """The client matrix's cell of an ``Answered`` log entry (None: not one of the matrix's);
    :func:`name` makes it the report's key."""
    if api not in CLIENT_APIS or error not in _ERRORS:
        return None
    return (api, name_of(error), state, CURRENT if current else OLDER)


def name(key: tuple) -> str:
    """A cell's name in the report and the coverage dict: its parts joined by `` / ``."""
    return _SEP.join(key)


def coordinator_key(request, group, is_leader: bool, loading: bool) -> tuple | None:
    """The coordinator matrix's cell of a ``Handled`` log entry: the request, the group the broker
    held when it arrived, whether the broker led the group's offsets partition and was loading it."""
    api = request.api
    if api not in RELATIONS:
        return None
    if not is_leader:
        return (api, NOT_COORDINATOR)
    if loading:
        return (api, LOADING)
    if group is None:
        return (api, NO_GROUP)
    return (api, group.state, _relation(api, request, group))


def _relation(api: str, request, group) -> str:
    member_id = request.member_ids[0] if api == "LeaveGroup" and request.member_ids else getattr(request, "member_id", "")
    if api == "JoinGroup" and not member_id:
        return NEW
    if any(m.member_id == member_id for m in group.members):
        if api in ("JoinGroup", "LeaveGroup"):
            return MEMBER
        generation = request.generation_id
        return GEN_CURRENT if generation == group.generation else GEN_OLDER if generation < group.generation else GEN_NEWER
    if any(p == member_id for p, _ in group.pending_members):
        return PENDING
    return UNKNOWN


def _never_answered(api: str, error: str) -> str | None:
    if (api, error) not in ANSWERS:
        return (f"Kafka's coordinator never answers a {api} with {error} "
                "(the decisions catalogue, properties/decisions.py)")
    return None


def client_cells() -> list:
    """Every cell of the client matrix: (key, reason it cannot be reached or None)."""
    cells = []
    for api in CLIENT_APIS:
        for error in CLIENT_ERRORS:
            never = _never_answered(api, error)
            for state in MEMBER_STATES:
                for current in (True, False):
                    key = name((api, error, state, CURRENT if current else OLDER))
                    reason = never
                    if reason is None and api in ("SyncGroup", "OffsetCommit") and state == UNJOINED and current:
                        reason = _UNJOINED_HAS_NO_GENERATION
                    if (reason is None and (api, error) == ("Heartbeat", "REBALANCE_IN_PROGRESS") and state == UNJOINED
                            and current):
                        reason = _NO_GENERATION_HEARTBEAT_REBALANCES
                    if reason is None and api == "JoinGroup" and (state in (COMPLETING_REBALANCE, STABLE)
                                                                  or (state == PREPARING_REBALANCE and not current)):
                        reason = _ONE_JOIN_AT_A_TIME_JOIN
                    if reason is None and api == "SyncGroup" and (state in (PREPARING_REBALANCE, STABLE)
                                                                  or (state == COMPLETING_REBALANCE and not current)):
                        reason = _ONE_JOIN_AT_A_TIME_SYNC
                    if (reason is None and api in ("Heartbeat", "OffsetCommit") and not current
                            and state in (COMPLETING_REBALANCE, STABLE)):
                        reason = _ANSWERED_BEFORE_THE_NEXT_JOIN
                    if reason is None and api == "OffsetCommit" and state == COMPLETING_REBALANCE:
                        reason = _COMMITTED_ONLY_WHILE_STABLE
                    if reason is None and (api, error) == ("OffsetCommit", "REBALANCE_IN_PROGRESS"):
                        reason = _NO_COMMIT_IS_ANSWERED_REBALANCE_IN_PROGRESS
                    if reason is None and (api, error, state, current) == ("JoinGroup", "REBALANCE_IN_PROGRESS",
                                                                           UNJOINED, False):
                        reason = _JOIN_REBALANCE_IN_PROGRESS_WITHOUT_ID
                    cells.append((key, reason))
    return cells


_MEMOISED = ("a member has one JoinGroup or SyncGroup outstanding at most: AbstractCoordinator.initiateJoinGroup "
             "starts a join, and moves the member to PREPARING_REBALANCE, only when joinFuture is null, and the "
             "SyncGroup is chained to that future; ")
_ONE_JOIN_AT_A_TIME_JOIN = _MEMOISED + (
    "so with its JoinGroup in flight a member leaves PREPARING_REBALANCE only by that answer or by a reset to "
    "UNJOINED, and its generation changes only by a reset (model/member.py _on_join_group)")
_ONE_JOIN_AT_A_TIME_SYNC = _MEMOISED + (
    "so its SyncGroup's answer finds it in COMPLETING_REBALANCE with the generation the JoinGroup gave (STABLE is "
    "entered only by that answer), or UNJOINED after a reset meanwhile (model/member.py _on_sync_group)")
_IN_ORDER = (
    "that connection's answers come in order (SocketServer's Processor mutes a channel from a complete request "
    "until its response is sent; NetworkClient's InFlightRequests.completeNext takes the oldest; "
    "ConsumerNetworkClient fires completions first in, first out), and a coordinator the member gives up is "
    "disconnected with what it carried (AbstractCoordinator.markCoordinatorUnknown: client.disconnectAsync), so "
    "the earlier request is answered, or failed, first (the model's links are first in, first out and its broker "
    "takes a link's next request only once the last is answered, Link.processing; model/member.py "
    "mark_coordinator_unknown disconnects)")
_ANSWERED_BEFORE_THE_NEXT_JOIN = (
    "a Heartbeat or OffsetCommit carries the generation of the member's last JoinGroup answer (the heartbeat "
    "thread runs from COMPLETING_REBALANCE on, a commit takes generationIfStable()), and the member reaches "
    "COMPLETING_REBALANCE or STABLE of another generation only by the answer to a JoinGroup sent after it, to the "
    "same coordinator connection; " + _IN_ORDER)
_COMMITTED_ONLY_WHILE_STABLE = (
    "an OffsetCommit is sent only while the member is STABLE (generationIfStable(): null otherwise, and the commit "
    "fails locally), and it reaches COMPLETING_REBALANCE again only by the answer to a JoinGroup sent after it, "
    "to the same coordinator connection (even a static member's rejoin that keeps its generation); " + _IN_ORDER)
_UNJOINED_HAS_NO_GENERATION = (
    "UNJOINED is entered only by resetStateAndGeneration, which leaves no generation and no protocol "
    "(AbstractCoordinator: new Generation(NO_GENERATION_ID, memberId, null); model/member.py "
    "reset_state_and_generation), while a SyncGroup or OffsetCommit carries the generation and protocol of a "
    "successful JoinGroup (the SyncGroup is chained to its answer, a commit takes generationIfStable()): its "
    "generation is never the member's once it is UNJOINED. A Heartbeat can be: the heartbeat thread checks the "
    "member state before its pollNoWakeup, not after, and a completion fired there (an OffsetCommit, SyncGroup "
    "or Heartbeat answer that resets) leaves the member UNJOINED, and the same iteration then sends a Heartbeat "
    "of that reset generation (AbstractCoordinator.HeartbeatThread.run; sendHeartbeatRequest reads "
    "this.generation), whose answer finds the member UNJOINED with the very generation it carried")
_NO_GENERATION_HEARTBEAT_REBALANCES = (
    "the only Heartbeat an UNJOINED member's current generation is in carries NO_GENERATION (-1), sent by the "
    "heartbeat thread in the iteration whose pollNoWakeup reset the member (AbstractCoordinator.HeartbeatThread."
    "run; the reason of the cells SyncGroup and OffsetCommit / UNJOINED / generation current), and the "
    "coordinator answers a Heartbeat REBALANCE_IN_PROGRESS only "
    "when its member and generation are the group's (GroupCoordinator.handleHeartbeat validates both before it "
    "looks at the state; model/group.py handle_heartbeat), and a group's generation is never -1")
_PENDING_SENDS_ONLY_JOIN_OR_LEAVE = (
    "a pending member id is known only to the dynamic member MEMBER_ID_REQUIRED gave it to, which holds it with no "
    "generation (JoinGroupResponseHandler: new Generation(NO_GENERATION_ID, memberId, null)) and so sends no SyncGroup "
    "(only after a JoinGroup succeeds, which makes it a member), no Heartbeat (the heartbeat thread is enabled by a "
    "successful JoinGroup) and no OffsetCommit (generationIfStable() is null outside STABLE); it can only rejoin or "
    "leave; pending ids are fresh UUIDs, never another member's")
_STABLE_ONLY_WITH_THE_GROUP = (
    "a member commits only while STABLE (generationIfStable), and it becomes STABLE in a generation only by the "
    "SyncGroup answer the coordinator sends as it moves that generation's group to Stable "
    "(GroupCoordinator.doSyncGroup: setAndPropagateAssignment, then transitionTo(Stable)); a group in "
    "CompletingRebalance has no STABLE member of its own generation")


_NO_COMMIT_IS_ANSWERED_REBALANCE_IN_PROGRESS = (
    "the coordinator answers an OffsetCommit REBALANCE_IN_PROGRESS only when the member and its generation "
    "are the group's current ones and the group is CompletingRebalance (GroupCoordinator.doCommitOffsets; the "
    "decisions catalogue), the coordinator matrix's cell OffsetCommit / CompletingRebalance / member, current "
    "generation, which no schedule reaches: " + _STABLE_ONLY_WITH_THE_GROUP + " (were that cell reached, "
    "these would be too: both are checked in every campaign)")


_JOIN_REBALANCE_IN_PROGRESS_WITHOUT_ID = (
    "the coordinator answers a JoinGroup REBALANCE_IN_PROGRESS only to a static member that joined with no member "
    "id, when the record of its replacement fails to store (GroupCoordinator.updateStaticMemberAndRebalance; the "
    "decisions catalogue), so that JoinGroup was sent with no generation, member id or protocol; while it is "
    "outstanding no other JoinGroup answer gives the member an id (one join at a time: initiateJoinGroup's "
    "joinFuture), and UNJOINED is entered only by resetStateAndGeneration, which leaves no generation and no "
    "protocol: the member's generation is the one the request was sent with (generationUnchanged), never older "
    "(model/member.py _on_join_group, reset_state_and_generation)")
_COMMIT_GENERATION_STORED = (
    "an OffsetCommit carries the generation of a STABLE member (generationIfStable), and a member is STABLE in a "
    "generation only after the coordinator wrote that generation's group record (GroupCoordinator.doSyncGroup: "
    "storeGroup, then setAndPropagateAssignment; a failed write answers the SyncGroup with an error instead), "
    "which the always property stable-member-generation-reached checks after every event on both sides; every "
    "coordinator that takes the group over loads the last record written or a later one "
    "(GroupMetadataManager.loadGroupsAndOffsets; the model's World.persisted), and while one coordinator holds "
    "the group its generation never decreases (generation-advances-by-one); a group deleted and created again "
    "starts from generation 0, but knows none of the old group's member ids (the model numbers them across "
    "the world, Kafka's are UUIDs), so an old member's commit is of an unknown member id there")
_COMMIT_NEWER = "a commit's generation is never newer than the group's: " + _COMMIT_GENERATION_STORED
_DEAD_GROUP_REMOVED = (
    "a group goes Dead only to leave the coordinator's cache in the same step, under its lock: an Empty "
    "group's deletion (GroupCoordinator.handleDeleteGroups, then GroupMetadataManager.cleanupGroupMetadata "
    "removes it; the model's delete_group) or its partition's unloading (removeGroupsForPartition); a "
    "request that comes after finds no group")


def coordinator_cells() -> list:
    """Every cell of the coordinator matrix: (key, reason it cannot be reached or None)."""
    cells = []
    for api, relations in RELATIONS.items():
        for where in (NOT_COORDINATOR, LOADING, NO_GROUP):
            # every one reachable: since the group's deletion (issue 37) even OffsetCommit / no group
            cells.append((name((api, where)), None))
        for state in GROUP_STATES:
            for relation in relations:
                reason = None
                if state == "Dead":
                    reason = _DEAD_GROUP_REMOVED
                elif state == "Empty" and relation not in (NEW, PENDING, UNKNOWN):
                    reason = "an Empty group has no members"
                elif relation == PENDING and api in ("SyncGroup", "Heartbeat", "OffsetCommit"):
                    reason = _PENDING_SENDS_ONLY_JOIN_OR_LEAVE
                elif (api, state, relation) == ("OffsetCommit", "CompletingRebalance", GEN_CURRENT):
                    reason = _STABLE_ONLY_WITH_THE_GROUP
                elif (api, relation) == ("OffsetCommit", GEN_NEWER):
                    reason = _COMMIT_NEWER
                cells.append((name((api, state, relation)), reason))
    return cells


def matrix(counts: dict, cells: list, first: dict | None = None, directed: dict | None = None) -> dict:
    """The report's matrix: every cell with its count (and, from *first*, the first seed that
    reached it: ``groupcheck campaign --seed-start SEED --interleavings 1`` replays that
    interleaving), the reachable ones reached and not. *directed*: the counts of the campaign's
    directed schedules (:mod:`properties.campaign.directed`), kept apart: ``reached`` and
    ``not_reached`` are the interleavings', ``reached_directed`` the reachable cells only the
    directed schedules reached, ``not_reached_at_all`` those neither did."""
    first = first or {}
    directed = directed or {}
    rows = [{"cell": key, "count": counts.get(key, 0), "first_seed": first.get(key), "directed": directed.get(key, 0),
             "unreachable": reason} for key, reason in cells]
    reachable = [r for r in rows if r["unreachable"] is None]
    reached = [r for r in reachable if r["count"]]
    only_directed = [r["cell"] for r in reachable if not r["count"] and r["directed"]]
    space = {key for key, _ in cells}
    unexpected = sorted((set(counts) | set(directed)) - space)  # reached, though the space has no such cell
    return {
        "reachable": len(reachable),
        "reached": len(reached),
        "unreachable": len(rows) - len(reachable),
        "not_reached": [r["cell"] for r in reachable if not r["count"]],
        "reached_directed": only_directed,
        "not_reached_at_all": [r["cell"] for r in reachable if not r["count"] and not r["directed"]],
        "reached_unreachable": [r["cell"] for r in rows if r["unreachable"] is not None and (r["count"] or r["directed"])],
        "unexpected": unexpected,
        "rows": rows,
    }


def summarise(cov: dict, directed: dict | None = None) -> dict:
    """Both matrices of a campaign's coverage (:meth:`properties.coverage.Coverage.to_dict`), with
    the counts of its directed schedules (*directed*: their coverage, the same shape) if it ran them."""
    first = cov.get("paths_first", {})
    directed = directed or {}
    return {"client": matrix(cov.get("client_paths", {}), client_cells(), first, directed.get("client_paths")),
            "coordinator": matrix(cov.get("coordinator_paths", {}), coordinator_cells(), first,
                                  directed.get("coordinator_paths"))}


#: The two matrices as a report names them: (key in :func:`summarise`, title, what a cell is).
SIDES = (("client", "The client's error paths",
          "each ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS or FENCED_INSTANCE_ID answer to a "
          "JoinGroup, SyncGroup, Heartbeat or OffsetCommit as it reached the member's response handler: API / error "
          "/ member state then / whether the request's generation was still the member's"),
         ("coordinator", "The coordinator's request paths",
          "each request as it reached the broker: API / the group's state then / how the request's member id and "
          "generation stood to the group's"))


def headline(paths: dict) -> str:
    def side(m: dict) -> str:
        extra = len(m.get("reached_directed", ()))
        also = f" by the interleavings, {m['reached'] + extra} with the directed schedules" if extra else ""
        return f"{m['reached']} of {m['reachable']} reachable cells reached{also} ({m['unreachable']} unreachable)"

    return f"client error paths: {side(paths['client'])}; coordinator request paths: {side(paths['coordinator'])}"
