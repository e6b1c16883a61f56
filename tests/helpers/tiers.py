"""Every test's cost tier, read from what the test uses (``tests/conftest.py`` applies it).

Exactly one tier per test:

* ``quality`` and ``properties``: marked by hand (the quality tier; Hypothesis machines and the
  property suite) — a test so marked keeps that tier whatever it uses;
* ``spark``: it starts Spark — an embedded session (the ``spark`` fixture, ``start_spark``,
  ``run_spark``), a ``local[N]`` or ``spark://`` master, spark-submit or a standalone cluster;
* ``live``: it talks TCP or runs someone else's code in another process — anything under
  ``tests/live/``, a broker it launches (``--launch``, ``launch_groupcheck_broker``, Tansu,
  librdkafka's mock), a broker it is pointed at (``--bootstrap``), a socket, a client library, a
  client-conformance session;
* ``slow``: pure, but it starts a child process of groupcheck itself, or it was measured above half
  a second of CPU in the unit tier (the budget is a second; the margin keeps the tier under it as
  the machine's speed varies);
* ``unit``: everything else — fast and pure.

"What the test uses" is the code it runs that lives in ``tests/``: the test function, the fixtures
it requests (and theirs), and the test-module and ``tests/helpers`` functions and classes it refers
to, followed by name through their globals. The names, attribute pairs (``socket.socket``) and
string constants of that code, and the test's parameters, are matched against the lists below.

What reading cannot tell is measured and written down in ``tests/helpers/tiers.txt``: one line per
test (``tests/x/test_y.py::test_z``, with or without ``[parameters]``) or per expensive fixture
(``tests/x/test_y.py::fixture_name``: every test that requests it), with its tier and why — a
unit test measured above half a second of CPU, or one whose broker or Spark session starts deep
inside the code under test. A test that ends up in ``unit`` and still opens a socket, starts a process or
spends more than a second of CPU is listed at the end of the run (see ``tests/conftest.py``).
"""

from __future__ import annotations

import dis
import inspect
import os
import re
import types
from pathlib import Path

TIERS = ("unit", "slow", "spark", "live", "properties", "quality")
HAND_MARKED = ("quality", "properties")  # in this order: a quality test marked properties too is quality

TESTS = Path(__file__).resolve().parent.parent
LISTED = Path(__file__).with_name("tiers.txt")

#: the unit tier's budget per test (CPU seconds, setup + call + teardown, in the worker process);
#: GROUPCHECK_UNIT_BUDGET=0.2 pytest -m unit lists every unit test above 0.2 s instead
UNIT_BUDGET_S = float(os.environ.get("GROUPCHECK_UNIT_BUDGET", "1.0"))

SPARK_FIXTURES = {"spark", "cluster"}
SPARK_NAMES = {"start_spark", "run_spark", "SparkSession"}
SPARK_STRINGS = ("local[", "spark://", "spark-submit", "spark-class")

LIVE_FOLDERS = ("live",)
LIVE_NAMES = {"launch_groupcheck_broker", "launch_tansu", "rdkafka_mock", "create_connection", "KafkaConsumer",
              "KafkaProducer", "AIOKafkaConsumer", "AIOKafkaProducer", "WireSelector", "SocketServer",
              "Broker",  # properties.conform.target.Broker: the broker a conformance run launches or is given
              "launch_cmd"}  # properties.live.launch_cmd: any broker binary, started
#: command-line arguments, each a string of its own (``"--launch", "tansu"``): a broker launched or given
LIVE_ARGUMENTS = {"--launch", "--launch-cmd", "--bootstrap", "tansu", "rdkafka-mock"}
#: ``--system broker:NAME`` / ``client:NAME``: a campaign of conformance schedules
LIVE_SYSTEM = re.compile(r"(broker|client):[\w-]+")
#: command lines that start brokers and clients: ``groupcheck conform client`` (a broker and a process per consumer)
LIVE_COMMANDS = (("conform", "client"),)
#: module.attribute pairs: a socket; a client-conformance session (a broker and client processes)
LIVE_ATTRIBUTES = {("socket", "socket"), ("socket", "create_connection"), ("session", "run")}

PROCESS_ATTRIBUTES = {("subprocess", "run"), ("subprocess", "Popen"), ("subprocess", "check_output"),
                      ("subprocess", "check_call"), ("os", "fork")}


def _is_ours(obj) -> bool:
    """A function or class defined in a file under tests/ (a test module, conftest or a helper)."""
    try:
        path = inspect.getsourcefile(obj)
    except TypeError:
        return False
    return bool(path) and Path(path).resolve().is_relative_to(TESTS)


def _codes(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


class _Summary:
    """What one function's code (with its nested functions) names, says and refers to."""

    __slots__ = ("names", "strings", "attributes", "refers")

    def __init__(self, obj):
        self.names, self.strings, self.attributes, self.refers = set(), set(), set(), []
        if inspect.isclass(obj):
            self.refers = [getattr(m, "__func__", m) for m in vars(obj).values()
                           if inspect.isfunction(getattr(m, "__func__", m))]
            return
        code = getattr(obj, "__code__", None)
        if code is None:
            return
        for c in _codes(code):
            self.names.update(c.co_names)
            consts = list(c.co_consts)
            while consts:  # ``["a", "b"]`` is compiled to one constant tuple
                x = consts.pop()
                if isinstance(x, str):
                    self.strings.add(x)
                elif isinstance(x, (tuple, frozenset)):
                    consts.extend(x)
            previous = None
            for ins in dis.get_instructions(c):  # ``a.b``: a load of a, then of its attribute b
                if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and previous is not None and previous.opname in (
                        "LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF"):
                    self.attributes.add((previous.argval, ins.argval))
                previous = ins
        glob = getattr(obj, "__globals__", {})
        self.refers = [v for v in (glob.get(n) for n in sorted(self.names))
                       if v is not None and (inspect.isfunction(v) or inspect.isclass(v))]


_SUMMARIES: dict = {}


def _summary(obj):
    key = id(obj)
    if key not in _SUMMARIES:
        _SUMMARIES[key] = (obj, _Summary(obj) if _is_ours(obj) else None)  # obj kept: its id stays its own
    return _SUMMARIES[key][1]


class Uses:
    """The names, attribute pairs and strings of the code a test runs that lives in tests/."""

    def __init__(self):
        self.names, self.strings, self.attributes, self.seen, self.fixtures = set(), set(), set(), set(), set()

    def add(self, obj) -> None:
        if obj is None:
            return
        obj = inspect.unwrap(obj) if inspect.isfunction(obj) else obj
        todo = [obj]
        while todo:
            current = todo.pop()
            if id(current) in self.seen:
                continue
            self.seen.add(id(current))
            summary = _summary(current)
            if summary is None:
                continue
            self.names |= summary.names
            self.strings |= summary.strings
            self.attributes |= summary.attributes
            todo.extend(summary.refers)

    def any_string(self, needles) -> bool:
        return any(n in s for s in self.strings for n in needles)


def uses_of(item) -> Uses:
    uses = Uses()
    uses.add(getattr(item, "function", None) or getattr(item, "obj", None))
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(info, "names_closure", ()):
        for fixturedef in (info.name2fixturedefs.get(name) or ()):
            uses.add(fixturedef.func)
    uses.fixtures = set(getattr(info, "names_closure", ()))
    callspec = getattr(item, "callspec", None)  # parameters: a ``--bootstrap`` or a master given as an argument
    todo = list(callspec.params.values()) if callspec is not None else []
    while todo:
        value = todo.pop()
        if isinstance(value, str):
            uses.strings.add(value)
        elif isinstance(value, (list, tuple, set, frozenset)):
            todo.extend(value)
        elif isinstance(value, dict):
            todo.extend(value.keys())
            todo.extend(value.values())
    return uses


def listed(path: Path = LISTED) -> dict:
    """{test node id, function id or module::fixture: (tier, why)} from *path*: lines of ``TIER TARGET
    # WHY``, blank lines and ``#`` comments ignored."""
    out = {}
    if not path.exists():
        return out
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        body, _, why = line.partition("#")
        if not body.strip():
            continue
        tier, target = body.split()
        if tier not in ("slow", "spark", "live"):
            raise ValueError(f"{path}:{number}: {tier!r} is not a tier to list (slow, spark or live)")
        out[target] = (tier, why.strip() or "listed")
    return out


def tier_of(item, listed_tiers: dict) -> tuple:
    """(tier, why): the one cost tier of a collected test item, and the evidence for it."""
    for mark in HAND_MARKED:
        if item.get_closest_marker(mark):
            return mark, "marked by hand"
    uses = uses_of(item)
    module = item.nodeid.split("::")[0]
    entries = [item.nodeid, item.nodeid.split("[")[0]] + [f"{module}::{f}" for f in sorted(uses.fixtures)]
    found = [listed_tiers[e] for e in entries if e in listed_tiers]
    by_list = max(found, key=lambda tw: TIERS.index(tw[0])) if found else None
    spark = (uses.fixtures & SPARK_FIXTURES) or (uses.names & SPARK_NAMES)
    if spark or uses.any_string(SPARK_STRINGS) or (by_list and by_list[0] == "spark"):
        return "spark", f"uses {sorted(spark)[0]}" if spark else (
            f"listed: {by_list[1]}" if by_list and by_list[0] == "spark" else "uses a Spark master or spark-submit")
    rel = Path(str(item.path)).resolve().relative_to(TESTS)
    if rel.parts[0] in LIVE_FOLDERS:
        return "live", f"in tests/{rel.parts[0]}/"
    live = (uses.names & LIVE_NAMES) or (uses.attributes & LIVE_ATTRIBUTES)
    if not live and "--system" in uses.strings and any(LIVE_SYSTEM.fullmatch(s) for s in uses.strings):
        live = {"a conformance system (broker:NAME, client:NAME)"}
    if not live and uses.strings & LIVE_ARGUMENTS:
        live = {" ".join(sorted(uses.strings & LIVE_ARGUMENTS))}
    if live:
        return "live", f"uses {sorted(map(str, live))[0]}"
    for command in LIVE_COMMANDS:
        if set(command) <= uses.strings:
            return "live", f"runs groupcheck {' '.join(command)}"
    if by_list:
        return by_list[0], f"listed: {by_list[1]}"
    if uses.attributes & PROCESS_ATTRIBUTES:
        return "slow", "starts a child process"
    return "unit", "pure and fast"
