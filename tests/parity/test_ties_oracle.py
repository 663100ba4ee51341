"""maeb.metrics.ties against mteb 2.26.24's own retrieval scorer (pytrec_eval underneath), on the
same random results: without ties the expected metrics are mteb's numbers; with ties (integer
scores) mteb's numbers, which break a tie by document id, lie inside maeb's range over tie orders,
and the expected value lies inside it too."""

from __future__ import annotations

import random

import pytest

from maeb.metrics import ties
from maeb.tasktypes.retrieval import retrieval_metrics

K_VALUES = [1, 3, 5, 10]
NAMES = {"ndcg": "NDCG", "map": "MAP", "recall": "Recall", "precision": "P", "mrr": "MRR"}


@pytest.fixture(scope="module")
def mteb_scores():
    try:
        from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores
    except ImportError as exc:
        pytest.fail(f"the retrieval oracle is missing ({exc}): run `bash scripts/parity_env.sh`", pytrace=False)
    return calculate_retrieval_scores


def _case(seed: int, tied: bool):
    rng = random.Random(seed)
    results, qrels = {}, {}
    for q in range(30):
        docs = [f"d{j:02d}" for j in range(rng.randint(5, 15))]
        values = [float(rng.randint(0, 3)) for _ in docs] if tied else [v / 7 for v in rng.sample(range(1000), len(docs))]
        results[f"q{q}"] = dict(zip(docs, values))
        qrels[f"q{q}"] = {d: rng.choice([1, 2]) for d in rng.sample(docs, rng.randint(1, 4))}
    return results, qrels


def _mteb(calculate, results, qrels) -> dict:
    found = calculate(results, qrels, K_VALUES)
    out = {}
    for name in NAMES:
        for key, value in getattr(found, name).items():
            out[f"{name}_at_{key.rpartition('@')[2]}"] = value
    return out


@pytest.mark.parametrize("seed", range(5))
def test_without_ties_the_expected_metrics_are_mtebs(mteb_scores, seed):
    results, qrels = _case(seed, tied=False)
    theirs = _mteb(mteb_scores, results, qrels)
    ours = retrieval_metrics(results, qrels, K_VALUES, expected=True)
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.parametrize("seed", range(5))
def test_with_ties_mtebs_order_lies_in_the_range(mteb_scores, seed):
    results, qrels = _case(seed, tied=True)
    theirs = _mteb(mteb_scores, results, qrels)
    bounds: dict = {}
    default = retrieval_metrics(results, qrels, K_VALUES, ties_out=bounds)
    expected = retrieval_metrics(results, qrels, K_VALUES, expected=True)
    moved = 0
    for key, value in theirs.items():
        name, _, k = key.rpartition("_at_")
        low = sum(m[f"{NAMES[name]}@{k}"] for m in bounds["low"]) / len(bounds["low"])
        high = sum(m[f"{NAMES[name]}@{k}"] for m in bounds["high"]) / len(bounds["high"])
        assert default[key] == pytest.approx(value, abs=1e-12), key  # maeb's default is mteb's tie order
        assert low - 1e-9 <= value <= high + 1e-9 and low - 1e-9 <= expected[key] <= high + 1e-9, key
        moved += high - low > 1e-6
    assert moved > 0 and ties.RELATIVE_TOLERANCE == 1e-6
