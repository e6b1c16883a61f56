"""A cluster of Apache Kafka nodes on loopback, and the coordinator failover it is judged through
(issue 35: ``--launch kafka:VERSION --brokers N``).

Every node is a KRaft ``broker,controller`` with the same static ``controller.quorum.voters``
(1..N), formatted with one cluster id; ``__consumer_offsets`` (one partition, so every group has the
same coordinator: the leader of partition 0) and the schedules' topic keep N replicas. The
controller fences a broker that stops heartbeating after ``broker.session.timeout.ms``, lowered
here to 1.5 s (heartbeats every 250 ms) so a failover takes seconds, not Kafka's default 9 s.

:meth:`KafkaCluster.kill_coordinator` is the fault: SIGKILL to the node that coordinates a group,
then wait until another node coordinates it and has loaded it (its DescribeGroups is answered
without COORDINATOR_LOAD_IN_PROGRESS) — the group is then what Kafka read back from its log
(``GroupMetadataManager.replay`` in 4.x, ``GroupMetadataManager.loadGroup`` in 3.x). What a
dead node answered is in every in-sync replica: the coordinator answers only once the group's
record is committed (``acks=all``), so the model's last *persisted* record is what comes back.
:meth:`KafkaCluster.heal` restarts the killed node and waits until it is back in the in-sync
replicas of ``__consumer_offsets``, so the next failover has the same cluster to work with.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import List, Mapping, Optional, Tuple

import attrs

from properties.live import kafka
from properties.live.exchange import describe_group, exchange

#: How fast the controller fences a node that stopped (Kafka's defaults are 9 s and 2 s), and no
#: preferred-leader election: a healed node would take the offsets partition back at the next
#: imbalance check (every 300 s), moving the coordinator in the middle of a later schedule (seen as
#: NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS answers before its failover step).
FAILOVER_SETTINGS = {"broker.session.timeout.ms": "1500", "broker.heartbeat.interval.ms": "250",
                     "auto.leader.rebalance.enable": "false"}
OFFSETS_TOPIC = kafka.OFFSETS_TOPIC


@attrs.define(eq=False)
class Node:
    node_id: int
    port: int
    controller_port: int
    workdir: str
    config: str
    broker: Optional[kafka.KafkaBroker] = None
    killed: bool = False

    @property
    def address(self) -> Tuple[str, int]:
        return "127.0.0.1", self.port

    @property
    def alive(self) -> bool:
        return self.broker is not None and self.broker.process.poll() is None


class _Processes:
    """The cluster's processes seen as one (what the conformance target watches for a crash):
    ``poll()`` is the exit status of the first node that exited without being killed on purpose."""

    def __init__(self, cluster: "KafkaCluster") -> None:
        self.cluster = cluster
        self.returncode: Optional[int] = None

    def poll(self) -> Optional[int]:
        for node in self.cluster.nodes:
            if not node.killed and node.broker is not None and node.broker.process.poll() is not None:
                self.returncode = node.broker.process.returncode
                return self.returncode
        return None


class KafkaCluster:
    """N Kafka nodes (see the module doc); :meth:`stop` stops them all and removes their folders."""

    def __init__(self, spec: kafka.KafkaSpec, nodes: List[Node], java: str, classpath: str, root: str) -> None:
        self.spec, self.nodes, self.java, self.classpath, self.root = spec, nodes, java, classpath, root
        self.host = "127.0.0.1"
        self.process = _Processes(self)
        self.failovers = 0

    @property
    def ports(self) -> List[int]:
        return [n.port for n in self.nodes]

    @property
    def bootstrap(self) -> str:
        node = next((n for n in self.nodes if n.alive), self.nodes[0])
        return f"{node.address[0]}:{node.port}"

    def log(self) -> str:
        return "\n".join(f"--- node {n.node_id} ---\n{n.broker.log()[-4000:]}" for n in self.nodes if n.broker)

    def stop(self) -> Optional[int]:
        for node in self.nodes:
            if node.broker is not None:
                node.broker.stop()
        shutil.rmtree(self.root, ignore_errors=True)
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- the fault ---------------------------------------------------------------------------

    def coordinator_of(self, group: str, timeout_s: float = 5.0) -> Node:
        """The node that coordinates *group*, as a live node's FindCoordinator says."""
        from impl import protocol as P

        last = "no live node"
        for node in self.nodes:
            if not node.alive:
                continue
            try:
                found = exchange(node.address, P.FindCoordinatorRequestData(key=group), "FindCoordinator", 3,
                                 timeout_s, "groupcheck-failover").body
            except (OSError, EOFError) as e:
                last = str(e) or type(e).__name__
                continue
            if found.error_code:
                last = f"error {found.error_code}"
                continue
            return self._node(found.node_id)
        raise RuntimeError(f"no node names the coordinator of {group} ({last})")

    def kill_coordinator(self, group: str, timeout_s: float = 60.0) -> Tuple[int, Tuple[str, int]]:
        """SIGKILL the node coordinating *group*; return (its node id, the address of the node that
        coordinates the group once it has loaded it)."""
        dead = self.coordinator_of(group)
        dead.killed = True
        dead.broker.process.kill()
        dead.broker.process.wait(timeout=10)
        self.failovers += 1
        deadline = time.monotonic() + timeout_s
        last = "no answer"
        while time.monotonic() < deadline:
            for node in self.nodes:
                if not node.alive:
                    continue
                try:
                    code, _ = describe_group(node.address, group, 2.0, "groupcheck-failover")
                except (OSError, EOFError, AttributeError, ValueError) as e:
                    last = str(e) or type(e).__name__
                    continue
                if code in kafka._NOT_READY:
                    last = f"error {code}"
                    continue
                now = self.coordinator_of(group)
                if now is not dead:
                    kafka.wait_for_fast_writes(now.address, deadline)
                    return dead.node_id, now.address
                last = f"node {dead.node_id} is still named the coordinator"
                break
            time.sleep(0.1)
        raise RuntimeError(f"no node took over the coordination of {group} within {timeout_s:.0f} s "
                           f"after node {dead.node_id} was killed ({last})")

    def heal(self, timeout_s: float = 120.0) -> None:
        """Start every killed node again and wait until all are in-sync replicas of the offsets topic."""
        for node in self.nodes:
            if node.killed or not node.alive:
                node.broker.stop()  # its files stay: the node's folder is the cluster's
                node.broker = kafka.launch(self.spec, self.java, self.classpath, node.workdir, node.config, node.port,
                                           owns_workdir=False)
                node.killed = False
        self.wait_in_sync(timeout_s)

    def wait_in_sync(self, timeout_s: float = 120.0) -> None:
        want = sorted(n.node_id for n in self.nodes)

        def in_sync() -> Optional[str]:
            isr = self.in_sync_replicas(OFFSETS_TOPIC)
            return None if isr == want else f"in sync: {isr}"

        kafka.wait_until(in_sync, timeout_s, f"the nodes {want} were not all in sync on {OFFSETS_TOPIC}", 0.2)

    def in_sync_replicas(self, topic: str, partition: int = 0) -> List[int]:
        from impl import protocol as P

        request = P.MetadataRequestData(topics=[P.MetadataRequestTopic(topic)], allow_auto_topic_creation=False)
        node = next(n for n in self.nodes if n.alive)
        answer = exchange(node.address, request, "Metadata", 12, 5.0, "groupcheck-failover")
        if not hasattr(answer, "body"):
            raise RuntimeError(f"Metadata: the answer does not decode: {answer}")
        for t in answer.body.topics:
            for p in t.partitions:
                if int(p.partition_index) == partition:
                    return sorted(int(n) for n in p.isr_nodes)
        raise RuntimeError(f"Metadata names no partition {topic}-{partition} yet")

    def _node(self, node_id: int) -> Node:
        return next(n for n in self.nodes if n.node_id == int(node_id))


def start_cluster(spec: kafka.KafkaSpec, brokers: int, topics: Mapping[str, int] = (),
                  settings: Mapping[str, str] = ()) -> KafkaCluster:
    """*brokers* nodes of Kafka *spec* (see the module doc), *topics* created with that many replicas,
    the group coordinator loaded; RuntimeError if it does not come up."""
    java, classpath = kafka.prepare(spec)
    root = tempfile.mkdtemp(prefix=f"groupcheck-kafka-{spec.version}-x{brokers}-")
    nodes: List[Node] = []
    cluster = KafkaCluster(spec, nodes, java, classpath, root)
    try:
        ports = kafka.free_ports(2 * brokers)
        voters = ",".join(f"{i + 1}@127.0.0.1:{ports[brokers + i]}" for i in range(brokers))
        cluster_id = kafka.new_cluster_id(java, classpath)
        for i in range(brokers):
            workdir = os.path.join(root, f"node-{i + 1}")
            os.makedirs(workdir)
            props = kafka.server_properties(spec, ports[i], ports[brokers + i], os.path.join(workdir, "data"),
                                            {**FAILOVER_SETTINGS, **dict(settings)}, node_id=i + 1, voters=voters,
                                            replication=brokers)
            config = kafka.write_config(spec, workdir, props)
            kafka._format(java, classpath, config, cluster_id)
            nodes.append(Node(i + 1, ports[i], ports[brokers + i], workdir, config))
        _launch_all(cluster)
        address = nodes[0].address
        if topics:
            kafka.create_topics(address, dict(topics), replication=brokers)
        kafka.wait_for_group_coordinator(address)
        cluster.wait_in_sync()
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _launch_all(cluster: KafkaCluster) -> None:
    """Start every node, then wait for each: a KRaft node waits for a quorum of voters before it
    says it has started, so one at a time would never start. (Spawned from this thread: a child's
    parent-death signal follows the thread that started it.)"""
    for node in cluster.nodes:
        node.broker = kafka.spawn_node(cluster.spec, cluster.java, cluster.classpath, node.workdir, node.config,
                                       node.port, owns_workdir=False)
    for node in cluster.nodes:
        try:
            kafka.await_ready(node.broker)
        except RuntimeError as e:
            raise RuntimeError(f"node {node.node_id} of {len(cluster.nodes)}: {e}") from None
