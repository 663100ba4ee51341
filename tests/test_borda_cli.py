"""`maeb leaderboard --borda mteb|paper` and `maeb lite --borda`: the rule reaches the ranking, and every
output names it (markdown a line under the table, CSV a `borda_rule` column pandas loads, JSON a
`borda_rule` key, LaTeX the caption). The boards are local tasks in a flat main_scores.csv, hand-built
so the two rules give different ranks (the rules' arithmetic itself: tests/test_borda_rules.py)."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from maeb.analysis.leaderboard import BORDA_RULES
from maeb.cli.commands import build_parser, main

# x ran T1 only and wins it; y and z ran all three. mteb: x 2, y 1+2+1=4, z 0+1+2=3 -> y, z, x.
# paper: x 2 (beats both on T1), y 1+1+0=2, z 0+0+1=1 -> x and y share rank 1, z 3.
ROWS = [("o/x", "T1", 0.9), ("o/y", "T1", 0.5), ("o/z", "T1", 0.1)]
ROWS += [("o/y", "T2", 0.9), ("o/z", "T2", 0.1), ("o/y", "T3", 0.1), ("o/z", "T3", 0.9)]
EXPECTED = {"mteb": {"o/y": 1, "o/z": 2, "o/x": 3}, "paper": {"o/x": 1, "o/y": 1, "o/z": 3}}


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "main_scores.csv"
    lines = ["model,revision,task,split,subset,main_score"] + [f"{m},r,{t},test,default,{v}" for m, t, v in ROWS]
    path.write_text("\n".join(lines) + "\n")
    return path


def board(capsys, table, fmt: str, *rule: str) -> str:
    capsys.readouterr()
    assert main(["leaderboard", "--results", str(table), "--format", fmt, *rule]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("rule", ["mteb", "paper"])
def test_json_ranks_by_the_rule_and_names_it(capsys, table, rule):
    data = json.loads(board(capsys, table, "json", "--borda", rule))
    assert {m["model"]: m["rank_borda"] for m in data["models"]} == EXPECTED[rule]
    assert data["borda_rule"] == rule


def test_mteb_is_the_default(capsys, table):
    data = json.loads(board(capsys, table, "json"))
    assert data["borda_rule"] == "mteb"
    assert {m["model"]: m["rank_borda"] for m in data["models"]} == EXPECTED["mteb"]


@pytest.mark.parametrize("rule", ["mteb", "paper"])
def test_csv_has_a_borda_rule_column_pandas_loads(capsys, table, rule):
    frame = pd.read_csv(io.StringIO(board(capsys, table, "csv", "--borda", rule)))
    assert set(frame["borda_rule"]) == {rule}
    assert dict(zip(frame["model"], frame["rank_borda"])) == EXPECTED[rule]


@pytest.mark.parametrize("rule", ["mteb", "paper"])
def test_markdown_names_the_rule_under_the_table(capsys, table, rule):
    text = board(capsys, table, "md", "--borda", rule)
    lines = text.splitlines()
    last_row = max(i for i, line in enumerate(lines) if line.startswith("|"))
    named = [line for line in lines[last_row + 1 :] if line.startswith("Ranks: ")]
    assert named == [f"Ranks: {BORDA_RULES[rule]} (--borda {rule})."]


@pytest.mark.parametrize("rule", ["mteb", "paper"])
def test_latex_caption_names_the_rule(capsys, table, rule):
    text = board(capsys, table, "tex", "--borda", rule)
    captions = [line for line in text.splitlines() if line.lstrip().startswith(r"\caption{")]
    assert captions and all(f"--borda {rule}" in c for c in captions)


def test_an_unknown_rule_is_refused_naming_the_choices(capsys, table):
    with pytest.raises(SystemExit):
        main(["leaderboard", "--results", str(table), "--borda", "copeland"])
    assert "choose from 'mteb', 'paper'" in capsys.readouterr().err


def test_lite_passes_the_rule_to_its_leaderboard(monkeypatch):
    from maeb.benchmarks.lite import runner

    seen = {}
    monkeypatch.setattr(runner, "_main", lambda *args: seen.update(args[-1]) or 0)
    assert main(["lite", "--borda", "paper"]) == 0 and seen["borda"] == "paper"
    assert build_parser().parse_args(["lite"]).borda == "mteb"


@pytest.mark.parametrize("rule", ["mteb", "paper"])
def test_lite_leaderboard_ranks_and_names_by_the_rule(tmp_path, rule):
    from maeb.benchmarks.lite import runner

    # the hand-built board on three MAEB-lite tasks, as result files in a run's folder
    lite = {"T1": "LiteSpokenDigits", "T2": "LiteLanguageID", "T3": "LiteSpeakingRate"}
    for model, task, value in ROWS:
        folder = tmp_path / model.replace("/", "__") / "r1"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "model_meta.json").write_text(json.dumps({"name": model}))
        scores = {"all": [{"main_score": value, "accuracy": value, "hf_subset": "default", "languages": []}]}
        result = {"task_name": lite[task], "mteb_version": "2.0.0", "scores": scores}
        (folder / f"{lite[task]}.json").write_text(json.dumps(result))
    text = runner.leaderboard(tmp_path, rule)
    assert f"(--borda {rule})." in text
    data = json.loads((tmp_path / "leaderboard.json").read_text())
    assert data["borda_rule"] == rule and {m["model"]: m["rank_borda"] for m in data["models"]} == EXPECTED[rule]


@pytest.mark.parametrize("rule", ["mteb", "paper"])
def test_html_page_names_the_rule(capsys, table, rule):
    import html

    page = board(capsys, table, "html", "--borda", rule)
    assert f'<p id="borda-rule">{html.escape(f"Ranks: {BORDA_RULES[rule]} (--borda {rule}).")}</p>' in page
    assert f'"borda_rule": "{rule}"' in page  # the JSON the page embeds, for its scripts
