"""The spec layer: task specs: parsing, the catalog of tasks, benchmarks and models,
derivations, loading a spec's data, the reference page.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""

from .._forward import forward
from ..core.taskspec import DataSpec, TaskSpec  # the typed spec lives on the lowest floor; its readers here

__all__ = ["DataSpec", "TaskSpec"]

# maeb.spec was a module until 0.2: its names still resolve here (with a DeprecationWarning)
__getattr__ = forward(__name__, "maeb.spec.taskspec")
