"""What kafka-python's group coordinator logged on one client's IO thread, for live tests that
must tell a client that stalled from a broker that did not answer (tests/live/test_broker.py,
tests/live/test_broker_producers.py)."""


class CoordinatorLog:
    """What kafka-python's group coordinator logged on one client's IO thread (``kafka-io-<name>``):
    enough to tell, when a member never gets its partitions, whether the client was answered."""

    def __init__(self, name):
        import logging

        self.thread_name = f"kafka-io-{name}"
        self.lines = []
        self.handler = logging.Handler(logging.DEBUG)
        self.handler.emit = self._emit
        self.logger = logging.getLogger("kafka.coordinator")
        self.logger.addHandler(self.handler)
        self.level = self.logger.level
        self.logger.setLevel(logging.DEBUG)

    def _emit(self, record):
        if record.threadName == self.thread_name:
            self.lines.append(record.getMessage()[:300])

    def close(self):
        self.logger.removeHandler(self.handler)
        self.logger.setLevel(self.level)

    def stalled_after_sync(self):
        """The client's own log shows a SyncGroup answered without error as its last word, and no
        assignment applied after it: kafka-python (3.0.12) then sends nothing more, neither
        heartbeats nor fetches, until its session expires. The broker had answered."""
        last = max((i for i, line in enumerate(self.lines) if line.startswith("Received SyncGroup response")),
                   default=None)
        if last is None or "error_code=0" not in self.lines[last]:
            return None
        after = self.lines[last + 1:]
        if any("Setting newly assigned partitions" in line or "Enabling heartbeat" in line or "JoinGroup" in line
               for line in after):
            return None
        return self.lines[last]
