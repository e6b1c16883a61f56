"""Counterexample files: everything needed to reproduce a failing interleaving, as JSON.

A file holds the format name and version, the tool (version, git commit, local changes), the
system, the seed (and, for a run against a mutated implementation, the mutant's name,
``"mutant"``), the full configuration and every setting by its Kafka name (``"settings"``), the
fault profile and step count it was drawn with, the schedule (every applied event, in order), the
failing property, its message and step, the trace hash, and both sides' state after the failing
step. :func:`load` validates a file and raises :class:`CounterexampleError`
with one clear sentence for anything corrupt or foreign; ``groupcheck replay`` reproduces it.
"""

from __future__ import annotations

import json

import attrs

from model.config import Config, ConfigError, settings_of
from model.events import as_event, to_json
from properties.catalogue import BY_NAME, EVENTUALLY
from properties.provenance import provenance

FORMAT = "groupcheck-counterexample"
VERSION = 1


class CounterexampleError(ValueError):
    """A counterexample file that cannot be used; the message says which file and why."""


def tool_version() -> str:
    """groupcheck's version (see :mod:`properties.provenance`, which also knows the commit)."""
    return provenance()["version"]


def config_to_dict(config: Config) -> dict:
    values = attrs.asdict(config)
    values["broken"] = sorted(config.broken)
    return values


def config_from_dict(values: dict) -> Config:
    if not isinstance(values, dict):
        raise ConfigError(f"config must be an object, got {type(values).__name__}")
    known = {a.name for a in attrs.fields(Config)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"unknown config field {unknown[0]!r}")
    return Config(**values)


def build(result, *, system: str, seed: int, config: Config, steps: int, faults: str, max_faults: int | None = None,
          quiet_rate: float | None = None, mix: str | None = None) -> dict:
    """The counterexample document of a failing :class:`properties.explore.walker.RunResult`.
    *max_faults* and *quiet_rate*, when the walk did not use the defaults (a swarm world's draw),
    are recorded under ``walk``: the schedule replays without them, but they say what was searched."""
    from properties.systems import states

    violation = result.violation
    walk = {k: v for k, v in (("max_faults", max_faults), ("quiet_rate", quiet_rate), ("mix", mix)) if v is not None}
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "tool": provenance(),
        "system": system,
        "seed": seed,
        "config": config_to_dict(config),
        "settings": settings_of(config),
        "faults": faults,
        "steps": steps,
        "property": violation.property,
        "message": violation.message,
        "check_eventually": _is_eventually(violation.property),
        "failing_step": result.step,
        "trace_hash": result.trace_hash,
        "schedule": [to_json(e) for e in result.schedule],
        "state": states(result),
    }
    if walk:
        doc["walk"] = walk
    return doc


def _is_eventually(name: str) -> bool:
    prop = BY_NAME.get(name)
    return prop is not None and prop.kind == EVENTUALLY


def write(path, document: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1)
        f.write("\n")


_REQUIRED = {
    "system": str, "seed": int, "config": dict, "schedule": list, "property": str, "trace_hash": str,
    "check_eventually": bool,
}


def load(path) -> tuple[dict, Config]:
    """Read and validate a counterexample file: (document, config). Raises CounterexampleError."""
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except FileNotFoundError:
        raise CounterexampleError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CounterexampleError(f"{path}: is a directory, not a counterexample file") from None
    except UnicodeDecodeError:
        raise CounterexampleError(f"{path}: not a text file") from None
    except json.JSONDecodeError as e:
        raise CounterexampleError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise CounterexampleError(f"{path}: not a groupcheck counterexample file (no \"format\": \"{FORMAT}\")")
    if document.get("version") != VERSION:
        raise CounterexampleError(
            f"{path}: counterexample format version {document.get('version')!r} is not supported (this groupcheck reads {VERSION})")
    for field, kind in _REQUIRED.items():
        value = document.get(field)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise CounterexampleError(f"{path}: field {field!r} is missing or not a {kind.__name__}")
    from properties.systems import SYSTEMS

    if document["system"] not in SYSTEMS:
        raise CounterexampleError(f"{path}: unknown system {document['system']!r}")
    mutant = document.get("mutant")
    if mutant is not None:
        from properties.mutation.mutants import ALL

        if mutant not in ALL:
            raise CounterexampleError(f"{path}: unknown mutant {mutant!r} (see groupcheck mutants --list)")
        if document["system"] != "impl":
            raise CounterexampleError(f"{path}: a mutant applies to the impl system, not {document['system']!r}")
    for i, event in enumerate(document["schedule"]):
        if not (isinstance(event, list) and event and isinstance(event[0], str)):
            raise CounterexampleError(f"{path}: schedule event {i} is not an event (a list starting with its kind): {event!r}")
        try:
            as_event(event)  # a kind of model.events, with its fields
        except ValueError as e:
            raise CounterexampleError(f"{path}: schedule event {i}: {e}") from None
    try:
        config = config_from_dict(document["config"])
    except (ConfigError, TypeError) as e:
        raise CounterexampleError(f"{path}: bad config: {e}") from None
    return document, config
