"""Chance and majority beside the models on the boards (issue 34's baseline row, issue 37 item 1): the page's
reference rows sit under the models, unranked and in no mean; a task whose models are not separated (near
100, near chance, or all on one score) is flagged with the rule; a clustering chance level is said to be no floor."""

from __future__ import annotations

import json
import re

from maeb.analysis.baselines import not_separating
from maeb.analysis.leaderboard import Board, Row, Score, TaskInfo
from maeb.analysis.page import to_html
from maeb.analysis.report import FLAT_MARK, to_markdown, to_markdown_by_task

TASKS = {  # task: (type, chance, majority, {model: score})
    "Top": ("AudioClassification", 0.1, 0.1, {"o/a": 0.944, "o/b": 0.97}),  # issue 37's LiteSoundReranking: 94-97
    "High": ("AudioClassification", 0.1, 0.1, {"o/a": 0.90, "o/b": 0.99}),  # ten times the errors: separated
    "Floor": ("AudioClassification", 0.5, 0.6, {"o/a": 0.62, "o/b": 0.55}),
    "Same": ("AudioClassification", 0.1, 0.1, {"o/a": 0.705, "o/b": 0.70}),
    "Good": ("AudioClassification", 0.1, 0.1, {"o/a": 0.80, "o/b": 0.40}),
    "Clus": ("AudioClustering", 0.30, 0.0, {"o/a": 0.20, "o/b": 0.60}),
}


def board(tmp_path) -> Board:
    cells = {}
    for task, (_, chance, majority, scores) in TASKS.items():
        for model, value in scores.items():
            path = tmp_path / model.replace("/", "__") / f"{task}.json"
            path.parent.mkdir(exist_ok=True)
            record = {"test": {"default": {"chance": chance, "majority": majority}}}
            path.write_text(json.dumps({"maeb": {"baselines": record}}))
            cells[(model, task)] = [Score(model, "1", task, "test", "default", value, source=str(path))]
    rows = []
    for rank, model in enumerate(("o/a", "o/b"), 1):
        tasks = {t: s[model] for t, (_, _, _, s) in TASKS.items()}
        types = {"AudioClassification": 0.6, "AudioClustering": tasks["Clus"]}
        rows.append(Row(model, ["1"], rank=rank, tasks=tasks, types=types, mean_task=0.6, mean_tasktype=0.5, n_tasks=6))
    infos = [TaskInfo(t, ty) for t, (ty, *_) in TASKS.items()]
    return Board(None, infos, rows, cells=cells)


def test_not_separating_follows_the_stated_rule(tmp_path):
    flat = not_separating(board(tmp_path))
    assert sorted(flat) == ["Floor", "Same", "Top"]
    assert "within 10 points of 100 (94.4–97.0)" in flat["Top"] and "chance/majority 60.0" in flat["Floor"]
    assert "0.5 points apart" in flat["Same"]


def test_markdown_boards_flag_tasks_and_say_what_clustering_chance_is(tmp_path):
    b = board(tmp_path)
    by_task = to_markdown_by_task(b)
    assert f"| Top {FLAT_MARK} |" in by_task and f"| Good {FLAT_MARK}" not in by_task and "| Good |" in by_task
    assert f"{FLAT_MARK} not separating models (a task with two or more models" in by_task
    assert "a reference, not a floor. Here: Clus (chance 30.0, above 1 model)." in by_task
    columns = to_markdown(b, "columns")
    assert f"| Same {FLAT_MARK} |" in columns and "not separating models" in columns
    assert "not separating" not in to_markdown(b)  # the summary alone: the tasks table says it


def test_page_has_unranked_chance_and_majority_rows_and_the_flags(tmp_path):
    page = to_html(board(tmp_path), "columns")
    body = page.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr ") == 2 and "Chance" not in body  # the models only: sorting and ranks never see them
    foot = page.split("<tfoot>")[1].split("</tfoot>")[0]
    chance, majority = re.findall(r'<tr class="reference">(.*?)</tr>', foot)
    assert "Chance" in chance and "Majority" in majority and "not ranked" in chance
    # these records predate the stored error: the chance cell says it was drawn, its hover that the error is unknown
    assert re.search(r'<td class="task" data-task="Floor" title="[^"]*not stored[^"]*">50.0 \(drawn\)</td>', chance)
    assert '<td class="task" data-task="Floor">60.0</td>' in majority
    assert "background: hsl" not in foot  # no score shading: a reference does not read as a model
    assert 'id="separation"' in page and '<span class="flat" title="not separating models: every model' in page
    assert 'id="clustering-chance"' in page and "not a floor" in page


def test_page_tells_a_first_reader_what_each_part_is(tmp_path, monkeypatch):
    """Issue 34 item 2's reading aids, each asserted: the colour scale's legend, where a cell comes from, a task's
    description on hover, why a blank mean is blank (where it is), why a higher mean can rank lower, the row
    filters, the model card's fields, and no per-model chart (67 models must not make a wall of charts)."""
    from maeb.analysis import page as page_module

    monkeypatch.setattr(page_module, "_figures", lambda *args: '<p id="figures">figures</p>')
    b = board(tmp_path)
    b.rows[1].mean_task = None
    b.rows[1].tasks["Good"] = None
    text = to_html(b, "columns")
    assert '<span class="scale"' in text and "Cell shade: score" in text
    # provenance: a maeb run's result file; this one records no date, so the day it was written
    assert 'title="o/a on Top: 94.4; maeb run Top.json, undated in the file, file written 20' in text
    assert 'title="Top (AudioClassification; domains: none recorded; main score: unknown)"' in text
    assert "no mean: o/b lacks 1 task of this mean (Good)" in text  # said where the blank is
    assert "a model with a higher mean can rank below one with a lower mean" in text
    for select in ("f-bench", "f-type", "f-domain", "f-model", "f-modality", "f-size", "f-license", "f-open", "f-search"):
        assert f'id="{select}"' in text, select
    for field in ("Parameters", "Embedding dimension", "Licence", "Reference", "Revision", "Protocol", "Open weights"):
        assert f"['{field}'" in text, field
    assert "<svg" not in text.split('<p id="figures">')[0]  # no chart in the table: one set of figures for all models


def test_json_results_file_records_levels_and_flags(tmp_path):
    from maeb.analysis.report import to_json

    tasks = {t["name"]: t for t in to_json(board(tmp_path))["tasks"]}
    assert tasks["Floor"]["chance"] == 0.5 and tasks["Floor"]["majority"] == 0.6
    assert tasks["Floor"]["not_separating"].startswith("every model at most 5 points above")
    assert tasks["Good"]["not_separating"] is None
