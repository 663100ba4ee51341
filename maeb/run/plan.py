"""The dry run: what a run would do for each task (clips, hours, cached clips, done or not, skipped
or failing), from the specs' statistics, a local folder's file headers and the cache's task records
alone: no model is loaded and nothing is downloaded. Offline benchmarks' data is built by the
fronts before (maeb.benchmarks.offline)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from .. import tasktypes
from ..core.context import RunContext
from ..core.errors import MaebError
from ..core.taskspec import TaskSpec
from ..encoders import ModelMeta
from ..spec.loader import load_task
from .extend import Extension
from .extend import plan as plan_extension
from .model import plan_sides
from .options import ResolvedRun, RunOptions, resolve
from .resume import existing_result
from .summary import RunSummary, fail_task


def plan(meta: ModelMeta, specs: list[TaskSpec], options: RunOptions | ResolvedRun, ray: bool = False) -> list[dict]:
    """What a run would do, from the specs' statistics and the cache's task records alone:
    no model is loaded and nothing is downloaded (ray: the options are checked for a Ray run)."""
    from ..engine.cache import cached_tasks

    if not isinstance(options, ResolvedRun):  # (resolve checks the options)
        options = resolve(meta, options, ray, ctx=plan_context(options))
    job, cfg, ctx = options, options.options, options.ctx
    cached = cached_tasks(cfg.cache_dir, meta.name, meta.revision)
    rows = []
    for spec in specs:
        kind = tasktypes.get(spec.type)
        needs = kind.needs(spec)
        clips, hours, longest, long_clips = 0, 0.0, 0.0, None
        local = not spec.stats and is_local(spec, ctx)
        failed = RunSummary()
        if local:
            try:  # the run goes on past a task whose folder cannot be read; so does its dry run
                clips, hours, longest, long_clips = local_counts(spec, ctx, LONG_CLIP_SECONDS)
            except MaebError as exc:
                fail_task(failed, spec.name, exc, cfg.raise_error, lambda _: None)
        for split in [] if local else kind.splits(spec):
            stats = spec.stats.get(spec.data.split_names.get(split, split)) or spec.stats.get(split) or {}
            n, h = kind.planned_clips(spec, split, stats)  # a type that embeds only part of a split says how much
            clips, hours = clips + n, hours + h
        missing = sorted(side for side in needs if side not in plan_sides(meta, cfg))
        rows.append(
            {
                "task": spec.name,
                "type": spec.mteb_type,
                "subsets": len(spec.data.subsets),
                "splits": kind.splits(spec),
                "clips": clips,
                "hours": round(hours, 2),
                "cached_clips": cached.get(spec.name, 0),
                "done": cfg.output_dir is not None and _plan_status(job.result_path(spec), job.identity(spec), spec),
                "skip": f"no {'/'.join(missing)} side" if missing else "",
                "failed": failed.failed.get(spec.name, ""),
                # the longest clip in seconds (a local folder's headers, else the catalog's statistics) and,
                # for a local folder, how many clips are longer than LONG_CLIP_SECONDS
                "longest_seconds": round(longest or _catalog_longest(spec), 1),
                "long_clips": long_clips,
            }
        )
    return rows


def plan_context(options: RunOptions) -> RunContext:
    """A dry run's context: the run's folders, no judge opened and no progress shown."""
    return RunContext(cache_dir=Path(options.cache_dir), lite_dir=options.lite_dir, mmag_lite_dir=options.mmag_lite_dir)


LONG_CLIP_SECONDS = 30.0  # what the dry run calls long: the length cap of most families under the published protocol


def _catalog_longest(spec: TaskSpec) -> float:
    return max((v.get("max_seconds") or 0.0 for v in spec.stats.values() if isinstance(v, dict)), default=0.0)


def _plan_status(path: Path | None, ident: dict, spec: TaskSpec | None = None) -> bool | str:
    if path is None:
        return False  # nothing is written, so nothing is done
    step = plan_extension(path, spec, ident) if spec is not None else None
    if isinstance(step, Extension):
        return False  # to run: its missing subsets or splits are evaluated and merged
    if step == "done":
        return True
    try:
        return existing_result(path, ident) == "done"
    except MaebError:
        return "computed under another configuration"


def is_local(spec: TaskSpec, ctx: RunContext) -> bool:
    """Whether the task's data is a local folder (read from its files, not the hub)."""
    return spec.data.source in ("audiofolder", "metafolder") or Path(spec.data.location(ctx.variables())).is_dir()


def local_counts(spec: TaskSpec, ctx: RunContext, long_seconds: float = LONG_CLIP_SECONDS) -> tuple[int, float, float, int]:
    """Clips, hours, the longest clip's seconds and the clips longer than long_seconds of a local
    task, read from its files (headers only), after checking that its columns are there: a wrong
    column or main score fails here, before anything is embedded."""
    from ..audio.pipeline import AudioRef, clip_seconds
    from ..data.sources import Table

    kind = tasktypes.get(spec.type)
    data = load_task(spec, ctx)
    refs: dict[int, AudioRef] = {}
    for tables in data.values():
        for table in tables.values():
            kind.check_columns(spec, table)
            items: list = []
            if isinstance(table, Table):
                for column in kind.clip_columns(spec):
                    if column in table:
                        items += table[column]
            else:
                items = [v for _, v in table.corpus + table.queries]
            refs.update({id(r): r for r in items if isinstance(r, AudioRef)})
    unique: dict[str, AudioRef] = {}
    for ref in refs.values():
        with contextlib.suppress(MaebError):
            unique.setdefault(ref.key, ref)
    seconds = [clip_seconds(r) for r in unique.values()]
    return len(unique), round(sum(seconds) / 3600, 4), max(seconds, default=0.0), sum(s > long_seconds for s in seconds)
