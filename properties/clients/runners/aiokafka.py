"""An aiokafka group member (see the package docstring for its arguments and output).

aiokafka exposes ``consumer._coordinator.generation`` and ``.member_id`` (no member state); its
rebalance listener is a coroutine run on the caller's loop.
"""

import asyncio
import signal

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

from properties.clients.runners.common import CommitClock, MemberWatch, Stop, config, emit, python_client_settings, rebalance_listener

ASSIGNORS = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}


async def run() -> None:
    c = config()
    Stop.install()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    consumer = AIOKafkaConsumer(bootstrap_servers=c["bootstrap"], group_id=c["group"], client_id=c["client_id"],
                                enable_auto_commit=False, auto_offset_reset="earliest",
                                **python_client_settings(c, ASSIGNORS, tuple))
    consumer.subscribe([c["topic"]], listener=rebalance_listener(ConsumerRebalanceListener, asynchronous=True))
    await consumer.start()
    import aiokafka

    emit("ready", library="aiokafka", version=aiokafka.__version__)
    watch, clock = MemberWatch(), CommitClock(c["commit_interval_ms"])
    try:
        while not stop.is_set():
            try:
                await consumer.getmany(timeout_ms=200)
            except Exception as e:
                emit("error", error=f"{type(e).__name__}: {e}")
            coordinator = consumer._coordinator
            generation = getattr(coordinator, "generation", None)
            watch.see(getattr(coordinator, "member_id", None) or None, generation, None)
            owned = consumer.assignment()
            if owned and clock.due():
                try:
                    await consumer.commit({tp: clock.offset for tp in owned})
                    emit("committed", offsets={tp.partition: clock.offset for tp in owned})
                except Exception as e:
                    emit("commit-failed", error=f"{type(e).__name__}: {e}")
    finally:
        await consumer.stop()
    emit("closed")


if __name__ == "__main__":
    asyncio.run(run())
