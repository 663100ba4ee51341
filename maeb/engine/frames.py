"""Time-resolved embeddings (HEAR's timestamp embeddings) for frame-level task types: per clip a
(T, D) float32 frame matrix and the (T,) centre time of each frame in seconds, from the encoder's
optional embed_frames (maeb.encoders.FrameEncoder).

Clips are decoded through the embedder's loop and length policy (and perturbation), batched as
the encoder batches them, and each clip's frames are cached on disk: one SQLite file per encoder
identity under the cache folder's frames/ (the embedding cache's name, so the same identity),
rows keyed by the clip's content key, a "frames" tag and the encoder's frames_version, frames and
times stored as raw bytes with a checksum. An interrupted run keeps every finished batch and a
rerun embeds nothing. Two runs on one cache may both compute a clip's frames (no claims, unlike
the embedding cache): the rows are identical, the second write replaces the first."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..audio.pipeline import AudioRef
from ..audio.stream import clip_stream, windows
from ..audio.windows import WindowedRef
from ..core.errors import AudioError, CacheError, ModelError
from ..encoders import has_frames
from .cache import cache_failure, connect, locked_call
from .embed import Job

if TYPE_CHECKING:
    from .embed import Embedder

TAG = "frames"
_CHUNK = 900
Frames = tuple[np.ndarray, np.ndarray]  # (T, D) float32 frames, (T,) float64 centre times in seconds


def _checksum(key: str, *blobs: bytes) -> bytes:
    digest = hashlib.blake2b(key.encode() + b"\0", digest_size=8)
    for blob in blobs:
        digest.update(blob)
    return digest.digest()


def _setup(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS frames (key TEXT PRIMARY KEY, rows INTEGER NOT NULL, dim INTEGER NOT NULL, "
        "vec BLOB NOT NULL, times BLOB NOT NULL, chk BLOB NOT NULL)"
    )
    db.commit()


class FrameStore:
    """Frame matrices and times by key, for one encoder identity."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = connect(self.path, _setup)
        except sqlite3.Error as exc:
            raise cache_failure(self.path, exc) from exc
        except OSError as exc:
            raise CacheError(
                f"cannot create the frame cache under {self.path.parent} ({exc.strerror}); pass --cache-dir"
            ) from exc

    def _run(self, fn):
        return locked_call(self._lock, self._db, self.path, fn)

    def get_many(self, keys: Iterable[str]) -> dict[str, Frames]:
        """The stored (frames, times) of these keys (absent keys left out); a bad checksum is a CacheError."""
        keys = list(dict.fromkeys(keys))

        def read(db):
            found = {}
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                query = f"SELECT key, rows, dim, vec, times, chk FROM frames WHERE key IN ({marks})"
                for key, rows, dim, vec, times, chk in db.execute(query, chunk):
                    if _checksum(key, vec, times) != chk:
                        raise CacheError(
                            f"frame cache {self.path}: the stored frames of {key} fail their checksum "
                            "(the file was changed on disk); delete the file to recompute them"
                        )
                    frames = np.frombuffer(vec, dtype=np.float32).reshape(rows, dim)
                    found[key] = (frames, np.frombuffer(times, dtype=np.float64))
            return found

        return self._run(read)

    def put_many(self, items: Mapping[str, Frames]) -> None:
        """Store (frames, times) by key, replacing rows with the same key."""
        rows = []
        for key, (frames, times) in items.items():
            vec = np.ascontiguousarray(frames, dtype=np.float32).tobytes()
            stamps = np.ascontiguousarray(times, dtype=np.float64).tobytes()
            rows.append((key, int(frames.shape[0]), int(frames.shape[1]), vec, stamps, _checksum(key, vec, stamps)))
        if rows:
            self._run(lambda db: (db.executemany("INSERT OR REPLACE INTO frames VALUES (?, ?, ?, ?, ?, ?)", rows), db.commit()))

    def __len__(self) -> int:
        return self._run(lambda db: db.execute("SELECT COUNT(*) FROM frames").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()


def store_path(emb: Embedder) -> Path:
    """The frame cache of the embedder's encoder identity: <cache>/frames/<embedding cache name>."""
    return emb.cache.path.parent.parent / TAG / emb.cache.path.name


def frame_key(ref: AudioRef, encoder) -> str:
    """A clip's frames by its content and, for a long clip framed window by window, the window
    and hop (not the pooling: mean and max runs share the frames)."""
    version = int(getattr(encoder, "frames_version", 1))
    if isinstance(ref, WindowedRef):
        return f"{ref.base.key}|windows:{ref.window.seconds:g},{ref.window.hop:g}|{TAG}:v{version}"
    return f"{ref.key}|{TAG}:v{version}"


def require_frames(emb: Embedder, task: str | None = None) -> None:
    """The one line for a model without time-resolved embeddings."""
    if emb.policy is None or not has_frames(emb.encoder):
        raise ModelError(
            f"model {emb.meta.name} has no time-resolved embeddings (embed_frames); task {task or emb.context} needs them"
        )


def frame_embeddings(emb: Embedder, refs: Sequence[AudioRef], task: str | None = None) -> list[Frames | None]:
    """Frames and centre times of each clip, from the frame cache or the encoder (batched as the
    embedder batches, decoded through its length policy). A clip skipped as unusable (only under
    --on-bad-audio skip) is None. Counted in the task's record as embedded or cached clips."""
    require_frames(emb, task)
    # the clips as the run's perturbation shows them; clips longer than a window are framed window by window
    refs = emb.prepared(refs)
    keys = emb.keys_of(refs, lambda ref: frame_key(ref, emb.encoder))
    unique = {k: ref for k, ref in zip(keys, refs) if k is not None}
    store = FrameStore(store_path(emb))
    try:
        found = emb.cached(unique, {k: ref.key for k, ref in unique.items()}, store.get_many)
        missing = [ref for k, ref in unique.items() if k not in found and ref.name not in emb.stats.skipped]
        if missing:
            with emb.model_threads():
                found.update(_compute(emb, store, missing))
    finally:
        store.close()
    return [found.get(k) if k is not None else None for k in keys]


def _compute(emb: Embedder, store: FrameStore, refs: list[AudioRef]) -> dict[str, Frames]:
    done: dict[str, Frames] = {}
    dim: list[int] = []
    long = [r for r in refs if isinstance(r, WindowedRef)]
    with emb.timed():
        for ref in long:
            try:
                item = _windowed_frames(emb, ref, dim)
            except AudioError as exc:
                emb.bad_clip(ref, exc)
                continue
            if item is not None:
                store.put_many({frame_key(ref, emb.encoder): item})
                done[frame_key(ref, emb.encoder)] = item
        emb.stats.clips_embedded += len(done)
    refs = [r for r in refs if not isinstance(r, WindowedRef)]
    rate = emb.policy.sample_rate

    def call(clips: list[np.ndarray], batch: list[int]) -> list:
        out = emb.call_model(lambda x: list(emb.encoder.embed_frames(x)), clips, [refs[i].name for i in batch])
        if len(out) != len(clips):
            raise ModelError(f"model {emb.meta.name!r}: embed_frames returned {len(out)} items for {len(clips)} clips")
        return out

    job = Job(
        call=call,
        check=lambda i, item: _checked(emb, refs[i], item, dim),
        key=lambda i: frame_key(refs[i], emb.encoder),
        put=store.put_many,
        seconds=lambda clips, _: sum(len(c) for c in clips) / rate,
    )
    done.update(emb.run(job, emb.decoded(refs, "embed frames")))
    return done


def _windowed_frames(emb: Embedder, ref: WindowedRef, dim: list[int]) -> Frames | None:
    """A long clip's frames from its windows (streamed as maeb.audio.windows streams them), on the
    clip's time axis: where two windows overlap, each frame comes from the window whose centre
    is nearer (the boundary is the middle of the overlap), so every frame has context on both
    sides and times increase."""
    rate, window = emb.policy.sample_rate, ref.window
    length, hop = window.samples(rate)
    kept: list[Frames] = []
    previous: tuple[int, Frames] | None = None
    lo = -np.inf

    def keep_until(bound: float) -> None:
        nonlocal lo
        if previous is None:  # nothing framed yet
            return
        frames, times = previous[1]
        inside = (times >= lo) & (times < bound)
        kept.append((frames[inside], times[inside]))
        lo = bound

    stream = windows(clip_stream(ref.base, emb.policy), length, hop)
    while True:
        group = [item for _, item in zip(range(max(1, emb.batch_size)), stream)]
        if not group:
            break
        out = emb.call_model(lambda x: list(emb.encoder.embed_frames(x)), [w for _, w in group], [ref.name], "failed on clip")
        emb.stats.audio_seconds += sum(w.size for _, w in group) / rate
        for (start, _), item in zip(group, out):
            checked = _checked(emb, ref, item, dim)
            if checked is None:
                return None
            frames, times = checked
            if previous is not None:
                keep_until((previous[0] + length + start) / 2 / rate)  # the middle of the overlap
            previous = (start, (frames, times + start / rate))
    if previous is None:
        return None
    keep_until(np.inf)
    return np.concatenate([f for f, _ in kept]), np.concatenate([t for _, t in kept])


def _checked(emb: Embedder, ref: AudioRef, item, dim: list[int]) -> Frames | None:
    """One clip's (frames, times) as the protocol says, or an error naming the clip; non-finite
    frames are an error, or under --on-bad-audio skip a skipped clip."""
    name = emb.meta.name
    try:
        frames, times = item
        frames = np.asarray(frames, dtype=np.float32)
        times = np.asarray(times, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"model {name!r}: embed_frames must give (frames, times) per clip; for {ref.name}: {exc}") from exc
    if frames.ndim != 2 or times.shape != (frames.shape[0],):
        raise ModelError(
            f"model {name!r}: embed_frames gave frames {frames.shape} and times {times.shape} for clip {ref.name}; "
            "expected (T, D) and (T,)"
        )
    if dim and frames.shape[1] != dim[0]:
        raise ModelError(f"model {name!r}: embed_frames gave {frames.shape[1]}-d frames for clip {ref.name}, {dim[0]}-d before")
    dim[:] = [frames.shape[1]]
    if len(times) > 1 and not np.all(np.diff(times) > 0):
        raise ModelError(f"model {name!r}: embed_frames gave frame times that do not increase for clip {ref.name}")
    if not (np.isfinite(frames).all() and np.isfinite(times).all()):
        if emb.on_bad_audio == "error":
            raise ModelError(
                f"model {name!r} returned NaN or infinite frames for clip {ref.name} (in {emb.context}; "
                "rerun with --on-bad-audio skip to drop such clips)"
            )
        emb.stats.skipped[ref.name] = "the model returned NaN or infinite frames"
        return None
    return frames, times


def fingerprint(items: Sequence[Frames | None]) -> dict:
    """A hash of the exact bytes of every clip's frames and times, their count and their sum (the
    vector fingerprints of the embedding cache do not see frames)."""
    digest = hashlib.blake2b(digest_size=16)
    total, count = 0.0, 0
    for item in items:
        if item is None:
            digest.update(b"-")
            continue
        frames, times = item
        digest.update(np.ascontiguousarray(frames).tobytes() + np.ascontiguousarray(times).tobytes())
        total += float(np.sum(frames, dtype=np.float64))
        count += len(frames)
    return {"frames": digest.hexdigest(), "frame_count": count, "frame_sum": round(total, 6)}
