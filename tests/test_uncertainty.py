"""The leaderboard's uncertainty (maeb.analysis.uncertainty): Borda points recomputed exactly as the board
counts them, rank intervals and groups that separate what the data separates, intervals from the
results' own few-shot experiments and bands, and boards that show them beside unchanged ranks."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import rankdata

from maeb.analysis.leaderboard import TaskInfo, aggregate, load_board
from maeb.analysis.report import render
from maeb.analysis.uncertainty import borda_points, compute, ranks
from maeb.results.read import Score, choose_revisions, read_scores
from maeb.spec import catalog

from .conftest import SHARED

REF = SHARED / "reference" / "mteb_results"


def s(model, task, value, split="test", subset="default"):
    return Score(model, "r1", task, split, subset, value, 1.0, "2.0.0")


def points_of(board) -> dict[str, float]:
    """Borda points from maeb.analysis.uncertainty's matrix computation, per ranked model."""
    voters = sorted({m for per in board.partial.values() for m in per})
    matrix = np.array([[board.partial[t.name].get(m, np.nan) for t in board.tasks] for m in voters])
    lower = np.array([t.lower_is_better for t in board.tasks])
    totals = borda_points(matrix, lower, len(board.rows)).sum(axis=1)
    return {m: totals[voters.index(m)] for m in (r.model for r in board.rows)}


def test_fast_ranks_equal_scipy():
    rng = np.random.default_rng(0)
    for _ in range(200):
        x = rng.integers(0, 6, rng.integers(1, 30)).astype(float)  # many ties
        assert np.array_equal(ranks(x), rankdata(x, method="average"))
        assert np.array_equal(ranks(x, "min"), rankdata(x, method="min"))


def test_borda_points_equal_the_boards_with_partial_and_lower_is_better_tasks():
    scores = [s("A", "t1", 0.9), s("B", "t1", 0.9), s("C", "t1", 0.1), s("A", "t2", 0.5), s("C", "t2", 0.7)]
    scores += [
        s("A", "t3", 0.2, subset="x"),
        s("A", "t3", 0.4, subset="y"),
        s("B", "t3", 0.1, subset="x"),
        s("D", "t3", 0.3, subset="x"),
    ]
    scores += [s("A", "fd", 3.0), s("B", "fd", 1.0), s("C", "fd", 2.0)]
    infos = {t: TaskInfo(t) for t in ("t1", "t2", "t3")}
    infos["fd"] = TaskInfo("fd", "TextToAudioGeneration", main_score="fd")
    assert infos["fd"].lower_is_better
    board = aggregate(scores, ["t1", "t2", "t3", "fd"], infos=infos)
    assert "D" not in {r.model for r in board.rows} and "D" in board.partial["t3"]  # D votes in t3's ranks, is not ranked
    got = points_of(board)
    assert got == pytest.approx({r.model: r.points for r in board.rows})


@pytest.mark.skipif(not (REF / "main_scores.csv").exists(), reason="../shared/reference is absent")
def test_borda_points_equal_the_boards_on_the_published_results():
    scores, _ = read_scores([REF / "main_scores.csv"])
    for name in ("MAEB", "MAEB(audio-only)"):
        bench = catalog.find_benchmark(name)
        board = aggregate(choose_revisions(scores), list(bench.tasks), bench.subsets)
        assert points_of(board) == pytest.approx({r.model: r.points for r in board.rows})


def clear_and_close_board():
    """A beats B on every task by a wide margin; C and D trade places task by task."""
    scores = []
    for i in range(12):
        task = f"t{i}"
        scores += [s("A", task, 0.9), s("B", task, 0.6)]
        scores += [s("C", task, 0.3 + 0.01 * (i % 2)), s("D", task, 0.3 + 0.01 * ((i + 1) % 2))]
    return aggregate(scores, [f"t{i}" for i in range(12)], infos={f"t{i}": TaskInfo(f"t{i}") for i in range(12)})


def test_rank_intervals_and_groups_separate_what_the_tasks_separate():
    board = clear_and_close_board()
    assert [r.model for r in board.rows][:2] == ["A", "B"]
    u = compute(board, draws=400, seed=1)
    assert u.above_next[0] == 1.0 and u.above_next[1] == 1.0  # A over B, B over the rest, in every draw
    assert u.above_next[2] < 0.95  # C and D: which leads depends on the tasks drawn
    assert u.groups == [["A"], ["B"], [r.model for r in board.rows[2:]]]
    assert u.distinguishable == 2
    assert (u.rank_low["A"], u.rank_high["A"]) == (1, 1) and u.rank_text("A") == "1"
    assert u.rank_low["C"] == 3 and u.rank_high["C"] == 4 and u.rank_text("C") == "3–4"


def write_result(root, model, task, experiments: list[float], band: float | None = None):
    folder = root / model.replace("/", "__") / "r1"
    folder.mkdir(parents=True, exist_ok=True)
    entry = {"accuracy": float(np.mean(experiments)), "main_score": float(np.mean(experiments)), "hf_subset": "default"}
    entry["scores_per_experiment"] = [{"accuracy": v} for v in experiments]
    maeb = {"task": {"name": task, "type": "AudioClassification", "main_score": "accuracy", "eval_splits": ["test"]}}
    if band is not None:
        maeb["stability"] = {"method": "replay", "band": band}
    (folder / f"{task}.json").write_text(
        json.dumps({"task_name": task, "mteb_version": "2.0.0", "scores": {"test": [entry]}, "maeb": maeb})
    )


def test_few_shot_experiments_and_bands_widen_cells_and_blur_close_ranks(tmp_path):
    """Two models 1 point apart on one task: with experiments that spread by 20 points their order
    is not told apart; with experiments that agree it is; a band of 5 points blurs it again."""
    spread, tight = tmp_path / "spread", tmp_path / "tight"
    write_result(spread, "org/a", "T", [0.41, 0.61, 0.51, 0.31, 0.71])
    write_result(spread, "org/b", "T", [0.30, 0.70, 0.50, 0.40, 0.60])
    write_result(tight, "org/a", "T", [0.51, 0.51, 0.51, 0.51, 0.51])
    write_result(tight, "org/b", "T", [0.50, 0.50, 0.50, 0.50, 0.50], band=0.0)
    for folder, expected in ((spread, 0), (tight, 1)):
        board, problems = load_board([folder])
        assert not problems and [r.model for r in board.rows] == ["org/a", "org/b"]
        u = compute(board, draws=400, sources=("experiments",))
        assert u.distinguishable == expected
        cell = u.cells[("org/a", "T")]
        assert cell.experiments == 5 and cell.low <= 0.51 <= cell.high
        assert (cell.high - cell.low > 0.1) == (folder is spread)
    write_result(tight, "org/b", "T", [0.50, 0.50, 0.50, 0.50, 0.50], band=0.05)
    board, _ = load_board([tight])
    assert compute(board, draws=400, sources=("bands",)).distinguishable == 0
    assert compute(board, draws=400, sources=("experiments",)).distinguishable == 1


def test_boards_show_intervals_beside_unchanged_ranks(tmp_path):
    write_result(tmp_path, "org/a", "T", [0.41, 0.61, 0.51, 0.31, 0.71], band=0.02)
    write_result(tmp_path, "org/b", "T", [0.2, 0.2, 0.2, 0.2, 0.2])
    board, _ = load_board([tmp_path])
    plain = {fmt: render(board, fmt, "rows") for fmt in ("md", "html", "json")}
    board.uncertainty = compute(board, draws=200)
    md = render(board, "md", "rows")
    assert "| Rank | Model | Rank interval | Group |" in md and "51.0 ±2.0 [" in md
    assert [line.split("|")[1:3] for line in md.splitlines() if line.startswith("| 1 ") or line.startswith("| 2 ")] == [
        line.split("|")[1:3] for line in plain["md"].splitlines() if line.startswith("| 1 ") or line.startswith("| 2 ")
    ]
    html = render(board, "html", "rows")
    assert ">Rank interval</th>" in html and 'id="uncertainty"' in html and ">Rank interval</th>" not in plain["html"]
    data = json.loads(render(board, "json"))
    assert [m["rank_borda"] for m in data["models"]] == [m["rank_borda"] for m in json.loads(plain["json"])["models"]]
    assert data["uncertainty"]["models"]["org/a"]["rank_low"] == 1 and data["uncertainty"]["neighbour_pairs"] == 1
