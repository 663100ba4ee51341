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


def frame_centres(count: int, layers, first: float = 0.0, step: float = 1.0) -> np.ndarray:
    """Centres of `count` output frames of a stack of convolutions, in the units of its input:
    input frame j is centred at first + j * step, and each layer (kernel, stride, padding) maps
    output frame k to the input frames k * stride - padding ... k * stride - padding + kernel - 1,
    so its centre moves by (kernel - 1) / 2 - padding input frames and its step by the stride."""
    for kernel, stride, padding in layers:
        first += step * ((kernel - 1) / 2 - padding)
        step *= stride
    return first + step * np.arange(count, dtype=np.float64)


def frame_list(hidden, lengths, times) -> list[tuple[np.ndarray, np.ndarray]]:
    """The first `lengths[i]` frames of each row of a (batch, frames, dim) tensor as float32
    arrays, each with the first `lengths[i]` of `times` (a clip's frames share the batch's grid)."""
    rows = hidden.float().cpu().numpy() if hasattr(hidden, "float") else np.asarray(hidden, dtype=np.float32)
    return [(np.ascontiguousarray(rows[i, :n]), np.asarray(times[:n], dtype=np.float64)) for i, n in enumerate(lengths)]
