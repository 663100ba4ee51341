"""Similarity functions by the names mteb's ModelMeta uses (cosine, dot, euclidean)."""

from __future__ import annotations

import numpy as np

KINDS = ("cosine", "dot", "euclidean")


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def prepared(a: np.ndarray, kind: str = "cosine"):
    """A float32 tensor ready for `scores`: for cosine, F.normalize's unit rows as mteb's cos_sim
    makes them. Normalising is row by row, so doing it once for a whole set gives the same bits
    as doing it per block and saves redoing it for every block of a blocked search."""
    import torch

    if kind not in KINDS:
        raise ValueError(f"unknown similarity {kind!r}; use cosine, dot or euclidean")
    x = torch.as_tensor(np.asarray(a, dtype=np.float32))
    return torch.nn.functional.normalize(x, p=2, dim=1) if kind == "cosine" else x


def scores(x, y, kind: str = "cosine"):
    """(len(x), len(y)) tensor of scores between `prepared` sets: the matrix product (cosine,
    dot) or minus torch.cdist (euclidean), as mteb computes them."""
    import torch

    if kind == "euclidean":
        return -torch.cdist(x, y, p=2.0)
    return x @ y.T


def similarity_matrix(a: np.ndarray, b: np.ndarray, kind: str = "cosine") -> np.ndarray:
    """(len(a), len(b)) scores, higher is more similar, computed as mteb computes them (torch,
    float32: F.normalize then a matrix product; the product; minus torch.cdist), so scores agree
    to the bit and rankings break ties and order confidences the same way."""
    return scores(prepared(a, kind), prepared(b, kind), kind).numpy()


def row_blocks(n_rows: int, row_bytes: int, budget_bytes: int, min_rows: int = 64) -> list[tuple[int, int]]:
    """(start, stop) row blocks of near-equal sizes, each within budget_bytes at row_bytes a row
    (but at least min_rows rows). Why not fixed-size blocks: MKL's sgemm takes another kernel for
    a product of few rows (1-11 rows here, AVX-512, measured), whose sums round differently from the
    same rows inside a taller product, so a short last block would change scores in the last bit.
    Equal blocks of at least min_rows // 2 rows stay on the tall-product kernel (and past
    torch.cdist's 25-row switch to its matrix-product form); a set within the budget is one block,
    the very product mteb computes."""
    if n_rows <= 0:
        return []
    cap = max(min_rows, budget_bytes // max(row_bytes, 1))
    count = -(-n_rows // cap)
    base, extra = divmod(n_rows, count)
    bounds, start = [], 0
    for i in range(count):
        stop = start + base + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


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
