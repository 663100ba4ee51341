"""Reranking (mteb AudioReranking): each query has its own candidate list (13-25 in MAEB); only
the candidates are scored and ordered. Same metrics as retrieval; main score map_at_1000, the mean
average precision over the whole candidate list."""

from __future__ import annotations

from ..core.errors import DataError
from ..core.taskspec import TaskSpec
from .base import Data, Embeddings, Evaluation, TaskState
from .retrieval import Retrieval


class Reranking(Retrieval):
    """Retrieval over each query's own candidates: retrieval's parameters and metrics, its own main score."""

    NAME = "reranking"
    MAIN_SCORE = "map_at_1000"
    PARAMS = dict(Retrieval.PARAMS)

    def needs(self, spec: TaskSpec) -> set[str]:
        """The sides of the model the type uses: audio, and text for text-to-audio or audio-to-text tasks."""
        return {"audio", "text"} if spec.category in ("t2a", "a2t") else {"audio"}

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split` as retrieval over each query's own candidates (DataError when the split has none)."""
        if getattr(data[split], "candidates", None) is None:
            raise DataError(f"{spec.name}: reranking needs candidate lists (a top_ranked config or [derive] kind = 'rerank')")
        return super().evaluate(data, split, emb, spec, state)
