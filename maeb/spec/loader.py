"""Spec -> data: for each subset, the splits the task type needs, transformed and derived."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..core.context import RunContext, default_context
from ..core.errors import DataError
from ..core.taskspec import DataSpec, TaskSpec
from ..data import hub_rules
from ..data.sources import (
    RetrievalData,
    Table,
    UnknownSplit,
    hub_configs,
    hub_snapshot,
    hub_split_names,
    load_audiofolder,
    load_hub_split,
    load_metafolder,
)
from ..data.transforms import apply_all
from ..tasktypes import get as get_type
from .derive import derive

if TYPE_CHECKING:
    from ..audio.pipeline import AudioRef


def split_rows(
    table: Table, split_by: dict | None, wanted: list[str], where: str, spec: TaskSpec | None = None
) -> dict[str, Table]:
    """Assign an audio folder's rows to splits: by a column of split names, by value lists of a
    column (the rest to `rest`), by a seeded random share (random_split), or, without a rule,
    every row to the one split the task reads."""
    if split_by is None:
        if len(wanted) > 1:
            raise DataError(
                f"{where}: the task reads splits {wanted} but the folder has no split rule; add [data.split_by] "
                "(a column of split names, value lists of a column, or random = 0.2) or use cross-validation on one split"
            )
        return {wanted[0]: table}
    assignment: Sequence[str | None]
    if "random" in split_by:
        assignment = random_split(table, split_by, where, spec)
        column = "random"
    else:
        named = split_by.get("column")
        if named is None:
            raise DataError(f"{where}: [data.split_by] needs 'column' (or random = SHARE for a seeded random split)")
        column = named
        table.require([column], "data.split_by")
        lists = {k: {str(v) for v in vals} for k, vals in split_by.items() if k not in ("column", "rest")}
        values = [str(v) for v in table[column]]
        if not lists:
            assignment = values
        else:
            rest = split_by.get("rest")
            assignment = [next((s for s, vals in lists.items() if v in vals), rest) for v in values]
    out = {}
    for split in wanted:
        rows = [i for i, s in enumerate(assignment) if s == split]
        if not rows:
            rule = "split_by random" if column == "random" else f"split_by column {column!r}"
            raise DataError(f"{where}: no rows fall in split {split!r} ({rule})")
        out[split] = table.select(rows)
    return out


RANDOM_KEYS = ("random", "seed")


def random_split(table: Table, split_by: dict, where: str, spec: TaskSpec | None) -> list[str]:
    """split_by = {random = SHARE, seed = 0}: the split of each row. Within each label (the task's
    label column, when it has single labels; else all rows as one group) the rows are ordered by
    blake2b(seed, clip name), and the first floor(SHARE * n + 0.5) of a label's n rows go to the
    task's evaluation split, the rest to data.train_split (a label with one clip stays in training,
    and with two or more keeps at least one there). The clip name is the file name the folder
    lists, so the assignment does not depend on the order of the rows, only on the names, the
    labels, SHARE and the seed."""
    import hashlib
    import math

    unknown = sorted(set(split_by) - set(RANDOM_KEYS))
    if unknown:
        raise DataError(f"{where}: [data.split_by] random takes only {', '.join(RANDOM_KEYS)}; remove {', '.join(unknown)}")
    share, seed = split_by["random"], split_by.get("seed", 0)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise DataError(f"{where}: split_by random = {share!r}: give the evaluation split's share, a number between 0 and 1")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise DataError(f"{where}: split_by seed = {seed!r}: give a non-negative integer")
    d = spec.data if spec is not None else DataSpec(source="audiofolder", path="")
    if len(d.eval_splits) != 1 or d.eval_splits[0] == d.train_split:
        raise DataError(
            f"{where}: split_by random makes one evaluation split and a training split; the task has eval_splits "
            f"{d.eval_splits} and train_split {d.train_split!r}"
        )
    audio = next((c for c in d.audio_columns if c in table), None)
    table.require([audio or d.audio_column], "data.audio_column")
    names = [getattr(ref, "name", str(ref)) for ref in table[audio or d.audio_column]]
    label_column = (spec.derive or {}).get("label_column", d.label_column) if spec is not None else d.label_column
    labels = table[label_column] if label_column in table else [None] * len(table)
    if any(isinstance(v, (list, tuple)) for v in labels):
        labels = [None] * len(table)  # label sets (multilabel): one group
    groups: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        groups.setdefault(str(label), []).append(i)
    out = [d.train_split] * len(table)
    for rows in groups.values():
        rank = sorted(rows, key=lambda i: (hashlib.blake2b(f"{seed}\0{names[i]}".encode(), digest_size=8).digest(), i))
        n = len(rows)
        held = 0 if n < 2 else min(n - 1, math.floor(share * n + 0.5))
        for i in rank[:held]:
            out[i] = d.eval_splits[0]
    return out


def _labels_to_lists(table: Table, column: str, sep: str) -> Table:
    if column not in table:
        return table
    values = [v if isinstance(v, list) else [p.strip() for p in str(v).split(sep) if p.strip()] for v in table[column]]
    return table.with_column(column, values)


@dataclass(frozen=True)
class Source:
    """Where a task's data is read from in this run: the spec's location with its variables
    resolved, and the cache folder for tables and unpacked shards."""

    location: str
    revision: str | None
    cache_dir: Path
    audio_columns: list[str]
    decode_rate: int | None = None

    def split(self, config: str | None, split: str) -> Table:
        """One config's split as a Table."""
        return load_hub_split(self.location, self.revision, config, split, self.audio_columns, self.decode_rate, self.cache_dir)


def source_of(spec: TaskSpec, ctx: RunContext) -> Source:
    """Where the task's data is read from, for this run's context."""
    d = spec.data
    return Source(d.location(ctx.variables()), d.revision, Path(ctx.cache_dir), list(d.audio_columns), d.decode_rate)


def load_hub_retrieval(spec: TaskSpec, src: Source, subset: str, split: str) -> RetrievalData:
    """mteb's retrieval layout (corpus, queries or query, qrels or default, optional top_ranked;
    `{subset}-` prefixes), read by the rules of maeb.data.hub_rules."""
    where = f"task {spec.name}" + (f" subset {subset}" if subset != "default" else "") + f" ({spec.data.path})"
    names = hub_rules.retrieval_configs(hub_configs(src.location, src.revision, src.cache_dir), subset, where)
    audio = src.audio_columns[0] if src.audio_columns else "audio"
    query_col, doc_col = hub_rules.content_columns(spec.category, audio)

    def read(role: str) -> Table:
        config = names[role]
        try:
            return src.split(config, split)
        except UnknownSplit:  # R1: the config's only split, whatever its name
            splits = hub_split_names(src.location, src.revision, config, src.cache_dir)
            return src.split(config, hub_rules.pick_split(splits, split, f"{where} config {config}"))

    corpus = hub_rules.items(read("corpus"), doc_col, audio, f"{where} config {names['corpus']}", document=True)
    queries = hub_rules.items(read("queries"), query_col, audio, f"{where} config {names['queries']}")
    qrels = hub_rules.qrels(read("qrels"), f"{where} config {names['qrels']}")
    queries = hub_rules.keep_queries(queries, qrels)
    candidates = hub_rules.candidates(read("top_ranked"), where) if names["top_ranked"] else None
    items = cast("list[tuple[str, AudioRef | str]]", corpus), cast("list[tuple[str, AudioRef | str]]", queries)
    return RetrievalData(*items, qrels, candidates)


def _hub_table(spec: TaskSpec, src: Source, subset: str, split: str, loaded: dict[str, Table]) -> Table:
    d = spec.data
    repo_split = d.split_names.get(split, split)
    if d.subset_column is None:
        return src.split(d.config if d.config is not None else subset, repo_split)
    if split not in loaded:
        loaded[split] = src.split(d.config, repo_split)
    table = loaded[split]
    table.require([d.subset_column], "data.subset_column")
    return table.where([str(v) == subset for v in table[d.subset_column]])


def _webdataset_split(d, src: Source, split: str, where: str) -> Table:
    from ..data.webdataset import load_webdataset, snapshot_patterns

    repo_split = d.split_names.get(split, split)
    location = src.location
    root = location if Path(location).is_dir() else hub_snapshot(location, d.revision, snapshot_patterns(repo_split))
    return load_webdataset(root, repo_split, where, src.cache_dir)


def snapshot_patterns(d: DataSpec) -> list[str]:
    """Only the metadata file and the folder the audio template points into, not the whole repo."""
    prefix = d.audio_template.split("{", 1)[0]
    return [d.meta_file or "", f"{prefix}*" if prefix else "*"]


def check_labels(table: Table, spec: TaskSpec, where: str) -> None:
    """Blank label cells would become a class of their own (''): name the first such row; then the
    task type's own checks of the labels (TaskType.check_labels), before any clip is embedded."""
    column = spec.derive.get("label_column", spec.data.label_column) if spec.derive else spec.data.label_column
    derived = spec.derive.get("kind") in ("pairs", "same_label", "text_to_audio", "audio_to_text", "rerank")
    kind = get_type(spec.type)
    if (not kind.LABELLED and not derived) or column not in table:
        return
    for i, value in enumerate(table[column]):
        blank = value is None or (isinstance(value, str) and not value.strip()) or (isinstance(value, list) and not value)
        if blank and not kind.BLANK_LABELS:
            audio = next((table[c][i] for c in spec.data.audio_columns if c in table), None)
            name = getattr(audio, "name", None)
            clip = f" (clip {name})" if name is not None else ""
            raise DataError(
                f"{where}: {table.where_is(i)}{clip} has a blank {column!r}; fill it or drop such rows with "
                f'[[transforms]] op = "filter", column = "{column}", drop_empty = true'
            )
    kind.check_labels(spec, table[column], f"{where} column {column!r}")


def load_task(spec: TaskSpec, ctx: RunContext | None = None) -> dict[str, dict[str, Table | RetrievalData]]:
    """A task's data: subset -> split -> Table (or RetrievalData), transformed, checked and derived."""
    kind = get_type(spec.type)
    wanted = kind.splits(spec)
    d = spec.data
    src = source_of(spec, ctx or default_context())
    out: dict[str, dict] = {}
    loaded: dict[str, Table] = {}  # one read per split when subsets are rows of one config
    for subset in d.subsets:
        where = f"task {spec.name}" + (f" subset {subset}" if subset != "default" else "")
        if d.source == "webdataset":
            if subset != "default":
                raise DataError(f"{where}: webdataset sources hold one subset; list one spec per subset")
            tables = {split: _webdataset_split(d, src, split, where) for split in wanted}
        elif d.source in ("audiofolder", "metafolder", "hub-files"):
            if subset != "default" and d.source != "audiofolder":
                raise DataError(f"{where}: {d.source} sources hold one subset; list one spec per subset")
            if d.source == "audiofolder":
                # subsets of an audio folder are its subfolders, each an audio folder of its own
                folder = src.location if subset == "default" else str(Path(src.location) / subset)
                table = load_audiofolder(folder, d.audio_column, d.audio_columns[1:])
            else:
                root = src.location if d.source == "metafolder" else hub_snapshot(src.location, d.revision, snapshot_patterns(d))
                table = load_metafolder(root, d.meta_file or "", d.audio_template, d.audio_column)  # spec parsing requires it
            tables = split_rows(table, d.split_by, wanted, where, spec)
        elif d.layout == "retrieval":
            out[subset] = {split: load_hub_retrieval(spec, src, subset, split) for split in wanted}
            continue
        else:
            tables = {split: _hub_table(spec, src, subset, split, loaded) for split in wanted}
        for split, table in tables.items():
            table.name = f"{where} split {split}"
            table = apply_all(table, spec.transforms, split)
            if d.label_separator:
                table = _labels_to_lists(table, d.label_column, d.label_separator)
            if len(table) == 0:
                raise DataError(f"{where} split {split}: no rows left after the transforms")
            check_labels(table, spec, f"{where} split {split}")
            tables[split] = derive(spec, table) if spec.derive else table
        out[subset] = tables
    return out
