"""The task type interface every type module imports: the TaskType base, Evaluation, Param and
TaskState, the Embeddings an evaluator may use (SERVICES), and the helpers make_params and
keep_valid. It sits apart from the registry (maeb.tasktypes), which names the type modules, so a
type reaches its base without importing the package that lists it (maeb.tasktypes re-exports it all)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..core.context import RunContext
from ..core.errors import DataError, SpecError, check_keys
from ..core.taskspec import TaskSpec

# What a task type may use of the `emb` it is given (maeb.engine.embed.Embedder); tests/test_architecture.py
# holds every type to it. The engine's own functions (maeb.engine.frames.frame_embeddings,
# maeb.audiogen.store) take `emb` whole and compute through its one loop (Embedder.run).
SERVICES = {
    "audio": "audio(refs) -> (vectors (n, d) float32, usable mask): clips through the shared embedding cache",
    "text": "text(texts) -> vectors: the model's text side",
    "generate": "generate(refs, prompts, settings) -> (texts, usable mask): a model that writes text",
    "judge": "the run's LLM judge (ask, describe), None without --judge-url",
    "similarity": "the model's similarity for scores (cosine, dot, ...)",
    "protocol": "the run's reference protocol (its probe: maeb.tasktypes.probe)",
    "record": "record.outcome(metric, refs, values): per-clip outcomes for the duration report",
    "on_split": "with emb.on_split(name): clips embedded there are counted under that split",
    "progress": "progress(items, what): items, with a progress bar",
    "progress_iter": "progress_iter(iterator, total, what): an iterator, with a progress bar",
    "log": "log(message): a line in the run's log",
    "warn": "warn(message): logged once and kept in the result",
    "context": "the task, subset and split being evaluated (for messages)",
    "ctx": "the run's context: cache_dir, device",
    "controls": "the run's controls the evaluators compute (--controls; maeb.tasktypes.control)",
    "perturb_frames": "optional: a stability replay's noise on time-resolved frames",
}


# SERVICES as types (perturb_frames, optional, is read with getattr): an evaluator that uses anything
# else of `emb`, or misspells a member, fails mypy. maeb.engine.embed.Embedder and the stability
# replay's view (maeb.run.stability) both satisfy it.
class Embeddings(Protocol):
    """What an evaluator may use of the `emb` it is given (SERVICES, typed)."""

    def audio(self, refs: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """Vectors (n, d) float32 of the clips and the usable mask."""
        ...

    def text(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of the texts (the model's text side)."""
        ...

    def generate(self, refs: Sequence[Any], prompts: Sequence[str], settings: dict) -> tuple[list[str], np.ndarray]:
        """One text per (clip, prompt) and the usable mask."""
        ...

    @property
    def judge(self) -> Any:
        """The run's LLM judge, None without --judge-url."""
        ...

    @property
    def similarity(self) -> Any:
        """The model's similarity name for scores (cosine, dot, ...)."""
        ...

    @property
    def protocol(self) -> Any:
        """The run's reference protocol (its probe: maeb.tasktypes.probe)."""
        ...

    @property
    def record(self) -> Any:
        """The task's record (maeb.engine.taskrecord.TaskRecord): record.outcome(metric, refs, values)."""
        ...

    def on_split(self, split: str) -> AbstractContextManager[Any]:
        """A context in which clips embedded are counted under split `split`."""
        ...

    def progress(self, items: Iterable[Any], what: str) -> Any:
        """The items, with a progress bar."""
        ...

    def progress_iter(self, iterator: Iterator[Any], total: int, what: str) -> Any:
        """An iterator, with a progress bar."""
        ...

    def log(self, message: str) -> None:
        """A line in the run's log."""
        ...

    def warn(self, message: str) -> None:
        """A notice logged once and kept in the result."""
        ...

    @property
    def context(self) -> str:
        """The task, subset and split being evaluated (for messages)."""
        ...

    @property
    def ctx(self) -> RunContext:
        """The run's context: cache_dir, device."""
        ...

    @property
    def controls(self) -> tuple[str, ...]:
        """The run's controls the evaluators compute (--controls; maeb.tasktypes.control)."""
        ...


Data = Mapping[str, Any]  # split name -> its table (maeb.data.sources.Table or a derived shape)

if TYPE_CHECKING:
    from ..engine.embed import Embedder

    def _the_engine_fits(emb: Embedder) -> Embeddings:  # mypy holds the run's embedder to the protocol
        return emb


@dataclass
class Evaluation:
    """What evaluating one subset and split gives: the metrics (mteb's names), what else the
    result should record about it, and files to write beside the result (name -> text)."""

    metrics: dict
    info: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    # what the runner files elsewhere than info, as fields so a misspelt name fails (mypy, or the call)
    ties: dict | None = None  # the score's maeb.ties record (maeb.metrics.ties): tie order's reach
    shuffled: dict | None = None  # the label-shuffled control (--controls shuffled; maeb.tasktypes.control)


def as_evaluation(value, kind: str = "") -> Evaluation:
    """An evaluator's return value, which must be an Evaluation (a task type that returns anything
    else is stopped here, naming it, rather than written as a half-read result)."""
    if not isinstance(value, Evaluation):
        raise SpecError(f"task type {kind or '?'}: evaluate() returned a {type(value).__name__}; it must return an Evaluation")
    return value


@dataclass(frozen=True)
class Param:
    """One protocol parameter: its default, what it means, and the values it may take. Checked
    when a spec is parsed, so a bad value fails with its field name before anything is embedded."""

    default: Any
    doc: str = ""
    kind: type | tuple[type, ...] | None = None  # default: the default's type (None allows anything)
    min: float | None = None
    max: float | None = None
    choices: tuple | None = None
    items: type | None = None  # element type of a list value

    def check(self, key: str, value, where: str):
        """The value a spec gives for parameter `key`, checked against the declared kind, range,
        choices and item type, and returned; None is allowed only when the default is None (a
        parameter with a default must be filled in before). A bad value raises SpecError naming
        `where` and the key."""
        if value is None:
            if self.default is None:
                return None
            raise SpecError(f"{where}: {key} must be set (default {self.default!r})")
        kind = self.kind or (type(self.default) if self.default is not None else None)
        if kind is float:
            kind = (int, float)
        if kind is not None and (not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, (int, float)))):
            name = "number" if kind == (int, float) else getattr(kind, "__name__", str(kind))
            raise SpecError(f"{where}: {key} must be {name}, got {value!r}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if value != value or value in (float("inf"), float("-inf")):
                raise SpecError(f"{where}: {key} must be finite, got {value!r}")
            if self.min is not None and value < self.min:
                raise SpecError(f"{where}: {key} must be at least {_number(self.min)}, got {value!r}")
            if self.max is not None and value > self.max:
                raise SpecError(f"{where}: {key} must be at most {_number(self.max)}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise SpecError(f"{where}: {key} must be one of {', '.join(map(repr, self.choices))}, got {value!r}")
        if self.items is not None and isinstance(value, list):
            for item in value:
                self.__class__(self.items(), kind=self.items, min=self.min, max=self.max).check(f"{key} item", item, where)
        return value


def _number(value) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def make_params(defaults: dict, raw: dict, where: str) -> dict:
    """Merge a spec's [protocol] over a type's parameters, checking each value. Plain values in
    `defaults` are parameters whose only rule is their default's type."""
    check_keys(where, raw, set(defaults))
    merged = {k: (v.default if isinstance(v, Param) else v) for k, v in defaults.items()}
    for key, value in raw.items():
        rule = defaults[key]
        if not isinstance(rule, Param):
            rule = Param(rule, kind=(int, float) if isinstance(rule, float) else None)
            if rule.default is None:
                merged[key] = value
                continue
        merged[key] = rule.check(key, value, where)
    return merged


@dataclass
class TaskState:
    """Random generators that live for one task run across splits and subsets, as mteb's task
    object holds them (so subset order reproduces mteb's draws)."""

    seed: int = 42
    subset: str = "default"  # the subset being evaluated (set by the runner before each call)
    rng: random.Random = field(init=False)
    np_rng: np.random.Generator = field(init=False)

    def __post_init__(self):
        self.rng = random.Random(self.seed)
        self.np_rng = np.random.default_rng(self.seed)


def keep_valid(ok: np.ndarray, *arrays):
    """Drop rows whose clip was skipped as undecodable (only under --on-bad-audio skip)."""
    if ok.all():
        return arrays
    if not ok.any():
        raise DataError(f"all {len(ok)} clips were skipped as unusable; nothing is left to score (see the skip reasons above)")
    return tuple(a[ok] if isinstance(a, np.ndarray) else [x for x, k in zip(a, ok) if k] for a in arrays)


class TaskType:
    """The base of every task type: the defaults a type overrides only where it differs. A type
    outside the package subclasses it and sets NAME, MAIN_SCORE, PARAMS and `evaluate`."""

    NAME: str = ""
    MAIN_SCORE: str = ""
    MTEB_TYPE: str = ""  # the type name results record (default NAME; registered types: REGISTRY's)
    PARAMS: dict = {}
    SCORE_SCALE: float = 1.0  # leaderboards divide the main score by this (a judge's 1-10 scale)
    ALIASES: dict = {}  # old parameter name -> today's (shown by describe and in results)
    LABELLED: bool = False  # the rows carry a label column the type reads (checked before embedding)
    BLANK_LABELS: bool = False  # a row may have a blank label (multilabel: no class present)

    @property
    def where(self) -> str:
        """Where the type is defined, for messages."""
        return f"{type(self).__module__}.{type(self).__qualname__}"

    def params(self, raw: dict, where: str) -> dict:
        """A spec's [protocol] merged over PARAMS, each value checked."""
        return make_params(self.PARAMS, raw, where)

    def splits(self, spec: TaskSpec) -> list[str]:
        """The splits to load: the eval splits (a type that trains on another split adds it)."""
        return list(spec.data.eval_splits)

    def needs(self, spec: TaskSpec) -> set[str]:
        """The sides of the model the type calls (audio, text, generate, synthesize, frames, judge)."""
        return {"audio"}

    def planned_clips(self, spec: TaskSpec, split: str, stats: dict) -> tuple[int, float]:
        """(clips, hours) a run embeds of a split, from its catalog statistics (a dry run's count)."""
        return stats.get("clips", 0), stats.get("hours", 0.0)

    def clip_columns(self, spec: TaskSpec) -> list[str]:
        """The columns of a plain table that hold clips (what a dry run counts)."""
        return list(spec.data.audio_columns)

    def check_columns(self, spec: TaskSpec, table: Any) -> None:
        """The columns the type reads must be in a plain table: a wrong column fails before
        anything is embedded."""
        if not hasattr(table, "columns"):
            return
        table.require([spec.data.audio_column], "data.audio_column")
        if self.LABELLED:
            table.require([spec.data.label_column], "data.label_column")

    def check_labels(self, spec: TaskSpec, values: list, where: str) -> None:
        """The type's own checks of a table's label values (blank cells are checked before),
        run when the data is loaded, before any clip is embedded; default none."""

    def lower_is_better(self, metric: str | None) -> bool:
        """Whether a smaller value of `metric` ranks higher: its record's direction (maeb.metrics.registry,
        where a metric's direction is declared once); a metric without a record ranks higher first."""
        from ..metrics.registry import record_of

        found = record_of(metric)
        return found.lower_is_better if found is not None else False

    def evaluate(self, data: Data, split: str, emb: Embeddings, spec: TaskSpec, state: TaskState) -> Evaluation:
        """The metrics of one subset's split (data: split name -> table), state.subset naming it."""
        raise NotImplementedError(f"{self.where} defines no evaluate()")
