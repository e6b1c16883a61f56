"""Where a result came from: groupcheck's version and the git commit of the code that ran.

Every result groupcheck writes (``run``/``walk`` JSON, counterexample files, campaign
``results.json``, the proof table) records :func:`provenance`, so a reader can tell which code
produced it and whether that code had uncommitted changes. The commit is read once per process
from the checkout the packages were imported from (``git`` with a short timeout); outside a
checkout, or without git, it is ``None``.
"""

from __future__ import annotations

import functools
import subprocess
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the folder holding model/, impl/, properties/


def tool_version() -> str:
    """The installed groupcheck distribution's version ("unknown" in a never-installed tree)."""
    try:
        return metadata.version("groupcheck")
    except metadata.PackageNotFoundError:
        return "unknown"


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@functools.lru_cache(maxsize=1)
def git_commit() -> dict:
    """``{"commit": sha or None, "dirty": bool or None}`` of the checkout the code runs from. Only
    changes to the project's own code count as dirty (reports/ and other untracked output do not)."""
    if not (ROOT / ".git").exists():
        return {"commit": None, "dirty": None}
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no", "--", "model", "impl", "properties", "pyproject.toml")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def provenance() -> dict:
    """``{"name": "groupcheck", "version": ..., "commit": ..., "dirty": ...}``."""
    return {"name": "groupcheck", "version": tool_version(), **git_commit()}


def describe() -> str:
    """One line for ``groupcheck --version``."""
    p = provenance()
    commit = "no git commit" if p["commit"] is None else f"commit {p['commit'][:12]}" + (" with local changes" if p["dirty"] else "")
    return f"groupcheck {p['version']} ({commit})"
