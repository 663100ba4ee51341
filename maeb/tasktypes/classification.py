"""Few-shot linear probe (mteb AudioClassification).

LogisticRegression(max_iter=100, random_state=seed) on `samples_per_label` clips per label, drawn
by a seeded shuffle that is re-applied to the same index list for each experiment. With a separate
train split: 10 experiments, all scored on the eval split. When the eval split is the train split
(cross-validation): KFold(5, shuffle, seed), each training fold still cut to 8 per label."""

from __future__ import annotations

import warnings
from collections import defaultdict

import numpy as np
from sklearn.exceptions import ConvergenceWarning, UndefinedMetricWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, average_precision_score, f1_score, precision_score, recall_score
from sklearn.model_selection import KFold

from ..errors import DataError
from . import keep_valid

NAME = "classification"
MAIN_SCORE = "accuracy"
PARAMS = {
    "samples_per_label": 8,
    "n_experiments": 10,
    "cross_validation": False,
    "n_splits": 5,
    "max_iter": 100,
    "seed": 42,
}


def splits(spec) -> list[str]:
    extra = [] if spec.protocol["cross_validation"] else [spec.data.train_split]
    return list(dict.fromkeys(spec.data.eval_splits + extra))


def needs(spec) -> set[str]:
    return {"audio"}


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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        scores = {
            "accuracy": accuracy_score(y_true, y_pred),
            "f1": f1_score(y_true, y_pred, average="macro"),
            "f1_weighted": f1_score(y_true, y_pred, average="weighted"),
            "precision": precision_score(y_true, y_pred, average="macro"),
            "precision_weighted": precision_score(y_true, y_pred, average="weighted"),
            "recall": recall_score(y_true, y_pred, average="macro"),
            "recall_weighted": recall_score(y_true, y_pred, average="weighted"),
        }
        classes = np.unique(y_true)
        if len(classes) == 2:
            # hard predictions scored as mteb scores them; the larger label is the positive class
            # (mteb's case of 0/1 labels), which also works for string labels
            truth, guess = (np.asarray(y_true) == classes[1]), (np.asarray(y_pred) == classes[1])
            scores["ap"] = average_precision_score(truth, guess, average="macro")
            scores["ap_weighted"] = average_precision_score(truth, guess, average="weighted")
    return {k: float(v) for k, v in scores.items()}


def mean_scores(per_experiment: list[dict]) -> dict:
    """Mean over experiments; a metric only some experiments have (ap, on folds whose eval part
    holds two labels) is averaged over those, as mteb does."""
    keys = dict.fromkeys(k for s in per_experiment for k in s)
    out = {k: float(np.mean([s[k] for s in per_experiment if k in s])) for k in keys}
    out["scores_per_experiment"] = per_experiment
    return out


def _fit_predict(x_train, y_train, x_test, p) -> np.ndarray:
    if len(set(y_train)) < 2:
        raise DataError(f"the training sample has a single label ({y_train[0]!r}); a linear probe needs two or more")
    model = LogisticRegression(max_iter=p["max_iter"], random_state=p["seed"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x_train, y_train)
    return model.predict(x_test)


def _encode_labels(values: list) -> np.ndarray:
    try:
        return np.asarray(values)
    except ValueError as exc:
        raise DataError(f"labels cannot form an array: {exc}") from exc


def evaluate(data, split, emb, spec, state) -> dict:
    p = spec.protocol
    audio, label = spec.data.audio_column, spec.data.label_column
    table = data[split]
    table.require([audio], "audio")
    table.require([label], "label")
    if p["cross_validation"]:
        x, ok = emb.audio(table[audio])
        x, y = keep_valid(ok, x, _encode_labels(table[label]))
        folds = KFold(n_splits=p["n_splits"], shuffle=True, random_state=p["seed"])
        results, idxs = [], None
        for train_idx, test_idx in emb.progress(list(folds.split(np.arange(len(y)))), "folds"):
            chosen, idxs = undersample(y[train_idx], idxs, p["samples_per_label"], p["seed"])
            pred = _fit_predict(x[train_idx][chosen], y[train_idx][chosen], x[test_idx], p)
            results.append(label_metrics(y[test_idx], pred))
        return mean_scores(results)

    train = data[spec.data.train_split]
    train.require([audio, label], "train split")
    x_test, ok = emb.audio(table[audio])
    x_test, y_test = keep_valid(ok, x_test, _encode_labels(table[label]))
    while True:  # re-draw if a drawn training clip turns out undecodable (skip mode only)
        y_train = _encode_labels(train[label])
        draws, idxs = [], None
        for _ in range(p["n_experiments"]):
            chosen, idxs = undersample(y_train, idxs, p["samples_per_label"], p["seed"])
            draws.append(chosen)
        union = sorted(set().union(*draws))
        x_union, ok = emb.audio([train[audio][i] for i in union])
        if ok.all():
            break
        bad = {union[j] for j in np.flatnonzero(~ok)}
        train = train.where([i not in bad for i in range(len(train))])
    position = {row: j for j, row in enumerate(union)}
    results = []
    for chosen in emb.progress(draws, "experiments"):
        rows = [position[i] for i in chosen]
        pred = _fit_predict(x_union[rows], y_train[chosen], x_test, p)
        results.append(label_metrics(y_test, pred))
    return mean_scores(results)
