"""maeb: a fast, faithful harness for the Massive Audio Embedding Benchmark and audio evaluation."""

__version__ = "0.1.0"
