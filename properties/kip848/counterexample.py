"""The KIP-848 counterexample file: a failing walk's seed, its swarm world's config, what ran
beside the model (``system``, ``mutant``), the violation and the schedule; written by
``groupcheck kip848 --out`` and by campaigns (``counterexamples/kip848-PROPERTY.json``), read by
``groupcheck kip848 --replay``."""

from __future__ import annotations

import json

import attrs

from model.config import ConfigError
from model.kip848.config import Config
from properties.errors import UsageError

FORMAT = "groupcheck-kip848-counterexample/1"


def counterexample(result, config: Config, steps: int, system: str = "model", mutant: str | None = None) -> dict:
    """The counterexample file's document of a failing walk (*config*: the walk's base config; the
    seed's swarm world is what is written, so the file replays alone; *system* and *mutant*: what
    ran beside the model, which the replay runs again)."""
    from properties.kip848.walker import seed_world

    world_config, _, _ = seed_world(result.seed, config)
    return {"format": FORMAT, "seed": result.seed, "steps": steps, "system": system, "mutant": mutant,
            "config": {k: (sorted(v) if isinstance(v, frozenset) else v) for k, v in attrs.asdict(world_config).items()},
            "violation": {"property": result.violation.property, "message": result.violation.message},
            "step": result.step, "trace_hash": result.trace_hash, "schedule": [list(e) for e in result.schedule]}


def write(path: str, doc: dict) -> None:
    try:
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None


def load(path: str) -> tuple[Config, list, dict]:
    """(config, schedule, the file's data) of a counterexample file; UsageError if it is not one."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise UsageError(f"--replay: cannot read {path}: {e.strerror}") from None
    except ValueError as e:
        raise UsageError(f"--replay: {path} is not JSON ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UsageError(f"--replay: {path} is not a KIP-848 counterexample (format {FORMAT!r} expected)")
    try:
        config = Config(**dict(data["config"], broken=frozenset(data["config"].get("broken", ()))))
        schedule = [tuple(e) for e in data["schedule"]]
    except (KeyError, TypeError, ConfigError) as e:
        raise UsageError(f"--replay: {path} has a bad config or schedule: {e}") from None
    if data.get("system", "model") not in ("impl", "model"):
        raise UsageError(f"--replay: {path} has an unknown system {data.get('system')!r} (impl or model)")
    return config, schedule, data
