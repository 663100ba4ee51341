"""The metrics the built-in task types compute, declared in the registry (maeb.metrics.registry) by
the names their results use. Each is the very call the type made before the registry existed, so no
score moved; the type keeps what it does around the call (warnings silenced, float(), ties).

Oracles: sklearn.metrics for the label, ranking and clustering scores (tests/test_metric_registry.py
compares each with sklearn's own call; the classification types' results are compared with mteb's
in tests/parity/test_e2e.py), the mecat package for BLEU (tests/test_generative.py), mteb's own
evaluators for the pair thresholds and multilabel's hamming (tests/test_parity_mteb.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn import metrics as skm

from .registry import metric
from .textmetrics import corpus_bleu


@metric("accuracy", oracle="sklearn.metrics.accuracy_score")
def accuracy(y_true: Any, y_pred: Any) -> float:
    """The share of predicted labels equal to the true ones."""
    return skm.accuracy_score(y_true, y_pred)


@metric("f1", oracle="sklearn.metrics.f1_score (average='macro')")
def f1(y_true: Any, y_pred: Any) -> float:
    """F1 per class (or label of a multilabel matrix), averaged over classes."""
    return skm.f1_score(y_true, y_pred, average="macro")


@metric("f1_weighted", oracle="sklearn.metrics.f1_score (average='weighted')")
def f1_weighted(y_true: Any, y_pred: Any) -> float:
    """F1 per class, averaged with each class weighted by its true count."""
    return skm.f1_score(y_true, y_pred, average="weighted")


@metric("precision", oracle="sklearn.metrics.precision_score (average='macro')")
def precision(y_true: Any, y_pred: Any) -> float:
    """Precision per class, averaged over classes."""
    return skm.precision_score(y_true, y_pred, average="macro")


@metric("precision_weighted", oracle="sklearn.metrics.precision_score (average='weighted')")
def precision_weighted(y_true: Any, y_pred: Any) -> float:
    """Precision per class, weighted by each class's true count."""
    return skm.precision_score(y_true, y_pred, average="weighted")


@metric("recall", oracle="sklearn.metrics.recall_score (average='macro')")
def recall(y_true: Any, y_pred: Any) -> float:
    """Recall per class, averaged over classes."""
    return skm.recall_score(y_true, y_pred, average="macro")


@metric("recall_weighted", oracle="sklearn.metrics.recall_score (average='weighted')")
def recall_weighted(y_true: Any, y_pred: Any) -> float:
    """Recall per class, weighted by each class's true count."""
    return skm.recall_score(y_true, y_pred, average="weighted")


@metric("ap", oracle="sklearn.metrics.average_precision_score (average='macro')")
def ap(y_true: Any, y_score: Any) -> float:
    """Average precision of scores against binary labels (sklearn's pos_label=1)."""
    return skm.average_precision_score(y_true, y_score, average="macro")


@metric("ap_weighted", oracle="sklearn.metrics.average_precision_score (average='weighted')")
def ap_weighted(y_true: Any, y_score: Any) -> float:
    """Average precision with classes weighted by their true count (equal to ap for binary labels)."""
    return skm.average_precision_score(y_true, y_score, average="weighted")


@metric("lrap", oracle="sklearn.metrics.label_ranking_average_precision_score")
def lrap(y_true: Any, y_score: Any) -> float:
    """Label ranking average precision of per-label scores against a binary label matrix."""
    return skm.label_ranking_average_precision_score(y_true, y_score)


@metric("v_measure", oracle="sklearn.metrics.cluster.v_measure_score")
def v_measure(labels_true: Any, labels_pred: Any) -> float:
    """The harmonic mean of a clustering's homogeneity and completeness."""
    return skm.cluster.v_measure_score(labels_true, labels_pred)


@metric("ami", oracle="sklearn.metrics.cluster.adjusted_mutual_info_score")
def ami(labels_true: Any, labels_pred: Any) -> float:
    """Mutual information of a clustering and the labels, adjusted for chance."""
    return skm.cluster.adjusted_mutual_info_score(labels_true, labels_pred)


@metric("bleu", oracle="mecat (its BLEU scorer; tests/test_generative.py)")
def bleu(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """BLEU-1 to BLEU-4 of a corpus as MECAT computes them (Bleu_1 .. Bleu_4)."""
    return corpus_bleu(candidates, references)


@metric("best_threshold_accuracy", oracle="mteb's pair classification evaluator (tests/test_parity_mteb.py)")
def best_threshold_accuracy(scores: np.ndarray, labels: np.ndarray, higher_similar: bool) -> float:
    """The best accuracy of a threshold on `scores` (a threshold never splits tied scores), as mteb computes it."""
    order = sorted(zip(scores.tolist(), labels.tolist()), key=lambda r: r[0], reverse=higher_similar)
    best, positives, negatives_left = 0.0, 0, int((labels == 0).sum())
    for i in range(len(order) - 1):
        score, label = order[i]
        if label == 1:
            positives += 1
        else:
            negatives_left -= 1
        if score == order[i + 1][0]:
            continue
        best = max(best, (positives + negatives_left) / len(labels))
    return best


@metric("best_threshold_f1", oracle="mteb's pair classification evaluator (tests/test_parity_mteb.py)")
def best_threshold_f1(scores: np.ndarray, labels: np.ndarray, higher_similar: bool) -> tuple[float, float, float]:
    """The best F1 of a threshold on `scores` and its precision and recall (a threshold never splits tied scores)."""
    order = sorted(zip(scores.tolist(), labels.tolist()), key=lambda r: r[0], reverse=higher_similar)
    best = (0.0, 0.0, 0.0)
    correct, relevant = 0, int(labels.sum())
    for i, (score, label) in enumerate(order[:-1]):
        correct += label == 1
        if score == order[i + 1][0] or correct == 0:
            continue
        precision, recall = correct / (i + 1), correct / relevant
        f1 = 2 * precision * recall / (precision + recall)
        if f1 > best[0]:
            best = (f1, precision, recall)
    return best


@metric("hamming", oracle="mteb's multilabel classification evaluator (tests/test_parity_mteb.py)")
def hamming(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Per-row intersection over union of label sets; two empty sets agree fully."""
    t, p = y_true.astype(bool), y_pred.astype(bool)
    union = (t | p).sum(axis=1)
    inter = (t & p).sum(axis=1)
    return float(np.where(union == 0, 1.0, inter / np.maximum(union, 1)).mean())
