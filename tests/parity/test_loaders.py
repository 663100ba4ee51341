"""maeb's hub loader reads what mteb 2.26.24's own loading code reads, layout by layout.

For each layout variant mteb's loaders accept (tests/hub/fixtures.py: the dataset cards' layouts
and, where no card was found, one repository per variant), a tiny repository is built; mteb's task
class loads it (its metadata's dataset path pointed at the folder: AbsTask.load_data,
RetrievalDatasetLoader, the tasks' own load_data and dataset_transform) and maeb's loader loads
it through the catalog spec. Both must give the same subsets and splits, the same rows in the same
order, the same ids, labels, qrels, candidates and document texts, and the same audio bytes.
The `{subset}-` prefixed retrieval layouts, which no catalog task uses, go through
RetrievalDatasetLoader directly. `--parity-full` adds the rest of the matrix."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

import pytest

from tests.hub.fixtures import build_dataset_repo, write_retrieval_repo

# (task, variant): every variant once, every card layout of a retrieval repository, every task
# with its own loading code
QUICK = [
    ("MACST2ARetrieval", "card"),  # corpus under split 'corpus', query, qrels
    ("LibriTTSA2TRetrieval", "card"),  # text corpus under split 'corpus'
    ("ESC50AudioReranking", "card"),  # queries, qrels, top_ranked
    ("ClothoT2ARetrieval", "card"),  # the task's own load_data
    ("AudioCapsA2TRetrieval", "test-split"),
    ("AudioCapsA2TRetrieval", "query-qrels"),
    ("AudioCapsA2TRetrieval", "underscore-id"),
    ("AudioCapsA2TRetrieval", "titled"),
    ("AudioCapsT2ARetrieval", "corpus-split"),
    ("GTZANAudioReranking", "queries-qrels"),
    ("CREMA_D", "configs"),
    ("CREMA_D", "data-dir"),
    ("CREMA_D", "class-label"),
    ("CommonLanguageAgeDetection", "configs"),
    ("SIBFLEURS", "configs"),
    ("FSD2019Kaggle", "configs"),
    ("ESC50_Zeroshot", "configs"),
    ("CREMADPairClassification", "card"),  # audio declared at 16 kHz
    ("VoxPopuliGenderID", "configs"),
    ("FleursT2ARetrieval", "configs"),
    ("JamAltLyricA2TRetrieval", "configs"),
]
FULL = [
    ("LibriTTST2ARetrieval", "card"),
    ("MusicCapsT2ARetrieval", "card"),
    ("VocalSoundAudioReranking", "card"),
    ("ClothoA2TRetrieval", "card"),
    ("VocalSoundPairClassification", "card"),
    ("GTZANAudioReranking", "test-split"),
    ("GTZANAudioReranking", "query-qrels"),
    ("UrbanSound8KA2TRetrieval", "corpus-split"),
    ("CREMA_DClustering", "configs"),
    ("ESC50Clustering", "class-label"),
    ("IEMOCAPEmotion", "configs"),
    ("IEMOCAPGender", "configs"),
    ("BirdSet", "configs"),
    ("VoxPopuliAccentClustering", "configs"),
    ("VoxPopuliAccentID", "configs"),
    ("VoxCelebClustering", "configs"),
    ("SpokenQAForIC", "configs"),
    ("UrbanSound8kZeroshot", "configs"),
    ("CommonVoiceMini21A2TRetrieval", "configs"),
    ("FleursA2TRetrieval", "configs"),
    ("JamAltArtistA2ARetrieval", "configs"),
    ("GoogleSVQT2ARetrieval", "configs"),
]
MAX_SUBSETS = 3


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        cases = QUICK + (FULL if metafunc.config.getoption("--parity-full") else [])
        metafunc.parametrize("case", cases, ids=[f"{t}-{v}" for t, v in cases])


@pytest.fixture(autouse=True)
def _private_caches(tmp_path, monkeypatch):
    """datasets' cache of local folders (mteb's side) and maeb's cache live in the test's folder."""
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-datasets")
    monkeypatch.setenv("MAEB_CACHE_DIR", str(tmp_path / "maeb-cache"))


# -- the two sides --------------------------------------------------------------------------------
def _bytes(ds, column: str) -> list[bytes]:
    from datasets import Audio

    return [cell["bytes"] for cell in ds.cast_column(column, Audio(decode=False))[column]]


def _mteb_retrieval(split_data: dict, task) -> dict:
    from mteb._create_dataloaders import _retrieval_texts
    from mteb.types import PromptType

    out = {}
    for part, prompt in (("corpus", PromptType.document), ("queries", PromptType.query)):
        ds = split_data[part]
        modality = task.metadata.get_modalities(prompt)[0]
        content = _bytes(ds, modality) if modality == "audio" else _retrieval_texts(ds, prompt)
        out[part] = list(zip([str(i) for i in ds["id"]], content))
    out["qrels"] = {str(q): {str(c): int(s) for c, s in docs.items()} for q, docs in split_data["relevant_docs"].items()}
    ranked = split_data.get("top_ranked")
    out["candidates"] = None if ranked is None else {str(q): [str(c) for c in cs] for q, cs in ranked.items()}
    return out


def _maeb_retrieval(data) -> dict:
    def content(value):
        return value.read() if hasattr(value, "read") else value

    return {
        "corpus": [(i, content(v)) for i, v in data.corpus],
        "queries": [(i, content(v)) for i, v in data.queries],
        "qrels": data.qrels,
        "candidates": data.candidates,
    }


def _mteb_table(ds, task, spec) -> dict:
    from datasets import ClassLabel

    out = {c: _bytes(ds, c) for c in spec.data.audio_columns}
    labels = list(ds[task.label_column_name])
    feature = ds.features[task.label_column_name]
    # T5: mteb's stratified_subsampling turns text labels into ClassLabel ids (sorted names)
    out[spec.data.label_column] = (labels, feature.names if isinstance(feature, ClassLabel) else None)
    return out


def _maeb_table(table, spec) -> dict:
    out = {c: [ref.read() for ref in table[c]] for c in spec.data.audio_columns}
    label = spec.data.label_column
    out[label] = (list(table[label]), label in table.class_labels)
    return out


def _same_labels(mteb_labels, maeb_labels) -> bool:
    """Equal values, or, where mteb encoded labels maeb keeps as values (T5), the same names."""
    values, names = mteb_labels
    mine, is_class_label = maeb_labels
    if names is not None and not is_class_label:
        return [names[v] for v in values] == [str(v) for v in mine]
    return values == mine


def mteb_view(name: str, folder: Path, subsets: list[str]) -> dict:
    import mteb

    task = mteb.get_task(name)
    task.metadata = task.metadata.model_copy(update={"dataset": {**task.metadata.dataset, "path": str(folder), "revision": None}})
    if task.metadata.is_multilingual:
        task.hf_subsets = list(subsets)
    task.load_data()
    if hasattr(task, "convert_v1_dataset_format_to_v2"):
        task.convert_v1_dataset_format_to_v2(None)
    from maeb.spec import catalog

    spec = catalog.find_task(name)
    out = {}
    for subset in subsets:
        by_split = task.dataset[subset] if subset in task.dataset else task.dataset
        out[subset] = {}
        for split in spec.data.eval_splits + ([spec.data.train_split] if spec.type in ("classification", "multilabel") else []):
            if split not in by_split:
                continue
            data = by_split[split]
            out[subset][split] = (
                _mteb_retrieval(data, task) if spec.type in ("retrieval", "reranking") else _mteb_table(data, task, spec)
            )
    return out


def maeb_view(name: str, folder: Path, subsets: list[str], cache: Path) -> dict:
    from maeb.core.context import RunContext
    from maeb.spec import catalog
    from maeb.spec.loader import load_task

    spec = copy.deepcopy(catalog.find_task(name))
    spec = replace(spec, data=replace(spec.data, path=str(folder), revision=None, subsets=list(subsets)))
    loaded = load_task(spec, RunContext(cache_dir=cache))
    out = {}
    for subset, splits in loaded.items():
        out[subset] = {}
        for split, data in splits.items():
            out[subset][split] = _maeb_retrieval(data) if spec.type in ("retrieval", "reranking") else _maeb_table(data, spec)
    return out


def assert_same(mteb_side: dict, maeb_side: dict, where: str) -> None:
    assert list(mteb_side) == list(maeb_side), f"{where}: subsets"
    for subset in mteb_side:
        common = [s for s in maeb_side[subset] if s in mteb_side[subset]]
        assert common and set(maeb_side[subset]) <= set(mteb_side[subset]), f"{where} {subset}: splits"
        for split in common:
            a, b = mteb_side[subset][split], maeb_side[subset][split]
            assert list(a) == list(b), f"{where} {subset}/{split}: parts"
            for part in a:
                same = _same_labels(a[part], b[part]) if isinstance(a[part], tuple) else a[part] == b[part]
                assert same, f"{where} {subset}/{split}: {part} differs"
            rows = next(iter(a.values()))
            assert rows, f"{where} {subset}/{split}: nothing was compared"


# -- the tests ------------------------------------------------------------------------------------
def test_same_rows_as_mteb(oracle, case, tmp_path):
    from maeb.spec import catalog

    name, variant = case
    spec = catalog.find_task(name)
    folder = build_dataset_repo(spec.data.path, spec.data.revision, tmp_path / "repo", variant=variant)
    subsets = spec.data.subsets[:MAX_SUBSETS]
    mteb_side = mteb_view(name, folder, subsets)
    maeb_side = maeb_view(name, folder, subsets, tmp_path / "maeb-cache")
    assert_same(mteb_side, maeb_side, f"{name} ({variant})")


@pytest.mark.parametrize("variant", ["prefixed", "prefixed-query"])
@pytest.mark.parametrize("category,reranking", [("t2a", False), ("a2a", True)])
def test_subset_prefixed_retrieval_layouts(oracle, variant, category, reranking, tmp_path):
    """`{subset}-corpus` etc. (and one shared `query` config) read by RetrievalDatasetLoader
    itself and by maeb's retrieval loader."""
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalDatasetLoader

    from maeb.core.context import RunContext
    from maeb.spec.loader import load_task
    from maeb.spec.taskspec import parse_spec

    subsets = ("en", "fr")
    folder = write_retrieval_repo(tmp_path / "repo", category, variant, reranking=reranking, subsets=subsets)
    raw = {
        "name": "Prefixed",
        "type": "reranking" if reranking else "retrieval",
        "category": category,
        "data": {"source": "hub", "path": str(folder), "subsets": list(subsets), "eval_splits": ["test"], "layout": "retrieval"},
    }
    spec = parse_spec(raw, "test spec")
    maeb_side = {
        s: {"test": _maeb_retrieval(d["test"])} for s, d in load_task(spec, RunContext(cache_dir=tmp_path / "c")).items()
    }

    class Meta:  # what _mteb_retrieval asks of a task
        @staticmethod
        def get_modalities(prompt):
            from mteb.types import PromptType

            side = category.split("2")[0 if prompt == PromptType.query else 1]
            return ["audio" if side == "a" else "text"]

    task = type("T", (), {"metadata": Meta})
    mteb_side = {
        s: {"test": _mteb_retrieval(RetrievalDatasetLoader(str(folder), None, split="test", config=s).load(), task)}
        for s in subsets
    }
    assert_same(mteb_side, maeb_side, f"{category} {variant}")
    en = maeb_side["en"]["test"]
    assert all(doc.startswith("en-") for doc, _ in en["corpus"]) and len(en["queries"]) == 10  # the orphan query is dropped
