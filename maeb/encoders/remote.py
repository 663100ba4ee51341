"""Checkpoints whose model code ships in their hub repository (transformers' trust_remote_code),
run as mteb 2.26.24's wrappers run them.

- hf-hear (hear_s11_models.py, matthewagi/HeAR-s1.1): 2 s windows with a 2 s hop (the last one
  zero-padded), one window per forward pass (the model code changes a window's vector with its
  batch-mates), pooler_output per window, mean over windows; 16 kHz; no cap, no L2.
- fusion-embedding (fusion_embedding_models.py): the remote code's embed_audio_batch(list, sr)
  and embed_text_batch(texts), as batches; 16 kHz; no cap."""

from __future__ import annotations

import math

import numpy as np

from ..core.errors import ModelError
from ..core.trust import require_model_code
from .base import SOFTWARE, UNSET, AudioEncoderBase, TextEncoderBase, as_seconds, import_torch, model_source, pick, protocol_rules


def _remote_model(meta, path, device):
    source, revision = model_source(meta, path)
    require_model_code(meta.name, ModelError)  # the checkpoint's own .py files would run below
    from transformers import AutoModel

    return AutoModel.from_pretrained(source, revision=revision, trust_remote_code=True).to(device).eval()


class HeAREncoder(AudioEncoderBase):
    """HeAR (remote code): pooler output per 2 s window, one window per pass, mean over windows."""

    sample_rate = 16000
    max_seconds = None
    min_samples = 0
    batching = "padded"  # each clip and each window runs alone inside embed_audio
    software = SOFTWARE

    def __init__(self, meta, device="cpu", path=None, window_seconds=UNSET, protocol=None):
        rules = protocol_rules(protocol, "hf-hear")
        self.model = _remote_model(meta, path, device)
        self.window = int(round(float(pick(window_seconds, rules, "window_seconds", 2.0)) * self.sample_rate))
        self.device = device

    def config(self):
        return {"pooling": "mean-of-window-pooler", "window_samples": self.window, "hop_samples": self.window, "per_window": True}

    def windows(self, clip: np.ndarray) -> np.ndarray:
        """(n, window) windows with a hop of one window; the last zero-padded; at least one."""
        clip = np.asarray(clip, dtype=np.float32).reshape(-1)
        n = max(1, math.ceil(clip.shape[0] / self.window))
        return np.pad(clip, (0, n * self.window - clip.shape[0])).reshape(n, self.window)

    def embed_audio(self, clips):
        torch = import_torch()
        out = []
        with torch.inference_mode():
            for clip in clips:
                wins = torch.from_numpy(self.windows(clip)).to(self.device)
                pooled = [self.model(input_values=w[None], return_dict=True).pooler_output for w in wins]
                out.append(torch.cat(pooled).mean(dim=0).float().cpu().numpy())
        return np.stack(out).astype(np.float32)


class FusionEmbeddingEncoder(AudioEncoderBase, TextEncoderBase):
    """fusion-embedding (remote code): its own embed_audio_batch and embed_text_batch."""

    sample_rate = 16000
    min_samples = 0
    software = SOFTWARE

    def __init__(self, meta, device="cpu", path=None, max_seconds=UNSET, batching=UNSET, protocol=None):
        rules = protocol_rules(protocol, "fusion-embedding")
        self.model = _remote_model(meta, path, device)
        self.max_seconds = as_seconds(pick(max_seconds, rules, "max_seconds", None))
        self.batching = pick(batching, rules, "batching", "padded")
        self.device = device

    def config(self):
        return {"pooling": "remote:embed_audio_batch", "text": "remote:embed_text_batch", "max_seconds": self.max_seconds}

    def embed_audio(self, clips):
        torch = import_torch()
        with torch.inference_mode():
            vectors = self.model.embed_audio_batch([np.asarray(c, dtype=np.float32) for c in clips], sr=self.sample_rate)
        return torch.as_tensor(vectors).float().cpu().numpy()

    def embed_text(self, texts):
        torch = import_torch()
        with torch.inference_mode():
            vectors = self.model.embed_text_batch(list(texts))
        return torch.as_tensor(vectors).float().cpu().numpy()
