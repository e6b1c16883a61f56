"""A kafka-python group member (see the package docstring for its arguments and output).

kafka-python exposes its membership as ``consumer._coordinator._generation`` (generation id and
member id) and ``consumer._coordinator.state``; its rebalance listener is called on the IO thread.
"""

from kafka import ConsumerRebalanceListener, KafkaConsumer, OffsetAndMetadata, TopicPartition
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

from properties.clients.runners.common import CommitClock, MemberWatch, Stop, config, emit

ASSIGNORS = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}


def main() -> None:
    c = config()
    s = c["settings"]
    Stop.install()
    kwargs = {"session_timeout_ms": s.get("session.timeout.ms"), "heartbeat_interval_ms": s.get("heartbeat.interval.ms"),
              "max_poll_interval_ms": s.get("max.poll.interval.ms"), "request_timeout_ms": s.get("request.timeout.ms")}
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    if c.get("group_instance_id"):
        kwargs["group_instance_id"] = c["group_instance_id"]  # a static member (KIP-345)
    if "partition.assignment.strategy" in s:
        kwargs["partition_assignment_strategy"] = [ASSIGNORS[a] for a in s["partition.assignment.strategy"]]
    consumer = KafkaConsumer(bootstrap_servers=c["bootstrap"], group_id=c["group"], client_id=c["client_id"],
                             enable_auto_commit=False, auto_offset_reset="earliest", **kwargs)

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            emit("revoked", partitions=sorted(tp.partition for tp in revoked))

        def on_partitions_assigned(self, assigned):
            emit("assigned", partitions=sorted(tp.partition for tp in assigned))

        def on_partitions_lost(self, lost):
            emit("lost", partitions=sorted(tp.partition for tp in lost))

    consumer.subscribe([c["topic"]], listener=Listener())
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
