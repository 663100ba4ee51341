"""Chance level and majority-class score from the labels (maeb.analysis.baselines), on cases whose
values are known in closed form, and the `maeb.baselines` record a run writes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from maeb.analysis.baselines import baselines
from maeb.data.sources import RetrievalData, Table
from maeb.spec.taskspec import parse_spec


def _spec(kind, main_score=None, **protocol):
    raw = {"name": "B", "type": kind, "data": {"source": "audiofolder", "path": "/nowhere", "eval_splits": ["test"]}}
    if main_score:
        raw["main_score"] = main_score
    if protocol:
        raw["protocol"] = protocol
    return parse_spec(raw, "test spec")


def test_classification_chance_is_one_over_classes_and_majority_follows_train():
    test = Table({"label": ["a"] * 100 + ["b"] * 100 + ["c"] * 100 + ["d"] * 100})
    train = Table({"label": ["b"] * 5 + ["a"] * 3})
    out = baselines(_spec("classification"), {"test": test, "train": train}, "test")
    assert out["metric"] == "accuracy" and out["majority"] == 0.25  # always "b": a quarter of the test set
    assert out["chance"] == pytest.approx(0.25, abs=0.01)
    skewed = Table({"label": ["a"] * 300 + ["b"] * 100})
    assert baselines(_spec("classification"), {"test": skewed, "train": train}, "test")["majority"] == 0.25
    cv = baselines(_spec("classification", cross_validation=True), {"test": skewed}, "test")
    assert cv["majority"] == 0.75  # cross-validation: the split's own majority


def test_clustering_pairs_and_multilabel():
    labels = Table({"label": [str(i % 5) for i in range(500)]})
    out = baselines(_spec("clustering"), {"test": labels}, "test")
    assert out["majority"] == 0.0 and 0 < out["chance"] < 0.02  # random ids share next to no information
    pairs = Table({"label": [1] * 30 + [0] * 70})
    out = baselines(_spec("pair_classification"), {"test": pairs}, "test")
    assert out["majority"] == 0.3 and out["chance"] == pytest.approx(0.3, abs=0.06)
    rows = Table({"label": [[c] for c in "abcd" * 100]})
    out = baselines(_spec("multilabel"), {"test": rows, "train": Table({"label": [["a"], ["a"], ["b"]]})}, "test")
    # one true label among 4 ranked at random: E[1/rank] = (1 + 1/2 + 1/3 + 1/4) / 4
    assert out["chance"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4, abs=0.02)
    # the prior ranks a, b, then c/d in random order: (1 + 1/2 + (1/3 + 1/4) / 2 * 2) / 4
    assert out["majority"] == pytest.approx((1 + 0.5 + 1 / 3 + 1 / 4) / 4, abs=0.03)


def test_retrieval_chance_is_k_over_documents():
    docs = [(f"d{i}", "x") for i in range(20)]
    queries = [(f"q{i}", "y") for i in range(200)]
    qrels = {f"q{i}": {f"d{i % 20}": 1} for i in range(200)}
    out = baselines(_spec("retrieval", "hit_rate_at_5"), {"test": RetrievalData(docs, queries, qrels)}, "test")
    assert out["chance"] == pytest.approx(5 / 20, abs=0.025)  # sd 0.007 over 4000 query draws and out["queries"] == 200
    popular = {f"q{i}": {"d0": 1} for i in range(200)}
    out = baselines(_spec("retrieval", "hit_rate_at_5"), {"test": RetrievalData(docs, queries, popular)}, "test")
    assert out["majority"] == 1.0  # every query's relevant document is the most popular one


def test_event_detection_has_no_baseline():
    assert baselines(_spec("event_detection"), {"test": Table({"label": [[]]})}, "test") is None


def test_a_run_records_its_baselines(tone_folder, tmp_path):
    from maeb.cli.commands import main

    task = tmp_path / "Tones.toml"
    task.write_text(
        f'name = "Tones"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{tone_folder}"\n'
        'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n'
    )
    out = tmp_path / "res"
    assert (
        main(
            [
                "run",
                "-m",
                "maeb/mfcc-stats",
                "-t",
                str(task),
                "--output-dir",
                str(out),
                "--cache-dir",
                str(tmp_path / "c"),
                "--quiet",
            ]
        )
        == 0
    )
    (path,) = out.rglob("Tones.json")
    record = json.loads(path.read_text())["maeb"]["baselines"]["test"]["default"]
    assert record["metric"] == "accuracy" and 0 < record["chance"] < 1 and 0 < record["majority"] < 1
    assert np.isclose(record["chance"], 1 / 3, atol=0.15)  # three tones
    # the board's tasks-as-rows table shows them beside the scores
    board = ["leaderboard", "--results", str(out), "--tasks", "Tones", "--format", "md", "--per-task", "rows"]
    import contextlib
    import io

    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main(board) == 0
    table = text.getvalue().split("| Task | Type")[1].splitlines()
    assert table[0].rstrip().endswith("| Chance | Majority |")
    assert table[2].rstrip().endswith(f"| {100 * record['chance']:.1f} | {100 * record['majority']:.1f} |")
    html = out / "board.html"
    assert main([*board[:5], "--format", "html", "--per-task", "rows", "--out", str(html)]) == 0
    assert "<th>Chance</th>" in html.read_text() or ">Chance<" in html.read_text()
