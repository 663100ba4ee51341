"""Whether the few-shot probe's LogisticRegression converged (maeb.tasktypes.probe.Convergence),
recorded under maeb.evaluation.<split>.<subset>.convergence: every fit stops at max_iter 1, an easy
separable problem converges with a large max_iter, the shuffled control's fits are not counted,
the scores are the same with the record as without, and the record reaches the result file."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.multioutput import MultiOutputClassifier

from maeb import tasktypes
from maeb.tasktypes import classification, labels, multilabel
from maeb.tasktypes.probe import Convergence, fitted, linear_probe

from .conftest import make_embedder

KEYS = {"max_iter", "fits", "converged", "n_iter", "note"}


def _separable(n: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two well-separated blobs: a problem lbfgs solves in a few iterations."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    x = rng.normal(size=(n, 3)) * 0.1 + y[:, None] * 3.0
    return x, y


def _fit(model, x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(x, y)


def test_max_iter_1_never_converges_and_an_easy_problem_does():
    x, y = _separable()
    stopped, easy = Convergence(), Convergence()
    for seed in range(3):
        stopped.add(_fit(linear_probe({"max_iter": 1, "seed": seed}), x, y))
        easy.add(_fit(linear_probe({"max_iter": 10_000, "seed": seed}), x, y))
    record = stopped.record()
    assert set(record) == KEYS
    assert record["max_iter"] == 1 and record["fits"] == 3 and record["converged"] == 0 and record["n_iter"] == [1, 1, 1]
    assert (
        record["note"].startswith("3 of 3 fits stopped at max_iter 1 before converging") and "reproducibility" in record["note"]
    )
    record = easy.record()
    assert record["max_iter"] == 10_000 and record["fits"] == record["converged"] == 3
    assert all(0 < n < 10_000 for n in record["n_iter"]) and record["note"] == "every fit converged"
    assert Convergence().record() == {"max_iter": 0, "fits": 0, "converged": 0, "n_iter": [], "note": "no probe was fitted"}


def test_the_standardized_probe_multilabel_and_per_class_models_count_one_fit_each():
    x, y = _separable()
    found = Convergence()
    found.add(_fit(linear_probe({"max_iter": 1, "seed": 0}, "standardized"), x, y))  # the pipeline's last step
    labels = np.stack([y, 1 - y, (np.arange(len(y)) // 2) % 2], axis=1)
    found.add(_fit(MultiOutputClassifier(LogisticRegression(max_iter=3)), x, labels))  # one estimator per label
    found.add([0.0, _fit(LogisticRegression(max_iter=5), x, y)])  # event detection's: a constant is no fit
    record = found.record()
    assert record["fits"] == 3 and record["max_iter"] == 5000  # the stable probe's own max_iter
    assert record["n_iter"][0] < 5000 and record["n_iter"][1] == 3  # the largest count over the labels
    assert record["converged"] == 1 + (record["n_iter"][2] < 5)
    fitted(LogisticRegression())  # outside a collecting block: counted nowhere, no error


def _tables(folder: Path, kind: str = "classification", **protocol):
    from maeb.spec.loader import load_task
    from maeb.spec.taskspec import parse_spec

    raw = {
        "name": "T",
        "type": kind,
        "data": {"source": "audiofolder", "path": str(folder), "eval_splits": ["test"], "split_by": {"column": "split"}},
        "protocol": protocol,
    }
    spec = parse_spec(raw, "spec", base=folder)
    return spec, load_task(spec)["default"]


def _evaluate(kind, tmp_path, spec, tables, **embedder):
    return kind.evaluate(tables, "test", make_embedder(tmp_path, **embedder), spec, tasktypes.TaskState(seed=42))


@pytest.mark.parametrize("cv", [False, True])
def test_classification_records_every_experiment_s_fit_and_not_the_control_s(tone_folder, tmp_path, cv):
    protocol = {"cross_validation": True} if cv else {}
    kind = classification.Classification()
    spec, tables = _tables(tone_folder, max_iter=1, **protocol)
    stopped = _evaluate(kind, tmp_path, spec, tables, controls=("shuffled",))
    fits = 5 if cv else 10  # the folds, or the experiments; the control's refits are not counted
    assert stopped.info["convergence"] == {
        "max_iter": 1,
        "fits": fits,
        "converged": 0,
        "n_iter": [1] * fits,
        "note": f"{fits} of {fits} fits stopped at max_iter 1 before converging: the score can move with the last bits "
        "of the vectors (docs/reproducibility.md)",
    }
    assert stopped.shuffled is not None and "shuffled" not in stopped.info and "convergence" not in stopped.metrics

    spec, tables = _tables(tone_folder, max_iter=100_000, **protocol)
    easy = _evaluate(kind, tmp_path, spec, tables)
    record = easy.info["convergence"]
    assert record["fits"] == record["converged"] == fits and record["note"] == "every fit converged"
    assert all(0 < n < 100_000 for n in record["n_iter"])
    assert cv or easy.metrics["accuracy"] > 0.9  # (cross-validation folds of the 9 test clips hold 1-2 per class)


def test_the_record_changes_no_score(tone_folder, tmp_path, monkeypatch):
    """The metrics with the record are those the probe gives when nothing collects its fits."""
    kind = classification.Classification()
    spec, tables = _tables(tone_folder)
    with_record = _evaluate(kind, tmp_path, spec, tables)
    monkeypatch.setattr(labels, "fitted", lambda model: None)  # where the fit is counted
    without = _evaluate(kind, tmp_path, spec, tables)
    assert without.info["convergence"]["fits"] == 0
    assert json.dumps(with_record.metrics, sort_keys=True) == json.dumps(without.metrics, sort_keys=True)


def test_multilabel_counts_one_fit_per_experiment_with_its_labels_largest_count(tone_folder, tmp_path):
    from maeb.data.sources import Table

    kind = multilabel.MultilabelClassification()
    spec, tables = _tables(tone_folder, "multilabel", n_experiments=3, max_iter=1)
    for name, table in tables.items():  # two labels per clip: its tone and its speaker
        tables[name] = Table({**table.columns, "label": [[a, b] for a, b in zip(table["label"], table["speaker"])]})
    record = _evaluate(kind, tmp_path, spec, tables).info["convergence"]
    assert record["max_iter"] == 1 and record["fits"] == 3 and record["converged"] == 0 and record["n_iter"] == [1, 1, 1]


def test_a_stability_replay_records_the_fits_it_refit(tone_folder, tmp_path):
    """A replay refits a share of the experiments through emb.progress: its record covers those."""
    from maeb.run.stability import ReplayEmbedder

    kind = classification.Classification()
    spec, tables = _tables(tone_folder, max_iter=1)
    view = ReplayEmbedder(make_embedder(tmp_path), {"audio": 3e-6, "text": 3e-6}, seed=0, block=0)
    view.label("T replay 0 [test]")
    out = kind.evaluate(tables, "test", view, spec, tasktypes.TaskState(seed=42))
    assert out.info["convergence"]["fits"] == len(view.picked) == 2  # 10 experiments // SHARE 4


def test_the_record_reaches_the_result_file(tmp_path, tone_folder):
    from maeb.cli.commands import main

    task = tmp_path / "StoppedTones.toml"
    task.write_text(
        f'name = "StoppedTones"\ntype = "classification"\n[data]\nsource = "audiofolder"\npath = "{tone_folder}"\n'
        'eval_splits = ["test"]\n[data.split_by]\ncolumn = "split"\n[protocol]\nmax_iter = 1\n'
    )
    out = tmp_path / "res"
    args = ["run", "-m", "maeb/mfcc-stats", "-t", str(task), "--output-dir", str(out), "--cache-dir", str(tmp_path / "c")]
    assert main([*args, "--quiet"]) == 0
    (path,) = out.rglob("StoppedTones.json")
    result = json.loads(path.read_text())
    record = result["maeb"]["evaluation"]["test"]["default"]["convergence"]
    assert record["fits"] == 10 and record["converged"] == 0 and record["max_iter"] == 1
    assert "convergence" not in result["scores"]["test"][0]
