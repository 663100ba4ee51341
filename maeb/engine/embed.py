"""What task types call to get vectors: audio clips and texts in, float32 matrices out.

The embedder looks every clip up in the cache by content hash, embeds only what is missing
(batched by length, decoded ahead in background threads), and writes each batch to the cache as
soon as it is done. It keeps the timings that tell how busy the encoder was. That loop
(Embedder.run with a Job, the model call timed by Embedder.call_model) is also how maeb.engine.frames
computes frame matrices and maeb.audiogen.store generated clips, so their counts and timings are
the same quantities.

Batches hold --batch-size clips, or with --batch-seconds as many clips as fit that much (padded)
audio. A CUDA out-of-memory error halves the batch and retries it, and the smaller limit holds for
the rest of the run; families whose vectors depend on their batch-mates (batch_order "call") keep
mteb's batches instead and stop with one line naming --call-batch-size."""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..audio.pipeline import AudioRef, chunks, decoded_batches, plan_batches, probe_frames
from ..audio.windows import WindowedRef, WindowPolicy, embed_windowed, windowed_refs
from ..core.context import RunContext
from ..core.device import OutOfMemory, free_device_memory, is_out_of_memory
from ..core.errors import AudioError, DataError, MaebError, ModelError
from ..core.progress import Progress
from ..encoders import ModelMeta, has_audio, has_text, length_policy
from ..encoders.protocols import DEFAULT_PROTOCOL, get_protocol
from . import generation
from .cache import EmbeddingCache, text_key
from .taskrecord import EmbedStats, TaskRecord

if TYPE_CHECKING:
    from pathlib import Path

    from ..audio.perturbed import BabblePool

MAX_BATCH_CLIPS = 1024  # clips per batch under --batch-seconds, however short they are


@dataclass(frozen=True)
class Job:
    """What one use of the embedding loop (Embedder.run) computes: audio vectors here, frame
    matrices (maeb.engine.frames), generated clips (maeb.audiogen.store). A batch is a list of (item,
    input): `call(inputs, items)` is the model on the batch (through Embedder.call_model, which
    times it), `check(item, output)` one output as stored or None (skipped), `key(item)` the key
    it is stored under, `put(values)` stores a finished batch, `seconds(inputs, values)` the
    batch's audio seconds, and `counter` the task record's count of computed items."""

    call: Callable[[list, list], Sequence]
    check: Callable[[Any, Any], Any]
    key: Callable[[Any], str]
    put: Callable[[dict[str, Any]], None]
    seconds: Callable[[list, Mapping[str, Any]], float]
    counter: str = "clips_embedded"


class Embedder:
    """What a task type calls: audio vectors and text vectors (here), generated texts
    (maeb.engine.generation, over the same decoding loop and cache), the run's judge, progress and
    notices (from the RunContext it is given), and the current task's record (maeb.engine.taskrecord:
    begin_task starts one; label names the subset and split being evaluated)."""

    babble_pool: BabblePool | None  # a perturbation's babble, drawn from the task's first clips

    def __init__(
        self,
        meta: ModelMeta,
        encoder,
        cache: EmbeddingCache,
        batch_size: int = 16,
        workers: int | None = None,
        on_bad_audio: str = "error",
        show_progress: bool | str = False,
        protocol=None,
        policy=None,
        ctx: RunContext | None = None,
        batch_seconds: float | None = None,
        call_batch_size: int | None = None,
        perturbation=None,
        window=None,
        controls: tuple[str, ...] = (),
    ):
        if on_bad_audio not in ("error", "skip"):
            raise ValueError("on_bad_audio must be 'error' or 'skip'")
        self.meta, self.encoder, self.cache = meta, encoder, cache
        self.batch_size, self.workers = batch_size, workers
        self.on_bad_audio = on_bad_audio
        self.ctx = ctx or RunContext(cache_dir=cache.path.parent.parent, progress=Progress.of(show_progress))
        self.similarity = meta.similarity
        self.protocol = get_protocol(protocol or DEFAULT_PROTOCOL)
        if batch_seconds is not None and not batch_seconds > 0:
            raise ValueError("batch_seconds must be positive")
        self.batch_seconds = batch_seconds
        # mteb's batch size for families batched in call order (another size is a labelled run option)
        self.call_batch_size = call_batch_size or self.protocol.call_batch_size
        self.max_clips: int | None = None  # lowered by an out-of-memory back-off, kept for the run
        self.max_samples: int | None = None
        self.policy = policy
        self.generated_dir: Path | None = None  # where a text-to-audio system's clips go (set per task by the runner)
        self.controls = tuple(controls)  # the run's controls the evaluators compute (maeb.tasktypes.control)
        self.perturbation = perturbation  # a maeb.audio.perturb.Chain: clips are seen through it (maeb.audio.perturbed)
        if policy is None and (has_audio(encoder) or callable(getattr(encoder, "generate", None))):
            self.policy = replace(length_policy(encoder), resampler=self.protocol.resampler)
        if perturbation is not None and self.policy is not None:
            perturbation.check(self.policy.sample_rate)
        # how a clip longer than the encoder's window becomes one vector (maeb.audio.windows)
        self.window = (window or WindowPolicy()).resolved(self.policy and self.policy.max_seconds, meta.name)
        # the context the model's work (decoding, forward passes, pooling) runs in: the run sets it
        # to the process's own thread counts while an evaluator's fits run under fewer
        # (maeb.run.numeric_env.evaluator_threads), so a vector never depends on which task asked first
        self.model_threads: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext
        self.begin_task("")

    @property
    def judge(self):
        """The run's LLM judge, or None."""
        return self.ctx.judge

    def log(self, message: str) -> None:
        """A line in the run's log."""
        self.ctx.log(message)

    def warn(self, message: str) -> None:
        """A notice that bears on the task's score: logged at WARNING (a notebook shows it without
        any logging set up) and kept in the task's result (maeb.data.sources.warnings); once per message."""
        if message not in self.record.warnings:
            self.record.warnings.append(message)
            self.ctx.logger.warning(message)

    def label(self, context: str) -> None:
        """The subset and split now evaluated, for messages and progress."""
        self.context = context

    @contextlib.contextmanager
    def on_split(self, split: str):
        """Inside, what is embedded is labelled with `split` (a probe's training clips, drawn while an
        evaluation split is scored) in progress lines and messages: "Task [train]", not "Task [test]"."""
        saved = self.context
        base = saved[: saved.rindex(" [")] if saved.endswith("]") and " [" in saved else saved
        self.context = f"{base} [{split}]"
        try:
            yield
        finally:
            self.context = saved

    # -- audio ---------------------------------------------------------------------------
    def audio(self, refs: Sequence[AudioRef]) -> tuple[np.ndarray, np.ndarray]:
        """Vectors for the clips (zeros where a clip was skipped) and the mask of usable rows."""
        with self.model_threads():
            return self._audio(refs)

    def _audio(self, refs: Sequence[AudioRef]) -> tuple[np.ndarray, np.ndarray]:
        if self.policy is None:
            raise ModelError(f"model {self.meta.name!r} has no audio encoder; {self.context} needs one")
        refs = self.prepared(refs)
        keys = self.keys_of(refs, lambda ref: ref.key)
        batches = None
        if getattr(self.encoder, "batch_order", "length") == "call":
            keys, batches = self._call_batches(refs, keys)
        unique = {k: ref for k, ref in zip(keys, refs) if k is not None}
        found = self.cached(unique, {k: k for k in unique}, self.cache.get_many)
        if batches is not None:
            found.update(self._compute_call_batches(refs, keys, batches, found))
        missing = [ref for k, ref in unique.items() if k not in found and ref.name not in self.stats.skipped]
        if batches is not None:
            missing = [ref for ref in missing if isinstance(ref, WindowedRef)]  # windows are never padded
        if missing:
            found.update(self._compute_shared(missing))
        # a clip is decoded once per content, so rows with identical bytes share its skip: count each row
        skipped_by_key = {k: self.stats.skipped[ref.name] for k, ref in unique.items() if ref.name in self.stats.skipped}
        for k, ref in zip(keys, refs):
            if k in skipped_by_key and k not in found and ref.name not in self.stats.skipped:
                self.stats.skipped[ref.name] = skipped_by_key[k]
        dim = self.cache.dim or (next(iter(found.values())).size if found else 0)
        out = np.zeros((len(refs), dim), dtype=np.float32)
        ok = np.zeros(len(refs), dtype=bool)
        for i, k in enumerate(keys):
            if k is not None and k in found:
                out[i] = found[k]
                ok[i] = True
        if len(refs) and not ok.any():
            reasons = "; ".join(f"{r.name}: {self.stats.skipped[r.name]}" for r in refs[:3] if r.name in self.stats.skipped)
            raise DataError(
                f"{self.context}: all {len(refs)} clips were skipped as unusable ({reasons}); nothing is left to score"
            )
        return out, ok

    def prepared(self, refs: Sequence[AudioRef]) -> Sequence[AudioRef]:
        """The clips as the run embeds them: seen through the perturbation chain, and under a
        window policy a long clip as a WindowedRef (maeb.audio.windows)."""
        refs = self._perturbed(refs)
        if self.window.windowed:
            refs = windowed_refs(refs, self.window, self.policy.sample_rate, self.bad_clip)
        return refs

    def keys_of(self, refs: Sequence[AudioRef], key: Callable[[AudioRef], str]) -> list[str | None]:
        """Each clip's key (None for a clip that cannot be used, reported by bad_clip)."""
        keys: list[str | None] = []
        for ref in refs:
            try:
                keys.append(key(ref))
            except AudioError as exc:
                self.bad_clip(ref, exc)
                keys.append(None)
        return keys

    def cached(self, unique: Mapping[str, AudioRef], content: Mapping[str, str], get_many: Callable) -> dict:
        """What `get_many` (a cache's lookup) holds of the keys in `unique`; counts the clips
        (by their content key, `content[key]`) first used in this task that came from the cache."""
        contents = set(content.values())
        fresh = contents - self.touched  # a clip used twice in a task (corpus and queries) counts once
        self.touched.update(contents)
        found = get_many(unique)
        self.stats.clips_cached += len(fresh & {content[k] for k in found})
        return found

    def _perturbed(self, refs: Sequence[AudioRef]) -> Sequence[AudioRef]:
        """The clips as the perturbation chain shows them (another content key each); unchanged
        without one. A babble pool is drawn from the task's first clips."""
        if self.perturbation is None:
            return refs
        from ..audio.perturbed import BabblePool, perturbed

        if self.perturbation.uses_pool and self.babble_pool is None:
            self.babble_pool = BabblePool(refs, self.policy)
        return perturbed(refs, self.perturbation, self.babble_pool)

    def bad_clip(self, ref: AudioRef, exc: AudioError) -> None:
        """A clip that cannot be used: an error, or under --on-bad-audio skip a recorded skip."""
        if self.on_bad_audio == "error":
            raise AudioError(exc.clip, f"{exc.reason} (in {self.context}; rerun with --on-bad-audio skip to drop such clips)")
        self.stats.skipped[ref.name] = exc.reason

    def decoded(self, refs: list[AudioRef], what: str, batches: list[list[int]] | None = None):
        """Batches of (index, decoded clip), similar lengths together unless the batches are given,
        decoded in the background; clips that fail to decode are reported (or raise), never yielded."""
        policy = self.policy
        if batches is None:
            cap = policy.max_samples or 1 << 62
            lengths = [max(policy.min_samples, min(probe_frames(r, policy.sample_rate), cap)) for r in refs]
            size, budget = self._limits()
            batches = plan_batches(lengths, size, self.encoder.batching, budget, self._floor())
        bar = self.ctx.progress.bar(sum(len(b) for b in batches), f"{what} {self.context}".strip())
        try:
            for batch, clips in decoded_batches(refs, batches, policy, self.workers, times=self.record.pipeline):
                good = []
                for i, clip in zip(batch, clips):
                    if isinstance(clip, AudioError):
                        self.bad_clip(refs[i], clip)
                    else:
                        good.append((i, clip))
                yield good
                bar.update(len(batch))
        finally:
            bar.close()

    def _limits(self) -> tuple[int, int | None]:
        """Clips and samples a batch may hold now: --batch-size, or --batch-seconds' budget,
        each lowered by an out-of-memory back-off."""
        if self.batch_seconds is None:
            size, budget = self.batch_size, None
        else:
            size, budget = MAX_BATCH_CLIPS, int(self.batch_seconds * self.policy.sample_rate)
        if self.max_clips is not None:
            size = min(size, self.max_clips)
        if self.max_samples is not None:
            budget = self.max_samples if budget is None else min(budget, self.max_samples)
        return size, budget

    def _floor(self) -> int:
        """Samples every clip is padded to by the encoder (a fixed window), which is what a shorter
        clip costs in a batch."""
        seconds = getattr(self.encoder, "padded_seconds", None)
        return int(seconds * self.policy.sample_rate) if seconds else 0

    def _call_batches(self, refs: Sequence[AudioRef], keys: list[str | None]) -> tuple[list[str | None], list[list[int]]]:
        """mteb's batches for encoders whose vectors depend on their batch-mates (a padded batch's
        length enters the pooled frame count): the call's clips in the order given, duplicates
        included, in batches of the protocol's size. Each vector is cached under its clip and its
        batch, so it is only reused where mteb would compute the same one."""
        size = self.call_batch_size
        usable = [
            i
            for i, k in enumerate(keys)
            if k is not None and refs[i].name not in self.stats.skipped and not isinstance(refs[i], WindowedRef)
        ]
        batch_keys: list[str | None] = list(keys)
        batches = []
        for start in range(0, len(usable), size):
            batch = usable[start : start + size]
            tag = hashlib.blake2b("|".join(k for i in batch if (k := keys[i]) is not None).encode(), digest_size=8).hexdigest()
            for i in batch:
                batch_keys[i] = f"{keys[i]}|batch:{tag}"
            batches.append(batch)
        return batch_keys, batches

    def _compute_call_batches(self, refs, keys, batches, found) -> dict[str, np.ndarray]:
        todo = [b for b in batches if any(keys[i] not in found for i in b)]
        if not todo:
            return {}

        def call(clips: list[np.ndarray], batch: list[int]) -> list[tuple[np.ndarray, bool]]:
            try:
                return self._rows(*self._forward(clips, [refs[i] for i in batch]))
            except OutOfMemory as exc:
                raise ModelError(
                    f"model {self.meta.name!r} ran out of device memory on a batch of {len(clips)} clips in "
                    f"{self.context}: this family's vectors depend on their batch-mates, so maeb keeps mteb's batches "
                    f"of {self.call_batch_size} (protocol {self.protocol.name}) and does not split them; rerun with "
                    f"--call-batch-size {max(1, len(clips) // 2)} (results go to the experiments folder) or on a "
                    f"device with more memory ({exc})"
                ) from None

        return self.run(self._vector_job(call, lambda i: keys[i], self.cache.put_many), self.decoded(list(refs), "embed", todo))

    def _vector_job(self, call: Callable, key: Callable[[int], str], put: Callable) -> Job:
        """The loop's job for audio vectors: rows of (vector, finite), the finite ones kept."""
        rate = self.policy.sample_rate
        return Job(
            call=call,
            check=lambda _, row: row[0] if row[1] else None,
            key=key,
            put=put,
            seconds=lambda clips, _: sum(len(c) for c in clips) / rate,
        )

    @staticmethod
    def _rows(vectors: np.ndarray, finite: np.ndarray) -> list[tuple[np.ndarray, bool]]:
        return list(zip(vectors, finite))

    def run(self, job: Job, batches: Iterable[list[tuple[Any, Any]]]) -> dict[str, Any]:
        """The embedding loop: each batch of (item, input) through the job's model call, each
        output checked, each finished batch stored at once (an interrupted run keeps it); the
        values computed by key. Counts them (job.counter), their audio seconds and the loop's
        wall time in the task's record."""
        done: dict[str, Any] = {}
        with self.timed():
            for batch in batches:
                if not batch:
                    continue
                items, inputs = [item for item, _ in batch], [x for _, x in batch]
                outputs = job.call(inputs, items)
                new = {}
                for item, output in zip(items, outputs):
                    value = job.check(item, output)
                    if value is not None:
                        new[job.key(item)] = value
                job.put(new)
                done.update(new)
                self.stats.audio_seconds += job.seconds(inputs, new)
            setattr(self.stats, job.counter, getattr(self.stats, job.counter) + len(done))
        return done

    @contextlib.contextmanager
    def timed(self) -> Iterator[None]:
        """Inside, the wall time counts as the task's embedding time (embed_wall_seconds)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.stats.embed_wall_seconds += time.perf_counter() - started

    def call_model(
        self, fn: Callable[[list], Any], inputs: list, names: Sequence[str], failed: str = "failed on clips", oom: bool = False
    ):
        """fn(inputs), the model's call, timed as the encoder's time (forward_seconds). An error
        becomes one ModelError naming the model and the first `names`; with `oom`, an
        out-of-memory error is raised as OutOfMemory for the back-off instead."""
        t0 = time.perf_counter()
        out_of_memory = None
        try:
            out = fn(inputs)
        except MaebError:
            raise
        except Exception as exc:
            if not (oom and is_out_of_memory(exc)):
                raise ModelError(
                    f"model {self.meta.name!r} {failed} {', '.join(names[:3])} ({type(exc).__name__}: {exc})"
                ) from exc
            out_of_memory = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        if out_of_memory is not None:
            # raised once the except block is left, so nothing keeps the failed batch's tensors alive
            raise OutOfMemory(out_of_memory)
        self.stats.forward_seconds += time.perf_counter() - t0
        return out

    def _compute_shared(self, refs: list[AudioRef]) -> dict[str, np.ndarray]:
        """Embed what no other run on this cache is embedding now; then take the rest from the
        cache as those runs finish it (or embed it if such a run died)."""
        by_key = {r.key: r for r in refs}
        mine, theirs = self.cache.claim(list(by_key))
        done = self._compute([by_key[k] for k in mine]) if mine else {}
        waiting, told = set(theirs), False
        while waiting:
            done.update(self.cache.get_many(waiting))
            waiting -= set(done)
            orphans = waiting - self.cache.claimed_elsewhere(waiting)
            if orphans:
                taken, _ = self.cache.claim(orphans)
                done.update(self._compute([by_key[k] for k in taken]))
                waiting -= set(taken)
            if waiting:
                if not told:
                    self.log(f"{self.context}: waiting for another run on this cache to embed {len(waiting)} clips")
                    told = True
                time.sleep(1.0)
                self.cache.refresh_claims()
        return done

    def _compute(self, refs: list[AudioRef]) -> dict[str, np.ndarray]:
        long = [r for r in refs if isinstance(r, WindowedRef)]
        pooled = embed_windowed(self, long) if long else {}
        refs = [r for r in refs if not isinstance(r, WindowedRef)]
        if not refs:
            return pooled

        def put(new: dict[str, np.ndarray]) -> None:
            self.cache.put_many(new)
            self.cache.refresh_claims()

        def call(clips: list[np.ndarray], batch: list[int]) -> list[tuple[np.ndarray, bool]]:
            return self._rows(*self._forward_fitting(clips, [refs[i] for i in batch]))

        done = self.run(self._vector_job(call, lambda i: refs[i].key, put), self.decoded(refs, "embed"))
        return {**pooled, **done}

    def _forward_fitting(self, clips: list[np.ndarray], refs: list[AudioRef]) -> tuple[np.ndarray, np.ndarray]:
        """_forward over the batch in runs that fit the current limits; on out of memory, halve
        the run that failed (by clips, or by samples under --batch-seconds), keep that limit for
        the rest of the run and retry; one clip that does not fit is an error. Only for families
        batched by length, whose vectors do not depend on their batch-mates."""
        lengths, floor = [len(c) for c in clips], self._floor()
        parts: list[tuple[np.ndarray, np.ndarray]] = []
        start = 0
        while start < len(clips):
            piece = slice(start, len(clips))  # the batch as planned, until a back-off lowers the limits
            if self.max_clips is not None or self.max_samples is not None:
                part = chunks(lengths[start:], *self._limits(), floor)[0]
                piece = slice(start + part.start, start + part.stop)
            try:
                parts.append(self._forward(clips[piece], refs[piece]))
            except OutOfMemory as exc:
                self._back_off(lengths[piece], floor, refs[piece], str(exc))
                continue
            start = piece.stop
        if len(parts) == 1:
            return parts[0]
        return np.concatenate([v for v, _ in parts]), np.concatenate([f for _, f in parts])

    def _back_off(self, lengths: list[int], floor: int, refs: list[AudioRef], reason: str) -> None:
        n = len(lengths)
        if n == 1:
            raise ModelError(
                f"model {self.meta.name!r} ran out of device memory on clip {refs[0].name} alone "
                f"({lengths[0] / self.policy.sample_rate:.1f} s, in {self.context}; {reason}): batch size 1 does not fit; "
                "use a device with more memory, --precision bf16, or a length cap (--option max_seconds=...)"
            )
        if self.batch_seconds is None:
            self.max_clips = n // 2
            what = f"batches of at most {self.max_clips} clips"
        else:
            self.max_samples = max(1, n * max(lengths[0], floor, 1) // 2)
            what = f"batches of at most {self.max_samples / self.policy.sample_rate:.1f} s of audio"
        self.stats.oom_backoffs += 1
        free_device_memory()
        self.log(f"{self.context}: device out of memory on a batch of {n} clips; retrying with {what} for the rest of the run")

    def _forward(self, clips: list[np.ndarray], refs: list[AudioRef]) -> tuple[np.ndarray, np.ndarray]:
        """Vectors of a batch and the mask of finite rows; a non-finite row is an error, or under
        --on-bad-audio skip a skipped clip (the model cannot represent it)."""
        vectors = self.call_model(
            lambda batch: np.asarray(self.encoder.embed_audio(batch), dtype=np.float32), clips, [r.name for r in refs], oom=True
        )
        if vectors.ndim != 2 or vectors.shape[0] != len(clips) or vectors.shape[1] == 0:
            raise ModelError(
                f"model {self.meta.name!r} returned shape {vectors.shape} for {len(clips)} clips; expected one vector of "
                "at least one dimension per clip, (clips, dimension)"
            )
        finite = np.isfinite(vectors).all(axis=1)
        for i in np.flatnonzero(~finite):
            if self.on_bad_audio == "error":
                raise ModelError(
                    f"model {self.meta.name!r} returned NaN or infinite values for clip {refs[i].name} (in {self.context}; "
                    "rerun with --on-bad-audio skip to drop such clips)"
                )
            self.stats.skipped[refs[i].name] = "the model returned NaN or infinite values"
        return vectors, finite

    # -- text ----------------------------------------------------------------------------
    def text(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of the texts, from the cache or the model's text side."""
        with self.model_threads():
            return self._text(texts)

    def _text(self, texts: Sequence[str]) -> np.ndarray:
        if not has_text(self.encoder):
            raise ModelError(f"model {self.meta.name!r} has no text encoder; {self.context} needs one")
        keys = [text_key(t) for t in texts]
        fresh = set(keys) - self.touched_texts
        self.touched_texts.update(keys)
        found = self.cache.get_many(keys)
        self.stats.texts_cached += len(fresh & set(found))
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in found))
        step = max(1, self.batch_size * 4)
        for start in range(0, len(missing), step):
            chunk = missing[start : start + step]
            t0 = time.perf_counter()
            vectors = np.asarray(self.encoder.embed_text(chunk), dtype=np.float32)
            self.stats.forward_seconds += time.perf_counter() - t0
            if vectors.ndim != 2 or vectors.shape[0] != len(chunk) or vectors.shape[1] == 0 or not np.isfinite(vectors).all():
                raise ModelError(f"model {self.meta.name!r} returned bad text vectors (shape {vectors.shape}) for {chunk[0]!r}")
            new = {text_key(t): v for t, v in zip(chunk, vectors)}
            self.cache.put_many(new)
            found.update(new)
            self.stats.texts_embedded += len(chunk)
        return np.stack([found[k] for k in keys]) if keys else np.zeros((0, self.cache.dim or 0), np.float32)

    # -- generation and the task's record -------------------------------------------------
    def generate(self, refs: Sequence[AudioRef], prompts: Sequence[str], settings: dict) -> tuple[list[str], np.ndarray]:
        """One text per (clip, prompt) and the mask of usable clips (maeb.engine.generation)."""
        with self.model_threads():
            return generation.generate(self, self._perturbed(refs), prompts, settings)

    def begin_task(self, context: str = "") -> None:
        """Start a new task record (counts, skips, touched keys) labelled `context`."""
        self.record = TaskRecord(context)
        self.babble_pool = None  # each task draws babble from its own clips

    @property
    def stats(self) -> EmbedStats:
        """The current task's counts and timings."""
        return self.record.stats

    @property
    def touched(self) -> set[str]:
        """Content keys of the clips the current task used."""
        return self.record.clips

    @property
    def touched_texts(self) -> set[str]:
        """Keys of the texts the current task used."""
        return self.record.texts

    @property
    def context(self) -> str:
        """The task, subset and split being evaluated (for messages)."""
        return self.record.context

    @context.setter
    def context(self, value: str) -> None:
        self.record.context = value

    def fingerprints(self) -> dict:
        """Hashes of the task's input keys and vectors (TaskRecord.fingerprints)."""
        return self.record.fingerprints(self.cache)

    # -- evaluation progress ---------------------------------------------------------------
    def progress_iter(self, iterator, total: int, what: str):
        """The iterator, with a progress bar of `total` steps."""
        return self.ctx.progress.iterate(iterator, f"{what} {self.context}", total=total)

    def progress(self, items: Iterable, what: str):
        """The items, iterated with a progress bar labelled by the task and `what`."""
        return self.ctx.progress.iterate(list(items), f"evaluate {self.context} ({what})")
