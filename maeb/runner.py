"""Run one model over a list of tasks: load each task's data, evaluate it through the cached
embedder, write its result file. Finished tasks are skipped, so an interrupted run resumes."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import tasktypes
from .cache import EmbeddingCache, default_cache_dir
from .embed import Embedder, EmbedStats
from .encoders import ModelMeta, has_audio, has_generate, has_text, identity, load_encoder
from .errors import MaebError, ModelError, SpecError
from .loader import load_task
from .results import result_path, task_result, write_json_atomic, write_model_meta
from .spec import TaskSpec


@dataclass
class RunConfig:
    output_dir: Path = Path("results")
    cache_dir: Path = field(default_factory=default_cache_dir)
    device: str = "cpu"
    batch_size: int = 16
    workers: int | None = None
    on_bad_audio: str = "error"
    overwrite: bool = False
    show_progress: bool = True
    strict_modalities: bool = True  # False for benchmarks: skip tasks the model has no side for
    options: dict = field(default_factory=dict)
    judge: object | None = None  # a maeb.judge.Endpoint for judge-scored task types
    judge_concurrency: int = 8


@dataclass
class RunSummary:
    done: list[str] = field(default_factory=list)
    skipped_existing: list[str] = field(default_factory=list)
    skipped_modality: list[str] = field(default_factory=list)
    stats: EmbedStats = field(default_factory=EmbedStats)
    wall_seconds: float = 0.0

    def outside_forward_share(self) -> float | None:
        wall = self.stats.embed_wall_seconds
        return None if wall <= 0 else max(0.0, 1.0 - self.stats.forward_seconds / wall)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _missing_side(needs: set[str], encoder) -> str | None:
    if "audio" in needs and not has_audio(encoder):
        return "audio"
    if "generate" in needs and not has_generate(encoder):
        return "text-generation"
    if "text" in needs and not has_text(encoder):
        return "text"
    return None


def evaluate_task(spec: TaskSpec, emb: Embedder) -> tuple[dict, float]:
    """Scores for every eval split and subset of one task, in mteb's result shape."""
    kind = tasktypes.get(spec.type)
    started = time.perf_counter()
    data = load_task(spec)
    state = tasktypes.TaskState(seed=spec.protocol.get("seed", 42))
    scores: dict[str, list[dict]] = {}
    for split in spec.data.eval_splits:  # splits outside, subsets inside: mteb's order of draws
        entries = []
        for subset, tables in data.items():
            emb.context = spec.name + ("" if subset == "default" else f"/{subset}") + f" [{split}]"
            values = kind.evaluate(tables, split, emb, spec, state)
            if spec.main_score not in values:
                raise SpecError(
                    f"task {spec.name}: main_score {spec.main_score!r} is not a metric of {spec.type}; "
                    f"choose one of {', '.join(k for k, v in values.items() if isinstance(v, float))}"
                )
            values["main_score"] = values[spec.main_score]
            values["hf_subset"] = subset
            values["languages"] = spec.languages_for(subset)
            entries.append(values)
        scores[split] = entries
    return scores, time.perf_counter() - started


def run(meta: ModelMeta, specs: list[TaskSpec], cfg: RunConfig, log=_log) -> RunSummary:
    summary = RunSummary()
    started = time.perf_counter()
    root = Path(cfg.output_dir)
    pending = []
    for spec in specs:
        path = result_path(root, meta, spec.name)
        if path.exists() and not cfg.overwrite:
            summary.skipped_existing.append(spec.name)
            log(f"{spec.name}: already done ({path}); skipped")
        else:
            pending.append((spec, path))
    if not pending:
        summary.wall_seconds = time.perf_counter() - started
        return summary

    encoder = load_encoder(meta, device=cfg.device, **cfg.options)
    ident = identity(meta, encoder)
    cache = EmbeddingCache(cfg.cache_dir, ident)
    emb = Embedder(meta, encoder, cache, cfg.batch_size, cfg.workers, cfg.on_bad_audio, cfg.show_progress)
    if cfg.judge is not None:
        from .judge import Judge

        emb.judge = Judge(cfg.judge, cfg.cache_dir, cfg.judge_concurrency)
    write_model_meta(root, meta)
    try:
        for spec, path in pending:
            needs = tasktypes.get(spec.type).needs(spec)
            if "judge" in needs and emb.judge is None:
                raise MaebError(f"task {spec.name} is scored by an LLM judge: pass --judge-url and --judge-model")
            side = _missing_side(needs, encoder)
            if side:
                message = f"{spec.name}: model {meta.name!r} has no {side} encoder; this task needs one"
                if cfg.strict_modalities:
                    raise ModelError(message)
                summary.skipped_modality.append(spec.name)
                log(message + "; skipped")
                continue
            emb.stats = EmbedStats()
            emb.touched = set()
            try:
                scores, seconds = evaluate_task(spec, emb)
            except MaebError as exc:
                if spec.name in str(exc):
                    raise
                raise type(exc)(f"task {spec.name}: {exc}") from exc
            except Exception as exc:
                if os.environ.get("MAEB_DEBUG"):
                    raise
                raise MaebError(
                    f"task {spec.name}: unexpected {type(exc).__name__}: {exc} (set MAEB_DEBUG=1 for the traceback)"
                ) from exc
            info = {
                "model": meta.name,
                "model_revision": meta.revision,
                "family": meta.family,
                "encoder_config": ident["config"],
                "length_policy": emb.policy.describe() if emb.policy else None,
                "task_type": spec.type,
                "main_score_scale": getattr(tasktypes.get(spec.type), "SCORE_SCALE", 1.0),
                "protocol": spec.protocol,
                "transforms": spec.transforms,
                "derive": spec.derive,
                "spec_file": _shown_path(spec.source_file),
                "embedding": emb.stats.as_dict(),
                "skipped_examples": dict(list(emb.stats.skipped.items())[:20]),
            }
            _write_side_files(path, scores)
            write_json_atomic(path, task_result(spec, scores, seconds, info))
            cache.record_task(spec.name, len(emb.touched))
            _accumulate(summary.stats, emb.stats)
            summary.done.append(spec.name)
            main = scores[spec.data.eval_splits[0]]
            value = sum(e["main_score"] for e in main) / len(main)
            skipped = f", {len(emb.stats.skipped)} clips skipped" if emb.stats.skipped else ""
            log(f"{spec.name}: {spec.main_score} = {value:.4f} ({seconds:.1f} s{skipped})")
    finally:
        cache.close()
    summary.wall_seconds = time.perf_counter() - started
    return summary


def _write_side_files(result_path: Path, scores: dict) -> None:
    """Files a task type returns under "_files" (predictions in the benchmark's own format) go
    beside the result, in {Task}_predictions/ (a subfolder per subset when there are several)."""
    from .results import write_text_atomic

    for split, entries in scores.items():
        for entry in entries:
            files = entry.pop("_files", None) or {}
            folder = result_path.parent / f"{result_path.stem}_predictions"
            if len(entries) > 1:
                folder = folder / entry["hf_subset"]
            for name, text in files.items():
                write_text_atomic(folder / (name if len(scores) == 1 else f"{split}_{name}"), text)


def _shown_path(path: str) -> str:
    """Spec files of the catalog are recorded relative to it, so results do not carry local paths."""
    from .catalog import catalog_dir

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


def _plan_sides(meta: ModelMeta, cfg: RunConfig) -> set[str]:
    """What a model offers, known without loading it: its modalities, text generation when its
    family's class generates, and a judge when one is configured."""
    from .encoders import resolve_factory

    sides = set(meta.modalities)
    if callable(getattr(resolve_factory(meta.family), "generate", None)):
        sides.add("generate")
    if cfg.judge is not None:
        sides.add("judge")
    return sides


def plan(meta: ModelMeta, specs: list[TaskSpec], cfg: RunConfig) -> list[dict]:
    """What a run would do, from the specs' statistics and the cache's task records alone:
    no model is loaded and nothing is downloaded."""
    from .cache import cached_tasks

    cached = cached_tasks(cfg.cache_dir, meta.name, meta.revision)
    rows = []
    for spec in specs:
        kind = tasktypes.get(spec.type)
        needs = kind.needs(spec)
        clips, hours = 0, 0.0
        for split in kind.splits(spec):
            stats = spec.stats.get(spec.data.split_names.get(split, split)) or spec.stats.get(split) or {}
            n, h = stats.get("clips", 0), stats.get("hours", 0.0)
            if split == spec.data.train_split and split not in spec.data.eval_splits and stats.get("classes"):
                # only the few-shot draws of a separate train split are embedded
                drawn = min(
                    n, stats["classes"] * spec.protocol.get("samples_per_label", 8) * spec.protocol.get("n_experiments", 10)
                )
                h, n = (h * drawn / n if n else 0.0), drawn
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
                "done": result_path(Path(cfg.output_dir), meta, spec.name).exists(),
                "skip": f"no {'/'.join(missing)} side" if missing else "",
            }
        )
    return rows
