"""Few-shot linear probe (mteb AudioClassification).

LogisticRegression(max_iter=100, random_state=seed) on `samples_per_label` clips per label, drawn
by a seeded shuffle that is re-applied to the same index list for each experiment. With a separate
train split: 10 experiments, all scored on the eval split. When the eval split is the train split
(cross-validation): KFold(5, shuffle, seed), each training fold still cut to 8 per label. Whether
each experiment's fit converged is recorded under the result's maeb.evaluation (`convergence`)."""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import KFold

from ..core.errors import DataError
from ..core.taskspec import TaskSpec
from ..data.sources import Table
from ..metrics import perclass
from ..metrics.registry import metrics_of
from . import confound, control
from .base import Data, Embeddings, Evaluation, Param, TaskState, TaskType, keep_valid, make_params
from .labels import fit_predict, label_metric_names, label_metrics, undersample
from .probe import Convergence, probe_of


def mean_scores(per_experiment: list[dict]) -> dict:
    """Mean over experiments; a metric only some experiments have (ap, on folds whose eval part
    holds two labels) is averaged over those, as mteb does."""
    keys = dict.fromkeys(k for s in per_experiment for k in s)
    out: dict[str, object] = {}
    for k in keys:
        values = [s[k] for s in per_experiment if s.get(k) is not None]
        out[k] = float(np.mean(values)) if values else float("nan")  # mteb: NaN when no experiment has it
    out["scores_per_experiment"] = per_experiment
    return out


def _encode_labels(values: list) -> np.ndarray:
    try:
        return np.asarray(values)
    except ValueError as exc:
        raise DataError(f"labels cannot form an array: {exc}") from exc


def _confound_metric(spec) -> str:
    """The metric confound probes score: the main score where it is a metric of predicted labels (its record's
    inputs, maeb.metrics.registry: any declared one, not a list), else accuracy."""
    return spec.main_score if spec.main_score in {m.name for m in metrics_of("labels")} else "accuracy"


def balance_notice(emb, y_train, y_eval, p, pool: str, kept: float = 1.0) -> None:
    """A warning (logged and kept in the result) when the few-shot protocol meets data it was not
    made for: a class with fewer training clips than samples_per_label (every draw then holds all
    of them, the other classes samples_per_label each), or an evaluation split dominated by one
    class (a probe trained on balanced draws seldom favours it, so accuracy falls below the
    majority share). It names the levels to read accuracy against: the majority share (always
    answering that class) and 1 / classes (guessing). kept: the share of the pool a training fold
    holds under cross-validation."""
    labels, counts = np.unique(np.asarray(y_train), return_counts=True)
    eval_labels, eval_counts = np.unique(np.asarray(y_eval), return_counts=True)
    if len(eval_labels) < 2:
        return
    parts = []
    small = [(str(c), int(n)) for c, n in zip(labels, counts) if n * kept < p["samples_per_label"]]
    if small:
        named = ", ".join(f"{c!r} ({n})" for c, n in sorted(small, key=lambda x: x[1])[:3])
        more = f" and {len(small) - 3} more" if len(small) > 3 else ""
        parts.append(
            f"{len(small)} of {len(labels)} classes have fewer clips in the {pool} than samples_per_label = "
            f"{p['samples_per_label']}: {named}{more}; every draw trains on all of them"
        )
    k = len(set(labels.tolist()) | set(eval_labels.tolist()))  # the classes a guess picks from
    top = int(np.argmax(eval_counts))
    share = float(eval_counts[top] / eval_counts.sum())
    if share >= min(0.8, max(0.5, 2 / k)):
        parts.append(
            f"the evaluation split is {100 * share:.1f}% {str(eval_labels[top])!r}: always answering it scores "
            f"{100 * share:.1f}% accuracy and guessing {100 / k:.1f}% ({k} classes), and a probe trained on "
            "balanced draws seldom favours the majority, so accuracy can fall below the majority share "
            "(macro f1 weighs the classes equally)"
        )
    if parts:
        emb.warn(f"task {emb.context}: " + "; ".join(parts))


class Classification(TaskType[Table]):
    """The classification task type (the module's docstring says what it scores and how)."""

    NAME = "classification"
    LABELLED = True
    MAIN_SCORE = "accuracy"
    PARAMS = {
        "samples_per_label": Param(8, "training clips drawn per label in each experiment", min=1),
        "n_experiments": Param(10, "experiments (draws) averaged, with a separate train split", min=1),
        "cross_validation": Param(False, "evaluate on the train split with KFold (most MAEB classification tasks)"),
        "n_splits": Param(5, "KFold folds under cross-validation", min=2),
        "max_iter": Param(100, "LogisticRegression iterations", min=1),
        "seed": Param(42, "seed of the draws, the folds and the classifier", min=0, max=2**32 - 1),
        "nuisance_columns": Param(
            None,
            "columns naming a nuisance (speaker, session, device): confound probes per column (docs/checks.md)",
            kind=list,
            items=str,
        ),
    }

    def params(self, raw: dict, where: str) -> dict:
        """The spec's [protocol] merged over PARAMS; nuisance_columns is kept only when given, so a
        task without it has the identity (and the cached results) it had before the option existed."""
        merged = make_params(self.PARAMS, raw, where)
        if merged["nuisance_columns"] is None:
            del merged["nuisance_columns"]
        return merged

    def metrics(self, spec: TaskSpec) -> tuple[str, ...]:
        """The metric names a classification result holds."""
        return label_metric_names()

    def planned_clips(self, spec: TaskSpec, split: str, stats: dict) -> tuple[int, float]:
        """(clips, hours) a run embeds of a split: of a separate train split only the few-shot draws."""
        n, h = stats.get("clips", 0), stats.get("hours", 0.0)
        if split == spec.data.train_split and split not in spec.data.eval_splits and stats.get("classes"):
            drawn = min(n, stats["classes"] * spec.protocol["samples_per_label"] * spec.protocol["n_experiments"])
            return drawn, (h * drawn / n if n else 0.0)
        return n, h

    def splits(self, spec: TaskSpec) -> list[str]:
        """The splits to load: the eval splits and, unless cross-validating, the train split."""
        extra = [] if spec.protocol["cross_validation"] else [spec.data.train_split]
        return list(dict.fromkeys(spec.data.eval_splits + extra))

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """Score split `split` with the few-shot linear probe: the mean over experiments (or folds) of the label metrics, with each
        experiment's scores."""
        p = spec.protocol
        audio, label = spec.data.audio_column, spec.data.label_column

        def _refit(x_train, y_train, x_eval, y_eval) -> float | None:  # the shuffled control's experiment
            return label_metrics(y_eval, fit_predict(x_train, y_train, x_eval, p, probe_of(emb))).get(spec.main_score)

        table = data[split]
        table.require([audio], "audio")
        table.require([label], "label")
        columns = list(p.get("nuisance_columns") or [])
        if p["cross_validation"]:
            nuisance = confound.nuisance_values(table, columns, f"{spec.name} {split}")  # checked before embedding
            x, ok = emb.audio(table[audio])
            x, y = keep_valid(ok, x, _encode_labels(table[label]))
            if len(y) < p["n_splits"]:
                raise DataError(
                    f"cross-validation with n_splits = {p['n_splits']} needs at least that many clips; the split has {len(y)}"
                )
            balance_notice(emb, y, y, p, f"{split} split (cross-validation)", (p["n_splits"] - 1) / p["n_splits"])
            folds = list(KFold(n_splits=p["n_splits"], shuffle=True, random_state=p["seed"]).split(np.arange(len(y))))
            # every fold's draw first (they chain through one shuffled index list, mteb's order), so an
            # experiment can be refit on its own (maeb.run.stability's replays refit a share of them)
            draws, idxs = [], None
            for train_idx, _ in folds:
                chosen, idxs = undersample(y[train_idx], idxs, p["samples_per_label"], p["seed"])
                draws.append(chosen)
            results, blocks = [], []
            classes = perclass.classes(y.tolist())
            correct = np.zeros(len(y))
            shuffled = control.of(emb, p)
            fits = Convergence()  # the experiments' fits (not the control's or the confound probes')
            for (train_idx, test_idx), chosen in emb.progress(list(zip(folds, draws)), "folds"):
                with fits.collecting():
                    pred = fit_predict(x[train_idx][chosen], y[train_idx][chosen], x[test_idx], p, probe_of(emb))
                results.append(label_metrics(y[test_idx], pred))
                blocks.append(perclass.single_label(y[test_idx], pred, classes))
                correct[test_idx] = pred == y[test_idx]
                if shuffled is not None:  # the same fold and draw, its training labels permuted (maeb.tasktypes.control)
                    shuffled.add(_refit, x[train_idx][chosen], y[train_idx][chosen], x[test_idx], y[test_idx])
            # each clip is tested once; the folds' mean accuracy weighs folds, not clips (equal-sized folds)
            emb.record.outcome("accuracy", keep_valid(ok, list(table[audio]))[0], correct)
            info: dict = {"convergence": fits.record()}
            if columns:
                kept = {c: v[ok] for c, v in nuisance.items()}
                info["confounds"] = confound.run(emb, x, y, kept, p, _confound_metric(spec), probe_of(emb))
            control_record = None if shuffled is None else shuffled.record()
            return Evaluation({**mean_scores(results), "per_class": perclass.mean_blocks(blocks)}, info, shuffled=control_record)

        train = data[spec.data.train_split]
        train.require([audio, label], "train split")
        test_nuisance = confound.nuisance_values(table, columns, f"{spec.name} {split}")
        confound.nuisance_values(
            train, columns, f"{spec.name} {spec.data.train_split}"
        )  # checked; read again once bad clips are dropped
        x_test, ok_test = emb.audio(table[audio])
        x_test, y_test = keep_valid(ok_test, x_test, _encode_labels(table[label]))
        while True:  # re-draw if a drawn training clip turns out undecodable (skip mode only)
            y_train = _encode_labels(train[label])
            draws, idxs = [], None
            for _ in range(p["n_experiments"]):
                chosen, idxs = undersample(y_train, idxs, p["samples_per_label"], p["seed"])
                draws.append(chosen)
            union = sorted(set().union(*draws))
            with emb.on_split(spec.data.train_split):
                x_union, ok = emb.audio([train[audio][i] for i in union])
            if ok.all():
                break
            bad = {union[j] for j in np.flatnonzero(~ok)}
            train = train.where([i not in bad for i in range(len(train))])
        balance_notice(emb, y_train, y_test, p, f"{spec.data.train_split} split")
        position = {row: j for j, row in enumerate(union)}
        results, blocks = [], []
        classes = perclass.classes(y_train.tolist() + y_test.tolist())
        correct = np.zeros(len(y_test))
        shuffled = control.of(emb, p)
        fits = Convergence()  # the experiments' fits (not the control's or the confound probes')
        for chosen in emb.progress(draws, "experiments"):
            rows = [position[i] for i in chosen]
            with fits.collecting():
                pred = fit_predict(x_union[rows], y_train[chosen], x_test, p, probe_of(emb))
            results.append(label_metrics(y_test, pred))
            blocks.append(perclass.single_label(y_test, pred, classes))
            correct += (pred == y_test) / len(draws)
            if shuffled is not None:  # the same draw, its training labels permuted (maeb.tasktypes.control)
                shuffled.add(_refit, x_union[rows], y_train[chosen], x_test, y_test)
        emb.record.outcome("accuracy", keep_valid(ok_test, list(table[audio]))[0], correct)
        info = {"convergence": fits.record()}
        if columns:  # the pool: the drawn training clips and the evaluated ones
            pool_x = np.concatenate([x_union, x_test])
            pool_y = np.concatenate([np.asarray(y_train[union], dtype=object), np.asarray(y_test, dtype=object)])
            train_nuisance = confound.nuisance_values(train, columns, f"{spec.name} {spec.data.train_split}")
            pooled = {c: np.concatenate([train_nuisance[c][union], test_nuisance[c][ok_test]]) for c in columns}
            info["confounds"] = confound.run(emb, pool_x, pool_y, pooled, p, _confound_metric(spec), probe_of(emb))
        control_record = None if shuffled is None else shuffled.record()
        return Evaluation({**mean_scores(results), "per_class": perclass.mean_blocks(blocks)}, info, shuffled=control_record)
