"""`maeb correlate`: per-model means on a task set against an external score column."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from maeb.analysis.correlate import (
    PAPER_TASK_COUNT,
    batch_stats,
    bootstrap,
    correlate,
    match_names,
    preset_note,
    preset_tasks,
    to_html,
    to_text,
)
from maeb.cli.commands import main
from maeb.core.errors import MaebError
from maeb.spec import catalog

from .conftest import SHARED


def write_results(root, table: dict[str, dict[str, float]]):
    """mteb's layout, {org}__{model}/{revision}/{Task}.json, one accuracy per file."""
    for model, tasks in table.items():
        folder = root / model.replace("/", "__", 1) / "rev1"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "model_meta.json").write_text(json.dumps({"name": model}))
        for task, value in tasks.items():
            entry = {"accuracy": value, "main_score": value, "hf_subset": "default"}
            data = {"task_name": task, "mteb_version": "2.0.0", "scores": {"test": [entry]}}
            (folder / f"{task}.json").write_text(json.dumps(data))
    return root


def write_csv(path, rows: dict[str, float], model="model", score="score"):
    path.write_text(f"{model},{score}\n" + "".join(f"{m},{v!r}\n" for m, v in rows.items()))
    return path


TASKS = ["LocalA", "LocalB", "LocalC"]
TABLE = {
    "org/m1": {"LocalA": 0.10, "LocalB": 0.30, "LocalC": 0.20},
    "org/m2": {"LocalA": 0.50, "LocalB": 0.40, "LocalC": 0.45},
    "org/m3": {"LocalA": 0.70, "LocalB": 0.90, "LocalC": 0.60},
    "org/m4": {"LocalA": 0.35, "LocalB": 0.25, "LocalC": 0.80},
}


def means(table):
    return {m: float(np.mean([v[t] for t in TASKS])) for m, v in table.items()}


def test_exact_linear_relation_gives_one(tmp_path):
    results = write_results(tmp_path / "results", TABLE)
    external = write_csv(tmp_path / "ext.csv", {m: 2 * v + 1 for m, v in means(TABLE).items()})
    c, _ = correlate([results], external, tasks=TASKS, n_bootstrap=200)
    assert len(c.models) == 4 and c.tasks == TASKS
    for key in ("pearson_r", "spearman_rho", "r_squared"):
        assert c.stats[key] == pytest.approx(1.0, abs=1e-12)
    assert c.fit["slope"] == pytest.approx(2.0, abs=1e-9) and c.fit["intercept"] == pytest.approx(1.0, abs=1e-9)
    assert {p["model"]: p["mean"] for p in c.models} == pytest.approx(means(TABLE), abs=1e-12)


def test_reversed_order_gives_rho_minus_one(tmp_path):
    results = write_results(tmp_path / "results", TABLE)
    # monotone decreasing but not linear: rho is exactly -1, r is not
    external = write_csv(tmp_path / "ext.csv", {m: -(v**3) for m, v in means(TABLE).items()})
    c, _ = correlate([results], external, tasks=TASKS, n_bootstrap=50)
    assert c.stats["spearman_rho"] == pytest.approx(-1.0, abs=1e-12)
    assert -1.0 < c.stats["pearson_r"] < -0.9
    assert c.stats["r_squared"] == pytest.approx(c.stats["pearson_r"] ** 2, abs=1e-15)


def test_pearson_on_four_points_by_hand(tmp_path):
    x = {"org/a": 0.1, "org/b": 0.2, "org/c": 0.4, "org/d": 0.7}
    y = {"org/a": 1.0, "org/b": 3.0, "org/c": 2.0, "org/d": 5.0}
    results = write_results(tmp_path / "results", {m: {"LocalA": v} for m, v in x.items()})
    c, _ = correlate([results], write_csv(tmp_path / "ext.csv", y), tasks=["LocalA"], n_bootstrap=20)
    # deviations from the means 0.35 and 2.75: sum dx*dy = 1.15, sum dx^2 = 0.21, sum dy^2 = 8.75
    by_hand = 1.15 / math.sqrt(0.21 * 8.75)
    assert c.stats["pearson_r"] == pytest.approx(by_hand, abs=1e-12)
    assert by_hand == pytest.approx(np.corrcoef(list(x.values()), list(y.values()))[0, 1], abs=1e-12)
    assert c.stats["spearman_rho"] == pytest.approx(1 - 6 * 2 / (4 * 15), abs=1e-12)  # ranks 1234 vs 1324
    # one task: every task resample is that task, so the interval over tasks is the point itself
    ci = c.intervals["tasks"]["pearson_r"]
    assert ci["low"] == pytest.approx(by_hand, abs=1e-12) and ci["high"] == pytest.approx(by_hand, abs=1e-12)


def test_vectorised_statistics_match_scipy():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(50, 7)), rng.normal(size=(50, 7))
    x[:, 2] = x[:, 3]  # ties, which Spearman ranks by their average
    got = batch_stats(x, y)
    for i in range(50):
        assert got["pearson_r"][i] == pytest.approx(pearsonr(x[i], y[i]).statistic, abs=1e-12)
        assert got["spearman_rho"][i] == pytest.approx(spearmanr(x[i], y[i]).statistic, abs=1e-12)
    flat = batch_stats(np.ones((1, 5)), np.arange(5.0)[None])  # a model drawn n times: undefined, not 0
    assert np.isnan(flat["pearson_r"][0]) and np.isnan(flat["spearman_rho"][0])


@pytest.mark.parametrize("scale", [1e-13, 1e-7, 1e6])
def test_constancy_is_judged_relative_to_the_scores_scale(scale):
    # external scores of any unit: the spread of [1, 3, 2, 5, 4] x 1e-13 is a spread, as scipy says
    rng = np.random.default_rng(4)
    matrix = np.clip(np.linspace(0.2, 0.8, 5)[:, None] + rng.normal(0, 0.05, (5, 6)), 0, 1)
    y = np.array([1.0, 3.0, 2.0, 5.0, 4.0]) * scale
    x = matrix.mean(axis=1)
    got = batch_stats(x[None], y[None])
    assert got["pearson_r"][0] == pytest.approx(pearsonr(x, y).statistic, abs=1e-9)
    assert got["spearman_rho"][0] == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    intervals = bootstrap(matrix, y, 200, seed=0)
    assert intervals["tasks"]["pearson_r"]["undefined"] == 0  # every task resample keeps 5 distinct models
    assert intervals["models"]["pearson_r"]["undefined"] < 20  # only resamples that draw one model throughout
    assert np.isnan(batch_stats(np.full((1, 5), 3e-13), y[None])["pearson_r"][0])  # a constant stays undefined


def test_constant_external_scores_are_one_line(tmp_path):
    # found by the round-3 probe: scipy's ConstantInputWarning and a table of NaN
    results = write_results(tmp_path / "results", TABLE)
    external = write_csv(tmp_path / "ext.csv", {m: 5.0 for m in TABLE})
    with pytest.raises(MaebError, match=r"external scores \('score'\) of the 4 models are all equal \(5\)"):
        correlate([results], external, tasks=TASKS, n_bootstrap=10)


def synthetic(n_tasks: int, seed: int = 0):
    """10 models of rising quality, n_tasks noisy tasks, an external score that tracks quality."""
    rng = np.random.default_rng(seed)
    quality = np.linspace(0, 1, 10)
    matrix = np.clip(0.3 + 0.4 * quality[:, None] + rng.normal(0, 0.15, (10, n_tasks)), 0, 1)
    return matrix, 50 + 30 * quality + rng.normal(0, 3, 10)


def test_bootstrap_intervals_hold_the_estimate_and_shrink_with_more_tasks():
    widths = {}
    for n_tasks in (4, 60):
        matrix, y = synthetic(n_tasks)
        point = batch_stats(matrix.mean(axis=1)[None], y[None])
        ci = bootstrap(matrix, y, 1000, seed=1)
        for over in ("tasks", "models"):
            for key in ("pearson_r", "spearman_rho", "r_squared"):
                assert ci[over][key]["low"] <= point[key][0] <= ci[over][key]["high"], (n_tasks, over, key)
        widths[n_tasks] = ci["tasks"]["pearson_r"]["high"] - ci["tasks"]["pearson_r"]["low"]
    assert widths[60] < widths[4] / 2
    a, b = bootstrap(*synthetic(4), 300, seed=5), bootstrap(*synthetic(4), 300, seed=5)
    assert a == b  # the seed fixes the resamples


def test_model_missing_a_task_is_left_out_and_named(tmp_path):
    table = {**TABLE, "org/m5": {"LocalA": 0.9, "LocalB": 0.9}}  # no LocalC
    results = write_results(tmp_path / "results", table)
    ext = {m: 2 * v + 1 for m, v in means(TABLE).items()} | {"org/m5": 0.0}  # would break r = 1 if it counted
    c, _ = correlate([results], write_csv(tmp_path / "ext.csv", ext), tasks=TASKS, n_bootstrap=20)
    assert {p["model"] for p in c.models} == set(TABLE) and c.left_out == {"org/m5": ["LocalC"]}
    assert c.stats["pearson_r"] == pytest.approx(1.0, abs=1e-12)
    assert "- org/m5 (in the CSV as 'org/m5'): lacks LocalC" in to_text(c)


def test_names_match_exactly_then_by_suffix_ignoring_case():
    models = ["org/Model-A", "x/dup", "y/dup", "org/b", "b"]
    matched, unmatched = match_names(["MODEL-A", "other/model-a", "dup", "b", "nothing"], models)
    assert matched == {"MODEL-A": "org/Model-A", "b": "b"}  # "b" names "b" exactly, not "org/b"
    assert "already matched" in unmatched["other/model-a"]
    assert "ambiguous" in unmatched["dup"] and unmatched["nothing"] == "no result model of that name"


def test_suffix_matching_in_the_analysis(tmp_path):
    results = write_results(tmp_path / "results", TABLE)
    ext = {m.split("/")[1].upper(): 2 * v + 1 for m, v in means(TABLE).items()} | {"Pengi": 40.0}
    c, _ = correlate([results], write_csv(tmp_path / "ext.csv", ext, "name", "mmau"), TASKS, None, "name", "mmau", 20)
    assert {p["model"]: p["external_name"] for p in c.models} == {m: m.split("/")[1].upper() for m in TABLE}
    assert list(c.unmatched) == ["Pengi"] and "Pengi" in to_text(c)


def test_preset_is_the_maeb_plus_classification_tasks():
    tasks = preset_tasks("maeb-llm")
    plus = set(catalog.find_benchmark("MAEB+").tasks)
    assert len(tasks) == 30 != PAPER_TASK_COUNT and len(set(tasks)) == 30
    assert set(tasks) <= plus
    assert {catalog.find_task(t).mteb_type for t in tasks} == {"AudioClassification"}
    assert "30 MAEB+ tasks" in preset_note("maeb-llm") and "26" in preset_note("maeb-llm")
    reference = SHARED / "reference" / "maeb_tasks.json"
    if reference.exists():  # the task facts recorded from mteb agree
        facts = json.loads(reference.read_text())["tasks"]
        expected = {t["name"] for t in facts if t["type"] == "AudioClassification" and "MAEB+" in t["benchmarks"]}
        assert set(tasks) == expected


def test_html_has_one_point_per_model_and_fetches_nothing(tmp_path):
    table = {**TABLE, "org/m5": {"LocalA": 0.2, "LocalB": 0.6, "LocalC": 0.3}}
    results = write_results(tmp_path / "results", table)
    ext = {m: 10 * v for m, v in means(table).items()}
    c, _ = correlate([results], write_csv(tmp_path / "ext.csv", ext), tasks=TASKS, n_bootstrap=20)
    page = to_html(c)
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert svg.count('<circle class="point"') == 5 and svg.count('class="fit"') == 1
    assert all(f">{m.split('/')[1]}</text>" in svg for m in table)
    assert "<script" not in page and "src=" not in page and "href=" not in page


def test_cli_outputs_and_one_line_errors(tmp_path, capsys):
    results = write_results(tmp_path / "results", TABLE)
    ext = write_csv(tmp_path / "ext.csv", {m: 2 * v + 1 for m, v in means(TABLE).items()})
    out_json, out_html = tmp_path / "c.json", tmp_path / "c.html"
    argv = ["correlate", "--results", str(results), "--external", str(ext), "--tasks", *TASKS, "--bootstrap", "50"]
    assert main([*argv, "--json", str(out_json), "--html", str(out_html)]) == 0
    text = capsys.readouterr().out
    assert "| Pearson r | 1.000 |" in text and "4 models, 3 tasks" in text
    data = json.loads(out_json.read_text())
    assert data["stats"]["spearman_rho"] == pytest.approx(1.0) and data["bootstrap"] == 50
    assert "<svg" in out_html.read_text()
    assert main([*argv, "--score-column", "mmau"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no column 'mmau'" in err[0] and "model, score" in err[0]
    assert main(["correlate", "--results", str(results), "--external", str(ext), "--tasks", "LocalA", "NoSuchTask"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
