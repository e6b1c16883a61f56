"""``groupcheck conform broker --launch-cmd 'COMMAND {port}'`` and ``--profile FILE.toml`` against
real brokers on loopback: groupcheck's own broker, started by a command line as any other binary
would be, conforms; one that dies is started again and its last output is in the finding; one that
exits at once, or leaves too few partitions, is one usage line; a profile file changes how the
broker is judged."""

import json
import sys

from properties.cli import main

#: groupcheck's broker the way a user would start any other (``groupcheck broker`` is the same program)
BROKER = f"{sys.executable} -m properties.cli broker --port {{port}} --set group.initial.rebalance.delay.ms=0"


def _conform(capsys, tmp_path, *args):
    code = main(["conform", "broker", *args, "--out", str(tmp_path / "report"), "--json", "--no-shrink"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else None), out.err


def test_a_broker_started_by_a_command_conforms(capsys, tmp_path):
    code, summary, _ = _conform(capsys, tmp_path, "--launch-cmd", BROKER + " --partitions 6", "--schedules", "3")
    assert code == 0 and summary["verdict"] == "pass" and summary["conforming"] == 3, summary
    assert summary["target"] == f"--launch-cmd '{BROKER} --partitions 6'" and summary["settings"]["profile"] == "bootstrap"
    assert summary["crashes"] == 0


def test_a_command_that_exits_at_once_is_one_usage_line_with_its_last_output(capsys, tmp_path):
    command = f"{sys.executable} -c \"print('starting'); print('acmed: cannot bind port {{port}}'); exit(3)\""
    code, summary, err = _conform(capsys, tmp_path, "--launch-cmd", command, "--schedules", "3")
    assert code == 2 and summary is None and err.count("\n") == 1, err
    assert err.startswith("groupcheck: error: --launch-cmd '") and "exited with status 3" in err
    port = err.split("127.0.0.1:")[1].split(" ")[0]  # the port groupcheck picked, as the command printed it
    assert err.endswith(f"; its last output line: 'acmed: cannot bind port {port}'\n"), err
    assert not (tmp_path / "report").exists()


def test_a_topic_with_too_few_partitions_is_a_usage_error_saying_what_to_create(capsys, tmp_path):
    code, _, err = _conform(capsys, tmp_path, "--launch-cmd", BROKER, "--schedules", "1")  # num.partitions 4
    assert code == 2 and err.count("\n") == 1
    assert "the topic groupcheck-conform has 4 partitions where the schedules use 6" in err


DYING = '''
import os, sys, threading, time
from properties.cli import main
port, marker = sys.argv[1], sys.argv[2]
if not os.path.exists(marker):  # the first broker dies 3 s after it listens; the next ones live
    open(marker, "w").close()
    def die():
        import socket
        while True:
            try:
                socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        time.sleep(3)
        print("acmed: out of memory, giving up", flush=True)
        os._exit(7)
    threading.Thread(target=die, daemon=True).start()
sys.exit(main(["broker", "--port", port, "--partitions", "6", "--set", "group.initial.rebalance.delay.ms=0"]))
'''


def test_a_broker_that_dies_is_started_again_and_its_last_lines_are_in_the_finding(capsys, tmp_path):
    script = tmp_path / "acmed.py"
    script.write_text(DYING)
    command = f"{sys.executable} {script} {{port}} {tmp_path / 'died-once'}"
    code, summary, _ = _conform(capsys, tmp_path, "--launch-cmd", command, "--schedules", "6")
    assert code == 1 and summary["crashes"] == 1, summary
    (died,) = [f for f in summary["findings"] if "exited with status 7" in f["summary"]]
    assert "acmed: out of memory, giving up" in died["summary"]
    assert summary["conforming"] >= 1  # the schedules after the restart ran against the new process


def test_a_profile_file_changes_the_judgement(capsys, tmp_path):
    # groupcheck's broker numbers generations from 1 and conforms by its own profile; a profile that
    # says it starts from 2 (offset 1) makes its first JoinGroup answer diverge, and one that also
    # acknowledges that divergence lists it as acknowledged, with its reason, instead of as a finding
    signature = "JoinGroup: answered NONE with generation_id 0 where the model allows 1"
    offset = 'name = "acme"\n[generation]\noffset = 1\n'
    acknowledged = offset + f'''[[acknowledged]]
signature = "{signature}"
reason = "acme numbers its first generation 2"
link = "https://example.com/acme/issues/1"
'''
    runs = {}
    for name, text in (("offset", offset), ("acknowledged", acknowledged)):
        profile = tmp_path / f"{name}.toml"
        profile.write_text(text)
        code, summary, _ = _conform(capsys, tmp_path / name, "--launch", "groupcheck", "--profile", str(profile),
                                    "--schedules", "1")
        assert summary["settings"]["profile"] == "acme" and summary["target"] == "--launch groupcheck"
        runs[name] = (code, {f["signature"]: f["status"] for f in summary["findings"]}, summary["acknowledged"])
    code, found, listed = runs["offset"]
    assert code == 1 and signature in found and found[signature] not in ("acknowledged", "fixed") and listed == []
    _, found, listed = runs["acknowledged"]
    assert found[signature] == "acknowledged" and listed == [[signature, "acme numbers its first generation 2",
                                                                   "https://example.com/acme/issues/1"]]


def test_a_counterexample_of_a_launch_cmd_broker_replays_with_its_command_and_profile(capsys, tmp_path):
    """The replay line of a --launch-cmd run is a command replay takes, and --profile judges it as
    the run did: the divergence comes back by the file's profile and not by the broker's own."""
    profile = tmp_path / "acme.toml"
    profile.write_text('name = "acme"\n[generation]\noffset = 1\n')
    command = (f"{sys.executable} -m properties.cli broker --port {{port}} --partitions 6 "
               "--set group.initial.rebalance.delay.ms=0")
    code, summary, _ = _conform(capsys, tmp_path, "--launch-cmd", command, "--profile", str(profile),
                                "--schedules", "1", "--no-shrink")
    assert code == 1
    first = summary["findings"][0]
    path = str(tmp_path / "report" / first["counterexample"])
    assert "--launch-cmd" in first["replay"]
    assert main(["replay", path, "--launch-cmd", command, "--profile", str(profile)]) == 1
    assert "reproduced" in capsys.readouterr().out
    assert main(["replay", path, "--launch-cmd", command]) == 0  # by the default profile it conforms
    assert main(["replay", path, "--launch-cmd", command, "--bootstrap", "127.0.0.1:9"]) == 2


def test_a_broker_that_forgets_what_it_persisted_on_a_restart_is_caught():
    """``--faults`` restarts a ``--launch-cmd`` broker whose command has ``{dir}`` on that folder.
    groupcheck's broker keeps everything in memory (its ``--trace`` file in ``{dir}`` is all it
    writes there), so after the restart the group and the offsets committed before it are gone:
    the judge, which reloads the group from what Kafka would have persisted, catches it."""
    from tests.helpers.schedules import RESTART
    from properties.conform.run import run_schedule
    from properties.conform.schedule import Schedule
    from properties.conform.target import PARTITIONS, TOPIC
    from properties.live import launch_cmd
    from properties import targets

    broker = launch_cmd.start(BROKER + " --partitions 6 --trace {dir}/trace.jsonl", {TOPIC: PARTITIONS})
    try:
        assert broker.restartable
        result = run_schedule((broker.host, broker.port), Schedule.from_json(RESTART), "forgets",
                              targets.profile_for("groupcheck"), restart=broker.restart)
    finally:
        broker.stop()
    assert result.failure is None
    signatures = result.signatures()
    assert any(s.startswith("OffsetFetch: answered NONE with a committed offset missing") for s in signatures), signatures
    notes = [e.get("note", "") for e in result.trace]
    assert any(n.startswith("restart: the broker killed") for n in notes)


def test_a_command_without_a_data_folder_is_not_restarted():
    """Without ``{dir}`` groupcheck cannot tell where the broker keeps its data: its restart steps
    are skipped (and the trace says so), never judged as a broker that lost it."""
    from tests.helpers.schedules import RESTART
    from properties import targets
    from properties.conform.run import run_schedule
    from properties.conform.schedule import Schedule
    from properties.conform.target import Broker

    broker = Broker(targets.command_target(BROKER + " --partitions 6", None))
    try:
        assert broker.restart is None and broker.pause is not None
        result = run_schedule(broker.address, Schedule.from_json(RESTART), "not-restarted",
                              targets.profile_for("groupcheck"), restart=broker.restart)
    finally:
        broker.stop()
    assert result.divergence is None and result.failure is None, result.signatures()
    notes = [e.get("note", "") for e in result.trace]
    assert "restart skipped: not a broker groupcheck started with storage it keeps" in notes
