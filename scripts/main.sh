#!/usr/bin/env bash
# Set everything up and run the main job. Until the Spark campaign exists, the main job is a
# walk of the model world over 2000 seeds (3 clients, 3 brokers, all faults) in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e .
mkdir -p reports
groupcheck walk --seeds 2000 --steps 60 --faults all "$@" | tee reports/walk-latest.txt
