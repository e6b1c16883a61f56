"""The catalogue's always properties, read off the implementation's own state.

The differential check compares observations, which catches most bugs as a disagreement with the
model. These checks judge the implementation by itself, so that a bug is also reported under the
property it breaks, and so that the implementation is held to the properties even where the
observation does not reach (stored assignments, outstanding requests, the persisted record).

They work on *snapshots*: after every event, :meth:`ImplChecker.snapshot` reads the
implementation's state (the coordinator's group, the group record in ``__consumer_offsets``, each
consumer's member state, generation, assignment and outstanding JoinGroup/SyncGroup requests), and
:meth:`ImplChecker.check` compares it with the snapshot before the event. The checks derive
nothing from the model, and only claim what one snapshot pair can show:

* ``leader-is-member`` — a group with members has a leader among them, one without has none;
* ``generation-advances-by-one`` — while one coordinator holds the group its generation never
  decreases; a new coordinator starts at least at the generation of the persisted record;
* ``stable-group-covers-partitions`` — a Stable group's stored assignments cover every partition
  exactly once;
* ``disjoint-assignments`` — consumers STABLE in one generation own disjoint partitions;
* ``stable-member-generation-reached`` — a STABLE consumer's generation is at most the generation
  of the group's last persisted record;
* ``assignment-matches-generation`` — when a STABLE consumer's assignment changes, it becomes what
  the coordinator stored for its member id in its generation (the SyncGroup answer makes the
  member STABLE; the assignment follows at the application's next poll, in onJoinComplete);
* ``legal-member-transitions`` — a consumer becomes STABLE only from COMPLETING_REBALANCE;
* ``one-join-or-sync-in-flight`` — at most one JoinGroup or SyncGroup outstanding per consumer;
* ``impl-no-busy-loop`` — after a consumer's poll, the time a poll with a long timeout would block
  for (``ConsumerCoordinator.time_to_next_poll``) is zero only while the member heartbeats.
"""

from __future__ import annotations

from model.config import Config
from model.topics import mask_of, partition_id
from properties.catalogue import Violation, covers, covers_topics

_JOIN_OR_SYNC = frozenset({"JoinGroup", "SyncGroup"})


def _partitions(assignment, config: Config) -> tuple | None:
    """An assignment's partitions as the model numbers them (model/topics.py)."""
    if assignment is None:
        return None
    parts = getattr(assignment, "partitions", assignment)
    if config.second_partitions:
        return tuple(sorted([partition_id(config, tp.topic, tp.partition) for tp in parts]))
    return tuple(sorted([tp.partition for tp in parts]))


def _subscribed(g, config: Config) -> int | None:
    """The topics (a mask) the members of the implementation's group subscribe to in their JoinGroup
    metadata for its protocol; None with a static member among them (catalogue.covers_topics)."""
    mask = 0
    for m in g.members.values():
        if m.group_instance_id is not None:
            return None
        if g.protocol_name in m.protocols():
            mask |= mask_of(config, m.metadata(g.protocol_name).topics)
    return mask


class ImplChecker:
    """Always properties over successive snapshots of one :class:`properties.systems.simworld.SimWorld`."""

    def __init__(self, config: Config):
        from impl.server.group_metadata_manager import GroupMetadataKey

        self.config = config
        self.stored: dict = {}  # (generation, member id) -> partitions the coordinator stored
        self.topic_partitions = config.partitions
        self._record_key = GroupMetadataKey(config.group_id)
        self._clean = None  # the last snapshot check() found no violation in (it is the next one's prev)
        # The group's incarnations, as the catalogue's Checker keeps them: a persisted record that
        # vanishes is a deletion (tombstones; nothing else removes it), after which the generations
        # count from 0 again. The deletions seen, the incarnation each consumer last became STABLE
        # in, and the highest generation any record was written with.
        self.incarnation = 0
        self.stable_in: dict = {}
        self.written = -1

    def snapshot(self, sim, g, observation: tuple | None = None, polled: int | None = None,
                 rows: dict | None = None, previous: tuple | None = None) -> tuple:
        """(partition leader, group, persisted generation, clients, poll); plain values only.
        *g* is the coordinator's group now (``sim._group()``: the caller has looked already);
        *observation* is ``sim.observe()`` if the caller has it already; *polled* the consumer whose
        application just polled, if one did (poll: its member state and what a poll with a long
        timeout would block for, else None). With *rows* ({c: ``sim.observe_client(c)``}) and the
        *previous* snapshot, only those clients are read again; the others are as they were (the
        differential's comparison of what an event touched), and the coordinator's stored
        assignments are read again only when the group's state, generation, leader or members
        changed: Kafka's GroupMetadata sets them on the way to Stable, clears them when a rebalance
        begins, and moves them with a static member's new id. A bug that changes them behind those
        is seen at the next full snapshot (every FULL_EVERY events and at the end of a run)."""
        group = None
        if g is not None:
            group = (id(g), g.state._value_, g.generation_id, g.leader_id, tuple(sorted(g.members)))
            before = None if rows is None or previous is None else previous[1]
            if before is not None and before[:5] == group:
                group = before  # the stored assignments change only with the state, generation or members
            else:
                group += (tuple(sorted([(m.member_id, _partitions(m.assignment, self.config)) for m in g.members.values()])),
                          _subscribed(g, self.config) if self.config.second_partitions else None)
        record = sim.cluster.offsets_log._partitions[sim.group_partition].get(self._record_key)
        persisted = None if record is None else record.generation
        if rows is not None and previous is not None:
            clients = list(previous[3])
            for c, obs in rows.items():
                clients[c] = _client(sim.consumers[c], obs)
        else:
            clients = [_client(consumer, obs) for consumer, obs in zip(sim.consumers, (observation or sim.observe())[3])]
        self.topic_partitions = sim.topic_partitions  # the topic's partition count now
        return (sim.leader, group, persisted, tuple(clients), _poll_timeout(sim, polled))

    def check(self, prev: tuple, now: tuple, event: tuple) -> Violation | None:
        """The first violation *now* shows after *prev*, or None. What *prev* held and was checked
        clean is not checked again: the group's checks when its part is unchanged, the clients'
        when theirs and the persisted generation are (every check of those parts reads only them,
        the previous part, and the topic's partition count, which only grows)."""
        violation = self._check(prev, now, prev is self._clean)
        self._clean = now if violation is None else None
        return violation

    def _check(self, prev: tuple, now: tuple, clean: bool) -> Violation | None:
        leader, group, persisted, clients, poll = now
        if persisted is None and prev[2] is not None:
            self.incarnation += 1
        elif persisted is not None and persisted > self.written:
            self.written = persisted
        if poll is not None:
            c, state, timeout = poll
            if timeout == 0 and state not in ("COMPLETING_REBALANCE", "STABLE"):
                return _v("impl-no-busy-loop", f"consumer {c} is {state} and its poll would block 0 ms: the "
                                               "timeout comes from a heartbeat timer that does not run")
        if group is not None and not (clean and group == prev[1]):
            _gid, state, generation, leader_id, members, stored, subscribed = group
            if members and leader_id not in members:
                return _v("leader-is-member", f"leader {leader_id!r} is not among the members {list(members)}")
            if not members and leader_id is not None:
                return _v("leader-is-member", f"the group has no members but leader {leader_id!r}")
            old = prev[1]
            if old is not None and old[0] == group[0] and generation < old[2]:
                return _v("generation-advances-by-one", f"generation went from {old[2]} to {generation}")
            if (old is None or old[0] != group[0]) and persisted is not None and generation < persisted:
                return _v("generation-advances-by-one",
                          f"a coordinator took over at generation {generation}, below the persisted {persisted}")
            if state == "Stable":  # the leader's assignment is stored on the way to Stable; before, it is the last generation's
                for member_id, partitions in stored:
                    if partitions is not None:
                        self.stored.setdefault((generation, member_id), partitions)
            if state == "Stable":
                owned = sorted(p for _, parts in stored for p in (parts or ()))
                if len(set(owned)) != len(owned) or not (
                        covers_topics(owned, self.config, self.topic_partitions, subscribed) if self.config.second_partitions
                        else covers(owned, self.config.partitions, self.topic_partitions)):
                    return _v("stable-group-covers-partitions", f"the Stable group's stored assignments cover {owned}")
        if clean and clients == prev[3] and persisted == prev[2]:
            return None
        owners: dict = {}
        for c, ((state, generation, member_id, assignment, outstanding), before) in enumerate(zip(clients, prev[3])):
            if outstanding > 1:
                return _v("one-join-or-sync-in-flight", f"consumer {c} has {outstanding} JoinGroup/SyncGroup outstanding")
            if state == "STABLE" and before[0] not in ("STABLE", "COMPLETING_REBALANCE"):
                return _v("legal-member-transitions", f"consumer {c} went from {before[0]} to STABLE")
            if state != "STABLE":
                continue
            if before[0] != "STABLE" or before[1] != generation:
                self.stable_in[c] = self.incarnation
            if generation > self.written:  # a deleted group's members may still be STABLE in its generations
                return _v("stable-member-generation-reached",
                          f"consumer {c} is STABLE in generation {generation}; the persisted record has "
                          f"{persisted if persisted is not None else 'none'}")
            expected = self.stored.get((generation, member_id))
            changed = assignment != before[3]  # onJoinComplete applies it after SyncGroup made the member STABLE
            if changed and expected is not None and tuple(sorted(assignment)) != expected:
                return _v("assignment-matches-generation",
                          f"consumer {c} holds {list(assignment)} in generation {generation}; the coordinator stored {list(expected)}")
            incarnation = self.stable_in.get(c, 0)
            for p in assignment:
                other = owners.setdefault((incarnation, generation, p), c)
                if other != c:
                    twin = self.config.instance_id(c)
                    if twin is not None and self.config.instance_id(other) == twin:
                        continue  # two processes of one instance id (see the catalogue's statement)
                    return _v("disjoint-assignments",
                              f"consumers {other} and {c} both own partition {p} in generation {generation}")
        return None


def _client(consumer, obs: tuple) -> tuple:
    """A consumer's part of a snapshot: its member state, generation, member id and assignment
    (from its observation row *obs*), and how many JoinGroup/SyncGroup requests it has outstanding."""
    state, generation, member_id, assignment, _coordinator, _live = obs
    outstanding = len([r for queue in consumer.client.unsent._unsent.values() for r in queue
                       if r.request.api_key in _JOIN_OR_SYNC])
    outstanding += len([r for queue in consumer.network_client.in_flight_requests._requests.values()
                        for r in queue if r.header.api_key in _JOIN_OR_SYNC])
    return (state, generation, member_id, assignment, outstanding)


def _poll_timeout(sim, c: int | None) -> tuple | None:
    """(c, member state, ConsumerCoordinator.time_to_next_poll) of consumer *c* after its poll,
    if it is live. Looking must not touch: ``time_to_next_poll`` updates the Heartbeat's timers to
    now, and Kafka's timers never move back (``Timer.update``: ``Math.max``), so a look after a poll
    that never reached ``pollHeartbeat`` (a wakeup thrown first) would move them on where Kafka's
    stay, and a later backwards clock jump would then find a heartbeat due that is not (campaign
    seed 90111). The timers' cached times are put back afterwards."""
    if c is None or not sim._client_runnable(c) or sim.closing[c] is not None:
        return None
    coordinator = sim.consumers[c].coordinator
    heartbeat = coordinator.heartbeat
    timers = (heartbeat.heartbeat_timer, heartbeat.session_timer, heartbeat.poll_timer)
    cached = [t._current_time_ms for t in timers]
    try:
        timeout = coordinator.time_to_next_poll(sim.consumers[c].time.milliseconds())
    except Exception:  # a failed heartbeat thread rethrows here; the poll itself reported it
        return None
    finally:
        for t, ms in zip(timers, cached):
            t._current_time_ms = ms
    return (c, coordinator.state._value_, timeout)


def _v(name: str, message: str) -> Violation:
    return Violation(name, "implementation: " + message)
