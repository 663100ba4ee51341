"""Clips byte-identical in a task's training and evaluation splits (a train/eval leak): a WARNING
through the `maeb` logger naming the first clips (a notebook shows it with no logging set up), the
whole list in the result and in what maeb.evaluate returns, and a mark on the leaderboards."""

from __future__ import annotations

import csv
import json
import logging
import shutil

import maeb
from maeb.analysis.leaderboard import load_board
from maeb.analysis.report import render

from .test_api import BandEnergy


def _leaky_folder(tmp_path, tone_folder, copies: int):
    """The tone folder with the bytes of `copies` test clips written over as many train clips."""
    folder = tmp_path / "leaky"
    shutil.copytree(tone_folder, folder)
    with open(folder / "metadata.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    tests = [r["file_name"] for r in rows if r["split"] == "test"][:copies]
    trains = [r["file_name"] for r in rows if r["split"] == "train"][:copies]
    for test, train in zip(tests, trains):
        shutil.copy(folder / test, folder / train)
    return folder, list(zip(tests, trains))


def _task(tmp_path, folder, name="Leaky"):
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{folder}"\n'
        'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n[protocol]\nsamples_per_label = 2\n'
    )
    return path


def test_a_leak_is_a_warning_naming_clips_in_the_api_result_and_on_the_boards(tmp_path, tone_folder, caplog):
    folder, pairs = _leaky_folder(tmp_path, tone_folder, 5)
    out = tmp_path / "res"
    tasks = [_task(tmp_path, folder), _task(tmp_path, tone_folder, "Clean")]
    with caplog.at_level(logging.INFO, logger="maeb"):
        leaky, clean = maeb.evaluate(BandEnergy(), tasks, output_dir=out, cache_dir=tmp_path / "cache", progress=False)
    warned = [r for r in caplog.records if r.name == "maeb" and r.levelno == logging.WARNING]
    assert len(warned) == 1, [r.getMessage() for r in caplog.records]
    message = warned[0].getMessage()
    assert "Leaky: 5 clips are byte-identical in the train split and an evaluation split" in message
    named = [test for test, _ in pairs if test in message]
    assert len(named) == 3 and "and 2 more" in message  # the first few, by name, each with its train twin
    assert f"(= train {pairs[0][1]})" in message
    assert leaky.warnings == [message] and clean.warnings == []
    listed = leaky.info["data"]["train_eval_shared_clip_list"]
    assert sorted((e["clip"], e["train_clip"]) for e in listed) == sorted(pairs)
    assert {(e["split"], e["subset"]) for e in listed} == {("test", "default")}
    assert leaky.info["data"]["train_eval_shared_clips"] == 5 and clean.info["data"]["train_eval_shared_clip_list"] == []
    # nothing configured: Python's last-resort handler prints WARNING records of an unconfigured logger
    assert logging.getLogger("maeb").getEffectiveLevel() <= logging.WARNING

    board, problems = load_board([out])
    assert not problems
    [row] = board.rows
    assert row.leaks == {"Leaky": 5}
    md = render(board, "md", "columns")
    assert "me/band-energy \u2020" in md
    header, _, line = md.splitlines()[2:5]
    cells = [c.strip() for c in line.split("|")]
    columns = [c.strip() for c in header.split("|")]
    assert cells[columns.index("Leaky")].endswith("\u2020") and not cells[columns.index("Clean")].endswith("\u2020")
    assert "me/band-energy on Leaky (5 clips)" in md and "train/eval leak" in md
    by_task = render(board, "md", "rows")
    # the model's cell carries the mark; the Chance and Majority columns (maeb.baselines) follow it
    assert "\u2020 |" in by_task.split("| Leaky |")[1].split("\n")[0]
    assert "\u2020 |" not in by_task.split("| Clean |")[1].split("\n")[0]
    page = render(board, "html", "columns")
    assert page.count('class="leak"') == 2 and 'id="leaks"' in page and "Leaky: 5 clips shared" in page
    assert json.loads(render(board, "json"))["models"][0]["train_eval_shared_clips"] == {"Leaky": 5}
