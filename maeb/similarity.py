"""Similarity functions by the names mteb's ModelMeta uses (cosine, dot, euclidean)."""

from __future__ import annotations

import numpy as np


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def similarity_matrix(a: np.ndarray, b: np.ndarray, kind: str = "cosine") -> np.ndarray:
    """(len(a), len(b)) scores, higher is more similar."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    if kind == "cosine":
        return _unit(a) @ _unit(b).T
    if kind == "dot":
        return a @ b.T
    if kind == "euclidean":
        sq = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
        return -np.sqrt(np.maximum(sq, 0.0))
    raise ValueError(f"unknown similarity {kind!r}; use cosine, dot or euclidean")


def paired_similarity(a: np.ndarray, b: np.ndarray, kind: str = "cosine") -> np.ndarray:
    """Row-wise scores for aligned pairs."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if kind == "cosine":
        return (_unit(a) * _unit(b)).sum(1)
    if kind == "dot":
        return (a * b).sum(1)
    if kind == "euclidean":
        return -np.linalg.norm(a - b, axis=1)
    raise ValueError(f"unknown similarity {kind!r}; use cosine, dot or euclidean")
