"""``python -m tests.helpers.two_stage_broker [groupcheck broker arguments]``: groupcheck's broker
with two bugs, the second of which only shows after the first has (issue 36: "a mutant of
groupcheck's broker that misbehaves only after an earlier acknowledged divergence is caught").

1. Its generations are numbered from 0 (Tansu's numbering: harmless, and a profile may acknowledge
   the divergence it is: ``JoinGroup: answered NONE with generation_id 0 where the model allows 1``).
2. From its second generation on, a Heartbeat during PreparingRebalance is answered NONE instead of
   REBALANCE_IN_PROGRESS (``heartbeat_none_while_preparing``, from then on only): a member is not
   told to rejoin. Every schedule that reaches it has shown the first divergence already, so a
   checker that stopped at a schedule's first divergence never saw it.
"""

from __future__ import annotations

import sys

from properties.mutation.mutants import Mutant, applied

_GC = "impl.server.group_coordinator.GroupCoordinator"
_GM = "impl.server.group_metadata.GroupMetadata"

NUMBERED_FROM_ZERO = Mutant(
    "generations_from_zero", "the first generation is 0, then 1, 2, ...", f"{_GM}.__init__", "numbering",
    [("self.generation_id = 0", "self.generation_id = -1  # MUTANT: so that the first generation is 0")])
LATE_HEARTBEAT_BUG = Mutant(
    "heartbeat_none_while_preparing_after_the_first_generation", "NONE instead of REBALANCE_IN_PROGRESS, from "
    "generation 1 on", f"{_GC}.handle_heartbeat", "wrong error code",
    [("error = Errors.REBALANCE_IN_PROGRESS",
      "error = _NONE if group.generation_id >= 1 else Errors.REBALANCE_IN_PROGRESS  # MUTANT: from the second "
      "generation on")])


def main(argv=None) -> int:
    import argparse

    from properties.live.broker import add_parser

    parser = argparse.ArgumentParser(prog="two_stage_broker")
    args = add_parser(parser.add_subparsers(dest="command")).parse_args(sys.argv[1:] if argv is None else argv)
    with applied(NUMBERED_FROM_ZERO), applied(LATE_HEARTBEAT_BUG):
        return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
