"""The run layer (floor 12 of 14): one model over a list of tasks: options, orchestration, stability bands,
the Ray driver and workers.

It may import its own modules and the layers below it: maeb.core, maeb.audio, maeb.data, maeb.encoders,
maeb.engine, maeb.metrics, maeb.audiogen, maeb.tasktypes, maeb.spec, maeb.results, maeb.analysis.
The floors, their rooms and the arrows between them: docs/architecture.md."""
