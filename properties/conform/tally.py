"""What a run of many schedules found: counts per verdict, the first result of every distinct
signature, and, at the end, the shrunk counterexamples and the report (:func:`Tally.finish`)."""

from __future__ import annotations

import json
from typing import Dict, List, Optional

from properties.conform import report as report_module
from properties.conform.run import Profile, Result, Timing
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

    def finish(self, run, target, profile: Profile, timing: Timing, mutant: Optional[str], settings: dict, out: str,
               seconds: float, shrinking: bool = True, baseline: Optional[dict] = None) -> dict:
        """Shrink one counterexample per signature with *run* (re-running against *target*), write
        the report into *out*, and return the summary."""
        examples: List[dict] = []
        for signature, result in sorted(self.first.items(), key=lambda kv: -self.counts[kv[0]]):
            # a crash is seen when the process is gone, which a timer inside the broker may decide
            # long after the schedule that caused it: crashes are reported as found, with the
            # broker's last words, not shrunk against schedules that may not be theirs
            crash = signature.startswith("failure: the broker process exited")
            shrunk = result if not shrinking or self.stopped_after or crash else shrink(result, run)
            example = report_module.counterexample(shrunk, target.system, target.text, mutant, profile,
                                                   len(result.schedule.steps))
            example["timers"] = timing.timers
            examples.append(example)
        acknowledged = dict(profile.acknowledged)
        new = [s for s in self.first if s not in acknowledged]
        summary = dict(settings)
        summary.update({
            "system": target.system, "target": target.text, "mutant": mutant,
            "crashes": self.crashes + target.crashes, "timers": timing.timers,
            "conforming": self.conforming, "diverging": self.diverging, "failures": self.failures,
            "versions": self.versions,
            "divergences": [{"signature": e["signature"], "summary": e["summary"], "count": self.counts[e["signature"]],
                             "seeds": sorted(self.seeds[e["signature"]])[:20],
                             "acknowledged": e["signature"] in acknowledged} for e in examples],
            "acknowledged": sorted(acknowledged.items()), "verdict": "conforms" if not new else "diverges",
            "caps": dict(profile.caps), "caps_why": profile.caps_why,
            "seconds": round(seconds, 1), "stopped_after": self.stopped_after,
        })
        if baseline is not None:
            before = {d["signature"] for d in baseline.get("divergences", [])}
            now = set(self.first)
            for entry in summary["divergences"]:
                entry["baseline"] = "known" if entry["signature"] in before else "new"
            summary["fixed"] = sorted(before - now)
        report_module.write(out, summary, examples)
        return summary


def print_summary(summary: dict, as_json: bool, out: str) -> None:
    if as_json:
        print(json.dumps(summary, indent=1))
        return
    print(f"{summary['system']}: {summary['schedules']} schedules in {summary['seconds']} s: "
          f"{summary['conforming']} conform, {summary['diverging']} diverge, {summary['failures']} broker failures; "
          f"{len(summary['divergences'])} distinct")
    for entry in summary["divergences"]:
        mark = f" [{entry['baseline']}]" if "baseline" in entry else ""
        print(f"  {entry['count']:>4} × {entry['signature']}{mark}\n         {entry['file']}")
    for signature in summary.get("fixed", []):
        print(f"     fixed: {signature}")
    print(f"report: {out}/index.html (report.md, report.json beside it) — verdict: {summary['verdict']}")
