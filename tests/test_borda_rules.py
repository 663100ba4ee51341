"""The two Borda rules (mteb's, the default, and the MAEB paper's) on hand-built boards whose
points are worked out here by hand, and on the published scores against an independent pandas
computation of each rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from maeb.analysis.leaderboard import BORDA_RULES, aggregate, borda_rule
from maeb.analysis.uncertainty import borda_points
from maeb.core.errors import MaebError
from maeb.results.read import Score, choose_revisions, read_scores
from maeb.spec import catalog

from .test_leaderboard import REF, needs_ref


def s(model: str, task: str, value: float) -> Score:
    return Score(model, "r1", task, "test", "default", value)


# a, b, c ran T1; a and b ran T2; only c ran T3: c misses T2, a and b miss T3
HAND = [s("a", "T1", 0.9), s("b", "T1", 0.5), s("c", "T1", 0.1), s("a", "T2", 0.2), s("b", "T2", 0.8), s("c", "T3", 0.4)]


def points(board) -> dict[str, float]:
    return {r.model: r.points for r in board.rows}


def ranks(board) -> dict[str, int]:
    return {r.model: r.rank for r in board.rows}


def test_mteb_rule_counts_every_model_on_the_board():
    board = aggregate(HAND)  # n_models = 3 on every task
    # T1: a 3-1, b 3-2, c 3-3; T2: b 3-1, a 3-2; T3: c 3-1
    assert points(board) == {"a": 2 + 1, "b": 1 + 2, "c": 0 + 2}
    assert ranks(board) == {"a": 1, "b": 1, "c": 3}
    assert board.borda == "mteb"


def test_paper_rule_counts_only_the_models_that_ran_each_task():
    board = aggregate(HAND, borda="paper")
    # T1 (3 ran): a 2, b 1, c 0; T2 (2 ran): b 1, a 0; T3 (1 ran): c 0
    assert points(board) == {"a": 2, "b": 2, "c": 0}
    assert ranks(board) == {"a": 1, "b": 1, "c": 3}
    assert board.borda == "paper"


def test_the_rules_differ_for_a_model_that_ran_few_tasks():
    # x runs one task and is last on it; y and z run three and split them
    scores = [s("x", "T1", 0.0), s("y", "T1", 0.5), s("z", "T1", 0.9)]
    scores += [s("y", "T2", 0.9), s("z", "T2", 0.1), s("y", "T3", 0.1), s("z", "T3", 0.9)]
    mteb, paper = aggregate(scores), aggregate(scores, borda="paper")
    assert points(mteb) == {"x": 0, "y": 1 + 2 + 1, "z": 2 + 1 + 2}
    assert points(paper) == {"x": 0, "y": 1 + 1 + 0, "z": 2 + 0 + 1}
    # one model per task: the paper's rule gives it nothing, mteb's n_models - 1
    lone = [s("x", "T1", 0.3), s("y", "T2", 0.3)]
    assert points(aggregate(lone)) == {"x": 1, "y": 1} and points(aggregate(lone, borda="paper")) == {"x": 0, "y": 0}


def test_ties_share_the_average_rank_under_both_rules():
    scores = [s("a", "T", 0.5), s("b", "T", 0.5), s("c", "T", 0.1)]
    assert points(aggregate(scores)) == {"a": 1.5, "b": 1.5, "c": 0}
    assert points(aggregate(scores, borda="paper")) == {"a": 1.5, "b": 1.5, "c": 0}


def test_uncertainty_points_follow_the_rule():
    matrix = np.array([[0.9, 0.2, np.nan], [0.5, 0.8, np.nan], [0.1, np.nan, 0.4]])
    lower = np.zeros(3, dtype=bool)
    assert borda_points(matrix, lower, 3).sum(axis=1).tolist() == [3, 3, 2]
    assert borda_points(matrix, lower, 3, "paper").sum(axis=1).tolist() == [2, 2, 0]


def test_an_unknown_rule_is_one_line_naming_the_choices():
    with pytest.raises(MaebError, match="choose one of mteb, paper"):
        aggregate(HAND, borda="copeland")
    assert borda_rule("paper") == "paper" and set(BORDA_RULES) == {"mteb", "paper"}


def pandas_points(frame: pd.DataFrame, rule: str) -> pd.Series:
    """Points per model, written independently: means per (model, task), ranked within each task."""
    per = frame.groupby(["model", "task"]).main_score.mean().unstack()
    rank = per.rank(axis=0, ascending=False, method="average")
    voters = per.notna().sum(axis=0) if rule == "paper" else pd.Series(len(per), index=per.columns)
    return (voters - rank).sum(axis=1)  # NaN (a missing task) adds nothing


@needs_ref
def test_paper_rule_on_published_scores_matches_an_independent_computation():
    frame = pd.read_csv(REF / "main_scores.csv")
    frame["model"] = frame.model.str.replace("__", "/", n=1)
    frame["v"] = frame.mteb_version.map(lambda v: tuple(int(x) for x in str(v).split(".")))
    frame = frame[frame.v == frame.groupby(["model", "task"]).v.transform("max")]
    bench = catalog.find_benchmark("MAEB")
    sub = frame[frame.task.isin(bench.tasks)]
    for task, keep in bench.subsets.items():
        sub = sub[(sub.task != task) | sub.subset.isin(keep)]
    expected = pandas_points(sub, "paper")
    scores, _ = read_scores([REF / "main_scores.csv"])
    mteb = aggregate(choose_revisions(scores), list(bench.tasks), bench.subsets)
    paper = aggregate(choose_revisions(scores), list(bench.tasks), bench.subsets, borda="paper")
    for row in paper.rows:
        assert row.points == pytest.approx(expected[row.model]), row.model
    expected_rank = expected.reindex([r.model for r in paper.rows]).rank(ascending=False, method="min")
    assert ranks(paper) == {m: int(r) for m, r in expected_rank.items()}
    # a model missing tasks moves most: whisper-base (20 of 30 tasks) is 13th under mteb's rule, 9th under the paper's
    assert ranks(mteb)["openai/whisper-base"] == 13 and ranks(paper)["openai/whisper-base"] == 9
