"""Every checker's JSON report has the one shape (properties/findings.py), checked against the
versioned schema in docs/report.schema.json: the campaign's results.json, broker conformance's and
client conformance's report.json — with findings and without, finished and stopped."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from properties import findings as shape
from properties.cli import main

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text())


def _valid(doc: dict) -> dict:
    jsonschema.validate(doc, SCHEMA)
    assert list(doc)[:len(shape.ENVELOPE)] == list(shape.ENVELOPE)  # the shared keys open every report
    for f in doc["findings"]:
        assert list(f) == list(shape.FIELDS)
    return doc


def test_the_schema_has_teeth():
    """The schema refuses what the one shape forbids (a mutant of a report for each rule)."""
    good = shape.envelope(checker="campaign", system="impl", findings=[], done=3, requested=3, unit="interleavings",
                          settings={}, checked=["x"], not_checked=[])
    _valid(good)
    finding = shape.finding(signature="s", rule="r", kind="always", count=1, first_seeds=[4], summary="what")
    bad = [
        {**good, "verdict": "held"},
        {**good, "checked": {**good["checked"], "done": 0}},  # nothing done, yet "pass"
        {**good, "stopped_by": "SIGTERM"},  # stopped, yet not partial
        {**good, "findings": [{**finding, "extra": 1}]},
        {**good, "findings": [{**finding, "status": "fixed"}]},  # fixed, yet counted
        {k: v for k, v in good.items() if k != "tool"},
        {**good, "findings": [{k: v for k, v in finding.items() if k != "source"}]},
    ]
    for doc in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(doc, SCHEMA)
    assert shape.envelope(checker="campaign", system="impl", findings=[], done=0, requested=3, unit="interleavings",
                          settings={}, checked=[], not_checked=[])["verdict"] == "inconclusive"


def test_campaign_results_validate(tmp_path, capsys):
    clean = tmp_path / "clean"
    assert main(["campaign", "--local", "--system", "model", "--interleavings", "4", "--steps", "20",
                 "--out", str(clean)]) == 0
    doc = _valid(json.loads((clean / "results.json").read_text()))
    assert doc["checker"] == "campaign" and doc["verdict"] == "pass" and doc["findings"] == []
    broken = tmp_path / "broken"
    assert main(["campaign", "--local", "--system", "impl", "--mutant", "generation_not_bumped", "--interleavings", "2",
                 "--steps", "30", "--shrink-seconds", "5", "--out", str(broken)]) == 1
    doc = _valid(json.loads((broken / "results.json").read_text()))
    f = doc["findings"][0]
    assert doc["verdict"] == "fail" and f["kind"] == "always" and f["source"] and f["replay"].startswith("groupcheck")
    assert (broken / f["counterexample"]).is_file()
    capsys.readouterr()


def test_conform_broker_report_validates(tmp_path, capsys):
    out = tmp_path / "broker"
    assert main(["conform", "broker", "--launch", "groupcheck", "--mutant", "sync_accepts_stale_generation",
                 "--schedules", "3", "--out", str(out), "--json"]) in (0, 1)
    doc = _valid(json.loads((out / "report.json").read_text()))
    assert doc["checker"] == "conform-broker" and doc["system"] == "broker:groupcheck (mutant sync_accepts_stale_generation)"
    for f in doc["findings"]:
        assert f["kind"] in ("divergence", "failure") and f["source"] and (out / f["counterexample"]).is_file()
    capsys.readouterr()


def test_conform_client_report_validates(tmp_path, monkeypatch, capsys):
    """A finding of a saved run (aiokafka's commit outside a generation) through the whole report, and
    a schedule whose faults waited for its group (``held_ms``) counted in it."""
    from properties.clients import command
    from properties.clients.judge import judge

    with open(Path(__file__).resolve().parents[1] / "clients" / "findings" / "aiokafka-0.14.0-commit-outside-a-generation.json") as f:
        saved = json.load(f)
    outcome = command.outcome_of(saved)
    found = [x for x in judge(outcome) if x.rule == "commit-carries-current-generation"]

    def run_seed(plan, seed):
        return {"seed": seed, "findings": [x.to_json() for x in found] if seed == 0 else [],
                "outcome": command.outcome_json(outcome) if seed == 0 else None, "faults_injected": 1, "notes": [],
                "held_ms": 2500 if seed == 1 else 0}

    monkeypatch.setattr(command, "run_seed", run_seed)
    out = tmp_path / "client"
    assert main(["conform", "client", "--client", "groupcheck", "--schedules", "2", "--no-shrink", "--out", str(out)]) == 1
    doc = _valid(json.loads((out / "report.json").read_text()))
    f = doc["findings"][0]
    assert doc["checker"] == "conform-client" and f["kind"] == "rule" and f["first_seeds"] == [0] and f["source"]
    assert os.path.isfile(out / f["counterexample"]) and (out / "index.html").is_file()
    assert doc["held"] == {"schedules": 1, "longest_ms": 2500}  # seed 1's faults waited for its group
    assert "1 of the schedules waited for their group to form before their first fault (the longest 2,500 ms)" \
        in (out / "report.md").read_text()
    capsys.readouterr()
