"""The spec format reference, generated from the registries that parse and run specs, so it cannot
drift from them: the fields of maeb/spec/taskspec.py (types and defaults from its dataclasses, meanings from
FIELD_MEANINGS below), the transform ops of maeb/data/transforms.py and the derive kinds of
maeb/spec/derive.py (fields from their registries, meanings from those modules' docstrings), and every
task type's protocol parameters (maeb.tasktypes: default, allowed values and doc of each Param),
main score, metrics, the splits it reads and the sides of the model it needs.

`python -m maeb describe [TYPE | spec | transforms | derive | types]` prints it for the terminal;
`python -m maeb describe --markdown > docs/spec-reference.md` writes the committed reference page,
which tests/test_describe.py regenerates and compares byte for byte. `missing_docs()` lists what
has no meaning yet (the test fails on any)."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import textwrap
from typing import Any

from .. import tasktypes
from ..core.errors import MaebError, closest
from ..core.taskspec import DataSpec, TaskSpec
from ..data import transforms
from . import derive
from . import taskspec as spec

# One line per spec field: what it means. Types and defaults come from the dataclasses.
TOP_MEANINGS = {
    "name": "task name, as result files and leaderboards show it",
    "type": 'task type: a maeb or mteb name (see Task types), or "package.module:Class" for a TaskType outside maeb (docs/add-task.md)',
    "description": "what the task measures",
    "reference": "URL of the dataset or its paper",
    "main_score": "metric a leaderboard ranks by; one of the type's metrics (unset: the type's main score)",
    "category": "what is matched to what, a for audio, t for text, c for class (a2c: clips to labels)",
    "domains": "audio domains the task covers",
    "languages": "languages as mteb writes them (eng-Latn); a table subset -> list for multilingual subsets",
    "license": "licence of the data",
    "notes": "free text for whoever maintains the spec",
    "dataset_revision": "revision results record as dataset_revision (unset: data.revision, else local)",
    "aliases": "other names that find the task",
    "data": "where the data is and how to read it ([data] fields below)",
    "transforms": "row operations applied per split after loading, in order ([[transforms]], below)",
    "derive": "turns a labelled table into pairs, queries or candidates ([derive], below)",
    "protocol": "the evaluator's parameters: the task type's protocol parameters (below); unknown keys are errors",
    "modalities": "modalities of the task's inputs, recorded for leaderboards",
    "date": "date range of the data (mteb's metadata; informational)",
    "superseded_by": "name of a task that replaces this one (informational)",
    "source_file": "set by maeb to the file the spec was read from; not written by hand",
    "family": "tasks built from the same source data share a family (task selection keeps them apart)",
    "benchmarks": "benchmarks listing the task (informational; the lists live in tasks/benchmarks.toml)",
    "stats": "split -> clips, hours, max_seconds, classes: what a dry run reports without reading the data",
}
DATA_MEANINGS = {
    "source": "how the data is stored",
    "path": "hub dataset id, or a folder relative to the spec file; $VARIABLES are expanded",
    "revision": "hub commit the data is pinned to",
    "subsets": "subsets (hub configs, or values of subset_column), each scored on its own",
    "eval_splits": "splits scored",
    "train_split": "split a linear probe trains on (classification without cross-validation, multilabel)",
    "audio_column": "the column holding the clips (shorthand for audio_columns = [it])",
    "audio_columns": "columns that may hold the clips; the first one present is read",
    "label_column": "column holding the labels",
    "text_column": "column holding texts (text retrieval, derive rows)",
    "split_by": "audiofolder: rows to splits by a column's values ({column, SPLIT = [values], rest = SPLIT}), "
    "by a column of split names ({column}), or at random ({random = 0.2, seed = 0}: per label, that share of the "
    "clips, chosen by a seeded hash of their file names, to the eval split, the rest to train_split); unset: "
    "every row goes to the one split the task reads",
    "label_separator": "split string labels on this separator into label lists (multilabel)",
    "layout": "table (one table per split) or retrieval (corpus / queries / qrels / top_ranked configs)",
    "config": "hub config to read when it is not the subset's name",
    "subset_column": "subsets are this column's values, rows of one config",
    "split_names": "task split -> split name in the repository",
    "meta_file": "metafolder / hub-files: the JSON list of rows",
    "audio_template": "metafolder / hub-files: a clip's path from its row's fields (str.format)",
    "decode_rate": "decode at this rate first (mteb casts some datasets' audio to a rate)",
}
SHORTHANDS = {"audio_column": "audio_columns"}  # a [data] field standing for a one-item list field
DERIVE_MEANINGS = {
    "label_column": "column holding the labels (unset: data.label_column)",
    "n_pairs": "pairs drawn",
    "positive_fraction": "share of the pairs whose clips share a label",
    "seed": "seed of the draws",
    "max_queries": "draw at most this many queries (unset: every clip queries)",
    "text_template": "text of a label; {label} is the label, or its name from label_names",
    "relevance": 'text_to_audio: "label" (a text per label, relevant to its clips) or "self" (a text per clip); '
    'rows: "self" or a column whose shared values make rows relevant to each other',
    "label_names": "label value -> the name text_template uses",
    "n_queries": "queries drawn",
    "positives": "same-label candidates per query (the relevant ones)",
    "negatives": "other-label candidates per query",
    "hard_negative_column": "negatives share this column's value with their query when enough do",
    "direction": "t2a, a2t or a2a: which side of a row is the query",
    "audio_column": "column holding the clips (unset: data.audio_column)",
    "text_column": "column holding the texts (unset: data.text_column, else text)",
    "id_template": "a row's id: str.format over the row's fields (unset: the row number)",
    "query_id_prefix": "prefix of query ids",
    "corpus_id_prefix": "prefix of document ids",
    "split_text": "cut a text on this separator into several queries or documents",
}
# Protocol parameters a task type still declares as plain values (no Param, so no doc of its own)
PLAIN_PARAM_DOCS: dict[tuple[str, str], str] = {}  # (type, parameter) -> meaning, for a type whose PARAMS are plain values
SIDES = {
    "audio": "audio encoder",
    "text": "text encoder",
    "generate": "text generation",
    "synthesize": "audio generation",
    "frames": "time-resolved embeddings, embed_frames",
    "judge": "an LLM judge",
}
TOPICS = ("spec", "transforms", "derive", "types")
WIDTH = 100


# --- the facts, gathered from the registries ---------------------------------------------------


def _value(value: Any, limit: int = 48) -> str:
    """A value as a spec writes it (TOML), shortened when long."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return (
            text if len(text) <= limit else json.dumps(value[: limit - 12], ensure_ascii=False)[:-1] + f'…" ({len(value)} chars)'
        )
    if isinstance(value, (list, tuple)):
        parts = [_value(v, limit) for v in value]
        out: list[str] = []
        for part in parts:
            if len(", ".join(out + [part])) > limit:
                return "[" + ", ".join(out) + (", " if out else "") + f"… ({len(parts)} items)]"
            out.append(part)
        return "[" + ", ".join(out) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        text = "{" + ", ".join(f"{k} = {_value(v, limit)}" for k, v in value.items()) + "}"
        return text if len(text) <= limit + 2 else f"{{{len(value)} entries}}"
    return repr(value)


def _number(value) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _type_name(kind) -> str:
    if kind is None:
        return "any"
    if kind is float or kind == (int, float) or kind == (float, int):
        return "number"
    if isinstance(kind, tuple):
        return " or ".join(_type_name(k) for k in kind)
    return kind.__name__


def _allowed(kind, minimum=None, maximum=None, choices=None, items=None) -> str:
    """The values a rule accepts, in words: type, element type, range, choices."""
    text = _type_name(kind)
    if items is not None:
        text = f"list of {_type_name(items)}"
    if choices is not None:
        return "one of " + ", ".join(_value(c) for c in choices)
    if minimum is not None and maximum is not None:
        text += f", {_number(minimum)} to {_number(maximum)}"
    elif minimum is not None:
        text += f", at least {_number(minimum)}"
    elif maximum is not None:
        text += f", at most {_number(maximum)}"
    return text


def _field_type(f: dataclasses.Field) -> str:
    text = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    return text.replace("DataSpec", "table")


def _field_default(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        return _value(f.default)
    if f.default_factory is not dataclasses.MISSING:
        return _value(f.default_factory())
    return "required"


def field_rows() -> dict[str, list[dict]]:
    """{"top": rows, "data": rows}: every field a spec may write, in the dataclasses' order."""
    choices = {
        "top": {"type": list(tasktypes.MODULES), "category": sorted(spec.CATEGORIES), "domains": sorted(spec.DOMAINS)},
        "data": {"source": list(spec.SOURCES)},
    }
    out = {}
    for section, allowed, cls, meanings in (
        ("top", spec.TOP_FIELDS, TaskSpec, TOP_MEANINGS),
        ("data", spec.DATA_FIELDS, DataSpec, DATA_MEANINGS),
    ):
        fields = {f.name: f for f in dataclasses.fields(cls)}
        names = []
        for name in fields:  # a shorthand goes just before the field it stands for
            names += [short for short, whole in SHORTHANDS.items() if whole == name and short in allowed]
            names += [name] if name in allowed else []
        names += sorted(set(allowed) - set(names))
        rows = []
        for name in names:
            if name in fields:
                kind, default = _field_type(fields[name]), _field_default(fields[name])
            elif name in SHORTHANDS and SHORTHANDS[name] in fields:
                whole = fields[SHORTHANDS[name]]
                kind = re.sub(r"^list\[(.*)\]$", r"\1", _field_type(whole))
                factory = whole.default_factory  # dataclasses.MISSING when unset, which is not callable
                first = factory() if callable(factory) else whole.default
                default = _value(first[0]) if first and first is not dataclasses.MISSING else "unset"
            else:
                kind, default = "", ""
            values = choices[section].get(name)
            each = "each " if kind.startswith("list") else ""
            rows.append(
                {
                    "name": name,
                    "type": kind,
                    "default": default,
                    "allowed": f"{each}one of " + ", ".join(values) if values else "",
                    "meaning": meanings.get(name, ""),
                }
            )
        out[section] = rows
    return out


def _docstring_table(doc: str) -> dict[str, str]:
    """The `  name   text` table of a module docstring (continuation lines indented deeper)."""
    out: dict[str, str] = {}
    current = None
    for line in (doc or "").splitlines():
        match = re.match(r"^  (\w+)\s{2,}(\S.*)$", line)
        if match:
            current = match.group(1)
            out[current] = match.group(2).strip()
        elif current and re.match(r"^\s{4,}\S", line):
            out[current] += " " + line.strip()
        else:
            current = None
    return out


def transform_rows() -> list[dict]:
    """One row per transform op: its required and optional keys and its meaning from maeb.data.transforms's docstring."""
    docs = _docstring_table(transforms.__doc__)
    return [
        {"op": op, "required": sorted(required), "optional": sorted(optional), "meaning": docs.get(op, "")}
        for op, (required, optional) in transforms.OPS.items()
    ]


def _rule(rule) -> dict:
    """A derive RULES entry (a dict of kind/min/max, or a Param) as keyword arguments of _allowed."""
    if isinstance(rule, dict):
        return {"kind": rule.get("kind"), "minimum": rule.get("min"), "maximum": rule.get("max"), "choices": rule.get("choices")}
    return {"kind": rule.kind, "minimum": rule.min, "maximum": rule.max, "choices": rule.choices}


def _rule_default(rule) -> str:
    if isinstance(rule, dict):
        return _value(rule["default"]) if "default" in rule else ""
    return _value(rule.default) if rule.default is not None else ""


def derive_rows() -> list[dict]:
    """One row per [derive] kind: its fields with their allowed values and defaults, and the meaning from maeb.spec.derive's docstring."""
    docs = _docstring_table(derive.__doc__)
    rows = []
    for kind, names in derive.KINDS.items():
        fields = []
        for name in sorted(names):
            rule = derive.RULES.get(name)
            allowed = _allowed(**_rule(rule)) if rule is not None else ""
            default = _rule_default(rule) if rule is not None else ""  # where RULES declares one
            allowed += f"; default {default}" if default else ""
            fields.append({"name": name, "allowed": allowed, "meaning": DERIVE_MEANINGS.get(name, "")})
        rows.append({"kind": kind, "types": sorted(derive.FITS.get(kind, ())), "meaning": docs.get(kind, ""), "fields": fields})
    return rows


def _mteb_name(name: str, module) -> str:
    entry = getattr(tasktypes, "REGISTRY", {}).get(name)
    mteb_type = getattr(entry, "mteb_type", None)
    if isinstance(mteb_type, str):
        return mteb_type
    if tasktypes.is_outside(name):
        return tasktypes.mteb_type_of(name)
    return {**getattr(spec, "TYPES", {}), **getattr(spec, "GENERATIVE_TYPES", {})}.get(name, name)


def _example_spec(name: str, module, protocol: dict | None = None, category: str | None = None):
    """A spec of the type with every default, and split fields named by their field names."""
    data = DataSpec(source="audiofolder", path=".", eval_splits=["data.eval_splits"], train_split="data.train_split")
    if protocol is None:
        protocol = module.params({}, f"{name} [protocol]")
    return TaskSpec(
        name="Example", type=name, data=data, protocol=protocol, category=category, mteb_type=_mteb_name(name, module)
    )


def _param_rule(name: str, key: str, value) -> dict:
    param_class = getattr(tasktypes, "Param", None)
    if param_class is not None and isinstance(value, param_class):
        kind = value.kind or (type(value.default) if value.default is not None else None)
        allowed = _allowed(kind, value.min, value.max, value.choices, value.items)
        return {"default": value.default, "allowed": allowed, "meaning": value.doc or "", "documented": bool(value.doc)}
    doc = PLAIN_PARAM_DOCS.get((name, key), "")
    kind = (int, float) if isinstance(value, float) else (type(value) if value is not None else None)
    return {"default": value, "allowed": _type_name(kind), "meaning": doc, "documented": bool(doc)}


def _splits(name: str, module) -> list[tuple[str, list[str]]]:
    """The splits the type reads with its defaults, then under each boolean parameter flipped
    where that changes them (classification's cross_validation)."""
    example = _example_spec(name, module)
    base = list(module.splits(example))
    out = [("", base)]
    for key, value in example.protocol.items():
        if isinstance(value, bool):
            flipped = _example_spec(name, module, {**example.protocol, key: not value})
            other = list(module.splits(flipped))
            if other != base:
                out.append((f"{key} = {_value(not value)}", other))
    return out


def _needs(name: str, module) -> list[tuple[str, list[str]]]:
    """The sides of the model the type needs, by task category where they depend on it."""
    base = sorted(module.needs(_example_spec(name, module, category=None)))
    groups: dict[tuple, list[str]] = {}
    for category in sorted(spec.CATEGORIES):
        sides = sorted(module.needs(_example_spec(name, module, category=category)))
        if sides != base:
            groups.setdefault(tuple(sides), []).append(category)
    return [("", base)] + [("category " + ", ".join(cats), list(sides)) for sides, cats in groups.items()]


def _compact_metrics(names: list[str]) -> tuple[list[str], list[str]]:
    """Metric names with their cut-offs folded (ndcg_at_{k}, ...) and the k values, when every
    folded name has the same ones; else the names as they are and no k."""
    patterns: dict[str, list[str]] = {}
    for name in names:
        match = re.search(r"_at_(\d+)", name)
        patterns.setdefault(re.sub(r"_at_\d+", "_at_{k}", name), []).append(match.group(1) if match else "")
    ks = {tuple(v) for p, v in patterns.items() if "{k}" in p}
    if len(ks) != 1:
        return list(names), []
    return list(patterns), list(next(iter(ks)))


def _type_doc(name: str, module) -> str | None:
    """What a type says of itself: a built-in type's module docstring (its class is one of the
    module's names), an outside type's class docstring."""
    entry = tasktypes.REGISTRY.get(name)
    return sys.modules[entry.module].__doc__ if entry else module.__doc__


def type_info(name: str) -> dict:
    """Everything a user needs to write a spec of task type `name`: its parameters, metrics, main score, needed model sides and
    summary."""
    module = tasktypes.get(name)
    params = []
    aliases = {new: old for old, new in getattr(module, "ALIASES", {}).items()}
    for key, value in module.PARAMS.items():
        row = {"name": key, **_param_rule(name, key, value)}
        row["alias"] = aliases.get(key, "")
        params.append(row)
    lister = getattr(module, "metrics", None)  # a task type may not list its metrics
    metrics = list(lister(_example_spec(name, module))) if callable(lister) else None
    paragraph = " ".join((_type_doc(name, module) or "").strip().split("\n\n")[0].split())
    first = re.match(r"^(.*?\.)(?:\s|$)", paragraph)
    summary = first.group(1) if first else paragraph.rstrip(":") + "."
    return {
        "name": name,
        "mteb": _mteb_name(name, module),
        "summary": summary,
        "main_score": module.MAIN_SCORE,
        "metrics": metrics,
        "splits": _splits(name, module),
        "needs": _needs(name, module),
        "params": params,
    }


def find_type(name: str) -> str:
    """A task type by maeb name, mteb name or module name, any case, or an outside type's
    "package.module:Class"."""
    if tasktypes.is_outside(name):
        tasktypes.get(name)  # an error naming what is wrong with it
        return name
    known = {}
    for key, path in tasktypes.MODULES.items():
        known[key.lower()] = key
        known[path.rsplit(".", 1)[-1].lower()] = key
        known[_mteb_name(key, tasktypes.get(key)).lower()] = key
    if name.lower() in known:
        return known[name.lower()]
    names = [*TOPICS, *tasktypes.MODULES, *(_mteb_name(k, tasktypes.get(k)) for k in tasktypes.MODULES)]
    close = list(dict.fromkeys(closest(name, names)))
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise MaebError(f"describe: unknown topic or task type {name!r}{hint} (topics: {', '.join(TOPICS)}, or a task type)")


def missing_docs() -> list[str]:
    """Everything the reference has no meaning for: the test fails on each."""
    missing = []
    for section, rows in field_rows().items():
        where = "[data]" if section == "data" else "top-level"
        missing += [f"{where} field {r['name']!r}: no meaning in maeb/spec/describe.py" for r in rows if not r["meaning"]]
        missing += [f"{where} field {r['name']!r}: no type (not in the dataclass)" for r in rows if not r["type"]]
    missing += [
        f"transform op {r['op']!r}: not in maeb/data/transforms.py's docstring" for r in transform_rows() if not r["meaning"]
    ]
    for row in derive_rows():
        if not row["meaning"]:
            missing.append(f"derive kind {row['kind']!r}: not in maeb/spec/derive.py's docstring")
        missing += [f"derive field {f['name']!r}: no meaning in DERIVE_MEANINGS" for f in row["fields"] if not f["meaning"]]
    for name in tasktypes.MODULES:
        missing += [f"{name} parameter {p['name']!r}: no doc" for p in type_info(name)["params"] if not p["documented"]]
    return missing


# --- rendering ---------------------------------------------------------------------------------


def _sides(sides: list[str]) -> str:
    return ", ".join(f"{s} ({SIDES[s]})" if s in SIDES else s for s in sides) or "nothing"


def _split_text(splits: list[str]) -> str:
    return ", ".join(splits)


def _wrap(text: str, indent: int, hanging: int = 0) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=" " * indent, subsequent_indent=" " * (indent + hanging)) or [""]


def _text_type(info: dict) -> list[str]:
    lines = [f"{info['name']} ({info['mteb']})"]
    lines += _wrap(info["summary"], 2)
    lines.append(f"  main score: {info['main_score']}")
    if info["metrics"] is not None:
        names, ks = _compact_metrics(info["metrics"])
        lines += _wrap("metrics: " + ", ".join(names) + (f" (k: {', '.join(ks)})" if ks else ""), 2, 4)
    for when, splits in info["splits"]:
        lines.append(f"  reads splits{' with ' + when if when else ''}: {_split_text(splits)}")
    for when, sides in info["needs"]:
        lines.append(f"  needs{' for ' + when if when else ''}: {_sides(sides)}")
    lines.append("  [protocol] parameters:" if info["params"] else "  [protocol] parameters: none")
    for p in info["params"]:
        extra = f"; alias {p['alias']}" if p["alias"] else ""
        lines.append(f"    {p['name']} = {_value(p['default'])}  ({p['allowed']}{extra})")
        lines += _wrap(p["meaning"], 8)
    return lines


def _text_fields() -> list[str]:
    rows = field_rows()
    lines = ["Spec fields (a TOML or JSON file per task; unknown fields are errors with a suggestion)", ""]
    for section, title in (("top", "top level"), ("data", "[data]")):
        lines.append(f"{title}:")
        for r in rows[section]:
            allowed = f"; {r['allowed']}" if r["allowed"] else ""
            lines.append(f"  {r['name']}: {r['type']} = {r['default']}")
            lines += _wrap(r["meaning"] + allowed, 6)
        lines.append("")
    return lines[:-1]


def _text_transforms() -> list[str]:
    lines = ["Transforms ([[transforms]] steps: op = NAME, plus splits = [...] to limit a step to some splits)", ""]
    for r in transform_rows():
        required, optional = ", ".join(r["required"]) or "none", ", ".join(r["optional"]) or "none"
        lines.append(f"  {r['op']}: required: {required}; optional: {optional}")
        lines += _wrap(r["meaning"], 6)
    return lines


def _text_derive() -> list[str]:
    lines = ["Derive ([derive] kind = NAME: builds a task type's data from a labelled table; every draw is seeded)", ""]
    for r in derive_rows():
        lines.append(f"  {r['kind']} (builds {', '.join(r['types'])} data)")
        lines += _wrap(r["meaning"], 6)
        for f in r["fields"]:
            rule = f" ({f['allowed']})" if f["allowed"] else ""
            lines += _wrap(f"{f['name']}{rule}: {f['meaning']}", 6, 4)
    return lines


def _text_overview() -> list[str]:
    lines = ["Task types (python -m maeb describe TYPE for one, by maeb or mteb name):", ""]
    infos = [type_info(n) for n in tasktypes.MODULES]
    width = max(len(i["name"]) for i in infos)
    mteb_width = max(len(i["mteb"]) for i in infos)
    for info in infos:
        needs = "+".join(info["needs"][0][1])
        lines.append(f"  {info['name']:{width}}  {info['mteb']:{mteb_width}}  main score {info['main_score']}; needs {needs}")
    lines += ["", "Topics: python -m maeb describe spec | transforms | derive | types (every type in full)"]
    return lines


def text(topic: str | None = None) -> str:
    """The reference for the terminal: one topic, one task type, or (None) an overview."""
    if topic is None:
        lines = _text_overview()
    elif topic == "spec":
        lines = _text_fields()
    elif topic == "transforms":
        lines = _text_transforms()
    elif topic == "derive":
        lines = _text_derive()
    elif topic == "types":
        lines = []
        for name in tasktypes.MODULES:
            lines += _text_type(type_info(name)) + [""]
        lines = lines[:-1]
    else:
        lines = _text_type(type_info(find_type(topic)))
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    """A value in code style; the words standing for no value (required, unset) stay words."""
    return f"`{text}`" if text and text not in ("required", "unset") else text


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return out + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]


def markdown() -> str:
    """docs/spec-reference.md."""
    out = [
        "# Task spec reference",
        "",
        "<!-- Generated by `python -m maeb describe --markdown > docs/spec-reference.md` from maeb's registries"
        " (maeb/spec/describe.py); do not edit. tests/test_describe.py checks that it is current. -->",
        "",
        "A task is one TOML (or JSON) file: top-level fields, a `[data]` table saying where the data is,",
        "optional `[[transforms]]` steps and a `[derive]` table shaping it, and a `[protocol]` table of the",
        "task type's parameters. Unknown fields are errors with a suggestion. Types are those of the parsed",
        "values (`dict` is a TOML table, `list` an array). `examples/` holds a spec for every task type;",
        "`python -m maeb describe TYPE` prints one type's section in the terminal.",
        "",
        "## Top-level fields",
        "",
    ]
    rows = field_rows()
    for section, title in (("top", None), ("data", "## `[data]` fields")):
        if title:
            out += [title, ""]
        out += _table(
            ["field", "type", "default", "meaning"],
            [
                [
                    _code(r["name"]),
                    _code(r["type"]),
                    _code(r["default"]),
                    r["meaning"] + (f"; {r['allowed']}" if r["allowed"] else ""),
                ]
                for r in rows[section]
            ],
        )
        out.append("")
    out += [
        "## Transforms (`[[transforms]]`)",
        "",
        "Each step names its `op`; `splits = [...]` limits it to some splits. Applied per split after loading, in order.",
        "",
    ]
    out += _table(
        ["op", "required", "optional", "what it does"],
        [
            [_code(r["op"]), ", ".join(map(_code, r["required"])), ", ".join(map(_code, r["optional"])), r["meaning"]]
            for r in transform_rows()
        ],
    )
    out += [
        "",
        "## Derive (`[derive]`)",
        "",
        "`kind` names what to build from a labelled table (local data with only clips and labels); every draw is seeded.",
        "",
    ]
    for r in derive_rows():
        out += [f"### `{r['kind']}`", "", f"{r['meaning']}", "", f"Builds data for: {', '.join(map(_code, r['types']))}.", ""]
        out += _table(["field", "allowed", "meaning"], [[_code(f["name"]), f["allowed"], f["meaning"]] for f in r["fields"]])
        out.append("")
    out += ["## Task types", ""]
    infos = [type_info(n) for n in tasktypes.MODULES]
    out += _table(
        ["type", "name in results (mteb's)", "main score", "needs"],
        [
            [f"[`{i['name']}`](#{i['name']})", _code(i["mteb"]), _code(i["main_score"]), ", ".join(i["needs"][0][1])]
            for i in infos
        ],
    )
    out.append("")
    for info in infos:
        out += [f"### {info['name']}", "", f"{info['summary']} Results name the type `{info['mteb']}`.", ""]
        out.append(f"- main score: `{info['main_score']}`")
        if info["metrics"] is not None:
            names, ks = _compact_metrics(info["metrics"])
            out.append("- metrics: " + ", ".join(map(_code, names)) + (f", for k in {', '.join(ks)}" if ks else ""))
        for when, splits in info["splits"]:
            out.append(f"- reads splits{' with `' + when + '`' if when else ''}: {', '.join(map(_code, splits))}")
        for when, sides in info["needs"]:
            out.append(f"- needs{' for ' + when if when else ''}: {_sides(sides)}")
        out.append("")
        if info["params"]:
            out += _table(
                ["parameter", "default", "allowed", "meaning"],
                [
                    [
                        _code(p["name"]) + (f" (alias `{p['alias']}`)" if p["alias"] else ""),
                        _code(_value(p["default"])),
                        p["allowed"],
                        p["meaning"],
                    ]
                    for p in info["params"]
                ],
            )
        else:
            out.append("No protocol parameters.")
        out.append("")
    return "\n".join(out[:-1]) + "\n"
