"""Building kio objects of any version from plain values, and plain values from any message.

The APIs that travel as kio objects (Produce, Fetch, ListOffsets, DescribeGroups, ListGroups) have
one class per version, each with its own fields. :func:`build` writes a response once, as nested
dicts, and fills the class of whatever version the request came in: fields the version lacks are
dropped, fields the values omit take the schema's default. Milliseconds become ``timedelta`` for
kio's ``*Timedelta`` fields and ints become ``ErrorCode`` for error codes.

:func:`to_plain` turns a decoded message (kio or :mod:`impl.protocol`) into JSON-ready values, for
``groupcheck broker --trace``: bytes as hex (record batches as their size only), enums as ints,
timedeltas as milliseconds.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
import types
import typing
import uuid
from typing import Any, Dict, Mapping, Tuple

from kio.schema.errors import ErrorCode

__all__ = ["build", "to_plain"]


@functools.lru_cache(maxsize=None)
def _fields(cls: type) -> Tuple[Tuple[str, Any, bool], ...]:
    """(name, type, has a default) of each field of a kio class."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        out.append((f.name, hints[f.name], has_default))
    return tuple(out)


def _strip_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


def _convert(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    tp = _strip_optional(tp)
    if typing.get_origin(tp) is tuple:
        inner = typing.get_args(tp)[0]
        return tuple(_convert(inner, v) for v in value)
    if isinstance(tp, type):
        if dataclasses.is_dataclass(tp) and isinstance(value, Mapping):
            return build(tp, value)
        if issubclass(tp, enum.Enum) and not isinstance(value, tp):
            return tp(value)
    if getattr(tp, "__name__", "").endswith("Timedelta") and isinstance(value, int):
        return datetime.timedelta(milliseconds=value)
    if tp is uuid.UUID and isinstance(value, str):
        return uuid.UUID(value)
    return value


def build(cls: type, values: Mapping[str, Any]) -> Any:
    """An instance of the kio class *cls* from *values* (nested dicts and lists for nested
    entities); keys the class lacks are ignored, fields without a value take their default."""
    kwargs: Dict[str, Any] = {}
    for name, tp, has_default in _fields(cls):
        if name in values:
            kwargs[name] = _convert(tp, values[name])
        elif not has_default:
            raise TypeError(f"{cls.__module__}.{cls.__qualname__}: no value for {name!r}")
    return cls(**kwargs)


def to_plain(value: Any) -> Any:
    """JSON-ready values for a decoded message (see the module docstring)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, ErrorCode):
        return int(value.value)
    if isinstance(value, datetime.timedelta):
        return int(value.total_seconds() * 1000)
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return data.hex() if len(data) <= 64 else {"bytes": len(data)}
    if isinstance(value, uuid.UUID):
        return str(value)
    if dataclasses.is_dataclass(value):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if f.compare or f.name != "wire"}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    return repr(value)
