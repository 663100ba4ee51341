"""The core layer: the foundation every layer uses: the exception family, progress, device
memory, identities, the run context, the typed task spec.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""
