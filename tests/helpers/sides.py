"""The model and the implementation stepped side by side by hand (the tests of the redeploy and
delete_group events): every event checked by the differential and the catalogue's always
properties, the first problem kept."""

from __future__ import annotations

from model.events import enabled_events
from model.world import initial_world, step
from properties.catalogue import Checker
from properties.explore.walker import settle
from properties.systems.differential import Differential

#: what :meth:`Sides.quiet` takes first, as it comes
QUIET = frozenset({"connect", "deliver"})


class Sides:
    """The model and the implementation side by side, the catalogue's always properties checked
    after every event; :attr:`problem` is the first divergence or violation (None while they agree),
    :attr:`log` what the model logged at the events :meth:`apply` took."""

    def __init__(self, config, seed: int = 0):
        self.world, self.checker, self.diff = initial_world(config), Checker(config), Differential(config, seed)
        self.problem, self.log = None, []

    def settle(self) -> "Sides":
        """The walker's settle phase, until the group is Stable."""
        if self.problem is None:
            self.world, self.problem = settle(self.world, self.checker, None, [], until_stable=True, companion=self.diff)
        return self

    def apply(self, *events) -> "Sides":
        for event in events:
            if self.problem is not None:
                break
            new, log = step(self.world, event)
            new, log, problem = self.diff.after(self.world, event, new, log)
            self.problem = problem or self.checker.check(self.world, new, event, log)
            self.world = new
            self.log += log
        return self

    def quiet(self, rounds: int = 200, until=lambda world: False, tick_ms: int = 1, heartbeats: bool = True) -> "Sides":
        """Up to *rounds* rounds, until *until(world)*: the first connect or delivery that changes the
        world, else every live client's poll (and heartbeat thread, if *heartbeats*) and *tick_ms*."""
        for _ in range(rounds):
            if self.problem is not None or until(self.world):
                break
            events = [e for e in enabled_events(self.world, QUIET) if step(self.world, e)[0] is not self.world][:1]
            if not events:
                live = [c for c, client in enumerate(self.world.clients) if client.live]
                events = [("poll", c, 0) for c in live] + ([("heartbeat", c, 0) for c in live] if heartbeats else []) \
                    + [("tick", tick_ms, 0)]
            self.apply(*events)
        return self

    def group(self):
        return self.world.brokers[self.world.leader].group

    def handled(self, api: str) -> list:
        return [e for e in self.log if e[0] == "handled" and e.request.api == api]
