"""Kafka's release lines side by side (issue 38): ``groupcheck conform broker --matrix kafka:A..B``.

The same seeded schedules (the same ``--seed``, ``--schedules``, ``--timers``, ...) are judged
against the latest release of every line from A to B (:data:`properties.live.kafka.LINES`), one
release after the other, each launched, judged and stopped as ``--launch kafka:X.Y.Z`` would, its
report (with its counterexamples, shrunk against that release) in ``OUT/kafka-X.Y.Z``. Then the
matrix: per release its verdict; per divergence the releases that showed it, as ranges over the
releases in order ("present in 3.0.2–3.2.3; absent in 2.8.2, gone in 3.3.2"), with what Kafka's
history says of it (:data:`DECIDED`) or "not decided yet". ``OUT/matrix.md`` and
``OUT/matrix.json``; exit 0 when every release conformed, 1 otherwise.

``--matrix`` also takes a comma-separated list of releases or lines (``kafka:2.5.1,kafka:3.3``).
``--timers both`` judges each release twice, launched afresh each time: ``--schedules`` with timers
off (``OUT/kafka-X.Y.Z-timers-off``), then ``--timed-schedules`` with timers on
(``OUT/kafka-X.Y.Z-timers-on``); the matrix keeps the two apart (a timer's divergence is judged
within a tolerance window, the others deterministically). ``--resume`` keeps every release's
report that is a whole run of the same settings already in OUT (a matrix stopped half way goes
on where it stopped; one run again with nothing left to run re-reads the reports and decides the
divergences with this groupcheck's knowledge of Kafka's history).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
from typing import Dict, List, Optional, Sequence, Tuple

import attrs

from properties.errors import UsageError

@attrs.frozen
class Known:
    """A bug of Kafka's group coordinator that releases judged here have: the releases from
    *introduced* (None: older than any judged) up to, not including, *fixed* (the first release
    with the fix, by version order: the fix went to every later line) show the divergences
    :data:`DECIDED` maps to it; *timers*: only seen with timers on (a timer's bug)."""

    ticket: str
    introduced: Optional[str]
    fixed: str
    text: str
    timers: Optional[str] = None

    def covers(self, version: str, timers: str) -> bool:
        return ((self.introduced is None or _key(self.introduced) <= _key(version)) and _key(version) < _key(self.fixed)
                and (self.timers is None or self.timers == timers))


KAFKA_10134 = Known(
    "KAFKA-10134", None, "2.6.1",
    "KAFKA-10134 (16ec1793d53 in 2.6.1, 7e7bb184d2a for 2.7.0): a current member's Heartbeat to a CompletingRebalance "
    "group was answered REBALANCE_IN_PROGRESS; since, NONE, and its session is kept. A bug Kafka fixed")
KAFKA_12890 = Known(
    "KAFKA-12890", None, "2.8.1",
    "KAFKA-12890 (49d2d13ef0a in 2.8.1, d294b946ca7 for 3.0.0: DelayedSync, GroupCoordinator.schedulePendingSync, "
    "onExpirePendingSync): no deadline for the SyncGroups of a completed join, so members that never sync stay in a "
    "CompletingRebalance group until their sessions expire (or for good while they heartbeat); since, they are removed "
    "and the group rebalances at the rebalance timeout. A bug Kafka fixed", timers="on")
KAFKA_8225 = Known(
    "KAFKA-8225", None, "2.3.0",
    "KAFKA-8225 (9fa331b811d, KIP-345's fencing of static members, first in 2.3.0): GroupCoordinator.handleHeartbeat "
    "checked the generation in PreparingRebalance and Stable only, so a member's Heartbeat with a stale generation to a "
    "CompletingRebalance group was answered REBALANCE_IN_PROGRESS; since, fencing, member and generation are checked "
    "first in every state (ILLEGAL_GENERATION). No KIP asks for either answer: an inconsistency Kafka removed, judged "
    "by today's rule")
KAFKA_9150 = Known(
    "KAFKA-9150", "2.3.0", "2.4.0",
    "KAFKA-9150 (975b4bde4f6, first in 2.4.0; a regression of KIP-430's f11fa5ef402 in 2.3.0): "
    "KafkaApis.handleDescribeGroupRequest sent each member's assignment as its member_metadata "
    "(.setMemberMetadata(member.assignment)), so DescribeGroups of a Stable group lists the assignment twice. "
    "A bug Kafka fixed")
KAFKA_9752 = Known(
    "KAFKA-9752", "2.4.1", "2.5.0",
    "KAFKA-9752 (7b807b16c96, first in 2.5.0; a regression of KAFKA-9232's 7c3018b25dd in 2.4.1): "
    "MemberMetadata.shouldKeepAlive held a new member alive while isNew, and GroupCoordinator.onCompleteJoin "
    "scheduled its next session expiry before clearing isNew, so a new member that sends nothing after its "
    "JoinGroup answer is never expired (a silent new leader leaves the group CompletingRebalance for good). "
    "A bug Kafka fixed", timers="on")
KAFKA_9801 = Known(
    "KAFKA-9801", "2.3.0", "2.5.0",
    "KAFKA-9801 (146811ab296, first in 2.5.0): a static member rejoining with an unknown member id while the group "
    "is CompletingRebalance was answered at once (GroupCoordinator.doUnknownJoinGroup: case Stable | "
    "CompletingRebalance), with the current generation and the old leader id, and no rebalance; since, the group "
    "rebalances (prepareRebalance) and the JoinGroup waits. A bug Kafka fixed")
KAFKA_8487 = Known(
    "KAFKA-8487", None, "2.4.0",
    "KAFKA-8487 (bebcbe3a049, first in 2.4.0): GroupCoordinator.doCommitOffsets answered any OffsetCommit to a "
    "CompletingRebalance group REBALANCE_IN_PROGRESS before checking its member id and generation; since, an unknown "
    "member is told UNKNOWN_MEMBER_ID and a stale generation ILLEGAL_GENERATION first (the consumer rejoins on "
    "REBALANCE_IN_PROGRESS alone). A bug Kafka fixed")
KAFKA_14201 = Known(
    "KAFKA-14201", "3.0.0", "3.3.0",
    "KAFKA-14201 (cfa1f098d6f in 3.3.0, 706adc39f6a for 3.4.0): an OffsetCommit with generation -1 to an Empty group "
    "has its member id checked; a regression of 3.0.0 (5dae3648abd dropped 2.8's generation < 0 && Empty branch). "
    "A bug Kafka fixed")

#: What Kafka's history says of a divergence older releases show: signature -> the known bugs that
#: explain it in the releases they cover. The model judges every release by today's rules. A
#: divergence only ever seen after another (the report's ``follows``) takes that one's decision.
DECIDED: Dict[str, Tuple[Known, ...]] = {
    "Heartbeat: answered REBALANCE_IN_PROGRESS where the model allows NONE": (KAFKA_10134,),
    "Heartbeat: answered REBALANCE_IN_PROGRESS where the model allows UNKNOWN_MEMBER_ID": (KAFKA_12890, KAFKA_9752),
    "Heartbeat: answered REBALANCE_IN_PROGRESS where the model allows ILLEGAL_GENERATION": (KAFKA_8225,),
    # the model's pending-sync timer fires within its tolerance window, or not yet (then NONE; which
    # 2.5.1 does not answer either, KAFKA-10134)
    "Heartbeat: answered REBALANCE_IN_PROGRESS where the model allows NONE or UNKNOWN_MEMBER_ID":
        (KAFKA_12890, KAFKA_9752),
    "OffsetCommit: answered REBALANCE_IN_PROGRESS where the model allows UNKNOWN_MEMBER_ID":
        (KAFKA_8487, KAFKA_12890, KAFKA_9752),
    "OffsetCommit: answered REBALANCE_IN_PROGRESS where the model allows ILLEGAL_GENERATION": (KAFKA_8487,),
    "SyncGroup: no answer where the model allows REBALANCE_IN_PROGRESS or UNKNOWN_MEMBER_ID": (KAFKA_12890, KAFKA_9752),
    # from 2.6.1 a Heartbeat in CompletingRebalance renews the session (KAFKA-10134), so the member
    # the model removed at the pending-sync deadline is still there; a follower's SyncGroup waits
    # for a leader that never syncs
    "Heartbeat: answered NONE where the model allows UNKNOWN_MEMBER_ID": (KAFKA_12890, KAFKA_9752),
    "SyncGroup: no answer where the model allows UNKNOWN_MEMBER_ID": (KAFKA_12890, KAFKA_9752),
    # a member the model removed at the pending-sync deadline syncs, and the broker (which removes
    # it only when its session expires) answers it (2.0.1, timers on: a join completed at 2,503 ms,
    # the SyncGroup at 4,492 ms)
    "SyncGroup: answered NONE where the model allows UNKNOWN_MEMBER_ID": (KAFKA_12890, KAFKA_9752),
    # the rebalance the model started at the pending-sync deadline has ended (its members gone) when
    # a new member joins; the broker's, started 0.5 s later at the sessions' expiry, still waits for
    # its members (2.0.1, timers on: join completed at 641 ms, the JoinGroup at 3,707 ms parked)
    "JoinGroup: no answer where the model allows NONE": (KAFKA_12890, KAFKA_9752),
    # the same 0.5 s: the model's rebalance (from the pending-sync deadline) has ended and removed a
    # member that did not rejoin; the broker's is still waiting for it (2.0.1, timers on: join
    # completed at 567 ms, the SyncGroup at 3,859 ms)
    "SyncGroup: answered REBALANCE_IN_PROGRESS where the model allows UNKNOWN_MEMBER_ID": (KAFKA_12890, KAFKA_9752),
    # members the model removed at the pending-sync deadline are still the broker's, the group
    # still CompletingRebalance (2.2.2, timers on: a join completed at 1,614 ms; m1's rejoin at
    # 3,380 ms answered as a member's; a new member's JoinGroup refused for the protocols of
    # members the model no longer has; DescribeGroups 1.8 s after the join)
    "JoinGroup: answered NONE where the model allows UNKNOWN_MEMBER_ID": (KAFKA_12890, KAFKA_9752),
    "JoinGroup: answered INCONSISTENT_GROUP_PROTOCOL where the model allows MEMBER_ID_REQUIRED":
        (KAFKA_12890, KAFKA_9752),
    # the same with a pending member's id, which the model's emptied group no longer knows (2.5.1:
    # a join completed at 1,671 ms, the JoinGroup at 3,459 ms)
    "JoinGroup: answered INCONSISTENT_GROUP_PROTOCOL where the model allows UNKNOWN_MEMBER_ID":
        (KAFKA_12890, KAFKA_9752),
    "DescribeGroups: answered NONE with group_state 'CompletingRebalance' where the model allows 'Empty'":
        (KAFKA_12890, KAFKA_9752),
    # (--static) a restarted static member's JoinGroup to a CompletingRebalance group (2.4.1: a
    # static member joins alone, then joins again without its id: answered at once, generation 1)
    "JoinGroup: answered NONE where the model allows no answer (parked)": (KAFKA_9801,),
    # a Stable group's member_metadata is the member's assignment (2.3.1, timers off)
    "DescribeGroups: answered NONE, but the answers to the other members differ from the model's": (KAFKA_9150,),
    # a commit the model sees after its pending-sync deadline (the member removed, or a new
    # generation); before 2.4.0 the broker answers REBALANCE_IN_PROGRESS to any commit while
    # CompletingRebalance (KAFKA-8487), from 2.4.0 because the member is still there (KAFKA-12890)
    "OffsetCommit: answered REBALANCE_IN_PROGRESS where the model allows ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID":
        (KAFKA_8487, KAFKA_12890, KAFKA_9752),
    # a commit without member id or generation 1.6 s after a join completed: the model's
    # pending-sync timer may have emptied the group (NONE) or not (UNKNOWN_MEMBER_ID); before 2.4.0
    # the broker answers REBALANCE_IN_PROGRESS first (2.0.1, timers on)
    "OffsetCommit: answered REBALANCE_IN_PROGRESS where the model allows NONE or UNKNOWN_MEMBER_ID": (KAFKA_8487,),
    # (timers on) 2.4.1 keeps a new member that never synced, so its group is not Empty for a
    # generation-less commit, and a member the model removed still commits (2.4.1: a join completed
    # at 193 ms, the commit at 2,902 ms, 0.7 s after the member's session would have ended)
    "OffsetCommit: answered UNKNOWN_MEMBER_ID where the model allows NONE": (KAFKA_14201, KAFKA_9752),
    "OffsetCommit: answered NONE where the model allows UNKNOWN_MEMBER_ID": (KAFKA_9752,),
    "JoinGroup: no answer where the model allows NONE or UNKNOWN_MEMBER_ID": (KAFKA_9752,),
    # the member id checked before the metadata's size
    "OffsetCommit: answered UNKNOWN_MEMBER_ID where the model allows OFFSET_METADATA_TOO_LARGE": (KAFKA_14201,),
}


def decide(signature: str, timers: str, found: Dict[str, Optional[str]]) -> Optional[str]:
    """What Kafka's history says of *signature*, seen (with *timers*) in the releases of *found*
    (release -> the divergence it followed there, or None): release by release, a known bug of
    that release, or the decision of the divergence it followed there. None when one release has
    neither: not decided."""
    decision = _decision(signature, timers, found)
    return None if decision is None else decision[0]


def _decision(signature: str, timers: str, found: Dict[str, Optional[str]]) -> Optional[Tuple[str, List[str]]]:
    """:func:`decide`'s text and the tickets it rests on. Release by release: a known bug of that
    release, or, where none is known for it, the decision of the divergence it followed there."""
    if not found:
        return None
    candidates = DECIDED.get(signature, ())
    own: Dict[Known, List[str]] = {}
    after: Dict[str, List[str]] = {}
    for version, parent in found.items():
        knowns = [known for known in candidates if known.covers(version, timers)]
        if knowns:
            for known in knowns:
                own.setdefault(known, []).append(version)
        elif parent is not None:
            after.setdefault(parent, []).append(version)
        else:
            return None
    said, tickets = [], []
    whole = len(own) == 1 and not after
    for known, versions in own.items():
        said.append(known.text if whole else f"In {', '.join(versions)}: {known.text}")
        tickets.append(known.ticket)
    for parent, versions in sorted(after.items()):
        theirs = _decision(parent, timers, dict.fromkeys(versions))
        if theirs is None:
            return None
        if not own and len(after) == 1:
            return f"Only seen after '{parent}', and follows from it: {theirs[0]}", theirs[1]
        said.append(f"In {', '.join(versions)} only seen after '{parent}' ({', '.join(theirs[1])}), and follows "
                    "from it")
        tickets += [t for t in theirs[1] if t not in tickets]
    return " · ".join(said), tickets


def releases(spec: str) -> List[str]:
    """The releases *spec* names, oldest first: ``kafka:A..B`` (every line from A to B, each by
    its latest release) or ``kafka:X[,kafka:Y...]`` (lines or releases). UsageError otherwise."""
    from properties.live import kafka

    if ".." in spec:
        first, _, last = spec.partition("..")
        if not first.startswith("kafka:"):
            raise UsageError(f"--matrix {spec}: expected kafka:LINE..LINE (e.g. kafka:2.0..4.1)")
        low, high = first[len("kafka:"):], last[len("kafka:"):] if last.startswith("kafka:") else last
        for line in (low, high):
            if line not in kafka.LINES:
                raise UsageError(f"--matrix {spec}: no release line {line} known (lines: {', '.join(kafka.LINES)})")
        lines = [line for line in kafka.LINES if _key(low) <= _key(line) <= _key(high)]
        if not lines:
            raise UsageError(f"--matrix {spec}: {low} comes after {high}")
        chosen = [kafka.LINES[line] for line in lines]
    else:
        chosen = [kafka.parse(name.strip(), "--matrix").version for name in spec.split(",") if name.strip()]
        if not chosen:
            raise UsageError(f"--matrix {spec!r}: no release named")
    return sorted(set(chosen), key=_key)


def _key(version: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def presence(versions: Sequence[str], showed: Dict[str, set], timers: str = "off",
             follows: Optional[Dict[str, Dict[str, Optional[str]]]] = None) -> List[dict]:
    """Per signature (first seen in the oldest release first): the releases that showed it as
    ranges of consecutive releases of *versions* (in order), the releases before and after each
    range that did not, and what :func:`decide` says of it (*follows*: per signature, release ->
    the divergence it followed there; none given: it followed none)."""
    out = []
    order = {v: i for i, v in enumerate(versions)}
    first = {sig: min(order[v] for v in vs) for sig, vs in showed.items()}
    for sig in sorted(showed, key=lambda s: (first[s], s)):
        present = [v in showed[sig] for v in versions]
        ranges = []
        i = 0
        while i < len(versions):
            if present[i]:
                j = i
                while j + 1 < len(versions) and present[j + 1]:
                    j += 1
                ranges.append({"from": versions[i], "to": versions[j],
                               "absent_before": versions[i - 1] if i > 0 else None,
                               "gone_in": versions[j + 1] if j + 1 < len(versions) else None})
                i = j + 1
            else:
                i += 1
        found = (follows or {}).get(sig) or dict.fromkeys(showed[sig])
        decision = _decision(sig, timers, found)
        out.append({"signature": sig, "ranges": ranges, "decided": decision[0] if decision else None,
                    "tickets": decision[1] if decision else []})
    return out


def describe(ranges: List[dict]) -> str:
    """"present in 3.0.2–3.2.3; absent in 2.8.2, gone in 3.3.2" (one clause per range)."""
    parts = []
    for r in ranges:
        span = r["from"] if r["from"] == r["to"] else f"{r['from']}–{r['to']}"
        around = [f"absent in {r['absent_before']}"] if r["absent_before"] else []
        around += [f"gone in {r['gone_in']}"] if r["gone_in"] else ["still in the newest judged"]
        parts.append(f"present in {span}; " + ", ".join(around))
    return " · ".join(parts)


def timings(args: argparse.Namespace) -> List[Tuple[str, int]]:
    """(timers, schedules) per campaign of a release: ``--timers both`` is timers off with
    ``--schedules``, then timers on with ``--timed-schedules`` (default: as many)."""
    if args.timers == "both":
        timed = getattr(args, "timed_schedules", None)
        return [("off", args.schedules), ("on", timed if timed is not None else args.schedules)]
    return [(args.timers, args.schedules)]


def run(args: argparse.Namespace, campaign) -> int:
    """``--matrix``: *campaign* (``command._campaign``) for each release (and each of
    :func:`timings`), then the matrix."""
    from properties import targets

    versions = releases(args.matrix)
    out = args.out or "reports/conform-matrix"
    plan = timings(args)
    rows: List[dict] = []
    # (timers, signature) -> release -> (its counterexample, the divergence it followed there)
    showed: Dict[Tuple[str, str], Dict[str, Tuple[Optional[str], Optional[str]]]] = {}
    status = 0
    stopped = False
    for version in versions:
        name = f"kafka:{version}"
        for timers, schedules in plan:
            folder = f"kafka-{version}" if len(plan) == 1 else f"kafka-{version}-timers-{timers}"
            one = copy.copy(args)
            one.launch, one.matrix, one.out, one.junit = name, None, os.path.join(out, folder), None
            one.timers, one.schedules, one.timed_schedules = timers, schedules, None
            print(f"== {name}" + ("" if len(plan) == 1 else f", timers {timers}"), flush=True)
            report = _read(os.path.join(one.out, "report.json")) if getattr(args, "resume", False) else None
            if report is not None and _same_run(report, one):
                print(f"kept from an earlier run: {os.path.join(one.out, 'report.md')} (--resume)", flush=True)
                code = 0 if report.get("verdict") == "pass" else 1
            else:
                code = campaign(one, targets.get(targets.BROKER, name, "--launch"))
                report = _read(os.path.join(one.out, "report.json"))
            rows.append({"release": version, "timers": timers, "exit": code,
                         "verdict": report.get("verdict") if report else None,
                         "schedules": report.get("schedules") if report else None,
                         "conforming": report.get("conforming") if report else None,
                         "seconds": report.get("seconds") if report else None,
                         "report": os.path.join(folder, "report.md")})
            for finding in (report or {}).get("findings", ()):
                example = finding.get("counterexample")
                showed.setdefault((timers, finding["signature"]), {})[version] = (
                    os.path.join(folder, example) if example else None, finding.get("follows"))
            if code not in (0, 1):  # a usage error, or stopped by a signal: what comes after is not run
                status, stopped = code, True
                break
            status = max(status, code)
        if stopped:
            break
    divergences = []
    for timers, _ in plan:
        judged = [r["release"] for r in rows if r["timers"] == timers]
        mine = {sig: found for (t, sig), found in showed.items() if t == timers}
        follows = {sig: {version: parent for version, (_, parent) in found.items()} for sig, found in mine.items()}
        for d in presence(judged, {sig: set(found) for sig, found in mine.items()}, timers, follows):
            first = d["ranges"][0]["from"]
            example, parent = mine[d["signature"]][first]
            divergences.append({**d, "timers": timers, "first": first, "counterexample": example, "follows": parent})
    matrix = {"releases": rows, "divergences": divergences,
              "settings": {"seed": args.seed, "timers": args.timers, "runs": [{"timers": t, "schedules": n} for t, n in plan],
                           "members": args.members, "steps": args.steps}}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "matrix.json"), "w") as f:
        json.dump(matrix, f, indent=1)
    with open(os.path.join(out, "matrix.md"), "w") as f:
        f.write(markdown(matrix))
    print(f"matrix: {os.path.join(out, 'matrix.md')} (matrix.json beside it)")
    return status


def _same_run(report: dict, args: argparse.Namespace) -> bool:
    """Whether *report* is a whole run of what *args* asks (``--resume`` keeps it): every schedule
    of the same seeds, members, steps, static members, faults and timers, against the same release."""
    settings = report.get("settings") or {}
    return (report.get("checker") == "conform-broker" and not report.get("partial") and report.get("stopped_by") is None
            and report.get("schedules") == args.schedules and settings.get("target") == f"--launch {args.launch}"
            and (settings.get("seed"), settings.get("members"), settings.get("steps"), settings.get("static"),
                 settings.get("faults"), settings.get("timers"))
            == (args.seed, args.members, args.steps, args.static, args.faults, args.timers == "on"))


def _read(path: str) -> Optional[dict]:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def markdown(matrix: dict) -> str:
    s = matrix["settings"]
    runs = s["runs"]
    both = len(runs) > 1
    said = " and ".join(f"{r['schedules']} schedules (seeds {s['seed']}–{s['seed'] + r['schedules'] - 1}) with timers "
                        f"{r['timers']}" for r in runs)
    lines = ["# Kafka's releases side by side", "",
             f"The same {said}, {s['members']} members, {s['steps']} steps, against each release, judged by "
             "today's model (Kafka 3.9's coordinator, and 4.x's versioned rules). Each divergence's counterexample "
             "is shrunk against the first release that shows it.", "",
             "| release |" + (" timers |" if both else "") + " verdict | conforming | time | report |",
             "|---|" + ("---|" if both else "") + "---|---:|---:|---|"]
    for r in matrix["releases"]:
        seconds = "" if r["seconds"] is None else f"{r['seconds']:.0f} s"
        verdict = r["verdict"] or f"no report (exit {r['exit']})"
        conforming = "—" if r["schedules"] is None else f"{r['conforming']} of {r['schedules']}"
        lines.append(f"| {r['release']} |" + (f" {r['timers']} |" if both else "")
                     + f" {verdict} | {conforming} | {seconds} | [report]({r['report']}) |")
    lines += ["", "## Divergences", ""]
    for run in runs:
        mine = [d for d in matrix["divergences"] if d["timers"] == run["timers"]]
        if both:
            lines += [f"### Timers {run['timers']}", ""]
        if not mine:
            lines += ["None.", ""]
        for d in mine:
            example = f" Shrunk against {d['first']}: [{d['counterexample']}]({d['counterexample']})." \
                if d.get("counterexample") else ""
            decided = d["decided"] or "Not decided yet: read Kafka's code and history for it (docs/kafka.md)"
            lines.append(f"- **{d['signature']}**: {describe(d['ranges'])}. {decided.rstrip('.')}." + example)
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
