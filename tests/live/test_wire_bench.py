"""``groupcheck bench --wire``: runs both brokers side by side and prints figures (not timed: the
figures themselves go to docs/performance.md)."""

import json
import subprocess
import sys


def _bench(*args, timeout=240):
    return subprocess.run([sys.executable, "-m", "properties.cli", "bench", "--wire", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_bench_wire_measures_groupcheck_broker_and_tansu_side_by_side():
    done = _bench("--seconds", "0.5", "--round-trips", "30", "--connections", "3", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    for name in ("groupcheck", "tansu"):
        r = result[name]
        assert r["broker"] == name and r["round_trips"] == 30 and r["connections"] == 3
        assert r["heartbeats"] > 0 and r["errors"] == 0
        assert 0 < r["p50_us"] <= r["p99_us"]
    assert result["p50_ratio"] == result["groupcheck"]["p50_us"] / result["tansu"]["p50_us"]
    assert result["throughput_ratio"] > 0


def test_bench_wire_refuses_options_of_other_benchmarks():
    done = _bench("--system", "impl")
    assert done.returncode == 2 and "--system does not go with --wire" in done.stderr
    done = _bench("--seconds", "0")
    assert done.returncode == 2 and "--seconds must be positive" in done.stderr
