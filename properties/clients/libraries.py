"""The consumer settings ``groupcheck conform client --set NAME=VALUE`` passes on to every
library's consumers, and :func:`get`, a client library from the registry of targets
(:mod:`properties.targets`: its runner module and the Python module it imports), refused with one
line (exit 2) when unknown or not installed, before anything starts.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from properties import targets
from properties.errors import UsageError, whole_number
from properties.live.child import split_settings

def get(name: str) -> targets.Target:
    """The client library *name*, installed; UsageError otherwise."""
    return targets.get(targets.CLIENT, name, "--client").installed()


#: The consumer settings ``--set`` takes (Kafka's names); every runner maps them to its library.
SETTINGS: Tuple[str, ...] = ("session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms",
                             "request.timeout.ms", "partition.assignment.strategy")
ASSIGNORS = ("range", "roundrobin")


def parse_settings(pairs: List[str]) -> Dict[str, object]:
    """``--set NAME=VALUE`` items: milliseconds as integers, the assignors as a list."""
    out: Dict[str, object] = {}
    for name, value in split_settings(pairs, UsageError):
        if name not in SETTINGS:
            raise UsageError(f"--set {name}: not a consumer setting groupcheck conform client passes on "
                             f"(known: {', '.join(SETTINGS)})")
        if name == "partition.assignment.strategy":
            assignors = [a.strip() for a in value.split(",") if a.strip()]
            bad = [a for a in assignors if a not in ASSIGNORS]
            if not assignors or bad:
                raise UsageError(f"--set {name}={value}: expected a list of {', '.join(ASSIGNORS)}")
            out[name] = assignors
            continue
        out[name] = whole_number(f"--set {name}={value}", value, 1, "an integer (milliseconds)")
    return out
