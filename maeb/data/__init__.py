"""The data layer: data sources behind one Table interface: hub repositories, audio folders,
shards, row transforms, sampling.

It may import its own modules and the floors below it (docs/architecture.md draws the floors,
their rooms and the arrows between them)."""
