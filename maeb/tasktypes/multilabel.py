"""Multilabel linear probe (mteb AudioMultilabelClassification), main score LRAP.

MultiOutputClassifier(LogisticRegression()) per experiment; the training sample grows greedily
over a shuffled index list until every label has `samples_per_label` examples (the shuffles come
from one task-wide numpy Generator, as in mteb); eval splits above `max_eval_samples` rows are cut
by second-order iterative stratification. LRAP is computed on predicted probabilities. Whether each
experiment's fit converged (every label's LogisticRegression) is recorded under the result's
maeb.evaluation (`convergence`)."""

from __future__ import annotations

import itertools
import warnings
from collections import defaultdict

import numpy as np
from sklearn.exceptions import ConvergenceWarning, UndefinedMetricWarning
from sklearn.multioutput import MultiOutputClassifier
from sklearn.preprocessing import MultiLabelBinarizer

from ..core.errors import DataError
from ..core.taskspec import TaskSpec
from ..data.sampling import iterative_stratified_subset
from ..metrics import perclass
from ..metrics.registry import get_metric, metrics_of
from . import control
from .base import Data, Embeddings, Evaluation, Param, TaskState, TaskType, keep_valid
from .probe import Convergence, fitted, linear_probe, probe_of


def grow_sample(label_sets: list[list], per_label: int, rng: np.random.Generator) -> list[int]:
    """Shuffle all indices, keep a row while any of its labels still has fewer than `per_label`."""
    order = list(np.arange(len(label_sets)))
    rng.shuffle(order)
    counts: dict = defaultdict(int)
    chosen = []
    for i in order:
        if any(counts[label] < per_label for label in label_sets[i]):
            chosen.append(int(i))
            for label in label_sets[i]:
                counts[label] += 1
    return chosen


def _as_label_lists(values: list, where: str) -> list[list]:
    out = []
    for value in values:
        if isinstance(value, (list, tuple)):
            out.append(list(value))
        else:
            raise DataError(
                f"{where}: multilabel rows need a list of labels, got {value!r}; set data.label_separator for text columns"
            )
    return out


def _scores(y_test, x_test, x_train, y_train, p, probe: str = "mteb", labels=()) -> tuple[dict, dict]:
    model = MultiOutputClassifier(linear_probe(p, probe))
    constant = y_train.min(axis=0) == y_train.max(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (ConvergenceWarning, UndefinedMetricWarning))
        if constant.any():
            # a label absent from (or present in every row of) the training sample cannot be fit;
            # it gets its constant training rate as probability instead of crashing the run
            model_cols = ~constant
            model.fit(x_train, y_train[:, model_cols])
            proba = np.tile(y_train.mean(axis=0), (len(x_test), 1)).astype(float)
            pred = np.tile(y_train[0], (len(x_test), 1))
            if model_cols.any():
                proba[:, model_cols] = np.stack([c[:, 1] for c in model.predict_proba(x_test)], axis=1)
                pred[:, model_cols] = model.predict(x_test)
        else:
            model.fit(x_train, y_train)
            proba = np.stack([c[:, 1] for c in model.predict_proba(x_test)], axis=1)
            pred = model.predict(x_test)
        fitted(model)  # counted where an experiment's fit is collected (Convergence.collecting)
        scores = {
            "accuracy": float((pred == y_test).all(axis=1).mean()),
            "lrap": float(get_metric("lrap")(y_test, proba)),
            "f1": float(get_metric("f1")(y_test, pred)),
            "hamming": get_metric("hamming")(y_test, pred),
        }
        for kind, given in (("label_scores", proba), ("label_matrix", pred)):  # any other registered metric: no list to edit
            scores.update({m.name: float(m(y_test, given)) for m in metrics_of(kind) if m.name not in scores})
        return scores, perclass.multilabel(y_test, pred, proba, labels)


class MultilabelClassification(TaskType):
    """The multilabel task type (the module's docstring says what it scores and how)."""

    NAME = "multilabel"
    LABELLED = True
    BLANK_LABELS = True  # a clip where no class is present has an empty label list
    MAIN_SCORE = "lrap"
    PARAMS = {
        "samples_per_label": Param(8, "the training sample grows until every label has this many examples", min=1),
        "n_experiments": Param(10, "experiments averaged", min=1),
        "max_eval_samples": Param(3000, "eval splits above this size are cut by iterative stratification (0: no cut)", min=0),
        "max_iter": Param(100, "LogisticRegression iterations", min=1),
        "seed": Param(42, "seed of the shuffles and the classifiers", min=0, max=2**32 - 1),
    }

    def metrics(self, spec: TaskSpec) -> tuple[str, ...]:
        """The metric names a multilabel result holds."""
        extra = [m.name for kind in ("label_scores", "label_matrix") for m in metrics_of(kind)]
        return tuple(dict.fromkeys(["accuracy", "lrap", "f1", "hamming", *extra]))

    def splits(self, spec: TaskSpec) -> list[str]:
        """The splits to load: the eval splits and the train split."""
        return list(dict.fromkeys(spec.data.eval_splits + [spec.data.train_split]))

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split` with the multilabel probe: the mean over experiments of accuracy, LRAP, F1 and Hamming loss, with each
        experiment's scores."""
        p = spec.protocol
        audio, label = spec.data.audio_column, spec.data.label_column
        test, train = data[split], data[spec.data.train_split]
        for table in (test, train):
            table.require([audio, label])
        train_labels = _as_label_lists(train[label], f"{spec.name} {spec.data.train_split}")
        draws = [grow_sample(train_labels, p["samples_per_label"], state.np_rng) for _ in range(p["n_experiments"])]
        union = list(set(itertools.chain.from_iterable(draws)))  # mteb encodes them in this (set) order
        with emb.on_split(spec.data.train_split):
            x_union, ok = emb.audio([train[audio][i] for i in union])
        if not ok.all():
            raise DataError(f"{spec.name}: {int((~ok).sum())} drawn training clips are undecodable; fix or drop them in the data")
        position = {row: j for j, row in enumerate(union)}

        test_labels = _as_label_lists(test[label], f"{spec.name} {split}")
        rows = list(range(len(test)))
        if p["max_eval_samples"] and len(test) > p["max_eval_samples"]:
            rows = iterative_stratified_subset(test_labels, p["max_eval_samples"], p["seed"])
        x_test, ok = emb.audio([test[audio][i] for i in rows])
        x_test, kept = keep_valid(ok, x_test, rows)
        binarizer = MultiLabelBinarizer()
        y_test = binarizer.fit_transform([test_labels[i] for i in kept])
        known = set(binarizer.classes_)
        results, blocks = [], []
        shuffled = control.of(emb, p)
        fits = Convergence()  # the experiments' fits (not the shuffled control's)

        def _refit(x_train, y_train) -> float | None:  # the shuffled control's experiment
            return _scores(y_test, x_test, x_train, y_train, p, probe_of(emb))[0].get(spec.main_score)

        for chosen in emb.progress(draws, "experiments"):
            x_train = x_union[[position[i] for i in chosen]]
            y_train = binarizer.transform([[lab for lab in train_labels[i] if lab in known] for i in chosen])
            with fits.collecting():
                scores, block = _scores(y_test, x_test, x_train, y_train, p, probe_of(emb), list(binarizer.classes_))
            results.append(scores)
            blocks.append(block)
            if shuffled is not None:  # the same draw, its label sets permuted among its clips (maeb.tasktypes.control)
                shuffled.add(_refit, x_train, y_train)
        out: dict[str, object] = {k: float(np.mean([r[k] for r in results])) for k in results[0]}
        out["scores_per_experiment"] = results
        out["per_class"] = perclass.mean_blocks(blocks)
        control_record = None if shuffled is None else shuffled.record()
        return Evaluation(out, {"convergence": fits.record()}, shuffled=control_record)
