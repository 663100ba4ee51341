"""The module graph: no import cycles, and the layers import downwards only (the data layer
never reaches the runner or an interface, task types never reach the runner)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "maeb"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path, lazy: bool) -> set[str]:
    """The maeb modules `name` imports: at module level, or anywhere (lazy=True)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    nodes = ast.walk(tree) if lazy else iter(tree.body)
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            submodules = {f"{target}.{a.name}" for a in node.names} & set(MODULES)
            found |= submodules or ({target} & set(MODULES))
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names} & set(MODULES)
    found.discard(name)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    graph = {name: _imports(name, path, lazy=False) for name, path in MODULES.items()}
    assert _cycles(graph) == []


def test_the_graph_is_read():
    """The checks above see real edges (a parser that finds nothing would pass them)."""
    assert "maeb.spec.taskspec" in _imports("maeb.run.runner", MODULES["maeb.run.runner"], lazy=False)
    assert "maeb.run.runner" in _imports("maeb.api", MODULES["maeb.api"], lazy=False)
    assert len(MODULES) > 50


def test_one_registry_of_task_types():
    """Spec parsing, derivation and the catalog import read the task-type registry; every
    registered type declares the interface."""
    import importlib.util

    from maeb import tasktypes
    from maeb.spec import derive
    from maeb.spec import taskspec as spec

    assert {**spec.TYPES, **spec.GENERATIVE_TYPES} == tasktypes.mteb_types()
    assert set().union(*derive.FITS.values()) <= set(tasktypes.REGISTRY)
    for name in tasktypes.REGISTRY:
        module = tasktypes.get(name)
        assert all(hasattr(module, member) for member in tasktypes.INTERFACE)
        assert callable(module.params) and module.MAIN_SCORE
    path = PACKAGE.parent / "scripts" / "import_catalog.py"
    loader = importlib.util.spec_from_file_location("import_catalog", path)
    catalog = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(catalog)
    assert catalog.TYPES == {v: k for k, v in tasktypes.mteb_types(generative=False).items()}


def test_task_types_use_only_the_declared_services():
    """A task type reaches the engine through the members tasktypes.SERVICES declares (emb.audio,
    emb.text, ...), not the Embedder's internals (its encoder, cache, statistics)."""
    from maeb import tasktypes

    used: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / "tasktypes").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "emb":
                used.setdefault(node.attr, set()).add(path.name)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr" and len(node.args) >= 2:
                target, name = node.args[0], node.args[1]
                if isinstance(target, ast.Name) and target.id == "emb" and isinstance(name, ast.Constant):
                    used.setdefault(name.value, set()).add(path.name)
    assert {"audio", "text", "generate", "judge"} <= set(used)  # the scan sees the types' calls
    assert {k: sorted(v) for k, v in used.items() if k not in tasktypes.SERVICES} == {}


def _house():
    """scripts/architecture.py: the floors (layer folders), what sits beside them, the declared upward arrows."""
    import importlib.util

    loader = importlib.util.spec_from_file_location("architecture", PACKAGE.parent / "scripts" / "architecture.py")
    house = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(house)
    return house


def test_every_module_lives_on_a_floor():
    """The folders are the layers: every module sits in a layer folder or is named beside them."""
    house = _house()
    assert [m for m in house.modules() if house.layer(m) is None] == []
    assert all((PACKAGE / floor / "__init__.py").is_file() for floor in house.LAYERS)


def test_arrows_run_down_only():
    """An import (inside a function, or a "maeb.x:Attr" string, too) reaches its own floor or a lower
    one, unless it is one of scripts/architecture.py's declared exceptions (UPWARD, each with its
    reason, at most BUDGET of them, and BUDGET near zero); a declared exception no arrow uses is removed."""
    house = _house()
    found = house.upward(lazy=True)
    assert [f"{a} -> {b}" for a, b in found if not house.declared(a, b)] == []
    used = {(a, house.layer(b)) for a, b in found}
    assert [f"{a} -> {floor}" for a, (floor, _) in house.UPWARD.items() if (a, floor) not in used] == []
    assert len(house.UPWARD) <= house.BUDGET <= 2
    assert house.upward(lazy=False) == []  # at import time nothing runs back up


def test_no_circles_between_floors_with_every_import_counted():
    """Counting imports inside functions and "module:Attr" strings, the floors form no circle once the
    declared exceptions are left out (before the synthesizers, the verified download and the
    text-to-audio families moved, 11 of the 14 floors formed one)."""
    house = _house()
    assert house.floor_cycles([(a, b) for a, b in house.arrows(lazy=True) if not house.declared(a, b)]) == []


def test_module_attr_strings_are_arrows(tmp_path):
    """A "maeb.x.y:Attr" string (a family's factory, a registry entry) is an arrow to maeb.x.y when
    every import counts, and one that names a higher floor is caught like an import."""
    house = _house()
    known = house.modules()
    assert "maeb.encoders.hf" in house.imports("maeb.encoders.families", known["maeb.encoders.families"], known, lazy=True)
    fake = tmp_path / "fake.py"
    fake.write_text('FACTORY = "maeb.audiogen.systems:OracleSystem"\nNOT_A_NAME = "maeb.nowhere:Thing"\n')
    found = house.imports("maeb.encoders.fake", fake, known, lazy=True)
    assert found == {"maeb.audiogen.systems"}
    assert house.imports("maeb.encoders.fake", fake, known, lazy=False) == set()
    assert house.LAYERS.index(house.layer("maeb.audiogen.systems")) > house.LAYERS.index(house.layer("maeb.encoders.fake"))


def test_no_circles_between_floors_at_import_time():
    house = _house()
    assert house.floor_cycles(house.arrows(lazy=False)) == []


def test_the_house_check_sees_real_arrows():
    """The layer check reads real edges and would catch one that runs up (a checker that finds
    nothing would pass the tests above)."""
    house = _house()
    assert ("maeb.run.runner", "maeb.spec.taskspec") in house.arrows(lazy=False)
    assert house.LAYERS.index(house.layer("maeb.run.runner")) > house.LAYERS.index(house.layer("maeb.spec.taskspec"))
    assert house.floor_cycles([("maeb.run.runner", "maeb.spec.taskspec"), ("maeb.spec.taskspec", "maeb.run.runner")]) == [
        ["spec", "run"]
    ]


def test_few_circles_within_a_floor():
    """Counting every import (inside functions, "module:Attr" strings), at most ROOM_CIRCLES sets of modules
    of one floor import each other round a circle (before the shared pieces moved into modules of their
    own there were 9: the task types and their registry, the runner's six, metrics, encoders, engine...)."""
    house = _house()
    found = house.room_circles(house.floor_graph(lazy=True))
    assert len(found) <= house.ROOM_CIRCLES <= 3, found
    assert all(len({house.layer(m) for m in group}) == 1 for group in found)


def test_the_circle_finder_finds_a_circle():
    """room_circles on a hand-built graph: a three-module circle and a two-module one are found, a chain
    and a module importing itself are not (a finder that finds nothing would pass the test above)."""
    house = _house()
    graph = {
        "a": {"b"},
        "b": {"c"},
        "c": {"a", "d"},
        "d": {"e"},
        "e": set(),
        "f": {"g", "f"},
        "g": {"f"},
        "h": {"h"},
    }
    assert house.room_circles(graph) == [["a", "b", "c"], ["f", "g"]]
    assert house.room_circles({"a": {"b"}, "b": set()}) == []
    known = house.modules()
    assert "maeb.engine.cache" in house.floor_graph()["maeb.engine.embed"]  # the graph holds real same-floor arrows
    assert "maeb.encoders" not in house.floor_graph()["maeb.engine.embed"]  # and no arrow to another floor
    assert len(house.floor_graph()) == len(known)


def test_the_drawing_is_current():
    """docs/architecture.md is scripts/architecture.py's drawing of today's tree (run it with --write)."""
    house = _house()
    assert house.DRAWING.read_text(encoding="utf-8") == house.render()
