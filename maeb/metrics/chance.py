"""Closed forms of the chance levels and prior baselines the metric records declare
(maeb.metrics.scores): expected values, exact, where averaging random draws only estimated them.

- a uniform guess among K classes (labels): accuracy and recall 1/K whatever the class counts;
  precision and F1 summed exactly over the binomial count of clips guessed as each class (given that
  count, the clips guessed are a uniform sample, so the true positives are hypergeometric);
- a random order of n items of which r are positive (scores): average precision
  (r-1)/(n-1) + (n-r) H_n / (n (n-1)), H_n the n-th harmonic number (each rank's precision is
  expected over where the other positives fall);
- label ranking average precision: per clip the average precision of its labels, 1 for a clip with
  no label or every label (sklearn's convention);
- rankings (retrieval, reranking): maeb.metrics.ties.expected_of_sizes of the pool as one tie group
  (a uniformly random order is every order of one group), and of a prior's tie groups.

tests/test_baselines_exact.py compares each with many random draws."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom

from ..core.errors import DataError
from . import ties


def _counts(counts) -> np.ndarray:
    """The classes present (count > 0); a chance level of no clip, or of a negative count, is no number."""
    c = np.asarray(counts, dtype=float).reshape(-1)
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise DataError(f"class counts must be counts (finite, 0 or more), got {c.tolist()[:10]}")
    if not np.any(c > 0):
        raise DataError("no clip to guess: the chance level of an empty split is undefined")
    return c[c > 0]


def _guessed(counts) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(class counts, P(m clips guessed as one class) for m = 0..n, n, K) of a uniform guess."""
    c = _counts(counts)
    n, k = int(c.sum()), len(c)
    return c, binom.pmf(np.arange(n + 1), n, 1.0 / k), n, k


def uniform_accuracy(counts) -> float:
    """Expected accuracy of a uniform guess among the K classes: 1/K."""
    return 1.0 / len(_counts(counts))


def uniform_recall(counts) -> float:
    """Expected macro recall of a uniform guess: each class's recall is the share guessed as it, 1/K."""
    return 1.0 / len(_counts(counts))


def uniform_recall_weighted(counts) -> float:
    """Expected weighted recall of a uniform guess: 1/K (every class's recall has mean 1/K)."""
    return 1.0 / len(_counts(counts))


def _precision_per_class(counts) -> np.ndarray:
    # E[TP/m] = n_c/n when m > 0, and 0 (sklearn's zero_division) when no clip is guessed as the class
    c, pmf, n, _ = _guessed(counts)
    return (c / n) * (1.0 - pmf[0])


def uniform_precision(counts) -> float:
    """Expected macro precision of a uniform guess: (1 - (1 - 1/K)^n) / K."""
    return float(_precision_per_class(counts).mean())


def uniform_precision_weighted(counts) -> float:
    """Expected weighted precision of a uniform guess: sum of (n_c/n)^2 (1 - (1 - 1/K)^n)."""
    c = _counts(counts)
    return float((c / c.sum() * _precision_per_class(counts)).sum())


def _f1_per_class(counts) -> np.ndarray:
    # F1_c = 2 TP / (n_c + m); E[TP | m] = m n_c / n, summed over the binomial m
    c, pmf, n, _ = _guessed(counts)
    m = np.arange(n + 1, dtype=float)
    return np.array([(pmf * 2.0 * m * nc / (n * (nc + m))).sum() for nc in c])


def uniform_f1(counts) -> float:
    """Expected macro F1 of a uniform guess (exact sum over how many clips are guessed as each class)."""
    return float(_f1_per_class(counts).mean())


def uniform_f1_weighted(counts) -> float:
    """Expected weighted F1 of a uniform guess."""
    c = _counts(counts)
    return float((c / c.sum() * _f1_per_class(counts)).sum())


def random_ap(n: int, r: int) -> float:
    """Expected average precision of n items in uniformly random order, r of them positive:
    (r-1)/(n-1) + (n-r) H_n / (n (n-1)); 0 without a positive (sklearn scores it 0), 1 for one item."""
    if r > n or r < 0 or n < 0:  # more positives than items: the formula would exceed 1
        raise DataError(f"random AP of {n} items with {r} positive: positives must be between 0 and the items")
    if r == 0 or n == 0:
        return 0.0
    if n == 1:
        return 1.0
    harmonic = math.fsum(1.0 / i for i in range(1, n + 1))
    return (r - 1) / (n - 1) + (n - r) * harmonic / (n * (n - 1))


def random_lrap(y) -> float:
    """Expected label ranking average precision of uniformly random label scores for 0/1 matrix y."""
    y = np.asarray(y)
    if y.ndim != 2 or not len(y) or not y.shape[1]:
        raise DataError(
            f"label matrix of shape {y.shape}: random LRAP needs one row per clip and a column per label, at least one of each"
        )
    n_labels = y.shape[1]
    return float(np.mean([1.0 if r in (0, n_labels) else random_ap(n_labels, int(r)) for r in y.sum(axis=1)]))


def _lrap_rows(y, scores, relative: float) -> list[float]:
    y, scores = np.asarray(y), np.asarray(scores, dtype=float)
    out = []
    for row, s in zip(y, scores):
        r = int(row.sum())
        out.append(1.0 if r in (0, len(row)) else ties.average_precision_range(s, row, relative)["expected"])
    return out


def expected_lrap(y, scores, relative: float = ties.RELATIVE_TOLERANCE) -> float:
    """Label ranking average precision expected over the orders of each clip's tied label scores
    (without ties: sklearn's label_ranking_average_precision_score)."""
    return float(np.mean(_lrap_rows(y, scores, relative)))


def prior_lrap(y, prior) -> float:
    """Label ranking average precision of every clip scored with `prior` (e.g. training label
    frequencies), expected over the orders of labels whose prior ties (exactly equal)."""
    y = np.asarray(y)
    return expected_lrap(y, np.tile(np.asarray(prior, dtype=float), (len(y), 1)), relative=0.0)


def ranking_key(key: str):
    """The chance and prior functions of one retrieval metric (ties' key, e.g. "NDCG"), on tie
    groups given as (items, relevant items, gain sum)."""

    def expected(groups, ideal, k: int) -> float:
        return ties.expected_of_sizes(groups, ideal, [k])[f"{key}@{k}"]

    def chance(n: int, gains, ideal, k: int) -> float:
        # n documents in the pool, `gains` those of its relevant ones: one group in every order
        return expected([(n, len(gains), sum(gains))], ideal, k)

    return chance, expected
