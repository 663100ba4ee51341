"""Task types: one module each, a plain `evaluate` function plus its protocol parameters.

The registry below is the one list of task types: spec parsing, derivation, planning, the catalog
import and the spec reference all read it. A module declares the interface INTERFACE names (its
NAME, MAIN_SCORE, PARAMS of `Param`s with defaults and meanings, `splits(spec)`: which splits to
load, `needs(spec)`: which sides of the model (audio, text, generate, judge), `evaluate(data,
split, emb, spec, state)`: one subset and split, state.subset naming it) and may add `metrics(spec)` (the metric names a
main score may take), `planned_clips(spec, split, stats)` (what a dry run counts), SCORE_SCALE.
`evaluate` returns an `Evaluation` (metrics, info, side files) or a plain dict of metrics."""

from __future__ import annotations

import importlib
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import DataError, SpecError, check_keys


@dataclass(frozen=True)
class Registered:
    module: str
    mteb_type: str  # the type name mteb and result files use (maeb's own for generative types)
    generative: bool = False


REGISTRY: dict[str, Registered] = {
    "classification": Registered("maeb.tasktypes.classification", "AudioClassification"),
    "multilabel": Registered("maeb.tasktypes.multilabel", "AudioMultilabelClassification"),
    "zeroshot": Registered("maeb.tasktypes.zeroshot", "AudioZeroshotClassification"),
    "clustering": Registered("maeb.tasktypes.clustering", "AudioClustering"),
    "pair_classification": Registered("maeb.tasktypes.pair", "AudioPairClassification"),
    "retrieval": Registered("maeb.tasktypes.retrieval", "Any2AnyRetrieval"),
    "reranking": Registered("maeb.tasktypes.reranking", "AudioReranking"),
    "event_detection": Registered("maeb.tasktypes.event_detection", "AudioEventDetection"),
    "captioning": Registered("maeb.tasktypes.captioning", "AudioCaptioning", generative=True),
    "qa": Registered("maeb.tasktypes.qa", "AudioQuestionAnswering", generative=True),
    "judged_qa": Registered("maeb.tasktypes.judged_qa", "AudioJudgedQuestionAnswering", generative=True),
    "multiple_choice": Registered("maeb.tasktypes.multiple_choice", "AudioMultipleChoice", generative=True),
    "mmac": Registered("maeb.tasktypes.mmac", "AudioCaptionJudging", generative=True),
    "audio_generation": Registered("maeb.tasktypes.audio_generation", "TextToAudioGeneration", generative=True),
}
MODULES = {name: entry.module for name, entry in REGISTRY.items()}  # name -> module path
INTERFACE = ("NAME", "MAIN_SCORE", "PARAMS", "splits", "needs", "evaluate")


def mteb_types(generative: bool | None = None) -> dict[str, str]:
    """maeb type name -> mteb type name (generative=None: every type)."""
    return {k: v.mteb_type for k, v in REGISTRY.items() if generative is None or v.generative == generative}


def from_mteb(name: str) -> str:
    """A maeb type name from either name."""
    return {v.mteb_type: k for k, v in REGISTRY.items()}.get(name, name)


def get(kind: str):
    """The task type's module, checked against the declared interface when first loaded."""
    if kind not in REGISTRY:
        raise SpecError(f"unknown task type {kind!r}; known: {', '.join(REGISTRY)}")
    module = importlib.import_module(REGISTRY[kind].module)
    if not getattr(module, "_maeb_checked", False):
        missing = [m for m in INTERFACE if not hasattr(module, m)]
        if missing:
            raise SpecError(f"task type {kind!r} ({module.__name__}) lacks {', '.join(missing)}")
        if module.NAME != kind:
            raise SpecError(f"task type {kind!r}: its module declares NAME = {module.NAME!r}")
        if not hasattr(module, "params"):
            module.params = lambda raw, where, m=module: make_params(m.PARAMS, raw, where)
        module._maeb_checked = True
    return module


@dataclass
class Evaluation:
    """What evaluating one subset and split gives: the metrics (mteb's names), what else the
    result should record about it, and files to write beside the result (name -> text)."""

    metrics: dict
    info: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)


def as_evaluation(value) -> Evaluation:
    """A type's return value as an Evaluation (older types return a dict, side files under "_files")."""
    if isinstance(value, Evaluation):
        return value
    metrics = dict(value)
    return Evaluation(metrics=metrics, files=metrics.pop("_files", None) or {})


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
