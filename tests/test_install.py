"""The package as a user installs it: a wheel in a fresh virtual environment, run from a folder
that is not the checkout, finds its own catalog (models, tasks, benchmarks) and evaluates a task."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from maeb.mock import write_tone_folder

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv holding only the maeb wheel; the test interpreter's packages (torch,
    datasets, ...) are visible through a .pth path entry, which does not activate the checkout's
    editable install."""
    work = tmp_path_factory.mktemp("install")
    wheels = work / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(wheels)],
        check=True,
        capture_output=True,
    )
    env_dir = work / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # the test interpreter's site folders, and those they add themselves (a venv that reuses another's packages)
    paths = dict.fromkeys([*site.getsitepackages(), *(p for p in sys.path if p.endswith("site-packages"))])
    (Path(purelib) / "test-dependencies.pth").write_text("\n".join(paths) + "\n")
    wheel = next(wheels.glob("maeb-*.whl"))
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True
    )
    return python


def maeb(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "maeb", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_installed_package_is_not_the_checkout(installed, tmp_path):
    where = subprocess.run(
        [str(installed), "-c", "import maeb, maeb.spec.catalog as c; print(maeb.__file__); print(c.catalog_dir('tasks'))"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert str(ROOT) not in where[0] and "site-packages" in where[0]
    assert where[1].endswith("_catalog/tasks")


def test_installed_package_lists_its_catalog(installed, tmp_path):
    models = maeb(installed, tmp_path, "list", "models", "--json")
    assert models.returncode == 0, models.stderr
    names = {m["name"] for m in json.loads(models.stdout)}
    assert {"maeb/mfcc-stats", "openai/whisper-medium", "laion/clap-htsat-unfused"} <= names
    benchmarks = maeb(installed, tmp_path, "list", "benchmarks")
    assert benchmarks.returncode == 0, benchmarks.stderr
    assert "MAEB: 30 tasks" in benchmarks.stdout and "MAEB+: 98 tasks" in benchmarks.stdout
    tasks = maeb(installed, tmp_path, "list", "tasks", "--benchmark", "MAEB")
    assert tasks.returncode == 0 and "30 tasks" in tasks.stdout
    # mteb's registry records ship with the package: model_meta.json is mteb's record there too
    code = "from maeb.spec.catalog import mteb_records; print(len(mteb_records()))"
    records = subprocess.run([str(installed), "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert records.returncode == 0 and int(records.stdout) >= 100, records.stderr


@pytest.mark.slow
def test_installed_package_runs_a_task_from_another_folder(installed, tmp_path):
    write_tone_folder(tmp_path / "tones", {"low": 220.0, "high": 3520.0}, per_label=10)
    spec = tmp_path / "tones.toml"
    spec.write_text(
        'name = "Tones"\ntype = "clustering"\n[data]\nsource = "audiofolder"\npath = "tones"\nlabel_column = "label"\n'
        'eval_splits = ["test"]\n'
    )
    out = maeb(
        installed, tmp_path, "run", "--model", "mfcc", "--tasks", "tones.toml", "--output-dir", "res", "--cache-dir", "cache"
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(next((tmp_path / "res").rglob("Tones.json")).read_text())
    assert result["scores"]["test"][0]["v_measure"] > 0.9  # two pure tones separate perfectly


def test_the_readmes_python_example_runs_from_the_installed_package(installed, tmp_path):
    """The "From Python" page's first block (docs/python.md; the part that downloads wav2vec2 is a block
    of its own), in a folder of its own."""
    page = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    block = page.split("```python", 1)[1].split("```", 1)[0]
    code = block.split("wav2vec2 =", 1)[0]
    assert "examples/" not in code  # the wheel has no examples folder
    env = {**os.environ, "MAEB_CACHE_DIR": str(tmp_path / "cache"), "HF_HOME": str(tmp_path / "hf")}
    done = subprocess.run([str(installed), "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["ToneClasses", "ToneClusters"]
    assert all(0.0 <= float(line.split()[1]) <= 1.0 and line.endswith("mteb-2.26 []") for line in lines), lines
