"""Client conformance (issue 15): real Kafka consumers judged under faults.

N consumers of one library (:mod:`.libraries`, each a process running :mod:`.runners`) join a group
on ``groupcheck broker``, which injects a seeded fault schedule (:mod:`.schedule`,
:mod:`properties.live.faults`) and traces every request and response; then the faults stop and the
group must settle. :mod:`.session` runs one schedule; :mod:`.judge` reads the broker's trace and
the consumers' callbacks and names every rule of Kafka's client protocol a consumer broke, with
its source in Kafka's code; :mod:`.command` is ``groupcheck conform client``.
"""
