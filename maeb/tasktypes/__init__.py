"""Task types: one module each, a plain `evaluate` function plus its protocol defaults.

Every module defines NAME, MAIN_SCORE, PARAMS (protocol defaults, documented where they live),
`splits(spec)` (which splits to load), `needs(spec)` (which sides of the model: audio, text,
generate) and `evaluate(data, split, emb, spec, state) -> scores` for one subset and split.
Generative types (captioning, QA, generation) plug in the same way and ask `emb` for text."""

from __future__ import annotations

import importlib
import random
from dataclasses import dataclass, field

import numpy as np

from ..errors import SpecError, check_keys

MODULES = {
    "classification": "maeb.tasktypes.classification",
    "multilabel": "maeb.tasktypes.multilabel",
    "zeroshot": "maeb.tasktypes.zeroshot",
    "clustering": "maeb.tasktypes.clustering",
    "pair_classification": "maeb.tasktypes.pair",
    "retrieval": "maeb.tasktypes.retrieval",
    "reranking": "maeb.tasktypes.reranking",
    "captioning": "maeb.tasktypes.captioning",
    "qa": "maeb.tasktypes.qa",
    "judged_qa": "maeb.tasktypes.judged_qa",
    "multiple_choice": "maeb.tasktypes.multiple_choice",
    "mmac": "maeb.tasktypes.mmac",
}


def get(kind: str):
    if kind not in MODULES:
        raise SpecError(f"unknown task type {kind!r}; known: {', '.join(MODULES)}")
    module = importlib.import_module(MODULES[kind])
    if not hasattr(module, "params"):
        module.params = lambda raw, where, m=module: make_params(m.PARAMS, raw, where)
    return module


def make_params(defaults: dict, raw: dict, where: str) -> dict:
    check_keys(where, raw, set(defaults))
    merged = dict(defaults)
    for key, value in raw.items():
        default = defaults[key]
        if (
            default is not None
            and not isinstance(value, type(default))
            and not (isinstance(default, float) and isinstance(value, int))
        ):
            raise SpecError(f"{where}: {key} must be {type(default).__name__}, got {value!r}")
        merged[key] = value
    return merged


@dataclass
class TaskState:
    """Random generators that live for one task run across splits and subsets, as mteb's task
    object holds them (so subset order reproduces mteb's draws)."""

    seed: int = 42
    rng: random.Random = field(init=False)
    np_rng: np.random.Generator = field(init=False)

    def __post_init__(self):
        self.rng = random.Random(self.seed)
        self.np_rng = np.random.default_rng(self.seed)


def keep_valid(ok: np.ndarray, *arrays):
    """Drop rows whose clip was skipped as undecodable (only under --on-bad-audio skip)."""
    if ok.all():
        return arrays
    return tuple(a[ok] if isinstance(a, np.ndarray) else [x for x, k in zip(a, ok) if k] for a in arrays)
