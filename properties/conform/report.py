"""The conformance report: ``report.json``, ``report.md``, ``index.html`` (self-contained, the
campaign report's look) and one counterexample file per distinct divergence, in the ``--out``
directory.

A counterexample file (``"kind": "groupcheck-broker-conformance"``) holds everything needed to read
and to replay it: the system and how it was reached, the (shrunk) schedule, the decoded wire trace
with timestamps, the answers observed and the ones the model allowed, the API versions used, and
the replay command (``groupcheck replay FILE --launch NAME`` or ``--bootstrap HOST:PORT``).
"""

from __future__ import annotations

import html
import json
import os
import re
from typing import Dict, List, Optional

from properties.campaign.report import CSS, svg_bars
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
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write(html_page(summary, examples))
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
    if summary.get("interrupted"):
        lines[-1:-1] = [f"- **PARTIAL: the campaign was interrupted**; the figures cover the {summary['schedules']} "
                        f"schedules of the tasks that finished, which need not be the first seeds of the range"]
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
        if summary.get("fixed"):
            lines += ["Fixed since the baseline (found then, not now): " + "; ".join(summary["fixed"]), ""]
        return "\n".join(lines)
    lines += ["## Divergences", "", "| # | signature | schedules | baseline | shrunk to | file |",
              "|---|---|---|---|---|---|"]
    for i, (entry, example) in enumerate(zip(summary["divergences"], examples), 1):
        lines.append(f"| {i} | {entry['signature']} | {entry['count']} | {_status(entry)} | "
                     f"{len(example['schedule']['steps'])} steps (from {example['steps_before_shrinking']}) | "
                     f"`{entry['file']}` |")
    if summary.get("fixed"):
        lines += ["", "Fixed since the baseline (found then, not now): " + "; ".join(summary["fixed"])]
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


def _status(entry: dict) -> str:
    """new / known (against --baseline), acknowledged (by the profile), or '-'."""
    marks = [entry["baseline"]] if "baseline" in entry else []
    if entry.get("acknowledged"):
        marks.append("acknowledged")
    return ", ".join(marks) or "-"


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _trace_row(x: dict) -> str:
    if "note" in x:
        return (f"<tr><td>{x['t_ms']}</td><td>m{_e(x['member'])}</td><td></td><td colspan=3><i>{_e(x['note'])}</i></td>"
                f"</tr>")
    return (f"<tr><td>{x['t_ms']}</td><td>m{_e(x['member'])}#{_e(x['connection'])}</td><td>{_e(x['direction'])}</td>"
            f"<td>{_e(x['api'])} v{_e(x['version'])}</td><td colspan=2><code>{_e(json.dumps(x['body']))}</code></td></tr>")


def html_page(summary: dict, examples: List[dict]) -> str:
    """The self-contained index.html: the same facts as report.md, in the campaign report's look."""
    new = [e for e in summary["divergences"] if not e.get("acknowledged")]
    verdict_cls = "fail" if summary["verdict"] == "diverges" else "pass"
    rate = summary["schedules"] / summary["seconds"] if summary.get("seconds") else 0.0
    body = [f"<h1>groupcheck broker conformance: {_e(summary['system'])}</h1>",
            f"<p class=sub>target <code>{_e(summary['target'])}</code>"
            + (f", mutant <code>{_e(summary['mutant'])}</code>" if summary.get("mutant") else "") + "</p>"]
    if summary.get("interrupted"):
        body.append(f'<div class="banner partial">PARTIAL: the campaign was interrupted; the figures cover the '
                    f'{summary["schedules"]:,} schedules of the tasks that finished, which need not be the first '
                    f'seeds of the range.</div>')
    if summary.get("stopped_after"):
        body.append(f'<div class="banner partial">The broker stopped accepting connections during schedule '
                    f'{_e(summary["stopped_after"])}; the later schedules were not run.</div>')
    headline = (f"{len(new)} distinct divergence(s) not acknowledged by the profile" if new else
                "every answer in every schedule was one the model allows" if not summary["divergences"] else
                "only divergences the profile acknowledges")
    body.append(f'<div class="banner {verdict_cls}">{_e(summary["verdict"].upper())} — {_e(headline)}</div>')
    figs = [(f"{summary['schedules']:,}", "schedules"), (f"{summary['conforming']:,}", "conforming"),
            (f"{summary['diverging']:,}", "diverging"), (f"{summary['failures']:,}", "broker failures"),
            (f"{len(summary['divergences'])}", "distinct divergences"), (f"{summary.get('crashes', 0)}", "broker crashes"),
            (f"{summary['seconds']:,.1f} s", "time"), (f"{rate:.2f}/s", "schedules per second")]
    body.append('<div class="figs">' + "".join(f'<div class="fig"><b>{_e(v)}</b><span>{_e(k)}</span></div>'
                                               for v, k in figs) + "</div>")
    body.append(f"<p class=muted>Seeds {summary['seed']}–{summary['seed'] + summary['schedules'] - 1}, "
                f"{summary['members']} virtual members, {summary['steps']} steps after the joins, timers "
                f"{'on' if summary['timers'] else 'off'}. Checked: every answer to {_e(_api_list(summary['versions']))} "
                f"against the model's coordinator (model/group.py, model/broker.py), member ids aliased; a schedule "
                f"stops at its first divergence, so later steps of a diverging schedule were not checked. Versions "
                f"used: {_e(', '.join(f'{k} v{v}' for k, v in sorted(summary['versions'].items())) or 'none')}.</p>")
    if summary.get("caps"):
        body.append("<h2>Version caps (profile)</h2><p>" + _e(", ".join(
            f"{k} ≤ v{v}" for k, v in sorted(summary["caps"].items())) + ": " + summary["caps_why"]) + "</p>")
    if summary["acknowledged"]:
        body.append("<h2>Acknowledged divergences (profile)</h2><ul>" + "".join(
            f"<li><code>{_e(sig)}</code>: {_e(why)}</li>" for sig, why in summary["acknowledged"]) + "</ul>")
    body.append("<h2>Divergences</h2>")
    if not examples:
        body.append("<p>None: every answer in every schedule was one the model allows.</p>")
    else:
        body.append('<div class="plot">' + svg_bars([(f"{i}. {e['signature'][:48]}", e["count"])
                                                     for i, e in enumerate(summary["divergences"], 1)]) + "</div>")
        body.append("<table><tr><th>#</th><th>signature</th><th>schedules</th><th>status</th><th>shrunk to</th>"
                    "<th>file</th></tr>" + "".join(
                        f"<tr><td>{i}</td><td><a href='#d{i}'>{_e(entry['signature'])}</a></td><td>{entry['count']}</td>"
                        f"<td>{_e(_status(entry))}</td><td>{len(ex['schedule']['steps'])} steps (from "
                        f"{ex['steps_before_shrinking']})</td><td><code>{_e(entry['file'])}</code></td></tr>"
                        for i, (entry, ex) in enumerate(zip(summary["divergences"], examples), 1)) + "</table>")
    if summary.get("fixed"):
        body.append("<p>Fixed since the baseline (found then, not now): " + "; ".join(
            f"<code>{_e(s)}</code>" for s in summary["fixed"]) + "</p>")
    for i, ex in enumerate(examples, 1):
        allowed = " | ".join("; ".join(a) or "no answer" for a in ex["allowed"]) or "nothing (the broker failed first)"
        body.append(f'<div class="card" id="d{i}"><h3>{i}. {_e(ex["signature"])}</h3><p>{_e(ex["summary"] or "")}</p>'
                    "<p><b>Schedule</b></p><ol>" + "".join(
                        f"<li>m{m} {_e(a)}" + (f" ({_e(v)})" if v else "") + "</li>" for m, a, v in ex["schedule"]["steps"])
                    + f"</ol><p><b>Observed:</b> {_e('; '.join(ex['observed']) or 'no answer')}</p>"
                    f"<p><b>The model allows:</b> {_e(allowed)}</p><p><b>Replay</b></p><pre>{_e(ex['replay'])}</pre>"
                    "<details><summary>Wire trace (" + str(len(ex["trace"])) + " entries)</summary>"
                    "<table><tr><th>ms</th><th>member</th><th>direction</th><th>API</th><th colspan=2>body</th></tr>"
                    + "".join(_trace_row(x) for x in ex["trace"]) + "</table></details></div>")
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            "<meta name=viewport content=\"width=device-width,initial-scale=1\">"
            f"<title>groupcheck broker conformance: {_e(summary['system'])}</title><style>{CSS}</style></head>"
            "<body><main>" + "\n".join(body) + "</main></body></html>\n")
