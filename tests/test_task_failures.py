"""A run of several tasks outlives one bad task (mteb's raise_error=False): the others are
evaluated and written, the bad one is reported with its one-line reason and nothing is written for
it, the exit code is 2; --raise-error (and a single named task) stops at the first failure."""

from __future__ import annotations

import json

import pytest

import maeb
from maeb.cli.commands import main
from maeb.core.errors import MaebError
from maeb.mock import write_tone_folder

from .test_cli import run_args, write_model, write_task


@pytest.fixture
def three_tasks(tmp_path):
    """Two good tasks around one whose label column does not exist (it fails while loading)."""
    tones = write_tone_folder(tmp_path / "tones", {"low": 220.0, "mid": 880.0, "high": 3520.0}, per_label=8)
    first = write_task(tmp_path, tones, "FirstTones", kind="classification")  # (classification: the quickest evaluator)
    broken = write_task(tmp_path, tones, "BrokenTones", kind="classification")
    broken.write_text(broken.read_text().replace("[data]\n", '[data]\nlabel_column = "no_such_column"\n'))
    last = write_task(tmp_path, tones, "LastTones", kind="classification")
    return first, broken, last


def written(tmp_path) -> set[str]:
    return {p.stem for p in (tmp_path / "res").rglob("*.json")} - {"model_meta"}


def test_the_others_run_and_the_failure_is_listed_with_its_reason(tmp_path, three_tasks, capsys):
    code = main(run_args(tmp_path, write_model(tmp_path), *three_tasks))
    err = capsys.readouterr().err.splitlines()
    assert code == 2
    assert written(tmp_path) == {"FirstTones", "LastTones"}  # nothing for the broken task
    summary = next(line for line in err if line.startswith("test/spectral: "))
    assert "2 tasks evaluated" in summary and "1 failed: BrokenTones" in summary
    reasons = [line for line in err if line.startswith("failed: ")]
    assert len(reasons) == 1 and "BrokenTones" in reasons[0] and "no_such_column" in reasons[0]
    assert not any("Traceback" in line for line in err)

    # the same command after the fix runs only the failed task
    three_tasks[1].write_text(three_tasks[1].read_text().replace('label_column = "no_such_column"\n', ""))
    assert main(run_args(tmp_path, write_model(tmp_path), *three_tasks)) == 0
    err = capsys.readouterr().err
    assert written(tmp_path) == {"FirstTones", "BrokenTones", "LastTones"}
    assert "1 task evaluated; 2 already done" in err


def test_raise_error_stops_at_the_first_failure(tmp_path, three_tasks, capsys):
    code = main(run_args(tmp_path, write_model(tmp_path), *three_tasks, extra=("--raise-error",)))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert written(tmp_path) == {"FirstTones"}  # LastTones never ran
    assert err[-1].startswith("maeb: error: ") and "BrokenTones" in err[-1] and "no_such_column" in err[-1]


def test_a_single_named_task_fails_at_once(tmp_path, three_tasks, capsys):
    code = main(run_args(tmp_path, write_model(tmp_path), three_tasks[1]))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("maeb: error: task BrokenTones") and not any(x.startswith("failed: ") for x in err)


def test_evaluate_exposes_the_same_choice(tmp_path, three_tasks):
    model = str(write_model(tmp_path))
    with pytest.raises(MaebError, match="BrokenTones"):
        maeb.evaluate(model, three_tasks, cache_dir=tmp_path / "cache", progress=False)
    results = maeb.evaluate(model, three_tasks, cache_dir=tmp_path / "cache", progress=False, raise_error=False)
    assert [r.task for r in results] == ["FirstTones", "LastTones"]
    assert list(results.failed) == ["BrokenTones"] and "no_such_column" in results.failed["BrokenTones"]


def test_a_task_that_fails_while_evaluating_writes_nothing(tmp_path, capsys):
    """A failure after the data loaded (a clip that does not decode, found while embedding)."""
    tones = write_tone_folder(tmp_path / "tones", {"low": 220.0, "high": 3520.0}, per_label=8)
    bad = write_tone_folder(tmp_path / "bad", {"low": 220.0, "high": 3520.0}, per_label=8)
    rows = (bad / "metadata.csv").read_text().splitlines()
    victim = next(r.split(",")[0] for r in rows[1:] if r.endswith(",test"))
    (bad / victim).write_bytes(b"RIFF but not a wave file")
    good = write_task(tmp_path, tones, "GoodTones", kind="classification")
    broken = write_task(tmp_path, bad, "BadClipTones", kind="classification")
    code = main(run_args(tmp_path, write_model(tmp_path), broken, good))
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and written(tmp_path) == {"GoodTones"}
    reason = next(line for line in err if line.startswith("failed: "))
    assert "BadClipTones" in reason and victim.split("/")[-1] in reason
    assert json.loads(next((tmp_path / "res").rglob("GoodTones.json")).read_text())["task_name"] == "GoodTones"
