"""The counterexample timeline: what each event did, in words, from the model's log."""

from model.config import Config
from properties.campaign.timeline import timeline
from properties.explore.walker import walk


def test_the_timeline_tells_what_each_event_did():
    config = Config(clients=2, brokers=1, partitions=2)
    schedule = walk(3, config, steps=120).schedule
    rows = timeline("model", config, schedule, last=None)
    assert [r["i"] for r in rows] == list(range(len(schedule)))
    notes = [n for r in rows for n in r["notes"]]
    # a group forms: requests go out, the coordinator answers, the group moves and completes a join
    assert any(n.startswith("c0 sends FindCoordinator #") for n in notes)
    assert any(n.startswith("broker answers c") and "JoinGroup" in n for n in notes)
    assert any(n.startswith("c1 gets SyncGroup ") for n in notes)
    assert "group Empty→PreparingRebalance" in notes
    assert any(n.startswith("join complete: generation ") for n in notes)
    assert any(n.startswith("c0 assigned [") for n in notes)


def test_the_timeline_keeps_the_last_rows_only():
    config = Config(clients=2, brokers=1, partitions=2)
    schedule = walk(3, config, steps=120).schedule
    rows = timeline("model", config, schedule, last=10)
    assert [r["i"] for r in rows] == list(range(len(schedule) - 10, len(schedule)))
