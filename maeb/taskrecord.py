"""What one task run used and did: counts and timings of embedding and generation, the clips it
skipped, and the content keys of every clip and text it touched, from which its fingerprints are
computed. The runner writes it into the task's result."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np


@dataclass
class EmbedStats:
    clips_embedded: int = 0
    clips_cached: int = 0
    texts_embedded: int = 0
    texts_cached: int = 0
    generated: int = 0  # texts a generative model wrote (predictions)
    generated_cached: int = 0
    audio_generated: int = 0  # clips a text-to-audio system wrote (maeb.audiogen.store)
    audio_generated_cached: int = 0  # found already written beside the results
    audio_seconds: float = 0.0
    forward_seconds: float = 0.0
    embed_wall_seconds: float = 0.0
    oom_backoffs: int = 0  # batches halved after a CUDA out-of-memory error
    skipped: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict:
        out = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in self.__dict__.items() if k != "skipped"}
        out["skipped_clips"] = len(self.skipped)
        return out


@dataclass
class TaskRecord:
    context: str = ""  # the task, and while evaluating its subset and split (for messages)
    stats: EmbedStats = field(default_factory=EmbedStats)
    clips: set[str] = field(default_factory=set)  # content keys of the clips the task used
    texts: set[str] = field(default_factory=set)  # keys of its texts
    # (metric, clips, values) of the split and subset being evaluated (maeb.durations)
    outcomes: tuple[str, list, list] | None = None
    warnings: list[str] = field(default_factory=list)  # what the run warned about the task (the result keeps them)

    def outcome(self, metric: str, refs: list, values) -> None:
        """Each evaluation item's value of `metric` (the task's metric is their mean) and the
        clip whose duration it is filed under."""
        if len(refs) != len(values):
            raise ValueError(f"{len(refs)} clips for {len(values)} values of {metric}")
        self.outcomes = (metric, list(refs), [float(v) for v in values])

    def take_outcomes(self) -> tuple[str, list, list] | None:
        out, self.outcomes = self.outcomes, None
        return out

    def fingerprints(self, cache) -> dict:
        """What tells two results apart by their inputs or by their vectors: a hash of the content
        keys of every clip and text the task used, and of their vectors (exact bytes), plus the sum
        of all vector values (how far apart two differing vector sets are)."""
        keys = sorted(self.clips | self.texts)
        vectors = cache.get_many(keys)
        h_in, h_vec = hashlib.blake2b(digest_size=16), hashlib.blake2b(digest_size=16)
        total = 0.0
        for key in keys:
            h_in.update(key.encode() + b"\0")
            vec = vectors.get(key)
            if vec is not None:
                h_vec.update(key.encode() + b"\0" + vec.tobytes())
                total += float(np.sum(vec, dtype=np.float64))
        return {
            "inputs": h_in.hexdigest(),
            "vectors": h_vec.hexdigest(),
            "vector_sum": round(total, 6),
            "clips": len(self.clips),
            "texts": len(self.texts),
        }
