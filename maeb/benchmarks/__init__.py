"""The benchmarks layer: benchmarks maeb builds and runs itself: MAEB-lite, MMAG-lite,
MAEB-robust.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""
