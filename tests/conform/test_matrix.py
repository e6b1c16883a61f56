"""The release matrix's parts that need no broker: which releases a --matrix names, how a
divergence's presence reads as ranges, and the usage errors (tests/live/test_kafka.py runs one)."""

import pytest

from properties.cli import main
from properties.conform import matrix
from properties.errors import UsageError


def test_a_range_names_every_line_between_by_its_latest_release_oldest_first():
    assert matrix.releases("kafka:2.8..3.3") == ["2.8.2", "3.0.2", "3.1.2", "3.2.3", "3.3.2"]
    assert matrix.releases("kafka:4.1..kafka:4.1") == ["4.1.2"]
    assert matrix.releases("kafka:3.3.1,kafka:2.6,kafka:3.3.1") == ["2.6.3", "3.3.1"]


@pytest.mark.parametrize("spec, words", [
    ("kafka:2.4..3.0", "no release line 2.4 known"),
    ("kafka:3.3..2.8", "3.3 comes after 2.8"),
    ("3.0..3.3", "expected kafka:LINE..LINE"),
    ("kafka:2.4.1", "judges Kafka 2.5 and later"),
    (",", "no release named"),
])
def test_a_bad_matrix_is_one_usage_error_naming_it(spec, words):
    with pytest.raises(UsageError) as e:
        matrix.releases(spec)
    assert "--matrix" in str(e.value) and words in str(e.value)


def test_presence_reads_as_ranges_with_the_releases_around_them():
    versions = ["2.8.2", "3.0.2", "3.1.2", "3.2.3", "3.3.2", "3.4.1"]
    showed = {"a": {"3.0.2", "3.1.2", "3.2.3"}, "b": {"2.8.2", "3.3.2", "3.4.1"}, "x": {"3.1.2"}}
    rows = {r["signature"]: r for r in matrix.presence(versions, showed)}
    assert [r["signature"] for r in matrix.presence(versions, showed)] == ["b", "a", "x"]  # oldest first
    assert matrix.describe(rows["a"]["ranges"]) == "present in 3.0.2–3.2.3; absent in 2.8.2, gone in 3.3.2"
    assert matrix.describe(rows["b"]["ranges"]) == ("present in 2.8.2; gone in 3.0.2 · "
                                                    "present in 3.3.2–3.4.1; absent in 3.2.3, still in the newest judged")
    assert matrix.describe(rows["x"]["ranges"]) == "present in 3.1.2; absent in 3.0.2, gone in 3.2.3"
    assert rows["x"]["decided"] is None


def test_a_known_divergence_says_what_kafkas_history_decided():
    (row,) = matrix.presence(["3.2.3", "3.3.2"], {"OffsetCommit: answered UNKNOWN_MEMBER_ID where the model allows NONE":
                                                  {"3.2.3"}})
    assert "KAFKA-14201" in row["decided"]
    unrun = {"release": "3.3.2", "exit": 130, "verdict": None, "schedules": None, "conforming": None, "seconds": None,
             "report": "kafka-3.3.2/report.md"}
    text = matrix.markdown({"releases": [unrun], "divergences": [row, {"signature": "s", "ranges": row["ranges"],
                                                                  "decided": None}],
                            "settings": {"seed": 0, "schedules": 2, "timers": "off", "members": 3, "steps": 24}})
    assert "KAFKA-14201" in text and "Not decided yet" in text and "seeds 0–1" in text
    assert "| 3.3.2 | no report (exit 130) | — |" in text


@pytest.mark.parametrize("extra, words", [
    (["--profile", "kafka:3.9"], "--profile with --matrix"),
    (["--brokers", "3"], "--brokers with --matrix"),
    (["--bootstrap", "127.0.0.1:9"], "not allowed with argument"),
])
def test_matrix_refuses_what_it_cannot_do_before_anything_starts(extra, words, capsys, tmp_path):
    assert main(["conform", "broker", "--matrix", "kafka:3.2..3.3", *extra, "--out", str(tmp_path / "r")]) == 2
    assert words in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
