"""Specs -> data -> evaluators end to end on generated tones with the spectral toy encoder, whose
right answers are known; plus the errors a researcher meets with bad specs and bad audio."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import soundfile as sf

from maeb.core.errors import AudioError, DataError, SpecError
from maeb.data.sources import load_audiofolder
from maeb.mock import tone, write_tone_folder
from maeb.run.task import evaluate_task
from maeb.spec.taskspec import load_spec, parse_spec

from .conftest import FREQS, make_embedder

NAMES = {k: str(int(v)) for k, v in FREQS.items()}


def spec_for(folder, kind, **extra):
    data = {"source": "audiofolder", "path": str(folder), "label_column": "label", "eval_splits": ["test"]}
    data.update(extra.pop("data", {}))
    return parse_spec({"name": f"T{kind}", "type": kind, "data": data, **extra}, "test spec")


def run(spec, tmp_path, **kwargs):
    scores, *_ = evaluate_task(spec, make_embedder(tmp_path, **kwargs))
    return scores[spec.data.eval_splits[0]][0]


def test_audiofolder_reads_metadata(tone_folder):
    table = load_audiofolder(tone_folder)
    assert len(table) == 36 and set(table.columns) == {"audio", "label", "freq", "speaker", "split"}
    assert table["audio"][0].path.endswith(".wav")
    with pytest.raises(DataError, match="column 'nope' .*available: audio, label"):
        table.require(["nope"])


def test_classification_with_split_column(tone_folder, tmp_path):
    spec = spec_for(tone_folder, "classification", data={"split_by": {"column": "split"}})
    scores = run(spec, tmp_path)
    assert scores["accuracy"] == 1.0 and len(scores["scores_per_experiment"]) == 10


def test_classification_cross_validation_at_chance_on_crossed_label(tone_folder, tmp_path):
    """The speaker column is crossed with the tone, so a tone encoder must sit near chance (1/3)."""
    spec = spec_for(tone_folder, "classification", data={"label_column": "speaker"}, protocol={"cross_validation": True})
    scores = run(spec, tmp_path)
    assert len(scores["scores_per_experiment"]) == 5 and scores["accuracy"] < 0.6


def test_zeroshot_uses_label_names(tone_folder, tmp_path):
    spec = spec_for(tone_folder, "zeroshot", protocol={"template": "a tone at {label} Hz", "label_names": NAMES})
    assert run(spec, tmp_path)["accuracy"] == 1.0
    shuffled = dict(zip(NAMES, reversed(list(NAMES.values()))))
    wrong = spec_for(tone_folder, "zeroshot", protocol={"template": "a tone at {label} Hz", "label_names": shuffled})
    assert run(wrong, tmp_path)["accuracy"] < 0.5


@pytest.mark.slow
def test_clustering_and_pairs(tone_folder, tmp_path):
    assert run(spec_for(tone_folder, "clustering"), tmp_path)["v_measure"] > 0.9
    pairs = spec_for(tone_folder, "pair_classification", derive={"kind": "pairs", "label_column": "label", "n_pairs": 60})
    assert run(pairs, tmp_path)["max_ap"] > 0.95


@pytest.mark.parametrize(
    "derive, category, metric, floor",
    [
        ({"kind": "same_label", "label_column": "label"}, "a2a", "map_at_1000", 0.9),
        (
            {"kind": "text_to_audio", "label_column": "label", "text_template": "{label} Hz", "label_names": NAMES},
            "t2a",
            "ndcg_at_10",
            0.9,
        ),
        (
            {
                "kind": "text_to_audio",
                "label_column": "label",
                "text_template": "{label}",
                "label_names": NAMES,
                "relevance": "self",
            },
            "t2a",
            "hit_rate_at_5",
            0.3,
        ),
        (
            {"kind": "audio_to_text", "label_column": "label", "text_template": "{label}", "label_names": NAMES},
            "a2t",
            "hit_rate_at_1",
            0.99,
        ),
    ],
)
def test_retrieval_derivations(tone_folder, tmp_path, derive, category, metric, floor):
    spec = spec_for(tone_folder, "retrieval", category=category, derive=derive, data={"eval_splits": ["train"]})
    assert run(spec, tmp_path)[metric] >= floor


def test_same_label_retrieval_never_returns_the_query(tone_folder, tmp_path):
    spec = spec_for(tone_folder, "retrieval", derive={"kind": "same_label", "label_column": "label"})
    assert spec.protocol["ignore_identical_ids"] is True
    # with itself excluded, the best a clip can do is rank its 11 siblings first
    assert run(spec, tmp_path)["precision_at_20"] <= 11 / 20 + 1e-9


def test_reranking_with_hard_negatives(tone_folder, tmp_path):
    derive = {
        "kind": "rerank",
        "label_column": "label",
        "n_queries": 9,
        "positives": 3,
        "negatives": 5,
        "hard_negative_column": "speaker",
    }
    scores = run(spec_for(tone_folder, "reranking", derive=derive, data={"eval_splits": ["train"]}), tmp_path)
    assert scores["main_score"] == scores["map_at_1000"] > 0.9


def test_multilabel_mixtures(tmp_path):
    folder = tmp_path / "mix"
    (folder / "audio").mkdir(parents=True)
    rng = np.random.default_rng(1)
    rows = []
    for i in range(60):
        chosen = sorted(rng.choice(list(FREQS), size=rng.integers(1, 3), replace=False).tolist())
        clip = sum(tone(FREQS[c], 0.5, seed=i) for c in chosen)
        sf.write(folder / f"audio/{i}.wav", clip / len(chosen), 16000)
        rows.append({"file_name": f"audio/{i}.wav", "labels": ";".join(chosen), "split": "test" if i % 3 == 0 else "train"})
    with open(folder / "metadata.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["file_name", "labels", "split"])
        writer.writeheader()
        writer.writerows(rows)
    spec = spec_for(
        folder,
        "multilabel",
        data={"label_column": "labels", "label_separator": ";", "split_by": {"column": "split"}},
        protocol={"samples_per_label": 4},
    )
    scores = run(spec, tmp_path)
    assert scores["lrap"] > 0.9 and 0 <= scores["hamming"] <= 1


def test_transforms(tone_folder, tmp_path):
    spec = spec_for(
        tone_folder,
        "clustering",
        transforms=[
            {"op": "filter", "column": "label", "drop": ["mid"]},
            {"op": "rename", "column": "label", "to": "pitch"},
            {"op": "map", "column": "pitch", "mapping": {"low": "bass"}},
            {"op": "stratified_subsample", "column": "pitch", "n": 8},
        ],
        data={"label_column": "pitch", "eval_splits": ["train"]},
    )
    from maeb.spec.loader import load_task

    table = load_task(spec)["default"]["train"]
    assert len(table) == 8 and sorted(set(table["pitch"])) == ["bass", "high"]
    assert table["pitch"].count("bass") == 4


def bad_folder(tmp_path):
    folder = write_tone_folder(tmp_path / "bad", FREQS, per_label=4)
    (folder / "audio" / "low_0.wav").write_bytes(b"")
    (folder / "audio" / "mid_1.wav").write_bytes(b"RIFF garbage")
    return folder


def test_bad_audio_is_an_error_naming_the_clip(tmp_path):
    spec = spec_for(bad_folder(tmp_path), "clustering", data={"eval_splits": ["all"]})
    with pytest.raises(AudioError, match=r"audio/(low_0|mid_1)\.wav.*--on-bad-audio skip"):
        run(spec, tmp_path)


def test_bad_audio_can_be_skipped_and_counted(tmp_path):
    spec = spec_for(bad_folder(tmp_path), "clustering", data={"eval_splits": ["all"]})
    emb = make_embedder(tmp_path, on_bad_audio="skip")
    scores, *_ = evaluate_task(spec, emb)
    assert scores["all"][0]["v_measure"] > 0.5
    assert set(emb.stats.skipped) == {"audio/low_0.wav", "audio/mid_1.wav"}
    assert "empty file" in emb.stats.skipped["audio/low_0.wav"]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"typ": "x"}, "unknown field 'typ' .*did you mean 'type'"),
        ({"type": "clasification"}, "did you mean 'classification'"),
        ({"protocol": {"samples_per_lable": 4}}, "did you mean 'samples_per_label'"),
        ({"protocol": {"n_experiments": "ten"}}, "n_experiments must be int"),
        ({"data": {"source": "audiofolder", "path": ".", "eval_split": ["x"]}}, "did you mean 'eval_splits'"),
        ({"transforms": [{"op": "filtre", "column": "a", "keep": []}]}, "did you mean 'filter'"),
        ({"derive": {"kind": "pairs", "n_pair": 3}}, "did you mean 'n_pairs'"),
    ],
)
def test_spec_typos_are_named(tone_folder, change, message):
    raw = {"name": "X", "type": "classification", "data": {"source": "audiofolder", "path": str(tone_folder)}}
    raw.update(change)
    if "derive" in change:
        raw["type"] = "pair_classification"
    with pytest.raises(SpecError, match=message):
        parse_spec(raw, "x.toml")


def test_missing_label_column_is_named(tone_folder, tmp_path):
    spec = spec_for(tone_folder, "clustering", data={"label_column": "colour", "eval_splits": ["all"]})
    with pytest.raises(DataError, match="column 'colour'.*available"):
        run(spec, tmp_path)


def test_spec_file_paths_are_relative_to_the_file(tone_folder, tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    path = specs / "t.toml"
    rel = "../" + str(tone_folder.relative_to(tmp_path)) if tone_folder.is_relative_to(tmp_path) else str(tone_folder)
    path.write_text(f'name = "T"\ntype = "clustering"\n[data]\nsource = "audiofolder"\npath = "{rel}"\neval_splits = ["x"]\n')
    assert load_spec(path).data.path == str(tone_folder.resolve())
    path.write_text(json.dumps({"name": "T"}))
    with pytest.raises(SpecError):
        load_spec(path)
