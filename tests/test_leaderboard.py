"""Leaderboard and task selection: published scores (../shared/reference/mteb_results) checked
against an independent computation written here with pandas, plus hand-made edge cases."""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from maeb.analysis.leaderboard import TaskInfo, aggregate
from maeb.analysis.selection import Matrix, score_matrix, select, sweep, tradeoff
from maeb.results.read import Score, choose_revisions, read_scores
from maeb.spec import catalog

from .conftest import SHARED

REF = SHARED / "reference" / "mteb_results"
needs_ref = pytest.mark.skipif(not (REF / "main_scores.csv").exists(), reason="../shared/reference is absent")


def s(model, task, value, split="test", subset="default", revision="r1", version="2.0.0", time=10.0):
    return Score(model, revision, task, split, subset, value, time, version)


def infos(*specs):
    return {name: TaskInfo(name, kind, cat, tuple(dom), tuple(langs), fam) for name, kind, cat, dom, langs, fam in specs}


def test_ties_missing_tasks_and_partial_subsets():
    scores = [
        s("A", "t1", 0.9),
        s("B", "t1", 0.9),
        s("C", "t1", 0.1),  # A and B tie on t1
        s("A", "t2", 0.5),
        s("B", "t2", 0.7),  # C lacks t2
        s("A", "t3", 0.4, subset="x"),
        s("A", "t3", 0.6, subset="y"),
        s("B", "t3", 0.8, subset="x"),
        s("C", "t3", 0.2, subset="x"),
        s("C", "t3", 0.3, subset="y"),
    ]
    info = infos(
        ("t1", "AudioClassification", "a2c", ["speech"], [], None),
        ("t2", "AudioClassification", "a2c", ["music"], [], None),
        ("t3", "AudioClustering", "a2a", ["speech"], [], None),
    )
    board = aggregate(scores, infos=info)
    rows = {r.model: r for r in board.rows}
    # t1: A,B rank 1.5 -> 1.5 points each, C rank 3 -> 0; t2: B 2, A 1; t3 (B partial 0.8, A 0.5, C 0.25): B 2, A 1, C 0
    assert (
        rows["A"].points == pytest.approx(1.5 + 1 + 1)
        and rows["B"].points == pytest.approx(1.5 + 2 + 2)
        and rows["C"].points == 0
    )
    assert [r.model for r in board.rows] == ["B", "A", "C"] and [r.rank for r in board.rows] == [1, 2, 3]
    assert rows["B"].tasks["t3"] is None and rows["B"].mean_task is None  # B lacks subset y of t3
    assert rows["A"].mean_task == pytest.approx((0.9 + 0.5 + 0.5) / 3)
    assert rows["A"].types == {"AudioClassification": pytest.approx(0.7), "AudioClustering": pytest.approx(0.5)}
    assert rows["A"].mean_tasktype == pytest.approx(0.6) and rows["C"].mean_tasktype is None
    assert rows["A"].domains["music"] == pytest.approx(0.5) and rows["C"].domains["music"] is None
    assert rows["A"].groups == {"audio-only": pytest.approx((0.9 + 0.5 + 0.5) / 3)}
    tied = aggregate([s("A", "t", 0.5), s("B", "t", 0.5), s("C", "t", 0.1)], infos={})
    assert [r.rank for r in tied.rows] == [1, 1, 3]


def random_long_table(rng, subsets=("a", "b"), splits=("test", "dev")) -> list[Score]:
    """Models with missing tasks and partly missing (subset, split) cells; scores k/64, so every
    mean is exact whatever the summation order (polars and numpy sum in different orders, and a
    rounding difference would split a true tie differently)."""
    rows = []
    for m in range(rng.integers(3, 9)):
        for t in range(rng.integers(2, 6)):
            if rng.random() < 0.25:
                continue
            for sub in subsets:
                for split in splits:
                    if rng.random() >= 0.1:
                        rows.append(s(f"m{m}", f"T{t}", int(rng.integers(0, 65)) / 64, split=split, subset=sub))
    return rows


def test_borda_rank_numbers_points_and_order_match_mtebs_own():
    import polars as pl
    from mteb.benchmarks._create_table import _borda_rank_from_long, _build_per_task_pivot

    rng = np.random.default_rng(25)
    compared = hidden = 0
    for _ in range(200):
        rows = random_long_table(rng)
        frame = pl.DataFrame(
            {
                "model_name": [r.model for r in rows],
                "task_name": [r.task for r in rows],
                "split": [r.split for r in rows],
                "subset": [r.subset for r in rows],
                "score": [r.value for r in rows],
            }
        )
        pivot = _build_per_task_pivot(frame)
        board = aggregate(rows, infos={})
        if pivot is None:
            assert board.rows == []
            continue
        per_task, _ = pivot
        theirs = dict(_borda_rank_from_long(frame, n_models=per_task.height).iter_rows())
        shown = sorted(per_task["model_name"].to_list())
        assert sorted(r.model for r in board.rows) == shown
        assert {r.model: r.rank for r in board.rows} == {m: theirs[m] for m in shown}
        assert [r.rank for r in board.rows] == sorted(r.rank for r in board.rows)
        compared += 1
        if len(theirs) > len(shown):
            hidden += 1
            assert any("not shown but take Borda rank numbers" in n for n in board.notes)
    assert compared > 150 and hidden > 10  # the case that differed: models whose every task is incomplete


def test_reading_results_folders(tmp_path):
    root = tmp_path / "results"
    good = root / "org__model" / "rev_old"
    good.mkdir(parents=True)
    (good / "T.json").write_text(
        json.dumps(
            {
                "task_name": "T",
                "mteb_version": "1.38.33",
                "scores": {"test": [{"cv_recall_at_5": 0.25, "main_score": 0.1, "hf_subset": "default"}]},
            }
        )
    )
    new = root / "org__model" / "rev_new"
    new.mkdir()
    (new / "T.json").write_text(
        json.dumps(
            {
                "task_name": "T",
                "mteb_version": "2.1.0",
                "scores": {"test": [{"hit_rate_at_5": 0.5, "main_score": 0.5, "hf_subset": "default"}]},
            }
        )
    )
    (new / "Broken.json").write_text("{ not json")
    (new / "Odd.json").write_text(json.dumps({"task_name": "Odd", "scores": []}))
    (new / "Nan.json").write_text(
        json.dumps({"task_name": "Nan", "scores": {"test": [{"main_score": float("nan"), "hf_subset": "a"}]}})
    )
    (new / "model_meta.json").write_text(json.dumps({"name": "org/model"}))
    scores, problems = read_scores([root], {"T": "hit_rate_at_5"})
    assert {x.value for x in scores if x.revision == "rev_old"} == {0.25}  # the old name of the same metric
    assert len(problems) == 3 and any("Broken.json" in p for p in problems) and any("NaN" in p for p in problems)
    assert all(x.model == "org/model" for x in scores)
    chosen = choose_revisions(scores)
    assert [x.revision for x in chosen] == ["rev_new"]  # newest mteb version wins
    assert [x.revision for x in choose_revisions(scores, pinned={"org/model": "rev_old"})] == ["rev_old"]
    assert [x.revision for x in choose_revisions(scores, main={"org/model": "rev_old"})] == ["rev_old"]


def write_result(root, model: str, task: str, entries: list[tuple[str, float]], split: str = "test"):
    folder = root / model.replace("/", "__") / "r1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model_meta.json").write_text(json.dumps({"name": model}))
    scores = {split: [{"main_score": v, "accuracy": v, "hf_subset": sub, "languages": []} for sub, v in entries]}
    (folder / f"{task}.json").write_text(json.dumps({"task_name": task, "mteb_version": "2.0.0", "scores": scores}))


def test_one_file_with_an_unexpected_subset_is_reported_and_the_others_kept(tmp_path):
    from maeb.analysis.leaderboard import load_board

    catalog_task = next(t for t in catalog.find_benchmark("MAEB").tasks if catalog.find_task(t).data.subsets == ["default"])
    root = tmp_path / "results"
    for i in range(7):
        for task in ("LocalTask", catalog_task):
            entries = [("default", 0.1 * (i + 1))]
            if i == 3:  # one model's files hold an entry of a subset the task does not have
                entries.append(("xx", 0.9))
            write_result(root, f"org/m{i}", task, entries)
    board, problems = load_board([root])
    assert len(board.rows) == 7, [r.model for r in board.rows]
    assert all(r.tasks[t] is not None for r in board.rows for t in ("LocalTask", catalog_task))
    m3 = next(r for r in board.rows if r.model == "org/m3")
    assert m3.tasks["LocalTask"] == pytest.approx(0.4) and m3.tasks[catalog_task] == pytest.approx(0.4)
    stray = [p for p in problems if "'xx'" in p]
    assert len(stray) == 2 and all("org__m3" in p and "left out" in p for p in stray), problems
    assert any("spec names" in p for p in stray) and any("more than half of the 7 models" in p for p in stray)


def pandas_borda(frame: pd.DataFrame, tasks: list[str]) -> pd.DataFrame:
    """An independent Borda count on the long table (model, task, split, subset, main_score)."""
    frame = frame[frame.task.isin(tasks)]
    per = frame.groupby(["model", "task"]).main_score.mean().unstack()
    need = frame.groupby("task").apply(lambda g: g.subset.nunique() * g.split.nunique(), include_groups=False)
    have = (
        frame.groupby(["model", "task"])
        .apply(lambda g: len(g[["split", "subset"]].drop_duplicates()), include_groups=False)
        .unstack()
    )
    complete = per.where(have >= need)
    complete = complete[complete.notna().any(axis=1)]
    n = len(complete)
    points = (n - per.rank(axis=0, ascending=False, method="average")).sum(axis=1).reindex(complete.index)
    out = pd.DataFrame({"points": points, "mean_task": complete.mean(axis=1, skipna=False)})
    out["rank"] = out.points.rank(ascending=False, method="min").astype(int)
    return out


@needs_ref
def test_borda_on_published_scores_matches_independent_computation():
    frame = pd.read_csv(REF / "main_scores.csv")
    frame["model"] = frame.model.str.replace("__", "/", n=1)
    # one revision per model and task: the newest mteb version (what choose_revisions does)
    frame["v"] = frame.mteb_version.map(lambda v: tuple(int(x) for x in str(v).split(".")))
    best = frame.groupby(["model", "task"]).v.transform("max")
    frame = frame[frame.v == best]
    for bench_name in ("MAEB", "MAEB+"):
        bench = catalog.find_benchmark(bench_name)
        sub = frame
        for task, keep in bench.subsets.items():
            sub = sub[(sub.task != task) | sub.subset.isin(keep)]
        expected = pandas_borda(sub, list(bench.tasks))
        scores, problems = read_scores([REF / "main_scores.csv"])
        board = aggregate(choose_revisions(scores), list(bench.tasks), bench.subsets)
        got = {r.model: r for r in board.rows}
        assert set(got) == set(expected.index)
        for model, row in expected.iterrows():
            assert got[model].points == pytest.approx(row.points), model
            assert got[model].rank == row["rank"], model
            if math.isnan(row.mean_task):
                assert got[model].mean_task is None
            else:
                assert got[model].mean_task == pytest.approx(row.mean_task)


MAEB_BOARD = [sys.executable, "-m", "maeb", "leaderboard", "--results", str(REF / "main_scores.csv"), "--benchmark", "MAEB"]


@needs_ref
def test_leaderboard_command_outputs(tmp_path):
    out = subprocess.run([*MAEB_BOARD, "--format", "csv"], capture_output=True, text=True, check=True).stdout
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][:5] == ["model", "rank_borda", "mean_task", "mean_tasktype", "n_tasks"]
    types = sorted({s.mteb_type for s in catalog.benchmark_specs(catalog.find_benchmark("MAEB"))})
    assert rows[0][5 : 5 + len(types)] == types and len(rows[0]) == 5 + len(types) + 30 + 2
    assert rows[0][-1] == "tie_dependent"  # tasks whose score depends on tie order: the markers come last
    assert rows[0][-2] == "borda_rule" and rows[1][-2] == "mteb"  # the rule that ranked them
    assert rows[1][0] == "LCO-Embedding/LCO-Embedding-Omni-7B" and rows[1][1] == "1"
    data = json.loads(subprocess.run([*MAEB_BOARD, "--format", "json"], capture_output=True, text=True, check=True).stdout)
    assert len(data["tasks"]) == 30 and data["models"][0]["rank_borda"] == 1 and "domains" in data["models"][0]
    md = subprocess.run(MAEB_BOARD, capture_output=True, text=True, check=True).stdout
    assert "| Rank | Model |" in md and md.count("\n| ") == len(data["models"]) + 1


@needs_ref
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_html_page_renders_in_headless_chromium(tmp_path):
    page = tmp_path / "board.html"
    subprocess.run([*MAEB_BOARD, "--format", "html", "--out", str(page)], check=True, capture_output=True)
    dom = subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    board = subprocess.run([*MAEB_BOARD, "--format", "json"], capture_output=True, text=True, check=True).stdout
    n_models = len(json.loads(board)["models"])
    body = dom.split('<table id="leaderboard">')[1].split("</table>")[0].split("<tfoot")[0]
    assert body.count("<tr") == n_models + 1  # header row + one per model (the foot says why no chance rows)
    assert 'data-ready="yes"' in dom  # the page's script ran
    assert dom.count('<td class="ty"') == n_models * 7  # the task-type means, shaded as a heatmap


def matrix_from(columns: dict[str, list[float]], times: dict[str, float]) -> Matrix:
    tasks = list(columns)
    values = np.array([columns[t] for t in tasks]).T
    return Matrix([f"m{i}" for i in range(values.shape[0])], tasks, values, times)


def test_selection_rules():
    rng = np.random.default_rng(0)
    base = rng.normal(size=12)
    other = rng.normal(size=12)
    cols = {
        "A_t2a": base,
        "A_a2t": base + 0.01,
        "Cheap": other,
        "Costly": other * 2,
        "Lonely": other**3,
        "BirdCLEF": other + 0.001,
        "V1": rng.normal(size=12),
        "V2": rng.normal(size=12),
        "B_a2t": rng.normal(size=12),
    }
    info = infos(
        ("A_t2a", "Any2AnyRetrieval", "t2a", ["speech"], [], None),
        ("A_a2t", "Any2AnyRetrieval", "a2t", ["speech"], [], None),
        ("Cheap", "AudioClassification", "a2c", ["music"], [], None),
        ("Costly", "AudioClassification", "a2c", ["music"], [], None),
        ("Lonely", "AudioClustering", "a2a", ["music"], [], None),
        ("BirdCLEF", "AudioClassification", "a2c", ["bioacoustics"], [], None),
        ("V1", "AudioClassification", "a2c", ["speech"], [], "fam"),
        ("V2", "AudioClassification", "a2c", ["speech"], [], "fam"),
        ("B_a2t", "Any2AnyRetrieval", "a2t", ["speech"], [], None),
    )
    times = {
        "Cheap": 1.0,
        "Costly": 50.0,
        "Lonely": 5.0,
        "BirdCLEF": 999.0,
        "A_t2a": 3.0,
        "A_a2t": 1.0,
        "V1": 2.0,
        "V2": 1.0,
        "B_a2t": 1.0,
    }
    result = select(matrix_from(cols, times), info, 0.8)
    removed = {r["task"]: r for r in result.removed}
    assert "A_a2t" in removed and "A_t2a" in result.selected  # text-to-audio kept though dearer
    alone = select(matrix_from({k: v for k, v in cols.items() if k != "B_a2t"}, times), info, 0.8)
    assert "A_a2t" in alone.selected  # now the last audio-to-text task: it stays
    assert "Costly" in removed and removed["Costly"]["redundant_with"] in ("Cheap", "BirdCLEF", "Lonely")
    assert "BirdCLEF" in result.selected and "Lonely" in result.selected  # protected; last clustering task
    assert ("V1" in removed) != ("V2" in removed) and removed.get("V1", removed.get("V2"))["reason"] == "same-source family"
    v = result.validation
    m = matrix_from(cols, times)
    full = m.values.mean(axis=1)
    part = m.values[:, [m.tasks.index(t) for t in result.selected]].mean(axis=1)
    assert v["pearson_r"] == pytest.approx(np.corrcoef(full, part)[0, 1], abs=1e-4)
    assert v["speedup"] == pytest.approx(sum(times.values()) / sum(times[t] for t in result.selected), abs=0.01)
    figures = sweep(m, info, [0.5, 0.9, 0.99])
    assert [f["threshold"] for f in figures] == [0.5, 0.9, 0.99]
    assert figures[0]["n_tasks_selected"] <= figures[-1]["n_tasks_selected"]


@needs_ref
def test_selection_and_analyses_on_published_scores():
    scores, _ = read_scores([REF / "main_scores.csv"])
    scores = choose_revisions(scores)
    pool = list(catalog.find_benchmark("MAEB(extended)").tasks)
    matrix = score_matrix(scores, pool, max_missing=10)
    assert all(np.isnan(row).sum() <= 10 for row in matrix.values)
    from maeb.analysis.leaderboard import task_infos

    result = select(matrix, task_infos(matrix.tasks), 0.8)
    assert "BirdCLEF" in result.selected and "RavdessZeroshot" in result.selected
    assert -1 <= result.validation["spearman_rho"] <= 1 and result.validation["speedup"] >= 1
    rows = {r["model"]: r for r in tradeoff(scores, ["VoxPopuliGenderID"], ["VoxPopuliLanguageID"])}
    # the paper's example: CLAP hears gender, not language
    assert rows["laion/clap-htsat-unfused"]["acoustic"] == pytest.approx(0.944, abs=5e-4)
    assert rows["laion/clap-htsat-unfused"]["linguistic"] == pytest.approx(0.300, abs=5e-4)
