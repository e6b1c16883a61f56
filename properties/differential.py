"""Model versus implementation, step by step (issue 3; first cut).

The model world and the implementation world (:mod:`properties.simworld`) consume the same
schedule. After every event their canonical observations are compared, with member ids replaced by
stable aliases (``c<client>.<n>``: the n-th member id seen for that client), because Kafka's member
ids are random. Where Kafka leaves a choice open, the choices go one of two ways:

* the implementation follows the model for what the world decides (which node leastLoadedNode's
  random scan starts at, whether a broken connection's requests were processed, which broker
  becomes the new partition leader);
* the model follows the implementation for what the coordinator decides (leader re-pick and the
  protocol-vote tie-break): when the observations differ and the model made such a choice, the
  model's step is re-run with each other allowed outcome, and one that matches is accepted.

The first event after which the two disagree (or one applies the event and the other does not) is
reported with both observations side by side.
"""

from __future__ import annotations

import itertools
import re

import attrs

from model.config import Config
from model.world import initial_world, step
from properties.simworld import SimWorld
from properties.walker import observe

_FOLLOWED_BY_MODEL = ("leader", "protocol")
_CLIENT = re.compile(r"^consumer-(\d+)-")


class Aliases:
    """Member id → ``c<client>.<n>``, in the order ids of each client first appear."""

    def __init__(self):
        self._by_id: dict = {}
        self._per_client: dict = {}

    def __call__(self, member_id):
        if not member_id:
            return member_id
        alias = self._by_id.get(member_id)
        if alias is None:
            match = _CLIENT.match(member_id)
            client = match.group(1) if match else "?"
            n = self._per_client.get(client, 0)
            self._per_client[client] = n + 1
            alias = self._by_id[member_id] = f"c{client}.{n}"
        return alias


def canonical(obs: tuple, alias: Aliases) -> tuple:
    now, leader, group, clients, committed = obs
    clients = tuple((s, g, alias(m), tuple(a), coord, live) for s, g, m, a, coord, live in clients)
    if group is not None:
        state, generation, leader_id, members, protocol = group
        group = (state, generation, alias(leader_id), tuple(alias(m) for m in members), protocol)
    return (now, leader, group, clients, committed)


@attrs.frozen
class Divergence:
    index: int  # of the event in the schedule
    event: tuple
    model: tuple  # canonical observation after the event
    impl: tuple
    model_applied: bool
    impl_applied: bool
    recent: tuple  # the events before it


@attrs.frozen
class DiffResult:
    seed: int
    steps: int  # events both sides applied
    divergence: Divergence | None


def _alternatives(log: list):
    """Every combination of other outcomes for the coordinator's choices logged in one step."""
    points = [(kind, cands) for tag, kind, cands, _ in (e for e in log if e[0] == "choice") if kind in _FOLLOWED_BY_MODEL]
    if not points:
        return
    kinds = [k for k, _ in points]
    for values in itertools.product(*[c for _, c in points]):
        yield dict(zip(kinds, values))


def compare(config: Config, schedule, seed: int = 0) -> DiffResult:
    """Run *schedule* on both worlds; stop at the first divergence."""
    world = initial_world(config)
    sim = SimWorld(config, seed)
    model_alias, impl_alias = Aliases(), Aliases()
    applied = 0
    for i, event in enumerate(schedule):
        event = tuple(event)
        new, log = step(world, event)
        follow = [(e[1], e[3]) for e in log if e[0] == "choice"]
        impl_applied = sim.step(event, follow=follow)
        impl_obs = canonical(sim.observe(), impl_alias)
        model_obs = canonical(observe(new), model_alias)
        if model_obs != impl_obs and impl_applied:
            for prefer in _alternatives(log):
                candidate, _ = step(world, event, prefer=prefer)
                trial_alias = Aliases()
                trial_alias._by_id, trial_alias._per_client = dict(model_alias._by_id), dict(model_alias._per_client)
                if canonical(observe(candidate), trial_alias) == impl_obs:
                    new, model_alias, model_obs = candidate, trial_alias, impl_obs
                    break
        model_applied = new is not world
        if model_applied != impl_applied or model_obs != impl_obs:
            return DiffResult(seed, applied, Divergence(i, event, model_obs, impl_obs, model_applied, impl_applied,
                                                        tuple(tuple(e) for e in schedule[max(0, i - 10):i])))
        world = new
        applied += model_applied
    return DiffResult(seed, applied, None)
