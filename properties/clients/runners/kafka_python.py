"""A kafka-python group member (see the package docstring for its arguments and output).

kafka-python exposes its membership as ``consumer._coordinator._generation`` (generation id and
member id) and ``consumer._coordinator.state``; its rebalance listener is called on the IO thread.
"""

from kafka import ConsumerRebalanceListener, KafkaConsumer, OffsetAndMetadata
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

from properties.clients.runners.common import (CommitClock, MemberWatch, Stop, config, emit, python_client_settings,
                                               rebalance_listener)

ASSIGNORS = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}


def main() -> None:
    c = config()
    Stop.install()
    consumer = KafkaConsumer(bootstrap_servers=c["bootstrap"], group_id=c["group"], client_id=c["client_id"],
                             enable_auto_commit=False, auto_offset_reset="earliest",
                             **python_client_settings(c, ASSIGNORS))
    consumer.subscribe([c["topic"]], listener=rebalance_listener(ConsumerRebalanceListener))
    emit("ready", library="kafka-python", version=__import__("kafka").__version__)
    watch, clock = MemberWatch(), CommitClock(c["commit_interval_ms"])
    coordinator = consumer._coordinator
    while not Stop.requested:
        try:
            consumer.poll(timeout_ms=200)
        except Exception as e:  # what the library raises to the application
            emit("error", error=f"{type(e).__name__}: {e}")
        generation = coordinator._generation
        watch.see(generation.member_id or None, generation.generation_id, str(getattr(coordinator, "state", None)))
        owned = consumer.assignment()
        if owned and clock.due():
            offsets = {tp: OffsetAndMetadata(clock.offset, "", -1) for tp in owned}
            try:
                consumer.commit(offsets)
                emit("committed", offsets={tp.partition: clock.offset for tp in owned})
            except Exception as e:
                emit("commit-failed", error=f"{type(e).__name__}: {e}")
    consumer.close()
    emit("closed")


if __name__ == "__main__":
    main()
