"""Broker conformance schedules the tests share (properties/conform/schedule.py's JSON shape)."""

# A group formed, offsets committed, the broker killed and started again on its folder (a
# ``restart`` fault): what Kafka persisted — the group's record and the offsets — is what the
# members meet afterwards (GroupMetadataManager.replay on loading __consumer_offsets).
RESTART = {"seed": 0, "members": 3, "partitions": 6, "protocols": [["range"], ["range"], ["range", "roundrobin"]],
           "steps": [[0, "join", "same"], [1, "join", "same"], [2, "join", "same"], [0, "join", "round"],
                     [0, "join", "round"], [2, "sync", "round"], [0, "commit", "current"], [1, "commit", "simple"],
                     [1, "restart", None], [2, "fetch", None], [1, "heartbeat", "current"], [0, "commit", "current"],
                     [2, "join", "changed"], [0, "join", "round"], [0, "sync", "round"], [1, "fetch", None]]}
