"""What a run of many schedules found: counts per verdict, the first result of every distinct
signature, and, at the end, the shrunk counterexamples and the report (:func:`Tally.finish`)."""

from __future__ import annotations

import json
import math
import os
import time
from typing import Callable, Dict, List, Optional

from properties import findings as shape
from properties import decisions
from properties.conform import report as report_module
from properties.conform.run import Result, Timing
from properties.conform.shrink import shrink
from properties.conform.target import CRASHED_ELSEWHERE


#: the budget for showing that a divergence only ever seen after another also shows alone
PROMOTION_RUNS = 40
PROMOTION_SECONDS = 60.0
#: the time all shrinking of a run may take, and the least any one signature gets
SHRINK_SECONDS = 600.0
MIN_SHRINK_SECONDS = 10.0
#: how much more of the budget a divergence of its own gets than one seen only after another
#: (the former are what a reader fixes; the latter mostly show whether they stand alone)
OWN_SHARE = 4


class Tally:
    """Counts per verdict and, per signature, how many schedules showed it, their seeds, the first
    result (smallest seed) that did, whether some schedule showed it first (``leading``), and,
    for one only ever seen after another, which first divergences it followed (``follows``)."""

    def __init__(self) -> None:
        self.first: Dict[str, Result] = {}
        self.counts: Dict[str, int] = {}
        self.seeds: Dict[str, List[int]] = {}
        self.leading: set = set()  # signatures some schedule showed first (or a broker failure)
        self.led: Dict[str, Result] = {}  # signature -> the smallest-seed result it was the first divergence of
        self.follows: Dict[str, Dict[str, int]] = {}  # signature -> {the schedule's first signature: schedules}
        self.conforming = self.diverging = self.failures = 0
        self.versions: Dict[str, int] = {}
        self.latency: Dict[str, List[int]] = {}  # api -> every answer's time from request to answer, ms
        self.decisions: Dict[tuple, int] = {}  # (api, group state, answer) -> schedules that reached it
        self.decided: Dict[tuple, int] = {}  # (api, answer) -> schedules that reached it, in any state
        self.crashes = 0
        self.cut_short = 0  # schedules under way when the broker died (--parallel): another reported the crash
        self.stopped_after: Optional[int] = None

    @property
    def done(self) -> int:
        return self.conforming + self.diverging + self.failures

    @property
    def failed(self) -> int:
        return self.diverging + self.failures

    def add(self, result: Result) -> None:
        self.versions.update(dict(result.versions))
        for api, ms in answer_times(result.trace):
            self.latency.setdefault(api, []).append(ms)
        for decision in result.decisions:
            self.decisions[decision] = self.decisions.get(decision, 0) + 1
        for api, answer in {(api, answer) for api, _, answer in result.decisions}:
            self.decided[(api, answer)] = self.decided.get((api, answer), 0) + 1
        signatures = result.signatures()
        if not signatures:
            self.conforming += 1
            return
        if result.verdict == "failure":
            self.failures += 1
        else:
            self.diverging += 1
        if result.failure == CRASHED_ELSEWHERE:
            # its schedule was under way when the broker died, and another one reported that crash:
            # counted, not a finding of its own
            self.cut_short += 1
            signatures = tuple(sig for sig in signatures if sig != result.failure_signature())
            if not signatures:
                return
        lead = signatures[0]
        novel = {d.signature for d in result.divergences if decisions.unexplained(d.answer)}
        for signature in signatures:
            self.counts[signature] = self.counts.get(signature, 0) + 1
            self.seeds.setdefault(signature, []).append(result.schedule.seed)
            known = self.first.get(signature)
            if known is None or result.schedule.seed < known.schedule.seed:  # the same one whatever the task order
                self.first[signature] = result
            # its own: the schedule's first, a broker failure, or an answer Kafka never gives to
            # that request (no earlier divergence's state explains it)
            if signature == lead:
                known = self.led.get(signature)
                if known is None or result.schedule.seed < known.schedule.seed:
                    self.led[signature] = result
            if signature == lead or signature.startswith("failure:") or signature in novel:
                self.leading.add(signature)
            else:
                after = self.follows.setdefault(signature, {})
                after[lead] = after.get(lead, 0) + 1

    def merge(self, other: "Tally") -> None:
        """Add a task's tally (a Spark task's) to this one."""
        self.conforming += other.conforming
        self.diverging += other.diverging
        self.failures += other.failures
        self.crashes += other.crashes
        self.cut_short += other.cut_short
        self.versions.update(other.versions)
        for api, times in other.latency.items():
            self.latency.setdefault(api, []).extend(times)
        for decision, n in other.decisions.items():
            self.decisions[decision] = self.decisions.get(decision, 0) + n
        for decision, n in other.decided.items():
            self.decided[decision] = self.decided.get(decision, 0) + n
        self.leading |= other.leading
        for signature, theirs in other.led.items():
            mine = self.led.get(signature)
            if mine is None or theirs.schedule.seed < mine.schedule.seed:
                self.led[signature] = theirs
        for signature, after in other.follows.items():
            mine = self.follows.setdefault(signature, {})
            for lead, n in after.items():
                mine[lead] = mine.get(lead, 0) + n
        for signature, count in other.counts.items():
            self.counts[signature] = self.counts.get(signature, 0) + count
            self.seeds.setdefault(signature, []).extend(other.seeds.get(signature, []))
            mine = self.first.get(signature)
            theirs = other.first[signature]
            if mine is None or theirs.schedule.seed < mine.schedule.seed:
                self.first[signature] = theirs

    def parent(self, signature: str) -> Optional[str]:
        """None for a signature some schedule showed first; else the first divergence it followed
        most often (it may only follow from that one: shown under it)."""
        if signature in self.leading or not self.follows.get(signature):
            return None
        return min(self.follows[signature].items(), key=lambda kv: (-kv[1], kv[0]))[0]

    def _in_report_order(self, examples: List[dict]) -> List[dict]:
        """The counterexamples as the report lists them: the divergences of their own by count, each
        followed by those only seen after it (by what shrinking decided, ``example["follows"]``)."""
        key = lambda e: (-self.counts[e["signature"]], e["signature"])  # noqa: E731
        out: List[dict] = []
        placed = set()
        for e in sorted((e for e in examples if e["follows"] is None), key=key):
            out.append(e)
            children = sorted((c for c in examples if c["follows"] == e["signature"]), key=key)
            out += children
            placed.update(id(c) for c in children)
        out += sorted((e for e in examples if e["follows"] is not None and id(e) not in placed), key=key)
        return out

    def ordered(self) -> List[str]:
        """The signatures as the report lists them: the leading ones by count, each followed by the
        ones that only follow from it."""
        leading = sorted((s for s in self.first if self.parent(s) is None), key=lambda s: (-self.counts[s], s))
        under: Dict[str, List[str]] = {}
        for s in self.first:
            p = self.parent(s)
            if p is not None:
                under.setdefault(p, []).append(s)
        out: List[str] = []
        for s in leading:
            out.append(s)
            out += sorted(under.pop(s, []), key=lambda x: (-self.counts[x], x))
        for p in sorted(under):  # a parent with no result of its own (cannot happen; kept so nothing is lost)
            out += sorted(under[p], key=lambda x: (-self.counts[x], x))
        return out

    def finish(self, run, target, timing: Timing, mutant: Optional[str], settings: dict, out: str,
               seconds: float, shrinking: bool = True, baseline: Optional[dict] = None, requested: Optional[int] = None,
               stopped_by: Optional[str] = None, failure: Optional[str] = None,
               shrink_seconds: float = SHRINK_SECONDS, stop: Callable[[], bool] = lambda: False,
               say: Callable[[str], None] = lambda line: None) -> dict:
        """Shrink one counterexample per signature with *run* (re-running against *target*, a
        :class:`properties.conform.target.Broker`) within *shrink_seconds* in all (shared evenly
        by the signatures still to shrink: a broker with many divergences does not hold a CI job
        for an hour), write the report into *out* (the one report shape,
        :mod:`properties.findings`), and return it. Once *stop* says so (a signal arrived while
        shrinking), the counterexamples not yet shrunk are kept as found. *say* is told, a line
        each, which divergence is being shrunk and for how long at most (progress on long work)."""
        profile = target.profile
        examples: List[dict] = []
        deadline = time.monotonic() + shrink_seconds
        # the divergences of their own first (they are what a reader fixes), then the ones only seen
        # after another: the shared budget goes to them in that order
        signatures = sorted(self.ordered(), key=lambda sig: self.parent(sig) is not None)
        weights = [1 if self.parent(sig) is not None else OWN_SHARE for sig in signatures]
        for i, signature in enumerate(signatures):
            result = self.first[signature]
            remaining = deadline - time.monotonic()
            share = max(min(MIN_SHRINK_SECONDS, remaining), remaining * weights[i] / sum(weights[i:]))
            # a crash is seen when the process is gone, which a timer inside the broker may decide
            # long after the schedule that caused it: crashes are reported as found, with the
            # broker's last words, not shrunk against schedules that may not be theirs
            crash = signature.startswith("failure: the broker process exited")
            follows = self.parent(signature)
            shrunk = result
            if shrinking and not self.stopped_after and not crash and share > 0:  # else the budget is spent
                say(f"shrinking {i + 1}/{len(signatures)}: {signature} ({share:.0f} s at most)")
                if follows is not None:
                    # only ever seen after another: does it show without it? Shrinking to a schedule
                    # where it comes first says yes (then it is a divergence of its own); if none is
                    # found within a small budget, it is shown under the one it followed, with the
                    # schedule it was found in
                    alone = shrink(result, run, signature=signature, max_runs=PROMOTION_RUNS,
                                   max_seconds=min(PROMOTION_SECONDS, share), stop=stop)
                    if alone is not result:
                        self.leading.add(signature)
                        follows, shrunk = None, alone
                if follows is None and shrunk is result:
                    # from a schedule it was the first divergence of, kept first; one that is its own
                    # because no state explains it may stay behind others
                    led = self.led.get(signature)
                    shrunk = shrink(led or result, run, signature=signature, max_seconds=share, first=led is not None,
                                    stop=stop)
                    if shrunk is led:
                        shrunk = result
            example = report_module.counterexample(shrunk, target.system, target.text, mutant, profile,
                                                   len(result.schedule.steps), signature)
            example["timers"] = timing.timers
            example["shrunk"] = shrunk is not result
            example["follows"] = follows
            examples.append(example)
        examples = self._in_report_order(examples)
        files = report_module.write_counterexamples(out, examples)
        acknowledged = dict(profile.acknowledged)
        found = shape.with_baseline([report_module.finding(e, self.counts[e["signature"]], self.seeds[e["signature"]],
                                                           files[e["signature"]],
                                                           "acknowledged" if e["signature"] in acknowledged else None)
                                     for e in examples], baseline)
        unit_settings = {k: v for k, v in settings.items() if k not in ("schedules", "interrupted", "failure")}
        summary = shape.envelope(
            checker="conform-broker", system=f"broker:{target.system}", findings=found, done=self.done,
            requested=requested if requested is not None else self.done, unit="schedules",
            settings={**unit_settings, "target": target.text, "mutant": mutant, "timers": timing.timers,
                      "profile": profile.name},
            checked=report_module.checked_lines(self.versions, timing.timers, profile.new_group_coordinator,
                                                settings.get("brokers", 1), settings.get("faults", False),
                                                timing.tolerance_ms, profile.answer_window_ms),
            not_checked=report_module.not_checked_lines(self.failures, self.stopped_after),
            partial=stopped_by is not None or failure is not None, stopped_by=stopped_by, failure=failure)
        summary.update({
            "schedules": self.done, "target": target.text, "mutant": mutant, "timers": timing.timers,
            "crashes": self.crashes + target.crashes, "cut_short_by_a_crash": self.cut_short, "conforming": self.conforming, "diverging": self.diverging,
            "failures": self.failures, "versions": self.versions, "acknowledged": [[sig, why, dict(profile.acknowledged_links).get(sig)] for sig, why in sorted(acknowledged.items())],
            "caps": dict(profile.caps), "caps_why": profile.caps_why, "seconds": round(seconds, 1),
            "latency": latency_table(self.latency),
            "coverage": decisions.coverage(self.decisions, self.decided, static=bool(settings.get("static")),
                                           versions=self.versions, timers=timing.timers,
                                           java_coordinator=profile.new_group_coordinator),
            "stopped_after": self.stopped_after, **{k: settings[k] for k in ("seed", "members", "steps") if k in settings},
        })
        report_module.write(out, summary, examples)
        return summary


def answer_times(trace) -> List[tuple]:
    """(api, ms from request to answer) for every answered request of a schedule's wire trace: a
    broker answers a connection's requests in order (Kafka's SocketServer mutes a channel until its
    request is answered), so the n-th answer on a connection is the n-th request's."""
    from collections import deque

    waiting: Dict[tuple, deque] = {}
    out: List[tuple] = []
    for x in trace:
        if "note" in x:
            continue
        key = (x["member"], x["connection"])
        if x["direction"] == "request":
            waiting.setdefault(key, deque()).append((x["api"], x["t_ms"]))
        elif waiting.get(key):
            api, sent = waiting[key].popleft()
            out.append((api, x["t_ms"] - sent))
    return out


def _percentile(ordered: List[int], q: float) -> int:
    """The nearest-rank percentile of a sorted list."""
    return ordered[min(len(ordered), max(1, math.ceil(q * len(ordered)))) - 1]


def latency_table(latency: Dict[str, List[int]]) -> Dict[str, dict]:
    """Per API: answers, p50, p99 and max in ms (1 ms resolution). JoinGroup and SyncGroup times
    include the time a request was parked waiting for the other members, as the protocol wants."""
    table = {}
    for api in sorted(latency):
        ordered = sorted(latency[api])
        table[api] = {"answers": len(ordered), "p50_ms": _percentile(ordered, 0.50),
                      "p99_ms": _percentile(ordered, 0.99), "max_ms": ordered[-1]}
    return table


def print_summary(summary: dict, as_json: bool, out: str) -> None:
    if as_json:
        print(json.dumps(summary, indent=1))
        return
    distinct = [f for f in summary["findings"] if f["status"] != "fixed"]
    following = sum(1 for f in distinct if f.get("follows"))
    print(f"{summary['system']}: {summary['schedules']} schedules in {summary['seconds']} s: "
          f"{summary['conforming']} conform, {summary['diverging']} diverge, {summary['failures']} broker failures; "
          f"{len(distinct) - following} distinct" + (f" (+{following} only seen after one of them)" if following else ""))
    for f in distinct:
        mark = f" [{f['status']}]" if f["status"] else ""
        indent = "    └ " if f.get("follows") else "  "
        print(f"{indent}{f['count']:>4} × {f['signature']}{mark}\n         {os.path.join(out, f['counterexample'])}")
    for f in summary["findings"]:
        if f["status"] == "fixed":
            print(f"     fixed: {f['signature']}")
    if summary.get("coverage"):
        print(f"coverage: {decisions.headline(summary['coverage'])}")
    if summary.get("latency"):
        print("answer times p50/p99 ms: " + ", ".join(f"{api} {row['p50_ms']}/{row['p99_ms']}"
                                                      for api, row in summary["latency"].items()))
    print(f"report: {out}/index.html (report.md, report.json beside it) — verdict: {shape.headline(summary)}")
