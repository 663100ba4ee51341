"""The offline benchmarks' data, built before a run reads it. The fronts (the command line's run and
datacard, maeb.evaluate(), maeb lite and robust) call prepare() with the run's tasks and context, so
the run layer below only reads the folders and never builds them (the floors point one way)."""

from __future__ import annotations

from pathlib import Path

from ..core.context import RunContext
from ..core.taskspec import TaskSpec


def prepare(specs: list[TaskSpec], ctx: RunContext, log) -> None:
    """Offline benchmarks are built on first use, before any identity reads their folders:
    MAEB-lite in its default place under the cache, or in the run's lite_dir when that folder does
    not exist yet (a folder the caller names that exists is theirs: it is only read), MMAG-lite (a
    complete build of any size is reused: the run identity names its content)."""
    if any("${MAEB_LITE_DIR}" in spec.data.path for spec in specs):
        from .lite.build import build as build_lite

        where = Path(ctx.variables()["MAEB_LITE_DIR"])
        if ctx.lite_dir is None or not where.exists():
            build_lite(where, log=log)  # reuses a complete build
    if any("${MMAG_LITE_DIR}" in spec.data.path for spec in specs):
        from .mmag_lite.build import build

        build(Path(ctx.variables()["MMAG_LITE_DIR"]), log=log, any_size=True)
