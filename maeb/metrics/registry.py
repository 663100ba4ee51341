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
- tie_aware: the expected value over the orders of tied scores, where ranks are involved.

Declare one with the decorator or the call:

    @metric("balanced_error", oracle="sklearn.metrics.balanced_accuracy_score", higher_is_better=False, range=(0, 1), inputs="labels")
    def balanced_error(y_true, y_pred) -> float: ...

    register_metric("balanced_error", balanced_error, oracle="sklearn.metrics.balanced_accuracy_score", higher_is_better=False)

The built-in task types' metrics are declared in maeb.metrics.scores (loaded on the first look-up)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..core.errors import SpecError, closest

F = TypeVar("F", bound=Callable[..., Any])

# what a metric's fn takes, and what its chance and majority functions take
INPUTS = {
    "labels": "fn(y_true, y_pred), one label per clip; chance(counts): the evaluated split's class counts, "
    "each clip guessed uniformly among those classes",
    "scores": "fn(y_true, y_score), 0/1 truth; chance(n, r): n items of which r positive in uniformly random order",
    "label_matrix": "fn(Y, P), 0/1 matrices clips x labels",
    "label_scores": "fn(Y, S), a 0/1 matrix and scores; chance(Y): every row's labels in uniformly random order; "
    "majority(Y, prior): every row scored with the prior, tied labels in every order",
    "clusters": "fn(labels, cluster_ids); chance by draws of uniformly random ids, as many clusters as classes",
    "ranking": "fn(groups, ideal, k): tie groups of gains, best first, and the ideal gains; chance(n, gains, ideal, k): "
    "a pool of n documents, `gains` its relevant ones', in uniformly random order; majority(groups, ideal, k): the "
    "prior's tie groups as (documents, relevant, gain sum), each in every order",
}
DRAW_ERROR = 0.001  # standard error a draw recipe draws until (0.1 points on the board's 0-100 scale) ...
MAX_DRAWS = 2000  # ... or at most this many draws; the error reached is stored beside the value
PAIR_PREFIXES = ("cosine_", "dot_", "euclidean_", "manhattan_", "similarity_", "max_")  # pair classification's


@dataclass(frozen=True)
class Metric:
    """One registered metric (the module's docstring lists the facts and who reads them)."""

    name: str
    fn: Callable[..., Any] | None
    oracle: str
    doc: str = ""
    higher_is_better: bool = True
    range: tuple[float, float] | None = None
    inputs: str = ""
    pattern: str = ""  # other result keys the record covers (a regular expression), beside its name
    loose: bool = False  # also covers name_<anything> and name@<anything> (bleu_4, judge_score_speech)
    chance: Callable[..., float] | None = None
    chance_rule: str = ""
    majority: Callable[..., float] | None = None
    majority_rule: str = ""
    tie_aware: Callable[..., Any] | None = None

    @property
    def lower_is_better(self) -> bool:
        """Whether a smaller value ranks higher (error rates, distances)."""
        return not self.higher_is_better

    def covers(self, key: str) -> bool:
        """Whether result key `key` (lower case) is this metric."""
        if key == self.name.lower() or (self.pattern and re.fullmatch(self.pattern, key)):
            return True
        return self.loose and re.fullmatch(re.escape(self.name.lower()) + r"[_@]\w*", key) is not None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The metric of the arguments: the declared function's own return value, unchanged."""
        if self.fn is None:
            raise SpecError(f"metric {self.name!r} is only read in results ({self.oracle}); maeb has no function for it")
        return self.fn(*args, **kwargs)


_METRICS: dict[str, Metric] = {}


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
    if not isinstance(name, str) or not name:
        raise SpecError(f"metric name must be a non-empty string, got {name!r}")
    if fn is not None and not callable(fn):
        raise SpecError(f"metric {name!r}: {fn!r} is not a function")
    if not isinstance(oracle, str) or not oracle.strip():
        raise SpecError(f"metric {name!r}: name its oracle (the package its test compares against)")
    if higher_is_better is not None and not isinstance(higher_is_better, bool):
        raise SpecError(f"metric {name!r}: higher_is_better must be true or false, got {higher_is_better!r}")
    for role, given in (("chance", chance), ("majority", majority), ("tie_aware", tie_aware)):
        if given is not None and not callable(given):  # caught here, not at the first baseline a run computes
            raise SpecError(f"metric {name!r}: {role} must be a function (INPUTS says its arguments), got {given!r}")
    if range is not None:
        pair = isinstance(range, (tuple, list)) and len(range) == 2
        if not pair or not all(isinstance(b, (int, float)) for b in range) or not range[0] < range[1]:
            raise SpecError(f"metric {name!r}: range must be (low, high) with low < high, got {range!r}")
        range = (float(range[0]), float(range[1]))
    if inputs and inputs not in INPUTS:
        raise SpecError(f"metric {name!r}: inputs {inputs!r} is not one of {', '.join(INPUTS)}")
    if pattern:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise SpecError(f"metric {name!r}: pattern {pattern!r} is not a regular expression ({exc})") from exc
    text = " ".join((doc or (fn.__doc__ if fn is not None else "") or "").split())
    entry = Metric(
        name, fn, oracle, text, higher_is_better is not False, range, inputs, pattern, loose, chance, chance_rule, majority, majority_rule,
        tie_aware,
    )  # fmt: skip
    # a user's metric meets the built-in ones at once: declared before them, it would take a built-in name
    # silently and every later look-up would fail on the built-ins' own declaration
    _builtin()
    found = _METRICS.get(name)
    twin = next((m for m in _METRICS.values() if m.name != name and m.name.lower() == name.lower()), None)
    if twin is not None:  # result keys are matched in lower case: the two would read as one
        raise SpecError(
            f"metric {name!r}: {twin.name!r} is already declared (names are matched in lower case); choose another name"
        )
    # a name another record's pattern reads (ndcg_at_10 is ndcg_at_k's) would take those result keys over; a
    # name extending a loose one (f1_weighted beside f1) is a metric of its own by design, the name read first
    covering = next((m for m in _METRICS.values() if m.pattern and re.fullmatch(m.pattern, name.lower())), None)
    if found is None and covering is not None:
        raise SpecError(
            f"metric {name!r}: result key {name.lower()!r} is already read as metric {covering.name!r}; choose another name"
        )
    if found is not None and found.fn is not fn:
        where = f"{found.fn.__module__}.{found.fn.__qualname__}" if found.fn is not None else found.oracle
        raise SpecError(f"metric {name!r} is already declared ({where}); choose another name")
    if found is not None and found != entry:
        raise SpecError(
            f"metric {name!r} is already declared with other facts (direction, range or baselines); choose another name"
        )
    if higher_is_better is None and not _DECLARING[0]:
        raise SpecError(
            f"metric {name!r}: say higher_is_better=True or False (whether a larger value is better: boards rank by it)"
        )
    _METRICS[name] = entry
    return entry


def metric(name: str | None = None, *, oracle: str, **facts: Any) -> Callable[[F], F]:
    """Decorator: declare the function as a metric (named `name`, default its own name), tested
    against `oracle`, with its facts (register_metric's keywords); the function is returned unchanged."""

    def declare(fn: F) -> F:
        register_metric(name or fn.__name__, fn, oracle, **facts)
        return fn

    return declare


_LOADED = [False]  # whether the built-in metrics are declared (or being declared)
_DECLARING = [False]  # while maeb.metrics.scores declares them (their direction defaults to higher is better)


def _builtin() -> None:
    """Load the built-in metrics (their module declares them on import, through register_metric,
    which calls this again: the flag is set first so that call returns at once)."""
    if _LOADED[0]:
        return
    _LOADED[0] = _DECLARING[0] = True
    try:
        from . import scores  # noqa: F401  (imported for its declarations)
    except BaseException:
        _LOADED[0] = False
        raise
    finally:
        _DECLARING[0] = False


def get_metric(name: str) -> Metric:
    """The metric declared as `name`; SpecError naming it (and close names) when none is."""
    _builtin()
    if name not in _METRICS:
        close = closest(name, list(_METRICS))
        hint = f"; did you mean {', '.join(close)}?" if close else f"; declared: {', '.join(sorted(_METRICS))}"
        raise SpecError(f"unknown metric {name!r}{hint}")
    return _METRICS[name]


def metric_names() -> list[str]:
    """Every declared metric's name, sorted."""
    _builtin()
    return sorted(_METRICS)


def metrics_of(inputs: str) -> list[Metric]:
    """The declared metrics that take `inputs` (INPUTS), in declaration order (the built-in ones first)."""
    _builtin()
    return [m for m in _METRICS.values() if m.inputs == inputs]


def record_of(key: str | None) -> Metric | None:
    """The record of a result key: the metric of that name, else one whose pattern covers it, else one
    it extends (name_...), each tried on the key and on the key without a pair-classification prefix
    (cosine_ap is ap). None for thresholds, standard deviations, counts and unknown keys."""
    if not key:
        return None
    _builtin()
    k = key.lower()
    if k.endswith(("_threshold", "_std")) or k.startswith(("n_", "unparsed_")):
        return None
    tries = [k] + [k[len(p) :] for p in PAIR_PREFIXES if k.startswith(p) and len(k) > len(p)]
    named = {m.name.lower(): m for m in _METRICS.values()}
    for rule in ("name", "pattern", "loose"):
        for t in tries:
            if rule == "name" and t in named:
                return named[t]
            for m in _METRICS.values():
                if rule == "pattern" and m.pattern and re.fullmatch(m.pattern, t):
                    return m
                if rule == "loose" and m.covers(t):
                    return m
    return None
