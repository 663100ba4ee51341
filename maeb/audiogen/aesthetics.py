"""Audiobox Aesthetics (Tjandra et al., 2025): four 1-10 axes per clip, production quality (pq),
production complexity (pc), content enjoyment (ce) and content usefulness (cu), from the
audiobox_aesthetics package's own predictor (`initialize_predictor`, then `forward` on
{"path": waveform tensor, "sample_rate": rate} rows, its documented in-memory input). Clips are
handed over at their own rate: the package resamples to 16 kHz and scores 10 s windows itself, so
the numbers are the package's. Reported per key: the mean over clips."""

from __future__ import annotations

import json

import numpy as np

from ..core.errors import ModelError, check_keys
from .metric import GeneratedItem, MetricUnavailable

AXES = {"pq": "PQ", "pc": "PC", "ce": "CE", "cu": "CU"}
OPTIONS = {"checkpoint", "batch_size"}
INSTALL_HINT = "audiobox-aesthetics is not installed: pip install audiobox-aesthetics"


def _package_version() -> str:
    from importlib import metadata

    for name in ("audiobox_aesthetics", "audiobox-aesthetics"):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


class AestheticsScores:
    """The "aesthetics" scorer group. Options: checkpoint (a local checkpoint.pt; default: the
    package fetches its released one), batch_size. per_clip: key -> {"pq", "pc", "ce", "cu"}."""

    name = "aesthetics"
    level = "clip"

    def __init__(self, keys, options, device="cpu", cache_dir=None) -> None:
        options = dict(options or {})
        check_keys("aesthetics scorer options", options, OPTIONS)
        self.keys = tuple(keys)
        self.batch_size = int(options.get("batch_size", 10))
        self.checkpoint = options.get("checkpoint")
        try:
            from audiobox_aesthetics.infer import initialize_predictor
        except ImportError as exc:
            raise MetricUnavailable(INSTALL_HINT) from exc
        try:
            # the package picks its device itself (CUDA when present)
            self.predictor = initialize_predictor(str(self.checkpoint)) if self.checkpoint else initialize_predictor()
        except Exception as exc:  # download or checkpoint failures come in many types
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise MetricUnavailable(f"aesthetics: cannot load the Audiobox Aesthetics model ({reason})") from exc
        self.per_clip: dict[str, dict[str, float]] = {}

    def provenance(self) -> dict:
        """The model and package that gave the scores, as results record them."""
        return {
            "model": "facebook/audiobox-aesthetics",
            "checkpoint": str(self.checkpoint) if self.checkpoint else "package default",
            "package": f"audiobox_aesthetics=={_package_version()}",
            "stand_in": False,
        }

    def update(self, items: list[GeneratedItem]) -> None:
        """Score a batch of generated clips on the four aesthetics axes."""
        import torch

        for start in range(0, len(items), self.batch_size):
            part = items[start : start + self.batch_size]
            rows = [
                {"path": torch.from_numpy(np.asarray(it.audio, np.float32))[None], "sample_rate": int(it.rate)} for it in part
            ]
            outputs = self.predictor.forward(rows)
            if len(outputs) != len(part):
                raise ModelError(f"Audiobox Aesthetics returned {len(outputs)} rows for {len(part)} clips")
            for item, out in zip(part, outputs):
                out = json.loads(out) if isinstance(out, str) else out  # older releases return JSON lines
                try:
                    self.per_clip[item.request.key] = {k: float(out[axis]) for k, axis in AXES.items()}
                except (KeyError, TypeError, ValueError) as exc:
                    raise ModelError(f"clip {item.request.key!r}: Audiobox Aesthetics gave {out!r}, not the four axes") from exc

    def result(self) -> dict[str, float]:
        """Mean PQ, PC, CE, CU over the scored clips."""
        if not self.per_clip:
            raise MetricUnavailable("aesthetics: no generated clips were scored")
        wanted = [k for k in self.keys if k in AXES] or list(AXES)
        return {k: float(np.mean([v[k] for v in self.per_clip.values()])) for k in wanted}
