#!/usr/bin/env bash
# Set everything up and run the main job: the z3 proof table for this commit (only when
# reports/proofs-latest.json is missing, partial or from other code), then a Spark campaign (embedded Spark, local[*]) of 2,000
# interleavings of the implementation beside the model, each in a world of its own (swarm worlds:
# clients, brokers, partitions, timeouts, JoinGroup version, faults, length), with shrunk and
# clustered counterexamples, and a KIP-848 world of the model for every 4th seed (docs/kip848.md). The report lands in reports/<campaign-id>/
# (reports/latest links to it): open reports/latest/index.html. Extra arguments are passed on,
# e.g. `bash scripts/main.sh --interleavings 20000 --system model`.
# Exit status: 0 when no always property failed, 1 when one did, 2 on a usage error; 130 or 143
# when stopped by SIGINT or SIGTERM (the report of what finished is written, marked partial).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e .
mkdir -p reports
# the report shows the proof table with its date and commit; a failed proof is shown there, not fatal here
groupcheck prove --if-stale >/dev/null || echo "groupcheck: a proof did not go through; see reports/proofs-latest.md" >&2
exec groupcheck campaign --interleavings 2000 "$@"
