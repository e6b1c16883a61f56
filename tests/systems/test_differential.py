"""Model versus implementation on the same schedules (issue 3, first cut)."""

from pathlib import Path

import pytest

from model.config import Config
from properties.systems.differential import Aliases, Differential, canonical, compare
from model.world import initial_world, step
from properties.explore.walker import walk


@pytest.mark.parametrize("seed", range(0, 40, 3))
def test_fault_free_schedules_agree_at_every_step(seed):
    config = Config()
    schedule = walk(seed, config, steps=60, faults="none").schedule
    result = compare(config, schedule, seed)
    assert result.divergence is None, result.divergence
    assert result.steps == len(schedule)


def test_a_broken_model_variant_diverges_from_the_implementation():
    # The comparison has teeth: a model that forgets to bump the generation parts from impl.
    broken = Config(broken={"generation_not_bumped"})
    schedule = walk(0, Config(), steps=60, faults="none").schedule
    result = compare(broken, schedule, 0)
    assert result.divergence is not None
    model_group, impl_group = result.divergence.model[2], result.divergence.impl[2]
    assert model_group[1] + 1 == impl_group[1]  # the generations differ by the missed bump


def test_member_ids_are_aliased_per_client_in_order_of_appearance():
    alias = Aliases()
    assert [alias("consumer-1-aa"), alias("consumer-0-bb"), alias("consumer-1-cc"), alias("consumer-1-aa"), alias("")] == [
        "c1.0", "c0.0", "c1.1", "c1.0", ""]
    obs = (5, 0, ("Stable", 2, "consumer-0-x", ("consumer-0-x",), "range"), (("STABLE", 2, "consumer-0-x", (1, 0), 0, True),), ())
    assert canonical(obs, Aliases()) == (5, 0, ("Stable", 2, "c0.0", ("c0.0",), "range"), (("STABLE", 2, "c0.0", (1, 0), 0, True),), ())


def test_bytes_written_before_a_close_reach_the_broker():
    """Regression (seed 8000 of the 10,000-interleaving run): an in-flight timeout closes the
    coordinator connection in the same poll that wrote a pending OffsetCommit; the bytes were on
    the socket, so a broker that processes what was in transit commits it (offset 3). The model
    used to apply the close before the write and commit only offset 2."""
    import json
    from pathlib import Path

    from properties.campaign.counterexample import config_from_dict

    document = json.loads((Path(__file__).parent / "data" / "write_before_close.json").read_text())
    config = config_from_dict(document["config"])
    schedule = [tuple(e) for e in document["schedule"]]
    result = compare(config, schedule, document["seed"])
    assert result.divergence is None
    world = initial_world(config)
    for event in schedule:
        world, _ = step(world, event)
    assert world.committed == ((0, 3), (1, 3))


def test_commit_with_nothing_owned_still_polls_in_both():
    """Regression (found by a campaign's shrinker): commitAsync with nothing owned completes the
    empty commit locally but still ends with pollNoWakeup, which here delivers a JoinGroup
    UNKNOWN_MEMBER_ID that resets the member. The simulation used to skip the call."""
    import json
    from pathlib import Path

    from properties.campaign.counterexample import config_from_dict

    document = json.loads((Path(__file__).parent / "data" / "commit_with_nothing_owned.json").read_text())
    config = config_from_dict(document["config"])
    schedule = [tuple(e) for e in document["schedule"]]
    assert schedule[-1][0] == "commit"
    assert compare(config, schedule, document["seed"]).divergence is None
    world = initial_world(config)
    for event in schedule:
        world, _ = step(world, event)
    assert world.clients[2].state == "UNJOINED" and world.clients[2].member_id == ""


def _replay_file(name):
    """(config, schedule, seed) of a counterexample file kept in tests/systems/data."""
    import json
    from pathlib import Path

    from properties.campaign.counterexample import config_from_dict

    document = json.loads((Path(__file__).parent / "data" / name).read_text())
    return config_from_dict(document["config"]), [tuple(e) for e in document["schedule"]], document["seed"]


def _model_group_after(config, schedule):
    """The group on the model's coordinator after the whole *schedule*."""
    world = initial_world(config)
    for event in schedule:
        world, _ = step(world, event)
    return world.brokers[world.leader].group


def test_follower_rejoining_a_loaded_group_rebalances_in_both():
    """Regression (seed 19511 of a 20,000-interleaving campaign, shrunk to 53 events): after a
    coordinator failover and load, client 2, whose JoinGroup response was lost, rejoins the Stable
    group with its member id and both of its protocols. The loaded member holds only the selected
    protocol's subscription (GroupMetadataManager.readGroupMessageValue), so MemberMetadata.matches
    fails and the coordinator starts a rebalance. The model used to keep the group Stable."""
    config, schedule, seed = _replay_file("loaded_follower_rejoins.json")
    assert schedule[40][0] == "failover" and schedule[41][0] == "load"
    assert compare(config, schedule, seed).divergence is None
    group = _model_group_after(config, schedule)
    assert group.state == "PreparingRebalance" and group.generation == 1


def test_responses_on_two_connections_are_handled_in_slot_order_in_both():
    """Regression (groupcheck run --seed 1 --steps 100000000 failed at step 584,371; this is the
    same cause, built by hand and shrunk to 55 events, one client and one broker): a commitAsync
    is held on a second coordinator lookup while the member has expired. In one poll the client
    sees the OffsetCommit UNKNOWN_MEMBER_ID (coordinator connection, slot 1) arrive before the
    FindCoordinator answer (slot 0). Kafka's Selector handles connections in a fixed key order,
    not arrival order; with slot order the lookup completes first and sends the held commit with
    the old generation, and the member's later JoinGroup waits behind it. The model used arrival
    order (reset first, the held commit failed locally) and got its MEMBER_ID_REQUIRED one
    round trip early."""
    config, schedule, seed = _replay_file("receive_order_across_connections.json")
    assert (config.clients, config.brokers) == (1, 1)
    assert schedule[43][:4] == ("deliver", 0, 1, False) and schedule[44][:4] == ("deliver", 0, 0, False)
    assert compare(config, schedule, seed).divergence is None
    world = initial_world(config)
    sent = []
    for event in schedule[:47]:
        world, log = step(world, event)
        sent += [e[4] for e in log if e[0] == "send" and e[1] == 0]
    assert sent[-2:] == ["OffsetCommit", "JoinGroup"]  # the held commit went out, then the rejoin


def test_a_join_group_v0_uses_the_session_timeout_as_its_rebalance_timeout_in_both():
    """Regression (``groupcheck walk --set groupcheck.join.group.version=0``: 12 of 200 seeds
    diverged, 0 of 600 after the fix; this is seed 18, shrunk to 38 events): JoinGroup v0 has no
    rebalance timeout field, and Kafka's ``JoinGroupRequest.maybeOverrideRebalanceTimeout`` makes
    the session timeout (6 s) stand in for it, so the join completes 6 s after the rebalance
    began, not after max.poll.interval.ms (10 s). impl's broker did so; the model read the
    client's rebalance timeout and kept the group in PreparingRebalance."""
    config, schedule, seed = _replay_file("join_group_v0_rebalance_timeout.json")
    assert config.join_group_version == 0 and config.session_timeout_ms < config.max_poll_interval_ms
    assert compare(config, schedule, seed).divergence is None
    group = _model_group_after(config, schedule)
    assert group.state == "CompletingRebalance" and group.generation == 1
    assert {m.rebalance_timeout_ms for m in group.members} == {config.session_timeout_ms}


def test_a_client_holding_two_member_ids_is_assigned_as_the_implementation_sorted_them():
    """Regression (``groupcheck walk --set groupcheck.join.group.version=0``: seeds 198, 302, 338
    and 443 of 600 diverged, and 198 and 227 of 300 with version 3; this is seed 338, shrunk to 73
    events). Client 1's member id was reset while the coordinator still held it (it awaits its
    session expiry), and its v0 JoinGroup got a second id. Kafka's ids are clientId-UUID
    (GroupMetadata.generateMemberId), so the two sort either way, and RangeAssignor sorts members
    by id: which one is first decides the partitions. The model's ids sorted by creation; now the
    coordinator chooses where a new id sorts among its client's ids, and the model follows the
    implementation's order (compared as the group's member id order)."""
    config, schedule, seed = _replay_file("join_group_v0_member_id_order.json")
    assert config.join_group_version == 0
    assert compare(config, schedule, seed).divergence is None
    world, orders = initial_world(config), []
    for event in schedule:
        world, log = step(world, event)
        orders += [e[2] for e in log if e[0] == "choice" and e[1] == "member_order"]
    assert orders  # the order was open: the client held another id when it got a new one
    ids = [m.member_id for m in world.brokers[world.leader].group.members]
    assert sum(m.startswith(f"{config.client_id(1)}-") for m in ids) >= 2


def test_a_new_member_id_sorts_in_the_slot_chosen_for_it():
    from model.group import member_id_in_slot

    ids = ["consumer-1-00000005"]
    for seq, slot in enumerate((0, 2, 1, 0, 4, 3), start=6):
        new = member_id_in_slot("consumer-1", ids, slot, seq)
        assert new not in ids and new.startswith("consumer-1-")
        assert sorted(ids + [new]).index(new) == slot
        ids.append(new)


def test_a_join_armed_for_now_completes_before_the_next_request_in_both():
    """Regression (the first swarm worlds, ``properties.explore.swarm``: 25 of 200 seeds diverged,
    every one with group.initial.rebalance.delay.ms=0; this is seed 180, shrunk to 21 events).
    Client 0's JoinGroup makes the Empty group arm an InitialDelayedJoin due now; client 1's
    JoinGroup arrives in the same millisecond. Kafka's SystemTimer.add runs an already expired task
    at once (SystemTimer.addTimerTaskEntry), so the join completed (generation 1, client 0 alone)
    before client 1's request was read, and client 1 starts the next rebalance. impl's broker fires
    overdue timers before each request; the model waited for the next tick."""
    config, schedule, seed = _replay_file("initial_rebalance_delay_zero.json")
    assert config.initial_rebalance_delay_ms == 0
    assert compare(config, schedule, seed).divergence is None
    group = _model_group_after(config, schedule)
    assert group.state == "PreparingRebalance" and group.generation == 1


def _walks_with_multi_timer_ticks(config, seeds, steps=80):
    """(seed, schedule) of walks with at least one tick that passes a coordinator timer before its end."""
    from model import group as grp

    found = []
    for seed in seeds:
        schedule = walk(seed, config, steps=steps, faults="none").schedule
        world = initial_world(config)
        for event in schedule:
            event = tuple(event)
            if event[0] == "tick":
                due = grp.next_due(world.group, config)
                if due is not None and world.now < due < world.now + event[1]:
                    found.append((seed, schedule))
                    break
            world, _ = step(world, event)
    return found


def test_a_tick_is_the_same_as_ticks_from_one_due_time_to_the_next():
    """The model's tick stops at every due timer (what a timer sends leaves when it fires), so
    the differential may split a tick at the timers and compare after each part."""
    from model import group as grp

    config = Config(latency_ms=5)
    splits = 0
    for seed in range(40):
        world = initial_world(config)
        for event in walk(seed, config, steps=80, faults="none").schedule:
            event = tuple(event)
            whole, _ = step(world, event)
            if event[0] == "tick":
                end, parts = world.now + event[1], world
                while True:
                    due = grp.next_due(parts.group, config)
                    stop = due if due is not None and parts.now < due < end else end
                    parts, _ = step(parts, ("tick", stop - parts.now, event[-1]))
                    if stop == end:
                        break
                    splits += 1
                assert parts._replace(steps=whole.steps) == whole, (seed, event)
            world = whole
    assert splits > 20  # the walks did pass timers inside ticks


def test_the_differential_compares_when_a_timer_fires_inside_a_tick(monkeypatch):
    """An implementation that is wrong only between two timers of one tick (here: its observation
    lies at the first due time) is caught, at that time, though it is right at the tick's end."""
    from model import group as grp
    from properties.systems.simworld import SimWorld

    config = Config()
    seed, schedule = _walks_with_multi_timer_ticks(config, range(40))[0]
    world = initial_world(config)
    for index, event in enumerate(schedule):
        event = tuple(event)
        if event[0] == "tick":
            due = grp.next_due(world.group, config)
            if due is not None and world.now < due < world.now + event[1]:
                break
        world, _ = step(world, event)
    assert compare(config, schedule, seed).divergence is None

    honest = SimWorld.group_view  # what every look at the implementation's group goes through

    def lying(self, g):
        group, pending = honest(g)
        return (None if self.now == due else group), pending

    monkeypatch.setattr(SimWorld, "group_view", lying)
    divergence = compare(config, schedule, seed).divergence
    assert divergence is not None and divergence.index == index and divergence.at_ms == due
    assert f"at {due} ms within it" in divergence.describe()


def test_a_poll_that_would_spin_on_a_stopped_heartbeat_timer_is_a_busy_loop():
    """impl-no-busy-loop: the check itself, then the KAFKA-10134 mutant through a real walk (an
    unjoined member's poll blocking on its stopped heartbeat timer) caught under that property,
    where the observation the model is compared on shows nothing."""
    from model.config import Config
    from properties.impl_checks import ImplChecker
    from properties.mutation.mutants import applied
    from properties.explore.walker import walk
    from properties.systems.differential import Differential, IMPL_PROPERTIES

    assert "impl-no-busy-loop" in [p.name for p in IMPL_PROPERTIES]
    checker = ImplChecker(Config())
    before = (None, None, None, (), None)
    for state, timeout, broken in (("PREPARING_REBALANCE", 0, True), ("UNJOINED", 0, True),
                                   ("STABLE", 0, False), ("COMPLETING_REBALANCE", 0, False),
                                   ("PREPARING_REBALANCE", 2**63 - 1, False), ("UNJOINED", 5, False)):
        violation = checker.check(before, (None, None, None, (), (0, state, timeout)), ("poll", 0, 0))
        assert (violation is not None and violation.property == "impl-no-busy-loop") == broken, (state, timeout)
    config = Config(clients=2, brokers=1)
    clean = walk(0, config, steps=60, companion=Differential(config, 0), hash_trace=False)
    assert clean.verdict == "ok"
    with applied("poll_timeout_from_disabled_heartbeat"):
        broken = walk(0, config, steps=60, companion=Differential(config, 0), hash_trace=False)
    assert broken.verdict == "counterexample" and broken.violation.property == "impl-no-busy-loop", broken.violation


def test_a_request_only_one_side_has_in_flight_is_a_divergence_where_it_appears():
    """The observations include what is on every link: a FindCoordinator the implementation's client
    sent twice (its link carries one more than the model's) diverges at once, naming the client,
    the connection and the direction, though no state differs yet."""
    from properties.systems.differential import FULL_EVERY

    world, diff = _tampered(full_every=FULL_EVERY)
    diff.sim.touched.add(0)  # as the client's own send does
    event = ("tick", 1, 0)  # changes nothing on the links: only the extra request differs
    new, log = step(world, event)
    new, _, problem = diff.after(world, event, new, log)
    assert problem is not None and "client 0 slot 0 to broker: model ('FindCoordinator',), impl " \
        "('FindCoordinator', 'FindCoordinator')" in problem.message, problem


def test_a_touched_client_whose_state_changed_on_one_side_only_diverges_at_once():
    """A client both sides agreed on before is compared again when an event touches it, also when
    the model's client is a new object with the same values (the look skips re-aliasing only
    values both sides had when they last agreed): the implementation's member state changed
    behind the model's back is a divergence at that event, not FULL_EVERY events later."""
    from impl.coordinator.abstract_coordinator import MemberState
    from properties.systems.differential import FULL_EVERY

    world, diff = _tampered(full_every=FULL_EVERY)
    diff.sim.selectors[0].links[0].to_broker.pop()  # as it was: the links agree
    event = ("poll", 0, 0)
    new, log = step(world, event)
    new, _, problem = diff.after(world, event, new, log)
    assert problem is None, problem
    world = new
    assert diff.sim.consumers[0].coordinator.state is MemberState.UNJOINED
    diff.sim.consumers[0].coordinator.state = MemberState.PREPARING_REBALANCE
    diff.sim.touched.add(0)
    tick = ("tick", 1, 0)
    new, log = step(world, tick)
    assert new.clients[0] is world.clients[0] or new.clients[0] == world.clients[0]
    new, _, problem = diff.after(world, tick, new, log)
    assert problem is not None and "PREPARING_REBALANCE" in problem.message, problem


def test_a_touched_client_whose_model_state_changed_alone_diverges_at_once():
    """The other side of the same look: the model's client changed behind the implementation's
    back (its values, not only its object) is a divergence at the next event that touches it."""
    from properties.systems.differential import FULL_EVERY

    world, diff = _tampered(full_every=FULL_EVERY)
    diff.sim.selectors[0].links[0].to_broker.pop()  # as it was: the links agree
    tampered = world.clients[0]._replace(generation=7)
    world = world._replace(clients=(tampered,) + world.clients[1:])
    event = ("poll", 0, 0)
    new, log = step(world, event)
    assert new.clients[0] is not tampered and new.clients[0].generation == 7
    new, _, problem = diff.after(world, event, new, log)
    assert problem is not None and diff.divergence.index == 3, problem


def _tampered(full_every: int):
    """A differential three events in, whose implementation then gets an extra request on client
    0's link behind its hooks' back (no hook names client 0): (model world, differential)."""
    from properties.systems.differential import Differential as _Differential

    config = Config()
    world = initial_world(config)
    diff = _Differential(config, 0, full_every=full_every)
    for event in (("poll", 0, 0), ("connect", 0, 0, 0), ("poll", 0, 0)):
        new, log = step(world, event)
        new, _, problem = diff.after(world, event, new, log)
        assert problem is None, problem
        world = new
    link = diff.sim.selectors[0].links[0]
    assert [type(m[2]).__name__ for m in link.to_broker] == ["FindCoordinatorRequestData"]
    link.to_broker.append(link.to_broker[0])  # the implementation's side sends it once more
    return world, diff


def test_a_change_no_hook_names_is_caught_by_the_full_comparison():
    """The comparison of what an event touched trusts the implementation's hooks; what they miss
    (here an extra request put on a link behind them) is caught by the full comparison: after
    every event with full_every=1, within FULL_EVERY events by default, and at finish()."""
    from properties.systems.differential import FULL_EVERY

    tick = ("tick", 1, 0)
    world, diff = _tampered(full_every=1)
    new, log = step(world, tick)
    assert diff.after(world, tick, new, log)[2] is not None

    world, diff = _tampered(full_every=FULL_EVERY)
    seen = None
    for n in range(1, FULL_EVERY + 1):
        new, log = step(world, tick)
        new, _, problem = diff.after(world, tick, new, log)
        world = new
        if problem is not None:
            seen = n
            break
    assert seen is not None and seen > 1, seen  # not at once (no hook named it), but within FULL_EVERY
    assert "client 0 slot 0 to broker" in problem.message

    world, diff = _tampered(full_every=FULL_EVERY)
    new, log = step(world, tick)
    world, _, problem = diff.after(world, tick, new, log)
    assert problem is None  # not seen by the look at what the tick touched
    problem = diff.finish(world)
    assert problem is not None and "client 0 slot 0 to broker" in problem.message
    assert diff.divergence.index == 3 and diff.divergence.event == tick


def test_a_former_leader_answered_as_a_follower_sends_its_sync_group_at_once_in_both():
    """Regression (seed 75303 of the 100,000-interleaving default campaign: a swarm world with
    JoinGroup v0 and a 2.4 s assignor, the coordinator mix; shrunk to 143 events). Client 1 is
    elected leader, runs its assignor, and its SyncGroup is answered NOT_COORDINATOR: the group
    moved. That failure resets nothing, and onJoinPrepare, which clears ConsumerCoordinator's
    isLeader, runs only when needsJoinPrepare is set (AbstractCoordinator.joinGroupIfNeeded: after a
    completed join or resetStateAndRejoin). So the flag is still set when the new coordinator answers
    its JoinGroup naming another leader. The assignor runs in onJoinLeader only
    (AbstractCoordinator.JoinGroupResponseHandler.handle: ``if (joinResponse.isLeader())
    onJoinLeader(...) else onJoinFollower()``): the follower sends its SyncGroup at once, as the
    implementation did. The model stalled for the assignor on the stale flag."""
    config, schedule, seed = _replay_file("former_leader_joins_as_follower.json")
    assert config.assignor_delay_ms > 0
    world, logs, diff = initial_world(config), [], Differential(config, seed)
    for event in schedule:  # the model following the implementation's choices (who leads)
        new, log = step(world, event)
        world, log, problem = diff.after(world, event, new, log)
        assert problem is None, problem
        logs += [e for e in log if e[1:2] == (1,)]
    joined = [i for i, e in enumerate(logs) if e[0] == "joined"]
    assert logs[joined[-2]][4] is True and logs[joined[-1]][4] is False  # leader, then a follower
    assert world.clients[1].is_leader  # Kafka's flag, not cleared between the two
    after = [e[0] for e in logs[joined[-1]:]]
    assert "assigning" not in after and ("send", "SyncGroup") in [(e[0], e[4]) for e in logs[joined[-1]:] if e[0] == "send"]


def test_looking_at_a_consumer_after_a_woken_poll_moves_none_of_its_timers():
    """Regression (seed 90111 of the default campaign, 21 events after shrinking): the leader's poll
    right after its assignor returned sends the SyncGroup and then throws the pending wakeup, before
    ConsumerCoordinator.poll reaches pollHeartbeat. The differential's busy-loop check then asked
    the implementation for ``time_to_next_poll``, which updates the Heartbeat's timers to now; Kafka's
    timers never move back (``Timer.update``: ``Math.max``), so after the client's clock jumped 9 s
    back the heartbeat thread found a heartbeat due that Kafka's would not, and sent it. The look
    now puts the timers' cached times back."""
    config, schedule, seed = _replay_file("look_after_wakeup_moves_no_timer.json")
    woken = next(i for i, e in enumerate(schedule) if e[0] == "wakeup")
    assert schedule[woken + 1][0] == "poll" and schedule[woken + 2][:3] == ("clock_jump", 0, -9000)
    diff, world = Differential(config, seed), initial_world(config)
    for event in schedule[:woken + 2]:
        new, log = step(world, event)
        world, _, problem = diff.after(world, event, new, log)
        assert problem is None, problem
    heartbeat = diff.sim.consumers[0].coordinator.heartbeat
    assert heartbeat.heartbeat_timer.current_time_ms() < diff.sim.now  # not moved by the look
    assert compare(config, schedule, seed).divergence is None


@pytest.mark.parametrize("name, noted", [("static_heartbeat_fenced_thrown_at_next_poll.json", "heartbeat_failed"),
                                         ("static_commit_fenced_thrown_at_next_poll.json", "commit_fenced")])
def test_a_fenced_static_member_learns_it_at_its_next_poll_in_both(name, noted):
    """Regressions (the first walks with twin static processes, 2026-11-26: 2,385 and 2,202 events
    shrunk to 45 and 56). A twin's Heartbeat, and another's OffsetCommit, are answered
    FENCED_INSTANCE_ID, handled on the heartbeat thread. Kafka throws neither there: the heartbeat
    listener sets ``heartbeatThread.failed`` and the application's next ``pollHeartbeat`` throws it
    (AbstractCoordinator.HeartbeatThread.run); a fenced async commit sets ``asyncCommitFenced`` and
    the next ``invokeCompletedOffsetCommitCallbacks`` (poll, commitAsync) throws it
    (ConsumerCoordinator). The model finished the consumer at once; the implementation, as Kafka,
    at its next poll. Both must now agree, and the consumer must be live between the two."""
    config, schedule, seed = _replay_file(name)
    assert config.static_twins == 1
    world, diff, fenced_at, thrown_at = initial_world(config), Differential(config, seed), None, None
    fenced_client = next(c for c in range(config.clients)  # the schedule ends where it was fenced
                         if schedule[-1][:2] == ("heartbeat", c))
    schedule = schedule + [("poll", fenced_client, 0)]  # ... and then its application polls
    for i, event in enumerate(schedule):
        new, log = step(world, event)
        world, log, problem = diff.after(world, event, new, log)
        assert problem is None, problem
        for entry in log:
            if entry[0] == noted and fenced_at is None:
                fenced_at, c = i, entry[1]
                assert world.clients[c].live  # fenced, not yet told
            if entry[0] == "fatal" and fenced_at is not None and entry[1] == c and thrown_at is None:
                thrown_at = i
                assert event[:2] == ("poll", c) or event[:2] == ("commit", c)
    assert fenced_at is not None and thrown_at is not None and thrown_at > fenced_at
    assert c == fenced_client and not world.clients[c].live and world.clients[c].fatal == "FENCED_INSTANCE_ID"


def test_a_shutdown_whose_commit_runs_the_slow_assignor_closes_after_it_in_both():
    """Regression (the 100,000-interleaving campaign of 2026-11-27, seed 85010: 189 events shrunk to
    15). A static leader with a slow assignor shuts down (its loop's last commitAsync, then close())
    while its JoinGroup answer waits in the socket: the commit's pollNoWakeup handles it and runs
    the assignor. In Kafka that happens inside the call (JoinGroupResponseHandler.handle ->
    onJoinLeader -> sendSyncGroupRequest), so close() follows once the SyncGroup is queued. The
    model closed at once and never sent the SyncGroup; the implementation's world refused the close
    while the assignor ran and left the consumer open. Both now finish the assignment, then close."""
    config, schedule, seed = _replay_file("static_shutdown_inside_slow_assignor.json")
    assert config.assignor_delay_ms > 0 and config.static_clients == config.clients
    assert compare(config, schedule, seed).divergence is None
    world, logs = initial_world(config), []
    for event in schedule:
        world, log = step(world, event)
        logs.append(log)
    client = schedule[-1][1]
    closing = world.clients[client]
    assert schedule[-1][0] == "shutdown" and (closing.closed or closing.closing_deadline_ms is not None)
    assert any(e[0] == "assigned" and e[1] == client for e in logs[-1]), logs[-1]


def test_a_leader_role_difference_alone_is_named_in_the_divergence():
    """The roles are the observation's last field: a divergence in them alone must say so, not
    print an empty list of differences."""
    from properties.systems.differential import differences

    base = (0, 0, None, (), (), ((),))
    model, impl = base + ((True, False),), base + ((False, False),)
    assert differences(model, impl) == ["client 0 believes it leads the group (isLeader): model True, impl False"]
    assert differences(model, model) == []


@pytest.mark.parametrize("name", sorted(p.name for p in (Path(__file__).parent / "data").glob("*.json")))
def test_a_stored_counterexample_gets_the_same_verdict_from_either_comparison(name, monkeypatch):
    """Issue 37: every schedule kept here replays to the same verdict, the same trace hash and the
    same implementation state whether the differential compares everything after every event
    (full_every=1) or what each event touched."""
    from properties.systems import differential, replay

    config, schedule, seed = _replay_file(name)
    results = []
    for full_every in (1, differential.FULL_EVERY):
        monkeypatch.setattr(differential, "FULL_EVERY", full_every)
        result = replay("impl", config, schedule, seed=seed)
        results.append((result.verdict, result.violation, result.trace_hash, result.companion.view()))
    assert results[0] == results[1]
    assert results[0][3] is not None  # the last look at the end was a full one


def test_a_report_shows_both_states_after_the_last_event_not_the_last_full_comparison():
    """A run can end on another property's violation some events after the last full comparison
    (an eventually property after the settle phase, which finish() does not follow): the states a
    report shows are read again at its end, as comparing everything after every event has them."""
    from types import SimpleNamespace

    from properties.systems import states

    config, seed = Config(), 3
    schedule = walk(seed, config, steps=40, companion=Differential(config, seed), hash_trace=False).schedule[:21]
    sides = []
    for full_every in (1, 16):
        world, diff = initial_world(config), Differential(config, seed, full_every=full_every)
        for event in schedule:
            new, log = step(world, event)
            world, _, problem = diff.after(world, event, new, log)
            assert problem is None
        sides.append((world, diff))
    (_, full), (world, incremental) = sides
    assert incremental._since_full > 0 and incremental.last_impl_obs != full.last_impl_obs  # stale by design
    assert incremental.views(world) == (full.last_model_obs, full.last_impl_obs)
    shown = states(SimpleNamespace(world=world, companion=incremental))
    assert shown == states(SimpleNamespace(world=sides[0][0], companion=full))


def test_a_restarted_static_leader_never_learns_it_leads_and_added_partitions_stay_unassigned():
    """Kafka's behaviour, kept as found (campaign seed 3577, 2026-11-29: the first 600 events, then
    the settle phase): a static leader's process restarts and rejoins the Stable group; JoinGroup v5
    answers it with the old leader's id (GroupCoordinator.updateStaticMemberAndRebalance), while the
    group makes its new id the leader (GroupMetadata.replaceStaticMember). No consumer believes it
    leads, so the two partitions added later are never assigned: KAFKA-13435, fixed by KIP-814
    (JoinGroup v9), which the model does not speak. Model and implementation agree; the swarm keeps
    static members out of the topics mix (properties/explore/swarm.py)."""
    from properties.catalogue import Checker
    from properties.explore.walker import settle

    config, schedule, seed = _replay_file("static_leader_unaware_partitions_added.json")
    assert config.join_group_version == 5 and config.static_clients == 2
    assert compare(config, schedule, seed).divergence is None
    world = initial_world(config)
    for event in schedule:
        world, _ = step(world, event)
    assert world.partitions == 8
    world, violation = settle(world, Checker(config), None, [])
    assert violation is not None and violation.property == "eventually-stable", violation
    group = world.brokers[world.leader].group
    leader = next(c for c in world.clients if c.member_id == group.leader_id)
    assert leader.live and leader.state == "STABLE" and not leader.is_leader
    assert not any(c.is_leader for c in world.clients if c.live)
    owned = sorted(p for c in world.clients if c.live for p in c.assignment)
    assert owned == list(range(6))  # partitions 6 and 7 never assigned


def _settled_with_a_stable_group():
    """A differential whose group has settled (Stable, every partition stored once): (model world,
    differential, the implementation's coordinator group)."""
    from properties.catalogue import Checker
    from properties.explore.walker import settle

    config = Config(clients=2, brokers=1, partitions=4)
    world, diff = initial_world(config), Differential(config, 0)
    world, violation = settle(world, Checker(config), None, [], companion=diff)
    assert violation is None, violation
    group = diff.sim._group()
    assert group.state.value == "Stable" and all(m.assignment is not None for m in group.members.values())
    return world, diff, group


def test_a_stored_assignment_changed_behind_the_group_state_is_caught_by_the_full_snapshot():
    """Issue 37: the implementation's checks read the coordinator's stored assignments again only
    when the group's state, generation, leader or members changed (Kafka changes them only with
    those). A bug that rewrites one in place (here: one member stored both members' partitions) is
    caught under stable-group-covers-partitions: after the next event with full_every=1, within
    FULL_EVERY events by default, and at finish()."""
    from properties.systems.differential import FULL_EVERY

    tick = ("tick", 1, 0)

    def tamper(group):
        first, second = sorted(group.members)
        group.members[second].assignment = group.members[first].assignment

    def run(full_every: int, events: int):
        world, diff, group = _settled_with_a_stable_group()
        diff.full_every = full_every
        tamper(group)
        for n in range(1, events + 1):
            new, log = step(world, tick)
            world, _, problem = diff.after(world, tick, new, log)
            if problem is not None:
                return n, problem, world, diff
        return None, None, world, diff

    n, problem, _, _ = run(1, 1)
    assert n == 1 and problem.property == "stable-group-covers-partitions", problem
    n, problem, _, _ = run(FULL_EVERY, FULL_EVERY)
    assert n is not None and problem.property == "stable-group-covers-partitions", problem
    assert n > 1 or FULL_EVERY == 1  # not at once: the tick changed nothing the checks look for
    n, problem, world, diff = run(FULL_EVERY, 1)
    assert problem is None and diff._since_full > 0
    problem = diff.finish(world)
    assert problem is not None and problem.property == "stable-group-covers-partitions", problem


def test_the_implementation_checks_recheck_what_was_never_checked_clean():
    """The checks skip a part only when the previous snapshot held it and was checked clean: the
    same broken snapshot twice is reported twice, and a clean look in between does not hide it."""
    from properties.impl_checks import ImplChecker

    checker = ImplChecker(Config())
    clean = (0, (1, "Stable", 1, "a", ("a",), (("a", (0, 1, 2, 3, 4, 5)),), None), 1, (), None)
    broken = (0, (1, "Stable", 1, "b", ("a",), (("a", (0, 1, 2, 3, 4, 5)),), None), 1, (), None)
    assert checker.check(clean, clean, ("tick", 1, 0)) is None  # never checked clean before: checked now
    assert checker.check(clean, clean, ("tick", 1, 0)) is None  # checked clean: skipped, still clean
    assert checker.check(clean, broken, ("tick", 1, 0)).property == "leader-is-member"
    assert checker.check(broken, broken, ("tick", 1, 0)).property == "leader-is-member"  # not skipped
    assert checker.check(broken, broken, ("tick", 1, 0)).property == "leader-is-member"


def test_a_restarted_process_builds_its_heartbeat_timers_at_the_restart():
    """Regression (seed 47307 of the 100,000-interleaving campaign of 2026-11-29, shrunk to 35
    events): client 0 restarts at 32,705 ms and its clock then jumps back 9 s. Kafka's new Heartbeat
    builds its timers at the restart (Heartbeat(GroupRebalanceConfig, Time): time.timer(...), whose
    constructor calls update()) and Timer.update never moves back, so the first heartbeat waits for
    the clock to pass the restart. The model began the new process's heartbeat clock at 0 and sent
    a Heartbeat the implementation did not; model/world.py _ev_restart now starts it at the restart."""
    config, schedule, seed = _replay_file("restarted_heartbeat_timers_start_at_the_restart.json")
    assert compare(config, schedule, seed).divergence is None
    world = initial_world(config)
    for event in schedule[:3]:  # the tick to 32,705 ms, the crash, the restart
        world, _ = step(world, event)
    assert world.now == 32705 and world.clients[0].heartbeat_clock_ms == 32705
    world, _ = step(world, schedule[3])  # the clock jumps back 9 s: the timers' time does not
    assert world.clients[0].clock_offset_ms == -9000 and world.clients[0].heartbeat_clock_ms == 32705


def test_a_commit_that_throws_an_earlier_fencing_counts_in_both_worlds():
    """Found while adding commitSync (2026-11-29): a commitAsync that throws an earlier async
    commit's FENCED_INSTANCE_ID (invokeCompletedOffsetCommitCallbacks) was counted by the
    implementation's world and not by the model, and the offset a world commits is the number of
    commit calls so far: after the fenced static member's process restarted, its next commit carried
    offset 3 in one world and 2 in the other. Both count the call now."""
    from properties.catalogue import Checker
    from properties.explore.walker import settle

    config, schedule, seed = _replay_file("static_commit_fenced_thrown_at_next_poll.json")
    c = next(c for c in range(config.clients) if schedule[-1][:2] == ("heartbeat", c))
    world, diff = initial_world(config), Differential(config, seed)
    for event in schedule + [("commit", c, 0), ("restart", c, 1, 0)]:
        new, log = step(world, event)
        world, log, problem = diff.after(world, event, new, log)
        assert problem is None, problem
    assert world.clients[c].commits == diff.sim.commits[c] == 2
    world, problem = settle(world, Checker(config), None, [], until_stable=True, companion=diff)
    assert problem is None, problem
    new, log = step(world, ("commit", c, 0))
    world, log, problem = diff.after(world, ("commit", c, 0), new, log)
    world, problem = settle(world, Checker(config), None, [], until_stable=True, companion=diff)
    assert problem is None, problem
    assert world.committed == diff.sim.committed() and world.committed[0][1] == 3


def test_nodes_timed_out_in_one_poll_are_disconnected_in_kafkas_map_order_in_both():
    """Regression (campaign seed 2,016,606 of 50,000 from seed 2,000,000, shrunk to 55 events): in
    its last poll client 0's FindCoordinator to node 1 (slot 1) and its Heartbeat to the coordinator
    (node 2147483647, slot 2) have both timed out. Kafka disconnects them in the order its in-flight
    map (a HashMap keyed by node id strings) holds them, "1" before "2147483647"; each disconnect
    decides whether the broker still handles what was in transit (an OffsetCommit to the
    coordinator here). impl/ disconnected in the order the nodes first got a request, so the
    model's choices went to the other connection and the committed offsets diverged."""
    from properties.mutation.mutants import applied

    config, schedule, seed = _replay_file("timed_out_nodes_disconnected_in_map_order.json")
    world = initial_world(config)
    for event in schedule[:-1]:
        world, _ = step(world, event)
    _, log = step(world, schedule[-1])
    assert [(e.request_id, e.slot) for e in log if e[0] == "inflight_timeout"] == [(5, 1), (9, 2)]
    assert compare(config, schedule, seed).divergence is None
    # the bug put back (the mutant inflight_timeout_first_request_order, which the default search
    # does not reach): the same schedule diverges on the committed offsets
    with applied("inflight_timeout_first_request_order"):
        divergence = compare(config, schedule, seed).divergence
    assert divergence is not None and "committed" in divergence.describe()
