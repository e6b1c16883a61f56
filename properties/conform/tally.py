"""What a run of many schedules found: counts per verdict, the first result of every distinct
signature, and, at the end, the shrunk counterexamples and the report (:func:`Tally.finish`)."""

from __future__ import annotations

import json
import os
from typing import Dict, List, Optional

from properties import findings as shape
from properties.conform import report as report_module
from properties.conform.run import Result, Timing
from properties.conform.shrink import shrink


class Tally:
    def __init__(self) -> None:
        self.first: Dict[str, Result] = {}
        self.counts: Dict[str, int] = {}
        self.seeds: Dict[str, List[int]] = {}
        self.conforming = self.diverging = self.failures = 0
        self.versions: Dict[str, int] = {}
        self.crashes = 0
        self.stopped_after: Optional[int] = None

    @property
    def done(self) -> int:
        return self.conforming + self.diverging + self.failures

    @property
    def failed(self) -> int:
        return self.diverging + self.failures

    def add(self, result: Result) -> None:
        self.versions.update(dict(result.versions))
        signature = result.signature()
        if signature is None:
            self.conforming += 1
            return
        if result.failure:
            self.failures += 1
        else:
            self.diverging += 1
        self.counts[signature] = self.counts.get(signature, 0) + 1
        self.seeds.setdefault(signature, []).append(result.schedule.seed)
        known = self.first.get(signature)
        if known is None or result.schedule.seed < known.schedule.seed:  # the same one whatever the task order
            self.first[signature] = result

    def merge(self, other: "Tally") -> None:
        """Add a task's tally (a Spark task's) to this one."""
        self.conforming += other.conforming
        self.diverging += other.diverging
        self.failures += other.failures
        self.crashes += other.crashes
        self.versions.update(other.versions)
        for signature, count in other.counts.items():
            self.counts[signature] = self.counts.get(signature, 0) + count
            self.seeds.setdefault(signature, []).extend(other.seeds.get(signature, []))
            mine = self.first.get(signature)
            theirs = other.first[signature]
            if mine is None or theirs.schedule.seed < mine.schedule.seed:
                self.first[signature] = theirs

    def finish(self, run, target, timing: Timing, mutant: Optional[str], settings: dict, out: str,
               seconds: float, shrinking: bool = True, baseline: Optional[dict] = None, requested: Optional[int] = None,
               stopped_by: Optional[str] = None, failure: Optional[str] = None) -> dict:
        """Shrink one counterexample per signature with *run* (re-running against *target*, a
        :class:`properties.conform.target.Broker`), write the report into *out* (the one report
        shape, :mod:`properties.findings`), and return it."""
        profile = target.profile
        examples: List[dict] = []
        for signature, result in sorted(self.first.items(), key=lambda kv: (-self.counts[kv[0]], kv[0])):
            # a crash is seen when the process is gone, which a timer inside the broker may decide
            # long after the schedule that caused it: crashes are reported as found, with the
            # broker's last words, not shrunk against schedules that may not be theirs
            crash = signature.startswith("failure: the broker process exited")
            shrunk = result if not shrinking or self.stopped_after or crash else shrink(result, run)
            example = report_module.counterexample(shrunk, target.system, target.text, mutant, profile,
                                                   len(result.schedule.steps))
            example["timers"] = timing.timers
            example["shrunk"] = shrunk is not result
            examples.append(example)
        files = report_module.write_counterexamples(out, examples)
        acknowledged = dict(profile.acknowledged)
        before = {f["signature"] for f in report_module.baseline_findings(baseline)} if baseline is not None else None
        found = [report_module.finding(e, self.counts[e["signature"]], self.seeds[e["signature"]], files[e["signature"]],
                                       "acknowledged" if e["signature"] in acknowledged else
                                       None if before is None else "known" if e["signature"] in before else "new")
                 for e in examples]
        fixed = sorted(before - set(self.first)) if before is not None else []
        found += [shape.finding(signature=sig, rule=report_module.rule_of(sig), kind=report_module.kind_of(sig),
                                status="fixed", count=0, first_seeds=(), summary="in the baseline, not seen in this run",
                                source=report_module.source_of(sig)) for sig in fixed]
        unit_settings = {k: v for k, v in settings.items() if k not in ("schedules", "interrupted", "failure")}
        summary = shape.envelope(
            checker="conform-broker", system=f"broker:{target.system}", findings=found, done=self.done,
            requested=requested if requested is not None else self.done, unit="schedules",
            settings={**unit_settings, "target": target.text, "mutant": mutant, "timers": timing.timers,
                      "profile": profile.name},
            checked=report_module.checked_lines(self.versions, timing.timers, profile.new_group_coordinator,
                                                settings.get("brokers", 1)),
            not_checked=report_module.not_checked_lines(self.diverging + self.failures, self.stopped_after),
            partial=stopped_by is not None or failure is not None, stopped_by=stopped_by, failure=failure)
        summary.update({
            "schedules": self.done, "target": target.text, "mutant": mutant, "timers": timing.timers,
            "crashes": self.crashes + target.crashes, "conforming": self.conforming, "diverging": self.diverging,
            "failures": self.failures, "versions": self.versions, "acknowledged": sorted(acknowledged.items()),
            "caps": dict(profile.caps), "caps_why": profile.caps_why, "seconds": round(seconds, 1),
            "stopped_after": self.stopped_after, **{k: settings[k] for k in ("seed", "members", "steps") if k in settings},
        })
        report_module.write(out, summary, examples)
        return summary


def print_summary(summary: dict, as_json: bool, out: str) -> None:
    if as_json:
        print(json.dumps(summary, indent=1))
        return
    distinct = [f for f in summary["findings"] if f["status"] != "fixed"]
    print(f"{summary['system']}: {summary['schedules']} schedules in {summary['seconds']} s: "
          f"{summary['conforming']} conform, {summary['diverging']} diverge, {summary['failures']} broker failures; "
          f"{len(distinct)} distinct")
    for f in distinct:
        mark = f" [{f['status']}]" if f["status"] else ""
        print(f"  {f['count']:>4} × {f['signature']}{mark}\n         {os.path.join(out, f['counterexample'])}")
    for f in summary["findings"]:
        if f["status"] == "fixed":
            print(f"     fixed: {f['signature']}")
    print(f"report: {out}/index.html (report.md, report.json beside it) — verdict: {shape.headline(summary)}")
