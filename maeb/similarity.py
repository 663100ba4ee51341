"""Similarity functions by the names mteb's ModelMeta uses (cosine, dot, euclidean)."""

from __future__ import annotations

import numpy as np


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def similarity_matrix(a: np.ndarray, b: np.ndarray, kind: str = "cosine") -> np.ndarray:
    """(len(a), len(b)) scores, higher is more similar, computed as mteb computes them (torch,
    float32: F.normalize then a matrix product; the product; minus torch.cdist), so scores agree
    to the bit and rankings break ties and order confidences the same way."""
    import torch

    x = torch.as_tensor(np.asarray(a, dtype=np.float32))
    y = torch.as_tensor(np.asarray(b, dtype=np.float32))
    if kind == "cosine":
        out = torch.nn.functional.normalize(x, p=2, dim=1) @ torch.nn.functional.normalize(y, p=2, dim=1).T
    elif kind == "dot":
        out = x @ y.T
    elif kind == "euclidean":
        out = -torch.cdist(x, y, p=2.0)
    else:
        raise ValueError(f"unknown similarity {kind!r}; use cosine, dot or euclidean")
    return out.numpy()


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
