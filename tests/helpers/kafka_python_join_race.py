"""A kafka-python 3.0.12 consumer that meets the race behind its silence after a SyncGroup answer
every time, not about once in twenty runs (tests/clients/test_findings.py runs it).

argv: ``bootstrap group topic seconds [--pending-counted]``. The consumer's join task finishes 500
ms after its SyncGroup answer is read (an ``await`` added at the end of
``BaseCoordinator._do_join_and_sync_async``), so every 200 ms poll gives up waiting for it first,
as a poll sometimes does when the answer comes at the wrong moment. ``--pending-counted`` makes
``ConsumerCoordinator.need_rejoin`` also count an unconsumed join task, as Kafka's
``AbstractCoordinator.rejoinNeededOrPending`` counts a pending joinFuture. Prints JSON lines:
``assigned`` (``partitions``) from the rebalance listener and ``diagnosis`` once, when
``join_completion_lost`` holds after a poll; exits after *seconds* of polling.
"""

import json
import sys
import time

from kafka import ConsumerRebalanceListener, KafkaConsumer
from kafka.coordinator.base import BaseCoordinator
from kafka.coordinator.consumer import ConsumerCoordinator

from properties.clients.runners.kafka_python import join_completion_lost

bootstrap, group, topic, seconds = sys.argv[1:5]
pending_counted = "--pending-counted" in sys.argv[5:]

join_and_sync = BaseCoordinator._do_join_and_sync_async


async def late_join_and_sync(self):
    assignment = await join_and_sync(self)
    await self._manager._net.sleep(0.5)
    return assignment


BaseCoordinator._do_join_and_sync_async = late_join_and_sync

if pending_counted:
    need_rejoin = ConsumerCoordinator.need_rejoin
    ConsumerCoordinator.need_rejoin = lambda self: self._join_task is not None or need_rejoin(self)


def emit(**fields):
    print(json.dumps(fields), flush=True)


class Listener(ConsumerRebalanceListener):
    def on_partitions_revoked(self, revoked):
        pass

    def on_partitions_assigned(self, assigned):
        emit(event="assigned", partitions=sorted(tp.partition for tp in assigned))


consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id="c0", enable_auto_commit=False)
consumer.subscribe([topic], listener=Listener())
deadline = time.monotonic() + float(seconds)
diagnosed = False
while time.monotonic() < deadline:
    consumer.poll(timeout_ms=200)
    if not diagnosed and join_completion_lost(consumer._coordinator):
        diagnosed = True
        emit(event="diagnosis")
consumer.close()
