"""Leaderboards mark a score that depends on the order of tied items (a result's maeb.ties): ‡ with
a legend in markdown and HTML, `tie_dependent` in JSON, a last column in CSV."""

from __future__ import annotations

import csv
import io
import json

from maeb.analysis.leaderboard import aggregate
from maeb.analysis.report import TIE_MARK, render
from maeb.results.read import read_scores


def _result(root, model: str, task: str, value: float, ties: dict | None):
    folder = root / model.replace("/", "__") / "r1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model_meta.json").write_text(json.dumps({"name": model}))
    scores = {"test": [{"main_score": value, "accuracy": value, "hf_subset": "default", "languages": []}]}
    maeb = {"ties": ties} if ties is not None else {}
    (folder / f"{task}.json").write_text(json.dumps({"task_name": task, "mteb_version": "2.0.0", "scores": scores, "maeb": maeb}))


def test_a_tie_dependent_cell_is_marked_in_every_format(tmp_path):
    tied = {"test": {"default": {"depends_on_tie_order": True, "main_score_range": [0.5, 0.7]}}}
    calm = {"test": {"default": {"depends_on_tie_order": False, "main_score_range": [0.6, 0.6]}}}
    _result(tmp_path, "org/words", "TaskA", 0.6, tied)
    _result(tmp_path, "org/words", "TaskB", 0.4, calm)
    _result(tmp_path, "org/sound", "TaskA", 0.5, None)
    _result(tmp_path, "org/sound", "TaskB", 0.3, calm)
    scores, problems = read_scores([tmp_path])
    assert not problems
    assert {(s.model, s.task) for s in scores if s.tie_dependent} == {("org/words", "TaskA")}
    board = aggregate(scores, tasks=["TaskA", "TaskB"])
    md = render(board, "md", "columns")
    assert f"60.0{TIE_MARK}" in md and f"40.0{TIE_MARK}" not in md and f"50.0{TIE_MARK}" not in md
    assert f"{TIE_MARK} the score depends on the order of tied items" in md and "org/words on TaskA" in md
    page = render(board, "html", "rows")
    assert 'class="ties"' in page and 'id="ties"' in page
    data = json.loads(render(board, "json"))
    assert {m["model"]: m["tie_dependent"] for m in data["models"]} == {"org/words": ["TaskA"], "org/sound": []}
    rows = list(csv.reader(io.StringIO(render(board, "csv"))))
    assert rows[0][-1] == "tie_dependent"
    assert {r[0]: r[-1] for r in rows[1:]} == {"org/words": "TaskA", "org/sound": ""}
    by_task = list(csv.reader(io.StringIO(render(board, "csv", "rows"))))
    assert {r[0]: r[-1] for r in by_task[1:]} == {"TaskA": "org/words", "TaskB": ""}


def test_a_board_without_ties_has_no_legend(tmp_path):
    _result(tmp_path, "org/sound", "TaskA", 0.5, None)
    board = aggregate(read_scores([tmp_path])[0])
    assert TIE_MARK not in render(board, "md", "columns") and 'id="ties"' not in render(board, "html")
