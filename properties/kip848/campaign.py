"""The KIP-848 worlds of a campaign: walks of the KIP-848 model beside the classic interleavings.

``groupcheck campaign`` (``--kip848-every K``, default 4) walks a KIP-848 world for every K-th
seed of its range, in the same tasks as the classic interleavings (so they spread over the cluster
the same way and the classic seeds are untouched), impl/'s KIP-848 coordinator and consumers beside the model's
(:mod:`properties.kip848.differential`): :func:`run_seeds` on the executor,
:func:`merge` on the driver (order-independent, as the campaign's totals are), :func:`section`
for results.json and :func:`markdown` for summary.md. A failing walk is kept as a counterexample
file (the first seed's, per property; not shrunk yet) that ``groupcheck kip848 --replay`` replays.
"""

from __future__ import annotations

import time

EXAMPLE_SEEDS = 5
DEFAULT_EVERY = 4


def run_seeds(seeds, clients: int = 3, broken=frozenset(), impl: bool = True) -> dict:
    """Walk the KIP-848 world of each seed, with *impl* impl/'s coordinator and consumers beside the model's
    (a campaign of ``--system impl``): counts, coverage, failures per property (*broken*: variants
    of the model, for the tests of this part, judged by the model's properties alone)."""
    from model.kip848.config import Config
    from properties.kip848.counterexample import counterexample
    from properties.kip848.walker import COVERAGE, DEFAULT_STEPS, walk

    began = time.perf_counter()
    config = Config(clients=clients, broken=frozenset(broken))
    part = {"walks": 0, "events": 0, "seconds": 0.0, "coverage": dict.fromkeys(COVERAGE, 0), "failures": {}}
    beside = impl and not broken
    for seed in seeds:
        result = walk(seed, config, steps=DEFAULT_STEPS, impl=beside, hash_trace=False)
        part["walks"] += 1
        part["events"] += len(result.schedule)
        for corner, n in result.coverage.items():
            part["coverage"][corner] = part["coverage"].get(corner, 0) + n
        v = result.violation
        if v is not None:  # a known hazard is kept the same way, and told apart by its kind (section)
            entry = part["failures"].setdefault(v.property, {"count": 0, "seeds": [], "counterexample": None})
            entry["count"] += 1
            if len(entry["seeds"]) < EXAMPLE_SEEDS:
                entry["seeds"].append(seed)
            if entry["counterexample"] is None:  # the file carries the trace hash: the seed walked again with it
                hashed = walk(seed, config, steps=DEFAULT_STEPS, impl=beside)
                entry["counterexample"] = counterexample(hashed, config, DEFAULT_STEPS, "impl" if beside else "model")
    part["seconds"] = time.perf_counter() - began
    part["impl"] = beside
    return part


def merge(a: dict | None, b: dict) -> dict:
    """Two parts as one (counts add up; per property the first seeds and the counterexample of the
    lowest seed are kept, whatever order the parts come in)."""
    if a is None:
        return {**b, "coverage": dict(b["coverage"]), "failures": {k: dict(v) for k, v in b["failures"].items()}}
    out = {"walks": a["walks"] + b["walks"], "events": a["events"] + b["events"],
           "seconds": a["seconds"] + b["seconds"], "coverage": dict(a["coverage"]), "failures": {},
           "impl": a.get("impl", False) and b.get("impl", False)}
    for corner, n in b["coverage"].items():
        out["coverage"][corner] = out["coverage"].get(corner, 0) + n
    for prop in sorted(set(a["failures"]) | set(b["failures"])):
        x, y = a["failures"].get(prop), b["failures"].get(prop)
        if x is None or y is None:
            out["failures"][prop] = dict(x or y)
            continue
        first = x if x["counterexample"]["seed"] <= y["counterexample"]["seed"] else y
        out["failures"][prop] = {"count": x["count"] + y["count"],
                                 "seeds": sorted(x["seeds"] + y["seeds"])[:EXAMPLE_SEEDS],
                                 "counterexample": first["counterexample"]}
    return out


def section(part: dict | None, every: int, directed: dict | None = None) -> dict | None:
    """results.json's ``kip848``: what was walked, each property's verdict, coverage, failures; and
    the directed KIP-848 schedules replayed after the walks (*directed*: their part,
    :func:`properties.kip848.directed.run`; None when they did not run), their coverage kept apart."""
    from properties.kip848.catalogue import CATALOGUE, HAZARD, HAZARDS, IMPL_PROPERTIES, KIND_OF

    BY_HAZARD = {h.name: h for h in HAZARDS}
    if not every:
        return None
    part = part or {"walks": 0, "events": 0, "seconds": 0.0, "coverage": {}, "failures": {}}
    directed_failures = (directed or {}).get("failures", {})
    walks = part["walks"]
    properties = []
    impl = bool(part.get("impl"))
    for p in CATALOGUE + IMPL_PROPERTIES:
        failed = part["failures"].get(p.name, {}).get("count", 0)
        failed_directed = sum(o["property"] == p.name for o in (directed or {}).get("outcomes", ()))
        checked = (walks or directed) and (impl or p not in IMPL_PROPERTIES)
        verdict = "failed" if failed or failed_directed else ("held" if checked else "not checked")
        properties.append({"property": p.name, "kind": p.kind, "verdict": verdict, "failed": failed,
                           "failed_directed": failed_directed, "statement": p.statement, "source": p.source})
    def found(prop, e):
        return {"property": prop, "count": e["count"], "seeds": e["seeds"],
                "file": f"counterexamples/kip848-{prop}.json",
                "replay": f"groupcheck kip848 --replay counterexamples/kip848-{prop}.json"}

    def found_directed(prop, doc):
        return {"property": prop, "count": 1, "seeds": [], "directed": doc["directed"]["corner"],
                "file": f"counterexamples/kip848-directed-{prop}.json",
                "replay": f"groupcheck kip848 --replay counterexamples/kip848-directed-{prop}.json"}

    failures = ([found(prop, e) for prop, e in sorted(part["failures"].items()) if KIND_OF.get(prop) != HAZARD]
                + [found_directed(prop, doc) for prop, doc in sorted(directed_failures.items())
                   if KIND_OF.get(prop) != HAZARD])
    hazards = ([dict(found(prop, e), statement=BY_HAZARD[prop].statement, source=BY_HAZARD[prop].source)
                for prop, e in sorted(part["failures"].items()) if KIND_OF.get(prop) == HAZARD]
               + [dict(found_directed(prop, doc), statement=BY_HAZARD[prop].statement, source=BY_HAZARD[prop].source)
                  for prop, doc in sorted(directed_failures.items()) if KIND_OF.get(prop) == HAZARD])
    directed_coverage = (directed or {}).get("coverage", {})
    return {"every": every, "walks": walks, "events": part["events"], "seconds": round(part["seconds"], 3),
            "impl": impl,
            "properties": properties, "coverage": part["coverage"],
            "never_reached": [c for c, n in part["coverage"].items() if n == 0 and not directed_coverage.get(c)],
            "reached_only_by_directed": [c for c, n in part["coverage"].items() if n == 0 and directed_coverage.get(c)],
            "directed": None if directed is None else {
                "schedules": directed["schedules"], "seconds": directed["seconds"], "coverage": directed_coverage,
                "outcomes": [{k: o[k] for k in ("corner", "events", "verdict", "property")} for o in directed["outcomes"]]},
            "failures": failures, "hazards": hazards}


def markdown(s: dict | None) -> list:
    """summary.md's lines for the KIP-848 worlds."""
    if s is None:
        return []
    beside = ("impl/'s KIP-848 coordinator (impl/server/modern) and consumers (impl/membership) ran beside the "
              "model's and were compared after every event." if s.get("impl") else
              "The model alone (impl/ was not run beside it).")
    stopped = sum(f["count"] for f in list(s.get("hazards", ())) + s["failures"] if not f.get("directed"))
    ends = ("each ending in a quiet phase after which `kip848-converges` is judged" if not stopped else
            f"each ending in a quiet phase after which `kip848-converges` is judged, but for {stopped:,} that "
            "stopped at a failure or a known hazard (below): their properties were checked up to that event, "
            "and no quiet phase or convergence followed")
    L = ["## KIP-848 worlds (the consumer group protocol)", "",
         f"{s['walks']:,} walks of KIP-848 worlds (every {s['every']}th seed of the range; {s['events']:,} events, "
         f"{s['seconds']:.1f} s of task time), {ends}. " + beside, "",
         "| property | kind | verdict | failing walks |" + (" failing directed schedules |" if s.get("directed") else ""),
         "|---|---|---|---|" + ("---|" if s.get("directed") else "")]
    L += [f"| `{p['property']}` | {p['kind']} | {p['verdict']} | {p['failed']:,} |"
          + (f" {p.get('failed_directed', 0)} |" if s.get("directed") else "") for p in s["properties"]]
    reached = ", ".join(f"{c} {n:,}" for c, n in s["coverage"].items() if n)
    L += ["", f"Reached by the walks: {reached or 'nothing'}."]
    d = s.get("directed")
    if d is not None:
        outcomes = "; ".join(f"{o['corner']}: {o['events']:,} events, "
                             + ("clean" if o["property"] is None else f"{o['verdict']} ({o['property']})")
                             for o in d["outcomes"])
        L += [f"Directed KIP-848 schedules (properties/kip848/directed.json), replayed after the walks with a quiet "
              f"phase and `kip848-converges`: {d['schedules']}, {d['seconds']:.1f} s — {outcomes or 'none'}. "
              f"Corners only they reached: {', '.join(s.get('reached_only_by_directed', ())) or 'none'}."]
    L += [f"Never reached: {', '.join(s['never_reached']) or 'none'}.", ""]
    for f in s["failures"]:
        where = (f"the directed schedule for {f['directed']}" if f.get("directed") else
                 f"{f['count']:,} walks, first seeds {', '.join(map(str, f['seeds']))}")
        L += [f"- `{f['property']}`: {where}; replay: `{f['replay']}`"]
    if s.get("hazards"):
        L += ["", "Known hazards reached (Kafka's own behaviour, not failures; docs/kip848.md):", ""]
        L += [f"- `{h['property']}`: " + (f"the directed schedule for {h['directed']}" if h.get("directed") else
                                          f"{h['count']:,} walks, seeds {', '.join(map(str, h['seeds']))}")
              + f"; replay: `{h['replay']}`. {h['statement']} ({h['source']})" for h in s["hazards"]]
    return L + ([""] if s["failures"] or s.get("hazards") else [])
