"""The slow marker selects for development only: `make test` (what CI runs) runs every test, slow
ones included, while `make test-fast` leaves them out and `make hub-check` still selects its own."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _recipe(target: str) -> list[str]:
    """The command lines of a Makefile target."""
    text = (ROOT / "Makefile").read_text()
    match = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", text, re.M)
    assert match, f"Makefile has no target {target}"
    return [line.strip() for line in match.group(1).splitlines()]


def _pytest_args(target: str) -> list[list[str]]:
    return [shlex.split(line)[3:] for line in _recipe(target) if "-m pytest" in line]


def test_make_test_selects_every_test_and_test_fast_leaves_out_the_slow_ones():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "-m" not in shlex.split(options.get("addopts", "")), "a marker expression in addopts would apply to make test"
    assert any(m.startswith("slow:") for m in options["markers"])
    suite = _pytest_args("test")[0]  # the first is .venv's suite; the second, tests/parity
    assert "-m" not in suite and not [a for a in suite if a.startswith("tests/")], suite
    [fast] = _pytest_args("test-fast")
    assert fast[fast.index("-m") + 1] == "not slow"
    [hub] = _pytest_args("hub-check")
    assert hub[hub.index("-m") + 1] == "slow" and "tests/test_hub_e2e.py" in hub
