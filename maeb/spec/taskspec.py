"""Task specs: one TOML (or JSON) file per task, validated field by field.

A spec says where the data is (data), what to do to its rows (transforms), how to turn a labelled
table into pairs, queries or candidates when the data is not already in that shape (derive), and
the evaluator's parameters (protocol). Unknown fields are errors with a suggestion."""

from __future__ import annotations

import dataclasses
import json
import tomllib
from pathlib import Path

from ..core.errors import SpecError, check_keys, closest
from ..core.paths import safe_component
from ..core.taskspec import DataSpec, TaskSpec, _expand
from ..tasktypes import from_mteb, is_outside, mteb_types

# what this module offers; TaskSpec and DataSpec themselves are imported from maeb.core.taskspec
__all__ = [
    "CATEGORIES",
    "DATA_FIELDS",
    "DOMAINS",
    "GENERATIVE_TYPES",
    "SOURCES",
    "TOP_FIELDS",
    "TYPES",
    "check_field_types",
    "distinct",
    "load_spec",
    "parse_spec",
]

# maeb type name -> mteb type name (from the one registry, maeb.tasktypes); specs may use either
TYPES = mteb_types(generative=False)
GENERATIVE_TYPES = mteb_types(generative=True)  # maeb's own names; results record them as the task type

TOP_FIELDS = {
    "name",
    "type",
    "description",
    "reference",
    "main_score",
    "category",
    "domains",
    "languages",
    "license",
    "notes",
    "dataset_revision",
    "aliases",
    "data",
    "transforms",
    "derive",
    "protocol",
    "modalities",
    "date",
    "superseded_by",
    "source_file",
    "family",
    "benchmarks",
    "stats",
}
DATA_FIELDS = {
    "source",
    "path",
    "revision",
    "subsets",
    "eval_splits",
    "train_split",
    "audio_column",
    "audio_columns",
    "label_column",
    "text_column",
    "split_by",
    "label_separator",
    "layout",
    "config",
    "subset_column",
    "split_names",
    "meta_file",
    "audio_template",
    "decode_rate",
}
SOURCES = ("hub", "audiofolder", "metafolder", "hub-files", "webdataset")
DOMAINS = {"speech", "music", "environmental", "bioacoustics"}
CATEGORIES = {"a2a", "a2c", "a2t", "t2a", "t2t"}


def _alternatives(kind: str) -> list[str]:
    """The top-level parts of an annotation such as 'list[str] | dict[str, list[str]]'."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(kind):
        depth += char == "["
        depth -= char == "]"
        if char == "|" and depth == 0:
            parts.append(kind[start:i].strip())
            start = i + 1
    return [*parts, kind[start:].strip()]


def _fits(value, kind: str) -> bool:
    """Whether a parsed TOML/JSON value has the type a dataclass annotation names."""
    for alt in _alternatives(kind):
        inner = alt[alt.index("[") + 1 : -1] if "[" in alt else ""
        if alt == "Any" or (alt == "None" and value is None) or (alt == "str" and isinstance(value, str)):
            return True
        if alt in ("int", "float") and isinstance(value, (int, float)) and not isinstance(value, bool):
            return alt == "float" or isinstance(value, int)
        if alt == "bool" and isinstance(value, bool):
            return True
        if alt.startswith("list") and isinstance(value, list) and (not inner or all(_fits(v, inner) for v in value)):
            return True
        if alt.startswith("dict") and isinstance(value, dict):
            if not inner:
                return True
            key_kind, value_kind = (x.strip() for x in inner.split(",", 1))
            if all(_fits(k, key_kind) and _fits(v, value_kind) for k, v in value.items()):
                return True
    return False


_KIND_NAMES = {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false", "dict": "a table"}


def _describe_kind(kind: str) -> str:
    """'list[str] | None' as 'a list of strings' (what a spec author reads in the error)."""
    parts = []
    for alt in _alternatives(kind):
        if alt == "None":
            continue
        if alt.startswith("list["):
            parts.append("a list of " + _describe_kind(alt[5:-1]).split(" ", 1)[1] + "s")
        elif alt.startswith("dict["):
            parts.append("a table")
        else:
            parts.append(_KIND_NAMES.get(alt, alt))
    return " or ".join(dict.fromkeys(parts))


def check_field_types(raw: dict, cls, where: str, prefix: str = "", extra: dict | None = None) -> None:
    """Each field's value against its annotation in the dataclass (a name of 5, a type given as a
    list, domains given as one string are one line naming the field, not a traceback later)."""
    kinds = {f.name: str(f.type) for f in dataclasses.fields(cls)} | (extra or {})
    for name, value in raw.items():
        kind = kinds.get(name)
        if kind is not None and not _fits(value, kind):
            raise SpecError(f"{where}: field {prefix}{name} must be {_describe_kind(kind)}, got {value!r}")


def _check_split_by(split_by, where: str) -> None:
    if split_by is None or "random" in split_by:
        return  # a random split's share and seed are checked where it is drawn (loader.random_split)
    column = split_by.get("column")
    if not isinstance(column, str) or not column:
        raise SpecError(f"{where}: data.split_by.column must be one column name (a string), got {column!r}")
    for key, values in split_by.items():
        if key == "rest" and not isinstance(values, str):
            raise SpecError(f"{where}: data.split_by.rest must be a split name (a string), got {values!r}")
        if key not in ("column", "rest") and not isinstance(values, list):
            raise SpecError(f"{where}: data.split_by.{key} must be a list of the column's values, got {values!r}")


def parse_spec(raw: dict, where: str, base: Path | None = None, source_file: str = "") -> TaskSpec:
    """Check a spec's raw TOML table (`where` names it in errors; `base` is the folder relative paths start from) and return the
    TaskSpec."""
    from .. import tasktypes  # the types register their protocol parameters

    check_keys(where, raw, TOP_FIELDS)
    for required in ("name", "type", "data"):
        if required not in raw:
            raise SpecError(f"{where}: missing required field {required!r}")
    check_field_types(raw, TaskSpec, where, extra={"data": "dict"})
    # the name becomes a result file's name (and a folder of predictions and generated clips)
    safe_component(raw["name"], f"{where}: task name", SpecError)
    kind = from_mteb(raw["type"])
    known_types = set(TYPES) | set(GENERATIVE_TYPES)
    if kind not in known_types and not is_outside(kind):  # "package.module:Class": a type outside maeb
        check_keys(f"{where}: type", {kind: None}, known_types)
    data_raw = dict(raw["data"])
    check_keys(f"{where}: [data]", data_raw, DATA_FIELDS)
    check_field_types(data_raw, DataSpec, where, prefix="data.", extra={"audio_column": "str"})
    _check_split_by(data_raw.get("split_by"), where)
    if "source" not in data_raw or data_raw["source"] not in SOURCES:
        raise SpecError(f"{where}: data.source must be one of {', '.join(SOURCES)}, got {data_raw.get('source')!r}")
    if data_raw.get("split_by") is not None and data_raw["source"] in ("hub", "webdataset"):
        # these sources come with their splits; a rule here would be ignored without a word
        raise SpecError(
            f"{where}: data.split_by (a column or random split) applies to audiofolder, metafolder and hub-files "
            f"sources, not {data_raw['source']!r}, whose splits come from the repository; remove it, or map split "
            "names with data.split_names"
        )
    if data_raw["source"] in ("metafolder", "hub-files") and not data_raw.get("meta_file"):
        raise SpecError(f"{where}: data.source {data_raw['source']!r} needs data.meta_file")
    if "path" not in data_raw:
        raise SpecError(f"{where}: data.path is required (hub repo id or folder)")
    if "audio_column" in data_raw:
        data_raw["audio_columns"] = [data_raw.pop("audio_column")]
    base = base or Path.cwd()
    if "$" not in str(data_raw["path"]):
        data_raw["path"] = _expand(str(data_raw["path"]), base, local=data_raw["source"] in ("audiofolder", "metafolder"))
    # else the environment decides the path when the data is read (see DataSpec.location)
    data_raw["base"] = str(base)
    for key in ("subsets", "eval_splits", "audio_columns"):
        if key in data_raw and not isinstance(data_raw[key], list):
            raise SpecError(f"{where}: data.{key} must be a list")
    for key in ("subsets", "eval_splits"):
        values = data_raw.get(key)
        if values is not None and not values:
            raise SpecError(f"{where}: data.{key} is empty; name at least one")
        if values and len(set(values)) < len(values):
            twice = sorted({v for v in values if values.count(v) > 1})
            raise SpecError(f"{where}: data.{key} lists {', '.join(map(repr, twice))} more than once")
    data = DataSpec(**data_raw)
    if data.layout not in ("table", "retrieval"):
        raise SpecError(f"{where}: data.layout must be 'table' or 'retrieval', got {data.layout!r}")
    from ..data.transforms import validate as validate_transforms
    from .derive import implied_protocol
    from .derive import validate as validate_derive

    fields = {k: v for k, v in raw.items() if k not in ("data", "type")}
    module = tasktypes.get(kind)
    # everything is decided before the spec exists: a parsed spec is never changed (catalog specs are shared)
    raw_protocol = {**implied_protocol(fields.get("derive") or {}), **dict(fields.pop("protocol", {}) or {})}
    fields["protocol"] = module.params(raw_protocol, f"{where}: [protocol]")
    fields["main_score"] = fields.get("main_score") or module.MAIN_SCORE
    if source_file:
        fields["source_file"] = source_file
    spec = TaskSpec(type=kind, data=data, mteb_type=tasktypes.mteb_type_of(kind), **fields)
    for domain in spec.domains:
        if domain not in DOMAINS:
            check_keys(f"{where}: domains", {domain: None}, DOMAINS)
    if spec.category is not None and spec.category not in CATEGORIES:
        check_keys(f"{where}: category", {spec.category: None}, CATEGORIES)
    metrics = getattr(module, "metrics", None)  # a task type may not list its metrics
    names = list(metrics(spec)) if callable(metrics) else None
    if names is not None and spec.main_score is not None and spec.main_score not in names:
        close = closest(spec.main_score, names)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; one of {', '.join(names[:12])}, ..."
        raise SpecError(f"{where}: main_score {spec.main_score!r} is not a metric of {kind}{hint}")
    validate_transforms(spec.transforms, where)
    validate_derive(spec, where)
    return spec


def load_spec(path: str | Path) -> TaskSpec:
    """Read and check a task spec TOML file; SpecError naming the file and field when it is wrong."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"cannot read task spec {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); save the spec file as UTF-8") from exc
    try:
        raw = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise SpecError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'TOML'}: {exc}") from exc
    return parse_spec(raw, str(path), base=path.parent, source_file=str(path))


def distinct(specs: list[TaskSpec]) -> list[TaskSpec]:
    """Each task once, in order: the same spec listed twice (a task named and in a benchmark too)
    counts once; two different specs under one name are refused, since results are filed by name
    and one of them would silently not run."""
    kept: dict[str, TaskSpec] = {}
    for spec in specs:
        first = kept.setdefault(spec.name, spec)
        same = first.source_file == spec.source_file if first.source_file or spec.source_file else first == spec
        if not same:
            where = [s.source_file or "a TaskSpec built in Python" for s in (first, spec)]
            raise SpecError(f"two specs name task {spec.name!r} ({where[0]} and {where[1]}); rename one (its `name`)")
    return list(kept.values())
