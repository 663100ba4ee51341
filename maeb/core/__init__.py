"""The core layer (floor 1 of 14): the foundation every layer uses: the exception family, progress, device
memory, identities, the run context, the typed task spec.

It may import its own modules and the layers below it: nothing else in maeb.
The floors, their rooms and the arrows between them: docs/architecture.md."""
