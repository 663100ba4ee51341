"""The engine layer: what task types call: the embedding cache, the embedding loop, frames,
generated texts, task records.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""
