"""The metric registry (maeb.metrics.registry): declared functions looked up by name, each compared
with its oracle; the documented example (docs/add-task.md, "A metric") runs as written."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn import metrics as skm

from maeb.core.errors import SpecError
from maeb.metrics import records, registry

ROOT = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(0)
LABELS = RNG.integers(0, 4, 60)
GUESS = np.where(RNG.random(60) < 0.6, LABELS, RNG.integers(0, 4, 60))
BINARY = RNG.integers(0, 2, 60)
SCORES = RNG.random(60) + 0.3 * BINARY
MATRIX = RNG.integers(0, 2, (40, 5))
PROBA = RNG.random((40, 5))
# name -> (the registered metric's arguments, the oracle's own call)
ORACLES = {
    "accuracy": ((LABELS, GUESS), lambda: skm.accuracy_score(LABELS, GUESS)),
    "f1": ((LABELS, GUESS), lambda: skm.f1_score(LABELS, GUESS, average="macro")),
    "f1_weighted": ((LABELS, GUESS), lambda: skm.f1_score(LABELS, GUESS, average="weighted")),
    "precision": ((LABELS, GUESS), lambda: skm.precision_score(LABELS, GUESS, average="macro")),
    "precision_weighted": ((LABELS, GUESS), lambda: skm.precision_score(LABELS, GUESS, average="weighted")),
    "recall": ((LABELS, GUESS), lambda: skm.recall_score(LABELS, GUESS, average="macro")),
    "recall_weighted": ((LABELS, GUESS), lambda: skm.recall_score(LABELS, GUESS, average="weighted")),
    "ap": ((BINARY, SCORES), lambda: skm.average_precision_score(BINARY, SCORES)),
    "ap_weighted": ((BINARY, SCORES), lambda: skm.average_precision_score(BINARY, SCORES, average="weighted")),
    "lrap": ((MATRIX, PROBA), lambda: skm.label_ranking_average_precision_score(MATRIX, PROBA)),
    "v_measure": ((LABELS, GUESS), lambda: skm.v_measure_score(LABELS, GUESS)),
    "ami": ((LABELS, GUESS), lambda: skm.adjusted_mutual_info_score(LABELS, GUESS)),
}


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_each_sklearn_metric_equals_its_oracle_bit_for_bit(name):
    """A registered metric is the very call the task types made: equal to sklearn's, not merely close."""
    args, oracle = ORACLES[name]
    assert registry.get_metric(name)(*args) == oracle()
    assert registry.get_metric(name).oracle.startswith("sklearn.metrics.")


def test_every_metric_names_its_oracle_and_says_what_it_computes():
    """Each built-in metric has an oracle and a docstring; the sklearn ones are all compared above."""
    for name in registry.metric_names():
        entry = registry.get_metric(name)
        assert entry.oracle.strip() and entry.doc, name
    assert {n for n in registry.metric_names() if registry.get_metric(n).oracle.startswith("sklearn")} == set(ORACLES)


def test_bleu_is_the_text_metrics_corpus_bleu():
    """BLEU (oracle: the mecat package, compared in tests/test_generative.py) is maeb.metrics.textmetrics' corpus BLEU."""
    from maeb.metrics.textmetrics import corpus_bleu

    cands, refs = ["a dog barks loudly"], [["a dog barks", "the dog is barking loudly"]]
    assert registry.get_metric("bleu")(cands, refs) == corpus_bleu(cands, refs)


def test_declaring_is_checked(monkeypatch):
    """An unknown name fails with the close ones; a metric without an oracle, or a taken name
    declared with another function, is refused."""
    registry.metric_names()  # the built-in ones declared before the copy
    monkeypatch.setattr(records, "_METRICS", dict(records._METRICS))
    with pytest.raises(SpecError, match="unknown metric 'v_measur'; did you mean v_measure"):
        registry.get_metric("v_measur")
    with pytest.raises(SpecError, match="name its oracle"):
        registry.register_metric("mine", lambda a, b: 0.0, oracle=" ")
    with pytest.raises(SpecError, match="'accuracy' is already declared"):
        registry.register_metric("accuracy", lambda a, b: 0.0, oracle="numpy")

    @registry.metric(oracle="numpy", higher_is_better=True)
    def mine(a, b) -> float:
        """Zero."""
        return 0.0

    assert registry.get_metric("mine").fn is mine and "mine" in registry.metric_names()


def test_the_documented_metric_runs_as_written(tmp_path, monkeypatch, capsys):
    """docs/add-task.md's metric, copied from it, declares itself and equals its oracle (1 - sklearn's balanced accuracy)."""
    text = (ROOT / "docs" / "add-task.md").read_text(encoding="utf-8")
    code = text.split("```python\n# my_metrics.py\n", 1)[1].split("```", 1)[0]
    (tmp_path / "my_metrics.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.metric_names()  # the built-in ones declared before the copy
    monkeypatch.setattr(records, "_METRICS", dict(records._METRICS))
    monkeypatch.delitem(sys.modules, "my_metrics", raising=False)
    importlib.import_module("my_metrics")
    printed = capsys.readouterr().out.split()
    truth, guess = ["a", "a", "a", "b"], ["a", "a", "b", "b"]
    assert float(printed[0]) == pytest.approx(1 - skm.balanced_accuracy_score(truth, guess), abs=1e-12)
    assert float(printed[1]) == skm.accuracy_score(truth, guess)
    for labels, guesses in [(LABELS, GUESS), (BINARY, 1 - BINARY)]:
        got = registry.get_metric("balanced_error")(labels, guesses)
        assert got == pytest.approx(1 - skm.balanced_accuracy_score(labels, guesses), abs=1e-12)


def test_the_threshold_and_set_metrics_on_cases_known_by_hand():
    """mteb's pair thresholds (a threshold never splits ties) and multilabel's per-row IoU, by hand
    (their comparison with mteb's evaluators is tests/test_parity_mteb.py)."""
    scores, labels = np.array([0.9, 0.8, 0.8, 0.3, 0.1]), np.array([1, 1, 0, 0, 1])
    # thresholds between distinct scores: after 0.9 -> 1 + 2 right of 5; after the tied 0.8s -> 2 + 1; after 0.3 -> 2 + 0
    assert registry.get_metric("best_threshold_accuracy")(scores, labels, True) == pytest.approx(3 / 5)
    # after 0.9: P 1, R 1/3, F1 1/2; after 0.8s: P 2/3, R 2/3, F1 2/3; after 0.3: P 1/2, R 2/3, F1 4/7
    f1, precision, recall = registry.get_metric("best_threshold_f1")(scores, labels, True)
    assert (f1, precision, recall) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    truth, guess = np.array([[1, 0, 1], [0, 0, 0], [1, 1, 0]]), np.array([[1, 1, 1], [0, 0, 0], [0, 0, 1]])
    assert registry.get_metric("hamming")(truth, guess) == pytest.approx((2 / 3 + 1 + 0) / 3)
