"""The KIP-848 worlds of a campaign (properties/kip848/campaign.py): walked beside the classic
interleavings, merged in any order, reported, and a failure kept as a replayable file."""

import json

from properties.cli import main
from properties.kip848 import campaign
from properties.kip848.counterexample import load
from properties.kip848.walker import replay


def test_parts_merge_the_same_in_any_order_and_a_failure_is_reported_and_replays(tmp_path):
    a = campaign.run_seeds(range(0, 6), broken={"stale_keeps_partitions"})
    b = campaign.run_seeds(range(26, 32), broken={"stale_keeps_partitions"})  # seed 28 fails (tests/kip848/test_walker.py)
    ab, ba = campaign.merge(campaign.merge(None, a), b), campaign.merge(campaign.merge(None, b), a)
    assert {k: v for k, v in ab.items() if k != "seconds"} == {k: v for k, v in ba.items() if k != "seconds"}
    assert ab["walks"] == 12 and ab["failures"]["kip848-outside-owns-nothing"]["seeds"][0] == 28
    section = campaign.section(ab, 4)
    verdicts = {p["property"]: p["verdict"] for p in section["properties"]}
    assert verdicts["kip848-outside-owns-nothing"] == "failed" and verdicts["kip848-one-owner-per-partition"] == "held"
    assert "groupcheck kip848 --replay counterexamples/kip848-kip848-outside-owns-nothing.json" in "\n".join(
        campaign.markdown(section))
    path = tmp_path / "cx.json"
    path.write_text(json.dumps(ab["failures"]["kip848-outside-owns-nothing"]["counterexample"]))
    config, schedule, data = load(str(path))
    again = replay(schedule, config)  # the campaign walks without the trace hash; its file has the replay's
    assert again.violation.property == "kip848-outside-owns-nothing" and data["trace_hash"] == again.trace_hash


def test_the_default_campaign_walks_kip848_worlds_beside_its_interleavings(tmp_path, capsys):
    out = tmp_path / "report"
    code = main(["campaign", "--interleavings", "8", "--system", "model", "--local", "--no-directed",
                 "--out", str(out), "--json"])
    results = json.loads(capsys.readouterr().out)
    assert code == 0 and results["verdict"] == "pass"
    k = results["kip848"]
    assert (k["every"], k["walks"]) == (4, 2) and not k["impl"]  # --system model: the model's coordinator alone
    verdicts = {p["property"]: p["verdict"] for p in k["properties"]}
    assert {verdicts.pop(p) for p in ("kip848-impl-matches-model", "kip848-impl-consumer-matches-model",
                                      "kip848-impl-no-crash", "kip848-impl-no-hang")} == {"not checked"}
    assert set(verdicts.values()) == {"held"}
    assert "## KIP-848 worlds" in (out / "summary.md").read_text() and "KIP-848 worlds" in (out / "index.html").read_text()


def test_kip848_every_0_walks_none_and_a_mutant_campaign_refuses_it(tmp_path, capsys):
    assert main(["campaign", "--interleavings", "4", "--system", "model", "--local", "--no-directed",
                 "--kip848-every", "0", "--out", str(tmp_path / "a"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kip848"] is None
    assert main(["campaign", "--interleavings", "4", "--local", "--mutant", "leader_not_repicked", "--kip848-every", "2",
                 "--out", str(tmp_path / "b")]) == 2
    assert "--kip848-every 2: KIP-848 worlds are walked beside" in capsys.readouterr().err


def test_a_failed_kip848_always_property_fails_the_campaign_and_is_kept_as_a_file(tmp_path, capsys, monkeypatch):
    import functools

    broken = functools.partial(campaign.run_seeds, broken={"stale_keeps_partitions"})  # seed 28 fails
    monkeypatch.setattr(campaign, "run_seeds", broken)
    out = tmp_path / "report"
    code = main(["campaign", "--interleavings", "32", "--system", "model", "--local", "--no-directed",
                 "--out", str(out), "--json"])
    results = json.loads(capsys.readouterr().out)
    assert code == 1 and results["verdict"] == "fail" and results["violations"] == 0  # the classic ones held
    failure = results["kip848"]["failures"][0]
    assert failure["property"] == "kip848-outside-owns-nothing" and 28 in failure["seeds"]
    config, schedule, _ = load(str(out / failure["file"]))
    assert replay(schedule, config).violation.property == "kip848-outside-owns-nothing"


def test_walks_stopped_at_a_known_hazard_are_said_to_be_checked_only_up_to_it():
    """Seed 33 stops at the static member's hazard (tests/kip848/test_walker.py): the section lists it
    as a hazard, not a failure, and says that walk had no quiet phase or convergence judged."""
    from properties.campaign.report import kip848_line

    section = campaign.section(campaign.run_seeds([32, 33]), 4)
    assert section["failures"] == [] and [h["seeds"] for h in section["hazards"]] == [[33]]
    text = "\n".join(campaign.markdown(section))
    assert "but for 1 that stopped at a failure or a known hazard" in text
    assert "(1 walk checked only up to the known hazard it stopped at)" in kip848_line({"kip848": section})
    clean = campaign.section(campaign.run_seeds([32]), 4)
    assert "stopped at" not in "\n".join(campaign.markdown(clean)) and "checked only up to" not in kip848_line(
        {"kip848": clean})
