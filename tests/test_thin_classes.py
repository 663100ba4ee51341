"""A local classification task the few-shot probe was not made for (a class with fewer training
clips than samples_per_label, an evaluation split dominated by one class) gets a warning, logged
and kept in the result, that names the majority share and the chance level to read accuracy by."""

from __future__ import annotations

import csv
import logging
import shutil

import maeb

from .test_api import BandEnergy


def _imbalanced(tmp_path, tone_folder):
    """Every "low" clip, 3 train clips each of "mid" and "high", the test clips of "mid" relabelled
    "low" and one of "high": 6 of 7 test clips are "low"."""
    folder = tmp_path / "imbalanced"
    shutil.copytree(tone_folder, folder)
    with open(folder / "metadata.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    kept, seen = [], {}
    for r in rows:
        key = (r["label"], r["split"])
        seen[key] = seen.get(key, 0) + 1
        if r["split"] == "test" and r["label"] == "mid":
            r["label"] = "low"
        if r["label"] == "low" or seen[key] <= (3 if r["split"] == "train" else 1):
            kept.append(r)
    with open(folder / "metadata.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(kept)
    return folder, kept


def test_thin_classes_and_a_majority_class_are_announced(tmp_path, tone_folder, caplog):
    folder, rows = _imbalanced(tmp_path, tone_folder)
    test = [r["label"] for r in rows if r["split"] == "test"]
    share = test.count("low") / len(test)
    assert (test.count("low"), len(test)) == (6, 7)
    task = tmp_path / "Thin.toml"
    task.write_text(
        f'name = "Thin"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{folder}"\n'
        'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n'
    )
    with caplog.at_level(logging.WARNING, logger="maeb"):
        [result] = maeb.evaluate(BandEnergy(), task, cache_dir=tmp_path / "cache", progress=False)
    [message] = result.warnings
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [message]
    assert message.startswith("task Thin [test]: 2 of 3 classes have fewer clips in the train split than samples_per_label = 8")
    assert "'high' (3)" in message and "'mid' (3)" in message
    assert f"the evaluation split is {100 * share:.1f}% 'low'" in message and "guessing 33.3% (3 classes)" in message
    assert result.info["data"]["warnings"] == [message]


def test_cross_validation_counts_the_training_folds(tmp_path, tone_folder, caplog):
    """12 clips per label and 5 folds: a training fold holds about 9.6 of them, over 8: no warning;
    with samples_per_label = 10 the classes are too small."""
    task = tmp_path / "Folds.toml"
    body = (
        f'name = "Folds"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{tone_folder}"\n'
        'eval_splits = ["train"]\n[protocol]\ncross_validation = true\n'
    )
    task.write_text(body)
    [quiet] = maeb.evaluate(BandEnergy(), task, cache_dir=tmp_path / "cache", progress=False)
    assert quiet.warnings == []
    task.write_text(body + "samples_per_label = 10\n")
    [thin] = maeb.evaluate(BandEnergy(), task, cache_dir=tmp_path / "cache", progress=False)
    assert thin.warnings and "3 of 3 classes have fewer clips in the train split (cross-validation)" in thin.warnings[0]
    assert "evaluation split is" not in thin.warnings[0]  # balanced
