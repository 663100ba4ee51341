"""Run one model over a list of tasks: the entry point. The run is resolved once (maeb.run.options),
the tasks already done are read back (maeb.run.resume), the model is loaded and its embedder built
(maeb.run.model), each remaining task is evaluated (maeb.run.task) and its result assembled and,
with an output folder, written (maeb.run.record); the summary (maeb.run.summary) says what was done.
Finished tasks are skipped, so an interrupted run resumes. The dry run's plan is maeb.run.plan.
Offline benchmarks' data (MAEB-lite, MMAG-lite) is built by the fronts before the run
(maeb.benchmarks.offline): this layer only reads it."""

from __future__ import annotations

import time
from pathlib import Path

from ..core.context import RunContext
from ..core.errors import MaebError, ModelError
from ..core.paths import safe_component
from ..core.taskspec import TaskSpec
from ..data import hub
from ..encoders import ModelMeta
from ..engine.embed import Embedder
from ..engine.taskrecord import outside_encoder_note
from ..results.write import check_writable, model_dir, task_result
from ..spec.taskspec import distinct
from .extend import Extension, merged_payload
from .model import build_embedder, fitting, load_model
from .options import ResolvedRun, RunOptions, resolve
from .record import result_info, task_record, write_result
from .resume import todo
from .summary import RunSummary, TaskResult, add_stats, fail_task
from .task import evaluate_task


def resolved(meta: ModelMeta, run: RunOptions | ResolvedRun, ctx: RunContext | None = None) -> ResolvedRun:
    """A resolved run as it is, options resolved (maeb.run.options.resolve)."""
    return run if isinstance(run, ResolvedRun) else resolve(meta, run, ctx=ctx)


@hub.in_session  # the hub is probed once per run, on its first download
def run(
    meta: ModelMeta, specs: list[TaskSpec], options: RunOptions | ResolvedRun, log=None, encoder=None, amend=None
) -> RunSummary:
    """Evaluate `meta`'s model (loaded from its entry, or `encoder`, an instance already built) on
    `specs`, with `options` (or a run maeb.run.options.resolve already derived from them). With an
    output folder, results are written in mteb's layout and finished tasks skipped.
    amend(spec, info), if given, completes a task's maeb section before it is written (what the
    caller knows and the runner does not: maeb.run.distributed's workers)."""
    specs = distinct(specs)  # two specs of one name would share one result file
    job = resolved(meta, options)
    cfg, log = job.options, log or job.ctx.log
    started = time.perf_counter()
    if cfg.layers is not None:  # a layer sweep: each layer runs through here as an experiment (maeb.run.layers)
        from .layers import sweep

        if encoder is not None:
            raise ModelError(
                f"model {meta.name!r}: --layers loads the model itself (one forward pass for all layers); pass no encoder"
            )
        return sweep(meta, specs, job, log)
    if encoder is not None and cfg.precision:
        raise ModelError(f"model {meta.name!r}: --precision applies when maeb loads the model; build the encoder in that dtype")
    _require_offline_data(specs, job.ctx)
    tasks = todo(job, specs, log)
    summary = RunSummary(skipped_existing=list(tasks.existing))
    done: dict[str, TaskResult] = {}
    if tasks.pending:
        if cfg.output_dir is not None:  # an unwritable output folder stops the run before the model loads
            check_writable(model_dir(Path(cfg.output_dir), meta, job.experiment))
        emb = build_embedder(job, load_model(job, encoder))
        job.ctx.logger.debug(
            "%s: embedding cache %s, encoder config %s", meta.name, emb.cache.path, emb.cache.identity.get("config")
        )
        pending = fitting(meta, emb.encoder, tasks.pending, job.ctx, cfg.strict_modalities, summary, log)
        try:
            _evaluate_each(job, meta, emb, pending, tasks.extending, summary, done, log, amend)
        finally:
            emb.cache.close()
    summary.results = [done.get(s.name) or tasks.existing[s.name] for s in specs if s.name in done or s.name in tasks.existing]
    summary.wall_seconds = time.perf_counter() - started
    return summary


def _require_offline_data(specs: list[TaskSpec], ctx: RunContext) -> None:
    """An offline benchmark's folder the fronts did not build is one line saying who builds it (the
    run layer only reads it; before the split a run built it here, from below the benchmarks)."""
    folders = ctx.variables()
    for variable, name in (("MAEB_LITE_DIR", "MAEB-lite"), ("MMAG_LITE_DIR", "MMAG-lite")):
        needed = [s.name for s in specs if "${" + variable + "}" in s.data.path]
        if needed and not Path(folders[variable]).is_dir():
            raise MaebError(
                f"task {needed[0]}: {name}'s data is not built at {folders[variable]}; maeb.evaluate() and `maeb run` build "
                "it before the run (maeb.benchmarks.offline.prepare), a direct call of maeb.run.runner.run does not"
            )


def _evaluate_each(job: ResolvedRun, meta, emb: Embedder, pending, extending, summary, done, log, amend) -> None:
    """Each pending task evaluated, its result assembled and written (a failed one recorded or raised)."""
    cfg, told_outside = job.options, False
    for spec, path, ident in pending:
        emb.begin_task(spec.name)
        # generated audio lives beside the result (or in the cache when nothing is written)
        emb.generated_dir = (
            path.parent / "generated" / spec.name
            if path is not None
            else Path(cfg.cache_dir)
            / "generated"
            / safe_component(meta.folder, "model name")
            / safe_component(spec.name, "task name")
        )
        try:
            outcome = evaluate_task(spec, emb, cfg.on_leak, log, cfg.duration_buckets, cfg.stability_replays, cfg.per_item)
        except MaebError as exc:
            if spec.name not in str(exc):
                exc.args = (f"task {spec.name}: {exc}",)
            fail_task(summary, spec.name, exc, cfg.raise_error, log)
            continue
        except Exception as exc:
            if cfg.debug:
                raise
            error = MaebError(
                f"task {spec.name}: unexpected {type(exc).__name__}: {exc} (set MAEB_DEBUG=1 or --debug for the traceback)"
            )
            error.__cause__ = exc
            fail_task(summary, spec.name, error, cfg.raise_error, log)
            continue
        embedding = {**emb.stats.as_dict(), "pipeline": emb.record.pipeline.as_dict()}
        # the task's time outside the embedder (loading data, fitting probes, scoring): compute's other half
        embedding["evaluator_seconds"] = round(max(0.0, outcome.seconds - emb.stats.embed_wall_seconds), 3)
        note = None if told_outside else outside_encoder_note(emb.stats, embedding["pipeline"])
        if note:  # once per run: the reason is the run's, not the task's
            told_outside = True
            embedding["outside_encoder"] = note
            log(f"{spec.name}: {note}")
        info = result_info(job, spec, ident, emb, outcome, embedding)
        if amend is not None:
            amend(spec, info)
        step = extending.get(spec.name)
        if step is not None:
            info["task"] = task_record(step.union)
        payload = task_result(spec, outcome.scores, outcome.seconds, info)
        if isinstance(step, Extension):  # the earlier subsets and splits kept, the new ones added
            payload = merged_payload(step.earlier, payload, step.union, ident)
        result = TaskResult(spec.name, meta.name, payload, path, outcome.files)
        if path is not None:
            write_result(job, meta, result, emb.cache.dim, not done, log)
        done[spec.name] = result
        emb.cache.record_task(spec.name, len(emb.touched))
        add_stats(summary.stats, emb.stats)
        summary.done.append(spec.name)
        _log_done(spec, result, outcome, emb, log)


def _log_done(spec: TaskSpec, result: TaskResult, outcome, emb: Embedder, log) -> None:
    """The task's one line: its main score (with its band), seconds, skipped clips, failed judge items."""
    failed = sum(int(e.get("judge_failed", 0) or 0) for entries in outcome.scores.values() for e in entries)
    skipped = f", {len(emb.stats.skipped)} clips skipped" if emb.stats.skipped else ""
    unfinished = f", {failed} judge items failed (rerun to retry them)" if failed else ""
    band = f" ±{outcome.stability['band']:.4f}" if (outcome.stability or {}).get("band") else ""
    log(f"{spec.name}: {spec.main_score} = {result.main_score:.4f}{band} ({outcome.seconds:.1f} s{skipped}{unfinished})")
