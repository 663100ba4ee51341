"""Old import paths: until maeb 0.2 every module sat flat in maeb/ (maeb.runner, maeb.mock's
neighbours, `python -m maeb.robust`); since 0.3 the modules live in folders by layer. The old paths
keep working through maeb 0.3.x and warn (DeprecationWarning) with the new one; maeb 0.4.0 removes
them (docs/changelog.md lists old -> new):

- a module that moved (maeb.runner -> maeb.run.runner): `import maeb.runner` gives the SAME module
  object as `import maeb.run.runner` (a finder on sys.meta_path aliases the name), and
  `python -m maeb.robust` runs the new module as __main__;
- a module whose old name is now a folder (maeb.data, maeb.audio, maeb.spec, maeb.results, maeb.cli):
  the folder's names forward to the module that took its place (`from maeb.data import Table` is
  maeb.data.sources.Table; maeb._forward).

Only the package (maeb/__init__.py) installs the finder, so this module counts as the top floor: its
table names modules of every floor. Written by the relayout script from its table."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import CodeType

from ._forward import warn_moved

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
    # 0.3.0: the synthesizers moved from the benchmarks to a floor of their own, below the
    # perturbations and the offline text-to-audio systems that use them
    "maeb.benchmarks.lite.sounds": "maeb.synth.sounds",
    "maeb.benchmarks.lite.speech": "maeb.synth.speech",
    "maeb.benchmarks.lite.music": "maeb.synth.music",
    "maeb.benchmarks.mmag_lite.scenes": "maeb.synth.scenes",
}
# names kept under their old spelling through 0.3.x (plain assignments, so no warning), removed in
# 0.4.0: module -> old name -> what to use instead
OLD_NAMES = {
    "maeb.run.runner": {
        "RunConfig": "maeb.run.options.RunOptions",
        "check_run_config": "maeb.run.options.check_options",
        "context_of": "maeb.run.options.context_of",
    },
    "maeb.encoders": {
        "FAMILIES": "maeb.encoders.family.FAMILY_REGISTRY[name].factory",
        "FAMILY_REQUIRES": "maeb.encoders.family.FAMILY_REGISTRY[name].requires",
        "FAMILY_EXTRAS": "maeb.encoders.family.FAMILY_REGISTRY[name].extra",
        "NO_DEPS": "maeb.encoders.family.FAMILY_REGISTRY[name].no_deps",
    },
    "maeb.encoders.hf": {"_dtype": "maeb.encoders.base.torch_dtype", "_source": "maeb.encoders.base.model_source"},
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
    for end in range(len(parts), 1, -1):  # the longest moved prefix
        prefix = ".".join(parts[:end])
        if parts[0] == "maeb" and prefix in MOVED:
            return ".".join([MOVED[prefix], *parts[end:]])
    return None


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
        warn_moved(fullname, new)
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    """Put the old-path finder first on sys.meta_path (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
