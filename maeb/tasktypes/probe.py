"""The linear probe the classification types fit, as the run's protocol chooses it.

- "mteb" (the reference protocols): LogisticRegression(max_iter, random_state=seed) on the raw
  vectors, as mteb fits it. On unnormalised features it stops before converging, and its score
  then depends on the last bits of the vectors (maeb.run.stability measures how much).
- "standardized" (the stable protocol, mteb-2.26-stable): the training sample's mean and scale
  removed from every feature (`Standardize`), then LogisticRegression fit to convergence
  (STABLE_TOL, at most STABLE_MAX_ITER iterations). Not mteb's numbers; scores that do not
  depend on the machine's rounding."""

from __future__ import annotations

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
