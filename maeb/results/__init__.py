"""The results layer (floor 10 of 14): result files: writing them in mteb's layout and reading published and
local ones.

It may import its own modules and the layers below it: maeb.core, maeb.audio, maeb.data, maeb.encoders,
maeb.engine, maeb.metrics, maeb.audiogen, maeb.tasktypes, maeb.spec.
The floors, their rooms and the arrows between them: docs/architecture.md."""

from .._compat import forward

# maeb.results was a module until 0.2: its names still resolve here (with a DeprecationWarning)
__getattr__ = forward(__name__, "maeb.results.write")
