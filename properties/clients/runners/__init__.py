"""One runner per client library: a consumer-group member in a process of its own.

``python -m properties.clients.runners.<name> CONFIG`` (CONFIG: a JSON object with ``bootstrap``,
``group``, ``topic``, ``client_id``, ``settings`` (Kafka's consumer setting names: see
:data:`properties.clients.libraries.SETTINGS`), ``commit_interval_ms`` and ``group_instance_id``
(null, or the group.instance.id of a static member)) subscribes to the
topic, polls every 200 ms, commits explicit offsets for the partitions it owns every
``commit_interval_ms`` (a counter: Kafka's brokers accept any offset, and what matters here is the
OffsetCommit's generation and member id), and prints JSON lines on stdout (:mod:`.common`):

``ready`` · ``member`` (``member_id``, ``generation``, ``state``: what the library exposes, null where
it exposes nothing; printed when it changes) · ``assigned`` / ``revoked`` / ``lost`` (``partitions``:
the rebalance callbacks) · ``committed`` (``offsets``) / ``commit-failed`` (``error``) · ``error``
(an exception the library raised to the application) · ``diagnosis`` (``text``: a library defect the
runner recognised in its own state, e.g. kafka-python's lost join completion; shown among a
session's notes, never judged) · ``closed``.

Every line carries ``wall_ms`` (the wall clock, the same clock as ``groupcheck broker --trace``'s
``time_ms``, so the judge can order callbacks against the wire). SIGTERM closes the consumer (a
LeaveGroup, from a dynamic member) and exits.
"""
