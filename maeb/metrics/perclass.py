"""Per-class results of the classification probes, kept in each score entry as `per_class`.

Single-label (classification, zero-shot): each class's precision, recall, F1 and support, and the
confusion matrix (rows: true class, columns: predicted class, in `labels` order), per experiment
and then averaged over experiments as mteb averages a task's scores (a plain mean; a confusion
matrix averaged over experiments holds fractional counts). Multilabel: each label's F1 and
average precision (AP of the probe's probabilities; None for a label with no positive clip in the
evaluated split, where AP is undefined).

Size: per-class lists are kept for every class (rounded to ROUND places); the confusion matrix only
up to MAX_CONFUSION classes (a 527-class task would write 277,729 numbers), above it
`confusion_matrix` is null and `confusion_omitted` says why. mteb's TaskResult reads an entry
holding this block unchanged (tests/parity)."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import average_precision_score, confusion_matrix, f1_score, precision_recall_fscore_support

MAX_CONFUSION = 50  # classes up to which the confusion matrix is written (50 x 50 = 2,500 numbers)
ROUND = 6  # places, as result files round scores


def classes(values) -> list:
    """The distinct labels in order: natural order where they compare (1, 2, 10), else as text."""
    distinct = {plain(v) for v in values}
    try:
        return sorted(distinct)
    except TypeError:
        return sorted(distinct, key=str)


def single_label(y_true, y_pred, labels=None) -> dict:
    """One experiment's per-class block: labels (all classes of truth and prediction unless
    given, sorted), precision, recall, f1, support and the confusion matrix (counts). A class never
    predicted has precision 0, one never true recall 0 (sklearn's zero_division=0, as mteb scores)."""
    if labels is None:
        labels = classes(np.asarray(y_true).tolist() + np.asarray(y_pred).tolist())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        p, r, f, s = precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=0)
    out = {
        "labels": [plain(v) for v in labels],
        "precision": p.tolist(),
        "recall": r.tolist(),
        "f1": f.tolist(),
        "support": s.tolist(),
    }
    out["confusion_matrix"] = confusion_matrix(y_true, y_pred, labels=labels).tolist() if len(labels) <= MAX_CONFUSION else None
    return out


def multilabel(y_true: np.ndarray, y_pred: np.ndarray, proba: np.ndarray, labels) -> dict:
    """One experiment's per-label block (binary indicator matrices, columns in `labels` order):
    f1 of the thresholded predictions, ap of the probabilities, and each label's positive count."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (UndefinedMetricWarning, UserWarning))
        f1 = f1_score(y_true, y_pred, average=None, zero_division=0)
        ap = [
            float(average_precision_score(y_true[:, j], proba[:, j])) if y_true[:, j].any() else None
            for j in range(y_true.shape[1])
        ]
    return {
        "labels": [plain(v) for v in labels],
        "f1": np.asarray(f1, dtype=float).tolist(),
        "ap": ap,
        "support": y_true.sum(axis=0).astype(int).tolist(),
    }


def mean_blocks(blocks: list[dict]) -> dict:
    """The experiments' blocks averaged element by element (None where an experiment has none is
    left out of that element's mean, None when no experiment has it), rounded; the labels must agree."""
    first = blocks[0]
    for b in blocks[1:]:
        if b["labels"] != first["labels"]:
            raise ValueError(f"per-class blocks disagree on their labels: {first['labels'][:5]} vs {b['labels'][:5]}")
    out: dict = {"labels": first["labels"]}
    for key in first:
        if key == "labels":
            continue
        if first[key] is None:
            out[key] = None
            continue
        out[key] = _mean_nested([b[key] for b in blocks])
    if "confusion_matrix" in out and out["confusion_matrix"] is None:
        out["confusion_omitted"] = f"{len(first['labels'])} classes, more than {MAX_CONFUSION}: no confusion matrix written"
    out["experiments"] = len(blocks)
    return out


def _mean_nested(values: list):
    """Mean over the first axis of equally shaped nested lists, None-aware, rounded."""
    if isinstance(values[0], list):
        return [_mean_nested([v[i] for v in values]) for i in range(len(values[0]))]
    present = [float(v) for v in values if v is not None]
    return round(float(np.mean(present)), ROUND) if present else None


def plain(value):
    """A label as JSON writes it (numpy scalars to Python's)."""
    return value.item() if isinstance(value, np.generic) else value
