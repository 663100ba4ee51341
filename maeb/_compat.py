"""Old import paths: until maeb 0.2 every module sat flat in maeb/ (maeb.runner, maeb.mock's
neighbours, `python -m maeb.robust`); since 0.3 the modules live in folders by layer. The old paths
keep working for one release and warn (DeprecationWarning) with the new one:

- a module that moved (maeb.runner -> maeb.run.runner): `import maeb.runner` gives the SAME module
  object as `import maeb.run.runner` (a finder on sys.meta_path aliases the name), and
  `python -m maeb.robust` runs the new module as __main__;
- a module whose old name is now a folder (maeb.data, maeb.audio, maeb.spec, maeb.results, maeb.cli):
  the folder's names forward to the module that took its place (`from maeb.data import Table` is
  maeb.data.sources.Table).

Written by the relayout script from its table; removed in maeb 0.4."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import CodeType

MOVED = {
    "maeb.errors": "maeb.core.errors",
    "maeb.progress": "maeb.core.progress",
    "maeb.device": "maeb.core.device",
    "maeb.identity": "maeb.core.identity",
    "maeb.context": "maeb.core.context",
    "maeb.resample": "maeb.audio.resample",
    "maeb.fbank": "maeb.audio.fbank",
    "maeb.stream": "maeb.audio.stream",
    "maeb.windows": "maeb.audio.windows",
    "maeb.perturb": "maeb.audio.perturb",
    "maeb.perturbed": "maeb.audio.perturbed",
    "maeb.transforms": "maeb.data.transforms",
    "maeb.webdataset": "maeb.data.webdataset",
    "maeb.hub": "maeb.data.hub",
    "maeb.hub_rules": "maeb.data.hub_rules",
    "maeb.sampling": "maeb.data.sampling",
    "maeb.protocols": "maeb.encoders.protocols",
    "maeb.tiny": "maeb.encoders.tiny",
    "maeb.judge": "maeb.encoders.chat",
    "maeb.cache": "maeb.engine.cache",
    "maeb.embed": "maeb.engine.embed",
    "maeb.frames": "maeb.engine.frames",
    "maeb.generation": "maeb.engine.generation",
    "maeb.taskrecord": "maeb.engine.taskrecord",
    "maeb.similarity": "maeb.metrics.similarity",
    "maeb.textmetrics": "maeb.metrics.textmetrics",
    "maeb.catalog": "maeb.spec.catalog",
    "maeb.loader": "maeb.spec.loader",
    "maeb.derive": "maeb.spec.derive",
    "maeb.describe": "maeb.spec.describe",
    "maeb.scores": "maeb.results.read",
    "maeb.leaderboard": "maeb.analysis.leaderboard",
    "maeb.report": "maeb.analysis.report",
    "maeb.selection": "maeb.analysis.selection",
    "maeb.correlate": "maeb.analysis.correlate",
    "maeb.durations": "maeb.analysis.durations",
    "maeb.uncertainty": "maeb.analysis.uncertainty",
    "maeb.tables": "maeb.analysis.tables",
    "maeb.runner": "maeb.run.runner",
    "maeb.options": "maeb.run.options",
    "maeb.distributed": "maeb.run.distributed",
    "maeb.rayworker": "maeb.run.rayworker",
    "maeb.stability": "maeb.run.stability",
    "maeb.numeric_env": "maeb.run.numeric_env",
    "maeb.lite": "maeb.benchmarks.lite",
    "maeb.mmag_lite": "maeb.benchmarks.mmag_lite",
    "maeb.robust": "maeb.benchmarks.robust",
    "maeb.checkmodel": "maeb.cli.check_model",
    "maeb.environment": "maeb.core.environment",
}
# old modules whose name is now a folder: the folder forwards its missing names to the new module
FOLDERS = {
    "maeb.audio": "maeb.audio.pipeline",
    "maeb.data": "maeb.data.sources",
    "maeb.spec": "maeb.spec.taskspec",
    "maeb.results": "maeb.results.write",
    "maeb.cli": "maeb.cli.commands",
}


def new_name(old: str) -> str | None:
    """The new dotted name of an old module path (maeb.lite.runner -> maeb.benchmarks.lite.runner)."""
    parts = old.split(".")
    if len(parts) < 2 or parts[0] != "maeb" or f"maeb.{parts[1]}" not in MOVED:
        return None
    return ".".join([MOVED[f"maeb.{parts[1]}"], *parts[2:]])


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} moved to {new}; the old path goes away in maeb 0.4", DeprecationWarning, stacklevel=3)


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module object of its new name (no second copy)."""

    def __init__(self, new: str):
        self.new = new
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec):
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = self.spec  # the import system set the alias's spec: the module keeps its own

    def get_code(self, fullname: str) -> CodeType:
        """What `python -m OLD` runs: the new module as __main__."""
        source = f"import runpy\nrunpy.run_module({self.new!r}, run_name='__main__', alter_sys=True)\n"
        return compile(source, f"<{fullname}, moved to {self.new}>", "exec")


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = new_name(fullname)
        if new is None:
            return None
        _warn(fullname, new)
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    """Put the old-path finder first on sys.meta_path (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def forward(package: str, module: str):
    """A module __getattr__ for a folder that took an old module's name: its names come from `module`."""

    def __getattr__(name: str):
        if name.startswith("__") or importlib.util.find_spec(f"{package}.{name}") is not None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        target = importlib.import_module(module)
        try:
            value = getattr(target, name)
        except AttributeError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        _warn(f"{package}.{name}", f"{module}.{name}")
        return value

    return __getattr__
