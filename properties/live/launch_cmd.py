"""Any broker binary as a child process: ``groupcheck conform broker --launch-cmd 'COMMAND {port}'``.

:func:`start` splits the command the way a shell would (``shlex``; no shell runs it, so the
process groupcheck stops is the broker itself: a wrapper script must ``exec`` it), replaces
``{port}`` by a free loopback port and ``{dir}`` by a fresh data folder (removed when the broker
stops), runs it from the current folder with its output in a log file, and waits — at most
:data:`READY_TIMEOUT_S` — until the port accepts connections and answers ApiVersions. Then the
schedules' topic: created with a CreateTopics request when the broker offers it, else asked for
in a Metadata request that allows auto-creation, and in both cases checked to exist with enough
partitions. A command that exits first, never listens, or leaves no usable topic is a RuntimeError
of one line ending in the last line of its output.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import time
from typing import Dict, List, Mapping, Optional, Tuple

from properties.engine import children
from properties.live.child import ChildBroker

#: How long the command may take to accept connections, answer ApiVersions and have the topic.
READY_TIMEOUT_S = 60.0
PLACEHOLDERS = ("{port}", "{dir}")
#: Metadata and CreateTopics errors that pass while a topic is being created
#: (UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE)
_CREATING = (3, 5)


def shown(command: str) -> str:
    """``--launch-cmd 'COMMAND'`` on one line, for messages."""
    return "--launch-cmd " + shlex.quote(" ".join(command.split()))


def parse(command: str) -> List[str]:
    """The command's words; ValueError when it does not split or has no ``{port}``."""
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise ValueError(f"not a command line ({e})") from None
    if not argv:
        raise ValueError("empty: give the command that starts the broker, with {port} where its port goes")
    if not any("{port}" in word for word in argv):
        raise ValueError("the command has no {port}: groupcheck picks a free loopback port and puts it there "
                         "(and a fresh data folder for {dir})")
    return argv


def last_line(text: str) -> str:
    """The last non-empty line of *text*, shortened, or ``no output``."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return repr(lines[-1][-300:]) if lines else "no output"


def start(command: str, topics: Mapping[str, int] = (), host: str = "127.0.0.1",
          timeout_s: float = READY_TIMEOUT_S) -> ChildBroker:
    """Run *command* (see the module doc) and return the broker once it answers, with *topics*
    (name -> partitions, at least); the caller stops it. RuntimeError (one line) otherwise."""
    from properties.live.tansu import free_port

    argv = parse(command)
    port = free_port(host)
    workdir = tempfile.mkdtemp(prefix="groupcheck-launch-cmd-")
    data = os.path.join(workdir, "data")
    os.mkdir(data)
    log_path = os.path.join(workdir, "broker.log")
    args = [word.replace("{port}", str(port)).replace("{dir}", data) for word in argv]
    try:
        with open(log_path, "wb") as log:
            process = children.popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    except OSError as e:
        shutil.rmtree(workdir, ignore_errors=True)
        raise RuntimeError(f"cannot run {args[0]}: {e.strerror or e}") from None
    broker = CommandBroker(process, host, [port], log_path, workdir)
    broker.args = args
    broker.restartable = any("{dir}" in word for word in argv)
    deadline = time.monotonic() + timeout_s
    try:
        versions = _ready(broker, deadline, timeout_s)
        _topics(broker, versions, dict(topics), deadline, timeout_s)
    except RuntimeError as e:
        output = broker.log()
        broker.stop()
        raise RuntimeError(f"{e}; its last output line: {last_line(output)}") from None
    except BaseException:
        broker.stop()
        raise
    return broker


class CommandBroker(ChildBroker):
    """A broker *args* started (see :func:`start`); with ``{dir}`` in its command it can be
    restarted on the same folder (``--faults``)."""

    args: List[str]
    restartable: bool

    def restart(self, group: str, timeout_s: float = READY_TIMEOUT_S) -> Tuple[str, int]:
        """Kill the broker (SIGKILL) and run its command again, same port and data folder; its
        address once it answers ApiVersions again. RuntimeError (one line) if it does not."""
        self.process.kill()
        self.process.wait(timeout=10)
        with open(self.log_path, "ab") as log:
            log.write(b"\n--- groupcheck: killed (SIGKILL) and started again on the same folder ---\n")
            log.flush()
            self.process = children.popen(self.args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            _ready(self, time.monotonic() + timeout_s, timeout_s)
        except RuntimeError as e:
            raise RuntimeError(f"after a restart: {e}; its last output line: {last_line(self.log())}") from None
        return self.host, self.port


def _exited(broker: ChildBroker) -> Optional[str]:
    code = broker.process.poll()
    return None if code is None else f"the command exited with status {code}"


def _ready(broker: ChildBroker, deadline: float, timeout_s: float) -> Dict[str, Tuple[int, int]]:
    """Wait until the port accepts a connection and answers ApiVersions v0: the broker's ranges."""
    from impl import protocol as P
    from properties.live.exchange import exchange

    address = (broker.host, broker.port)
    problem = "nothing accepted connections"
    while True:
        exited = _exited(broker)
        if exited:
            raise RuntimeError(f"{exited} before {broker.bootstrap} answered ({problem})")
        try:
            answer = exchange(address, P.ApiVersionsRequestData(), "ApiVersions", 0, 2.0)
        except (OSError, EOFError) as e:
            problem = "nothing accepted connections" if isinstance(e, ConnectionRefusedError) else \
                f"ApiVersions: {e.strerror if isinstance(e, OSError) and e.strerror else e}"
        else:
            body = getattr(answer, "body", None)
            if body is None:
                raise RuntimeError(f"{broker.bootstrap} answered ApiVersions v0 with bytes that do not decode")
            if body.error_code == 0:
                return {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
            problem = f"ApiVersions answered error {body.error_code}"
        if time.monotonic() > deadline:
            raise RuntimeError(f"{broker.bootstrap} was not ready within {timeout_s:g} s ({problem})")
        time.sleep(0.05)


def _topics(broker: ChildBroker, versions: Dict[str, Tuple[int, int]], topics: Dict[str, int], deadline: float,
            timeout_s: float) -> None:
    """Each topic created (CreateTopics v5 when offered) or auto-created (Metadata), then seen in
    Metadata with at least its partitions."""
    from properties.live import kafka

    address = (broker.host, broker.port)
    lo, hi = versions.get("CreateTopics", (1, 0))
    if topics and lo <= kafka.CREATE_TOPICS_VERSION <= hi:
        kafka.create_topics(address, topics, timeout_s=max(1.0, deadline - time.monotonic()))
    for name, partitions in topics.items():
        while True:
            exited = _exited(broker)
            if exited:
                raise RuntimeError(f"{exited} while its topic {name} was being created")
            error, found = _metadata(address, versions, name)
            if error == 0 and found >= partitions:
                break
            if error == 0:
                raise RuntimeError(f"the topic {name} has {found} partitions where the schedules use {partitions}: "
                                   f"create it with {partitions} before, or let the broker auto-create topics with "
                                   f"num.partitions={partitions}")
            if error not in _CREATING or time.monotonic() > deadline:
                raise RuntimeError(f"the topic {name} does not exist and the broker did not create it (Metadata "
                                   f"answered error {error}; it offers no CreateTopics v{kafka.CREATE_TOPICS_VERSION} "
                                   f"or auto-creation): create it with {partitions} partitions in the command")
            time.sleep(0.1)


def _metadata(address: Tuple[str, int], versions: Dict[str, Tuple[int, int]], topic: str) -> Tuple[int, int]:
    """(error, partitions) of *topic* in a Metadata answer that allows auto-creation."""
    from impl import protocol as P
    from impl.wire.apis import CODEC_VERSIONS
    from properties.live.exchange import exchange

    lo, hi = versions.get("Metadata", (0, 0))
    version = max(lo, min(hi, CODEC_VERSIONS["Metadata"][1]))
    try:
        answer = exchange(address, P.MetadataRequestData(topics=[P.MetadataRequestTopic(topic)],
                                                         allow_auto_topic_creation=True),
                          "Metadata", version, 5.0)
    except (OSError, EOFError) as e:
        raise RuntimeError(f"Metadata v{version}: {e}") from None
    body = getattr(answer, "body", None)
    if body is None:
        raise RuntimeError(f"Metadata v{version}: the answer does not decode")
    for t in body.topics:
        if t.name == topic:
            return t.error_code, len(t.partitions)
    return 3, 0
