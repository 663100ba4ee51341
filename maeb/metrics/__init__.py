"""The metrics layer (floor 6 of 14): the metric registry (metrics looked up by name, each with its oracle),
similarity functions and text metrics the task types score with.

It may import its own modules and the layers below it: maeb.core, maeb.audio, maeb.data, maeb.encoders,
maeb.engine.
The floors, their rooms and the arrows between them: docs/architecture.md."""
