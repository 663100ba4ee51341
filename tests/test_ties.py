"""maeb.metrics.ties against brute force: every order of the tied items enumerated on small random
cases with integer scores (so ties are common), and bit-equality with the evaluators' own metrics
when nothing ties."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from maeb.metrics import ties
from maeb.tasktypes.retrieval import _ranked, query_metrics

K_VALUES = [1, 2, 3, 5, 10]


def _case(rng: random.Random, n_docs: int, spread: int):
    docs = {f"d{i:02d}": float(rng.randint(0, spread)) for i in range(n_docs)}
    judged = {d: rng.choice([0, 0, 1, 2]) for d in rng.sample(sorted(docs), rng.randint(1, n_docs))}
    judged[f"unretrieved{rng.randint(0, 9)}"] = rng.choice([0, 1])  # a relevant document outside the list counts in R
    return docs, judged


def _orders(docs: dict[str, float], judged: dict[str, int]):
    """Every ranking that differs from retrieval's only in the order of tied documents."""
    ranked = _ranked(docs)
    sizes = ties.group_sizes([docs[d] for d in ranked], ties.tolerance(list(docs.values())))
    blocks, start = [], 0
    for n in sizes:
        blocks.append(ranked[start : start + n])
        start += n
    for choice in itertools.product(*(itertools.permutations(b) for b in blocks)):
        yield [d for block in choice for d in block]


@pytest.mark.parametrize("seed", range(40))
def test_expected_metrics_equal_the_mean_over_every_tie_order(seed):
    rng = random.Random(seed)
    docs, judged = _case(rng, rng.randint(2, 7), rng.randint(1, 3))
    per_order = [query_metrics(order, judged, K_VALUES) for order in _orders(docs, judged)]
    groups = ties.ranked_groups(docs, judged)
    ideal = ties.ideal_gains(judged)
    expected = ties.expected_metrics(groups, ideal, K_VALUES)
    best = ties.ordered_metrics(groups, ideal, K_VALUES, best=True)
    worst = ties.ordered_metrics(groups, ideal, K_VALUES, best=False)
    for key in per_order[0]:
        values = [m[key] for m in per_order]
        assert expected[key] == pytest.approx(sum(values) / len(values), rel=1e-12, abs=1e-12), key
        assert best[key] == pytest.approx(max(values), abs=1e-12), key
        assert worst[key] == pytest.approx(min(values), abs=1e-12), key


@pytest.mark.parametrize("seed", range(20))
def test_without_ties_the_expected_metrics_are_bit_equal_to_query_metrics(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 30)
    values = rng.sample(range(1000), n)
    docs = {f"d{i:02d}": v / 7.0 - 40.0 for i, v in enumerate(values)}
    judged = {d: rng.choice([0, 1, 1, 2, 3]) for d in rng.sample(sorted(docs), rng.randint(1, n))}
    groups = ties.ranked_groups(docs, judged)
    assert not ties.has_ties(groups)
    ks = [1, 3, 5, 10, 20, 100, 1000]
    assert ties.expected_metrics(groups, ties.ideal_gains(judged), ks) == query_metrics(_ranked(docs), judged, ks)


def test_scores_within_the_relative_tolerance_tie_and_a_group_does_not_chain():
    scores = [1.0, 1.0 - 4e-7, 1.0 - 8e-7, 1.0 - 1.2e-6, 0.5]
    assert ties.group_sizes(scores, ties.tolerance(scores)) == [3, 1, 1]
    assert ties.group_sizes(scores, 0.0) == [1, 1, 1, 1, 1]
    assert ties.tied_within([[1], [0, 1], [0]], 1) is False
    assert ties.tied_within([[1], [0, 1], [0]], 2) is True


@pytest.mark.parametrize("seed", range(20))
def test_zero_shot_split_ties_equal_the_mean_over_tie_orders(seed):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 3, size=(12, 4)).astype(float)
    labels = rng.integers(0, 4, size=12)
    found = ties.argmax_ties(scores, labels)
    per_row = []
    for row, label in zip(scores, labels):
        tied = np.flatnonzero(row == row.max())
        firsts = [order[0] == label for order in itertools.permutations(tied)]
        per_row.append((sum(firsts) / len(firsts), min(firsts), max(firsts)))
    assert found["expected"] == pytest.approx(np.mean([p[0] for p in per_row]), abs=1e-12)
    assert found["low"] == pytest.approx(np.mean([p[1] for p in per_row]), abs=1e-12)
    assert found["high"] == pytest.approx(np.mean([p[2] for p in per_row]), abs=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_average_precision_range_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8))
    scores = rng.integers(0, 3, size=n).astype(float)
    labels = rng.integers(0, 2, size=n)
    labels[0], labels[1] = 1, 0
    found = ties.average_precision_range(scores, labels)
    values = []
    for perm in itertools.permutations(range(n)):
        # a strict order consistent with the scores: sort by score, ties in this permutation's order
        ranked = [labels[i] for i in sorted(range(n), key=lambda i: (-scores[i], perm.index(i)))]
        hits = np.cumsum(ranked)
        values.append(sum(hits[i] / (i + 1) for i in range(n) if ranked[i]) / hits[-1])
    assert found["expected"] == pytest.approx(np.mean(values), abs=1e-12)
    assert found["low"] == pytest.approx(min(values), abs=1e-12)
    assert found["high"] == pytest.approx(max(values), abs=1e-12)


def test_average_precision_without_ties_is_sklearns():
    rng = np.random.default_rng(3)
    scores = rng.permutation(50) / 3.0
    labels = rng.integers(0, 2, size=50)
    found = ties.average_precision_range(scores, labels)
    assert found["expected"] == found["low"] == found["high"] == pytest.approx(average_precision_score(labels, scores), abs=1e-12)
    assert found["tied_share"] == 0.0


def test_identical_vectors_counts_rows_sharing_a_vector():
    x = np.array([[1, 0], [1, 0], [0, 1], [1, 0], [2, 2], [0, 1]], dtype=np.float32)
    assert ties.identical_vectors(x) == {"identical_vector_clips": 5, "distinct_vectors": 3, "largest_shared": 3}
    assert ties.identical_vectors(np.zeros((0, 4)))["distinct_vectors"] == 0
