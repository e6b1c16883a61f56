"""model/java_order.py and impl/java_collections.py (each side computes them on its own)
against Kafka's own classes: String.hashCode, a HashMap's key order and a
TimelineHashMap's (kafka-server-common 4.1.2, the class ModernGroup.members is), over random member ids
and random puts and removes, run by a JVM (tests/kip848/java/JavaOrder.java, Kafka's jars from the
project's pom). The uniform assignor's targets depend on these orders (model/kip848/assignment.py)."""

import random
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from impl import java_collections as impl_side
from model import java_order as model_side

SOURCE = Path(__file__).with_name("java") / "JavaOrder.java"

#: (String.hashCode, HashMap order, TimelineHashMap order, TimelineHashMap capacity after a put) of each side
SIDES = {"model": (model_side.string_hash, model_side.hash_map_order, model_side.timeline_order,
                   model_side.timeline_capacity),
         "impl": (impl_side.string_hash_code, impl_side.hash_map_key_order, impl_side.timeline_key_order,
                  impl_side.grown_capacity)}


def _member_id(rng: random.Random) -> str:
    """A member id as a consumer makes one (Uuid.randomUuid().toString(): 22 URL-safe base64
    characters), or as the walks and the broker judge name them."""
    kind = rng.random()
    if kind < 0.4:
        import base64

        return base64.urlsafe_b64encode(rng.randbytes(16)).decode().rstrip("=")
    if kind < 0.8:
        return str(uuid.UUID(int=rng.getrandbits(128)))
    return f"m{rng.randrange(10)}.{rng.randrange(3)}"


@pytest.fixture(scope="module")
def java_order():
    """Feed lines to JavaOrder and read one answer line per line."""
    from properties.live import kafka

    if shutil.which("java") is None:
        pytest.fail("no java on PATH: this machine kind has Java 17")
    lib = kafka.resolve(kafka.parse("kafka:4.1"))

    def run(lines: list) -> list:
        done = subprocess.run(["java", "-Xmx64m", "-cp", f"{lib}/*", str(SOURCE)], input="\n".join(lines) + "\n",
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.splitlines()

    return run


@pytest.mark.parametrize("side", sorted(SIDES))
def test_string_hash_and_hash_map_order_are_javas(java_order, side):
    string_hash, hash_map_order, _, _ = SIDES[side]
    rng = random.Random(848)
    keys = [_member_id(rng) for _ in range(40)] + ["", "é", "groupcheck-c01"]
    groups = [list(dict.fromkeys(_member_id(rng) for _ in range(rng.randint(1, 20)))) for _ in range(30)]  # distinct ids
    answers = java_order([f"hash {k}" for k in keys if k and " " not in k] + ["hashmap " + " ".join(g) for g in groups])
    hashed = [k for k in keys if k and " " not in k]
    assert [int(a) for a in answers[:len(hashed)]] == [string_hash(k) for k in hashed]
    assert [a.split(" ") for a in answers[len(hashed):]] == [hash_map_order(g) for g in groups]


@pytest.mark.parametrize("side", sorted(SIDES))
@pytest.mark.parametrize("seed", range(4))
def test_timeline_hash_map_order_and_capacity_are_kafkas(java_order, side, seed):
    """Random puts (new keys and updates) and removes; after each, the side's order of the keys
    (insertion order kept as the group's ``joined`` or members dict, capacity grown per put) is Kafka's."""
    _, _, timeline_order, timeline_capacity = SIDES[side]
    rng = random.Random(seed)
    pool = [_member_id(rng) for _ in range(12)]
    lines, expected = [], []
    joined: list = []
    capacity = 2
    for _ in range(60):
        key = rng.choice(pool)
        if key in joined and rng.random() < 0.35:
            lines.append(f"remove {key}")
            joined.remove(key)
        else:
            lines.append(f"put {key}")
            capacity = timeline_capacity(capacity, len(joined))
            if key not in joined:
                joined.append(key)
        expected.append(timeline_order(joined, capacity))
    answers = java_order(lines)
    assert [a.split(" ") if a else [] for a in answers] == expected
