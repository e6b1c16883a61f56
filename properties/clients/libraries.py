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
    """The client library *name*, installed and ready to run; UsageError otherwise."""
    library = targets.get(targets.CLIENT, name, "--client").installed()
    _ready(library)
    return library


def _ready(library: targets.Target) -> None:
    """What a runner builds before its first start (the Java runner: the release's jars and the
    compiled runner, each once into the cache), built here, so that a failure is one usage error
    before any schedule runs, not consumers that die in every schedule and a group that never
    settles (seen with ``--client java:3.9.2`` when the runner used 4.1's ``CloseOptions``)."""
    import importlib

    ready = getattr(importlib.import_module(library.runner), "ready", None)
    if ready is not None:
        ready(library.name)


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
