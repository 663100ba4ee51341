"""The sides of a model: the protocols an encoder, a text side, a generator or a synthesizer
satisfies (HEAR's idea: a sample rate, a length policy and a function from mono float32 clips to
float32 vectors), the registry of those sides, and the tests of which sides a loaded model has."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..audio.pipeline import LengthPolicy


@runtime_checkable
class AudioEncoder(Protocol):
    """What the engine asks of an audio model. A class named in an entry (`family = "module:Class"`)
    is built as ``Class(meta, device=..., **options)``: ``meta`` the model's entry (ModelMeta),
    ``device`` "cpu" or "cuda", ``options`` the entry's options and --option values as keyword
    arguments; so it begins ``def __init__(self, meta, device="cpu", n_mels=64): ...``. config()
    names everything that changes its vectors (it keys the cache)."""

    sample_rate: int
    max_seconds: float | None
    min_samples: int  # optional (default 0): shorter clips are zero-padded to it
    batching: str  # "padded" | "same_length" | "single", see maeb.audio.pipeline.plan_batches

    def embed_audio(self, clips: list[np.ndarray]) -> np.ndarray:
        """One float32 vector per clip, as an (n, d) array (clips: mono float32 at sample_rate)."""

    def config(self) -> dict:
        """Everything that changes the outputs, as plain values (it keys the cache)."""


@runtime_checkable
class TextEncoder(Protocol):
    """What the engine asks of a model's text side: one vector per text, in the audio side's space."""

    def embed_text(self, texts: list[str]) -> np.ndarray:
        """One float32 vector per text, as an (n, d) array."""

    def config(self) -> dict:
        """Everything that changes the outputs, as plain values (it keys the cache)."""


@runtime_checkable
class TextGenerator(Protocol):
    """An audio language model: one text per (clip, prompt)."""

    sample_rate: int
    max_seconds: float | None
    batching: str

    def generate(self, clips: list[np.ndarray], prompts: list[str], settings: dict) -> list[str]:
        """One text per (clip, prompt) pair, with the task's decoding settings."""

    def config(self) -> dict:
        """Everything that changes the outputs, as plain values (it keys the cache)."""


@runtime_checkable
class AudioSynthesizer(Protocol):
    """A text-to-audio system (maeb.audiogen): one mono float32 clip at sample_rate per request.
    `capabilities` (maeb.audiogen.request.Capabilities, optional) says which request fields it
    accepts and what it needs; config() names everything that changes its output."""

    sample_rate: int

    def synthesize(self, requests: list) -> list[np.ndarray]:
        """One mono float32 clip at sample_rate per request."""

    def config(self) -> dict:
        """Everything that changes the outputs, as plain values (it keys the cache)."""


@runtime_checkable
class FrameEncoder(Protocol):
    """Time-resolved embeddings (HEAR's timestamp embeddings), an optional member of an audio
    encoder, for frame-level tasks (event detection, maeb.engine.frames). Per clip of the batch, given
    as embed_audio's clips are (mono float32 at sample_rate, cut by the length policy): a (T, D)
    float32 matrix of frame vectors and a (T,) float64 array of each frame's centre time in
    seconds from the start of the clip (the centre of the frame's receptive window), increasing.
    D is the same for every clip; T may differ (0 for a clip too short for one frame).
    `frames_version` (optional, default 1) names the frame computation: cached frames are keyed
    by it besides the encoder's identity, so a change to embed_frames alone bumps it."""

    def embed_frames(self, clips: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per clip, its (T, D) frame vectors and their (T,) centre times in seconds."""


# The one registry of model sides: the method that declares a side, its protocol, and the
# members the engine relies on (checked when a model loads, by check_encoder)
SIDES: dict[str, tuple[type, tuple[str, ...]]] = {
    "embed_audio": (AudioEncoder, ("sample_rate", "max_seconds", "batching", "config")),
    "embed_text": (TextEncoder, ("config",)),
    "generate": (TextGenerator, ("sample_rate", "max_seconds", "batching", "config")),
    "synthesize": (AudioSynthesizer, ("sample_rate", "config")),
}


def length_policy(encoder) -> LengthPolicy:
    """The engine's length policy (rate, cap, minimum length) for an audio encoder."""
    return LengthPolicy(
        sample_rate=int(encoder.sample_rate),
        max_seconds=encoder.max_seconds,
        min_samples=int(getattr(encoder, "min_samples", 0)),
    )


def has_text(encoder) -> bool:
    """Whether the encoder has a text side (embed_text)."""
    return callable(getattr(encoder, "embed_text", None))


def has_audio(encoder) -> bool:
    """Whether the encoder embeds audio (embed_audio)."""
    return callable(getattr(encoder, "embed_audio", None))


def has_frames(encoder) -> bool:
    """Whether the encoder gives time-resolved embeddings (FrameEncoder.embed_frames)."""
    return callable(getattr(encoder, "embed_frames", None))


def has_generate(encoder) -> bool:
    """Whether the model writes text for clips (TextGenerator.generate)."""
    return callable(getattr(encoder, "generate", None))


def has_synthesize(encoder) -> bool:
    """Whether the model makes audio from text (AudioSynthesizer.synthesize)."""
    return callable(getattr(encoder, "synthesize", None))
