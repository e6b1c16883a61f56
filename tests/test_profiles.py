"""Broker profiles as TOML files (properties.profiles): the built-in brokers' files hold exactly the
values their profiles had in Python, a file with every key reads into every field, and each mistake
in a file is one line naming the file and the key."""

import attrs
import pytest

from properties import profiles, targets
from properties.cli import main
from properties.errors import UsageError
from properties.profiles import Profile

# The profiles as properties/targets.py wrote them in Python before they became files (commit
# 25c47ea), reasons and all: the files must say exactly this.
BEFORE = {
    "groupcheck": Profile("groupcheck"),
    "kafka": Profile("kafka"),
    "bootstrap": Profile("bootstrap"),
    "tansu": Profile(
        "tansu", generation_offset=-1,
        acknowledged=(("JoinGroup: answered NONE with generation_id 0 where the model allows 1",
                       "Tansu numbers generations from 0; Kafka's GroupMetadata.initNextGeneration makes the "
                       "first one 1. Harmless to clients; the profile translates Tansu's numbers (offset -1) "
                       "so the search goes on past it."),)),
    "rdkafka-mock": Profile(
        "rdkafka-mock",
        caps=(("JoinGroup", 3), ("SyncGroup", 3), ("Heartbeat", 3), ("LeaveGroup", 2), ("OffsetCommit", 7)),
        caps_why="the mock advertises the flexible versions (JoinGroup v6, SyncGroup v4+, Heartbeat v4, "
                 "LeaveGroup v3+, OffsetCommit v8+) but its handlers read them as the older layouts "
                 "(rdkafka_mock_handlers.c, rd_kafka_mock_handle_JoinGroup: ProtocolCnt with "
                 "rd_kafka_buf_read_i32, not a compact array): a JoinGroup v6 is a parse error and the "
                 "connection is closed. Capped at the last non-flexible version of each API, and JoinGroup "
                 "at v3: at v4 and v5 the mock parks a new member's JoinGroup instead of answering "
                 "MEMBER_ID_REQUIRED (KIP-394), which stops every schedule at its first step.",
        generation_offset=1,
        acknowledged=(("JoinGroup: answered NONE with generation_id 2 where the model allows 1",
                       "the mock numbers its first generation 2; Kafka's GroupMetadata.initNextGeneration "
                       "makes it 1. The profile translates the mock's numbers (offset +1) so the search "
                       "goes on."),
                      ("JoinGroup: no answer where the model allows MEMBER_ID_REQUIRED",
                       "JoinGroup v4/v5 without a member id: the mock parks it; Kafka answers "
                       "MEMBER_ID_REQUIRED (GroupCoordinator.doNewMemberJoinGroup, requireKnownMemberId). "
                       "Found with the cap at v5; the cap at v3 goes past it."),)),
}


def _without_links(profile: Profile) -> Profile:
    return attrs.evolve(profile, acknowledged_links=())


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_the_built_in_files_hold_the_profiles_the_code_held(name):
    loaded = profiles.builtin(name)
    assert _without_links(loaded) == BEFORE[name]
    # every acknowledged divergence has a link now, and only those
    assert [s for s, _ in loaded.acknowledged_links] == [s for s, _ in loaded.acknowledged]
    assert all(link.startswith("https://") for _, link in loaded.acknowledged_links)


def test_the_registry_takes_its_brokers_profiles_from_the_files():
    for name in ("groupcheck", "tansu", "rdkafka-mock", "bootstrap"):
        assert _without_links(targets.get(targets.BROKER, name, "--launch" if name != "bootstrap" else "x").profile) \
            == BEFORE[name]
    for name, java in (("kafka:3.9", False), ("kafka:3.9-new-coordinator", True), ("kafka:4.1", True)):
        assert targets.get(targets.BROKER, name, "--launch").profile == attrs.evolve(
            BEFORE["kafka"], name=name, new_group_coordinator=java)
    assert set(profiles.builtin_names()) == set(BEFORE)


ACME = '''
name = "acme"
[session]
min_ms = 1000
max_ms = 600000
timers_min_ms = 500
[rebalance]
initial_delay_ms = 0
[generation]
offset = -1
[versions]
JoinGroup = 5
OffsetCommit = 7
reason = "acme 2.3 reads JoinGroup v6+ as v5"
[timing]
answer_window_ms = 400
timer_tolerance_ms = 300
[coordinator]
follows = "java"
[[acknowledged]]
signature = "JoinGroup: answered NONE with generation_id 0 where the model allows 1"
reason = "acme numbers generations from 0"
link = "https://example.com/acme/issues/12"
'''


def test_a_file_with_every_key_reads_into_every_field(tmp_path):
    path = tmp_path / "acme-broker.toml"
    path.write_text(ACME)
    assert profiles.load(str(path)) == Profile(
        "acme", min_session_timeout_ms=1000, max_session_timeout_ms=600000, initial_rebalance_delay_ms=0,
        caps=(("JoinGroup", 5), ("OffsetCommit", 7)), caps_why="acme 2.3 reads JoinGroup v6+ as v5",
        generation_offset=-1, timers_min_session_timeout_ms=500,
        acknowledged=(("JoinGroup: answered NONE with generation_id 0 where the model allows 1",
                       "acme numbers generations from 0"),),
        new_group_coordinator=True, answer_window_ms=400, timer_tolerance_ms=300,
        acknowledged_links=(("JoinGroup: answered NONE with generation_id 0 where the model allows 1",
                             "https://example.com/acme/issues/12"),))


def test_an_empty_file_is_kafkas_defaults_named_after_the_file(tmp_path):
    path = tmp_path / "plain.toml"
    path.write_text("# nothing set\n")
    assert profiles.load(str(path)) == Profile("plain")
    assert Profile("plain").answer_window_ms == 250 and Profile("plain").timer_tolerance_ms == 250


ACK = '[[acknowledged]]\nsignature = "S"\nreason = "why"\nlink = "https://example.com/1"\n'


@pytest.mark.parametrize("text, message", [
    ('[session]\nmin_ms = "6s"\n', 'session.min_ms: expected an integer, got "6s"'),
    ('[session]\nmin_ms = 7000\nmax_ms = 6000\n', "session.min_ms: 7000 is above session.max_ms (6000)"),
    ('[session]\nmax_ms = 500\n', "session.min_ms: 6000 is above session.max_ms (500)"),
    ('[session]\nmin_ms = 100\nmax_ms = 900\ntimers_min_ms = 1000\n',
     "session.timers_min_ms: 1000 is above session.max_ms (900)"),
    ('[session]\nmin_ms = 6000.0\n', "session.min_ms: expected an integer, got 6000.0"),
    ('[session]\nmin = 6000\n', "session.min: unknown key (session takes min_ms, max_ms, timers_min_ms)"),
    ('[rebalance]\ninitial_delay_ms = -1\n', "rebalance.initial_delay_ms: must be at least 0, got -1"),
    ('[rebalance]\ninitial_delay_ms = true\n', "rebalance.initial_delay_ms: expected an integer, got true"),
    ('[timing]\nanswer_window_ms = 0\n', "timing.answer_window_ms: must be at least 1, got 0"),
    ('[generation]\noffset = "1"\n', 'generation.offset: expected an integer, got "1"'),
    ('session = 6000\n', "session: expected a table ([session]), got 6000"),
    ('sesion = 1\n', "sesion: unknown key (a profile takes name, session, rebalance, generation, versions, timing, "
                     "coordinator, acknowledged)"),
    ('name = ""\n', "name: is empty"),
    ('[versions]\nJoinGruop = 3\nreason = "x"\n', "versions.JoinGruop: not an API groupcheck's codec speaks"),
    ('[versions]\nJoinGroup = 3\n', "versions.reason: missing: say why the versions are capped"),
    ('[versions]\nreason = "x"\n', "versions.reason: given without any cap"),
    ('[versions]\nOffsetCommit = 1\nreason = "x"\n',
     "versions.OffsetCommit: 1 is below the lowest version groupcheck's codec speaks (OffsetCommit v2)"),
    ('[versions]\nJoinGroup = "v3"\nreason = "x"\n', 'versions.JoinGroup: expected an integer, got "v3"'),
    ('[coordinator]\nfollows = "rust"\n', 'coordinator.follows: expected "scala" (Kafka 3.x\'s GroupCoordinator) '
                                          'or "java" (GroupMetadataManager), got "rust"'),
    ('acknowledged = "JoinGroup"\n', "acknowledged: expected [[acknowledged]] tables"),
    ('[[acknowledged]]\nsignature = "S"\nlink = "https://example.com/1"\n', "acknowledged[1].reason: missing"),
    (ACK + '[[acknowledged]]\nsignature = "T"\nreason = "why"\n', "acknowledged[2].link: missing"),
    ('[[acknowledged]]\nsignature = "S"\nreason = "why"\nlink = "see the wiki"\n',
     'acknowledged[1].link: expected an http:// or https:// address, got "see the wiki"'),
    ('[[acknowledged]]\nsignature = "S"\nreason = "why"\nlink = "https://x"\nwhy = "y"\n',
     "acknowledged[1].why: unknown key (acknowledged[1] takes signature, reason, link)"),
    (ACK + ACK, 'acknowledged[2].signature: acknowledged twice: "S"'),
])
def test_each_mistake_is_one_line_naming_the_file_and_the_key(tmp_path, text, message):
    path = tmp_path / "my.toml"
    path.write_text(text)
    with pytest.raises(UsageError) as e:
        profiles.load(str(path))
    assert str(e.value).startswith(f"{path}: {message}"), str(e.value)
    assert "\n" not in str(e.value)


def test_a_toml_syntax_error_names_the_file_and_the_line(tmp_path):
    path = tmp_path / "my.toml"
    path.write_text('name = "acme"\n[session]\nmin_ms = \n')
    with pytest.raises(UsageError) as e:
        profiles.load(str(path), "--profile")
    assert str(e.value).startswith(f"--profile {path}: line 3, column ") and "not valid TOML" in str(e.value)


def test_a_profile_value_is_a_file_or_a_known_brokers_name(tmp_path):
    path = tmp_path / "acme.toml"
    path.write_text('name = "acme"\n[generation]\noffset = 2\n')
    assert targets.profile_for(str(path)).generation_offset == 2
    assert targets.profile_for("kafka:4.1").new_group_coordinator
    with pytest.raises(UsageError, match=r"^--profile missing\.toml: cannot be read"):
        targets.profile_for("missing.toml")
    with pytest.raises(UsageError, match=r"^--profile acme: not a broker .*; or a profile file, FILE\.toml$"):
        targets.profile_for("acme")


@pytest.mark.parametrize("where", [["--bootstrap", "127.0.0.1:9"], ["--launch", "kafka:4.1"],
                                   ["--launch-cmd", "acmed --port {port}"]])
def test_a_bad_profile_file_is_one_usage_line_before_anything_starts(tmp_path, capsys, where):
    path = tmp_path / "acme.toml"
    path.write_text('[session]\nmin_ms = "6s"\n')
    code = main(["conform", "broker", *where, "--profile", str(path), "--schedules", "1",
                 "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and err == f'groupcheck: error: --profile {path}: session.min_ms: expected an integer, got "6s"\n'
    assert not (tmp_path / "r").exists()


def test_a_launch_command_without_its_port_is_refused(tmp_path, capsys):
    assert main(["conform", "broker", "--launch-cmd", "acmed --port 9092", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("groupcheck: error: --launch-cmd 'acmed --port 9092': the command has no {port}")
    assert err.count("\n") == 1


def test_the_profiles_in_the_docs_are_valid_files():
    # the README's acme.toml and the schema example of docs/conform-broker.md read without a mistake
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for doc in ("README.md", "docs/conform-broker.md"):
        blocks = re.findall(r"```toml\n(.*?)```", (root / doc).read_text(encoding="utf-8"), re.S)
        assert blocks, doc
        for block in blocks:
            profile = profiles.parse(block, doc)
            assert profile.name == "acme" and profile.generation_offset == -1 and profile.acknowledged_links
