"""Run one model over a list of tasks: load each task's data, evaluate it through the cached
embedder, keep (and, with an output folder, write) its result. Finished tasks are skipped, so an
interrupted run resumes."""

from __future__ import annotations

import contextlib
import json
import math
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from .. import tasktypes
from ..analysis.baselines import baselines, shuffled_warning, with_shuffled
from ..core.context import RunContext
from ..core.errors import DataError, MaebError, ModelError, SpecError
from ..core.identity import differences, encoder_identity
from ..core.paths import safe_component
from ..data import hub
from ..encoders import (
    ModelMeta,
    check_encoder,
    check_precision,
    has_audio,
    has_frames,
    has_generate,
    has_synthesize,
    has_text,
    length_policy,
    load_encoder,
    requirements,
)
from ..engine.cache import EmbeddingCache
from ..engine.embed import Embedder
from ..engine.taskrecord import EmbedStats, outside_encoder_note
from ..metrics.ties import warning as tie_warning
from ..results.write import (
    check_writable,
    model_dir,
    predictions_path,
    read_result,
    task_result,
    write_json_atomic,
    write_model_meta,
    write_run_settings,
    write_text_atomic,
)
from ..spec.loader import load_task
from ..spec.taskspec import TaskSpec, distinct
from ..tasktypes.control import CONTROLLED, SHUFFLED
from .extend import Extension, merged_payload, pairs, wanted
from .extend import plan as plan_extension
from .numeric_env import numeric_env
from .options import ResolvedRun, RunOptions, check_options, resolve
from .options import context_of as context_of  # (its old home)

# RunConfig was the options' name before RunOptions (maeb.run.options); kept importable for one release
RunConfig = RunOptions


@dataclass
class TaskResult:
    """One task's result: its scores in mteb's shape (split -> one entry per subset), the time it
    took, and the maeb section (protocol, identity, fingerprints, ...); `payload` is the file."""

    task: str
    model: str
    payload: dict
    path: Path | None = None
    files: dict[str, str] = field(default_factory=dict)  # side files: relative name -> text

    @property
    def scores(self) -> dict[str, list[dict]]:
        """The scores in mteb's shape: split -> one entry per subset."""
        return self.payload["scores"]

    @property
    def info(self) -> dict:
        """The result's maeb section (protocol, identity, task, data, encoder, timings)."""
        return self.payload.get("maeb", {})

    @property
    def parameters(self) -> dict:
        """The task type's parameters as the run used them, under today's names (a result written
        before clustering's n_clusters became n_bootstrap reads the same)."""
        raw = self.info.get("parameters") or {}
        return shown_parameters((self.info.get("task") or {}).get("type") or self.info.get("task_type") or "", raw)

    @property
    def warnings(self) -> list[str]:
        """What the run warned about this task's data (clips shared by the training and evaluation
        splits, classes too small for the probe, ...), as the log said it; [] when nothing."""
        return list((self.info.get("data") or {}).get("warnings") or [])

    @property
    def evaluation_time(self) -> float:
        """Seconds the task took, as written in the result."""
        return float(self.payload.get("evaluation_time") or 0.0)

    @property
    def main_score(self) -> float:
        """The mean main score over every evaluation split and subset (one entry each), the number
        mteb's leaderboard and its TaskResult.get_score() give a task, and so maeb's board too."""
        splits = [s for s in (self.info.get("task") or {}).get("eval_splits") or () if s in self.scores]
        entries = [e for split in splits or list(self.scores) for e in self.scores[split]]
        return sum(e["main_score"] for e in entries) / len(entries)

    @classmethod
    def from_file(cls, path: Path, model: str) -> TaskResult:
        """A TaskResult read from a result file (the task named by its task_name, else the file's stem)."""
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(payload.get("task_name", Path(path).stem), model, payload, Path(path))


@dataclass
class RunSummary:
    """What a run did: the tasks done, already done, skipped for a missing side or failed (with
    their reasons), the results in task order, the embedding statistics and the wall time."""

    done: list[str] = field(default_factory=list)
    skipped_existing: list[str] = field(default_factory=list)
    skipped_modality: list[str] = field(default_factory=list)
    results: list[TaskResult] = field(default_factory=list)  # done and already-done tasks, in task order
    failed: dict[str, str] = field(default_factory=dict)  # task -> its one-line reason (cfg.raise_error False)
    stats: EmbedStats = field(default_factory=EmbedStats)
    wall_seconds: float = 0.0

    def outside_forward_share(self) -> float | None:
        """The share of embedding time spent outside the encoder's forward pass (decoding,
        resampling, batching); None when nothing was embedded."""
        wall = self.stats.embed_wall_seconds
        return None if wall <= 0 else max(0.0, 1.0 - self.stats.forward_seconds / wall)


class TaskEvaluation(NamedTuple):
    """One task's evaluation: its scores, seconds, notes on the data, side files, per-subset
    infos and the stability record."""

    scores: dict[str, list[dict]]  # split -> one entry per subset, mteb's shape
    seconds: float
    notes: dict  # what the run noticed about the data
    files: dict[str, str]  # side files the task type wrote, by relative name
    infos: dict  # split -> subset -> what the task type recorded beside its metrics
    stability: dict | None = None  # maeb.run.stability's record (None: not asked for)
    ties: dict | None = None  # split -> subset -> maeb.metrics.ties.record (rank-based types only)
    baselines: dict | None = None  # split -> subset -> maeb.analysis.baselines' record (types that have one)


def _missing_side(needs: set[str], encoder) -> str | None:
    if "audio" in needs and not has_audio(encoder):
        return "audio"
    if "generate" in needs and not has_generate(encoder):
        return "text-generation"
    if "synthesize" in needs and not has_synthesize(encoder):
        return "audio-generation"
    if "text" in needs and not has_text(encoder):
        return "text"
    if "frames" in needs and not has_frames(encoder):
        return "time-resolved (embed_frames)"
    return None


def _fitting(meta, encoder, pending, ctx, strict, summary, log) -> list:
    """The pending tasks the loaded model has every side for, checked before any is evaluated:
    strict, a misfit is one error naming them all; otherwise each is skipped with a notice."""
    fitting, misfits = [], []
    for item in pending:
        spec = item[0]
        needs = tasktypes.get(spec.type).needs(spec)
        if "judge" in needs and ctx.judge is None:
            raise MaebError(f"task {spec.name} is scored by an LLM judge: pass --judge-url and --judge-model")
        side = _missing_side(needs, encoder)
        if side is None:
            fitting.append(item)
        elif strict:
            misfits.append(f"{spec.name} (needs {side})")
        else:
            summary.skipped_modality.append(spec.name)
            log(f"{spec.name}: model {meta.name!r} has no {side} encoder; this task needs one; skipped")
    if misfits:
        shown = ", ".join(misfits[:5]) + (f" and {len(misfits) - 5} more" if len(misfits) > 5 else "")
        raise ModelError(f"model {meta.name!r} ({type(encoder).__name__}) cannot run {shown}; nothing was evaluated")
    return fitting


def _resolved_revision(spec, variables: dict | None) -> str | None:
    """The commit a hub task's unpinned data revision stood for at load time (None: pinned or local)."""
    from ..data import hub

    d = spec.data
    if d.source == "audiofolder" or spec.dataset_revision or hub.COMMIT.fullmatch(d.revision or ""):
        return None
    return hub.resolved_commit(d.location(variables), d.revision)


def evaluate_task(
    spec: TaskSpec,
    emb: Embedder,
    on_leak: str = "warn",
    log=None,
    duration_edges: tuple[float, ...] | None = None,
    stability_replays: int | str | None = None,
    per_item: bool = False,
) -> TaskEvaluation:
    """Scores for every eval split and subset of one task, in mteb's result shape, and what the
    run noticed about the data (clips shared between training and evaluation splits); with
    duration_edges, each split's scores by clip duration (maeb.analysis.durations); with
    stability_replays, the scores' stability band (maeb.run.stability; 0 records that none was measured);
    with per_item, each split's per-item scores as a side file (maeb.analysis.paired).
    The evaluator's BLAS runs numeric_env.EVALUATOR_BLAS_THREADS threads."""
    from .numeric_env import evaluator_threads

    with evaluator_threads(emb):
        return _evaluate_task(spec, emb, on_leak, log, duration_edges, stability_replays, per_item)


def _evaluate_task(spec, emb, on_leak, log, duration_edges, stability_replays, per_item) -> TaskEvaluation:
    log = log or emb.ctx.log
    kind = tasktypes.get(spec.type)
    started = time.perf_counter()
    data = load_task(spec, emb.ctx)
    emb.ctx.logger.debug(
        "%s: loaded %s in %.2f s",
        spec.name,
        ", ".join(f"{sub}/{split}" for sub, splits in data.items() for split in splits),
        time.perf_counter() - started,
    )
    shared = shared_clips(spec, data, on_leak, emb.warn)
    notes: dict = {"train_eval_shared_clips": len(shared), "train_eval_shared_clip_list": shared}
    resolved = _resolved_revision(spec, emb.ctx.variables())
    if resolved:  # the commit "main" (or no revision) stood for; result files record it (write.task_result)
        notes["resolved_revision"] = resolved
    state = tasktypes.TaskState(seed=spec.protocol.get("seed", 42))
    scores: dict[str, list[dict]] = {}
    files: dict[str, str] = {}
    infos: dict[str, dict] = {}
    tie_records: dict[str, dict] = {}
    baseline_records: dict[str, dict] = {}
    for split in spec.data.eval_splits:  # splits outside, subsets inside: mteb's order of draws
        entries = []
        for subset, tables in data.items():
            emb.label(spec.name + ("" if subset == "default" else f"/{subset}") + f" [{split}]")
            state.subset = subset
            emb.record.take_outcomes()
            result = tasktypes.as_evaluation(kind.evaluate(tables, split, emb, spec, state), spec.type)
            outcome = emb.record.take_outcomes()
            if duration_edges:
                from ..analysis.durations import report

                table = report(outcome, duration_edges)
                if table is not None:
                    result.info = {**result.info, "duration_buckets": table}
            if per_item and outcome is not None:
                from ..analysis.paired import PER_ITEM_FILE, per_item_tsv

                result.files = {**result.files, PER_ITEM_FILE: per_item_tsv(*outcome)}
            values = result.metrics
            if spec.main_score not in values:
                raise SpecError(
                    f"task {spec.name}: main_score {spec.main_score!r} is not a metric of {spec.type}; "
                    f"choose one of {', '.join(k for k, v in values.items() if isinstance(v, float))}"
                )
            main = values[spec.main_score]
            if not isinstance(main, (int, float)) or not math.isfinite(main):
                raise DataError(
                    f"task {emb.context}: {spec.main_score} is {main}; nothing is written for a score that is not a number"
                )
            values["main_score"] = main
            values["hf_subset"] = subset
            values["languages"] = spec.languages_for(subset)
            entries.append(values)
            folder = "" if len(data) == 1 else f"{subset}/"
            prefix = "" if len(spec.data.eval_splits) == 1 else f"{split}_"
            files.update({f"{folder}{prefix}{name}": text for name, text in result.files.items()})
            if "ties" in result.info:  # a result's maeb.ties, with its warning when the score hangs on tie order
                tie_records.setdefault(split, {})[subset] = record = result.info.pop("ties")
                where = (
                    spec.name
                    + ("" if subset == "default" else f"/{subset}")
                    + ("" if len(spec.data.eval_splits) == 1 else f" [{split}]")
                )
                message = tie_warning(record, emb.meta.name, where)
                if message:
                    emb.warn(message)
            shuffled = result.info.pop(SHUFFLED, None)  # --controls shuffled: recorded beside the baselines
            if result.info:
                infos.setdefault(split, {})[subset] = result.info
            baseline = baselines(spec, tables, split, state.seed)  # from the labels alone: cheap beside the evaluation
            baseline = with_shuffled(baseline, shuffled, spec.main_score)
            where = spec.name + ("" if subset == "default" else f"/{subset}") + f" [{split}]"
            alarm = shuffled_warning(baseline, where)
            if alarm:
                emb.warn(alarm)
            if baseline is not None:
                baseline_records.setdefault(split, {})[subset] = baseline
        scores[split] = entries
    notes["warnings"] = list(emb.record.warnings)  # what the run warned about this task (leaks, thin classes)
    seconds = time.perf_counter() - started
    stability = None
    if stability_replays is not None:
        from .stability import measure

        evaluator_seconds = seconds - emb.stats.embed_wall_seconds  # the evaluator's own time, not the encoder's
        stability = measure(spec, data, emb, scores, stability_replays, evaluation_seconds=evaluator_seconds)
    return TaskEvaluation(scores, seconds, notes, files, infos, stability, tie_records or None, baseline_records or None)


def shared_clips(spec: TaskSpec, data: dict, on_leak: str, warn) -> list[dict]:
    """Byte-identical clips in both the training split and an evaluation split: the cache would
    quietly give them one vector and the probe would train on test clips. Each is listed (its
    evaluation split and subset, its name there and in the training split); the first few are
    named in a warning (`warn`), or in the error under on_leak "error"."""
    kind = tasktypes.get(spec.type)
    train = spec.data.train_split
    if train not in kind.splits(spec) or train in spec.data.eval_splits:
        return []
    shared: list[dict] = []
    for subset, tables in data.items():
        if not hasattr(tables.get(train), "columns"):
            continue

        def names(table) -> dict[str, str]:
            out: dict[str, str] = {}
            for column in spec.data.audio_columns:
                if column in table:
                    for ref in table[column]:
                        with contextlib.suppress(MaebError):
                            out.setdefault(ref.key, ref.name)
            return out

        seen = names(tables[train])
        for split in spec.data.eval_splits:
            if hasattr(tables.get(split), "columns"):
                for key, name in names(tables[split]).items():
                    if key in seen:
                        shared.append({"split": split, "subset": subset, "clip": name, "train_clip": seen[key]})
    if shared:
        total = len(shared)
        shown = ", ".join(
            e["clip"] + ("" if e["train_clip"] == e["clip"] else f" (= {train} {e['train_clip']})") for e in shared[:3]
        ) + (f" and {total - 3} more" if total > 3 else "")
        message = (
            f"task {spec.name}: {total} clip{' is' if total == 1 else 's are'} byte-identical in the {train} split and an "
            f"evaluation split ({shown})"
        )
        if on_leak == "error":
            raise DataError(message + "; remove them from one split, or pass --on-leak warn to evaluate anyway")
        warn(
            message + "; the probe trains on clips it is scored on, so the score is optimistic; all are listed in the "
            "result (maeb.data.sources.train_eval_shared_clip_list)"
        )
    return shared


def existing_result(path: Path, ident: dict) -> str:
    """'absent', 'done' (same run identity, complete) or 'incomplete' (to be run again); a file
    computed under another identity stops the run, naming what changed."""
    if not path.exists():
        return "absent"
    data = read_result(path)
    if data is None:
        return "absent"  # unreadable: recomputed and replaced
    found = data.get("maeb")
    extra: dict = found if isinstance(found, dict) else {}
    recorded = extra.get("identity")
    if not isinstance(recorded, dict) or recorded.get("hash") != ident["hash"]:
        what = "; ".join(differences(recorded, ident)[:6]) if recorded else "it records no maeb run identity"
        raise MaebError(
            f"{path} was computed under another configuration ({what}); rerun with --overwrite to replace it, "
            "or pass another --output-dir"
        )
    return "done" if extra.get("complete", True) else "incomplete"


def _observed_dim(meta: ModelMeta, dim: int | None, log) -> ModelMeta:
    """The entry as model_meta.json records it: with the dimension the vectors really have."""
    if not isinstance(meta.embed_dim, int) or not dim or dim == meta.embed_dim:
        return meta
    log(
        f"warning: model {meta.name!r} returned {dim}-d vectors, but its entry says embed_dim {meta.embed_dim}; "
        f"model_meta.json records {dim} (correct the entry)"
    )
    return replace(meta, embed_dim=dim)


def _has_controls(path: Path, spec: TaskSpec) -> bool:
    """Whether a result records the shuffled control (a report option, not part of the identity), or
    its type computes none (nothing to run again for)."""
    if spec.type not in CONTROLLED:
        return True
    try:
        splits = json.loads(path.read_text(encoding="utf-8"))["maeb"]["baselines"]
        return any("shuffled" in record for subsets in splits.values() for record in subsets.values())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False  # no baselines record: run again, which writes one


def _has_per_item(path: Path) -> bool:
    """Whether a result has its per-item files beside it (a report option, not part of the identity)."""
    from ..analysis.paired import PER_ITEM_FILE

    return any((path.parent / f"{path.stem}_predictions").rglob(f"*{PER_ITEM_FILE}"))


def _recorded_edges(path: Path) -> list | None:
    """The --duration-buckets edges a result was computed with (None: without)."""
    found = (read_result(path) or {}).get("maeb")
    return found.get("duration_edges") if isinstance(found, dict) else None


check_run_config = check_options  # the old name, kept for one release


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
    cfg = job.options
    summary = RunSummary()
    started = time.perf_counter()
    ctx = job.ctx
    log = log or ctx.log
    if cfg.layers is not None:  # a layer sweep: each layer runs through here as an experiment (maeb.run.layers)
        from .layers import sweep

        if encoder is not None:
            raise ModelError(
                f"model {meta.name!r}: --layers loads the model itself (one forward pass for all layers); pass no encoder"
            )
        return sweep(meta, specs, job, log)
    root = Path(cfg.output_dir) if cfg.output_dir is not None else None
    protocol = job.protocol
    prepare_offline_data(specs, ctx, log)
    if encoder is not None and cfg.precision:
        raise ModelError(f"model {meta.name!r}: --precision applies when maeb loads the model; build the encoder in that dtype")
    overrides, encoder_options, experiment, chain = job.overrides, job.encoder_options, job.experiment, job.chain
    pending, existing = [], {}
    extending: dict[str, Extension] = {}  # task -> the earlier result whose missing subsets/splits run now
    for spec in specs:
        path = job.result_path(spec)
        ident = job.identity(spec)
        step = None if cfg.overwrite or path is None else plan_extension(path, spec, ident)
        if isinstance(step, Extension):
            missing = sorted(wanted(step.run) - pairs(step.earlier["scores"]))
            log(f"{spec.name}: {path} lacks {', '.join(f'{a}/{b}' for a, b in missing)}; evaluating them and merging")
            extending[spec.name] = step
            pending.append((step.run, path, job.identity(step.union)))
            continue
        status = "done" if step == "done" else "absent" if cfg.overwrite or path is None else existing_result(path, ident)
        if status == "done" and path is not None and cfg.duration_buckets and _recorded_edges(path) != list(cfg.duration_buckets):
            # a report option, not part of the identity: the same scores, recomputed from cached vectors
            log(f"{spec.name}: the result at {path} has no duration buckets with these edges; running it again")
            status = "incomplete-report"
        if status == "done" and path is not None and cfg.per_item and not _has_per_item(path):
            log(f"{spec.name}: the result at {path} has no per-item scores; running it again")
            status = "incomplete-report"
        if status == "done" and path is not None and cfg.controls and not _has_controls(path, spec):
            log(f"{spec.name}: the result at {path} has no {', '.join(cfg.controls)} control; running it again")
            status = "incomplete-report"
        if status == "done" and path is not None:  # (done: read from its file)
            summary.skipped_existing.append(spec.name)
            existing[spec.name] = TaskResult.from_file(path, meta.name)
            log(f"{spec.name}: already done ({path}); skipped")
        else:
            if status == "incomplete":
                log(f"{spec.name}: the result at {path} is incomplete; running it again")
            pending.append((spec, path, ident))
    if not pending:
        summary.results = [existing[s.name] for s in specs if s.name in existing]
        summary.wall_seconds = time.perf_counter() - started
        return summary

    if root is not None:  # an unwritable output folder stops the run before the model loads or anything is embedded
        check_writable(model_dir(root, meta, experiment))
    if encoder is None:
        encoder = load_encoder(
            meta, device=cfg.device, protocol=protocol, endpoints=cfg.endpoints, raise_unexpected=cfg.debug, **overrides
        )
        check_precision(meta, encoder, cfg.precision)
    else:
        check_encoder(meta, encoder)
    _check_call_batch_size(meta, encoder, cfg)
    emb = build_embedder(job, encoder)
    ctx.logger.debug("%s: embedding cache %s, encoder config %s", meta.name, emb.cache.path, emb.cache.identity.get("config"))
    cache = emb.cache
    pending = _fitting(meta, encoder, pending, ctx, cfg.strict_modalities, summary, log)
    done: dict[str, TaskResult] = {}
    told_outside = False
    try:
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
            scores, seconds = outcome.scores, outcome.seconds
            embedding = {**emb.stats.as_dict(), "pipeline": emb.record.pipeline.as_dict()}
            # the task's time outside the embedder (loading data, fitting probes, scoring): compute's other half
            embedding["evaluator_seconds"] = round(max(0.0, seconds - emb.stats.embed_wall_seconds), 3)
            note = None if told_outside else outside_encoder_note(emb.stats, embedding["pipeline"])
            if note:  # once per run: the reason is the run's, not the task's
                told_outside = True
                embedding["outside_encoder"] = note
                log(f"{spec.name}: {note}")
            failed = sum(int(e.get("judge_failed", 0) or 0) for entries in scores.values() for e in entries)
            info = {
                "protocol": protocol.describe(emb.policy.resampler if emb.policy else None),
                "identity": ident,
                "complete": failed == 0,
                "task": task_record(spec),
                "encoder": {
                    "cache": cache.path.name,
                    "config": cache.identity.get("config"),
                    "software": cache.identity.get("software"),
                    "device": cache.identity.get("device"),
                },
                "length_policy": emb.policy.describe() if emb.policy else None,
                "window": emb.window.describe(emb.policy.max_seconds) if emb.policy else None,
                "batching": _batching_record(emb),
                **({"perturbation": chain.describe()} if chain else {}),
                **({"precision": cfg.precision} if cfg.precision else {}),
                "main_score_scale": getattr(tasktypes.get(spec.type), "SCORE_SCALE", 1.0),
                "parameters": shown_parameters(spec.type, spec.protocol),
                "transforms": spec.transforms,
                "derive": spec.derive,
                "spec_file": _shown_path(spec.source_file),
                "embedding": embedding,
                "fingerprints": emb.fingerprints(),
                "stability": outcome.stability,
                **({"ties": outcome.ties} if outcome.ties else {}),
                **({"baselines": outcome.baselines} if outcome.baselines else {}),
                "numeric_env": numeric_env(),
                "data": outcome.notes,
                **({"evaluation": outcome.infos} if outcome.infos else {}),
                **({"duration_edges": list(cfg.duration_buckets)} if cfg.duration_buckets else {}),
                "skipped_examples": dict(list(emb.stats.skipped.items())[:20]),
            }
            if amend is not None:
                amend(spec, info)
            step = extending.get(spec.name)
            if step is not None:
                info["task"] = task_record(step.union)
            payload = task_result(spec, scores, seconds, info)
            if step is not None:  # the earlier subsets and splits kept, the new ones added
                payload = merged_payload(step.earlier, payload, step.union, ident)
            result = TaskResult(spec.name, meta.name, payload, path, outcome.files)
            if path is not None:
                if (
                    not done and root is not None
                ):  # with the first result, so a run that fails before any leaves no lone model_meta.json
                    write_model_meta(root, _observed_dim(meta, cache.dim, log), encoder_options, experiment)
                for name, text in outcome.files.items():
                    write_text_atomic(predictions_path(path, name), text)
                write_json_atomic(path, result.payload)
                write_run_settings(path.parent, spec.name, result.payload["scores"], meta.run_settings(encoder_options))
            done[spec.name] = result
            cache.record_task(spec.name, len(emb.touched))
            _accumulate(summary.stats, emb.stats)
            summary.done.append(spec.name)
            skipped = f", {len(emb.stats.skipped)} clips skipped" if emb.stats.skipped else ""
            unfinished = f", {failed} judge items failed (rerun to retry them)" if failed else ""
            stability = outcome.stability or {}
            band = f" ±{stability['band']:.4f}" if stability.get("band") else ""
            log(f"{spec.name}: {spec.main_score} = {result.main_score:.4f}{band} ({seconds:.1f} s{skipped}{unfinished})")
    finally:
        cache.close()
    summary.results = [done.get(s.name) or existing[s.name] for s in specs if s.name in done or s.name in existing]
    summary.wall_seconds = time.perf_counter() - started
    return summary


def fail_task(summary: RunSummary, name: str, exc: BaseException | str, raise_error: bool, log) -> None:
    """A task that cannot load or evaluate: raised (stopping the run) or recorded in summary.failed
    with its one-line reason while the other tasks run (a benchmark's default, mteb's
    raise_error=False). Nothing is written for it. The plain and the Ray path both come here."""
    message = str(exc)
    if not re.search(rf"(?<![\w/]){re.escape(name)}(?![\w/])", message):  # (a repository named like the task is not it)
        message = f"task {name}: {message}"
    if raise_error:
        if isinstance(exc, MaebError):
            exc.args = (message,)
            raise exc
        raise MaebError(message)
    summary.failed[name] = message
    log(f"{name}: failed: {message.removeprefix(f'task {name}: ')}")


def prepare_offline_data(specs: list[TaskSpec], ctx: RunContext, log) -> None:
    """Offline benchmarks are built on first use, before any identity reads their folders:
    MAEB-lite in its default place under the cache, or in the run's lite_dir when that folder does
    not exist yet (a folder the caller names that exists is theirs: it is only read), MMAG-lite (a
    complete build of any size is reused: the run identity names its content)."""
    if any("${MAEB_LITE_DIR}" in spec.data.path for spec in specs):
        from ..benchmarks.lite.build import build as build_lite

        where = Path(ctx.variables()["MAEB_LITE_DIR"])
        if ctx.lite_dir is None or not where.exists():
            build_lite(where, log=log)  # reuses a complete build
    if any("${MMAG_LITE_DIR}" in spec.data.path for spec in specs):
        from ..benchmarks.mmag_lite.build import build

        build(Path(ctx.variables()["MMAG_LITE_DIR"]), log=log, any_size=True)


def _check_call_batch_size(meta: ModelMeta, encoder, cfg: RunOptions) -> None:
    if cfg.call_batch_size and getattr(encoder, "batch_order", "length") != "call":
        raise ModelError(
            f"model {meta.name!r}: --call-batch-size applies only to families batched as mteb batches them "
            f"(batch_order 'call'); {type(encoder).__name__} batches by length: use --batch-size or --batch-seconds"
        )


def _batching_record(emb: Embedder) -> dict:
    """How audio was batched (none of it changes a vector of a family batched by length)."""
    if getattr(emb.encoder, "batch_order", "length") == "call":
        return {"order": "call", "batch_size": emb.call_batch_size}
    out = {"order": "length", "batch_size": emb.batch_size, "batch_seconds": emb.batch_seconds}
    if emb.max_clips or emb.max_samples:
        out["after_out_of_memory"] = {"max_clips": emb.max_clips, "max_samples": emb.max_samples}
    return out


def build_embedder(job: ResolvedRun, encoder, cache_dir: Path | None = None, declared: dict | None = None) -> Embedder:
    """The embedder of a loaded encoder for a resolved run, its cache keyed by the full encoder
    identity (in cache_dir: a Ray worker's own file; declared: another declared identity, as
    maeb.cli.check_model's)."""
    cfg, protocol = job.options, job.protocol
    policy = None
    if has_audio(encoder) or has_generate(encoder):
        policy = replace(length_policy(encoder), resampler=job.resampler or protocol.resampler)
    # a protocol that changes only evaluators keys its vectors as the protocol it embeds as
    vectors = {**(declared or job.declared), "protocol": protocol.embeds_as}
    # the family's declared packages join the key too (not only the wrapper's own `software` list)
    key = encoder_identity(vectors, encoder, policy, cfg.device, requirements(job.meta))
    cache = EmbeddingCache(cache_dir or cfg.cache_dir, key)
    if cache.read_only:  # the run's scores are right; only its new vectors are not kept
        job.ctx.logger.warning(
            "embedding cache %s cannot be written (a read-only folder or file): its vectors are read, "
            "the clips it lacks are embedded but not stored, so an interrupted run starts them again",
            cache.path,
        )
    return Embedder(
        job.meta,
        encoder,
        cache,
        cfg.batch_size,
        cfg.workers,
        cfg.on_bad_audio,
        protocol=protocol,
        policy=policy,
        ctx=job.ctx,
        batch_seconds=cfg.batch_seconds,
        call_batch_size=cfg.call_batch_size,
        perturbation=job.chain,
        window=job.window,
        controls=cfg.controls,
    )


def shown_parameters(kind: str, protocol: dict) -> dict:
    """A task's parameters under the names the docs give them (clustering's n_bootstrap, which the
    parsed protocol and the run identity keep under mteb's n_clusters, so old identities hold).
    A type's ALIASES map old names to today's; maeb or mteb type names are accepted."""
    try:
        module = tasktypes.get(tasktypes.from_mteb(kind))
    except (MaebError, KeyError):
        return dict(protocol)
    aliases = getattr(module, "ALIASES", {})
    return {aliases.get(k, k): v for k, v in protocol.items()}


def task_record(spec: TaskSpec) -> dict:
    """What a leaderboard needs to know about a task without its spec file."""
    return {
        "name": spec.name,
        "type": spec.mteb_type,
        "category": spec.category,
        "domains": list(spec.domains),
        "languages": spec.languages,
        "main_score": spec.main_score,
        "eval_splits": list(spec.data.eval_splits),
        "family": spec.family,
        "modalities": list(spec.modalities),
    }


def _shown_path(path: str) -> str:
    """Spec files of the catalog are recorded relative to it, so results do not carry local paths."""
    from ..spec.catalog import catalog_dir

    root = catalog_dir("tasks").parent
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        return path


def _accumulate(total: EmbedStats, part: EmbedStats) -> None:
    for key, value in part.__dict__.items():
        if key == "skipped":
            total.skipped.update(value)
        else:
            setattr(total, key, getattr(total, key) + value)


def _plan_sides(meta: ModelMeta, cfg: RunOptions) -> set[str]:
    """What a model offers, known without loading it: its modalities, text generation when its
    family's class generates, and a judge when one is configured."""
    from ..encoders import resolve_factory

    sides = set(meta.modalities) | _declared_sides(resolve_factory(meta.family))
    if cfg.judge is not None:
        sides.add("judge")
    return sides


def _declared_sides(factory) -> set[str]:
    """The sides a family's class declares beyond its modalities (writing text, writing audio,
    time-resolved frames)."""
    sides = {side for side in ("generate", "synthesize") if callable(getattr(factory, side, None))}
    return sides | ({"frames"} if callable(getattr(factory, "embed_frames", None)) else set())


def require_sides(meta: ModelMeta, specs: list[TaskSpec], judge: bool = False) -> None:
    """Tasks named one by one must fit the model: one line listing those it has no side for
    (a benchmark's tasks that do not fit are skipped instead, and say so)."""
    sides = set(meta.modalities)
    from ..encoders import resolve_factory

    with contextlib.suppress(MaebError):
        sides |= _declared_sides(resolve_factory(meta.family))
    if judge:
        sides.add("judge")
    misfits = []
    for spec in specs:
        missing = sorted(tasktypes.get(spec.type).needs(spec) - sides)
        if missing:
            misfits.append(f"{spec.name} (needs {'/'.join(missing)})")
    if misfits:
        raise ModelError(
            f"model {meta.name!r} ({'+'.join(sorted(sides))}) cannot run {', '.join(misfits[:5])}"
            + (f" and {len(misfits) - 5} more" if len(misfits) > 5 else "")
        )


def plan(meta: ModelMeta, specs: list[TaskSpec], options: RunOptions | ResolvedRun, ray: bool = False) -> list[dict]:
    """What a run would do, from the specs' statistics and the cache's task records alone:
    no model is loaded and nothing is downloaded (ray: the options are checked for a Ray run)."""
    from ..engine.cache import cached_tasks

    if not isinstance(options, ResolvedRun):
        check_options(options)
        options = resolve(meta, options, ray, ctx=plan_context(options))
    job, cfg, ctx = options, options.options, options.ctx
    cached = cached_tasks(cfg.cache_dir, meta.name, meta.revision)
    prepare_offline_data(specs, ctx, ctx.log)  # synthetic, built here: nothing is downloaded
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
        missing = sorted(side for side in needs if side not in _plan_sides(meta, cfg))
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
