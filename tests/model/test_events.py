"""The event vocabulary (model.events) and the step log's (model.entries): typed tuples that stay
plain tuples, one JSON form, every kind handled by both worlds, and one list of enabled events
whose guards neither miss an event that changes the world nor, beyond the documented coarse ones,
list one that does not."""

from __future__ import annotations

import json
import pickle

import pytest

from model import entries, events
from model.config import Config
from model.events import ALL, EVENTS, as_event, enabled_events, offers
from model.world import _HANDLERS, step
from properties.explore.swarm import draw
from properties.explore.walker import _alphabet, MIXES, enabled_events as walker_events, walk
from properties.systems.simworld import SimWorld


def test_an_event_is_its_plain_tuple():
    deliver = events.Deliver(0, 4, True, 9)
    assert deliver == ("deliver", 0, 4, True, 9) and hash(deliver) == hash(("deliver", 0, 4, True, 9))
    assert (deliver.c, deliver.slot, deliver.to_broker, deliver.pick) == (0, 4, True, 9)
    assert repr(deliver) == repr(("deliver", 0, 4, True, 9))  # trace hashes and messages print it so
    assert events.Poll(2) == ("poll", 2, 0)  # pick defaults to 0
    copy = pickle.loads(pickle.dumps(deliver))
    assert type(copy) is events.Deliver and copy == deliver
    assert json.loads(json.dumps(events.to_json(deliver))) == ["deliver", 0, 4, True, 9]
    assert as_event(["deliver", 0, 4, True, 9]) == deliver and type(as_event(("deliver", 0, 4, True, 9))) is events.Deliver
    assert as_event(deliver) is deliver
    assert events.with_pick(deliver, 3) == ("deliver", 0, 4, True, 3)


def test_a_malformed_event_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown event kind 'jump'"):
        as_event(("jump", 0, 0))
    with pytest.raises(ValueError, match=r"a deliver event is \('kind', c, slot, to_broker, pick\)"):
        as_event(("deliver", 0, 4, 0))
    with pytest.raises(ValueError, match="unknown event kind"):
        step(None, ("jump", 0, 0))


def test_every_kind_is_declared_once_with_its_attributes():
    assert tuple(EVENTS) == events.KINDS and len(set(events.KINDS)) == len(events.KINDS)
    for kind, cls in EVENTS.items():
        assert cls.TAG == kind and cls._fields[0] == "kind" and cls._fields[-1] == "pick"
        assert cls.ACTOR in ("c", "b", "cluster", None)
        assert cls.ACTOR is None or cls.ACTOR == "cluster" or cls.ACTOR in cls._fields
        assert cls.PARAM is None or cls._fields[-2] == cls.PARAM
        assert cls.DOMAIN is None or cls.PARAM is not None
        assert isinstance(cls.__doc__, str) and cls.__doc__.strip()


def test_every_kind_has_a_handler_in_both_worlds():
    """What adding a kind takes (model.events' docstring): a handler in the model and, for the
    implementation's world, one of its own."""
    assert set(_HANDLERS) == set(EVENTS.values())
    missing = [kind for kind in EVENTS if not callable(getattr(SimWorld, f"_ev_{kind}", None))]
    assert missing == []


def test_a_log_entry_is_its_plain_tuple():
    send = entries.Send(1, 7, 4, "JoinGroup", 0, 30000)
    assert send == ("send", 1, 7, 4, "JoinGroup", 0, 30000) and send.timeout_ms == 30000
    note = entries.Transition("Empty", "PreparingRebalance")
    assert note == ("transition", "Empty", "PreparingRebalance")
    logged = entries.server_entry(note)
    assert logged == ("server", "transition", "Empty", "PreparingRebalance") and logged.to_state == "PreparingRebalance"
    typed = entries.as_entry(("server", "transition", "Empty", "PreparingRebalance"))
    assert type(typed) is type(logged)
    assert type(entries.as_entry(tuple(send))) is entries.Send
    assert entries.as_entry(("no such tag", 1)) == ("no such tag", 1)  # left as it is


def test_every_model_log_entry_is_typed():
    """What a step logs is always of the entry vocabulary (a reader may use field names)."""
    seen = set()

    def hook(world, event, new, log):
        for entry in log:
            assert type(entry) is not tuple and entry._fields[0] == "tag", entry
            seen.add(entry[0])

    for seed in range(12):
        w = draw(seed, Config())
        walk(seed, w.config, steps=w.steps, faults="all", max_faults=w.max_faults, mix=w.mix, on_step=hook,
             hash_trace=False)
    assert {"polled", "send", "transmit", "handled", "reply", "server", "member_state", "choice"} <= seen


# -- the one list of enabled events -----------------------------------------------------------

def _worlds(walks: int = 15) -> list:
    """Worlds reached by walks of every mix (static members among them): each kept because the
    list offers a kind there that no earlier world of the corpus had, or because it is one of its
    walk's first three 40th steps; *walks* walks, three of each mix, and more while some kind was
    never offered. A corpus for the guards, in about a quarter of a second."""
    out, kinds = [], set()
    mixes = {mix: 0 for mix in MIXES}
    seed = done = 0
    position = 0

    def keep(world, event, new, log):
        nonlocal position
        position += 1
        listed = {cls.TAG for cls, _, _ in offers(new, ALL, empty_commits=True)}
        if not listed <= kinds or (position % 40 == 0 and position <= 120):
            kinds.update(listed)
            out.append(new)

    while (done < walks or kinds != set(events.KINDS)) and seed < 400:
        w = draw(seed, Config())
        seed += 1
        if w.faults != "all" or mixes[w.mix] >= max(3, done // len(MIXES) + 1):
            continue
        mixes[w.mix] += 1
        done += 1
        position = 0
        walk(seed, w.config, steps=min(w.steps, 60), faults=w.faults, max_faults=w.max_faults, mix=w.mix,
             eventually=False, hash_trace=False, on_step=keep)
    return out


@pytest.fixture(scope="module")
def worlds():
    return _worlds()


def _alphabet_of(world) -> list:
    """Every event of every kind with every plausible field value (the oracle: written apart from
    model.events.offers, which it checks)."""
    cfg = world.config
    clients, brokers, slots = range(cfg.clients), range(cfg.brokers), range(2 * cfg.brokers)
    out = []
    for c in clients:
        out += [events.Poll(c), events.Heartbeat(c), events.Commit(c), events.Close(c), events.Shutdown(c),
                events.Crash(c)]
        out += [events.CommitOversized(c, w) for w in events.OVERSIZED]
        out += [events.Subscribe(c, topics) for topics in (1, 2, 3)]
        out += [cls(c, ms) for cls in (events.Pause, events.Stall) for ms in events.pauses_of(cfg)]
        out += [events.Wakeup(c, n) for n in events.WAKEUP_LANDINGS]
        out += [events.Restart(c, p) for p in events.PROCESSED]
        out += [events.ClockJump(c, ms) for ms in events.CLOCK_JUMPS]
        for slot in slots:
            out += [events.Connect(c, slot)]
            out += [cls(c, slot, way) for cls in (events.Deliver, events.Drop) for way in (True, False)]
            out += [events.Disconnect(c, slot, p) for p in events.PROCESSED]
        out += [cls(c, b) for cls in (events.Partition, events.Heal) for b in brokers]
    for b in brokers:
        out += [cls(b) for cls in (events.Late, events.BrokerCrash, events.BrokerRestart, events.Failover, events.Load)]
    out += [events.AppendError(code) for code in events.APPEND_ERROR_CODES]
    out += [events.AddPartitions(n) for n in events.ADDED_PARTITIONS]
    out += [events.Tick(ms) for ms in events.tick_lengths(cfg)]
    return out


#: kinds whose guard is coarser than the step's (model.events.offers' docstring says where)
COARSE = {"connect", "deliver", "clock_jump", "poll"}


def test_the_list_holds_every_event_that_changes_the_world_and_little_else(worlds):
    """Every event that changes the world is listed (a step the model takes but that leaves every
    field of the world as it was, a heartbeat iteration of a thread not started, is no change);
    the step refuses a listed event only where the guard is documented coarser than the step's."""
    kinds_listed = set()
    refused = set()
    for world in worlds:
        listed = set(enabled_events(world, ALL, empty_commits=True))
        kinds_listed |= {e.kind for e in listed}
        for event in _alphabet_of(world):
            new, _ = step(world, event)
            changes = new is not world and new._replace(steps=world.steps) != world  # in substance
            if event in listed:
                if new is world:  # the step refused it
                    refused.add(event.kind)
                continue
            if not changes:
                continue
            link = world.links[event.c][event.slot] if event.kind in ("drop", "disconnect") else None
            if event.kind in ("connect", "deliver", "drop", "disconnect") and not world.clients[event.c].alive:
                pass  # a dead process's links are frozen until a restart cuts them (offers' docstring)
            elif event.kind == "disconnect" and event.processed == events.LATE and not link.to_broker:
                # nothing read, nothing to handle later: the same step as a handled disconnect
                same, _ = step(world, event._replace(processed=events.HANDLED))
                assert repr(same) == repr(new), event
            elif event.kind == "commit_oversized" and not world.clients[event.c].assignment:
                # too long a metadata for none of no partitions: the commit of nothing, listed as such
                same, _ = step(world, events.Commit(event.c))
                assert same._replace(steps=0) == new._replace(steps=0), event
            elif event.kind == "drop" and link.stalled:
                pass  # a stalled link carries nothing more: another loss there changes nothing that matters
            else:
                raise AssertionError(f"{event!r} changes the world but is not listed")
    assert refused <= COARSE, refused - COARSE
    assert kinds_listed == set(events.KINDS), set(events.KINDS) - kinds_listed  # every kind has a guard


def test_offers_follow_the_documented_order(worlds):
    """Per client (restart, redeploy, the application's calls, crash, clock jump, then slot by slot its
    connect, deliveries, drops and disconnect, then partitions), then the world's: the order the
    walker's draws depend on."""
    per_client = ["restart", "redeploy", "poll", "heartbeat", "commit", "commit_oversized", "commit_sync", "subscribe",
                  "shutdown", "wakeup", "pause", "stall", "close", "crash", "clock_jump"]
    per_slot = ["connect", "deliver", "drop", "disconnect"]
    world_level = ["load", "late", "failover", "broker_crash", "broker_restart", "append_error", "add_partitions",
                   "delete_group", "tick"]
    for world in worlds[::3]:
        keys = []
        for cls, fixed, _ in offers(world):
            kind = cls.TAG
            if kind in per_client:
                keys.append((0, fixed[0], 0, per_client.index(kind), 0))
            elif kind in per_slot:
                keys.append((0, fixed[0], 1, fixed[1], per_slot.index(kind)))
            elif kind in ("partition", "heal"):
                keys.append((0, fixed[0], 2, fixed[1], 0))
            else:
                keys.append((1, world_level.index(kind), 0, 0, 0))
        assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_the_walker_draws_from_the_list(worlds):
    """Whatever the walker offers of the kinds it takes from model.events.offers (and its pauses,
    ticks and partitions) is an event the list holds, with the step's pick; only the mix's blind
    disruptions may not be."""
    import random

    for i, world in enumerate(worlds):
        for mix in MIXES.values():
            rng = random.Random(i)
            drawn = walker_events(world, rng, "all", 3, mix)
            pick = drawn[0].pick
            listed = set(enabled_events(world, ALL, pick, empty_commits=True))
            taken = (_alphabet("all", True, mix, bool(world.config.static_clients)) | {"commit_oversized", "pause", "stall", "tick", "partition", "heal"}) \
                - set(mix.kinds)
            for event in drawn:
                assert event.pick == pick
                if event.kind not in taken:
                    continue
                if event.kind == "disconnect" and event.processed == events.LATE:
                    event = event._replace(processed=events.HANDLED)  # the same step when nothing is read
                assert event in listed, (event, mix)
