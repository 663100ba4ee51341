"""The import paths of maeb 0.2 (flat modules) keep working for one release: an old module path is the
same module object as the new one, an old name now taken by a folder forwards its names, and the old
`python -m` entry points run."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from maeb import _compat

ROOT = Path(__file__).resolve().parents[1]


def test_the_table_names_modules_that_exist_and_flat_files_that_do_not():
    """Each new path is a module of today's tree, and no old flat file is left beside it."""
    for old, new in {**_compat.MOVED, **_compat.FOLDERS}.items():
        assert importlib.util.find_spec(new) is not None, new
        assert not (ROOT / (old.replace(".", "/") + ".py")).exists(), old


@pytest.mark.parametrize("old", sorted(_compat.MOVED))
def test_an_old_module_path_is_the_new_module(old):
    new = importlib.import_module(_compat.MOVED[old])
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=_compat.MOVED[old].replace(".", r"\.")):
        aliased = importlib.import_module(old)
    assert aliased is new
    assert aliased.__name__ == _compat.MOVED[old]  # the module keeps its own name and spec
    assert aliased.__spec__.name == _compat.MOVED[old]


def test_submodules_of_a_moved_package_and_from_imports():
    from maeb.benchmarks.lite import runner

    for name in ("maeb.lite", "maeb.lite.runner"):
        sys.modules.pop(name, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import maeb.lite.runner as old_runner

        from maeb import runner as old_flat
        from maeb.mock import write_tone_folder  # maeb.mock did not move: no alias involved
    assert old_runner is runner
    assert old_flat is importlib.import_module("maeb.run.runner")
    assert write_tone_folder.__module__ == "maeb.mock"


@pytest.mark.parametrize("old", sorted(_compat.FOLDERS))
def test_an_old_module_name_now_a_folder_forwards_its_names(old):
    folder = importlib.import_module(old)
    module = importlib.import_module(_compat.FOLDERS[old])
    public = [n for n in vars(module) if not n.startswith("_") and not hasattr(folder.__class__, n)]
    public = [n for n in public if n not in vars(folder)]
    assert public, f"{module.__name__} has no public names to forward"
    for name in public[:5]:
        with pytest.warns(DeprecationWarning):
            assert getattr(folder, name) is getattr(module, name)
    with pytest.raises(AttributeError):
        folder.no_such_name_anywhere  # noqa: B018


def test_python_m_with_an_old_path_runs_the_new_module():
    result = subprocess.run(
        [sys.executable, "-m", "maeb.robust", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout


def _old_uses(path: Path) -> list[str]:
    """Where one file uses an old path or an old name: an import of a moved module (or `-m` and
    its name in a command line), a name an old module-now-folder forwards, a name of
    _compat.OLD_NAMES imported or read as an attribute of its module."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    package = ".".join(parts[:-1] if parts[-1] != "__init__" else parts)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound: dict[str, str] = {}  # local name -> the maeb module it is bound to
    found = []

    def old(dotted: str) -> bool:
        return dotted.startswith("maeb.") and _compat.new_name(dotted) is not None

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([module] if module else []))
            for alias in node.names:
                full = f"{module}.{alias.name}"
                bound[alias.asname or alias.name] = full
                forwarded = (
                    module in _compat.FOLDERS
                    and importlib.util.find_spec(full) is None
                    and alias.name not in vars(importlib.import_module(module))  # not the folder's own name
                )
                if old(module) or old(full) or forwarded or alias.name in _compat.OLD_NAMES.get(module, {}):
                    found.append(f"{path.name}:{node.lineno}: from {module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                if old(alias.name):
                    found.append(f"{path.name}:{node.lineno}: import {alias.name}")
        elif isinstance(node, (ast.List, ast.Tuple)):  # a command line: [..., "-m", "maeb.robust", ...]
            words = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            for flag, word in zip(words, words[1:]):
                if flag == "-m" and isinstance(word, str) and old(word):
                    found.append(f"{path.name}:{node.lineno}: {word!r}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = bound.get(node.value.id, "")
            if node.attr in _compat.OLD_NAMES.get(module, {}):
                found.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr} ({module})")
    return found


# the files that use old names on purpose: the aliases' own tests
ON_PURPOSE = {
    "maeb/_compat.py": "the table of old paths",
    "tests/test_compat_paths.py": "tests the old paths",
    "tests/test_confusing_cases.py": "tests that `python -m maeb.lite` says which command replaced it",
    "scripts/fault_probe_trust.py": "probes the old `python -m maeb.lite`",
    "tests/test_family_records.py": "tests that the old per-fact dicts are views of the records",
}


def test_maeb_code_and_tests_use_the_new_names_only():
    """maeb's modules, tests, scripts and examples use no old path and no old name (they are kept
    only for other people's code, through maeb 0.3.x); an alias's own test is the exception."""
    files = [p for folder in ("maeb", "tests", "scripts", "examples") for p in sorted((ROOT / folder).rglob("*.py"))]
    uses = [u for p in files if str(p.relative_to(ROOT)) not in ON_PURPOSE for u in _old_uses(p)]
    assert len(files) > 100
    assert uses == []


def test_the_old_name_scan_sees_old_names(tmp_path):
    """The scan above finds each kind of old use (a scan that finds nothing would pass it)."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import maeb.runner\n"
        "from maeb.run.runner import RunConfig\n"
        "from maeb.data import Table\n"
        "from maeb.data import sources\n"
        "import maeb.encoders as enc\n"
        "enc.FAMILY_EXTRAS\n"
        "ARGS = ['-m', 'maeb.robust']\n"
        "from maeb.benchmarks.lite import sounds\n"
    )
    (tmp_path / "tests").mkdir()
    moved = tmp_path / "tests" / "sample.py"
    moved.write_text(sample.read_text())
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        uses = _old_uses(moved)
    finally:
        ROOT = saved
    assert sorted(u.split(": ", 1)[1] for u in uses) == sorted(
        [
            "import maeb.runner",
            "from maeb.run.runner import RunConfig",
            "from maeb.data import Table",
            "'maeb.robust'",
            "from maeb.benchmarks.lite import sounds",
            "enc.FAMILY_EXTRAS (maeb.encoders)",
        ]
    )


def test_the_changelog_lists_every_old_path_with_its_deadline():
    """docs/changelog.md's 0.3.0 table names each old path and old name kept through 0.3.x (so a
    user can look up what replaces it before 0.4.0 removes it)."""
    text = (ROOT / "docs" / "changelog.md").read_text(encoding="utf-8")
    section = text[text.index("## 0.3.0") :].split("\n## ", 1)[0]
    assert "0.4.0" in section
    old = [*_compat.MOVED, *(f"from {m} import NAME" for m in _compat.FOLDERS)]
    old += [f"{m}.{n}" for m, names in _compat.OLD_NAMES.items() for n in names]
    assert [o for o in old if f"`{o}`" not in section and f"`{o}` (" not in section] == []
