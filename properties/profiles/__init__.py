"""Broker profiles: what Kafka's protocol leaves to a broker's configuration, as TOML files.

A :class:`Profile` tells the model what it cannot know from the wire — the session bounds, the
initial rebalance delay, the highest version of each API to speak (and why), the number a broker's
first generation has, how long an answer may take and how far a timer may stray, which of Kafka's
two coordinators the broker follows — and lists the divergences from Kafka a report acknowledges,
each with its reason and a link. The built-in brokers' profiles are the files beside this module
(``groupcheck.toml``, ``kafka.toml``, ``tansu.toml``, ``rdkafka-mock.toml``, ``bootstrap.toml``;
:func:`builtin`); ``groupcheck conform broker --profile FILE.toml`` reads any other (:func:`load`).

The schema (every key optional; a missing one is Kafka's default, the value in brackets)::

    name = "acme"                    # [the file's name without .toml] how reports name the profile
    [session]
    min_ms = 6000                    # [6000] group.min.session.timeout.ms
    max_ms = 1800000                 # [1800000] group.max.session.timeout.ms
    timers_min_ms = 1000             # [1000] group.min.session.timeout.ms under --timers on (2 s sessions)
    [rebalance]
    initial_delay_ms = 0             # [0] group.initial.rebalance.delay.ms
    [generation]
    offset = 0                       # [0] the broker's first generation is 1 + offset (Kafka's is 1)
    [versions]                       # [none] the highest version of an API to speak, and why
    JoinGroup = 3
    reason = "..."                   # required with any cap
    [timing]
    answer_window_ms = 250           # [250] how long a request may stay unanswered before it counts as parked
    timer_tolerance_ms = 250         # [250] with --timers on: how far from its deadline a timer may fire
    [coordinator]
    follows = "scala"                # ["scala"] Kafka 3.x's GroupCoordinator, or "java": GroupMetadataManager
    [[acknowledged]]                 # [none] a divergence the report lists as acknowledged, not as a finding
    signature = "JoinGroup: answered NONE with generation_id 0 where the model allows 1"
    reason = "..."                   # required: why it is acceptable
    link = "https://..."             # required: where it is recorded (an issue, the broker's source)

Every mistake in a file is one :class:`~properties.errors.UsageError` line naming the file and the
key (``acme.toml: session.min_ms: expected an integer, got "6s"``), or the line and column of a
TOML syntax error. docs/conform-broker.md ("Profiles") has the schema with what each key means.
"""

from __future__ import annotations

import functools
import json
import os
import re
import tomllib
from typing import Any, Dict, List, Optional, Tuple

import attrs

from properties.errors import UsageError

#: the folder of the built-in profiles (packaged with the code: pyproject's package-data)
FOLDER = os.path.dirname(os.path.abspath(__file__))


@attrs.frozen
class Profile:
    """What Kafka's protocol leaves to a broker's configuration, for the model to use, and the
    differences from Kafka a report acknowledges (each with its reason and source)."""

    name: str
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    initial_rebalance_delay_ms: int = 0
    caps: Tuple[Tuple[str, int], ...] = ()  # (api, highest version to use)
    caps_why: str = ""  # why the caps are there (a broker finding of its own), printed in reports
    generation_offset: int = 0  # the broker's first generation is 1 + this (Kafka's is 1); acknowledged
    timers_min_session_timeout_ms: int = 1000  # group.min.session.timeout.ms when schedules run with timers
    acknowledged: Tuple[Tuple[str, str], ...] = ()  # (signature, why): known divergences, listed in reports
    # which of Kafka's coordinators the broker follows where they differ (model.config.Config.new_group_coordinator)
    new_group_coordinator: bool = False
    answer_window_ms: int = 250  # how long a request may stay unanswered before it counts as parked
    timer_tolerance_ms: int = 250  # with timers: how far from its deadline a timer may fire
    # (signature, link) for each acknowledged divergence that has one: where it is recorded
    acknowledged_links: Tuple[Tuple[str, str], ...] = ()


# ---- the schema --------------------------------------------------------------------------------

#: table -> {key: (Profile field, lowest value)}: the integer keys of the schema
_INTEGERS: Dict[str, Dict[str, Tuple[str, Optional[int]]]] = {
    "session": {"min_ms": ("min_session_timeout_ms", 0), "max_ms": ("max_session_timeout_ms", 0),
                "timers_min_ms": ("timers_min_session_timeout_ms", 0)},
    "rebalance": {"initial_delay_ms": ("initial_rebalance_delay_ms", 0)},
    "generation": {"offset": ("generation_offset", None)},
    "timing": {"answer_window_ms": ("answer_window_ms", 1), "timer_tolerance_ms": ("timer_tolerance_ms", 0)},
}
_TOP = ("name", "session", "rebalance", "generation", "versions", "timing", "coordinator", "acknowledged")
_FOLLOWS = {"scala": False, "java": True}
_ACKNOWLEDGED_KEYS = ("signature", "reason", "link")


def _shown(value: Any) -> str:
    """*value* the way TOML writes it, for a message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return str(value)


class _Reader:
    """Reads one parsed file's tables into Profile's fields; every problem is one line naming
    *where* (the file as given) and the key."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, key: str, problem: str) -> UsageError:
        return UsageError(f"{self.where}: {key}: {problem}")

    def table(self, data: dict, key: str) -> dict:
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table ([{key}]), got {_shown(value)}")
        return value

    def known(self, table: dict, prefix: str, keys) -> None:
        for key in table:
            if key not in keys:
                raise self.fail(f"{prefix}{key}", f"unknown key ({prefix.rstrip('.') or 'a profile'} takes "
                                                  f"{', '.join(keys)})")

    def integer(self, value: Any, key: str, lowest: Optional[int]) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected an integer, got {_shown(value)}")
        if lowest is not None and value < lowest:
            raise self.fail(key, f"must be at least {lowest}, got {value}")
        return value

    def text(self, value: Any, key: str) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {_shown(value)}")
        if not value.strip():
            raise self.fail(key, "is empty")
        return value

    def read(self, data: dict, default_name: str) -> Profile:
        self.known(data, "", _TOP)
        fields: Dict[str, Any] = {"name": self.text(data["name"], "name") if "name" in data else default_name}
        for table, keys in _INTEGERS.items():
            values = self.table(data, table)
            self.known(values, f"{table}.", tuple(keys))
            for key, (field, lowest) in keys.items():
                if key in values:
                    fields[field] = self.integer(values[key], f"{table}.{key}", lowest)
        defaults = Profile(fields["name"])
        low = fields.get("min_session_timeout_ms", defaults.min_session_timeout_ms)
        high = fields.get("max_session_timeout_ms", defaults.max_session_timeout_ms)
        if low > high:
            raise self.fail("session.min_ms", f"{low} is above session.max_ms ({high})")
        timers_low = fields.get("timers_min_session_timeout_ms", defaults.timers_min_session_timeout_ms)
        if timers_low > high:
            raise self.fail("session.timers_min_ms", f"{timers_low} is above session.max_ms ({high})")
        fields.update(self.versions(self.table(data, "versions")))
        coordinator = self.table(data, "coordinator")
        self.known(coordinator, "coordinator.", ("follows",))
        if "follows" in coordinator:
            follows = coordinator["follows"]
            if not isinstance(follows, str) or follows not in _FOLLOWS:
                raise self.fail("coordinator.follows", f"expected \"scala\" (Kafka 3.x's GroupCoordinator) or "
                                                       f"\"java\" (GroupMetadataManager), got {_shown(follows)}")
            fields["new_group_coordinator"] = _FOLLOWS[follows]
        fields.update(self.acknowledged(data.get("acknowledged", [])))
        return Profile(**fields)

    def versions(self, table: dict) -> Dict[str, Any]:
        from impl.wire.apis import CODEC_VERSIONS

        caps: List[Tuple[str, int]] = []
        for api, value in table.items():
            if api == "reason":
                continue
            if api not in CODEC_VERSIONS:
                raise self.fail(f"versions.{api}", "not an API groupcheck's codec speaks (known: "
                                                   f"{', '.join(CODEC_VERSIONS)}; and reason)")
            lowest = CODEC_VERSIONS[api][0]
            version = self.integer(value, f"versions.{api}", 0)
            if version < lowest:
                raise self.fail(f"versions.{api}", f"{version} is below the lowest version groupcheck's codec "
                                                   f"speaks ({api} v{lowest})")
            caps.append((api, version))
        if caps and "reason" not in table:
            raise self.fail("versions.reason", "missing: say why the versions are capped (reports print it)")
        if "reason" in table and not caps:
            raise self.fail("versions.reason", "given without any cap (versions.API = highest version)")
        out: Dict[str, Any] = {"caps": tuple(caps)}
        if caps:
            out["caps_why"] = self.text(table["reason"], "versions.reason")
        return out

    def acknowledged(self, entries: Any) -> Dict[str, Any]:
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise self.fail("acknowledged", "expected [[acknowledged]] tables (signature, reason, link), got "
                                            f"{_shown(entries)}")
        pairs, links, seen = [], [], set()
        for i, entry in enumerate(entries, start=1):
            key = f"acknowledged[{i}]"
            self.known(entry, f"{key}.", _ACKNOWLEDGED_KEYS)
            for needed in _ACKNOWLEDGED_KEYS:
                if needed not in entry:
                    raise self.fail(f"{key}.{needed}", "missing (every acknowledged divergence has a signature, "
                                                       "the reason it is acceptable and a link to where it is "
                                                       "recorded)")
            signature = self.text(entry["signature"], f"{key}.signature")
            reason = self.text(entry["reason"], f"{key}.reason")
            link = self.text(entry["link"], f"{key}.link")
            if re.match(r"https?://\S+$", link) is None:
                raise self.fail(f"{key}.link", f"expected an http:// or https:// address, got {_shown(link)}")
            if signature in seen:
                raise self.fail(f"{key}.signature", f"acknowledged twice: {_shown(signature)}")
            seen.add(signature)
            pairs.append((signature, reason))
            links.append((signature, link))
        return {"acknowledged": tuple(pairs), "acknowledged_links": tuple(links)}


def parse(text: str, where: str, default_name: str = "profile") -> Profile:
    """The profile in TOML *text*; *where* names it in errors (a file's path as given)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        message = str(e)
        at = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
        if at:
            raise UsageError(f"{where}: line {at.group(1)}, column {at.group(2)}: not valid TOML: "
                             f"{message[:at.start()]}") from None
        raise UsageError(f"{where}: not valid TOML: {message}") from None
    return _Reader(where).read(data, default_name)


def load(path: str, argument: Optional[str] = None) -> Profile:
    """The profile in the TOML file *path*; every problem is one UsageError line naming the file
    (after *argument*, e.g. ``--profile``, when given) and the key."""
    where = f"{argument} {path}" if argument else path
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise UsageError(f"{where}: cannot be read ({e.strerror or e})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{where}: not UTF-8 text (byte {e.start})") from None
    stem = os.path.basename(path)
    return parse(text, where, stem[:-len(".toml")] if stem.endswith(".toml") else stem)


def is_file(value: str) -> bool:
    """Whether a ``--profile`` value names a file (one that exists, or any name ending in .toml)
    rather than a built-in broker's profile."""
    return value.endswith(".toml") or os.path.isfile(value)


def builtin_path(name: str) -> str:
    return os.path.join(FOLDER, f"{name}.toml")


def builtin_names() -> Tuple[str, ...]:
    """The built-in profiles, by file name."""
    return tuple(sorted(f[:-len(".toml")] for f in os.listdir(FOLDER) if f.endswith(".toml")))


@functools.lru_cache(maxsize=None)
def builtin(name: str) -> Profile:
    """The built-in profile *name* (``properties/profiles/NAME.toml``)."""
    return load(builtin_path(name))
