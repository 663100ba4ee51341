"""Texts a generative model writes about clips: one per (clip, prompt), decoded once per clip
through the embedder's loop, cached by clip content, prompt and settings (an interrupted run
resumes, a rerun generates nothing), counted in the task's record."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from ..audio.pipeline import AudioRef
from ..core.errors import AudioError, MaebError, ModelError
from ..encoders import ModelMeta
from .cache import EmbeddingCache
from .taskrecord import EmbedStats


class Generating(Protocol):
    """What generating texts uses of the embedder (maeb.engine.embed.Embedder): its loop's
    decoding, cache, counts and batch size. Named here so this module need not import the
    embedder that calls it."""

    encoder: Any
    meta: ModelMeta
    cache: EmbeddingCache
    batch_size: int
    context: str

    @property
    def stats(self) -> EmbedStats:
        """The current task's counts and timings, which generating adds to."""
        ...

    def bad_clip(self, ref: AudioRef, exc: AudioError) -> None:
        """A clip that cannot be used: an error, or under --on-bad-audio skip a recorded skip."""
        ...

    def decoded(self, refs: list[AudioRef], what: str) -> Iterator[list[tuple[int, np.ndarray]]]:
        """Batches of (index into refs, decoded clip), decoded in the background; bad clips never yielded."""
        ...


def generate(emb: Generating, refs: Sequence[AudioRef], prompts: Sequence[str], settings: dict) -> tuple[list[str], np.ndarray]:
    """One text per (clip, prompt), cached by clip content, prompt and settings, so an
    interrupted run resumes and a rerun generates nothing. Returns texts ('' for skipped
    clips) and the mask of clips that could be used."""
    if not callable(getattr(emb.encoder, "generate", None)):
        raise ModelError(f"model {emb.meta.name!r} does not generate text; {emb.context} needs a generative model")
    setting_blob = json.dumps(settings, sort_keys=True)
    keys: list[str | None] = []
    for ref, prompt in zip(refs, prompts):
        try:
            keys.append(hashlib.blake2b(f"{ref.key}|{prompt}|{setting_blob}".encode(), digest_size=16).hexdigest())
        except AudioError as exc:
            emb.bad_clip(ref, exc)
            keys.append(None)
    found = emb.cache.get_texts(k for k in keys if k)
    emb.stats.generated_cached += len(found)
    todo: dict[str, int] = {}  # each (clip, prompt, settings) asked once
    for i, k in enumerate(keys):
        if k and k not in found and refs[i].name not in emb.stats.skipped:
            todo.setdefault(k, i)
    key_of = {i: k for k, i in todo.items()}
    # every clip is decoded once, however many prompts it is asked with
    by_clip: dict[str, list[int]] = {}
    for i in todo.values():
        by_clip.setdefault(refs[i].key, []).append(i)
    asks = list(by_clip.values())
    started = time.perf_counter()
    for good in emb.decoded([refs[ask[0]] for ask in asks], "generate"):
        pairs = [(i, clip) for j, clip in good for i in asks[j]]
        for start in range(0, len(pairs), emb.batch_size):
            chunk = pairs[start : start + emb.batch_size]
            texts = _generate_batch(emb, chunk, refs, prompts, settings)
            new = {key_of[i]: str(t) for (i, _), t in zip(chunk, texts)}
            emb.cache.put_texts(new)
            found.update(new)
            emb.stats.generated += len(new)
    if asks:
        emb.stats.embed_wall_seconds += time.perf_counter() - started
    ok = np.array([k is not None and k in found for k in keys], dtype=bool)
    return [found.get(k, "") if k else "" for k in keys], ok


def _generate_batch(emb: Generating, pairs: list[tuple[int, np.ndarray]], refs, prompts, settings) -> list[str]:
    t0 = time.perf_counter()
    try:
        texts = emb.encoder.generate([clip for _, clip in pairs], [prompts[i] for i, _ in pairs], settings)
    except MaebError:
        raise
    except Exception as exc:
        names = ", ".join(refs[i].name for i, _ in pairs[:3])
        raise ModelError(f"model {emb.meta.name!r} failed to generate for {names} ({type(exc).__name__}: {exc})") from exc
    emb.stats.forward_seconds += time.perf_counter() - t0
    return texts
