"""``--junit FILE``: a report (the one shape) as JUnit XML that CI systems parse -- a failure per
blocking finding, skipped for fixed or acknowledged ones, and a test case for the run itself that
is never a pass when nothing (or not everything) was checked."""

import xml.etree.ElementTree as ET

import pytest

from properties import findings as shape
from properties.cli import main
from properties.junit import junit_xml


def _report(findings, done=10, requested=10, partial=False, stopped_by=None):
    report = shape.envelope(checker="conform-broker", system="broker:tansu", findings=findings, done=done,
                            requested=requested, unit="schedules", settings={}, checked=["every answer"],
                            not_checked=[], partial=partial, stopped_by=stopped_by)
    return ET.fromstring(junit_xml(report).split("?>", 1)[1])


def _finding(signature, status=None, kind="divergence"):
    return shape.finding(signature=signature, rule="JoinGroup", kind=kind, count=3, first_seeds=(7, 2),
                         summary=f"{signature} <&> happened", status=status, source="GroupCoordinator.handleJoinGroup",
                         counterexample="counterexamples/01.json", replay="groupcheck replay counterexamples/01.json")


def test_a_passing_run_is_one_passing_test_case():
    suite = _report([])
    assert suite.attrib["tests"] == "1" and suite.attrib["failures"] == "0" and suite.attrib["errors"] == "0"
    (case,) = suite
    assert case.attrib["name"] == "checked" and case.find("failure") is None and case.find("error") is None
    assert "10 of 10 schedules checked" in case.find("system-out").text


def test_each_blocking_finding_fails_with_its_replay_and_the_others_are_skipped():
    suite = _report([_finding("JoinGroup: no answer"), _finding("Heartbeat: known", status="acknowledged")])
    assert (suite.attrib["tests"], suite.attrib["failures"], suite.attrib["skipped"]) == ("3", "2", "1")
    cases = {c.attrib["name"]: c for c in suite}
    failure = cases["JoinGroup: no answer"].find("failure")
    assert failure.attrib["message"] == "JoinGroup: no answer <&> happened"  # escaped and read back
    assert "replay: groupcheck replay counterexamples/01.json" in failure.text and "first seeds: 2, 7" in failure.text
    assert cases["Heartbeat: known"].find("skipped").attrib["message"] == "acknowledged by the system's profile"
    assert cases["checked"].find("failure") is not None  # the verdict is fail


@pytest.mark.parametrize("done, partial, stopped_by", [(0, False, None), (4, True, "SIGTERM")])
def test_a_run_that_checked_nothing_or_not_everything_is_an_error_not_a_pass(done, partial, stopped_by):
    suite = _report([], done=done, partial=partial, stopped_by=stopped_by)
    (case,) = suite
    assert suite.attrib["errors"] == "1" and case.find("error") is not None
    assert case.find("system-out") is None


def test_a_junit_path_that_is_a_folder_is_one_usage_error_before_anything_runs(tmp_path, capsys):
    code = main(["conform", "broker", "--launch", "groupcheck", "--schedules", "1", "--junit", str(tmp_path),
                 "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and f"--junit {tmp_path}: a folder" in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()
