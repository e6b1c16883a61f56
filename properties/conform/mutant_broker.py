"""``python -m properties.conform.mutant_broker MUTANT [groupcheck broker arguments]``: groupcheck's
broker with one of :mod:`properties.mutation.mutants`' server-side bugs applied for its whole life
— the deliberately broken broker the conformance judge must catch (``groupcheck conform broker
--launch groupcheck --mutant NAME``)."""

from __future__ import annotations

import argparse
import sys

from properties.errors import UsageError
from properties.live.broker import add_parser
from properties.mutation.mutants import UnknownMutant, applied


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print("usage: python -m properties.conform.mutant_broker MUTANT [broker arguments]", file=sys.stderr)
        return 2
    name, rest = argv[0], argv[1:]
    parser = argparse.ArgumentParser(prog="mutant_broker")
    args = add_parser(parser.add_subparsers(dest="command")).parse_args(rest)
    try:
        with applied(name):
            return args.func(args)
    except UnknownMutant as e:
        print(f"mutant_broker: error: {e}", file=sys.stderr)
        return 2
    except UsageError as e:
        print(f"mutant_broker: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
