"""The data layer: data sources behind one Table interface: hub repositories, audio folders,
shards, row transforms, sampling.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""

from .._forward import forward

# maeb.data was a module until 0.2: its names still resolve here (with a DeprecationWarning)
__getattr__ = forward(__name__, "maeb.data.sources")
