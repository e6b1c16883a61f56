#!/usr/bin/env bash
# Set everything up and run the whole test suite (unit, scenario, property and quality tests).
# Fails when pytest collects no test (exit status 5), so an empty run never passes silently.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
python3 -m pytest -n 2 --dist worksteal "$@"   # two workers (two cores); an idle one takes queued tests from the other
