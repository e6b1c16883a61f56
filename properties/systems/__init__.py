"""The systems groupcheck can check, behind one interface: one seeded interleaving, or a replay.

* ``model`` — the reference model alone, checked against the catalogue after every event;
* ``impl``  — the implementation (``impl/``) run beside the model on the same schedule: the model
  draws the events, both worlds apply them, their observations must agree, and the always
  properties are checked on both (:mod:`properties.systems.differential`, :mod:`properties.impl_checks`).

Both return a :class:`properties.explore.walker.RunResult`; for ``impl``, ``RunResult.companion`` is the
:class:`properties.systems.differential.Differential` with the implementation's side.
"""

from __future__ import annotations

import attrs

from model.config import Config
from properties.explore.walker import RunResult, replay as replay_model, walk

#: The simulated systems: (name, what it is, which of groupcheck's mutants it takes); the registry
#: of every system groupcheck can check (:mod:`properties.targets`) lists them with the others.
SIMULATED_SYSTEMS = (
    ("impl", "the implementation (impl/) beside the model in the simulated world", "impl"),
    ("model", "the reference model alone, checked against the catalogue after every event", None),
)
SYSTEMS = tuple(name for name, _, _ in SIMULATED_SYSTEMS)


def world_config(system: str, faults: str, clients: int, brokers: int, partitions: int, broken=(),
                 settings=(), wire: bool = False) -> Config:
    """The Config of a command-line world, validated: raises ConfigError naming the bad value
    (the commands turn it into their one-line usage error). *settings* are ``--set`` items
    (``"session.timeout.ms=10000"``, Kafka's property names, :data:`model.config.SETTINGS`).
    *wire*: the implementation's simulated links carry Kafka's wire format (``--wire``; only the
    ``impl`` system has links)."""
    from model.config import ConfigError, parse_settings, with_settings
    from properties.explore.walker import FAULT_PROFILES

    if system not in SYSTEMS:
        raise ConfigError(f"--system must be one of {', '.join(SYSTEMS)}, got {system!r}")
    if faults not in FAULT_PROFILES:
        raise ConfigError(f"--faults must be one of {', '.join(FAULT_PROFILES)}, got {faults!r}")
    if wire and system != "impl":
        raise ConfigError("--wire encodes the implementation's messages: use it with --system impl")
    config = Config(clients=clients, brokers=brokers, partitions=partitions, broken=frozenset(broken), wire=wire)
    return with_settings(config, parse_settings(settings))


def companion_for(system: str, config: Config, seed: int):
    """What runs beside the model on every event for *system*: None for ``model``, a
    :class:`properties.systems.differential.Differential` (the implementation, seeded with *seed*)
    for ``impl``. This is how the search engines of :mod:`properties.explore`, which know only the
    model, are pointed at a system."""
    if system == "model":
        return None
    if system == "impl":
        from properties.systems.differential import Differential

        return Differential(config, seed)
    raise ValueError(f"system must be one of {', '.join(SYSTEMS)}, got {system!r}")


def run(system: str, seed: int, config: Config, steps: int = 50, faults: str = "all", max_faults: int = 6,
        eventually: bool = True, on_step=None, quiet_rate: float | None = None, hash_trace: bool = True,
        reseed: tuple = (), mix: str = "default") -> RunResult:
    """One seeded interleaving of *system*; same arguments ⇒ same schedule and trace hash.
    *on_step(world, event, new_world, log)* is called after every applied event (coverage);
    *quiet_rate* None is the walker's default; *hash_trace* = False leaves the trace hash out;
    *reseed*: a guided search's child walk; *mix*: the fault mix (:func:`properties.explore.walker.walk`)."""
    from properties.systems.watchdog import watching

    extra = {} if quiet_rate is None else {"quiet_rate": quiet_rate}
    with watching():  # an implementation step that never ends becomes an impl-no-hang counterexample
        return walk(seed, config, steps=steps, faults=faults, max_faults=max_faults, eventually=eventually,
                    companion=companion_for(system, config, seed), on_step=on_step, hash_trace=hash_trace,
                    reseed=reseed, mix=mix, **extra)


def replay(system: str, config: Config, schedule, seed: int = 0, check_eventually: bool = False,
           on_step=None, settle_after: bool = False) -> RunResult:
    """Re-run *schedule* exactly on *system* (*seed* seeds the implementation's own generators:
    member ids, leastLoadedNode's offsets). *check_eventually*: judge the eventually properties
    after the last event (for a schedule that ended with a settle phase). *settle_after*: give the
    schedule a settle phase first (:func:`properties.explore.walker.replay`)."""
    from properties.systems.watchdog import watching

    with watching():
        return replay_model(config, schedule,
                            eventually_after=len(schedule) if check_eventually and not settle_after else None,
                            companion=companion_for(system, config, seed), on_step=on_step, settle_after=settle_after)


def replayer(system: str, config: Config, seed: int = 0):
    """``replay(schedule, check_eventually=False)`` bound to *system*, *config* and *seed*: what
    :func:`properties.explore.shrink.shrink` re-runs candidates with."""

    def bound(schedule, check_eventually: bool = False) -> RunResult:
        # an eventually failure must survive a settle phase after the shortened schedule: judged at
        # once, any schedule cut before the group settled would "fail" (the settle events the
        # shrinker keeps are those of this phase, so the shrunk schedule replays as recorded)
        return replay(system, config, schedule, seed=seed, check_eventually=check_eventually,
                      settle_after=check_eventually)

    return bound


def machine_for(config: Config, system: str = "model", **options) -> type:
    """A Hypothesis state machine class over *system* (:func:`properties.explore.machines.machine_for`
    with the system's companion); *options* are that function's (faults, check_eventually, prefix,
    target)."""
    from properties.explore.machines import machine_for as explore_machine_for

    if system not in SYSTEMS:
        raise ValueError(f"system must be one of {', '.join(SYSTEMS)}, got {system!r}")
    companion = None if system == "model" else _Companion(system)
    return explore_machine_for(config, companion=companion, label=system, **options)


@attrs.frozen
class _Companion:
    """A picklable, hashable companion factory (Hypothesis keys its database by the machine class,
    which :func:`machine_for` caches by its arguments)."""

    system: str

    def __call__(self, config: Config, seed: int):
        return companion_for(self.system, config, seed)


def states(result: RunResult) -> dict:
    """Both sides' canonical state after the run's last event (the implementation's only for impl)."""
    from properties.systems.differential import Aliases, canonical, model_pending
    from properties.explore.walker import observe

    out = {"model": _plain(canonical(observe(result.world), Aliases(), model_pending(result.world)))}
    companion = result.companion
    if companion is not None:
        divergence = companion.divergence
        if divergence is not None:
            out = {"model": _plain(divergence.model), "impl": _plain(divergence.impl)}
        elif companion.last_impl_obs is not None:
            # the last full comparison may be some events old: look again (unless impl/ crashed)
            model, impl = ((companion.last_model_obs, companion.last_impl_obs) if companion.failure is not None
                           else companion.views(result.world))
            out = {"model": _plain(model), "impl": _plain(impl)}
    return out


_OBS_FIELDS = ("now", "partition_leader", "group", "clients", "committed")
_GROUP_FIELDS = ("state", "generation", "leader", "members", "protocol", "member_id_order")
_CLIENT_FIELDS = ("member_state", "generation", "member_id", "assignment", "coordinator", "live")


def _plain(obs: tuple) -> dict:
    """A canonical observation as JSON-ready named fields."""
    now, leader, group, clients, committed, *in_flight = obs
    plain = {
        "now": now,
        "partition_leader": leader,
        "group": None if group is None else dict(zip(_GROUP_FIELDS, (list(v) if isinstance(v, tuple) else v for v in group))),
        "clients": [dict(zip(_CLIENT_FIELDS, (list(v) if isinstance(v, tuple) else v for v in c))) for c in clients],
        "committed": {str(p): o for p, o in committed},
    }
    if in_flight:  # the differential's: what is on each client's links (non-empty slots only)
        plain["in_flight"] = [{str(slot): {"to_broker": list(up), "to_client": list(down)}
                               for slot, (up, down) in enumerate(links) if up or down} for links in in_flight[0]]
    return plain
