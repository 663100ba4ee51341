"""Label scores and the few-shot draw that classification, zero-shot and the confound probes share:
every registered metric of predicted labels plus AP, mteb's per-label draw and the probe's fit."""

from __future__ import annotations

import warnings
from collections import defaultdict

import numpy as np
from sklearn.exceptions import ConvergenceWarning, UndefinedMetricWarning

from ..core.errors import DataError
from ..metrics.registry import get_metric, metrics_of
from .probe import fitted, linear_probe


def undersample(labels, idxs: list[int] | None, per_label: int, seed: int) -> tuple[list[int], list[int]]:
    """mteb's draw: shuffle the (already shuffled) index list with a fresh RandomState(seed), then
    take the first `per_label` indices of each label in that order."""
    if idxs is None:
        idxs = list(range(len(labels)))
    np.random.RandomState(seed).shuffle(idxs)
    counts: dict = defaultdict(int)
    chosen = []
    for i in idxs:
        if counts[labels[i]] < per_label:
            chosen.append(i)
            counts[labels[i]] += 1
    return chosen, idxs


def label_metrics(y_true, y_pred) -> dict:
    """Every registered metric of predicted labels (maeb.metrics.registry, inputs "labels": accuracy and macro/weighted F1,
    precision and recall built in, and any declared beside them, reported without editing a list), then AP on binary labels
    (sklearn's, warnings for empty classes silenced; they score 0 as in mteb)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        scores = {m.name: m(y_true, y_pred) for m in metrics_of("labels")}
        scores["ap"] = scores["ap_weighted"] = None  # mteb writes null unless the labels are binary
        if len(np.unique(y_true)) == 2:
            scores["ap"], scores["ap_weighted"] = binary_ap(y_true, y_pred)
    return {k: (None if v is None else float(v)) for k, v in scores.items()}


def binary_ap(y_true, y_score) -> tuple[float, float]:
    """Average precision as mteb computes it (sklearn's default pos_label=1 on the raw labels).
    Labels sklearn cannot read that way (strings, {0, 2}), where mteb stops with an error, are
    scored with the larger label as the positive class."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return get_metric("ap")(y_true, y_score), get_metric("ap_weighted")(y_true, y_score)
    except ValueError:
        positive = np.unique(y_true)[1]
        truth = np.asarray(y_true) == positive
        score = np.asarray(y_score) == positive if np.asarray(y_score).dtype.kind in "OUSb" else np.asarray(y_score)
        return get_metric("ap")(truth, score), get_metric("ap_weighted")(truth, score)


def fit_predict(x_train, y_train, x_test, p, probe: str = "mteb") -> np.ndarray:
    """The probe fit on the training sample, its predictions on the test clips."""
    if len(set(y_train)) < 2:
        raise DataError(f"the training sample has a single label ({y_train[0]!r}); a linear probe needs two or more")
    model = linear_probe(p, probe)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x_train, y_train)
    fitted(model)  # counted where an experiment's fit is collected (Convergence.collecting)
    return model.predict(x_test)


def label_metric_names() -> tuple[str, ...]:
    """The label metrics a single-label result holds (classification and zero-shot write the same set): the
    registered metrics of predicted labels, then AP."""
    return (*(m.name for m in metrics_of("labels")), "ap", "ap_weighted")
