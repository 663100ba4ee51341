"""Pair classification (mteb AudioPairClassification), main score max_ap.

Columns audio1, audio2 and a 0/1 label. Each pair is scored by the model's own similarity and by
cosine, manhattan, euclidean and dot; for each score: best accuracy and best F1 over thresholds
(a threshold never splits tied scores) and average precision; max_* is the best over scores."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import DataError
from ..core.taskspec import TaskSpec
from ..data.sources import Table, binary_labels
from ..metrics import ties
from ..metrics.registry import get_metric, tie_aware_of
from ..metrics.similarity import paired_similarity
from .base import Data, Embeddings, Evaluation, Param, TaskState, TaskType, keep_valid


def pair_metrics(
    e1: np.ndarray,
    e2: np.ndarray,
    labels: np.ndarray,
    similarity: str,
    expected: bool = False,
    relative: float = ties.RELATIVE_TOLERANCE,
    ties_out: dict | None = None,
) -> dict:
    """Best accuracy, best F1 (with its precision and recall) and average precision of each pair score (the model's similarity,
    cosine, manhattan, euclidean, dot), and the max of each over the scores. Pairs whose scores tie
    (maeb.metrics.ties, one list of all pairs): with expected, an AP is its expected value over the
    orders of tied pairs (sklearn's where none ties); ties_out receives each score's AP range and
    share of tied pairs."""
    d = np.asarray(e1, np.float64) - np.asarray(e2, np.float64)
    scored = [
        ("similarity", paired_similarity(e1, e2, similarity), True),
        ("cosine", paired_similarity(e1, e2, "cosine"), True),
        ("manhattan", np.abs(d).sum(1), False),
        ("euclidean", np.sqrt((d * d).sum(1)), False),
        ("dot", paired_similarity(e1, e2, "dot"), True),
    ]
    out: dict = {}
    best: dict[str, list[float]] = {}
    for name, scores, higher in scored:
        f1, precision, recall = get_metric("best_threshold_f1")(scores, labels, higher)
        values = {
            "accuracy": get_metric("best_threshold_accuracy")(scores, labels, higher),
            "f1": f1,
            "precision": precision,
            "recall": recall,
            "ap": float(get_metric("ap")(labels, scores * (1 if higher else -1))),
        }
        if expected or ties_out is not None:
            spread = tie_aware_of("ap")(scores * (1 if higher else -1), labels, relative)
            if expected and spread["tied_share"] > 0:
                values["ap"] = spread["expected"]
            if ties_out is not None:
                ties_out[name] = spread
        for metric, value in values.items():
            out[f"{name}_{metric}"] = float(value)
            best.setdefault(metric, []).append(float(value))
    for metric, per_name in best.items():
        out[f"max_{metric}"] = max(per_name)
    return out


class PairClassification(TaskType[Table]):
    """The pair task type (the module's docstring says what it scores and how)."""

    NAME = "pair_classification"
    LABELLED = True
    MAIN_SCORE = "max_ap"
    PARAMS = {
        "audio1_column": Param("audio1", "the column of each pair's first clip"),
        "audio2_column": Param("audio2", "the column of each pair's second clip"),
    }

    def check_labels(self, spec: TaskSpec, values: list, where: str) -> None:
        """A pair table's labels must be 0/1 (checked when loaded; a derived table builds its own)."""
        if not spec.derive:
            binary_labels(values, where)

    def metrics(self, spec: TaskSpec) -> tuple[str, ...]:
        """The metric names a pair classification result holds."""
        kinds = ("accuracy", "f1", "precision", "recall", "ap")
        return tuple(f"{s}_{m}" for s in ("similarity", "cosine", "manhattan", "euclidean", "dot", "max") for m in kinds)

    def clip_columns(self, spec: TaskSpec) -> list[str]:
        """The two clip columns of each pair, beside the data's audio columns."""
        p = spec.protocol
        return list(dict.fromkeys([*spec.data.audio_columns, p["audio1_column"], p["audio2_column"]]))

    def check_columns(self, spec: TaskSpec, table: Any) -> None:
        """Check that a table has the pair columns and the label (a non-table split is left alone)."""
        if hasattr(table, "columns"):
            table.require(
                [spec.protocol["audio1_column"], spec.protocol["audio2_column"], spec.data.label_column], "pair columns"
            )

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split`: embed both columns, then score each pair by every similarity (see pair_metrics)."""
        p = spec.protocol
        table = data[split]
        a1, a2, label = p["audio1_column"], p["audio2_column"], spec.data.label_column
        table.require([a1, a2, label])
        labels = binary_labels(table[label], f"{spec.name} column {label!r}")
        x1, ok1 = emb.audio(table[a1])  # one column, then the other, as mteb encodes them
        x2, ok2 = emb.audio(table[a2])
        e1, e2, y = keep_valid(ok1 & ok2, x1, x2, labels)
        if len(set(y.tolist())) < 2:
            raise DataError(f"{spec.name}: every usable pair has label {int(y[0])}; average precision needs both 0 and 1")
        expected, relative = ties.protocol_ties(getattr(emb, "protocol", None))
        spreads: dict = {}
        scores = pair_metrics(e1, e2, y, emb.similarity, expected, relative, spreads)
        refs = [r for r, k in zip([*table[a1], *table[a2]], np.concatenate([ok1 & ok2, ok1 & ok2])) if k]
        # max_ap is the best AP over the five scores, each over its own tie orders
        main_range = None
        main = spec.main_score or self.MAIN_SCORE  # a parsed spec always names one
        if main == "max_ap":
            main_range = (max(s["low"] for s in spreads.values()), max(s["high"] for s in spreads.values()))
        elif main.endswith("_ap") and main[:-3] in spreads:
            one = spreads[main[:-3]]
            main_range = (one["low"], one["high"])
        tied = spreads["similarity"]["tied_share"]  # of the model's own similarity: all pairs are one list
        record = ties.record(
            ties.distinct_clips(refs, np.concatenate([e1, e2])), len(y), main_range, relative, None, tied, expected=expected
        )
        return Evaluation(scores, ties=record)
