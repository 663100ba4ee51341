"""Embedding cache: one SQLite file per encoder identity, rows keyed by clip content hash.

Vectors are stored as raw float32 bytes (no pickle). Each batch is committed on its own, so an
interrupted run keeps everything it finished and a repeated run embeds nothing."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from .errors import ModelError

_CHUNK = 900  # below SQLite's default limit of host parameters per statement


def default_cache_dir() -> Path:
    env = os.environ.get("MAEB_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "maeb"


def identity_hash(identity: Mapping) -> str:
    blob = json.dumps(identity, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def text_key(text: str) -> str:
    return "t:" + hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


class EmbeddingCache:
    """Maps content keys to vectors for one encoder identity (name, revision, output-changing config)."""

    def __init__(self, root: Path | str, identity: Mapping):
        self.identity = dict(identity)
        self.id = identity_hash(self.identity)
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", str(self.identity.get("name", "model")))[:80]
        root = Path(root) / "embeddings"
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / f"{slug}-{self.id}.sqlite"
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self._db.execute("CREATE TABLE IF NOT EXISTS gen (key TEXT PRIMARY KEY, text TEXT NOT NULL)")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS tasks (name TEXT PRIMARY KEY, clips INTEGER NOT NULL, updated TEXT NOT NULL)"
        )
        self._db.execute(
            "INSERT OR IGNORE INTO meta VALUES ('identity', ?)", (json.dumps(self.identity, sort_keys=True, default=str),)
        )
        self._db.commit()
        row = self._db.execute("SELECT value FROM meta WHERE key='dim'").fetchone()
        self.dim: int | None = int(row[0]) if row else None

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for key, blob in self._db.execute(f"SELECT key, vec FROM emb WHERE key IN ({marks})", chunk):
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, items: Mapping[str, np.ndarray]) -> None:
        if not items:
            return
        rows = []
        for key, vec in items.items():
            vec = np.ascontiguousarray(vec, dtype=np.float32).ravel()
            if self.dim is None:
                self.dim = vec.size
                with self._lock:
                    self._db.execute("INSERT OR REPLACE INTO meta VALUES ('dim', ?)", (str(self.dim),))
            elif vec.size != self.dim:
                raise ModelError(
                    f"model {self.identity.get('name')!r} returned a {vec.size}-d vector, but its cache "
                    f"{self.path} holds {self.dim}-d vectors; the encoder output changed without its identity"
                )
            rows.append((key, vec.tobytes()))
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?)", rows)
            self._db.commit()

    def get_texts(self, keys: Iterable[str]) -> dict[str, str]:
        """Cached generations (predictions) by key."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, str] = {}
        with self._lock:
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                found.update(self._db.execute(f"SELECT key, text FROM gen WHERE key IN ({marks})", chunk).fetchall())
        return found

    def put_texts(self, items: Mapping[str, str]) -> None:
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO gen VALUES (?, ?)", list(items.items()))
            self._db.commit()

    def record_task(self, name: str, clips: int) -> None:
        """Remember that a task's clips are all here, for dry runs that must not load the model."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO tasks VALUES (?, ?, datetime('now'))", (name, clips))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM emb").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def cached_tasks(root: Path | str, name: str, revision: str) -> dict[str, int]:
    """Clips cached per task for any configuration of a model, read without loading the model."""
    out: dict[str, int] = {}
    for path in sorted((Path(root) / "embeddings").glob("*.sqlite")):
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            row = db.execute("SELECT value FROM meta WHERE key='identity'").fetchone()
            ident = json.loads(row[0]) if row else {}
            if ident.get("name") == name and str(ident.get("revision")) == str(revision):
                for task, clips in db.execute("SELECT name, clips FROM tasks"):
                    out[task] = max(out.get(task, 0), clips)
            db.close()
        except sqlite3.Error:
            continue
    return out
