"""Apache Kafka's own KafkaConsumer as a group member (see the package docstring for its arguments
and output): kafka-clients with the classic protocol (``group.protocol=classic``: the
``ConsumerCoordinator`` the judge's rules were written from).

The consumer is ``java/consumer/GroupcheckRunner.java``, which speaks the runner protocol itself.
This module only gets it ready and hands over: it resolves the jars of ``java/consumer/pom.xml``
once into the cache (:func:`properties.live.maven.resolve`), compiles the runner once into the
cache as well (keyed by a hash of its source), flattens the JSON configuration into
``NAME=VALUE`` arguments (:func:`arguments`: Kafka's consumer properties as they are, the runner's
own prefixed ``runner.``, so the Java side needs no JSON library), and ``os.execv``'s the JVM, so the
process the session sends SIGTERM to is the JVM itself (its shutdown hook wakes the poll loop,
which closes the consumer: a LeaveGroup from a dynamic member).

Why compiled once rather than run in source-launch mode (``java GroupcheckRunner.java``): measured
on this project's 2-core machine, the compiled class prints ``ready`` 0.4 s after the JVM starts,
source-launch 1.1–1.3 s (it compiles in-process on every start, about a CPU-second each, three
consumers per schedule); compiling costs 1.5 s once.

The same folder holds ``GroupcheckProducer.java``, Kafka's KafkaProducer with its defaults for tests
of ``groupcheck broker`` (not a client under test of ``groupcheck conform``): :func:`prepare_producer`
builds it the same way, into a cache folder of its own, and :func:`producer_arguments` flattens
its few arguments.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from typing import Any, Dict, List

from properties.errors import UsageError
from properties.live import maven
from properties.live.child import PROJECT_ROOT

HOME = os.path.join(PROJECT_ROOT, "java", "consumer")
POM = os.path.join(HOME, "pom.xml")
SOURCE = os.path.join(HOME, "GroupcheckRunner.java")
MAIN = "GroupcheckRunner"
WHO = "--client java"
JVM = ["-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
       "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.showDateTime=true"]
ASSIGNORS = {"range": "org.apache.kafka.clients.consumer.RangeAssignor",
             "roundrobin": "org.apache.kafka.clients.consumer.RoundRobinAssignor"}
DESERIALIZER = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
PASSED_ON = ("session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "request.timeout.ms")


def arguments(c: Dict[str, Any]) -> List[str]:
    """The runner's configuration (see the package docstring) as GroupcheckRunner's ``NAME=VALUE``
    arguments: Kafka's consumer properties, then the runner's own (``runner.``)."""
    s = c["settings"]
    props = {"bootstrap.servers": c["bootstrap"], "group.id": c["group"], "client.id": c["client_id"],
             "group.protocol": str(s.get("group.protocol", "classic")), "enable.auto.commit": "false",
             "auto.offset.reset": "earliest", "key.deserializer": DESERIALIZER, "value.deserializer": DESERIALIZER}
    props.update({name: str(s[name]) for name in PASSED_ON if name in s})
    if "partition.assignment.strategy" in s:  # else Kafka's default: range, then cooperative-sticky (eager)
        props["partition.assignment.strategy"] = ",".join(ASSIGNORS[a] for a in s["partition.assignment.strategy"])
    if c.get("group_instance_id"):
        props["group.instance.id"] = c["group_instance_id"]  # a static member (KIP-345)
    props.update({"runner.topic": c["topic"], "runner.commit.interval.ms": str(c["commit_interval_ms"])})
    for name, value in props.items():
        if "\n" in value or "\0" in value:
            raise ValueError(f"{name}: a value with a newline or NUL cannot be an argument: {value!r}")
    return [f"{name}={value}" for name, value in props.items()]


def version_of(c: Dict[str, Any]) -> str:
    """The kafka-clients release the configuration's library names: ``java`` or ``java:X.Y.Z``."""
    from properties.targets import JAVA_CLIENTS_VERSION

    name = c.get("library") or "java"
    return name.partition(":")[2] if ":" in name else JAVA_CLIENTS_VERSION


def prepare(version: str) -> List[str]:
    """``java`` and its options up to the main class, for kafka-clients *version*: the jars
    resolved and the runner compiled, each once into the cache; UsageError (one line) without Java
    or Maven or if either fails."""
    return _compiled(version, [SOURCE], MAIN, "runner", WHO)


PRODUCER_SOURCE = os.path.join(HOME, "GroupcheckProducer.java")
PRODUCER_MAIN = "GroupcheckProducer"
SERIALIZER = "org.apache.kafka.common.serialization.StringSerializer"
PRODUCER_WHO = "the Java producer (GroupcheckProducer)"


def producer_arguments(bootstrap: str, topic: str, records: int, value_prefix: str = "",
                       flush_every: int = 0) -> List[str]:
    """GroupcheckProducer's ``NAME=VALUE`` arguments: Kafka's producer with its defaults (only
    ``bootstrap.servers`` and the String serializers set), and the program's own (``runner.``):
    *records* records to *topic*, values *value_prefix* + index, a flush after every *flush_every*
    records (0: only at the end)."""
    props = {"bootstrap.servers": bootstrap, "key.serializer": SERIALIZER, "value.serializer": SERIALIZER,
             "runner.topic": topic, "runner.records": str(records), "runner.value.prefix": value_prefix,
             "runner.flush.every": str(flush_every)}
    for name, value in props.items():
        if "\n" in value or "\0" in value:
            raise ValueError(f"{name}: a value with a newline or NUL cannot be an argument: {value!r}")
    return [f"{name}={value}" for name, value in props.items()]


def prepare_producer(version: str) -> List[str]:
    """``java`` and its options up to the main class of ``java/consumer/GroupcheckProducer.java``
    (Kafka's KafkaProducer with its defaults, for tests of ``groupcheck broker``), for
    kafka-clients *version*: the same jars as :func:`prepare`, the producer compiled once into the
    cache with the runner it borrows its JSON helpers from."""
    return _compiled(version, [PRODUCER_SOURCE, SOURCE], PRODUCER_MAIN, "producer", PRODUCER_WHO)


def _compiled(version: str, sources: List[str], main: str, tag: str, who: str) -> List[str]:
    """``java … -cp CLASSES:JARS MAIN`` for *sources* compiled against kafka-clients *version*:
    the jars resolved and the classes compiled, each once into the cache (the classes' folder
    keyed by a hash of the sources, so an edited source compiles again)."""
    folder = f"kafka-clients-{version}"
    lib = maven.resolve(POM, folder, f"org.apache.kafka:kafka-clients:{version}", {"kafka.version": version}, who)
    java = maven.require("java", who)
    digest = hashlib.sha256()
    for source in sources:
        with open(source, "rb") as f:
            digest.update(f.read())

    def compile_into(staging: str) -> None:
        javac = shutil.which("javac") or os.path.join(os.path.dirname(os.path.realpath(java)), "javac")
        if not os.path.exists(javac):
            raise UsageError(f"{who} needs a JDK (javac on PATH or beside java): javac was not found")
        done = subprocess.run([javac, "--release", "17", "-nowarn", "-d", staging, "-cp", os.path.join(lib, "*"),
                               *sources], capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            said = (done.stdout + done.stderr).strip().splitlines() or ["no output"]
            raise UsageError(f"{who}: javac failed on {sources[0]}: {said[0][:400]}")

    classes = maven.once(os.path.join(folder, f"{tag}-{digest.hexdigest()[:16]}"), compile_into)
    return [java, *JVM, "-cp", os.pathsep.join([classes, os.path.join(lib, "*")]), main]


def ready(library: str) -> None:
    """Resolve and compile for *library* (``java`` or ``java:X.Y.Z``) now; UsageError if either fails."""
    prepare(version_of({"library": library}))


def main() -> None:
    from properties.clients.runners.common import config

    c = config()
    args = arguments(c)
    try:
        command = prepare(version_of(c))
    except UsageError as e:
        print(f"groupcheck: error: {e}", file=sys.stderr, flush=True)
        sys.exit(2)
    sys.stdout.flush()
    os.execv(command[0], command + args)


if __name__ == "__main__":
    main()
