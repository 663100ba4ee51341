"""Clustering (mteb AudioClustering), main score V-measure.

MiniBatchKMeans(k = number of labels, batch_size 512, k-means++, n_init 1, random_state seed), fit
`n_bootstrap` times, each on `max_documents_per_cluster` indices drawn with replacement by the
task-wide random.Random(seed). MAEB embeds every clip (max_fraction_of_documents_to_embed = None);
list-valued labels are hierarchical levels, each scored on its own.

`n_bootstrap` is what mteb calls `n_clusters` (it counts fits, not clusters). Specs may use either
name. The parsed protocol and the run identity keep mteb's `n_clusters`, so identities of results
written before the rename still match; a result's `maeb.parameters` (and TaskResult.parameters,
also for older files) say `n_bootstrap`."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.cluster import MiniBatchKMeans

from ..core.errors import DataError, SpecError
from ..core.taskspec import TaskSpec
from ..metrics import ties
from ..metrics.registry import metrics_of
from .base import Data, Embeddings, Evaluation, Param, TaskState, TaskType, keep_valid, make_params

RECORDED = {"n_bootstrap": "n_clusters"}  # the name spec.protocol and result files keep


def bootstrap_scores(x: np.ndarray, labels: list[list], p: dict, rng) -> dict:
    """V-measure and AMI per label level, as mean and standard deviation over the bootstrap fits (see the module docstring)."""
    metrics = {m.name: m for m in metrics_of("clusters")}  # every registered clustering metric: v_measure, ami, any declared
    depth = max(map(len, labels))
    if p["max_depth"] is not None:
        depth = min(depth, p["max_depth"])
    per_level: dict[str, dict[str, list[float]]] = {m: {} for m in metrics}
    for level in range(depth):
        # a clip without this level, or labelled -1, is left out (mteb's rule; -1 marks "no label")
        y_all = np.array([lab[level] if len(lab) > level else -1 for lab in labels])
        valid = np.array([value != -1 for value in y_all], dtype=bool)
        y, xl = y_all[valid], x[valid]
        if y.size == 0:
            raise DataError(f"level {level}: every clip is labelled -1 (no label); nothing to cluster")
        model = MiniBatchKMeans(
            n_clusters=np.unique(y).size,
            batch_size=p["kmeans_batch_size"],
            init="k-means++",
            n_init=1,
            random_state=p["seed"],
        )
        for _ in range(p["n_clusters"]):  # n_bootstrap, recorded under mteb's name
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


class Clustering(TaskType):
    """The clustering task type (the module's docstring says what it scores and how)."""

    NAME = "clustering"
    LABELLED = True
    MAIN_SCORE = "v_measure"
    PARAMS = {
        "n_bootstrap": Param(10, "k-means fits averaged, each on its own bootstrap draw of the clips", min=1),
        "max_documents_per_cluster": Param(16384, "indices drawn with replacement for each fit", min=1),
        "kmeans_batch_size": Param(512, "MiniBatchKMeans batch size", min=1),
        "max_fraction_of_documents_to_embed": Param(
            None, "embed only this share of the clips (MAEB: all)", kind=(int, float), min=1e-9, max=1
        ),
        "max_documents_to_embed": Param(None, "embed at most this many clips (MAEB: all)", kind=int, min=1),
        "max_depth": Param(None, "hierarchical labels: score this many levels", kind=int, min=1),
        "seed": Param(42, "seed of the draws and of k-means", min=0, max=2**32 - 1),
    }
    ALIASES = {"n_clusters": "n_bootstrap"}  # old name (mteb's) -> name; specs may use either

    def params(self, raw: dict, where: str) -> dict:
        """A spec's [protocol] merged over self.PARAMS, with the old names accepted (giving a parameter
        under both names is an error naming both). The merged protocol keeps mteb's key n_clusters,
        which result identities and files record."""
        raw = dict(raw)
        for old, new in self.ALIASES.items():
            if old in raw and new in raw:
                raise SpecError(f"{where}: {new} and {old} are the same parameter ({old} is its old name); give only {new}")
            if old in raw:
                value = raw.pop(old)
                raw[new] = self.PARAMS[new].check(old, value, where)  # errors name the field as written
        merged = make_params(self.PARAMS, raw, where)
        return {RECORDED.get(k, k): v for k, v in merged.items()}

    def metrics(self, spec: TaskSpec) -> tuple[str, ...]:
        """The metric names a clustering result holds."""
        return tuple(n for m in metrics_of("clusters") for n in (m.name, f"{m.name}_std"))

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split`: embed every clip, then fit and score the bootstrap clusterings."""
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
        refs = [r for r, k in zip((table[audio][i] for i in rows), ok) if k]
        x, labels = keep_valid(ok, x, labels)
        # k-means has no order of tied items: the record counts clips sharing a vector, and no range
        expected, relative = ties.protocol_ties(getattr(emb, "protocol", None))
        record = ties.record(ties.distinct_clips(refs, x), len(x), None, relative, expected=expected)
        return Evaluation(bootstrap_scores(x, labels, p, state.rng), ties=record)
