"""The chance level and the majority-class score of a task's main score, from its labels alone (the
`maeb.baselines` record of a result): what a score must clear before it says anything.

Per type, on the evaluated split (each value the main score's own metric):
- classification, zeroshot: chance = uniformly random predictions over the split's classes (for
  accuracy exactly 1/K; other metrics over at most DRAWS draws, fewer on large splits);
  majority = always the class most frequent in the training split (cross-validation and zero-shot:
  in the evaluated split itself);
- multilabel: chance = uniformly random label scores; majority = every clip scored with the
  training split's label frequencies;
- clustering: chance = uniformly random cluster ids, as many clusters as classes; majority = one
  cluster for all;
- pair classification: chance = random pair scores; majority = one score for every pair (AP is then
  the share of positive pairs);
- retrieval, reranking: chance = random document (or candidate) orders; majority = documents ordered
  by how many queries judge them relevant (a popularity prior; ties in random order); a query's own
  id is left out of its pool when the protocol ignores identical ids, as the evaluator does. The
  skip_first_result correction is not imitated (a random first result is not the query itself).
Random baselines are the mean over DRAWS seeded draws (a metric at k ranks only k documents: a random
order's top k is a random sample of the pool); a retrieval task too large for WORK_LIMIT is
scored on a seeded sample of its queries (`queries` says how many). Other types get no record."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np

from ..data.sources import RetrievalData, Table

DRAWS = 20  # random draws averaged: the chance level's Monte Carlo error is well under a point
WORK_LIMIT = 20_000_000  # documents ranked at most for a retrieval baseline (queries x documents x draws)


def _codes(values: list) -> tuple[np.ndarray, list]:
    classes = sorted({str(v) for v in values})
    index = {c: i for i, c in enumerate(classes)}
    return np.array([index[str(v)] for v in values]), classes


def _single_label(spec, test: Table, train: Table | None, rng, metric: str) -> dict:
    from ..tasktypes.classification import label_metrics

    y, classes = _codes(test[spec.data.label_column])
    source = train if train is not None else test
    top = Counter(str(v) for v in source[spec.data.label_column]).most_common(1)[0][0]
    majority = np.full(len(y), classes.index(top) if top in classes else -1)
    if metric == "accuracy":  # closed form: a uniform guess is right 1/K of the time whatever the labels
        return {"chance": 1 / len(classes), "majority": float(np.mean(majority == y)), "draws": 0}
    draws = max(3, min(DRAWS, 200_000 // max(1, len(y))))  # a large split's draws vary little
    chance = [label_metrics(y, rng.integers(0, len(classes), len(y)))[metric] for _ in range(draws)]
    return {"chance": float(np.mean(chance)), "majority": label_metrics(y, majority)[metric], "draws": draws}


def _multilabel(spec, test: Table, train: Table, rng, metric: str) -> dict | None:
    from sklearn.metrics import label_ranking_average_precision_score

    if metric != "lrap":
        return None  # thresholded metrics depend on the probe's threshold: no baseline claimed
    rows = [v if isinstance(v, list) else [v] for v in test[spec.data.label_column]]
    classes = sorted({str(c) for r in rows for c in r})
    y = np.array([[str(c) in {str(x) for x in r} for c in classes] for r in rows], dtype=int)
    freq = Counter(str(c) for r in train[spec.data.label_column] for c in (r if isinstance(r, list) else [r]))
    prior = np.tile([freq.get(c, 0) for c in classes], (len(rows), 1)).astype(float)
    prior += 1e-9 * rng.random(prior.shape)  # ties broken at random, as a constant score would be scored
    chance = [label_ranking_average_precision_score(y, rng.random(y.shape)) for _ in range(DRAWS)]
    return {"chance": float(np.mean(chance)), "majority": float(label_ranking_average_precision_score(y, prior))}


def _clustering(spec, test: Table, rng, metric: str) -> dict | None:
    from sklearn.metrics import v_measure_score

    if metric != "v_measure":
        return None
    labels = [str(v[0] if isinstance(v, list) else v) for v in test[spec.data.label_column]]
    y, classes = _codes(labels)
    chance = [v_measure_score(y, rng.integers(0, len(classes), len(y))) for _ in range(DRAWS)]
    return {"chance": float(np.mean(chance)), "majority": float(v_measure_score(y, np.zeros(len(y), dtype=int)))}


def _pair(spec, test: Table, rng, metric: str) -> dict | None:
    from sklearn.metrics import average_precision_score

    if not metric.endswith("ap"):
        return None
    y = np.array([int(float(v)) for v in test[spec.data.label_column]])
    if len(set(y)) < 2:
        return None
    chance = [average_precision_score(y, rng.random(len(y))) for _ in range(DRAWS)]
    return {"chance": float(np.mean(chance)), "majority": float(y.mean())}


def _retrieval(spec, data: RetrievalData, rng, metric: str) -> dict | None:
    from ..tasktypes.retrieval import query_metrics

    name, _, k = metric.rpartition("_at_")
    short = {"ndcg": "NDCG", "map": "MAP", "recall": "Recall", "precision": "P", "hit_rate": "HitRate", "mrr": "MRR"}
    if name not in short or not k.isdigit():
        return None
    key, k_values = f"{short[name]}@{k}", [int(k)]
    qrels = {q: d for q, d in data.qrels.items() if d}
    queries = [q for q, _ in data.queries if q in qrels]
    if not queries:
        return None
    docs = list(dict.fromkeys(d for d, _ in data.corpus))
    size = len(docs) if not data.candidates else max(len(c) for c in data.candidates.values())
    if len(queries) * size * DRAWS > WORK_LIMIT:  # a large task: a seeded sample of its queries
        queries = sorted(rng.choice(queries, max(1, WORK_LIMIT // (size * DRAWS)), replace=False))
    popularity = Counter(d for judged in qrels.values() for d, rel in judged.items() if rel > 0)

    drop_self = bool(spec.protocol.get("ignore_identical_ids"))

    def pool(q: str) -> list[str]:
        found = list(data.candidates[q]) if data.candidates and q in data.candidates else docs
        return [d for d in found if d != q] if drop_self else found  # the evaluator's own correction

    def score(order) -> float:
        return float(np.mean([query_metrics(order(q), qrels[q], k_values)[key] for q in queries]))

    depth = int(k)  # a metric at k reads the first k documents only: a random order's are a random sample

    def random_top(q: str) -> list[str]:
        found = pool(q)
        return [found[i] for i in rng.choice(len(found), min(depth, len(found)), replace=False)]

    def popular_top(q: str) -> list[str]:
        found = pool(q)
        judged = [d for d in rng.permutation(found) if popularity.get(d, 0) > 0]  # shuffled: ties in random order
        judged.sort(key=lambda d: -popularity[d])
        rest = [d for d in found if popularity.get(d, 0) == 0]
        fill = [rest[i] for i in rng.choice(len(rest), min(max(0, depth - len(judged)), len(rest)), replace=False)]
        return (judged + fill)[:depth]

    chance = [score(random_top) for _ in range(DRAWS)]
    majority = score(popular_top)
    return {"chance": float(np.mean(chance)), "majority": majority, "queries": len(queries)}


def baselines(spec, tables: dict, split: str, seed: int = 0) -> dict | None:
    """The main score's chance level and majority-class score on one subset's split (tables: split
    -> Table or RetrievalData), None for a type or metric without one."""
    rng = np.random.default_rng(seed)
    metric, test = spec.main_score, tables.get(split)
    label = spec.data.label_column
    train = tables.get(spec.data.train_split)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn's warnings for empty classes: those score 0, as in the evaluators
        if isinstance(test, RetrievalData) and spec.type in ("retrieval", "reranking"):
            out = _retrieval(spec, test, rng, metric)
        elif not isinstance(test, Table) or label not in test:
            out = None
        elif spec.type == "classification":
            cross = spec.protocol.get("cross_validation") or not isinstance(train, Table) or train is test
            out = _single_label(spec, test, None if cross else train, rng, metric)
        elif spec.type == "zeroshot":
            out = _single_label(spec, test, None, rng, metric)
        elif spec.type == "multilabel" and isinstance(train, Table):
            out = _multilabel(spec, test, train, rng, metric)
        elif spec.type == "clustering":
            out = _clustering(spec, test, rng, metric)
        elif spec.type == "pair_classification":
            out = _pair(spec, test, rng, metric)
        else:
            out = None
    if out is None or any(v is None for v in out.values()):
        return None
    values = {k: round(float(v), 6) if k in ("chance", "majority") else v for k, v in out.items()}
    return {"metric": metric, "draws": DRAWS, **values, "seed": seed}  # a closed form says draws 0


# a shuffled control is warned about when it sits above the higher of chance and majority by at least
# SHUFFLED_POINTS (main-score units) and SHUFFLED_ERRORS of its standard errors over the experiments:
# on a tiny split luck alone moves it (MAEB-lite's LiteBirdSpecies, 96 clips: 0.271 +- 0.051 against 0.167)
SHUFFLED_POINTS = 0.10
SHUFFLED_ERRORS = 3.0


def with_shuffled(record: dict | None, shuffled: dict | None, metric: str) -> dict | None:
    """The baselines record with the label-shuffled control (maeb.tasktypes.control's info entry:
    score and seconds) beside chance and majority; a type without chance levels gets a record of the
    control alone. A control with no score (no experiment had the metric) adds nothing."""
    if not shuffled or shuffled.get("score") is None:
        return record
    extra = {"shuffled": shuffled["score"], "shuffled_error": shuffled.get("error"), "shuffled_seconds": shuffled["seconds"]}
    return {**(record or {"metric": metric}), **extra}


def shuffled_warning(record: dict | None, where: str) -> str | None:
    """One line when the shuffled control sits above the higher of chance and majority by SHUFFLED_POINTS
    and SHUFFLED_ERRORS standard errors or more: the evaluator scores that much with labels the
    embeddings cannot predict, more than luck over its experiments explains."""
    if not record or record.get("shuffled") is None or record.get("chance") is None:
        return None
    floor = max(record["chance"], record.get("majority") or 0.0)
    error = record.get("shuffled_error") or 0.0
    if record["shuffled"] < floor + max(SHUFFLED_POINTS, SHUFFLED_ERRORS * error):
        return None
    return (
        f"task {where}: the label-shuffled control scores {record['metric']} {record['shuffled']:.4f} "
        f"(+-{error:.4f}) against chance {record['chance']:.4f} (majority {record.get('majority', float('nan')):.4f}): "
        "the probe scores this much on permuted training labels; suspect the evaluator or the split (labels reaching "
        "the probe's training part, test clips drawn for training, a class order the folds follow)"
    )


def board_shuffled(board) -> dict[str, float]:
    """Each board task's label-shuffled control as the board scores the task (the mean over the splits
    and subsets its cells hold), for the tasks whose first result file records one."""
    import json
    from pathlib import Path

    out: dict[str, float] = {}
    for (_, task), scores in sorted(board.cells.items()):
        if task in out or not scores or not scores[0].source.endswith(".json"):
            continue
        try:
            record = json.loads(Path(scores[0].source).read_text(encoding="utf-8"))["maeb"]["baselines"]
            out[task] = float(np.mean([record[s.split][s.subset]["shuffled"] for s in scores]))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # no control recorded (not asked for, or another split's)
    return out


def board_baselines(board) -> dict[str, tuple[float, float]]:
    """Each board task's (chance, majority) as the board scores the task: the mean over the splits
    and subsets its cells hold, read from the first result file that records maeb.baselines (a
    main_scores.csv records none)."""
    import json
    from pathlib import Path

    out: dict[str, tuple[float, float]] = {}
    for (_, task), scores in sorted(board.cells.items()):
        if task in out or not scores or not scores[0].source.endswith(".json"):
            continue
        try:
            record = json.loads(Path(scores[0].source).read_text(encoding="utf-8"))["maeb"]["baselines"]
            pairs = [record[s.split][s.subset] for s in scores]
            out[task] = (
                float(np.mean([p["chance"] for p in pairs])),
                float(np.mean([p["majority"] for p in pairs])),
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue  # an older result, or another split's: no baseline shown
    return out


# A task separates no models when all of its models sit together at the top, at chance, or on one
# score: its ranks are then decided by noise. Points on the 0-100 scale of the board. The top needs a
# spread too: 90 against 99 is ten times the errors, while 94-97 for every model (issue 37's
# LiteSoundReranking) tells little.
CEILING_POINTS = 10.0  # every model within this of 100 ...
CEILING_SPREAD = 5.0  # ... and best and worst less than this apart
CHANCE_POINTS = 5.0  # every model at most this above the higher of chance and majority
SPREAD_POINTS = 2.0  # best and worst model less than this apart, wherever they sit
SEPARATION_RULE = (
    f"a task with two or more models separates none when every model scores within {CEILING_POINTS:g} points of 100 "
    f"with best and worst under {CEILING_SPREAD:g} points apart, or every model at most {CHANCE_POINTS:g} points above "
    f"the higher of its chance and majority levels, or its best and worst model are under {SPREAD_POINTS:g} points apart"
)

CLUSTERING_CHANCE = (
    "Chance for clustering is the v-measure of uniformly random cluster ids (as many clusters as classes). On a small "
    "task random ids share information with the classes by accident, so it can be high (and a model can score below "
    "it): a reference, not a floor."
)


def not_separating(board, base: dict[str, tuple[float, float]] | None = None) -> dict[str, str]:
    """Task -> why it separates no models (SEPARATION_RULE), for each such task of the board. base: the
    task baselines (board_baselines) when already read; tasks scored lower-is-better are left out."""
    base = board_baselines(board) if base is None else base
    out = {}
    for t in board.tasks:
        scores = [100 * r.tasks[t.name] for r in board.rows if r.tasks.get(t.name) is not None]
        if len(scores) < 2 or t.lower_is_better:
            continue
        low, high = min(scores), max(scores)
        floor = 100 * max(base[t.name]) if t.name in base else None
        if low >= 100 - CEILING_POINTS and high - low < CEILING_SPREAD:
            out[t.name] = f"every model within {CEILING_POINTS:g} points of 100 ({low:.1f}–{high:.1f})"
        elif floor is not None and high <= floor + CHANCE_POINTS:
            out[t.name] = f"every model at most {CHANCE_POINTS:g} points above chance/majority {floor:.1f} ({low:.1f}–{high:.1f})"
        elif high - low < SPREAD_POINTS:
            out[t.name] = f"best and worst model {high - low:.1f} points apart ({low:.1f}–{high:.1f})"
    return out
