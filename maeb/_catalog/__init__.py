"""Task specs and model entries shipped with the package (tasks/ and models/ in the repository)."""
