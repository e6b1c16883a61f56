"""groupcheck's own consumer (``impl.consumer.Consumer`` over TCP, as ``groupcheck consume`` runs
it) as a group member (see the package docstring for its arguments and output).

One loop alternates the application's ``poll`` and one iteration of the heartbeat thread
(:meth:`impl.consumer.HeartbeatThreadRunner.run_once`), as ``groupcheck consume`` does. Its
membership is ``consumer.coordinator.generation`` and ``.state``. The settings pass through
:func:`properties.live.consume.parse_consumer_settings`. A ``mutant`` in the configuration runs the
consumer with that mutant of :mod:`properties.mutation.mutants` applied (a deliberately broken
consumer, to show what the judge catches).

With ``group.protocol=consumer`` among the settings it runs KIP-848's protocol instead
(:class:`impl.membership.consumer.ModernConsumer`, whose poll runs its background iterations too):
its membership is the member id, the member epoch and the member state, and ``assigned`` lines
carry the partitions added (incremental, as Kafka's callbacks under that protocol).
"""

import random
import sys

from impl.consumer import Consumer, ConsumerRebalanceListener
from impl.errors import KafkaException
from impl.membership.consumer import ModernConsumer
from impl.network.wire_selector import WireSelector
from impl.time import SystemTime
from properties.clients.runners.common import (CommitClock, MemberWatch, Stop, config, emit, partitions_changed,
                                               rebalance_listener)
from properties.live.consume import parse_consumer_settings


def main() -> None:
    c = config()
    if c.get("mutant"):
        from properties.mutation.mutants import applied

        with applied(c["mutant"]):
            run(c)
    else:
        run(c)


def run(c) -> None:
    Stop.install()
    if c["settings"].get("group.protocol") == "consumer":
        run_consumer_protocol(c)
        return
    settings = parse_consumer_settings([f"{k}={','.join(v) if isinstance(v, list) else v}"
                                        for k, v in c["settings"].items()]
                                       + ([f"group.instance.id={c['group_instance_id']}"]
                                          if c.get("group_instance_id") else []))
    time = SystemTime()
    transport = WireSelector(time, c["client_id"], log=lambda line: print(line, file=sys.stderr, flush=True))
    consumer = Consumer({"bootstrap.servers": [c["bootstrap"]], "group.id": c["group"], "client.id": c["client_id"],
                         **settings}, time, transport, random.Random(), discover_broker_versions=True)

    consumer.subscribe([c["topic"]], rebalance_listener(ConsumerRebalanceListener))
    emit("ready", library="groupcheck", version="impl")
    coordinator = consumer.coordinator

    def step() -> None:
        consumer.poll(200)
        consumer.heartbeat_thread.run_once()

    def membership() -> tuple:
        generation = coordinator.generation
        return generation.member_id or None, generation.generation_id, str(coordinator.state.name)

    loop(c, consumer, step, membership)


def loop(c, consumer, step, membership) -> None:
    """Until SIGTERM: *step* (the application's poll and what runs beside it), a ``member`` line
    when *membership* () -> (member id, generation or epoch, state) changed, the commit schedule;
    then close (leaving the group)."""
    watch, clock = MemberWatch(), CommitClock(c["commit_interval_ms"])
    while not Stop.requested:
        try:
            step()
        except KafkaException as e:
            emit("error", error=f"{type(e).__name__}: {e}")
        watch.see(*membership())
        owned = consumer.assignment()
        if owned and clock.due():
            try:
                consumer.commit_sync({tp: clock.offset for tp in owned}, 5000)
                emit("committed", offsets={tp.partition: clock.offset for tp in owned})
            except KafkaException as e:
                emit("commit-failed", error=f"{type(e).__name__}: {e}")
    try:
        consumer.close(5000)
    except KafkaException as e:
        emit("error", error=f"close: {type(e).__name__}: {e}")
    emit("closed")


class _Incremental(ConsumerRebalanceListener):
    """KIP-848's callbacks: onPartitionsAssigned is given the partitions added."""

    def on_partitions_assigned(self, partitions) -> None:
        partitions_changed("assigned", partitions, incremental=True)

    def on_partitions_revoked(self, partitions) -> None:
        partitions_changed("revoked", partitions)

    def on_partitions_lost(self, partitions) -> None:
        partitions_changed("lost", partitions)


def run_consumer_protocol(c) -> None:
    pairs = [f"{k}={v}" for k, v in c["settings"].items() if k != "group.protocol"]
    settings = parse_consumer_settings(pairs + ([f"group.instance.id={c['group_instance_id']}"]
                                                if c.get("group_instance_id") else []), protocol="consumer")
    time = SystemTime()
    transport = WireSelector(time, c["client_id"], log=lambda line: print(line, file=sys.stderr, flush=True))
    consumer = ModernConsumer({"bootstrap.servers": [c["bootstrap"]], "group.id": c["group"],
                               "client.id": c["client_id"], **settings}, time, transport, random.Random())
    consumer.subscribe([c["topic"]], _Incremental())
    emit("ready", library="groupcheck", version="impl", protocol="consumer")
    loop(c, consumer, lambda: consumer.poll(200), lambda: (consumer.member_id, consumer.member_epoch, consumer.state.name))

if __name__ == "__main__":
    main()
