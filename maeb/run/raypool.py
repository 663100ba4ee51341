"""The pool of Ray model workers a Ray run's driver holds (maeb.run.distributed): the actors started
(maeb.run.rayworker.MaebWorker, restarted by Ray up to MAX_RESTARTS times), which are ready, what each
has in flight (IN_FLIGHT shards at most), the driver's calls sent to the least busy one, and each
worker's account at the end (WorkerTime)."""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from typing import Any

from ..core import trust
from ..core.errors import ModelError
from ..core.identity import redact
from ..encoders import ModelMeta
from .options import ResolvedRun
from .rayworker import MaebWorker

IN_FLIGHT = 2  # shards queued per worker, so none idles while the driver takes a result
MAX_RESTARTS = 3


@dataclass
class WorkerTime:
    """One Ray worker's account: where it ran, its seconds loading, embedding and in all, and its counts."""

    where: str
    load: float
    embed: float
    wall: float
    clips: int
    shards: int
    calls: int

    @property
    def idle(self) -> float:
        """Seconds neither loading nor embedding (waiting for the driver)."""
        return max(0.0, self.wall - self.load - self.embed)

    def line(self) -> str:
        """The worker's one line in the run's closing report."""
        return (
            f"{self.where}: load {self.load:.1f} s, embed {self.embed:.1f} s, idle {self.idle:.1f} s; "
            f"{self.clips} clips in {self.shards} shards, {self.calls} calls from the driver"
        )


class Pool:
    """The model workers: which are ready, what each has in flight, and one call at a time for
    the driver's stand-in encoder (sent to the least busy worker)."""

    def __init__(self, ray, meta: ModelMeta, job: ResolvedRun, count: int, log, paths: tuple[str, ...] = (), threads=None):
        self.ray, self.meta, self.log = ray, meta, log
        options = {"num_cpus": 1, "max_restarts": MAX_RESTARTS, "max_task_retries": MAX_RESTARTS}
        if job.options.device == "cuda":
            options["num_gpus"] = 1
        if meta.memory_usage_mb:
            options["memory"] = int(meta.memory_usage_mb * 1024 * 1024)
        actor = ray.remote(MaebWorker).options(**options)
        run_id = uuid.uuid4().hex[:8]
        shipped = job.with_context(None)  # the worker makes its own (no progress bars, no judge)
        self.actors = {
            i + 1: actor.remote(meta, shipped, run_id, i + 1, paths, threads, trust.code_allowed()) for i in range(count)
        }
        self.describing = {a.describe.remote(): i for i, a in self.actors.items()}
        self.ready: dict[int, Any] = {}  # worker number -> its Ray actor handle
        self.busy: dict[int, int] = {}
        self.expected: dict | None = None
        self.first_where: dict[int, str] = {}  # as each worker first described itself (a restart has another pid)
        self.lock = threading.Lock()

    def first(self) -> dict:
        """The first worker to load the model (its description), waiting for the cluster to
        place one; when every worker failed to load, that failure."""
        waited, problems = 0.0, []
        while True:
            done, _ = self.ray.wait(list(self.describing), num_returns=1, timeout=30)
            if done:
                described = self._admit(done[0])
                if described is not None:
                    return described
                problems.append(self._last_problem)
                if not self.describing:
                    raise ModelError(problems[0])
                continue
            waited += 30
            self.log(
                f"waiting {waited:.0f} s for Ray to place a worker for {self.meta.name!r} (resources: {self.ray.available_resources()})"
            )

    def admit_new(self) -> None:
        """Admit the workers that finished loading since the last look (without waiting)."""
        if self.describing:
            done, _ = self.ray.wait(list(self.describing), num_returns=len(self.describing), timeout=0)
            for ref in done:
                described = self._admit(ref)
                if described is not None:
                    self.check(described)

    def _admit(self, ref) -> dict | None:
        number = self.describing.pop(ref)
        try:
            described = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            described = {"problem": f"worker {number} died while loading model {self.meta.name!r} ({first_line(exc)})"}
        if "problem" in described:
            self._last_problem = described["problem"]
            self.log(described["problem"])
            self.ray.kill(self.actors.pop(number), no_restart=True)
            return None
        with self.lock:
            self.ready[number] = self.actors[number]
            self.busy[number] = 0
        self.first_where[number] = described["where"]
        return {**described, "number": number}

    def check(self, described: dict) -> None:
        """A worker whose cache identity differs (other package versions on its node) would write
        other vectors under the same key: it is stopped, naming what differs."""
        if self.expected is None or described.get("identity") == self.expected:
            return
        got = described["identity"]
        what = ", ".join(k for k in sorted(set(got) | set(self.expected)) if got.get(k) != self.expected.get(k))
        self.log(f"{described['where']}: its encoder identity differs from the driver's ({what}); it is stopped")
        self.drop(described["number"])
        if not self.ready and not self.describing:
            raise ModelError(f"model {self.meta.name!r}: no worker has the driver's encoder identity ({what})")

    def idle_worker(self) -> tuple[int, Any] | None:
        """The least busy ready worker with room for another shard, counted busy with it (number, actor); None when all are full."""
        with self.lock:
            free = [(n, i) for i, n in self.busy.items() if n < IN_FLIGHT]
            if not free:
                return None
            number = min(free)[1]
            self.busy[number] += 1
            return number, self.ready[number]

    def release(self, number: int) -> None:
        """One piece of work of worker `number` is done: it has room for another."""
        with self.lock:
            if number in self.busy:
                self.busy[number] -= 1

    def drop(self, number: int) -> None:
        """Worker `number` is gone for good: killed (no restart), it gets no more work."""
        with self.lock:
            actor = self.ready.pop(number, None)
            self.busy.pop(number, None)
        if actor is not None:
            self.ray.kill(actor, no_restart=True)

    def alive(self) -> bool:
        """Whether any worker is ready or still loading."""
        return bool(self.ready or self.describing)

    def send(self, method: str, *args):
        """One call of the model's side on the least busy worker; a worker that died for good is
        replaced by another."""
        ray = self.ray
        while True:
            with self.lock:
                if not self.ready:
                    raise ModelError(f"model {self.meta.name!r}: every Ray worker died; rerun to resume")
                number = min(self.busy, key=lambda i: (self.busy[i], i))
                actor = self.ready[number]
                self.busy[number] += 1
            try:
                return ray.get(actor.call.remote(method, *args))
            except ray.exceptions.RayActorError as exc:
                self.log(f"worker {number} died ({first_line(exc)}); its call goes to another worker")
                self.drop(number)
            except ray.exceptions.RayTaskError as exc:
                raise (exc.cause if isinstance(exc.cause, Exception) else exc) from None
            finally:
                self.release(number)

    def times(self) -> list[WorkerTime]:
        """Each ready worker's account (where it ran, its seconds and counts), for the closing report."""
        refs = {i: a.times.remote() for i, a in self.ready.items()}
        out = []
        for number, ref in refs.items():
            try:
                times = self.ray.get(ref, timeout=30)
            except self.ray.exceptions.RayError:
                continue
            if times["where"] != self.first_where.get(number):
                times["where"] += f", restarted after {self.first_where.get(number)} died; times since the restart"
            out.append(WorkerTime(**times))
        return out

    def close(self, wait: float = 10.0) -> None:
        """Remove the workers' folders and stop them; a worker that does not answer within `wait`
        seconds is killed (its folder is removed by a later run on its node a day later)."""
        closing = [a.close.remote() for a in self.ready.values()]
        if closing:
            self.ray.wait(closing, num_returns=len(closing), timeout=wait)
        for actor in self.actors.values():
            self.ray.kill(actor, no_restart=True)
        self.actors.clear()
        self.ready.clear()
        self.busy.clear()


def first_line(exc: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    text = redact(str(exc)).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
