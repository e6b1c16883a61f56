"""librdkafka's built-in mock cluster as a broker on loopback, through ctypes.

The mock cluster (``rdkafka_mock*.c``) ships inside the librdkafka that confluent-kafka bundles
(``confluent_kafka.libs/librdkafka-*.so.1``; no download). It lives in the process that created
it, so :func:`start` runs a small child process (``python -m properties.live.rdkafka_mock TOPIC:N
...``) that creates a handle (``rd_kafka_new``), the cluster (``rd_kafka_mock_cluster_new``) and
the topics (``rd_kafka_mock_topic_create``), sets the initial rebalance delay to 0
(``rd_kafka_mock_group_initial_rebalance_delay_ms``), prints ``rdkafka-mock: listening on HOST:PORT`` with
the address ``rd_kafka_mock_cluster_bootstraps`` gives, and serves until SIGTERM.
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
import signal
import sys
import threading
from typing import Mapping

from properties.live.child import ChildBroker, spawn_until_ready

READY = re.compile(r"rdkafka-mock: listening on (\S+):(\d+)")
READY_TIMEOUT_S = 15.0


def library_path() -> str:
    """The librdkafka bundled with confluent-kafka; RuntimeError if it is not installed."""
    try:
        import confluent_kafka
    except ImportError:
        raise RuntimeError("confluent-kafka is not installed (pip install -e '.[test]')") from None
    here = os.path.dirname(confluent_kafka.__file__)
    found = sorted(glob.glob(os.path.join(here, os.pardir, "confluent_kafka.libs", "librdkafka*.so*")))
    if not found:
        raise RuntimeError(f"no librdkafka beside {here} (confluent_kafka.libs/librdkafka*.so*)")
    return os.path.abspath(found[0])


def _serve(topics: Mapping[str, int], brokers: int = 1, initial_delay_ms: int = 0) -> int:
    lib = ctypes.CDLL(library_path())
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_topic_create.restype = ctypes.c_int
    lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.rd_kafka_mock_cluster_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_group_initial_rebalance_delay_ms.argtypes = [ctypes.c_void_p, ctypes.c_int32]
    lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
    errstr = ctypes.create_string_buffer(512)
    conf = lib.rd_kafka_conf_new()
    lib.rd_kafka_conf_set(conf, b"log_level", b"3", errstr, 512)
    debug = os.environ.get("GROUPCHECK_RDKAFKA_MOCK_DEBUG")  # e.g. "mock": librdkafka's own log on stderr
    if debug:
        lib.rd_kafka_conf_set(conf, b"log_level", b"7", errstr, 512)
        lib.rd_kafka_conf_set(conf, b"debug", debug.encode(), errstr, 512)
    rk = lib.rd_kafka_new(0, conf, errstr, 512)  # RD_KAFKA_PRODUCER
    if not rk:
        print(f"rdkafka-mock: rd_kafka_new failed: {errstr.value.decode(errors='replace')}", file=sys.stderr)
        return 1
    cluster = lib.rd_kafka_mock_cluster_new(rk, brokers)
    if not cluster:
        print("rdkafka-mock: rd_kafka_mock_cluster_new failed", file=sys.stderr)
        return 1
    # group.initial.rebalance.delay.ms (the mock's default is Kafka's 3000): 0, as groupcheck's
    # conformance schedules without timers expect
    lib.rd_kafka_mock_group_initial_rebalance_delay_ms(cluster, initial_delay_ms)
    for name, partitions in topics.items():
        err = lib.rd_kafka_mock_topic_create(cluster, name.encode(), partitions, 1)
        if err:
            print(f"rdkafka-mock: rd_kafka_mock_topic_create({name}) failed with error {err}", file=sys.stderr)
            return 1
    bootstraps = lib.rd_kafka_mock_cluster_bootstraps(cluster).decode()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"rdkafka-mock: listening on {bootstraps.split(',')[0]} ({brokers} broker{'s' if brokers > 1 else ''})",
          file=sys.stderr, flush=True)
    while not stop.wait(0.2):
        pass
    lib.rd_kafka_mock_cluster_destroy(cluster)
    lib.rd_kafka_destroy(rk)
    return 0


class RdkafkaMock(ChildBroker):
    """A running mock cluster (see :func:`start`)."""


def start(topics: Mapping[str, int] = ()) -> RdkafkaMock:
    """Start the mock cluster in a child process with *topics* created; RuntimeError if it does not
    come up (with its output)."""
    library_path()  # fail early and clearly when confluent-kafka is missing
    args = [sys.executable, "-m", "properties.live.rdkafka_mock"] + [f"{n}:{p}" for n, p in dict(topics).items()]
    process, match, log_path = spawn_until_ready(args, "rdkafka-mock-", READY, READY_TIMEOUT_S, "rdkafka-mock")
    return RdkafkaMock(process, match.group(1), [int(match.group(2))], log_path)


if __name__ == "__main__":
    pairs = {}
    for arg in sys.argv[1:]:
        name, _, count = arg.rpartition(":")
        pairs[name] = int(count)
    sys.exit(_serve(pairs))
