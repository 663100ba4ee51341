"""The leaderboard page as an explorer (issue 44 item 1) and each model's own label-shuffled control (issue 46
item 6): a control belongs to a model and a task, so two models' controls on one task are both shown, each
beside its own model's score, and no task-level Shuffled row or column stands for either."""

from __future__ import annotations

import json
import re

from maeb.analysis.leaderboard import Board, Row, Score, TaskInfo
from maeb.analysis.page import to_html
from maeb.analysis.report import to_json, to_markdown_by_task

# issue 46's case: mfcc and Basic Pitch both run on TESS with the control; mfcc's came first by name
CONTROLS = {("maeb/mfcc-stats", "TESS"): 0.146, ("spotify/basic-pitch", "TESS"): 0.187}
SCORES = {("maeb/mfcc-stats", "TESS"): 0.40, ("spotify/basic-pitch", "TESS"): 0.55, ("o/none", "TESS"): 0.30}


def controls_board(tmp_path) -> Board:
    cells = {}
    for (model, task), value in SCORES.items():
        path = tmp_path / model.replace("/", "__") / f"{task}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"chance": 0.14, "majority": 0.14}
        if (model, task) in CONTROLS:
            record["shuffled"] = CONTROLS[(model, task)]
        path.write_text(json.dumps({"maeb": {"baselines": {"test": {"default": record}}}}))
        cells[(model, task)] = [Score(model, "1", task, "test", "default", value, source=str(path))]
    rows = [
        Row(m, ["1"], rank=i, tasks={"TESS": v}, types={"AudioClassification": v}, mean_task=v, mean_tasktype=v, n_tasks=1)
        for i, ((m, _), v) in enumerate(sorted(SCORES.items(), key=lambda kv: -kv[1]), 1)
    ]
    return Board(None, [TaskInfo("TESS", "AudioClassification")], rows, cells=cells)


def test_each_model_shows_its_own_shuffled_control_and_no_task_row(tmp_path):
    board = controls_board(tmp_path)
    data = to_json(board)
    assert "shuffled" not in data["tasks"][0]  # no task-level control
    got = {m["model"]: m.get("shuffled") for m in data["models"]}
    assert got == {"spotify/basic-pitch": {"TESS": 0.187}, "maeb/mfcc-stats": {"TESS": 0.146}, "o/none": None}
    md = to_markdown_by_task(board)
    assert "Shuffled |" not in md and "| 55.0 (shuffled 18.7) |" in md and "| 40.0 (shuffled 14.6) |" in md
    page = to_html(board, "rows")
    tasks_table = page.split('<table id="tasks"')[1].split("</table>")[0]
    assert ">Shuffled<" not in tasks_table and "55.0 (shuffled 18.7)" in tasks_table and "40.0 (shuffled 14.6)" in tasks_table
    cards = json.loads(re.search(r'<script type="application/json" id="page-data">(.*?)</script>', page, re.S).group(1))
    assert cards["scores"]["spotify/basic-pitch"][0][2] == "55.0 (shuffled 18.7)"
    assert cards["scores"]["maeb/mfcc-stats"][0][2] == "40.0 (shuffled 14.6)"
    assert cards["scores"]["o/none"][0][2] == "30.0"
    assert "its label-shuffled control: 18.7" in page and "its label-shuffled control: 14.6" in page
