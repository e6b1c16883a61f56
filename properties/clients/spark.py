"""``groupcheck campaign --system client:NAME``: client conformance schedules as a Spark job.

Each task runs its seeds one after the other, each schedule with a ``groupcheck broker`` of its own
on a free loopback port of the executor's machine and the consumers beside it
(:func:`properties.clients.command.run_seed`), and sends back plain results; the driver merges
them (the first counterexample of every rule is the one of the smallest seed, whatever the order
tasks finish in), shrinks one counterexample per rule, and writes the same report as ``groupcheck
conform client``. Schedules wait on wall-clock faults far more than they compute, so ``local[4]``
on two cores runs four at once.

Arguments of ``groupcheck campaign`` that apply: ``--interleavings`` (schedules), ``--seed-start``,
``--clients`` (consumers), ``--set`` (consumer settings), ``--mutant`` (``client:groupcheck``
only), ``--master``, ``--local``, ``--task-size`` (schedules per task, default 2), ``--out``,
``--json``.
"""

from __future__ import annotations

import functools
import time

from properties import findings as shape
from properties import targets
from properties.clients.command import ClientTally, client_parts, finish, make_plan, print_summary
from properties.engine import run as engine
from properties.engine.errors import RunError
from properties.engine.spark import run_schedules
from properties.errors import UsageError

DEFAULT_TASK_SIZE = 2


def cmd_client_campaign(args) -> int:
    name = targets.resolve(args.system).name
    for option in ("bootstrap", "baseline"):
        if getattr(args, option, None):
            raise RunError(f"--{option} is not for --system {args.system}")
    if getattr(args, "world", None) == "swarm":
        raise RunError(f"--world swarm draws simulated worlds; --system {args.system} runs client schedules: "
                       "leave --world out")
    try:
        plan = make_plan(args, name, args.mutant, args.clients or 3, args.settings)
    except UsageError as e:
        raise RunError(str(e).replace(f"--client {name}", f"--system client:{name}")) from None
    out, tally, started = args.out or f"reports/client-campaign-{plan['client']}", ClientTally(), time.monotonic()
    with engine.session() as interrupts:
        outcome, master, task_size = run_schedules(
            args, functools.partial(client_parts, plan), tally, interrupts, out, "groupcheck-client-campaign",
            f"of client:{plan['client']}", DEFAULT_TASK_SIZE, "with findings")
        with interrupts.held(release=False):
            summary = finish(tally, plan, out, time.monotonic() - started, shrinking=not outcome.partial,
                             settings={"seed": args.seed_start, "master": master, "task_size": task_size},
                             requested=args.interleavings,
                             stopped_by=outcome.stopped_by,
                             failure=outcome.failure)
            print_summary(summary, args.json, out)
    outcome.report_end(out)
    return outcome.exit_status(shape.exit_status(summary))
