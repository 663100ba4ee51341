"""Random numbers addressed rather than drawn in turn, for the bootstrap of maeb.analysis.uncertainty:
number (d, j) of a stream is a hash of the seed, the stream, a key (a cell's name), the draw d and the
place j. The leaderboard page's script computes the same hashes (Math.imul for the uint32 products),
so a subset of a board's tasks draws each cell's noise as the whole board does, in Python and in the page."""

from __future__ import annotations

import numpy as np

_GOLDEN = 0x9E3779B9


def _mix(x: np.ndarray) -> np.ndarray:
    """murmur3's 32-bit finaliser (uint32 arrays wrap; the page's script uses Math.imul)."""
    x = x ^ (x >> np.uint32(16))
    x = x * np.uint32(0x85EBCA6B)
    x = x ^ (x >> np.uint32(13))
    x = x * np.uint32(0xC2B2AE35)
    return x ^ (x >> np.uint32(16))


def _step(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    return _mix((x ^ v) + np.uint32(_GOLDEN))


def name_key(model: str, task: str) -> int:
    """A cell's 32-bit name in the draws: FNV-1a of "model NUL task" in UTF-8 (not its place on a board, so a
    subset's board draws the cell's noise as the whole board does)."""
    h = 0x811C9DC5
    for byte in f"{model}\0{task}".encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def uniforms(seed: int, stream: int, key: int, draws: int, slots: int) -> np.ndarray:
    """(draws, slots) numbers in [0, 1): number (d, j) hashes seed, stream, key, d and j (one uint32 / 2**32)."""
    u32 = np.uint32
    x = _step(_step(np.array([seed & 0xFFFFFFFF], dtype=u32), np.array([stream], dtype=u32)), np.array([key], dtype=u32))
    x = _step(x[:, None], np.arange(draws, dtype=u32)[:, None])
    return _step(x, np.arange(slots, dtype=u32)[None, :]).astype(np.float64) / 4294967296.0
