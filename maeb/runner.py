"""Run one model over a list of tasks: load each task's data, evaluate it through the cached
embedder, write its result file. Finished tasks are skipped, so an interrupted run resumes."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import tasktypes
from .cache import EmbeddingCache, default_cache_dir
from .embed import Embedder, EmbedStats
from .encoders import ModelMeta, has_audio, has_generate, has_text, length_policy, load_encoder
from .errors import DataError, MaebError, ModelError, SpecError
from .identity import declared_identity, differences, encoder_identity, experiment_settings, merged_options, run_identity
from .loader import load_task
from .protocols import DEFAULT_PROTOCOL, get_protocol
from .results import read_result, result_path, task_result, write_json_atomic, write_model_meta
from .spec import TaskSpec


@dataclass
class RunConfig:
    output_dir: Path = Path("results")
    cache_dir: Path = field(default_factory=default_cache_dir)
    device: str = "cpu"
    batch_size: int = 16
    workers: int | None = None
    on_bad_audio: str = "error"
    on_leak: str = "warn"  # clips shared by the training and evaluation splits: "warn" or "error"
    overwrite: bool = False
    show_progress: bool = True
    strict_modalities: bool = True  # False for benchmarks: skip tasks the model has no side for
    options: dict = field(default_factory=dict)
    protocol: str = DEFAULT_PROTOCOL
    resampler: str | None = None  # None: the protocol's (soxr-hq is faster and not mteb's)
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


def evaluate_task(spec: TaskSpec, emb: Embedder, on_leak: str = "warn", log=_log) -> tuple[dict, float, dict]:
    """Scores for every eval split and subset of one task, in mteb's result shape, and what the
    run noticed about the data (clips shared between training and evaluation splits)."""
    kind = tasktypes.get(spec.type)
    started = time.perf_counter()
    data = load_task(spec)
    notes = {"train_eval_shared_clips": shared_clips(spec, data, on_leak, log)}
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
            main = values[spec.main_score]
            if not isinstance(main, (int, float)) or not math.isfinite(main):
                raise DataError(
                    f"task {emb.context}: {spec.main_score} is {main}; nothing is written for a score that is not a number"
                )
            values["main_score"] = main
            values["hf_subset"] = subset
            values["languages"] = spec.languages_for(subset)
            entries.append(values)
        scores[split] = entries
    return scores, time.perf_counter() - started, notes


def shared_clips(spec: TaskSpec, data: dict, on_leak: str, log) -> int:
    """Byte-identical clips in both the training split and an evaluation split: the cache would
    quietly give them one vector and the probe would train on test clips."""
    kind = tasktypes.get(spec.type)
    train = spec.data.train_split
    if train not in kind.splits(spec) or train in spec.data.eval_splits:
        return 0
    total = 0
    for tables in data.values():
        if not hasattr(tables.get(train), "columns"):
            continue

        def keys(table):
            out = set()
            for column in spec.data.audio_columns:
                if column in table:
                    for ref in table[column]:
                        with contextlib.suppress(MaebError):
                            out.add(ref.key)
            return out

        seen = keys(tables[train])
        for split in spec.data.eval_splits:
            if hasattr(tables.get(split), "columns"):
                total += len(seen & keys(tables[split]))
    if total:
        message = f"task {spec.name}: {total} clips are byte-identical in the {train} split and an evaluation split"
        if on_leak == "error":
            raise DataError(message + "; remove them from one split, or pass --on-leak warn to evaluate anyway")
        log(f"warning: {message}; the count is recorded in the result")
    return total


def existing_result(path: Path, ident: dict) -> str:
    """'absent', 'done' (same run identity, complete) or 'incomplete' (to be run again); a file
    computed under another identity stops the run, naming what changed."""
    if not path.exists():
        return "absent"
    data = read_result(path)
    if data is None:
        return "absent"  # unreadable: recomputed and replaced
    extra = data.get("maeb") if isinstance(data.get("maeb"), dict) else None
    recorded = (extra or {}).get("identity")
    if not isinstance(recorded, dict) or recorded.get("hash") != ident["hash"]:
        what = "; ".join(differences(recorded, ident)[:6]) if recorded else "it records no maeb run identity"
        raise MaebError(
            f"{path} was computed under another configuration ({what}); rerun with --overwrite to replace it, "
            "or pass another --output-dir"
        )
    return "done" if extra.get("complete", True) else "incomplete"


def run(meta: ModelMeta, specs: list[TaskSpec], cfg: RunConfig, log=_log) -> RunSummary:
    summary = RunSummary()
    started = time.perf_counter()
    root = Path(cfg.output_dir)
    protocol = get_protocol(cfg.protocol)
    options = merged_options(meta, cfg.options)
    declared = declared_identity(meta, options, protocol.name, _resampler_override(cfg, protocol))
    experiment = experiment_settings(meta, cfg.options, protocol.name, DEFAULT_PROTOCOL, _resampler_override(cfg, protocol))
    pending = []
    for spec in specs:
        path = result_path(root, meta, spec.name, experiment)
        ident = run_identity(declared, spec)
        status = "absent" if cfg.overwrite else existing_result(path, ident)
        if status == "done":
            summary.skipped_existing.append(spec.name)
            log(f"{spec.name}: already done ({path}); skipped")
        else:
            if status == "incomplete":
                log(f"{spec.name}: the result at {path} is incomplete; running it again")
            pending.append((spec, path, ident))
    if not pending:
        summary.wall_seconds = time.perf_counter() - started
        return summary

    encoder = load_encoder(meta, device=cfg.device, protocol=protocol, **cfg.options)
    emb = build_embedder(meta, encoder, declared, cfg, protocol)
    cache = emb.cache
    emb.log = log
    if cfg.judge is not None:
        from .judge import Judge

        emb.judge = Judge(cfg.judge, cfg.cache_dir, cfg.judge_concurrency)
    write_model_meta(root, meta, options, experiment)
    try:
        for spec, path, ident in pending:
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
            emb.begin_task(spec.name)
            try:
                scores, seconds, notes = evaluate_task(spec, emb, cfg.on_leak, log)
            except MaebError as exc:
                if spec.name not in str(exc):
                    exc.args = (f"task {spec.name}: {exc}",)
                raise
            except Exception as exc:
                if os.environ.get("MAEB_DEBUG"):
                    raise
                raise MaebError(
                    f"task {spec.name}: unexpected {type(exc).__name__}: {exc} (set MAEB_DEBUG=1 for the traceback)"
                ) from exc
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
                "main_score_scale": getattr(tasktypes.get(spec.type), "SCORE_SCALE", 1.0),
                "parameters": spec.protocol,
                "transforms": spec.transforms,
                "derive": spec.derive,
                "spec_file": _shown_path(spec.source_file),
                "embedding": emb.stats.as_dict(),
                "fingerprints": emb.fingerprints(),
                "data": notes,
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
            unfinished = f", {failed} judge items failed (rerun to retry them)" if failed else ""
            log(f"{spec.name}: {spec.main_score} = {value:.4f} ({seconds:.1f} s{skipped}{unfinished})")
    finally:
        cache.close()
    summary.wall_seconds = time.perf_counter() - started
    return summary


def _resampler_override(cfg: RunConfig, protocol) -> str | None:
    if cfg.resampler is None or cfg.resampler == protocol.resampler:
        return None
    from .audio import RESAMPLERS

    if cfg.resampler not in RESAMPLERS:
        raise SpecError(f"unknown resampler {cfg.resampler!r}; known: {', '.join(RESAMPLERS)}")
    return cfg.resampler


def build_embedder(meta: ModelMeta, encoder, declared: dict, cfg: RunConfig, protocol) -> Embedder:
    """The embedder of a loaded encoder, with its cache keyed by the full encoder identity."""
    policy = None
    if has_audio(encoder) or has_generate(encoder):
        policy = replace(length_policy(encoder), resampler=_resampler_override(cfg, protocol) or protocol.resampler)
    cache = EmbeddingCache(cfg.cache_dir, encoder_identity(declared, encoder, policy, cfg.device))
    emb = Embedder(meta, encoder, cache, cfg.batch_size, cfg.workers, cfg.on_bad_audio, cfg.show_progress, protocol=protocol)
    emb.policy = policy
    return emb


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
    protocol = get_protocol(cfg.protocol)
    declared = declared_identity(meta, merged_options(meta, cfg.options), protocol.name, _resampler_override(cfg, protocol))
    experiment = experiment_settings(meta, cfg.options, protocol.name, DEFAULT_PROTOCOL, _resampler_override(cfg, protocol))
    rows = []
    for spec in specs:
        kind = tasktypes.get(spec.type)
        needs = kind.needs(spec)
        clips, hours = 0, 0.0
        if not spec.stats and is_local(spec):
            clips, hours = local_counts(spec)
        for split in [] if not spec.stats and is_local(spec) else kind.splits(spec):
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
                "done": _plan_status(
                    result_path(Path(cfg.output_dir), meta, spec.name, experiment), run_identity(declared, spec)
                ),
                "skip": f"no {'/'.join(missing)} side" if missing else "",
            }
        )
    return rows


def _plan_status(path: Path, ident: dict) -> bool | str:
    try:
        return existing_result(path, ident) == "done"
    except MaebError:
        return "computed under another configuration"


def is_local(spec: TaskSpec) -> bool:
    return spec.data.source in ("audiofolder", "metafolder") or Path(spec.data.location()).is_dir()


def local_counts(spec: TaskSpec) -> tuple[int, float]:
    """Clips and hours of a local task, read from its files (headers only), after checking that
    its columns are there: a wrong column or main score fails here, before anything is embedded."""
    from .audio import AudioRef, clip_seconds

    data = load_task(spec)
    refs: dict[int, AudioRef] = {}
    for tables in data.values():
        for table in tables.values():
            check_columns(spec, table)
            items = []
            if hasattr(table, "columns"):
                for column in (*spec.data.audio_columns, "audio1", "audio2"):
                    if column in table:
                        items += table[column]
            else:
                items = [v for _, v in table.corpus + table.queries]
            refs.update({id(r): r for r in items if isinstance(r, AudioRef)})
    unique = {}
    for ref in refs.values():
        with contextlib.suppress(MaebError):
            unique.setdefault(ref.key, ref)
    return len(unique), round(sum(clip_seconds(r) for r in unique.values()) / 3600, 4)


def check_columns(spec: TaskSpec, table) -> None:
    """The columns the task type reads, for a plain table."""
    if not hasattr(table, "columns"):
        return
    if spec.type == "pair_classification":
        table.require([spec.protocol["audio1_column"], spec.protocol["audio2_column"], spec.data.label_column], "pair columns")
        return
    table.require([spec.data.audio_column], "data.audio_column")
    if spec.type in ("classification", "multilabel", "zeroshot", "clustering"):
        table.require([spec.data.label_column], "data.label_column")
