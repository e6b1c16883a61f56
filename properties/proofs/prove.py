"""``groupcheck prove``: run every z3 proof and write the proof table.

The table has one row per server-side ``always`` property (:mod:`properties.proofs.symbolic`: inductive
proof for N<=4 member ids and P<=8 partitions, with the strengthening invariants it needed) and one
per timing computation (:mod:`properties.proofs.timing`: 64-bit/32-bit bit-vectors over Kafka's
configuration domain). Each row: property, bound, result ("proved", "counterexample" or
"unknown"), seconds, invariants, reason. It is printed, and written to
``reports/proofs-latest.json`` (``{"format": 1, "generated_by": ..., "rows": [...]}``, read by the
campaign report) and ``reports/proofs-latest.md``.

Exit status: 0 when every row is proved, 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import json
import os
import time

FORMAT = 1


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("prove", help="prove the server invariants and the timing arithmetic with z3")
    p.add_argument("--json", action="store_true", help="print the rows as a JSON array")
    p.add_argument("--members", type=int, default=None, metavar="N", help="member ids in the bound (1-4, default 4)")
    p.add_argument("--partitions", type=int, default=None, metavar="P", help="partitions in the bound (1-8, default 8)")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="prove only this property or timing computation (repeatable)")
    p.add_argument("--out", default="reports", help="directory for proofs-latest.json/.md (default reports)")


def cmd_prove(args) -> int:
    from properties.errors import UsageError
    from properties.proofs import symbolic
    from properties.proofs import timing

    n = symbolic.N_MAX if args.members is None else args.members
    parts = symbolic.P_MAX if args.partitions is None else args.partitions
    if not 1 <= n <= symbolic.N_MAX:
        raise UsageError(f"--members must be from 1 to {symbolic.N_MAX}, got {n}")
    if not 1 <= parts <= symbolic.P_MAX:
        raise UsageError(f"--partitions must be from 1 to {symbolic.P_MAX}, got {parts}")
    timing_names = {p.name for p in timing.PROOFS}
    unknown = sorted(set(args.only) - set(symbolic.PROPERTIES) - timing_names)
    if unknown:
        raise UsageError(f"--only names unknown proofs {unknown}; known: {sorted(symbolic.PROPERTIES) + sorted(timing_names)}")
    started = time.perf_counter()
    rows = prove(n, parts, set(args.only))
    wall = time.perf_counter() - started
    write_reports(rows, args.out, wall, n, parts)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(render_table(rows))
        print(f"\n{sum(r['result'] == 'proved' for r in rows)}/{len(rows)} proved in {wall:.1f} s; "
              f"written to {os.path.join(args.out, 'proofs-latest.json')} and .md")
    return 0 if all(r["result"] == "proved" for r in rows) else 1


def prove(n: int, parts: int, only=frozenset()) -> list:
    """Every proof as a table row (server properties first, then timing)."""
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


def write_reports(rows, out: str, wall: float, n: int, parts: int) -> None:
    from properties.proofs import symbolic

    os.makedirs(out, exist_ok=True)
    doc = {"format": FORMAT, "generated_by": "groupcheck prove", "bound": {"members": n, "partitions": parts},
           "wall_seconds": round(wall, 3), "rows": rows}
    with open(os.path.join(out, "proofs-latest.json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    md = ["# Proofs (z3)", "", f"`groupcheck prove`, bound N<={n} member ids, P<={parts} partitions; "
          f"{sum(r['result'] == 'proved' for r in rows)}/{len(rows)} proved in {wall:.1f} s.", "",
          render_table(rows), "", "## Reasons", ""]
    md += [f"- **{r['property']}** ({r['result']}): {r['reason']}" for r in rows]
    md += ["", "## Strengthening invariants", ""]
    md += [f"- `{name}`: {text}" for name, (_, text) in symbolic.INVARIANTS.items()]
    md += ["", "## Environment assumptions", ""]
    md += [f"- {name}: {text}" for name, text in symbolic.ASSUMPTIONS.items()]
    with open(os.path.join(out, "proofs-latest.md"), "w") as f:
        f.write("\n".join(md) + "\n")
