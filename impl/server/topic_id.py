"""Topic ids (KIP-516): each topic's ``Uuid``, as Metadata v10+ and KIP-848's assignments name it.

Kafka draws a random Uuid when it creates a topic; groupcheck's brokers derive it from the name
(a UUID-5), so the same topic has the same id in every run and process, and it is never Kafka's
zero or reserved Uuid. The string is ``Uuid.toString``'s: URL-safe base64 without padding.
"""

from __future__ import annotations

import base64
import functools
import uuid

_NAMESPACE = uuid.UUID("6f1d7c1e-2c4b-5e55-9c1a-67726f757063")  # groupcheck's own namespace for topic names


@functools.lru_cache(maxsize=1024)
def topic_id(name: str) -> str:
    """The topic id of *name* (remembered: every simulated cluster's metadata names its topics)."""
    raw = uuid.uuid5(_NAMESPACE, name).bytes
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
