"""Reranking (mteb AudioReranking): each query has its own candidate list (13-25 in MAEB); only
the candidates are scored and ordered. Same metrics as retrieval; main score map_at_1000, the mean
average precision over the whole candidate list."""

from __future__ import annotations

from ..core.errors import DataError
from . import Evaluation, retrieval

NAME = "reranking"
MAIN_SCORE = "map_at_1000"
PARAMS = dict(retrieval.PARAMS)


metrics = retrieval.metrics


def needs(spec) -> set[str]:
    """The sides of the model the type uses: audio, and text for text-to-audio or audio-to-text tasks."""
    return {"audio", "text"} if spec.category in ("t2a", "a2t") else {"audio"}


def evaluate(data, split, emb, spec, state) -> Evaluation:
    """Score split `split` as retrieval over each query's own candidates (DataError when the split has none)."""
    if getattr(data[split], "candidates", None) is None:
        raise DataError(f"{spec.name}: reranking needs candidate lists (a top_ranked config or [derive] kind = 'rerank')")
    return retrieval.evaluate(data, split, emb, spec, state)
