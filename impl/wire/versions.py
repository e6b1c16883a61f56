"""Choosing each API's version: the highest both sides support, under an optional per-peer cap.

* :func:`usable_version` — the highest version in ``ours ∩ theirs ∩ [0, cap]`` or ``None``.
* :class:`NodeApiVersions` — a peer's advertised ranges (from its ApiVersions response) plus the
  caps set for that peer; ``latest_usable_version`` mirrors Kafka's
  ``NodeApiVersions.latestUsableVersion`` (raising ``UnsupportedVersionException`` when the
  ranges do not meet).  Caps let a checker pin a peer below what it advertises — e.g. JoinGroup at
  5 for a broker whose newer versions it should not exercise, or librdkafka's mock cluster, whose
  advertised versions include some it handles badly.
* :func:`api_versions_retry_version` — ``NetworkClient.handleApiVersionsResponse``'s decision after
  an ApiVersions error: retry with the broker's highest listed ApiVersions version, or give up.

"Ours" defaults to :data:`impl.wire.apis.CODEC_VERSIONS`.
"""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Tuple

from impl.errors import UnsupportedVersionException
from impl.protocol import ApiVersionsResponseData
from impl.wire.apis import CODEC_VERSIONS

UNSUPPORTED_VERSION_CODE = 35


def usable_version(ours: Optional[Tuple[int, int]], theirs: Optional[Tuple[int, int]],
                   cap: Optional[int] = None) -> Optional[int]:
    """The highest version in both ranges and not above *cap*; ``None`` if there is none."""
    if ours is None or theirs is None:
        return None
    lo = max(ours[0], theirs[0])
    hi = min(ours[1], theirs[1])
    if cap is not None:
        hi = min(hi, cap)
    return hi if lo <= hi else None


class NodeApiVersions:
    """What one peer supports (API name -> (min, max)), with optional per-API caps."""

    __slots__ = ("versions", "caps")

    def __init__(self, versions: Mapping[str, Tuple[int, int]], caps: Optional[Mapping[str, int]] = None) -> None:
        self.versions: Dict[str, Tuple[int, int]] = dict(versions)
        self.caps: Dict[str, int] = dict(caps or {})

    @classmethod
    def from_response(cls, response: ApiVersionsResponseData,
                      caps: Optional[Mapping[str, int]] = None) -> "NodeApiVersions":
        """From a successful ApiVersions response (API names as :mod:`impl.wire` decodes them)."""
        return cls({a.api_key: (a.min_version, a.max_version) for a in response.api_keys}, caps)

    def version_range(self, api: str) -> Optional[Tuple[int, int]]:
        return self.versions.get(api)

    def usable_version(self, api: str, ours: Optional[Tuple[int, int]] = None) -> Optional[int]:
        """The version to use for *api* (``None`` if none fits); *ours* defaults to the codec's."""
        return usable_version(CODEC_VERSIONS.get(api) if ours is None else ours, self.versions.get(api),
                              self.caps.get(api))

    def latest_usable_version(self, api: str, oldest: Optional[int] = None, latest: Optional[int] = None) -> int:
        """``NodeApiVersions.latestUsableVersion(apiKey, oldestAllowed, latestAllowed)``, with the
        peer's cap applied; *oldest* / *latest* default to the codec's range."""
        theirs = self.versions.get(api)
        if theirs is None:
            raise UnsupportedVersionException("The node does not support " + api)
        ours = CODEC_VERSIONS.get(api, (0, -1))
        lo = ours[0] if oldest is None else oldest
        hi = ours[1] if latest is None else latest
        v = usable_version((lo, hi), theirs, self.caps.get(api))
        if v is None:
            raise UnsupportedVersionException(
                "The node does not support %s with version in range [%d,%d]. The supported range is [%d,%d]%s."
                % (api, lo, hi, theirs[0], theirs[1],
                   "" if api not in self.caps else " (capped at %d)" % self.caps[api]))
        return v

    def __repr__(self) -> str:
        return "NodeApiVersions(%r, caps=%r)" % (self.versions, self.caps)


def api_versions_retry_version(sent_version: int, response: ApiVersionsResponseData,
                               ours: Tuple[int, int] = CODEC_VERSIONS["ApiVersions"]) -> Optional[int]:
    """After an ApiVersions response with an error: the version to send the request again in, or
    ``None`` to disconnect (``NetworkClient.handleApiVersionsResponse``).

    Only UNSUPPORTED_VERSION to a request above v0 is retried: with the highest ApiVersions
    version the broker listed (0 if it listed none — brokers before 2.4 list nothing), kept
    within *ours*.  Returns ``None`` for a response without error too."""
    if response.error_code == 0:
        return None
    if sent_version == 0 or response.error_code != UNSUPPORTED_VERSION_CODE:
        return None
    listed = 0
    for a in response.api_keys:
        if a.api_key == "ApiVersions":
            listed = a.max_version
            break
    return max(ours[0], min(listed, ours[1]))
