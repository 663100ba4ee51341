"""One task's evaluation: its data loaded, each evaluation split and subset scored by its task type
through the run's embedder (mteb's result shape), with what the run noticed on the way (clips shared
by the training and an evaluation split, tie records, label baselines, duration buckets, per-item
files, the stability band). Nothing is written here: the runner writes what this returns."""

from __future__ import annotations

import contextlib
import math
import time
from typing import NamedTuple

from .. import tasktypes
from ..analysis.baselines import baselines, shuffled_warning, with_shuffled
from ..core.errors import DataError, MaebError, SpecError
from ..core.taskspec import TaskSpec
from ..engine.embed import Embedder
from ..metrics.ties import warning as tie_warning
from ..spec.loader import load_task


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


def resolved_revision(spec, variables: dict | None) -> str | None:
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
    for tables in data.values():  # a split of the wrong shape fails before anything is embedded
        for split in spec.data.eval_splits:
            if split in tables:
                kind.check_split(spec, split, tables[split])
    shared = shared_clips(spec, data, on_leak, emb.warn)
    notes: dict = {"train_eval_shared_clips": len(shared), "train_eval_shared_clip_list": shared}
    resolved = resolved_revision(spec, emb.ctx.variables())
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
            if result.ties is not None:  # a result's maeb.ties, with its warning when the score hangs on tie order
                tie_records.setdefault(split, {})[subset] = record = result.ties
                where = (
                    spec.name
                    + ("" if subset == "default" else f"/{subset}")
                    + ("" if len(spec.data.eval_splits) == 1 else f" [{split}]")
                )
                message = tie_warning(record, emb.meta.name, where)
                if message:
                    emb.warn(message)
            shuffled = result.shuffled  # --controls shuffled: recorded beside the baselines
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
