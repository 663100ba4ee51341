"""Old module names that are now folders (maeb.data, maeb.audio, maeb.spec, maeb.results, maeb.cli
were modules until maeb 0.2): the folder's missing names forward to the module that took its place,
with a DeprecationWarning, until maeb 0.4.0. It sits on the bottom floor because the folders use it;
the old-path finder (maeb._compat) sits at the top, beside the package that installs it."""

from __future__ import annotations

import importlib
import importlib.util
import warnings


def warn_moved(old: str, new: str) -> None:
    """The DeprecationWarning of an old path, naming the new one and the release that drops it."""
    warnings.warn(f"{old} moved to {new}; the old path goes away in maeb 0.4", DeprecationWarning, stacklevel=3)


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
        warn_moved(f"{package}.{name}", f"{module}.{name}")
        return value

    return __getattr__
