"""pyproject.toml lists every package explicitly; a folder it leaves out either is missing from the wheel
(a new floor of maeb/) or makes setuptools warn that it installs a package as data (a folder of tasks/)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _declared() -> set[str]:
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])


def test_every_code_folder_is_a_declared_package():
    """A folder of maeb/ holding Python code is in [tool.setuptools] packages."""
    folders = {p.parent for p in (ROOT / "maeb").rglob("*.py") if "__pycache__" not in p.parts}
    names = {".".join(f.relative_to(ROOT).parts) for f in folders}
    missing = sorted(names - _declared())
    assert not missing, f"pyproject.toml [tool.setuptools] packages lacks {missing}"


def test_every_catalog_folder_is_a_declared_package():
    """Each folder of tasks/ is declared as maeb._catalog.tasks.<folder>, so setuptools' discovery has
    nothing to warn about (an undeclared importable folder is 'absent from the packages configuration')."""
    declared = _declared()
    missing = sorted(f"maeb._catalog.tasks.{d.name}" for d in (ROOT / "tasks").iterdir() if d.is_dir() and d.name.isidentifier())
    missing = [name for name in missing if name not in declared]
    assert not missing, f"pyproject.toml [tool.setuptools] packages lacks {missing}"


def test_no_deps_install_leaves_out_what_pins_torch():
    """scripts/no_deps_install.py installs a package's declared dependencies except torch, torchaudio
    and torchvision (whose wheels pin another torch), and none that only an extra or another platform needs."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("no_deps_install", ROOT / "scripts" / "no_deps_install.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    metadata = (
        "Metadata-Version: 2.1\nName: torchcrepe\nVersion: 0.0.24\n"
        "Requires-Dist: librosa>=0.9.1\nRequires-Dist: resampy\nRequires-Dist: torch\n"
        "Requires-Dist: TorchVision>=0.1 ; python_version >= '3'\nRequires-Dist: torchaudio\n"
        "Requires-Dist: pytest ; extra == 'test'\nRequires-Dist: pywin32 ; sys_platform == 'win32'\n"
    )
    keep, left = module.split(module.requirements_of(metadata))
    assert [str(r) for r in keep] == ["librosa>=0.9.1", "resampy"]
    assert [r.name for r in left] == ["torch", "TorchVision", "torchaudio"]
