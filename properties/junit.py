"""A report (the one shape, :mod:`properties.findings`) as JUnit XML, for CI systems that show test
results (issue 36: ``--junit FILE`` of ``conform broker`` and ``conform client``).

One ``<testsuite>`` named after the checker and the system. One ``<testcase>`` per finding, named
by its signature and classed by its rule: a blocking finding (:func:`properties.findings.blocking`)
is a ``<failure>`` whose text carries the summary, what was observed and allowed, the Kafka source,
the first seeds, the counterexample file and the replay command; a fixed or acknowledged one is
``<skipped>`` with why. One more test case, ``checked``, stands for the run itself: it passes when
the verdict is pass, fails when it is fail, and is an ``<error>`` when the run was inconclusive or
partial (nothing, or not everything, was checked: never a pass).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from properties.findings import blocking


def junit_xml(report: dict) -> str:
    """*report* as a JUnit XML document (a string)."""
    findings = report.get("findings") or []
    checked = report.get("checked") or {}
    suite = ET.Element("testsuite", name=f"groupcheck {report['checker']} {report['system']}")
    failures = errors = skipped = 0
    for f in findings:
        case = ET.SubElement(suite, "testcase", name=f["signature"], classname=f"{report['checker']}.{f['rule']}")
        if blocking(f):
            failures += 1
            failure = ET.SubElement(case, "failure", message=f["summary"], type=f["kind"])
            failure.text = _details(f)
        else:
            skipped += 1
            why = "fixed since the baseline" if f["status"] == "fixed" else (
                "acknowledged by the system's profile" if f["status"] == "acknowledged" else f"{f['kind']} finding, shown")
            ET.SubElement(case, "skipped", message=why).text = _details(f)
    run = ET.SubElement(suite, "testcase", name="checked", classname=f"{report['checker']}.run")
    what = "\n".join(checked.get("what") or [])
    summary = f"{checked.get('done', 0)} of {checked.get('requested', 0)} {checked.get('unit', 'runs')} checked"
    if report["verdict"] == "inconclusive" or report.get("partial"):
        errors += 1
        reason = report.get("stopped_by") or report.get("failure") or "not everything requested was checked"
        ET.SubElement(run, "error", message=f"{report['verdict']}: {summary} ({reason})").text = what
    elif report["verdict"] == "fail":
        failures += 1
        ET.SubElement(run, "failure", message=f"fail: {summary}", type="verdict").text = what
    else:
        ET.SubElement(run, "system-out").text = f"{summary}\n{what}"
    suite.set("tests", str(len(findings) + 1))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def _details(f: dict) -> str:
    lines = [f["summary"]]
    for label, key in (("observed", "observed"), ("allowed", "allowed"), ("source", "source")):
        if f.get(key) not in (None, "", []):
            lines.append(f"{label}: {f[key]}")
    lines.append(f"count: {f['count']}; first seeds: {', '.join(map(str, f['first_seeds'])) or '-'}")
    if f.get("counterexample"):
        lines.append(f"counterexample: {f['counterexample']}")
    if f.get("replay"):
        lines.append(f"replay: {f['replay']}")
    return "\n".join(lines)


def check_path(path: str) -> None:
    """UsageError naming ``--junit`` unless *path* can be written (checked before the run starts)."""
    from properties.errors import UsageError

    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"--junit {path}: a folder; give a file name (e.g. {os.path.join(path, 'junit.xml')})")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--junit {path}: cannot make its folder ({e.strerror or e})") from None
    if not os.access(folder, os.W_OK):
        raise UsageError(f"--junit {path}: its folder {folder} is not writable")


def write(report: dict, path: str) -> None:
    """Write *report* to *path* as JUnit XML (its folder created)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(junit_xml(report))
