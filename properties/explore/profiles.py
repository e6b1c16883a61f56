"""Hypothesis settings profiles: ``ci`` (bounded; the default when CI=true), ``dev`` (the default
otherwise) and ``nightly`` (large). Select one without editing code with HYPOTHESIS_PROFILE=name
or pytest's ``--hypothesis-profile=name``."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

#: Every phase but ``explain``: after a failure, Hypothesis re-runs each shrinking step under a
#: line tracer to explain the failure in its own report, which the model's tests do not read (the
#: machines record the failing schedule themselves) and which made one shrink take over half an
#: hour inside the suite where it takes seconds alone (seen 2026-11-28 on the quality tier's
#: assignment-matches-generation case).
PHASES = tuple(p for p in Phase if p is not Phase.explain)

_COMMON = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    phases=PHASES,
)

settings.register_profile("ci", max_examples=200, stateful_step_count=40, derandomize=True, print_blob=True, **_COMMON)
settings.register_profile("dev", max_examples=100, stateful_step_count=50, **_COMMON)
settings.register_profile("nightly", max_examples=2000, stateful_step_count=100, **_COMMON)

PROFILES = ("ci", "dev", "nightly")


def default_profile() -> str:
    chosen = os.environ.get("HYPOTHESIS_PROFILE")
    if chosen:
        return chosen
    return "ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "dev"


def load_default_profile() -> str:
    name = default_profile()
    if name not in PROFILES:
        raise SystemExit(f"HYPOTHESIS_PROFILE must be one of {', '.join(PROFILES)}, got {name!r}")
    settings.load_profile(name)
    return name
