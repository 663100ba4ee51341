"""The cli layer: the command line: the parser and its subcommands.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""
