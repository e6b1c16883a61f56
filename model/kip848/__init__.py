"""KIP-848, the consumer group protocol (ConsumerGroupHeartbeat, API key 68), as a model.

Kafka 4.x's coordinator computes the assignment itself; members move by epochs and reconcile
incrementally, one heartbeat at a time, and nobody stops the world. This package is the model of
that protocol, beside (not inside) the classic one in :mod:`model`:

``config``       the world's settings (clients, partitions, the timeouts), validated;
``assignment``   the server's ``range`` assignor (``TargetAssignmentBuilder``) and the
                 reconciliation of one member towards its target (``CurrentAssignmentBuilder``);
``coordinator``  ``GroupMetadataManager.consumerGroupHeartbeat``, leaving, fencing and the
                 session and rebalance timers, over an immutable group;
``membership``   the Java consumer's membership manager and heartbeat state
                 (``AbstractMembershipManager``, ``ConsumerMembershipManager``,
                 ``ConsumerHeartbeatRequestManager``): member states, reconciliation with the
                 application's callbacks, acknowledging, fencing and rejoining, leaving;
``world``        clients, the coordinator, the links between them and time: the events and
                 ``step``.

Every rule cites the Kafka 4.1 source it follows (``group-coordinator`` and ``clients`` modules,
read from the 4.1.2 sources jars on Maven Central). Pure functions over immutable values, no
I/O, no wall clock: same schedule, same trace.
"""
