"""What maeb knows about one model family, in one record, and the registry of records (registering
one, checked, is maeb.encoders.family's register_family).

A family is a wrapper class (its factory) plus the facts the rest of maeb needs without importing
it: the packages it needs and the pip extra that brings them, a tiny random checkpoint builder for
offline checks (maeb.encoders.tiny), and the wrapper settings each protocol fixes (maeb.encoders.protocols). The
built-in records are in maeb.encoders.families; code outside the package calls maeb.encoders.family.register_family.
Factories and builders are "module:attr" strings, imported only when a model of the family loads,
so listing models imports no deep-learning code."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import ModelError

# rule set -> architecture (a transformers model_type, or "*") -> wrapper settings
Rules = Mapping[str, Mapping[str, Mapping[str, Any]]]

# The settings keys maeb's wrappers read (described in maeb.encoders.protocols): a record naming
# another key is refused when registered, since a misspelt key (max_secnds) would be ignored and
# the wrapper's own default would run under the protocol's name. A family with settings of its
# own declares them in `rule_keys`.
RULE_KEYS = frozenset(
    {
        "max_seconds", "batching", "frames", "layer", "min_samples", "dtype", "l2", "text_max_tokens",
        "short_pad_samples", "batches", "front_end", "pad", "final_relu", "window_seconds", "sample_rate",
        "wav_subtype", "text",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Family:
    """One model family. `factory` and `tiny` are "module:attr" references, imported when used.

    - requires: pip requirement strings the family needs (checked without importing anything);
    - extra: the extra of maeb's pyproject that installs them (None: none does);
    - no_deps: a pinned requirement the extra cannot bring, installed with `pip install --no-deps`
      (its declared dependencies do not build on current Python);
    - tiny: a function (meta, folder) -> options writing a random-weight miniature (maeb.encoders.tiny);
    - rules: the wrapper settings per protocol rule set ("mteb-2.26", "paper"; see
      maeb.encoders.protocols for the keys), each a table architecture -> settings with "*" for all;
    - rule_keys: settings keys of the family's own, beyond maeb's (RULE_KEYS);
    - performance: constructor options that do not change the family's vectors (batch sizes,
      thread counts): they stay out of the cache key and the result identity, a run setting one
      keeps its results in the main folder, and `maeb check-model` checks that changing one leaves
      config() and the vectors as they were instead of asking config() to follow it."""

    name: str
    factory: str
    requires: tuple[str, ...] = ()
    extra: str | None = None
    no_deps: str | None = None
    tiny: str | None = None
    rules: Rules = field(default_factory=dict, hash=False)
    rule_keys: tuple[str, ...] = ()
    performance: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if ":" in self.name:
            raise ModelError(f"family name {self.name!r} must not hold ':' (that form names a module:Class directly)")
        for what, ref in (("factory", self.factory), ("tiny", self.tiny)):
            if ref is not None and ":" not in ref:
                raise ModelError(f"family {self.name!r}: {what} {ref!r} must be 'module:attr'")

    def rules_for(self, rule_sets: tuple[str, ...]) -> dict[str, dict[str, Any]] | None:
        """The architecture table of the first of `rule_sets` this family declares (None: none)."""
        for name in rule_sets:
            if name in self.rules:
                return {arch: dict(settings) for arch, settings in self.rules[name].items()}
        return None

    def tiny_builder(self) -> Callable[..., dict] | None:
        """The function that writes this family's tiny random checkpoint, or None without one."""
        return None if self.tiny is None else import_ref(self.tiny)


FAMILY_REGISTRY: dict[str, Family] = {}


# options that are never performance knobs: what a protocol fixes changes vectors, and these name
# the model itself or are set by maeb (a weights path is keyed by its content)
NOT_PERFORMANCE = frozenset({"meta", "device", "protocol", "path", "weights_path", "checkpoint", "text_path"})


def performance_options(family: str) -> frozenset[str]:
    """The options a registered family declares do not change its vectors (empty for an unknown
    name or a `module:Class` entry: register a family to declare them)."""
    record = FAMILY_REGISTRY.get(family)
    return frozenset(record.performance) if record is not None else frozenset()


def get_family(name: str) -> Family | None:
    """The registered record of a family name, or None (an unknown name or a `module:Class`)."""
    return FAMILY_REGISTRY.get(name)


def import_ref(ref: str) -> Any:
    """The object a "module:attr" reference names (imports the module)."""
    module_name, attr = ref.split(":", 1)
    return getattr(importlib.import_module(module_name), attr)
