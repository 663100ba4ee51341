"""Long audio as an explicit protocol: how a clip longer than the encoder's window becomes one vector.

- head (the published protocol): the clip is cut to the encoder's length cap, or given whole to
  an encoder without one; nothing past the cut is heard.
- mean / max (--long-audio): the clip is streamed (maeb.audio.stream) in windows of the model's native
  length (its cap; 30 s for an encoder without one, or --long-audio's window=) every hop seconds,
  plus one window ending at the clip's end; each window is embedded and the window vectors are
  pooled by their mean or their elementwise maximum. Memory stays bounded by a few batches of
  windows whatever the clip's length.

A clip no longer than one window is its own only window, so its vector is the head protocol's and
is shared with it through the cache. A longer clip's pooled vector is cached under the clip's key
plus the window policy; one streaming pass stores both poolings. The policy is recorded in every
result (maeb.window) and a windowed run's results go to the experiments folder."""

from __future__ import annotations

import hashlib
import queue
import threading
import time
from dataclasses import asdict, dataclass

import numpy as np

from ..core.errors import AudioError, MaebError, SpecError
from .pipeline import AudioRef, probe_frames
from .stream import clip_stream, windows

POOLINGS = ("head", "mean", "max")
DEFAULT_WINDOW_SECONDS = 30.0  # for encoders without a length cap: the paper's cut


@dataclass(frozen=True)
class WindowPolicy:
    """How clips longer than the encoder's cap are embedded: cut at the cap ("head"), or cut into windows of `seconds` every `hop`
    whose vectors are pooled."""

    pooling: str = "head"
    seconds: float | None = None  # None: the encoder's cap (30 s without one)
    hop: float | None = None  # None: the window's length (windows side by side)

    def __post_init__(self):
        if self.pooling not in POOLINGS:
            raise SpecError(f"--long-audio: pooling must be one of {', '.join(POOLINGS)}, not {self.pooling!r}")
        for name in ("seconds", "hop"):
            value = getattr(self, name)
            if value is not None and not 0 < value < float("inf"):
                raise SpecError(f"--long-audio: {'window' if name == 'seconds' else name} must be positive, not {value!r}")
        if self.seconds is not None and self.hop is not None and self.hop > self.seconds:
            raise SpecError(
                f"--long-audio: hop={self.hop:g} is longer than window={self.seconds:g}: {self.hop - self.seconds:g} s of "
                "every hop would never be heard; use a hop of at most the window"
            )
        if self.pooling == "head" and (self.seconds is not None or self.hop is not None):
            raise SpecError("--long-audio head takes no window or hop: it is the encoder's own length cut")

    @property
    def windowed(self) -> bool:
        """Whether clips are cut into windows (any pooling but "head")."""
        return self.pooling != "head"

    def resolved(self, cap_seconds: float | None, model: str = "the model") -> WindowPolicy:
        """The policy with its window and hop filled in for an encoder with this length cap."""
        if not self.windowed:
            return self
        seconds = self.seconds or cap_seconds or DEFAULT_WINDOW_SECONDS
        if cap_seconds is not None and seconds > cap_seconds + 1e-9:
            raise SpecError(
                f"--long-audio window={seconds:g} is longer than {model}'s length cap of {cap_seconds:g} s: "
                "the encoder would cut every window; use a window of at most the cap"
            )
        return WindowPolicy(self.pooling, seconds, self.hop or seconds)  # checks the hop against the window

    def samples(self, rate: int) -> tuple[int, int]:
        """(window, hop) in samples at `rate`, of a resolved policy."""
        if self.seconds is None or self.hop is None:
            raise ValueError(f"window policy {self.canonical()!r} is not resolved: call resolved(cap) before samples()")
        return int(round(self.seconds * rate)), int(round(self.hop * rate))

    def canonical(self) -> str:
        """The policy as one string (before it is resolved: 'native' is the encoder's cap, which
        the encoder's identity fixes; a hop of 'window' is the window's length)."""
        if not self.windowed:
            return "head"
        seconds = "native" if self.seconds is None else f"{self.seconds:g}"
        hop = "window" if self.hop is None else f"{self.hop:g}"
        return f"{self.pooling}:window={seconds},hop={hop}"

    def describe(self, cap_seconds: float | None = None) -> dict:
        """The policy for the result file (for "head": the cap the encoder applies)."""
        out = asdict(self)
        if not self.windowed:
            out["seconds"] = cap_seconds  # the cut the encoder applies (None: the whole clip)
        else:
            out["last_window"] = "ends at the clip's end"
        return out


def parse(text: str | None) -> WindowPolicy:
    """'mean', 'max', 'mean:window=10,hop=5' or 'head' (also None) as a WindowPolicy."""
    if not text:
        return WindowPolicy()
    pooling, _, rest = text.partition(":")
    fields: dict[str, float] = {}
    for part in filter(None, rest.split(",")):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in ("window", "hop"):
            raise SpecError(f"--long-audio {text!r}: expected POOLING[:window=SECONDS][,hop=SECONDS], got {part!r}")
        if key in fields:
            raise SpecError(f"--long-audio {text!r}: {key} is given twice")
        try:
            fields[key] = float(value)
        except ValueError:
            raise SpecError(f"--long-audio {text!r}: {key} must be a number of seconds, not {value!r}") from None
    return WindowPolicy(pooling.strip(), fields.get("window"), fields.get("hop"))


class WindowedRef(AudioRef):
    """A clip longer than one window: its vector is the pooled window vectors, under a key of
    its own (the clip's key plus the window policy)."""

    __slots__ = ("base", "window")

    def __init__(self, base: AudioRef, window: WindowPolicy):
        super().__init__(base.name, fetch=base.read, start=base.start, end=base.end, decode_rate=base.decode_rate)
        self.path = base.path
        self.base, self.window = base, window
        self._key = pooled_key(base.key, window)

    def open(self):
        return self.base.open()  # a clip in a file stays on disk


def pooled_key(clip_key: str, window: WindowPolicy) -> str:
    """The cache key of a clip's pooled vector under a window policy."""
    return hashlib.blake2b(f"{clip_key}|window:{window.canonical()}".encode(), digest_size=16).hexdigest()


def windowed_refs(refs, window: WindowPolicy, rate: int, on_error) -> list[AudioRef]:
    """Each clip longer than one window (by its header) as a WindowedRef; the rest unchanged.
    on_error(ref, AudioError) reports a clip whose key cannot be read."""
    limit = window.samples(rate)[0]
    out: list[AudioRef] = []
    for ref in refs:
        if isinstance(ref, WindowedRef):
            out.append(ref)
            continue
        try:
            long = probe_frames(ref, rate) > limit
            out.append(WindowedRef(ref, window) if long else ref)
        except AudioError as exc:
            on_error(ref, exc)
            out.append(ref)
    return out


_DONE = object()


def embed_windowed(emb, refs: list[WindowedRef]) -> dict[str, np.ndarray]:
    """Pooled vectors of long clips: a background thread streams their windows into a queue of
    at most one batch while the encoder embeds full batches; each clip's vector is written
    to the cache (under both poolings) once its last window is embedded."""
    policy, window = emb.policy, refs[0].window
    length, hop = window.samples(policy.sample_rate)
    size, budget = emb._limits()
    per_batch = max(1, min(size, budget // length if budget else size))
    feed: queue.Queue = queue.Queue(maxsize=per_batch)  # one batch decoded ahead
    stop = threading.Event()

    def produce() -> None:
        try:
            for i, ref in enumerate(refs):
                try:
                    for _, samples in windows(clip_stream(ref.base, policy), length, hop):
                        if stop.is_set():
                            return
                        if samples.size < policy.min_samples:
                            samples = np.pad(samples, (0, policy.min_samples - samples.size))
                        feed.put((i, samples))
                    feed.put((i, _DONE))
                except AudioError as exc:
                    feed.put((i, exc))
        finally:
            feed.put(None)

    started = time.perf_counter()
    thread = threading.Thread(target=produce, name="maeb-windows", daemon=True)
    thread.start()
    sums: dict[int, np.ndarray] = {}
    maxima: dict[int, np.ndarray] = {}
    counts: dict[int, int] = {}
    bad: set[int] = set()
    ended: list[int] = []
    done: dict[str, np.ndarray] = {}
    batch: list[tuple[int, np.ndarray]] = []
    bar = emb.ctx.progress.bar(len(refs), f"embed long clips {emb.context}".strip())

    def forward() -> None:
        if batch:
            clips = [s for _, s in batch]
            vectors, finite = emb._forward_fitting(clips, [refs[i] for i, _ in batch])
            for (i, _), v, f in zip(batch, vectors, finite):
                if not f:
                    bad.add(i)
                    continue
                v = v.astype(np.float64)
                sums[i] = sums[i] + v if i in sums else v
                maxima[i] = np.maximum(maxima[i], v) if i in maxima else v
                counts[i] = counts.get(i, 0) + 1
            emb.stats.audio_seconds += sum(c.size for c in clips) / policy.sample_rate
            batch.clear()
        new = {}
        for i in ended:
            if i not in bad and counts.get(i):
                mean, peak = (sums.pop(i) / counts[i]).astype(np.float32), maxima.pop(i).astype(np.float32)
                base = refs[i].base.key
                mean_key, max_key = (pooled_key(base, WindowPolicy(p, window.seconds, window.hop)) for p in ("mean", "max"))
                new[mean_key], new[max_key] = mean, peak
                done[refs[i].key] = mean if window.pooling == "mean" else peak
            bar.update(1)
        ended.clear()
        if new:
            emb.cache.put_many(new)
            emb.cache.refresh_claims()

    try:
        while (item := feed.get()) is not None:
            i, value = item
            if value is _DONE:
                ended.append(i)
            elif isinstance(value, AudioError):
                emb.bad_clip(refs[i], value)
                bad.add(i)
                ended.append(i)
            else:
                batch.append((i, value))
                if len(batch) >= per_batch:
                    forward()
        forward()
    except BaseException:
        stop.set()
        while thread.is_alive():  # let the producer see the stop and leave
            try:
                feed.get(timeout=0.1)
            except queue.Empty:
                pass
        raise
    finally:
        bar.close()
    emb.stats.clips_embedded += len(done)
    emb.stats.embed_wall_seconds += time.perf_counter() - started
    return done


def check_combination(window: WindowPolicy, perturb: tuple, ray: bool = False) -> None:
    """Refuse what does not combine with windows yet: a perturbation, or a Ray run (MaebError saying what to drop)."""
    if window.windowed and perturb:
        raise MaebError("--long-audio and --perturb do not combine yet: a perturbation is drawn for a whole clip")
    if window.windowed and ray:
        raise MaebError("--long-audio does not run on Ray yet; run without --ray")
