"""Fixes for what scripts/probe_outputs.py found (issue 46's own fault probe of the metric records, the
LaTeX tables and the explorer page); each test failed before its fix. The closed forms of the chance
levels are checked here against brute force over every order or every guess."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from maeb.core.errors import DataError, SpecError
from maeb.metrics import chance as ch
from maeb.metrics import records, registry

FRESH = """
from maeb.core.errors import SpecError
from maeb.metrics import registry
try:
    registry.register_metric("accuracy", lambda a, b: 0.0, "me", higher_is_better=True)
except SpecError as exc:
    print("refused:", exc)
print(registry.record_of("ndcg_at_10").name, registry.get_metric("accuracy").oracle)
"""


def test_an_outside_metric_declared_before_the_builtins_cannot_take_a_builtin_name():
    """In a fresh process, a user's metric declared before any look-up: before, "accuracy" was taken silently
    and every later look-up failed on the built-ins' own declaration of it."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("refused: metric 'accuracy' is already declared (maeb.metrics.scores.accuracy)")
    assert lines[1].startswith("ndcg_at_k sklearn.metrics.accuracy_score")


def test_a_name_differing_only_in_case_or_read_by_a_pattern_is_refused(monkeypatch):
    registry.metric_names()
    monkeypatch.setattr(records, "_METRICS", dict(records._METRICS))
    with pytest.raises(SpecError, match="'ACCURACY': 'accuracy' is already declared"):  # record_of("accuracy") read it
        registry.register_metric("ACCURACY", lambda a, b: 0.0, "me", higher_is_better=False)
    with pytest.raises(SpecError, match="result key 'ndcg_at_10' is already read as metric 'ndcg_at_k'"):
        registry.register_metric("ndcg_at_10", lambda a, b: 0.0, "me", higher_is_better=True)
    assert registry.record_of("accuracy").fn is registry.get_metric("accuracy").fn


def test_an_outside_metric_must_say_its_direction(monkeypatch):
    registry.metric_names()
    monkeypatch.setattr(records, "_METRICS", dict(records._METRICS))
    with pytest.raises(SpecError, match="'word_errors': say higher_is_better=True or False"):
        registry.register_metric("word_errors", lambda a, b: 0.0, "me")  # before: ranked as higher is better
    assert registry.register_metric("word_errors", lambda a, b: 0.0, "me", higher_is_better=False).lower_is_better


@pytest.mark.parametrize(
    ("facts", "needle"),
    [
        ({"range": 5}, "range must be (low, high)"),  # before: TypeError
        ({"chance": 0.5}, "chance must be a function"),  # before: accepted, a TypeError at the first run
        ({"majority": "x"}, "majority must be a function"),
    ],
)
def test_malformed_facts_are_one_line(monkeypatch, facts, needle):
    registry.metric_names()
    monkeypatch.setattr(records, "_METRICS", dict(records._METRICS))
    with pytest.raises(SpecError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        registry.register_metric("mine", lambda a, b: 0.0, "me", higher_is_better=True, **facts)


def test_a_cut_off_of_zero_is_no_ranking_key():
    assert registry.record_of("ndcg_at_0") is None and registry.record_of("map@0") is None  # before: ndcg_at_k
    assert registry.record_of("ndcg_at_x") is None and registry.record_of("ndcg_at_1").name == "ndcg_at_k"


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: ch.uniform_accuracy([]), "empty split"),  # before: ZeroDivisionError
        (lambda: ch.uniform_f1([0, 0]), "empty split"),
        (lambda: ch.uniform_precision([-1, 3]), "class counts must be counts"),  # before: 1.0
        (lambda: ch.random_ap(3, 5), "positives must be between"),  # before: 1.39
        (lambda: ch.random_lrap(np.zeros((0, 3))), "random LRAP needs"),  # before: nan
        (lambda: ch.ranking_key("NDCG")[0](3, [1], [1], 0), "cut-off k=0"),  # before: ZeroDivisionError
        (lambda: ch.ranking_key("MRR")[0](3, [1], [1], -1), "cut-off k=-1"),  # before: 0.0
        (lambda: ch.ranking_key("NDCG")[0](1, [1, 1, 1], [1, 1, 1], 5), "1 documents, 3 relevant"),  # before: 1.41
    ],
)
def test_chance_of_nothing_is_one_line(call, needle):
    with pytest.raises(DataError, match=needle) as found:
        call()
    assert "\n" not in str(found.value)


def test_baselines_of_an_empty_split_are_no_record():
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from test_baselines import _spec

    from maeb.analysis.baselines import baselines
    from maeb.data.sources import Table

    empty, some = Table({"label": []}), Table({"label": ["a", "b"]})
    assert baselines(_spec("clustering"), {"test": empty}, "test") is None  # before: chance 1.0 by draws
    assert baselines(_spec("classification"), {"test": empty, "train": some}, "test") is None  # before: ValueError
    assert baselines(_spec("classification"), {"test": some, "train": empty}, "test") is None  # before: ValueError
    assert baselines(_spec("multilabel"), {"test": empty, "train": Table({"label": [["a"]]})}, "test") is None


# -- the closed forms against brute force ---------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "r"), [(1, 1), (4, 1), (5, 2), (6, 6), (7, 3)])
def test_random_ap_equals_every_order(n, r):
    values = []
    for positives in itertools.combinations(range(n), r):
        hits = sorted(positives)
        values.append(np.mean([(i + 1) / (p + 1) for i, p in enumerate(hits)]))
    assert ch.random_ap(n, r) == pytest.approx(np.mean(values), abs=1e-12)


@pytest.mark.parametrize("truth", [[0, 0, 1], [0, 1, 2, 2], [0, 0, 0, 1, 1]])
def test_uniform_guess_precision_and_f1_equal_every_guess(truth):
    from sklearn.metrics import f1_score, precision_score

    k, counts = max(truth) + 1, np.bincount(truth)
    guesses = list(itertools.product(range(k), repeat=len(truth)))
    for fn, name in ((ch.uniform_precision, "precision"), (ch.uniform_f1, "f1")):
        score = precision_score if name == "precision" else f1_score
        brute = np.mean([score(truth, g, average="macro", labels=list(range(k)), zero_division=0) for g in guesses])
        assert fn(counts) == pytest.approx(brute, abs=1e-12), name


@pytest.mark.parametrize(("n", "gains", "k"), [(3, [1], 10), (4, [2, 1], 2), (5, [1, 1], 5), (2, [1, 1], 1)])
def test_ranking_chance_equals_every_order_even_past_the_pool(n, gains, k):
    """The pool in every order; k larger than the pool is trec_eval's cut-off that finds no more documents."""
    ideal = sorted(gains, reverse=True)
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:k]))
    docs = gains + [0] * (n - len(gains))
    ndcg, mrr = [], []
    for order in itertools.permutations(docs):
        top = order[:k]
        ndcg.append(sum(g / math.log2(i + 2) for i, g in enumerate(top)) / idcg)
        mrr.append(next((1 / (i + 1) for i, g in enumerate(top) if g > 0), 0.0))
    assert ch.ranking_key("NDCG")[0](n, gains, ideal, k) == pytest.approx(np.mean(ndcg), abs=1e-12)
    assert ch.ranking_key("MRR")[0](n, gains, ideal, k) == pytest.approx(np.mean(mrr), abs=1e-12)


# -- the explorer page: the CSV, the cite box and the link's unknown names ------------------------------------------
EXPLORE = r"""
var v = window.maebView, $ = function (id) { return document.getElementById(id); };
out.cite = $('cite-text').textContent; out.csv = v.csv();
v.load('#task=NoSuchTask&type=NoSuchType'); out.note = $('rule').textContent;
"""


def bibtex_fields(entry: str) -> list[str]:
    """The field names of a BibTeX entry as BibTeX reads them: every brace counts, backslash or not."""
    depth, fields, token = 0, [], ""
    for c in entry:
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth == 1 and c == "=":
            fields.append(token.strip().split(",")[-1].strip())
            token = ""
        elif depth == 1 and c not in "{}":
            token += c
    return fields


@pytest.mark.skipif(__import__("shutil").which("chromium") is None, reason="Debian's chromium is not installed")
def test_explorer_cite_csv_and_unknown_link_names(tmp_path, monkeypatch):
    import csv
    import io
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from test_explorer import in_chromium

    from maeb.analysis import page as page_module
    from maeb.analysis.leaderboard import aggregate
    from maeb.results.read import Score, TaskInfo

    monkeypatch.setattr(page_module, "_figures", lambda *args: "<p>figures left out</p>")
    infos = {"Signed": TaskInfo("Signed", "AudioClustering", main_score="ari")}
    names = ["=cmd()", "-2+3", "o/plain"]
    scores = [Score(m, "r1", "Signed", "test", "default", -0.05 + 0.01 * i) for i, m in enumerate(names)]
    board = aggregate(scores, infos=infos, benchmark="Bad}, author={evil} , x={")
    got = in_chromium(page_module.to_html(board, "columns"), EXPLORE, tmp_path)
    assert got["errors"] == []
    # before: title = {Bad}, author={evil} , x={ leaderboard}: BibTeX read an author field the page never wrote
    assert bibtex_fields(got["cite"]) == ["title", "note", "howpublished"], got["cite"]
    rows = list(csv.reader(io.StringIO(got["csv"])))
    assert sorted(r[1] for r in rows[1:]) == sorted(["'=cmd()", "'-2+3", "o/plain"])  # formulas still prefixed
    signed = [c for r in rows[1:] for c in r[2:] if c.startswith(("-", "'-"))]
    assert signed and all(c.startswith("-") for c in signed), signed  # before: '-1.0, text to a spreadsheet
    assert "left out: type NoSuchType, task NoSuchTask." in got["note"]  # before: dropped without a word
