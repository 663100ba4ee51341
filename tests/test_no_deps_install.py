"""scripts/no_deps_install.py leaves out the heavy frameworks a family's wrapper does not import
(TensorFlow for a basic-pitch wrapper that runs its ONNX model), not only torch's family; it reads
the wrapper without importing it, and a fake installed package's metadata and a fake pip report
stand in for the index (nothing is downloaded or installed here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

WRAPPER = """
from __future__ import annotations
import numpy as np
from .base import import_torch
from .install import require

class PitchEncoder:
    def __init__(self):
        self.torch = import_torch()
        self.bp = require("basic_pitch.inference", "basic-pitch")
        import onnxruntime.capi
"""

# what basic-pitch 0.4 declares, shortened: TensorFlow for one of its back ends beside ONNX and TFLite
METADATA = (
    "Metadata-Version: 2.1\nName: fakepitch\nVersion: 0.4.0\n"
    "Requires-Dist: numpy>=1.18\nRequires-Dist: librosa>=0.8.0\nRequires-Dist: onnxruntime\n"
    "Requires-Dist: tensorflow<2.16,>=2.4.1 ; python_version >= '3'\nRequires-Dist: tensorflow-macos ; sys_platform == 'darwin'\n"
    "Requires-Dist: tflite-runtime ; python_version >= '3'\nRequires-Dist: torch\n"
    "Requires-Dist: pytest ; extra == 'test'\n"
)


def _script():
    spec = importlib.util.spec_from_file_location("no_deps_install", ROOT / "scripts" / "no_deps_install.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def fake_installed(tmp_path, monkeypatch):
    """fakepitch 0.4.0 installed, as far as importlib.metadata can tell (a dist-info on sys.path)."""
    info = tmp_path / "site" / "fakepitch-0.4.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(METADATA)
    (info / "top_level.txt").write_text("fakepitch\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return tmp_path


def _item(name, version, requires=()):
    return {"metadata": {"name": name, "version": version, "requires_dist": list(requires)}}


def test_the_wrapper_imports_are_read_from_its_source_without_importing_it():
    module = _script()
    assert module.wrapper_imports(WRAPPER) == {"__future__", "numpy", "torch", "basic_pitch", "onnxruntime"}
    assert module.wrapper_path("maeb.encoders.audioset:VggishEncoder") == ROOT / "maeb" / "encoders" / "audioset.py"
    assert "torch" in module.wrapper_imports((ROOT / "maeb" / "encoders" / "audioset.py").read_text())


def test_a_heavy_dependency_is_left_out_unless_the_wrapper_imports_it():
    module = _script()
    requirements = module.requirements_of(METADATA)
    imported = module.imported_distributions(module.wrapper_imports(WRAPPER))
    keep, left = module.split(requirements, imported)
    assert [r.name for r in keep] == ["numpy", "librosa", "onnxruntime"]
    assert [r.name for r in left] == ["tensorflow", "tflite-runtime", "torch"]
    # a wrapper that runs the TensorFlow back end keeps it; torch stays out either way
    keep, left = module.split(requirements, imported | module.imported_distributions({"tensorflow"}))
    assert "tensorflow" in [r.name for r in keep] and [r.name for r in left] == ["tflite-runtime", "torch"]
    # no wrapper: every heavy framework is left out, and the reason says how to keep one
    _, left = module.split(requirements)
    assert [r.name for r in left] == ["tensorflow", "tflite-runtime", "torch"]
    assert "--wrapper" in module.leave_out_reason("tensorflow", None)


def test_dry_run_prints_what_it_installs_and_leaves_out(fake_installed, monkeypatch, capsys):
    module = _script()
    (fake_installed / "pitch.py").write_text(WRAPPER)
    monkeypatch.setattr(module.subprocess, "run", lambda *a, **k: pytest.fail(f"--dry-run ran {a}"))
    asked = []
    monkeypatch.setattr(module, "resolve", lambda kept: asked.append(kept) or [_item("resampy", "0.4.3")])
    assert module.main(["fakepitch==0.4.0", "--wrapper", str(fake_installed / "pitch.py"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert asked == [["numpy>=1.18", "librosa>=0.8.0", "onnxruntime"]]
    commands = [line for line in out.splitlines() if line.startswith("+ ")]
    assert commands[0] == "+ pip install -q --no-deps fakepitch==0.4.0"
    assert commands[1].endswith("constraints.txt numpy>=1.18 librosa>=0.8.0 onnxruntime"), commands
    assert "pip would install: resampy==0.4.3" in out
    assert "left out: tensorflow<2.16,>=2.4.1 (a heavy framework the wrapper does not import)" in out
    assert "left out: tflite-runtime" in out and "left out: torch (pip would replace the installed torch" in out
    assert "fakepitch: would be installed (--dry-run) with 3 of its 6 declared dependencies" in out


def test_a_heavy_package_a_kept_dependency_pulls_in_is_left_out_too(fake_installed, monkeypatch, capsys):
    """librosa here requires jax (a stand-in for any kept dependency that declares a framework): the
    kept set goes in pinned with --no-deps, without jax and jaxlib."""
    module = _script()
    report = [
        _item("librosa", "0.10.2", ["numpy", "jax>=0.4"]),
        _item("jax", "0.4.30", ["jaxlib"]),
        _item("jaxlib", "0.4.30"),
        _item("resampy", "0.4.3"),
    ]
    monkeypatch.setattr(module.subprocess, "run", lambda *a, **k: pytest.fail(f"--dry-run ran {a}"))
    monkeypatch.setattr(module, "resolve", lambda kept: report)
    module.main(["fakepitch==0.4.0", "--dry-run"])
    out = capsys.readouterr().out
    assert "+ pip install -q --no-deps librosa==0.10.2 resampy==0.4.3" in out
    assert "left out: jax==0.4.30, required by librosa (a heavy framework; pass --wrapper" in out
    assert "left out: jaxlib==0.4.30, required by jax" in out


def test_the_declared_requirements_come_from_the_installed_metadata(fake_installed):
    module = _script()
    names = [r.name for r in module.declared("fakepitch==0.4.0")]
    assert names == ["numpy", "librosa", "onnxruntime", "tensorflow", "tflite-runtime", "torch"]
    assert "fakepitch" not in sys.modules
