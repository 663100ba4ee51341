"""The encoder protocol, model metadata and the family registry.

An encoder is a sample rate, a length policy and a function from a batch of mono float32 arrays
to float32 vectors (HEAR's idea); text-capable encoders also embed texts. Families are imported
only when a model of that family is loaded, so listing models imports no deep-learning code."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..audio import LengthPolicy
from ..errors import ModelError


@runtime_checkable
class AudioEncoder(Protocol):
    sample_rate: int
    max_seconds: float | None
    min_samples: int
    batching: str  # "padded" | "same_length" | "single", see maeb.audio.plan_batches

    def embed_audio(self, clips: list[np.ndarray]) -> np.ndarray: ...

    def config(self) -> dict: ...


@runtime_checkable
class TextEncoder(Protocol):
    def embed_text(self, texts: list[str]) -> np.ndarray: ...


# family name -> "module:factory"; a model entry may also name its own "package.module:factory"
FAMILIES = {
    "hf-whisper": "maeb.encoders.hf:WhisperEncoder",
    "hf-ssl": "maeb.encoders.hf:SelfSupervisedEncoder",
    "hf-ast": "maeb.encoders.hf:ASTEncoder",
    "hf-clap": "maeb.encoders.hf:ClapEncoder",
    "hf-seamless": "maeb.encoders.hf:SeamlessEncoder",
    "hf-encodec": "maeb.encoders.hf:EncodecEncoder",
    "hf-qwen2-audio": "maeb.encoders.audio_lm:Qwen2AudioEncoder",
    "hf-omni-embedding": "maeb.encoders.audio_lm:OmniEmbeddingEncoder",
    "ct2-whisper": "maeb.encoders.offline:CT2WhisperEncoder",
    "resemblyzer": "maeb.encoders.offline:ResemblyzerEncoder",
    "openwakeword": "maeb.encoders.offline:SpeechEmbeddingEncoder",
    "sentence-transformers": "maeb.encoders.offline:SentenceEncoder",
    "transcript": "maeb.encoders.offline:TranscriptEncoder",
    "mfcc": "maeb.encoders.baseline:MFCCStats",
    "gen-qwen2-audio": "maeb.encoders.generators:Qwen2AudioGenerator",
    "gen-openai-chat": "maeb.encoders.generators:OpenAIChatGenerator",
    "gen-transcriber": "maeb.encoders.generators:TranscriberGenerator",
    "mock-spectral": "maeb.mock:SpectralEncoder",
    "mock-identity": "maeb.mock:IdentityEncoder",
    "mock-tone-describer": "maeb.mock:ToneDescriber",
}

SIMILARITIES = ("cosine", "dot", "euclidean")


@dataclass(frozen=True)
class ModelMeta:
    """What mteb's ModelMeta records, plus how maeb loads the model (family and options)."""

    name: str
    family: str
    revision: str
    aliases: tuple[str, ...] = ()
    n_parameters: int | None = None
    embed_dim: int | None = None
    modalities: tuple[str, ...] = ("audio",)
    license: str | None = None
    reference: str | None = None
    similarity: str = "cosine"
    release_date: str | None = None
    languages: tuple[str, ...] = ()
    open_weights: bool | None = True
    framework: tuple[str, ...] = ("PyTorch",)
    notes: str = ""
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    source: str = ""

    @property
    def folder(self) -> str:
        return self.name.replace("/", "__")

    def to_mteb(self) -> dict:
        """model_meta.json in mteb's field names, so its results loader and leaderboard read it."""
        return {
            "loader_kwargs": {k: v for k, v in self.options.items() if k != "path"},
            "name": self.name,
            "revision": self.revision,
            "release_date": self.release_date,
            "languages": list(self.languages),
            "n_parameters": self.n_parameters,
            "memory_usage_mb": None,
            "max_tokens": None,
            "embed_dim": self.embed_dim,
            "license": self.license,
            "open_weights": self.open_weights,
            "public_training_code": None,
            "public_training_data": None,
            "framework": list(self.framework),
            "reference": self.reference,
            "similarity_fn_name": self.similarity,
            "use_instructions": False,
            "training_datasets": None,
            "adapted_from": None,
            "superseded_by": None,
            "modalities": list(self.modalities),
            "is_cross_encoder": None,
            "citation": None,
            "contacts": None,
            "loader": f"maeb:{self.family}",
        }


def resolve_factory(family: str):
    target = FAMILIES.get(family, family)
    if ":" not in target:
        raise ModelError(f"unknown model family {family!r}; known: {', '.join(sorted(FAMILIES))} or 'module:factory'")
    module_name, attr = target.split(":", 1)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelError(
            f"family {family!r} needs a package that is not installed ({exc.name}); "
            "install maeb's extras (`make install`) or the package named here"
        ) from exc
    try:
        return getattr(module, attr)
    except AttributeError as exc:
        raise ModelError(f"family {family!r}: {module_name} has no {attr!r}") from exc


def load_encoder(meta: ModelMeta, device: str = "cpu", **overrides):
    """Build the encoder for a registry entry; options in the entry, then overrides, go to the factory."""
    factory = resolve_factory(meta.family)
    options = {**meta.options, **overrides}
    try:
        return factory(meta, device=device, **options)
    except TypeError as exc:
        raise ModelError(f"model {meta.name!r}: bad options {sorted(options)} for family {meta.family!r} ({exc})") from exc
    except OSError as exc:
        raise ModelError(
            f"model {meta.name!r} could not be loaded ({exc}). Weights come from the hub at revision "
            f"{meta.revision}; offline, set the entry's `path` option to a local copy"
        ) from exc


def length_policy(encoder) -> LengthPolicy:
    return LengthPolicy(
        sample_rate=int(encoder.sample_rate),
        max_seconds=encoder.max_seconds,
        min_samples=int(getattr(encoder, "min_samples", 0)),
    )


def has_text(encoder) -> bool:
    return callable(getattr(encoder, "embed_text", None))


def has_audio(encoder) -> bool:
    return callable(getattr(encoder, "embed_audio", None))


def has_generate(encoder) -> bool:
    return callable(getattr(encoder, "generate", None))


def identity(meta: ModelMeta, encoder) -> dict:
    """Everything that changes the vectors; the embedding cache is keyed by its hash."""
    config = encoder.config() if hasattr(encoder, "config") else {}
    return {"name": meta.name, "revision": meta.revision, "family": meta.family, "config": config}
