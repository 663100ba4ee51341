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
labels recalls the wrong labels (maeb.run.runner.shared_clips reports those)."""

from __future__ import annotations

import numpy as np

SHUFFLED = "shuffled"
CONTROLS = (SHUFFLED,)


def wanted(emb) -> bool:
    """Whether the run asked for the shuffled control (the embedder carries the run's controls)."""
    return SHUFFLED in (getattr(emb, "controls", None) or ())


def generator(p: dict) -> np.random.Generator:
    """The control's permutations, from the task's seed (a new generator per split and subset)."""
    return np.random.default_rng(p["seed"])


def permuted(labels, rng: np.random.Generator):
    """The training labels (rows of an array, or a list) permuted among the drawn clips."""
    order = rng.permutation(len(labels))
    return labels[order] if isinstance(labels, np.ndarray) else [labels[i] for i in order]


def score(per_experiment: list[float | None]) -> float | None:
    """The control's main score: the mean over the experiments that have one (as mean_scores)."""
    values = [v for v in per_experiment if v is not None]
    return round(float(np.mean(values)), 6) if values else None
