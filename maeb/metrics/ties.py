"""Tied scores: how much a score depends on the order of items whose scores tie, and its expected
value over all those orders (McSherry and Najork, ECIR 2008: computing IR measures in the presence of
tied scores).

A tie is defined with a relative tolerance: two scores of one list tie when they differ by at most
`relative` x the largest |score| of the list (default 1e-6), because scores that tie exactly on one
CPU differ in the last bits on another and then fall in another order. A group starts at its
highest score and holds every following score within the tolerance of that one (no chaining).

Everything here is a pure function of scores and labels. With no ties (every group one item), the
expected values are computed with the very operations of maeb.tasktypes.retrieval.query_metrics, so
they are bit-equal to it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import comb

import numpy as np

RELATIVE_TOLERANCE = 1e-6  # the default; results state the tolerance they used


def tolerance(scores: Sequence[float], relative: float = RELATIVE_TOLERANCE) -> float:
    """The absolute tolerance of one list: relative x its largest finite |score| (0 for an empty
    list). Finite only: one inf score would make every other score of the list tie."""
    return float(relative * max((abs(s) for s in scores if math.isfinite(s)), default=0.0))


def group_sizes(ordered: Sequence[float], tol: float) -> list[int]:
    """Sizes of the tie groups of scores already sorted in descending order: a group holds every
    score within `tol` of its first (highest) score."""
    sizes: list[int] = []
    top = None
    for score in ordered:
        if top is not None and top - score <= tol:
            sizes[-1] += 1
        else:
            top = score
            sizes.append(1)
    return sizes


def ranked_groups(docs: dict[str, float], judged: dict[str, int], relative: float = RELATIVE_TOLERANCE) -> list[list[int]]:
    """One query's retrieved documents as tie groups of gains, best group first: the order of
    retrieval's ranking (score, then document id, descending), the gain a document's relevance
    when positive, else 0."""
    ranked = sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)
    sizes = group_sizes([s for _, s in ranked], tolerance(list(docs.values()), relative))
    gains = [max(int(judged.get(doc, 0)), 0) for doc, _ in ranked]
    groups, start = [], 0
    for n in sizes:
        groups.append(gains[start : start + n])
        start += n
    return groups


def ideal_gains(judged: dict[str, int]) -> list[int]:
    """The relevant documents' gains, largest first (the ideal ranking of NDCG; its length is R)."""
    return sorted((r for r in judged.values() if r > 0), reverse=True)


def expected_metrics(groups: list[list[int]], ideal: list[int], k_values) -> dict[str, float]:
    """NDCG, MAP, recall, precision, hit rate and MRR at each k (retrieval.query_metrics' keys and
    conventions: trec_eval's, MAP over all R relevant documents) as expected values over every order
    of the items inside each tie group, in closed form (expected_of_sizes, on each group's size,
    relevant count and gain sum)."""
    return expected_of_sizes([(len(g), sum(1 for x in g if x > 0), sum(g)) for g in groups], ideal, k_values)


def _check_sizes(groups, k_values) -> None:
    """Refuse what has no expectation: a cut-off below 1 (a division by zero), a group of more relevant
    items than items, or negative counts or gains (values above 1 otherwise, silently)."""
    from ..core.errors import DataError

    for k in k_values:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise DataError(f"ranking cut-off k={k!r}: it must be a whole number of documents, 1 or more")
    for n, r, g in groups:
        if not 0 <= r <= n or g < 0:
            raise DataError(
                f"tie group ({n} documents, {r} relevant, gain sum {g}): needs 0 <= relevant <= documents and gains >= 0"
            )


def expected_of_sizes(groups: Sequence[tuple[int, int, int | float]], ideal: list[int], k_values) -> dict[str, float]:
    """expected_metrics of groups given as (items, relevant items, gain sum), best group first: the
    expectation depends on nothing else, so a pool of thousands of documents in random order is one
    group (n, r, G) and costs k steps, not n. A position of a group of n items holding r relevant
    ones with gains summing to G is relevant with probability r/n and has expected gain G/n; given
    that it is relevant, the j positions before it in its group hold (r-1) j / (n-1) relevant ones
    on average (McSherry and Najork)."""
    n_rel = len(ideal)
    out: dict[str, float] = {}
    _check_sizes(groups, k_values)
    for k in k_values:
        dcg, found, ap_sum, mrr, no_hit = 0.0, 0, 0.0, 0.0, 1.0
        pos, before = 0, 0  # items and relevant items in the groups before this one
        for n, r, g in groups:
            if pos >= k:
                break
            m = min(k, pos + n) - pos  # positions of the group inside the cut-off
            if n == 1:  # query_metrics' own operations, for bit-equality without ties
                if r:
                    dcg += g / math.log2(pos + 2)
                    found += 1
                    ap_sum += (before + 1) / (pos + 1)
                    if before == 0:
                        mrr = 1.0 / (pos + 1)
                    no_hit = 0.0
            elif r:
                for j in range(m):
                    dcg += (g / n) / math.log2(pos + j + 2)
                    ap_sum += (r / n) * ((before + 1 + j * (r - 1) / (n - 1)) / (pos + j + 1))
                    if before == 0 and j <= n - r:  # the first relevant item of the list lies at j
                        mrr += comb(n - j - 1, r - 1) / comb(n, r) / (pos + j + 1)
                found += r * m / n
                no_hit *= comb(n - r, m) / comb(n, m)
            pos, before = pos + n, before + r
        idcg = sum(x / math.log2(i + 2) for i, x in enumerate(ideal[:k]))
        out[f"NDCG@{k}"] = dcg / idcg if idcg else 0.0
        out[f"MAP@{k}"] = ap_sum / n_rel if n_rel else 0.0
        out[f"Recall@{k}"] = found / n_rel if n_rel else 0.0
        out[f"P@{k}"] = found / k
        out[f"HitRate@{k}"] = 1.0 - no_hit
        out[f"MRR@{k}"] = mrr
    return out


def ordered_metrics(groups: list[list[int]], ideal: list[int], k_values, best: bool) -> dict[str, float]:
    """The metrics of one order of the tied items: the best one (inside each group, larger gains
    first) or the worst one (smaller gains first). Every metric here only grows when a larger gain
    moves up, so these two orders bound every order's value of every metric at once."""
    ordered = [[x] for group in groups for x in sorted(group, reverse=best)]
    return expected_metrics(ordered, ideal, k_values)


def has_ties(groups: list[list[int]]) -> bool:
    """Whether any group holds more than one item."""
    return any(len(g) > 1 for g in groups)


def tied_within(groups: list[list], k: int) -> bool:
    """Whether a group of two or more items starts inside the top k (a tie that decides what the top k holds or its order)."""
    pos = 0
    for group in groups:
        if pos >= k:
            return False
        if len(group) > 1:
            return True
        pos += len(group)
    return False


def argmax_ties(scores: np.ndarray, labels: np.ndarray, relative: float = RELATIVE_TOLERANCE) -> dict:
    """Zero-shot argmax with tied best classes: per row (clip), the classes within the row's
    tolerance of its best score tie. Returns the expected accuracy when a tie is split uniformly
    (1/|tied| for a clip whose class is among them), the worst and best accuracy over tie orders, and
    the share of rows with a tied best class."""
    scores = np.asarray(scores, dtype=np.float64)
    n = len(scores)
    if n == 0:
        return {"expected": 0.0, "low": 0.0, "high": 0.0, "tied_share": 0.0}
    # a NaN score is never the best class (NaN compares false and made the expected value NaN), and
    # the tolerance comes from finite scores only (an inf would make a whole row tie)
    scores = np.where(np.isnan(scores), -np.inf, scores)
    tol = relative * np.where(np.isfinite(scores), np.abs(scores), 0.0).max(axis=1, keepdims=True)
    tied = scores >= scores.max(axis=1, keepdims=True) - tol
    size = tied.sum(axis=1)
    hit = tied[np.arange(n), np.asarray(labels, dtype=int)]
    return {
        "expected": float((hit / size).sum() / n),
        "low": float((hit & (size == 1)).sum() / n),
        "high": float(hit.sum() / n),
        "tied_share": float((size > 1).sum() / n),
    }


def average_precision_range(scores: np.ndarray, labels: np.ndarray, relative: float = RELATIVE_TOLERANCE) -> dict:
    """Average precision of 0/1 labels ranked by descending score over the orders of tied scores
    (one list: the tolerance is relative x the largest |score|): expected, worst and best, and the
    share of items in a tie group of two or more."""
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    ordered, gains = scores[order], np.asarray(labels, dtype=int)[order]
    sizes = group_sizes(ordered.tolist(), tolerance(ordered.tolist(), relative))
    groups, start = [], 0
    for n in sizes:
        groups.append([int(x > 0) for x in gains[start : start + n]])
        start += n
    ideal = [1] * int((gains > 0).sum())
    k = [max(len(scores), 1)]
    key = f"MAP@{k[0]}"
    return {
        "expected": expected_metrics(groups, ideal, k)[key],
        "low": ordered_metrics(groups, ideal, k, best=False)[key],
        "high": ordered_metrics(groups, ideal, k, best=True)[key],
        "tied_share": float(sum(n for n in sizes if n > 1) / max(len(scores), 1)),
    }


def identical_vectors(vectors: np.ndarray) -> dict:
    """How many rows share their exact vector with another row, how many distinct vectors there are,
    and the largest number of rows sharing one."""
    x = np.ascontiguousarray(np.asarray(vectors))
    if len(x) == 0:
        return {"identical_vector_clips": 0, "distinct_vectors": 0, "largest_shared": 0}
    _, counts = np.unique(x.reshape(len(x), -1), axis=0, return_counts=True)
    return {
        "identical_vector_clips": int(counts[counts > 1].sum()),
        "distinct_vectors": int(len(counts)),
        "largest_shared": int(counts.max()),
    }


EXPECTED = "expected-over-tie-orders"  # a protocol's `ranks` when rank metrics are expected values


def protocol_ties(protocol) -> tuple[bool, float]:
    """(rank metrics as expected values over tie orders?, relative tolerance) of a run's protocol
    (maeb.encoders.protocols.Protocol: its `ranks` and `tie_tolerance`; anything else: the defaults)."""
    return getattr(protocol, "ranks", "") == EXPECTED, float(getattr(protocol, "tie_tolerance", RELATIVE_TOLERANCE))


def distinct_clips(refs: Sequence, vectors: np.ndarray) -> np.ndarray:
    """The rows of `vectors` of distinct clips (a clip used twice, as a query and a document or in
    two pairs, counts once; clips are told apart by their content key, texts by themselves)."""
    seen: dict = {}
    for i, ref in enumerate(refs):
        seen.setdefault(getattr(ref, "key", ref), i)
    return np.asarray(vectors)[sorted(seen.values())]


def record(
    clip_vectors: np.ndarray,
    n_items: int,
    main_range: tuple[float, float] | None,
    relative: float,
    tied_topk: float | None = None,
    tied_candidates: float | None = None,
    topk: int | None = None,
    expected: bool = False,
) -> dict:
    """One split and subset's ties record (a result's maeb.ties): clips sharing a vector, the share
    of queries (clips, for zero-shot) with tied scores in the top k and anywhere in their list, the
    range of the main score over tie orders, and whether that range exceeds one item's share of the
    score (1 / n_items: one query, clip or pair more or less right), which is when a run warns.
    expected: the score is the expected value over tie orders (the tie-aware protocol), so it
    depends on no order; the range is still recorded."""
    share = 1.0 / n_items if n_items else 1.0
    return {
        **identical_vectors(clip_vectors),
        "tolerance": relative,
        "tolerance_rule": "scores of one list tie within tolerance x the list's largest |score|",
        "topk": topk,
        "share_queries_tied_topk": tied_topk,
        "share_queries_tied_candidates": tied_candidates,
        "main_score_range": None if main_range is None else [float(main_range[0]), float(main_range[1])],
        "item_share": share,
        "ranks": EXPECTED if expected else "first-found",
        "depends_on_tie_order": not expected and main_range is not None and main_range[1] - main_range[0] > share,
    }


def warning(rec: dict, model: str, task: str) -> str | None:
    """The one line a run warns with when a main score depends on tie order by more than one
    item's share (None otherwise), naming the model and the task."""
    if not rec.get("depends_on_tie_order"):
        return None
    low, high = rec["main_score_range"]
    shared = rec.get("largest_shared", 0)
    why = f"{shared} clips share one vector" if shared > 1 else "scores tie within the tolerance"
    return (
        f"{why}; {task} depends on the order of tied candidates by up to {100 * (high - low):.1f} points "
        f"(model {model}: main score between {low:.4f} and {high:.4f} over tie orders)"
    )
