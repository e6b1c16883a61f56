"""z3 proofs of the timing arithmetic (properties/proofs/timing.py) and ``groupcheck prove``.

Each computation is proved over Kafka's configuration domain; each has a broken variant (a guard
removed, a comparison flipped) for which z3 must return a counterexample, and the counterexample
must really break the computation when re-evaluated in Python with Java's wrap-around. The model's
own functions are checked at the boundaries the proofs name.
"""

from __future__ import annotations

import json

import pytest

from model.config import MAX_INT, join_group_request_timeout
from properties.proofs import timing
from properties.cli import main

NAMES = [p.name for p in timing.PROOFS]


@pytest.mark.parametrize("name", NAMES)
def test_timing_proved(name):
    proof = next(p for p in timing.PROOFS if p.name == name)
    result, _, info = proof.check()
    assert result == "proved", info


@pytest.mark.properties
@pytest.mark.parametrize("name", NAMES)
def test_timing_teeth(name):
    proof = next(p for p in timing.PROOFS if p.name == name)
    result, _, cex = proof.check(broken=True)
    assert result == "counterexample", f"the broken {name} ({proof.teeth}) was not refuted"
    assert cex


def _java_int(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def _java_long(v):
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


@pytest.mark.properties
def test_join_timeout_counterexample_is_real():
    """The unguarded sum's counterexample: JoinGroup would time out before the rebalance does."""
    proof = next(p for p in timing.PROOFS if p.name == "join-request-timeout")
    _, _, cex = proof.check(broken=True)
    rt, req = cex["rebalance_timeout"], cex["request_timeout"]
    assert rt > timing.JOIN_BOUNDARY
    unguarded = max(req, _java_int(rt + 5000))
    assert unguarded < rt
    assert join_group_request_timeout(req, rt) == max(req, rt)  # the model's guard, as Kafka


def test_join_timeout_boundary_in_the_model():
    assert join_group_request_timeout(30_000, timing.JOIN_BOUNDARY) == MAX_INT
    assert join_group_request_timeout(30_000, timing.JOIN_BOUNDARY + 1) == timing.JOIN_BOUNDARY + 1
    assert join_group_request_timeout(30_000, MAX_INT) == MAX_INT
    assert join_group_request_timeout(30_000, 1) == 30_000


@pytest.mark.properties
def test_unsent_expiry_teeth_is_the_off_by_one():
    proof = next(p for p in timing.PROOFS if p.name == "unsent-expiry")
    _, _, cex = proof.check(broken=True)
    # exactly at the timeout (elapsed as Java computes it: a long difference, floored at 0): not yet expired
    assert max(0, _java_long(cex["now"] - cex["created"])) == cex["timeout"]


@pytest.mark.properties
def test_metadata_clock_back_wraps_in_java():
    """Where the boundary proof says timeToExpire overflows, Java's long arithmetic reads 0."""
    now, last = 1_000, 5_000
    max_age = (2**63 - 1) - (last - now) + 1
    assert _java_long(last + max_age - now) < 0  # so max(..., 0) == 0: refresh due at once
    assert last + max_age - now > 0  # while the intent is a wait of ~Long.MAX ms


def test_prove_cli_writes_reports(tmp_path, capsys):
    status = main(["prove", "--json", "--only", "commit-fencing", "--only", "join-request-timeout",
                   "--out", str(tmp_path)])
    rows = json.loads(capsys.readouterr().out)
    assert status == 0
    assert [r["property"] for r in rows] == ["commit-fencing", "timing: join-request-timeout"]
    assert all(set(r) >= {"property", "bound", "result", "seconds"} and r["result"] == "proved" for r in rows)
    # a partial run never replaces the full table a campaign report shows
    assert not (tmp_path / "proofs-latest.json").exists()
    doc = json.loads((tmp_path / "proofs-partial.json").read_text())
    assert doc["format"] == 1 and doc["rows"] == rows and doc["complete"] is False
    assert doc["tool"]["name"] == "groupcheck" and doc["generated_at"].endswith("Z")
    assert "commit-fencing" in (tmp_path / "proofs-partial.md").read_text()


@pytest.mark.parametrize("make", ["file", "unwritable"])
def test_prove_cli_checks_out_before_proving(tmp_path, capsys, monkeypatch, make):
    """An --out that cannot be written is one line, exit 2, before any proof starts."""
    from properties.proofs import prove as prove_module

    monkeypatch.setattr(prove_module, "prove", lambda *a, **k: pytest.fail("proved before checking --out"))
    if make == "file":
        out = tmp_path / "a-file"
        out.write_text("")
    else:
        out = "/proc/groupcheck-proofs"  # even root cannot create files there
    assert main(["prove", "--only", "commit-fencing", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"groupcheck: error: --out {out}") and len(err.strip().splitlines()) == 1


def test_prove_if_stale_skips_a_table_of_this_commit(tmp_path, capsys, monkeypatch):
    from properties import provenance as prov
    from properties.proofs import prove as prove_module

    here = {"name": "groupcheck", "version": "x", "commit": "a" * 40, "dirty": False}
    monkeypatch.setattr(prove_module, "provenance", lambda: here)
    rows = [{"property": "p", "bound": "b", "result": "proved", "seconds": 0.1, "invariants": [], "reason": "r"}]
    prove_module.write_reports(rows, str(tmp_path), 1.0, 4, 8)
    monkeypatch.setattr(prove_module, "prove", lambda *a, **k: pytest.fail("proved a current table again"))
    assert main(["prove", "--if-stale", "--out", str(tmp_path)]) == 0
    assert "not proving again" in capsys.readouterr().out
    for stale in ({**here, "commit": "b" * 40}, {**here, "dirty": True}):  # other code: prove again
        monkeypatch.setattr(prove_module, "provenance", lambda stale=stale: stale)
        assert prove_module.current_table(str(tmp_path)) is None
    assert prov.provenance()["name"] == "groupcheck"


@pytest.mark.parametrize("argv", [["prove", "--members", "9"], ["prove", "--partitions", "0"],
                                  ["prove", "--only", "no-such-property"]])
def test_prove_cli_usage_errors(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("groupcheck: error:") and len(err.strip().splitlines()) == 1
