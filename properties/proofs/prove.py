"""``groupcheck prove``: run every z3 proof and write the proof table.

The table has one row per server-side ``always`` property (:mod:`properties.proofs.symbolic`: inductive
proof for N<=4 member ids and P<=8 partitions, with the strengthening invariants it needed), one per
KIP-848 coordinator invariant (:mod:`properties.proofs.kip848`, the same bound) and one
per timing computation (:mod:`properties.proofs.timing`: 64-bit/32-bit bit-vectors over Kafka's
configuration domain). Each row: property, bound, result ("proved", "counterexample" or
"unknown"), seconds, invariants, reason. It is printed, and written to
``reports/proofs-latest.json`` (``{"format": 1, "generated_by": ..., "generated_at": ..., "tool":
{version, commit, dirty}, "complete": true, "rows": [...]}``, read by the campaign report) and
``reports/proofs-latest.md``. A partial run (``--only``, or a smaller bound than the default) is
written to ``proofs-partial.json``/``.md`` instead, so it never replaces the full table a report
shows. ``--if-stale`` proves only when ``proofs-latest.json`` is missing, incomplete, or from
other code than this checkout's commit (what the main job runs before its campaign).

The output folder is checked before the first proof (one line, exit 2, when it cannot be written).

Exit status: 0 when every row is proved, 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone

from properties.errors import UsageError
from properties.provenance import provenance

FORMAT = 1


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("prove", help="prove the server invariants and the timing arithmetic with z3")
    p.add_argument("--json", action="store_true", help="print the rows as a JSON array")
    p.add_argument("--members", type=int, default=None, metavar="N", help="member ids in the bound (1-4, default 4)")
    p.add_argument("--partitions", type=int, default=None, metavar="P", help="partitions in the bound (1-8, default 8)")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="prove only this property or timing computation (repeatable)")
    p.add_argument("--out", default="reports", help="directory for proofs-latest.json/.md (default reports)")
    p.add_argument("--if-stale", action="store_true",
                   help="prove only if OUT/proofs-latest.json is missing, partial, or from other code than this commit")


def cmd_prove(args) -> int:
    from properties.proofs import kip848
    from properties.proofs import symbolic
    from properties.proofs import timing

    n = symbolic.N_MAX if args.members is None else args.members
    parts = symbolic.P_MAX if args.partitions is None else args.partitions
    if not 1 <= n <= symbolic.N_MAX:
        raise UsageError(f"--members must be from 1 to {symbolic.N_MAX}, got {n}")
    if not 1 <= parts <= symbolic.P_MAX:
        raise UsageError(f"--partitions must be from 1 to {symbolic.P_MAX}, got {parts}")
    timing_names = {p.name for p in timing.PROOFS}
    unknown = sorted(set(args.only) - set(symbolic.PROPERTIES) - set(kip848.PROPERTIES) - timing_names)
    if unknown:
        raise UsageError(f"--only names unknown proofs {unknown}; known: "
                         f"{sorted(symbolic.PROPERTIES) + list(kip848.PROPERTIES) + sorted(timing_names)}")
    complete = not args.only and (n, parts) == (symbolic.N_MAX, symbolic.P_MAX)
    name = "proofs-latest" if complete else "proofs-partial"
    check_output_folder(args.out)
    if args.if_stale:
        current = current_table(args.out)
        if current is not None:
            print(f"groupcheck: the proof table in {os.path.join(args.out, name + '.json')} is for this commit "
                  f"({current['tool']['commit'][:12]}, {current['generated_at']}): not proving again")
            return 0 if all(r["result"] == "proved" for r in current["rows"]) else 1
    started = time.perf_counter()
    rows = prove(n, parts, set(args.only))
    wall = time.perf_counter() - started
    write_reports(rows, args.out, wall, n, parts, name=name, complete=complete)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(render_table(rows))
        print(f"\n{sum(r['result'] == 'proved' for r in rows)}/{len(rows)} proved in {wall:.1f} s; "
              f"written to {os.path.join(args.out, name + '.json')} and .md")
    return 0 if all(r["result"] == "proved" for r in rows) else 1


def check_output_folder(out: str) -> None:
    """Create *out* if needed and make sure a file can be written in it, before any proof runs."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"--out {out}: exists and is not a directory")
    try:
        os.makedirs(out, exist_ok=True)
        probe = os.path.join(out, ".groupcheck-write-test")
        with open(probe, "w"):
            pass
        os.unlink(probe)
    except OSError as e:
        raise UsageError(f"--out {out}: cannot write there ({e.strerror or e})") from None


def current_table(out: str) -> dict | None:
    """``OUT/proofs-latest.json`` when it is complete and was produced by exactly this code (same
    commit, no local changes then or now), else None."""
    try:
        with open(os.path.join(out, "proofs-latest.json"), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    here = provenance()
    tool = doc.get("tool") if isinstance(doc, dict) else None
    if (not isinstance(tool, dict) or not doc.get("complete") or here["commit"] is None or here["dirty"]
            or tool.get("commit") != here["commit"] or tool.get("dirty") or not isinstance(doc.get("rows"), list)):
        return None
    return doc


def prove(n: int, parts: int, only=frozenset()) -> list:
    """Every proof as a table row (the classic coordinator's properties first, then KIP-848's at
    the same bound, then timing)."""
    from properties.proofs import kip848
    from properties.proofs import symbolic
    from properties.proofs import timing

    rows = []
    names = [name for name in symbolic.PROPERTIES if not only or name in only]
    if names:
        start = time.perf_counter()
        enc = symbolic.Encoding(n, parts)
        build = time.perf_counter() - start
        for name in names:
            row = enc.prove(name).as_row()
            row["seconds"] = round(row["seconds"] + build / len(names), 3)  # the encoding's share
            rows.append(row)
    for name in kip848.PROPERTIES:
        if not only or name in only:
            row = kip848.prove(name, n, parts)
            rows.append({k: row[k] for k in ("property", "bound", "result", "seconds", "invariants", "reason")})
    timing_only = {name for name in only if name in {p.name for p in timing.PROOFS}}
    if not only or timing_only:
        for row in timing.prove_timing(timing_only or None):
            rows.append({k: row[k] for k in ("property", "bound", "result", "seconds", "invariants", "reason")})
    return rows


def render_table(rows) -> str:
    lines = ["| property | bound | result | seconds | strengthening invariants |", "|---|---|---|---|---|"]
    for r in rows:
        inv = ", ".join(r["invariants"]) if r["invariants"] else "–"
        lines.append(f"| {r['property']} | {r['bound']} | {r['result']} | {r['seconds']:.2f} | {inv} |")
    return "\n".join(lines)


def write_reports(rows, out: str, wall: float, n: int, parts: int, name: str = "proofs-latest",
                  complete: bool = True) -> None:
    from properties.proofs import symbolic

    os.makedirs(out, exist_ok=True)
    generated_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    tool = provenance()
    doc = {"format": FORMAT, "generated_by": "groupcheck prove", "generated_at": generated_at, "tool": tool,
           "complete": complete, "bound": {"members": n, "partitions": parts}, "wall_seconds": round(wall, 3),
           "rows": rows}
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    commit = tool["commit"][:12] if tool["commit"] else "no git commit"
    md = ["# Proofs (z3)" + ("" if complete else " — partial run"), "",
          f"`groupcheck prove`, bound N<={n} member ids, P<={parts} partitions; "
          f"{sum(r['result'] == 'proved' for r in rows)}/{len(rows)} proved in {wall:.1f} s, "
          f"{generated_at}, groupcheck {tool['version']} at {commit}" + (" with local changes" if tool["dirty"] else "") + ".", "",
          render_table(rows), "", "## Reasons", ""]
    md += [f"- **{r['property']}** ({r['result']}): {r['reason']}" for r in rows]
    md += ["", "## Strengthening invariants", ""]
    md += [f"- `{name}`: {text}" for name, (_, text) in symbolic.INVARIANTS.items()]
    md += ["", "## Environment assumptions", ""]
    md += [f"- {name}: {text}" for name, text in symbolic.ASSUMPTIONS.items()]
    with open(os.path.join(out, name + ".md"), "w") as f:
        f.write("\n".join(md) + "\n")
