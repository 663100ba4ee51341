"""Every evaluator against mteb's own task code on identical embeddings.

The same fixed vectors reach both sides: mteb gets them through an identity model over in-memory
datasets, maeb through a hub-layout folder of float WAVs whose samples are the vectors and an
identity encoder. The scores must agree to rounding."""

from __future__ import annotations

import mteb  # a test dependency: CI installs it, so a missing mteb fails here, never skips
import numpy as np
import pytest
from datasets import Dataset, DatasetDict
from mteb.models.abs_encoder import AbsEncoder

from maeb.data.sampling import iterative_stratified_subset, stratified_subsample
from maeb.encoders import ModelMeta, identity
from maeb.engine.cache import EmbeddingCache
from maeb.engine.embed import Embedder
from maeb.mock import IdentityEncoder, vector_wav, write_hub_repo
from maeb.run.task import evaluate_task
from maeb.spec.taskspec import parse_spec


class MtebIdentity(AbsEncoder):
    def __init__(self, text_vectors=None):
        self.text_vectors = text_vectors or {}

    def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs):
        out = []
        for batch in inputs:
            if "audio" in batch:
                out += [np.asarray(a["array"], dtype=np.float32) for a in batch["audio"]]
            else:
                out += [self.text_vectors[t] for t in batch["text"]]
        return np.stack(out)

    def similarity(self, a, b):
        import torch

        a, b = torch.as_tensor(np.asarray(a)), torch.as_tensor(np.asarray(b))
        return (a / a.norm(dim=1, keepdim=True)) @ (b / b.norm(dim=1, keepdim=True)).T

    def similarity_pairwise(self, a, b):
        import torch

        a, b = torch.as_tensor(np.asarray(a)), torch.as_tensor(np.asarray(b))
        return ((a / a.norm(dim=1, keepdim=True)) * (b / b.norm(dim=1, keepdim=True))).sum(1)


def mteb_audio(vectors):
    return [{"array": v.tolist(), "sampling_rate": 16000} for v in vectors]


def maeb_scores(tmp_path, raw_spec, text_vectors=None):
    spec = parse_spec(raw_spec, "parity spec", base=tmp_path)
    meta = ModelMeta(name="test/identity", family="mock-identity", revision="1", modalities=("audio", "text"))
    encoder = IdentityEncoder(text_vectors=text_vectors)
    emb = Embedder(meta, encoder, EmbeddingCache(tmp_path / "cache", identity(meta, encoder)), batch_size=7, show_progress=False)
    scores, *_ = evaluate_task(spec, emb)
    return scores


def assert_close(ours: dict, theirs: dict, keys=None, tol=1e-6):
    """Every numeric metric mteb reports is in maeb's scores with the same value (NaN where
    mteb's is NaN, null where mteb's is null)."""
    keys = keys or [k for k, v in theirs.items() if isinstance(v, (int, float)) or v is None]
    assert keys
    for key in keys:
        assert key in ours, f"maeb lacks {key}"
        if theirs[key] is None:
            assert ours[key] is None, key
        elif isinstance(theirs[key], float) and np.isnan(theirs[key]):
            assert isinstance(ours[key], float) and np.isnan(ours[key]), key
        else:
            assert ours[key] == pytest.approx(theirs[key], abs=tol), key


def clustered(rng, n, k, dim=6, spread=1.0):
    labels = rng.integers(0, k, n)
    centres = rng.normal(size=(k, dim)) * 2
    return (centres[labels] + spread * rng.normal(size=(n, dim))).astype(np.float32), labels


def test_classification_cross_validation(tmp_path, rng):
    vectors, labels = clustered(rng, 75, 4)
    task = mteb.get_task("BeijingOpera")
    task.dataset = DatasetDict({"train": Dataset.from_dict({"audio": mteb_audio(vectors), "label": labels.tolist()})})
    task.data_loaded = True
    theirs = task.evaluate(MtebIdentity(), split="train", encode_kwargs={"batch_size": 16})["default"]
    repo = write_hub_repo(
        tmp_path / "repo", {"default": {"train": {"audio": [vector_wav(v) for v in vectors], "label": labels.tolist()}}}
    )
    spec = {
        "name": "BeijingOpera",
        "type": "AudioClassification",
        "data": {"source": "hub", "path": str(repo), "eval_splits": ["train"]},
        "protocol": {"cross_validation": True},
    }
    ours = maeb_scores(tmp_path, spec)["train"][0]
    assert_close(ours, theirs)
    for mine, ref in zip(ours["scores_per_experiment"], theirs["scores_per_experiment"]):
        assert mine["accuracy"] == pytest.approx(ref["accuracy"])


def test_classification_with_train_split(tmp_path, rng):
    vectors, labels = clustered(rng, 140, 5, spread=1.5)
    train, test = slice(0, 100), slice(100, 140)
    task = mteb.get_task("CommonLanguageAgeDetection")
    task.dataset = DatasetDict(
        {
            "train": Dataset.from_dict({"audio": mteb_audio(vectors[train]), "age": labels[train].tolist()}),
            "test": Dataset.from_dict({"audio": mteb_audio(vectors[test]), "age": labels[test].tolist()}),
        }
    )
    task.data_loaded = True
    theirs = task.evaluate(MtebIdentity(), split="test", encode_kwargs={"batch_size": 16})["default"]
    repo = write_hub_repo(
        tmp_path / "repo",
        {
            "default": {
                "train": {"audio": [vector_wav(v) for v in vectors[train]], "age": labels[train].tolist()},
                "test": {"audio": [vector_wav(v) for v in vectors[test]], "age": labels[test].tolist()},
            }
        },
    )
    spec = {"name": "Age", "type": "classification", "data": {"source": "hub", "path": str(repo), "label_column": "age"}}
    assert_close(maeb_scores(tmp_path, spec)["test"][0], theirs)


def test_multilabel(tmp_path, rng):
    n_train, n_test, vocab = 90, 45, ["dog", "cat", "car", "rain"]
    base = rng.normal(size=(len(vocab), 6))

    def rows(n):
        sets = [sorted(set(rng.choice(vocab, size=rng.integers(1, 3), replace=True).tolist())) for _ in range(n)]
        vecs = np.stack([base[[vocab.index(s) for s in row]].sum(0) + rng.normal(size=6) * 0.5 for row in sets]).astype(
            np.float32
        )
        return vecs, sets

    (xtr, ytr), (xte, yte) = rows(n_train), rows(n_test)
    task = mteb.get_task("FSD2019Kaggle")
    task.dataset = {
        "curated": DatasetDict(
            {
                "train": Dataset.from_dict({"audio": mteb_audio(xtr), "sound": ytr}),
                "test": Dataset.from_dict({"audio": mteb_audio(xte), "sound": yte}),
            }
        )
    }
    task.hf_subsets = ["curated"]
    task.max_eval_samples = 30  # exercise the iterative-stratification cut of the eval split
    task.data_loaded = True
    theirs = task.evaluate(MtebIdentity(), split="test", encode_kwargs={"batch_size": 16})["curated"]
    repo = write_hub_repo(
        tmp_path / "repo",
        {
            "curated": {
                "train": {"audio": [vector_wav(v) for v in xtr], "sound": ytr},
                "test": {"audio": [vector_wav(v) for v in xte], "sound": yte},
            }
        },
    )
    spec = {
        "name": "FSD",
        "type": "multilabel",
        "data": {"source": "hub", "path": str(repo), "label_column": "sound", "subsets": ["curated"]},
        "protocol": {"max_eval_samples": 30},
    }
    assert_close(maeb_scores(tmp_path, spec)["test"][0], theirs, ["lrap", "accuracy", "f1", "hamming"])


@pytest.mark.slow
def test_clustering(tmp_path, rng):
    vectors, labels = clustered(rng, 120, 3, spread=2.0)
    task = mteb.get_task("CREMA_DClustering")
    task.dataset = {
        "default": DatasetDict({"train": Dataset.from_dict({"audio": mteb_audio(vectors), "label": labels.tolist()})})
    }
    task.data_loaded = True
    theirs = task.evaluate(MtebIdentity(), split="train", encode_kwargs={"batch_size": 16})["default"]
    repo = write_hub_repo(
        tmp_path / "repo", {"default": {"train": {"audio": [vector_wav(v) for v in vectors], "label": labels.tolist()}}}
    )
    spec = {"name": "Clu", "type": "clustering", "data": {"source": "hub", "path": str(repo), "eval_splits": ["train"]}}
    ours = maeb_scores(tmp_path, spec)["train"][0]
    assert_close(ours, theirs, ["v_measure", "v_measure_std", "ami"])
    assert ours["v_measures"]["Level 0"] == pytest.approx(theirs["v_measures"]["Level 0"])


def test_pair_classification(tmp_path, rng):
    a = rng.normal(size=(80, 5)).astype(np.float32)
    labels = rng.integers(0, 2, 80)
    b = np.where(labels[:, None] == 1, a + 0.8 * rng.normal(size=a.shape), rng.normal(size=a.shape)).astype(np.float32)
    b[:4] = b[4]  # ties in the scores
    task = mteb.get_task("CREMADPairClassification")
    task.dataset = {
        "default": DatasetDict(
            {"test": Dataset.from_dict({"audio1": mteb_audio(a), "audio2": mteb_audio(b), "label": labels.tolist()})}
        )
    }
    task.data_loaded = True
    theirs = task.evaluate(MtebIdentity(), split="test", encode_kwargs={"batch_size": 16})["default"]
    repo = write_hub_repo(
        tmp_path / "repo",
        {
            "default": {
                "test": {"audio1": [vector_wav(v) for v in a], "audio2": [vector_wav(v) for v in b], "label": labels.tolist()}
            }
        },
        audio_columns=("audio1", "audio2"),
    )
    spec = {
        "name": "Pairs",
        "type": "pair_classification",
        "data": {"source": "hub", "path": str(repo), "audio_columns": ["audio1", "audio2"]},
    }
    assert_close(maeb_scores(tmp_path, spec)["test"][0], theirs)


def test_zeroshot(tmp_path, rng):
    task = mteb.get_task("RavdessZeroshot")
    texts = task.get_candidate_labels()
    text_vectors = {t: rng.normal(size=6).astype(np.float32) for t in texts}
    labels = rng.integers(0, len(texts), 70)
    vectors = np.stack([text_vectors[texts[y]] + rng.normal(size=6) * 0.9 for y in labels]).astype(np.float32)
    task.dataset = {
        "default": DatasetDict({"train": Dataset.from_dict({"audio": mteb_audio(vectors), "labels": labels.tolist()})})
    }
    task.data_loaded = True
    theirs = task.evaluate(MtebIdentity(text_vectors), split="train", encode_kwargs={"batch_size": 16})["default"]
    repo = write_hub_repo(
        tmp_path / "repo", {"default": {"train": {"audio": [vector_wav(v) for v in vectors], "labels": labels.tolist()}}}
    )
    spec = {
        "name": "Zs",
        "type": "zeroshot",
        "data": {"source": "hub", "path": str(repo), "label_column": "labels", "eval_splits": ["train"]},
        "protocol": {"candidate_texts": texts},
    }
    assert_close(maeb_scores(tmp_path, spec, text_vectors)["train"][0], theirs)


def retrieval_fixture(rng, n_docs=60, n_queries=25, rerank=False):
    docs = rng.normal(size=(n_docs, 6)).astype(np.float32)
    qrels, top_ranked = {}, {}
    texts = {}
    for q in range(n_queries):
        rel = rng.choice(n_docs, size=int(rng.integers(1, 4)), replace=False)
        qrels[f"q{q}"] = {f"d{d}": int(rng.integers(1, 3)) for d in rel}
        texts[f"query text {q}"] = (docs[rel].mean(0) + rng.normal(size=6) * 0.7).astype(np.float32)
        if rerank:
            others = rng.choice([d for d in range(n_docs) if d not in rel], size=10, replace=False)
            top_ranked[f"q{q}"] = [f"d{d}" for d in rng.permutation(np.r_[rel, others])]
    # a query whose judged documents are all irrelevant: mteb keeps it and scores it 0
    qrels[f"q{n_queries}"] = {"d0": 0, "d1": 0}
    texts[f"query text {n_queries}"] = docs[0].copy()
    if rerank:
        top_ranked[f"q{n_queries}"] = [f"d{d}" for d in range(12)]
        # a query without candidates: kept with an empty result, scored 0
        qrels[f"q{n_queries + 1}"] = {"d2": 1}
        top_ranked[f"q{n_queries + 1}"] = []
    else:
        # tied scores must break the same way (by document id); with reranking, mteb scores each
        # candidate list in one torch product whose rounding can split exact duplicates at random
        docs[5] = docs[6]
    return docs, qrels, texts, top_ranked


def test_text_to_audio_retrieval(tmp_path, rng):
    docs, qrels, texts, _ = retrieval_fixture(rng)
    qtexts = list(texts)
    task = mteb.get_task("ClothoT2ARetrieval")
    task.dataset = {
        "default": {
            "test": {
                "corpus": Dataset.from_dict({"id": [f"d{i}" for i in range(len(docs))], "audio": mteb_audio(docs)}),
                "queries": Dataset.from_dict({"id": [f"q{i}" for i in range(len(qtexts))], "text": qtexts}),
                "relevant_docs": qrels,
                "top_ranked": None,
            }
        }
    }
    task.data_loaded = True
    theirs = task.evaluate(MtebIdentity(texts), split="test", encode_kwargs={"batch_size": 16})["default"]
    repo = write_hub_repo(
        tmp_path / "repo",
        {
            "corpus": {"test": {"id": [f"d{i}" for i in range(len(docs))], "audio": [vector_wav(v) for v in docs]}},
            "queries": {"test": {"id": [f"q{i}" for i in range(len(qtexts))], "text": qtexts}},
            "default": {
                "test": {
                    "query-id": [q for q in qrels for _ in qrels[q]],
                    "corpus-id": [d for q in qrels for d in qrels[q]],
                    "score": [s for q in qrels for s in qrels[q].values()],
                }
            },
        },
    )
    spec = {
        "name": "T2A",
        "type": "retrieval",
        "category": "t2a",
        "data": {"source": "hub", "path": str(repo), "layout": "retrieval"},
    }
    ours = maeb_scores(tmp_path, spec, texts)["test"][0]
    assert any(k.startswith("nauc_") for k in theirs)
    assert_close(ours, theirs)


def test_reranking(tmp_path, rng):
    docs, qrels, _, top_ranked = retrieval_fixture(rng, rerank=True)
    queries = rng.normal(size=(len(qrels), 6)).astype(np.float32)
    for q, rel in enumerate(qrels.values()):
        queries[q] += docs[[int(d[1:]) for d in rel]].mean(0)
    task = mteb.get_task("GTZANAudioReranking")
    task.dataset = {
        "default": {
            "test": {
                "corpus": Dataset.from_dict({"id": [f"d{i}" for i in range(len(docs))], "audio": mteb_audio(docs)}),
                "queries": Dataset.from_dict({"id": list(qrels), "audio": mteb_audio(queries)}),
                "relevant_docs": qrels,
                "top_ranked": top_ranked,
            }
        }
    }
    task.data_loaded = True
    theirs = task.evaluate(MtebIdentity(), split="test", encode_kwargs={"batch_size": 16})["default"]
    repo = write_hub_repo(
        tmp_path / "repo",
        {
            "corpus": {"test": {"id": [f"d{i}" for i in range(len(docs))], "audio": [vector_wav(v) for v in docs]}},
            "queries": {"test": {"id": list(qrels), "audio": [vector_wav(v) for v in queries]}},
            "default": {
                "test": {
                    "query-id": [q for q in qrels for _ in qrels[q]],
                    "corpus-id": [d for q in qrels for d in qrels[q]],
                    "score": [s for q in qrels for s in qrels[q].values()],
                }
            },
            "top_ranked": {"test": {"query-id": list(top_ranked), "corpus-ids": list(top_ranked.values())}},
        },
    )
    spec = {"name": "Rerank", "type": "reranking", "data": {"source": "hub", "path": str(repo), "layout": "retrieval"}}
    ours = maeb_scores(tmp_path, spec)["test"][0]
    assert ours["main_score"] == pytest.approx(theirs["main_score"], abs=1e-6)
    assert_close(ours, theirs)


def test_subsampling_draws_match(rng):
    from mteb.abstasks._stratification import _iterative_train_test_split
    from sklearn.preprocessing import MultiLabelBinarizer

    for _ in range(4):
        n = int(rng.integers(60, 300))
        sets = [sorted(set(rng.choice(list("abcdefgh"), size=rng.integers(0, 4)).tolist())) for _ in range(n)]
        k = int(rng.integers(10, n - 10))
        y = MultiLabelBinarizer().fit_transform(sets)
        _, expected = _iterative_train_test_split(np.arange(n).reshape(-1, 1), y, test_size=k / n, random_state=42)
        assert iterative_stratified_subset(sets, k, 42) == list(expected)
    labels = rng.choice(["x", "y", "z"], size=500).tolist()
    task = mteb.get_task("BeijingOpera")
    expected = task.stratified_subsampling(
        DatasetDict({"test": Dataset.from_dict({"label": labels, "row": list(range(500))})}), seed=42, n_samples=64
    )["test"]["row"]
    assert stratified_subsample(labels, 64, 42) == expected


def test_repeated_ids_are_merged_as_mteb_merges_them(tmp_path, rng):
    """FLEURS-style rows: one sentence id per pair of recordings, so queries and documents repeat ids."""
    n = 40
    ids = [f"s{i // 2}" for i in range(n)]
    sentences = [f"sentence number {i // 2}" for i in range(n)]
    text_vectors = {t: rng.normal(size=6).astype(np.float32) for t in set(sentences)}
    audio = np.stack([text_vectors[t] + rng.normal(size=6) * 1.2 for t in sentences]).astype(np.float32)
    task = mteb.get_task("FleursT2ARetrieval")
    task.hf_subsets = ["af_za"]
    task.dataset = {
        "af_za": {
            "test": {
                "corpus": Dataset.from_dict({"id": ids, "audio": mteb_audio(audio)}),
                "queries": Dataset.from_dict({"id": ids, "text": sentences}),
                "relevant_docs": {i: {i: 1} for i in ids},
                "top_ranked": None,
            }
        }
    }
    task.data_loaded = True
    theirs = task.evaluate(MtebIdentity(text_vectors), split="test", encode_kwargs={"batch_size": 16})["af_za"]
    repo = write_hub_repo(
        tmp_path / "repo", {"af_za": {"test": {"id": ids, "transcription": sentences, "audio": [vector_wav(v) for v in audio]}}}
    )
    spec = {
        "name": "Fleurs",
        "type": "retrieval",
        "category": "t2a",
        "data": {"source": "hub", "path": str(repo), "subsets": ["af_za"]},
        "derive": {"kind": "rows", "direction": "t2a", "id_template": "{id}", "text_column": "transcription"},
    }
    ours = maeb_scores(tmp_path, spec, text_vectors)["test"][0]
    assert_close(
        ours, theirs, [k for k in theirs if k.split("_at_")[0] in {"ndcg", "map", "recall", "precision", "mrr", "hit_rate"}]
    )
