"""The two sides of a model in a Ray run (maeb.run.distributed): the worker, a Ray actor that loads the
model once and embeds many shards of clips (or single batches the driver sends it), and the
driver's stand-in for the model (RemoteEncoder), through which the plain runner evaluates a task on
the driver.

A worker never writes a file another process writes: it keeps its vectors in its own cache file in
a temporary folder of its node (maeb's EmbeddingCache and Embedder, so decoding, batching by length
and the out-of-memory back-off are the plain path's) and returns them; the driver is the only
writer of the run's cache. A worker restarted after a crash reopens the same folder on the same
node (SQLite recovers a file whose writer was killed), so the batches it finished are kept."""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..core import trust
from ..core.context import RunContext
from ..core.errors import AudioError, CacheError, DataError, MaebError, ModelError, OutputError, SpecError
from ..core.progress import Progress
from ..encoders import SIDES, check_encoder, check_precision, load_encoder
from ..engine.embed import Embedder
from .model import build_embedder
from .numeric_env import apply_thread_counts

FOLDER_PREFIX = "maeb-ray-worker-"
STALE_FOLDER_SECONDS = 86400.0  # a worker folder untouched for a day belongs to a run that was killed


class MaebWorker:
    """One model loaded in one process of the cluster. Failures to load are reported by describe()
    (an exception in an actor's constructor would only say that the actor died)."""

    def __init__(
        self,
        meta,
        job,
        run_id: str,
        number: int,
        paths: tuple[str, ...] = (),
        threads: dict | None = None,
        allow_code: bool = False,
    ):
        self.started = time.perf_counter()
        self.threads = threads  # the driver's thread counts (maeb.run.numeric_env.thread_counts)
        trust.allow_code(allow_code)  # as the driver was allowed: it imported the same modules
        _add_import_paths(paths)
        self.where = f"worker {number} ({socket.gethostname()}:{os.getpid()})"
        self.busy, self.clips, self.shards, self.calls = 0.0, 0, 0, 0
        self.problem: str | None = None
        self.encoder: Any = None
        self.emb: Embedder | None = None
        _remove_stale_folders()
        self.folder = Path(tempfile.gettempdir()) / f"{FOLDER_PREFIX}{run_id}-{number}"
        try:
            cfg = job.options  # the driver's resolved run (maeb.run.options.resolve), without its context
            encoder = load_encoder(
                meta,
                device=cfg.device,
                protocol=job.protocol,
                endpoints=cfg.endpoints,
                raise_unexpected=cfg.debug,
                **job.overrides,
            )
            check_precision(meta, encoder, cfg.precision)
            check_encoder(meta, encoder)
            ctx = RunContext(
                cache_dir=Path(cfg.cache_dir),
                device=cfg.device,
                progress=Progress("off"),
                lite_dir=cfg.lite_dir,
                mmag_lite_dir=cfg.mmag_lite_dir,
            )
            # the worker's own cache file: cfg.cache_dir stays the data's (ctx), the vectors go to self.folder
            self.emb = build_embedder(job.with_context(ctx), encoder, cache_dir=self.folder)
            self.encoder = encoder
            wrong = self._threads_problem()  # after loading: the model may have brought a library of its own
            if wrong:
                raise ModelError(wrong)
        except MaebError as exc:
            self.problem = f"{self.where}: {exc}"
        except Exception as exc:  # a wrapper's own failure, named in one line for the driver
            self.problem = f"{self.where}: model {meta.name!r} failed to load ({type(exc).__name__}: {exc})"
        self.load_seconds = time.perf_counter() - self.started

    def describe(self) -> dict:
        """What the driver needs to stand in for the model: its side methods, its attributes and
        config, and the identity the worker's cache is keyed by (compared with the driver's)."""
        if self.problem:
            return {"problem": self.problem, "where": self.where}
        emb, encoder = self._loaded()
        return {
            "where": self.where,
            "identity": emb.cache.identity,
            "config": encoder.config(),
            "methods": [m for m in SIDES if callable(getattr(encoder, m, None))],
            "attrs": attributes(encoder),
            "class": type(encoder).__name__,
        }

    def _loaded(self) -> tuple[Embedder, Any]:
        """The embedder and encoder of a worker that loaded its model (the driver sends work to those only)."""
        if self.emb is None or self.encoder is None:
            raise ModelError(f"{self.where}: the model is not loaded ({self.problem})")
        return self.emb, self.encoder

    def _threads_problem(self) -> str:
        """The driver's thread counts applied here, in the thread that computes (OpenMP's count is
        per thread); '' when they hold, else the one line that stops this worker (its vectors
        would not be the plain run's)."""
        wrong = apply_thread_counts(self.threads) if self.threads is not None else ""
        if not wrong:
            return ""
        return (
            f"thread counts differ from the driver's after setting them ({wrong}), so its vectors would not be the "
            "plain run's; give the driver as many threads as this node allows (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS) or run without --ray"
        )

    def _same_threads(self) -> None:
        """Before each piece of work: the driver's thread counts, or a ModelError naming this worker."""
        wrong = self._threads_problem()
        if wrong:
            raise ModelError(f"{self.where}: {wrong}")

    def pid(self) -> int:
        """This worker's process id (a restarted worker has another)."""
        return os.getpid()

    def embed_shard(self, task: str, label: str, refs: list) -> dict:
        """Vectors of the shard's clips (unique, none cached in the run's cache): keys, a matrix,
        and the shard's embedding record."""
        t0 = time.perf_counter()
        emb, _ = self._loaded()
        self._same_threads()
        emb.begin_task(task)
        emb.label(label)
        vectors: np.ndarray | None
        try:
            vectors, ok = emb.audio(refs)
        except DataError as exc:
            if emb.on_bad_audio != "skip" or not all(r.name in emb.stats.skipped for r in refs):
                raise plain_error(exc, self.where) from None
            vectors, ok = None, np.zeros(len(refs), dtype=bool)  # every clip of the shard was skipped: the driver records them
        except MaebError as exc:
            raise plain_error(exc, self.where) from None
        keys = [r.key for r, good in zip(refs, ok) if good]
        self.busy += time.perf_counter() - t0
        self.clips += len(keys)
        self.shards += 1
        return {"keys": keys, "vectors": None if vectors is None else vectors[list(ok)], "stats": emb.stats}

    def call(self, method: str, *args):
        """One call of the model's side (a batch in call order, texts, leftovers) for the driver."""
        t0 = time.perf_counter()
        self._same_threads()
        try:
            return getattr(self.encoder, method)(*args)
        finally:
            self.busy += time.perf_counter() - t0
            self.calls += 1

    def times(self) -> dict:
        """Where this worker runs and its seconds (load, embedding, wall) and counts (clips, shards, calls)."""
        return {
            "where": self.where,
            "load": self.load_seconds,
            "embed": self.busy,
            "wall": time.perf_counter() - self.started,
            "clips": self.clips,
            "shards": self.shards,
            "calls": self.calls,
        }

    def close(self) -> None:
        """Close the worker's cache file and remove its folder."""
        if self.emb is not None:
            self.emb.cache.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class RemoteEncoder:
    """The driver's stand-in for the model loaded on the workers: the same attributes, config and
    side methods, each call sent to a worker (`send(method, *args)`)."""

    def __init__(self, described: dict, send):
        self._config = described["config"]
        self._class = described["class"]
        for name, value in described["attrs"].items():
            setattr(self, name, value)
        for method in described["methods"]:
            setattr(self, method, functools.partial(send, method))

    def config(self) -> dict:
        """The configuration the workers' encoder reported (what its identity is built from)."""
        return dict(self._config)

    def __repr__(self) -> str:
        return f"RemoteEncoder({self._class})"


def attributes(encoder) -> dict:
    """The encoder's public plain-valued attributes (sample rate, batching, max_seconds, software,
    batch order, capabilities, ...): what the engine reads besides the side methods."""
    out = {}
    for name in dir(encoder):
        if name.startswith("_"):
            continue
        try:
            value = getattr(encoder, name)
        except Exception:  # a property that needs state the engine never reads
            continue
        if not callable(value) and _plain(value):
            out[name] = value
    return out


def _plain(value) -> bool:
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, (list, tuple, frozenset, set)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def plain_error(exc: MaebError, where: str) -> MaebError:
    """The error with the worker named, as a class Ray can rebuild from its message (an
    AudioError's constructor takes two arguments, so it travels as a DataError)."""
    if isinstance(exc, AudioError):
        return DataError(f"{exc} ({where})")
    cls = next((c for c in (DataError, ModelError, CacheError, SpecError, OutputError) if isinstance(exc, c)), MaebError)
    return cls(f"{exc} ({where})")


def _add_import_paths(paths: tuple[str, ...]) -> None:
    """The folders of the driver's outside modules (maeb.run.distributed.outside_paths), after this
    process's own: a `module:Class` family loads here as it did on the driver."""
    import importlib
    import sys

    added = [p for p in paths if p not in sys.path]
    sys.path.extend(added)
    if added:
        importlib.invalidate_caches()


def _remove_stale_folders() -> None:
    now = time.time()
    for folder in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*"):
        try:
            if now - folder.stat().st_mtime > STALE_FOLDER_SECONDS:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue
