"""The linear probe the classification types fit, as the run's protocol chooses it.

- "mteb" (the reference protocols): LogisticRegression(max_iter, random_state=seed) on the raw
  vectors, as mteb fits it. On unnormalised features it stops before converging, and its score
  then depends on the last bits of the vectors (maeb.stability measures how much).
- "standardized" (the stable protocol, mteb-2.26-stable): the training sample's mean and scale
  removed from every vector (StandardScaler), then LogisticRegression fit to convergence
  (STABLE_TOL, at most STABLE_MAX_ITER iterations). Not mteb's numbers; scores that do not
  depend on the machine's rounding."""

from __future__ import annotations

from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

PROBES = ("mteb", "standardized")
STABLE_TOL = 1e-8
STABLE_MAX_ITER = 5000


def probe_of(emb) -> str:
    """The probe the run's protocol fits ("mteb" where it names none)."""
    return getattr(getattr(emb, "protocol", None), "probe", "mteb")


def linear_probe(p: dict, probe: str = "mteb"):
    """An unfitted classifier for the task's parameters p (max_iter, seed) under `probe`."""
    if probe == "mteb":
        return LogisticRegression(max_iter=p["max_iter"], random_state=p["seed"])
    if probe == "standardized":
        return make_pipeline(
            StandardScaler(), LogisticRegression(max_iter=STABLE_MAX_ITER, tol=STABLE_TOL, random_state=p["seed"])
        )
    raise ValueError(f"unknown probe {probe!r}; known: {', '.join(PROBES)}")
