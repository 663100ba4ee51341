"""The metrics layer: the metric registry (metrics looked up by name, each with its oracle),
similarity functions and text metrics the task types score with.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""
