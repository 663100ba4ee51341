"""Data sources behind one interface: each returns a Table whose audio columns hold AudioRefs.

- hub: a dataset repo (or a local folder in the same layout) at a pinned revision, read with audio
  decoding disabled; the bytes stay in the memory-mapped Arrow files until a clip is decoded.
- audiofolder: a directory with metadata.csv (file_name plus label columns), as Hugging Face's
  audiofolder convention and ../shared/data use."""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np

from ..audio.pipeline import AudioRef
from ..core.errors import DataError


class Table:
    """Columns of equal length; rows are selected, never mutated in place."""

    def __init__(
        self,
        columns: dict[str, list],
        name: str = "table",
        class_labels: set[str] | None = None,
        source: str = "",
        lines: list[int] | None = None,
    ):
        lengths = {k: len(v) for k, v in columns.items()}
        if len(set(lengths.values())) > 1:
            raise DataError(f"{name}: columns have different lengths {lengths}")
        self.columns = {k: list(v) for k, v in columns.items()}
        self.name = name
        self.source = source  # the metadata file the rows came from, for messages
        self.lines = lines  # each row's line in that file
        # columns stored as ClassLabel ids on the hub: their class order is the id order
        self.class_labels = set(class_labels or ()) & set(self.columns)

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def __getitem__(self, column: str) -> list:
        self.require([column])
        return self.columns[column]

    def __contains__(self, column: str) -> bool:
        return column in self.columns

    def require(self, columns: Sequence[str], role: str = "") -> None:
        """Check that the columns exist; DataError naming the first missing one, its role and the columns there are."""
        missing = [c for c in columns if c not in self.columns]
        if missing:
            what = f" ({role})" if role else ""
            raise DataError(f"{self.name}: column {missing[0]!r}{what} does not exist; available: {', '.join(self.columns)}")

    def select(self, indices: Sequence[int]) -> Table:
        """A copy holding the rows at `indices`, in that order."""
        indices = list(indices)
        lines = [self.lines[i] for i in indices] if self.lines else None
        return Table(
            {k: [v[i] for i in indices] for k, v in self.columns.items()}, self.name, self.class_labels, self.source, lines
        )

    def where_is(self, row: int) -> str:
        """Where a row came from, for messages: "metadata.csv row 7" when known."""
        if self.source and self.lines:
            return f"{self.source} row {self.lines[row]}"
        return f"row {row + 1} of {self.name}"

    def where(self, keep: Sequence[bool]) -> Table:
        """A copy holding the rows whose `keep` entry is true."""
        return self.select([i for i, k in enumerate(keep) if k])

    def with_column(self, column: str, values: list, class_label: bool = False) -> Table:
        """A copy with `column` set to `values` (added or replaced), marked as a class label or not."""
        labels = (self.class_labels | {column}) if class_label else (self.class_labels - {column})
        return Table({**self.columns, column: values}, self.name, labels, self.source, self.lines)

    def renamed(self, old: str, new: str) -> Table:
        """A copy with column `old` named `new` (its class-label mark follows it)."""
        labels = {new if c == old else c for c in self.class_labels}
        return Table({(new if k == old else k): v for k, v in self.columns.items()}, self.name, labels, self.source, self.lines)


@dataclass
class RetrievalData:
    """Queries and documents as (id, AudioRef or text) lists: ids may repeat, as in some of mteb's
    datasets (FLEURS reuses a sentence id for each of its recordings), and mteb's handling of
    repeated ids is reproduced in `search`."""

    corpus: list[tuple[str, AudioRef | str]]
    queries: list[tuple[str, AudioRef | str]]
    qrels: dict[str, dict[str, int]]
    candidates: dict[str, list[str]] | None = None  # reranking: the documents to order per query

    @classmethod
    def from_lists(cls, corpus, queries, qrels, candidates=None) -> RetrievalData:
        """Retrieval data from (id, item) sequences of corpus and queries, keeping repeated ids as they come."""
        return cls(list(corpus), list(queries), qrels, candidates)

    @classmethod
    def from_dicts(cls, corpus: dict, queries: dict, qrels, candidates=None) -> RetrievalData:
        """Retrieval data from id -> item dicts of corpus and queries (a repeated id cannot occur)."""
        return cls(list(corpus.items()), list(queries.items()), qrels, candidates)

    def __len__(self) -> int:
        return len(self.queries)

    @property
    def has_repeated_ids(self) -> bool:
        """Whether the corpus or the queries hold an id twice."""
        return len({i for i, _ in self.corpus}) < len(self.corpus) or len({i for i, _ in self.queries}) < len(self.queries)


def document_text(text, title=None) -> str:
    """A text document as mteb embeds it: (title + " " + text).strip() when there is a title,
    else text.strip(). Queries are embedded as written."""
    text = "" if text is None else str(text)
    return f"{title} {text}".strip() if title else text.strip()


def _cell(value: str):
    """CSV cells stay strings except plain integers, so labels compare as written."""
    text = value.strip()
    if text.lstrip("-").isdigit() and not (len(text.lstrip("-")) > 1 and text.lstrip("-").startswith("0")):
        return int(text)
    return text


def _csv_rows(path: Path) -> list[tuple[int, dict]]:
    """(line number, row) of a metadata.csv, refusing what would silently change the table: short
    or long rows, duplicate header names, an unterminated quote, bytes that are not UTF-8."""
    start = 1  # the line where the next record begins, for an unterminated quote
    try:
        # utf-8-sig: a byte-order mark from a spreadsheet export must not become part of 'file_name'
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle, strict=True)
            header = next(reader, None)
            if header is None:
                return []
            dupes = sorted({h for h in header if header.count(h) > 1})
            if dupes:
                raise DataError(f"{path}: column {dupes[0]!r} appears more than once in the header")
            rows = []
            start = reader.line_num + 1
            for fields in reader:
                line, start = start, reader.line_num + 1
                if not fields:
                    continue
                if len(fields) != len(header):
                    raise DataError(f"{path}: row {line} has {len(fields)} fields, the header has {len(header)}")
                rows.append((line, {k: _cell(v) for k, v in zip(header, fields)}))
            return rows
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 (byte {exc.object[exc.start]:#04x} at offset {exc.start}); save it as UTF-8") from exc
    except csv.Error as exc:
        raise DataError(f"{path}: row {start} is not valid CSV ({exc}); an unterminated quote?") from exc


def _jsonl_rows(path: Path) -> list[tuple[int, dict]]:
    rows = []
    try:
        with path.open(encoding="utf-8") as handle:
            for line_no, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"{path}: line {line_no} is not JSON ({exc.msg} at column {exc.colno})") from exc
                if not isinstance(row, dict):
                    raise DataError(f"{path}: line {line_no} is not a JSON object")
                rows.append((line_no, row))
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 (offset {exc.start}); save it as UTF-8") from exc
    return rows


def load_audiofolder(folder: str | Path, audio_column: str = "audio", path_columns: Sequence[str] = ()) -> Table:
    """Read metadata.csv (or metadata.jsonl); `file_name` becomes an AudioRef column, and so does
    each of `path_columns` present (further audio files named by relative paths, e.g. a voice
    prompt that only some subsets have; an empty cell stays None)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(f"audio folder {folder} does not exist")
    csv_path, jsonl_path = folder / "metadata.csv", folder / "metadata.jsonl"
    if csv_path.exists():
        rows, source = _csv_rows(csv_path), csv_path
    elif jsonl_path.exists():
        rows, source = _jsonl_rows(jsonl_path), jsonl_path
    else:
        raise DataError(f"audio folder {folder} has no metadata.csv or metadata.jsonl")
    if not rows:
        raise DataError(f"{source} has no rows")
    first = rows[0][1]
    if "file_name" not in first:
        raise DataError(f"{source}: first column must be 'file_name'; found {', '.join(first)}")
    columns: dict[str, list] = {k: [] for k in first if k != "file_name"}
    refs = []
    seen: dict[str, int] = {}
    for line, row in rows:
        if set(row) != set(first):
            raise DataError(f"{source}: row {line} has columns {sorted(row)}, expected {sorted(first)}")
        # a row pasted twice counts its clip twice (0.5500 became 0.6087); the same clip with other values is kept
        if (whole := json.dumps(row, sort_keys=True, default=str)) in seen:
            raise DataError(f"{source}: row {line} repeats row {seen[whole]} (clip {row['file_name']}, every column equal)")
        seen[whole] = line
        name = str(row["file_name"])
        refs.append(AudioRef(name, path=str(folder / name)))
        for key in columns:
            value = row[key]
            if key in path_columns:
                value = AudioRef(str(value), path=str(_existing_audio(folder / str(value)))) if value else None
            columns[key].append(value)
    columns = {k: _one_type(v) for k, v in columns.items()}
    return Table({audio_column: refs, **columns}, name=str(folder), source=str(source), lines=[line for line, _ in rows])


def _one_type(values: list) -> list:
    """A column mixing numbers with text (digits and one 'dog') as text throughout, as a dataframe
    reader types the file: a label is never 1 in one split and '1' in another (no classifier fits
    or scores that). Numbers only keep their type (a hub column is typed; mteb sees ints)."""
    number = [isinstance(v, (int, float)) and not isinstance(v, bool) for v in values]
    if not any(number) or not any(isinstance(v, str) and v.strip() for v in values):
        return values
    return [str(v) if n else v for v, n in zip(values, number)]


def load_metafolder(root: str | Path, meta_file: str, audio_template: str = "{audio}", audio_column: str = "audio") -> Table:
    """A folder with a JSON list (or JSON lines) of rows and audio files named by a template over
    each row's fields, e.g. AIR-Bench's "Chat/{task_name}_{dataset_name}/{path}"."""
    root = Path(root)
    meta = root / meta_file
    try:
        text = meta.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"metadata file {meta} cannot be read ({exc.strerror})") from exc
    try:
        rows = (
            json.loads(text)
            if text.lstrip().startswith("[")
            else [json.loads(line) for line in text.splitlines() if line.strip()]
        )
    except json.JSONDecodeError as exc:
        raise DataError(f"{meta}: not JSON or JSON lines ({exc})") from exc
    if not rows or not all(isinstance(r, dict) for r in rows):
        raise DataError(f"{meta}: expected a list of objects")
    names = list(dict.fromkeys(k for r in rows for k in r))
    columns: dict[str, list] = {k: [r.get(k) for r in rows] for k in names}
    refs = []
    for number, row in enumerate(rows):
        try:
            relative = audio_template.format(**row)
        except (KeyError, IndexError) as exc:
            raise DataError(f"{meta}: row {number} lacks field {exc} for audio path template {audio_template!r}") from exc
        refs.append(AudioRef(relative, path=str(_existing_audio(root / relative))))
    columns = {k: _one_type(v) for k, v in columns.items()}
    columns[audio_column] = refs
    return Table(columns, name=str(meta))


AUDIO_SUFFIXES = (".wav", ".flac", ".mp3", ".ogg")


def _existing_audio(path: Path) -> Path:
    """The named file, or the one beside it with the same stem and another audio suffix: some
    metadata names files by their original format (AIR-Bench lists Audio_Grounding clips as .wav
    that ship as .flac). A clip that is in neither form fails later, naming the path."""
    if path.exists() or path.suffix.lower() not in AUDIO_SUFFIXES:
        return path
    for suffix in AUDIO_SUFFIXES:
        if path.with_suffix(suffix).exists():
            return path.with_suffix(suffix)
    return path


def hub_snapshot(repo: str, revision: str | None, patterns: list[str] | None = None) -> Path:
    """A local copy of a dataset repo's files (for repos that are folders of audio and JSON, not
    tables); a local folder is returned as it is."""
    if Path(repo).is_dir():
        return Path(repo)
    from . import hub

    why = hub.prepare()
    for attempt in (1, 2):
        try:
            from huggingface_hub import snapshot_download

            fetch = functools.partial(snapshot_download, repo, revision=revision, repo_type="dataset", allow_patterns=patterns)
            root = Path(hub.retrying(fetch, f"{repo}@{(revision or 'main')[:10]}"))
        except Exception as exc:
            raise DataError(
                hub.explain(exc, "dataset", repo, revision)
                or f"cannot fetch {repo}@{revision} ({type(exc).__name__}: {hub.first_line(exc)}); offline, point data.path at a local copy"
            ) from exc
        # files whose bytes are not the declared ones: removed, fetched once more, then refused
        if not _check_downloads(repo, revision, None, f"{repo}@{revision}", attempt == 1 and why is None):
            break
    return root


def _row_bytes(column, i: int) -> bytes:
    return column[i].as_py()


def _arrow_audio_refs(ds, column: str, label: str, rate: int | None = None) -> list[AudioRef]:
    """AudioRefs that read each row's bytes from the memory-mapped Arrow table on demand."""
    import pyarrow.compute as pc

    table = ds.data.table if hasattr(ds.data, "table") else ds.data
    chunked = table.column(column)
    data = pc.struct_field(chunked, "bytes")
    paths = pc.struct_field(chunked, "path").to_pylist()
    return [
        AudioRef(f"{label}/{i}" + (f" ({p})" if p else ""), fetch=functools.partial(_row_bytes, data, i), decode_rate=rate)
        for i, p in enumerate(paths)
    ]


def folder_signature(folder: str | Path) -> str:
    """A folder by its files' paths, sizes and modification times: cheap, and it changes when a
    file is added, removed, replaced or edited."""
    digest = hashlib.sha256(os.path.abspath(folder).encode())
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:20]


def _local_cache_dir(folder: str, cache_dir: Path | None = None) -> str | None:
    """datasets keys its cache of a local folder by relative file patterns, so two folders with the
    same name and layout can share (and serve each other's) cached tables; a cache folder per
    content signature rules that out."""
    if not os.path.isdir(folder):
        return None
    if cache_dir is None:
        from ..core.context import default_cache_dir

        cache_dir = default_cache_dir()
    return str(Path(cache_dir) / "local-datasets" / folder_signature(folder))


class UnknownSplit(DataError):
    """The config has no split of that name (maeb.data.hub_rules.pick_split may choose another)."""


def load_hub_split(
    repo: str,
    revision: str | None,
    subset: str | None,
    split: str,
    audio_columns: Sequence[str],
    decode_rate: int | None = None,
    cache_dir: Path | None = None,
) -> Table:
    """One split of a dataset repo (hub id or local folder in hub layout) as a Table."""
    import datasets
    from datasets import Audio, ClassLabel

    from . import hub

    name = None if subset in (None, "default") else subset
    where = f"{repo}@{(revision or 'local')[:10]}" + (f" subset {subset}" if name else "") + f" split {split}"
    local = _local_cache_dir(repo, cache_dir)
    why = None
    if local is None:
        why = hub.prepare()
        hub.require_cached(repo, revision, why)  # offline, never another revision's data under this pin
        name = name or hub.cached_default_config(repo, revision)
    for attempt in (1, 2):
        try:
            load = functools.partial(datasets.load_dataset, repo, name=name, revision=revision, split=split, cache_dir=local)
            ds = load() if local else hub.retrying(load, where)
        except Exception as exc:
            if local is None:
                _check_downloads(repo, revision, cache_dir, where, retry=False)  # bad bytes explain a failed parse
            _load_failed(exc, repo, revision, where, local)
        if local is not None or not _check_downloads(repo, revision, cache_dir, where, attempt == 1 and why is None, ds):
            break
    audio_present = [c for c in audio_columns if c in ds.column_names]
    declared = {}
    for column in audio_present:
        if not isinstance(ds.features[column], Audio):
            raise DataError(f"{where}: column {column!r} is {ds.features[column]}, not audio")
        declared[column] = decode_rate or ds.features[column].sampling_rate
        ds = ds.cast_column(column, Audio(decode=False))
    ds = ds.flatten_indices() if getattr(ds, "_indices", None) is not None else ds
    class_labels = {c for c, f in ds.features.items() if isinstance(f, ClassLabel)}
    columns: dict[str, list] = {}
    for column in ds.column_names:
        if column in audio_present:
            columns[column] = _arrow_audio_refs(ds, column, f"{repo}/{subset or 'default'}/{split}", declared.get(column))
        else:
            columns[column] = ds[column]
    return Table(columns, name=where, class_labels=class_labels)


def _load_failed(exc: Exception, repo: str, revision: str | None, where: str, local: str | None) -> NoReturn:
    """The one line for a failed load_dataset: the hub's reason, an unknown split, or what to do."""
    from . import hub

    told = None if local else hub.explain(exc, "dataset", repo, revision)
    if told:
        raise DataError(told) from exc
    if isinstance(exc, ValueError) and str(exc).startswith("Unknown split"):
        raise UnknownSplit(f"{where}: {exc}") from exc
    if isinstance(exc, ValueError):
        raise DataError(f"{where}: {exc}") from exc
    if local:  # data.path is already a local folder: say what a hub-layout folder holds
        raise DataError(
            f'cannot load {where} ({type(exc).__name__}: {hub.first_line(exc)}); a local folder with source = "hub" '
            "holds the repository's files (parquet or audio files, and a README.md whose configs name them); "
            'for a folder of audio files with a metadata.csv use source = "audiofolder"'
        ) from exc
    raise DataError(
        f"cannot load {where} ({type(exc).__name__}: {hub.first_line(exc)}). Without hub access, point the spec's "
        "data.path at a local copy in the same layout"
    ) from exc


def _check_downloads(repo: str, revision: str | None, cache_dir: Path | None, where: str, retry: bool, ds=None) -> bool:
    """Whether the cached files of repo@revision whose bytes differ from what the hub declared
    (sha256 of LFS files, the git blob id of others) were removed for one more download (retry);
    without a retry such a file is a DataError naming it. False: every file is as declared. The
    bad files, and the tables `ds` (the load's dataset) built from them, are removed either way."""
    from ..core.context import default_cache_dir
    from . import hub

    bad = hub.mismatched_files(repo, revision, Path(cache_dir or default_cache_dir()) / "hub-verified")
    for path, blob, _ in bad:
        hub.forget(repo, revision, blob, path)
    if bad and ds is not None:
        _drop_prepared(ds)  # the tables datasets built from the bad bytes go too
    if bad and not retry:
        path, blob, found = bad[0]
        raise DataError(
            f"{where}: the downloaded file {path} does not match the hub's checksum (declared {blob.name}, got {found})"
            f"{'' if len(bad) == 1 else f' and {len(bad) - 1} more'}; removed from the cache, not evaluated: run again "
            "to download it again, and check any proxy between you and the hub if it happens again"
        )
    return bool(bad)


def _drop_prepared(ds) -> None:
    """Remove the Arrow tables datasets prepared from a load, so the next load builds them again."""
    import shutil

    for folder in {Path(f["filename"]).parent for f in getattr(ds, "cache_files", []) or []}:
        shutil.rmtree(folder, ignore_errors=True)


def hub_configs(repo: str, revision: str | None, cache_dir: Path | None = None) -> list[str]:
    """The config names of a dataset repo (hub id or local folder in hub layout)."""
    import datasets

    from . import hub

    local = _local_cache_dir(repo, cache_dir)
    if local is None:
        hub.require_cached(repo, revision, hub.prepare())
        cached = hub.cached_card_configs(repo, revision)
        if cached is not None:
            return cached
    try:
        return list(datasets.get_dataset_config_names(repo, revision=revision, cache_dir=local))
    except Exception as exc:
        told = None if local else hub.explain(exc, "dataset", repo, revision)
        raise DataError(told or f"cannot list configs of {repo}@{revision}: {hub.first_line(exc)}") from exc


def hub_split_names(repo: str, revision: str | None, config: str | None, cache_dir: Path | None = None) -> list[str]:
    """The split names one config of a dataset repo declares (for maeb.data.hub_rules.pick_split)."""
    import datasets

    try:
        return list(
            datasets.get_dataset_split_names(
                repo, config_name=config, revision=revision, cache_dir=_local_cache_dir(repo, cache_dir)
            )
        )
    except Exception as exc:
        raise DataError(f"cannot list the splits of {repo}@{revision} config {config}: {type(exc).__name__}: {exc}") from exc


def binary_labels(values: list, where: str) -> np.ndarray:
    """Pair labels as 0/1 integers; anything else (2, "same", blank) is an error naming it."""
    allowed = {0: 0, 1: 1, "0": 0, "1": 1}  # True/False and 0.0/1.0 hash as 1/0
    bad = [v for v in values if not (isinstance(v, (int, float, str)) and v in allowed)]
    if bad:
        raise DataError(f"{where}: pair labels must be 0 or 1; found {sorted({repr(v) for v in bad})[:5]}")
    return np.array([allowed[v] for v in values], dtype=np.int64)
