"""scripts/freeze_constraints.sh adds pins only for the packages constraints.txt does not pin yet and
keeps every existing pin as it is (a model pull request once rewrote 27 unrelated pins); `--rewrite`
still re-freezes everything. A fake python whose `pip freeze` prints a fixed list stands in for .venv."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEADER = "# The exact versions\n# line two\n# line three\n"
CONSTRAINTS = HEADER + "annotated-types==0.8.0\nnumpy==2.2.6\nPyYAML==6.0.2\nscikit-learn==1.7.1\ntorch==2.13.0\n"
# what .venv holds after installing a new family's package: newer numpy and scikit-learn (pip
# resolved them again), two new packages, torch's CPU tag, maeb itself editable
FREEZE = [
    "annotated-types==0.8.0",
    "-e git+file:///work/maeb@abc#egg=maeb",
    "maeb==0.3.1",
    "mir_eval==0.8.2",
    "numpy==2.3.1",
    "pyyaml==6.0.2",
    "resampy==0.4.2",
    "scikit_learn==1.8.0",
    "some-local @ file:///tmp/some_local-1.0-py3-none-any.whl",
    "torch==2.13.0+cpu",
]


@pytest.fixture
def checkout(tmp_path):
    """A folder laid out as the checkout (scripts/, constraints.txt) and a fake python."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "freeze_constraints.sh", tmp_path / "scripts")
    (tmp_path / "constraints.txt").write_text(CONSTRAINTS)
    python = tmp_path / "fake-python"
    python.write_text("#!/bin/sh\n[ \"$1 $2 $3\" = '-m pip freeze' ] || exit 9\ncat <<'EOF'\n" + "\n".join(FREEZE) + "\nEOF\n")
    python.chmod(0o755)
    return tmp_path


def _freeze(checkout: Path, *args: str) -> str:
    done = subprocess.run(
        ["bash", str(checkout / "scripts" / "freeze_constraints.sh"), *args],
        env={**os.environ, "PY": str(checkout / "fake-python")},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_only_new_packages_are_pinned_and_existing_pins_are_kept(checkout):
    out = _freeze(checkout)
    after = (checkout / "constraints.txt").read_text()
    assert after == HEADER + (
        "annotated-types==0.8.0\nmir_eval==0.8.2\nnumpy==2.2.6\nPyYAML==6.0.2\nresampy==0.4.2\n"
        "scikit-learn==1.7.1\ntorch==2.13.0\n"
    )
    assert "added mir_eval==0.8.2" in out and "added resampy==0.4.2" in out
    assert "kept numpy==2.2.6 (installed: numpy==2.3.1)" in out
    assert "kept scikit-learn==1.7.1 (installed: scikit_learn==1.8.0)" in out
    assert "PyYAML" not in out and "torch" not in out  # same version: nothing to say
    assert "nothing new to pin" in _freeze(checkout)  # a second run changes nothing
    assert (checkout / "constraints.txt").read_text() == after


def test_rewrite_refreezes_every_pin(checkout):
    _freeze(checkout, "--rewrite")
    lines = (checkout / "constraints.txt").read_text().splitlines()
    assert lines[:3] == HEADER.splitlines()
    assert lines[3:] == [
        "annotated-types==0.8.0",
        "mir_eval==0.8.2",
        "numpy==2.3.1",
        "pyyaml==6.0.2",
        "resampy==0.4.2",
        "scikit_learn==1.8.0",
        "torch==2.13.0",
    ]


def test_the_committed_constraints_are_sorted_as_the_script_writes_them():
    """New pins are placed by sorting the body (C locale, case folded): the committed file must
    already be in that order, or the first added pin would move unrelated lines."""
    body = [line for line in (ROOT / "constraints.txt").read_text().splitlines() if line and not line.startswith("#")]
    done = subprocess.run(
        ["sort", "-f"], input="\n".join(body) + "\n", capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"}
    )
    assert done.stdout.splitlines() == body, "constraints.txt: pins out of order (LC_ALL=C sort -f)"
