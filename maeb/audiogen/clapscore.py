"""CLAP score: the cosine similarity between a generated clip's CLAP audio embedding and its
caption's CLAP text embedding, averaged over clips (transformers' ClapModel and ClapProcessor).
Clips are resampled to the model's rate (48 kHz) and rounded to 16 bit as laion_clap does in
training and inference (maeb's CLAP encoder does the same); a clip longer than the model's window
is cut by the feature extractor with a fixed numpy seed, so scores are reproducible; captions are
cut at 77 tokens as in CLAP's training."""

from __future__ import annotations

import numpy as np

from ..core.errors import SpecError, check_keys
from .metric import GeneratedItem, MetricUnavailable

DEFAULT_MODEL = "laion/larger_clap_general"
# the revisions maeb's model catalogue pins (models/clap.toml)
PINNED = {
    "laion/larger_clap_general": "ada0c23a36c4e8582805bb38fec3905903f18b41",
    "laion/larger_clap_music": "a0b4534a14f58e20944452dff00a22a06ce629d1",
    "laion/clap-htsat-unfused": "8fa0f1c6d0433df6e97c127f64b2a1d6c0dcda8a",
    "laion/clap-htsat-fused": "cca9e288ab447cee67d9ada1f85ddb46500f1401",
}
OPTIONS = {"model", "revision", "path", "batch_size"}
TEXT_TOKENS = 77


def _unit(out):
    vectors = getattr(out, "pooler_output", out).float()  # newer transformers wrap the projection
    return vectors / vectors.norm(dim=-1, keepdim=True)


class ClapScore:
    """The "clap" scorer group. Options: model (default laion/larger_clap_general), revision
    (default: the pinned one of a catalogued model; required for any other), path (a local
    folder; then no revision applies), batch_size. per_clip: key -> {"clap": cosine}."""

    name = "clap"
    level = "clip"

    def __init__(self, keys, options, device="cpu", cache_dir=None) -> None:
        options = dict(options or {})
        check_keys("clap scorer options", options, OPTIONS)
        self.keys = tuple(keys)
        self.device = device
        self.batch_size = int(options.get("batch_size", 16))
        self.path = options.get("path")
        self.model_name = str(options.get("model", DEFAULT_MODEL))
        self.revision = None if self.path else options.get("revision", PINNED.get(self.model_name))
        if not self.path and not self.revision:
            raise SpecError(f"clap scorer: model {self.model_name!r} has no pinned revision; give options.revision (a commit id)")
        source = str(self.path or self.model_name)
        try:
            from transformers import ClapModel, ClapProcessor

            # transformers' stubs say str; None is its default (a local path has no revision)
            model = ClapModel.from_pretrained(source, revision=self.revision)  # type: ignore[arg-type]
            self.model = model.to(device).eval()  # type: ignore[arg-type]
            self.processor = ClapProcessor.from_pretrained(source, revision=self.revision)  # type: ignore[arg-type]
        except (OSError, ValueError, ImportError) as exc:
            where = f"{source}@{self.revision}" if self.revision else source
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise MetricUnavailable(
                f"clap: cannot load the CLAP model {where} ({reason}); download it first or give options.path"
            ) from exc
        fe = self.processor.feature_extractor
        self.sample_rate = int(fe.sampling_rate)
        self.fusion = fe.truncation == "fusion"
        self.per_clip: dict[str, dict[str, float]] = {}

    def provenance(self) -> dict:
        """The CLAP model, revision and package, as results record them."""
        import transformers

        return {
            "model": self.model_name if not self.path else str(self.path),
            "revision": self.revision,
            "package": f"transformers=={transformers.__version__}",
            "stand_in": False,
            "sample_rate": self.sample_rate,
            "fusion": self.fusion,
            "text_max_tokens": TEXT_TOKENS,
        }

    def audio_embeddings(self, clips: list[np.ndarray], rates: list[int]):
        """Unit-norm CLAP audio embeddings (torch, n x dim) of mono float32 clips."""
        import torch

        from ..audio.pipeline import resample
        from ..encoders.hf import clap_features  # the CLAP encoder's own preparation

        at_rate = [
            np.asarray(clip, np.float32)
            if rate == self.sample_rate
            else resample(np.asarray(clip, np.float32), rate, self.sample_rate, "soxr-hq")
            for clip, rate in zip(clips, rates)
        ]
        parts = clap_features(self.processor.feature_extractor, at_rate, self.sample_rate, self.fusion)
        batch = {k: torch.cat([p[k] for p in parts]).to(self.device) for k in parts[0]}
        batch["input_features"] = batch["input_features"].to(self.model.dtype)
        with torch.inference_mode():
            return _unit(self.model.get_audio_features(**batch))

    def text_embeddings(self, texts: list[str]):
        """Unit-length CLAP vectors of the texts."""
        import torch

        tok = self.processor.tokenizer(list(texts), padding=True, truncation=True, max_length=TEXT_TOKENS, return_tensors="pt")
        with torch.inference_mode():
            return _unit(self.model.get_text_features(**{k: v.to(self.device) for k, v in tok.items()}))

    def update(self, items: list[GeneratedItem]) -> None:
        """Score a batch of generated clips against their captions."""
        for start in range(0, len(items), self.batch_size):
            part = items[start : start + self.batch_size]
            audio = self.audio_embeddings([it.audio for it in part], [it.rate for it in part])
            text = self.text_embeddings([it.request.caption for it in part])
            cosines = (audio * text).sum(dim=-1).cpu().numpy().astype(np.float64)
            for item, value in zip(part, cosines):
                self.per_clip[item.request.key] = {"clap": float(value)}

    def result(self) -> dict[str, float]:
        """The mean caption-audio CLAP similarity over the scored clips."""
        if not self.per_clip:
            raise MetricUnavailable("clap: no generated clips were scored")
        return {"clap": float(np.mean([v["clap"] for v in self.per_clip.values()]))}
