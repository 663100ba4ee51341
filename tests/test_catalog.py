"""The MAEB+ catalog: every task runs end to end on a local dataset in its hub layout, through the
same loading code as the hub path; the catalog agrees with the reference and with mteb's registry."""

from __future__ import annotations

import copy
import json
import math
from dataclasses import replace

import numpy as np
import pytest

from maeb.run.task import evaluate_task
from maeb.spec import catalog
from maeb.spec.loader import load_task

from .catalog_fixtures import build_fixture
from .conftest import SHARED, make_embedder

NAMES = sorted(catalog.find_benchmark("MAEB+").tasks)
REFERENCE = SHARED / "reference" / "maeb_tasks.json"


def fixture_spec(name: str, root):
    spec = copy.deepcopy(catalog.find_task(name))  # a copy: catalog specs are shared
    transforms = [  # the fixtures are small; a smaller n still runs the subsampling
        {**step, "n": 12} if step["op"] == "stratified_subsample" else step for step in spec.transforms
    ]
    spec = replace(spec, data=replace(spec.data, subsets=spec.data.subsets[:3]), transforms=transforms)
    return replace(spec, data=replace(spec.data, path=str(build_fixture(spec, root)), revision=None))


def test_catalog_is_complete():
    assert len(NAMES) == 98 and len({catalog.load_spec_cached(p).name for p in catalog.task_files().values()}) >= 98
    counts = {}
    for spec in catalog.benchmark_specs(catalog.find_benchmark("MAEB")):
        counts[spec.type] = counts.get(spec.type, 0) + 1
    assert counts == {
        "retrieval": 9,
        "classification": 11,
        "clustering": 3,
        "pair_classification": 3,
        "reranking": 1,
        "zeroshot": 2,
        "multilabel": 1,
    }
    sizes = {b: len(catalog.find_benchmark(b).tasks) for b in ("MAEB", "MAEB(audio-only)", "MAEB(extended)", "MAEB+")}
    assert sizes == {"MAEB": 30, "MAEB(audio-only)": 19, "MAEB(extended)": 89, "MAEB+": 98}
    assert catalog.find_benchmark("MAEB(beta)").name == "MAEB"
    fsd = [s for s in catalog.benchmark_specs(catalog.find_benchmark("MAEB")) if s.name == "FSD2019Kaggle"][0]
    assert fsd.data.subsets == ["curated"] and catalog.find_task("FSD2019Kaggle").data.subsets == ["curated", "noisy"]
    audio_only = catalog.benchmark_specs(catalog.find_benchmark("MAEB(audio-only)"))
    assert {s.category for s in audio_only} <= {"a2a", "a2c"}


@pytest.mark.skipif(not REFERENCE.exists(), reason="../shared/reference is absent")
def test_catalog_matches_reference():
    ref = json.loads(REFERENCE.read_text())
    for task in ref["tasks"]:
        spec = catalog.find_task(task["name"])
        assert (spec.mteb_type, spec.category, spec.main_score) == (task["type"], task["category"], task["main_score"]), task[
            "name"
        ]
        assert (spec.data.path, spec.data.revision, spec.data.eval_splits) == (
            task["hf_path"],
            task["hf_revision"],
            task["eval_splits"],
        )
    for name, tasks in ref["benchmarks"].items():
        assert list(catalog.find_benchmark(name).tasks) == tasks


def test_catalog_matches_mteb_registry():
    mteb = pytest.importorskip("mteb")
    for name in NAMES:
        spec = catalog.find_task(name)
        task = mteb.get_task(name)
        md = task.metadata
        assert (md.dataset["path"], md.dataset["revision"]) == (spec.data.path, spec.data.revision), name
        assert md.eval_splits == spec.data.eval_splits and md.main_score == spec.main_score, name
        assert md.type == spec.mteb_type and md.category == spec.category, name
        assert list(task.hf_subsets) == spec.data.subsets, name
        for column in ("label_column_name", "input_column_name"):
            if hasattr(task, column) and column == "label_column_name":
                assert getattr(task, column) == spec.data.label_column, name
        if spec.type == "classification":
            assert bool(task.is_cross_validation) == spec.protocol["cross_validation"], name
            assert task.samples_per_label == spec.protocol["samples_per_label"], name
        if spec.type == "zeroshot":
            assert task.get_candidate_labels() == spec.protocol["candidate_texts"], name
        if spec.type == "multilabel":
            assert (task.max_eval_samples or 0) == spec.protocol["max_eval_samples"], name
    maeb = mteb.get_benchmark("MAEB")
    assert [t.metadata.name for t in maeb.tasks] == list(catalog.find_benchmark("MAEB").tasks)


@pytest.mark.parametrize("name", NAMES)
def test_task_runs_on_a_fixture_in_its_hub_layout(name, tmp_path):
    spec = fixture_spec(name, tmp_path / "repo")
    emb = make_embedder(tmp_path, batch_size=8)
    scores, *_ = evaluate_task(spec, emb)
    for split in spec.data.eval_splits:
        assert len(scores[split]) == len(spec.data.subsets)
        for entry in scores[split]:
            assert math.isfinite(entry["main_score"]) and 0.0 <= entry["main_score"] <= 1.0, entry
    if spec.type in ("classification", "clustering", "pair_classification") and name not in ("VoxPopuliAccentClustering",):
        # tones of distinct pitch per class: any working pipeline separates them
        assert np.mean([e["main_score"] for e in scores[spec.data.eval_splits[0]]]) > 0.6


@pytest.mark.parametrize("name", [n for n in NAMES if catalog.find_task(n).transforms])
def test_custom_transforms_do_their_job(name, tmp_path):
    spec = fixture_spec(name, tmp_path / "repo")
    data = load_task(spec)
    for tables in data.values():
        for split, table in tables.items():
            for step in spec.transforms:
                if step.get("splits") and split not in step["splits"]:
                    continue
                if step["op"] == "filter" and "drop" in step:
                    assert not {str(v) for v in table[step["column"]]} & {str(v) for v in step["drop"]}
                if step["op"] == "filter" and step.get("drop_empty"):
                    assert all(v not in ("", [], None) for v in table[step["column"]])
                if step["op"] == "map":
                    target = table[step.get("to", step["column"])]
                    allowed = {str(v) for v in step["mapping"].values()}
                    flat = [x for v in target for x in (v if isinstance(v, list) else [v])]
                    assert {str(x) for x in flat} <= allowed
                if step["op"] == "stratified_subsample":
                    assert len(table) == 12
                if step["op"] == "drop_invalid_audio":
                    from maeb.audio.pipeline import decode

                    for ref in table[step.get("column", "audio")]:
                        samples, _ = decode(ref.read(), ref.name)
                        assert len(samples) >= step.get("min_samples", 1)


def test_row_derived_retrieval_shapes(tmp_path):
    clotho = fixture_spec("ClothoT2ARetrieval", tmp_path / "clotho")
    data = load_task(clotho)["default"]["test"]
    # every caption string "x. another x." splits into three pieces, the last one empty (MAEB's Clotho)
    assert len(data.queries) == 3 * len(data.corpus)
    assert sum(1 for _, text in data.queries if text == "") == len(data.corpus)
    fleurs = fixture_spec("FleursT2ARetrieval", tmp_path / "fleurs")
    data = load_task(fleurs)[fleurs.data.subsets[0]]["test"]
    assert data.has_repeated_ids  # FLEURS-like: one sentence id per pair of recordings
    jam = fixture_spec("JamAltArtistA2ARetrieval", tmp_path / "jam")
    tables = load_task(jam)
    assert list(tables) == ["en", "fr", "de"]
    first = tables["en"]["test"]
    q0, _ = first.queries[0]
    assert q0.startswith("query-") and q0.replace("query-", "corpus-") in first.qrels[q0]


PAPER_MODELS = [
    "whisper-tiny",
    "whisper-base",
    "whisper-small",
    "whisper-medium",
    "whisper-large-v3",
    "wav2vec2-base",
    "wav2vec2-large",
    "wav2vec2-large-xlsr-53",
    "wav2vec2-xls-r-300m",
    "wav2vec2-xls-r-1b",
    "wav2vec2-xls-r-2b",
    "hubert-base-ls960",
    "hubert-large-ls960-ft",
    "wavlm-base",
    "wavlm-base-plus",
    "wavlm-large",
    "data2vec-audio-base-960h",
    "data2vec-audio-large-960h",
    "ast-audioset",
    "clap-htsat-fused",
    "clap-htsat-unfused",
    "larger_clap_general",
    "larger_clap_music",
    "larger_clap_music_and_speech",
    "seamless-m4t-v2-large",
    "encodec_24khz",
    "Qwen2-Audio-7B",
    "LCO-Embedding-Omni-3B",
    "LCO-Embedding-Omni-7B",
]


@pytest.mark.parametrize("alias", PAPER_MODELS)
def test_paper_models_are_registered_with_metadata(alias):
    from maeb.encoders import resolve_factory
    from maeb.encoders.family import FAMILY_REGISTRY

    meta = catalog.find_model(alias)
    assert meta.family in FAMILY_REGISTRY and callable(resolve_factory(meta.family))
    assert len(meta.revision) == 40 and meta.n_parameters and meta.embed_dim and meta.license and meta.reference
    assert "audio" in meta.modalities and meta.similarity == "cosine"


def test_model_entries_agree_with_mteb():
    mteb = pytest.importorskip("mteb")
    for meta in catalog.models().values():
        if meta.family.startswith("hf-"):
            theirs = mteb.get_model_meta(meta.name)
            assert (theirs.revision, theirs.n_parameters, theirs.embed_dim) == (meta.revision, meta.n_parameters, meta.embed_dim)
