"""The results layer: result files: writing them in mteb's layout and reading published and
local ones.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""
