"""A confluent-kafka (librdkafka) group member for tests/live/test_client_groups.py.

argv: bootstrap group topic name [--library-defaults] (see common.py). Prints JSON lines
(flushed): assigned / revoked / lost / record / committed / closed. Commits every message
synchronously and in the revoke callback; SIGTERM: close (leave the group); SIGKILL: dies without
leaving.
"""

from common import Stop, alive, bootstrap, emit, group, name, polling, timing, topic
from confluent_kafka import Consumer, KafkaException

Stop.install()
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": name,
                     "enable.auto.commit": False, "auto.offset.reset": "earliest",
                     **timing(**{"session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
                                 "max.poll.interval.ms": 60000, "topic.metadata.refresh.interval.ms": 1000})})


def on_assign(c, partitions):
    emit(event="assigned", partitions=sorted(p.partition for p in partitions))


def on_revoke(c, partitions):
    if partitions:
        try:
            c.commit(asynchronous=False)
        except KafkaException:
            pass  # nothing consumed since the last commit (_NO_OFFSET)
    emit(event="revoked", partitions=sorted(p.partition for p in partitions))


def on_lost(c, partitions):
    emit(event="lost", partitions=sorted(p.partition for p in partitions))


consumer.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
polling()
while not Stop.requested:
    msg = consumer.poll(0.2)
    alive()
    if msg is None:
        continue
    if msg.error():
        emit(event="error", error=str(msg.error()))
        continue
    emit(event="record", partition=msg.partition(), offset=msg.offset(), value=msg.value().decode())
    consumer.commit(message=msg, asynchronous=False)
    emit(event="committed")
consumer.close()
emit(event="closed")
