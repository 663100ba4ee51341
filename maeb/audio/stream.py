"""A clip as a stream of blocks at the encoder's rate, in bounded memory whatever its length.

maeb.audio.pipeline.load holds a whole clip (its bytes, the decoded samples, the resampled copy); that is
right for the clips of the published tasks (most under 30 s) and wrong for a two-hour recording.
Here a file is read, mixed to mono and resampled block by block. Each block is resampled with
enough of its neighbours on both sides that the kept samples are the ones the whole-clip
resampler gives: equal to the bit for torchaudio-sinc-hann (whose kernel reaches a few samples),
equal within float rounding for soxr-hq (whose filter state differs between calls). A block's
start lies on the grid where input and output samples coincide, so every block keeps its phase.

Memory: a block (BLOCK_SECONDS of input), its margins and the resampled copy; the bytes of a
clip that lives in a file are never read whole (a clip held in memory by its dataset already is)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ..core.errors import AudioError
from .pipeline import AudioRef, LengthPolicy, open_checked, resample, to_mono

BLOCK_SECONDS = 30.0  # input read per step


def read_blocks(ref: AudioRef, block_seconds: float = BLOCK_SECONDS) -> tuple[int, Iterator[np.ndarray]]:
    """(native rate, mono float32 blocks) of a clip, checked as maeb.audio.pipeline.decode checks a clip:
    a truncated WAV, an undecodable file, no samples and NaN or infinite samples are AudioErrors
    naming the clip."""
    handle = ref.open()
    try:
        audio = open_checked(handle, ref.name)
    except BaseException:
        handle.close()
        raise
    rate = int(audio.samplerate)
    frames = max(1, int(block_seconds * rate))

    def blocks() -> Iterator[np.ndarray]:
        seen = 0
        with audio, handle:
            while True:
                try:
                    block = audio.read(frames, dtype="float32", always_2d=True)
                except Exception as exc:
                    raise AudioError(ref.name, f"cannot decode audio after {seen / rate:.1f} s ({exc})") from exc
                if block.shape[0] == 0:
                    break
                try:
                    mono = to_mono(block, ref.name)
                except AudioError as exc:
                    raise AudioError(ref.name, f"{exc.reason} (from {seen / rate:.1f} s on)") from None
                seen += mono.size
                yield mono
        if seen == 0:
            raise AudioError(ref.name, "zero-length audio (no samples)")

    return rate, blocks()


def resampled(blocks: Iterator[np.ndarray], rate: int, target: int, method: str) -> Iterator[np.ndarray]:
    """The blocks at `target`, equal to resampling their concatenation at once (see the module
    docstring); blocks of any size in, blocks of about the same duration out."""
    if rate == target:
        yield from blocks
        return
    g = math.gcd(rate, target)
    step_in, step_out = rate // g, target // g  # input and output samples that span the same time
    # the filter reaches 6 output periods (a few input samples) plus one grid step; 2048 is ample
    margin = step_in * max(2, math.ceil(2048 / step_in))
    buffer = np.zeros(0, dtype=np.float32)  # input from `base` on
    base = 0  # input index of buffer[0]
    emit = 0  # input index (a grid point) of the first sample not yet resampled
    total = 0
    for block in blocks:
        buffer = np.concatenate([buffer, block])
        total += block.size
        # resample [emit, ready) once the right margin past it is in; ready stays on the grid
        ready = ((base + buffer.size - margin) // step_in) * step_in
        if ready - emit < max(step_in, rate):  # at least a second at a time
            continue
        yield _resample_span(buffer, base, emit, ready, margin, rate, target, method, step_in, step_out)
        keep_from = max(0, ready - margin)
        buffer, base, emit = buffer[keep_from - base :], keep_from, ready
    if emit < total or total == 0:
        out = _resample_span(buffer, base, emit, total, margin, rate, target, method, step_in, step_out)
        # the whole-clip length (torchaudio rounds its ratio in float32, which can drop a sample)
        wanted = _whole_length(total, rate, target, method) - emit // step_in * step_out
        yield out[: max(0, wanted)]


def _resample_span(buffer, base, lo, hi, margin, rate, target, method, step_in, step_out) -> np.ndarray:
    """Output samples of input [lo, hi): input [lo - margin, hi + margin] (what exists of it)
    resampled, the margins' outputs dropped; lo - margin lies on the grid."""
    start = max(base, lo - margin)
    piece = buffer[start - base : hi + margin - base]
    out = resample(piece, rate, target, method)
    skip = (lo - start) // step_in * step_out
    count = math.ceil((hi - lo) * step_out / step_in)
    return out[skip : skip + count]


def _whole_length(total: int, rate: int, target: int, method: str) -> int:
    if method == "torchaudio-sinc-hann":
        from .resample import output_length

        return output_length(total, rate, target)
    return math.ceil(total * target / rate)


def sliced(blocks: Iterator[np.ndarray], lo: int, hi: int | None) -> Iterator[np.ndarray]:
    """Samples [lo, hi) of a stream (a dataset's segment of a longer file)."""
    pos = 0
    for block in blocks:
        a, b = max(lo - pos, 0), block.size if hi is None else min(block.size, hi - pos)
        if b > a:
            yield block[a:b]
        pos += block.size
        if hi is not None and pos >= hi:
            return


def clip_stream(ref: AudioRef, policy: LengthPolicy, block_seconds: float = BLOCK_SECONDS) -> Iterator[np.ndarray]:
    """The clip as maeb.audio.pipeline.load gives it before the length cut (decoded, at a dataset's
    declared rate where it has one, its segment, resampled to the encoder's rate), in blocks."""
    rate, blocks = read_blocks(ref, block_seconds)
    if ref.decode_rate and ref.decode_rate != rate:
        blocks, rate = resampled(blocks, rate, ref.decode_rate, policy.resampler), ref.decode_rate
    if ref.start is not None or ref.end is not None:
        lo = int((ref.start or 0.0) * rate)
        blocks = _nonempty(sliced(blocks, lo, None if ref.end is None else int(ref.end * rate)), ref)
    return resampled(blocks, rate, policy.sample_rate, policy.resampler)


def _nonempty(blocks: Iterator[np.ndarray], ref: AudioRef) -> Iterator[np.ndarray]:
    any_samples = False
    for block in blocks:
        any_samples = any_samples or block.size > 0
        yield block
    if not any_samples:
        raise AudioError(ref.name, f"segment {ref.start}-{ref.end} s holds no samples")


def windows(blocks: Iterator[np.ndarray], length: int, hop: int) -> Iterator[tuple[int, np.ndarray]]:
    """(start sample, window) over a stream: windows of `length` samples every `hop` samples
    while one fits, then one more ending at the clip's end if the last one stopped short of it
    (so every window is `length` long and every sample is seen); a clip shorter than one window
    is its only window. Holds at most a window, a hop and a block."""
    if length < 1 or hop < 1:
        raise ValueError("window length and hop must be at least one sample")
    buffer = np.zeros(0, dtype=np.float32)
    base = 0  # sample index of buffer[0]
    nxt = 0  # start of the next window
    last_end = 0  # end of the last window given
    for block in blocks:
        buffer = np.concatenate([buffer, block])
        while nxt + length <= base + buffer.size:
            yield nxt, buffer[nxt - base : nxt - base + length].copy()
            last_end = nxt + length
            nxt += hop
        # keep the next window's start and the last `length` samples (an end-aligned window)
        keep = max(0, min(nxt, base + buffer.size - length) - base)
        buffer, base = buffer[keep:], base + keep
    end = base + buffer.size
    if last_end == 0 and end > 0:
        yield 0, buffer.copy()
    elif last_end < end:
        yield end - length, buffer[end - length - base :].copy()
