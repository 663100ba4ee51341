"""The linear probe the classification types fit, as the run's protocol chooses it.

- "mteb" (the reference protocols): LogisticRegression(max_iter, random_state=seed) on the raw
  vectors, as mteb fits it. On unnormalised features it stops before converging, and its score
  then depends on the last bits of the vectors (maeb.run.stability measures how much).
- "standardized" (the stable protocol, mteb-2.26-stable): the training sample's mean and scale
  removed from every feature (`Standardize`), then LogisticRegression fit to convergence
  (STABLE_TOL, at most STABLE_MAX_ITER iterations). Not mteb's numbers; scores that do not
  depend on the machine's rounding.

`Convergence` collects, over a task's fits of the probe, whether each LogisticRegression stopped
before max_iter (converged) or at it; the task types record it under their result's
maeb.evaluation.<split>.<subset>.convergence."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

PROBES = ("mteb", "standardized")
STABLE_TOL = 1e-8
STABLE_MAX_ITER = 5000
# a feature whose spread over the training sample is below this share of its magnitude is
# constant: its variation is the machine's rounding, which plain standardising would blow up to
# unit scale (found on MAEB-lite: the transcript model's vectors share dimensions exactly)
CONSTANT = 1e-4


class Standardize(BaseEstimator, TransformerMixin):
    """Zero mean and unit variance per feature over the training sample; near-constant features
    (std <= CONSTANT x their root mean square) become 0 rather than amplified rounding."""

    def fit(self, x, y=None):
        """Learn each feature's mean and scale from `x`; near-constant features are marked to be zeroed."""
        x = np.asarray(x, dtype=np.float64)
        self.mean_ = x.mean(axis=0)
        std = x.std(axis=0)
        self.keep_ = std > CONSTANT * np.sqrt(self.mean_**2 + std**2)
        self.scale_ = np.where(self.keep_, std, 1.0)
        return self

    def transform(self, x):
        """The features centred and scaled as fit learned, near-constant ones set to 0."""
        return np.where(self.keep_, (np.asarray(x, dtype=np.float64) - self.mean_) / self.scale_, 0.0)


def probe_of(emb) -> str:
    """The probe the run's protocol fits ("mteb" where it names none)."""
    return getattr(getattr(emb, "protocol", None), "probe", "mteb")


def linear_probe(p: dict, probe: str = "mteb"):
    """An unfitted classifier for the task's parameters p (max_iter, seed) under `probe`."""
    if probe == "mteb":
        return LogisticRegression(max_iter=p["max_iter"], random_state=p["seed"])
    if probe == "standardized":
        return make_pipeline(Standardize(), LogisticRegression(max_iter=STABLE_MAX_ITER, tol=STABLE_TOL, random_state=p["seed"]))
    raise ValueError(f"unknown probe {probe!r}; known: {', '.join(PROBES)}")


def regressions(model) -> list:
    """The fitted LogisticRegressions inside a probe: the model itself, a pipeline's last step, or
    each estimator of a MultiOutputClassifier (one per label), or those in a list of models (event
    detection's, one per class; a constant in their place is no fit)."""
    if isinstance(model, LogisticRegression):
        return [model]
    if isinstance(model, (list, tuple)):
        return [lr for m in model for lr in regressions(m)]
    if hasattr(model, "estimators_"):  # MultiOutputClassifier
        return [lr for e in model.estimators_ for lr in regressions(e)]
    if hasattr(model, "steps"):  # Pipeline
        return regressions(model.steps[-1][1])
    return []


class Convergence:
    """Whether the task's probe fits converged: lbfgs stops at max_iter when it has not, so a fit
    converged when its LogisticRegressions ran fewer than max_iter iterations (n_iter_). A fit of
    several (a label each, a class each) counts once, with the largest of their counts."""

    def __init__(self):
        self.n_iter: list[int] = []
        self.max_iter: list[int] = []

    def add(self, model) -> None:
        """Count one fitted probe (a model without a LogisticRegression in it counts nothing)."""
        found = regressions(model)
        if found:
            self.n_iter.append(max(int(np.max(lr.n_iter_)) for lr in found))
            self.max_iter.append(max(int(lr.max_iter) for lr in found))

    def record(self) -> dict:
        """{max_iter, fits, converged, n_iter (one per fit), note}: what the result records."""
        fits = len(self.n_iter)
        converged = sum(n < m for n, m in zip(self.n_iter, self.max_iter))
        top = max(self.max_iter, default=0)
        if fits == 0:
            note = "no probe was fitted"
        elif converged == fits:
            note = "every fit converged"
        else:
            note = (
                f"{fits - converged} of {fits} fit{'s' if fits != 1 else ''} stopped at max_iter {top} before converging: "
                "the score can move with the last bits of the vectors (docs/reproducibility.md)"
            )
        return {"max_iter": top, "fits": fits, "converged": converged, "n_iter": list(self.n_iter), "note": note}

    @contextmanager
    def collecting(self):
        """Within the block, every probe `fitted` notes is counted here (an evaluator wraps its
        experiments' fits, not the shuffled control's or the confound probes')."""
        token = _COLLECTING.set(self)
        try:
            yield self
        finally:
            _COLLECTING.reset(token)


_COLLECTING: ContextVar[Convergence | None] = ContextVar("maeb_probe_convergence", default=None)


def fitted(model) -> None:
    """Count a fitted probe in the Convergence collecting around this call; outside one, nothing."""
    collector = _COLLECTING.get()
    if collector is not None:
        collector.add(model)
