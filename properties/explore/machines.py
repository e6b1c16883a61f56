"""Hypothesis state machines over the model world.

:class:`ModelMachine` drives a world of several clients and brokers through the very events a
schedule contains. Each ``step`` rule draws one of the events enabled in the current world (so no
draw is wasted on a delivery over an empty link), and a ``quiet`` rule runs a burst of quiet time
(:func:`properties.explore.walker.settle`) so that short sequences reach a Stable group and disrupt it.
After every event the catalogue's ``always`` properties are checked; at teardown the disruptions
stop and the ``eventually`` properties are checked after the world settles.

With a *companion* (a system run beside the model on every event, e.g. the implementation through
:func:`properties.systems.machine_for`) the observations must agree and the always properties are
checked on the system's state too.

Use :func:`machine_for` to get a machine class for a given configuration (a broken variant, a
different size, a companion). The shrunk length of the last failing run is kept in ``last_failure`` so the
quality tests can bound it.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from model.config import Config, settling_settings
from model.events import Tick, as_event, enabled_events, tick_lengths, with_pick
from model.world import initial_world, step
from properties.catalogue import Checker
from properties.explore.walker import settle

#: The kinds the ``step`` rule draws from: the protocol's own events (deliveries, connects, polls,
#: heartbeats, commitAsync and commitSync of owned partitions, the coordinator's load, a broken connection's late
#: request), an application's pause, a subscription change (in worlds with a second topic), and (in
#: worlds with static members, where a restart is KIP-345's business) a dead process's restart.
STEP_KINDS = frozenset({"restart", "deliver", "connect", "poll", "pause", "heartbeat", "commit", "commit_sync", "subscribe",
                        "load", "late"})
#: The kinds the ``fault`` rule draws from (while the fault budget lasts; restarts as above), and in
#: every world a dead process's redeploy with other settings and an Empty group's deletion.
FAULT_KINDS = frozenset({"restart", "redeploy", "drop", "disconnect", "partition", "heal", "close", "crash",
                         "clock_jump", "failover", "broker_crash", "broker_restart", "append_error", "delete_group"})
#: What the ``fault`` rule does not count against the budget: recoveries.
RECOVERIES = frozenset({"heal", "broker_restart"})
_DYNAMIC = {STEP_KINDS: STEP_KINDS - {"restart"}, FAULT_KINDS: FAULT_KINDS - {"restart"}}


def _kinds(world, kinds: frozenset) -> frozenset:
    return kinds if world.config.static_clients else _DYNAMIC[kinds]


def enabled(world) -> list:
    """The protocol's own events enabled in *world* (no faults, no time), in a fixed order, with
    pick 0 (:func:`model.events.enabled_events` over :data:`STEP_KINDS`)."""
    return enabled_events(world, _kinds(world, STEP_KINDS))


def fault_events(world) -> list:
    """Every disruption possible in *world*, in a fixed order, with pick 0
    (:func:`model.events.enabled_events` over :data:`FAULT_KINDS`); a redeploy only with the
    world's settings or one its group still settles with, as the walker's
    (:func:`model.config.settling_settings`: the eventually properties are checked after)."""
    settling = settling_settings(world.config)
    return [e for e in enabled_events(world, _kinds(world, FAULT_KINDS)) if e[0] != "redeploy" or e[2] in settling]


class ModelMachine(RuleBasedStateMachine):
    """Several clients, several brokers and the network, checked after every event."""

    config = Config()
    faults = True
    max_faults = 6
    check_eventually = True
    last_failure: dict = {}

    prefix: tuple = ()  # events applied before Hypothesis takes over (a scenario's starting point)
    companion_factory = None  # (config, seed) -> companion: a system beside the model on every event

    def __init__(self):
        super().__init__()
        self.world = initial_world(self.config)
        self.checker = Checker(self.config)
        self.companion = None if self.companion_factory is None else self.companion_factory(self.config, 0)
        self.schedule: list = []
        self.rules = 0  # rule invocations (what Hypothesis shrinks)
        self.faults_left = self.max_faults
        for event in self.prefix:
            if event == ("quiet",):
                self.world, violation = settle(
                    self.world, self.checker, None, self.schedule, max_rounds=40, until_stable=True, max_events=150,
                    companion=self.companion,
                )
                if violation is not None:
                    self._fail(violation)
            else:
                self._apply(as_event(event))

    target: str | None = None  # when set, only a violation of this property fails the run

    def _apply(self, event: tuple) -> None:
        new, log = step(self.world, event)
        if self.companion is not None:
            new, log, problem = self.companion.after(self.world, event, new, log)
            if problem is not None:
                self.schedule.append(event)
                if new is not self.world:
                    problem = self.checker.check(self.world, new, event, log) or problem
                self.world = new
                self._fail(problem)
        if new is self.world:
            return
        self.schedule.append(event)
        violation = self.checker.check(self.world, new, event, log)
        self.world = new
        if violation is not None and (self.target is None or violation.property == self.target):
            self._fail(violation)

    def _fail(self, violation) -> None:
        type(self).last_failure = {
            "property": violation.property,
            "message": violation.message,
            "events": len(self.schedule),
            "rules": self.rules,
            "schedule": list(self.schedule),
        }
        raise AssertionError(f"{violation.property}: {violation.message}")

    @rule(data=st.data())
    def step(self, data):
        """One of the protocol's own events: a delivery, a connect, a poll, a heartbeat, a commit."""
        self.rules += 1
        events = enabled(self.world)
        if events:
            event = data.draw(st.sampled_from(events), label="event")
            self._apply(with_pick(event, data.draw(st.integers(0, 7), label="pick")))

    @rule(data=st.data())
    def tick(self, data):
        """Time passes: a small step, or exactly one of the configured timeouts."""
        self.rules += 1
        ms = data.draw(st.sampled_from(tick_lengths(self.world.config)), label="ms")  # the tick offer's domain
        self._apply(Tick(ms, data.draw(st.integers(0, 7), label="pick")))

    @rule(data=st.data())
    def fault(self, data):
        """A disruption, while the budget lasts."""
        self.rules += 1
        if not self.faults or self.faults_left <= 0:
            return
        event = data.draw(st.sampled_from(fault_events(self.world)), label="fault")
        if event.kind not in RECOVERIES:
            self.faults_left -= 1
        self._apply(with_pick(event, data.draw(st.integers(0, 7), label="pick")))

    @rule(rounds=st.sampled_from((4, 40)))
    def quiet(self, rounds):
        """A burst of quiet time: deliveries, polls and heartbeats until the group is Stable (at
        most 150 events, so a burst that cannot converge stays cheap)."""
        self.rules += 1
        self.world, violation = settle(
            self.world, self.checker, None, self.schedule, max_rounds=rounds, until_stable=True, max_events=150,
            companion=self.companion,
        )
        if violation is not None and (self.target is None or violation.property == self.target):
            self._fail(violation)

    def teardown(self):
        if getattr(self, "world", None) is None:
            return
        violation = None
        if self.check_eventually:
            self.world, violation = settle(self.world, self.checker, None, self.schedule, companion=self.companion)
        finish = getattr(self.companion, "finish", None)
        if violation is None and finish is not None:
            violation = finish(self.world)  # the companion's last, full look
        if violation is not None:
            self._fail(violation)


_MACHINES: dict = {}


def machine_for(config: Config, faults: bool = True, check_eventually: bool = True, prefix: tuple = (),
                target: str | None = None, companion=None, label: str = "model") -> type:
    """A ModelMachine subclass bound to *config*, an optional starting *prefix* of events (the
    pseudo-event ``("quiet",)`` stands for a burst of quiet time) and an optional *target* property
    (only its violations fail the run: the quality tier pins which property catches a variant).
    *companion* is a hashable factory ``(config, seed) -> companion`` for a system run beside the
    model (see :func:`properties.systems.machine_for`); *label* names it in the class name.
    Cached, so Hypothesis' database keys are stable."""
    key = (config, faults, check_eventually, prefix, target, companion, label)
    if key not in _MACHINES:
        name = f"{label.capitalize()}Machine_" + ("_".join(sorted(config.broken)) or "correct")
        _MACHINES[key] = type(
            name,
            (ModelMachine,),
            {"config": config, "faults": faults, "check_eventually": check_eventually, "prefix": prefix,
             "target": target, "companion_factory": companion, "last_failure": {}},
        )
    return _MACHINES[key]

