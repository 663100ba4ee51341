"""The model's side of a run: which sides (audio, text, generation, frames, a judge) a model offers
against what each task needs, before it is loaded (require_sides, plan_sides) and after (fitting,
missing_side); the model loaded and checked (load_model); and the embedder built around it, its
cache keyed by the full encoder identity (build_embedder). The plain runner, the layer sweep, the
Ray driver and its workers share these."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path

from .. import tasktypes
from ..core.errors import MaebError, ModelError
from ..core.identity import encoder_identity
from ..core.taskspec import TaskSpec
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
    resolve_factory,
)
from ..engine.cache import EmbeddingCache
from ..engine.embed import Embedder
from .options import ResolvedRun, RunOptions


def missing_side(needs: set[str], encoder) -> str | None:
    """The first side a task needs that the loaded encoder lacks, as a notice names it; None: none."""
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


def fitting(meta, encoder, pending, ctx, strict, summary, log) -> list:
    """The pending tasks the loaded model has every side for, checked before any is evaluated:
    strict, a misfit is one error naming them all; otherwise each is skipped with a notice."""
    fits, misfits = [], []
    for item in pending:
        spec = item[0]
        needs = tasktypes.get(spec.type).needs(spec)
        if "judge" in needs and ctx.judge is None:
            raise MaebError(f"task {spec.name} is scored by an LLM judge: pass --judge-url and --judge-model")
        side = missing_side(needs, encoder)
        if side is None:
            fits.append(item)
        elif strict:
            misfits.append(f"{spec.name} (needs {side})")
        else:
            summary.skipped_modality.append(spec.name)
            log(f"{spec.name}: model {meta.name!r} has no {side} encoder; this task needs one; skipped")
    if misfits:
        shown = ", ".join(misfits[:5]) + (f" and {len(misfits) - 5} more" if len(misfits) > 5 else "")
        raise ModelError(f"model {meta.name!r} ({type(encoder).__name__}) cannot run {shown}; nothing was evaluated")
    return fits


def declared_sides(factory) -> set[str]:
    """The sides a family's class declares beyond its modalities (writing text, writing audio,
    time-resolved frames)."""
    sides = {side for side in ("generate", "synthesize") if callable(getattr(factory, side, None))}
    return sides | ({"frames"} if callable(getattr(factory, "embed_frames", None)) else set())


def plan_sides(meta: ModelMeta, cfg: RunOptions) -> set[str]:
    """What a model offers, known without loading it: its modalities, text generation when its
    family's class generates, and a judge when one is configured."""
    sides = set(meta.modalities) | declared_sides(resolve_factory(meta.family))
    if cfg.judge is not None:
        sides.add("judge")
    return sides


def require_sides(meta: ModelMeta, specs: list[TaskSpec], judge: bool = False) -> None:
    """Tasks named one by one must fit the model: one line listing those it has no side for
    (a benchmark's tasks that do not fit are skipped instead, and say so)."""
    sides = set(meta.modalities)
    with contextlib.suppress(MaebError):
        sides |= declared_sides(resolve_factory(meta.family))
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


def load_model(job: ResolvedRun, encoder=None):
    """The run's encoder: loaded from its entry (in the run's dtype), or the instance the caller
    built, checked against the entry; either way refused in one line where an option cannot apply."""
    meta, cfg = job.meta, job.options
    if encoder is None:
        encoder = load_encoder(
            meta, device=cfg.device, protocol=job.protocol, endpoints=cfg.endpoints, raise_unexpected=cfg.debug, **job.overrides
        )
        check_precision(meta, encoder, cfg.precision)
    else:
        check_encoder(meta, encoder)
    if cfg.call_batch_size and getattr(encoder, "batch_order", "length") != "call":
        raise ModelError(
            f"model {meta.name!r}: --call-batch-size applies only to families batched as mteb batches them "
            f"(batch_order 'call'); {type(encoder).__name__} batches by length: use --batch-size or --batch-seconds"
        )
    return encoder


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
