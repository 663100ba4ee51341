"""Embedding cache: one SQLite file per encoder identity, rows keyed by clip content hash.

Vectors are stored as raw float32 bytes with a checksum (no pickle). Each batch is committed on
its own, so an interrupted run keeps everything it finished and a repeated run embeds nothing.
Runs that share a cache claim the clips they are about to embed, so two concurrent runs of the
same model split the work instead of doing it twice."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from ..core.context import default_cache_dir as default_cache_dir  # its home is core; kept here for callers
from ..core.errors import CacheError, ModelError

_CHUNK = 900  # below SQLite's default limit of host parameters per statement
SCHEMA = 2
CLAIM_STALE_SECONDS = 600.0  # a claim not refreshed for this long belongs to a dead run


def identity_hash(identity: Mapping) -> str:
    """16 hex digits of the SHA-256 of the identity as sorted JSON: what names a cache file."""
    blob = json.dumps(identity, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def text_key(text: str) -> str:
    """The cache key of a text's embedding: "t:" and a 128-bit BLAKE2b of its UTF-8 bytes."""
    return "t:" + hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def _checksum(key: str, blob: bytes) -> bytes:
    return hashlib.blake2b(key.encode() + b"\0" + blob, digest_size=8).digest()


def cache_failure(path: Path, exc: sqlite3.Error) -> CacheError:
    """One line that says what went wrong with a cache file and what to do; only a damaged file
    is worth deleting (a full disk or a read-only folder is not the file's fault)."""
    code = getattr(exc, "sqlite_errorname", "")
    free = _free_bytes(path) if code.startswith("SQLITE_IOERR") else None
    if code == "SQLITE_FULL" or (free is not None and free < NEARLY_FULL):
        # a nearly full disk fails SQLite's journal or shared-memory writes as a plain "disk I/O error"
        shown = "" if free is None else f" ({free // 1024} KiB free)"
        return CacheError(
            f"disk full: no space left on the device holding {path}{shown}; free some space or pass another --cache-dir"
        )
    if code in ("SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM", "SQLITE_AUTH") or code.startswith("SQLITE_READONLY"):
        return CacheError(f"cannot open or write {path} ({exc}); check the folder's permissions or pass another --cache-dir")
    if code in ("SQLITE_NOTADB", "SQLITE_CORRUPT") or isinstance(exc, _OldSchema):
        return CacheError(f"embedding cache {path} is unusable ({exc}); delete the file to recompute its vectors")
    return CacheError(f"embedding cache {path} failed ({exc})")


NEARLY_FULL = 4 << 20  # bytes free under which an I/O error of a cache file is taken for a full disk


def _free_bytes(path: Path) -> int | None:
    """Free bytes on the file system holding `path` (its nearest existing folder), None if unknown."""
    folder = Path(path)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        stat = os.statvfs(folder)
    except (OSError, AttributeError):  # statvfs is POSIX only
        return None
    return stat.f_bavail * stat.f_frsize


SETUP_SECONDS = 60.0  # how long opening a cache waits out other processes creating it


def connect(path: Path, setup) -> sqlite3.Connection:
    """A connection to a cache file after setup(db) (WAL mode, tables). Runs started together on
    a new cache (a job array) race to create it, and SQLite answers the loser's switch to WAL
    with "database is locked" at once, without waiting: setup is retried until it succeeds."""
    deadline = time.monotonic() + SETUP_SECONDS
    while True:
        db = sqlite3.connect(path, check_same_thread=False, timeout=60)
        try:
            setup(db)
            return db
        except BaseException as exc:
            db.close()
            locked = isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
            if not locked or time.monotonic() > deadline:
                raise
        time.sleep(0.05 + 0.1 * random.random())


def locked_call(lock, db, path: Path, fn):
    """fn(db) under the lock; every statement of a cache goes through here, so a corrupt or
    vanished file is one clear error naming it."""
    with lock:
        try:
            return fn(db)
        except sqlite3.Error as exc:
            raise cache_failure(path, exc) from exc


class _OldSchema(sqlite3.DatabaseError):
    pass


def _unwritable(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorname", "")
    return code in ("SQLITE_CANTOPEN", "SQLITE_PERM") or code.startswith("SQLITE_READONLY")


def open_read_only(path: Path) -> sqlite3.Connection | None:
    """A read-only connection to a cache file of today's schema, or None. A WAL file in a folder
    that cannot hold its -shm file opens only as immutable (no one writes there, so it is safe)."""
    for mode in ("mode=ro", "immutable=1"):
        db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?{mode}", uri=True, check_same_thread=False)
        try:
            if "chk" in {row[1] for row in db.execute("PRAGMA table_info(emb)")}:
                return db
        except sqlite3.Error:
            pass
        db.close()
    return None


def pid_alive(pid: int) -> bool:
    """Whether a process of this machine still runs (a claim or a temporary file may be its)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class EmbeddingCache:
    """Maps content keys to vectors for one encoder identity (see maeb.core.identity)."""

    def __init__(self, root: Path | str, identity: Mapping):
        self.identity = dict(identity)
        self.id = identity_hash(self.identity)
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", str(self.identity.get("name", "model")))[:80]
        folder = Path(root) / "embeddings"
        self.path = folder / f"{slug}-{self.id}.sqlite"
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._lock = threading.Lock()
        # a cache that exists but cannot be written (a shared, frozen cache on a read-only folder)
        # is read; what it lacks is computed and kept for this run only (read_only says so)
        self.read_only = False
        self.dim: int | None = None
        self._kept: dict[str, np.ndarray] = {}
        self._kept_texts: dict[str, str] = {}
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self._db = connect(self.path, self._setup)
        except sqlite3.Error as exc:
            db = open_read_only(self.path) if _unwritable(exc) and self.path.is_file() else None
            if db is None:
                raise cache_failure(self.path, exc) from exc
            self._db, self.read_only = db, True
            row = self._run(lambda db: db.execute("SELECT value FROM meta WHERE key='dim'").fetchone())
            self.dim = int(row[0]) if row else None
        except OSError as exc:
            raise CacheError(f"cannot create the embedding cache under {folder} ({exc.strerror}); pass --cache-dir") from exc

    def _setup(self, db: sqlite3.Connection) -> None:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB NOT NULL, chk BLOB NOT NULL)")
        db.execute("CREATE TABLE IF NOT EXISTS gen (key TEXT PRIMARY KEY, text TEXT NOT NULL)")
        db.execute("CREATE TABLE IF NOT EXISTS tasks (name TEXT PRIMARY KEY, clips INTEGER NOT NULL, updated TEXT NOT NULL)")
        db.execute("CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, time REAL NOT NULL)")
        columns = {row[1] for row in db.execute("PRAGMA table_info(emb)")}
        if "chk" not in columns:
            raise _OldSchema("written by an older maeb (no checksums)")
        db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA),))
        db.execute("INSERT OR IGNORE INTO meta VALUES ('identity', ?)", (json.dumps(self.identity, sort_keys=True, default=str),))
        db.commit()
        row = db.execute("SELECT value FROM meta WHERE key='dim'").fetchone()
        self.dim = int(row[0]) if row else None

    def _run(self, fn):
        return locked_call(self._lock, self._db, self.path, fn)

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these keys (absent keys are left out); a vector that fails its
        checksum is a CacheError."""
        keys = list(dict.fromkeys(keys))

        def read(db: sqlite3.Connection) -> dict[str, np.ndarray]:
            found: dict[str, np.ndarray] = {}
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for key, blob, chk in db.execute(f"SELECT key, vec, chk FROM emb WHERE key IN ({marks})", chunk):
                    if _checksum(key, blob) != chk:
                        raise CacheError(
                            f"embedding cache {self.path}: the stored vector of {key} fails its checksum "
                            "(the file was changed on disk); delete the file to recompute its vectors"
                        )
                    found[key] = np.frombuffer(blob, dtype=np.float32)
            return found

        found = self._run(read)
        found.update((k, self._kept[k]) for k in keys if k in self._kept and k not in found)
        return found

    def put_many(self, items: Mapping[str, np.ndarray]) -> None:
        """Store vectors (float32, with a checksum) and release our claims on their keys; a vector
        whose size differs from the cache's is a ModelError."""
        if not items:
            return
        rows = []
        for key, vec in items.items():
            vec = np.ascontiguousarray(vec, dtype=np.float32).ravel()
            if self.dim is None:
                self.dim = vec.size
                if not self.read_only:
                    self._run(lambda db: db.execute("INSERT OR REPLACE INTO meta VALUES ('dim', ?)", (str(self.dim),)))
            elif vec.size != self.dim:
                raise ModelError(
                    f"model {self.identity.get('name')!r} returned a {vec.size}-d vector, but its cache "
                    f"{self.path} holds {self.dim}-d vectors; the encoder output changed without its identity"
                )
            blob = vec.tobytes()
            rows.append((key, blob, _checksum(key, blob)))
            if self.read_only:
                self._kept[key] = vec
        if self.read_only:
            return

        def write(db):
            db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?, ?)", rows)
            db.executemany("DELETE FROM claims WHERE key = ? AND owner = ?", [(r[0], self.owner) for r in rows])
            db.commit()

        self._run(write)

    # -- claims: concurrent runs on one cache split the work ------------------------------------
    def claim(self, keys: Iterable[str]) -> tuple[list[str], list[str]]:
        """Claim the keys no live run is embedding; returns (claimed by us, claimed by others)."""
        keys = list(dict.fromkeys(keys))
        now = time.time()
        if self.read_only:  # no claims can be written: this run embeds what it lacks itself
            return keys, []

        def work(db):
            mine, theirs = [], []
            db.execute("BEGIN IMMEDIATE")
            try:
                for i in range(0, len(keys), _CHUNK):
                    chunk = keys[i : i + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    held = dict(db.execute(f"SELECT key, owner FROM claims WHERE key IN ({marks})", chunk).fetchall())
                    times = dict(db.execute(f"SELECT key, time FROM claims WHERE key IN ({marks})", chunk).fetchall())
                    # a key another run committed since our lookup is done: the caller reads it
                    done = {k for (k,) in db.execute(f"SELECT key FROM emb WHERE key IN ({marks})", chunk)}
                    for key in chunk:
                        if key in done:
                            theirs.append(key)
                            continue
                        owner = held.get(key)
                        if owner is None or owner == self.owner or not self._alive(owner, times[key], now):
                            mine.append(key)
                        else:
                            theirs.append(key)
                db.executemany("INSERT OR REPLACE INTO claims VALUES (?, ?, ?)", [(k, self.owner, now) for k in mine])
                db.commit()
            except BaseException:
                db.rollback()
                raise
            return mine, theirs

        return self._run(work)

    def _alive(self, owner: str, stamp: float, now: float) -> bool:
        host, pid, _ = (owner.split(":") + ["", "", ""])[:3]
        if now - stamp > CLAIM_STALE_SECONDS:
            return False
        if host == socket.gethostname() and pid.isdigit():
            return pid_alive(int(pid))
        return True

    def refresh_claims(self) -> None:
        """Mark our claims as alive (a claim not refreshed for CLAIM_STALE_SECONDS is free again)."""
        if self.read_only:
            return
        self._run(lambda db: (db.execute("UPDATE claims SET time = ? WHERE owner = ?", (time.time(), self.owner)), db.commit()))

    def claimed_elsewhere(self, keys: Iterable[str]) -> set[str]:
        """Of these keys, those still claimed by another live run."""
        keys = list(keys)
        now = time.time()
        if self.read_only:
            return set()

        def read(db):
            out = set()
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for key, owner, stamp in db.execute(f"SELECT key, owner, time FROM claims WHERE key IN ({marks})", chunk):
                    if owner != self.owner and self._alive(owner, stamp, now):
                        out.add(key)
            return out

        return self._run(read)

    # -- generations and task records ----------------------------------------------------------
    def get_texts(self, keys: Iterable[str]) -> dict[str, str]:
        """Cached generations (predictions) by key."""
        keys = list(dict.fromkeys(keys))

        def read(db: sqlite3.Connection) -> dict[str, str]:
            found: dict[str, str] = {}
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                found.update(db.execute(f"SELECT key, text FROM gen WHERE key IN ({marks})", chunk).fetchall())
            return found

        found = self._run(read)
        found.update((k, self._kept_texts[k]) for k in keys if k in self._kept_texts and k not in found)
        return found

    def put_texts(self, items: Mapping[str, str]) -> None:
        """Store generations (predictions) by key."""
        if self.read_only:
            self._kept_texts.update(items)
            return
        self._run(lambda db: (db.executemany("INSERT OR REPLACE INTO gen VALUES (?, ?)", list(items.items())), db.commit()))

    def record_task(self, name: str, clips: int) -> None:
        """Remember that a task's clips are all here, for dry runs that must not load the model."""
        if self.read_only:
            return
        self._run(
            lambda db: (db.execute("INSERT OR REPLACE INTO tasks VALUES (?, ?, datetime('now'))", (name, clips)), db.commit())
        )

    def __len__(self) -> int:
        return self._run(lambda db: db.execute("SELECT COUNT(*) FROM emb").fetchone()[0])

    def close(self) -> None:
        """Release this run's claims and close the database."""
        with self._lock:
            try:
                if not self.read_only:
                    self._db.execute("DELETE FROM claims WHERE owner = ?", (self.owner,))
                self._db.commit()
            except sqlite3.Error:
                pass
            self._db.close()


def cached_tasks(root: Path | str, name: str, revision: str) -> dict[str, int]:
    """Clips cached per task for any configuration of a model, read without loading the model."""
    out: dict[str, int] = {}
    for path in sorted((Path(root) / "embeddings").glob("*.sqlite")):
        # opened as a read-only cache is (a WAL file in a read-only folder opens only as immutable)
        db = open_read_only(path)
        if db is None:
            continue
        try:
            row = db.execute("SELECT value FROM meta WHERE key='identity'").fetchone()
            ident = json.loads(row[0]) if row else {}
            if ident.get("name") == name and str(ident.get("revision")) == str(revision):
                for task, clips in db.execute("SELECT name, clips FROM tasks"):
                    out[task] = max(out.get(task, 0), clips)
        except (sqlite3.Error, json.JSONDecodeError):
            continue
        finally:
            db.close()
    return out
