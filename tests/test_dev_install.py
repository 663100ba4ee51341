"""The development install works from the folder that holds the clone: git names a clone `maeb`,
and from its parent `python -m maeb` under a plain editable install imports the clone's folder as
a namespace package (a raw ModuleNotFoundError or ImportError). `make install-dev` runs
scripts/editable_root.py after its editable install; this test does the same in a throwaway venv."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_python_m_maeb_runs_from_the_folder_that_holds_a_clone_named_maeb(tmp_path):
    clone = tmp_path / "maeb"
    done = _run(["git", "clone", "-q", "--depth", "1", f"file://{ROOT}", str(clone)], tmp_path)
    if done.returncode:
        pytest.skip(f"cannot clone this checkout: {done.stderr.strip()[-200:]}")
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path).returncode == 0
    python = venv / "bin" / "python"
    # the throwaway venv sees this interpreter's packages (numpy, setuptools, ...) as plain paths:
    # their site-packages' own .pth files, this checkout's editable finder among them, stay inert
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path).stdout.strip())
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-build-isolation"]
    done = _run([*pip, "-e", str(clone)], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    done = _run([str(python), str(clone / "scripts" / "editable_root.py")], tmp_path)
    assert done.returncode == 0, done.stderr
    done = _run([str(python), "-m", "maeb", "--help"], tmp_path)  # from the clone's parent folder
    assert done.returncode == 0 and "usage:" in done.stdout, (done.stdout + done.stderr)[-2000:]
    done = _run([str(python), "-c", "import maeb; print(maeb.__file__)"], tmp_path)
    assert done.stdout.strip() == str(clone / "maeb" / "__init__.py"), done.stdout + done.stderr
