"""``groupcheck campaign --system client:NAME``: client schedules as Spark tasks, each schedule
with its own broker, merged into the same report as ``groupcheck conform client``."""

import json

from properties.cli import main


def test_a_client_campaign_on_embedded_spark_runs_every_schedule_and_reports(tmp_path, capsys):
    out = tmp_path / "campaign"
    code = main(["campaign", "--system", "client:groupcheck", "--interleavings", "2", "--clients", "2",
                 "--task-size", "1", "--master", "local[2]", "--out", str(out), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["verdict"] == "pass" and summary["schedules"] == 2
    assert summary["settings"]["master"].startswith("local[2") and summary["system"] == "client:groupcheck"
    assert (out / "report.md").exists() and json.loads((out / "report.json").read_text())["schedules"] == 2


def test_a_client_campaign_refuses_what_it_cannot_run(capsys):
    assert main(["campaign", "--system", "client:nope", "--interleavings", "1"]) == 2
    assert "--system client:nope: not a system groupcheck knows" in capsys.readouterr().err
    assert main(["campaign", "--system", "client:groupcheck", "--search", "guided", "--interleavings", "1"]) == 2
    assert "--search guided" in capsys.readouterr().err
    assert main(["campaign", "--system", "client:kafka-python", "--mutant", "heartbeat_while_unjoined",
                 "--interleavings", "1"]) == 2
    assert "use --client groupcheck" in capsys.readouterr().err
