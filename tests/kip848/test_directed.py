"""The directed KIP-848 schedules (properties/kip848/directed.py): each still reaches the corner it was
made for, clean, with impl/'s coordinator and consumers beside the model's; the campaign reports them
apart from the walks, and a failing one fails the KIP-848 section and is kept as a replayable file."""

import json

import pytest

from properties.cli import main
from properties.kip848 import campaign, directed
from properties.kip848.catalogue import IMPL_CONSUMER_AGREEMENT
from properties.kip848.counterexample import load
from properties.kip848.mutants import MUTANTS
from properties.kip848.walker import COVERAGE, replay

SCHEDULES = directed.load()


def test_each_schedule_names_a_corner_of_the_walks_and_says_why():
    assert len(SCHEDULES) == 2 and len({d.corner for d in SCHEDULES}) == 2
    for d in SCHEDULES:
        assert d.corner in COVERAGE and "maybeReconcile" in d.why


@pytest.mark.parametrize("d", SCHEDULES, ids=lambda d: d.corner)
def test_each_schedule_reaches_its_corner_and_is_clean(d):
    without_it = replay(d.schedule, d.config, impl=True)  # the schedule's own events reach it
    assert without_it.coverage[d.corner] >= 1 and without_it.verdict == "ok"
    result = directed.replay(d, impl=True)
    assert result.verdict == "ok", result.violation
    assert result.coverage[d.corner] >= 1
    assert len(result.schedule) > len(d.schedule)  # the quiet phase ran (and kip848-converges after it)


def test_a_mutant_the_schedules_were_made_for_fails_the_campaign_section_and_is_written(tmp_path):
    part = directed.run(mutant=MUTANTS["rejoin_keeps_reconciliation"])
    assert [o["property"] for o in part["outcomes"]] == [None, IMPL_CONSUMER_AGREEMENT]
    section = campaign.section(campaign.run_seeds([32]), 4, part)
    verdicts = {p["property"]: p["verdict"] for p in section["properties"]}
    assert verdicts[IMPL_CONSUMER_AGREEMENT] == "failed" and verdicts["kip848-one-owner-per-partition"] == "held"
    [failure] = section["failures"]
    assert failure["directed"] == "consumer rejoined while reconciling"
    text = "\n".join(campaign.markdown(section))
    assert "the directed schedule for consumer rejoined while reconciling" in text
    path = tmp_path / "cx.json"
    path.write_text(json.dumps(part["failures"][IMPL_CONSUMER_AGREEMENT]))
    config, schedule, data = load(str(path))
    assert data["mutant"] == "rejoin_keeps_reconciliation" and data["directed"]["corner"] == failure["directed"]
    assert main(["kip848", "--replay", str(path)]) == 1  # reproduced, under the mutant the file names


def test_a_clean_section_says_which_corners_only_the_directed_schedules_reached():
    section = campaign.section(campaign.run_seeds([0, 4]), 4, directed.run())
    assert set(section["reached_only_by_directed"]) == {d.corner for d in SCHEDULES}
    assert not set(section["never_reached"]) & {d.corner for d in SCHEDULES}
    assert [o["verdict"] for o in section["directed"]["outcomes"]] == ["ok", "ok"]
    assert "Corners only they reached: consumer same partitions acknowledged" in "\n".join(campaign.markdown(section))
    without = campaign.section(campaign.run_seeds([0, 4]), 4)
    assert without["directed"] is None and set(without["never_reached"]) >= {d.corner for d in SCHEDULES}


def test_the_campaign_replays_them_after_its_walks(tmp_path, capsys):
    out = tmp_path / "report"
    code = main(["campaign", "--interleavings", "4", "--system", "model", "--local", "--out", str(out), "--json"])
    results = json.loads(capsys.readouterr().out)
    assert code == 0 and results["verdict"] == "pass"
    k = results["kip848"]
    assert k["directed"]["schedules"] == 2 and [o["property"] for o in k["directed"]["outcomes"]] == [None, None]
    assert "and 2 directed schedules" in " ".join(results["checked"]["what"])
    assert "Directed KIP-848 schedules" in (out / "summary.md").read_text()


def test_groupcheck_kip848_replays_them_after_its_walks_unless_told_not_to(capsys):
    assert main(["kip848", "--seeds", "1", "--mutant", "rejoin_keeps_reconciliation"]) == 1
    out = capsys.readouterr().out
    assert f"FAILED {IMPL_CONSUMER_AGREEMENT}: the directed schedule for consumer rejoined while reconciling" in out
    assert main(["kip848", "--seeds", "1", "--mutant", "rejoin_keeps_reconciliation", "--no-directed"]) == 0
    out = capsys.readouterr().out
    assert "directed" not in out and "never reached: " in out and "consumer rejoined while reconciling" in out
