"""Every band or experiment score a result file holds that cannot be used is set aside with a line
naming the file (docs/uncertainty.md): a negative, NaN or non-number band, a NaN experiment score,
not only values outside the metric's range."""

from __future__ import annotations

import json

import pytest

from .test_uncertainty import write_result


def _set_aside(root):
    from maeb.analysis.leaderboard import load_board
    from maeb.analysis.uncertainty import compute

    board, _ = load_board([root])
    return compute(board, draws=40)


@pytest.mark.parametrize("band", [-0.2, float("nan"), "0.01", True, float("inf")])
def test_a_band_that_is_not_a_finite_number_of_at_least_0_gets_its_line(tmp_path, band):
    write_result(tmp_path, "org/a", "T", [0.61, 0.62, 0.60])
    path = tmp_path / "org__a" / "r1" / "T.json"
    data = json.loads(path.read_text())
    data["maeb"]["stability"] = {"method": "replay", "band": band}
    path.write_text(json.dumps(data))  # (json writes NaN and Infinity, as a foreign writer may)
    write_result(tmp_path, "org/b", "T", [0.30, 0.31, 0.29], band=0.01)
    u = _set_aside(tmp_path)
    assert len(u.set_aside) == 1, u.set_aside
    line = u.set_aside[0]
    assert "org__a" in line and "T" in line and "stability band" in line and "set aside" in line
    assert u.cells[("org/a", "T")].band is None and u.cells[("org/b", "T")].band == 0.01


def test_a_band_not_measured_is_no_line(tmp_path):
    write_result(tmp_path, "org/a", "T", [0.61, 0.62, 0.60])
    path = tmp_path / "org__a" / "r1" / "T.json"
    data = json.loads(path.read_text())
    data["maeb"]["stability"] = {"method": "not measured", "why": "--stability-replays 0"}
    path.write_text(json.dumps(data))
    assert _set_aside(tmp_path).set_aside == []


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "0.5", None])
def test_an_experiment_score_that_is_not_a_finite_number_gets_its_line(tmp_path, bad):
    write_result(tmp_path, "org/a", "T", [0.61, 0.62, 0.60])
    path = tmp_path / "org__a" / "r1" / "T.json"
    data = json.loads(path.read_text())
    data["scores"]["test"][0]["scores_per_experiment"][1] = {"accuracy": bad, "main_score": bad}
    path.write_text(json.dumps(data))
    write_result(tmp_path, "org/b", "T", [0.30, 0.31, 0.29])
    u = _set_aside(tmp_path)
    assert len(u.set_aside) == 1, u.set_aside
    assert "org__a" in u.set_aside[0] and "experiment" in u.set_aside[0] and "set aside" in u.set_aside[0]
    assert ("org/a", "T") not in u.cells and u.cells[("org/b", "T")].experiments == 3


def test_the_metrics_nan_falls_back_to_finite_main_scores_without_a_line(tmp_path):
    """An experiment list whose task metric is NaN but whose main_score is finite is read from the
    main_score, as before: nothing set aside."""
    write_result(tmp_path, "org/a", "T", [0.61, 0.62, 0.60])
    path = tmp_path / "org__a" / "r1" / "T.json"
    data = json.loads(path.read_text())
    data["scores"]["test"][0]["scores_per_experiment"] = [{"accuracy": float("nan"), "main_score": v} for v in (0.61, 0.62, 0.60)]
    path.write_text(json.dumps(data))
    u = _set_aside(tmp_path)
    assert u.set_aside == [] and u.cells[("org/a", "T")].experiments == 3


def test_the_band_rule_is_one_function():
    from maeb.results.read import check_band

    assert check_band(0.01, "accuracy") is None and check_band(0, "v_measure") is None
    assert "wider" in check_band(1e9, "accuracy")
    assert "negative" in check_band(-1, "accuracy")
    assert "finite" in check_band(float("nan"), None)
    assert "not a number" in check_band("x", "accuracy") and "not a number" in check_band(False, "accuracy")
