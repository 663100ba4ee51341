"""The markers select: `make test` (what CI runs) runs every test but the heavy ones, `make
test-heavy` runs exactly those (so the two together run every test), `make test-fast` leaves out
every slow one, and `make hub-check` still selects its own."""

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


def test_make_test_and_test_heavy_select_every_test_and_test_fast_leaves_out_the_slow_ones():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "-m" not in shlex.split(options.get("addopts", "")), "a marker expression in addopts would apply to make test"
    assert any(m.startswith("slow:") for m in options["markers"]) and any(m.startswith("heavy:") for m in options["markers"])
    suite = _pytest_args("test")[0]  # the first is .venv's suite; the second, tests/parity
    assert suite[suite.index("-m") + 1] == "not heavy" and not [a for a in suite if a.startswith("tests/")], suite
    [heavy] = _pytest_args("test-heavy")
    assert heavy[heavy.index("-m") + 1] == "heavy" and not [a for a in heavy if a.startswith("tests/")], heavy
    [fast] = _pytest_args("test-fast")
    assert fast[fast.index("-m") + 1] == "not slow"
    [hub] = _pytest_args("hub-check")
    assert hub[hub.index("-m") + 1] == "slow" and "tests/test_hub_e2e.py" in hub


def test_quick_check_runs_the_tests_it_is_given_whole():
    """`make quick-check TESTS=...` once ran the named tests under -m "not slow" too, so a family
    test marked slow was dropped without a word: the named tests now run on their own, every marker."""
    lines = [line for line in _recipe("quick-check") if "-m pytest" in line]
    named = [line for line in lines if "$(TESTS)" in line]
    assert len(named) == 1, f"quick-check: one pytest line should run $(TESTS): {lines}"
    args = shlex.split(named[0].replace("$(if $(TESTS),", "").rstrip(")"))[3:]
    assert "-m" not in args and "$(QUICK_TESTS)" not in args, f"quick-check: $(TESTS) run with a marker filter: {named[0]}"
    [fixed] = [line for line in lines if "$(QUICK_TESTS)" in line]
    assert "$(TESTS)" not in fixed
