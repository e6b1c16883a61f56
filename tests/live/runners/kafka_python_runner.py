"""A kafka-python group member for tests/live/test_client_groups.py.

argv: bootstrap group topic name [--library-defaults] (see common.py). Prints JSON lines
(flushed): polling / polled / assigned / revoked / record / commit-failed / committed / diagnosis
(once, when kafka-python 3.0.12 has lost a join's completion: see
properties.clients.runners.kafka_python.join_completion_lost) / closed. Commits after every batch;
SIGTERM: close (leave the group); SIGKILL: dies without leaving.
"""

from common import Stop, alive, bootstrap, emit, group, name, polling, timing, topic
from kafka import ConsumerRebalanceListener, KafkaConsumer

from properties.clients.runners.kafka_python import JOIN_COMPLETION_LOST, join_completion_lost

Stop.install()
consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id=name, enable_auto_commit=False,
                         auto_offset_reset="earliest",
                         **timing(session_timeout_ms=6000, heartbeat_interval_ms=500, max_poll_interval_ms=60000))


class Listener(ConsumerRebalanceListener):
    def on_partitions_revoked(self, revoked):
        # no commit here: kafka-python 3.0 refuses blocking calls from a synchronous listener
        # ("Cannot block on net.run() from the IO thread itself"); every batch is committed already
        emit(event="revoked", partitions=sorted(tp.partition for tp in revoked))

    def on_partitions_assigned(self, assigned):
        emit(event="assigned", partitions=sorted(tp.partition for tp in assigned))


consumer.subscribe([topic], listener=Listener())
polling()
diagnosed = False
while not Stop.requested:
    batches = consumer.poll(timeout_ms=200)
    alive()
    if not diagnosed and join_completion_lost(consumer._coordinator):
        diagnosed = True
        emit(event="diagnosis", text=JOIN_COMPLETION_LOST)
    if not batches:
        continue
    for tp, records in batches.items():
        for r in records:
            emit(event="record", partition=r.partition, offset=r.offset, value=r.value.decode())
    try:
        consumer.commit()
    except Exception as e:
        emit(event="commit-failed", where="batch", error=repr(e))
        continue
    emit(event="committed")
consumer.close()
emit(event="closed")
