"""--baseline for every checker (issue 36): one loader and one comparison (properties.findings),
new / known / fixed, and one-line errors for a file that is not a report."""

import json

import pytest

from properties import findings as shape
from properties.cli import main
from properties.errors import UsageError


def _finding(signature, status=None):
    return shape.finding(signature=signature, rule=signature.split(":")[0], kind="divergence", status=status,
                         count=1, first_seeds=(3,), summary="s")


def test_findings_are_marked_new_or_known_and_the_ones_gone_are_fixed():
    baseline = {"findings": [_finding("JoinGroup: a"), _finding("Heartbeat: b"), _finding("SyncGroup: c", "fixed")]}
    found = [_finding("JoinGroup: a"), _finding("LeaveGroup: d"), _finding("OffsetCommit: e", "acknowledged")]
    marked = {f["signature"]: f for f in shape.with_baseline(found, baseline)}
    assert marked["JoinGroup: a"]["status"] == "known"
    assert marked["LeaveGroup: d"]["status"] == "new"
    assert marked["OffsetCommit: e"]["status"] == "acknowledged"  # the profile's word stands
    assert marked["Heartbeat: b"]["status"] == "fixed" and marked["Heartbeat: b"]["count"] == 0
    assert "SyncGroup: c" not in marked  # fixed before: not fixed again
    assert shape.verdict_of(list(marked.values()), 1) == "fail"  # new and known still block
    assert shape.with_baseline(found, None) == found


def test_an_older_report_with_a_divergences_list_is_read_too(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"divergences": [{"signature": "failure: the broker closed the connection"}]}))
    marked = shape.with_baseline([], shape.load_baseline(str(path)))
    assert [(f["signature"], f["status"], f["kind"]) for f in marked] == [
        ("failure: the broker closed the connection", "fixed", "failure")]


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    ("{not json", "not a groupcheck report.json"),
    ('{"findings": 3}', "not a groupcheck report.json (no findings list)"),
    ("[1, 2]", "not a groupcheck report.json (no findings list)"),
])
def test_a_baseline_that_is_not_a_report_is_one_usage_error(tmp_path, content, message):
    path = tmp_path / "b.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UsageError, match="--baseline .*b.json: " + message.replace("(", r"\(").replace(")", r"\)")):
        shape.load_baseline(str(path))


@pytest.mark.parametrize("kind", [["conform", "broker", "--bootstrap", "127.0.0.1:9"],
                                  ["conform", "client", "--client", "groupcheck"]])
def test_both_checkers_refuse_a_bad_baseline_before_running_anything(capsys, tmp_path, kind):
    code = main([*kind, "--baseline", str(tmp_path / "missing.json"), "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and "--baseline" in err and "no such file" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()
