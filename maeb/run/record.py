"""A task's result record: the maeb section beside mteb's scores (protocol, identity, task, encoder,
batching, fingerprints, stability, data notes, ...), assembled from the resolved run, the embedder
and the task's evaluation, and written in mteb's layout with its side files. A new field of the maeb
section is one line in result_info."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .. import tasktypes
from ..core.taskspec import TaskSpec
from ..encoders import ModelMeta
from ..engine.embed import Embedder
from ..results.write import (
    model_meta_json,
    predictions_path,
    write_json_atomic,
    write_model_meta,
    write_run_settings,
    write_text_atomic,
)
from .numeric_env import numeric_env
from .options import ResolvedRun
from .summary import TaskResult, shown_parameters
from .task import TaskEvaluation


def task_record(spec: TaskSpec) -> dict:
    """What a leaderboard needs to know about a task without its spec file."""
    return {
        "name": spec.name,
        "type": spec.mteb_type,
        "category": spec.category,
        "domains": list(spec.domains),
        "languages": spec.languages,
        "main_score": spec.main_score,
        "lower_is_better": tasktypes.get(spec.type).lower_is_better(spec.main_score),  # for boards without the record
        "eval_splits": list(spec.data.eval_splits),
        "family": spec.family,
        "modalities": list(spec.modalities),
    }


def batching_record(emb: Embedder) -> dict:
    """How audio was batched (none of it changes a vector of a family batched by length)."""
    if getattr(emb.encoder, "batch_order", "length") == "call":
        return {"order": "call", "batch_size": emb.call_batch_size}
    out = {"order": "length", "batch_size": emb.batch_size, "batch_seconds": emb.batch_seconds}
    if emb.max_clips or emb.max_samples:
        out["after_out_of_memory"] = {"max_clips": emb.max_clips, "max_samples": emb.max_samples}
    return out


def result_info(job: ResolvedRun, spec: TaskSpec, ident: dict, emb: Embedder, outcome: TaskEvaluation, embedding: dict) -> dict:
    """The maeb section of one task's result file (before a caller's amend)."""
    cfg, protocol, chain, cache = job.options, job.protocol, job.chain, emb.cache
    failed = sum(int(e.get("judge_failed", 0) or 0) for entries in outcome.scores.values() for e in entries)
    return {
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
        "batching": batching_record(emb),
        **({"perturbation": chain.describe()} if chain else {}),
        **({"precision": cfg.precision} if cfg.precision else {}),
        "main_score_scale": getattr(tasktypes.get(spec.type), "SCORE_SCALE", 1.0),
        "parameters": shown_parameters(spec.type, spec.protocol),
        "transforms": spec.transforms,
        "derive": spec.derive,
        "spec_file": shown_path(spec.source_file),
        "embedding": embedding,
        "fingerprints": emb.fingerprints(),
        "stability": outcome.stability,
        **({"ties": outcome.ties} if outcome.ties else {}),
        **({"baselines": outcome.baselines} if outcome.baselines else {}),
        "numeric_env": numeric_env(),
        "data": outcome.notes,
        **({"evaluation": outcome.infos} if outcome.infos else {}),
        **({"duration_edges": list(cfg.duration_buckets)} if cfg.duration_buckets else {}),
        # --per-item: the files it wrote (none for a type that scores no item alone, pair classification,
        # clustering), so a later --per-item run knows this result is done (maeb.run.resume.has_per_item)
        **({"per_item_files": per_item_names(outcome.files)} if cfg.per_item else {}),
        "skipped_examples": dict(list(emb.stats.skipped.items())[:20]),
    }


def per_item_names(files: dict[str, str]) -> list[str]:
    """The per-item files among a task's side files, by their name under TASK_predictions/."""
    from ..analysis.paired import PER_ITEM_FILE

    return sorted(name for name in files if name.rsplit("/", 1)[-1].endswith(PER_ITEM_FILE))


def write_result(job: ResolvedRun, meta: ModelMeta, result: TaskResult, dim: int | None, first: bool, log) -> None:
    """One task's result file, its side files and run settings (the model's model_meta.json with
    the first result, so a run that fails before any leaves no lone model_meta.json)."""
    path = result.path
    assert path is not None
    if first and job.options.output_dir is not None:
        write_model_meta(Path(job.options.output_dir), observed_dim(meta, dim, log), job.encoder_options, job.experiment)
    for name, text in result.files.items():
        write_text_atomic(predictions_path(path, name), text)
    write_json_atomic(path, result.payload)
    write_run_settings(path.parent, result.task, result.payload["scores"], meta.run_settings(job.encoder_options))


def observed_dim(meta: ModelMeta, dim: int | None, log) -> ModelMeta:
    """The entry with the dimension the vectors really have; model_meta.json records it for a model
    mteb's registry does not know, and the registry's own record (its embed_dim) for one it does."""
    if not isinstance(meta.embed_dim, int) or not dim or dim == meta.embed_dim:
        return meta
    observed = replace(meta, embed_dim=dim)
    recorded = model_meta_json(observed).get("embed_dim")
    where = (
        f"model_meta.json records {dim} (correct the entry)"
        if recorded == dim
        else f"model_meta.json keeps mteb's registry record (embed_dim {recorded}), as the results repository "
        "expects (correct the entry, or mteb's registry)"
    )
    log(f"warning: model {meta.name!r} returned {dim}-d vectors, but its entry says embed_dim {meta.embed_dim}; {where}")
    return observed


def shown_path(path: str) -> str:
    """Spec files of the catalog are recorded relative to it, so results do not carry local paths."""
    from ..spec.catalog import catalog_dir

    root = catalog_dir("tasks").parent
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        return path
