"""The run layer's shape (issue 36): run/ reads the offline benchmarks' data but never builds it (the
fronts do, maeb.benchmarks.offline), so no module of run/ imports benchmarks/ or cli/, not even inside
a function; its modules share public names only (the Ray path once imported the runner's private
helpers); and the runner is the entry point, not a hub."""

from __future__ import annotations

import ast
from pathlib import Path

import maeb

RUN = Path(maeb.__file__).parent / "run"


def _imports(path: Path) -> list[tuple[str, list[str], int]]:
    """Every import of a module, at any depth: (absolute module, names, line)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "maeb.run" if node.level == 1 else "maeb" if node.level == 2 else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            out.append((module, [a.name for a in node.names], node.lineno))
    return out


def test_run_imports_neither_benchmarks_nor_cli_anywhere():
    upward = [
        f"{path.name}:{line} {module}"
        for path in sorted(RUN.glob("*.py"))
        for module, _, line in _imports(path)
        if module.startswith(("maeb.benchmarks", "maeb.cli", "maeb.api"))
    ]
    assert upward == []


def test_the_run_modules_share_public_names_only():
    private = [
        f"{path.name}:{line} {module}.{name}"
        for path in sorted(RUN.glob("*.py"))
        for module, names, line in _imports(path)
        for name in names
        if module.startswith("maeb.") and name.startswith("_")
    ]
    assert private == []


def test_the_runner_is_an_entry_point_not_a_hub():
    source = (RUN / "runner.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    run = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run")
    assert run.end_lineno - run.lineno < 60
    assert len(source.splitlines()) < 300
    assert all(len(p.read_text(encoding="utf-8").splitlines()) < 300 for p in RUN.glob("*.py") if p.name in SPLIT)


# the modules runner.py (and options.py, distributed.py) were split into, by job
SPLIT = {"summary.py", "task.py", "resume.py", "model.py", "record.py", "plan.py", "flags.py", "raypool.py"}


def test_a_direct_run_over_unbuilt_offline_data_says_who_builds_it(tmp_path):
    import pytest

    from maeb.core.errors import MaebError
    from maeb.run.options import RunOptions
    from maeb.run.runner import run
    from maeb.spec.catalog import find_model, find_task

    options = RunOptions(output_dir=None, cache_dir=tmp_path, show_progress=False)
    with pytest.raises(MaebError, match=r"task LiteSpokenDigits: MAEB-lite's data is not built at .*maeb.evaluate\(\)"):
        run(find_model("maeb/mfcc-stats"), [find_task("LiteSpokenDigits")], options)
    assert not (tmp_path / "maeb-lite").exists()  # the run layer builds nothing
