"""The settle check of a client session (properties/clients/session.py, ``_settle_state``) on fake
consumers: a KIP-848 consumer failed by a fatal answer is out of the group for good and left out;
when every consumer failed, the coordinator must have let them all go (Empty)."""

import pytest

from properties.clients import session
from properties.clients.schedule import ClientSchedule


class FakeRunner:
    def __init__(self, client_id, owned=(), fatal=None, alive=True):
        self.client_id, self._owned, self._fatal, self._alive = client_id, list(owned), fatal, alive

    def alive(self):
        return self._alive

    def owned(self):
        return self._owned

    def failed_fatally(self):
        return self._fatal


def schedule(protocol="consumer"):
    return ClientSchedule(0, 2, 2, (), (), static=2, protocol=protocol)


@pytest.fixture
def coordinator(monkeypatch):
    said = {}
    monkeypatch.setattr(session, "describe_group", lambda *a, **k: (said["state"], said["members"]))
    return said


FATAL = "UnreleasedInstanceIdException: ... cannot join the group because the instance id is owned by ..."


def test_a_failed_consumer_is_left_out_and_the_others_must_still_settle(coordinator):
    coordinator.update(state="Stable", members=("c1",))
    runners = [FakeRunner("c0", fatal=FATAL), FakeRunner("c1", owned=[0, 1])]
    assert session._settle_state(runners, schedule(), "127.0.0.1:1", "g").settled
    runners[1]._owned = [0]  # partition 1 has no owner among the consumers still in the group
    assert "partitions [1] have no owner" in session._settle_state(runners, schedule(), "127.0.0.1:1", "g").detail


def test_when_every_consumer_failed_the_group_must_be_empty(coordinator):
    runners = [FakeRunner("c0", fatal=FATAL), FakeRunner("c1", fatal=FATAL)]
    coordinator.update(state="Empty", members=())
    assert session._settle_state(runners, schedule(), "127.0.0.1:1", "g").settled
    coordinator.update(state="Reconciling", members=("c0",))  # the failed members not let go yet
    detail = session._settle_state(runners, schedule(), "127.0.0.1:1", "g").detail
    assert "every consumer failed; the coordinator says Reconciling, not Empty" in detail


def test_the_classic_protocol_keeps_every_live_consumer_in_the_check(coordinator):
    coordinator.update(state="Stable", members=("c1",))
    runners = [FakeRunner("c0", fatal=FATAL), FakeRunner("c1", owned=[0, 1])]
    settle = session._settle_state(runners, schedule("classic"), "127.0.0.1:1", "g")
    assert not settle.settled and "the live consumers ['c0', 'c1']" in settle.detail
