"""Names on boards: the HTML board's embedded JSON, the markdown table and the CSV cells carry a
name's markup, pipes and formulas as text."""

from __future__ import annotations

import json

# item 9: board escaping


def _board_named(name: str):
    from maeb.analysis.leaderboard import Board, Row, TaskInfo

    task = TaskInfo("T0", "AudioClassification")
    return Board(None, [task], [Row(name, ["r"], rank=1, mean_task=0.5, n_tasks=1, tasks={"T0": 0.5})])


def test_the_html_board_embeds_json_with_every_lt_escaped():
    import re

    from maeb.analysis.report import render

    name = "x/<!--<script>alert(1)</script>"
    page = render(_board_named(name), "html")
    [data] = re.findall(r'<script type="application/json" id="leaderboard-data">(.*?)</script>', page, re.S)
    assert "<" not in data and "\\u003c!--" in data
    assert json.loads(data)["models"][0]["model"] == name  # the same JSON for readers of the file


def test_the_markdown_board_escapes_raw_html_and_pipes_in_names():
    from maeb.analysis.report import render

    text = render(_board_named("x/<img src=1 onerror=alert(1)>|y"), "markdown")
    assert "<img" not in text and "&lt;img src=1 onerror=alert(1)&gt;\\|y" in text


def test_csv_cells_that_a_spreadsheet_would_evaluate_get_a_leading_apostrophe():
    import csv
    import io

    from maeb.analysis.report import render

    for name in ('=HYPERLINK("http://x")', "+1", "-cmd", "@SUM(A1)"):
        rows = list(csv.reader(io.StringIO(render(_board_named(name), "csv"))))
        assert rows[1][0] == "'" + name and float(rows[1][2]) == 0.5
        by_task = list(csv.reader(io.StringIO(render(_board_named(name), "csv", per_task="rows"))))
        assert by_task[0][4] == "'" + name
