"""Retrieval (mteb Any2AnyRetrieval: audio-to-audio, text-to-audio, audio-to-text).

Queries and corpus items are AudioRefs or texts; documents are ranked by the model's similarity
and the top `top_k` kept. Metrics follow trec_eval as pytrec_eval computes them (ties broken by
document id, descending), rounded to 5 places as mteb does: ndcg_at_k, map_at_k, recall_at_k,
precision_at_k, hit_rate_at_k (older result files call it cv_recall_at_k), mrr_at_k, accuracy."""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Iterator, Mapping

import numpy as np

from ..audio.pipeline import AudioRef
from ..core.errors import DataError
from ..core.taskspec import TaskSpec
from ..data.sources import RetrievalData
from ..metrics import ties
from ..metrics.registry import tie_aware_of
from ..metrics.similarity import prepared, row_blocks, scores, similarity_matrix
from .base import Embeddings, Evaluation, Param, RetrievalSplits, TaskState, TaskType

K_VALUES = [1, 3, 5, 10, 20, 100, 1000]


def embed_items(items: list, emb) -> tuple[np.ndarray, np.ndarray]:
    """Embed a mixed list of AudioRefs and texts; returns vectors and the decodable mask."""
    audio_idx = [i for i, v in enumerate(items) if isinstance(v, AudioRef)]
    text_idx = [i for i, v in enumerate(items) if not isinstance(v, AudioRef)]
    parts, ok = {}, np.ones(len(items), dtype=bool)
    if audio_idx:
        vecs, good = emb.audio([items[i] for i in audio_idx])
        parts["audio"] = (audio_idx, vecs)
        ok[audio_idx] = good
    if text_idx:
        parts["text"] = (text_idx, emb.text([str(items[i]) for i in text_idx]))
    if len(parts) == 1:  # one side in item order: its vectors as they are (no second copy of a large set)
        return np.asarray(next(iter(parts.values()))[1], dtype=np.float32), ok
    dim = next(iter(parts.values()))[1].shape[1] if parts else 0
    out = np.zeros((len(items), dim), dtype=np.float32)
    for idx, vecs in parts.values():
        out[idx] = vecs
    return out, ok


CORPUS_CHUNK = 50_000  # mteb's corpus_chunk_size: documents scored per step
# Bound on one block of query-document scores (float32, with its topk values and indices) held at
# a time: a corpus chunk of 50,000 documents is scored 1,250 queries at a time (about 256 MiB)
# rather than all queries at once as mteb does (50,000 queries: 10 GB). Blocks are cut so that
# every score keeps mteb's bits (see similarity.row_blocks); a search that fits is one block,
# mteb's own product.
SCORE_BLOCK_BYTES = 256 * 2**20
LIST_ROWS = 256  # topk rows turned into Python lists at a time (a row of 1,001 pairs: about 70 kB)


def search(data: RetrievalData, emb, top_k: int, block_bytes: int = SCORE_BLOCK_BYTES) -> dict[str, dict[str, float]]:
    """Each query's top_k documents with their scores, chosen as mteb chooses them: torch.topk of
    top_k + 1 per corpus chunk, then the top_k largest (score, document id) pairs, so ties at the
    cut go to the larger id."""
    return dict(iter_search(data, emb, top_k, block_bytes))


def iter_search(
    data: RetrievalData, emb, top_k: int, block_bytes: int = SCORE_BLOCK_BYTES, clips_out: list | None = None
) -> Iterator[tuple[str, dict[str, float]]]:
    """`search`'s (query id, {document id: score}) items in query order; with unique ids and one
    corpus chunk only a block's results are alive at a time, so a caller that scores each query as
    it comes holds n_queries x top_k scores nowhere (50,000 x 1,000 as dicts: about 7 GB).
    clips_out, if given, receives the audio items' (clips, vectors) of queries and corpus (for the
    ties record: clips that share one vector)."""
    q, q_ok = embed_items([item for _, item in data.queries], emb)
    d, d_ok = embed_items([item for _, item in data.corpus], emb)
    if clips_out is not None:
        for items, vectors, ok in ((data.queries, q, q_ok), (data.corpus, d, d_ok)):
            rows = [i for i, (_, item) in enumerate(items) if isinstance(item, AudioRef) and ok[i]]
            clips_out.append(([items[i][1] for i in rows], vectors[rows]))
    qids = [i for (i, _), k in zip(data.queries, q_ok) if k]
    dids = [i for (i, _), k in zip(data.corpus, d_ok) if k]
    q, d = (q, d) if q_ok.all() and d_ok.all() else (q[q_ok], d[d_ok])
    if data.candidates is not None:
        return iter(_rerank(qids, q, dids, d, data.candidates, emb.similarity).items())
    if data.has_repeated_ids or len(dids) > CORPUS_CHUNK:
        return iter(_heap_search(qids, q, dids, d, top_k, emb.similarity, block_bytes).items())
    return _top_search(qids, q, dids, d, top_k, emb.similarity, block_bytes)


def _top_search(qids, q, dids, d, top_k, similarity, block_bytes) -> Iterator[tuple[str, dict[str, float]]]:
    """One corpus chunk and unique ids: the heap of mteb's search keeps the top_k + 1 candidates
    but their smallest (score, id) pair, which is found directly."""
    import torch

    qs, ds = prepared(q, similarity), prepared(d, similarity)
    del q, d  # cosine: the unit rows are all that is needed from here on
    take = min(top_k + 1, len(dids))
    for start, stop in row_blocks(len(qids), _row_bytes(len(dids), take), block_bytes):
        values, index = torch.topk(scores(qs[start:stop], ds, similarity), take, dim=1, largest=True)
        for lo in range(0, stop - start, LIST_ROWS):
            found, picks = values[lo : lo + LIST_ROWS].tolist(), index[lo : lo + LIST_ROWS].tolist()
            for row in range(len(found)):
                pairs = list(zip(found[row], (dids[j] for j in picks[row])))
                if len(pairs) > top_k:
                    pairs.remove(min(pairs))
                yield qids[start + lo + row], {doc: score for score, doc in pairs}


def _row_bytes(n_docs: int, take: int) -> int:
    """What one query row of a block holds: its float32 scores and its topk values and indices."""
    return 4 * n_docs + 12 * take


def _rerank(qids, q, dids, d, candidates, similarity) -> dict[str, dict[str, float]]:
    """Each query's candidates scored; a query without candidates keeps an empty result (and
    scores 0, as in mteb)."""
    position = {doc: j for j, doc in enumerate(dids)}
    results: dict[str, dict[str, float]] = {}
    for row, qid in enumerate(qids):
        cand = [c for c in candidates.get(qid, []) if c in position]
        results[qid] = {}
        if cand:
            scored = similarity_matrix(q[row : row + 1], d[[position[c] for c in cand]], similarity)[0]
            results[qid] = {c: float(s) for c, s in zip(cand, scored)}
    return results


def _heap_search(qids, q, dids, d, top_k, similarity, block_bytes) -> dict[str, dict[str, float]]:
    """mteb's search step by step, for repeated ids and corpora of several chunks: per corpus chunk,
    every query row pushes its torch.topk(top_k + 1) (score, doc id) pairs into one bounded heap per
    query id; the heap's items then become {doc id: score} in heap order, so a repeated document id
    keeps the score of its last item there."""
    import torch

    qs = prepared(q, similarity)
    heaps: dict[str, list] = {qid: [] for qid in qids}
    for chunk in range(0, len(dids), CORPUS_CHUNK):
        part, part_ids = prepared(d[chunk : chunk + CORPUS_CHUNK], similarity), dids[chunk : chunk + CORPUS_CHUNK]
        take = min(top_k + 1, len(part_ids))
        for start, stop in row_blocks(len(qids), _row_bytes(len(part_ids), take), block_bytes):
            values, index = torch.topk(scores(qs[start:stop], part, similarity), take, dim=1, largest=True)
            for row, (found, picks) in enumerate(zip(values.tolist(), index.tolist())):
                heap = heaps[qids[start + row]]
                for score, j in zip(found, picks):
                    item = (score, part_ids[j])
                    if len(heap) < top_k:
                        heapq.heappush(heap, item)
                    else:
                        heapq.heappushpop(heap, item)
    return {qid: {doc: score for score, doc in heap} for qid, heap in heaps.items()}


def _ranked(scores: dict[str, float]) -> list[str]:
    return [doc for doc, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def query_metrics(ranking: list[str], judged: dict[str, int], k_values) -> dict[str, float]:
    """trec_eval's ndcg_cut, map_cut, recall, P and success for one query (as pytrec_eval computes
    them: judged-but-irrelevant documents have gain 0; a query without a relevant document scores
    0 everywhere) and mteb's MRR."""
    relevant = {d for d, r in judged.items() if r > 0}
    gains = sorted((r for r in judged.values() if r > 0), reverse=True)
    hits = [doc in relevant for doc in ranking]
    first_hit = next((i for i, h in enumerate(hits) if h), None)
    out = {}
    for k in k_values:
        top = hits[:k]
        found = sum(top)
        dcg = sum(judged[ranking[i]] / math.log2(i + 2) for i in range(len(top)) if top[i])
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))
        precisions = [sum(top[: i + 1]) / (i + 1) for i in range(len(top)) if top[i]]
        out[f"NDCG@{k}"] = dcg / idcg if idcg else 0.0
        out[f"MAP@{k}"] = sum(precisions) / len(relevant) if relevant else 0.0
        out[f"Recall@{k}"] = found / len(relevant) if relevant else 0.0
        out[f"P@{k}"] = found / k
        out[f"HitRate@{k}"] = 1.0 if found else 0.0
        out[f"MRR@{k}"] = 1.0 / (first_hit + 1) if first_hit is not None and first_hit < k else 0.0
    return out


ABSTENTION_RATES = np.linspace(0, 1, 11)[:-1]


def _confidence(scores: list[float]) -> dict[str, float]:
    """Per-query confidence for the abstention curves: best score, spread, margin to the second."""
    if not scores:
        return {"max": 0.0, "std": 0.0, "diff1": 0.0}
    ordered = sorted(scores, reverse=True)
    return {"max": ordered[0], "std": float(np.std(scores)), "diff1": ordered[0] - ordered[1] if len(ordered) > 1 else 0.0}


def _abstention_curve(confidence: np.ndarray, metric: np.ndarray) -> np.ndarray:
    """Mean metric of the queries kept when the least confident share is abstained on; tied
    confidences count with their group's mean (independent of query order)."""
    if confidence.size == 0:
        return np.full(len(ABSTENTION_RATES), np.nan)
    order = np.argsort(confidence, kind="stable")
    conf, values = confidence[order], metric[order]
    starts = np.flatnonzero(np.r_[True, conf[1:] != conf[:-1]])
    sizes = np.diff(np.r_[starts, len(conf)])
    values = np.repeat(np.add.reduceat(values, starts) / sizes, sizes)
    curve = np.zeros(len(ABSTENTION_RATES))
    for i, rate in enumerate(ABSTENTION_RATES):
        curve[i] = values[min(round(rate * len(conf)), len(conf) - 1) :].mean()
    return curve


def nauc(confidence: np.ndarray, metric: np.ndarray) -> float:
    """Normalised area under the abstention curve (Gisserot-Boukhlef et al. 2024), as mteb
    reports it: 0 for abstention no better than none, 1 for the oracle; NaN when they coincide."""
    from sklearn.metrics import auc

    raw = auc(ABSTENTION_RATES, _abstention_curve(confidence, metric))
    oracle_curve = _abstention_curve(metric, metric)
    oracle = auc(ABSTENTION_RATES, oracle_curve)
    flat = oracle_curve[0] * (ABSTENTION_RATES[-1] - ABSTENTION_RATES[0])
    return float("nan") if oracle == flat else float((raw - flat) / (oracle - flat))


def retrieval_metrics(
    results: Mapping[str, dict[str, float]] | Iterable[tuple[str, dict[str, float]]],
    qrels: dict[str, dict[str, int]],
    k_values,
    per_query_out: list | None = None,
    expected: bool = False,
    relative: float = ties.RELATIVE_TOLERANCE,
    ties_out: dict | None = None,
) -> dict:
    """Scores of every query in `results` (mteb keeps each query that has a qrels entry, with or
    without a relevant document or a result), averaged; ndcg/map/recall/precision/hit rate rounded
    to 5 places as mteb rounds them, MRR unrounded, plus the nAUC of each metric under three
    confidence functions. `results` may be (query id, scores) items with unique ids, as
    `iter_search` yields them: each query is reduced to its metrics as it comes. per_query_out,
    if given, receives (query id, its metrics) in order.

    Tied scores (maeb.metrics.ties, within `relative` x a query's largest |score|): with expected,
    each query's metrics are their expected values over every order of its tied documents (equal
    to trec_eval's to the bit where nothing ties); ties_out, if given, receives each query's metrics
    in the worst and the best tie order ("low", "high") and its tie groups' sizes ("sizes")."""
    items = results.items() if isinstance(results, Mapping) else results
    per_query, confidence = [], []
    for qid, docs in items:
        if qid in qrels:
            groups = ties.ranked_groups(docs, qrels[qid], relative) if expected or ties_out is not None else []
            if expected:
                per_query.append(tie_aware_of("ndcg_at_k")(groups, ties.ideal_gains(qrels[qid]), k_values))
            else:
                per_query.append(query_metrics(_ranked(docs), qrels[qid], k_values))
            if ties_out is not None:
                tied = ties.has_ties(groups)
                for side, best in (("low", False), ("high", True)):
                    bound = ties.ordered_metrics(groups, ties.ideal_gains(qrels[qid]), k_values, best) if tied else per_query[-1]
                    ties_out.setdefault(side, []).append(bound)
                ties_out.setdefault("sizes", []).append([len(g) for g in groups])
            confidence.append(_confidence(list(docs.values())))
            if per_query_out is not None:
                per_query_out.append((qid, per_query[-1]))
    if not per_query:
        raise DataError("no query has a qrels entry and a decodable clip; check qrels and ids")
    out: dict[str, float] = {}
    names = {"NDCG": "ndcg", "MAP": "map", "Recall": "recall", "P": "precision", "HitRate": "hit_rate", "MRR": "mrr"}
    for short, name in names.items():
        for k in k_values:
            out[f"{name}_at_{k}"] = mean_metric(per_query, short, k)
    out["accuracy"] = out[f"recall_at_{k_values[0]}"]
    for short, name in names.items():
        if short == "HitRate":
            continue
        for k in k_values:
            metric = np.array([m[f"{short}@{k}"] for m in per_query])
            for fct in ("max", "std", "diff1"):
                out[f"nauc_{name}_at_{k}_{fct}"] = nauc(np.array([c[fct] for c in confidence]), metric)
    return out


def mean_metric(per_query: list[dict], short: str, k: int) -> float:
    """A metric's mean over queries as mteb reports it: rounded to 5 places, MRR unrounded."""
    mean = sum(m[f"{short}@{k}"] for m in per_query) / len(per_query)
    return mean if short == "MRR" else round(mean, 5)


def _ties_record(main_score: str, clips: list, bounds: dict, relative: float, k_values, expected: bool) -> dict:
    """The split's ties record (maeb.metrics.ties.record): the main score's range over tie orders
    when it is a mean over queries, and the share of queries with ties in its top k (k of the main
    score, else the first cut-off) and anywhere in their list."""
    refs = [ref for part, _ in clips for ref in part]
    vectors = np.concatenate([v for _, v in clips]) if clips else np.zeros((0, 0), np.float32)
    name, _, k = main_score.rpartition("_at_")
    short = (
        _SHORT.get(name) if k.isdigit() else ("Recall" if main_score == "accuracy" else None)
    )  # accuracy: recall at the first k
    cut = int(k) if short and k.isdigit() else k_values[0]
    sizes = bounds.get("sizes", [])
    n = len(sizes)
    main_range = None
    if short and n and f"{short}@{cut}" in bounds["low"][0]:
        main_range = (mean_metric(bounds["low"], short, cut), mean_metric(bounds["high"], short, cut))
    tied_topk = sum(ties.tied_within([[0] * s for s in q], cut) for q in sizes) / n if n else 0.0
    tied_any = sum(any(s > 1 for s in q) for q in sizes) / n if n else 0.0
    return ties.record(ties.distinct_clips(refs, vectors), n, main_range, relative, tied_topk, tied_any, cut, expected)


_SHORT = {"ndcg": "NDCG", "map": "MAP", "recall": "Recall", "precision": "P", "hit_rate": "HitRate", "mrr": "MRR"}


def _report_outcomes(emb, main_score: str, data: RetrievalData, per_query: list) -> None:
    """Each query's main metric, filed under its clip (an audio query) or its most relevant
    recording (a text query), for maeb.analysis.durations; nothing for a main score that is no mean over queries."""
    name, _, k = main_score.rpartition("_at_")
    key = f"{_SHORT[name]}@{k}" if name in _SHORT and k.isdigit() else None
    if key is None:
        return
    queries, corpus = dict(data.queries), dict(reversed(data.corpus))  # the first of a repeated id, as mteb
    refs, values = [], []
    for qid, m in per_query:
        clip = queries.get(qid)
        if not isinstance(clip, AudioRef):
            best = max(data.qrels.get(qid, {}).items(), key=lambda kv: kv[1], default=(None, 0))[0]
            clip = corpus.get(best) if best is not None else None
        if isinstance(clip, AudioRef) and key in m:
            refs.append(clip)
            values.append(m[key])
    if refs:
        emb.record.outcome(main_score, refs, values)


def _adjusted(qid: str, docs: dict[str, float], p) -> tuple[str, dict[str, float]]:
    """One query's results after the protocol's two corrections for a query found in its own pool."""
    if p["ignore_identical_ids"]:
        docs.pop(qid, None)
    if p["skip_first_result"]:
        docs = dict(sorted(docs.items(), key=lambda x: x[1], reverse=True)[1:])
    return qid, docs


class Retrieval(TaskType[RetrievalData]):
    """The retrieval task type (the module's docstring says what it scores and how)."""

    NAME = "retrieval"
    MAIN_SCORE = "hit_rate_at_5"
    SPLIT = RetrievalData
    PARAMS = {
        "k_values": Param(K_VALUES, "cut-offs of every metric", items=int, min=1),
        "top_k": Param(1000, "documents kept per query", min=1),
        "ignore_identical_ids": Param(False, "a document with the query's id is not a result (audio-to-audio on one pool)"),
        "skip_first_result": Param(False, "drop each query's best result (it is the query itself)"),
    }

    def metrics(self, spec: TaskSpec) -> tuple[str, ...]:
        """The metric names a retrieval result holds for the spec's k values."""
        ks = spec.protocol.get("k_values", K_VALUES)
        names = [f"{m}_at_{k}" for m in ("ndcg", "map", "recall", "precision", "mrr", "hit_rate") for k in ks]
        names += [
            f"nauc_{m}_at_{k}_{f}"
            for m in ("ndcg", "map", "recall", "precision", "mrr")
            for k in ks
            for f in ("max", "std", "diff1")
        ]
        return ("accuracy", *names)

    def needs(self, spec: TaskSpec) -> set[str]:
        """The sides of the model the type uses: audio, and text when queries or documents are texts."""
        sides = {"audio"}
        if spec.category in ("t2a", "a2t") or spec.derive.get("kind") in ("text_to_audio", "audio_to_text"):
            sides.add("text")
        return sides

    def evaluate(self, data: RetrievalSplits, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split`: embed queries and corpus, rank the corpus by similarity per query (or its candidates) and compute the
        trec_eval metrics (under a tie-aware protocol, their expected values over tie orders), with the ties record."""
        p = spec.protocol
        split_data = data[split]
        self.check_split(spec, split, split_data)  # a plain table given directly (the runner checks before)
        # mteb keeps every query with a qrels entry, even one without a relevant document (it scores 0)
        qrels = {q: docs for q, docs in split_data.qrels.items() if docs}
        queries = [(q, v) for q, v in split_data.queries if q in qrels]
        split_data = RetrievalData(split_data.corpus, queries, qrels, split_data.candidates)
        clips: list = []
        results = iter_search(split_data, emb, p["top_k"], clips_out=clips)
        per_query: list = []
        expected, relative = ties.protocol_ties(getattr(emb, "protocol", None))
        bounds: dict = {}
        adjusted = (_adjusted(qid, docs, p) for qid, docs in results)
        out = retrieval_metrics(adjusted, qrels, p["k_values"], per_query, expected, relative, bounds)
        main = spec.main_score or self.MAIN_SCORE  # a parsed spec always names one
        _report_outcomes(emb, main, split_data, per_query)
        return Evaluation(out, ties=_ties_record(main, clips, bounds, relative, p["k_values"], expected))
