"""The campaign report: index.html is self-contained (works offline), the files agree with each
other, and the generated regression test really replays the counterexample.

The report is built in-process (``groupcheck campaign --local``) from a broken model variant, so
that it has a cluster to render, without starting Spark.
"""

from __future__ import annotations

import argparse
import json
import re

import pytest

from properties.campaign import spark as campaign
from properties.campaign import report
from properties.campaign.spark import Totals, make_plan, run_range


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A report with one cluster: the commit_skips_fencing variant of the model."""
    out = tmp_path_factory.mktemp("report")
    args = argparse.Namespace(system="model", faults="all", clients=3, brokers=3, partitions=6, mutant=None,
                              crash_once=None, steps=40, max_faults=6, eventually=True, shrink_seconds=30.0,
                              seed_start=0, interleavings=40)
    plan = make_plan(args)
    plan["config"]["broken"] = ["commit_skips_fencing"]
    totals = Totals()
    for start in range(0, 40, 10):
        totals.add(run_range(plan, start, start + 10))
    from datetime import datetime, timezone

    results = report.assemble(campaign_id="test-campaign", started=datetime.now(timezone.utc), plan=plan, args=args,
                              totals=totals, seconds=1.0, master="in-process", executors=1, cores=1, tasks=4,
                              task_size=10, versions=campaign.versions(), partial=False, baseline=None, out=out)
    report.write(out, results, totals)
    return out, results


_EXTERNAL = [
    re.compile(r"""\b(?:src|href|xlink:href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//""", re.I),
    re.compile(r"<\s*script\b", re.I),
    re.compile(r"<\s*link\b", re.I),
    re.compile(r"<\s*iframe\b", re.I),
    re.compile(r"@import", re.I),
    re.compile(r"url\s*\(", re.I),
]


def test_html_is_self_contained(built):
    out, results = built
    page = (out / "index.html").read_text()
    for pattern in _EXTERNAL:
        assert not pattern.search(page), f"external reference: {pattern.pattern}"
    assert "http://" not in page and "https://" not in page
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert page.count("<svg") >= 4  # the plots are inline SVG


def test_self_contained_check_has_teeth():
    for bad in ('<img src="https://example.org/x.png">', "<script>1</script>", '<link rel=stylesheet href="a.css">',
                "<style>body{background:url(x.png)}</style>", '<a href="//cdn.example.org/x">'):
        assert any(p.search(bad) for p in _EXTERNAL), bad


def test_report_shows_the_cluster(built):
    out, results = built
    page = (out / "index.html").read_text()
    summary = (out / "summary.md").read_text()
    assert results["verdict"] == "fail"
    cluster = results["findings"][0]
    assert cluster["rule"] == "commit-fencing" and cluster["kind"] == "always"
    assert cluster["count"] == results["violations_by_property"]["commit-fencing"]
    for text in (page, summary):
        assert cluster["signature"] in text and "commit-fencing" in text
        assert cluster["replay"].replace('"', "") in text.replace("&quot;", "")
    assert "Ready-to-paste pytest test" in page and 'class="tl"' in page  # timeline table
    assert "failrow" in page  # the failing event is marked
    doc = json.loads((out / cluster["counterexample"]).read_text())
    assert doc["format"] == "groupcheck-counterexample" and doc["campaign"]["signature"] == cluster["signature"]
    assert len(doc["schedule"]) == cluster["shrunk"]["events"] < cluster["shrunk"]["original_events"]


def test_generated_pytest_test_replays_the_counterexample(built):
    out, results = built
    cluster = results["findings"][0]
    doc = json.loads((out / cluster["counterexample"]).read_text())
    source = report.pytest_test(doc, cluster)
    namespace: dict = {}
    exec(compile(source, "generated_test.py", "exec"), namespace)
    test = namespace["test_" + cluster["signature"].replace("-", "_")]
    with pytest.raises(AssertionError, match="commit-fencing"):
        test()  # the broken variant is still in CONFIG: the regression test fails, as it should


def test_results_json_fields(built):
    _, results = built
    for key in ("settings", "versions", "seed_range", "master", "executors", "interleavings", "steps", "seconds", "rate",
                "violations", "findings", "coverage", "properties", "histograms"):
        assert key in results
    assert results["interleavings"] == 40 and results["seed_range"]["completed"] == 40
    cov = results["coverage"]
    assert set(cov["group_transitions_never"]).isdisjoint(cov["group_transitions"])
    assert sum(n for _, _, n in results["histograms"]["events"]) == 40
    assert sum(n for _, n in results["histograms"]["generation"]) == 40


@pytest.mark.parametrize("older", [False, True], ids=["baseline", "older-format-baseline"])
def test_baseline_marks_findings(built, tmp_path, older):
    """--baseline marks each finding new or known and lists the baseline's that are gone as fixed;
    a results.json from before the one report shape (its ``clusters``) is read as well."""
    out, results = built
    base = dict(results)
    base["findings"] = [dict(results["findings"][0])] + [{**results["findings"][0], "signature": "commit-fencing-00000000"}]
    if older:
        base = {"format": "groupcheck-campaign", "version": 1, "clusters": [
            {"signature": f["signature"], "property": f["rule"], "kind": f["kind"], "count": f["count"],
             "example_seeds": f["first_seeds"], "message": f["summary"], "status": None} for f in base["findings"]]}
    from datetime import datetime, timezone

    args = argparse.Namespace(clients=3, brokers=3, partitions=6, seed_start=0, interleavings=40)
    totals = Totals()
    plan = {"system": "model", "steps": 40, "faults": "all", "max_faults": 6, "eventually": True, "mutant": None,
            "shrink_seconds": 1.0, "config": results["settings"]["model_config"]}
    totals.failures = {results["findings"][0]["signature"]: {
        "property": "commit-fencing", "count": 3, "seeds": [1],
        "counterexample": json.loads((out / results["findings"][0]["counterexample"]).read_text())}}
    totals.rows = [(1, 10, 1, "commit-fencing", results["findings"][0]["signature"], 9)]
    again = report.assemble(campaign_id="b", started=datetime.now(timezone.utc), plan=plan, args=args, totals=totals,
                            seconds=1.0, master="in-process", executors=1, cores=1, tasks=1, task_size=1,
                            versions={}, partial=False, baseline=base, out=tmp_path)
    status = {c["signature"]: c["status"] for c in again["findings"]}
    assert status == {results["findings"][0]["signature"]: "known", "commit-fencing-00000000": "fixed"}


# -- what was checked (issue 11, item 3) -----------------------------------------------------------

@pytest.fixture(scope="module")
def mutant_report(tmp_path_factory):
    """A report of 8 interleavings of the implementation with the mutant generation_not_bumped:
    every interleaving fails impl-matches-model at the first completed join, so no other property
    is checked after that step."""
    from datetime import datetime, timezone

    out = tmp_path_factory.mktemp("mutant-report")
    args = argparse.Namespace(system="impl", faults="all", clients=3, brokers=3, partitions=6, mutant="generation_not_bumped",
                              crash_once=None, steps=40, max_faults=6, eventually=True, shrink_seconds=5.0,
                              seed_start=0, interleavings=8)
    plan = make_plan(args)
    totals = Totals()
    totals.add(run_range(plan, 0, 8))  # run_range applies the plan's mutant
    results = report.assemble(campaign_id="mutant", started=datetime.now(timezone.utc), plan=plan, args=args,
                              totals=totals, seconds=1.0, master="in-process", executors=1, cores=1, tasks=1,
                              task_size=8, versions={}, partial=False, baseline=None, out=out)
    report.write(out, results, totals)
    return out, results


def test_verdicts_never_say_held_for_what_was_not_checked(mutant_report):
    out, results = mutant_report
    verdicts = {p["property"]: p for p in results["properties"] if p["kind"] != "sometimes"}
    assert verdicts["impl-matches-model"]["verdict"] == "violated" and verdicts["impl-matches-model"]["failed_in"] == 8
    for name, p in verdicts.items():
        assert p["failed_in"] + p["held_in"] + p["not_checked_in"] == 8, name
        if name != "impl-matches-model":
            # every run stopped at impl-matches-model's failure: nothing else was checked to the end
            assert p["verdict"] == "not checked" and p["held_in"] == 0 and p["not_checked_in"] == 8, name
            assert "held" != p["verdict"]
    always = verdicts["commit-fencing"]
    assert always["checked"] == "no interleaving checked it to the end; not checked after the first failure in 8"
    assert verdicts["eventually-stable"]["checked"] == ("never judged: another property failed first; "
                                                        "not judged in 8 (stopped by an earlier failure)")
    summary, page = (out / "summary.md").read_text(), (out / "index.html").read_text()
    assert "not checked after the first failure in 8" in summary and "not checked after the first failure in 8" in page
    console = report.console_summary(results, out)
    assert "violated: impl-matches-model (in 8)" in console and "not checked:" in console
    assert "held:" not in console


def test_the_console_says_when_shrinking_found_nothing_shorter():
    """Campaign seed 1,002,496's eventually-stable failure came back 7,306 events long (its re-runs
    replay a settle phase) from 3,756: the console called that "shrunk to 7306 events"."""
    assert report._size({"events": 40, "original_events": 512}) == "shrunk to 40 events"
    assert report._size({"events": 40, "original_events": None}) == "shrunk to 40 events"
    assert report._size({"events": 7306, "original_events": 3756}) == "not shorter: 7,306 events, 3,756 as it failed"
    assert report._size({"events": 3756, "original_events": 3756}) == "not shorter: 3,756 events, 3,756 as it failed"


def test_the_headline_names_each_violated_propertys_kind():
    """A campaign whose only failure was eventually-stable printed "PASS: ... 1 property violated:
    eventually-stable" (campaign seed 1,002,496): the line now says why that is a pass."""
    run = {"interleavings": 50000, "steps": 24897839, "seconds": 1200.0, "rate": 41.7, "master": "local[*]",
           "partial": False, "violations": 1}
    eventually = [{"property": "eventually-stable", "kind": "eventually", "verdict": "violated"},
                  {"property": "leader-is-member", "kind": "always", "verdict": "held"}]
    line = report._headline(dict(run, properties=eventually))
    assert line.endswith("1 failing interleavings, 1 property violated: eventually-stable (eventually) — "
                         "no always property failed, and only those fail the verdict")
    both = eventually + [{"property": "commit-fencing", "kind": "always", "verdict": "violated"}]
    line = report._headline(dict(run, properties=both, violations=3))
    assert line.endswith("2 properties violated: eventually-stable (eventually), commit-fencing (always)")
    assert report._headline(dict(run, properties=eventually[1:], violations=0)).endswith("no property failed")


def test_verdict_arithmetic():
    coverage = {"sometimes": {}}
    failed = {"commit-fencing": 2, "impl-matches-model": 3, "eventually-requests-complete": 4}
    rows = {p["property"]: p for p in report.property_verdicts("impl", 100, failed, True, coverage, [])}
    assert (rows["commit-fencing"]["held_in"], rows["commit-fencing"]["not_checked_in"]) == (95, 3)
    assert rows["leader-is-member"]["verdict"] == "held where checked"
    assert (rows["leader-is-member"]["held_in"], rows["leader-is-member"]["not_checked_in"]) == (95, 5)
    # judged in order: coordinator-found before requests-complete before stable
    assert rows["eventually-coordinator-found"]["not_checked_in"] == 5
    assert rows["eventually-requests-complete"]["held_in"] == 91
    assert rows["eventually-stable"]["not_checked_in"] == 9 and rows["eventually-stable"]["held_in"] == 91
    clean = {p["property"]: p for p in report.property_verdicts("model", 10, {}, True, coverage, [])}
    assert {p["verdict"] for p in clean.values() if p["kind"] != "sometimes"} == {"held"}
    without_settle = {p["property"]: p for p in report.property_verdicts("model", 10, {}, False, coverage, [])}
    assert without_settle["eventually-stable"]["verdict"] == "not checked"


def test_every_property_shows_its_statement(mutant_report):
    out, results = mutant_report
    from properties.systems.differential import AGREEMENT

    summary, page = (out / "summary.md").read_text(), (out / "index.html").read_text()
    for p in results["properties"]:
        assert p["statement"]
    for text in (summary, page.replace("&#x27;", "'")):
        assert AGREEMENT.statement[:80] in text
        assert report.BY_NAME["commit-fencing"].statement[:80] in text


def test_coverage_agrees_with_the_sometimes_counters(mutant_report):
    """The coverage lists never call a state unreached that the catalogue's own counters saw (the
    failing step counts too: the model reached its state there)."""
    _, results = mutant_report
    cov = results["coverage"]
    for state in cov["group_states_never"]:
        assert cov["sometimes"].get(f"group-state-{state}", 0) == 0, state
    for state in cov["member_states_never"]:
        assert cov["sometimes"].get(f"member-state-{state}", 0) == 0, state
    assert "CompletingRebalance" not in cov["group_states_never"]  # every run failed on reaching it
    assert "UNJOINED" not in cov["member_states_never"]  # where every consumer starts


# -- long counterexamples (issue 11, item 4) ---------------------------------------------------------


def _written_report(args, broken: str, start: int, stop: int, out, campaign_id: str, versions: dict):
    """Seeds start..stop of the campaign *args* describe, against the broken model variant
    *broken*, assembled and written to *out* as one in-process task: the results."""
    from datetime import datetime, timezone

    plan = make_plan(args)
    plan["config"]["broken"] = [broken]
    totals = Totals()
    totals.add(run_range(plan, start, stop))
    results = report.assemble(campaign_id=campaign_id, started=datetime.now(timezone.utc), plan=plan, args=args,
                              totals=totals, seconds=1.0, master="in-process", executors=1, cores=1, tasks=1,
                              task_size=stop - start, versions=versions, partial=False, baseline=None, out=out)
    report.write(out, results, totals)
    return results


@pytest.fixture(scope="module")
def long_report(tmp_path_factory):
    """A report whose counterexample was not shrunk (budget 0): the model variant
    disconnect_keeps_unsent fails seed 1 after 18,137 events."""
    out = tmp_path_factory.mktemp("long-report")
    args = argparse.Namespace(system="model", faults="all", clients=3, brokers=3, partitions=6, mutant=None,
                              crash_once=None, steps=1_000_000, max_faults=6, eventually=False, shrink_seconds=0.0,
                              seed_start=1, interleavings=1)
    return out, _written_report(args, "disconnect_keeps_unsent", 1, 2, out, "long", {})


def test_long_counterexample_renders_bounded(long_report):
    out, results = long_report
    cluster = results["findings"][0]
    assert cluster["shrunk"]["events"] > 10_000  # not shrunk at all (18,137 events today)
    doc = json.loads((out / cluster["counterexample"]).read_text())
    assert len(doc["schedule"]) == cluster["shrunk"]["events"]  # the full data stays in the file
    assert len(doc["timeline"]) == report.TIMELINE_ROWS and doc["timeline"][-1]["i"] == doc["failing_step"]
    page = (out / "index.html").read_text()
    summary = (out / "summary.md").read_text()
    # a row of the timeline costs ~200 bytes of HTML: the whole one made a 3.8 MB page
    assert len(page) < 400_000 and len(summary) < 100_000
    elided = f"{cluster['shrunk']['events'] - report.TIMELINE_ROWS:,} earlier events not shown"
    assert elided in page and cluster["counterexample"] in page
    assert f"the {cluster['shrunk']['events'] - report.TIMELINE_ROWS:,} before them are in" in summary
    assert "failrow" in page  # the failing step is in the window


def test_regression_test_of_a_long_schedule_reads_the_file(long_report, tmp_path):
    import shutil

    out, results = long_report
    cluster = results["findings"][0]
    doc = json.loads((out / cluster["counterexample"]).read_text())
    source = report.pytest_test(doc, cluster)
    assert len(source) < 5_000 and "load(" in source
    shutil.copy(out / cluster["counterexample"], tmp_path / f"{cluster['signature']}.json")
    namespace: dict = {"__file__": str(tmp_path / "test_generated.py")}
    exec(compile(source, "test_generated.py", "exec"), namespace)
    with pytest.raises(AssertionError, match="disconnect-fails-unsent"):
        namespace["test_" + cluster["signature"].replace("-", "_")]()


def test_proof_table_says_when_and_for_which_code(tmp_path, monkeypatch):
    """The report's proof table names its date and commit and says whether it is this code's."""
    from properties.campaign import report as report_module

    here = {"name": "groupcheck", "version": "x", "commit": "a" * 40, "dirty": False}
    monkeypatch.setattr(report_module, "provenance", lambda: here)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    doc = {"format": 1, "generated_at": "2026-11-23T20:00:00Z", "complete": True,
           "tool": {"name": "groupcheck", "version": "x", "commit": "a" * 40, "dirty": False},
           "rows": [{"property": "p", "bound": "b", "result": "proved", "seconds": 1.0}]}
    (tmp_path / "reports" / "proofs-latest.json").write_text(json.dumps(doc))
    table = report_module.proofs_table()
    assert table["current"] is True and table["generated_at"] == "2026-11-23T20:00:00Z"
    assert report_module.proofs_provenance(table).startswith("Proved 2026-11-23T20:00:00Z at commit aaaaaaaaaaaa: the code")
    doc["tool"]["commit"] = "b" * 40
    (tmp_path / "reports" / "proofs-latest.json").write_text(json.dumps(doc))
    stale = report_module.proofs_table()
    assert stale["current"] is False and "NOT the code this campaign ran" in report_module.proofs_provenance(stale)


def test_results_and_counterexamples_record_settings_and_commit(built):
    """Every result says which code produced it and every setting of the world, by Kafka's names."""
    from properties.provenance import provenance

    out, results = built
    assert results["tool"] == provenance() and results["tool"]["name"] == "groupcheck"
    assert results["settings"]["kafka"]["session.timeout.ms"] == 6000 and "partition.assignment.strategy" in results["settings"]["kafka"]
    files = list((out / "counterexamples").glob("*.json"))
    assert files, "the built campaign has a counterexample"
    document = json.loads(files[0].read_text())
    assert document["tool"]["commit"] == provenance()["commit"] and document["settings"] == results["settings"]["kafka"]


def test_a_swarm_report_shows_its_worlds(tmp_path):
    """Swarm worlds (the default campaign): the report has the Worlds table, and a cluster names
    the world its counterexample was drawn in, which the counterexample file records."""
    args = argparse.Namespace(system="model", world="swarm", faults=None, clients=None, brokers=None, partitions=None,
                              mutant=None, crash_once=None, steps=None, max_faults=None, eventually=True,
                              shrink_seconds=10.0, seed_start=0, interleavings=30)
    results = _written_report(args, "commit_skips_fencing", 0, 30, tmp_path, "swarm", campaign.versions())
    page, summary = (tmp_path / "index.html").read_text(), (tmp_path / "summary.md").read_text()
    assert results["settings"]["world"] == "swarm" and results["settings"]["clients"] == "swarm"
    assert sum(n for n, _ in results["regimes"]["join"].values()) == 30
    for text in (page, summary):
        assert "Worlds (swarm)" in text
    assert results["findings"], "commit_skips_fencing should be caught in 30 swarm worlds"
    cluster = results["findings"][0]
    doc = json.loads((tmp_path / cluster["counterexample"]).read_text())
    regimes = " ".join(f"{k}={v}" for k, v in doc["world"]["regimes"].items())
    assert doc["config"]["clients"] == int(doc["world"]["regimes"]["clients"])
    assert regimes in summary and regimes in page
    for text in (page, summary):  # the verdict and the findings open the report; the worlds come after them
        assert text.index("FAIL") < text.index(cluster["signature"]) < text.index("Worlds (swarm)")


def test_the_report_shows_both_error_path_matrices(built):
    """Issue 37: the summary and the page show the client's and the coordinator's matrices with the
    headline, the cells reached with their counts, and results.json every cell with its count or
    why no schedule reaches it."""
    from properties import error_paths

    out, results = built
    paths = results["coverage"]["error_paths"]
    assert paths["coordinator"]["reached"] > 0
    summary = (out / "summary.md").read_text()
    page = (out / "index.html").read_text()
    assert "## Error paths" in summary and error_paths.headline(paths) in summary
    reached = [r for r in paths["coordinator"]["rows"] if r["count"]]
    assert f"| {reached[0]['cell']} | {reached[0]['count']:,} | {reached[0]['first_seed']} |" in summary
    assert all(0 <= r["first_seed"] < 40 for r in reached)  # the campaign's seeds
    assert "<h2>Error paths</h2>" in page and "The coordinator&#x27;s request paths" in page
    assert all(r["unreachable"] is None or r["unreachable"] for r in paths["client"]["rows"])
