"""One result shape for every checker (issue 34): a verdict, and findings with the same fields.

The simulation campaign (``results.json``), broker conformance and client conformance
(``report.json``) — in this process or as a Spark campaign — all write a document that opens with
the same *envelope* (:func:`envelope`)::

    schema       "groupcheck-report/1": this shape, versioned (docs/report.schema.json)
    checker      "campaign" | "conform-broker" | "conform-client"
    system       what was checked, as --system names it: "impl", "broker:tansu", "client:aiokafka"
    verdict      "pass" | "fail" | "inconclusive" (nothing was checked to the end: never "pass")
    partial      true when not every requested run ran (a signal, a failed task)
    stopped_by   the signal that stopped it ("SIGTERM"), or null
    failure      the first error line of a task that failed for good, or null
    tool         groupcheck's version, git commit and the code's digest (properties.provenance)
    settings     every setting the run used
    checked      runs requested and done, their unit, and what was and was not checked (lines)
    findings     the findings, below

and every finding has these fields (:func:`finding`)::

    signature        a stable name: the same bug gives the same signature in every run
    rule             the property or rule broken (a catalogue property, a judged API, a client rule)
    kind             always | eventually | sometimes (campaign) | divergence | failure (broker) | rule (client)
    status           null | "new" | "known" (a --baseline had it) | "fixed" (the baseline had it, this run not)
                     | "acknowledged" (the system's profile lists it, with a reason)
    count            how many runs showed it
    first_seeds      the first seeds that show it (replay any of them)
    summary          one line: what went wrong
    observed         what the system did
    allowed          what the model allows instead (null where the rule says it in words: see source)
    source           the Kafka source that defines the rule (file and method, a KIP, a ticket), and
                     the protocol reference's section (docs/protocol.md)
    shrunk           {events, original_events, minimal, reproduced}: the counterexample's size
                     before and after shrinking, whether it is locally minimal and came back on a re-run
    counterexample   the replayable counterexample file (relative to the report), or null
    replay           the one command that replays it
    follows          null, or the signature of an earlier finding this one was only seen after (broker
                     conformance judges on past a divergence; what it finds next may only follow from
                     it): shown under that finding, still counted against the verdict

A checker adds its own sections after these keys (the campaign's properties table and coverage,
the broker's API versions, the client's notes), and its Markdown and HTML reports open with the
shared :func:`markdown_head` / :func:`html_head`: the verdict, the findings, what was checked.
"""

from __future__ import annotations

import html
import json
from typing import Iterable, List, Optional

SCHEMA = "groupcheck-report/1"
CHECKERS = ("campaign", "conform-broker", "conform-client")
VERDICTS = ("pass", "fail", "inconclusive")
STATUSES = (None, "new", "known", "fixed", "acknowledged")
KINDS = ("always", "eventually", "sometimes", "divergence", "failure", "rule")
FIELDS = ("signature", "rule", "kind", "status", "count", "first_seeds", "summary", "observed", "allowed", "source",
          "shrunk", "counterexample", "replay", "follows")
ENVELOPE = ("schema", "checker", "system", "verdict", "partial", "stopped_by", "failure", "tool", "settings",
            "checked", "findings")


def finding(*, signature: str, rule: str, kind: str, count: int, first_seeds: Iterable[int], summary: str,
            observed=None, allowed=None, source: Optional[str] = None, status: Optional[str] = None,
            events: Optional[int] = None, original_events: Optional[int] = None, minimal: Optional[bool] = None,
            reproduced: Optional[bool] = None, counterexample: Optional[str] = None,
            replay: Optional[str] = None, follows: Optional[str] = None) -> dict:
    """One finding, every field present (see the module doc); ValueError for a kind or status
    that is not one of :data:`KINDS` / :data:`STATUSES` (a checker's bug, not the user's)."""
    if kind not in KINDS:
        raise ValueError(f"finding kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if status not in STATUSES:
        raise ValueError(f"finding status must be one of {STATUSES}, got {status!r}")
    return {"signature": signature, "rule": rule, "kind": kind, "status": status, "count": int(count),
            "first_seeds": sorted(int(s) for s in first_seeds), "summary": summary, "observed": observed,
            "allowed": allowed, "source": source,
            "shrunk": {"events": events, "original_events": original_events, "minimal": minimal,
                       "reproduced": reproduced},
            "counterexample": counterexample, "replay": replay, "follows": follows}


def load_baseline(path: Optional[str], option: str = "--baseline") -> Optional[dict]:
    """An earlier report (``--baseline FILE``) to compare a run with, or None without one; a file
    that is missing, not JSON or without a findings list is one UsageError naming *option*."""
    if not path:
        return None
    from properties.errors import UsageError

    try:
        with open(path, encoding="utf-8") as f:
            baseline = json.load(f)
        if not isinstance(baseline, dict) or not isinstance(baseline.get("findings", baseline.get("divergences")), list):
            raise ValueError("no findings list")
    except FileNotFoundError:
        raise UsageError(f"{option} {path}: no such file") from None
    except (OSError, ValueError) as e:
        raise UsageError(f"{option} {path}: not a groupcheck report.json ({e})") from None
    return baseline


def with_baseline(found: List[dict], baseline: Optional[dict]) -> List[dict]:
    """*found* compared with an earlier report: each finding not acknowledged marked ``known`` (the
    baseline had it) or ``new``, and every baseline finding this run did not show added as
    ``fixed`` (count 0). Without a baseline, *found* unchanged."""
    if baseline is None:
        return found
    before = {f["signature"]: f for f in baseline.get("findings", baseline.get("divergences", []))
              if isinstance(f, dict) and f.get("signature") and f.get("status") != "fixed"}
    marked = [f if f["status"] == "acknowledged" else {**f, "status": "known" if f["signature"] in before else "new"}
              for f in found]
    seen = {f["signature"] for f in found}
    for signature in sorted(set(before) - seen):
        old = before[signature]
        kind = old.get("kind") if old.get("kind") in KINDS else ("failure" if signature.startswith("failure:")
                                                                 else "divergence")
        marked.append(finding(signature=signature, rule=old.get("rule") or signature.split(":", 1)[0], kind=kind,
                              status="fixed", count=0, first_seeds=(), summary="in the baseline, not seen in this run",
                              source=old.get("source")))
    return marked


def blocking(f: dict) -> bool:
    """Whether a finding fails the verdict: an always property, a divergence, a failure or a
    client rule that is not fixed and not acknowledged by the system's profile (eventually and
    sometimes findings are shown, not failed on)."""
    return f["kind"] not in ("eventually", "sometimes") and f["status"] not in ("fixed", "acknowledged")


def verdict_of(findings: List[dict], done: int) -> str:
    """``inconclusive`` when no run finished (nothing was checked: never ``pass``), ``fail`` when a
    finding is :func:`blocking`, else ``pass``."""
    if any(blocking(f) for f in findings):
        return "fail"
    return "pass" if done > 0 else "inconclusive"


def exit_status(doc: dict) -> int:
    """A checker's exit status for its report: 0 when it passed; 1 when it failed, or when nothing
    was checked (an inconclusive run is not a success a CI should go on from)."""
    return 0 if doc["verdict"] == "pass" else 1


def envelope(*, checker: str, system: str, findings: List[dict], done: int, requested: int, unit: str,
             settings: dict, checked: List[str], not_checked: List[str], partial: bool = False,
             stopped_by: Optional[str] = None, failure: Optional[str] = None, verdict: Optional[str] = None) -> dict:
    """The keys every report opens with (see the module doc); the verdict from the findings unless
    given."""
    from properties.provenance import provenance

    if checker not in CHECKERS:
        raise ValueError(f"checker must be one of {', '.join(CHECKERS)}, got {checker!r}")
    return {
        "schema": SCHEMA, "checker": checker, "system": system,
        "verdict": verdict or verdict_of(findings, done), "partial": bool(partial), "stopped_by": stopped_by,
        "failure": failure, "tool": provenance(), "settings": settings,
        "checked": {"unit": unit, "requested": requested, "done": done, "what": list(checked),
                    "not": list(not_checked)},
        "findings": findings,
    }


#: One look for every report's page.
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1d2330;margin:0;background:#f5f6f8}
main{max-width:1180px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:34px 0 10px;border-bottom:1px solid #d8dce3;padding-bottom:4px}
h3{font-size:15px;margin:0 0 6px}
.sub{color:#5b6475;margin:0 0 16px}
.banner{padding:12px 16px;border-radius:6px;font-weight:600;margin:10px 0 18px}
.pass{background:#e3f4e8;color:#17602e;border:1px solid #a7d8b6}.fail{background:#fbe5e5;color:#8a1c1c;border:1px solid #eab0b0}
.partial,.inconclusive{background:#fff4d6;color:#7a5600;border:1px solid #ecd38a}
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px}
.fig{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:8px 12px}.fig b{display:block;font-size:20px}
.fig span{color:#5b6475;font-size:12px}.fig b.t{font-size:15px}
table{border-collapse:collapse;background:#fff;font-size:13px}
th,td{border:1px solid #dde1e8;padding:4px 8px;text-align:left;vertical-align:top}th{background:#eef0f4}
.badge{display:inline-block;padding:1px 7px;border-radius:9px;font-size:12px;font-weight:600}
.b-held,.b-reached{background:#e3f4e8;color:#17602e}.b-violated{background:#fbe5e5;color:#8a1c1c}
.b-never,.b-not{background:#fff4d6;color:#7a5600}.b-new{background:#fbe5e5;color:#8a1c1c}.b-known{background:#e8ecf5;color:#33415c}
.b-fixed{background:#e3f4e8;color:#17602e}.b-partly{background:#e8f1e0;color:#4a6a1c}
.stmt{display:block;color:#5b6475;font-size:12px;max-width:560px;white-space:normal}
.tl tr.elided td{background:#f5f6f8;color:#5b6475;font-style:italic}
.plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:14px;align-items:start}
.plot{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:10px}
.plot h3{font-size:13px;color:#33415c}
.card{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:14px 16px;margin:0 0 18px}
pre{background:#111827;color:#e5e7eb;padding:10px 12px;border-radius:5px;overflow:auto;font-size:12px;line-height:1.4}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.tl td{font-size:12px;white-space:nowrap}.tl td.ev{background:#eef4ff;white-space:normal;min-width:150px}
.tl .n{color:#5b6475;font-size:11px;display:block;white-space:normal}
.tl td.st{color:#7b8494}.tl td.ch{color:#1d2330;font-weight:600;background:#fffbe6}
.tl tr.failrow td{border-top:2px solid #c62828;border-bottom:2px solid #c62828}.tl tr.failrow td.ev{background:#fbe5e5}
.diff td.d{background:#fbe5e5;font-weight:600}
details summary{cursor:pointer;color:#33415c;font-weight:600;margin:8px 0}
.gaps li{margin:2px 0}
.muted{color:#5b6475}
"""


def page(title: str, body: List[str]) -> str:
    """A self-contained HTML page (inline CSS, no script, no external asset: it works offline)."""
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            "<meta name=viewport content=\"width=device-width,initial-scale=1\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body><main>"
            + "\n".join(body) + "</main></body></html>\n")


# --------------------------------------------------------------------------------------------------
# the shared head of every Markdown and HTML report
# --------------------------------------------------------------------------------------------------

def headline(doc: dict) -> str:
    """``FAIL``, ``PASS`` or ``INCONCLUSIVE``, with PARTIAL and why."""
    word = doc["verdict"].upper()
    if doc.get("failure"):
        return f"{word} (PARTIAL: a task failed: {doc['failure']})"
    if doc.get("partial"):
        return f"{word} (PARTIAL: stopped by {doc.get('stopped_by') or 'an interrupt'})"
    return word


def _status(f: dict) -> str:
    return f" [{f['status']}]" if f.get("status") else ""


def _shrunk(f: dict) -> str:
    s = f["shrunk"]
    if s["events"] is None:
        return ""
    before = f" of {s['original_events']}" if s.get("original_events") not in (None, s["events"]) else ""
    again = {True: ", came back on a re-run", False: ", intermittent: not on a re-run", None: ""}[s.get("reproduced")]
    return f"{s['events']}{before}{again}"


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_head(doc: dict, title: str) -> List[str]:
    """The opening of every Markdown report: title, verdict, findings, what was checked."""
    c = doc["checked"]
    lines = [f"# {title}", "", f"**Verdict: {headline(doc)}.** {c['done']:,} of {c['requested']:,} {c['unit']} "
             f"of {doc['system']} ran to the end; {len([f for f in doc['findings'] if f['status'] != 'fixed'])} "
             "findings.", ""]
    if doc["verdict"] == "inconclusive":
        lines += ["Nothing was checked to the end, so nothing is claimed to hold.", ""]
    findings = [f for f in doc["findings"] if f["status"] != "fixed"]
    fixed = [f["signature"] for f in doc["findings"] if f["status"] == "fixed"]
    if findings:
        lines += ["| finding | kind | runs | first seeds | shrunk to | source | replay |", "|---|---|---|---|---|---|---|"]
        for f in findings:
            lines.append(f"| `{_cell(f['signature'])}`{_status(f)}: {_cell(f['summary'])} | {f['kind']} | {f['count']:,} | "
                         f"{', '.join(map(str, f['first_seeds'][:5]))} | {_shrunk(f)} | {_cell(f['source'] or '')} | "
                         + (f"`{_cell(f['replay'])}`" if f.get("replay") else "") + " |")
        lines.append("")
    if fixed:
        lines += ["Fixed since the baseline (found then, not now): " + "; ".join(f"`{_cell(x)}`" for x in fixed), ""]
    lines += ["What was checked:", ""] + [f"- {line}" for line in c["what"]]
    if c["not"]:
        lines += ["", "Not checked:", ""] + [f"- {line}" for line in c["not"]]
    tool = doc.get("tool") or {}
    lines += ["", f"groupcheck {tool.get('version', '?')} at {tool.get('commit') or 'an unknown commit'}"
              + (" (with uncommitted changes)" if tool.get("dirty") else "") + f"; report schema {doc['schema']}.", ""]
    return lines


def html_head(doc: dict, title: str) -> List[str]:
    """The opening of every HTML report (inside ``<body>``): the verdict banner, the findings
    table, what was checked. The page's CSS names the classes (``banner pass|fail|inconclusive``)."""
    e = html.escape
    c = doc["checked"]
    cls = {"pass": "pass", "fail": "fail", "inconclusive": "partial"}[doc["verdict"]]
    out = [f"<h1>{e(title)}</h1>",
           f'<div class="banner {cls}">{e(headline(doc))} — {c["done"]:,} of {c["requested"]:,} {e(c["unit"])} of '
           f'{e(doc["system"])} ran to the end</div>']
    if doc["verdict"] == "inconclusive":
        out.append("<p>Nothing was checked to the end, so nothing is claimed to hold.</p>")
    findings = [f for f in doc["findings"] if f["status"] != "fixed"]
    fixed = [f["signature"] for f in doc["findings"] if f["status"] == "fixed"]
    if findings:
        out.append("<h2>Findings</h2><table><tr><th>finding</th><th>kind</th><th>runs</th><th>first seeds</th>"
                   "<th>shrunk to</th><th>source</th><th>replay</th></tr>")
        for f in findings:
            out.append(f"<tr><td><code>{e(f['signature'])}</code>{e(_status(f))}<br>{e(f['summary'])}</td>"
                       f"<td>{e(f['kind'])}</td><td>{f['count']:,}</td>"
                       f"<td>{e(', '.join(map(str, f['first_seeds'][:5])))}</td><td>{e(_shrunk(f))}</td>"
                       f"<td>{e(f['source'] or '')}</td><td><code>{e(f.get('replay') or '')}</code></td></tr>")
        out.append("</table>")
    if fixed:
        out.append("<p>Fixed since the baseline (found then, not now): "
                   + "; ".join(f"<code>{e(x)}</code>" for x in fixed) + "</p>")
    out.append("<h2>What was checked</h2><ul>" + "".join(f"<li>{e(line)}</li>" for line in c["what"]) + "</ul>")
    if c["not"]:
        out.append("<h3>Not checked</h3><ul>" + "".join(f"<li>{e(line)}</li>" for line in c["not"]) + "</ul>")
    return out
