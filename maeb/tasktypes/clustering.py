"""Clustering (mteb AudioClustering), main score V-measure.

MiniBatchKMeans(k = number of labels, batch_size 512, k-means++, n_init 1, random_state seed), fit
`n_clusters` times, each on `max_documents_per_cluster` indices drawn with replacement by the
task-wide random.Random(seed). MAEB embeds every clip (max_fraction_of_documents_to_embed = None);
list-valued labels are hierarchical levels, each scored on its own."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.cluster import MiniBatchKMeans
from sklearn.metrics.cluster import adjusted_mutual_info_score, v_measure_score

from . import keep_valid

NAME = "clustering"
MAIN_SCORE = "v_measure"
PARAMS = {
    "n_clusters": 10,
    "max_documents_per_cluster": 16384,
    "kmeans_batch_size": 512,
    "max_fraction_of_documents_to_embed": None,
    "max_documents_to_embed": None,
    "max_depth": None,
    "seed": 42,
}


def splits(spec) -> list[str]:
    return list(spec.data.eval_splits)


def needs(spec) -> set[str]:
    return {"audio"}


def bootstrap_scores(x: np.ndarray, labels: list[list], p: dict, rng) -> dict:
    metrics = {"v_measure": v_measure_score, "ami": adjusted_mutual_info_score}
    depth = max(map(len, labels))
    if p["max_depth"] is not None:
        depth = min(depth, p["max_depth"])
    per_level: dict[str, dict[str, list[float]]] = {m: {} for m in metrics}
    for level in range(depth):
        valid = np.array([len(lab) > level for lab in labels])
        y = np.array([lab[level] for lab in labels if len(lab) > level])
        xl = x[valid]
        model = MiniBatchKMeans(
            n_clusters=np.unique(y).size,
            batch_size=p["kmeans_batch_size"],
            init="k-means++",
            n_init=1,
            random_state=p["seed"],
        )
        for _ in range(p["n_clusters"]):
            idx = rng.choices(range(len(xl)), k=p["max_documents_per_cluster"])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assigned = model.fit_predict(xl[idx])
            for name, fn in metrics.items():
                per_level[name].setdefault(f"Level {level}", []).append(float(fn(y[idx], assigned)))
    out: dict = {}
    for name, levels in per_level.items():
        flat = [v for values in levels.values() for v in values]
        out["v_measures" if name == "v_measure" else f"{name}_scores"] = levels
        out[name] = float(np.mean(flat))
        out[f"{name}_std"] = float(np.std(flat))
    return out


def evaluate(data, split, emb, spec, state) -> dict:
    p = spec.protocol
    table = data[split]
    audio, label = spec.data.audio_column, spec.data.label_column
    table.require([audio, label])
    rows = list(range(len(table)))
    limit = None
    if p["max_fraction_of_documents_to_embed"] is not None:
        limit = int(p["max_fraction_of_documents_to_embed"] * len(table))
    elif p["max_documents_to_embed"] is not None:
        limit = p["max_documents_to_embed"]
    if limit is not None:
        rows = state.rng.sample(range(len(table)), k=min(len(table), limit))
    x, ok = emb.audio([table[audio][i] for i in rows])
    labels = [v if isinstance(v, list) else [v] for v in (table[label][i] for i in rows)]
    x, labels = keep_valid(ok, x, labels)
    return bootstrap_scores(x, labels, p, state.rng)
