"""The results layer: result files: writing them in mteb's layout and reading published and
local ones.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""

from .._forward import forward

# maeb.results was a module until 0.2: its names still resolve here (with a DeprecationWarning)
__getattr__ = forward(__name__, "maeb.results.write")
