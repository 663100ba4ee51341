"""Registering a model family: its record (maeb.encoders.familyrecord) checked and added to the
registry. The checks read the protocols' rule sets (maeb.encoders.protocols), which read the
registry in turn, so the records sit below both and this module above them."""

from __future__ import annotations

from collections.abc import Mapping

from ..core.errors import ModelError
from .familyrecord import (
    FAMILY_REGISTRY,
    NOT_PERFORMANCE,
    RULE_KEYS,
    Family,
    Rules,
    get_family,
    import_ref,
    performance_options,
)
from .protocols import PROTOCOLS

__all__ = [
    "FAMILY_REGISTRY",
    "NOT_PERFORMANCE",
    "RULE_KEYS",
    "Family",
    "Rules",
    "check_performance",
    "check_rules",
    "get_family",
    "import_ref",
    "performance_options",
    "register_family",
]


def register_family(family: Family) -> Family:
    """Add a family record to the registry and return it. Registering the same record again is a
    no-op (a module imported twice); a different record under a registered name is refused, and so
    is a record whose rules name an unknown rule set or settings key (check_rules) or that calls a
    setting a performance option (check_performance)."""
    check_rules(family)
    check_performance(family)
    old = FAMILY_REGISTRY.get(family.name)
    if old is not None and old != family:
        raise ModelError(f"family {family.name!r} is already registered (factory {old.factory}); choose another name")
    FAMILY_REGISTRY[family.name] = family
    return family


def check_rules(family: Family) -> None:
    """Refuse, in one line, rules under a rule set no protocol follows or with a settings key no
    wrapper reads (neither RULE_KEYS nor the family's rule_keys): both would be silently ignored."""
    rule_sets = sorted({name for p in PROTOCOLS.values() for name in p.rule_sets})
    keys = RULE_KEYS | set(family.rule_keys)
    shape = 'rules must be {rule set: {architecture or "*": {key: value}}}'
    if not isinstance(family.rules, Mapping):
        raise ModelError(f"family {family.name!r}: {shape}, not {type(family.rules).__name__}")
    for rule_set, table in family.rules.items():
        if rule_set not in rule_sets:
            raise ModelError(
                f"family {family.name!r}: rules for unknown protocol rule set {rule_set!r}; known: {', '.join(rule_sets)}"
            )
        bad = (
            [arch for arch, settings in table.items() if not isinstance(settings, Mapping)]
            if isinstance(table, Mapping)
            else [None]
        )
        if bad:
            where = f"rules[{rule_set!r}]" + ("" if bad[0] is None else f"[{bad[0]!r}]")
            raise ModelError(f"family {family.name!r}: {where} is not a table; {shape}")
        for arch, settings in table.items():
            unknown = sorted(set(settings) - keys)
            if unknown:
                raise ModelError(
                    f"family {family.name!r}: rules[{rule_set!r}][{arch!r}] has unknown key {', '.join(map(repr, unknown))}; "
                    f"valid keys: {', '.join(sorted(keys))} (declare a family's own keys in rule_keys)"
                )


def check_performance(family: Family) -> None:
    """Refuse, in one line, a performance option that is a setting maeb knows changes vectors (a rule
    key, the weights, the protocol): declared a knob, it would leave the cache key and results would
    be shared between settings that differ."""
    if isinstance(family.performance, str) or not all(isinstance(k, str) for k in family.performance):
        raise ModelError(f"family {family.name!r}: performance must be a tuple of option names, not {family.performance!r}")
    settings = sorted(set(family.performance) & (RULE_KEYS | set(family.rule_keys) | NOT_PERFORMANCE))
    if settings:
        raise ModelError(
            f"family {family.name!r}: performance option {', '.join(map(repr, settings))} changes vectors (a protocol "
            "setting, the weights or the protocol); performance options are knobs such as batch sizes that do not"
        )
