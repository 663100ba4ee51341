"""Leaderboards mark a fragile cell (its result's maeb.stability says rounding-level noise in the
vectors moves the score by more than one item's share): § after the value with a legend in
markdown and HTML (the model card's rows too), a per-task boolean `fragile` in JSON, a `fragile`
column in CSV; a result file without the key (older ones) is not fragile, and a board with no
fragile cell looks as it did before the key existed."""

from __future__ import annotations

import csv
import html
import io
import json
import re

from maeb.analysis.leaderboard import aggregate
from maeb.analysis.report import FRAGILE_MARK, LEAK_MARK, TIE_MARK, render
from maeb.analysis.uncertainty import compute
from maeb.results.read import read_scores

LEGEND = "fragile: rounding-level noise in the vectors (another CPU) moves this score by more than one item's share"


def _result(root, model: str, task: str, value: float, stability: dict | None):
    folder = root / model.replace("/", "__") / "r1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model_meta.json").write_text(json.dumps({"name": model}))
    scores = {"test": [{"main_score": value, "accuracy": value, "hf_subset": "default", "languages": []}]}
    maeb = {"stability": stability} if stability is not None else {}
    (folder / f"{task}.json").write_text(json.dumps({"task_name": task, "mteb_version": "2.0.0", "scores": scores, "maeb": maeb}))


def _board(tmp_path, fragile: bool = True):
    """org/words on TaskA is fragile (when asked); TaskB's record says not; org/sound's files lack the key or the record."""
    _result(tmp_path, "org/words", "TaskA", 0.6, {"method": "replay", "band": 0.015, "quantum": 0.01, "fragile": fragile})
    _result(tmp_path, "org/words", "TaskB", 0.4, {"method": "replay", "band": 0.001, "quantum": 0.01, "fragile": False})
    _result(tmp_path, "org/sound", "TaskA", 0.5, {"method": "replay", "band": 0.02, "quantum": 0.01})  # an older file
    _result(tmp_path, "org/sound", "TaskB", 0.3, None)
    scores, problems = read_scores([tmp_path])
    assert not problems
    return scores, aggregate(scores, tasks=["TaskA", "TaskB"])


def test_a_fragile_cell_is_marked_in_every_format_and_only_it(tmp_path):
    scores, board = _board(tmp_path)
    assert {(s.model, s.task) for s in scores if s.fragile} == {("org/words", "TaskA")}
    assert {r.model: r.fragile for r in board.rows} == {"org/words": ["TaskA"], "org/sound": []}

    for md in (render(board, "md", "columns"), render(board, "md", "rows")):
        assert md.count(FRAGILE_MARK) == 2, md  # the cell and its legend
        assert f"60.0{FRAGILE_MARK}" in md and f"{FRAGILE_MARK}: {LEGEND}" in md and "org/words on TaskA." in md
        assert f"{TIE_MARK}" not in md and f"{LEAK_MARK}" not in md  # its own mark, not the leak's dagger
    assert FRAGILE_MARK not in render(board, "md")  # no task cells shown: no mark, no legend

    page = render(board, "html", "rows")
    # the main table's cell and the tasks table's: each the 60.0 cell
    assert re.findall(r">([^<>]*) <span class=\"fragile\"", page) == ["60.0", "60.0"]
    assert 'id="fragile"' in page and html.escape(LEGEND) in page
    card = json.loads(re.search(r'<script type="application/json" id="page-data">(.*?)</script>', page, re.S).group(1))
    shown = {(m, row[0]): row[2] for m, rows in card["scores"].items() for row in rows}
    assert [k for k, v in shown.items() if FRAGILE_MARK in v] == [("org/words", "TaskA")]
    assert shown[("org/words", "TaskA")] == f"60.0{FRAGILE_MARK}"

    data = json.loads(render(board, "json"))
    assert {m["model"]: m["fragile"] for m in data["models"]} == {
        "org/words": {"TaskA": True, "TaskB": False},
        "org/sound": {"TaskA": False, "TaskB": False},
    }
    rows = list(csv.reader(io.StringIO(render(board, "csv"))))
    assert rows[0][-2:] == ["tie_dependent", "fragile"]
    assert {r[0]: r[-1] for r in rows[1:]} == {"org/words": "TaskA", "org/sound": ""}
    by_task = list(csv.reader(io.StringIO(render(board, "csv", "rows"))))
    assert by_task[0][-1] == "fragile" and {r[0]: r[-1] for r in by_task[1:]} == {"TaskA": "org/words", "TaskB": ""}


def test_the_mark_follows_the_band_where_bands_are_shown(tmp_path):
    _, board = _board(tmp_path)
    board.uncertainty = compute(board, draws=40, sources=("tasks", "bands"))
    md = render(board, "md", "rows")
    assert f"60.0 ±1.5{FRAGILE_MARK}" in md and f"50.0 ±2.0{FRAGILE_MARK}" not in md and "50.0 ±2.0" in md
    page = render(board, "html", "rows")
    assert re.findall(r">([^<>]*) <span class=\"fragile\"", page) == ["60.0", "60.0 ±1.5"]


def test_files_without_a_fragile_cell_show_no_mark_column_or_key(tmp_path):
    _, board = _board(tmp_path, fragile=False)
    assert all(not r.fragile for r in board.rows)
    for text in (render(board, "md", "columns"), render(board, "md", "rows"), render(board, "html", "rows")):
        assert FRAGILE_MARK not in text and html.escape(LEGEND) not in text and 'class="fragile"' not in text
    assert all("fragile" not in m for m in json.loads(render(board, "json"))["models"])
    assert "fragile" not in render(board, "csv").splitlines()[0] and "fragile" not in render(board, "csv", "rows").splitlines()[0]
