"""Ties found and said (issue 31 items 2 and 3): a model that maps different clips to nearly one
vector gets a maeb.ties record with the main score's range over tie orders and a warning naming the
model and the task; the tie-aware protocol scores the expected value, and equals the default to the
bit where nothing ties."""

from __future__ import annotations

import numpy as np
import pytest

from maeb.encoders import ModelMeta, identity
from maeb.engine.cache import EmbeddingCache
from maeb.engine.embed import Embedder
from maeb.mock import IdentityEncoder, vector_wav, write_hub_repo
from maeb.run.task import evaluate_task
from maeb.spec.taskspec import parse_spec

META = ModelMeta(name="test/collapsing", family="mock-identity", revision="1", modalities=("audio",))
DIM = 8


def _vectors(collapsed: bool, n: int = 40, classes: int = 4) -> tuple[np.ndarray, list[str]]:
    """Clips of `classes` labels. Collapsed: every clip of a class has one direction but for a few
    ulps (distinct clips, scores tied within 1e-6) and two classes share it, as transcripts do when two
    sounds are transcribed alike; otherwise well-separated random vectors."""
    rng = np.random.default_rng(0)
    labels = [f"c{i % classes}" for i in range(n)]
    if not collapsed:
        return rng.normal(size=(n, DIM)).astype(np.float32), labels
    centres = rng.normal(size=(classes, DIM))
    centres[1] = centres[0]
    x = np.stack([centres[i % classes] for i in range(n)]) * (1 + 3e-7 * rng.normal(size=(n, DIM)))
    return x.astype(np.float32), labels


def _repo(tmp_path, collapsed: bool):
    x, labels = _vectors(collapsed)
    other = [20 + (i + i % 3) % 20 for i in range(20)]  # same class for every third pair
    pairs = {
        "audio1": [vector_wav(v) for v in x[:20]],
        "audio2": [vector_wav(x[j]) for j in other],
        "label": [int(labels[i] == labels[j]) for i, j in zip(range(20), other)],
    }
    table = {"audio": [vector_wav(v) for v in x], "label": labels}
    return write_hub_repo(
        tmp_path / f"repo{int(collapsed)}",
        {"default": {"test": table}, "pairs": {"test": pairs}},
        audio_columns=("audio", "audio1", "audio2"),
    )


def _spec(repo, kind: str):
    data: dict = {"source": "hub", "path": str(repo), "eval_splits": ["test"]}
    spec: dict = {"name": f"Ties{kind}", "type": kind, "data": data}
    if kind == "reranking":
        spec["derive"] = {"kind": "rerank", "label_column": "label", "n_queries": 12, "positives": 3, "negatives": 6}
    if kind == "pair_classification":
        data["subsets"] = ["pairs"]
        data["audio_columns"] = ["audio1", "audio2"]
    if kind == "clustering":
        spec["protocol"] = {"n_bootstrap": 2, "max_documents_per_cluster": 40}
    return parse_spec(spec, "test spec")


def _embedder(tmp_path, protocol: str = "mteb-2.26") -> Embedder:
    encoder = IdentityEncoder()
    return Embedder(META, encoder, EmbeddingCache(tmp_path / "cache", identity(META, encoder)), protocol=protocol)


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ties")
    return {collapsed: _repo(folder, collapsed) for collapsed in (True, False)}


def _main(outcome):
    return next(iter(outcome.scores.values()))[0]["main_score"]


def _record(outcome):
    return next(iter(next(iter(outcome.ties.values())).values()))


@pytest.mark.parametrize("kind", ["reranking", "pair_classification"])
def test_a_collapsed_model_gets_a_range_and_a_warning_naming_model_and_task(repos, tmp_path, kind):
    emb = _embedder(tmp_path)
    outcome = evaluate_task(_spec(repos[True], kind), emb)
    record = _record(outcome)
    low, high = record["main_score_range"]
    assert low <= _main(outcome) <= high and high - low > record["item_share"]
    assert record["depends_on_tie_order"] is True and record["tolerance"] == 1e-6
    assert record["ranks"] == "first-found" and record["distinct_vectors"] >= 20  # near-identical, not identical, vectors
    warned = [w for w in outcome.notes["warnings"] if "tied candidates" in w]
    assert len(warned) == 1 and "test/collapsing" in warned[0] and f"Ties{kind}" in warned[0]
    tie_aware = evaluate_task(_spec(repos[True], kind), _embedder(tmp_path, "mteb-2.26-tie-aware"))
    assert low <= _main(tie_aware) <= high and _main(tie_aware) != _main(outcome)


@pytest.mark.parametrize("kind", ["reranking", "pair_classification"])
def test_without_ties_the_tie_aware_protocol_is_the_default_to_the_bit(repos, tmp_path, kind):
    default = evaluate_task(_spec(repos[False], kind), _embedder(tmp_path))
    tie_aware = evaluate_task(_spec(repos[False], kind), _embedder(tmp_path, "mteb-2.26-tie-aware"))
    a, b = default.scores["test"][0], tie_aware.scores["test"][0]
    assert a.keys() == b.keys()
    assert all(a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]) for k in a)  # (nAUC is NaN for a flat curve)
    record = _record(default)
    assert record["depends_on_tie_order"] is False and record["main_score_range"][0] == record["main_score_range"][1]
    assert record["identical_vector_clips"] == 0 and not [w for w in default.notes["warnings"] if "tied" in w]


def test_reranking_record_counts_queries_with_tied_candidates(repos, tmp_path):
    record = _record(evaluate_task(_spec(repos[True], "reranking"), _embedder(tmp_path)))
    assert record["share_queries_tied_candidates"] == 1.0 and record["share_queries_tied_topk"] == 1.0
    assert record["topk"] == 1000


def test_identical_vectors_are_counted_per_split(tmp_path):
    x, labels = _vectors(False, n=12, classes=3)
    x[5] = x[6] = x[7] = x[0]  # four distinct clips (other labels' bytes differ), one vector
    rows = {"audio": [vector_wav(v) for v in x], "label": labels}
    rows["audio"][5:8] = [vector_wav(x[0]) + bytes([i]) for i in range(3)]  # a trailing byte: other files, same samples
    repo = write_hub_repo(tmp_path / "repo", {"default": {"test": rows}})
    record = _record(evaluate_task(_spec(repo, "clustering"), _embedder(tmp_path)))
    assert record["identical_vector_clips"] == 4 and record["largest_shared"] == 4 and record["distinct_vectors"] == 9
    assert record["main_score_range"] is None and record["depends_on_tie_order"] is False


def test_result_files_record_ties_and_the_tie_aware_protocol(repos, tmp_path):
    import json

    from maeb.run.options import RunOptions
    from maeb.run.runner import run

    spec = _spec(repos[True], "reranking")
    paths = {}
    for protocol in ("mteb-2.26", "mteb-2.26-tie-aware"):
        cfg = RunOptions(output_dir=tmp_path / "res", cache_dir=tmp_path / "cache", show_progress=False, protocol=protocol)
        paths[protocol] = run(META, [spec], cfg, encoder=IdentityEncoder()).results[0].path
    default, aware = (json.loads(paths[p].read_text()) for p in ("mteb-2.26", "mteb-2.26-tie-aware"))
    assert paths["mteb-2.26-tie-aware"].parent.parent.name == "experiments"
    assert aware["maeb"]["protocol"]["ranks"] == "expected-over-tie-orders" and aware["maeb"]["protocol"]["tie_tolerance"] == 1e-6
    assert "ranks" not in default["maeb"]["protocol"]
    record, scored = default["maeb"]["ties"]["test"]["default"], aware["maeb"]["ties"]["test"]["default"]
    assert record["depends_on_tie_order"] is True and record["ranks"] == "first-found"
    # the tie-aware score depends on no order (no mark, no warning); the range is the same
    assert scored["depends_on_tie_order"] is False and scored["ranks"] == "expected-over-tie-orders"
    assert scored["main_score_range"] == record["main_score_range"]
    assert not any("depends on the order" in w for w in aware["maeb"]["data"]["warnings"])
    assert any("depends on the order of tied candidates" in w for w in default["maeb"]["data"]["warnings"])


def test_zero_shot_argmax_ties_are_split_under_the_tie_aware_protocol(tmp_path):
    """Clips of class c0 are as similar to 'c0' as to 'c1': mteb's argmax takes c0 (the first),
    the tie-aware protocol counts half of each."""
    clips = [np.array([1.0, 1.0 + i * 1e-9], np.float32) * (1 + i) for i in range(6)]
    clips += [np.array([0.2, 1.0], np.float32) * (1 + i) for i in range(6)]
    labels = ["c0"] * 6 + ["c1"] * 6
    repo = write_hub_repo(tmp_path / "zs", {"default": {"test": {"audio": [vector_wav(v) for v in clips], "label": labels}}})
    spec = parse_spec(
        {"name": "TiesZeroshot", "type": "zeroshot", "data": {"source": "hub", "path": str(repo), "eval_splits": ["test"]}},
        "test spec",
    )
    texts = {"c0": [1.0, 0.0], "c1": [0.0, 1.0]}
    meta = ModelMeta(name="test/collapsing", family="mock-identity", revision="1", modalities=("audio", "text"))
    found = {}
    for protocol in ("mteb-2.26", "mteb-2.26-tie-aware"):
        encoder = IdentityEncoder(text_vectors=texts)
        emb = Embedder(meta, encoder, EmbeddingCache(tmp_path / "cache", identity(meta, encoder)), protocol=protocol)
        found[protocol] = evaluate_task(spec, emb)
    record = _record(found["mteb-2.26"])
    assert _main(found["mteb-2.26"]) == 1.0 and _main(found["mteb-2.26-tie-aware"]) == 0.75
    assert record["main_score_range"] == [0.5, 1.0] and record["share_queries_tied_topk"] == 0.5
    assert record["depends_on_tie_order"] is True
