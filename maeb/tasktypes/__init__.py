"""Task types: what scores one task's data, given embeddings (or generations) of its clips.

Every task type is a `TaskType`: its NAME, MAIN_SCORE, PARAMS (`Param`s with defaults and
meanings) and `evaluate(data, split, emb, spec, state) -> Evaluation` (one subset and split,
state.subset naming it), plus the members whose defaults the base gives once: `splits(spec)` (which
splits to load; default the eval splits), `needs(spec)` (sides of the model: audio, text, generate,
synthesize, frames, judge; default audio), `params(raw, where)` (the spec's [protocol] checked),
`check_columns(spec, table)` and `clip_columns(spec)` (the columns it reads, checked and counted
before anything is embedded), `check_labels(spec, values, where)` and BLANK_LABELS (its label
values, checked when loaded), `planned_clips(spec, split, stats)` (what a dry run counts),
SCORE_SCALE, the optional `metrics(spec)` (names a main score may take) and `lower_is_better(metric)`
(default: the metric's record in maeb.metrics.registry, where direction, range and baselines are
declared once).

Built-in and outside types are written the same way: a TaskType subclass whose `evaluate` takes
the split tables (`Data`), the split's name, the embedder (`Embeddings`: what an evaluator may use
of it), the TaskSpec (maeb.core.taskspec) and the TaskState. The built-in ones are listed in
REGISTRY below (the one list spec parsing, derivation, planning, the catalog import and the spec
reference read), each a class in its own module; a type outside the package is named in a spec as
`type = "package.module:Class"`, as an outside model family is named in a model entry."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from ..core.errors import SpecError
from ..core.trust import require_code
from .base import (
    SERVICES,
    Data,
    Embeddings,
    Evaluation,
    Param,
    TaskState,
    TaskType,
    as_evaluation,
    keep_valid,
    make_params,
)

# the interface lives in .base, apart from this registry that names the type modules; importers
# of maeb.tasktypes keep its names
__all__ = [
    "INTERFACE",
    "MODULES",
    "REGISTRY",
    "SERVICES",
    "Data",
    "Embeddings",
    "Evaluation",
    "Param",
    "Registered",
    "TaskState",
    "TaskType",
    "as_evaluation",
    "from_mteb",
    "get",
    "is_outside",
    "keep_valid",
    "make_params",
    "mteb_type_of",
    "mteb_types",
]


@dataclass(frozen=True)
class Registered:
    """A built-in task type's registry entry: the module that defines it, the type name mteb and
    result files use, and whether it scores generated text or audio instead of vectors."""

    module: str
    mteb_type: str  # the type name mteb and result files use (maeb's own for generative types)
    generative: bool = False
    cls: str = ""  # the TaskType subclass the module defines


REGISTRY: dict[str, Registered] = {
    "classification": Registered("maeb.tasktypes.classification", "AudioClassification", cls="Classification"),
    "multilabel": Registered("maeb.tasktypes.multilabel", "AudioMultilabelClassification", cls="MultilabelClassification"),
    "zeroshot": Registered("maeb.tasktypes.zeroshot", "AudioZeroshotClassification", cls="ZeroshotClassification"),
    "clustering": Registered("maeb.tasktypes.clustering", "AudioClustering", cls="Clustering"),
    "pair_classification": Registered("maeb.tasktypes.pair", "AudioPairClassification", cls="PairClassification"),
    "retrieval": Registered("maeb.tasktypes.retrieval", "Any2AnyRetrieval", cls="Retrieval"),
    "reranking": Registered("maeb.tasktypes.reranking", "AudioReranking", cls="Reranking"),
    "event_detection": Registered("maeb.tasktypes.event_detection", "AudioEventDetection", cls="EventDetection"),
    "captioning": Registered("maeb.tasktypes.captioning", "AudioCaptioning", generative=True, cls="Captioning"),
    "qa": Registered("maeb.tasktypes.qa", "AudioQuestionAnswering", generative=True, cls="QuestionAnswering"),
    "judged_qa": Registered(
        "maeb.tasktypes.judged_qa", "AudioJudgedQuestionAnswering", generative=True, cls="JudgedQuestionAnswering"
    ),
    "multiple_choice": Registered("maeb.tasktypes.multiple_choice", "AudioMultipleChoice", generative=True, cls="MultipleChoice"),
    "mmac": Registered("maeb.tasktypes.mmac", "AudioCaptionJudging", generative=True, cls="CaptionJudging"),
    "audio_generation": Registered(
        "maeb.tasktypes.audio_generation", "TextToAudioGeneration", generative=True, cls="AudioGeneration"
    ),
}
MODULES = {name: entry.module for name, entry in REGISTRY.items()}  # name -> module path
INTERFACE = ("NAME", "MAIN_SCORE", "PARAMS", "splits", "needs", "evaluate")  # what every type has (defaults: TaskType)


def mteb_types(generative: bool | None = None) -> dict[str, str]:
    """maeb type name -> mteb type name (generative=None: every type)."""
    return {k: v.mteb_type for k, v in REGISTRY.items() if generative is None or v.generative == generative}


def from_mteb(name: str) -> str:
    """A maeb type name from either name."""
    return {v.mteb_type: k for k, v in REGISTRY.items()}.get(name, name)


def is_outside(kind: str) -> bool:
    """Whether a type name is a reference to a type outside the package ("package.module:Class")."""
    return ":" in kind


def mteb_type_of(kind: str) -> str:
    """The type name results record: mteb's for a registered type, an outside type's MTEB_TYPE
    (default its NAME)."""
    if kind in REGISTRY:
        return REGISTRY[kind].mteb_type
    if is_outside(kind):
        found = get(kind)
        return found.MTEB_TYPE or found.NAME
    return kind


_LOADED: dict[str, TaskType] = {}


def get(kind: str) -> TaskType:
    """The task type of a registered name or of a "package.module:Class" reference, checked
    against the declared interface when first loaded."""
    if kind in _LOADED:
        return _LOADED[kind]
    if kind in REGISTRY:
        entry = REGISTRY[kind]
        found: TaskType = getattr(importlib.import_module(entry.module), entry.cls)()
    elif is_outside(kind):
        found = _outside(kind)
    else:
        raise SpecError(f"unknown task type {kind!r}; known: {', '.join(REGISTRY)} or 'package.module:Class'")
    missing = [m for m in ("NAME", "MAIN_SCORE") if not getattr(found, m, None)]
    if type(found).evaluate is TaskType.evaluate and "evaluate" not in vars(found):
        missing.append("evaluate")
    if missing:
        raise SpecError(f"task type {kind!r} ({found.where}) lacks {', '.join(missing)}")
    if kind in REGISTRY and found.NAME != kind:
        raise SpecError(f"task type {kind!r}: its class declares NAME = {found.NAME!r}")
    _LOADED[kind] = found
    return found


def _outside(kind: str) -> TaskType:
    """A TaskType subclass (or instance) named "package.module:Class"."""
    module_name, _, attr = kind.partition(":")
    require_code(kind, "task type", SpecError)  # a spec file must not run code unless the user said so
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SpecError(
            f"task type {kind!r}: module {module_name} cannot be imported ({exc}); run `python -m maeb` from the folder "
            "that holds it, set PYTHONPATH, or install it"
        ) from exc
    target = getattr(module, attr, None)
    if isinstance(target, type) and issubclass(target, TaskType):
        return target()
    if isinstance(target, TaskType):
        return target
    what = "not defined" if target is None else f"a {type(target).__name__}"
    raise SpecError(f"task type {kind!r}: {module_name}.{attr} is {what}, not a maeb.tasktypes.TaskType subclass")
