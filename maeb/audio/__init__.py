"""The audio layer (floor 2 of 14): audio in: decode, resample, filterbanks, streams, long-audio windows,
perturbations.

It may import its own modules and the layers below it: maeb.core.
The floors, their rooms and the arrows between them: docs/architecture.md."""

from .._compat import forward

# maeb.audio was a module until 0.2: its names still resolve here (with a DeprecationWarning)
__getattr__ = forward(__name__, "maeb.audio.pipeline")
