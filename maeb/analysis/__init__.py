"""The analysis layer: what is computed from results: leaderboards, reports, uncertainty,
task selection, correlation, durations.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""
