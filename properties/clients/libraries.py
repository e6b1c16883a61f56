"""The client libraries ``groupcheck conform client --client NAME`` can run, and their settings.

Each library has a runner module (:mod:`properties.clients.runners`) and the Python module it
imports; :func:`get` refuses an unknown name or a library that is not installed with one line
(exit 2), before anything starts.
"""

from __future__ import annotations

import importlib.util
from typing import Dict, List, Tuple

import attrs

from properties.errors import UsageError
from properties.live.child import split_setting


@attrs.frozen
class Library:
    name: str
    runner: str  # the runner's module, run with ``python -m``
    module: str  # what it imports (checked before anything starts)
    pip: str  # what to install


LIBRARIES: Dict[str, Library] = {lib.name: lib for lib in (
    Library("kafka-python", "properties.clients.runners.kafka_python", "kafka", "kafka-python==3.0.12"),
    Library("confluent-kafka", "properties.clients.runners.confluent_kafka", "confluent_kafka", "confluent-kafka==2.16.1"),
    Library("aiokafka", "properties.clients.runners.aiokafka", "aiokafka", "aiokafka==0.14.0"),
    Library("groupcheck", "properties.clients.runners.groupcheck", "impl", "groupcheck (this package)"),
)}

#: The consumer settings ``--set`` takes (Kafka's names); every runner maps them to its library.
SETTINGS: Tuple[str, ...] = ("session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms",
                             "request.timeout.ms", "partition.assignment.strategy")
ASSIGNORS = ("range", "roundrobin")


def get(name: str) -> Library:
    """The library *name*, installed; UsageError otherwise."""
    library = LIBRARIES.get(name)
    if library is None:
        raise UsageError(f"--client {name}: not a client groupcheck can run (known: {', '.join(LIBRARIES)})")
    if importlib.util.find_spec(library.module) is None:
        raise UsageError(f"--client {name}: the library is not installed (pip install {library.pip})")
    return library


def parse_settings(pairs: List[str]) -> Dict[str, object]:
    """``--set NAME=VALUE`` items: milliseconds as integers, the assignors as a list."""
    out: Dict[str, object] = {}
    for pair in pairs:
        name, value = split_setting(pair, UsageError)
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
        try:
            number = int(value)
        except ValueError:
            raise UsageError(f"--set {name}={value}: expected an integer (milliseconds)") from None
        if number < 1:
            raise UsageError(f"--set {name}={value}: must be at least 1")
        out[name] = number
    return out
