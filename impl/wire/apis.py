"""The registry of the APIs groupcheck speaks: names, keys, and the versions the codec handles.

Names are Kafka's (``ApiKeys`` / the JSON schemas' ``name`` without ``Request``), the way
:mod:`impl.protocol` names them (``request.api_key == "JoinGroup"``); keys are the numbers on the
wire.  Every API kio knows has a name (:func:`api_name`); a key kio does not know is named
``"ApiKey<n>"`` so that an ApiVersions response from a newer broker still round-trips.

:data:`CODEC_VERSIONS` is what this codec encodes and decodes — the intersection of what kio
offers (generated from Kafka 4.x's schemas) and what :mod:`impl.protocol` can carry exactly:

=================  =========  ===============================================================
API                versions   why the range stops there
=================  =========  ===============================================================
ApiVersions        0-4        all of kio's
Metadata           0-12       v13 adds a top-level error code impl.protocol does not carry
FindCoordinator    0-6        v4+ batch form carried by ``coordinator_keys`` / ``coordinators``
JoinGroup          0-9        all
SyncGroup          0-5        all
Heartbeat          0-4        all
LeaveGroup         0-5        v0-2 single member mapped to/from the v3+ ``members`` list
OffsetCommit       2-9        Kafka 4 dropped v0-1 (KIP-896; kio has none); v10 names topics by id
OffsetFetch        1-7        Kafka 4 dropped v0; v8+ is the multi-group form impl does not carry
Produce            3-13       kio objects (no translation), all of kio's
Fetch              4-18       kio objects, all of kio's
ListOffsets        1-11       kio objects, all of kio's
DescribeGroups     0-6        kio objects, all of kio's
ListGroups         0-5        kio objects, all of kio's
InitProducerId     0-5        kio objects; v6 adds KIP-939's two-phase-commit fields (transactions)
DeleteGroups       0-2        kio objects, all of kio's
=================  =========  ===============================================================

Also as kio objects: CreateTopics 2-7 (the topics of a Kafka groupcheck starts). KIP-848's
ConsumerGroupHeartbeat 0-1 (v1: consumer-generated member ids) is translated like the classic
group APIs: ``groupcheck broker`` answers it (impl.server.modern) and the conformance checker
sends it (properties/kip848/conform.py). ConsumerGroupDescribe 0-1 travels as kio objects.

A broker advertises the intersection of its own configuration with this table
(:func:`advertised_versions`), so a client never picks a version the codec lacks; Kafka 4
itself no longer answers OffsetCommit v0-1 or OffsetFetch v0, and the clients groupcheck meets
(kafka-python, librdkafka, aiokafka) negotiate through ApiVersions first.
"""

from __future__ import annotations

import sys
from typing import Dict, Mapping, Optional, Tuple

from kio.index import load_entity_module
from kio.schema.index import api_key_map
from kio.static.constants import EntityType


def _camel(snake: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in snake.split("_"))


#: API key -> name (every API kio knows).
API_NAMES: Dict[int, str] = {key: _camel(snake) for key, snake in api_key_map.items()}
#: API name -> key.
API_KEYS: Dict[str, int] = {name: key for key, name in API_NAMES.items()}
#: API name -> kio's schema package name.
_KIO_NAMES: Dict[str, str] = {API_NAMES[key]: snake for key, snake in api_key_map.items()}

#: API name -> (lowest, highest) version the codec encodes and decodes (see the module docstring).
CODEC_VERSIONS: Dict[str, Tuple[int, int]] = {
    "ApiVersions": (0, 4),
    "Metadata": (0, 12),
    "FindCoordinator": (0, 6),
    "JoinGroup": (0, 9),
    "SyncGroup": (0, 5),
    "Heartbeat": (0, 4),
    "LeaveGroup": (0, 5),
    "OffsetCommit": (2, 9),
    "OffsetFetch": (1, 7),
    "Produce": (3, 13),
    "Fetch": (4, 18),
    "ListOffsets": (1, 11),
    "DescribeGroups": (0, 6),
    "ListGroups": (0, 5),
    "InitProducerId": (0, 5),  # idempotent producers of groupcheck broker (impl.server.producer_state)
    "DeleteGroups": (0, 2),  # an administrator's deletion of an Empty group (groupcheck broker)
    "CreateTopics": (2, 7),  # the topics of a broker groupcheck starts (properties.live.kafka)
    "ConsumerGroupHeartbeat": (0, 1),  # KIP-848's heartbeat (groupcheck broker, properties.kip848.conform)
    "ConsumerGroupDescribe": (0, 1),  # KIP-848's describe (groupcheck broker; conform client's settle probe)
}

#: The APIs whose bodies are translated to and from :mod:`impl.protocol` classes; the others
#: travel as kio's own frozen dataclasses.
TRANSLATED = frozenset(("ApiVersions", "Metadata", "FindCoordinator", "JoinGroup", "SyncGroup",
                        "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch", "ConsumerGroupHeartbeat"))

REQUEST = "request"
RESPONSE = "response"


def api_name(key: int) -> str:
    """The API's name for *key* (``"ApiKey<n>"`` when kio does not know it)."""
    name = API_NAMES.get(key)
    return name if name is not None else "ApiKey%d" % key


def api_key(name: str) -> int:
    """The API key for *name* (inverse of :func:`api_name`); ``KeyError`` for an unknown name."""
    key = API_KEYS.get(name)
    if key is not None:
        return key
    if name.startswith("ApiKey") and name[6:].isdigit():
        return int(name[6:])
    raise KeyError(name)


def supports(name: str, version: int) -> bool:
    """True if the codec encodes and decodes *name* at *version*."""
    r = CODEC_VERSIONS.get(name)
    return r is not None and r[0] <= version <= r[1]


def advertised_versions(configured: Mapping[str, Tuple[int, int]]) -> Dict[str, Tuple[int, int]]:
    """The ranges a broker configured with *configured* (name -> (min, max)) may advertise in
    ApiVersions over the wire: each intersected with :data:`CODEC_VERSIONS`; APIs the codec lacks
    or whose intersection is empty are left out.  Order follows *configured*."""
    out: Dict[str, Tuple[int, int]] = {}
    for name, (lo, hi) in configured.items():
        r = CODEC_VERSIONS.get(name)
        if r is None:
            continue
        lo2, hi2 = max(lo, r[0]), min(hi, r[1])
        if lo2 <= hi2:
            out[name] = (lo2, hi2)
    return out


_CLASSES: Dict[Tuple[str, int, str], type] = {}


def kio_class(name: str, version: int, direction: str) -> Optional[type]:
    """kio's request or response class for *name* at *version* (``None`` if kio has none)."""
    k = (name, version, direction)
    cls = _CLASSES.get(k)
    if cls is None:
        snake = _KIO_NAMES.get(name)
        if snake is None:
            return None
        entity_type = EntityType.request if direction == REQUEST else EntityType.response
        try:
            module = load_entity_module(snake, version, entity_type)
        except Exception:  # kio.UnknownEntity: no such version
            return None
        cls = getattr(module, name + ("Request" if direction == REQUEST else "Response"))
        _CLASSES[k] = cls
    return cls


def kio_module(name: str, version: int, direction: str):
    """The kio module holding *name*'s classes at *version* (nested classes live there too)."""
    cls = kio_class(name, version, direction)
    if cls is None:
        raise KeyError((name, version, direction))
    return sys.modules[cls.__module__]
