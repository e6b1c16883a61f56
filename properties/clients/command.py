"""``groupcheck conform client``: real consumers of one library under seeded faults, judged.

``groupcheck conform client --client kafka-python|confluent-kafka|aiokafka|groupcheck [--mutant NAME]
[--schedules N] [--seed S] [--consumers C] [--static N] [--parallel K] [--set NAME=VALUE]... [--out DIR]
[--json] [--no-shrink]``

``--static N``: the first N consumers are static members (group.instance.id ``instance-{i}``,
KIP-345), held to the judge's static rules besides the others.

Runs N schedules (seeds S..S+N-1; :mod:`properties.clients.schedule`), K at a time, each with its
own ``groupcheck broker`` on free loopback ports and C consumer processes of the library
(:mod:`properties.clients.session`), judges each (:mod:`properties.clients.judge`), shrinks the
first counterexample of every rule (re-running the schedule without one fault at a time, keeping
each removal after which the same rule still fires), and writes the report to ``--out`` (default
``reports/conform-client-LIBRARY``): ``report.md``, ``report.json`` and one replayable
counterexample file per rule in ``counterexamples/``. ``groupcheck replay FILE`` re-runs one.
``--mutant NAME`` (with ``--client groupcheck``) runs groupcheck's consumer with one of its
client-side mutants applied (:mod:`properties.mutation.mutants`): a deliberately broken consumer, to
see what the judge catches.

``--json`` prints ``{system, schedules, findings: [{signature, summary, count, file, source}],
notes, verdict}`` (the same shape as ``groupcheck conform broker``'s, ``findings`` for
``divergences``). Exit 0: nothing found; 1: a finding; 2: a usage error, an unknown client or a
library that is not installed (one line).
"""

from __future__ import annotations

import argparse
import functools
import html
import json
import os
import time
from typing import Dict, Optional, Tuple

from properties import findings as shape
from properties import junit
from properties import targets
from properties.clients import libraries
from properties.clients.judge import judge
from properties.clients.trace import Finding
from properties.engine import run as engine
from properties.engine.run import task_ranges
from properties.clients.schedule import PROTOCOLS, ClientSchedule, generate
from properties.errors import Inconclusive, UsageError, int_at_least
from properties.progress import Progress
from properties.live.child import add_set_option

KIND = "client-conformance"


def add_parser(kinds) -> argparse.ArgumentParser:
    c = kinds.add_parser("client", help="run real consumers of a library under faults and judge every request",
                         description="N consumers of one client library join a group on groupcheck's broker, which "
                                     "injects a seeded fault schedule; every request they send and every rebalance "
                                     "callback is judged against the rules of Kafka's consumer. Exit 0: nothing "
                                     "found; 1: a finding; 2: usage error or a library that is not installed.")
    c.add_argument("--client", required=True, metavar="NAME", help="the library: " + ", ".join(targets.names(targets.CLIENT)))
    c.add_argument("--mutant", metavar="NAME", help="with --client groupcheck: a consumer mutant of "
                                                     "groupcheck mutants --list (a deliberately broken consumer)")
    c.add_argument("--schedules", type=int_at_least("--schedules", 1), default=20, help="schedules to run (default 20)")
    c.add_argument("--seed", type=int_at_least("--seed", 0), default=0, help="first seed (default 0)")
    c.add_argument("--consumers", type=int_at_least("--consumers", 1), default=3, help="consumers (default 3)")
    c.add_argument("--protocol", choices=PROTOCOLS, default="classic",
                   help="the group protocol: classic (JoinGroup/SyncGroup, the default) or consumer (KIP-848's "
                        "ConsumerGroupHeartbeat; --client java, confluent-kafka or groupcheck)")
    c.add_argument("--static", type=int_at_least("--static", 0), default=0, metavar="N",
                   help="the first N consumers are static members: group.instance.id instance-0 ... (default 0)")
    c.add_argument("--parallel", type=int_at_least("--parallel", 1), default=2,
                   help="schedules run at once, each with its own broker (default 2)")
    add_set_option(c, "a consumer setting for every consumer: " + ", ".join(libraries.SETTINGS))
    c.add_argument("--out", metavar="DIR", default=None, help="report directory (default reports/conform-client-NAME)")
    c.add_argument("--json", action="store_true", help="print the summary as JSON")
    c.add_argument("--junit", metavar="FILE", default=None,
                   help="also write the result as JUnit XML to FILE (a test case per finding, one for the run)")
    c.add_argument("--baseline", metavar="REPORT.json", default=None,
                   help="an earlier report.json of conform client: every finding marked new or known, and the ones "
                        "it had that this run did not show listed as fixed")
    c.add_argument("--no-shrink", action="store_true", help="keep counterexamples as found")
    c.set_defaults(func=cmd_conform_client)
    return c


def run_and_judge(library: targets.Target, schedule: ClientSchedule, group: str, mutant: Optional[str] = None):
    """Run one schedule and judge it; a schedule that cannot run (its broker did not start) is
    inconclusive (exit 3): nothing about the client was learnt, and the next schedule would fail the
    same way."""
    from properties.clients import session

    try:
        outcome = session.run(library, schedule, group, mutant=mutant)
    except session.SessionError as e:
        raise Inconclusive(str(e)) from None
    return outcome, judge(outcome)


def check_mutant(library: targets.Target, mutant: Optional[str]) -> None:
    """UsageError unless *mutant* (None: none) is a consumer mutant and *library* groupcheck's own."""
    if mutant is not None and library.mutants is None:
        raise UsageError(f"--mutant {mutant}: mutants are groupcheck's own consumer's; use --client groupcheck")
    library.check_mutant(mutant)


#: the libraries whose runner speaks KIP-848's consumer protocol (group.protocol=consumer): Kafka's
#: Java consumer, librdkafka (confluent-kafka) and groupcheck's own (impl.membership)
CONSUMER_PROTOCOL_CLIENTS = ("java", "confluent-kafka", "groupcheck")


def make_plan(args, client: str, mutant: Optional[str], consumers: int, settings_pairs, static: int = 0,
              protocol: str = "classic") -> dict:
    """Validate what a run needs (UsageError naming the argument) and return the plan every
    schedule runs with (plain values: Spark ships it to its executors)."""
    library = libraries.get(client)
    check_mutant(library, mutant)
    if static > consumers:
        raise UsageError(f"--static {static}: more static members than consumers ({consumers})")
    settings = libraries.parse_settings(settings_pairs)
    if protocol == "consumer":
        if library.name.split(":")[0] not in CONSUMER_PROTOCOL_CLIENTS:
            raise UsageError(f"--protocol consumer: --client {library.name} is not judged with KIP-848's protocol yet "
                             f"(only {', '.join(CONSUMER_PROTOCOL_CLIENTS)})")
        refused = sorted(set(settings) & {"session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"})
        if refused:  # ConsumerConfig.CONSUMER_PROTOCOL_UNSUPPORTED_CONFIGS: the client itself refuses them
            raise UsageError(f"--set {refused[0]}: not a setting of KIP-848's consumer protocol (the coordinator "
                             "decides the session, the heartbeat interval and the assignment)")
    return {"client": library.name, "mutant": mutant, "consumers": consumers, "static": static,
            "settings": settings, "protocol": protocol}


def run_seed(plan: dict, seed: int) -> dict:
    """One schedule, run and judged; a plain result (the whole outcome only if something was found)."""
    library = libraries.get(plan["client"])
    schedule = generate(seed, consumers=plan["consumers"], settings=plan["settings"], static=plan.get("static", 0),
                        protocol=plan.get("protocol", "classic"))
    outcome, findings = run_and_judge(library, schedule, f"conform-{seed}", plan["mutant"])
    return {"seed": seed, "findings": [f.to_json() for f in findings],
            "outcome": outcome_json(outcome) if findings else None,
            "faults_injected": sum(1 for x in outcome.trace if x["direction"] == "fault"), "notes": list(outcome.notes),
            "held_ms": outcome.held_ms}


class ClientTally:
    """Schedules' results merged in any order; the first counterexample of each rule is the one of
    the smallest seed."""

    def __init__(self) -> None:
        self.done = 0
        self.failed = 0
        self.faults_injected = 0
        self.counts: Dict[str, int] = {}
        self.seeds: Dict[str, list] = {}  # rule -> the seeds that broke it
        self.first: Dict[str, Tuple[int, dict, dict]] = {}  # rule -> (seed, finding json, outcome json)
        self.notes: set = set()
        self.held = 0  # schedules whose faults waited for the group to form
        self.longest_held_ms = 0

    def add(self, result: dict) -> None:
        self.done += 1
        self.failed += bool(result["findings"])
        self.faults_injected += result["faults_injected"]
        held_ms = result.get("held_ms", 0)  # (a result from before the hold has none)
        self.held += held_ms > 0
        self.longest_held_ms = max(self.longest_held_ms, held_ms)
        self.notes.update(result["notes"])
        for f in result["findings"]:
            rule = f["rule"]
            self.counts[rule] = self.counts.get(rule, 0) + 1
            self.seeds.setdefault(rule, []).append(result["seed"])
            if rule not in self.first or result["seed"] < self.first[rule][0]:
                self.first[rule] = (result["seed"], f, result["outcome"])


def client_parts(plan: dict, start: int, stop: int) -> list:
    """The engine's work for one task: seeds ``start..stop-1``, run and judged one after the other."""
    return [run_seed(plan, seed) for seed in range(start, stop)]


def cmd_conform_client(args) -> int:
    """Run the schedules, K at a time (the engine's pool of K threads). SIGINT or SIGTERM stops it
    without losing what ran: no new schedule starts, the ones under way may finish (a second signal
    abandons them), and the report is written for the finished ones, marked partial, without
    shrinking; the exit status is then 128 + the signal's number (130, 143), as for every run."""
    if args.junit:
        junit.check_path(args.junit)
    baseline = shape.load_baseline(args.baseline)
    plan = make_plan(args, args.client, args.mutant, args.consumers, args.settings, args.static, args.protocol)
    out = args.out or f"reports/conform-client-{plan['client']}"
    started = time.monotonic()
    progress = Progress(args.schedules, unit="schedules", failures="with findings")
    tally = ClientTally()
    with engine.session() as interrupts:
        outcome = engine.run(task_ranges(args.seed, args.schedules, 1), functools.partial(client_parts, plan), tally,
                             engine.Threads(args.parallel), progress, interrupts)
        with interrupts.held(release=False):
            progress(tally.done, tally.failed, final=True)
            summary = finish(tally, plan, out, time.monotonic() - started,
                             shrinking=not args.no_shrink and not outcome.partial,
                             settings={"seed": args.seed, "parallel": args.parallel}, requested=args.schedules,
                             stopped_by=outcome.stopped_by, baseline=baseline)
            print_summary(summary, args.json, out)
            if args.junit:
                junit.write(summary, args.junit)
    outcome.report_end(out)
    return outcome.exit_status(shape.exit_status(summary))


def finish(tally: ClientTally, plan: dict, out: str, seconds: float, shrinking: bool, settings: dict,
           requested: Optional[int] = None, stopped_by: Optional[str] = None, failure: Optional[str] = None,
           baseline: Optional[dict] = None) -> dict:
    """Shrink the first counterexample of every rule, write them and the report (the one report
    shape, :mod:`properties.findings`; with *baseline*, an earlier report, each finding marked new
    or known and the ones gone listed as fixed); the report."""
    library = libraries.get(plan["client"])
    os.makedirs(os.path.join(out, "counterexamples"), exist_ok=True)
    found = []
    for rule, (seed, finding_json, data) in sorted(tally.first.items()):
        outcome, finding = outcome_of({**data, "library": library.name}), Finding.from_json(finding_json)
        reproduced = None
        original = len(outcome.schedule.faults)
        if shrinking:
            outcome, finding, reproduced = shrink(library, outcome, finding, plan["mutant"])
        relative = os.path.join("counterexamples", f"{rule}.json")
        path = os.path.join(out, relative)
        write_counterexample(path, library.name, outcome, finding, plan["mutant"])
        found.append(shape.finding(
            signature=rule, rule=rule, kind="rule", count=tally.counts[rule], first_seeds=sorted(tally.seeds[rule])[:20],
            summary=f"{finding.client}: {finding.summary}", observed=list(finding.evidence), allowed=None,
            source=finding.source, events=len(outcome.schedule.faults), original_events=original,
            minimal=True if reproduced else None, reproduced=reproduced, counterexample=relative,
            replay=f"groupcheck replay {path}"))
    found = shape.with_baseline(found, baseline)
    summary = shape.envelope(
        checker="conform-client", system=f"client:{library.name}", findings=found, done=tally.done,
        requested=requested if requested is not None else tally.done, unit="schedules",
        settings={"client": library.name, "mutant": plan["mutant"], "consumers": plan["consumers"],
                  "static": plan.get("static", 0), "protocol": plan.get("protocol", "classic"),
                  "consumer_settings": plan["settings"], **settings},
        checked=checked_lines(plan), not_checked=not_checked_lines(plan),
        partial=stopped_by is not None or failure is not None, stopped_by=stopped_by, failure=failure)
    summary.update({"schedules": tally.done, "mutant": plan["mutant"], "consumers": plan["consumers"],
                    "static": plan.get("static", 0), "seed": settings.get("seed"), "seconds": round(seconds, 1),
                    "with_findings": tally.failed, "notes": sorted(tally.notes),
                    "faults_injected": tally.faults_injected,
                    "held": {"schedules": tally.held, "longest_ms": tally.longest_held_ms}})
    write_report(out, summary)
    return summary


def checked_lines(plan: dict) -> list:
    """What conform client judged (properties/clients/judge.py, judge_kip848.py)."""
    if plan.get("protocol") == "consumer":
        return ["KIP-848's consumer protocol (group.protocol=consumer), every ConsumerGroupHeartbeat each consumer "
                "sent (the broker's trace) and every rebalance callback: one heartbeat in flight, the member epoch "
                "of the latest answer (0 only to join, after fencing or a leave; -1 to leave), the member id kept, "
                "full heartbeats on joining and after a failure, owned partitions that were assigned, a revocation "
                "callback before the heartbeat that stops reporting a partition, a leave on close, heartbeats that "
                "never stop for a session while in the group, and the group settling after the faults "
                "(ConsumerGroupDescribe)"] + (
            ["static members: their group.instance.id on their join and on their leave at epoch -2 (never another "
             "one); a member "
             "failed by UNRELEASED_INSTANCE_ID or FENCED_INSTANCE_ID sends nothing more and is left out of the "
             "settle check (named in the notes)"] if plan.get("static") else [])
    return ["every request each consumer sent (the broker's trace) and every rebalance callback: one JoinGroup/"
            "SyncGroup in flight, heartbeats and commits carrying the current generation and member id, heartbeats "
            "that never stop for a session while the member holds a generation, a rejoin after REBALANCE_IN_PROGRESS "
            "/ UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION, the member id kept until the coordinator says it is unknown, a "
            "FindCoordinator after NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE, callbacks matching the SyncGroup "
            "answers, partitions revoked before a rejoin, and the group settling after the faults"] + (
        ["static members: their group.instance.id on every JoinGroup (v5+), SyncGroup, Heartbeat and OffsetCommit, "
         "and no LeaveGroup"] if plan.get("static") else [])


def not_checked_lines(plan: dict) -> list:
    if plan.get("protocol") == "consumer":
        return ["what a client does between two requests that leaves no trace on the wire (its internal state)",
                "the heartbeat interval's timing, OffsetCommit's member epochs, regular-expression "
                "subscriptions, coordinator failover (groupcheck broker does not persist consumer groups)"] + (
            [] if plan.get("static") else ["static membership (--static N)"])
    return ["what a client does between two requests that leaves no trace on the wire (its internal state)",
            "cooperative rebalancing"] + ([] if plan.get("static") else ["static membership (--static N)"])


def print_summary(summary: dict, as_json: bool, out: str) -> None:
    if as_json:
        print(json.dumps(summary, indent=1))
        return
    broken = [f for f in summary["findings"] if f["status"] != "fixed"]
    print(f"{summary['system']}: {summary['schedules']} schedules in {summary['seconds']} s, "
          f"{summary['faults_injected']} faults injected: {summary['with_findings']} with findings, "
          f"{len(broken)} rules broken")
    for f in broken:
        again = {True: "", False: " [intermittent: not on a re-run]", None: ""}[f["shrunk"]["reproduced"]]
        mark = f" [{f['status']}]" if f["status"] else ""
        print(f"  {f['count']:>4} × {f['signature']}{mark}{again}: {f['summary']}\n         "
              f"{os.path.join(out, f['counterexample'])}")
    for f in summary["findings"]:
        if f["status"] == "fixed":
            print(f"     fixed: {f['signature']}")
    print(f"report: {out}/report.md — verdict: {shape.headline(summary)}")


def shrink(library, outcome, finding: Finding, mutant: Optional[str] = None):
    """Re-run the schedule once: a finding that does not come back is intermittent (a race of the
    client's own threads, say) and is kept as found. Else remove faults one at a time while the same
    rule still fires (each try re-runs the schedule). Returns (outcome, finding, reproduced)."""
    schedule = outcome.schedule
    _, again = run_and_judge(library, schedule, f"shrink-{schedule.seed}-again", mutant)
    if not any(f.signature() == finding.signature() for f in again):
        return outcome, finding, False
    i = 0
    while i < len(schedule.faults):
        candidate = schedule.without(i)
        again, findings = run_and_judge(library, candidate, f"shrink-{schedule.seed}-{len(candidate.faults)}", mutant)
        same = [f for f in findings if f.signature() == finding.signature()]
        if same:
            schedule, outcome, finding = candidate, again, same[0]
        else:
            i += 1
    return outcome, finding, True


def outcome_json(outcome) -> dict:
    """Everything of an outcome a counterexample file keeps (:func:`outcome_of` reads it back)."""
    return {"schedule": outcome.schedule.to_json(), "start_ms": outcome.start_ms, "stop_ms": outcome.stop_ms,
            "settle": {"settled": outcome.settle.settled, "detail": outcome.settle.detail,
                       "waited_ms": outcome.settle.waited_ms, "members": list(outcome.settle.members),
                       "owners": {str(p): o for p, o in outcome.settle.owners.items()},
                       "group_state": outcome.settle.group_state},
            "notes": list(outcome.notes), "held_ms": outcome.held_ms,
            "events": {c: list(e) for c, e in outcome.events.items()},
            "stderr": dict(outcome.stderr), "trace": list(outcome.trace)}


def write_counterexample(path: str, library: str, outcome, finding: Finding, mutant: Optional[str] = None) -> None:
    data = {"kind": KIND, "library": library, "mutant": mutant, "signature": finding.signature(),
            "finding": finding.to_json(), **outcome_json(outcome)}
    with open(path, "w") as f:
        json.dump(data, f, indent=None)


def write_report(out: str, summary: dict) -> None:
    """report.json, report.md and index.html: the shared head (verdict, findings, what was checked)
    and the notes."""
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(summary, f, indent=1)
    title = f"Client conformance: {summary['system']}"
    lines = shape.markdown_head(summary, title)
    lines += [f"{summary['schedules']} schedules (seeds from {summary['seed']}), {summary['consumers']} consumers each"
              + (f" ({summary['static']} of them static members)" if summary.get("static") else "")
              + f", settings {summary['settings']['consumer_settings'] or 'the schedule defaults'}; "
              f"{summary['faults_injected']} faults injected in all; {summary['seconds']} s.", ""]
    held = summary.get("held") or {}
    if held.get("schedules"):
        lines += [f"{held['schedules']} of the schedules waited for their group to form before their first fault "
                  f"(the longest {held['longest_ms']:,} ms): the host was slow to start the consumers, and the "
                  "broker held the faults until the group had formed (`--faults-when-formed`).", ""]
    if summary.get("partial"):
        lines += [f"**PARTIAL: stopped by {summary.get('stopped_by') or 'a failed task'}**; the figures cover the "
                  f"{summary['schedules']} schedules that finished (findings not shrunk).", ""]
    if summary["notes"]:
        lines += ["Notes (not judged):", ""] + [f"- {n}" for n in summary["notes"]]
    lines += ["", "Replay a counterexample: `groupcheck replay FILE` (re-runs its schedule with the same library and "
                  "says whether the same rule fires again)."]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    body = shape.html_head(summary, title)
    if summary["notes"]:
        body.append("<h2>Notes (not judged)</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in summary["notes"])
                    + "</ul>")
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write(shape.page(title, body))


def outcome_of(data: dict):
    """The :class:`~properties.clients.session.Outcome` a counterexample file recorded, to judge
    again without running anything (its ``stop_ms``: when the consumers were told to stop)."""
    from properties.clients.session import Outcome, Settle

    settle = data["settle"]
    return Outcome(ClientSchedule.from_json(data["schedule"]), data["library"], tuple(data["trace"]),
                   {c: tuple(e) for c, e in data["events"].items()},
                   Settle(settle["settled"], int(settle.get("waited_ms", 0)),
                          {int(p): list(o) for p, o in settle["owners"].items()}, settle["group_state"],
                          tuple(settle.get("members", ())), settle["detail"]),
                   int(data["start_ms"]), int(data["stop_ms"]), tuple(data.get("notes", ())),
                   dict(data.get("stderr", {})), int(data.get("held_ms", 0)))


def is_client_counterexample(data) -> bool:
    return isinstance(data, dict) and data.get("kind") == KIND


def replay(path: str, data: dict, as_json: bool) -> int:
    """``groupcheck replay FILE`` for a client counterexample: run its schedule again with its
    library; exit 1 if the same rule fires again, 0 if not (as the other replays do)."""
    try:
        library = libraries.get(data["library"])
        schedule = ClientSchedule.from_json(data["schedule"])
        signature = data["signature"]
        mutant = data.get("mutant")
    except (KeyError, TypeError, ValueError) as e:
        raise UsageError(f"{path}: not a readable client counterexample ({e})") from None
    check_mutant(library, mutant)
    outcome, findings = run_and_judge(library, schedule, f"replay-{schedule.seed}", mutant)
    same = [f for f in findings if f.signature() == signature]
    if as_json:
        print(json.dumps({"file": path, "signature": signature, "reproduced": bool(same),
                          "findings": [f.to_json() for f in findings]}, indent=1))
    else:
        for f in findings:
            print(f"{f.at_ms:>7} ms  {f.client}  {f.rule}: {f.summary}")
            for line in f.evidence:
                print(f"           {line}")
        print(f"{'reproduced' if same else 'NOT reproduced'}: {signature} ({library.name}, "
              f"{len(schedule.faults)} faults: {', '.join(x.label() for x in schedule.faults)})")
    return 1 if same else 0
