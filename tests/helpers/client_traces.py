"""Hand-written broker traces for the client judge (``properties/clients/judge.py``): requests and
their answers on one connection per client, as ``groupcheck broker --trace`` writes them."""

from properties.clients.judge import judge
from properties.clients.schedule import DEFAULT_SETTINGS, ClientSchedule
from properties.clients.session import Outcome, Settle


ZERO = 1_000_000


class Wire:
    """Builds a trace: requests and their answers on one connection per client."""

    def __init__(self):
        self.lines = []
        self.correlation = 0

    def call(self, t, client, api, body, answer=None, at=None, connection=None, error=None, version=None):
        self.correlation += 1
        connection = connection or f"conn-{client}"
        self.lines.append({"time_ms": ZERO + t, "direction": "request", "connection": connection, "api": api,
                           "correlation_id": self.correlation, "client_id": client, "body": body})
        if version is not None:
            self.lines[-1]["version"] = version
        if answer is not None or error is not None:
            response = dict(answer or {})
            if error is not None:
                if api == "OffsetCommit":
                    response["topics"] = [{"name": "t", "partitions": [{"partition_index": 0, "error_code": error}]}]
                else:
                    response["error_code"] = error
            self.lines.append({"time_ms": ZERO + (at if at is not None else t + 1), "direction": "response",
                               "connection": connection, "api": api, "correlation_id": self.correlation,
                               "client_id": client, "body": response})
        return self

    def close(self, t, client, connection=None):
        self.lines.append({"time_ms": ZERO + t, "direction": "closed", "connection": connection or f"conn-{client}",
                           "by": "client", "client_id": client})
        return self

    def join(self, t, client, member, generation, sent_member="", at=None):
        return self.call(t, client, "JoinGroup", {"member_id": sent_member},
                         {"error_code": 0, "generation_id": generation, "member_id": member}, at=at)

    def sync(self, t, client, member, generation, partitions, at=None, error=0):
        return self.call(t, client, "SyncGroup", {"generation_id": generation, "member_id": member},
                         {"error_code": error, "assignment": {"partitions": [["t", p] for p in partitions]}}, at=at)

    def heartbeat(self, t, client, epoch, owned=None, full=False, answer_epoch=None, assignment=None, error=None,
                  at=None, member="m1", connection=None, instance=None):
        """A ConsumerGroupHeartbeat (KIP-848) of *client*: *owned* partitions of topic T reported (None:
        not sent), *full* with rebalance timeout and subscription; answered with *answer_epoch* (and
        *assignment*, if given), or *error*, or not at all when both are None; *instance*: the
        static member's instance id it carries."""
        body = {"group_id": "g", "member_id": member, "member_epoch": epoch, "rebalance_timeout_ms": -1,
                "instance_id": instance,
                "subscribed_topic_names": None,
                "topic_partitions": None if owned is None else ([{"topic_id": "T", "partitions": list(owned)}]
                                                                if owned else [])}
        if full or epoch == 0:
            body.update(rebalance_timeout_ms=10000, subscribed_topic_names=["orders"])
        answer = None
        if answer_epoch is not None:
            answer = {"error_code": 0, "member_id": member, "member_epoch": answer_epoch, "heartbeat_interval_ms": 500,
                      "assignment": None if assignment is None else {
                          "topic_partitions": [{"topic_id": "T", "partitions": list(assignment)}]}}
        return self.call(t, client, "ConsumerGroupHeartbeat", body, answer, at=at, error=error, connection=connection)

    def outcome(self, events=None, settled=True, stop=None, static=0, protocol="classic"):
        if stop is None:  # half a second after the last line
            stop = max(line["time_ms"] for line in self.lines) - ZERO + 500
        schedule = ClientSchedule(0, 1, 2, tuple(sorted(DEFAULT_SETTINGS.items())), (), static=static,
                                  protocol=protocol)
        settle = Settle(settled, 10, {0: ["c0"], 1: ["c0"]}, "Stable" if settled else "PreparingRebalance", ("c0",),
                        "" if settled else "the coordinator says PreparingRebalance")
        return Outcome(schedule, "test", tuple(self.lines), events or {"c0": ()}, settle, ZERO, ZERO + stop)


def rules(outcome):
    return [f.rule for f in judge(outcome)]


def joined(w=None):
    """c0 joins generation 1 as m1 and gets partitions 0 and 1."""
    return (w or Wire()).join(0, "c0", "m1", 1).sync(10, "c0", "m1", 1, [0, 1])
