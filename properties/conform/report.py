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
from typing import Dict, List, Optional, Tuple

from properties import findings as shape
from properties.campaign.report import svg_bars
from properties import decisions
from properties.conform.run import Result
from properties.targets import Profile

KIND = "groupcheck-broker-conformance"


def counterexample(result: Result, system: str, target: str, mutant: Optional[str], profile: Profile,
                   original_steps: int, signature: Optional[str] = None) -> dict:
    """The counterexample file of *signature* (default: the result's first) shown by *result*;
    ``divergences`` lists every divergence the schedule showed, in order."""
    signature = signature or result.signature()
    d = result.first_of(signature)
    return {
        "kind": KIND,
        "system": system,
        "target": target,  # "--launch NAME" or "--bootstrap HOST:PORT"
        "mutant": mutant,
        "profile": profile.name,
        "signature": signature,
        "summary": d.summary if d else result.failure,
        "verdict": result.verdict,
        "step": result.step_of(signature),
        "divergences": [{"step": x.step, "signature": x.signature} for x in result.divergences],
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


#: The Kafka source that defines what each judged API must answer (the model's coordinator follows
#: it: model/group.py, model/broker.py), and the protocol reference's section.
API_SOURCES = {
    "FindCoordinator": "KafkaApis.handleFindCoordinatorRequest; docs/protocol.md §2",
    "JoinGroup": "GroupCoordinator.handleJoinGroup, doJoinGroup, onCompleteJoin; docs/protocol.md §1.4-1.6",
    "SyncGroup": "GroupCoordinator.handleSyncGroup, doSyncGroup; docs/protocol.md §1.7",
    "Heartbeat": "GroupCoordinator.handleHeartbeat; docs/protocol.md §1.8",
    "LeaveGroup": "GroupCoordinator.handleLeaveGroup; docs/protocol.md §1.9",
    "OffsetCommit": "GroupCoordinator.handleCommitOffsets, validateOffsetCommit; docs/protocol.md §1.10",
    "OffsetFetch": "GroupCoordinator.handleFetchOffsets; docs/protocol.md §1.13",
    "DescribeGroups": "GroupCoordinator.handleDescribeGroup; docs/protocol.md §1.13",
    "failure": "the Kafka protocol: a broker answers every request it reads, on the connection it came on, in order "
               "(SocketServer, KafkaApis.handle); docs/protocol.md §1.3",
}


def rule_of(signature: str) -> str:
    """The judged API of a divergence (``JoinGroup: ...``), or ``failure``."""
    return signature.split(":", 1)[0]


def kind_of(signature: str) -> str:
    return "failure" if signature.startswith("failure:") else "divergence"


def source_of(signature: str) -> str:
    return API_SOURCES.get(rule_of(signature), "model/group.py (the model's coordinator); docs/protocol.md §1")


def finding(example: dict, count: int, seeds, path: str, status: Optional[str]) -> dict:
    """One divergence (or broker failure) in the one finding shape (:mod:`properties.findings`)."""
    return shape.finding(
        signature=example["signature"], rule=rule_of(example["signature"]), kind=kind_of(example["signature"]),
        status=status, count=count, first_seeds=sorted(seeds)[:20], summary=example["summary"] or "",
        observed=example["observed"], allowed=example["allowed"], source=source_of(example["signature"]),
        events=len(example["schedule"]["steps"]), original_events=example["steps_before_shrinking"],
        minimal=True if example.get("shrunk") else None, counterexample=path, replay=example["replay"],
        follows=example.get("follows"))


def checked_lines(versions: dict, timers: bool, new_group_coordinator: bool = False, brokers: int = 1,
                  faults: bool = False, tolerance_ms: Optional[int] = 250, window_ms: int = 250) -> List[str]:
    rules = ("Kafka 4.x's GroupMetadataManager where it differs from 3.9's GroupCoordinator"
             if new_group_coordinator else "Kafka 3.9's GroupCoordinator")
    lines = [f"every answer to {_api_list(versions)} against the model's coordinator (model/group.py, "
             f"model/broker.py; the rules of {rules}), member ids aliased",
             f"timers on: 2 s session and 1.5 s rebalance timeouts, schedules wait past them, a timer may fire "
             f"within {tolerance_ms} ms of its "
             "deadline" if timers else "timers off: 30 s timeouts, judged deterministically (nothing but a zero "
             "initial delay fires)",
             f"a request unanswered after {window_ms} ms counts as parked (the profile's answer window)",
             "every step of a schedule, also after a divergence: the judge goes on from the model states closest to "
             "the broker's answers (the ids it handed out bound to the model's); a divergence only ever seen after "
             "another is listed under it"]
    if faults:
        lines.append("faults (--faults): the broker's process paused (SIGSTOP) and resumed, what it answers after "
                     "judged as after a wait; connections cut right after a request was written, judged both as read "
                     "and as never read" + ("" if timers else "; a broker with storage (Kafka, a --launch-cmd with "
                     "{dir}) killed and restarted on it, judged as a failover (the group it persisted, the offsets); "
                     "the trace says where a broker keeping nothing was not restarted"))
    if brokers > 1:
        lines.append(f"coordinator failover on {brokers} nodes: once per schedule the node coordinating the group is "
                     "killed (SIGKILL); every answer after it is judged against the group the model loads from its "
                     "last record (model.group.load, onGroupLoaded), committed offsets kept")
    return lines


def not_checked_lines(failures: int, stopped_after: Optional[int]) -> List[str]:
    lines = ["the steps after a broker failure (a closed connection, an undecodable answer: the schedule stops "
             "there)"] if failures else []
    if stopped_after:
        lines.append(f"the schedules after the {stopped_after}th: the broker stopped accepting connections")
    return lines


def write_counterexamples(out: str, examples: List[dict]) -> Dict[str, str]:
    """The counterexample file of each signature in ``out/counterexamples`` (an earlier run's are
    removed: they would pass for this run's); {signature: path relative to *out*}."""
    folder = os.path.join(out, "counterexamples")
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(folder):
        if re.fullmatch(r"\d\d-[a-z0-9-]*\.json", name):
            os.unlink(os.path.join(folder, name))
    files: Dict[str, str] = {}
    for i, example in enumerate(examples, 1):
        relative = os.path.join("counterexamples", f"{i:02d}-{slug(example['signature'])}.json")
        path = os.path.join(out, relative)
        example["replay"] = f"groupcheck replay {path} {example['target']}" + (
            f" --mutant {example['mutant']}" if example.get("mutant") else "")
        with open(path, "w") as f:
            json.dump({k: v for k, v in example.items() if k != "shrunk"}, f, indent=1)
        files[example["signature"]] = relative
    return files


def write(out: str, summary: dict, examples: List[dict]) -> None:
    """Write report.json, report.md and index.html into *out* (the counterexample files are
    :func:`write_counterexamples`')."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(markdown(summary, examples))
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write(html_page(summary, examples))


def _api_list(versions: dict) -> str:
    """The APIs the schedules actually sent, in protocol order: the report names only what it judged."""
    order = ["JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch", "DescribeGroups"]
    used = [api for api in order if api in versions] + sorted(set(versions) - set(order))
    if not used:
        return "no request"
    return used[0] if len(used) == 1 else ", ".join(used[:-1]) + " and " + used[-1]


LATENCY_NOTE = ("From the wire trace: request written to answer read, per API, over every answer of every "
                "schedule, 1 ms resolution. JoinGroup and SyncGroup include the time a request was parked "
                "waiting for the other members (a parked request never answered is not counted).")


COVERAGE_NOTE = ("Each decision is an answer Kafka's coordinator gives (properties/decisions.py), "
                 "counted in the schedules where the broker gave it as the model does, with the group's state "
                 "when the request arrived; a 'timers' decision is one of its timers firing, counted where it "
                 "fired in a model state the broker's answers agreed with, with the state before it fired.")


def _coverage_cells(row: dict) -> Tuple[str, str]:
    if row["schedules"]:
        return str(row["schedules"]), ", ".join(f"{state} {n}" for state, n in row["states"].items())
    if row["unreachable"]:
        return "—", f"not reachable here: {row['unreachable']}"
    return "0", "**not reached**"


def coverage_markdown(rows: List[dict]) -> List[str]:
    if not rows:
        return []
    lines = ["## Coverage: the coordinator's decisions", "", decisions.headline(rows) + ". " + COVERAGE_NOTE, "",
             "| API | answer | schedules | group states / why not | where Kafka decides it |", "|---|---|---:|---|---|"]
    for row in rows:
        count, states = _coverage_cells(row)
        lines.append(f"| {row['api']} | {row['answer']} | {count} | {states} | "
                     f"{row['source'] or '(not in the catalogue)'} |")
    return lines + [""]


def latency_markdown(latency: dict) -> List[str]:
    if not latency:
        return []
    lines = ["## Answer times", "", LATENCY_NOTE, "", "| API | answers | p50 ms | p99 ms | max ms |",
             "|---|---:|---:|---:|---:|"]
    lines += [f"| {api} | {row['answers']} | {row['p50_ms']} | {row['p99_ms']} | {row['max_ms']} |"
              for api, row in latency.items()]
    return lines + [""]


def markdown(summary: dict, examples: List[dict]) -> str:
    lines = shape.markdown_head(summary, f"Broker conformance: {summary['system']}")
    lines += [f"- target: `{summary['target']}`" + (f", mutant `{summary['mutant']}`" if summary.get("mutant") else ""),
              f"- schedules: {summary['schedules']} (seeds {summary['seed']}..{summary['seed'] + summary['schedules'] - 1}, "
              f"{summary['members']} members, {summary['steps']} steps after the joins), timers "
              f"{'on' if summary['timers'] else 'off'}",
              f"- conforming schedules: {summary['conforming']}; diverging: {summary['diverging']}; "
              f"broker failures: {summary['failures']}",
              f"- versions used: {', '.join(f'{k} v{v}' for k, v in sorted(summary['versions'].items())) or 'none'}", ""]
    if summary.get("partial"):
        lines[-1:-1] = [f"- **PARTIAL: stopped by {summary.get('stopped_by') or 'a failed task'}**; the figures cover the "
                        f"{summary['schedules']} schedules that finished, which need not be the first seeds of the range"]
    if summary.get("crashes"):
        lines[-1:-1] = [f"- **the broker process crashed {summary['crashes']} time(s)**; it was started again each time"
                        + (f"; {summary['cut_short_by_a_crash']} schedule(s) under way on other threads were cut "
                           "short by a crash" if summary.get("cut_short_by_a_crash") else "")]
    if summary.get("stopped_after"):
        lines[-1:-1] = [f"- **the broker stopped accepting connections during schedule {summary['stopped_after']}**; "
                        f"the later schedules were not run"]
    lines += coverage_markdown(summary.get("coverage") or [])
    lines += latency_markdown(summary.get("latency") or {})
    if summary.get("caps"):
        lines += ["## Version caps (profile)", "",
                  ", ".join(f"{k} ≤ v{v}" for k, v in sorted(summary["caps"].items())) + ": " + summary["caps_why"], ""]
    if summary["acknowledged"]:
        lines += ["## Acknowledged divergences (profile)", ""]
        lines += [f"- {sig}: {why}" + (f" ({link})" if link else "") for sig, why, *rest in summary["acknowledged"]
                  for link in [rest[0] if rest else None]]
        lines.append("")
    if not examples:
        lines += ["No divergence: every answer in every schedule was one the model allows.", ""]
        return "\n".join(lines)
    for i, example in enumerate(examples, 1):
        lines += ["", f"### {i}. {example['signature']}", ""]
        if example.get("follows"):
            lines += [f"*Only seen after* `{example['follows']}` *(it may follow from that one; fix that first)*", ""]
        if len(example.get("divergences", ())) > 1:
            lines += ["Every divergence of this schedule: " + "; ".join(
                f"step {x['step']}: {x['signature']}" for x in example["divergences"]), ""]
        lines += [example["summary"] or "", "",
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
    rate = summary["schedules"] / summary["seconds"] if summary.get("seconds") else 0.0
    body = shape.html_head(summary, f"groupcheck broker conformance: {summary['system']}")
    body.insert(1, f"<p class=sub>target <code>{_e(summary['target'])}</code>"
                   + (f", mutant <code>{_e(summary['mutant'])}</code>" if summary.get("mutant") else "") + "</p>")
    if summary.get("stopped_after"):
        body.append(f'<div class="banner partial">The broker stopped accepting connections during schedule '
                    f'{_e(summary["stopped_after"])}; the later schedules were not run.</div>')
    distinct = [f for f in summary["findings"] if f["status"] != "fixed"]
    figs = [(f"{summary['schedules']:,}", "schedules"), (f"{summary['conforming']:,}", "conforming"),
            (f"{summary['diverging']:,}", "diverging"), (f"{summary['failures']:,}", "broker failures"),
            (f"{len(distinct)}", "distinct divergences"), (f"{summary.get('crashes', 0)}", "broker crashes"),
            (f"{summary['seconds']:,.1f} s", "time"), (f"{rate:.2f}/s", "schedules per second")]
    body.append('<div class="figs">' + "".join(f'<div class="fig"><b>{_e(v)}</b><span>{_e(k)}</span></div>'
                                               for v, k in figs) + "</div>")
    body.append(f"<p class=muted>Seeds {summary['seed']}–{summary['seed'] + summary['schedules'] - 1}, "
                f"{summary['members']} virtual members, {summary['steps']} steps after the joins, timers "
                f"{'on' if summary['timers'] else 'off'}. Versions used: "
                f"{_e(', '.join(f'{k} v{v}' for k, v in sorted(summary['versions'].items())) or 'none')}.</p>")
    if distinct:
        body.append('<div class="plot">' + svg_bars([(f"{i}. {f['signature'][:48]}", f["count"])
                                                     for i, f in enumerate(distinct, 1)]) + "</div>")
    if summary.get("coverage"):
        rows = summary["coverage"]
        body.append("<h2>Coverage: the coordinator's decisions</h2><p class=muted>" + _e(decisions.headline(rows))
                    + ". " + _e(COVERAGE_NOTE) + "</p><table><tr><th>API</th>"
                    "<th>answer</th><th>schedules</th><th>group states / why not</th><th>source</th></tr>" + "".join(
                        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>".format(
                            _e(r["api"]), _e(r["answer"]), *map(_e, _coverage_cells(r)),
                            _e(r["source"] or "(not in the catalogue)")) for r in rows) + "</table>")
    if summary.get("latency"):
        body.append("<h2>Answer times</h2><p class=muted>" + _e(LATENCY_NOTE) + "</p><table><tr><th>API</th>"
                    "<th>answers</th><th>p50 ms</th><th>p99 ms</th><th>max ms</th></tr>" + "".join(
                        f"<tr><td>{_e(api)}</td><td>{row['answers']}</td><td>{row['p50_ms']}</td>"
                        f"<td>{row['p99_ms']}</td><td>{row['max_ms']}</td></tr>"
                        for api, row in summary["latency"].items()) + "</table>")
    if summary.get("caps"):
        body.append("<h2>Version caps (profile)</h2><p>" + _e(", ".join(
            f"{k} ≤ v{v}" for k, v in sorted(summary["caps"].items())) + ": " + summary["caps_why"]) + "</p>")
    if summary["acknowledged"]:
        body.append("<h2>Acknowledged divergences (profile)</h2><ul>" + "".join(
            f"<li><code>{_e(sig)}</code>: {_e(why)}" + (f' (<a href="{_e(rest[0])}">{_e(rest[0])}</a>)' if rest and rest[0]
                                                         else "") + "</li>"
            for sig, why, *rest in summary["acknowledged"]) + "</ul>")
    body.append("<h2>Divergences</h2>")
    if not examples:
        body.append("<p>None: every answer in every schedule was one the model allows.</p>")
    for i, ex in enumerate(examples, 1):
        allowed = " | ".join("; ".join(a) or "no answer" for a in ex["allowed"]) or "nothing (the broker failed first)"
        follows = (f'<p class=muted>Only seen after <code>{_e(ex["follows"])}</code> (it may follow from that one; '
                   'fix that first)</p>') if ex.get("follows") else ""
        every = ("<p class=muted>Every divergence of this schedule: " + _e("; ".join(
            f"step {x['step']}: {x['signature']}" for x in ex["divergences"])) + "</p>") \
            if len(ex.get("divergences", ())) > 1 else ""
        body.append(f'<div class="card" id="d{i}"><h3>{i}. {_e(ex["signature"])}</h3>{follows}{every}'
                    f'<p>{_e(ex["summary"] or "")}</p>'
                    "<p><b>Schedule</b></p><ol>" + "".join(
                        f"<li>m{m} {_e(a)}" + (f" ({_e(v)})" if v else "") + "</li>" for m, a, v in ex["schedule"]["steps"])
                    + f"</ol><p><b>Observed:</b> {_e('; '.join(ex['observed']) or 'no answer')}</p>"
                    f"<p><b>The model allows:</b> {_e(allowed)}</p><p><b>Replay</b></p><pre>{_e(ex['replay'])}</pre>"
                    "<details><summary>Wire trace (" + str(len(ex["trace"])) + " entries)</summary>"
                    "<table><tr><th>ms</th><th>member</th><th>direction</th><th>API</th><th colspan=2>body</th></tr>"
                    + "".join(_trace_row(x) for x in ex["trace"]) + "</table></details></div>")
    return shape.page(f"groupcheck broker conformance: {summary['system']}", body)
