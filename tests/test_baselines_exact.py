"""The closed-form chance levels and expected majority baselines of the metric records
(maeb.metrics.chance, read by maeb.analysis.baselines) against brute force: many random draws of the
very guess the closed form claims to average, scored by sklearn or by the retrieval evaluator's own
query_metrics. Each closed form must lie within 4 standard errors of the draws' mean (and the draws
are many, so that is a small fraction of a point); the one baseline still drawn (clustering) stores
the standard error it reached. Issue 45's cases: a 'majority' that is one random tie order, not an
expectation, and a chance level whose Monte Carlo error was called 'well under a point'."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn import metrics as skm

from maeb.analysis.baselines import baselines
from maeb.data.sources import RetrievalData, Table
from maeb.metrics import chance as ch
from maeb.metrics import ties
from maeb.metrics.registry import DRAW_ERROR, MAX_DRAWS, record_of
from maeb.tasktypes.retrieval import query_metrics

from .test_baselines import _spec

DRAWS = 20_000


def within(exact: float, draws: list[float] | np.ndarray, errors: float = 4.0) -> bool:
    """Whether a closed form lies within `errors` standard errors of the draws' mean (or 1e-9 of it
    when the draws do not vary)."""
    d = np.asarray(draws, dtype=float)
    return abs(exact - d.mean()) <= max(errors * d.std(ddof=1) / np.sqrt(len(d)), 1e-9)


def ap_of_orders(y: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Average precision of each row of scores (no ties) against 0/1 labels y, vectorised."""
    ranked = y[np.argsort(-scores, axis=1)]
    hits = np.cumsum(ranked, axis=1)
    return (ranked * hits / np.arange(1, y.size + 1)).sum(axis=1) / y.sum()


@pytest.mark.parametrize("n, r", [(30, 7), (12, 1), (50, 49), (2, 1)])
def test_expected_ap_of_a_random_order_equals_20000_permutations(n, r):
    rng = np.random.default_rng(n * 100 + r)
    y = np.array([1] * r + [0] * (n - r))
    scores = rng.random((DRAWS, n))
    draws = ap_of_orders(y, scores)
    assert np.allclose(draws[:20], [skm.average_precision_score(y, s) for s in scores[:20]], atol=1e-12)  # sklearn's AP
    assert within(ch.random_ap(n, r), draws)
    assert record_of("cosine_ap").chance(n, r) == ch.random_ap(n, r)


def lrap_of_draws(y: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Label ranking average precision of each draw of scores (draws x clips x labels, no ties), vectorised:
    per clip the AP of its labels, 1 for a clip with no label or every label (sklearn's convention)."""
    ranked = np.take_along_axis(np.broadcast_to(y, scores.shape), np.argsort(-scores, axis=2), axis=2)
    r = y.sum(axis=1)
    ap = (ranked * np.cumsum(ranked, axis=2) / np.arange(1, y.shape[1] + 1)).sum(axis=2) / np.maximum(r, 1)
    return np.where((r == 0) | (r == y.shape[1]), 1.0, ap).mean(axis=1)


def test_expected_lrap_of_random_label_scores_and_of_a_tied_prior():
    rng = np.random.default_rng(1)
    y = (rng.random((40, 6)) < 0.3).astype(int)
    y[0] = 0  # no label and every label: sklearn scores both 1
    y[1] = 1
    scores = rng.random((DRAWS, *y.shape))
    draws = lrap_of_draws(y, scores)
    assert np.allclose(draws[:10], [skm.label_ranking_average_precision_score(y, s) for s in scores[:10]], atol=1e-12)
    assert within(ch.random_lrap(y), draws)
    prior = np.array([5, 3, 3, 1, 0, 0], dtype=float)  # two ties: the expectation over their orders
    broken = lrap_of_draws(y, prior + 1e-9 * rng.random((DRAWS, *y.shape)))  # each draw: one random order of the ties
    assert within(ch.prior_lrap(y, prior), broken)
    scores = rng.random(y.shape)  # without ties the tie-aware form is sklearn's own value
    assert ch.expected_lrap(y, scores) == pytest.approx(skm.label_ranking_average_precision_score(y, scores), abs=1e-12)


@pytest.mark.parametrize(
    "name", ["accuracy", "f1", "f1_weighted", "precision", "precision_weighted", "recall", "recall_weighted"]
)
def test_label_metrics_of_a_uniform_guess_equal_draws(name):
    rng = np.random.default_rng(2)
    y = np.array([0] * 20 + [1] * 7 + [2] * 3 + [3] * 1)  # skewed: macro and weighted differ
    rec = record_of(name)
    guesses = rng.integers(0, 4, (DRAWS, len(y)))
    draws = label_scores(y, guesses, name)
    assert np.allclose(draws[:20], [rec(y, g) for g in guesses[:20]], atol=1e-12)  # the registered (sklearn) metric's values
    assert within(rec.chance(np.bincount(y)), draws), name


def label_scores(y: np.ndarray, guesses: np.ndarray, name: str) -> np.ndarray:
    """The label metric of each row of guesses, vectorised (sklearn's zero_division=0 conventions)."""
    classes = np.unique(y)
    n_c = np.array([(y == c).sum() for c in classes], dtype=float)
    tp = np.stack([((guesses == c) & (y == c)).sum(axis=1) for c in classes], axis=1).astype(float)
    m = np.stack([(guesses == c).sum(axis=1) for c in classes], axis=1).astype(float)
    per = {
        "accuracy": None,
        "precision": np.divide(tp, m, out=np.zeros_like(tp), where=m > 0),
        "recall": tp / n_c,
        "f1": 2 * tp / (n_c + m),
    }
    if name == "accuracy":
        return (guesses == y).mean(axis=1)
    base, _, weighted = name.partition("_")
    return per[base] @ (n_c / n_c.sum()) if weighted else per[base].mean(axis=1)


def test_always_the_majority_class_and_its_ties():
    test = Table({"label": ["a"] * 6 + ["b"] * 3 + ["c"] * 1})
    one = baselines(_spec("classification", "f1"), {"test": test, "train": Table({"label": ["b", "b", "a"]})}, "test")
    assert one["majority"] == pytest.approx(skm.f1_score(test["label"], ["b"] * 10, average="macro"))
    tied = baselines(_spec("classification"), {"test": test, "train": Table({"label": ["a", "b", "c", "c", "b"]})}, "test")
    assert tied["majority"] == pytest.approx((0.3 + 0.1) / 2)  # b and c tie in training: the mean, not the first found
    assert (tied["chance"], tied["draws"], tied["chance_error"], tied["chance_rule"]) == (round(1 / 3, 6), 0, 0.0, "closed form")


def _pool_draws(pool_gains: list[int], judged: dict[str, int], k: int, key: str, rng, n: int = 4000) -> list[float]:
    docs = [f"d{i}" for i in range(len(pool_gains))]
    return [query_metrics(list(rng.permutation(docs)), judged, [k])[f"{key}@{k}"] for _ in range(n)]


@pytest.mark.parametrize("metric", ["ndcg_at_10", "hit_rate_at_5", "mrr_at_10", "map_at_10", "recall_at_3", "precision_at_5"])
def test_ranking_chance_equals_random_orders_of_the_pool(metric):
    """Graded relevance, relevant documents outside the pool (they count in R, as in the evaluator)."""
    rng = np.random.default_rng(3)
    gains = [3, 1, 1, 2] + [0] * 21
    judged = {f"d{i}": g for i, g in enumerate(gains) if g} | {"elsewhere": 1}
    rec = record_of(metric)
    k = int(metric.rpartition("_")[2])
    key = {"ndcg_at_k": "NDCG", "hit_rate_at_k": "HitRate", "mrr_at_k": "MRR", "map_at_k": "MAP", "recall_at_k": "Recall"}.get(
        rec.name, "P"
    )
    exact = rec.chance(len(gains), [g for g in gains if g], ties.ideal_gains(judged), k)
    assert within(exact, _pool_draws(gains, judged, k, key, rng))


def _retrieval(qrels: dict, n_docs: int, n_queries: int) -> RetrievalData:
    return RetrievalData([(f"d{i}", "x") for i in range(n_docs)], [(f"q{i}", "y") for i in range(n_queries)], qrels)


def test_equally_popular_documents_make_majority_equal_chance():
    """Issue 45's LiteWordCaptionsT2A: every document relevant to one query, so the popularity prior
    orders nothing and its expectation is chance (a single random tie order recorded 0.1035 against 0.0615)."""
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(60)}
    out = baselines(_spec("retrieval", "ndcg_at_10"), {"test": _retrieval(qrels, 60, 60)}, "test")
    assert out["majority"] == pytest.approx(out["chance"], abs=1e-6) and out["draws"] == 0 and out["chance_error"] == 0.0
    assert out["chance"] == pytest.approx(ch.ranking_key("NDCG")[0](60, [1], [1], 10), abs=1e-6)


def test_the_popularity_prior_is_the_expectation_over_its_tie_orders():
    rng = np.random.default_rng(4)
    n_docs, n_queries = 15, 30
    qrels = {f"q{i}": {f"d{rng.integers(0, 5)}": 1, f"d{rng.integers(0, n_docs)}": 2} for i in range(n_queries)}
    out = baselines(_spec("retrieval", "ndcg_at_5"), {"test": _retrieval(qrels, n_docs, n_queries)}, "test")
    popularity = {d: sum(d in j and j[d] > 0 for j in qrels.values()) for d in (f"d{i}" for i in range(n_docs))}
    draws = []
    for _ in range(1500):  # the old recipe: popular first, equally popular ones in a random order
        noise = {d: rng.random() for d in popularity}
        order = sorted(popularity, key=lambda d: (-popularity[d], noise[d]))
        draws.append(np.mean([query_metrics(order, qrels[q], [5])["NDCG@5"] for q in qrels]))
    assert within(out["majority"], draws)


def test_reranking_candidates_and_identical_ids():
    rng = np.random.default_rng(5)
    cands = {f"q{i}": [f"d{j}" for j in rng.choice(20, 8, replace=False)] for i in range(25)}
    qrels = {q: {c[0]: 1, c[1]: 1} for q, c in cands.items()}
    data = RetrievalData([(f"d{i}", "x") for i in range(20)], [(q, "y") for q in cands], qrels, candidates=cands)
    out = baselines(_spec("reranking", "map_at_1000"), {"test": data}, "test")
    assert out["chance"] == pytest.approx(ch.random_ap(8, 2), abs=1e-6)  # each query: 2 relevant of 8 candidates
    # audio-to-audio on one pool: a query is no result of itself, so its pool is one smaller
    self_pool = {f"d{i}": {f"d{(i + 1) % 10}": 1} for i in range(10)}
    data = RetrievalData([(f"d{i}", "x") for i in range(10)], [(f"d{i}", "x") for i in range(10)], self_pool)
    out = baselines(_spec("retrieval", "mrr_at_1000", ignore_identical_ids=True), {"test": data}, "test")
    assert out["chance"] == pytest.approx(ch.random_ap(9, 1), abs=1e-6)


def test_clustering_chance_is_drawn_to_its_stated_error():
    labels = Table({"label": [str(i % 4) for i in range(120)]})
    out = baselines(_spec("clustering"), {"test": labels}, "test", seed=0)
    assert out["chance_rule"] == "draws" and 0 < out["draws"] <= MAX_DRAWS
    assert out["chance_error"] <= DRAW_ERROR or out["draws"] == MAX_DRAWS
    other = baselines(_spec("clustering"), {"test": labels}, "test", seed=1)
    assert abs(out["chance"] - other["chance"]) <= 5 * np.hypot(out["chance_error"], other["chance_error"])
    assert out["majority"] == 0.0


def test_the_board_reads_each_tasks_chance_error(tmp_path):
    from maeb.analysis.baselines import board_chance_errors
    from maeb.analysis.leaderboard import load_board

    from .test_board_validation import entry, write_result

    records = {"Exact": {"chance": 0.25, "chance_error": 0.0, "chance_rule": "closed form", "majority": 0.3},
               "Drawn": {"chance": 0.03, "chance_error": 0.0008, "chance_rule": "draws", "majority": 0.0},
               "Old": {"chance": 0.03, "draws": 20, "majority": 0.0}}  # fmt: skip
    for task, rec in records.items():
        maeb = {
            "task": {"name": task, "type": "AudioClassification", "main_score": "accuracy"},
            "baselines": {"test": {"default": rec}},
        }
        write_result(tmp_path, "org/m", task, {"test": [entry(0.5)]}, maeb)
    board, _ = load_board([tmp_path])
    got = board_chance_errors(board)
    assert got["Exact"] == ("closed form", 0.0) and got["Drawn"] == ("draws", 0.0008)
    assert got["Old"][0] == "draws" and np.isnan(got["Old"][1])
    # every board shows it: md's Chance column, json's chance_rule/chance_error, the page's chance row
    from maeb.analysis.report import render

    md = render(board, "md", per_task="rows")
    assert "| 25.0 |" in md and "| 3.0 ± 0.08 |" in md and "| 3.0 (drawn) |" in md
    tasks = {t["name"]: t for t in json.loads(render(board, "json"))["tasks"]}
    assert (tasks["Exact"]["chance_rule"], tasks["Exact"]["chance_error"]) == ("closed form", 0.0)
    assert (tasks["Drawn"]["chance_rule"], tasks["Drawn"]["chance_error"]) == ("draws", 0.0008)
    assert (tasks["Old"]["chance_rule"], tasks["Old"]["chance_error"]) == ("draws", None)
    page = render(board, "html", per_task="columns")
    assert 'title="chance: a mean of seeded draws, standard error 0.08 points">3.0 ± 0.08<' in page
    assert 'title="chance: exact (closed form)">25.0<' in page
