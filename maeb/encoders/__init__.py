"""The encoder protocol, model metadata and the family registry.

An encoder is a sample rate, a length policy and a function from a batch of mono float32 arrays
to float32 vectors (HEAR's idea); text-capable encoders also embed texts. Families are imported
only when a model of that family is loaded, so listing models imports no deep-learning code.

This package only gathers the public names of its modules, each of which owns one job: sides
(the protocols), meta (ModelMeta), family and families (the records), install (requirements and
install hints), load (load_encoder), checks (what a loaded encoder must satisfy) and precision
(--precision). Code inside maeb, wrappers above all, imports from the module that owns a name."""

from __future__ import annotations

from . import families as _builtin_families  # noqa: F401  (registers the built-in family records)
from .checks import check_config, check_encoder
from .family import register_family
from .familyrecord import FAMILY_REGISTRY, Family, get_family
from .install import (
    install_hint,
    missing_of,
    missing_package,
    missing_requirements,
    require,
    requirements,
    runnable_problems,
)
from .load import CONSTRUCTOR, check_option_values, identity, load_encoder, resolve_factory
from .meta import MTEB_FRAMEWORKS, MTEB_SIMILARITY, SCORED_SIMILARITIES, SIMILARITIES, ModelMeta
from .precision import PRECISIONS, check_precision, device_precision_problem, precision_options
from .sides import (
    SIDES,
    AudioEncoder,
    AudioSynthesizer,
    FrameEncoder,
    TextEncoder,
    TextGenerator,
    has_audio,
    has_frames,
    has_generate,
    has_synthesize,
    has_text,
    length_policy,
)

# One record per family (maeb.encoders.family.Family; the built-in ones in maeb.encoders.families),
# read as FAMILY_REGISTRY[name]; a model entry may also name its own "package.module:Class".

__all__ = [
    "CONSTRUCTOR",
    "FAMILY_REGISTRY",
    "MTEB_FRAMEWORKS",
    "MTEB_SIMILARITY",
    "PRECISIONS",
    "SCORED_SIMILARITIES",
    "SIDES",
    "SIMILARITIES",
    "AudioEncoder",
    "AudioSynthesizer",
    "Family",
    "FrameEncoder",
    "ModelMeta",
    "TextEncoder",
    "TextGenerator",
    "check_config",
    "check_encoder",
    "check_option_values",
    "check_precision",
    "device_precision_problem",
    "get_family",
    "has_audio",
    "has_frames",
    "has_generate",
    "has_synthesize",
    "has_text",
    "identity",
    "install_hint",
    "length_policy",
    "load_encoder",
    "missing_of",
    "missing_package",
    "missing_requirements",
    "precision_options",
    "register_family",
    "require",
    "requirements",
    "resolve_factory",
    "runnable_problems",
]
