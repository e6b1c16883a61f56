"""The reference model of Kafka's classic consumer-group protocol: what the protocol must do.

Pure, deterministic functions over immutable attrs values, no I/O and no clock: ``world.step(world,
event) -> (world', log)`` over clients (``client``, ``member``, ``netclient``), brokers (``broker``)
and the group coordinator (``group``). It imports nothing from ``impl`` or ``properties``; both of
those may import it. (A regular package, not a namespace one: Spark ships the project to
executors as a zip, and Python's zip importer cannot import namespace packages.)
"""
