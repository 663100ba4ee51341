"""Issue 46 item 3: no live link or image from a name or a model's metadata. leaderboard.md escapes
Markdown link and image syntax in every cell and line (rendered here with Python-Markdown, which
MkDocs uses), and a `reference` that is not an http(s) URL is dropped from every card, model_meta.json
and the HTML page's card link."""

from __future__ import annotations

import json

import pytest

from maeb.analysis.cards import cards
from maeb.analysis.leaderboard import Board, Row, TaskInfo
from maeb.analysis.report import render
from maeb.core.identity import http_url
from maeb.results.read import Score

LINK = "[click](javascript:alert(1))"
IMAGE = "![x](javascript:alert(2))"


def _board(model: str, task: str = "T0", source: str = "", benchmark: str = "B") -> Board:
    row = Row(model, ["r"], rank=1, mean_task=0.5, n_tasks=1, tasks={task: 0.5}, leaks={task: 2})  # (a leak note names it)
    board = Board(benchmark, [TaskInfo(task, "AudioClassification")], [row], missing_tasks=[IMAGE])
    board.cells[(model, task)] = [Score(model, "r", task, "test", "default", 0.5, source=source)]
    return board


def _html(markdown_text: str) -> str:
    markdown = pytest.importorskip("markdown")
    return markdown.markdown(markdown_text, extensions=["tables"])


@pytest.mark.parametrize("per_task", [None, "columns", "rows"])
def test_no_name_becomes_a_link_or_an_image_in_leaderboard_md(per_task):
    text = render(_board("o/" + LINK, task="Task" + IMAGE, benchmark="B" + LINK), "markdown", per_task=per_task)
    page = _html(text)
    assert "<a " not in page and "<img" not in page and "javascript:" in page  # shown, as text
    assert "[click](javascript:alert(1))" in page  # the reader sees the name as written


def test_a_backslash_in_a_name_cannot_undo_the_escape():
    page = _html(render(_board("o/\\" + LINK + "\\"), "markdown", per_task="rows"))
    assert "<a " not in page


def test_http_url_keeps_only_http_and_https():
    assert http_url("https://huggingface.co/x") == "https://huggingface.co/x"
    assert http_url(" HTTP://example.org/a ") == "HTTP://example.org/a"
    for bad in (
        "javascript:alert(1)",
        "JavaScript://x%0aalert(1)",
        "data:text/html,<b>",
        "file:///etc/passwd",
        "https://x y",
        5,
        None,
    ):
        assert http_url(bad) is None


def _meta_folder(tmp_path, reference):
    folder = tmp_path / "o__m" / "r"
    folder.mkdir(parents=True)
    (folder / "model_meta.json").write_text(json.dumps({"name": "o/m", "reference": reference}))
    (folder / "T0.json").write_text("{}")
    return folder / "T0.json"


@pytest.mark.parametrize("reference", ["javascript:alert(1)", "data:text/html;base64,PHNjcmlwdD4=", "vbscript:x"])
def test_a_non_http_reference_reaches_no_card_and_no_page(tmp_path, reference):
    board = _board("o/m", source=str(_meta_folder(tmp_path, reference)))
    assert cards(board)["o/m"].reference is None
    assert reference not in render(board, "html")


def test_an_https_reference_stays_on_the_card(tmp_path):
    board = _board("o/m", source=str(_meta_folder(tmp_path, "https://example.org/m")))
    assert cards(board)["o/m"].reference == "https://example.org/m"


def test_model_meta_json_records_only_an_http_reference():
    from maeb.encoders import ModelMeta

    meta = ModelMeta(name="o/m", family="mfcc", revision="1", reference="javascript://x%0aalert(1)")
    assert meta.to_mteb()["reference"] is None
