"""The conformance report: ``report.json``, ``report.md`` and one counterexample file per distinct
divergence, in the ``--out`` directory.

A counterexample file (``"kind": "groupcheck-broker-conformance"``) holds everything needed to read
and to replay it: the system and how it was reached, the (shrunk) schedule, the decoded wire trace
with timestamps, the answers observed and the ones the model allowed, the API versions used, and
the replay command (``groupcheck replay FILE --launch NAME`` or ``--bootstrap HOST:PORT``).
"""

from __future__ import annotations

import json
import os
import re
from typing import Dict, List, Optional

from properties.conform.run import Profile, Result

KIND = "groupcheck-broker-conformance"


def counterexample(result: Result, system: str, target: str, mutant: Optional[str], profile: Profile,
                   original_steps: int) -> dict:
    d = result.divergence
    return {
        "kind": KIND,
        "system": system,
        "target": target,  # "--launch NAME" or "--bootstrap HOST:PORT"
        "mutant": mutant,
        "profile": profile.name,
        "signature": result.signature(),
        "summary": result.failure or (d.summary if d else None),
        "verdict": result.verdict,
        "step": result.steps_run,
        "steps_before_shrinking": original_steps,
        "observed": list(d.observed) if d else [],
        "allowed": [list(a) for a in d.allowed] if d else [],
        "schedule": result.schedule.to_json(),
        "group_id": result.group_id,
        "versions": dict(result.versions),
        "trace": list(result.trace),
    }


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "divergence"


def write(out: str, summary: dict, examples: List[dict]) -> Dict[str, str]:
    """Write the report into directory *out* (created); the counterexample file of each signature."""
    folder = os.path.join(out, "counterexamples")
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(folder):  # an earlier run's files would pass for this run's
        if re.fullmatch(r"\d\d-[a-z0-9-]*\.json", name):
            os.unlink(os.path.join(folder, name))
    files: Dict[str, str] = {}
    for i, example in enumerate(examples, 1):
        path = os.path.join(out, "counterexamples", f"{i:02d}-{slug(example['signature'])}.json")
        example["replay"] = f"groupcheck replay {path} {example['target']}" + (
            f" --mutant {example['mutant']}" if example.get("mutant") else "")
        with open(path, "w") as f:
            json.dump(example, f, indent=1)
        files[example["signature"]] = path
    for entry in summary["divergences"]:
        entry["file"] = files.get(entry["signature"])
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(markdown(summary, examples))
    return files


def _api_list(versions: dict) -> str:
    """The APIs the schedules actually sent, in protocol order: the report names only what it judged."""
    order = ["JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch", "DescribeGroups"]
    used = [api for api in order if api in versions] + sorted(set(versions) - set(order))
    if not used:
        return "no request"
    return used[0] if len(used) == 1 else ", ".join(used[:-1]) + " and " + used[-1]


def markdown(summary: dict, examples: List[dict]) -> str:
    lines = [f"# Broker conformance: {summary['system']}", "",
             f"- target: `{summary['target']}`" + (f", mutant `{summary['mutant']}`" if summary.get("mutant") else ""),
             f"- schedules: {summary['schedules']} (seeds {summary['seed']}..{summary['seed'] + summary['schedules'] - 1}, "
             f"{summary['members']} members, {summary['steps']} steps after the joins), timers "
             f"{'on' if summary['timers'] else 'off'}",
             f"- checked: every answer to {_api_list(summary['versions'])} against the "
             f"model's coordinator (model/group.py, model/broker.py), member ids aliased; a schedule stops at its "
             f"first divergence, so later steps of a diverging schedule were not checked",
             f"- conforming schedules: {summary['conforming']}; diverging: {summary['diverging']}; "
             f"broker failures: {summary['failures']}",
             f"- versions used: {', '.join(f'{k} v{v}' for k, v in sorted(summary['versions'].items())) or 'none'}",
             f"- verdict: **{summary['verdict']}**", ""]
    if summary.get("crashes"):
        lines[-1:-1] = [f"- **the broker process crashed {summary['crashes']} time(s)**; it was started again each time"]
    if summary.get("stopped_after"):
        lines[-1:-1] = [f"- **the broker stopped accepting connections during schedule {summary['stopped_after']}**; "
                        f"the later schedules were not run"]
    if summary.get("caps"):
        lines += ["## Version caps (profile)", "",
                  ", ".join(f"{k} ≤ v{v}" for k, v in sorted(summary["caps"].items())) + ": " + summary["caps_why"], ""]
    if summary["acknowledged"]:
        lines += ["## Acknowledged divergences (profile)", ""]
        lines += [f"- {sig}: {why}" for sig, why in summary["acknowledged"]]
        lines.append("")
    if not examples:
        lines += ["No divergence: every answer in every schedule was one the model allows.", ""]
        return "\n".join(lines)
    lines += ["## Divergences", "", "| # | signature | schedules | shrunk to | file |", "|---|---|---|---|---|"]
    for i, (entry, example) in enumerate(zip(summary["divergences"], examples), 1):
        lines.append(f"| {i} | {entry['signature']} | {entry['count']} | {len(example['schedule']['steps'])} steps "
                     f"(from {example['steps_before_shrinking']}) | `{entry['file']}` |")
    for i, example in enumerate(examples, 1):
        lines += ["", f"### {i}. {example['signature']}", "", example["summary"] or "", "",
                  "Schedule: " + "; ".join(f"m{m} {a}" + (f" ({v})" if v else "")
                                          for m, a, v in example["schedule"]["steps"]), "",
                  "Observed: " + ("; ".join(example["observed"]) or "no answer"), "",
                  "The model allows: " + (" | ".join("; ".join(a) or "no answer" for a in example["allowed"])
                                          or "nothing (the broker failed first)"), "",
                  f"Replay: `{example['replay']}`", "", "Wire trace:", "", "```"]
        for x in example["trace"]:
            if "note" in x:
                lines.append(f"{x['t_ms']:>6} ms  m{x['member']}  {x['note']}")
            else:
                lines.append(f"{x['t_ms']:>6} ms  m{x['member']}#{x['connection']} {x['direction'][:3]} "
                             f"{x['api']} v{x['version']} {json.dumps(x['body'])[:300]}")
        lines.append("```")
    return "\n".join(lines) + "\n"
