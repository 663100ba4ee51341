"""The cli layer (floor 14 of 14): the command line: the parser and its subcommands.

It may import its own modules and the layers below it: maeb.core, maeb.audio, maeb.data, maeb.encoders,
maeb.engine, maeb.metrics, maeb.audiogen, maeb.tasktypes, maeb.spec, maeb.results, maeb.analysis, maeb.run,
maeb.benchmarks.
The floors, their rooms and the arrows between them: docs/architecture.md."""

from .._compat import forward

# maeb.cli was a module until 0.2: its names still resolve here (with a DeprecationWarning)
__getattr__ = forward(__name__, "maeb.cli.commands")
