"""An aiokafka group member for tests/live/test_client_groups.py.

argv: bootstrap group topic name [--library-defaults] (see common.py). Prints JSON lines
(flushed): assigned / revoked / record / committed / closed. Commits after every batch and in the
revoke callback; SIGTERM: stop (leave the group); SIGKILL: dies without leaving.
"""
import asyncio
import signal

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener
from common import alive, bootstrap, emit, group, name, polling, timing, topic


async def main():
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id=name,
                                enable_auto_commit=False, auto_offset_reset="earliest",
                                **timing(session_timeout_ms=6000, heartbeat_interval_ms=500,
                                         max_poll_interval_ms=60000))

    class Listener(ConsumerRebalanceListener):
        async def on_partitions_revoked(self, revoked):
            if revoked:
                await consumer.commit()
            emit(event="revoked", partitions=sorted(tp.partition for tp in revoked))

        async def on_partitions_assigned(self, assigned):
            emit(event="assigned", partitions=sorted(tp.partition for tp in assigned))

    consumer.subscribe([topic], listener=Listener())
    await consumer.start()
    try:
        polling()
        while not stop.is_set():
            batches = await consumer.getmany(timeout_ms=200)
            alive()
            if not batches:
                continue
            for tp, records in batches.items():
                for r in records:
                    emit(event="record", partition=r.partition, offset=r.offset, value=r.value.decode())
            await consumer.commit()
            emit(event="committed")
    finally:
        await consumer.stop()
    emit(event="closed")


asyncio.run(main())
