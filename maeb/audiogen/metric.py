"""The scorer protocol of audio generation: each metric sees every generated clip once, in
batches, with its request and (where the data has one) the reference recording, and reports its
values and where they come from. A metric whose model or package is missing raises
MetricUnavailable when it is built; the task type reports it as missing with the reason, never 0."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..core.errors import MaebError
from .request import SynthesisRequest


class MetricUnavailable(MaebError):
    """A metric cannot be computed here (its package or reference model is missing); the reason
    is written into the result in place of the value."""


@dataclass
class GeneratedItem:
    """One generated clip (mono float32 at `rate`) with what it was asked and, when the data holds
    one, the real recording of the same scene (mono float32 at `reference_rate`)."""

    request: SynthesisRequest
    audio: np.ndarray
    rate: int
    reference: np.ndarray | None = None
    reference_rate: int | None = None
    rubrics: list[str] | None = None  # AnyAudio-Judge's statements, from the data (never shown to the system)


@runtime_checkable
class Metric(Protocol):
    """What every generation scorer has: update(items) per batch, then result() and provenance()."""

    name: str  # as the spec names it: "fd", "kl", "is", "clap", "wer", "spk_sim", "speech_f1", ...
    level: str  # "set" (one value for the whole set: FD, IS) or "clip" (a mean over clips)

    def provenance(self) -> dict:
        """{"model": ..., "revision": ..., "package": "name==version", "stand_in": bool, ...}: what
        produced the numbers; stand_in True for the offline substitutes tests and MMAG-lite use."""
        ...

    def update(self, items: list[GeneratedItem]) -> None:
        """Consume a batch of generated clips (called once per clip over the run)."""
        ...

    def result(self) -> dict[str, float]:
        """The metric's values under their result keys (e.g. {"wer": ..., "hit_rate": ...});
        a clip-level metric may also keep `per_clip` (request key -> values) for the side file."""
        ...
