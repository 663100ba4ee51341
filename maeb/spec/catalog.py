"""The registry: task specs in tasks/, benchmark lists in tasks/benchmarks.toml, model entries in
models/*.toml. Everything is read from declarative files on demand; nothing heavy is imported.

Names resolve case-insensitively by name or alias (a model also by the part after its org), and
a path to a .toml/.json file is accepted wherever a name is."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from pathlib import Path

from ..audiogen import families as _audiogen_families  # noqa: F401  (registers the text-to-audio families)
from ..core.errors import SpecError, UnknownName, check_keys
from ..core.paths import safe_component
from ..core.taskspec import TaskSpec
from ..encoders import FAMILY_REGISTRY, SIMILARITIES, ModelMeta
from ..encoders.signature import check_entry_options
from .taskspec import load_spec

MODEL_FIELDS = {
    "name",
    "family",
    "revision",
    "aliases",
    "n_parameters",
    "embed_dim",
    "modalities",
    "license",
    "reference",
    "similarity",
    "release_date",
    "languages",
    "open_weights",
    "framework",
    "notes",
    "options",
    "training_datasets",
    "adapted_from",
    "superseded_by",
    "public_training_code",
    "public_training_data",
    "use_instructions",
    "max_tokens",
    "n_embedding_parameters",
    "memory_usage_mb",
    "model_type",
    "citation",
    "published",
    "extra",
    "requires",
}


def catalog_dir(kind: str) -> Path:
    """tasks/ or models/ of a source checkout, else the copy installed inside the package
    (maeb/_catalog/{kind}; the folders below _catalog are data, not packages)."""
    source = Path(__file__).resolve().parent.parent.parent / kind
    if source.is_dir() and (source.parent / "pyproject.toml").exists():
        return source
    from .. import _catalog

    installed = Path(_catalog.__file__).resolve().parent / kind
    if not installed.is_dir():
        raise SpecError(f"maeb's catalog folder {installed} is missing; reinstall maeb")
    return installed


# -- models ---------------------------------------------------------------------------------
def parse_model(raw: dict, where: str) -> ModelMeta:
    """One [[model]] table as a ModelMeta; unknown keys, a missing name/family/revision or an unknown family fail naming `where`."""
    check_keys(where, raw, MODEL_FIELDS)
    for required in ("name", "family", "revision"):
        if required not in raw:
            raise SpecError(f"{where}: model entry needs {required!r}")
    # the name and revision become folders of the results: one plain folder name each
    safe_component(str(raw["name"]).replace("/", "__"), f"{where}: model name", SpecError)
    safe_component(str(raw["revision"]).replace("/", "_"), f"{where}: revision", SpecError)
    if raw["family"] not in FAMILY_REGISTRY and ":" not in raw["family"]:
        check_keys(f"{where}: family", {raw["family"]: None}, set(FAMILY_REGISTRY))
    if raw.get("similarity", "cosine") not in SIMILARITIES:
        check_keys(f"{where}: similarity", {raw["similarity"]: None}, set(SIMILARITIES))
    values = dict(raw)
    for key in ("aliases", "modalities", "languages", "framework", "training_datasets", "model_type", "requires"):
        if key in values:
            values[key] = tuple(values[key])
    meta = ModelMeta(**values, source=where)
    check_entry_options(meta, where)  # a misspelt option is told now, not when the model loads
    return meta


def read_model_file(path: Path) -> list[ModelMeta]:
    """The model entries of one TOML file ([[model]] tables, or one bare table)."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:  # a file that is not UTF-8 too
        raise SpecError(f"cannot read model entries {path}: {exc}") from exc
    entries = raw.get("model", [raw] if "name" in raw else [])
    if not entries:
        raise SpecError(f"{path}: no [[model]] entries")
    return [parse_model(entry, f"{path} model {entry.get('name', i)!r}") for i, entry in enumerate(entries)]


@lru_cache(maxsize=1)
def models() -> dict[str, ModelMeta]:
    out: dict[str, ModelMeta] = {}
    for path in sorted(catalog_dir("models").glob("*.toml")):
        for meta in read_model_file(path):
            if meta.name in out:
                raise SpecError(f"model {meta.name!r} is defined twice ({out[meta.name].source} and {meta.source})")
            out[meta.name] = meta
    return out


def find_model(name: str) -> ModelMeta:
    """A model by name, short name or alias in the registry, by a .toml file of one entry, or "openai:NAME"."""
    if name.endswith(".toml") and Path(name).is_file():
        entries = read_model_file(Path(name))
        if len(entries) != 1:
            raise SpecError(f"{name}: holds {len(entries)} model entries; pass one by name")
        return entries[0]
    if name.lower().startswith("openai:"):
        return api_model(name.split(":", 1)[1])
    table = models()
    lowered = name.lower()
    for meta in table.values():
        keys = {meta.name.lower(), meta.name.split("/")[-1].lower(), *(a.lower() for a in meta.aliases)}
        if lowered in keys:
            return meta
    known = [m.name for m in table.values()] + [a for m in table.values() for a in m.aliases]
    raise UnknownName("model", name, known)


def api_model(served: str) -> ModelMeta:
    """A model behind an OpenAI-compatible endpoint (--model openai:NAME): results are filed under
    the served name; the endpoint comes from --option base_url=... or MAEB_API_URL."""
    if not served:
        raise SpecError("--model openai:NAME needs the served model's name after the colon")
    return ModelMeta(
        name=served,
        family="gen-openai-chat",
        revision="api",
        modalities=("audio", "text"),
        open_weights=None,
        framework=("API",),
        notes="served through an OpenAI-compatible chat endpoint",
        options={"model": served},
    )


# -- tasks ----------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def task_files() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(catalog_dir("tasks").rglob("*.toml")):
        if path.name == "benchmarks.toml":
            continue
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise SpecError(f"{path}: not valid TOML: {exc}") from exc
        name = raw.get("name")
        if not name:
            raise SpecError(f"{path}: task spec has no name")
        if name in out:
            raise SpecError(f"task {name!r} is defined twice ({out[name]} and {path})")
        out[name] = path
        for alias in raw.get("aliases", []):
            out.setdefault(alias, path)
    return out


def task_names() -> list[str]:
    """The names of every registered task, sorted."""
    return sorted({load_spec_cached(p).name for p in task_files().values()})


@cache
def load_spec_cached(path: Path) -> TaskSpec:
    return load_spec(path)


def find_task(name: str) -> TaskSpec:
    """A task spec by registered name (any case) or by spec file path."""
    if name.endswith((".toml", ".json")) and Path(name).is_file():
        return load_spec(name)
    files = task_files()
    if name in files:
        return load_spec_cached(files[name])
    lowered = {k.lower(): v for k, v in files.items()}
    if name.lower() in lowered:
        return load_spec_cached(lowered[name.lower()])
    if name.endswith((".toml", ".json")):
        raise SpecError(f"task spec file {name} does not exist")
    raise UnknownName("task", name, list(files))


# -- benchmarks -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Benchmark:
    """A named list of tasks (a [[benchmark]] of tasks/**/benchmarks.toml), with per-task subsets."""

    name: str
    tasks: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    description: str = ""
    reference: str = ""
    subsets: dict = field(default_factory=dict, hash=False, compare=False)  # task -> subsets to run


@lru_cache(maxsize=1)
def benchmarks() -> dict[str, Benchmark]:
    """Every [[benchmark]] in any benchmarks.toml under tasks/."""
    out = {}
    for path in sorted(catalog_dir("tasks").rglob("benchmarks.toml")):
        out.update(_read_benchmarks(path))
    return out


def _read_benchmarks(path: Path) -> dict[str, Benchmark]:
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    out = {}
    for i, entry in enumerate(raw.get("benchmark", [])):
        where = f"{path} benchmark {entry.get('name', i)!r}"
        check_keys(where, entry, {"name", "tasks", "aliases", "description", "reference", "subsets"})
        out[entry["name"]] = Benchmark(
            name=entry["name"],
            tasks=tuple(entry["tasks"]),
            aliases=tuple(entry.get("aliases", [])),
            description=entry.get("description", ""),
            reference=entry.get("reference", ""),
            subsets=dict(entry.get("subsets", {})),
        )
    return out


def find_benchmark(name: str) -> Benchmark:
    """A benchmark by name or alias, any case."""
    for bench in benchmarks().values():
        if name.lower() in {bench.name.lower(), *(a.lower() for a in bench.aliases)}:
            return bench
    known = [b.name for b in benchmarks().values()] + [a for b in benchmarks().values() for a in b.aliases]
    raise UnknownName("benchmark", name, known)


def benchmark_specs(bench: Benchmark) -> list[TaskSpec]:
    """The task specs of a benchmark, each restricted to the benchmark's subsets where it names some."""
    specs = []
    for task in bench.tasks:
        spec = find_task(task)
        if task in bench.subsets:
            spec = replace(spec, data=replace(spec.data, subsets=list(bench.subsets[task])))
        specs.append(spec)
    return specs


# -- mteb's registry records ------------------------------------------------------------------
@cache
def mteb_records() -> dict[str, dict]:
    """mteb's registry records of the catalog's models it knows (models/mteb_model_meta.json, made by
    scripts/import_mteb_meta.py from the pinned mteb release), by model name."""
    path = catalog_dir("models") / "mteb_model_meta.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))["models"]
    except (OSError, ValueError, KeyError) as exc:
        raise SpecError(f"cannot read mteb's model records {path}: {exc}; reinstall maeb") from exc


def mteb_record(name: str) -> dict | None:
    """mteb's registry record of a model, or None when mteb does not know the model."""
    return mteb_records().get(name)
