"""Issue 46 item 7: a `--per-item` run does not redo a finished result of a type that writes no
per-item scores (pair classification); one whose per-item files are gone still runs again."""

from __future__ import annotations

import json


def _run(tmp_path, task, *extra) -> int:
    from maeb.cli.commands import main

    args = ["run", "-m", "maeb/mfcc-stats", "-t", str(task), "--output-dir", str(tmp_path / "res")]
    return main([*args, "--cache-dir", str(tmp_path / "cache"), *extra])


def _spec(tmp_path, folder, kind: str):
    task = tmp_path / f"{kind}.toml"
    data = f'[data]\nsource = "audiofolder"\npath = "{folder}"\neval_splits = ["test"]\n'
    if kind == "pair_classification":
        task.write_text(f'name = "Pairs"\ntype = "{kind}"\n{data}[derive]\nkind = "pairs"\nn_pairs = 40\n')
    else:
        task.write_text(f'name = "Tones"\ntype = "{kind}"\n{data}[data.split_by]\ncolumn = "split"\n')
    return task


def test_a_finished_pair_result_is_not_redone_by_per_item(tone_folder, tmp_path, capsys):
    task = _spec(tmp_path, tone_folder, "pair_classification")
    assert _run(tmp_path, task, "--per-item") == 0
    (result,) = (tmp_path / "res").rglob("Pairs.json")
    assert json.loads(result.read_text())["maeb"]["per_item_files"] == []  # the type scores no pair alone
    before = result.stat().st_mtime_ns
    capsys.readouterr()
    assert _run(tmp_path, task, "--per-item") == 0
    err = capsys.readouterr().err
    assert "already done" in err and "no per-item scores" not in err
    assert result.stat().st_mtime_ns == before


def test_a_result_whose_per_item_files_are_gone_runs_again(tone_folder, tmp_path, capsys):
    task = _spec(tmp_path, tone_folder, "classification")
    assert _run(tmp_path, task, "--per-item") == 0
    (per_item,) = (tmp_path / "res").rglob("per_item.tsv")
    (result,) = (tmp_path / "res").rglob("Tones.json")
    assert json.loads(result.read_text())["maeb"]["per_item_files"] == ["per_item.tsv"]
    capsys.readouterr()
    assert _run(tmp_path, task, "--per-item") == 0
    assert "already done" in capsys.readouterr().err  # its file is there
    per_item.unlink()
    assert _run(tmp_path, task, "--per-item") == 0
    assert "no per-item scores; running it again" in capsys.readouterr().err and per_item.exists()
