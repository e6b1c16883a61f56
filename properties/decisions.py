"""The decisions of Kafka's group coordinator a schedule can reach, and which ones a run reached.

A *decision* is an answer the coordinator gives a request — each error it returns, a join or sync
it parks, each group state DescribeGroups reports — or one of its timers firing (``timers``: a
session expiring, a rebalance or sync timeout, a pending member forgotten), named by ``(api, answer)``, with where Kafka
decides it: the Scala ``GroupCoordinator`` of 3.9 (``kafka.coordinator.group``) and the Java
``GroupMetadataManager`` of 4.x (``org.apache.kafka.coordinator.group``), which take the same
decisions for the classic protocol. The judge records, for every step the broker answered as the
model does, ``(api, the group's state when the request arrived, answer)``
(:attr:`properties.conform.judge.Judge.decisions`); :func:`coverage` lays those over
:data:`DECISIONS` for the report ("like the campaign's sometimes properties"): what was reached,
in which states, and what was not, with the reason when no schedule can reach it.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Tuple

import attrs

_GC = "GroupCoordinator"  # kafka.coordinator.group.GroupCoordinator (3.9)
_GMM = "GroupMetadataManager"  # org.apache.kafka.coordinator.group.GroupMetadataManager (4.x)


@attrs.frozen
class Decision:
    api: str
    answer: str  # an error name, "parked", or for DescribeGroups "NONE <state>"
    source: str  # where Kafka's coordinator decides it
    needs: Optional[str] = None  # "static": only with --static N; "timers": only with --timers on
    unreachable: Optional[str] = None  # why no schedule reaches it (None: schedules can)
    versions: Tuple[int, int] = (0, 99)  # the API versions at which Kafka decides it
    java_only: bool = False  # only the Java coordinator (4.x; 3.x with group.coordinator.new.enable) decides it


#: why no schedule (of conformance or of a campaign) meets a Dead group
NO_DEAD_GROUP = "a group is Dead only once it is deleted or its partition moved away; schedules delete no group"

DECISIONS: Tuple[Decision, ...] = (
    # JoinGroup
    Decision("JoinGroup", "MEMBER_ID_REQUIRED", f"{_GC}.doNewMemberJoinGroup (requireKnownMemberId, KIP-394); "
             f"{_GMM}.classicGroupJoinNewDynamicMember"),
    Decision("JoinGroup", "parked", f"{_GC}.addMemberAndRebalance / updateMemberAndRebalance: the answer waits in "
             "the DelayedJoin until every member rejoined (tryCompleteJoin)"),
    Decision("JoinGroup", "NONE", f"{_GC}.onCompleteJoin (generation, leader, members for the leader); "
             f"{_GMM}.completeClassicGroupJoin"),
    Decision("JoinGroup", "UNKNOWN_MEMBER_ID", f"{_GC}.doCurrentMemberJoinGroup (not a member, not pending); "
             f"{_GC}.handleJoinGroup (an unknown group and a member id)"),
    Decision("JoinGroup", "INVALID_SESSION_TIMEOUT", f"{_GC}.handleJoinGroup: sessionTimeoutMs outside "
             "group.min.session.timeout.ms..group.max.session.timeout.ms; "
             f"{_GMM}.throwIfClassicProtocolJoinRequestIsInvalid"),
    Decision("JoinGroup", "INCONSISTENT_GROUP_PROTOCOL", f"{_GC}.doNewMemberJoinGroup / doCurrentMemberJoinGroup: "
             "!group.supportsProtocols (another protocol type, no protocol in common, no protocols)"),
    Decision("JoinGroup", "FENCED_INSTANCE_ID", f"{_GC}.doCurrentMemberJoinGroup: a static member's instance id "
             "held by another member id", needs="static"),
    Decision("JoinGroup", "COORDINATOR_NOT_AVAILABLE", f"{_GC}.doNewMemberJoinGroup: the group is Dead",
             unreachable=NO_DEAD_GROUP),
    Decision("JoinGroup", "GROUP_MAX_SIZE_REACHED", f"{_GC}.acceptJoiningMember: group.max.size",
             unreachable="group.max.size is Kafka's default (Int.MaxValue) on every launched broker"),
    Decision("JoinGroup", "REBALANCE_IN_PROGRESS", f"{_GC}.updateStaticMemberAndRebalance: a static member "
             "replaced in a Stable group whose record fails to store with REQUEST_TIMED_OUT (storeGroup's "
             "putCacheCallback maps it to REBALANCE_IN_PROGRESS; the replacement is reverted)", needs="static",
             unreachable="no conformance schedule makes a broker's append to __consumer_offsets fail (a "
             "campaign's append_error does, in the model and impl/)"),
    # SyncGroup
    Decision("SyncGroup", "parked", f"{_GC}.doSyncGroup: a follower's SyncGroup waits for the leader's "
             "(CompletingRebalance)"),
    Decision("SyncGroup", "NONE", f"{_GC}.doSyncGroup: the leader's assignment stored "
             "(setAndPropagateAssignment), or Stable: the member's own"),
    Decision("SyncGroup", "UNKNOWN_MEMBER_ID", f"{_GC}.validateSyncGroup: not a member"),
    Decision("SyncGroup", "ILLEGAL_GENERATION", f"{_GC}.validateSyncGroup: another generation"),
    Decision("SyncGroup", "REBALANCE_IN_PROGRESS", f"{_GC}.doSyncGroup: the group is PreparingRebalance"),
    Decision("SyncGroup", "INCONSISTENT_GROUP_PROTOCOL", f"{_GC}.validateSyncGroup: protocol type or name not the "
             "group's (SyncGroup v5+, KIP-559)", versions=(5, 99)),
    Decision("SyncGroup", "FENCED_INSTANCE_ID", f"{_GC}.validateSyncGroup (validateCurrentMember)", needs="static"),
    # Heartbeat
    Decision("Heartbeat", "NONE", f"{_GC}.handleHeartbeat: CompletingRebalance or Stable"),
    Decision("Heartbeat", "REBALANCE_IN_PROGRESS", f"{_GC}.handleHeartbeat: PreparingRebalance"),
    Decision("Heartbeat", "UNKNOWN_MEMBER_ID", f"{_GC}.handleHeartbeat: Empty, or not a member"),
    Decision("Heartbeat", "ILLEGAL_GENERATION", f"{_GC}.validateHeartbeat: another generation"),
    Decision("Heartbeat", "FENCED_INSTANCE_ID", f"{_GC}.validateHeartbeat (validateCurrentMember)", needs="static"),
    # LeaveGroup
    Decision("LeaveGroup", "NONE", f"{_GC}.handleLeaveGroup: the member removed (removeMemberAndUpdateGroup)"),
    Decision("LeaveGroup", "UNKNOWN_MEMBER_ID", f"{_GC}.handleLeaveGroup: not a member (per member from v3)"),
    Decision("LeaveGroup", "FENCED_INSTANCE_ID", f"{_GC}.handleLeaveGroup: an instance id held by another member id",
             needs="static"),
    # OffsetCommit
    Decision("OffsetCommit", "NONE", f"{_GC}.handleCommitOffsets (doCommitOffsets): stored; a simple consumer's "
             "too (generation -1, no member id)"),
    Decision("OffsetCommit", "ILLEGAL_GENERATION", f"{_GC}.validateOffsetCommit: another generation"),
    Decision("OffsetCommit", "UNKNOWN_MEMBER_ID", f"{_GC}.validateOffsetCommit: not a member"),
    Decision("OffsetCommit", "REBALANCE_IN_PROGRESS", f"{_GC}.doCommitOffsets: CompletingRebalance"),
    Decision("OffsetCommit", "OFFSET_METADATA_TOO_LARGE", "GroupMetadataManager.storeOffsets: metadata over "
             "offset.metadata.max.bytes (validateOffsetMetadataLength)"),
    Decision("OffsetCommit", "GROUP_ID_NOT_FOUND", "OffsetMetadataManager.validateOffsetCommit: a generation, and "
             "no such group, from OffsetCommit v9 on (KIP-848; before, and the Scala coordinator always: "
             "ILLEGAL_GENERATION)", versions=(9, 99), java_only=True),
    Decision("OffsetCommit", "FENCED_INSTANCE_ID", f"{_GC}.validateOffsetCommit (validateCurrentMember)",
             needs="static"),
    # OffsetFetch, DescribeGroups
    Decision("OffsetFetch", "NONE", f"{_GC}.handleFetchOffsets"),
    Decision("DescribeGroups", "NONE Empty", f"{_GC}.handleDescribeGroup (GroupMetadata.summary)"),
    Decision("DescribeGroups", "NONE PreparingRebalance", f"{_GC}.handleDescribeGroup"),
    Decision("DescribeGroups", "NONE CompletingRebalance", f"{_GC}.handleDescribeGroup"),
    Decision("DescribeGroups", "NONE Stable", f"{_GC}.handleDescribeGroup (members' metadata and assignments)"),
    Decision("DescribeGroups", "NONE Dead", f"{_GC}.handleDescribeGroup: an unknown group is Dead (before v6)",
             versions=(0, 5)),
    Decision("DescribeGroups", "GROUP_ID_NOT_FOUND", f"{_GMM}.describeGroups: an unknown group from v6 on (KIP-1043)",
             versions=(6, 99)),
    # the coordinator's timers (api "timers": no request decides them; a wait or a pause, or any
    # request, lets them fire, and the answers around them are judged)
    Decision("timers", "session expiry", f"{_GC}.onExpireHeartbeat (removeMemberAndUpdateGroup); "
             f"{_GMM}.expireClassicGroupMemberHeartbeat", needs="timers"),
    Decision("timers", "initial rebalance delay", f"{_GC}.prepareRebalance: the first join of an Empty group waits "
             "group.initial.rebalance.delay.ms (InitialDelayedJoin, extended while new members arrive) before "
             f"onCompleteJoin; {_GMM}.prepareRebalance / tryCompleteInitialRebalanceElseSchedule"),
    Decision("timers", "rebalance timeout", "DelayedJoin.onExpiration: the join completes without the members that "
             f"did not rejoin ({_GC}.onCompleteJoin); {_GMM}.completeClassicGroupJoin on the join timer",
             needs="timers"),
    Decision("timers", "sync timeout", f"{_GC}.onExpirePendingSync: members that did not sync within the rebalance "
             f"timeout are removed and the group rebalances; {_GMM}.expirePendingSync", needs="timers"),
    Decision("timers", "pending member expiry", f"{_GC}.onExpireHeartbeat (isPending: "
             f"removePendingMemberAndUpdateGroup); {_GMM}.expireClassicGroupMemberHeartbeat "
             "(removePendingMemberAndUpdateClassicGroup)", needs="timers"),
)


def coverage(reached: Dict[Tuple[str, str, str], int], schedules: Dict[Tuple[str, str], int],
             static: bool = False, versions: Optional[Dict[str, int]] = None, timers: bool = False,
             java_coordinator: bool = True) -> List[dict]:
    """One row per decision: how many schedules reached it (*schedules*: (api, answer) -> count)
    and in which group states (*reached*: (api, state, answer) -> schedules), or why it was not;
    and the decisions reached that are not in :data:`DECISIONS` (an answer the catalogue does not
    name yet), flagged ``listed: False``. *versions*: the version used of each API, where a
    decision belongs to some versions only."""
    by_decision: Dict[Tuple[str, str], Dict[str, int]] = {}
    for (api, state, answer), n in reached.items():
        states = by_decision.setdefault((api, answer), {})
        states[state] = states.get(state, 0) + n
    rows = []
    for d in DECISIONS:
        states = by_decision.pop((d.api, d.answer), {})
        why = d.unreachable or ("needs --static N" if d.needs == "static" and not static and not states else
                                "needs --timers on" if d.needs == "timers" and not timers and not states else
                                "the Java coordinator's only; judged as the Scala one" if d.java_only and
                                not java_coordinator and not states else None)
        used = (versions or {}).get(d.api)
        if why is None and not states and used is not None and not d.versions[0] <= used <= d.versions[1]:
            why = f"{d.api} v{used} in use; Kafka decides it at v{d.versions[0]}" + (
                "+" if d.versions[1] == 99 else f"-v{d.versions[1]}")
        rows.append({"api": d.api, "answer": d.answer, "schedules": schedules.get((d.api, d.answer), 0),
                     "states": dict(sorted(states.items())), "source": d.source, "unreachable": why, "listed": True})
    for (api, answer), states in sorted(by_decision.items()):
        rows.append({"api": api, "answer": answer, "schedules": schedules.get((api, answer), 0),
                     "states": dict(sorted(states.items())), "source": None, "unreachable": None, "listed": False})
    return rows


def headline(rows: Iterable[dict]) -> str:
    """"N of M decisions reached (K not reachable here)"."""
    rows = [r for r in rows if r["listed"]]
    reachable = [r for r in rows if not r["unreachable"]]
    reached = [r for r in reachable if r["schedules"]]
    return (f"{len(reached)} of {len(reachable)} reachable coordinator decisions reached"
            + (f" ({len(rows) - len(reachable)} not reachable by these schedules)" if len(rows) > len(reachable) else ""))


#: every (api, answer) Kafka's coordinator gives a request of the schedules (the catalogue's)
ANSWERS = frozenset((d.api, d.answer) for d in DECISIONS)


def unexplained(answer) -> bool:
    """Whether *answer* ((api, answer) the broker gave a request) is one Kafka's coordinator never
    gives that request in any state: then no difference of state, such as an earlier divergence
    left behind, explains it."""
    return answer is not None and answer[0] in {d.api for d in DECISIONS} and tuple(answer) not in ANSWERS
