"""maeb: a fast, faithful harness for the Massive Audio Embedding Benchmark and audio evaluation.

    import maeb
    results = maeb.evaluate("facebook/wav2vec2-base", maeb.get_benchmark("MAEB"), output_dir="results")

The Python API (maeb.api) is imported on first use, so `import maeb` stays light."""

__version__ = "0.4.0"

_API = {"evaluate", "get_model", "get_tasks", "get_benchmark", "select_tasks"}
__all__ = sorted(_API | {"__version__", "TaskResult"})


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    if name == "TaskResult":
        from .run.summary import TaskResult

        return TaskResult
    raise AttributeError(f"module 'maeb' has no attribute {name!r}")
