"""The model's assignors (model/assignors.py) against Kafka's RangeAssignor and RoundRobinAssignor."""

from __future__ import annotations

from model.assignors import ASSIGNORS, range_assign


def test_no_members_get_an_empty_assignment():
    # Kafka's RangeAssignor.assign loops over consumersPerTopic(subscriptions) and divides by the
    # number of consumers only inside that loop: with no subscriptions it returns an empty map.
    # The model's range assignor divided by zero.
    assert range_assign([], 6) == {}
    assert {name: assign((), 6) for name, assign in ASSIGNORS.items()} == {"range": {}, "roundrobin": {}}
