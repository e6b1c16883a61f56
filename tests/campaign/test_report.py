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
    cluster = results["clusters"][0]
    assert cluster["property"] == "commit-fencing" and cluster["kind"] == "always"
    assert cluster["count"] == results["violations_by_property"]["commit-fencing"]
    for text in (page, summary):
        assert cluster["signature"] in text and "commit-fencing" in text
        assert cluster["replay"].replace('"', "") in text.replace("&quot;", "")
    assert "Ready-to-paste pytest test" in page and 'class="tl"' in page  # timeline table
    assert "failrow" in page  # the failing event is marked
    doc = json.loads((out / cluster["counterexample"]).read_text())
    assert doc["format"] == "groupcheck-counterexample" and doc["campaign"]["signature"] == cluster["signature"]
    assert len(doc["schedule"]) == cluster["shrunk_events"] < cluster["original_events"]


def test_generated_pytest_test_replays_the_counterexample(built):
    out, results = built
    cluster = results["clusters"][0]
    doc = json.loads((out / cluster["counterexample"]).read_text())
    source = report.pytest_test(doc, cluster)
    namespace: dict = {}
    exec(compile(source, "generated_test.py", "exec"), namespace)
    test = namespace["test_" + cluster["signature"].replace("-", "_")]
    with pytest.raises(AssertionError, match="commit-fencing"):
        test()  # the broken variant is still in CONFIG: the regression test fails, as it should


def test_results_json_fields(built):
    _, results = built
    for key in ("config", "versions", "seed_range", "master", "executors", "interleavings", "steps", "seconds", "rate",
                "violations", "clusters", "coverage", "properties", "histograms"):
        assert key in results
    assert results["interleavings"] == 40 and results["seed_range"]["completed"] == 40
    cov = results["coverage"]
    assert set(cov["group_transitions_never"]).isdisjoint(cov["group_transitions"])
    assert sum(n for _, _, n in results["histograms"]["events"]) == 40
    assert sum(n for _, n in results["histograms"]["generation"]) == 40


def test_baseline_marks_clusters(built, tmp_path):
    out, results = built
    base = dict(results)
    base["clusters"] = [dict(results["clusters"][0])] + [{**results["clusters"][0], "signature": "commit-fencing-00000000"}]
    from datetime import datetime, timezone

    args = argparse.Namespace(clients=3, brokers=3, partitions=6, seed_start=0, interleavings=40)
    totals = Totals()
    plan = {"system": "model", "steps": 40, "faults": "all", "max_faults": 6, "eventually": True, "mutant": None,
            "shrink_seconds": 1.0, "config": results["config"]["model_config"]}
    totals.failures = {results["clusters"][0]["signature"]: {
        "property": "commit-fencing", "count": 3, "seeds": [1],
        "counterexample": json.loads((out / results["clusters"][0]["counterexample"]).read_text())}}
    totals.rows = [(1, 10, 1, "commit-fencing", results["clusters"][0]["signature"], 9)]
    again = report.assemble(campaign_id="b", started=datetime.now(timezone.utc), plan=plan, args=args, totals=totals,
                            seconds=1.0, master="in-process", executors=1, cores=1, tasks=1, task_size=1,
                            versions={}, partial=False, baseline=base, out=tmp_path)
    status = {c["signature"]: c["status"] for c in again["clusters"]}
    assert status == {results["clusters"][0]["signature"]: "known", "commit-fencing-00000000": "fixed"}
