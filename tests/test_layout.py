"""The project's shape: no import cycle among its own modules, and dependencies that point one way.

The import graph is read from the source (``ast``), every ``import`` counted — also the ones inside
functions, which run later but still make one module depend on another. The wings of
``properties`` are layered (see ``properties/__init__.py``)::

    cli, bench → campaign → mutation, proofs → systems → explore → catalogue, impl_checks, coverage
      → errors → model, impl

A module may import from its own wing and from the wings below it. ``model`` imports nothing of
the project's; ``impl`` imports nothing but itself (it is the system under test, not a user of the
model).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("model", "impl", "properties")

# wing -> rank; an import must go to the same wing or to a lower rank
RANKS = {
    "model": 0,
    "impl": 0,
    "properties.errors": 1,
    "properties": 2,  # catalogue, impl_checks, coverage: what must hold / be reached
    "properties.explore": 3,
    "properties.systems": 4,
    "properties.mutation": 5,
    "properties.proofs": 5,
    "properties.live": 5,  # TCP: groupcheck broker / consume, third-party brokers
    "properties.campaign": 6,
    "properties.clients": 7,  # client conformance: runners, fault schedules, the client judge
    "properties.conform": 8,  # broker conformance: virtual members, the judge, groupcheck conform (+ on Spark)
    "properties.commands": 9,  # cli, bench
}


def modules(top: Path = ROOT) -> dict:
    """{dotted module name: path} of every .py file under the project's packages."""
    out = {}
    for package in PACKAGES:
        for path in sorted((top / package).rglob("*.py")):
            name = ".".join(path.relative_to(top).with_suffix("").parts)
            if name.endswith(".__init__"):
                name = name[: -len(".__init__")]
            out[name] = path
    return out


def imports_of(path: Path, name: str, known) -> set:
    """The project modules *name* (at *path*) imports, resolved to the longest known module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for target in names:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph(top: Path = ROOT) -> dict:
    mods = modules(top)
    return {name: imports_of(path, name, mods) for name, path in mods.items()}


def cycles(edges: dict) -> list:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def wing(module: str) -> str:
    parts = module.split(".")
    if parts[0] != "properties":
        return parts[0]
    if len(parts) == 1:
        return "properties"
    if parts[1] in ("cli", "bench"):
        return "properties.commands"
    candidate = f"properties.{parts[1]}"
    return candidate if candidate in RANKS else "properties"


def layer_violations(edges: dict) -> list:
    """``"a imports b"`` for every import that goes up or sideways between wings."""
    bad = []
    for source, targets in sorted(edges.items()):
        for target in sorted(targets):
            a, b = wing(source), wing(target)
            if target == "properties" or a == b:  # a package's own docstring-only __init__
                continue
            if RANKS[a] <= RANKS[b]:
                bad.append(f"{source} ({a}) imports {target} ({b})")
    return bad


# -- the checks have teeth -----------------------------------------------------------------------


def test_cycle_detection_names_the_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_layer_check_refuses_an_upward_import():
    edges = {"properties.explore.shrink": {"properties.systems"}, "properties.systems": {"properties.explore.walker"}}
    assert layer_violations(edges) == [
        "properties.explore.shrink (properties.explore) imports properties.systems (properties.systems)"]
    assert layer_violations({"model.world": {"impl.time"}}) == ["model.world (model) imports impl.time (impl)"]
    assert layer_violations({"properties.mutation.mutants": {"properties.proofs.prove"}})  # sideways


def test_lazy_and_relative_imports_are_edges(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "__init__.py").write_text("")
    (tmp_path / "model" / "a.py").write_text("def f():\n    from .b import g\n    import model.c\n")
    (tmp_path / "model" / "b.py").write_text("from model import a\n")
    (tmp_path / "model" / "c.py").write_text("")
    mods = modules(tmp_path)
    assert imports_of(mods["model.a"], "model.a", mods) == {"model.b", "model.c"}
    assert imports_of(mods["model.b"], "model.b", mods) == {"model", "model.a"}  # a package is imported with its module


# -- the project ----------------------------------------------------------------------------------


def test_no_import_cycle():
    found = cycles(graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_dependencies_point_one_way():
    bad = layer_violations(graph())
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def test_every_wing_is_a_documented_package():
    for package in ("model", "impl", "properties", "properties.explore", "properties.systems", "properties.campaign",
                    "properties.proofs", "properties.mutation"):
        init = ROOT.joinpath(*package.split("."), "__init__.py")
        assert init.exists(), f"{package} has no __init__.py (a namespace package cannot be shipped to Spark in a zip)"
        assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), f"{package}/__init__.py has no docstring"


def test_the_project_is_licensed_like_kafka():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
