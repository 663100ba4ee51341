"""The run layer: one model over a list of tasks: options, orchestration, stability bands,
the Ray driver and workers.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""
