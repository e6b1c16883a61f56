"""The cost tiers (tests/helpers/tiers.py): what a test uses is read right, the list of measured
exceptions names tests that exist, and every registered tier is one the conftest can give."""

from __future__ import annotations

import ast
import socket
import subprocess
from pathlib import Path

import pytest

from tests.helpers import tiers

ROOT = Path(__file__).resolve().parent.parent


# -- what a test uses -----------------------------------------------------------------------------------------


def _main(argv):  # stands for properties.cli.main
    return argv


def _opens_a_socket():
    with socket.socket() as s:
        return s


def _starts_a_process():
    return subprocess.run(["true"])


def _a_helper_that_launches():
    return _main(["conform", "broker", "--launch", "groupcheck"])


def _calls_a_helper():
    return _a_helper_that_launches()


def _on_spark():
    return _main(["campaign", "--master", "local[2]"])


def _pure():
    return sum(range(3))


def _uses(function) -> tiers.Uses:
    uses = tiers.Uses()
    uses.add(function)
    return uses


def test_a_socket_a_process_and_a_master_are_seen():
    assert ("socket", "socket") in _uses(_opens_a_socket).attributes
    assert ("subprocess", "run") in _uses(_starts_a_process).attributes
    assert _uses(_on_spark).any_string(tiers.SPARK_STRINGS)
    assert not _uses(_pure).attributes & (tiers.LIVE_ATTRIBUTES | tiers.PROCESS_ATTRIBUTES)
    assert not _uses(_pure).any_string(tiers.SPARK_STRINGS)


def test_what_a_helper_uses_counts_for_its_caller():
    """A test that calls a helper of its module (or of tests/helpers) that launches a broker uses a
    broker: names are followed through the helper's globals."""
    assert {"--launch", "groupcheck"} <= _uses(_calls_a_helper).strings
    assert _uses(_calls_a_helper).strings & tiers.LIVE_ARGUMENTS == {"--launch"}


def test_code_outside_tests_is_not_read():
    """The code under test is not followed (it uses sockets and Spark in every corner): only what
    lives in tests/ says what a test uses."""
    from properties.live import launch

    assert not tiers._is_ours(launch.launch_groupcheck_broker)
    assert tiers._is_ours(_pure) and tiers._is_ours(tiers.Uses)


# -- the list of measured exceptions --------------------------------------------------------------------------


def test_the_list_names_tests_and_fixtures_that_exist():
    """Every line of tests/helpers/tiers.txt names a test function or a fixture of an existing module:
    a renamed test must not leave a stale line behind (it would silently fall back to unit)."""
    stale = []
    for target, (tier, why) in tiers.listed().items():
        module, _, name = target.partition("::")
        path = ROOT / module
        if not path.exists():
            stale.append(f"{target}: no {module}")
            continue
        defined = {node.name for node in ast.parse(path.read_text(encoding="utf-8")).body
                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if name.split("[")[0] not in defined:
            stale.append(f"{target}: {module} defines no {name.split('[')[0]}")
    assert not stale, "stale lines in tests/helpers/tiers.txt:\n" + "\n".join(stale)


def test_a_line_with_an_unknown_tier_is_refused(tmp_path):
    path = tmp_path / "tiers.txt"
    path.write_text("# a comment\n\nslow tests/x.py::test_y  # 2 s\nunit tests/x.py::test_z\n")
    with pytest.raises(ValueError, match=r"tiers.txt:4: 'unit' is not a tier to list"):
        tiers.listed(path)
    path.write_text("slow tests/x.py::test_y  # 2 s\n")
    assert tiers.listed(path) == {"tests/x.py::test_y": ("slow", "2 s")}


def test_every_tier_is_registered_and_one_is_given_to_each_test(request):
    """The tiers are the markers pyproject.toml registers (--strict-markers), and this very test got
    exactly one of them."""
    registered = {line.split(":")[0] for line in request.config.getini("markers")}
    assert set(tiers.TIERS) <= registered
    given = [mark.name for mark in request.node.iter_markers() if mark.name in tiers.TIERS]
    assert given == ["unit"], given
