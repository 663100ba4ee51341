"""Confound probes (classification's `[protocol] nuisance_columns`): how much of a task's score a
nuisance column (speaker, recording session, device) explains.

For each nuisance column, over the pool of embedded clips (the evaluated split under
cross-validation, else the evaluated split and the drawn training clips), with the task's own
probe and few-shot draw (samples_per_label per class, seeded):
- `nuisance`: the probe trained to predict the nuisance value from the embeddings, scored by
  accuracy of out-of-fold predictions against its chance (1 / values) and majority share;
- `shared`: the main score of out-of-fold predictions under KFold (train and test share nuisance
  values, as the task's own split usually does);
- `leave_group_out`: the same under GroupKFold by the nuisance value, so train and test share no
  value: what the embeddings say about the label beyond the nuisance;
- `within`: the main score within each fixed nuisance value (KFold inside that value's clips; null
  where the value holds one label or too few clips to fit a probe), for up to MAX_WITHIN values.
Rule: the run warns when shared - leave_group_out >= DROP (in the main score's units): the score
rests on recognising nuisance values seen in training. Only on enough evidence: with fewer than
MIN_VALUES values, leave-group-out trains on one or two values and tests on another, so a drop
measures the shift between those few (TESS: 2 speakers, emotion easy within each), and with fewer
than MIN_CLIPS clips in a value its held-out folds are a handful of clips; then the line is logged,
marked weak evidence, not warned. The line states the values and clips per value it rests on. The
main score itself is not changed."""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import GroupKFold, KFold

from ..core.errors import DataError
from ..metrics.registry import get_metric
from .labels import fit_predict, label_metrics, undersample

DROP = 0.10  # main-score loss without shared nuisance values at or above which the run warns
FOLDS = 5  # folds of both out-of-fold scores (fewer when the column has fewer values)
MAX_WITHIN = 20  # nuisance values up to which the score within each value is computed (each is its own fits)
MIN_VALUES = 3  # nuisance values a warning needs (two: leave-group-out is one value against the other)
MIN_CLIPS = 5  # clips the smallest value must hold in the pool for a warning


def _out_of_fold(x, y, folds, p, probe: str) -> np.ndarray | None:
    """Each clip's prediction by a probe fit on the other folds' few-shot draw; None when a fold's
    training part holds a single label (no probe can be fit)."""
    pred = np.empty(len(y), dtype=object)
    for train_idx, test_idx in folds:
        chosen, _ = undersample(y[train_idx], None, p["samples_per_label"], p["seed"])
        if len(set(y[train_idx][chosen].tolist())) < 2:
            return None
        pred[test_idx] = fit_predict(x[train_idx][chosen], y[train_idx][chosen], x[test_idx], p, probe)
    return pred


def _accuracy_chance(counts) -> float:
    """Chance accuracy of guessing the nuisance value, from the accuracy record (a uniform guess: 1 / values)."""
    chance = get_metric("accuracy").chance
    assert chance is not None  # accuracy's record declares its closed form
    return float(chance(counts))


def _score(y, pred, metric: str) -> float | None:
    if pred is None:
        return None
    value = label_metrics(y.astype(str), pred.astype(str)).get(metric)
    return None if value is None else round(float(value), 6)


def probe_column(x: np.ndarray, y: np.ndarray, g: np.ndarray, column: str, p: dict, metric: str, probe: str) -> dict:
    """The confound record of one nuisance column (values g per clip) for labels y."""
    values, counts = np.unique(g, return_counts=True)
    out: dict = {"column": column, "values": int(len(values)), "clips": int(len(y)), "metric": metric}
    out["clips_per_value"] = {"fewest": int(counts.min()), "most": int(counts.max())}
    if len(values) < 2:
        return {**out, "skipped": f"the column {column!r} holds a single value ({values[0]!r}) in the pool"}
    n = min(FOLDS, len(y))
    shuffled = list(KFold(n_splits=n, shuffle=True, random_state=p["seed"]).split(x))
    grouped = list(GroupKFold(n_splits=min(FOLDS, len(values))).split(x, y, g))
    nuisance_pred = _out_of_fold(x, g, shuffled, p, probe)
    out["nuisance"] = {
        "accuracy": None if nuisance_pred is None else round(float(np.mean(nuisance_pred == g)), 6),
        "chance": round(_accuracy_chance(counts), 6),
        "majority": round(float(counts.max() / counts.sum()), 6),
    }
    out["shared"] = _score(y, _out_of_fold(x, y, shuffled, p, probe), metric)
    out["leave_group_out"] = _score(y, _out_of_fold(x, y, grouped, p, probe), metric)
    if len(values) <= MAX_WITHIN:
        out["within"] = {str(v): _within(x[g == v], y[g == v], p, metric, probe) for v in values}
    if out["shared"] is not None and out["leave_group_out"] is not None:
        out["drop"] = round(out["shared"] - out["leave_group_out"], 6)
        out["weak"] = _weak(len(values), int(counts.min()))
        out["warn"] = out["drop"] >= DROP and not out["weak"]
    return out


def _weak(values: int, fewest: int) -> str:
    """Why a column's drop is weak evidence of a confound ('' when it is not)."""
    if values < MIN_VALUES:
        return f"only {values} values (a warning needs {MIN_VALUES}): leaving one out measures the shift between them"
    if fewest < MIN_CLIPS:
        return f"a value holds only {fewest} clips (a warning needs {MIN_CLIPS} in each)"
    return ""


def _within(x, y, p, metric: str, probe: str) -> float | None:
    """The out-of-fold main score inside one nuisance value's clips; None with one label or under two clips."""
    if len(set(y.tolist())) < 2 or len(y) < 2:
        return None
    folds = list(KFold(n_splits=min(FOLDS, len(y)), shuffle=True, random_state=p["seed"]).split(x))
    return _score(y, _out_of_fold(x, y, folds, p, probe), metric)


def nuisance_values(table, columns: list[str], where: str) -> dict[str, np.ndarray]:
    """Each nuisance column's values as strings; a blank value fails naming the column and row."""
    table.require(columns, "protocol.nuisance_columns")
    out = {}
    for column in columns:
        values = table[column]
        for i, v in enumerate(values):
            if v is None or str(v).strip() == "":
                raise DataError(f"{where}: nuisance column {column!r} is blank at row {i}; every clip needs a value")
        out[column] = np.array([str(v) for v in values], dtype=object)
    return out


def message(task: str, record: dict) -> str:
    """The run's one line on a column: the evidence (values, clips per value), its scores, and what
    the drop measured; the warning's words when its drop reaches DROP on enough evidence."""
    n = record["nuisance"]
    column = record["column"]
    per = record.get("clips_per_value") or {}
    clips = f", {per['fewest']} to {per['most']} clips each" if per else ""
    probe = "no probe (one value per fold)" if n["accuracy"] is None else f"{n['accuracy']:.3f}"
    text = (
        f"task {task}: nuisance {column!r} ({record['values']} values{clips}): predicted from the embeddings at "
        f"{probe} accuracy (chance {n['chance']:.3f}, majority {n['majority']:.3f}); {record['metric']} "
        f"{_shown(record['shared'])} when train and test share {column} values, "
        f"{_shown(record['leave_group_out'])} when they share none"
    )
    within = [v for v in (record.get("within") or {}).values() if v is not None]
    if within:
        text += f", {float(np.mean(within)):.3f} on average within one value ({len(within)} values scored)"
    drop = record.get("drop")
    if drop is not None and drop >= DROP:
        measured = f": the score drops by {drop:.3f} (>= {DROP}) without shared {column} values"
        if record.get("weak"):
            text += f"{measured}; weak evidence, no warning: {record['weak']}"
        else:
            text += f"{measured}, so it rests on recognising {column} values seen in training"
            if within:
                text += " (within one value the label is still scored as above)"
    return text


def _shown(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def run(emb, x, y, nuisance: dict[str, np.ndarray], p: dict, metric: str, probe: str) -> list[dict]:
    """The confound records of every nuisance column, each printed (a warning when its drop is large)."""
    records = []
    # a typed array (int or str), not one of objects: sklearn cannot tell the type of an object
    # array of ints (the integer labels of FSDD's digits) and refuses it as "unknown"
    labels = np.asarray(np.asarray(y, dtype=object).tolist())
    for column, g in nuisance.items():
        record = probe_column(np.asarray(x), labels, g, column, p, metric, probe)
        records.append(record)
        if "skipped" in record:
            emb.log(f"task {emb.context}: nuisance {column!r} skipped: {record['skipped']}")
        elif record.get("warn"):
            emb.warn(message(emb.context, record))
        else:
            emb.log(message(emb.context, record))
    return records
