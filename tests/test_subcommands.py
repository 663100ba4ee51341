"""`python -m maeb robust` and `python -m maeb durations` are subcommands of the command line (the old
`python -m maeb.benchmarks.robust` and `python -m maeb.analysis.durations` forms went in 0.4.0; they say
the subcommand: tests/test_user_messages.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import maeb.benchmarks.lite.build
import maeb.benchmarks.robust
from maeb.analysis import durations
from maeb.benchmarks import robust
from maeb.cli.commands import main


def write_bucketed_result(root: Path) -> None:
    """One result file in mteb's layout whose maeb section holds duration buckets (values written
    here, so the printed table can be read against them)."""
    rows = [
        {"bucket": "<10 s", "items": 3, "score": 0.5, "max_seconds": 9.0},
        {"bucket": "10-30 s", "items": 2, "score": 0.25, "max_seconds": 20.0},
    ]
    table = {"metric": "accuracy", "edges": [10.0, 30.0], "rows": rows}
    payload = {
        "task_name": "LongClips",
        "maeb": {
            "identity": {"window": "head", "encoder": {"name": "org/model"}},
            "evaluation": {"test": {"default": {"duration_buckets": table}}},
        },
    }
    folder = root / "org__model" / "rev"
    folder.mkdir(parents=True)
    (folder / "LongClips.json").write_text(json.dumps(payload), encoding="utf-8")


def test_durations_subcommand_prints_the_buckets(tmp_path, capsys):
    write_bucketed_result(tmp_path)
    assert main(["durations", "--results", str(tmp_path)]) == 0
    new = capsys.readouterr()
    assert "| org/model [head] test (accuracy) | 0.500 (n=3) | 0.250 (n=2) |" in new.out.splitlines()
    assert new.out.strip() == durations.to_text(durations.collect(tmp_path, None)).strip()
    # nothing to show: exit 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["durations", "--results", str(empty)]) == 1


def test_robust_subcommand_runs_the_view_and_writes_the_report(tmp_path, capsys, monkeypatch):
    """The view itself (MAEB-lite runs) is replaced by a recorder: what is checked is that the
    command parses the flags, finds the folders and prints and writes the report."""
    seen = []

    def view(models, tasks, ladders, output_dir, cache_dir, lite_dir, log=print):
        seen.append((models, tasks, ladders, cache_dir, lite_dir))
        steps = ["clean", *ladders["telephone"]]
        return [robust.Curve(models[0], "telephone", steps, [0.8, 0.6], {tasks[0]: [0.8, 0.6]})]

    monkeypatch.setattr(maeb.benchmarks.robust, "run_view", view)
    monkeypatch.setattr(maeb.benchmarks.lite.build, "build", lambda folder, log=print: seen.append(("built", folder)))
    monkeypatch.setenv("MAEB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MAEB_LITE_DIR", str(tmp_path / "lite"))
    flags = ["--models", "maeb/mfcc-stats", "--tasks", "LiteSpokenDigits", "--ladders", "telephone"]
    assert main(["robust", *flags, "--output-dir", str(tmp_path / "new")]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'new'}/robust.{{html,md,json}}" in out and "telephone" in out
    assert {p.name for p in (tmp_path / "new").iterdir()} == {"robust.html", "robust.md", "robust.json"}
    built = ("built", tmp_path / "lite")
    view_args = (["maeb/mfcc-stats"], ["LiteSpokenDigits"], {"telephone": ("telephone",)}, tmp_path / "cache", tmp_path / "lite")
    assert seen == [built, view_args]
    assert json.loads((tmp_path / "new" / "robust.json").read_text())["curves"][0]["area"] == pytest.approx(0.7)
