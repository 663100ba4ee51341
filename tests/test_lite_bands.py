"""`lite --check` judges the reference's bands by the leaderboard's rule (results.read.check_band):
a stability band, item share or evaluator spread of 1e9, NaN, negative or not a number is a failed
line naming the cell, never an allowance that passes every score."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from maeb.benchmarks.lite import vectors as vf
from maeb.benchmarks.lite.runner import reference_dir
from maeb.benchmarks.lite.verdict import check, evaluator_allowance, report

MODEL = "maeb/mfcc-stats"
TASK = "LiteBirdSpecies"


def _copy(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    folder = MODEL.replace("/", "__")
    shutil.copytree(reference_dir() / folder, root / folder)
    target = vf.file_of(root, MODEL)
    target.parent.mkdir(parents=True)
    shutil.copy(vf.file_of(reference_dir(), MODEL), target)
    return root


def _cell(root: Path) -> Path:
    return next((root / MODEL.replace("/", "__")).glob(f"*/{TASK}.json"))


def _moved_scores(moved: float):
    """An evaluator that gives every reference cell its own scores, TASK's moved by `moved`."""

    def evaluate(reference, lite_dir, models, tasks):
        out = {}
        for path in (Path(reference) / MODEL.replace("/", "__")).glob("*/*.json"):
            if path.name == "model_meta.json":
                continue
            scores = json.loads(path.read_text())["scores"]
            if path.stem == TASK:
                for entries in scores.values():
                    for e in entries:
                        e["main_score"] += moved
            out[(MODEL, path.stem)] = scores
        return out

    return evaluate


@pytest.mark.parametrize("key, value", [("band", 1e9), ("band", float("nan")), ("quantum", 1e9), ("band", "0.1")])
def test_a_reference_band_the_leaderboard_sets_aside_fails_the_cell(tmp_path, key, value):
    reference, run = _copy(tmp_path, "reference"), _copy(tmp_path, "run")
    path = _cell(reference)
    data = json.loads(path.read_text())
    data["maeb"]["stability"][key] = value
    path.write_text(json.dumps(data))
    verdict = check(reference, run, tmp_path, models=[MODEL], evaluate=_moved_scores(0.0))
    text = report(verdict, reference, run)
    assert not verdict.passed, text
    assert any(TASK in line and f"maeb.stability.{key}" in line for line in verdict.other), verdict.other


@pytest.mark.parametrize("spread", [1e9, float("nan"), -0.5, None])
def test_an_evaluator_spread_the_leaderboard_sets_aside_fails_the_cell(tmp_path, spread):
    reference, run = _copy(tmp_path, "reference"), _copy(tmp_path, "run")
    path = vf.file_of(reference, MODEL)
    v = vf.read(path)
    meta = dict(v.meta)
    meta["evaluators"] = {**meta["evaluators"], TASK: {**meta["evaluators"][TASK], "spread": spread}}
    vf.write(path, v.by_key(), dict(zip(v.keys, v.names)), meta)
    verdict = check(reference, run, tmp_path, models=[MODEL], evaluate=_moved_scores(0.3))
    assert not verdict.passed
    (line,) = [x for x in verdict.failures["evaluators"] if TASK in x]
    assert "evaluator spread" in line and MODEL in line


def test_allowance_is_never_nan():
    ref = json.loads(_cell(reference_dir()).read_text())
    allowed, _ = evaluator_allowance(ref, {"spread": float("nan")})
    assert allowed == 0.0 and not math.isnan(allowed)


def test_the_committed_reference_passes_against_itself(tmp_path):
    reference, run = _copy(tmp_path, "reference"), _copy(tmp_path, "run")
    verdict = check(reference, run, tmp_path, models=[MODEL], evaluate=_moved_scores(0.0))
    assert verdict.passed, report(verdict, reference, run)
