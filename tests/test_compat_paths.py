"""The import paths of maeb 0.2 (flat modules) keep working for one release: an old module path is the
same module object as the new one, an old name now taken by a folder forwards its names, and the old
`python -m` entry points run."""

from __future__ import annotations

import importlib
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
