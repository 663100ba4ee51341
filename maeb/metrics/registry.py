"""The metric registry: a metric is a small declared function that task types, built-in or a user's
own, look up by name (`get_metric("v_measure")(labels, clusters)`), as inspect_ai and lm-eval look
up theirs.

Each metric declares its oracle: the peer package its test compares maeb's numbers against
(sklearn, mteb's code, sed_eval, pytrec_eval, the mecat package), so a reader knows where a number's
definition is settled. Declare one with the decorator or the call:

    @metric("balanced_error", oracle="sklearn.metrics.balanced_accuracy_score")
    def balanced_error(y_true, y_pred) -> float: ...

    register_metric("balanced_error", balanced_error, oracle="sklearn.metrics.balanced_accuracy_score")

The built-in task types' metrics are declared in maeb.metrics.scores (loaded on the first look-up)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..core.errors import SpecError, closest

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Metric:
    """One registered metric: its name, the function that computes it, its oracle (the peer package
    its test compares against) and what it computes (the function's docstring)."""

    name: str
    fn: Callable[..., Any]
    oracle: str
    doc: str = ""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The metric of the arguments: the declared function's own return value, unchanged."""
        return self.fn(*args, **kwargs)


_METRICS: dict[str, Metric] = {}


def register_metric(name: str, fn: Callable[..., Any], oracle: str) -> Metric:
    """Declare `fn` as metric `name`, tested against `oracle`. Declaring a taken name again with
    another function is refused (it would change the numbers of every type that looks it up)."""
    if not isinstance(name, str) or not name:
        raise SpecError(f"metric name must be a non-empty string, got {name!r}")
    if not callable(fn):
        raise SpecError(f"metric {name!r}: {fn!r} is not a function")
    if not isinstance(oracle, str) or not oracle.strip():
        raise SpecError(f"metric {name!r}: name its oracle (the package its test compares against)")
    found = _METRICS.get(name)
    if found is not None and found.fn is not fn:
        raise SpecError(
            f"metric {name!r} is already declared ({found.fn.__module__}.{found.fn.__qualname__}); choose another name"
        )
    entry = Metric(name, fn, oracle, " ".join((fn.__doc__ or "").split()))
    _METRICS[name] = entry
    return entry


def metric(name: str | None = None, *, oracle: str) -> Callable[[F], F]:
    """Decorator: declare the function as a metric (named `name`, default its own name), tested
    against `oracle`; the function itself is returned unchanged."""

    def declare(fn: F) -> F:
        register_metric(name or fn.__name__, fn, oracle)
        return fn

    return declare


def _builtin() -> None:
    """Load the built-in metrics (their module declares them on import)."""
    from . import scores  # noqa: F401  (imported for its declarations)


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
