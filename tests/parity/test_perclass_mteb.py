"""A result file holding per-class blocks (maeb.metrics.perclass) reads unchanged in mteb's
TaskResult: the block sits in the score entry, and get_score() is the entry's main score."""

from __future__ import annotations

import json

import pytest

from tests.test_cli import write_model, write_task


def test_mteb_reads_a_result_with_per_class_blocks(tmp_path, tone_folder):
    mteb = pytest.importorskip("mteb")
    from maeb.cli.commands import main

    model = write_model(tmp_path)
    task = write_task(tmp_path, tone_folder, "ToneLabels", kind="classification")
    out = tmp_path / "results"
    args = ["run", "--model", str(model), "--tasks", str(task), "--output-dir", str(out), "--cache-dir", str(tmp_path / "emb")]
    assert main([*args, "--quiet"]) == 0
    (path,) = out.rglob("ToneLabels.json")
    written = json.loads(path.read_text())["scores"]["test"][0]
    assert written["per_class"]["confusion_matrix"] is not None
    theirs = mteb.TaskResult.from_disk(path)
    assert theirs.get_score() == pytest.approx(written["main_score"])
    assert theirs.scores["test"][0]["per_class"] == written["per_class"]
