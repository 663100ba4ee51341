"""The data layer (floor 3 of 14): data sources behind one Table interface: hub repositories, audio folders,
shards, row transforms, sampling.

It may import its own modules and the layers below it: maeb.core, maeb.audio.
The floors, their rooms and the arrows between them: docs/architecture.md."""

from .._compat import forward

# maeb.data was a module until 0.2: its names still resolve here (with a DeprecationWarning)
__getattr__ = forward(__name__, "maeb.data.sources")
