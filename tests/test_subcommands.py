"""`python -m maeb robust` and `python -m maeb durations` are subcommands of the command line; the old
`python -m maeb.benchmarks.robust` and `python -m maeb.analysis.durations` take the same flags, print the same output and
say the new command on stderr (kept for one release)."""

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


def test_durations_subcommand_and_old_module_print_the_same(tmp_path, capsys):
    write_bucketed_result(tmp_path)
    assert main(["durations", "--results", str(tmp_path)]) == 0
    new = capsys.readouterr()
    assert durations.main(["--results", str(tmp_path)]) == 0
    old = capsys.readouterr()
    assert new.out == old.out
    assert "| org/model [head] test (accuracy) | 0.500 (n=3) | 0.250 (n=2) |" in new.out.splitlines()
    assert "python -m maeb durations" in old.err and "python -m maeb durations" not in new.err
    # nothing to show: both exit 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["durations", "--results", str(empty)]) == durations.main(["--results", str(empty)]) == 1


def test_robust_subcommand_and_old_module_run_the_same_view(tmp_path, capsys, monkeypatch):
    """The view itself (MAEB-lite runs) is replaced by a recorder: what is checked is that both
    commands parse the same flags, find the same folders and print and write the same report."""
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
    outputs = []
    for name, call in (("new", lambda f: main(["robust", *f])), ("old", robust.main)):
        assert call([*flags, "--output-dir", str(tmp_path / name)]) == 0
        outputs.append(capsys.readouterr())
    assert outputs[0].out.replace(str(tmp_path / "new"), "OUT") == outputs[1].out.replace(str(tmp_path / "old"), "OUT")
    assert "python -m maeb robust" in outputs[1].err
    assert (tmp_path / "new" / "robust.json").read_text() == (tmp_path / "old" / "robust.json").read_text()
    built = ("built", tmp_path / "lite")
    view_args = (["maeb/mfcc-stats"], ["LiteSpokenDigits"], {"telephone": ("telephone",)}, tmp_path / "cache", tmp_path / "lite")
    assert seen == [built, view_args, built, view_args]
    assert json.loads((tmp_path / "new" / "robust.json").read_text())["curves"][0]["area"] == pytest.approx(0.7)
