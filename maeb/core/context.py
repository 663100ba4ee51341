"""What a run hands every step explicitly: where caches live, the device, how to report progress
and notices, the LLM judge, and where MAEB-lite's data is. Nothing travels through environment
variables or attributes set from outside."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from .progress import Progress

LOGGER = logging.getLogger("maeb")


class StderrHandler(logging.Handler):
    """Notices as plain lines on whatever sys.stderr is when they are written (the command line
    installs it; a library user configures logging as they like)."""

    def emit(self, record: logging.LogRecord) -> None:
        import sys

        try:
            from .identity import redact

            prefix = "warning: " if record.levelno >= logging.WARNING else ""
            print(prefix + redact(self.format(record)), file=sys.stderr, flush=True)  # no endpoint's credentials
        except Exception:
            self.handleError(record)


def log_to_stderr(level: int = logging.INFO) -> None:
    """Print the maeb logger's notices on stderr from `level` up (the command line does this once)."""
    if not any(isinstance(h, StderrHandler) for h in LOGGER.handlers):
        LOGGER.addHandler(StderrHandler())
    LOGGER.setLevel(level)
    LOGGER.propagate = False


@dataclass(frozen=True)
class RunContext:
    """What every step of a run is handed: the cache folder, device, progress, logger, judge and
    the data folders of MAEB-lite and MMAG-lite (maeb.run.options.context_of builds it from the options)."""

    cache_dir: Path
    device: str = "cpu"
    progress: Progress = field(default_factory=lambda: Progress("off"))
    logger: logging.Logger = LOGGER
    judge: object | None = None  # a maeb.encoders.chat.Judge for judge-scored task types
    lite_dir: Path | None = None  # where a spec's ${MAEB_LITE_DIR} points (None: under the cache folder)
    mmag_lite_dir: Path | None = None  # where a spec's ${MMAG_LITE_DIR} points (None: under the cache folder)

    def log(self, message: str) -> None:
        """A notice of the run (the logger at INFO)."""
        self.logger.info(message)

    def variables(self) -> dict[str, str]:
        """Values of the variables a spec's data.path may name, as absolute folders: a relative
        --lite-dir, $MAEB_LITE_DIR or --cache-dir means the current folder, as it does where the
        benchmark is built, not the spec file's folder (relative data.path values are read there)."""
        cache = Path(self.cache_dir).expanduser()
        return {
            "MAEB_LITE_DIR": _absolute(self.lite_dir or cache / BUILT_BENCHMARK_FOLDERS["MAEB_LITE_DIR"]),
            "MMAG_LITE_DIR": _absolute(self.mmag_lite_dir or cache / BUILT_BENCHMARK_FOLDERS["MMAG_LITE_DIR"]),
        }


def _absolute(folder: Path | str) -> str:
    return str(Path(folder).expanduser().absolute())


# the folder under a cache folder where each benchmark maeb builds itself (maeb.benchmarks) lives unless a run is
# told another; here, not in the benchmark packages, so that the context's spec variables need no upward import
BUILT_BENCHMARK_FOLDERS = {"MAEB_LITE_DIR": "maeb-lite", "MMAG_LITE_DIR": "mmag-lite"}


def default_cache_dir() -> Path:
    """$MAEB_CACHE_DIR, else maeb under $XDG_CACHE_HOME (default ~/.cache): maeb.core.environment reads it
    (the fronts pass the folder down; this is for library calls made without one)."""
    from .environment import cache_dir

    return cache_dir()


def default_context() -> RunContext:
    """A context for library calls made without one: the default cache folder, CPU, no progress."""
    return RunContext(cache_dir=default_cache_dir())
