"""Pooling shared by all frame-level encoders: how many frames hold audio, and their mean.

Both follow mteb's wrappers operation by operation (float32 torch arithmetic in the same order), so
a vector equals mteb's bit for bit where the model's outputs do."""

from __future__ import annotations

import numpy as np

FRAME_RULES = ("conv", "ratio")


def frame_counts(rule: str, sample_counts, padded_samples: int, frames: int, model=None):
    """Frames of each clip that hold audio, as a long tensor clamped to [0, frames].

    conv: the model's own convolution arithmetic (`_get_feat_extract_output_lengths`), exact;
    ratio: mteb's HuBERT/WavLM/data2vec/Whisper/Seamless rule, samples / (padded / frames) in
    float32 then floored: it depends on the batch's padded length and can drop the last frame."""
    import torch

    counts = torch.as_tensor(sample_counts)
    if rule == "conv":
        values = [int(model._get_feat_extract_output_lengths(int(n))) for n in counts.tolist()]
        lengths = torch.tensor(values, dtype=torch.long)
    elif rule == "ratio":
        lengths = (counts.float() / (padded_samples / frames)).long()
    else:
        raise ValueError(f"frame rule {rule!r} is not one of {FRAME_RULES}")
    return torch.clamp(lengths, min=0, max=frames)


def masked_mean(hidden, lengths) -> np.ndarray:
    """Mean of the first `lengths[i]` frames of each row of a (batch, frames, dim) tensor or array;
    a clip with no frame gets a zero vector (as in mteb)."""
    import torch

    hidden = torch.as_tensor(hidden)
    lengths = torch.as_tensor(lengths, device=hidden.device)
    steps = torch.arange(hidden.shape[1], device=hidden.device).unsqueeze(0)
    mask = (steps < lengths.unsqueeze(1)).to(hidden.dtype).unsqueeze(-1)
    pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
    return pooled.float().cpu().numpy()
