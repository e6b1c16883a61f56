#!/usr/bin/env bash
# Set everything up and run the whole test suite (unit, scenario, property and quality tests).
# Fails when pytest collects no test (exit status 5), so an empty run never passes silently.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
# Two workers, one per core. Three were tried on 2026-12-03 (22-23 min against 29 min on a slow host),
# but the extra load made wall-clock tests fail: a 1-second hang limit met by an ordinary step, a Java
# consumer's rejoin storm cut short (docs/tests.md). An idle worker takes queued tests from the other.
python3 -m pytest -n 2 --dist worksteal "$@"
