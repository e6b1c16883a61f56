"""The campaign report: ``results.json``, ``summary.md``, ``index.html``, counterexample files and
the per-interleaving rows.

* ``results.json`` is the machine-readable record: the shape every checker's report has
  (:mod:`properties.findings`, schema ``groupcheck-report/1``: a verdict and findings) and the
  campaign's own sections after it; everything else is rendered from it and from the
  counterexample documents, so the files never disagree.
* ``index.html`` is self-contained: inline CSS and inline SVG plots, no script, no external asset,
  so it works offline, attached to a ticket or opened from a CI artifact.
* ``interleavings.jsonl.gz`` has one JSON object per interleaving (seed, events, final generation,
  and for a failure its property, signature and failing step), in the order the campaign's tasks
  finished (the campaign streams it; :func:`write` writes the rest); Spark SQL reads it with
  ``spark.read.json(path)``.

The report opens with the verdict and the findings; per finding it then shows the shrunk schedule as a per-member timeline (one column per
consumer, one for time and brokers; the event in the column of the member it concerns and every
member's state after it), the model-versus-implementation difference at the failing step, the
replay command, and a ready-to-paste pytest regression test.
"""

from __future__ import annotations

import html
import json
from datetime import datetime, timezone
from pathlib import Path

from model.config import settings_of
from properties.campaign.counterexample import config_from_dict, write as write_counterexample
from properties.campaign.timeline import TIMELINE_ROWS
from properties.catalogue import ALWAYS, BY_NAME, CATALOGUE, EVENTUALLY, EVENTUALLY_ORDER, SOMETIMES
from properties.coverage import summarise
from properties.kip848.campaign import markdown as kip848_markdown, section as kip848_section
from properties import findings as shape
from properties.provenance import provenance

ROOT = Path(__file__).resolve().parents[2]  # the project checkout (reports/ beside the packages)
FORMAT = "groupcheck-campaign"  # the format of results.json before the one report shape (read by --baseline, --force)
# world: swarm regimes; guided: a guided search's [interleaving, parent, reseed points, steps] (None: plain)
ROW_FIELDS = ("seed", "events", "generation", "property", "signature", "failing_step", "world", "guided")


def kind_of(property_name: str) -> str:
    """always / eventually / sometimes; the differential property (impl-matches-model) is always."""
    prop = BY_NAME.get(property_name)
    return prop.kind if prop is not None else ALWAYS


# --------------------------------------------------------------------------------------------------
# results.json
# --------------------------------------------------------------------------------------------------

def proofs_table() -> dict | None:
    """The latest z3 proof run (reports/proofs-latest.json), if there is one: its rows, when and
    from which commit it was proved, and whether that is the code this campaign ran (``current``;
    False for a table of other code or of a tree with local changes, None when unknown)."""
    here = provenance()
    for path in (Path("reports") / "proofs-latest.json", ROOT / "reports" / "proofs-latest.json"):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("rows"), list):
            tool = doc.get("tool") if isinstance(doc.get("tool"), dict) else {}
            commit = tool.get("commit")
            current = None if here["commit"] is None else (
                commit == here["commit"] and not tool.get("dirty") and not here["dirty"])
            return {"path": str(path), "rows": doc["rows"], "generated_at": doc.get("generated_at"),
                    "commit": commit, "dirty": tool.get("dirty"), "complete": doc.get("complete", True),
                    "current": current}
    return None


def proofs_provenance(proofs: dict) -> str:
    """One sentence: when and at which commit the table was proved, and whether it is this code's."""
    when = proofs.get("generated_at") or "an unknown date"
    commit = proofs.get("commit")
    at = f"commit {commit[:12]}" + (" with local changes" if proofs.get("dirty") else "") if commit else "an unknown commit"
    if proofs.get("current") is True:
        return f"Proved {when} at {at}: the code this campaign ran."
    if proofs.get("current") is False:
        return (f"Proved {when} at {at}, which is NOT the code this campaign ran: the table may be stale "
                f"(`groupcheck prove --if-stale` brings it up to date).")
    return f"Proved {when} at {at}; this campaign's commit is unknown."


def replay_command(path: str, mutant: str | None = None) -> str:
    """The command that reproduces a cluster's counterexample. The file records the system, the
    seed, the configuration and, for a campaign against a mutant, the mutant's name (``"mutant"``),
    which ``groupcheck replay`` applies around the replay; *mutant* is accepted for callers that
    want to say so, but the command is the same."""
    return f"groupcheck replay {path}"


def _histogram(counts: dict, bins: int = 20) -> list:
    """[[low, high, count], ...] over integer values given as {value: how many}, equal-width bins."""
    if not counts:
        return []
    lo, hi = min(counts), max(counts)
    width = max(1, -(-(hi - lo + 1) // bins))
    binned: dict = {}
    for v, n in counts.items():
        b = (v - lo) // width
        binned[b] = binned.get(b, 0) + n
    return [[lo + b * width, lo + (b + 1) * width - 1, binned.get(b, 0)] for b in range((hi - lo) // width + 1)]


def _property_kinds(system: str) -> list:
    props = [(p.name, p.kind, p.statement) for p in CATALOGUE]
    if system == "impl":
        from properties.systems.differential import IMPL_PROPERTIES

        props[:0] = [(p.name, p.kind, p.statement) for p in IMPL_PROPERTIES]
    return props


def property_verdicts(system: str, interleavings: int, failed: dict, eventually: bool, coverage: dict,
                      findings: list) -> list:
    """What the campaign established about each property, and over how much.

    A run stops at its first failure, so after that step no property is checked in that
    interleaving. Per property (``always`` and ``eventually``): ``failed_in`` interleavings failed
    it; ``held_in`` checked it to the end and it held (an always property: every step of an
    interleaving that ended without an always failure; an eventually property: judged after the
    settle phase, which only interleavings without an always failure reach, and only if no
    eventually property judged before it failed, :data:`EVENTUALLY_ORDER`); ``not_checked_in``
    stopped at another property's failure first. The three add up to *interleavings*. The verdict
    is ``violated``, ``held`` (checked to the end everywhere), ``held where checked`` (no failure,
    but ``not_checked_in`` > 0) or ``not checked`` (checked to the end nowhere). ``sometimes``
    properties are ``reached`` or ``never reached``."""
    always_failures = sum(n for name, n in failed.items() if kind_of(name) == ALWAYS)
    out = []
    for name, kind, statement in _property_kinds(system):
        if kind == SOMETIMES:
            hits = coverage["sometimes"].get(name, 0)
            out.append({"property": name, "kind": kind, "statement": statement,
                        "verdict": "reached" if hits else "never reached", "count": hits})
            continue
        failing = failed.get(name, 0)
        if kind == EVENTUALLY:
            if not eventually:
                not_checked = interleavings - failing
            elif name in EVENTUALLY_ORDER:
                before = EVENTUALLY_ORDER[:EVENTUALLY_ORDER.index(name)]
                not_checked = always_failures + sum(failed.get(e, 0) for e in before)
            else:  # not in the judging order: any other eventually failure may have hidden it
                not_checked = always_failures + sum(n for e, n in failed.items() if kind_of(e) == EVENTUALLY and e != name)
        else:
            not_checked = always_failures - failing
        held = interleavings - failing - not_checked
        if failing:
            verdict = "violated"
        elif held == 0:
            verdict = "not checked"
        elif not_checked:
            verdict = "held where checked"
        else:
            verdict = "held"
        out.append({"property": name, "kind": kind, "statement": statement, "verdict": verdict, "count": failing,
                    "failed_in": failing, "held_in": held, "not_checked_in": not_checked,
                    "checked": checked_text(kind, held, failing, not_checked, eventually),
                    "findings": sum(1 for f in findings if f["rule"] == name and f["status"] != "fixed")})
    return out


def checked_text(kind: str, held: int, failed: int, not_checked: int, eventually: bool = True) -> str:
    """What was checked, in words (the verdict table's second column)."""
    if kind == EVENTUALLY and not eventually:
        return "not checked: the campaign ran without the settle phase (--no-eventually)"
    if held == 0 and not_checked:
        parts = ["never judged: another property failed first" if kind == EVENTUALLY
                 else "no interleaving checked it to the end"]
    elif kind == EVENTUALLY:
        parts = [f"held in {held:,} interleavings judged after the settle phase"]
    else:
        parts = [f"held over {held:,} complete interleavings"]
    if failed:
        parts.append(f"failed in {failed:,}")
    if not_checked:
        parts.append(f"not judged in {not_checked:,} (stopped by an earlier failure)" if kind == EVENTUALLY
                     else f"not checked after the first failure in {not_checked:,}")
    return "; ".join(parts)


def _finding(sig: str, entry: dict, doc: dict, path: str, status=None) -> dict:
    """A campaign's counterexample cluster in the one finding shape (:mod:`properties.findings`)."""
    prop = entry["property"]
    spec = BY_NAME.get(prop) or _IMPL.get(prop)
    diff = [d for d in state_difference(doc) if d[3]]
    if diff:  # the differential: the implementation's state where it differs, and the model's
        observed, allowed = {k: i for k, _, i, _ in diff}, {k: m for k, m, _, _ in diff}
    else:
        observed, allowed = doc["message"], spec.statement if spec is not None else None
    return shape.finding(
        signature=sig, rule=prop, kind=kind_of(prop), status=status, count=entry["count"],
        first_seeds=entry["seeds"], summary=doc["message"], observed=observed, allowed=allowed,
        source=spec.source if spec is not None else None, events=len(doc["schedule"]),
        original_events=doc["campaign"]["original_events"], minimal=doc["campaign"]["locally_minimal"],
        reproduced=doc["campaign"].get("reproduced"), counterexample=f"counterexamples/{sig}.json",
        replay=replay_command(path))


def _impl_properties() -> dict:
    from properties.systems.differential import IMPL_PROPERTIES

    return {p.name: p for p in IMPL_PROPERTIES}


_IMPL = _impl_properties()


def baseline_findings(baseline: dict) -> list:
    """The findings of an earlier report (``--baseline``): this shape's, or an older
    ``results.json``'s ``clusters``."""
    if "findings" in baseline:
        return baseline["findings"]
    out = []
    for c in baseline.get("clusters", []):
        out.append(shape.finding(
            signature=c["signature"], rule=c.get("property", "?"), kind=kind_of(c.get("property", "")),
            status=c.get("status"), count=c.get("count", 0), first_seeds=c.get("example_seeds", []),
            summary=c.get("message", ""), events=c.get("shrunk_events"), original_events=c.get("original_events"),
            minimal=c.get("locally_minimal"), counterexample=c.get("counterexample"), replay=c.get("replay")))
    return out


def assemble(*, campaign_id, started, plan, args, totals, seconds, master, executors, cores, tasks, task_size,
             versions, partial, baseline, out, stopped_by=None, failure=None) -> dict:
    """The results.json document of a (possibly partial) campaign, from the totals' counts and
    histograms (the rows themselves are in interleavings.jsonl.gz, written as tasks finished)."""
    interleavings = totals.interleavings
    events = totals.events
    found = [_finding(sig, entry, entry["counterexample"], str(Path(out) / "counterexamples" / f"{sig}.json"))
             for sig, entry in sorted(totals.failures.items())]
    if baseline is not None:
        known = {f["signature"]: f for f in baseline_findings(baseline) if f.get("status") != "fixed"}
        for f in found:
            f["status"] = "known" if f["signature"] in known else "new"
        mine = {f["signature"] for f in found}
        for sig, f in sorted(known.items()):
            if sig not in mine:
                found.append({**f, "count": 0, "status": "fixed"})
    found.sort(key=lambda f: (f["status"] == "fixed", f["kind"] != ALWAYS, -f["count"], f["signature"]))
    per_property = dict(totals.by_property)
    directed = getattr(totals, "directed", None)
    coverage = summarise(totals.coverage, args.seed_start, interleavings,
                         directed=None if directed is None else directed["coverage"])
    verdicts = property_verdicts(plan["system"], interleavings, per_property, plan["eventually"], coverage, found)
    config = {k: plan.get(k) for k in ("system", "steps", "faults", "max_faults", "eventually", "quiet_rate", "mutant",
                                       "shrink_seconds")}
    config["search"] = plan.get("search", "plain")
    swarm = plan.get("world") == "swarm"
    config.update(world=plan.get("world", "fixed"), pinned=plan.get("pinned"),
                  clients=_world_value(args, "clients", plan), brokers=_world_value(args, "brokers", plan),
                  partitions=_world_value(args, "partitions", plan), task_size=task_size, model_config=plan["config"])
    if swarm:
        config.update({k: (plan["pinned"] or {}).get(k, "swarm") for k in ("steps", "faults", "max_faults", "quiet_rate")})
    config["kafka"] = settings_of(config_from_dict(plan["config"]))
    doc = shape.envelope(
        checker="campaign", system=plan["system"], findings=found, done=interleavings, requested=args.interleavings,
        unit="interleavings", settings=config, checked=[], not_checked=[], partial=partial, stopped_by=stopped_by,
        failure=failure)
    doc.update({
        "campaign_id": campaign_id,
        "started_at": started.isoformat(timespec="seconds"),
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "versions": versions,
        "seed_range": {"start": args.seed_start, "stop": args.seed_start + args.interleavings,
                       "requested": args.interleavings, "completed": interleavings},
        "master": master,
        "executors": executors,
        "cores": cores,
        "tasks": tasks,
        "interleavings": interleavings,
        "steps": events,
        "seconds": round(seconds, 3),
        "rate": round(interleavings / seconds, 1) if seconds > 0 else None,
        "violations": sum(per_property.values()),
        "violations_by_property": dict(sorted(per_property.items())),
        "properties": verdicts,
        "coverage": coverage,
        "regimes": {d: dict(sorted(b.items())) for d, b in sorted(getattr(totals, "regimes", {}).items())},
        "guided": guided_summary(plan, totals),
        "directed": directed_summary(plan, directed),
        "kip848": kip848_section(getattr(totals, "kip848", None), plan.get("kip848_every", 0),
                                 getattr(totals, "kip848_directed", None)),
        "histograms": {
            "events": _histogram(totals.event_counts),
            "generation": [[g, n] for g, n in sorted(totals.generations.items())],
        },
        "proofs": proofs_table(),
        "files": {"summary": "summary.md", "html": "index.html", "rows": "interleavings.jsonl.gz",
                  "counterexamples": "counterexamples/"},
    })
    if doc["kip848"] is not None and any(p["verdict"] == "failed" and p["kind"] == ALWAYS for p in doc["kip848"]["properties"]):
        doc["verdict"] = "fail"  # a KIP-848 always property failed (as for the classic ones: eventually failures are reported)
    doc["checked"]["what"] = ([checked_scope(plan)] + checked_summary(doc) + [x for x in [directed_line(doc)] if x]
                              + [x for x in [kip848_line(doc)] if x])
    doc["checked"]["not"] = not_checked(doc)
    return doc


def kip848_line(r: dict) -> str | None:
    """The KIP-848 worlds in one line (None when the campaign walked none)."""
    k = r.get("kip848")
    if not k:
        return None
    failed = [p["property"] for p in k["properties"] if p["verdict"] == "failed"]
    held = sum(p["verdict"] == "held" for p in k["properties"])
    hazards = [f"{h['property']} ({h['count']:,})" for h in k.get("hazards", ())]
    stopped = sum(h["count"] for h in k.get("hazards", ()))
    partial = ""
    if stopped and not failed:
        partial = (" (1 walk checked only up to the known hazard it stopped at)" if stopped == 1 else
                   f" ({stopped:,} walks checked only up to the known hazard each stopped at)")
    what = "the model and impl/'s coordinator and consumers beside it" if k.get("impl") else "the model"
    d = k.get("directed")
    directed = "" if d is None else (
        f" and {d['schedules']} directed schedules" if not any(o["property"] for o in d["outcomes"]) else
        f" and {d['schedules']} directed schedules ({sum(bool(o['property']) for o in d['outcomes'])} stopped)")
    return (f"KIP-848 worlds: {k['walks']:,} walks of {what} (every {k['every']}th seed){directed}, "
            + (f"FAILED: {', '.join(failed)}" if failed else f"{held} properties held{partial}")
            + (f"; known hazards of Kafka's own reached: {', '.join(hazards)}" if hazards else "")
            + (f"; never reached: {', '.join(k['never_reached'])}" if k["never_reached"] and k["walks"] else ""))


def directed_summary(plan: dict, directed: dict | None) -> dict | None:
    """The directed schedules' part of results.json (None when the campaign does not run them):
    how many, which failed and on which property, their time; whether they ran at all (a signal
    before them, or a partial search, leaves them out)."""
    if not plan.get("directed"):
        return None
    if directed is None:
        return {"ran": False, "file": DIRECTED_FILE}
    failed = [o for o in directed["outcomes"] if o["property"] is not None]
    return {"ran": True, "file": DIRECTED_FILE, "schedules": directed["schedules"], "failed": failed,
            "events": sum(o["events"] for o in directed["outcomes"]), "seconds": directed["seconds"]}


#: where the directed schedules are kept, as reports name the file
DIRECTED_FILE = "properties/campaign/directed.json"


def directed_line(r: dict) -> str | None:
    """One line on the directed schedules for the report's "what was checked" (None: not run)."""
    d = r.get("directed")
    if not d:
        return None
    if not d["ran"]:
        return f"the directed schedules ({d['file']}): not run (the search did not finish)"
    failed = d["failed"]
    verdict = (f"{len(failed)} failed: " + ", ".join(f"{o['cell']} ({o['property']})" for o in failed)) if failed \
        else "none failed"
    return (f"{d['schedules']} directed schedules ({d['file']}: hand-made for error paths random interleavings rarely "
            f"reach), replayed after the interleavings with the same checks, {d['events']:,} events: {verdict}")


def guided_summary(plan: dict, totals) -> dict | None:
    """A guided search's corpus and children (None for a plain search)."""
    if plan.get("search") != "guided":
        return None
    corpus = getattr(totals, "corpus", None) or {"parents": 0, "features": 0, "rounds": 0}
    children = getattr(totals, "regimes", {}).get("search", {}).get("child", [0, 0])
    return {**corpus, "children": children[0], "children_failed": children[1]}


#: What the report says a child interleaving is (after the guided search's line).
GUIDED_NOTE = ("A child repeats an interleaving that reached something new up to where it did, then draws its "
               "own events (properties/explore/guided.py); its row and counterexample file say which (`guided`).")


def guided_line(r: dict) -> str | None:
    g = r.get("guided")
    if not g:
        return None
    rounds = f"{g['rounds']:,} round" + ("" if g["rounds"] == 1 else "s")
    return (f"search: guided, {rounds}; {g['children']:,} interleavings bred from a corpus of "
            f"{g['parents']:,} that reached {g['features']:,} distinct features ({g['children_failed']:,} of them failed)")


def _world_value(args, name: str, plan: dict):
    """A world option as the report shows it: its value, the fixed world's default, or "swarm"."""
    value = getattr(args, name, None)
    if value is not None:
        return value
    if plan.get("world") == "swarm":
        return "swarm"
    from properties.explore.swarm import FIXED_WORLD

    return FIXED_WORLD[name]


def regimes_rows(r: dict) -> list:
    """(dimension, bucket, interleavings, failing, share of the campaign) per swarm regime."""
    total = max(1, r["interleavings"])
    return [(d, b, n, f, n / total) for d, buckets in r.get("regimes", {}).items() for b, (n, f) in buckets.items()]


def write(out, results: dict, totals) -> None:
    """Write the report's files into *out*: results.json, summary.md, index.html and the
    counterexample files. ``interleavings.jsonl.gz`` is not among them: the campaign streams the
    rows into it as tasks finish (:class:`properties.campaign.spark.Totals`), so that no process
    holds them all."""
    out = Path(out)
    cx_dir = out / "counterexamples"
    cx_dir.mkdir(parents=True, exist_ok=True)
    docs = {}
    for sig, entry in sorted(totals.failures.items()):
        doc = entry["counterexample"]
        write_counterexample(cx_dir / f"{sig}.json", doc)
        docs[sig] = doc
    for prop, entry in sorted(((getattr(totals, "kip848", None) or {}).get("failures") or {}).items()):
        (cx_dir / f"kip848-{prop}.json").write_text(json.dumps(entry["counterexample"], indent=1) + "\n", encoding="utf-8")
    for prop, doc in sorted(((getattr(totals, "kip848_directed", None) or {}).get("failures") or {}).items()):
        (cx_dir / f"kip848-directed-{prop}.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (out / "summary.md").write_text(markdown(results, docs), encoding="utf-8")
    (out / "index.html").write_text(html_report(results, docs), encoding="utf-8")


# --------------------------------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------------------------------

def checked_summary(results: dict) -> list:
    """Lines saying what the verdicts rest on: which properties held everywhere, which only where
    they were checked (a run stops at its first failure), which were not checked at all."""
    n = results["interleavings"]
    groups: dict = {}
    for p in results["properties"]:
        if p["kind"] != SOMETIMES:
            groups.setdefault(p["verdict"], []).append(p)
    lines = []
    if groups.get("violated"):
        lines.append("violated: " + ", ".join(f"{p['property']} (in {p['failed_in']:,})" for p in groups["violated"]))
    if groups.get("held"):
        lines.append(f"held: {len(groups['held'])} properties, checked to the end in all {n:,} interleavings")
    if n == 0:
        return ["nothing: no interleaving finished"]
    if groups.get("held where checked"):
        worst = max(p["not_checked_in"] for p in groups["held where checked"])
        lines.append(f"held where checked: {len(groups['held where checked'])} properties, not checked after the "
                     f"first failure in up to {worst:,} of {n:,} interleavings")
    return lines


def checked_scope(plan: dict) -> str:
    """What every interleaving was checked for (the first line of the report's "what was checked")."""
    scope = ("the implementation (impl/) beside the model, their observations compared after every event, and the "
             "always properties on both sides" if plan["system"] == "impl" else "the model, its always properties")
    settle = ("; the eventually properties after each interleaving's settle phase" if plan["eventually"]
              else "; no settle phase, so no eventually property (--no-eventually)")
    return f"{scope} after every event of each interleaving{settle}"


def not_checked(results: dict) -> list:
    """Lines naming what the campaign did not check: properties no interleaving checked to the end,
    and the sometimes properties no interleaving reached."""
    lines = []
    names = [p["property"] for p in results["properties"] if p["verdict"] == "not checked"]
    if names:
        lines.append("not checked: " + (", ".join(names) if len(names) <= 5 else f"{len(names)} properties")
                     + " (no interleaving checked them to the end: another property failed first, or no settle phase)")
    never = [p["property"] for p in results["properties"] if p["verdict"] == "never reached"]
    if never:
        lines.append("never reached (sometimes): " + ", ".join(never))
    return lines


def console_summary(results: dict, out) -> str:
    lines = [f"{shape.headline(results)}: {_headline(results)}"] + ["  " + line for line in results["checked"]["what"]]
    lines += ["  " + line for line in results["checked"]["not"] if line.startswith("not checked")]
    if guided_line(results):
        lines.append("  " + guided_line(results))
    for f in results["findings"]:
        if f["status"] == "fixed":
            lines.append(f"  fixed   {f['signature']}")
            continue
        status = f" [{f['status']}]" if f["status"] else ""
        lines.append(f"  {f['kind']:<10} {f['rule']}: {f['count']:,} interleavings{status}, {_size(f['shrunk'])}; "
                     f"replay: {f['replay']}")
    lines.append(f"report: {Path(out) / 'index.html'} (summary.md, results.json beside it)")
    return "\n".join(lines)


def _size(shrunk: dict) -> str:
    """What shrinking made of a counterexample, in a word: what it was shrunk to, or that nothing
    shorter failed (an eventually failure's re-runs replay a settle phase, which may be longer)."""
    events, before = shrunk["events"], shrunk.get("original_events")
    if before is None or events < before:
        return f"shrunk to {events:,} events"
    return f"not shorter: {events:,} events, {before:,} as it failed"


def _headline(r: dict) -> str:
    """The console's and the report's one line: what ran, and which properties failed, each with
    its kind. Only an always property fails the verdict (the exit status, README), so a PASS
    beside violated eventually properties says so instead of reading as a contradiction."""
    failing = [p for p in r["properties"] if p["verdict"] == "violated"]
    partial = " (PARTIAL: interrupted)" if r["partial"] else ""
    head = (f"{r['interleavings']:,} interleavings ({r['steps']:,} events) in {r['seconds']:,.1f} s, "
            f"{r['rate'] or 0:,.0f}/s on {r['master']}{partial}: ")
    if not failing:
        return head + "no property failed"
    line = (head + f"{r['violations']:,} failing interleavings, {len(failing)} "
            f"{'property' if len(failing) == 1 else 'properties'} violated: "
            + ", ".join(f"{p['property']} ({p['kind']})" for p in failing))
    if not any(p["kind"] == ALWAYS for p in failing):
        line += " — no always property failed, and only those fail the verdict"
    return line


EMBEDDED_EVENTS = 300  # a generated regression test spells out a schedule up to this long


def pytest_test(doc: dict, cluster: dict) -> str:
    """A regression test: replays the shrunk schedule and asserts the property holds (it fails
    while the bug is there). A schedule of up to :data:`EMBEDDED_EVENTS` events is written into the
    test (self-contained); a longer one (the shrink budget ran out) is read from the
    counterexample file, which the test expects beside it."""
    name = "test_" + cluster["signature"].replace("-", "_")
    mutant = doc.get("mutant")
    note = (f"# Found against mutant {mutant!r}: under `with properties.mutation.mutants.applied({mutant!r}):` this test fails;\n"
            f"# against the real implementation it passes.\n") if mutant else ""
    if len(doc["schedule"]) > EMBEDDED_EVENTS:
        file = f"{cluster['signature']}.json"
        return (
            f"# Regression test from groupcheck campaign {cluster.get('campaign_id', '')}, cluster {cluster['signature']}.\n"
            f"# {doc['property']}: {doc['message']}\n{note}"
            f"# The schedule has {len(doc['schedule']):,} events: copy counterexamples/{file} beside this test.\n"
            "from pathlib import Path\n\n"
            "from properties.campaign.counterexample import load\n"
            "from properties.systems import replay\n\n\n"
            f"def {name}():\n"
            f"    document, config = load(Path(__file__).with_name({file!r}))\n"
            "    result = replay(document['system'], config, document['schedule'], seed=document['seed'], "
            "check_eventually=document['check_eventually'])\n"
            "    assert result.violation is None, result.violation\n"
        )
    schedule = ",\n".join(f"    {tuple(e)!r}" for e in doc["schedule"])
    return (
        f"# Regression test from groupcheck campaign {cluster.get('campaign_id', '')}, cluster {cluster['signature']}.\n"
        f"# {doc['property']}: {doc['message']}\n{note}"
        "from properties.campaign.counterexample import config_from_dict\n"
        "from properties.systems import replay\n\n"
        f"CONFIG = {doc['config']!r}\n"
        f"SCHEDULE = [\n{schedule},\n]\n\n\n"
        f"def {name}():\n"
        f"    result = replay({doc['system']!r}, config_from_dict(CONFIG), SCHEDULE, seed={doc['seed']!r}, "
        f"check_eventually={doc['check_eventually']!r})\n"
        f"    assert result.violation is None, result.violation\n"
    )


def _flatten(value, prefix="") -> dict:
    out = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = value
    return out


def timeline_window(doc: dict, rows_shown: int = TIMELINE_ROWS) -> tuple[list, int]:
    """(rows, elided): the last *rows_shown* rows of a counterexample's timeline — the failing
    step is the schedule's last event — and how many events come before them. The timeline of a
    campaign's document is already bounded (:func:`properties.campaign.timeline.timeline`); this
    bounds older documents too."""
    rows = (doc.get("timeline") or [])[-rows_shown:]
    return rows, (rows[0]["i"] if rows else len(doc.get("schedule", [])))


def state_difference(doc: dict) -> list:
    """[(field, model value, impl value, differs)] at the failing step (impl system), else []."""
    state = doc.get("state") or {}
    if "impl" not in state:
        return []
    model, impl = _flatten(state["model"]), _flatten(state["impl"])
    keys = list(dict.fromkeys(list(model) + list(impl)))
    return [(k, model.get(k), impl.get(k), model.get(k) != impl.get(k)) for k in keys]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def worlds_line(r: dict) -> list:
    """The swarm's regimes, one compact line per dimension: ``clients: 1 20% (3 failing) · 2 ...``."""
    by_dimension: dict = {}
    for d, b, n, f, share in regimes_rows(r):
        by_dimension.setdefault(d, []).append(f"{b} {share:.0%}" + (f" ({f:,} failing)" if f else ""))
    return [f"{d}: " + " · ".join(items) for d, items in by_dimension.items()]


def _directed_ran(paths: dict) -> bool:
    """Whether the matrices hold the directed schedules' counts (a campaign that replayed them)."""
    return any(row.get("directed") for side in ("client", "coordinator") for row in paths[side]["rows"])


def _seed(row: dict) -> str:
    """The first seed that reached a cell (``groupcheck campaign --seed-start SEED --interleavings 1``
    replays it), or a dash."""
    seed = row.get("first_seed")
    return "–" if seed is None else str(seed)


def _error_paths_md(paths: dict | None) -> list:
    """The report's error-path matrices (properties/error_paths.py), in Markdown."""
    if not paths:
        return []
    from properties.error_paths import SIDES, headline

    L = ["## Error paths", "", headline(paths) + ".", ""]
    directed = _directed_ran(paths)
    for side, title, what in SIDES:
        m = paths[side]
        L += [f"### {title}", "", f"Cells: {what}. {m['reached']} of {m['reachable']} reachable cells reached by the "
              "interleavings (the first seed that reached one replays it: `groupcheck campaign --seed-start SEED "
              "--interleavings 1`)" + ("; the directed schedules' counts are apart." if directed else "."), ""]
        if m["reached_unreachable"] or m["unexpected"]:
            L += ["**Reached, though listed as unreachable (a claim of the matrix is wrong):** "
                  + ", ".join(f"`{c}`" for c in m["reached_unreachable"] + m["unexpected"]), ""]
        if directed:
            L += ["| cell | times | first seed | by the directed schedules |", "|---|---|---|---|"]
            L += [f"| {row['cell']} | {row['count']:,} | {_seed(row)} | {row.get('directed', 0):,} |"
                  for row in m["rows"] if row["count"] or row.get("directed")]
        else:
            L += ["| cell | times | first seed |", "|---|---|---|"]
            L += [f"| {row['cell']} | {row['count']:,} | {_seed(row)} |" for row in m["rows"] if row["count"]]
        if m.get("reached_directed"):
            L += ["", "Reached only by the directed schedules: " + ", ".join(f"`{c}`" for c in m["reached_directed"]) + "."]
        L += ["", "Reachable, not reached by the interleavings: "
              + (", ".join(f"`{c}`" for c in m["not_reached"]) or "none") + ".", ""]
        reasons: dict = {}
        for row in m["rows"]:
            if row["unreachable"] is not None:
                reasons.setdefault(row["unreachable"], []).append(row["cell"])
        L += ["Unreachable:", ""] + [f"- {why}: {len(cells)} cells" for why, cells in reasons.items()] + [""]
    return L


def _error_paths_html(paths: dict | None) -> str:
    """The report's error-path matrices, in HTML."""
    if not paths:
        return ""
    from properties.error_paths import SIDES, headline

    out = [f"<h2>Error paths</h2><p>{_e(headline(paths))}.</p>"]
    directed = _directed_ran(paths)
    for side, title, what in SIDES:
        m = paths[side]
        out.append(f"<h3>{_e(title)}</h3><p class=muted>{_e(what)}.</p>")
        wrong = m["reached_unreachable"] + m["unexpected"]
        if wrong:
            out.append("<p><b>Reached, though listed as unreachable:</b> " + ", ".join(f"<code>{_e(c)}</code>" for c in wrong) + "</p>")
        column = "<th>by the directed schedules</th>" if directed else ""
        out.append(f"<table><tr><th>cell</th><th>times</th><th>first seed</th>{column}"
                   "<th>unreachable because</th></tr>" + "".join(
            f"<tr><td><code>{_e(row['cell'])}</code></td><td>{row['count']:,}</td><td>{_e(_seed(row))}</td>"
            + (f"<td>{row.get('directed', 0):,}</td>" if directed else "")
            + f"<td>{_e(row['unreachable'] or '')}</td></tr>"
            for row in m["rows"] if row["count"] or row.get("directed") or row["unreachable"] is None) + "</table>")
        out.append(f"<p class=muted>{m['unreachable']} cells no schedule can reach are left out of the table "
                   "(results.json lists them with the reason).</p>")
    return "".join(out)


def markdown(r: dict, docs: dict) -> str:
    c = r["settings"]
    L = shape.markdown_head(r, f"groupcheck campaign {r['campaign_id']}")
    L += [_headline(r), ""]
    L += ["| system | mutant | clients | brokers | partitions | faults | steps | eventually | seeds |",
          "|---|---|---|---|---|---|---|---|---|",
          f"| {c['system']} | {c['mutant'] or '-'} | {c['clients']} | {c['brokers']} | {c['partitions']} | {c['faults']} "
          f"| {c['steps']} | {'yes' if c['eventually'] else 'no'} | {r['seed_range']['start']}–{r['seed_range']['stop'] - 1} |", ""]
    if guided_line(r):
        L += ["## Search", "", f"{guided_line(r)}. {GUIDED_NOTE}", ""]
    L += ["## Verdict per property", "",
          "A run stops at its first failure: after that step no property is checked in that interleaving, "
          "and the eventually properties are judged only after the settle phase.", ""]
    L += ["| property | kind | verdict | what was checked | statement |", "|---|---|---|---|---|"]
    for p in r["properties"]:
        if p["kind"] != SOMETIMES:
            L.append(f"| `{p['property']}` | {p['kind']} | {p['verdict']} | {p.get('checked', '')} "
                     f"| {_md_cell(p.get('statement', ''))} |")
    L += [""] + kip848_markdown(r.get("kip848"))
    L += ["", "## Counterexamples", ""]
    if not r["findings"]:
        L += ["None: no property failed.", ""]
    for f in r["findings"]:
        status = f" — **{f['status']}**" if f["status"] else ""
        L += [f"### `{f['signature']}`{status}", ""]
        if f["status"] == "fixed":
            L += ["In the baseline, not seen in this campaign.", ""]
            continue
        doc = docs[f["signature"]]
        shrunk = f["shrunk"]
        L += [f"- property: `{f['rule']}` ({f['kind']}); {f['count']:,} interleavings; first seeds "
              f"{', '.join(map(str, f['first_seeds']))}",
              f"- shrunk from {shrunk['original_events']} to {shrunk['events']} events"
              f"{'' if shrunk['minimal'] else ' (shrink budget ran out: not yet locally minimal)'}",
              f"- message: {doc['message']}",
              f"- source: {f['source'] or '-'}",
              *([f"- world (swarm draw of seed {doc['seed']}): "
                 + " ".join(f"{k}={v}" for k, v in doc['world']['regimes'].items())] if doc.get("world") else []),
              f"- replay: `{f['replay']}`", ""]
        rows, elided = timeline_window(doc)
        if elided:
            L += [f"The last {len(rows):,} of {len(doc['schedule']):,} events, up to the failing step; the "
                  f"{elided:,} before them are in `{f['counterexample']}` (`{f['replay']} --last N` prints them).", ""]
        L.append("```")
        for row in rows:
            mark = "  <-- fails here" if row["i"] == doc["failing_step"] else ""
            notes = ("  [" + "; ".join(row["notes"]) + "]") if row["notes"] else ""
            L.append(f"{row['i']:4d} {row['actor']:>7}  {row['what']}{notes}{mark}")
        L += ["```", ""]
        diff = [d for d in state_difference(doc) if d[3]]
        if diff:
            L += ["Model versus implementation at the failing step:", "", "| field | model | implementation |", "|---|---|---|"]
            L += [f"| {k} | {json.dumps(m)} | {json.dumps(i)} |" for k, m, i, _ in diff]
            L.append("")
    if c.get("world") == "swarm":
        L += ["## Worlds (swarm)", "",
              "Each interleaving drew its own world (properties/explore/swarm.py); options given explicitly were "
              f"pinned: {json.dumps(c.get('pinned') or {})}. Share of the interleavings per regime, and failing ones:", ""]
        L += [f"- {line}" for line in worlds_line(r)]
        L += [""]
    cov = r["coverage"]
    L += ["## Coverage", "",
          f"- distinct abstract states (group state × member states): {cov['abstract_states']}",
          f"- group states never reached: {', '.join(cov['group_states_never']) or 'none'}",
          f"- member states never reached: {', '.join(cov['member_states_never']) or 'none'}",
          f"- group transitions never seen: {', '.join(cov['group_transitions_never']) or 'none'}",
          f"- member transitions never seen: {', '.join(cov['member_transitions_never']) or 'none'}",
          f"- sometimes properties never reached: {', '.join(cov['sometimes_never']) or 'none'}",
          "- error codes answered (API:error count): " + ", ".join(f"{k} {v:,}" for k, v in cov["errors"].items()), "",
          "| sometimes property | times reached |", "|---|---|"]
    L += [f"| `{k}` | {v:,} |" for k, v in cov["sometimes"].items()]
    L += [""] + _error_paths_md(cov.get("error_paths"))
    L += ["## Proofs (z3)", ""]
    proofs = r.get("proofs")
    if proofs is None:
        L += ["No proof run yet (reports/proofs-latest.json is missing).", ""]
    else:
        L += [proofs_provenance(proofs), ""]
        L += ["| property | bound | result | seconds |", "|---|---|---|---|"]
        L += [f"| `{p.get('property')}` | {p.get('bound')} | {p.get('result')} | {p.get('seconds')} |" for p in proofs["rows"]]
        L.append("")
    L += ["## Throughput", "",
          f"{r['interleavings']:,} interleavings, {r['steps']:,} events, {r['seconds']:,.1f} s (job only), "
          f"{r['rate'] or 0:,.1f} interleavings/s on {r['master']} ({r['cores']} cores, {r['executors']} executors, "
          f"{r['tasks']} tasks of {c['task_size']} seeds).", "",
          "Versions: " + ", ".join(f"{k} {v}" for k, v in r["versions"].items()), ""]
    return "\n".join(L)


# --------------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------------



def _e(x) -> str:
    return html.escape(str(x), quote=True)


def svg_bars(items: list, width: int = 520, bar_h: int = 18, color: str = "#c62828") -> str:
    """Horizontal bar chart: [(label, value)]."""
    if not items:
        return '<p class="muted">Nothing to plot: no counterexample.</p>'
    label_w = min(330, max(80, 7 * max(len(str(label)) for label, _ in items) + 10))
    top = 6
    h = top + len(items) * (bar_h + 6) + 6
    vmax = max(v for _, v in items) or 1
    parts = [f'<svg width="{width}" height="{h}" role="img">']
    for i, (label, v) in enumerate(items):
        y = top + i * (bar_h + 6)
        w = max(1, (width - label_w - 60) * v / vmax)
        parts.append(f'<text x="{label_w - 6}" y="{y + bar_h - 5}" text-anchor="end" font-size="11" fill="#1d2330">{_e(label)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}" rx="2"/>')
        parts.append(f'<text x="{label_w + w + 4:.1f}" y="{y + bar_h - 5}" font-size="11" fill="#1d2330">{v:,}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _axes(width, height, left, bottom, xmax_label, ymax_label, xlabel, ylabel) -> list:
    return [
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - 10}" y2="{height - bottom}" stroke="#8a93a5"/>',
        f'<line x1="{left}" y1="10" x2="{left}" y2="{height - bottom}" stroke="#8a93a5"/>',
        f'<text x="{left - 4}" y="16" text-anchor="end" font-size="10" fill="#5b6475">{_e(ymax_label)}</text>',
        f'<text x="{left - 4}" y="{height - bottom}" text-anchor="end" font-size="10" fill="#5b6475">0</text>',
        f'<text x="{width - 10}" y="{height - bottom + 14}" text-anchor="end" font-size="10" fill="#5b6475">{_e(xmax_label)}</text>',
        f'<text x="{(left + width) / 2}" y="{height - 4}" text-anchor="middle" font-size="11" fill="#33415c">{_e(xlabel)}</text>',
        f'<text x="12" y="{(height - bottom) / 2}" text-anchor="middle" font-size="11" fill="#33415c" '
        f'transform="rotate(-90 12 {(height - bottom) / 2})">{_e(ylabel)}</text>',
    ]


def svg_histogram(bins: list, xlabel: str, width: int = 520, height: int = 200, color: str = "#3b6fd4") -> str:
    """Vertical bars: [[label_low, label_high, count]] or [[value, count]]."""
    if not bins:
        return '<p class="muted">No data.</p>'
    bins = [b if len(b) == 3 else [b[0], b[0], b[1]] for b in bins]
    left, bottom = 52, 34
    n = len(bins)
    cmax = max(b[2] for b in bins) or 1
    plot_w = width - left - 12
    bw = plot_w / n
    parts = [f'<svg width="{width}" height="{height}" role="img">']
    parts += _axes(width, height, left, bottom, "", f"{cmax:,}", xlabel, "interleavings")
    for i, (lo, hi, c) in enumerate(bins):
        bh = (height - bottom - 12) * c / cmax
        x = left + i * bw
        label = f"{lo}" if lo == hi else f"{lo}–{hi}"
        parts.append(f'<rect x="{x + 1:.1f}" y="{height - bottom - bh:.1f}" width="{max(1, bw - 2):.1f}" height="{bh:.1f}" fill="{color}">'
                     f'<title>{_e(label)}: {c:,}</title></rect>')
        if n <= 12 or i % max(1, n // 8) == 0:
            parts.append(f'<text x="{x + bw / 2:.1f}" y="{height - bottom + 13}" text-anchor="middle" font-size="10" fill="#5b6475">{_e(lo)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_line(points: list, xlabel: str, ylabel: str, width: int = 520, height: int = 200, color: str = "#2e7d32") -> str:
    if not points:
        return '<p class="muted">No data.</p>'
    left, bottom = 52, 34
    xmax = max(p[0] for p in points) or 1
    ymax = max(p[1] for p in points) or 1
    sx = lambda x: left + (width - left - 12) * x / xmax  # noqa: E731
    sy = lambda y: (height - bottom) - (height - bottom - 12) * y / ymax  # noqa: E731
    path = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for i, (x, y) in enumerate([[0, 0]] + points))
    parts = [f'<svg width="{width}" height="{height}" role="img">']
    parts += _axes(width, height, left, bottom, f"{xmax:,}", f"{ymax:,}", xlabel, ylabel)
    parts.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)


_BADGE = {"held where checked": "partly", "not checked": "not", "never reached": "never"}


def _badge(text: str) -> str:
    return f'<span class="badge b-{_e(_BADGE.get(text, text.split()[0]))}">{_e(text)}</span>'


def _timeline_html(doc: dict, clients: int, cluster: dict | None = None) -> str:
    rows, elided = timeline_window(doc)
    head = "".join(f"<th>{_e(l)}</th>" for l in ["#", "time / brokers"] + [f"consumer c{i}" for i in range(clients)] + ["group"])
    out = [f'<table class="tl"><tr>{head}</tr>']
    prev_members = [["UNJOINED", -1]] * clients
    prev_group = None
    if elided:
        where = f"<code>{_e(cluster['counterexample'])}</code>" if cluster else "the counterexample file"
        replay = f" (<code>{_e(cluster['replay'])} --last N</code> prints them)" if cluster else ""
        out.append(f'<tr class="elided"><td colspan="{clients + 3}">{elided:,} earlier events not shown: the full '
                   f'schedule ({len(doc["schedule"]):,} events) is in {where}{replay}.</td></tr>')
        prev_members, prev_group = [[None, None]] * clients, object()  # the first row shown states everything
    for row in rows:
        fail = row["i"] == doc["failing_step"]
        cells = [f"<td>{row['i']}</td>"]
        event_html = f"<b>{_e(row['what'])}</b>" + "".join(f'<span class="n">{_e(n)}</span>' for n in row["notes"])
        actor = row["actor"]
        if actor in ("time", "brokers"):
            cells.append(f'<td class="ev">{event_html}</td>')
        else:
            cells.append('<td class="st"></td>')
        for c in range(clients):
            state, gen = row["members"][c]
            changed = [state, gen] != list(prev_members[c])
            text = f"{state} g{gen}"
            if actor == f"c{c}":
                cells.append(f'<td class="ev{" ch" if changed else ""}">{event_html}<span class="n">→ {_e(text)}</span></td>')
            else:
                cells.append(f'<td class="{"ch" if changed else "st"}">{_e(text) if changed else "·"}</td>')
        group = row["group"]
        gtext = "no group" if group is None else f"{group[0]} g{group[1]}"
        gchanged = group != prev_group
        cells.append(f'<td class="{"ch" if gchanged else "st"}">{_e(gtext) if gchanged else "·"}</td>')
        out.append(f'<tr{" class=failrow" if fail else ""}>' + "".join(cells) + "</tr>")
        prev_members = row["members"]
        prev_group = group
    out.append("</table>")
    return "".join(out)


def _cluster_html(cl: dict, doc: dict | None, clients: int) -> str:
    """One finding's card: what failed, its world, the shrunk schedule's timeline, the two sides'
    states, a regression test."""
    status = _badge(cl["status"]) if cl["status"] else ""
    if cl["status"] == "fixed" or doc is None:
        return (f'<div class="card"><h3><code>{_e(cl["signature"])}</code> {status}</h3>'
                f'<p>In the baseline, not seen in this campaign.</p></div>')
    shrunk = cl["shrunk"]
    minimal = "" if shrunk["minimal"] else " (the shrink budget ran out before it was locally minimal)"
    parts = [f'<div class="card" id="{_e(cl["signature"])}"><h3><code>{_e(cl["signature"])}</code> {status} '
             f'{_badge(cl["kind"])}</h3>',
             f'<p><b>{_e(cl["rule"])}</b> failed in <b>{cl["count"]:,}</b> interleavings '
             f'(first seeds {_e(", ".join(map(str, cl["first_seeds"])))}). '
             f'Shrunk from {shrunk["original_events"]} to <b>{shrunk["events"]}</b> events{minimal}.</p>',
             f'<p>{_e(doc["message"])}</p>',
             f'<p class="muted">Source: {_e(cl["source"] or "-")}</p>',
             (f'<p class="muted">World (swarm draw of seed {doc["seed"]}): <code>'
              + _e(" ".join(f"{k}={v}" for k, v in doc["world"]["regimes"].items())) + "</code></p>"
              if doc.get("world") else ""),
             f'<p class="muted">Replay:</p><pre><code>{_e(cl["replay"])}</code></pre>',
             '<p class="muted">The shrunk schedule, one column per consumer (the event in the column of the member it '
             'concerns, with what it sent and received; elsewhere a member\'s state after the event when it changed). '
             f'The failing event is outlined in red. At most the last {TIMELINE_ROWS} events are shown.</p>',
             _timeline_html(doc, doc.get("config", {}).get("clients", clients), cl)]  # a swarm world's own
    diff = state_difference(doc)
    if diff:
        differing = [d for d in diff if d[3]]
        parts.append('<h3 style="margin-top:14px">Model versus implementation after the failing step</h3>')
        if not differing:
            parts.append('<p class="muted">The two sides agree here; the property failed on the implementation\'s '
                         'own state or on a property both share.</p>')
        rows = differing or diff
        parts.append('<table class="diff"><tr><th>field</th><th>model</th><th>implementation</th></tr>' + "".join(
            f'<tr><td>{_e(k)}</td><td class="{"d" if d else ""}">{_e(json.dumps(m))}</td>'
            f'<td class="{"d" if d else ""}">{_e(json.dumps(i))}</td></tr>' for k, m, i, d in rows) + "</table>")
    parts.append('<details><summary>Ready-to-paste pytest test</summary><pre><code>'
                 + _e(pytest_test(doc, cl)) + "</code></pre></details>")
    parts.append("</div>")
    return "".join(parts)


def svg_regimes(r: dict, width: int = 520) -> str:
    """The swarm's regimes as one small stacked bar per dimension (the share of interleavings in
    each regime; its failing ones in its tooltip)."""
    rows: dict = {}
    for d, b, n, f, share in regimes_rows(r):
        rows.setdefault(d, []).append((b, n, f, share))
    if not rows:
        return '<p class="muted">No data.</p>'
    label_w, bar_h = 110, 16
    colors = ("#3b6fd4", "#7b4fc4", "#2e7d32", "#c78a00", "#c62828", "#00838f", "#6d4c41", "#5b6475")
    h = len(rows) * (bar_h + 8) + 8
    parts = [f'<svg width="{width}" height="{h}" role="img">']
    for i, (d, items) in enumerate(rows.items()):
        y, x = 6 + i * (bar_h + 8), label_w
        parts.append(f'<text x="{label_w - 6}" y="{y + bar_h - 4}" text-anchor="end" font-size="11" fill="#1d2330">{_e(d)}</text>')
        for j, (b, n, f, share) in enumerate(items):
            w = (width - label_w - 6) * share
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{max(0.5, w):.1f}" height="{bar_h}" fill="{colors[j % len(colors)]}">'
                         f'<title>{_e(d)}={_e(b)}: {n:,} interleavings ({share:.0%}), {f:,} failing</title></rect>')
            if w > 28:
                parts.append(f'<text x="{x + 3:.1f}" y="{y + bar_h - 4}" font-size="10" fill="#fff">{_e(b)}</text>')
            x += w
    parts.append("</svg>")
    return "".join(parts)


def html_report(r: dict, docs: dict) -> str:
    """The self-contained index.html: the verdict and the findings first (:mod:`properties.findings`),
    then the campaign's own sections."""
    c = r["settings"]
    body = shape.html_head(r, "groupcheck campaign")
    body.insert(1, f"<p class=sub><code>{_e(r['campaign_id'])}</code> · started {_e(r['started_at'])} · "
                   f"{_e(_headline(r))}</p>")
    figs = [
        (f"{r['interleavings']:,}", "interleavings"), (f"{r['steps']:,}", "events"),
        (f"{r['seconds']:,.1f} s", "job time"), (f"{r['rate'] or 0:,.0f}/s", "interleavings per second"),
        (f"{r['violations']:,}", "failing interleavings"), (str(sum(1 for x in r["findings"] if x["status"] != "fixed")), "findings"),
        (f"{r['coverage']['abstract_states']:,}", "distinct abstract states"),
        (_e(c["system"]) + (f" / {_e(c['mutant'])}" if c["mutant"] else ""), "system" + (" / mutant" if c["mutant"] else "")),
    ]
    body.append('<div class="figs">' + "".join(
        f'<div class="fig"><b{" class=t" if not v[:1].isdigit() else ""}>{v}</b><span>{_e(k)}</span></div>' for v, k in figs) + "</div>")
    world = ("Swarm worlds: each interleaving drew its clients, brokers, partitions, timeouts, faults and length "
             "(the chart below)" if c.get("world") == "swarm" else
             f'{c["clients"]} clients, {c["brokers"]} brokers, {c["partitions"]} partitions, faults '
             f'<code>{_e(c["faults"])}</code> (at most {c["max_faults"]} per interleaving), {c["steps"]} random events '
             'per interleaving')
    body.append(f'<p class="muted">{world}{", then the settle phase and the eventually properties" if c["eventually"] else " (no settle phase)"}; '
                f'seeds {r["seed_range"]["start"]}–{r["seed_range"]["stop"] - 1}; master <code>{_e(r["master"])}</code>, '
                f'{r["cores"]} cores, {r["tasks"]} tasks.</p>')
    if guided_line(r):
        body.append(f"<h2>Search</h2><p>{_e(guided_line(r))}. {_e(GUIDED_NOTE)}</p>")
    # verdicts
    body.append('<h2>Verdict per property</h2><p class="muted">A run stops at its first failure: after that step no '
                'property is checked in that interleaving, and the eventually properties are judged only after the '
                'settle phase.</p><table><tr><th>property</th><th>kind</th><th>verdict</th><th>what was checked</th></tr>')
    for p in r["properties"]:
        if p["kind"] != SOMETIMES:
            body.append(f"<tr><td><code>{_e(p['property'])}</code><span class=stmt>{_e(p.get('statement', ''))}</span></td>"
                        f"<td>{_e(p['kind'])}</td><td>{_badge(p['verdict'])}</td><td>{_e(p.get('checked', ''))}</td></tr>")
    body.append("</table>")
    # plots
    cov = r["coverage"]
    body.append('<h2>Plots</h2><div class="plots">')
    body.append('<div class="plot"><h3>Counterexamples per property (failing interleavings)</h3>'
                + svg_bars(sorted(r["violations_by_property"].items(), key=lambda kv: -kv[1])) + "</div>")
    body.append('<div class="plot"><h3>Coverage over the campaign: distinct abstract states reached</h3>'
                + svg_line(cov["abstract_states_curve"], "interleavings explored", "distinct states") + "</div>")
    body.append('<div class="plot"><h3>Trace length (events per interleaving)</h3>'
                + svg_histogram(r["histograms"]["events"], "events") + "</div>")
    body.append('<div class="plot"><h3>Final group generation</h3>'
                + svg_histogram(r["histograms"]["generation"], "generation (-1: no group)", color="#7b4fc4") + "</div>")
    body.append("</div>")
    # the findings' counterexamples
    k = r.get("kip848")
    if k:  # the KIP-848 worlds: the same lines as summary.md's section, as a table
        body.append("<h2>KIP-848 worlds (the consumer group protocol)</h2>"
                    f"<p class=muted>{_e(kip848_line(r))}</p><table><tr><th>property</th><th>kind</th><th>verdict</th>"
                    "<th>failing walks</th></tr>" + "".join(
                        f"<tr><td><code>{_e(p['property'])}</code><span class=stmt>{_e(p['statement'])}</span></td>"
                        f"<td>{p['kind']}</td><td>{p['verdict']}</td><td>{p['failed']:,}</td></tr>" for p in k["properties"])
                    + "</table>" + "".join(f"<p>{_e(f['property'])}: replay <code>{_e(f['replay'])}</code></p>"
                                           for f in k["failures"]))
    body.append("<h2>Counterexamples</h2>")
    if not r["findings"]:
        body.append("<p>None: no property failed in this campaign.</p>")
    for f in r["findings"]:
        body.append(_cluster_html({**f, "campaign_id": r["campaign_id"]}, docs.get(f["signature"]), c["clients"]))
    if c.get("world") == "swarm":
        body.append('<h2>Worlds (swarm)</h2><p class="muted">Each interleaving drew its own world '
                    '(properties/explore/swarm.py); the share of the interleavings in each regime (hover for the '
                    'failing ones). Pinned: '
                    f'<code>{_e(json.dumps(c.get("pinned") or {}))}</code>.</p>'
                    f'<div class="plot">{svg_regimes(r)}</div>')
    # coverage
    body.append("<h2>Coverage</h2><ul class=gaps>")
    for label, key in (("Group states never reached", "group_states_never"), ("Member states never reached", "member_states_never"),
                       ("Group transitions never seen", "group_transitions_never"),
                       ("Member transitions never seen", "member_transitions_never"),
                       ("Sometimes properties never reached", "sometimes_never")):
        items = cov[key]
        body.append(f"<li><b>{label}:</b> " + (", ".join(f"<code>{_e(x)}</code>" for x in items) if items else "none") + "</li>")
    body.append("</ul>")
    body.append('<div class="plots">')
    body.append('<div class="plot"><h3>Sometimes properties (times reached)</h3>'
                + svg_bars(list(cov["sometimes"].items()), color="#2e7d32") + "</div>")
    body.append('<div class="plot"><h3>Coordinator answers (API:error)</h3>'
                + svg_bars(sorted(cov["errors"].items(), key=lambda kv: -kv[1]), color="#3b6fd4") + "</div>")
    body.append('<div class="plot"><h3>Group transitions</h3>'
                + svg_bars(list(cov["group_transitions"].items()), color="#7b4fc4") + "</div>")
    body.append('<div class="plot"><h3>Member transitions</h3>'
                + svg_bars(list(cov["member_transitions"].items()), color="#7b4fc4") + "</div>")
    body.append("</div>")
    body.append(_error_paths_html(cov.get("error_paths")))
    # proofs
    body.append("<h2>Proofs (z3)</h2>")
    proofs = r.get("proofs")
    if proofs is None:
        body.append('<p class="muted">No proof run yet (<code>reports/proofs-latest.json</code> is missing).</p>')
    else:
        body.append(f"<p>{_e(proofs_provenance(proofs))}</p>")
        body.append("<table><tr><th>property</th><th>bound</th><th>result</th><th>seconds</th><th>reason</th></tr>" + "".join(
            f"<tr><td><code>{_e(p.get('property'))}</code></td><td>{_e(p.get('bound'))}</td><td>{_e(p.get('result'))}</td>"
            f"<td>{_e(p.get('seconds'))}</td><td>{_e(p.get('reason') or '')}</td></tr>" for p in proofs["rows"]) + "</table>")
    # run
    body.append("<h2>Run</h2><table>" + "".join(
        f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in (
            ("master", r["master"]), ("executors", r["executors"]), ("cores", r["cores"]), ("tasks", r["tasks"]),
            ("seed range", f"{r['seed_range']['start']}–{r['seed_range']['stop'] - 1}"), ("job seconds", r["seconds"]),
            ("finished", r["finished_at"]), *(("version: " + k, v) for k, v in r["versions"].items()))) + "</table>")
    body.append('<p class="muted">Files beside this page: <code>results.json</code>, <code>summary.md</code>, '
                '<code>counterexamples/</code>, <code>interleavings.jsonl.gz</code> '
                '(<code>spark.read.json("interleavings.jsonl.gz")</code>).</p>')
    return shape.page(f"groupcheck campaign {r['campaign_id']}", body)
