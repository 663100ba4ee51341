"""Every catalog task loads through maeb's hub loader from a repository in its real layout.

The repositories come from tests/hub/fixtures.py: the layout of the public dataset card where one
was found (tests/hub/cards), else one of the layouts mteb's loader accepts. The rules the loader
follows are maeb.data.hub_rules; tests/parity/test_loaders.py checks them against mteb's own code."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from maeb.core.context import RunContext
from maeb.core.errors import DataError
from maeb.data import hub_rules
from maeb.spec.loader import load_task

from .hub.fixtures import CARDS, RETRIEVAL_VARIANTS, TABLE_VARIANTS, build_dataset_repo, catalog_repos, catalog_specs, load_card

REPOS = [r for r in catalog_repos() if r.source == "hub"]
SLOW_MARKS = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("MAEB_SLOW_TESTS") != "1", reason="all catalog tasks end to end: MAEB_SLOW_TESTS=1"),
]
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _private_caches(tmp_path, monkeypatch):
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-datasets")


def load(name: str, folder: Path, cache: Path, subsets: int = 3) -> dict:
    spec = catalog_specs()[name]
    spec = replace(spec, data=replace(spec.data, path=str(folder), revision=None, subsets=spec.data.subsets[:subsets]))
    return load_task(spec, RunContext(cache_dir=cache)), spec


def check_loaded(data: dict, spec) -> None:
    """Rows in every subset and split, and what the task type needs of them."""
    assert list(data) == spec.data.subsets
    for subset, splits in data.items():
        for split, part in splits.items():
            where = f"{spec.name} {subset}/{split}"
            if spec.type in ("retrieval", "reranking"):
                corpus_ids = {i for i, _ in part.corpus}
                assert part.queries and part.corpus, where
                assert all(q in part.qrels for q, _ in part.queries), where
                assert any(c in corpus_ids for q, _ in part.queries for c in part.qrels[q]), where
                if spec.type == "reranking":
                    assert part.candidates and all(set(c) <= corpus_ids for c in part.candidates.values()), where
            else:
                assert len(part) >= 6, where
                label = part[spec.data.label_column]
                assert len({json.dumps(v, sort_keys=True, default=str) for v in label}) >= 2, where


@pytest.mark.parametrize("ref", REPOS, ids=[r.repo for r in REPOS])
def test_every_catalog_task_loads_from_its_repository(ref, tmp_path):
    folder = build_dataset_repo(ref.repo, ref.revision, tmp_path / "repo")
    readme = (folder / "README.md").read_text()
    assert readme.startswith("---\n") and "dataset_info:" in readme
    for name in ref.tasks:
        data, spec = load(name, folder, tmp_path / "cache")
        check_loaded(data, spec)


@pytest.mark.parametrize("ref", [r for r in catalog_repos() if r.source != "hub"], ids=lambda r: r.repo)
def test_file_repositories_of_generative_tasks_load(ref, tmp_path):
    folder = build_dataset_repo(ref.repo, ref.revision, tmp_path / "repo")
    for name in ref.tasks:
        data, spec = load(name, folder, tmp_path / "cache")
        for split in spec.data.eval_splits:
            table = data["default"][split]
            assert len(table) >= 6 and all(ref.read()[:4] in (b"RIFF", b"fLaC") for ref in table[spec.data.audio_column])


def test_macs_t2a_card_layout_loads(tmp_path):
    """mteb/MACS_t2a at 74ce553 puts its corpus under split 'corpus' (query, qrels under 'test'):
    before maeb.data.hub_rules' split fallback this stopped with 'Unknown split "test"'."""
    card = load_card("mteb/MACS_t2a")
    assert {c["name"]: list(c["data_files"]) for c in card["configs"]} == {
        "corpus": ["corpus"],
        "qrels": ["test"],
        "query": ["test"],
    }
    spec = catalog_specs()["MACST2ARetrieval"]
    folder = build_dataset_repo(spec.data.path, spec.data.revision, tmp_path / "repo")
    assert (folder / "corpus" / "corpus-00000-of-00001.parquet").exists()
    data, _ = load("MACST2ARetrieval", folder, tmp_path / "cache")
    test = data["default"]["test"]
    assert len(test.corpus) == 30 and len(test.queries) == 10  # the query without qrels is dropped (R5)
    assert all(isinstance(text, str) for _, text in test.queries) and all(hasattr(a, "read") for _, a in test.corpus)
    assert test.qrels["q0"]["d0"] == 2 and test.qrels["q1"]["d0"] == 0  # a repeated pair keeps its last score (R4)


@pytest.mark.parametrize(
    "name,variant",
    [("AudioCapsA2TRetrieval", v) for v in RETRIEVAL_VARIANTS]
    + [("GTZANAudioReranking", "query-qrels")]
    + [("CREMA_D", v) for v in TABLE_VARIANTS],
)
def test_layout_variants_load(name, variant, tmp_path):
    spec = catalog_specs()[name]
    ref = next(r for r in REPOS if r.repo == spec.data.path)
    folder = build_dataset_repo(ref.repo, ref.revision, tmp_path / "repo", variant=variant)
    for task in ref.tasks:  # CREMA_D's repository also serves CREMA_DClustering
        data, task_spec = load(task, folder, tmp_path / "cache")
        check_loaded(data, task_spec)
    if variant == "titled":
        docs = dict(data["default"]["test"].corpus)
        assert docs["d0"].startswith("sound ") and docs["d1"] == docs["d1"].strip()  # R8: title + text, stripped


EVALUATED = ["MACST2ARetrieval", "LibriTTSA2TRetrieval", "ESC50AudioReranking", "CREMA_D"]
ALL_TASKS = sorted(n for r in REPOS for n in r.tasks)


@pytest.mark.parametrize("name", [n if n in EVALUATED else pytest.param(n, marks=SLOW_MARKS) for n in ALL_TASKS])
def test_task_evaluates_on_its_repository(name, tmp_path):
    """End to end with the mock encoder: scores in [0, 1] for every subset (all tasks with
    MAEB_SLOW_TESTS=1; by default the card layouts that differ from the catalog's first guess)."""
    import math

    from maeb.run.task import evaluate_task

    from .conftest import make_embedder

    spec = catalog_specs()[name]
    ref = next(r for r in REPOS if name in r.tasks)
    folder = build_dataset_repo(ref.repo, ref.revision, tmp_path / "repo")
    spec = replace(spec, data=replace(spec.data, path=str(folder), revision=None, subsets=spec.data.subsets[:3]))
    scores, *_ = evaluate_task(spec, make_embedder(tmp_path, batch_size=8))
    for split in spec.data.eval_splits:
        assert [e["hf_subset"] for e in scores[split]] == spec.data.subsets
        assert all(math.isfinite(e["main_score"]) and 0.0 <= e["main_score"] <= 1.0 for e in scores[split]), scores[split]


def test_builds_are_deterministic_and_refuse_a_used_folder(tmp_path):
    a = build_dataset_repo("mteb/MACS_t2a", catalog_specs()["MACST2ARetrieval"].data.revision, tmp_path / "a")
    b = build_dataset_repo("mteb/MACS_t2a", catalog_specs()["MACST2ARetrieval"].data.revision, tmp_path / "b")
    c = build_dataset_repo("mteb/MACS_t2a", catalog_specs()["MACST2ARetrieval"].data.revision, tmp_path / "c", seed=1)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    assert (a / "corpus/corpus-00000-of-00001.parquet").read_bytes() != (c / "corpus/corpus-00000-of-00001.parquet").read_bytes()
    with pytest.raises(FileExistsError, match="not empty"):
        build_dataset_repo("mteb/MACS_t2a", catalog_specs()["MACST2ARetrieval"].data.revision, a)


# -- the rules themselves -------------------------------------------------------------------------
def test_split_fallback_rule():
    assert hub_rules.pick_split(["corpus"], "test", "w") == "corpus"
    assert hub_rules.pick_split(["train", "test"], "test", "w") == "test"
    with pytest.raises(DataError, match=r"no split 'test' among \['train', 'dev'\]"):
        hub_rules.pick_split(["train", "dev"], "test", "w")


def test_config_rules():
    plain = hub_rules.retrieval_configs(["corpus", "queries", "default", "qrels"], "default", "w")
    assert plain == {"corpus": "corpus", "queries": "queries", "qrels": "default", "top_ranked": None}
    macs = hub_rules.retrieval_configs(["corpus", "query", "qrels"], "default", "w")
    assert (macs["queries"], macs["qrels"]) == ("query", "qrels")
    prefixed = hub_rules.retrieval_configs(["en-corpus", "en-queries", "en-qrels", "en-top_ranked", "default"], "en", "w")
    assert prefixed == {"corpus": "en-corpus", "queries": "en-queries", "qrels": "en-qrels", "top_ranked": "en-top_ranked"}
    # one unprefixed 'query' config serves every subset, as in mteb
    assert hub_rules.retrieval_configs(["en-corpus", "query", "en-qrels"], "en", "w")["queries"] == "query"
    with pytest.raises(DataError, match="no qrels config.*corpus, queries"):
        hub_rules.retrieval_configs(["corpus", "queries"], "default", "w")
    with pytest.raises(DataError, match="instruction"):
        hub_rules.retrieval_configs(["corpus", "queries", "default", "instruction"], "default", "w")


def test_content_and_id_rules():
    from maeb.data.sources import Table

    assert hub_rules.content_columns("a2t") == ("audio", "text") and hub_rules.content_columns("t2a") == ("text", "audio")
    docs = Table({"_id": [1, 2], "title": ["t", ""], "text": [" a ", "b "], "audio": ["x", "y"]})
    # a2t documents are texts even where an audio column exists; _id is cast to string
    assert hub_rules.items(docs, "text", "audio", "w", document=True) == [("1", "t  a"), ("2", "b")]
    with pytest.raises(DataError, match="not strings"):
        hub_rules.items(Table({"id": [1, 2], "text": ["a", "b"]}), "text", "audio", "w")
    assert hub_rules.qrels(Table({"query-id": [1, 1], "corpus-id": ["a", "a"], "score": [1, 0]}), "w") == {"1": {"a": 0}}


# -- the card records -----------------------------------------------------------------------------
def test_card_records_name_catalog_repositories_and_their_facts():
    pinned = {r.repo: r.revision for r in REPOS}
    files = sorted(CARDS.glob("*.json"))
    assert files
    for path in files:
        card = json.loads(path.read_text())
        assert path.name == card["repo"].replace("/", "__") + ".json"
        assert card["pinned_revision"] == pinned[card["repo"]], path.name
        assert card["at_pinned"] == card["pinned_revision"].startswith(card["seen_revision"] or "-"), path.name
        assert card["sources"] and all(s.startswith("https://") for s in card["sources"]), path.name
        for config in card["configs"]:
            assert config["data_files"] and config["features"], (path.name, config["name"])


def test_docs_table_is_current():
    import importlib.util

    spec = importlib.util.spec_from_file_location("hub_layouts_table", ROOT / "scripts" / "hub_layouts_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "docs" / "hub-layouts.md").read_text() == module.render(), "run: python scripts/hub_layouts_table.py"
