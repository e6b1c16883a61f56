"""A confluent-kafka (librdkafka) group member (see the package docstring for its arguments and output).

librdkafka exposes its member id (``Consumer.memberid()``) but not its generation to the
application (the generation travels inside the opaque ``consumer_group_metadata()``): ``member``
lines carry ``generation: null``. Its settings are Kafka's names already; ``request.timeout.ms``
becomes ``socket.timeout.ms``, librdkafka's request timeout.
"""

from confluent_kafka import Consumer, KafkaException, TopicPartition

from properties.clients.runners.common import CommitClock, MemberWatch, Stop, config, emit, partitions_changed


def main() -> None:
    c = config()
    s = c["settings"]
    Stop.install()
    conf = {"bootstrap.servers": c["bootstrap"], "group.id": c["group"], "client.id": c["client_id"],
            "enable.auto.commit": False, "auto.offset.reset": "earliest", "topic.metadata.refresh.interval.ms": 1000}
    for name in ("session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms"):
        if name in s:
            conf[name] = s[name]
    if "request.timeout.ms" in s:
        conf["socket.timeout.ms"] = s["request.timeout.ms"]
    if "partition.assignment.strategy" in s:
        conf["partition.assignment.strategy"] = ",".join(s["partition.assignment.strategy"])
    if c.get("group_instance_id"):
        conf["group.instance.id"] = c["group_instance_id"]  # a static member (KIP-345)

    def on_error(err):
        """librdkafka raises a fatal error (an UNRELEASED_INSTANCE_ID, say) through this callback and
        its log, not as a polled message: the runner reports it as the library's error."""
        if err.fatal():
            emit("error", error=f"fatal: {err.str()}")

    conf["error_cb"] = on_error
    consumer_protocol = s.get("group.protocol") == "consumer"
    if consumer_protocol:  # KIP-848: the coordinator decides the session, the interval, the assignment
        conf["group.protocol"] = "consumer"
        for name in ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"):
            conf.pop(name, None)
    consumer = Consumer(conf)

    # KIP-848's protocol hands on_assign only the partitions added (incremental)
    consumer.subscribe([c["topic"]], on_assign=lambda _, ps: partitions_changed("assigned", ps, consumer_protocol),
                       on_revoke=lambda _, ps: partitions_changed("revoked", ps),
                       on_lost=lambda _, ps: partitions_changed("lost", ps))
    import confluent_kafka

    emit("ready", library="confluent-kafka", version=confluent_kafka.version()[0],
         librdkafka=confluent_kafka.libversion()[0])
    watch, clock = MemberWatch(), CommitClock(c["commit_interval_ms"])
    while not Stop.requested:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error():
            emit("error", error=str(msg.error()))
        try:
            member_id = consumer.memberid() or None
        except (KafkaException, RuntimeError):
            member_id = None
        watch.see(member_id, None, None)
        owned = consumer.assignment()
        if owned and clock.due():
            offsets = [TopicPartition(p.topic, p.partition, clock.offset) for p in owned]
            try:
                consumer.commit(offsets=offsets, asynchronous=False)
                emit("committed", offsets={p.partition: clock.offset for p in owned})
            except KafkaException as e:
                emit("commit-failed", error=str(e))
    consumer.close()
    emit("closed")


if __name__ == "__main__":
    main()
