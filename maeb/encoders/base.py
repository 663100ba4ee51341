"""What a wrapper builds on: base classes that document the encoder protocol's methods, and the
helpers every family uses to load a checkpoint and read its protocol settings.

A wrapper subclasses AudioEncoderBase (and TextEncoderBase for a text side, TextGeneratorBase for
a model that writes text); the bases add no behaviour and no attributes, only the methods'
contracts, so a subclass's identity (`module:Class`) and its vectors are its own. Decoding,
resampling to `sample_rate`, length cuts, batching by length and caching are the engine's job: a
wrapper receives mono float32 clips at its own rate, already cut."""

from __future__ import annotations

from typing import Any

import numpy as np

UNSET: Any = object()  # an option left to the protocol (None is a value: "no cap")
SOFTWARE = ("torch", "transformers")  # the packages whose versions a transformers wrapper records


class EncoderBase:
    """Any model maeb loads: config() names what changes its outputs."""

    def config(self) -> dict:
        """Everything that changes this model's outputs (checkpoint settings, pooling, caps, dtype),
        as plain values; it keys the embedding cache and is written into every result."""
        raise NotImplementedError


class AudioEncoderBase(EncoderBase):
    """An audio encoder (maeb.encoders.AudioEncoder). A subclass sets `sample_rate`, `max_seconds`
    (None: no cap), `min_samples` (optional) and `batching` ("padded", "same_length", "single")."""

    def embed_audio(self, clips: list[np.ndarray]) -> np.ndarray:
        """One float32 vector per clip, as an (n, d) array; clips are mono float32 at sample_rate."""
        raise NotImplementedError


class TextEncoderBase(EncoderBase):
    """A model with a text side (maeb.encoders.TextEncoder), in the same space as its audio side."""

    def embed_text(self, texts: list[str]) -> np.ndarray:
        """One float32 vector per text, as an (n, d) array."""
        raise NotImplementedError


class TextGeneratorBase(EncoderBase):
    """An audio language model that writes text (maeb.encoders.TextGenerator)."""

    def generate(self, clips: list[np.ndarray], prompts: list[str], settings: dict) -> list[str]:
        """One answer per (clip, prompt) pair; settings are the task's decoding settings."""
        raise NotImplementedError


def import_torch() -> Any:
    """The torch module, imported when a wrapper needs it (listing models imports no torch)."""
    import torch

    return torch


def model_source(meta: Any, path: str | None) -> tuple[str, Any]:
    """Where to load weights from: (hub id, pinned revision), or (local folder, None) with `path`.
    The revision is typed Any: transformers' from_pretrained is annotated `revision: str` but reads
    None (a local folder has no revision), which is what the wrappers pass for one."""
    return (path, None) if path else (meta.name, meta.revision)


def torch_dtype(name: str) -> Any:
    """A torch dtype by name; "auto" loads the dtype the checkpoint was saved in (what
    transformers 5 does when mteb passes none). Any other name is refused with a ValueError."""
    if name == "auto":
        return "auto"
    torch = import_torch()
    try:
        return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]
    except KeyError:
        raise ValueError(f"dtype must be auto, float32, bfloat16 or float16, not {name!r}") from None


def dtype_name(model: Any) -> str:
    """The dtype a loaded torch model computes in, as config() records it ("float32", ...)."""
    return str(model.dtype).replace("torch.", "")


def protocol_rules(protocol: Any, family: str, arch: str | None = None) -> dict:
    """The settings `protocol` (maeb.encoders.protocols.Protocol) fixes for a family and architecture;
    {} without a protocol (a wrapper built directly)."""
    return protocol.family_rules(family, arch) if protocol is not None else {}


def pick(explicit: Any, rules: dict, key: str, default: Any) -> Any:
    """An option's value: the one given explicitly, else the protocol's rule, else the default."""
    return rules.get(key, default) if explicit is UNSET else explicit


def as_seconds(value: Any) -> float | None:
    """A length cap as float seconds; None stays None (no cap)."""
    return None if value is None else float(value)


def to_device(tensor: Any, device: Any, dtype: Any = None) -> Any:
    """A host tensor on the model's device, cast to `dtype` if given. On CUDA the copy goes through
    pinned memory without blocking, so it is queued with the forward instead of stalling the thread
    while the decode threads wait; the cast then runs on the device (the same rounding as on the host)."""
    if str(device).startswith("cuda") and tensor.device.type == "cpu":
        tensor = tensor.pin_memory().to(device, non_blocking=True)
    else:
        tensor = tensor.to(device)
    return tensor if dtype is None else tensor.to(dtype)


def batch_order(rules: dict, batching: str) -> str:
    """ "call" (mteb's batches, see maeb.encoders.protocols) where the protocol asks for it and clips are
    padded together; "length" otherwise."""
    return "call" if rules.get("batches") == "mteb" and batching == "padded" else "length"
