"""The house plan: maeb's floors (the layer folders of maeb/, bottom first), the rooms on each floor
(its modules) and the arrows between floors: every import counts, at module level, inside a function,
and a "maeb.x.y:Attr" (or "maeb.x.y") string, which names a module imported when the string is used
(family factories, registries).

    python scripts/architecture.py            # print the drawing
    python scripts/architecture.py --write    # write it to docs/architecture.md

A module may import its own floor and the floors below it. An arrow that runs back up is either
one of UPWARD's declared exceptions (at most BUDGET of them, each with its reason) or a failure of
tests/test_architecture.py, which also checks that docs/architecture.md is the drawing of today's tree
and that at most ROOM_CIRCLES circles remain among the modules of one floor."""

from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "maeb"
DRAWING = ROOT / "docs" / "architecture.md"

# the floors, bottom first: each is a folder of maeb/
LAYERS = [
    "core",
    "synth",
    "audio",
    "data",
    "encoders",
    "engine",
    "metrics",
    "audiogen",
    "tasktypes",
    "spec",
    "results",
    "analysis",
    "run",
    "benchmarks",
    "cli",
]
# the modules beside the folders and the floor each counts as
BESIDE = {
    "maeb": "cli",  # the package: `maeb.evaluate` and friends, imported lazily from maeb.api
    "maeb.__main__": "cli",
    "maeb.api": "cli",  # the Python front door, beside the command line
    "maeb._catalog": "spec",  # the task specs and model entries shipped as package data
    "maeb.mock": "encoders",  # toy encoders (registered families: their module path is part of their identity)
}
# a string that names a module of maeb, with or without ":Attr"
NAMED = re.compile(r"(maeb(?:\.[A-Za-z_][A-Za-z_0-9]*)*)(?::[A-Za-z_][A-Za-z_0-9.]*)?")
# every floor may import the package itself for __version__ (its other names load lazily)
ANYWHERE = {"maeb"}

# Declared exceptions: a module allowed to reach one higher floor, and why. Every other arrow runs
# down. BUDGET is how many there may be: a new one replaces an old one or is argued for in review.
UPWARD: dict[str, tuple[str, str]] = {}
BUDGET = 0
# circles among the modules of one floor (tests/test_architecture.py): a module that needs a piece of
# another's that needs it back takes that piece from a module of its own below both
ROOM_CIRCLES = 1  # the run/ folder's; was 9 before the house walk of issue 45, 3 its ceiling


def modules() -> dict[str, Path]:
    """Every module of maeb/ by dotted name."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports(name: str, path: Path, known: dict[str, Path], lazy: bool) -> set[str]:
    """The maeb modules `name` imports: at import time, or anywhere (lazy=True: inside functions too)."""
    tree = _parse(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    nodes = ast.walk(tree) if lazy else _import_time(tree.body)
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            submodules = {f"{target}.{a.name}" for a in node.names} & set(known)
            found |= submodules or ({target} & set(known))
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names} & set(known)
        elif lazy and isinstance(node, ast.Constant) and isinstance(node.value, str):
            found |= {_named_module(node.value)} & set(known)
    found.discard(name)
    return found


def _named_module(text: str) -> str:
    """The module a "maeb.x.y:Attr" or "maeb.x.y" string names (a family's factory, a registry
    entry): imported when the string is used, so it is an arrow like an import inside a function."""
    match = NAMED.fullmatch(text)
    return match.group(1) if match else ""


@functools.cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _import_time(body):
    """The statements run at import: the module body, into if/try blocks but not into functions."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, field, []):
                    yield from _import_time(child.body if isinstance(child, ast.ExceptHandler) else [child])


def layer(name: str) -> str | None:
    """The floor of a module: its folder, or BESIDE's word for the modules beside the folders."""
    if name in BESIDE:
        return BESIDE[name]
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def arrows(lazy: bool = True) -> list[tuple[str, str]]:
    """(importer, imported) for every import between modules of different floors."""
    known = modules()
    out = []
    for name, path in known.items():
        for target in sorted(imports(name, path, known, lazy)):
            if target not in ANYWHERE and layer(name) != layer(target):
                out.append((name, target))
    return out


def upward(lazy: bool = True) -> list[tuple[str, str]]:
    """The arrows that run back up (to a higher floor)."""
    return [(a, b) for a, b in arrows(lazy) if LAYERS.index(layer(b)) > LAYERS.index(layer(a))]


def declared(a: str, b: str) -> bool:
    """Whether the upward arrow a -> b is one of UPWARD's declared exceptions."""
    return a in UPWARD and UPWARD[a][0] == layer(b)


def floor_cycles(pairs) -> list[list[str]]:
    """Floors that reach each other through `pairs` (strongly connected sets of more than one floor)."""
    graph = {f: set() for f in LAYERS}
    for a, b in pairs:
        graph[layer(a)].add(layer(b))
    reach = {f: _reachable(graph, f) for f in LAYERS}
    seen, out = set(), []
    for f in LAYERS:
        group = sorted((g for g in LAYERS if g in reach[f] and f in reach[g]), key=LAYERS.index)
        if len(group) > 1 and f not in seen:
            seen |= set(group)
            out.append(group)
    return out


def floor_graph(lazy: bool = True) -> dict[str, set[str]]:
    """importer -> the modules of its own floor it imports (every import counted with lazy=True)."""
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for target in imports(name, path, known, lazy):
            if target not in ANYWHERE and layer(target) == layer(name) and layer(name):
                graph[name].add(target)
    return graph


def room_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles among modules: strongly connected sets of more than one (Tarjan's algorithm,
    without recursion), each sorted, in the order of their first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    out.append(sorted(group))
    return sorted(out)


def _reachable(graph, start):
    stack, seen = [start], set()
    while stack:
        for nxt in graph[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _summary(path: Path) -> str:
    doc = ast.get_docstring(_parse(path)) or ""
    line = " ".join(doc.split("\n\n")[0].split())
    return line if len(line) <= 140 else line[:137].rstrip() + "..."


def _circles(groups: list[list[str]]) -> str:
    return "none." if not groups else "; ".join(" ↔ ".join(c) for c in groups) + "."


def render() -> str:
    """The drawing: floors top first with their rooms, then the arrows between floors, and the circles
    between floors and within one."""
    known = modules()
    out = [
        "# The house: maeb's floors, rooms and arrows",
        "",
        "Generated by `python scripts/architecture.py --write` from the folders of maeb/ (do not edit;",
        "tests/test_architecture.py checks it is current). A floor is a folder of maeb/; a module may",
        "import its own floor and the floors below it. Top floor first.",
        "",
    ]
    for index in range(len(LAYERS) - 1, -1, -1):
        floor = LAYERS[index]
        out.append(f"## {index + 1}. {floor}/")
        out.append("")
        out.append(_summary(known[f"maeb.{floor}"]))
        out.append("")
        rooms = [n for n in known if layer(n) == floor and n != f"maeb.{floor}"]
        for name in rooms:
            where = (
                f"`{name.removeprefix(f'maeb.{floor}.')}`"
                if name.startswith(f"maeb.{floor}.")
                else f"`{name}` (beside the folders)"
            )
            out.append(f"- {where}: {_summary(known[name]) or '(no docstring)'}")
        out.append("")
    counts: dict[tuple[str, str], int] = {}
    for a, b in arrows(lazy=True):
        key = (layer(a), layer(b))
        counts[key] = counts.get(key, 0) + 1
    out += [
        "## Arrows between floors",
        "",
        'Imports from one floor to another (module pairs; imports inside functions and "maeb.x:Attr" strings included).',
        "",
    ]
    for index in range(len(LAYERS) - 1, -1, -1):
        floor = LAYERS[index]
        down = [f"{b} ({n})" for (a, b), n in sorted(counts.items(), key=lambda kv: -LAYERS.index(kv[0][1])) if a == floor]
        out.append(f"- {floor} → {', '.join(down) if down else 'nothing'}")
    out += ["", "## Arrows that run back up", ""]
    ups = upward(lazy=True)
    if not ups:
        out.append("None.")
    for a, b in ups:
        reason = UPWARD[a][1] if declared(a, b) else "NOT DECLARED"
        out.append(f'- `{a}` → `{b}` (inside a function or a "module:Attr" string): {reason}')
    out += ["", f"Declared exceptions: {len(UPWARD)} of a budget of {BUDGET}.", "", "## Circles between floors", ""]
    early = floor_cycles(arrows(lazy=False))
    late = floor_cycles(arrows(lazy=True))
    kept = floor_cycles([(a, b) for a, b in arrows(lazy=True) if not declared(a, b)])
    out.append("At import time: " + _circles(early))
    out.append("")
    out.append('With every import counted (inside functions, and "module:Attr" strings): ' + _circles(late))
    out.append("")
    out.append("With every import counted, less the declared exceptions: " + _circles(kept))
    out += ["", "## Circles within a floor", ""]
    rooms = room_circles(floor_graph(lazy=True))
    out.append(
        'Modules of one floor that import each other round a circle (every import counted, inside functions and "module:Attr" '
        f"strings too): {len(rooms)} of at most {ROOM_CIRCLES}."
    )
    out.append("")
    out += [f"- {' ↔ '.join(f'`{m}`' for m in group)}" for group in rooms] or ["None."]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    text = render()
    if "--write" in sys.argv[1:]:
        DRAWING.parent.mkdir(exist_ok=True)
        DRAWING.write_text(text, encoding="utf-8")
        print(f"wrote {DRAWING.relative_to(ROOT)}")
    else:
        sys.stdout.write(text)
