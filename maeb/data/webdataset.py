"""WebDataset shards (tar or tar.gz archives of `{key}.{field}` members) as a Table, read without
datasets' builder, which would re-encode every clip through torchcodec.

Shards of a split are the archives named `{split}_*`, `{split}-*` or `{split}.tar*` anywhere
under the folder (MECAT: `{subset}/test_0000-0000000.tar.gz`). Each shard is unpacked once into
the maeb cache (compressed tars cannot be read at random), so clips become plain files that are
decoded once, in the background, like any other. JSON and text members become columns; audio
members become AudioRefs named by key."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tarfile
from pathlib import Path

from ..audio.pipeline import AudioRef
from ..core.errors import DataError
from .sources import Table

AUDIO_FIELDS = {"flac", "wav", "mp3", "ogg", "opus"}
TEXT_FIELDS = {"txt", "text", "cls"}
KEY = re.compile(r"^((?:.*/|)[^./]+)\.([^/]*)$")  # webdataset's rule: the key ends at the basename's first dot


def shard_paths(root: Path, split: str) -> list[Path]:
    """The split's shard files under `root` (SPLIT_*.tar, .tar.gz or .tgz), sorted."""
    names = re.compile(rf"^{re.escape(split)}([_\-.].*)?\.(tar|tar\.gz|tgz)$")
    return sorted(p for p in root.rglob("*") if p.is_file() and names.match(p.name))


def snapshot_patterns(split: str) -> list[str]:
    """The file patterns that download only one split's shards from a hub repository."""
    return [f"{split}[_.-]*", f"*/{split}[_.-]*"]


def _unpacked(shard: Path, cache_dir: Path | None = None) -> Path:
    """The shard's members on disk, unpacked once (atomically: a half-unpacked shard is redone)."""
    if cache_dir is None:
        from ..core.context import default_cache_dir

        cache_dir = default_cache_dir()
    stat = shard.stat()
    digest = hashlib.sha256(f"{shard.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:20]
    target = Path(cache_dir) / "webdataset" / digest
    if target.is_dir():
        return target
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        with tarfile.open(shard, "r:*") as tar:
            if hasattr(tarfile, "data_filter"):  # Python 3.11.4+: refuse links and paths out of the folder
                tar.extractall(partial, filter="data")
            else:
                tar.extractall(partial)
    except (tarfile.TarError, OSError, EOFError) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise DataError(f"WebDataset shard {shard} cannot be read ({type(exc).__name__}: {exc})") from exc
    try:
        partial.rename(target)
    except OSError:  # another process finished first
        shutil.rmtree(partial, ignore_errors=True)
    return target


def load_webdataset(root: str | Path, split: str, where: str = "", cache_dir: Path | None = None) -> Table:
    """A split of a WebDataset folder as a Table: the split's shards unpacked once into the cache, one row per sample key with its
    audio file and its JSON and text fields."""
    root = Path(root)
    shards = shard_paths(root, split)
    if not shards:
        raise DataError(
            f"{where or root}: no WebDataset shards for split {split!r} (files named {split}_*.tar[.gz]) under {root}"
        )
    rows: dict[str, dict] = {}
    for shard in shards:
        folder = _unpacked(shard, cache_dir)
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            match = KEY.match(path.relative_to(folder).as_posix())
            if not match:
                continue
            key, field = match.group(1), match.group(2).lower()
            row = rows.setdefault(key, {"__key__": key, "__url__": str(shard)})
            if field in AUDIO_FIELDS:
                row[field] = AudioRef(f"{shard.name}/{key}.{field}", path=str(path))
            elif field == "json":
                try:
                    row[field] = json.loads(path.read_text(encoding="utf-8"))
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    raise DataError(f"{shard}: member {key}.json is not JSON ({exc})") from exc
            elif field in TEXT_FIELDS:
                row[field] = path.read_text(encoding="utf-8").strip()
    names = list(dict.fromkeys(name for row in rows.values() for name in row))
    return Table({name: [row.get(name) for row in rows.values()] for name in names}, name=f"{root} split {split}")
