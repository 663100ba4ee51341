"""Pooling shared by all frame-level encoders."""

from __future__ import annotations

import numpy as np


def masked_mean(hidden, lengths) -> np.ndarray:
    """Mean of the first `lengths[i]` frames of each row of a (batch, frames, dim) tensor or array.

    A clip too short for a single frame gets frame 0 rather than a division by zero."""
    hidden = hidden.float().cpu().numpy() if hasattr(hidden, "cpu") else np.asarray(hidden, dtype=np.float32)
    lengths = np.asarray(lengths.cpu() if hasattr(lengths, "cpu") else lengths).astype(int)
    lengths = np.clip(lengths, 1, hidden.shape[1])
    mask = np.arange(hidden.shape[1])[None, :] < lengths[:, None]
    total = np.einsum("bt,btd->bd", mask.astype(np.float32), hidden)
    return (total / lengths[:, None]).astype(np.float32)
