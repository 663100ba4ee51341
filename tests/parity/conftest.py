"""The end-to-end parity suite against mteb 2.26.24 (run with `.venv-parity/bin/python -m pytest tests/parity`).

It needs the oracle environment (`scripts/parity_env.sh`: mteb 2.26.24, torchaudio's Python code,
torchcodec, FFmpeg) and maeb's own .venv for the maeb side. When any of it is missing the tests
fail and say what to install: a skipped parity test would hide a missing reference.

Options: --parity-full runs the full selection instead of the quick one; --parity-keep keeps the
work folder (result files and logs of both sides); --parity-build DIR reuses data and checkpoints
built there (default .parity/).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ORACLE_MODULES = ("mteb", "torchaudio.transforms", "torchcodec.decoders", "datasets")


def pytest_addoption(parser):
    group = parser.getgroup("parity", "end-to-end parity with mteb")
    group.addoption("--parity-full", action="store_true", help="run the full parity selection (about 15 minutes)")
    group.addoption("--parity-keep", action="store_true", help="keep the parity work folder")
    group.addoption("--parity-build", default=None, help="folder with the built data and checkpoints (default .parity/)")


def oracle_problems() -> list[str]:
    """What the oracle environment lacks, as messages (empty when complete)."""
    problems = []
    for name in ORACLE_MODULES:
        try:
            importlib.import_module(name)
        except Exception as exc:  # ImportError, or OSError from a half-installed build
            problems.append(f"import {name}: {type(exc).__name__}: {exc}")
    try:
        import mteb

        if mteb.__version__ != "2.26.24":
            problems.append(f"mteb is {mteb.__version__}, the parity reference is 2.26.24")
    except Exception:  # noqa: BLE001  (already reported above)
        pass
    if not (ROOT / ".venv" / "bin" / "python").exists():
        problems.append(f"maeb's own environment {ROOT / '.venv'} is missing (make install-dev)")
    return problems


@pytest.fixture(scope="session")
def oracle():
    problems = oracle_problems()
    if problems:
        pytest.fail(
            "the parity oracle environment is incomplete (build it with `bash scripts/parity_env.sh` and run "
            "`.venv-parity/bin/python -m pytest tests/parity`):\n  " + "\n  ".join(problems),
            pytrace=False,
        )
    return True


@pytest.fixture(scope="session")
def parity():
    """scripts/parity.py, imported as a module (the suite and the command line share its code)."""
    spec = importlib.util.spec_from_file_location("maeb_parity_script", ROOT / "scripts" / "parity.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
