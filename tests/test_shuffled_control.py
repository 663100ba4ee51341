"""The label-shuffled control (`--controls shuffled`, maeb.tasktypes.control): recorded beside the
baselines only when asked for, at chance on a sound local task, equal to an independent refit
(scikit-learn on the same draws with the permuted labels), and a one-line warning when it sits far
above chance (here forced by a control that does not permute, as a broken evaluator would)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, label_ranking_average_precision_score
from sklearn.multioutput import MultiOutputClassifier

from maeb.analysis.baselines import shuffled_warning
from maeb.mock import write_tone_folder

from .conftest import make_embedder

FREQS = {"low": 220.0, "mid": 880.0, "high": 3520.0, "top": 6000.0}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return write_tone_folder(tmp_path_factory.mktemp("shuffled"), FREQS, per_label=40)  # 40 test clips


def _run(tmp_path: Path, folder: Path, *extra: str, protocol: str = "") -> dict:
    from maeb.cli.commands import main

    task = tmp_path / "ShuffledTones.toml"
    task.write_text(
        f'name = "ShuffledTones"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{folder}"\n'
        f'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n[protocol]\n{protocol}'
    )
    out = tmp_path / "res"
    args = ["run", "-m", "maeb/mfcc-stats", "-t", str(task), "--output-dir", str(out), "--cache-dir", str(tmp_path / "c")]
    assert main([*args, "--quiet", *(() if "--keep" in extra else ("--overwrite",)), *(e for e in extra if e != "--keep")]) == 0
    (path,) = out.rglob("ShuffledTones.json")
    return json.loads(path.read_text())


def test_the_control_sits_at_chance_on_a_sound_task_and_only_when_asked(tmp_path, folder):
    plain = _run(tmp_path, folder)
    assert "shuffled" not in plain["maeb"]["baselines"]["test"]["default"]
    result = _run(tmp_path, folder, "--controls", "shuffled", "--keep")  # the result lacks it: evaluated again
    record = result["maeb"]["baselines"]["test"]["default"]
    assert record["chance"] == 0.25 and result["scores"] == plain["scores"]  # mteb's scores untouched
    assert result["scores"]["test"][0]["main_score"] > 0.9
    assert abs(record["shuffled"] - record["chance"]) < 0.1 and record["shuffled_seconds"] >= 0, record
    assert not [w for w in result["maeb"]["data"]["warnings"] if "shuffled" in w]
    cv = _run(tmp_path, folder, "--controls", "shuffled", protocol="cross_validation = true\n")
    # 8 clips per fold: a fold's training part lacks what its test part holds, so a probe of permuted labels
    # leans away from the test fold's classes and scores at or below chance (0.15 here), never far above it
    assert 0.05 < cv["maeb"]["baselines"]["test"]["default"]["shuffled"] < 0.3


def test_a_control_far_above_chance_warns_in_one_line(tmp_path, folder, monkeypatch):
    from maeb.tasktypes import control

    monkeypatch.setattr(control, "permuted", lambda labels, rng: labels)  # a broken control: labels left in place
    result = _run(tmp_path, folder, "--controls", "shuffled")
    record = result["maeb"]["baselines"]["test"]["default"]
    assert record["shuffled"] > 0.9
    (line,) = [w for w in result["maeb"]["data"]["warnings"] if "label-shuffled control" in w]
    assert "ShuffledTones" in line and "0.2500" in line and f"{record['shuffled']:.4f}" in line and "\n" not in line
    level = {"metric": "accuracy", "chance": 0.25, "majority": 0.25}
    assert shuffled_warning({**level, "shuffled": 0.3}, "T") is None  # under SHUFFLED_POINTS above
    assert shuffled_warning({**level, "shuffled": 0.4, "shuffled_error": 0.06}, "T") is None  # luck: 2.5 errors
    assert "T: the label-shuffled control" in (shuffled_warning({**level, "shuffled": 0.4, "shuffled_error": 0.04}, "T") or "")


def test_an_unknown_control_is_refused_naming_it(tmp_path, folder):
    from maeb.cli.commands import main

    assert main(["run", "-m", "maeb/mfcc-stats", "-t", "LiteSpokenDigits", "--controls", "leaky", "--quiet"]) != 0


def _tables(folder: Path, kind: str = "classification", **protocol):
    from maeb.spec.loader import load_task
    from maeb.spec.taskspec import parse_spec

    raw = {
        "name": "T",
        "type": kind,
        "data": {"source": "audiofolder", "path": str(folder), "eval_splits": ["test"], "split_by": {"column": "split"}},
        "protocol": protocol,
    }
    spec = parse_spec(raw, "spec", base=folder)
    return spec, load_task(spec)["default"]


def test_the_control_equals_an_independent_refit_on_the_same_draws(tmp_path, folder):
    from maeb import tasktypes
    from maeb.tasktypes import classification

    spec, tables = _tables(folder)
    emb = make_embedder(tmp_path, controls=("shuffled",))
    got = classification.Classification().evaluate(tables, "test", emb, spec, tasktypes.TaskState(seed=42)).shuffled["score"]
    train, test = tables["train"], tables["test"]
    y_train, y_test = np.asarray(train["label"]), np.asarray(test["label"])
    x_test, _ = emb.audio(test["audio"])
    rng, idxs, scores = np.random.default_rng(42), None, []
    draws = []
    for _ in range(10):
        chosen, idxs = classification.undersample(y_train, idxs, 8, 42)
        draws.append(chosen)
    for chosen in draws:  # the documented scheme: one permutation of each draw's labels, in order
        x, _ = emb.audio([train["audio"][i] for i in chosen])
        fake = y_train[chosen][rng.permutation(len(chosen))]
        model = LogisticRegression(max_iter=100, random_state=42).fit(x, fake)
        scores.append(accuracy_score(y_test, model.predict(x_test)))
    assert got == pytest.approx(np.mean(scores), abs=1e-6)
    assert sorted(fake.tolist()) == sorted(y_train[chosen].tolist())  # class counts kept


def test_the_multilabel_control_equals_an_independent_refit(tmp_path, folder):
    from maeb import tasktypes
    from maeb.data.sources import Table
    from maeb.tasktypes import multilabel

    spec, tables = _tables(folder, "multilabel", n_experiments=3)
    for name, table in tables.items():  # two labels per clip: its tone and its speaker
        tables[name] = Table({**table.columns, "label": [[a, b] for a, b in zip(table["label"], table["speaker"])]})
    emb = make_embedder(tmp_path, controls=("shuffled",))
    state = tasktypes.TaskState(seed=42)
    got = multilabel.MultilabelClassification().evaluate(tables, "test", emb, spec, state).shuffled["score"]
    train, test = tables["train"], tables["test"]
    state = tasktypes.TaskState(seed=42)
    draws = [multilabel.grow_sample(train["label"], 8, state.np_rng) for _ in range(3)]
    classes = sorted({c for r in train["label"] + test["label"] for c in r})
    y_test = np.array([[c in r for c in classes] for r in test["label"]], dtype=int)
    x_test, _ = emb.audio(test["audio"])
    rng, scores = np.random.default_rng(42), []
    for chosen in draws:
        x, _ = emb.audio([train["audio"][i] for i in chosen])
        y = np.array([[c in train["label"][i] for c in classes] for i in chosen], dtype=int)[rng.permutation(len(chosen))]
        model = MultiOutputClassifier(LogisticRegression(max_iter=100, random_state=42)).fit(x, y)
        proba = np.stack([p[:, 1] for p in model.predict_proba(x_test)], axis=1)
        scores.append(label_ranking_average_precision_score(y_test, proba))
    assert got == pytest.approx(np.mean(scores), abs=1e-6)


def test_boards_show_a_models_shuffled_control_only_where_recorded(tmp_path):
    """Beside the model's own score (a control is a model's, issue 46 item 6; tests/test_explorer.py has two)."""
    from maeb.analysis.notes import tasks_table
    from maeb.analysis.report import to_json, to_markdown_by_task

    from .test_board_baselines import board

    b = board(tmp_path)
    assert "shuffled" not in to_markdown_by_task(b) and "shuffled" not in tasks_table(b)
    assert all("shuffled" not in t for t in to_json(b)["tasks"]) and all("shuffled" not in m for m in to_json(b)["models"])
    for (model, task), (score,) in b.cells.items():  # o/a's result on the Good task records the control
        if (model, task) == ("o/a", "Good"):
            record = json.loads(Path(score.source).read_text())
            record["maeb"]["baselines"]["test"]["default"]["shuffled"] = 0.123
            Path(score.source).write_text(json.dumps(record))
    text = to_markdown_by_task(b)
    head = next(line for line in text.splitlines() if line.startswith("| Task"))
    assert head.rstrip(" |").endswith("Chance | Majority") and "| 80.0 (shuffled 12.3) | 40.0 |" in text
    assert "80.0 (shuffled 12.3)<" in tasks_table(b) and ">Shuffled<" not in tasks_table(b)
    assert {m["model"]: m.get("shuffled") for m in to_json(b)["models"]} == {"o/a": {"Good": 0.123}, "o/b": None}


def test_duplicated_test_clips_in_training_leave_the_control_at_chance(tmp_path, folder):
    """What the control does not detect: a train split holding copies of the test clips. A probe of
    permuted labels recalls the wrong labels for them, so the control stays at chance; the run's
    shared-clip check (train_eval_shared_clips) is what names that leak."""
    import csv
    import shutil

    leaky = tmp_path / "leaky"
    shutil.copytree(folder, leaky)
    with open(leaky / "metadata.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in [r for r in rows if r["split"] == "test"]:
        copy = row["file_name"].replace("audio/", "audio/dup_")
        shutil.copy(leaky / row["file_name"], leaky / copy)
        rows.append({**row, "file_name": copy, "split": "train"})
    with open(leaky / "metadata.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = _run(tmp_path, leaky, "--controls", "shuffled")
    assert result["maeb"]["data"]["train_eval_shared_clips"] == 40
    assert result["maeb"]["baselines"]["test"]["default"]["shuffled"] < 0.35
    assert not [w for w in result["maeb"]["data"]["warnings"] if "label-shuffled control" in w]
