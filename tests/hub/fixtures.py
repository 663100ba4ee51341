"""Dataset repositories as the hub serves them, for every hub repository of maeb's task catalog.

`build_dataset_repo(repo, revision, dest)` writes a folder that is that repository at that revision:
a README.md whose YAML front matter has `configs:` (data_files per split) and `dataset_info:`
(features, audio and ClassLabel names included), and parquet files at the paths the card names.
The layout comes from the repository's public dataset card where one was found (the facts are
recorded in tests/hub/cards/*.json, see docs/hub-layouts.md); otherwise `variant` picks one of the
layouts mteb 2.26.24's loader accepts for the task type (`variants_for`). The rows are tiny
generated clips (a tone whose pitch is the row's class) with labels, ids, texts and qrels such that
every catalog task reading the repository loads and evaluates: enough clips per class for
cross-validation and 8-shot probes, qrels that name existing ids, candidates for reranking, every
subset of a multilingual task, both audio columns of a pair task, and the rows each task's own
transforms exist to remove.

`catalog_repos()` lists the repositories with their pinned revision, the catalog tasks that read
them and the variants the builder writes."""

from __future__ import annotations

import io
import json
import string
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
CARDS = Path(__file__).resolve().parent / "cards"

K = 3  # classes per label column
PER_CLASS = 12  # rows per class in a split: KFold(5) folds still hold 8 per class to train on
PER_CLASS_MORE = 2  # rows per class in the subsets after the first three of a multilingual task
N_DOCS, N_QUERIES, N_CANDIDATES = 30, 10, 13
RATE = 16000
SECONDS = 0.25

TABLE_VARIANTS = ("configs", "data-dir", "class-label")
RETRIEVAL_VARIANTS = ("test-split", "corpus-split", "query-qrels", "queries-qrels", "underscore-id", "titled")
PREFIXED_VARIANTS = ("prefixed", "prefixed-query")  # retrieval configs of tasks with subsets
VARIANT_NOTES = {
    "card": "the layout of the repository's dataset card (tests/hub/cards)",
    "configs": "README configs: one config per subset ('default' when there is none), files {config}/{split}-*.parquet",
    "data-dir": "no configs: in the README; datasets finds data/{split}-*.parquet by name (one-config repositories)",
    "class-label": "as 'configs', with single-label columns stored as ClassLabel (ids on disk, names in the card)",
    "test-split": "configs corpus, queries, default (and top_ranked) all under the evaluation split",
    "corpus-split": "configs corpus (its only split named 'corpus'), query and qrels (MACS_t2a's card)",
    "query-qrels": "configs corpus, query, qrels (and top_ranked) under the evaluation split",
    "queries-qrels": "configs corpus, queries, qrels (and top_ranked) under the evaluation split (the reranking cards)",
    "underscore-id": "as 'test-split', with BEIR's '_id' id columns in corpus and queries",
    "titled": "as 'test-split', text documents with a 'title' column beside 'text'",
    "prefixed": "configs {subset}-corpus, {subset}-queries, {subset}-qrels (and {subset}-top_ranked) per subset",
    "prefixed-query": "as 'prefixed', with one unprefixed 'query' config that every subset reads",
    "webdataset": "tar shards {subset}/{split}_0000.tar of {key}.flac and {key}.json members",
    "hub-files": "a JSON list of rows and the audio files it names",
}


# -- the catalog --------------------------------------------------------------------------------
@dataclass(frozen=True)
class RepoRef:
    """A hub dataset repository the catalog reads: its pinned revision (None: the catalog pins
    none), the catalog tasks that read it, whether its card was found and the variants
    build_dataset_repo writes for it (the first is the default)."""

    repo: str
    revision: str | None
    tasks: tuple[str, ...]
    source: str  # the spec's data.source: hub (parquet), webdataset, hub-files
    card: bool
    variants: tuple[str, ...]


@cache
def catalog_specs() -> dict[str, object]:
    """Every catalog task spec read from a hub repository (tasks/maeb and tasks/generative)."""
    from maeb.spec import catalog

    out = {}
    for path in sorted(set(catalog.task_files().values())):
        if path.parent.name not in ("maeb", "generative"):
            continue
        spec = catalog.load_spec_cached(path)
        if spec.data.source in ("hub", "webdataset", "hub-files") and "$" not in spec.data.path:
            out[spec.name] = spec
    return out


def _specs_of(repo: str, revision: str | None) -> list:
    specs = [s for s in catalog_specs().values() if s.data.path == repo and s.data.revision == revision]
    if not specs:
        known = sorted({f"{s.data.path}@{s.data.revision}" for s in catalog_specs().values() if s.data.path == repo})
        hint = f"; the catalog reads it at {', '.join(known)}" if known else ""
        raise KeyError(f"no catalog task reads {repo}@{revision}{hint}")
    return sorted(specs, key=lambda s: s.name)


def catalog_repos() -> list[RepoRef]:
    """Every hub dataset repository of the task catalog, with the tasks that read it."""
    keys = sorted({(s.data.path, s.data.revision) for s in catalog_specs().values()}, key=lambda k: (k[0], k[1] or ""))
    out = []
    for repo, revision in keys:
        specs = _specs_of(repo, revision)
        source = specs[0].data.source
        out.append(
            RepoRef(
                repo, revision, tuple(s.name for s in specs), source, load_card(repo) is not None, variants_for(repo, revision)
            )
        )
    return out


def variants_for(repo: str, revision: str | None) -> tuple[str, ...]:
    specs = _specs_of(repo, revision)
    source = specs[0].data.source
    if source != "hub":
        return (source,)
    if _is_retrieval_layout(specs):
        # a title only exists beside text documents
        generic = tuple(v for v in RETRIEVAL_VARIANTS if v != "titled" or specs[0].category.endswith("2t"))
        # the default without a card follows the cards of its kind: the *_t2a/*_a2t repositories
        # found (MACS, LibriTTS, MusicCaps) keep the corpus under split 'corpus', the reranking
        # ones (ESC50, VocalSound) use queries and qrels under 'test'
        first = "queries-qrels" if any(s.type == "reranking" for s in specs) else None
        first = "corpus-split" if repo.lower().endswith(("_t2a", "_a2t")) else first
        if first:
            generic = (first,) + tuple(v for v in generic if v != first)
    else:
        named = len(_table_configs(specs)) > 1 or any(s.data.config is not None for s in specs)
        # text maps and filters compare values: mteb's own transforms fail on ClassLabel ids there
        compared = any(step["op"] in ("map", "filter") for s in specs for step in s.transforms)
        labelled = any(not s.derive for s in specs)
        generic = tuple(
            v
            for v in TABLE_VARIANTS
            if not (v == "data-dir" and named) and not (v == "class-label" and (compared or not labelled))
        )
    return (("card",) if load_card(repo) is not None else ()) + generic


def _is_retrieval_layout(specs) -> bool:
    return any(s.data.layout == "retrieval" for s in specs)


# -- cards --------------------------------------------------------------------------------------
def card_path(repo: str) -> Path:
    return CARDS / (repo.replace("/", "__") + ".json")


@cache
def _card_text(repo: str) -> str | None:
    path = card_path(repo)
    return path.read_text(encoding="utf-8") if path.exists() else None


def load_card(repo: str) -> dict | None:
    """The recorded facts of a repository's dataset card (None when no card was found)."""
    text = _card_text(repo)
    return json.loads(text) if text is not None else None


# -- layouts ------------------------------------------------------------------------------------
@dataclass
class ConfigLayout:
    name: str
    data_files: dict[str, str]  # split -> path pattern, as the card's configs: list it
    features: dict[str, object]  # column -> type (see to_feature)
    default: bool = False
    files: dict[str, list[str]] = field(default_factory=dict)  # split -> file names, when the tree was seen


@dataclass
class Layout:
    configs: list[ConfigLayout]
    declare_configs: bool = True  # False: the README has no configs: and datasets finds the files by name
    variant: str = "configs"


def to_feature(kind):
    """A column type as the cards record it: "string", "int64", "audio", ...; {"class_label":
    [names]}; {"list": type}; {"struct": {field: type}}."""
    from datasets import Audio, ClassLabel, List, Value

    if kind == "audio":
        return Audio()
    if isinstance(kind, str):
        return Value(kind)
    if "audio" in kind:
        return Audio(sampling_rate=kind["audio"].get("sampling_rate"))
    if "class_label" in kind:
        return ClassLabel(names=list(kind["class_label"]))
    if "list" in kind:
        return List(to_feature(kind["list"]))
    if "struct" in kind:
        return {k: to_feature(v) for k, v in kind["struct"].items()}
    raise ValueError(f"unknown column type {kind!r}")


def card_layout(card: dict) -> Layout:
    configs = [
        ConfigLayout(c["name"], dict(c["data_files"]), dict(c["features"]), c.get("default", False), dict(c.get("files", {})))
        for c in card["configs"] + card.get("inferred_configs", [])
    ]
    return Layout(configs, declare_configs=card.get("declare_configs", True), variant="card")


def layout_for(repo: str, revision: str | None, variant: str | None = None) -> Layout:
    """The layout build_dataset_repo writes: the card's, or the named variant's."""
    specs = _specs_of(repo, revision)
    allowed = variants_for(repo, revision)
    variant = variant or allowed[0]
    if variant not in allowed:
        raise ValueError(f"{repo}: variant {variant!r} is not one of {', '.join(allowed)}")
    if variant == "card":
        return card_layout(load_card(repo))
    if _is_retrieval_layout(specs):
        return _retrieval_layout(specs, variant)
    return _table_layout(specs, variant)


def _retrieval_layout(specs, variant: str) -> Layout:
    spec = specs[0]
    reranking = any(s.type == "reranking" for s in specs)
    return retrieval_layout(spec.category, variant, spec.data.eval_splits[0], reranking)


def retrieval_layout(
    category: str, variant: str, split: str = "test", reranking: bool = False, subsets: tuple[str, ...] = ("default",)
) -> Layout:
    """A retrieval repository's configs in one of RETRIEVAL_VARIANTS (or, for tasks with subsets,
    PREFIXED_VARIANTS: `{subset}-corpus` etc.; 'prefixed-query' shares one unprefixed `query`
    config among the subsets, which mteb's loader reads for every subset)."""
    queries = "query" if variant in ("corpus-split", "query-qrels") else "queries"
    qrels = "qrels" if variant in ("corpus-split", "query-qrels", "queries-qrels") else "default"
    id_col = "_id" if variant == "underscore-id" else "id"
    text_docs, text_queries = category.endswith("2t"), category.startswith("t2")
    corpus_features = {id_col: "string"}
    if text_docs and variant == "titled":
        corpus_features["title"] = "string"
    corpus_features["text" if text_docs else "audio"] = "string" if text_docs else "audio"
    query_features = {id_col: "string", ("text" if text_queries else "audio"): ("string" if text_queries else "audio")}
    corpus_split = "corpus" if variant == "corpus-split" else split
    configs = []
    for subset in subsets:
        prefix = "" if subset == "default" else f"{subset}-"
        q_name = "query" if variant == "prefixed-query" else prefix + queries
        r_name = prefix + "qrels" if prefix else qrels
        configs.append(ConfigLayout(prefix + "corpus", {corpus_split: f"{prefix}corpus/{corpus_split}-*"}, corpus_features))
        if not any(c.name == q_name for c in configs):
            configs.append(ConfigLayout(q_name, {split: f"{q_name}/{split}-*"}, query_features))
        qrels_features = {"query-id": "string", "corpus-id": "string", "score": "int64"}
        configs.append(ConfigLayout(r_name, {split: f"{r_name}/{split}-*"}, qrels_features))
        if reranking:
            ranked = {"query-id": "string", "corpus-ids": {"list": "string"}}
            configs.append(ConfigLayout(prefix + "top_ranked", {split: f"{prefix}top_ranked/{split}-*"}, ranked))
    return Layout(configs, variant=variant)


def write_retrieval_repo(
    dest: Path,
    category: str,
    variant: str,
    split: str = "test",
    reranking: bool = False,
    subsets: tuple[str, ...] = ("default",),
    seed: int = 0,
) -> Path:
    """A retrieval repository outside the catalog (for the loader tests): `category` a2a, a2t or
    t2a; `variant` one of RETRIEVAL_VARIANTS or PREFIXED_VARIANTS."""
    return _write(
        Path(dest),
        retrieval_layout(category, variant, split, reranking, tuple(subsets)),
        lambda c, s: _retrieval_rows(category, c, seed),
    )


def _table_configs(specs) -> dict[str, set[str]]:
    """config -> the repository splits the tasks read from it."""
    from maeb.tasktypes import get as get_type

    out: dict[str, set[str]] = {}
    for spec in specs:
        d = spec.data
        configs = [d.config] if d.config is not None or d.subset_column else d.subsets
        for config in configs:
            for split in get_type(spec.type).splits(spec):
                out.setdefault(config or "default", set()).add(d.split_names.get(split, split))
    return out


def _table_layout(specs, variant: str) -> Layout:
    plan = _Plan(specs, None)
    configs = []
    for config, splits in _table_configs(specs).items():
        features = plan.column_types(class_label=variant == "class-label")
        if variant == "data-dir":
            data_files = {split: f"data/{split}-*" for split in sorted(splits)}
        else:
            data_files = {split: f"{config}/{split}-*" for split in sorted(splits)}
        configs.append(ConfigLayout(config, data_files, features))
    return Layout(configs, declare_configs=variant != "data-dir", variant=variant)


# -- content -------------------------------------------------------------------------------------
def class_freq(c: int) -> float:
    return 220.0 * (2.2 ** (c % 6))


CAPTIONS = [
    "a low steady hum",
    "a mid pulsing whistle",
    "a high bright chirp",
    "a rattling drone",
    "a hissing sweep",
    "a soft beep",
]


def caption(c: int) -> str:
    return CAPTIONS[c % len(CAPTIONS)]


def clip_bytes(c: int, seed: int, fmt: str = "wav", samples: int | None = None) -> bytes:
    """A short noisy tone at the class's pitch: WAV (16-bit PCM) or FLAC, which libsndfile and
    FFmpeg decode to the same samples."""
    import soundfile as sf

    rng = np.random.default_rng(seed)
    n = int(SECONDS * RATE) + int(rng.integers(0, RATE // 20)) if samples is None else samples
    t = np.arange(n) / RATE
    x = 0.5 * np.sin(2 * np.pi * class_freq(c) * rng.uniform(0.97, 1.03) * t) + 0.05 * rng.standard_normal(n)
    buf = io.BytesIO()
    sf.write(buf, x.astype(np.float32), RATE, format="FLAC" if fmt == "flac" else "WAV", subtype="PCM_16")
    return buf.getvalue()


def _source_column(spec, column: str) -> tuple[str, list[dict]]:
    """Follow renames and maps back to the column the repository holds; the maps on the way."""
    maps = []
    for step in reversed(spec.transforms):
        if step["op"] in ("rename", "map") and step.get("to", step["column"]) == column:
            if step["op"] == "map":
                maps.append(step)
            column = step["column"]
    return column, maps


def _mapped_source_values(maps: list[dict]) -> list | None:
    """Source values, one per class, that the spec's maps turn into distinct classes."""
    if not maps:
        return None
    step = maps[-1]  # the first map applied to the source column
    seen, out = set(), []
    for key, value in step["mapping"].items():
        if str(value) in seen:
            continue
        seen.add(str(value))
        source = int(key) if key.isdigit() else key
        out.append(source.capitalize() if step.get("lowercase") and isinstance(source, str) else source)
    return out


@dataclass
class _Label:
    """The values one task's label column holds in the repository: one per class, and the odd
    values its transforms drop (each becomes an extra row)."""

    column: str
    values: list
    multilabel: bool = False
    extra: list = field(default_factory=list)  # (value, splits or None)


class _Plan:
    """What the tasks reading one repository need from its rows."""

    def __init__(self, specs, card: dict | None):
        self.specs = specs
        self.card = card
        self.audio: list[str] = []
        self.labels: dict[str, _Label] = {}
        self.invalid: list[list] = []  # per labelled task: the splits of its drop_invalid_audio steps
        self.derived: dict[str, str] = {}  # column -> kind: index, path, id, text, relevance, subset, line_indices
        for spec in specs:
            for column in spec.data.audio_columns:
                if column not in self.audio:
                    self.audio.append(column)
            if spec.derive.get("kind") == "rows":
                self._derived(spec)
            elif spec.type not in ("retrieval", "reranking") and spec.data.source == "hub":
                self._label(spec)

    def _derived(self, spec) -> None:
        d = spec.derive
        for _, name, _, _ in string.Formatter().parse(d.get("id_template") or ""):
            if name:
                base = name.split("[")[0]
                self.derived[base] = base if base in ("index", "line_indices", "id") else "path"
        self.derived[d.get("text_column", "text")] = "text"
        if d.get("relevance") not in (None, "self", d.get("text_column", "text")):
            self.derived[d["relevance"]] = "relevance"
        if spec.data.subset_column:
            self.derived[spec.data.subset_column] = "subset"

    def _label(self, spec) -> None:
        column, maps = _source_column(spec, spec.data.label_column)
        values = _mapped_source_values(maps)
        if values is None:
            values = list(range(K)) if spec.type in ("zeroshot", "pair_classification") else [f"class{c}" for c in range(K)]
        label = self.labels.setdefault(column, _Label(column, values[:K], multilabel=spec.type == "multilabel"))
        if spec.type == "zeroshot":  # zero-shot labels index the candidate prompts
            label.values = list(range(K))
        self.invalid.append([step.get("splits") for step in spec.transforms if step["op"] == "drop_invalid_audio"])
        for step in spec.transforms:
            splits = step.get("splits")
            if step["op"] == "filter" and step["column"] == column and "drop" in step:
                label.extra += [(v, splits) for v in step["drop"]]
            elif step["op"] == "filter" and step.get("drop_empty") and _source_column(spec, step["column"])[0] == column:
                label.extra.append(([] if label.multilabel else "", splits))
            elif step["op"] == "map" and step["column"] == column and step.get("unmapped") == "drop":
                label.extra.append(("Unmapped", splits))

    def drops_invalid_audio(self, split: str) -> bool:
        """Undecodable and too short clips only go where every task reading the split drops them."""
        return bool(self.invalid) and all(any(not s or split in s for s in steps) for steps in self.invalid)

    def column_types(self, class_label: bool = False) -> dict[str, object]:
        """Column types of a table config when no card declares them."""
        out: dict[str, object] = {c: "audio" for c in self.audio}
        for column, label in self.labels.items():
            first = label.values[0]
            base = "int64" if isinstance(first, int) else "string"
            if class_label and base == "string" and not label.multilabel:
                names = sorted({str(v) for v in label.values} | {str(v) for v, _ in label.extra if v not in ("", [])})
                out[column] = {"class_label": names}
            else:
                out[column] = {"list": base} if label.multilabel else base
        for column, kind in self.derived.items():
            out[column] = {"index": "int64", "id": "int64", "line_indices": {"list": "int64"}}.get(kind, "string")
        if any(s.type == "pair_classification" for s in self.specs):
            out.setdefault("label", "int64")
        return out


def _adapt(value, kind, c: int):
    """A planned value as a column of the given type stores it."""
    if isinstance(kind, dict) and "class_label" in kind:
        names = list(kind["class_label"])
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
            return value
        if str(value) in names:
            return names.index(str(value))
        return c % len(names)
    if isinstance(kind, dict) and "list" in kind:
        items = value if isinstance(value, list) else [value]
        return [_adapt(v, kind["list"], c) for v in items]
    if kind in ("int64", "int32", "int16", "int8", "uint8"):
        try:
            return int(value)
        except (TypeError, ValueError):
            return c
    if kind in ("float32", "float64"):
        return float(c)
    if kind == "bool":
        return bool(c % 2)
    if kind == "string":
        return "" if value is None else str(value)
    return value


def _filler(column: str, kind, i: int, seed: int):
    if kind == "audio" or (isinstance(kind, dict) and "audio" in kind):
        return {"bytes": clip_bytes(i % K, seed + i), "path": f"{column}_{i}.wav"}
    if isinstance(kind, dict) and "struct" in kind:
        return {k: _filler(k, v, i, seed) for k, v in kind["struct"].items()}
    if isinstance(kind, dict) and "list" in kind:
        return []
    if isinstance(kind, dict) and "class_label" in kind:
        return i % len(kind["class_label"])
    if kind == "string":
        return "text" if column == "modality" else f"{column}-{i}"
    return _adapt(i, kind, i)


def _audio_cell(c: int, i: int, seed: int, column: str) -> dict:
    fmt = "flac" if i % 3 == 2 else "wav"
    return (
        {"bytes": clip_bytes(c, seed * 7919 + i), "path": f"{column}_{i}.{fmt}"}
        if fmt == "wav"
        else {
            "bytes": clip_bytes(c, seed * 7919 + i, "flac"),
            "path": f"{column}_{i}.flac",
        }
    )


def _table_rows(plan: _Plan, features: dict, split: str, subset: str, n_per: int, seed: int) -> dict[str, list]:
    """Rows of one config/split of a table repository: K classes x n_per, then the rows the
    tasks' transforms exist to remove."""
    pair = any(s.type == "pair_classification" for s in plan.specs)
    n = K * n_per
    classes = [i % K for i in range(n)]
    cols: dict[str, list] = {c: [] for c in features}
    for i, c in enumerate(classes):
        for column, kind in features.items():
            cols[column].append(_cell(plan, column, kind, i, c, split, subset, seed, pair))
    for label in plan.labels.values():
        if label.column not in features:
            continue
        for value, splits in label.extra:
            if splits and split not in splits:
                continue
            kind = features[label.column]
            if (
                isinstance(kind, dict)
                and "class_label" in kind
                and str(value) not in kind["class_label"]
                and value not in ("", [])
            ):
                continue  # a ClassLabel column cannot hold it
            i = len(cols[label.column])
            for column, ckind in features.items():
                cell = _cell(plan, column, ckind, i, 0, split, subset, seed, pair)
                cols[column].append(_adapt(value, ckind, 0) if column == label.column else cell)
    if plan.drops_invalid_audio(split):
        # an empty clip (mteb: torchcodec cannot decode it) and one of 160 samples; bytes that are
        # no audio at all would stop mteb's own filters, which catch only the empty clip's error
        bad = [clip_bytes(0, seed, samples=0), clip_bytes(0, seed, samples=160)]
        for data in bad:
            i = len(next(iter(cols.values())))
            for column, ckind in features.items():
                cell = _cell(plan, column, ckind, i, 0, split, subset, seed, pair)
                cols[column].append({"bytes": data, "path": f"bad_{i}.wav"} if column in plan.audio else cell)
    return cols


def _cell(plan: _Plan, column: str, kind, i: int, c: int, split: str, subset: str, seed: int, pair: bool):
    if pair and column in plan.audio:
        other = c if i % 2 else (c + 1) % K
        return _audio_cell(c if column == plan.audio[0] else other, i, seed + (0 if column == plan.audio[0] else 500), column)
    if pair and column == "label":
        return i % 2
    if column in plan.audio:
        return _audio_cell(c, i, seed, column)
    if column in plan.labels:
        label = plan.labels[column]
        value = label.values[c % len(label.values)]
        if label.multilabel:
            value = [value] + ([label.values[(c + 1) % len(label.values)]] if i % 3 == 0 else [])
        return _adapt(value, kind, c)
    if column in plan.derived:
        kind_of = plan.derived[column]
        value = {
            "index": i,
            "id": 1000 + i // 2,  # FLEURS-like: one sentence id for two recordings
            "line_indices": [i, i + 1],
            "path": f"{subset}-{column}-{i}",
            "text": f"{caption(c)}. another {caption(c)}." if column == "text" and _splits_text(plan) else caption(c),
            "relevance": f"artist{c}",
            "subset": subset,
        }[kind_of]
        return _adapt(value, kind, c)
    return _filler(column, kind, i, seed)


def _splits_text(plan: _Plan) -> bool:
    return any(s.derive.get("split_text") for s in plan.specs)


def _retrieval_rows(category: str, config: ConfigLayout, seed: int) -> dict[str, list]:
    name = config.name
    role = next(
        (r for r in ("top_ranked", "corpus", "queries", "query", "qrels", "default") if name == r or name.endswith("-" + r)), None
    )
    features = config.features
    cols: dict[str, list] = {c: [] for c in features}
    text_docs, text_queries = category.endswith("2t"), category.startswith("t2")
    # documents of each subset get their own ids and clips, so reading another subset's shows
    tag = name[: -len(role)] if role and name.endswith(role) else ""
    seed += sum(tag.encode()) * 131
    if role == "corpus":
        for d in range(N_DOCS):
            c = d % 6
            for column, kind in features.items():
                if column in ("id", "_id"):
                    value = f"{tag}d{d}"
                elif column == "text" and text_docs:
                    value = (" " if d % 7 == 1 else "") + caption(c)
                elif column == "title":
                    value = "sound" if d % 4 == 0 else ""
                elif column == "modality":
                    value = "text" if text_docs else "audio"
                elif kind == "audio":
                    value = _audio_cell(c, d, seed, column)
                else:
                    value = _filler(column, kind, d, seed)
                cols[column].append(value if kind == "audio" else _adapt(value, kind, c))
    elif role in ("queries", "query"):
        for q in range(N_QUERIES + 1):  # the last has no qrels: mteb drops it
            c = q % 6
            for column, kind in features.items():
                if column in ("id", "_id"):
                    value = f"q{q}"
                elif column == "text" and text_queries:
                    value = caption(c)
                elif column == "modality":
                    value = "text" if text_queries else "audio"
                elif kind == "audio":
                    value = _audio_cell(c, 100 + q, seed, column)
                else:
                    value = _filler(column, kind, q, seed)
                cols[column].append(value if kind == "audio" else _adapt(value, kind, c))
    elif role in ("qrels", "default"):
        pairs = [(q, d, 1) for q in range(N_QUERIES) for d in range(q % 6, N_DOCS, 6)]
        pairs += [(1, 0, 0), (0, 0, 2)]  # a zero score, and a repeated pair whose last score counts
        for q, d, score in pairs:
            row = {"query-id": f"q{q}", "corpus-id": f"{tag}d{d}", "score": score}
            for column, kind in features.items():
                cols[column].append(_adapt(row[column], kind, 0) if column in row else _filler(column, kind, q, seed))
    elif role == "top_ranked":
        for q in range(N_QUERIES):
            relevant = list(range(q % 6, N_DOCS, 6))
            others = [d for d in range(N_DOCS) if d not in relevant]
            cands = relevant + others[: N_CANDIDATES - len(relevant)]
            rng = np.random.default_rng(seed + q)
            rng.shuffle(cands)
            row = {"query-id": f"q{q}", "corpus-ids": [f"{tag}d{d}" for d in cands]}
            for column, kind in features.items():
                cols[column].append(_adapt(row[column], kind, 0) if column in row else _filler(column, kind, q, seed))
    else:
        raise ValueError(f"config {config.name!r} is not a retrieval config (corpus, queries, qrels, top_ranked)")
    return cols


# -- writing ------------------------------------------------------------------------------------
def concrete_files(pattern: str, files: list[str] | None = None) -> list[str]:
    """File names matching a data_files pattern (the tree's names when known)."""
    if files:
        return list(files)
    if "*" not in pattern:
        return [pattern]
    name = pattern.replace("*", "00000-of-00001", 1).replace("*", "")
    return [name if name.endswith(".parquet") else name + ".parquet"]


def _write_parquet(path: Path, columns: dict[str, list], features) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    schema = features.arrow_schema
    table = pa.Table.from_pydict({k: columns[k] for k in features}, schema=schema)
    pq.write_table(table, str(path))
    return table.nbytes


def _readme(layout: Layout, sizes: dict[tuple[str, str], tuple[int, int]]) -> str:
    import yaml
    from datasets import Features

    info = []
    for config in layout.configs:
        features = Features({k: to_feature(v) for k, v in config.features.items()})
        info.append(
            {
                "config_name": config.name,
                "features": features._to_yaml_list(),
                "splits": [
                    {"name": s, "num_bytes": sizes[(config.name, s)][1], "num_examples": sizes[(config.name, s)][0]}
                    for s in config.data_files
                ],
            }
        )
    meta: dict = {}
    if layout.declare_configs:
        meta["configs"] = []
        for config in layout.configs:
            entry = {"config_name": config.name}
            if config.default:
                entry["default"] = True
            entry["data_files"] = [{"split": s, "path": p} for s, p in config.data_files.items()]
            meta["configs"].append(entry)
    meta["dataset_info"] = (
        info if len(info) > 1 or layout.declare_configs else {k: v for k, v in info[0].items() if k != "config_name"}
    )
    body = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    return f"---\n{body}---\n\n# Test fixture ({layout.variant} layout)\n\nTiny generated audio; not the real data.\n"


def build_dataset_repo(repo: str, revision: str | None, dest: Path, seed: int = 0, variant: str | None = None) -> Path:
    """Write `repo` at `revision` into `dest` as the hub would serve it (see the module docstring)
    and return dest. `variant` picks a layout of variants_for(repo, revision); the default is the
    card's layout when a card was found."""
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty: a repository folder must hold only its own files")
    specs = _specs_of(repo, revision)
    if specs[0].data.source != "hub":
        return _build_files_repo(specs, dest, seed)
    layout = layout_for(repo, revision, variant)
    if _is_retrieval_layout(specs):
        return _write(dest, layout, lambda config, split: _retrieval_rows(specs[0].category, config, seed))
    plan = _Plan(specs, load_card(repo))
    subsets_of = _subset_configs(specs)
    order = {c.name: n for n, c in enumerate(layout.configs)}

    def rows(config: ConfigLayout, split: str) -> dict[str, list]:
        n = order[config.name]
        cols: dict[str, list] = {c: [] for c in config.features}
        for j, subset in enumerate(subsets_of.get(config.name, [config.name])):
            per = PER_CLASS if j < 3 and n < 3 else PER_CLASS_MORE
            part = _table_rows(plan, config.features, split, subset, per, seed + 1009 * n + 97 * j + len(split))
            for c in cols:
                cols[c] += part[c]
        return cols

    return _write(dest, layout, rows)


def _write(dest: Path, layout: Layout, rows) -> Path:
    """Parquet files and README of a layout; rows(config, split) gives each split's columns."""
    from datasets import Features

    dest.mkdir(parents=True, exist_ok=True)
    sizes: dict[tuple[str, str], tuple[int, int]] = {}
    for config in layout.configs:
        features = Features({k: to_feature(v) for k, v in config.features.items()})
        for split, pattern in config.data_files.items():
            cols = rows(config, split)
            n_rows = len(next(iter(cols.values()))) if cols else 0
            names = concrete_files(pattern, config.files.get(split))
            nbytes = 0
            for name, part in zip(names, np.array_split(np.arange(n_rows), len(names))):
                nbytes += _write_parquet(dest / name, {k: [v[i] for i in part] for k, v in cols.items()}, features)
            sizes[(config.name, split)] = (n_rows, nbytes)
    (dest / "README.md").write_text(_readme(layout, sizes), encoding="utf-8")
    return dest


def _subset_configs(specs) -> dict[str, list[str]]:
    """config -> the subsets whose rows it holds (several when a column names the subset)."""
    out: dict[str, list[str]] = {}
    for spec in specs:
        if spec.data.subset_column:
            out.setdefault(spec.data.config, [])
            out[spec.data.config] += [s for s in spec.data.subsets if s not in out[spec.data.config]]
    return out


MECAT_SUBSETS = ("S00", "0M0", "00A", "SMA")  # MECAT's shard folders (speech, music, sound, mixed)


def _build_files_repo(specs, dest: Path, seed: int) -> Path:
    """Repositories of files rather than tables: WebDataset shards (MECAT) or a JSON list of
    rows and the audio it names (AIR-Bench). They load through maeb's webdataset and hub-files
    readers; scoring needs each benchmark's own references, which these do not imitate."""
    dest.mkdir(parents=True, exist_ok=True)
    source = specs[0].data.source
    if source == "webdataset":
        for n, subset in enumerate(MECAT_SUBSETS):
            members = [(f"{subset}_{i:04d}", clip_bytes(i % K, seed + 10 * n + i, "flac"), {"subset": subset}) for i in range(3)]
            for split in sorted({sp for s in specs for sp in s.data.eval_splits}):
                _write_shard(dest / subset / f"{split}_0000-0000000.tar.gz", members)
    else:
        for spec in specs:
            rows = []
            for i in range(K * 2):
                row = {
                    "path": f"clip{i}.wav",
                    "question": f"What is heard in clip {i}?",
                    "answer_gt": caption(i % K),
                    "task_name": "sound_QA",
                    "dataset_name": "fixture",
                    "uniq_id": i,
                }
                if "Foundation" in spec.data.meta_file:
                    row.update({"choice_a": caption(0), "choice_b": caption(1), "choice_c": caption(2)})
                rows.append(row)
                audio = dest / spec.data.audio_template.format(**row)
                audio.parent.mkdir(parents=True, exist_ok=True)
                audio.write_bytes(clip_bytes(i % K, seed + i))
            (dest / spec.data.meta_file).write_text(json.dumps(rows), encoding="utf-8")
    (dest / "README.md").write_text(f"# Test fixture ({source} layout)\n\nTiny generated audio; not the real data.\n")
    return dest


def _write_shard(path: Path, members: list[tuple[str, bytes, dict]]) -> None:
    import tarfile

    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for key, audio, meta in members:
            for name, data in ((f"{key}.flac", audio), (f"{key}.json", json.dumps(meta).encode())):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
