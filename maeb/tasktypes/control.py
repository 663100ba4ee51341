"""The label-shuffled control of the trained evaluators (`--controls shuffled`): the same probe,
the same draws and folds and the same test clips, with each experiment's TRAINING labels permuted
among its drawn clips (so the sample's class counts stay as they were) by a numpy Generator seeded
with the task's seed, one permutation per experiment in the evaluator's order of experiments
(multilabel: each drawn clip's label set moves as a whole). Its main score, averaged over the
experiments as the score itself is, is the evaluator's floor under these draws: what the probe
scores when the embeddings can say nothing about the labels. It sits near chance on a sound
evaluator; well above chance it points at the evaluator or the split (a fold or draw that lets
test labels reach training, a tiny split where a few lucky guesses move the score), not at the
model. It does not detect duplicate clips across splits: a memorising probe trained on permuted
labels recalls the wrong labels (maeb.run.task.shared_clips reports those)."""

from __future__ import annotations

import time

import numpy as np

SHUFFLED = "shuffled"
CONTROLS = (SHUFFLED,)
CONTROLLED = ("classification", "multilabel")  # the task types that compute it (the trained probes)


def wanted(emb) -> bool:
    """Whether the run asked for the shuffled control (the embedder carries the run's controls)."""
    return SHUFFLED in (getattr(emb, "controls", None) or ())


def permuted(labels, rng: np.random.Generator):
    """The training labels (rows of an array, or a list) permuted among the drawn clips."""
    order = rng.permutation(len(labels))
    return labels[order] if isinstance(labels, np.ndarray) else [labels[i] for i in order]


class Shuffled:
    """One evaluation's control: its permutations (seeded with the task's seed, in the evaluator's
    order of experiments), each experiment's main score, and the seconds its refits took."""

    def __init__(self, p: dict):
        self.rng = np.random.default_rng(p["seed"])
        self.scores: list[float | None] = []
        self.seconds = 0.0

    def add(self, refit, x_train, y_train, *rest) -> None:
        """One experiment on permuted training labels: refit(x_train, permuted y_train, *rest) gives its
        main score, kept with the seconds it took."""
        started = time.perf_counter()
        self.scores.append(refit(x_train, permuted(y_train, self.rng), *rest))
        self.seconds += time.perf_counter() - started

    def record(self) -> dict:
        """The evaluation's `shuffled` record: the mean main score over the experiments that have one (as
        mean_scores), and the refits' seconds (what the control costs beside the evaluation)."""
        values = [v for v in self.scores if v is not None]
        score = round(float(np.mean(values)), 6) if values else None
        # the standard error of that mean over the experiments: how far above chance luck alone puts it
        error = round(float(np.std(values, ddof=1) / np.sqrt(len(values))), 6) if len(values) > 1 else None
        return {"score": score, "error": error, "seconds": round(self.seconds, 3)}


def of(emb, p: dict) -> Shuffled | None:
    """The evaluation's control when the run asked for it, else None."""
    return Shuffled(p) if wanted(emb) else None
