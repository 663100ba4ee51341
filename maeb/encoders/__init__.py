"""The encoder protocol, model metadata and the family registry.

An encoder is a sample rate, a length policy and a function from a batch of mono float32 arrays
to float32 vectors (HEAR's idea); text-capable encoders also embed texts. Families are imported
only when a model of that family is loaded, so listing models imports no deep-learning code."""

from __future__ import annotations

import importlib
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..audio.pipeline import LengthPolicy
from ..core.errors import MaebError, MissingPackage, ModelError
from ..core.identity import check_env_options, public_option
from ..core.trust import require_code
from . import families as _builtin_families  # noqa: F401  (registers the built-in family records)
from .family import FAMILY_REGISTRY, RegistryView, get_family
from .family import Family as Family  # re-exported: maeb.encoders.Family, register_family
from .family import register_family as register_family


@runtime_checkable
class AudioEncoder(Protocol):
    """What the engine asks of an audio model. A class named in an entry (`family = "module:Class"`)
    is built as ``Class(meta, device=..., **options)``: ``meta`` the model's entry (ModelMeta),
    ``device`` "cpu" or "cuda", ``options`` the entry's options and --option values as keyword
    arguments; so it begins ``def __init__(self, meta, device="cpu", n_mels=64): ...``. config()
    names everything that changes its vectors (it keys the cache)."""

    sample_rate: int
    max_seconds: float | None
    min_samples: int  # optional (default 0): shorter clips are zero-padded to it
    batching: str  # "padded" | "same_length" | "single", see maeb.audio.pipeline.plan_batches

    def embed_audio(self, clips: list[np.ndarray]) -> np.ndarray:
        """One float32 vector per clip, as an (n, d) array (clips: mono float32 at sample_rate)."""

    def config(self) -> dict:
        """Everything that changes the outputs, as plain values (it keys the cache)."""


@runtime_checkable
class TextEncoder(Protocol):
    """What the engine asks of a model's text side: one vector per text, in the audio side's space."""

    def embed_text(self, texts: list[str]) -> np.ndarray:
        """One float32 vector per text, as an (n, d) array."""

    def config(self) -> dict:
        """Everything that changes the outputs, as plain values (it keys the cache)."""


@runtime_checkable
class TextGenerator(Protocol):
    """An audio language model: one text per (clip, prompt)."""

    sample_rate: int
    max_seconds: float | None
    batching: str

    def generate(self, clips: list[np.ndarray], prompts: list[str], settings: dict) -> list[str]:
        """One text per (clip, prompt) pair, with the task's decoding settings."""

    def config(self) -> dict:
        """Everything that changes the outputs, as plain values (it keys the cache)."""


@runtime_checkable
class AudioSynthesizer(Protocol):
    """A text-to-audio system (maeb.audiogen): one mono float32 clip at sample_rate per request.
    `capabilities` (maeb.audiogen.request.Capabilities, optional) says which request fields it
    accepts and what it needs; config() names everything that changes its output."""

    sample_rate: int

    def synthesize(self, requests: list) -> list[np.ndarray]:
        """One mono float32 clip at sample_rate per request."""

    def config(self) -> dict:
        """Everything that changes the outputs, as plain values (it keys the cache)."""


@runtime_checkable
class FrameEncoder(Protocol):
    """Time-resolved embeddings (HEAR's timestamp embeddings), an optional member of an audio
    encoder, for frame-level tasks (event detection, maeb.engine.frames). Per clip of the batch, given
    as embed_audio's clips are (mono float32 at sample_rate, cut by the length policy): a (T, D)
    float32 matrix of frame vectors and a (T,) float64 array of each frame's centre time in
    seconds from the start of the clip (the centre of the frame's receptive window), increasing.
    D is the same for every clip; T may differ (0 for a clip too short for one frame).
    `frames_version` (optional, default 1) names the frame computation: cached frames are keyed
    by it besides the encoder's identity, so a change to embed_frames alone bumps it."""

    def embed_frames(self, clips: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per clip, its (T, D) frame vectors and their (T,) centre times in seconds."""


# The one registry of model sides: the method that declares a side, its protocol, and the
# members the engine relies on (checked when a model loads, by check_encoder)
SIDES: dict[str, tuple[type, tuple[str, ...]]] = {
    "embed_audio": (AudioEncoder, ("sample_rate", "max_seconds", "batching", "config")),
    "embed_text": (TextEncoder, ("config",)),
    "generate": (TextGenerator, ("sample_rate", "max_seconds", "batching", "config")),
    "synthesize": (AudioSynthesizer, ("sample_rate", "config")),
}


# One record per family (maeb.encoders.family.Family; the built-in ones in maeb.encoders.families);
# a model entry may also name its own "package.module:Class". The dicts below are live views of the
# records, kept for one release: family -> factory, requirements, extra, --no-deps requirement.
FAMILIES: Mapping[str, str] = RegistryView("factory")
FAMILY_REQUIRES: Mapping[str, tuple[str, ...]] = RegistryView("requires")
FAMILY_EXTRAS: Mapping[str, str] = RegistryView("extra")
NO_DEPS: Mapping[str, str] = RegistryView("no_deps")


def install_hint(family: str, what: str | None = None) -> str:
    """The command that installs what a family needs."""
    record = get_family(family)
    extra = record.extra if record is not None else None
    if record is not None and record.no_deps:
        return f"pip install 'maeb[{extra}]' && pip install --no-deps {record.no_deps}"
    return f"pip install 'maeb[{extra}]'" if extra else f"pip install {what or 'the package named here'}"


def _has_extra(family: str) -> bool:
    record = get_family(family)
    return record is not None and record.extra is not None


# "max_sim" (late interaction over token vectors) is registered for completeness of mteb's
# registry; maeb's evaluators score one vector per item, so such models do not run
SIMILARITIES = ("cosine", "dot", "euclidean", "max_sim")
SCORED_SIMILARITIES = ("cosine", "dot", "euclidean")


def runnable_problems(meta: ModelMeta) -> list[str]:
    """Why a registered model cannot run in this environment (empty: it can, given its weights)."""
    problems = []
    if meta.similarity not in SCORED_SIMILARITIES:
        problems.append(f"similarity {meta.similarity}: maeb's evaluators score one vector per item")
    if not {"dense"} & set(meta.model_type) and meta.model_type:
        problems.append(f"model type {'/'.join(meta.model_type)}: not a dense embedding model")
    missing = missing_requirements(meta)
    if missing:
        hint = f" ({install_hint(meta.family)})" if _has_extra(meta.family) else ""
        problems.append("missing " + ", ".join(missing) + hint)
    return problems


def requirements(meta: ModelMeta) -> tuple[str, ...]:
    """The pip requirements of a model: its family's, then its entry's own, without repeats."""
    record = get_family(meta.family)
    return tuple(dict.fromkeys((*(record.requires if record is not None else ()), *meta.requires)))


def missing_requirements(meta: ModelMeta) -> list[str]:
    """The requirements of a model's family and entry that this environment does not satisfy
    (installed distributions and their versions; nothing is imported)."""
    return missing_of(requirements(meta))


def missing_of(requirements: tuple[str, ...]) -> list[str]:
    """The pip requirement strings this environment does not satisfy (nothing is imported)."""
    from importlib import metadata

    missing = []
    for text in requirements:
        name, spec = _split_requirement(text)
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(text)
            continue
        if spec and not _satisfies(version, spec):
            missing.append(f"{text} (installed: {version})")
    return missing


def _split_requirement(text: str) -> tuple[str, str]:
    for i, char in enumerate(text):
        if char in "<>=!~ ;[":
            return text[:i], text[i:].strip()
    return text, ""


def _satisfies(version: str, spec: str) -> bool:
    try:
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        return Version(version) in SpecifierSet(spec)
    except Exception:  # packaging absent or an odd version string: do not claim a mismatch
        return True


def missing_package(meta_name: str, family: str, exc: ImportError) -> MissingPackage:
    """One line for a package a model's code imports and this environment lacks: the package
    and the command that installs it."""
    package = exc.name or str(exc)
    how = install_hint(family) if _has_extra(family) else f"pip install {package}"
    return MissingPackage(
        f"model {meta_name!r} (family {family!r}) needs the Python package {package!r}, which is not installed here; install it with `{how}`"
    )


def require(module: str, family: str, what: str | None = None):
    """Import a family's package, or fail with the pip extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        how = install_hint(family, what or module)
        raise MissingPackage(
            f"family {family!r} needs {what or module}, which is not installed here ({exc}); install it with `{how}`"
        ) from exc


@dataclass(frozen=True)
class ModelMeta:
    """What mteb's ModelMeta records, plus how maeb loads the model (family and options)."""

    name: str
    family: str
    revision: str
    aliases: tuple[str, ...] = ()
    n_parameters: int | None = None
    embed_dim: int | None = None
    modalities: tuple[str, ...] = ("audio",)
    license: str | None = None
    reference: str | None = None
    similarity: str = "cosine"
    release_date: str | None = None
    languages: tuple[str, ...] = ()
    open_weights: bool | None = True
    framework: tuple[str, ...] = ("PyTorch",)
    notes: str = ""
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    source: str = ""
    # mteb's annotations, as its registry has them (generated by scripts/import_models.py);
    # training_datasets None means "not annotated", () "trained on none of mteb's tasks"
    training_datasets: tuple[str, ...] | None = None
    adapted_from: str | None = None
    superseded_by: str | None = None
    public_training_code: str | None = None
    public_training_data: str | bool | None = None
    use_instructions: bool | None = None
    max_tokens: float | None = None
    n_embedding_parameters: int | None = None
    memory_usage_mb: float | None = None
    model_type: tuple[str, ...] = ("dense",)
    citation: str | None = None
    # maeb's own: whether embeddings-benchmark/results holds MAEB scores of this model, the
    # pip extra that installs its family's packages, and requirements beyond the family's
    published: bool = False
    extra: str | None = None
    requires: tuple[str, ...] = ()

    @property
    def folder(self) -> str:
        """The model's folder name in mteb's results layout ("org__name")."""
        return self.name.replace("/", "__")

    def to_mteb(self, experiment: dict | None = None, record: dict | None = None) -> dict:
        """model_meta.json as mteb's ModelMeta reads it (pydantic, no extra keys): `record`, mteb's
        registry record of this model (models/mteb_model_meta.json), as it is; else the catalog entry
        in mteb's field names and values. `experiment` (the settings that differ from the registered
        entry) is mteb's experiment_kwargs. How maeb ran the model goes to run_settings.jsonl."""
        experiment = {k: public_option(v) for k, v in (experiment or {}).items()}
        if record is not None:
            return {**record, "experiment_kwargs": experiment or None}
        return {
            "loader_kwargs": {},
            "name": self.name,
            "revision": self.revision,
            "release_date": self.release_date,
            "languages": list(self.languages),
            "n_parameters": self.n_parameters,
            "n_embedding_parameters": self.n_embedding_parameters,
            "memory_usage_mb": self.memory_usage_mb,
            "max_tokens": self.max_tokens,
            "embed_dim": self.embed_dim,
            "license": self.license,
            "open_weights": self.open_weights,
            "public_training_code": self.public_training_code,
            "public_training_data": self.public_training_data,
            # mteb accepts a closed list of frameworks; a runtime it does not name (CTranslate2) is left out
            "framework": [f for f in self.framework if f in MTEB_FRAMEWORKS],
            # mteb takes a URL or nothing: a path into maeb's README is not one
            "reference": self.reference if self.reference and "://" in self.reference else None,
            "similarity_fn_name": MTEB_SIMILARITY.get(self.similarity, self.similarity),
            "use_instructions": bool(self.use_instructions),
            # mteb writes its set as a list; None (not annotated) stays None, so mteb's
            # leaderboard shows "unknown" for the zero-shot flag instead of claiming zero-shot
            "training_datasets": None if self.training_datasets is None else sorted(self.training_datasets),
            "adapted_from": self.adapted_from,
            "superseded_by": self.superseded_by,
            "modalities": list(self.modalities),
            "model_type": list(self.model_type),
            "is_cross_encoder": "cross-encoder" in self.model_type or "cross_encoder" in self.model_type,
            "citation": self.citation,
            "contacts": None,
            # a loader name mteb cannot resolve reads as None (ModelMeta.model_validate_json_resolved)
            "loader": f"maeb:{self.family}",
            "experiment_kwargs": experiment or None,
        }

    def run_settings(self, options: dict | None = None) -> dict:
        """How maeb ran the model, for run_settings.jsonl beside the results (mteb's side file of run
        settings): the family and every option as the run used it (paths by fingerprint)."""
        options = dict(self.options if options is None else options)
        return {"family": self.family, "options": _shown_options(options)}


# mteb 2.26.24's names: ModelMeta.framework's allowed values and its similarity names
MTEB_FRAMEWORKS = frozenset(
    {
        "Sentence Transformers",
        "PyTorch",
        "GritLM",
        "LLM2Vec",
        "TensorFlow",
        "JAX",
        "API",
        "Tevatron",
        "NumPy",
        "PyLate",
        "ColBERT",
        "ColPali",
        "GGUF",
        "safetensors",
        "ONNX",
        "OpenVINO",
        "Transformers",
    }
)
MTEB_SIMILARITY = {"max_sim": "MaxSim"}


def _shown_options(options: dict) -> dict:
    from ..core.identity import PATH_OPTIONS, path_fingerprint

    return {k: (path_fingerprint(v) if k in PATH_OPTIONS and v else public_option(v)) for k, v in sorted(options.items())}


def resolve_factory(family: str) -> Any:
    """The class (or function) that builds models of a family: a registered family's factory, or
    the object a "package.module:Class" family names; imports its module."""
    record = get_family(family)
    target = record.factory if record is not None else family
    if ":" not in target:
        raise ModelError(f"unknown model family {family!r}; known: {', '.join(sorted(FAMILY_REGISTRY))} or 'module:factory'")
    module_name, attr = target.split(":", 1)
    outside = record is not None and not module_name.startswith("maeb.")
    if outside and record is not None:
        # an outside record's `requires` is its author's promise: check it before importing their
        # code, so a missing package is named as theirs rather than surfacing as an odd ImportError
        unmet = missing_of(record.requires)
        if unmet:
            raise MissingPackage(
                f"family {family!r} (registered outside maeb, factory {target}) requires {', '.join(unmet)}, "
                f"not installed here; install it with `pip install {' '.join(repr(r.split(' (')[0]) for r in unmet)}`"
            )
    if record is None:  # a model entry's own module: imported only when the user said so
        require_code(target, "model family", ModelError)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or ""
        if (record is None or outside) and missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise ModelError(_not_on_path(family, module_name)) from exc
        if record is None or outside:  # the user's own module imports, but a package it needs is missing
            raise ModelError(
                f"family {family!r}: module {module_name} imports {missing or exc}, which is not installed in this "
                f"environment; install it there"
            ) from exc
        how = (
            f"`{install_hint(family)}`"
            if record.extra is not None or record.no_deps
            else "maeb's extras (`make install`) or the package named here"
        )
        raise MissingPackage(f"family {family!r} needs a package that is not installed ({exc.name}); install {how}") from exc
    try:
        return getattr(module, attr)
    except AttributeError as exc:
        raise ModelError(f"family {family!r}: {module_name} has no {attr!r}") from exc


def _not_on_path(family: str, module_name: str) -> str:
    """Why the module a `module:Class` family names cannot be imported, and what to do."""
    import sys
    from pathlib import Path

    here = Path.cwd()
    top = module_name.split(".")[0]
    message = f"family {family!r}: module {module_name} not found on sys.path (current folder {here})"
    on_path = any(Path(entry or ".").resolve() == here.resolve() for entry in sys.path)
    if ((here / f"{top}.py").exists() or (here / top / "__init__.py").exists()) and not on_path:
        return (
            message + f"; {top} is in the current folder, which is not on sys.path when maeb runs as the `maeb` command: "
            f"run `python -m maeb ...` here, or set PYTHONPATH={here}"
        )
    return (
        message + f"; run `python -m maeb ...` from the folder that holds {top}.py, set PYTHONPATH to that folder, "
        "or install the module as a package"
    )


CONSTRUCTOR = (
    "maeb builds a model as Class(meta, device=..., **options): meta is the model's entry (maeb.encoders.ModelMeta: "
    "name, revision, options, ...), device 'cpu' or 'cuda', options the entry's options and --option values"
)


def _constructor_mismatch(factory, meta: ModelMeta, device: str, options: dict) -> str | None:
    """What stops `factory(meta, device=device, **options)` from binding, said against the contract
    (CONSTRUCTOR), or None when the call binds."""
    import inspect

    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return None  # no signature to read (a builtin): the call itself says what is wrong
    try:
        sig.bind(meta, device=device, **options)
        return None
    except TypeError as exc:
        reason = str(exc)
    name = getattr(factory, "__qualname__", repr(factory))
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var_kw = any(p.kind == p.VAR_KEYWORD for p in params)
    first = positional[0] if positional else None
    # the entry goes first: a parameter named meta, or a required one that is no option (one with a default is an option)
    takes_meta = any(p.kind == p.VAR_POSITIONAL for p in params) or (
        first is not None
        and (first.name == "meta" or (first.default is first.empty and first.name not in options and first.name != "device"))
    )
    rest = [str(p) for p in params if p.name not in ("meta", "device", "self")]
    wanted = "def __init__(" + ", ".join(["self", "meta", 'device="cpu"', *rest]) + ")"
    if not takes_meta:
        return f"{name}{sig} does not take the model's entry as its first argument; {CONSTRUCTOR}: declare {wanted}"
    if "device" not in sig.parameters and not var_kw:
        return f"{name}{sig} takes no device; {CONSTRUCTOR}: declare {wanted}"
    unknown = [k for k in options if k not in sig.parameters and not var_kw]
    if unknown:
        return (
            f"{name}{sig} takes no option {', '.join(sorted(unknown))} (from the entry's options or --option); "
            f"rename or drop it, or add it to the constructor ({CONSTRUCTOR})"
        )
    return f"{name}{sig} cannot be called as {name}(meta, device={device!r}, **{sorted(options)}): {reason}; {CONSTRUCTOR}"


def load_encoder(
    meta: ModelMeta, device: str = "cpu", protocol=None, *, endpoints=None, raise_unexpected: bool = False, **overrides
):
    """Build the encoder for a registry entry; options in the entry, then overrides, go to the
    factory, and the protocol (maeb.encoders.protocols) to factories that take one. endpoints: values of
    the variables a factory's `from_environment` ({option: variable}) names, for the options the
    entry and overrides leave unset (the fronts read them: RunOptions.endpoints). raise_unexpected:
    a constructor's unexpected exception propagates with its traceback (RunOptions.debug)."""
    import inspect

    from .protocols import DEFAULT_PROTOCOL, get_protocol

    options = {**meta.options, **overrides}
    check_env_options(options, f"model {meta.name!r}: option")
    factory = resolve_factory(meta.family)
    accepts: Mapping[str, inspect.Parameter]
    try:
        accepts = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        accepts = {}
    check_option_values(meta, accepts, options)
    for key, variable in getattr(factory, "from_environment", {}).items():
        if options.get(key) is None and (endpoints or {}).get(variable):
            options[key] = endpoints[variable]
    if "protocol" in accepts:
        options["protocol"] = get_protocol(protocol or DEFAULT_PROTOCOL)
    mismatch = _constructor_mismatch(factory, meta, device, options)
    if mismatch:
        raise ModelError(f"model {meta.name!r} (family {meta.family!r}): {mismatch}")
    from ..data import hub

    downloads = hub.from_hub(meta.revision, options.get("path"))
    if downloads:
        hub.prepare()
    try:
        encoder = factory(meta, device=device, **options)
    except ImportError as exc:  # a package the wrapper imports when it builds the model
        raise missing_package(meta.name, meta.family, exc) from exc
    except TypeError as exc:
        raise ModelError(
            f"model {meta.name!r}: family {meta.family!r} raised TypeError while building it with options "
            f"{sorted(options)} ({exc})"
        ) from exc
    except (ValueError, OverflowError) as exc:  # the wrapper refused a value (its message names it)
        shown = ", ".join(f"{k}={v!r}" for k, v in sorted(options.items()) if k != "protocol")
        raise ModelError(f"model {meta.name!r}: bad option value ({exc}); options given: {shown}") from exc
    except OSError as exc:
        told = hub.explain(exc, "model", meta.name, meta.revision) if downloads else None
        raise ModelError(
            told
            or f"model {meta.name!r} could not be loaded ({hub.first_line(exc)}). Weights come from the hub at revision "
            f"{meta.revision}; offline, set the entry's `path` option to a local copy"
        ) from exc
    except MaebError:
        raise
    except Exception as exc:  # anything else a wrapper's constructor raises (a custom class's own check, say)
        if raise_unexpected:
            raise
        raise ModelError(
            f"model {meta.name!r}: building family {meta.family!r} raised {type(exc).__name__}: {hub.first_line(exc)} "
            "(set MAEB_DEBUG=1 for the traceback)"
        ) from exc
    check_encoder(meta, encoder)
    return encoder


def check_option_values(meta: ModelMeta, accepts, options: dict) -> None:
    """Each option against the kind of its wrapper parameter's default, before anything is built:
    a finite number where the default is a number (positive for max_seconds), true/false where it
    is a boolean; one line naming the option (`--option max_seconds=abc` is not a traceback)."""
    for key, value in options.items():
        param = accepts.get(key) if hasattr(accepts, "get") else None
        default = getattr(param, "default", None)
        where = f"model {meta.name!r}: option {key}={value!r}"
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise ModelError(f"{where} must be true or false (default {default})")
        elif isinstance(default, (int, float)):
            number = None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                number = float(value)
            elif isinstance(value, str):
                try:
                    number = float(value)  # "inf", "nan": numbers a wrapper's float() would take
                except ValueError:
                    pass
            if number is None:
                raise ModelError(f"{where} must be a number (default {default})")
            if not math.isfinite(number):
                raise ModelError(f"{where} must be a finite number (default {default})")
            if key == "max_seconds" and number <= 0:
                raise ModelError(f"{where} must be a positive number of seconds (default {default})")


# --precision NAME -> the dtype option of the families whose wrapper takes one (maeb.encoders.hf)
PRECISIONS = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def precision_options(meta: ModelMeta, precision: str | None, device: str, overrides: dict) -> dict:
    """The encoder option a --precision sets ({"dtype": ...}; {} without one), refused in one line
    where it cannot apply: a family whose wrapper has no dtype, a dtype given twice, a device
    that cannot compute in it."""
    import inspect

    if precision is None:
        return {}
    if precision not in PRECISIONS:
        raise ModelError(f"unknown precision {precision!r}; known: {', '.join(PRECISIONS)}")
    dtype = PRECISIONS[precision]
    accepts: Mapping[str, inspect.Parameter]
    try:
        accepts = inspect.signature(resolve_factory(meta.family)).parameters
    except (TypeError, ValueError):
        accepts = {}
    if "dtype" not in accepts:
        raise ModelError(
            f"model {meta.name!r}: --precision {precision} does not apply to family {meta.family!r}, whose wrapper "
            "has no dtype option; run it without --precision"
        )
    given = overrides.get("dtype", meta.options.get("dtype"))
    if given is not None and given != dtype:
        raise ModelError(f"model {meta.name!r}: --precision {precision} contradicts dtype={given!r}; give one of them")
    problem = device_precision_problem(dtype, device)
    if problem:
        raise ModelError(f"model {meta.name!r}: --precision {precision} cannot run on {device}: {problem}")
    return {"dtype": dtype}


def device_precision_problem(dtype: str, device: str) -> str | None:
    """Why `device` cannot compute in `dtype` (None: it can): a CUDA device without bfloat16, or a
    CPU torch build without half-precision kernels (probed with a convolution, a matmul and a
    layer norm, what the audio encoders run)."""
    if dtype == "float32":
        return None
    import torch

    kind = str(device).split(":")[0]
    if kind == "cuda":
        if not torch.cuda.is_available():
            return "no CUDA device is available"
        if dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
            return f"{torch.cuda.get_device_name(device)} has no bfloat16 support; use fp16"
        return None
    if kind == "cpu":
        return _cpu_half_problem(dtype)
    return None


def _cpu_half_problem(dtype: str) -> str | None:
    import torch

    t = getattr(torch, dtype)
    try:
        x = torch.ones(1, 2, 8, dtype=t)
        torch.nn.functional.conv1d(x, torch.ones(2, 2, 3, dtype=t))
        torch.nn.functional.layer_norm(x @ torch.ones(8, 8, dtype=t), (8,))
    except RuntimeError as exc:
        return f"torch {torch.__version__} has no {dtype} CPU kernels ({str(exc).splitlines()[0]}); use --device cuda or bf16"
    return None


def check_precision(meta: ModelMeta, encoder, precision: str | None) -> None:
    """The loaded encoder computes in the precision asked for (a wrapper or a transformers release
    that ignores the dtype would otherwise label float32 vectors bf16)."""
    if precision is None:
        return
    got = (encoder.config() or {}).get("dtype")
    if got != PRECISIONS[precision]:
        raise ModelError(
            f"model {meta.name!r}: --precision {precision} asked for {PRECISIONS[precision]}, but it loaded in {got}"
        )


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


def length_policy(encoder) -> LengthPolicy:
    """The engine's length policy (rate, cap, minimum length) for an audio encoder."""
    return LengthPolicy(
        sample_rate=int(encoder.sample_rate),
        max_seconds=encoder.max_seconds,
        min_samples=int(getattr(encoder, "min_samples", 0)),
    )


def has_text(encoder) -> bool:
    """Whether the encoder has a text side (embed_text)."""
    return callable(getattr(encoder, "embed_text", None))


def has_audio(encoder) -> bool:
    """Whether the encoder embeds audio (embed_audio)."""
    return callable(getattr(encoder, "embed_audio", None))


def has_frames(encoder) -> bool:
    """Whether the encoder gives time-resolved embeddings (FrameEncoder.embed_frames)."""
    return callable(getattr(encoder, "embed_frames", None))


def has_generate(encoder) -> bool:
    """Whether the model writes text for clips (TextGenerator.generate)."""
    return callable(getattr(encoder, "generate", None))


def has_synthesize(encoder) -> bool:
    """Whether the model makes audio from text (AudioSynthesizer.synthesize)."""
    return callable(getattr(encoder, "synthesize", None))


def identity(meta: ModelMeta, encoder, protocol: str | None = None, device: str = "cpu") -> dict:
    """The full encoder identity (maeb.core.identity) of a loaded encoder with the entry's own options."""
    from dataclasses import replace

    from ..core.identity import declared_identity, encoder_identity
    from .protocols import DEFAULT_PROTOCOL, get_protocol

    proto = get_protocol(protocol or DEFAULT_PROTOCOL)
    policy = replace(length_policy(encoder), resampler=proto.resampler) if has_audio(encoder) else None
    return encoder_identity(declared_identity(meta, meta.options, proto.name), encoder, policy, device, requirements(meta))
