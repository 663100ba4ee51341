"""The audio layer: audio in: decode, resample, filterbanks, streams, long-audio windows,
perturbations.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""
