"""The spec layer: task specs: parsing, the catalog of tasks, benchmarks and models,
derivations, loading a spec's data, the reference page.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""
