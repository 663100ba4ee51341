"""Every public function, class and method of maeb has a docstring (issue 26), checked by
scripts/missing_docstrings.py's `missing()`, which is itself checked on a module made here."""

import importlib
import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "missing_docstrings.py"

NOT_YET: tuple[str, ...] = ()


def _checker():
    spec = importlib.util.spec_from_file_location("missing_docstrings", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_public_name_of_maeb_has_a_docstring():
    found = [name for name in _checker().missing() if not name.startswith(NOT_YET)]
    assert not found, f"{len(found)} public names without a docstring: {', '.join(found)}"


PROBE = '''
import dataclasses


def documented():
    """Has one."""


def bare():
    pass


def _private():
    pass


@dataclasses.dataclass
class Record:  # a dataclass's generated signature is not a docstring
    x: int = 0

    def run(self):
        return self.x


class Base:
    """Documented."""

    def step(self):
        """The base's docstring, which an override inherits."""


class Child(Base):
    """Documented."""

    def step(self):
        return 1

    def extra(self):
        return 2
'''


def test_the_checker_names_exactly_the_undocumented_public_names(tmp_path, monkeypatch):
    (tmp_path / "maeb_docstring_probe.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "maeb_docstring_probe", raising=False)
    probe = importlib.import_module("maeb_docstring_probe")
    found = _checker().missing([probe])
    assert found == [
        "maeb_docstring_probe.Child.extra",
        "maeb_docstring_probe.Record",
        "maeb_docstring_probe.Record.run",
        "maeb_docstring_probe.bare",
    ]
