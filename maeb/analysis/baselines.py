"""The chance level and the majority-class score of a task's main score, from its labels alone (the
`maeb.baselines` record of a result): what a score must clear before it says anything.

Both come from the main score's metric record (maeb.metrics.registry): its chance level in closed
form where one exists (maeb.metrics.chance: an expectation, exact), by seeded draws only where none
does, and its majority or prior baseline as an expectation over tied choices. Per type, on the
evaluated split (each value the main score's own metric):
- classification, zeroshot: chance = a uniform guess among the split's classes (accuracy, recall,
  precision and F1, macro or weighted: closed forms; AP of guessed labels: draws); majority = always
  the class most frequent in the training split (cross-validation and zero-shot: in the evaluated
  split itself), the mean over tied most frequent classes;
- multilabel (LRAP): chance = every clip's labels in uniformly random order (closed form);
  majority = every clip scored with the training split's label frequencies, the expectation over the
  orders of tied labels (closed form);
- clustering: chance = uniformly random cluster ids, as many clusters as classes (draws, until the
  standard error is DRAW_ERROR or MAX_DRAWS are drawn); majority = one cluster for all;
- pair classification (AP): chance = a random order of the pairs (closed form); majority = one score
  for every pair (sklearn's AP of a constant, the share of positive pairs);
- retrieval, reranking: chance = each query's pool in uniformly random order; majority = documents
  ordered by how many queries judge them relevant, equally popular ones in every order (both closed
  forms: maeb.metrics.ties' expectation over tie groups); a query's own id is left out of its pool
  when the protocol ignores identical ids, as the evaluator does. The skip_first_result correction is
  not imitated (a random first result is not the query itself).
Every record states how its chance level is known (`chance_rule`: "closed form" or "draws"), how many
draws it took (`draws`, 0 for a closed form) and its standard error (`chance_error`, 0 for a closed
form). Other types, and metrics without a chance level (thresholded multilabel F1), get no record."""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np

from ..data.sources import RetrievalData, Table
from ..metrics import ties
from ..metrics.registry import DRAW_ERROR, MAX_DRAWS, record_of

DRAW_WORK = 20_000_000  # labels drawn at most for one chance level by draws (clips x draws)
DRAW_BATCH = 20  # draws between two looks at the standard error


def _codes(values: list) -> tuple[np.ndarray, list]:
    classes = sorted({str(v) for v in values})
    index = {c: i for i, c in enumerate(classes)}
    return np.array([index[str(v)] for v in values]), classes


def drawn(draw: Callable[[], float], n_items: int) -> dict:
    """A chance level by draws: draws in batches of DRAW_BATCH until their standard error is at most
    DRAW_ERROR, MAX_DRAWS are drawn, or DRAW_WORK items; the mean, the error reached and the count."""
    limit = max(DRAW_BATCH, min(MAX_DRAWS, DRAW_WORK // max(1, n_items)))
    values: list[float] = []
    while len(values) < limit:
        values += [float(draw()) for _ in range(DRAW_BATCH)]
        if np.std(values, ddof=1) / np.sqrt(len(values)) <= DRAW_ERROR:
            break
    error = float(np.std(values, ddof=1) / np.sqrt(len(values)))
    return {"chance": float(np.mean(values)), "chance_error": error, "chance_rule": "draws", "draws": len(values)}


def exact(value: float) -> dict:
    """A chance level in closed form: no draws, no Monte Carlo error."""
    return {"chance": float(value), "chance_error": 0.0, "chance_rule": "closed form", "draws": 0}


def _single_label(spec, test: Table, train: Table | None, rng, metric: str) -> dict | None:
    from ..tasktypes.labels import label_metrics

    y, classes = _codes(test[spec.data.label_column])
    source = Counter(str(v) for v in (train if train is not None else test)[spec.data.label_column])
    most = max(source.values())
    tops = sorted(c for c, n in source.items() if n == most)  # tied most frequent classes: the mean over them
    values = [label_metrics(y, np.full(len(y), classes.index(c) if c in classes else -1)).get(metric) for c in tops]
    present = [float(v) for v in values if v is not None]
    if len(present) < len(values):
        return None
    majority = float(np.mean(present))
    rec = record_of(metric)
    if rec is not None and rec.inputs == "labels" and rec.chance is not None:
        return {**exact(rec.chance(np.bincount(y, minlength=len(classes)))), "majority": majority}
    if label_metrics(y, y).get(metric) is None:
        return None
    return {**drawn(lambda: label_metrics(y, rng.integers(0, len(classes), len(y)))[metric], len(y)), "majority": majority}


def _label_matrix(spec, table: Table, classes: list[str] | None = None) -> tuple[np.ndarray, list[str]]:
    rows = [v if isinstance(v, list) else [v] for v in table[spec.data.label_column]]
    classes = classes or sorted({str(c) for r in rows for c in r})
    return np.array([[str(c) in {str(x) for x in r} for c in classes] for r in rows], dtype=int), classes


def _multilabel(spec, test: Table, train: Table, rng, metric: str) -> dict | None:
    rec = record_of(metric)
    if rec is None or rec.inputs != "label_scores" or rec.chance is None or rec.majority is None:
        return None  # thresholded metrics depend on the probe's threshold: no baseline claimed
    y, classes = _label_matrix(spec, test)
    freq = Counter(str(c) for r in train[spec.data.label_column] for c in (r if isinstance(r, list) else [r]))
    prior = np.array([freq.get(c, 0) for c in classes], dtype=float)
    return {**exact(rec.chance(y)), "majority": float(rec.majority(y, prior))}


def _clustering(spec, test: Table, rng, metric: str) -> dict | None:
    rec = record_of(metric)
    if rec is None or rec.inputs != "clusters" or rec.fn is None:
        return None
    labels = [str(v[0] if isinstance(v, list) else v) for v in test[spec.data.label_column]]
    y, classes = _codes(labels)
    chance = drawn(lambda: rec(y, rng.integers(0, len(classes), len(y))), len(y))
    return {**chance, "majority": float(rec(y, np.zeros(len(y), dtype=int)))}


def _pair(spec, test: Table, rng, metric: str) -> dict | None:
    rec = record_of(metric)
    if rec is None or rec.inputs != "scores" or rec.chance is None or rec.majority is None:
        return None
    y = np.array([int(float(v)) for v in test[spec.data.label_column]])
    if len(set(y)) < 2:
        return None
    n, r = len(y), int(y.sum())
    return {**exact(rec.chance(n, r)), "majority": float(rec.majority(n, r))}


def _retrieval(spec, data: RetrievalData, rng, metric: str) -> dict | None:
    rec = record_of(metric)
    k = metric.rpartition("_at_")[2] if "_at_" in metric else metric.rpartition("@")[2]
    if rec is None or rec.inputs != "ranking" or rec.chance is None or rec.majority is None or not k.isdigit():
        return None
    depth = int(k)
    qrels = {q: d for q, d in data.qrels.items() if d}
    queries = [q for q, _ in data.queries if q in qrels]
    if not queries:
        return None
    docs = list(dict.fromkeys(d for d, _ in data.corpus))
    popularity = Counter(d for judged in qrels.values() for d, rel in judged.items() if rel > 0)
    corpus_levels = Counter(popularity.get(d, 0) for d in docs)  # documents per popularity
    drop_self = bool(spec.protocol.get("ignore_identical_ids"))
    corpus = set(docs)
    chance, majority = [], []
    for q in queries:
        judged = qrels[q]
        if data.candidates and q in data.candidates:  # reranking: the query's own candidates
            pool = {d for d in data.candidates[q] if not (drop_self and d == q)}
            levels = Counter(popularity.get(d, 0) for d in pool)
        else:
            pool = corpus
            levels = Counter(corpus_levels)
            if drop_self and q in corpus:  # the evaluator's own correction: the query is no result of itself
                levels[popularity.get(q, 0)] -= 1
        relevant = {d: int(r) for d, r in judged.items() if r > 0 and d in pool and not (drop_self and d == q)}
        ideal = ties.ideal_gains(judged)
        chance.append(rec.chance(sum(levels.values()), list(relevant.values()), ideal, depth))
        found: dict[int, list[int]] = defaultdict(list)
        for d, r in relevant.items():
            found[popularity[d]].append(r)
        groups = [(levels[p], len(found[p]), sum(found[p])) for p in sorted(levels, reverse=True) if levels[p] > 0]
        majority.append(rec.majority(groups, ideal, depth))
    return {**exact(float(np.mean(chance))), "majority": float(np.mean(majority)), "queries": len(queries)}


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
        elif not isinstance(test, Table) or label not in test or not len(test[label]):
            out = None  # no clip: no chance level (clustering's draws would say 1.0, sklearn's v-measure of nothing)
        elif spec.type == "classification":
            cross = spec.protocol.get("cross_validation") or not isinstance(train, Table) or train is test
            if not cross and isinstance(train, Table) and (label not in train or not len(train[label])):
                return None  # no training label: no class is the most frequent one
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
    values = {k: round(float(v), 6) if k in ("chance", "chance_error", "majority") else v for k, v in out.items()}
    return {"metric": metric, **values, "seed": seed}


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


def board_chance_errors(board) -> dict[str, tuple[str, float]]:
    """Each board task's (how its chance level is known, its standard error) as board_baselines averages
    it: "closed form" with error 0, or "draws" with the error of the mean over the splits and subsets
    (independent draws: the root of the summed squared errors over their count). An older result
    without chance_error gives ("draws", nan): its error was never stored."""
    import json
    from pathlib import Path

    out: dict[str, tuple[str, float]] = {}
    for (_, task), scores in sorted(board.cells.items()):
        if task in out or not scores or not scores[0].source.endswith(".json"):
            continue
        try:
            record = json.loads(Path(scores[0].source).read_text(encoding="utf-8"))["maeb"]["baselines"]
            pairs = [record[s.split][s.subset] for s in scores]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        errors = [p.get("chance_error") for p in pairs]
        if any(e is None for e in errors):
            out[task] = ("draws", float("nan"))  # written before the error was stored (20 draws)
        else:
            rule = "draws" if any(p.get("chance_rule") == "draws" for p in pairs) else "closed form"
            out[task] = (rule, float(np.sqrt(np.sum(np.square(errors))) / len(errors)))
    return out


def chance_text(value: float, known: tuple[str, float] | None) -> str:
    """A chance level as a board shows it (points): a closed form's value alone; a mean of draws with
    its standard error (26.2 ± 0.10), or "(drawn)" where a result older than the stored error left it
    unknown. `known` is the task's board_chance_errors entry (None: not recorded, the value alone)."""
    text = f"{100 * value:.1f}"
    if known is None or known[0] != "draws":
        return text
    return f"{text} (drawn)" if not np.isfinite(known[1]) else f"{text} ± {100 * known[1]:.2f}"


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
