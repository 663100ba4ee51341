"""The one audio pipeline every encoder uses: read bytes, decode, mix to mono, resample once,
apply the encoder's length policy, batch clips of similar length, decode ahead in background threads."""

from __future__ import annotations

import hashlib
import io
import os
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import BinaryIO

import numpy as np
import soundfile as sf
import soxr

from ..core.errors import AudioError

BATCHING_MODES = ("padded", "same_length", "single")
HASH_PIECE = 1 << 22  # bytes hashed at a time
HEADER_BYTES = 1 << 20  # what is read of a file to check its header (a WAV's data chunk lies in it)
HEAD_MARGIN_SECONDS = 0.25  # decoded past a head cut: far more than any resampling filter reaches


class AudioRef:
    """Where a clip's encoded bytes live (a file, bytes in memory, or a lazily read dataset row).

    It never holds decoded audio, so a task over 100k clips costs little memory. The content key
    is a hash of the encoded bytes plus the segment, computed once per reference."""

    __slots__ = ("name", "path", "_data", "_fetch", "start", "end", "_key", "decode_rate")

    def __init__(
        self,
        name: str,
        *,
        path: str | None = None,
        data: bytes | None = None,
        fetch: Callable[[], bytes] | None = None,
        start: float | None = None,
        end: float | None = None,
        decode_rate: int | None = None,
    ):
        if path is None and data is None and fetch is None:
            raise ValueError(f"clip {name!r} has neither a path nor bytes")
        self.name = name
        self.path = path
        self._data = data
        self._fetch = fetch
        self.start = start
        self.end = end
        # a hub dataset's declared sampling rate: datasets (and so mteb) decodes at that rate
        self.decode_rate = decode_rate
        self._key: str | None = None

    def read(self) -> bytes:
        """The clip's encoded bytes, from memory, the dataset row or the file (AudioError naming the clip when none can be read)."""
        if self._data is not None:
            return self._data
        if self._fetch is not None:
            data = self._fetch()
            if data is None:
                raise AudioError(self.name, "the dataset row holds no audio bytes")
            return data
        try:
            with open(self._file(), "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise AudioError(self.name, f"cannot read file ({exc.strerror})") from exc

    def _file(self) -> str:
        # a reference without bytes or a fetch has a path: the constructor refuses one with none of the three
        if self.path is None:
            raise AudioError(self.name, "the clip has neither a file nor bytes")
        return self.path

    def open(self) -> BinaryIO:
        """The encoded bytes as a binary file: a clip in a file is read from disk as it is
        consumed (maeb.audio.stream), not whole."""
        if self._data is None and self._fetch is None:
            try:
                return open(self._file(), "rb")
            except OSError as exc:
                raise AudioError(self.name, f"cannot read file ({exc.strerror})") from exc
        return io.BytesIO(self.read())

    @property
    def key(self) -> str:
        """The clip's content key: a hash of its encoded bytes (read in pieces), its segment and the rate it is decoded at;
        computed once."""
        if self._key is None:
            digest = hashlib.blake2b(digest_size=16)
            with self.open() as handle:  # in pieces: a two-hour recording is not read whole
                while piece := handle.read(HASH_PIECE):
                    digest.update(piece)
            if self.start is not None or self.end is not None:
                digest.update(f"|{self.start}:{self.end}".encode())
            if self.decode_rate:
                digest.update(f"|decoded at {self.decode_rate}".encode())
            self._key = digest.hexdigest()
        return self._key

    def __repr__(self) -> str:
        return f"AudioRef({self.name!r})"


@dataclass(frozen=True)
class LengthPolicy:
    """How a clip is cut or padded before the encoder sees it; written into every result."""

    sample_rate: int
    max_seconds: float | None = 30.0
    min_samples: int = 0
    keep: str = "head"
    resampler: str = "soxr-hq"  # see RESAMPLERS; the protocol chooses

    @property
    def max_samples(self) -> int | None:
        """The length cap in samples at the policy's rate, or None when clips are not cut."""
        return None if self.max_seconds is None else int(round(self.max_seconds * self.sample_rate))

    def describe(self) -> dict:
        """The policy as a plain dict, for the result file."""
        return asdict(self)


_OBJECT_REPR = re.compile(r"<[^<>]* object at 0x[0-9a-fA-F]+>")


def wav_shortfall(data: bytes, total: int | None = None) -> tuple[int, int] | None:
    """(declared, present) bytes of a WAV file's sample data when the file stops early: libsndfile
    then decodes what is there without a word, so a cut-off download would score as a short clip.
    data: the file, or its first bytes with `total` its size."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    total = len(data) if total is None else total
    offset = 12
    while offset + 8 <= len(data):
        chunk, size = data[offset : offset + 4], int.from_bytes(data[offset + 4 : offset + 8], "little")
        if chunk == b"data":
            present = total - offset - 8
            if 0 < size < 0xFFFFFFFF and size > present:  # 0 and 0xFFFFFFFF mark streamed files
                return size, present
            return None
        offset += 8 + size + (size & 1)
    return None


def float_wav(samples: np.ndarray, rate: int) -> bytes:
    """Mono float32 samples as a WAV file, byte for byte the same in every run: libsndfile's
    float WAVs carry a PEAK chunk stamped with the wall-clock time, which would give the same
    samples another content key each second."""
    data = np.ascontiguousarray(samples, dtype="<f4").ravel().tobytes()
    fmt = struct.pack("<HHIIHHH", 3, 1, rate, rate * 4, 4, 32, 0)  # IEEE float, mono, 32 bits, no extension
    fact = struct.pack("<I", len(data) // 4)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"fact" + struct.pack("<I", 4) + fact
    body += b"data" + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")
    return b"RIFF" + struct.pack("<I", len(body)) + body


def decode(data: bytes, name: str) -> tuple[np.ndarray, int]:
    """Decode WAV/FLAC/MP3/OGG bytes to mono float32; reject what would silently corrupt a score."""
    return decode_from(io.BytesIO(data), name)


def open_checked(handle: BinaryIO, name: str) -> sf.SoundFile:
    """The decoder over a binary file, after the checks libsndfile does not make (an empty file,
    a WAV cut off before its declared end)."""
    head = handle.read(HEADER_BYTES)
    if not head:
        raise AudioError(name, "empty file (0 bytes)")
    size = handle.seek(0, 2)
    handle.seek(0)
    shortfall = wav_shortfall(head, size)
    if shortfall:
        raise AudioError(
            name, f"truncated WAV: its header declares {shortfall[0]} bytes of samples, the file holds {shortfall[1]}"
        )
    try:
        return sf.SoundFile(handle)
    except Exception as exc:  # libsndfile raises several types for corrupt input
        # the library names its in-memory buffer by address, which would make identical runs differ
        reason = _OBJECT_REPR.sub("the clip", str(exc))
        raise AudioError(name, f"cannot decode audio ({reason}); is it WAV, FLAC, MP3 or OGG?") from exc


def to_mono(samples: np.ndarray, name: str) -> np.ndarray:
    """A (frames, channels) block as mono float32; NaN or infinite samples are an error."""
    mono = samples.mean(axis=1) if samples.shape[1] > 1 else samples[:, 0]
    finite = np.isfinite(mono)
    if not finite.all():
        what = "all samples are NaN or infinite" if not finite.any() else f"{int((~finite).sum())} samples are NaN or infinite"
        raise AudioError(name, what)
    return np.ascontiguousarray(mono, dtype=np.float32)


def decode_from(handle: BinaryIO, name: str, seconds: float | None = None) -> tuple[np.ndarray, int]:
    """Decode a binary file to mono float32 and its rate: all of it, or its first `seconds` plus
    HEAD_MARGIN_SECONDS (what a head cut keeps, and the resampling filter's reach past it)."""
    with open_checked(handle, name) as audio:
        rate = int(audio.samplerate)
        frames = -1 if seconds is None else int(np.ceil((seconds + HEAD_MARGIN_SECONDS) * rate))
        try:
            samples = audio.read(frames, dtype="float32", always_2d=True)
        except Exception as exc:
            reason = _OBJECT_REPR.sub("the clip", str(exc))
            raise AudioError(name, f"cannot decode audio ({reason}); is it WAV, FLAC, MP3 or OGG?") from exc
    if samples.shape[0] == 0:
        raise AudioError(name, "zero-length audio (no samples)")
    return to_mono(samples, name), rate


def probe_frames(ref: AudioRef, target_rate: int) -> int:
    """Length in samples at the target rate, from the header alone; 0 when the header is unreadable
    (the clip then fails properly when it is decoded)."""
    try:
        with ref.open() as handle:
            info = sf.info(handle)
    except Exception:
        return 0
    seconds = info.frames / info.samplerate if info.samplerate else 0.0
    if ref.end is not None:
        seconds = min(seconds, ref.end)
    if ref.start is not None:
        seconds = max(0.0, seconds - ref.start)
    return int(seconds * target_rate)


def clip_seconds(ref: AudioRef) -> float:
    """Duration from the header alone (0 when it cannot be read)."""
    try:
        with ref.open() as handle:
            info = sf.info(handle)
    except Exception:
        return 0.0
    return info.frames / info.samplerate if info.samplerate else 0.0


class PipelineTimes:
    """Seconds the decoding threads spent decoding, and resampling per rate pair, with clip counts
    (what tells why a run spends its time outside the encoder); safe to share between threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self.decode = [0.0, 0]
        self.resample: dict[tuple[int, int, str], list] = {}

    def add_decode(self, seconds: float) -> None:
        """Count one decoded clip and the seconds it took (thread-safe)."""
        with self._lock:
            self.decode[0] += seconds
            self.decode[1] += 1

    def add_resample(self, rate: int, target: int, method: str, seconds: float) -> None:
        """Count one resampled clip and its seconds under (from rate, to rate, resampler) (thread-safe)."""
        with self._lock:
            entry = self.resample.setdefault((rate, target, method), [0.0, 0])
            entry[0] += seconds
            entry[1] += 1

    def as_dict(self) -> dict:
        """The totals for the result file: decode and resample seconds and clip counts, the costliest resampling first."""
        with self._lock:
            pairs = sorted(self.resample.items(), key=lambda kv: -kv[1][0])
            return {
                "decode_seconds": round(self.decode[0], 3),
                "decoded_clips": self.decode[1],
                "resample_seconds": round(sum(v[0] for _, v in pairs), 3),
                "resample": [
                    {"from_hz": r, "to_hz": t, "resampler": m, "seconds": round(v[0], 3), "clips": v[1]} for (r, t, m), v in pairs
                ],
            }


def _resample_timed(samples, rate, target, method, times: PipelineTimes | None) -> np.ndarray:
    if times is None:
        return resample(samples, rate, target, method)
    started = time.perf_counter()
    out = resample(samples, rate, target, method)
    times.add_resample(rate, target, method, time.perf_counter() - started)
    return out


def load(ref: AudioRef, policy: LengthPolicy, times: PipelineTimes | None = None) -> np.ndarray:
    """Bytes to the exact array the encoder receives: mono, resampled once, cut to the policy.
    Under a head cut only the head of the file is decoded (a two-hour recording costs its first
    seconds, not its whole length). times, if given, collects the seconds spent decoding and
    resampling."""
    head = None
    if policy.max_seconds is not None and policy.keep == "head":
        head = (ref.start or 0.0) + policy.max_seconds
    started = time.perf_counter()
    with ref.open() as handle:
        samples, rate = decode_from(handle, ref.name, head)
    if times is not None:
        times.add_decode(time.perf_counter() - started)
    if ref.decode_rate and ref.decode_rate != rate:
        # mteb's datasets resample to the declared rate while decoding (FFmpeg's resampler there,
        # the protocol's here), then mteb resamples again to the model's rate
        samples, rate = _resample_timed(samples, rate, ref.decode_rate, policy.resampler, times), ref.decode_rate
    if ref.start is not None or ref.end is not None:
        lo = int((ref.start or 0.0) * rate)
        hi = len(samples) if ref.end is None else int(ref.end * rate)
        samples = samples[lo:hi]
        if samples.size == 0:
            raise AudioError(ref.name, f"segment {ref.start}-{ref.end} s holds no samples")
    if policy.max_seconds is not None and policy.keep == "head":
        # cut before resampling so long clips cost no resampling work past the window; the margin
        # covers the resampling filter's reach, so the kept samples equal those of the whole clip
        margin = 8 * int(np.ceil(max(1.0, rate / policy.sample_rate))) + 8
        samples = samples[: int(np.ceil(policy.max_seconds * rate)) + margin]
    if rate != policy.sample_rate:
        samples = _resample_timed(samples, rate, policy.sample_rate, policy.resampler, times)
    perturb = getattr(ref, "perturb", None)  # a maeb.audio.perturbed.PerturbedRef; plain refs have none
    if perturb is not None:
        samples = perturb(samples, policy.sample_rate)
    if policy.max_samples is not None:
        samples = samples[: policy.max_samples]
    if samples.size < policy.min_samples:
        samples = np.pad(samples, (0, policy.min_samples - samples.size))
    return samples


RESAMPLERS = ("torchaudio-sinc-hann", "soxr-hq")


def resample(samples: np.ndarray, rate: int, target: int, method: str) -> np.ndarray:
    """torchaudio-sinc-hann: torchaudio.functional.resample's defaults, which mteb uses (our own
    implementation, maeb.audio.resample); soxr-hq: soxr's high-quality resampler (faster, not mteb's)."""
    if method == "soxr-hq":
        return soxr.resample(samples, rate, target).astype(np.float32, copy=False)
    if method == "torchaudio-sinc-hann":
        from .resample import resample as sinc_resample

        return sinc_resample(samples, rate, target)
    raise ValueError(f"unknown resampler {method!r}; known: {', '.join(RESAMPLERS)}")


def plan_batches(
    lengths: Sequence[int], batch_size: int, mode: str = "padded", budget: int | None = None, floor: int = 0
) -> list[list[int]]:
    """Group clip indices into batches of similar length, longest first (memory errors show early).

    padded: any lengths share a batch; same_length: only identical lengths (for encoders whose
    outputs change with zero padding); single: one clip per batch. budget (samples per batch, from
    --batch-seconds): a batch also holds at most budget // its longest clip, so short clips batch
    wide and long ones narrow; floor is the length every clip is padded to anyway (Whisper's 30 s
    window), which is what a clip costs when it is shorter."""
    if mode not in BATCHING_MODES:
        raise ValueError(f"batching mode {mode!r} is not one of {BATCHING_MODES}")
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    if mode == "single" or batch_size <= 1:
        return [[i] for i in order]
    batches: list[list[int]] = []
    current: list[int] = []
    limit = batch_size
    for i in order:
        if current and (len(current) >= limit or (mode == "same_length" and lengths[current[0]] != lengths[i])):
            batches.append(current)
            current = []
        if not current:  # the first clip is the batch's longest: it sets how many fit the budget
            limit = batch_size if budget is None else max(1, min(batch_size, budget // max(lengths[i], floor, 1)))
        current.append(i)
    if current:
        batches.append(current)
    return batches


def chunks(lengths: Sequence[int], count: int, budget: int | None = None, floor: int = 0) -> list[slice]:
    """A planned batch (longest first) cut into runs of at most `count` clips and `budget` samples
    (the limits an out-of-memory back-off lowered after the batch was planned); order is kept."""
    out, start = [], 0
    while start < len(lengths):
        size = count if budget is None else max(1, min(count, budget // max(lengths[start], floor, 1)))
        out.append(slice(start, min(start + size, len(lengths))))
        start += size
    return out


def default_workers() -> int:
    """How many threads decode clips by default: the CPU count, between 1 and 4."""
    return max(1, min(4, (os.cpu_count() or 2)))


def _load_batch(
    refs: Sequence[AudioRef], policy: LengthPolicy, times: PipelineTimes | None = None
) -> list[np.ndarray | AudioError]:
    out: list[np.ndarray | AudioError] = []
    for ref in refs:
        try:
            out.append(load(ref, policy, times))
        except AudioError as exc:
            out.append(exc)
    return out


def decoded_batches(
    refs: Sequence[AudioRef],
    batches: Sequence[Sequence[int]],
    policy: LengthPolicy,
    workers: int | None = None,
    prefetch: int | None = None,
    times: PipelineTimes | None = None,
) -> Iterator[tuple[Sequence[int], list[np.ndarray | AudioError]]]:
    """Yield (batch indices, decoded clips or the error for each clip) in batch order while
    background threads decode the next batches, so the encoder does not wait on I/O; times, if
    given, collects what the threads spent decoding and resampling."""
    workers = workers or default_workers()
    prefetch = prefetch or 2 * workers
    pending: deque = deque()
    upcoming = iter(batches)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="maeb-decode") as pool:

        def submit_next() -> None:
            batch = next(upcoming, None)
            if batch is not None:
                pending.append((batch, pool.submit(_load_batch, [refs[i] for i in batch], policy, times)))

        for _ in range(prefetch):
            submit_next()
        while pending:
            batch, future = pending.popleft()
            submit_next()
            yield batch, future.result()
