"""The engine layer (floor 5 of 14): what task types call: the embedding cache, the embedding loop, frames,
generated texts, task records.

It may import its own modules and the layers below it: maeb.core, maeb.audio, maeb.data, maeb.encoders.
The floors, their rooms and the arrows between them: docs/architecture.md."""
