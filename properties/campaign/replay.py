"""``groupcheck replay FILE``: reproduce a counterexample file and show its trace.

The schedule is re-run exactly on the recorded system (for ``impl``, the implementation beside
the model, with the recorded seed for the implementation's own generators, and the recorded
mutant applied if the file came from a run against a mutated implementation). The run reproduces
the counterexample when its trace hash equals the recorded one. The trace is printed as a table,
one row per event: the time, the event, each member's state and generation, the group's state and
generation, and the responses the coordinator sent during the event; then the failing property
and both sides' state after the failing event. A long schedule is not printed whole: by default
the table is a window of the failing step and the 150 events before it (when the schedule passes now:
around the recorded failing step), with ``--last N`` the last N events; ``--json`` carries the
same rows (and ``events``, the number of rows of the whole replay). The counterexample file keeps
the whole schedule.

Exit status: 1 when the replay fails a property (the counterexample still reproduces), 0 when the
schedule now passes (the bug is fixed, or the file was edited), 2 for a file that cannot be used.
"""

from __future__ import annotations

import json
import sys
from collections import deque

from model.errors import name_of
from properties.campaign import counterexample
from properties import systems

_STATE_SHORT = {"UNJOINED": "UNJ", "PREPARING_REBALANCE": "PREP", "COMPLETING_REBALANCE": "COMPL", "STABLE": "STABLE"}
_GROUP_SHORT = {"Empty": "Empty", "PreparingRebalance": "Preparing", "CompletingRebalance": "Completing",
                "Stable": "Stable", "Dead": "Dead"}


def _row(index: int, event: tuple, world, log: list) -> dict:
    group = world.group
    members = []
    for c in world.clients:
        if not c.alive:
            members.append("crashed")
        elif c.closed:
            members.append("closed")
        else:
            members.append(f"{_STATE_SHORT.get(c.state, c.state)}/g{c.generation}")
    responses = [f"c{e[1]} {e[3]} {name_of(e[4]) if not isinstance(e[4], str) else e[4]}" for e in log if e[0] == "reply"]
    return {
        "step": index,
        "time": world.now,
        "event": list(event),
        "members": members,
        "group": None if group is None else f"{_GROUP_SHORT.get(group.state, group.state)}/g{group.generation}",
        "responses": responses,
    }


# rows shown by default before and after the failing step: a shrunk schedule is shown whole
WINDOW_BEFORE, WINDOW_AFTER = 150, 10


class _Rows:
    """The rows a replay shows: never every row of a long schedule. With *last*, the last *last*
    rows; otherwise a window around the failing step — the replay's own (its last row: a replay
    stops at its failure) or, when the schedule passes now, the recorded one."""

    def __init__(self, last: int | None, anchor: int | None):
        self.count = 0
        self.tail = deque(maxlen=last if last else WINDOW_BEFORE + 1)
        self.last = last
        self.low = None if anchor is None else anchor - WINDOW_BEFORE
        self.high = None if anchor is None else anchor + WINDOW_AFTER
        self.around: list = []

    def add(self, row: dict) -> None:
        self.tail.append(row)
        if self.low is not None and self.low <= row["step"] <= self.high:
            self.around.append(row)
        self.count += 1

    def shown(self, failed: bool) -> list:
        if self.last or failed or not self.around:
            return list(self.tail)
        return self.around


def replay_file(path: str, as_json: bool = False, last: int | None = None) -> int:
    """Replay the counterexample at *path*; print a window of rows around the failing step (or
    the *last* rows) as a table, or as JSON. Returns the exit status."""
    try:
        document, config = counterexample.load(path)
    except counterexample.CounterexampleError as e:
        print(f"groupcheck: error: {e}", file=sys.stderr)
        return 2
    recorded = document.get("failing_step")
    rows = _Rows(last, recorded if isinstance(recorded, int) else None)

    def on_step(world, event, new, log):
        rows.add(_row(rows.count, event, new, log))

    import contextlib

    mutant = document.get("mutant")
    if mutant is not None:
        from properties.mutation.mutants import applied

        around = applied(mutant)
    else:
        around = contextlib.nullcontext()
    try:
        with around:
            result = systems.replay(document["system"], config, [tuple(e) for e in document["schedule"]],
                                    seed=document["seed"], check_eventually=document["check_eventually"], on_step=on_step)
    except (ValueError, TypeError, IndexError, KeyError) as e:  # an event the world cannot take
        print(f"groupcheck: error: {path}: the schedule cannot be replayed ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    divergence = getattr(result.companion, "divergence", None)
    if result.violation is not None and divergence is not None and divergence.model_applied != divergence.impl_applied:
        side = "the model" if divergence.model_applied else "the implementation"
        if divergence.impl_applied:  # the model did not apply it, so the walker showed no row for it
            rows.add({"step": rows.count, "time": result.world.now, "event": list(divergence.event), "members": [],
                      "group": None, "responses": [], "note": f"applied by {side} only"})
        else:
            rows.tail[-1]["note"] = f"applied by {side} only"
    v = result.violation
    shown = rows.shown(v is not None)
    reproduced = result.trace_hash == document["trace_hash"] and v is not None and v.property == document["property"]
    summary = {
        "file": path,
        "system": document["system"],
        "mutant": mutant,
        "seed": document["seed"],
        "reproduced": reproduced,
        "trace_hash": result.trace_hash,
        "expected_trace_hash": document["trace_hash"],
        "property": v.property if v else None,
        "message": v.message if v else None,
        "step": result.step,
        "events": rows.count,  # rows of the whole replay; "steps" holds the ones shown
        "first_shown": shown[0]["step"] if shown else None,
        "steps": shown,
        "state": systems.states(result),
    }
    if as_json:
        print(json.dumps(summary))
    else:
        _print_table(summary, document, config.clients, last)
    return 1 if v is not None else 0


def _print_table(summary: dict, document: dict, clients: int, last: int | None = None) -> None:
    mutant = f" with mutant {summary['mutant']}" if summary["mutant"] else ""
    print(f"{summary['file']}: {document['system']} system{mutant}, seed {document['seed']}, {len(document['schedule']):,} events; "
          f"recorded property {document['property']}")
    shown = summary["steps"]
    w = max([5] + [len(str(row["step"])) for row in shown[-1:]])
    tw = max([7] + [len(str(row["time"])) for row in shown[-1:]])
    header = f"{'step':>{w}}  {'time':>{tw}}  {'event':<30}  " + "  ".join(f"{'c' + str(c):<12}" for c in range(clients)) + \
        f"  {'group':<14}  responses"
    print(header)
    print("-" * len(header))
    before = shown[0]["step"] if shown else 0
    after = summary["events"] - (shown[-1]["step"] + 1 if shown else 0)
    more = f"groupcheck replay {summary['file']} --last N shows the last N; the file has the whole schedule"
    if before:
        print(f"  ... {before:,} earlier events not shown ({more})")
    for row in shown:
        event = " ".join(str(x) for x in row["event"][:-1])  # the pick is noise to a reader
        members = "  ".join(f"{m:<12}" for m in row["members"]) if row["members"] else \
            f"({row.get('note', '')})".ljust(14 * clients)
        note = f"  ({row['note']})" if row.get("note") and row["members"] else ""
        print(f"{row['step']:>{w}}  {row['time']:>{tw}}  {event:<30}  {members}  {row['group'] or '-':<14}  "
              + "; ".join(row["responses"]) + note)
    if after:
        print(f"  ... {after:,} later events not shown ({more})")
    if summary["property"]:
        print(f"\nproperty {summary['property']} failed at step {summary['step']}: {summary['message']}")
        state = summary["state"]
        if "impl" in state:
            print("state after the failing step (model | implementation):")
            for key in ("now", "partition_leader", "group", "committed"):
                mark = "" if state["model"][key] == state["impl"][key] else "   <-- differs"
                print(f"  {key}: {state['model'][key]} | {state['impl'][key]}{mark}")
            for c, (m, i) in enumerate(zip(state["model"]["clients"], state["impl"]["clients"])):
                mark = "" if m == i else "   <-- differs"
                print(f"  client {c}: {m} | {i}{mark}")
    else:
        print("\nno property failed: the schedule passes now")
    if summary["reproduced"]:
        print(f"reproduced exactly (trace {summary['trace_hash']})")
    else:
        print(f"NOT reproduced: trace {summary['trace_hash']}, recorded {summary['expected_trace_hash']}")
