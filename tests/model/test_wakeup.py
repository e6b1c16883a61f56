"""KafkaConsumer.wakeup() (issue 14, item 2: "wakeups of a blocking poll"): another thread wakes the
consumer; the next ConsumerNetworkClient.poll that allows wakeups throws WakeupException out of the
application's call, once, wherever it is (looking up the coordinator, joining, the fetch poll),
leaving behind what was done before the throw: the memoised lookup and join futures, responses read
but not yet handed to their handlers. commitAsync's own polls do not allow wakeups (but the metadata
wait after a failed lookup does, in Kafka as here), close() disables them. The world's polls do not
block: a wakeup lands now or while the consumer waits in one of its next network polls, so it is
thrown at the start of a poll or in its middle."""

from __future__ import annotations

from model import member, netclient as net
from model.client import PREPARING_REBALANCE, STABLE
from model.config import Config
from model.world import step
from properties.explore.walker import MIXES, walk
from properties.systems.simworld import SimWorld
from tests.helpers.member import joining, stable
from tests.helpers.walks import walks_agree

CONFIG = Config()


def _throws(call, *args):
    try:
        call(*args)
    except net.Wakeup:
        return
    raise AssertionError("no WakeupException")


def test_a_pending_wakeup_is_thrown_by_the_next_poll_that_allows_it_once():
    s = stable()
    s.wakeup_pending = True
    net.poll(s, member.dispatch)  # pollNoWakeup: nothing
    assert s.wakeup_pending
    _throws(net.poll, s, member.dispatch, True)
    assert not s.wakeup_pending and ("wakeup_thrown", s.index) in s.log
    net.poll(s, member.dispatch, True)  # once only
    s.wakeup_pending, s.wakeups_disabled = True, True
    net.poll(s, member.dispatch, True)  # disabled (close)
    assert s.wakeup_pending


def test_a_wakeup_while_joining_leaves_the_join_future_memoised_and_no_second_join_is_sent():
    """Thrown at the start of the next poll (KafkaConsumer.poll's maybeTriggerWakeup): the JoinGroup
    sent before stays outstanding, and the poll after it does not send another."""
    s = joining()
    assert s.state == PREPARING_REBALANCE and s.join_future[0] == "pending"
    sent = len(s.transmitted)
    s.wakeup_pending = True
    _throws(member.consumer_poll, s)
    assert s.join_future[0] == "pending" and len(s.transmitted) == sent  # the same JoinGroup, still outstanding
    member.consumer_poll(s)
    assert len([r for r in s.transmitted if r.body.api == "JoinGroup"]) == 1


def test_a_wakeup_landing_in_a_later_network_poll_is_thrown_in_the_middle_of_the_poll():
    """Landing in the first network poll of the next call: KafkaConsumer.poll's own check at its
    start passes, the wait for the coordinator lookup is where it lands, and that same
    ConsumerNetworkClient.poll throws, with the lookup outstanding and memoised."""
    from tests.helpers.member import fresh

    s = fresh()
    s.wakeup_in_polls = 1
    _throws(member.consumer_poll, s)
    assert s.find_coordinator_request[0] == "pending" and s.wakeup_in_polls == 0 and not s.wakeup_pending
    assert ("polled", s.index) not in s.log  # the throw skipped the rest of that poll


def test_the_world_wakes_live_consumers_only_and_the_application_carries_on():
    world = walk(0, CONFIG, steps=60, faults="none").world
    assert world.clients[0].state == STABLE
    woken, log = step(world, ("wakeup", 0, 0, 0))
    assert woken.clients[0].wakeup_pending and ("wakeup", 0, 0) in log
    assert step(woken, ("wakeup", 0, 0, 0))[0] is woken  # already pending
    assert step(world, ("wakeup", 0, 3, 0))[0] is world  # lands now, or in the first or second poll
    polled, log = step(woken, ("poll", 0, 0))
    assert ("wakeup_thrown", 0) in log and not polled.clients[0].wakeup_pending
    assert polled.clients[0].state == STABLE
    closing, _ = step(world, ("close", 0, 0))
    assert step(closing, ("wakeup", 0, 0, 0))[0] is closing
    stalled, _ = step(world, ("stall", 0, 1000, 0))
    assert step(stalled, ("wakeup", 0, 0, 0))[0] is stalled  # the whole process stands still


def test_the_implementation_world_wakes_the_same_way():
    sim = SimWorld(CONFIG, 0)
    assert sim.step(("poll", 0, 0))
    assert sim.step(("wakeup", 0, 0, 0)) and not sim.step(("wakeup", 0, 0, 0))
    assert sim.step(("poll", 0, 0))  # the WakeupException is the application's, not a failure
    assert sim.failed[0] is None and not sim.consumers[0].client._wakeup
    assert sim.step(("wakeup", 0, 1, 0)) and not sim.step(("wakeup", 0, 0, 0))
    assert sim.wakeup_in_polls[0] == 1 and not sim.consumers[0].client._wakeup
    assert sim.step(("poll", 0, 0))  # lands in the poll's first network wait, thrown there
    assert sim.wakeup_in_polls[0] == 0 and not sim.consumers[0].client._wakeup and sim.failed[0] is None


def test_walks_with_wakeups_agree_with_the_implementation():
    """Only the clients mix wakes consumers; the implementation, driven by the same schedules, throws
    at the same polls and stays in step with the model."""
    wakeups, compared = walks_agree("wakeup", MIXES, seeds=20, steps=80)
    assert {name for name, n in wakeups.items() if n} == {"clients"}, wakeups
    assert compared == 6


def test_a_join_group_answer_read_by_a_poll_the_wakeup_interrupts_gives_its_member_id_at_the_next():
    """The answer is read (``received``, its completion queued) by the poll the wakeup lands in; the
    throw comes before the completions fire, so the member takes its id in the next poll, when the
    handler runs. The catalogue's member-id-kept-until-fenced counts the handler's run as the answer
    (it once counted the read, and called the id taken later unexplained: swarm seed 478)."""
    from properties.catalogue import Checker
    from tests.model.driving import apply, drive

    from model.world import initial_world

    config = Config(clients=1, join_group_version=3, initial_rebalance_delay_ms=0)  # v3: the first answer gives the id
    checker, schedule = Checker(config), []

    def answer_delivered(w):
        return any(n[0] == "received" and getattr(n[3][1], "api", None) == "JoinGroup" for n in w.clients[0].notices)

    world = drive(initial_world(config), 0, answer_delivered, schedule, checker)
    world, _ = apply(world, ("wakeup", 0, 1, 0), schedule, checker)  # lands in the next network poll
    woken, log = step(world, ("poll", 0, 0))
    assert ("wakeup_thrown", 0) in log and woken.clients[0].member_id == "" and woken.clients[0].pending_completions
    assert checker.check(world, woken, ("poll", 0, 0), log) is None
    joined, log = step(woken, ("poll", 0, 0))
    assert joined.clients[0].member_id and any(e[0] == "complete" and e[3] == "JoinGroup" for e in log)
    assert checker.check(woken, joined, ("poll", 0, 0), log) is None
