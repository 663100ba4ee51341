"""What the leaderboard refuses to read: non-finite and out-of-range main scores, splits the task is
not evaluated on. Each rejected file is reported once, names the file and says why, and the board
equals the board built by hand from the valid entries alone."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from maeb.analysis.leaderboard import aggregate, load_board
from maeb.cli.commands import main
from maeb.results.read import Score, check_value, metric_range, read_results
from maeb.spec import catalog

from .conftest import SHARED

REF = SHARED / "reference" / "mteb_results"

# what maeb's runner records about a local task (a user's own spec file, not in the catalog)
DIGITS = {
    "name": "MyDigits",
    "type": "AudioClassification",
    "category": "a2c",
    "domains": ["speech"],
    "languages": ["eng-Latn"],
    "main_score": "accuracy",
    "eval_splits": ["test"],
    "family": None,
}


def entry(value, metric="accuracy", subset="default", **more):
    return {metric: value, "main_score": value, "hf_subset": subset, **more}


def write_result(root: Path, model: str, task: str, scores: dict, maeb: dict | None = None, revision="r1", **top) -> Path:
    """One TaskResult in mteb's layout, as maeb's runner writes it (json allows Infinity and NaN)."""
    folder = root / model.replace("/", "__", 1) / revision
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model_meta.json").write_text(json.dumps({"name": model, "revision": revision}))
    payload = {"task_name": task, "mteb_version": "2.26.24", "scores": scores, "evaluation_time": 3.0, **top}
    if maeb is not None:
        payload["maeb"] = maeb
    path = folder / f"{task}.json"
    path.write_text(json.dumps(payload))
    return path


def skipped_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("maeb: skipped")]


@pytest.mark.parametrize(
    "metric, bounds",
    [
        ("accuracy", (0.0, 1.0)),
        ("f1_weighted", (0.0, 1.0)),
        ("precision", (0.0, 1.0)),
        ("recall_weighted", (0.0, 1.0)),
        ("max_ap", (0.0, 1.0)),
        ("cosine_ap", (0.0, 1.0)),
        ("similarity_ap", (0.0, 1.0)),  # the model's own similarity: a pair-classification prefix
        ("map_at_1000", (0.0, 1.0)),
        ("ndcg_at_10", (0.0, 1.0)),
        ("mrr_at_10", (0.0, 1.0)),
        ("mrr@10", (0.0, 1.0)),
        ("recall_at_5", (0.0, 1.0)),
        ("precision_at_1", (0.0, 1.0)),
        ("hit_rate_at_5", (0.0, 1.0)),
        ("cv_recall_at_5", (0.0, 1.0)),
        ("v_measure", (0.0, 1.0)),
        ("lrap", (0.0, 1.0)),
        ("judge_score", (0.0, 1.0)),  # after division by main_score_scale
        ("ami", (-1.0, 1.0)),
        ("ari", (-1.0, 1.0)),
        ("cosine_spearman", (-1.0, 1.0)),
        ("date_score_caption", (-1.0, 1.0)),  # cosine-based caption scores
        ("nauc_ndcg_at_10_max", (-1.0, 1.0)),
        ("cosine_accuracy_threshold", None),  # thresholds are distances, not scores
        ("cosine_f1_threshold", None),
        ("v_measure_std", None),
        ("cider", None),  # unbounded above: only finiteness is checked
        (None, None),
    ],
)
def test_metric_ranges(metric, bounds):
    assert metric_range(metric) == bounds


def test_check_value_knows_signed_metrics_rounding_and_judge_scales():
    assert check_value(-0.02, "ami") is None  # AMI of a worse-than-chance clustering
    assert "outside [0, 1]" in check_value(-0.02, "accuracy")
    assert check_value(1.0000004, "accuracy") is None  # results are rounded to 6 places
    assert "outside" in check_value(1.00001, "accuracy")
    assert check_value(0.75, "judge_score", scale=10.0) is None  # 7.5 / 10
    assert "main_score_scale" in check_value(7.5, "judge_score")  # a scale-less judge file: the hint says why
    assert check_value(123.0, "cider") is None and check_value(123.0, None) is None
    assert "NaN" in check_value(math.nan, None) and "inf" in check_value(math.inf, None)
    assert "-inf" in check_value(-math.inf, "cider")


def test_inf_and_out_of_range_scores_are_reported_and_never_ranked(tmp_path, capsys):
    root = tmp_path / "res"
    rec = {"task": DIGITS}
    bad = {
        "o/inf": write_result(root, "o/inf", "MyDigits", {"test": [entry(float("inf"))]}, rec),
        "o/big": write_result(root, "o/big", "MyDigits", {"test": [entry(98.0)]}, rec),
        "o/neg": write_result(root, "o/neg", "MyDigits", {"test": [entry(-5.0)]}, rec),
    }
    write_result(root, "o/a", "MyDigits", {"test": [entry(0.8)]}, rec)
    write_result(root, "o/b", "MyDigits", {"test": [entry(0.6)]}, rec)
    # a catalog task: the catalog's metric (accuracy on its eval split) judges a file without a record
    crema = catalog.find_task("CREMA_D")
    split = crema.data.eval_splits[0]
    bad["o/neg-crema"] = write_result(root, "o/neg-crema", "CREMA_D", {split: [entry(-5.0, metric=crema.main_score)]})
    write_result(root, "o/a", "CREMA_D", {split: [entry(0.5, metric=crema.main_score)]})
    write_result(root, "o/b", "CREMA_D", {split: [entry(0.7, metric=crema.main_score)]})

    board, problems = load_board([root])
    assert sorted(r.model for r in board.rows) == ["o/a", "o/b"]  # no wrong value enters, inf does not win
    assert len(problems) == len(bad)
    for model, path in bad.items():
        (line,) = [p for p in problems if p.startswith(str(path))]
        assert ("is inf; not a finite number" in line) if model == "o/inf" else ("outside [0, 1]" in line and "accuracy" in line)
    # the same board as one built by hand from the valid entries alone
    valid = [
        Score("o/a", "r1", "MyDigits", "test", "default", 0.8),
        Score("o/b", "r1", "MyDigits", "test", "default", 0.6),
        Score("o/a", "r1", "CREMA_D", split, "default", 0.5),
        Score("o/b", "r1", "CREMA_D", split, "default", 0.7),
    ]
    expected = aggregate(valid, infos={})
    assert [(r.model, r.points, r.mean_task) for r in board.rows] == [(r.model, r.points, r.mean_task) for r in expected.rows]
    assert {r.model: r.points for r in board.rows} == {"o/a": 1.0, "o/b": 1.0}  # one win each among 2 models

    assert main(["leaderboard", "--results", str(root), "--format", "csv"]) == 0
    lines = skipped_lines(capsys)
    assert len(lines) == len(bad) and all(any(str(p) in line for line in lines) for p in bad.values())


def test_csv_rows_are_checked_against_the_catalog_metric(tmp_path):
    crema = catalog.find_task("CREMA_D")
    split = crema.data.eval_splits[0]
    table = tmp_path / "main_scores.csv"
    table.write_text(
        "model,revision,task,split,subset,main_score\n"
        f"o/a,r,CREMA_D,{split},default,0.5\n"
        f"o/b,r,CREMA_D,{split},default,inf\n"
        f"o/c,r,CREMA_D,{split},default,42\n"
        f"o/d,r,CREMA_D,{split},default,0.25\n"
        "o/d,r,CREMA_D,validation,default,0.99\n"
        "o/e,r,LocalThing,test,default,42\n"  # a task nobody knows: no range to check it against
    )
    board, problems = load_board([table])
    got = {r.model: r.tasks for r in board.rows}
    assert got == {
        "o/a": {"CREMA_D": 0.5, "LocalThing": None},
        "o/d": {"CREMA_D": 0.25, "LocalThing": None},
        "o/e": {"CREMA_D": None, "LocalThing": 42.0},
    }
    assert sorted(p.split(": ", 1)[0] for p in problems) == sorted([f"{table}:3", f"{table}:4", str(table)])
    assert any("1 row of CREMA_D in split 'validation' left out" in p for p in problems)


def test_a_validation_only_file_does_not_blank_the_task(tmp_path, capsys):
    root = tmp_path / "res"
    rec = {"task": DIGITS}
    for model, value in (("o/a", 0.9), ("o/b", 0.7), ("o/c", 0.5)):
        write_result(root, model, "MyDigits", {"test": [entry(value)]}, rec)
    stray = write_result(root, "o/d", "MyDigits", {"validation": [entry(0.95)]}, rec)
    # a file with both: only its test entry counts (its mean is not (0.6 + 0.99) / 2)
    mixed = write_result(root, "o/e", "MyDigits", {"test": [entry(0.6)], "validation": [entry(0.99)]}, rec)

    board, problems = load_board([root])
    got = {r.model: r.tasks["MyDigits"] for r in board.rows}
    assert got == {"o/a": 0.9, "o/b": 0.7, "o/c": 0.5, "o/e": 0.6}  # complete for everyone who has test
    assert all(r.mean_task == got[r.model] for r in board.rows)
    assert [r.model for r in board.rows] == ["o/a", "o/b", "o/e", "o/c"]
    (line,) = [p for p in problems if p.startswith(str(stray))]
    assert "only split 'validation'" in line and "'test'" in line
    (line,) = [p for p in problems if p.startswith(str(mixed))]
    assert "split 'validation' left out" in line
    assert len(problems) == 2

    assert main(["leaderboard", "--results", str(root)]) == 0
    assert len(skipped_lines(capsys)) == 2


def test_eval_splits_come_from_the_catalog_then_records_then_mteb_default(tmp_path):
    # catalog: CREMA_D is evaluated on its catalog split only, whatever a file records
    crema = catalog.find_task("CREMA_D")
    split = crema.data.eval_splits[0]
    other = "test" if split != "test" else "train"
    root = tmp_path / "res"
    write_result(root, "o/a", "CREMA_D", {split: [entry(0.5)], other: [entry(0.9)]}, {"task": {"eval_splits": [other]}})
    res = read_results([root], _catalog_info)
    assert [(s.split, s.value) for s in res.scores] == [(split, 0.5)]

    # a local task with a record in one file only: the other file (an old maeb file) follows it
    local = tmp_path / "local"
    write_result(
        local,
        "o/a",
        "Mine",
        {"dev": [entry(0.4)], "test": [entry(0.1)]},
        {"task": {**DIGITS, "name": "Mine", "eval_splits": ["dev"]}},
    )
    write_result(local, "o/b", "Mine", {"dev": [entry(0.3)], "test": [entry(0.2)]}, {"task_type": "classification"})
    res = read_results([local])
    assert sorted((s.model, s.split) for s in res.scores) == [("o/a", "dev"), ("o/b", "dev")]

    # nothing records the splits (a foreign mteb file): mteb's default, said so in the report
    foreign = tmp_path / "foreign"
    write_result(foreign, "o/a", "Other", {"test": [entry(0.4)]})
    only_dev = write_result(foreign, "o/b", "Other", {"dev": [entry(0.3)]})
    res = read_results([foreign])
    assert [(s.model, s.split) for s in res.scores] == [("o/a", "test")]
    (line,) = res.problems
    assert line.startswith(str(only_dev)) and "default assumed" in line
    # and when no file of the task has a test split, what the files hold is all there is
    lone = tmp_path / "lone"
    write_result(lone, "o/a", "Other", {"dev": [entry(0.4)]})
    assert [s.split for s in read_results([lone]).scores] == ["dev"] and not read_results([lone]).problems


def _catalog_info(name):
    from maeb.analysis.leaderboard import catalog_info

    return catalog_info(name)


def test_bad_scale_time_and_duplicates_are_reported(tmp_path):
    root = tmp_path / "res"
    scale0 = write_result(root, "o/a", "Judged", {"test": [entry(7.0, metric="judge_score")]}, {"main_score_scale": 0})
    inf_time = write_result(
        root,
        "o/b",
        "Judged",
        {"test": [entry(7.0, metric="judge_score")]},
        {"main_score_scale": 10},
        evaluation_time=float("inf"),
    )
    twice = write_result(
        root,
        "o/c",
        "Judged",
        {"test": [entry(6.0, metric="judge_score"), entry(9.0, metric="judge_score")]},
        {"main_score_scale": 10},
    )
    unscaled = write_result(root, "o/d", "Judged", {"test": [entry(6.0, metric="judge_score")]})
    res = read_results([root])
    assert sorted((s.model, s.value, s.evaluation_time) for s in res.scores) == [("o/b", 0.7, None), ("o/c", 0.6, 3.0)]
    by_file = {p.split(": ", 1)[0]: p for p in res.problems}
    assert set(by_file) == {str(scale0), str(inf_time), str(twice), str(unscaled)}
    assert "main_score_scale" in by_file[str(scale0)] and "evaluation_time" in by_file[str(inf_time)]
    assert "twice" in by_file[str(twice)] and "judge scores need maeb.main_score_scale" in by_file[str(unscaled)]


@pytest.mark.skipif(not (REF / "main_scores.csv").exists(), reason="../shared/reference is absent")
def test_published_scores_pass_validation():
    """The real MAEB results are all finite, in range and on their tasks' splits: validation must
    not cost the published leaderboard a single entry."""
    rows = (REF / "main_scores.csv").read_text().count("\n") - 1
    res = read_results([REF / "main_scores.csv"], _catalog_info)
    assert res.problems == [] and len(res.scores) == rows
    raw = read_results([REF / "raw"], _catalog_info)
    assert raw.problems == [] and raw.notes == [] and raw.scores
