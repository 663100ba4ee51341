"""Per-class results (maeb.metrics.perclass) against scikit-learn's classification_report and
confusion_matrix computed independently from the same predictions, their place in a run's score
entries, and score against compute seconds (maeb.analysis.compute)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
from sklearn.metrics import average_precision_score, classification_report, confusion_matrix, f1_score

from maeb.metrics import perclass
from maeb.mock import tone


def test_single_label_block_equals_sklearn_report_and_matrix():
    rng = np.random.default_rng(3)
    y_true = rng.choice(["cat", "dog", "owl", "bee"], 200)
    y_pred = np.where(rng.random(200) < 0.6, y_true, rng.choice(["cat", "dog", "owl"], 200))
    y_pred = np.where(y_pred == "bee", "owl", y_pred)  # never predicts bee
    block = perclass.single_label(y_true, y_pred)
    report = classification_report(y_true, y_pred, output_dict=True, zero_division=0)
    assert block["labels"] == ["bee", "cat", "dog", "owl"]
    for i, label in enumerate(block["labels"]):
        for ours, theirs in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score"), ("support", "support")):
            assert block[ours][i] == pytest.approx(report[label][theirs])
    assert block["confusion_matrix"] == confusion_matrix(y_true, y_pred, labels=block["labels"]).tolist()
    assert block["precision"][0] == 0.0  # a class never predicted scores 0, as mteb's macro averages count it


def test_experiments_average_element_by_element_and_large_tasks_drop_the_matrix():
    a = perclass.single_label([0, 0, 1, 1], [0, 1, 1, 1], [0, 1])
    b = perclass.single_label([0, 0, 1, 1], [0, 0, 1, 0], [0, 1])
    mean = perclass.mean_blocks([a, b])
    assert mean["confusion_matrix"] == [[1.5, 0.5], [0.5, 1.5]] and mean["experiments"] == 2
    assert mean["f1"] == pytest.approx([(a["f1"][k] + b["f1"][k]) / 2 for k in range(2)])
    assert perclass.classes([10, 2, 1, 2]) == [1, 2, 10] and perclass.classes([1, "a"]) == [1, "a"]
    many = perclass.mean_blocks([perclass.single_label(list(range(60)), list(range(60)))])
    assert many["confusion_matrix"] is None and "60 classes" in many["confusion_omitted"] and len(many["f1"]) == 60


def test_multilabel_block_equals_sklearn_per_label():
    rng = np.random.default_rng(1)
    y = (rng.random((80, 3)) < 0.3).astype(int)
    y[:, 2] = 0  # a label with no positive clip: AP undefined
    proba = np.clip(y * 0.5 + rng.random((80, 3)) * 0.6, 0, 1)
    pred = (proba > 0.5).astype(int)
    block = perclass.multilabel(y, pred, proba, ["a", "b", "c"])
    assert block["f1"] == pytest.approx(f1_score(y, pred, average=None, zero_division=0).tolist())
    assert block["ap"][:2] == pytest.approx([average_precision_score(y[:, j], proba[:, j]) for j in range(2)])
    assert block["ap"][2] is None and block["support"] == y.sum(axis=0).tolist()


def test_a_run_writes_per_class_blocks_mteb_s_shape_keeps_and_compute_seconds(tone_folder, tmp_path):
    from maeb.analysis.compute import score_and_seconds
    from maeb.cli.commands import main

    task = tmp_path / "Tones.toml"
    task.write_text(
        f'name = "Tones"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{tone_folder}"\n'
        'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n'
    )
    out = tmp_path / "res"
    args = ["run", "-m", "maeb/mfcc-stats", "-t", str(task), "--output-dir", str(out), "--cache-dir", str(tmp_path / "c")]
    assert main([*args, "--quiet"]) == 0
    (path,) = out.rglob("Tones.json")
    data = json.loads(path.read_text())
    entry = data["scores"]["test"][0]
    block = entry["per_class"]
    matrix = np.array(block["confusion_matrix"])
    assert block["experiments"] == 10 and matrix.shape == (3, 3)
    # the mean matrix's diagonal share is the mean accuracy (every experiment scores the same clips)
    assert np.trace(matrix) / matrix.sum() == pytest.approx(entry["accuracy"], abs=1e-5)
    assert matrix.sum(axis=1).tolist() == block["support"]
    assert np.mean(block["f1"]) == pytest.approx(entry["f1"], abs=1e-5)  # macro F1 is the mean of the per-class F1s
    (row,) = score_and_seconds([out])
    embedding = data["maeb"]["embedding"]
    assert row["model"] == "maeb/mfcc-stats" and row["task"] == "Tones" and row["score"] == entry["main_score"]
    assert row["embed_seconds"] == embedding["embed_wall_seconds"] > 0
    assert row["eval_seconds"] == embedding["evaluator_seconds"] >= 0 and not row["cached"]
    assert row["embed_seconds"] + row["eval_seconds"] == pytest.approx(data["evaluation_time"], abs=0.01)


def test_score_and_seconds_of_an_older_result_derives_the_evaluator_s_time():
    from maeb.analysis.compute import score_and_seconds

    payload = {
        "task_name": "T",
        "evaluation_time": 10.0,
        "scores": {"test": [{"main_score": 0.5}, {"main_score": 0.7}]},
        "maeb": {"identity": {"encoder": {"name": "m"}}, "embedding": {"embed_wall_seconds": 4.0, "clips_cached": 3}},
    }
    (row,) = score_and_seconds([payload])
    assert row == {
        "model": "m",
        "task": "T",
        "score": pytest.approx(0.6),
        "embed_seconds": 4.0,
        "eval_seconds": 6.0,
        "cached": True,
    }


def test_zeroshot_and_multilabel_entries_hold_their_blocks(tone_folder, tmp_path):
    from .test_engine import NAMES, run, spec_for

    spec = spec_for(tone_folder, "zeroshot", protocol={"template": "a tone at {label} Hz", "label_names": NAMES})
    block = run(spec, tmp_path)["per_class"]
    assert block["labels"] == ["high", "low", "mid"] and block["f1"] == [1.0, 1.0, 1.0]
    assert block["confusion_matrix"] == [[12.0, 0.0, 0.0], [0.0, 12.0, 0.0], [0.0, 0.0, 12.0]] and block["experiments"] == 1

    folder = tmp_path / "mix"
    (folder / "audio").mkdir(parents=True)
    rows = []
    for i in range(30):
        label = ["low", "mid", "high"][i % 3]
        sf.write(folder / f"audio/{i}.wav", tone({"low": 220.0, "mid": 880.0, "high": 3520.0}[label], 0.5, seed=i), 16000)
        rows.append(f"audio/{i}.wav,{label},{'test' if i % 2 else 'train'}")
    (folder / "metadata.csv").write_text("file_name,labels,split\n" + "\n".join(rows) + "\n")
    spec = spec_for(
        folder,
        "multilabel",
        data={"label_column": "labels", "label_separator": ";", "split_by": {"column": "split"}},
        protocol={"samples_per_label": 4, "n_experiments": 3},
    )
    entry = run(spec, tmp_path)
    block = entry["per_class"]
    assert block["labels"] == ["high", "low", "mid"] and block["experiments"] == 3 and block["support"] == [5.0, 5.0, 5.0]
    assert np.mean(block["f1"]) == pytest.approx(entry["f1"], abs=1e-6)  # macro F1: the mean of the per-label F1s


def test_a_probe_s_block_is_sklearn_s_report_of_its_own_predictions_averaged(tone_folder, tmp_path, monkeypatch):
    """The predictions each experiment made, caught on their way out of the probe, scored by
    scikit-learn independently and averaged: the entry's block says the same."""
    from maeb.tasktypes import classification

    from .test_engine import run, spec_for

    caught = []
    real = classification.fit_predict

    def catching(x_train, y_train, x_test, p, probe="mteb"):
        pred = real(x_train, y_train, x_test, p, probe)
        caught.append(pred)
        return pred

    monkeypatch.setattr(classification, "fit_predict", catching)
    spec = spec_for(tone_folder, "classification", data={"label_column": "speaker"}, protocol={"cross_validation": True})
    entry = run(spec, tmp_path)
    block = entry["per_class"]
    # the folds' truths: KFold(5, shuffle, seed 42) over the split's clips, in the table's order
    from sklearn.model_selection import KFold

    from maeb.data.sources import load_audiofolder

    y = np.array(load_audiofolder(tone_folder)["speaker"])
    folds = [test for _, test in KFold(n_splits=5, shuffle=True, random_state=42).split(y)]
    assert len(caught) == 5 == block["experiments"]
    reports = [
        classification_report(y[t], pred, labels=block["labels"], output_dict=True, zero_division=0)
        for t, pred in zip(folds, caught)
    ]
    for i, label in enumerate(block["labels"]):
        assert block["f1"][i] == pytest.approx(np.mean([r[label]["f1-score"] for r in reports]), abs=1e-6)
        assert block["recall"][i] == pytest.approx(np.mean([r[label]["recall"] for r in reports]), abs=1e-6)
    matrices = [confusion_matrix(y[t], pred, labels=block["labels"]) for t, pred in zip(folds, caught)]
    assert np.allclose(block["confusion_matrix"], np.mean(matrices, axis=0), atol=1e-6)


def test_score_and_seconds_passes_over_what_holds_no_seconds(tmp_path):
    """The board's inputs may be a published-scores CSV or a folder with a broken file: the page's
    score-vs-compute view leaves them out rather than failing the whole leaderboard."""
    from maeb.analysis.compute import score_and_seconds

    csv = tmp_path / "main_scores.csv"
    csv.write_text("model,task,score\nm,T,0.5\n")
    folder = tmp_path / "results" / "m" / "r"
    folder.mkdir(parents=True)
    (folder / "Broken.json").write_text('{"task_name": "Bro')
    assert score_and_seconds([csv, tmp_path / "results"]) == []
    with pytest.raises(ValueError, match="Broken.json: not a readable result file"):
        score_and_seconds([folder / "Broken.json"])
