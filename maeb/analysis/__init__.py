"""The analysis layer (floor 11 of 14): what is computed from results: leaderboards, reports, uncertainty,
task selection, correlation, durations.

It may import its own modules and the layers below it: maeb.core, maeb.audio, maeb.data, maeb.encoders,
maeb.engine, maeb.metrics, maeb.audiogen, maeb.tasktypes, maeb.spec, maeb.results.
The floors, their rooms and the arrows between them: docs/architecture.md."""
