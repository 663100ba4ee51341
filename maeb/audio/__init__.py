"""The audio layer: audio in: decode, resample, filterbanks, streams, long-audio windows,
perturbations.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""

from .._forward import forward

# maeb.audio was a module until 0.2: its names still resolve here (with a DeprecationWarning)
__getattr__ = forward(__name__, "maeb.audio.pipeline")
