"""The blocked retrieval search keeps every score and rank of the unblocked one (mteb's single
product per corpus chunk), ties included, while holding one bounded score block at a time."""

from __future__ import annotations

import heapq

import numpy as np
import pytest
import torch

from maeb.audio.pipeline import AudioRef
from maeb.data.sources import RetrievalData
from maeb.metrics.similarity import row_blocks
from maeb.tasktypes import retrieval

ONE_BLOCK = 1 << 62  # a budget every test search fits in: mteb's own shape


class Given:
    """An embedder handing back fixed vectors (rows named by the AudioRef's key)."""

    def __init__(self, vectors: np.ndarray, similarity: str):
        self.vectors, self.similarity = vectors, similarity

    def audio(self, refs):
        return self.vectors[[int(r.name) for r in refs]], np.ones(len(refs), dtype=bool)


def _data(n_queries: int, n_docs: int, rng, repeated: bool = False) -> RetrievalData:
    refs = [AudioRef(str(i), path=str(i)) for i in range(n_queries + n_docs)]
    queries = [(f"q{i}", refs[i]) for i in range(n_queries)]
    corpus = [(f"d{j // 2 if repeated else j}", refs[n_queries + j]) for j in range(n_docs)]
    qrels = {f"q{i}": {f"d{int(rng.integers(0, n_docs // 2 if repeated else n_docs))}": 1} for i in range(n_queries)}
    return RetrievalData(corpus, queries, qrels, None)


def _vectors(n: int, dim: int, rng) -> np.ndarray:
    """Gaussian rows (whose sums round differently in another summation order), repeated rows and
    rows of few distinct values, so many scores tie (inside and at the top-k cut)."""
    x = rng.standard_normal((n, dim), dtype=np.float32)
    x[2::5] = rng.integers(-2, 3, size=x[2::5].shape)
    x[1::7] = x[0]  # identical documents: exactly tied scores
    x[5:6] = 0.0  # a zero vector (cosine of 0 for every pair)
    return x


def _mteb_search(q, d, qids, dids, top_k, kind):
    """mteb 2.26.24's chunked_full_corpus_search for one corpus chunk: the full (queries x chunk)
    product, torch.topk(top_k + 1), then one bounded heap per query."""
    from mteb.similarity_functions import cos_sim, dot_score, euclidean_sim

    fn = {"cosine": cos_sim, "dot": dot_score, "euclidean": euclidean_sim}[kind]
    full = torch.as_tensor(fn(q, d))
    values, index = torch.topk(full, min(top_k + 1, full.shape[1]), dim=1, largest=True)
    heaps = {qid: [] for qid in qids}
    for row, qid in enumerate(qids):
        for j, score in zip(index[row].tolist(), values[row].tolist()):
            item = (score, dids[j])
            (heapq.heappush if len(heaps[qid]) < top_k else heapq.heappushpop)(heaps[qid], item)
    return {qid: {doc: score for score, doc in heap} for qid, heap in heaps.items()}


SHAPES = [(1, 40, 16), (5, 300, 32), (67, 130, 24), (261, 520, 64), (1029, 301, 128), (700, 20, 8)]


@pytest.mark.parametrize("kind", ["cosine", "dot", "euclidean"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_blocked_search_equals_one_product(kind, shape):
    n_queries, n_docs, dim = shape
    rng = np.random.default_rng(n_queries * 31 + n_docs)
    vectors = np.concatenate([_vectors(n_queries, dim, rng), _vectors(n_docs, dim, rng)])
    data, emb = _data(n_queries, n_docs, rng), Given(vectors, kind)
    top_k = max(1, n_docs // 3)  # the cut falls inside groups of tied scores
    whole = retrieval.search(data, emb, top_k, block_bytes=ONE_BLOCK)
    for budget in (1, 4 * n_docs * 100, 4 * n_docs * 333):  # 64-row minimum, about 100 and 333 rows
        blocked = retrieval.search(data, emb, top_k, block_bytes=budget)
        assert [(q, list(r.items())) for q, r in blocked.items()] == [(q, list(r.items())) for q, r in whole.items()]
    qids, dids = [q for q, _ in data.queries], [d for d, _ in data.corpus]
    assert whole == _mteb_search(vectors[:n_queries], vectors[n_queries:], qids, dids, top_k, kind)


@pytest.mark.parametrize("kind", ["cosine", "euclidean"])
def test_heap_search_blocked_equals_one_product(kind, monkeypatch):
    """Repeated document ids and several corpus chunks take the heap path; blocks change nothing."""
    monkeypatch.setattr(retrieval, "CORPUS_CHUNK", 97)
    rng = np.random.default_rng(3)
    vectors = np.concatenate([_vectors(333, 12, rng), _vectors(400, 12, rng)])
    data, emb = _data(333, 400, rng, repeated=True), Given(vectors, kind)
    whole = retrieval.search(data, emb, 50, block_bytes=ONE_BLOCK)
    blocked = retrieval.search(data, emb, 50, block_bytes=1)
    assert [(q, list(r.items())) for q, r in blocked.items()] == [(q, list(r.items())) for q, r in whole.items()]


def test_score_blocks_stay_within_the_budget(monkeypatch):
    shapes = []
    real = retrieval.scores

    def recording(x, y, kind):
        shapes.append((x.shape[0], y.shape[0]))
        return real(x, y, kind)

    monkeypatch.setattr(retrieval, "scores", recording)
    rng = np.random.default_rng(4)
    vectors = np.concatenate([_vectors(1000, 16, rng), _vectors(500, 16, rng)])
    budget = 300_000  # 140 rows of 500 scores and 11 topk pairs
    retrieval.search(_data(1000, 500, rng), Given(vectors, "cosine"), 10, block_bytes=budget)
    assert sum(rows for rows, _ in shapes) == 1000 and len(shapes) == 8
    assert all(rows * (4 * cols + 12 * 11) <= budget for rows, cols in shapes)


def test_row_blocks_cover_evenly():
    for n in (1, 11, 63, 64, 65, 129, 1000, 50_000):
        for budget in (1, 4000 * 64, 4000 * 1342, ONE_BLOCK):
            blocks = row_blocks(n, 4000, budget)
            assert blocks[0][0] == 0 and blocks[-1][1] == n
            assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
            sizes = [stop - start for start, stop in blocks]
            assert max(sizes) - min(sizes) <= 1
            assert len(blocks) == 1 or min(sizes) >= 32  # never a short product (MKL's other kernel)
    assert row_blocks(0, 10, 100) == []
    assert row_blocks(50_000, 4 * 50_000 + 12 * 1001, retrieval.SCORE_BLOCK_BYTES)[0] == (0, 1250)


def test_streamed_metrics_equal_the_dict_metrics():
    rng = np.random.default_rng(5)
    vectors = np.concatenate([_vectors(200, 8, rng), _vectors(300, 8, rng)])
    data, emb = _data(200, 300, rng), Given(vectors, "cosine")
    whole = retrieval.retrieval_metrics(retrieval.search(data, emb, 100), data.qrels, retrieval.K_VALUES)
    streamed = retrieval.retrieval_metrics(retrieval.iter_search(data, emb, 100, block_bytes=1), data.qrels, retrieval.K_VALUES)
    assert list(whole) == list(streamed)
    assert all(whole[k] == streamed[k] or (np.isnan(whole[k]) and np.isnan(streamed[k])) for k in whole)
