"""A kafka-python group member (see the package docstring for its arguments and output).

kafka-python exposes its membership as ``consumer._coordinator._generation`` (generation id and
member id) and ``consumer._coordinator.state``; its rebalance listener is called on the IO thread.
When the member has lost a join's completion (:func:`join_completion_lost`, kafka-python 3.0.12's
silence after a SyncGroup answer) the runner says so once, as a ``diagnosis`` line: the session
shows it among the notes (not judged: the judge sees the silence itself on the wire).
"""

from kafka import ConsumerRebalanceListener, KafkaConsumer, OffsetAndMetadata
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

from properties.clients.runners.common import (CommitClock, MemberWatch, Stop, config, emit, python_client_settings,
                                               rebalance_listener)

ASSIGNORS = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}

#: what :func:`join_completion_lost` means, for a report's reader
JOIN_COMPLETION_LOST = (
    "kafka-python lost its join's completion: its JoinGroup and SyncGroup were answered, but "
    "join_group_async no longer awaits the finished join task (need_rejoin() is False), so the "
    "assignment is never applied and heartbeats stay disabled; Kafka's "
    "AbstractCoordinator.rejoinNeededOrPending counts a pending joinFuture (see docs/live.md)")


def join_completion_lost(coordinator) -> bool:
    """Whether kafka-python's member has lost a join's completion, for good: its join task (the
    JoinGroup, then the SyncGroup) is done, it is still rejoining, and ``need_rejoin()`` is False.

    The cause, in kafka-python 3.0.12 (``kafka/coordinator/base.py``): ``join_group_async`` loops
    ``while self.need_rejoin()`` and, when the poll's timer ends its wait, leaves the join task in
    flight for the next poll to await. But ``ConsumerCoordinator.need_rejoin`` does not count that
    task, and it turns False as soon as the leader's ``_perform_assignment`` sets the assignment
    snapshot, when the rejoin was asked for by a metadata change (the snapshots differed) rather
    than by ``rejoin_needed``. The next poll then returns at once without awaiting the task:
    ``_on_join_complete_async`` never runs (no assignment applied), ``rejoining`` stays True and
    heartbeats stay disabled, so the member says nothing more and the coordinator expires it.
    Kafka's ``AbstractCoordinator.rejoinNeededOrPending`` returns ``rejoinNeeded || joinFuture !=
    null`` ("if there's a pending joinFuture, we should try to complete handling it"), and
    ``ConsumerCoordinator.rejoinNeededOrPending`` sets rejoinNeeded (``requestRejoinIfNecessary``)
    when it finds the snapshots differ. Read after ``poll()`` returned (nothing of the member runs
    then but its IO thread's requests), the three facts are stable: no later poll awaits the task.
    """
    task = getattr(coordinator, "_join_task", None)
    return (task is not None and task.is_done and bool(getattr(coordinator, "rejoining", False))
            and not coordinator.need_rejoin())


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
    diagnosed = False
    while not Stop.requested:
        try:
            consumer.poll(timeout_ms=200)
        except Exception as e:  # what the library raises to the application
            emit("error", error=f"{type(e).__name__}: {e}")
        if not diagnosed and join_completion_lost(coordinator):
            diagnosed = True
            emit("diagnosis", text=JOIN_COMPLETION_LOST, generation=coordinator._generation.generation_id)
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
