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

import os
import time

from properties.campaign.spark import CampaignError, run_schedule_tasks, task_ranges
from properties.clients.command import ClientTally, finish, make_plan, print_summary, run_seed
from properties.errors import UsageError
from properties.progress import Progress

DEFAULT_TASK_SIZE = 2


def client_task(plan: dict, start: int, stop: int) -> list:
    return [run_seed(plan, seed) for seed in range(start, stop)]


def cmd_client_campaign(args) -> int:
    name = args.system.split(":", 1)[1]
    for option in ("bootstrap", "baseline"):
        if getattr(args, option, None):
            raise CampaignError(f"--{option} is not for --system {args.system}")
    if getattr(args, "world", None) == "swarm":
        raise CampaignError(f"--world swarm draws simulated worlds; --system {args.system} runs client schedules: "
                            "leave --world out")
    try:
        plan = make_plan(args, name, args.mutant, args.clients or 3, args.settings)
    except UsageError as e:
        raise CampaignError(str(e).replace(f"--client {name}", f"--system client:{name}")) from None
    task_size = args.task_size or DEFAULT_TASK_SIZE
    ranges = task_ranges(args.seed_start, args.interleavings, task_size)
    progress = Progress(args.interleavings, unit="schedules", failures="with findings")
    out = args.out or f"reports/client-campaign-{plan['client']}"
    os.makedirs(out, exist_ok=True)
    tally = ClientTally()
    started = time.monotonic()
    tally, master, interrupted = run_schedule_tasks(
        args, out, "groupcheck-client-campaign", f"of client:{plan['client']} in tasks of {task_size}",
        lambda start, stop: client_task(plan, start, stop), ranges, tally, progress)
    progress(tally.done, tally.failed, final=True)
    summary = finish(tally, plan, out, time.monotonic() - started, shrinking=True,
                     settings={"seed": args.seed_start, "master": master, "task_size": task_size,
                               "interrupted": interrupted})
    print_summary(summary, args.json, out)
    if interrupted:
        return 130
    return 0 if summary["verdict"] == "conforms" else 1
