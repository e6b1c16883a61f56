"""Broker conformance: judge any Kafka-compatible broker's group coordinator against the model.

Virtual members (:mod:`members`) speak the group APIs over TCP with groupcheck's codec, each on
its own connection, following a seeded schedule (:mod:`schedule`). The judge (:mod:`judge`) keeps
every state of the model's coordinator (``model/group.py``, ``model/broker.py``) consistent with
what the broker answered so far, branching on the model's ``choose`` points and aliasing the
broker's member ids to the model's, and reports a divergence when no state allows what the broker
did. :mod:`run` executes a schedule and :mod:`systems` launches the brokers it knows by name.
"""
