"""The metric records and their declaration (maeb.metrics.registry's docstring says what a record
holds and who reads it). They sit below the registry's look-ups, which load maeb.metrics.scores on
first use, so that scores declares the built-in metrics without importing the registry back."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..core.errors import SpecError

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


def declare(
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
    builtin: bool = False,
) -> Metric:
    """Declare `fn` as metric `name` with its facts (see Metric): register_metric's checks, without
    loading the built-in metrics first (builtin: one of maeb.metrics.scores', whose direction
    defaults to higher is better)."""
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
    if higher_is_better is None and not builtin:
        raise SpecError(
            f"metric {name!r}: say higher_is_better=True or False (whether a larger value is better: boards rank by it)"
        )
    _METRICS[name] = entry
    return entry


def builtin_metric(name: str | None = None, *, oracle: str, **facts: Any) -> Callable[[F], F]:
    """Decorator: declare a built-in metric (maeb.metrics.scores), the function returned unchanged."""

    def declare_fn(fn: F) -> F:
        declare(name or fn.__name__, fn, oracle, builtin=True, **facts)
        return fn

    return declare_fn


def register_builtin(name: str, fn: Callable[..., Any] | None, oracle: str, **facts: Any) -> Metric:
    """Declare a built-in metric (maeb.metrics.scores) by a call."""
    return declare(name, fn, oracle, builtin=True, **facts)
