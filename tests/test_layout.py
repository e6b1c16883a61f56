"""The project's shape: no import cycle among its own modules, and dependencies that point one way.

The import graph is read from the source (``ast``), every ``import`` counted — also the ones inside
functions, which run later but still make one module depend on another. The wings of
``properties`` (its subpackages and top-level modules) are layered; the layering is one constant,
``properties.LAYERS``, drawn with what each wing is for in ``properties/__init__.py``'s docstring.
This module checks that the two agree, that every wing on disk is declared there (a new one fails
with a message saying where to declare it), and that every import goes to its own wing or to a
lower layer. ``model`` imports nothing of the project's; ``impl`` imports nothing but itself (it is
the system under test, not a user of the model).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import properties

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("model", "impl", "properties")
WHERE = ("add it to LAYERS in properties/__init__.py and to the diagram in that module's docstring, "
         "in the highest layer below every wing that imports it and above every wing it imports")


def ranks(layers=properties.LAYERS) -> dict:
    """wing -> rank: ``model`` and ``impl`` 0, the bottom layer of *layers* 1, and so on up. An
    import must go to the same wing or to a lower rank."""
    out = {"model": 0, "impl": 0}
    for rank, layer in enumerate(reversed(layers), start=1):
        for name in layer:
            out[f"properties.{name}"] = rank
    return out


RANKS = ranks()


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


@functools.lru_cache(maxsize=None)
def graph(top: Path = ROOT) -> dict:
    """{module: the project modules it imports}; read once per process (two tests use it)."""
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
    """``model``, ``impl``, ``properties`` (the package itself) or ``properties.<wing>``."""
    parts = module.split(".")
    if parts[0] != "properties" or len(parts) == 1:
        return parts[0]
    return f"properties.{parts[1]}"


def layer_violations(edges: dict, rank: dict = RANKS) -> list:
    """``"a imports b"`` for every import that goes up or sideways between wings, and one line per
    wing the layering does not declare that an import comes from or goes to."""
    bad, undeclared = [], {}
    for source, targets in sorted(edges.items()):
        for target in sorted(targets):
            a, b = wing(source), wing(target)
            if target == "properties" or a == b:  # the package's own __init__: docstring and LAYERS
                continue
            if a == "properties":
                continue  # properties/__init__.py imports nothing; if it ever does, the cycle check sees it
            missing = [w for w in (a, b) if w not in rank]
            for w in missing:
                undeclared.setdefault(w, []).append(f"{source} imports {target}")
            if not missing and rank[a] <= rank[b]:
                bad.append(f"{source} ({a}) imports {target} ({b})")
    for w, seen in sorted(undeclared.items()):
        shown = "; ".join(seen[:3]) + (f"; and {len(seen) - 3} more" if len(seen) > 3 else "")
        bad.append(f"{w} is not declared ({shown}): {WHERE}")
    return bad


def wings_on_disk(top: Path = ROOT) -> dict:
    """{name: "package" | "module"} for every subpackage and top-level module of ``properties``."""
    out = {}
    for path in sorted((top / "properties").iterdir()):
        if path.is_dir() and any(path.rglob("*.py")):
            out[path.name] = "package"
        elif path.suffix == ".py" and path.name != "__init__.py":
            out[path.stem] = "module"
    return out


def undeclared_wings(top: Path = ROOT, layers=properties.LAYERS) -> list:
    """One message per wing on disk that *layers* does not declare, and per declared wing that is gone."""
    declared = {name for layer in layers for name in layer}
    found = wings_on_disk(top)
    bad = [f"properties.{name} (properties/{name}{'/' if kind == 'package' else '.py'}) is a wing of "
           f"properties/ that the layering does not declare: {WHERE}"
           for name, kind in found.items() if name not in declared]
    bad += [f"properties.{name} is declared in properties.LAYERS but there is no properties/{name}/ or "
            f"properties/{name}.py: remove it from LAYERS and from the diagram in properties/__init__.py"
            for name in sorted(declared - set(found))]
    return bad


def diagram(docstring: str) -> list:
    """The layers drawn in *docstring*'s ``::`` block, top first, each a list of names as written
    (``explore/`` for a package), without the bottom ``model/, impl/`` line."""
    block = docstring.split("::", 1)[1].strip("\n").split("\n\n", 1)[0]
    layers = []
    for line in block.splitlines():
        names = re.split(r"\s{2,}", line.strip().removeprefix("→").strip(), maxsplit=1)[0]
        layers.append([n.strip() for n in names.split(",")])
    assert layers and layers[-1] == ["model/", "impl/"], "the diagram must end with model/, impl/"
    return layers[:-1]


def diagram_disagreements(docstring: str, layers=properties.LAYERS, top: Path = ROOT) -> list:
    """What the docstring's diagram says differently from *layers* (and from what is on disk)."""
    drawn = diagram(docstring)
    bad = []
    if [[n.rstrip("/") for n in layer] for layer in drawn] != [list(layer) for layer in layers]:
        bad.append("the diagram in properties/__init__.py draws the layers\n  "
                   + "\n  ".join(", ".join(layer) for layer in drawn)
                   + "\nbut properties.LAYERS is\n  " + "\n  ".join(", ".join(layer) for layer in layers))
    kinds = wings_on_disk(top)
    for name in (n for layer in drawn for n in layer):
        kind = kinds.get(name.rstrip("/"))
        if kind is not None and name.endswith("/") != (kind == "package"):
            bad.append(f"the diagram writes {name!r} but properties/{name.rstrip('/')} is a {kind}"
                       f" (a package is written with a trailing /, a module without)")
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
    assert layer_violations({"properties.coverage": {"properties.impl_checks"}})  # sideways, top-level modules
    assert not layer_violations({"properties.coverage": {"properties.catalogue"}})


def test_an_undeclared_wing_fails_saying_where_to_declare_it(tmp_path):
    (tmp_path / "properties" / "engine").mkdir(parents=True)
    (tmp_path / "properties" / "engine" / "__init__.py").write_text('"""A new wing."""\n')
    (tmp_path / "properties" / "targets.py").write_text("")
    (tmp_path / "properties" / "__init__.py").write_text("")
    layers = (("engine",), ("catalogue",))
    assert undeclared_wings(tmp_path, (("catalogue",),)) == [
        f"properties.engine (properties/engine/) is a wing of properties/ that the layering does not declare: {WHERE}",
        f"properties.targets (properties/targets.py) is a wing of properties/ that the layering does not declare: {WHERE}",
        "properties.catalogue is declared in properties.LAYERS but there is no properties/catalogue/ or "
        "properties/catalogue.py: remove it from LAYERS and from the diagram in properties/__init__.py"]
    assert "properties/__init__.py" in WHERE
    assert undeclared_wings(tmp_path, (("engine", "targets"),)) == []
    # an import from a wing nobody declared is refused too, whatever the ranks would say
    bad = layer_violations({"properties.engine.run": {"properties.catalogue"}}, ranks(layers[1:]))
    assert bad == [f"properties.engine is not declared (properties.engine.run imports properties.catalogue): {WHERE}"]


def test_the_diagram_check_names_a_disagreement():
    doc = "Layers::\n\n    cli       the command\n      → explore/, catalogue    two wings\n      → model/, impl/\n\nMore."
    assert diagram(doc) == [["cli"], ["explore/", "catalogue"]]
    assert diagram_disagreements(doc, (("cli",), ("explore", "catalogue"))) == []
    assert diagram_disagreements(doc, (("cli",), ("explore",), ("catalogue",)))  # a layer split in LAYERS only
    swapped = doc.replace("explore/, catalogue", "explore, catalogue/")
    assert len(diagram_disagreements(swapped, (("cli",), ("explore", "catalogue")))) == 2  # package / module marks


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


def test_every_wing_is_declared_in_the_layering():
    bad = undeclared_wings()
    assert not bad, "\n".join(bad)


def test_the_docstring_draws_the_layering():
    bad = diagram_disagreements(properties.__doc__)
    assert not bad, "\n".join(bad)


def test_every_wing_is_a_documented_package():
    wings = [f"properties.{name}" for name, kind in wings_on_disk().items() if kind == "package"]
    for package in ("model", "impl", "properties", *wings):
        init = ROOT.joinpath(*package.split("."), "__init__.py")
        assert init.exists(), f"{package} has no __init__.py (a namespace package cannot be shipped to Spark in a zip)"
        assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), f"{package}/__init__.py has no docstring"


def imports_of_test_modules(top: Path = ROOT) -> list:
    """``"a imports b"`` for every test module *b* (``test_*.py``) that another module under tests/ imports."""
    mods = {".".join(p.relative_to(top).with_suffix("").parts): p for p in sorted((top / "tests").rglob("*.py"))}
    mods = {name.removesuffix(".__init__"): path for name, path in mods.items()}
    return [f"{name} imports {target}" for name, path in mods.items()
            for target in sorted(imports_of(path, name, mods)) if target.rpartition(".")[2].startswith("test_")]


def test_no_test_module_imports_another():
    """A helper two test modules need lives in tests/helpers/, never in one of them: importing a
    test module runs its module-level code (an ``importorskip`` skips the importer too) and ties
    one test file's shape to another's."""
    bad = imports_of_test_modules()
    assert not bad, "move what is shared to tests/helpers/:\n" + "\n".join(bad)


def test_the_project_is_licensed_like_kafka():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
