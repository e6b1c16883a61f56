"""Apache Kafka itself as a broker under test (issue 35): ``--launch kafka:VERSION``.

Kafka's jars come from Maven Central through this project's pom (``java/kafka/pom.xml``):
:func:`resolve` runs ``mvn dependency:copy-dependencies`` once per version into a cache folder
(``$GROUPCHECK_CACHE``, else ``~/.cache/groupcheck``; Maven's own ``~/.m2`` keeps the downloads)
and never again for that version, so a second start needs neither Maven nor the network.
:func:`start` runs one KRaft node (``process.roles=broker,controller``, a static
``controller.quorum.voters``) on free loopback ports with a small heap: it formats the storage
(``kafka.tools.StorageTool format``), starts ``kafka.Kafka``, waits for ``Kafka Server started``
(``KafkaRaftServer.startup``) and creates the topics asked for with a CreateTopics request. A 2.x
release has no KRaft mode: :func:`start` runs a ZooKeeper first (``ZooKeeperServerMain`` from the
ZooKeeper jar the release depends on, :func:`start_zookeeper`) and the broker under it
(``zookeeper.connect``), stopped together.

Names (:func:`parse`): ``kafka:2.0`` … ``kafka:4.1`` are the latest release of those lines in
:data:`LINES`; ``kafka:X.Y.Z`` is that release (2.0.0 and later; the broker checker speaks the
versions both sides support); ``-new-coordinator`` after a 3.x name turns on
the Java group coordinator (``group.coordinator.new.enable=true``; 3.9's default is the Scala
``GroupCoordinator`` the model was written from, 4.0's the Java ``GroupMetadataManager``, and 4.1
has no other: KAFKA-18329).

Facts checked on this machine kind (Java 17, Maven 3.8.7), 2026-11-28: the runtime scope of
``org.apache.kafka:kafka_2.13`` is enough to format and run a node of 3.9.1, 3.9.2 and 4.1.2;
2026-11-29: and of the latest release of every line from 3.0 to 4.1 (3.0.2 … 3.8.1, 4.0.2), each up
in 7–9 s with its jars resolved (3.0–3.2's KRaft was early access — production-ready from 3.3,
KIP-833 — but a single node runs, and its group coordinator is the Scala GroupCoordinator it runs
under ZooKeeper); the 2.5–2.8 lines (2.5.1, 2.6.3, 2.7.2, 2.8.2) run under a ZooKeeper 3.5 of
their own, up in 2–6 s; and 2.0–2.4 (2.0.1, 2.1.1, 2.2.2, 2.3.1, 2.4.1): before 2.4 there is no
``kafka_2.13`` (``kafka_2.12``, :attr:`KafkaSpec.scala`), and 2.0–2.3's ZooKeeper 3.4 client never
connects on Java 14 and later ("Unable to canonicalize address 127.0.0.1/<unresolved>",
ZOOKEEPER-3779): the pom puts ZooKeeper 3.5.9 in its place (:attr:`KafkaSpec.zookeeper_client`),
server and client, and they run; they take CreateTopics v2 and FindCoordinator/DescribeGroups v1
(no flexible versions before 2.4);
the POM declares no slf4j binding, so the pom adds ``slf4j-reload4j`` 1.7.36 for 2.x and 3.x and
``log4j-slf4j-impl`` 2.24.3 for 4.x (4.1.2 depends on slf4j-api 1.7.36); ``StorageTool format``
needs no ``--standalone`` with a static voter list; a node is up in 4–6 s.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Callable, Dict, Mapping, Optional, Tuple

import attrs

from properties.errors import UsageError
from properties.live import maven
from properties.live.child import PROJECT_ROOT, ChildBroker, spawn, wait_until_ready
from properties.live.exchange import DESCRIBE_VERSIONS, describe_group, exchange

#: The latest release of each line groupcheck names by its line (Maven Central's kafka_2.13 and,
#: before 2.4, kafka_2.12 maven-metadata.xml, 2026-11-29): every line from 2.0 on (2.x under
#: ZooKeeper, then KRaft).
LINES = {"2.0": "2.0.1", "2.1": "2.1.1", "2.2": "2.2.2", "2.3": "2.3.1", "2.4": "2.4.1", "2.5": "2.5.1",
         "2.6": "2.6.3", "2.7": "2.7.2", "2.8": "2.8.2", "3.0": "3.0.2", "3.1": "3.1.2", "3.2": "3.2.3",
         "3.3": "3.3.2", "3.4": "3.4.1", "3.5": "3.5.2", "3.6": "3.6.2", "3.7": "3.7.2", "3.8": "3.8.1",
         "3.9": "3.9.2", "4.0": "4.0.2", "4.1": "4.1.2"}
NEW_COORDINATOR = "-new-coordinator"
POM = os.path.join(PROJECT_ROOT, "java", "kafka", "pom.xml")
HEAP = "-Xmx384m"  # with SerialGC and C1 only: a node stays near 0.5 GB resident
#: KafkaRaftServer's line, or under ZooKeeper KafkaServer's ("[KafkaServer id=0] started")
READY = re.compile(r"Kafka Server started|\] started \(kafka\.server\.KafkaServer\)")
#: ZooKeeperServerMain's line once it listens
ZOOKEEPER_READY = re.compile(r"binding to port")
READY_TIMEOUT_S = 90.0
OFFSETS_TOPIC = "__consumer_offsets"
CREATE_TOPICS_VERSION = 5  # from 2.4 on, and in every KRaft release (3.x offers 0-7, 4.x 2-7)
#: ZooKeeperServerMain's tickTime (its default), and the brokers' zookeeper.session.timeout.ms: the
#: least ZooKeeper grants (2 ticks), so a killed 2.x broker's registration is gone soon for its restart
ZOOKEEPER_TICK_MS = 3000
ZOOKEEPER_SESSION_MS = 6000

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")


@attrs.frozen
class KafkaSpec:
    """A Kafka broker to run: its release and which group coordinator answers."""

    name: str  # as given: kafka:3.9, kafka:3.9-new-coordinator, kafka:4.1.2
    version: str  # the release: 3.9.2
    new_coordinator: bool  # the Java GroupMetadataManager (always, from 4.0)

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def logging(self) -> str:
        """The pom's logging profile: Kafka 2.x and 3.x log through reload4j, 4.x through log4j 2."""
        return "reload4j" if self.major < 4 else "log4j2"

    @property
    def zookeeper(self) -> bool:
        """Run under ZooKeeper: a 2.x release has no KRaft mode."""
        return self.major < 3

    @property
    def line(self) -> Tuple[int, int]:
        major, minor = self.version.split(".")[:2]
        return int(major), int(minor)

    @property
    def scala(self) -> str:
        """The Scala binary version of its ``kafka_X`` artifact: 2.13 from 2.4.0 on, 2.12 before."""
        return "2.13" if self.line >= (2, 4) else "2.12"

    @property
    def zookeeper_client(self) -> Optional[str]:
        """The ZooKeeper client put in place of the release's own, or None: 2.0-2.3 depend on
        ZooKeeper 3.4, whose client never connects on Java 14 and later ("Unable to canonicalize
        address 127.0.0.1/<unresolved>", ZOOKEEPER-3779); with 3.5.9 (the last 3.5, which 2.4-2.8's
        3.5 line of clients speaks too) they run."""
        return "3.5.9" if self.line < (2, 4) else None

    @property
    def describe_versions(self) -> Tuple[int, int]:
        """The (FindCoordinator, DescribeGroups) versions of :func:`wait_for_group_coordinator`:
        (3, 5) from 2.4 on, (1, 1) before (2.0-2.3 offer FindCoordinator v0-v2, DescribeGroups v0-v2)."""
        return DESCRIBE_VERSIONS if self.line >= (2, 4) else (1, 1)

    @property
    def create_topics_version(self) -> int:
        """The CreateTopics version :func:`create_topics` sends it: v5 from 2.4 on (every KRaft
        release offers it), v2 before (2.0-2.3 offer v0-v3)."""
        return CREATE_TOPICS_VERSION if self.line >= (2, 4) else 2


def parse(name: str, argument: str = "--launch") -> KafkaSpec:
    """``kafka:LINE``, ``kafka:X.Y.Z`` (2.0.0 and later), either with ``-new-coordinator`` (3.x);
    UsageError otherwise."""
    rest = name.partition(":")[2]
    new = rest.endswith(NEW_COORDINATOR)
    wanted = rest[: -len(NEW_COORDINATOR)] if new else rest
    m = _VERSION.match(wanted)
    if not name.startswith("kafka:") or m is None:
        raise UsageError(f"{argument} {name}: expected kafka:LINE or kafka:X.Y.Z, optionally with "
                         f"{NEW_COORDINATOR} (lines: {', '.join(LINES)})")
    if m.group(3) is None:
        if wanted not in LINES:
            raise UsageError(f"{argument} {name}: no release line {wanted} known (known: {', '.join(LINES)}; "
                             "or name a release: kafka:X.Y.Z)")
        version = LINES[wanted]
    else:
        version = wanted
    major = int(version.split(".")[0])
    if (major, int(version.split(".")[1])) < (2, 0):
        raise UsageError(f"{argument} {name}: groupcheck runs Kafka 2.0 and later (Java 17 runs them; "
                         f"lines: {', '.join(LINES)})")
    if new and major < 3:
        raise UsageError(f"{argument} {name}: Kafka {version} has no Java group coordinator ({NEW_COORDINATOR} is "
                         "for 3.x)")
    return KafkaSpec(name, version, new or major >= 4)


def resolve(spec: KafkaSpec) -> str:
    """The folder of Kafka *spec*'s jars, resolved from Maven Central the first time (offline after)."""
    properties = {"kafka.version": spec.version, "logging": spec.logging, "scala.binary": spec.scala}
    if spec.zookeeper_client:
        properties["zookeeper.version"] = spec.zookeeper_client
    return maven.resolve(POM, f"kafka-{spec.version}", f"org.apache.kafka:kafka_{spec.scala}:{spec.version}",
                         properties, "Kafka")


class KafkaBroker(ChildBroker):
    """A running Apache Kafka node (see :func:`start`)."""

    spec: KafkaSpec
    #: how it was started (:func:`spawn_node`): what :meth:`restart` starts again
    started: Tuple[str, str, str, str]
    #: a 2.x release's ZooKeeper (:func:`start_zookeeper`), stopped after the broker
    zookeeper: Optional[ChildBroker] = None

    def stop(self) -> Optional[int]:
        status = super().stop()
        if self.zookeeper is not None:
            self.zookeeper.stop()
        return status

    def restart(self, group: str, timeout_s: float = 90.0) -> Tuple[str, int]:
        """Kill the node (SIGKILL: a crash, nothing flushed on the way out) and start it again on
        its own folder and port, as an operator's restart does; return its address once it has
        loaded *group* from ``__consumer_offsets`` and writes are fast again. What it persisted
        (the group's records, committed offsets) is all the group has afterwards."""
        java, classpath, workdir, config = self.started
        self.process.kill()
        self.process.wait(timeout=10)
        deadline = time.monotonic() + timeout_s
        if self.spec.zookeeper:
            # the killed broker's registration (/brokers/ids/0, ephemeral) lives until ZooKeeper
            # expires its session, up to a tick after zookeeper.session.timeout.ms; a broker
            # started before fails KafkaZkClient.registerBroker with NodeExistsException and exits
            time.sleep((ZOOKEEPER_SESSION_MS + ZOOKEEPER_TICK_MS) / 1000)
        while True:
            try:  # the node's folder stays this broker's whatever happens to one attempt
                fresh = await_ready(spawn_node(self.spec, java, classpath, workdir, config, self.port,
                                               owns_workdir=False))
                break
            except RuntimeError:
                if not self.spec.zookeeper or time.monotonic() > deadline:
                    raise
                time.sleep(1.0)
        self.process, self.log_path = fresh.process, fresh.log_path
        address = (self.host, self.port)
        wait_for_group_coordinator(address, timeout_s, group, self.spec.describe_versions)
        wait_for_fast_writes(address, time.monotonic() + timeout_s)
        return address


def server_properties(spec: KafkaSpec, port: int, controller_port: int, data: str,
                      settings: Mapping[str, str], node_id: int = 1, voters: str = "",
                      replication: int = 1) -> Dict[str, str]:
    """One KRaft node on loopback: Kafka's defaults but for replication (*replication* copies of
    the internal topics; one node by default), small thread pools, and *settings* (Kafka's names)
    on top. *voters*: the cluster's ``controller.quorum.voters`` (default: this node alone)."""
    props = {
        "process.roles": "broker,controller",
        "node.id": str(node_id),
        "controller.quorum.voters": voters or f"{node_id}@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": data,
        "offsets.topic.replication.factor": str(replication),
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": str(replication),
        "transaction.state.log.min.isr": "1",
        "num.network.threads": "1",
        "num.io.threads": "2",
        "auto.create.topics.enable": "false",
    }
    if spec.major >= 4:
        props["group.coordinator.threads"] = "1"
    elif spec.new_coordinator:
        props["group.coordinator.new.enable"] = "true"  # KafkaConfig.isNewGroupCoordinatorEnabled (3.x)
    props.update(settings)
    return props


def zookeeper_server_properties(port: int, zookeeper_port: int, data: str, settings: Mapping[str, str]) -> Dict[str, str]:
    """One broker of a 2.x release under the ZooKeeper on *zookeeper_port*: as
    :func:`server_properties`, with ``broker.id`` and ``zookeeper.connect`` for KRaft's roles."""
    props = {
        "broker.id": "0",
        "zookeeper.connect": f"127.0.0.1:{zookeeper_port}",
        "zookeeper.session.timeout.ms": str(ZOOKEEPER_SESSION_MS),
        "listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "log.dirs": data,
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "num.network.threads": "1",
        "num.io.threads": "2",
        "auto.create.topics.enable": "false",
    }
    props.update(settings)
    return props


_LOG4J = """log4j.rootLogger=WARN, stdout
log4j.logger.kafka.server.KafkaRaftServer=INFO
log4j.logger.kafka.server.KafkaServer=INFO
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
"""
_LOG4J2 = """status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.out.ref = out
logger.raft.name = kafka.server.KafkaRaftServer
logger.raft.level = info
"""


def start(spec: KafkaSpec, topics: Mapping[str, int] = (), settings: Mapping[str, str] = ()) -> KafkaBroker:
    """Kafka *spec* on free loopback ports with *topics* (name -> partitions) created; the caller
    stops it (its folder goes with it). RuntimeError if it does not start. (A cluster of nodes:
    :func:`properties.live.kafka_cluster.start_cluster`.)"""
    java, classpath = prepare(spec)
    workdir = tempfile.mkdtemp(prefix=f"groupcheck-kafka-{spec.version}-")
    zookeeper = None
    try:
        port, controller_port = free_ports(2)
        if spec.zookeeper:  # 2.x: its own ZooKeeper first, on the second port
            zookeeper = start_zookeeper(java, classpath, workdir, controller_port)
            props = zookeeper_server_properties(port, controller_port, os.path.join(workdir, "data"), dict(settings))
            config = write_config(spec, workdir, props)
        else:
            props = server_properties(spec, port, controller_port, os.path.join(workdir, "data"), dict(settings))
            config = write_config(spec, workdir, props)
            _format(java, classpath, config)
        broker = launch(spec, java, classpath, workdir, config, port)
        broker.zookeeper = zookeeper
    except BaseException:
        if zookeeper is not None:
            zookeeper.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    try:
        if topics:
            create_topics_when_registered(("127.0.0.1", port), dict(topics), version=spec.create_topics_version)
        wait_for_group_coordinator(("127.0.0.1", port), versions=spec.describe_versions)
    except BaseException:
        broker.stop()
        raise
    return broker


def create_topics_when_registered(bootstrap: Tuple[str, int], topics: Mapping[str, int], timeout_s: float = 30.0,
                                  version: int = CREATE_TOPICS_VERSION) -> None:
    """:func:`create_topics`, again while the broker answers that no broker is available yet: under
    ZooKeeper its "started" line can come before it registered itself (seen on 2.7.2: "Replication
    factor: 1 larger than available brokers: 0"). Any other refusal is raised at once."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            create_topics(bootstrap, topics, version=version)
            return
        except RuntimeError as e:
            if "available brokers: 0" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def start_zookeeper(java: str, classpath: str, workdir: str, port: int) -> ChildBroker:
    """A standalone ZooKeeper (``ZooKeeperServerMain``, from the ZooKeeper jar a 2.x release
    depends on: 3.5.x for 2.4-2.8, the 3.5.9 the pom puts in place of 2.0-2.3's 3.4) on *port*,
    its data in *workdir*; once it listens. Its admin server stays off: it would take port 8080."""
    args = [java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dzookeeper.admin.enableServer=false",
            "-Dlog4j.configuration=file:" + os.path.join(workdir, "zookeeper-log4j.properties"), "-cp", classpath,
            "org.apache.zookeeper.server.ZooKeeperServerMain", str(port), os.path.join(workdir, "zookeeper")]
    with open(os.path.join(workdir, "zookeeper-log4j.properties"), "w") as f:
        f.write(_LOG4J_ZOOKEEPER)
    process, log_path = spawn(args, "zookeeper-", log_dir=workdir)
    zookeeper = ChildBroker(process, "127.0.0.1", [port], log_path, None)
    try:
        wait_until_ready(process, log_path, ZOOKEEPER_READY, READY_TIMEOUT_S, "ZooKeeper")
    except BaseException:
        zookeeper.stop()
        raise
    return zookeeper


_LOG4J_ZOOKEEPER = """log4j.rootLogger=WARN, stdout
log4j.logger.org.apache.zookeeper.server.NIOServerCnxnFactory=INFO
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
"""


def prepare(spec: KafkaSpec) -> Tuple[str, str]:
    """The java program and the classpath of Kafka *spec* (its jars resolved first)."""
    lib = resolve(spec)
    return maven.require("java", f"Kafka {spec.version}"), os.path.join(lib, "*")


def write_config(spec: KafkaSpec, workdir: str, props: Mapping[str, str]) -> str:
    """``server.properties`` and the logging configuration in *workdir*; the former's path."""
    config = os.path.join(workdir, "server.properties")
    with open(config, "w") as f:
        f.writelines(f"{k}={v}\n" for k, v in props.items())
    with open(_logging_path(spec, workdir), "w") as f:
        f.write(_LOG4J if spec.major < 4 else _LOG4J2)
    return config


def _logging_path(spec: KafkaSpec, workdir: str) -> str:
    return os.path.join(workdir, "log4j.properties" if spec.major < 4 else "log4j2.properties")


def launch(spec: KafkaSpec, java: str, classpath: str, workdir: str, config: str, port: int,
           owns_workdir: bool = True) -> KafkaBroker:
    """Start the formatted node of *config* and wait for ``Kafka Server started``. The broker's
    :meth:`~KafkaBroker.stop` removes *workdir* when *owns_workdir*."""
    return await_ready(spawn_node(spec, java, classpath, workdir, config, port, owns_workdir))


def spawn_node(spec: KafkaSpec, java: str, classpath: str, workdir: str, config: str, port: int,
               owns_workdir: bool = True) -> KafkaBroker:
    """Start the formatted node of *config* without waiting for it (:func:`await_ready` does)."""
    logging = _logging_path(spec, workdir)
    jvm = [java, HEAP, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
           ("-Dlog4j.configuration=file:" if spec.major < 4 else "-Dlog4j2.configurationFile=") + logging,
           "-cp", classpath, "kafka.Kafka", config]
    process, log_path = spawn(jvm, "kafka-", log_dir=workdir)
    broker = KafkaBroker(process, "127.0.0.1", [port], log_path, workdir if owns_workdir else None)
    broker.spec = spec
    broker.started = (java, classpath, workdir, config)
    return broker


def await_ready(broker: KafkaBroker) -> KafkaBroker:
    """*broker* once it logged ``Kafka Server started``; RuntimeError (and its files removed) if not."""
    try:
        wait_until_ready(broker.process, broker.log_path, READY, READY_TIMEOUT_S, f"Kafka {broker.spec.version}")
    except BaseException:
        broker.stop()
        raise
    return broker


#: What a coordinator answers before its __consumer_offsets partition is loaded: COORDINATOR_LOAD_IN_PROGRESS,
#: COORDINATOR_NOT_AVAILABLE (the topic being created), NOT_COORDINATOR (leadership not yet known)
_NOT_READY = (14, 15, 16)


def wait_for_group_coordinator(bootstrap: Tuple[str, int], timeout_s: float = 60.0,
                               group: str = "groupcheck-ready", versions: Tuple[int, int] = DESCRIBE_VERSIONS) -> None:
    """Return once the group coordinator answers a DescribeGroups of a probe group for good.

    A fresh node creates ``__consumer_offsets`` at the first FindCoordinator and then loads it;
    until then the Java coordinator answers a JoinGroup COORDINATOR_LOAD_IN_PROGRESS (seen on the
    first schedule against kafka:3.9-new-coordinator, 2026-11-28), which a consumer retries but the
    broker checker, whose model starts with the group's coordinator loaded, would judge. A started
    broker is handed over only when it is ready, as a real cluster would be. (*group*: the group
    whose coordinator must be loaded; after a restart, the schedule's own. *versions*: the
    FindCoordinator and DescribeGroups versions the broker takes, :attr:`KafkaSpec.describe_versions`.)"""
    def ready() -> Optional[str]:
        code, _ = describe_group(bootstrap, group, 5.0, versions=versions)
        return f"error {code}" if code in _NOT_READY else None

    wait_until(ready, timeout_s, "the group coordinator was not ready")


def wait_for_fast_writes(address: Tuple[str, int], deadline: float, fast_s: float = 0.05,
                         times: int = 3) -> None:
    """Return once *times* OffsetCommits in a row (of a probe group, to the offsets topic itself:
    the one log every group's records go to) are answered within *fast_s*.

    Just after a takeover (or a restart) the first writes wait for the in-sync replicas to settle
    on the new leader (seen on 4.1.2: a LeaveGroup answered only after 250 ms, which the checker reads as
    a broker that parks it); a running cluster a client meets has long settled. Kafka's own
    answers are judged from then on."""
    from impl import protocol as P

    request = P.OffsetCommitRequestData(group_id="groupcheck-failover-probe", topics=[
        P.OffsetCommitRequestTopic(OFFSETS_TOPIC, [P.OffsetCommitRequestPartition(0, 0)])])
    in_a_row, last = 0, "no answer"
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            answer = exchange(address, request, "OffsetCommit", 8, 5.0, "groupcheck-failover")
            codes = [p.error_code for t in answer.body.topics for p in t.partitions]
        except (OSError, EOFError, AttributeError) as e:
            in_a_row, last = 0, str(e) or type(e).__name__
            time.sleep(0.1)
            continue
        took = time.monotonic() - started
        if not any(codes) and took <= fast_s:
            in_a_row += 1
            if in_a_row >= times:
                return
        else:
            in_a_row, last = 0, f"errors {codes}, {took * 1000:.0f} ms"
            time.sleep(0.05)
    raise RuntimeError(f"writes to {address[0]}:{address[1]} did not become fast "
                       f"after the takeover or restart ({last})")


def wait_until(check: Callable[[], Optional[str]], timeout_s: float, failure: str, interval_s: float = 0.1) -> None:
    """Call *check* every *interval_s* until it returns None (done); otherwise it returns why not
    yet (an unreachable or garbled answer counts as not yet). RuntimeError ``failure within N s
    (the last reason)`` when *timeout_s* pass first."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            last = check()
            if last is None:
                return
        except (OSError, EOFError, AttributeError, RuntimeError) as e:
            last = str(e) or type(e).__name__
        time.sleep(interval_s)
    raise RuntimeError(f"{failure} within {timeout_s:.0f} s ({last})")


def _format(java: str, classpath: str, config: str, cluster_id: str = "") -> None:
    """``kafka.tools.StorageTool format`` with *cluster_id* (a fresh ``random-uuid`` by default)."""
    cluster_id = cluster_id or new_cluster_id(java, classpath)
    _storage_tool(java, classpath, "format", "-c", config, "-t", cluster_id)


def new_cluster_id(java: str, classpath: str) -> str:
    return _storage_tool(java, classpath, "random-uuid").strip().splitlines()[-1]


def _storage_tool(java: str, classpath: str, *args: str) -> str:
    done = subprocess.run([java, "-cp", classpath, "kafka.tools.StorageTool", *args], capture_output=True,
                          text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"StorageTool {args[0]} failed ({done.returncode}): "
                           f"{(done.stdout + done.stderr).strip()[-600:]}")
    return done.stdout


def free_ports(n: int) -> Tuple[int, ...]:
    """*n* distinct TCP ports nothing listens on right now (the kernel's choice)."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return tuple(s.getsockname()[1] for s in socks)
    finally:
        for s in socks:
            s.close()




def create_topics(bootstrap: Tuple[str, int], topics: Mapping[str, int], timeout_s: float = 30.0,
                  replication: int = 1, version: int = CREATE_TOPICS_VERSION) -> None:
    """CreateTopics *version* (*replication* replicas each) and wait for the answer; RuntimeError
    naming a topic Kafka refused (TOPIC_ALREADY_EXISTS is fine)."""
    import datetime
    import importlib

    from kio.static.primitive import i16, i32, i32Timedelta

    rq = importlib.import_module(f"kio.schema.create_topics.v{version}.request")

    request = rq.CreateTopicsRequest(
        topics=tuple(rq.CreatableTopic(name=name, num_partitions=i32(n), replication_factor=i16(replication), assignments=(),
                                       configs=()) for name, n in topics.items()),
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=timeout_s)), validate_only=False)
    try:
        decoded = exchange(bootstrap, request, "CreateTopics", version, timeout_s)
    except (OSError, EOFError) as e:
        raise RuntimeError(f"CreateTopics: {e}") from None
    if not hasattr(decoded, "body"):
        raise RuntimeError(f"CreateTopics: the answer does not decode: {decoded}")
    for topic in decoded.body.topics:
        if int(topic.error_code) not in (0, 36):  # NONE, TOPIC_ALREADY_EXISTS
            raise RuntimeError(f"CreateTopics {topic.name}: error {int(topic.error_code)} ({topic.error_message})")


def settings_for(timers: bool) -> Dict[str, str]:
    """The settings conformance runs Kafka with: no initial rebalance delay, and with timers the
    schedules' short session timeouts allowed (group.min.session.timeout.ms=1000)."""
    out = {"group.initial.rebalance.delay.ms": "0"}
    if timers:
        out["group.min.session.timeout.ms"] = "1000"
    return out
