"""What one task run used and did: counts and timings of embedding and generation, the clips it
skipped, and the content keys of every clip and text it touched, from which its fingerprints are
computed. The runner writes it into the task's result."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from ..audio.pipeline import PipelineTimes

OUTSIDE_SHARE = 0.5  # a task's embedding time outside the encoder's forward above which the run says why
MIN_EMBED_SECONDS = 5.0  # ... when it embedded for at least this long


@dataclass
class EmbedStats:
    """Counts of what a task embedded, found cached, generated and skipped, for the result file."""

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
        """The counts as a dict (seconds rounded; skipped clips as a count)."""
        out = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in self.__dict__.items() if k != "skipped"}
        out["skipped_clips"] = len(self.skipped)
        return out


@dataclass
class TaskRecord:
    """What the run records about one task while it is evaluated: context, counts, the clips and texts it used, warnings and
    decoding times."""

    context: str = ""  # the task, and while evaluating its subset and split (for messages)
    stats: EmbedStats = field(default_factory=EmbedStats)
    clips: set[str] = field(default_factory=set)  # content keys of the clips the task used
    texts: set[str] = field(default_factory=set)  # keys of its texts
    # (metric, clips, values) of the split and subset being evaluated (maeb.analysis.durations)
    outcomes: tuple[str, list, list] | None = None
    warnings: list[str] = field(default_factory=list)  # what the run warned about the task (the result keeps them)
    pipeline: PipelineTimes = field(default_factory=PipelineTimes)  # the decoding threads' time, by step

    def outcome(self, metric: str, refs: list, values) -> None:
        """Each evaluation item's value of `metric` (the task's metric is their mean) and the
        clip whose duration it is filed under."""
        if len(refs) != len(values):
            raise ValueError(f"{len(refs)} clips for {len(values)} values of {metric}")
        self.outcomes = (metric, list(refs), [float(v) for v in values])

    def take_outcomes(self) -> tuple[str, list, list] | None:
        """The per-clip outcomes recorded for the current split (maeb.analysis.durations), cleared so they are read once."""
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


def outside_encoder_note(stats: EmbedStats, pipeline: dict) -> str | None:
    """Why a task spent most of its embedding time outside the encoder's forward, from what the
    decoding threads timed (maeb.audio.pipeline.PipelineTimes.as_dict), and what to do; None when the
    forward took most of it, or the task embedded for under MIN_EMBED_SECONDS."""
    wall = stats.embed_wall_seconds
    if wall < MIN_EMBED_SECONDS:
        return None
    share = 1.0 - stats.forward_seconds / wall
    if share < OUTSIDE_SHARE:
        return None
    resampled, decoded = pipeline["resample_seconds"], pipeline["decode_seconds"]
    parts = [f"decoding {decoded:.1f} s ({pipeline['decoded_clips']} clips)"]
    top = pipeline["resample"][0] if pipeline["resample"] else None
    if top:
        parts.append(
            f"resampling {resampled:.1f} s (of it {top['from_hz']} -> {top['to_hz']} Hz with {top['resampler']}: "
            f"{top['seconds']:.1f} s over {top['clips']} clips)"
        )
    if top and resampled >= decoded and resampled >= 0.3 * wall:
        hint = f"resampling from {top['from_hz']} Hz is the cost" + (
            "; --resampler soxr-hq is faster (not mteb's resampler: its results go to an experiments folder)"
            if top["resampler"] == "torchaudio-sinc-hann"
            else ""
        )
    elif decoded >= 0.3 * wall:
        hint = (
            "decoding is the cost: compressed files (MP3, OGG) decode slower than WAV or FLAC; --workers N decodes in N threads"
        )
    else:
        clips = max(1, stats.clips_embedded)
        hint = (
            f"the encoder is fast ({1000 * stats.forward_seconds / clips:.1f} ms per clip), so reading, batching "
            "and caching clips show"
        )
    return (
        f"{100 * share:.0f}% of the {wall:.1f} s spent embedding was outside the encoder's forward "
        f"({stats.forward_seconds:.1f} s); the decoding threads spent {' and '.join(parts)}: {hint}"
    )
