"""The same run on a Ray cluster (`maeb run ... --ray [ADDRESS]`), with the plain run's results.

Design. The driver (the process that runs the command) plans: a task whose result file is done is
not scheduled; of the others, the unique clips of the evaluation splits that are not in the cache
are cut into shards. Each worker is a Ray actor that loads the model once (one GPU each on cuda,
one CPU otherwise, the model entry's memory when it declares one) and embeds shard after shard;
it keeps its vectors in a cache file of its own on its node and returns them (maeb.run.rayworker).
The driver is the one writer of the run's SQLite cache: it commits each returned shard in one
transaction. Then it evaluates each task with the plain runner (maeb.run.runner.run, one task at a
time) over a stand-in for the model (RemoteEncoder): every vector the evaluator asks for is read
from the cache the shards filled, and what no shard held (texts, the few-shot draws of a training
split, families batched in call order and encoders that declare `batch_dependent = True`, whose
vectors depend on their batch-mates and which are therefore never cut into shards: the driver forms
each batch as the plain run does and sends it whole) is computed by a worker, one call at a time.
Each worker applies the driver's thread counts (BLAS, OpenMP, torch: Ray starts workers with
OMP_NUM_THREADS=1, and the thread count moves the last bits of a reduction) before every piece of
work, and stops with one line when a library will not take them. So the evaluator, the result
file and its atomic write are the plain run's own code, run where the vectors are, and the vectors
and scores are the plain run's bit for bit (tests/test_ray_equal_vectors.py). Each result records
the threads and how the batches were formed (`maeb.ray`). This was chosen over merging per-worker SQLite shards into the cache because it needs no
file system shared by the workers' caches and the driver, and no second writer can exist. The
cache's claims are not relied on inside a run (the driver schedules each clip once); they still
keep the driver's own leftover embedding from racing another run on the same cache.

Faults. Workers are restarted by Ray and their shard retried (max_restarts, max_task_retries); a
worker that cannot come back gives its shard to another. A task that fails (a bad clip, a broken
spec or data) fails alone, with its one-line message, and the run goes on; the summary lists it.
Ctrl-C cancels the queued shards, kills the workers and re-raises: the cache only ever holds
committed shards and result files are written atomically, so the same command resumes."""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import tasktypes
from ..audio.pipeline import AudioRef
from ..core.errors import MaebError
from ..core.taskspec import TaskSpec
from ..data import hub
from ..encoders import ModelMeta, has_audio
from ..spec.loader import load_task
from .model import build_embedder, missing_side
from .numeric_env import thread_counts
from .options import ResolvedRun, RunOptions, check_ray, resolve
from .plan import plan
from .raypool import IN_FLIGHT, Pool, WorkerTime, first_line
from .rayworker import RemoteEncoder
from .runner import run
from .summary import RunSummary, TaskResult, add_stats, fail_task

SHARD_CLIPS = 256  # clips per shard: a killed worker loses at most this much work
LOCAL_OBJECT_STORE = 256 * 1024 * 1024  # bytes; vectors and batches are small, keep a laptop's memory free


@dataclass
class RaySummary(RunSummary):
    """A Ray run's RunSummary, with each worker's account and the shards scheduled."""

    workers: list[WorkerTime] = field(default_factory=list)
    shards: int = 0  # shards scheduled (0: the run found everything cached or done)


@dataclass
class _Task:
    spec: TaskSpec
    hours: float
    left: int = 0  # shards not yet committed
    clips: int = 0  # clips in its shards
    failed: str | None = None
    ready: threading.Event = field(default_factory=threading.Event)


@hub.in_session
def run_on_ray(
    meta: ModelMeta,
    specs: list[TaskSpec],
    options: RunOptions | ResolvedRun,
    address: str | None = None,
    log=None,
    workers: int | None = None,
    shard_clips: int = SHARD_CLIPS,
) -> RaySummary:
    """maeb.run.runner.run on a Ray cluster at `address` (None or "local": a local instance, or the
    one this process is already connected to) with `workers` model workers (default: one per GPU
    on cuda, one per CPU otherwise). A task that fails stops the run under raise_error, else
    it is in the summary's `failed` and the others run, as in maeb.run.runner.run."""
    require_ray()
    if isinstance(options, ResolvedRun):
        job = options
        check_ray(job.options, job.window)
    else:
        job = resolve(meta, options, ray=True)
    cfg, ctx = job.options, job.ctx
    started = time.perf_counter()
    log = log or ctx.log
    summary = RaySummary()
    # workers load the model in cfg.precision; the driver's runner gets the dtype as an option
    # (the same identity), since it never loads the model itself
    local = resolve(meta, replace(cfg, precision=None, options=job.overrides), ctx=ctx)
    done, pending = [], []
    for spec in specs:
        try:
            row = plan(meta, [spec], job)[0]
        except MaebError as exc:
            fail_task(summary, spec.name, exc, cfg.raise_error, log)
            continue
        if row["done"] is True and not cfg.overwrite:
            done.append(spec)
        else:
            pending.append(_Task(spec, float(row["hours"] or 0.0)))
    results: dict[str, TaskResult] = {}
    if done:  # every one is done: run() reads the results and loads nothing
        _merge(summary, run(meta, done, local, log), results)
    if pending:
        _run_pending(meta, pending, job, local, address, workers, shard_clips, summary, results, log)
    summary.results = [results[s.name] for s in specs if s.name in results]
    summary.wall_seconds = time.perf_counter() - started
    return summary


def require_ray() -> None:
    """Ray is an optional package (maeb's `ray` extra): its absence is one line, before any work."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        from ..core.errors import MissingPackage

        raise MissingPackage(
            "--ray needs the package 'ray', which is not installed here; install it with `pip install 'maeb[ray]'`"
        )


def _run_pending(meta, tasks, job: ResolvedRun, local: ResolvedRun, address, workers, shard_clips, summary, results, log) -> None:
    import ray

    cfg, ctx = job.options, job.ctx
    own = _connect(ray, address, workers)
    pool = None
    try:
        count = workers or _default_workers(ray, cfg, local=address in (None, "local"))
        threads = thread_counts()  # what the plain run computes with; the workers take them
        pool = Pool(ray, meta, job, count, log, outside_paths(meta, [t.spec for t in tasks]), threads)
        described = pool.first()
        remote = RemoteEncoder(described, pool.send)
        record = {"threads": threads, "batches": batches_of(remote, shard_clips)}
        main = build_embedder(local, remote)
        pool.expected = main.cache.identity
        pool.check(described)
        feeder = _Feeder(pool, tasks, main, meta, ctx, shard_clips, log)
        feeder.start()
        bars = _Bars(ctx.progress, summary, tasks)
        try:
            for task in tasks:
                while not task.ready.wait(0.5):
                    pass
                if task.failed:
                    fail_task(summary, task.spec.name, task.failed, cfg.raise_error, log)
                else:
                    try:
                        part = run(meta, [task.spec], local, log, encoder=remote, amend=_labeller(task, cfg, record))
                    except MaebError as exc:  # raised outside the task's evaluation (or under raise_error)
                        fail_task(summary, task.spec.name, exc, cfg.raise_error, log)
                    else:
                        _merge(summary, part, results)
                bars.task_done(task)
            feeder.join()
        finally:
            feeder.stop.set()
            feeder.join(timeout=30)
            main.cache.close()
            bars.close()
        summary.shards = feeder.shards
        _add_shard_stats(summary, feeder.stats)
        summary.workers = pool.times()
        for worker in summary.workers:
            log(worker.line())
    except KeyboardInterrupt:
        log("interrupted: the queued shards are cancelled and the workers stopped; committed vectors and results are kept")
        if pool is not None:
            pool.close(wait=3.0)  # the queued shards are cancelled; a running one is not waited for long
        raise
    finally:
        if pool is not None:
            pool.close()
        if own:
            ray.shutdown()


def outside_paths(meta: ModelMeta, specs: list[TaskSpec]) -> tuple[str, ...]:
    """The import folders of the run's modules from outside the package (a `module:Class` family or
    task type), as the driver found them: a worker adds them to its sys.path, so it imports the same
    module the driver did wherever the run was started (on a cluster, the folders must exist on each
    node: a shared file system, or the module installed there)."""
    import importlib.util

    names = [x.split(":", 1)[0] for x in (meta.family, *(s.type for s in specs)) if ":" in x]
    out = []
    for name in dict.fromkeys(names):
        if name == "maeb" or name.startswith("maeb."):
            continue
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None or not found.origin or not Path(found.origin).is_file():
            continue  # (the worker's own error names the module and what to do)
        origin = Path(found.origin).resolve()
        depth = name.count(".") + (1 if origin.name == "__init__.py" else 0)  # pkg.mod lives two folders down
        out.append(str(origin.parents[depth]))
    return tuple(dict.fromkeys(out))


def _connect(ray, address: str | None, workers: int | None) -> bool:
    """Connect to the cluster (or start a local one); True when this call started Ray."""
    if ray.is_initialized():
        return False
    if address in (None, "local"):
        ray.init(
            num_cpus=max(os.cpu_count() or 1, workers or 0),
            include_dashboard=False,
            _node_ip_address="127.0.0.1",  # a local instance serves this machine only
            object_store_memory=LOCAL_OBJECT_STORE,
            log_to_driver=True,
        )
    else:
        try:
            ray.init(address=address, log_to_driver=True)
        except ConnectionError as exc:
            raise MaebError(f"cannot reach the Ray cluster at {address} ({exc}); start it with `ray start --head`") from None
    return True


def _default_workers(ray, cfg: RunOptions, local: bool) -> int:
    """One worker per GPU on cuda; on CPU one per CPU, less one on a local instance: the driver
    evaluates there too, and an evaluator's OpenMP threads (k-means) slow down tenfold when every
    core is taken by a worker (measured on 2 cores, scripts/bench_ray.py)."""
    resources = ray.cluster_resources()
    if cfg.device == "cuda":
        return max(1, int(resources.get("GPU", 1)))
    return max(1, int(resources.get("CPU", 1)) - (1 if local else 0))


class _Feeder(threading.Thread):
    """Plans each task's shards (a step ahead of the workers), keeps every worker fed, and commits
    each returned shard to the run's cache: the only writer of that file in the run."""

    def __init__(self, pool: Pool, tasks: list[_Task], main, meta, ctx, shard_clips: int, log):
        super().__init__(name="maeb-ray-feeder", daemon=True)
        self.pool, self.tasks, self.cache, self.ctx, self.log = pool, tasks, main.cache, ctx, log
        self.encoder, self.shard_clips = main.encoder, max(1, shard_clips)
        self.queue: deque = deque()
        self.inflight: dict = {}  # object ref -> (worker number, task, job)
        self.scheduled: set[str] = set()
        self.stop = threading.Event()
        self.shards = 0
        self.stats: list = []  # each shard's embedding statistics, added to the run's at the end
        self.bar = ctx.progress.bar(0, "ray: clips embedded", minimum=0)

    def run(self) -> None:
        ray = self.pool.ray
        waiting = deque(self.tasks)
        try:
            while not self.stop.is_set():
                self.pool.admit_new()
                while waiting and len(self.queue) < IN_FLIGHT * max(1, len(self.pool.ready)):
                    self._plan(waiting.popleft())
                self._fill()
                if not self.inflight:
                    if not waiting and not self.queue:
                        break
                    if not self.pool.alive():
                        self._fail_open(waiting, "every Ray worker died; rerun the same command to resume")
                        break
                    time.sleep(0.1)
                    continue
                finished, _ = ray.wait(list(self.inflight), num_returns=1, timeout=0.2)
                for ref in finished:
                    self._take(ref)
        except BaseException as exc:  # the main thread must learn of it, not wait forever
            self._fail_open(waiting, f"the shard feeder stopped ({type(exc).__name__}: {exc})")
        finally:
            for ref in self.inflight:
                ray.cancel(ref)
            self.bar.close()

    def _plan(self, task: _Task) -> None:
        """The task's shards: unique clips of its evaluation splits not yet cached nor scheduled."""
        spec = task.spec
        needs = tasktypes.get(spec.type).needs(spec)
        split = not driver_batches(self.encoder) and has_audio(self.encoder)
        if not split or "audio" not in needs or needs & {"generate", "synthesize"} or missing_side(needs, self.encoder):
            task.ready.set()  # the driver's runner sends its batches to the workers itself (or skips the task)
            return
        try:
            refs = eval_clips(spec, load_task(spec, self.ctx))
            found = self.cache.get_many(refs)
        except MaebError as exc:
            task.failed = str(exc) if spec.name in str(exc) else f"task {spec.name}: {exc}"
            task.ready.set()
            return
        missing = [ref for key, ref in refs.items() if key not in found and key not in self.scheduled]
        self.scheduled.update(ref.key for ref in missing)
        count = (len(missing) + self.shard_clips - 1) // self.shard_clips
        for i in range(count):
            part = missing[i * self.shard_clips : (i + 1) * self.shard_clips]
            self.queue.append((task, f"{spec.name} shard {i + 1}/{count}", part))
        task.left, task.clips = count, len(missing)
        self.shards += count
        self.bar.total = getattr(self.bar, "total", 0) + len(missing)
        if count == 0:
            task.ready.set()

    def _fill(self) -> None:
        while self.queue:
            worker = self.pool.idle_worker()
            if worker is None:
                return
            number, actor = worker
            task, label, refs = job = self.queue.popleft()
            self.inflight[actor.embed_shard.remote(task.spec.name, label, refs)] = (number, task, job)

    def _take(self, ref) -> None:
        ray = self.pool.ray
        number, task, job = self.inflight.pop(ref)
        self.pool.release(number)
        try:
            out = ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            # restarts are used up: the shard goes to another worker
            self.log(f"worker {number} died for good ({first_line(exc)}); {job[1]} goes to another worker")
            self.pool.drop(number)
            self.queue.appendleft(job)
            return
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause if isinstance(exc.cause, MaebError) else None
            message = str(cause) if cause else f"{job[1]}: unexpected {first_line(exc)}"
            if task.failed is None:
                task.failed = message if task.spec.name in message else f"task {task.spec.name}: {message}"
                # its queued shards are dropped (a later task that shares a clip embeds it itself)
                dropped = [j for j in self.queue if j[0] is task]
                self.queue = deque(j for j in self.queue if j[0] is not task)
                task.left -= len(dropped)
            self._shard_done(task)
            return
        if out["keys"]:
            self.cache.put_many(dict(zip(out["keys"], out["vectors"])))
        self.stats.append(out["stats"])
        self.bar.update(len(job[2]))
        self._shard_done(task)

    def _shard_done(self, task: _Task) -> None:
        task.left -= 1
        if task.left <= 0:
            task.ready.set()

    def _fail_open(self, waiting, message: str) -> None:
        for task in list(waiting) + [t for t in self.tasks if not t.ready.is_set()]:
            task.failed = task.failed or f"task {task.spec.name}: {message}"
            task.ready.set()


def eval_clips(spec: TaskSpec, data: dict) -> dict[str, AudioRef]:
    """The unique clips (by content key) of a task's evaluation splits, which every task type
    embeds whole; clips that cannot be read are left to the evaluator, which reports them. A
    separate training split is left out: few-shot types embed only their draws of it."""
    columns = [*spec.data.audio_columns, "audio1", "audio2"]
    columns += [spec.protocol[c] for c in ("audio1_column", "audio2_column") if isinstance(spec.protocol.get(c), str)]
    out: dict[str, AudioRef] = {}
    for tables in data.values():
        for split in spec.data.eval_splits:
            table = tables.get(split)
            if table is None:
                continue
            if hasattr(table, "columns"):
                items = [ref for column in dict.fromkeys(columns) if column in table for ref in table[column]]
            else:
                items = [value for _, value in getattr(table, "corpus", []) + getattr(table, "queries", [])]
            for ref in items:
                if isinstance(ref, AudioRef):
                    try:
                        out.setdefault(ref.key, ref)
                    except MaebError:
                        continue
    return out


class _Bars:
    """The whole run's progress: tasks done of all, and hours of audio (the dry run's figures),
    whose rate gives the time left."""

    def __init__(self, progress, summary: RaySummary, tasks: list[_Task]):
        self.tasks = progress.bar(len(tasks), "ray: tasks", unit="task", minimum=0)
        self.audio = progress.bar(int(sum(t.hours for t in tasks) * 3600), "ray: audio", unit="audio-second", minimum=0)

    def task_done(self, task: _Task) -> None:
        self.tasks.update(1)
        self.audio.update(int(task.hours * 3600))

    def close(self) -> None:
        self.tasks.close()
        self.audio.close()


def _merge(summary: RaySummary, part: RunSummary, results: dict) -> None:
    summary.done += part.done
    summary.skipped_existing += part.skipped_existing
    summary.skipped_modality += part.skipped_modality
    summary.failed.update(part.failed)
    add_stats(summary.stats, part.stats)
    results.update({r.task: r for r in part.results})


def driver_batches(encoder) -> bool:
    """Whether the driver forms the batches (and sends each to a worker) instead of cutting
    shards: families batched in call order, and encoders that declare `batch_dependent = True`
    (their vectors depend on their batch-mates, as CTranslate2's kernels pick by batch size), so
    their batches must be the plain run's."""
    return getattr(encoder, "batch_order", "length") == "call" or bool(getattr(encoder, "batch_dependent", False))


def batches_of(encoder, shard_clips: int) -> str:
    """How a Ray run batched the audio, as its results record it (`maeb.ray.batches`)."""
    if driver_batches(encoder):
        return "formed by the driver as in the plain run, each sent whole to a worker"
    return f"shards of up to {shard_clips} clips, batched by length on the workers"


def _labeller(task: _Task, cfg: RunOptions, record: dict | None = None):
    """What a task's result must say that the driver's runner cannot see: the clips the workers
    embedded for it (the runner found them in the cache), the --precision the workers ran in, and
    the threads and batching the workers used (`record`)."""

    def amend(spec, info: dict) -> None:
        stats = info["embedding"]
        moved = min(task.clips, stats.get("clips_cached", 0))
        stats["clips_cached"] -= moved
        stats["clips_embedded"] = stats.get("clips_embedded", 0) + moved
        info["ray"] = {"clips_embedded_by_workers": task.clips, **(record or {})}
        if cfg.precision:
            info["precision"] = cfg.precision

    return amend


def _add_shard_stats(summary: RaySummary, shard_stats: list) -> None:
    """The driver's runner found the workers' vectors in the cache; the run's totals count them as
    embedded, which they were (on the workers)."""
    for stats in shard_stats:
        summary.stats.clips_cached = max(0, summary.stats.clips_cached - stats.clips_embedded)
        add_stats(summary.stats, stats)
