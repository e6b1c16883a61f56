#!/usr/bin/env bash
# Set everything up and run the whole test suite (unit, scenario, property and quality tests).
# Fails when pytest collects no test (exit status 5), so an empty run never passes silently.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
# Three workers on this machine kind's two cores: much of the suite waits on brokers, JVMs and Spark
# rather than computing (one more worker fills that time: 22 min 11 s against 29 min 00 s for the same
# clone, back to back, docs/tests.md); an idle worker takes queued tests from the others.
python3 -m pytest -n 3 --dist worksteal "$@"
