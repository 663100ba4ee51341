"""The metric registry: one record per metric, the one place its facts are declared. Task types,
built-in or a user's own, look a metric up by name (`get_metric("v_measure")(labels, clusters)`), as
inspect_ai and lm-eval look up theirs; the leaderboard, the result reader, the uncertainty bands and
the baselines read its direction, range and chance level from the same record (`record_of(key)`
finds the record of a result key such as "ndcg_at_10" or "cosine_ap").

A record holds:
- fn, oracle: the function and its reference implementation (the peer package its test compares
  maeb's numbers against: sklearn, mteb's code, sed_eval, pytrec_eval, the mecat package). A metric
  maeb only reads in results (computed by mteb or inside an evaluator) has fn None;
- higher_is_better and range (None: unbounded or unknown, only finiteness is checked);
- inputs: what fn takes (INPUTS); a built-in type computes every registered metric of the inputs it
  has (classification and zero-shot: "labels"; clustering: "clusters"), so a metric declared here is
  reported without editing a list;
- chance and majority: the chance level (a closed form over the truth, arguments per INPUTS) or, where
  none exists, a draw recipe reaching DRAW_ERROR; the majority/prior baseline as an expectation; the
  rules say how each is known;
- tie_aware: the expected value over the orders of tied scores, where ranks are involved; the task types
  under a tie-aware protocol take it from here (tie_aware_of: zero-shot accuracy, pair AP, the ranking metrics).

Declare one with the decorator or the call:

    @metric("balanced_error", oracle="sklearn.metrics.balanced_accuracy_score", higher_is_better=False, range=(0, 1), inputs="labels")
    def balanced_error(y_true, y_pred) -> float: ...

    register_metric("balanced_error", balanced_error, oracle="sklearn.metrics.balanced_accuracy_score", higher_is_better=False)

The built-in task types' metrics are declared in maeb.metrics.scores (loaded on the first look-up)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..core.errors import SpecError, closest
from . import records
from .records import DRAW_ERROR, INPUTS, MAX_DRAWS, PAIR_PREFIXES, F, Metric

# the records live in .records (which the built-in declarations import); their names stay readable here
__all__ = [
    "DRAW_ERROR",
    "INPUTS",
    "MAX_DRAWS",
    "PAIR_PREFIXES",
    "Metric",
    "get_metric",
    "metric",
    "metric_names",
    "metrics_of",
    "record_of",
    "register_metric",
]


def register_metric(
    name: str,
    fn: Callable[..., Any] | None,
    oracle: str,
    *,
    higher_is_better: bool | None = None,
    range: tuple[float, float] | None = None,
    inputs: str = "",
    pattern: str = "",
    loose: bool = False,
    chance: Callable[..., float] | None = None,
    chance_rule: str = "",
    majority: Callable[..., float] | None = None,
    majority_rule: str = "",
    tie_aware: Callable[..., Any] | None = None,
    doc: str = "",
) -> Metric:
    """Declare `fn` as metric `name`, tested against `oracle`, with its facts (see Metric). Declaring a
    taken name again with another function or other facts is refused (it would change the numbers, or
    the order, of every type and board that looks it up). higher_is_better must be given for a metric
    of one's own (a forgotten False would rank an error rate's worst model first); the built-in ones
    of maeb.metrics.scores default to True."""
    # a user's metric meets the built-in ones at once: declared before them, it would take a built-in name
    # silently and every later look-up would fail on the built-ins' own declaration
    _builtin()
    return records.declare(
        name, fn, oracle, higher_is_better=higher_is_better, range=range, inputs=inputs, pattern=pattern, loose=loose,
        chance=chance, chance_rule=chance_rule, majority=majority, majority_rule=majority_rule, tie_aware=tie_aware, doc=doc,
    )  # fmt: skip


def metric(name: str | None = None, *, oracle: str, **facts: Any) -> Callable[[F], F]:
    """Decorator: declare the function as a metric (named `name`, default its own name), tested
    against `oracle`, with its facts (register_metric's keywords); the function is returned unchanged."""

    def declare(fn: F) -> F:
        register_metric(name or fn.__name__, fn, oracle, **facts)
        return fn

    return declare


_LOADED = [False]  # whether the built-in metrics are declared (or being declared)


def _builtin() -> None:
    """Load the built-in metrics (their module declares them on import, into maeb.metrics.records)."""
    if _LOADED[0]:
        return
    _LOADED[0] = True
    try:
        from . import scores  # noqa: F401  (imported for its declarations)
    except BaseException:
        _LOADED[0] = False
        raise


def get_metric(name: str) -> Metric:
    """The metric declared as `name`; SpecError naming it (and close names) when none is."""
    _builtin()
    if name not in records._METRICS:
        close = closest(name, list(records._METRICS))
        hint = f"; did you mean {', '.join(close)}?" if close else f"; declared: {', '.join(sorted(records._METRICS))}"
        raise SpecError(f"unknown metric {name!r}{hint}")
    return records._METRICS[name]


def metric_names() -> list[str]:
    """Every declared metric's name, sorted."""
    _builtin()
    return sorted(records._METRICS)


def tie_aware_of(name: str) -> Callable[..., Any]:
    """The tie-aware form the record `name` declares (the expectation over the orders of tied scores);
    SpecError naming the metric where it declares none."""
    found = get_metric(name).tie_aware
    if found is None:
        raise SpecError(f"metric {name!r} declares no tie-aware form")
    return found


def metrics_of(inputs: str) -> list[Metric]:
    """The declared metrics that take `inputs` (INPUTS), in declaration order (the built-in ones first)."""
    _builtin()
    return [m for m in records._METRICS.values() if m.inputs == inputs]


def record_of(key: str | None, *, loose: bool = True) -> Metric | None:
    """The record of a result key: the metric of that name, else one whose pattern covers it, else one
    it extends (name_...; not with loose=False), each tried on the key and on the key without a
    pair-classification prefix (cosine_ap is ap). None for thresholds, standard deviations, counts and
    unknown keys."""
    if not key:
        return None
    _builtin()
    k = key.lower()
    if k.endswith(("_threshold", "_std")) or k.startswith(("n_", "unparsed_")):
        return None
    tries = [k] + [k[len(p) :] for p in PAIR_PREFIXES if k.startswith(p) and len(k) > len(p)]
    named = {m.name.lower(): m for m in records._METRICS.values()}
    for rule in ("name", "pattern", "loose") if loose else ("name", "pattern"):
        for t in tries:
            if rule == "name" and t in named:
                return named[t]
            for m in records._METRICS.values():
                if rule == "pattern" and m.pattern and re.fullmatch(m.pattern, t):
                    return m
                if rule == "loose" and m.covers(t):
                    return m
    return None
