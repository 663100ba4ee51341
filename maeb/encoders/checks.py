"""The checks a loaded encoder passes before the engine uses it: the members of each side it
declares (sides.SIDES), a valid length policy and batching mode, and a config() of plain values
that key the embedding cache the same way in every process."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..core.errors import ModelError
from .meta import ModelMeta
from .sides import SIDES


def check_encoder(meta: ModelMeta, encoder) -> None:
    """The protocol members an engine relies on, checked when the model loads, so a wrapper that
    lacks one fails here with its name instead of deep inside a task."""
    from ..audio.pipeline import BATCHING_MODES

    cls = type(encoder).__name__
    sides = [method for method in SIDES if callable(getattr(encoder, method, None))]
    if not sides:
        raise ModelError(
            f"model {meta.name!r}: {cls} implements none of the protocols "
            + ", ".join(f"{proto.__name__} ({method})" for method, (proto, _) in SIDES.items())
        )
    for method in sides:
        proto, members = SIDES[method]
        for member in members:
            if not hasattr(encoder, member):
                raise ModelError(f"model {meta.name!r}: {cls} has {method}() ({proto.__name__}) but no {member!r}")
    if not callable(encoder.config):
        raise ModelError(f"model {meta.name!r}: {cls}.config must be a method returning what changes its outputs")
    check_config(meta, cls, encoder.config())
    needed = {m for method in sides for m in SIDES[method][1]}
    if "sample_rate" in needed:
        if "batching" in needed and encoder.batching not in BATCHING_MODES:
            raise ModelError(f"model {meta.name!r}: batching {encoder.batching!r} is not one of {', '.join(BATCHING_MODES)}")
        if not isinstance(encoder.sample_rate, int) or isinstance(encoder.sample_rate, bool) or encoder.sample_rate <= 0:
            raise ModelError(f"model {meta.name!r}: sample_rate must be a positive integer, got {encoder.sample_rate!r}")
        limit = getattr(encoder, "max_seconds", None)
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, numbers.Real) or not 0 < float(limit) < math.inf
        ):
            raise ModelError(f"model {meta.name!r}: max_seconds must be a positive, finite number or None, got {limit!r}")
        min_samples = getattr(encoder, "min_samples", 0)
        if not isinstance(min_samples, (int, np.integer)) or min_samples < 0:
            raise ModelError(f"model {meta.name!r}: min_samples must be a non-negative integer, got {min_samples!r}")


def check_config(meta: ModelMeta, cls: str, config, where: str = "config()") -> None:
    """config() is part of the cache key and of every result: it must hold plain values whose text
    is the same in every process. A function or an object shown by its memory address would give
    each process a new cache file (and the result could not be written); a set has no order."""
    if isinstance(config, dict):
        for key, value in config.items():
            if not isinstance(key, str):
                raise ModelError(f"model {meta.name!r}: {cls}.{where} has a key {key!r} that is not a string")
            check_config(meta, cls, value, f"{where}[{key!r}]")
        return
    if isinstance(config, (list, tuple)):
        for i, value in enumerate(config):
            check_config(meta, cls, value, f"{where}[{i}]")
        return
    if config is None or isinstance(config, (str, bool, int, float, np.generic)):
        return
    if isinstance(config, (set, frozenset)):
        problem = "a set, which has no order (give a sorted list)"
    elif callable(config):
        problem = f"a function ({getattr(config, '__name__', type(config).__name__)})"
    elif " at 0x" in str(config) or type(config).__str__ is object.__str__:
        problem = f"a {type(config).__name__} object shown by its memory address"
    else:
        return  # an object with a stable text of its own (a Path, an enum)
    raise ModelError(
        f"model {meta.name!r}: {cls}.{where} is {problem}; config() must hold plain values (strings, numbers, "
        "booleans, lists, tables) that are the same in every process, since they key the embedding cache"
    )
