"""The benchmarks layer (floor 13 of 14): benchmarks maeb builds and runs itself: MAEB-lite, MMAG-lite,
MAEB-robust.

It may import its own modules and the layers below it: maeb.core, maeb.audio, maeb.data, maeb.encoders,
maeb.engine, maeb.metrics, maeb.audiogen, maeb.tasktypes, maeb.spec, maeb.results, maeb.analysis, maeb.run.
The floors, their rooms and the arrows between them: docs/architecture.md."""
